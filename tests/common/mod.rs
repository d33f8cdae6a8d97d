//! Shared by the engine's integration tests: comparing a report with a
//! conformance case's expected figures, as /work/shared/conformance/check.py
//! does (within 1e-9, absolute or relative; `null` matches only `None`/NaN).

#![allow(dead_code)]

use serde_json::Value;
use serq::report::{Report, Summary};

/// Where the conformance cases live.
pub const CASES: &str = "/work/shared/conformance/cases";

fn close(expected: &Value, actual: Option<f64>) -> bool {
    match (expected.as_f64(), actual) {
        (None, None) => true,
        (None, Some(a)) => a.is_nan(),
        (Some(e), None) => e.is_infinite(),
        (Some(_), Some(a)) if a.is_nan() => false,
        (Some(e), Some(a)) => {
            if e.is_infinite() || a.is_infinite() {
                return e == a;
            }
            let diff = (e - a).abs();
            diff <= 1e-9 || diff <= 1e-9 * e.abs().max(a.abs())
        }
    }
}

fn check(what: &str, expected: &Value, actual: Option<f64>) -> Result<(), String> {
    if close(expected, actual) {
        Ok(())
    } else {
        Err(format!("{what}: expected {expected}, got {actual:?}"))
    }
}

/// Compares a deterministic case's expected file with a report; returns
/// the first difference.
pub fn compare(expected: &Value, report: &Report) -> Result<(), String> {
    let r = &expected["report"];
    check("run arrivals", &r["arrivals"], Some(report.arrivals as f64))?;
    check("run ended", &r["ended"], Some(report.ended as f64))?;
    check("run end", &r["end"], Some(report.end))?;
    let observes = r["observes"].as_object().ok_or("no observes")?;
    for (name, e) in observes {
        let obs = report
            .observes
            .iter()
            .find(|o| &o.name == name)
            .ok_or_else(|| format!("observe {name} missing"))?;
        let s = Summary::of(&obs.samples);
        check(
            &format!("observe {name} count"),
            &e["count"],
            Some(s.count as f64),
        )?;
        check(&format!("observe {name} mean"), &e["mean"], s.mean)?;
        check(&format!("observe {name} p99"), &e["p99"], s.p99)?;
        let mut samples = obs.samples.clone();
        samples.sort_by(f64::total_cmp);
        let want = expected["samples"][name]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if want.len() != samples.len() {
            return Err(format!(
                "observe {name}: expected {} samples, got {}",
                want.len(),
                samples.len()
            ));
        }
        for (i, (w, a)) in want.iter().zip(&samples).enumerate() {
            check(&format!("observe {name} sorted sample {i}"), w, Some(*a))?;
        }
    }
    let stages = r["stages"].as_array().ok_or("no stages")?;
    if stages.len() != report.stages.len() {
        return Err(format!(
            "expected {} stages, got {}",
            stages.len(),
            report.stages.len()
        ));
    }
    for (i, (e, a)) in stages.iter().zip(&report.stages).enumerate() {
        let w = format!("stage[{i}] {}", a.name);
        if e["name"].as_str() != Some(a.name.as_str()) {
            return Err(format!("{w}: expected name {}", e["name"]));
        }
        check(
            &format!("{w} completed"),
            &e["completed"],
            Some(a.completed as f64),
        )?;
        check(
            &format!("{w} mean_number"),
            &e["mean_number"],
            Some(a.mean_number),
        )?;
        check(
            &format!("{w} utilization"),
            &e["utilization"],
            a.utilization,
        )?;
        check(
            &format!("{w} throughput"),
            &e["throughput"],
            Some(a.throughput),
        )?;
        check(
            &format!("{w} mean_service"),
            &e["mean_service"],
            a.mean_service,
        )?;
        check(&format!("{w} mean_wait"), &e["mean_wait"], a.mean_wait)?;
    }
    let pools = r["pools"].as_array().ok_or("no pools")?;
    if pools.len() != report.pools.len() {
        return Err(format!(
            "expected {} pools, got {}",
            pools.len(),
            report.pools.len()
        ));
    }
    for (i, (e, a)) in pools.iter().zip(&report.pools).enumerate() {
        let w = format!("pool[{i}] {}", a.name);
        if e["name"].as_str() != Some(a.name.as_str()) {
            return Err(format!("{w}: expected name {}", e["name"]));
        }
        check(
            &format!("{w} admissions"),
            &e["admissions"],
            Some(a.admissions as f64),
        )?;
        check(
            &format!("{w} mean_used"),
            &e["mean_used"],
            Some(a.mean_used),
        )?;
        check(
            &format!("{w} mean_queue"),
            &e["mean_queue"],
            Some(a.mean_queue),
        )?;
        check(
            &format!("{w} mean_holders"),
            &e["mean_holders"],
            Some(a.mean_holders),
        )?;
        check(&format!("{w} mean_wait"), &e["mean_wait"], a.mean_wait)?;
    }
    Ok(())
}

/// Compares a stochastic case loosely: each observation's mean within
/// max(3 ci, 5% of |mean|), each stage's utilisation within 0.03.
pub fn compare_stochastic(expected: &Value, report: &Report) -> Result<(), String> {
    let r = &expected["report"];
    for (name, e) in r["observes"].as_object().ok_or("no observes")? {
        let Some(mean) = e["mean"].as_f64() else {
            continue;
        };
        let obs = report
            .observes
            .iter()
            .find(|o| &o.name == name)
            .ok_or_else(|| format!("observe {name} missing"))?;
        let got = Summary::of(&obs.samples)
            .mean
            .ok_or_else(|| format!("observe {name}: no mean"))?;
        let tol = (3.0 * e["ci"].as_f64().unwrap_or(0.0)).max(0.05 * mean.abs());
        if (got - mean).abs() > tol {
            return Err(format!(
                "observe {name} mean: expected {mean} ± {tol}, got {got}"
            ));
        }
    }
    for (e, a) in r["stages"]
        .as_array()
        .ok_or("no stages")?
        .iter()
        .zip(&report.stages)
    {
        if let (Some(u), Some(got)) = (e["utilization"].as_f64(), a.utilization)
            && (u - got).abs() > 0.03
        {
            return Err(format!(
                "stage {} utilization: expected {u}, got {got}",
                a.name
            ));
        }
    }
    Ok(())
}

/// Parses and links a program's source text (panics with the diagnostics
/// if it does not link: the engine's tests only run valid programs).
pub fn compile(source: &str) -> serq::ir::Program {
    let (ast, diags) = serq::syntax::parse(source);
    assert!(diags.is_empty(), "parse errors: {diags:?}");
    match serq::link::link(&ast, source, &Default::default()) {
        Ok(program) => program,
        Err(diags) => panic!("link errors: {diags:?}"),
    }
}

/// Compiles and runs a program given as text.
pub fn run(source: &str) -> Result<Report, serq::engine::RunError> {
    serq::engine::run(&compile(source))
}

/// Runs a program that must run, and returns its samples of `name` in recording order.
pub fn samples(report: &Report, name: &str) -> Vec<f64> {
    report
        .observes
        .iter()
        .find(|o| o.name == name)
        .unwrap_or_else(|| panic!("no observation `{name}`"))
        .samples
        .clone()
}
