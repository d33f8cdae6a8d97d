//! Source text -> IR with a small horizon -> a run: a report or a run-time
//! error, never a panic or a hang.
//!
//! Needs the engine (branch `engine`): until it is merged `serq::run` is a
//! `todo!()`, so this target compiles but every program that links panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serq::{Overrides, compile_source};

/// Small enough that a fuzzed program cannot run for long.
const HORIZON: f64 = 5.0;

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
    if let Ok(report) = serq::run(&program) {
        // Compared as JSON: a report may hold NaN samples, which `==` never equals.
        let again = serq::run(&program).expect("the same program ran once");
        assert_eq!(report.to_json(true), again.to_json(true), "one seed, two reports");
    }
});
