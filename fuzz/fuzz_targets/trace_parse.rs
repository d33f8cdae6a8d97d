//! Trace text -> corpus sessions or an error naming a line, never a panic;
//! every row read lands in exactly one corpus session.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serq::trace::Trace;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match Trace::parse(Path::new("fuzz.csv"), text) {
        Ok(trace) => {
            assert!(!trace.is_empty(), "a trace that reads has a corpus session");
            let rows: usize = (0..trace.len()).map(|i| trace.session(i).len()).sum();
            assert_eq!(rows, trace.rows(), "every row is in one corpus session");
        }
        Err(e) => {
            let _ = e.to_string();
            if let Some(line) = e.line {
                assert!(line >= 1 && line <= text.lines().count(), "{e}");
            }
        }
    }
});
