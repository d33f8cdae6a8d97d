//! IR JSON -> a validated program or errors, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serq::{Overrides, compile_ir};

fuzz_target!(|data: &[u8]| {
    let Ok(json) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(program) = compile_ir(json, &Overrides::default()) {
        // A valid program writes out and reads back unchanged.
        let again = compile_ir(&program.to_json(), &Overrides::default())
            .unwrap_or_else(|e| panic!("valid IR does not read back: {e:?}"));
        assert_eq!(again, program, "IR JSON does not round-trip");
    }
});
