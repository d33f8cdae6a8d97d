//! The conformance cases under `cargo test`: the kernel's
//! (tests/conformance/, copied from ../shared/conformance/cases), the
//! serving engine's (tests/conformance/t2/, from ../shared/conformance/t2)
//! and serq's own serving corpus (tests/serving/), compared as
//! tools/conformance/check.py (shipped from ../shared/conformance)
//! compares them: rejected programs by key
//! words, deterministic ones within 1e-9 (the serving figures included
//! where the expected report has them), stochastic ones statistically.
//! Each case is compiled from its file, so `use` and a relative `trace`
//! resolve next to it.

use serde_json::Value;
use serq::{Overrides, Report, report::Summary};
use std::path::{Path, PathBuf};

const TOL: f64 = 1e-9;
const UTIL_TOL: f64 = 0.03;

fn cases(dir: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("the case directory exists")
        .map(|e| e.expect("readable directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "sq"))
        .collect();
    cases.sort();
    cases
}

/// What serq does with a case: the report, or the error's text.
fn outcome(path: &Path) -> Result<Report, String> {
    let program = serq::compile_file(path, &Overrides::default()).map_err(|e| e.to_string())?;
    serq::run(&program).map_err(|e| e.message)
}

fn close(expected: &Value, actual: Option<f64>) -> bool {
    match (expected.as_f64(), actual) {
        (None, None) => true,
        (None, Some(a)) => a.is_nan(),
        (Some(_), None) => false,
        (Some(e), Some(a)) => {
            if e.is_infinite() || a.is_infinite() {
                return e == a;
            }
            let diff = (e - a).abs();
            diff <= TOL || diff <= TOL * e.abs().max(a.abs())
        }
    }
}

fn check_field(
    errors: &mut Vec<String>,
    where_: &str,
    key: &str,
    exp: &Value,
    actual: Option<f64>,
) {
    if !close(&exp[key], actual) {
        errors.push(format!(
            "{where_} {key}: expected {}, got {actual:?}",
            exp[key]
        ));
    }
}

/// Checks the report's stages or pools (`list`) against the expected
/// report's list of the same name, member by member, once their counts
/// agree (a count that differs is one error and nothing more is compared).
fn each_member<T>(
    errors: &mut Vec<String>,
    list: &str,
    expected_report: &Value,
    actual: &[T],
    mut check: impl FnMut(&mut Vec<String>, usize, &Value, &T),
) {
    let expected = expected_report[list]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if expected.len() != actual.len() {
        errors.push(format!(
            "expected {} {list}, got {}",
            expected.len(),
            actual.len()
        ));
        return;
    }
    for (i, (e, a)) in expected.iter().zip(actual).enumerate() {
        check(errors, i, e, a);
    }
}

fn check_deterministic(exp: &Value, report: &Report) -> Vec<String> {
    let mut errors = Vec::new();
    let r = &exp["report"];
    check_field(
        &mut errors,
        "run",
        "arrivals",
        r,
        Some(report.arrivals as f64),
    );
    check_field(&mut errors, "run", "ended", r, Some(report.ended as f64));
    check_field(&mut errors, "run", "end", r, Some(report.end));
    for (name, e) in r["observes"].as_object().into_iter().flatten() {
        let Some(obs) = report.observes.iter().find(|o| &o.name == name) else {
            errors.push(format!("observe {name} missing"));
            continue;
        };
        let s = Summary::of(&obs.samples);
        let w = format!("observe {name}");
        check_field(&mut errors, &w, "count", e, Some(s.count as f64));
        check_field(&mut errors, &w, "mean", e, s.mean);
        check_field(&mut errors, &w, "p99", e, s.p99);
        let mut samples = obs.samples.clone();
        samples.sort_by(f64::total_cmp);
        let expected = exp["samples"][name].as_array().cloned().unwrap_or_default();
        if expected.len() != samples.len() {
            errors.push(format!(
                "{w}: expected {} samples, got {}",
                expected.len(),
                samples.len()
            ));
        } else {
            for (i, (e, a)) in expected.iter().zip(&samples).enumerate() {
                if !close(e, Some(*a)) {
                    errors.push(format!("{w} sorted sample {i}: expected {e}, got {a}"));
                }
            }
        }
    }
    each_member(
        &mut errors,
        "stages",
        r,
        &report.stages,
        |errors, i, e, a| {
            let w = format!("stage[{i}] {}", a.name);
            if e["name"] != a.name.as_str() {
                errors.push(format!("{w}: expected name {}", e["name"]));
            }
            check_field(errors, &w, "completed", e, Some(a.completed as f64));
            check_field(errors, &w, "mean_number", e, Some(a.mean_number));
            check_field(errors, &w, "utilization", e, a.utilization);
            check_field(errors, &w, "throughput", e, Some(a.throughput));
            check_field(errors, &w, "mean_service", e, a.mean_service);
            check_field(errors, &w, "mean_wait", e, a.mean_wait);
            if e.get("iterations").is_some() {
                check_field(errors, &w, "iterations", e, Some(a.iterations as f64));
            }
        },
    );
    each_member(&mut errors, "pools", r, &report.pools, |errors, i, e, a| {
        let w = format!("pool[{i}] {}", a.name);
        if e["name"] != a.name.as_str() {
            errors.push(format!("{w}: expected name {}", e["name"]));
        }
        check_field(errors, &w, "admissions", e, Some(a.admissions as f64));
        check_field(errors, &w, "mean_used", e, Some(a.mean_used));
        check_field(errors, &w, "mean_queue", e, Some(a.mean_queue));
        check_field(errors, &w, "mean_holders", e, Some(a.mean_holders));
        check_field(errors, &w, "mean_wait", e, a.mean_wait);
        // The serving engine's figures, where the expected report has them.
        let serving = [
            ("mean_cached", a.mean_cached),
            ("evicted_entries", a.evicted_entries as f64),
            ("evicted_units", a.evicted_units),
            ("preemptions", a.preemptions as f64),
            ("spills", a.spills as f64),
            ("rejected", a.rejected as f64),
            ("stuck", a.stuck as f64),
        ];
        for (key, value) in serving {
            if e.get(key).is_some() {
                check_field(errors, &w, key, e, Some(value));
            }
        }
    });
    errors
}

fn check_stochastic(exp: &Value, report: &Report) -> Vec<String> {
    let mut errors = Vec::new();
    let r = &exp["report"];
    for (name, e) in r["observes"].as_object().into_iter().flatten() {
        let Some(obs) = report.observes.iter().find(|o| &o.name == name) else {
            errors.push(format!("observe {name} missing"));
            continue;
        };
        let mean = Summary::of(&obs.samples).mean;
        match (e["mean"].as_f64(), mean) {
            (None, None) => {}
            (Some(em), Some(am)) => {
                let tol = (3.0 * e["ci"].as_f64().unwrap_or(0.0)).max(0.05 * em.abs());
                if (am - em).abs() > tol {
                    errors.push(format!(
                        "observe {name} mean: expected {em} ± {tol}, got {am}"
                    ));
                }
            }
            (em, am) => errors.push(format!("observe {name} mean: expected {em:?}, got {am:?}")),
        }
    }
    each_member(
        &mut errors,
        "stages",
        r,
        &report.stages,
        |errors, i, e, a| match (e["utilization"].as_f64(), a.utilization) {
            (None, None) => {}
            (Some(eu), Some(au)) if (eu - au).abs() <= UTIL_TOL => {}
            (eu, au) => errors.push(format!(
                "stage[{i}] utilization: expected {eu:?} ± {UTIL_TOL}, got {au:?}"
            )),
        },
    );
    errors
}

fn check_case(path: &Path) -> Result<(), String> {
    let exp_path = path.with_extension("expected.json");
    let exp: Value =
        serde_json::from_str(&std::fs::read_to_string(&exp_path).map_err(|e| e.to_string())?)
            .map_err(|e| e.to_string())?;
    let result = outcome(path);
    if exp["error"] == Value::Bool(true) {
        let message = match result {
            Ok(_) => return Err("accepted, expected a rejection".into()),
            Err(m) => m.to_lowercase(),
        };
        let missing: Vec<&str> = exp["message_contains"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .filter(|k| !message.contains(&k.to_lowercase()))
            .collect();
        return if missing.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "rejected, but the message lacks {missing:?}: {message}"
            ))
        };
    }
    let report = result?;
    let errors = if exp["stochastic"] == Value::Bool(true) {
        check_stochastic(&exp, &report)
    } else {
        check_deterministic(&exp, &report)
    };
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("; "))
    }
}

/// Checks every case of `dir` (at least `least` of them).
fn check_dir(dir: &str, least: usize) {
    let cases = cases(dir);
    assert!(cases.len() >= least, "the cases of {dir} are present");
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|p| {
            let name = p
                .file_stem()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            check_case(p).err().map(|e| format!("FAIL {name}: {e}"))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn every_conformance_case_matches_the_reference() {
    check_dir("tests/conformance", 60);
}

#[test]
fn every_serving_engine_case_matches_the_reference() {
    // The 54 cases of ../shared/conformance/t2 (33 accepted, 21 rejected).
    check_dir("tests/conformance/t2", 54);
}

#[test]
fn every_case_of_the_serving_corpus_matches_the_reference() {
    // tests/serving: serq's own corpus, expected files from pyserq 0.1.0.
    check_dir("tests/serving", 55);
}

#[test]
fn the_serving_corpus_keeps_the_engines_invariants_and_checking_them_changes_no_report() {
    // Checked after every event, the engine's invariants hold on every
    // case that runs, and the report equals the unchecked run's (a check
    // reads state and changes none).
    let mut checked = 0;
    for path in cases("tests/serving") {
        let Ok(program) = serq::compile_file(&path, &Overrides::default()) else {
            continue;
        };
        let Ok(plain) = serq::run(&program) else {
            continue;
        };
        let mut options = serq::RunOptions {
            check_invariants: true,
            ..Default::default()
        };
        match serq::run_with(&program, &mut options) {
            Ok(report) => assert!(
                report == plain,
                "{}: checks changed the report",
                path.display()
            ),
            Err(e) => panic!("{}: {}", path.display(), e.message),
        }
        checked += 1;
    }
    assert!(checked >= 150, "only {checked} cases ran");
}
