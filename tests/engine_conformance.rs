//! Every accepted conformance case, through the parser, the linker and the
//! engine, compared with the reference's figures as check.py compares them:
//! deterministic cases within 1e-9, stochastic ones within the checker's
//! loose bounds (serq's random streams differ from the reference's on
//! purpose, spec §6.10).

mod common;

use serde_json::Value;

fn cases() -> Vec<(String, String, Value)> {
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir(common::CASES) else {
        return out;
    };
    for entry in dir.flatten() {
        let path = entry.path();
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
            .to_string();
        if path.extension().and_then(|e| e.to_str()) != Some("sq") {
            continue;
        }
        let expected_path = path.with_extension("expected.json");
        let (Ok(source), Ok(expected)) = (
            std::fs::read_to_string(&path),
            std::fs::read_to_string(&expected_path),
        ) else {
            continue;
        };
        let expected: Value = serde_json::from_str(&expected).expect("expected files are JSON");
        if expected["error"].as_bool() == Some(true) {
            continue;
        }
        out.push((name, source, expected));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Runs the cases of one kind; returns how many passed.
fn check(stochastic: bool) -> usize {
    let mut failures = Vec::new();
    let mut passed = 0;
    for (name, source, expected) in cases() {
        if expected["stochastic"].as_bool() != Some(stochastic) {
            continue;
        }
        let verdict = common::run(&source)
            .map_err(|e| format!("run error: {e}"))
            .and_then(|report| {
                if stochastic {
                    common::compare_stochastic(&expected, &report)
                } else {
                    common::compare(&expected, &report)
                }
            });
        match verdict {
            Ok(()) => passed += 1,
            Err(e) => failures.push(format!("{name}: {e}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{passed} passed, {} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    passed
}

#[test]
fn every_deterministic_case_matches_the_reference_within_1e_9() {
    // 43 deterministic cases in the public suite (when it is present).
    let passed = check(false);
    assert!(
        passed >= 43 || cases().is_empty(),
        "only {passed} deterministic cases ran"
    );
}

#[test]
fn every_stochastic_case_lands_within_the_checkers_bounds() {
    let passed = check(true);
    assert!(
        passed >= 8 || cases().is_empty(),
        "only {passed} stochastic cases ran"
    );
}
