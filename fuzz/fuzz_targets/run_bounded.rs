//! Source text -> IR with a small horizon -> a bounded, checked run: a
//! report or a run-time error, never a panic, a hang or a broken invariant.
//!
//! The run takes at most [`MAX_EVENTS`] events (past that it is a
//! `RunError`, not a hang) and checks the engine's invariants after every
//! event; an `invariant` error is a bug and fails the target.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serq::{Overrides, RunOptions, compile_source};

/// Small enough that a fuzzed program cannot run for long.
const HORIZON: f64 = 5.0;

/// Enough for every example and conformance program at this horizon.
const MAX_EVENTS: u64 = 100_000;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let overrides = Overrides {
        horizon: Some(HORIZON),
        ..Overrides::default()
    };
    let Ok(program) = compile_source(text, &overrides) else {
        return;
    };
    let options = || RunOptions {
        max_events: Some(MAX_EVENTS),
        check_invariants: true,
        ..RunOptions::default()
    };
    match serq::run_with(&program, &mut options()) {
        Ok(report) => {
            // Compared as JSON: a report may hold NaN samples, which `==` never equals.
            let again =
                serq::run_with(&program, &mut options()).expect("the same program ran once");
            assert_eq!(
                report.to_json(true),
                again.to_json(true),
                "one seed, two reports"
            );
        }
        Err(e) => assert!(!e.message.contains("invariant"), "{e}"),
    }
});
