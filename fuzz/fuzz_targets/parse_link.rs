//! Source text -> diagnostics or IR, never a panic. The diagnostics are
//! rendered too (spans past the end of the text, odd UTF-8 boundaries); an
//! IR that links is written to JSON and must read back as the same program.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serq::{Overrides, compile_ir, compile_source};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match compile_source(text, &Overrides::default()) {
        Ok(program) => {
            let json = program.to_json();
            let back = compile_ir(&json, &Overrides::default())
                .unwrap_or_else(|e| panic!("linked IR does not read back: {e:?}"));
            assert_eq!(back, program, "IR JSON does not round-trip");
        }
        Err(diagnostics) => {
            assert!(!diagnostics.is_empty(), "an error without a diagnostic");
            let _ = serq::syntax::render(&diagnostics, "fuzz.sq", text);
        }
    }
});
