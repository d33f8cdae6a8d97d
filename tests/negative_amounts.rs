//! Computed negative amounts (spec §10 Q13): taken as 0 as pyserq 0.1.0
//! takes them, counted in the report's `warnings` and on stderr, and a
//! run-time error under `--strict`, in `run`, `run --replications` and
//! `sweep` alike.

use std::process::{Command, Output};

/// The NIXL-pull pattern on a P/D deployment: a preempted request resumes
/// with `known = computed + 1` and decodes `o - 1 - (known - prompt)`,
/// below 0 for one preempted while growing for its last token.
const PD: &str = "tests/serving/real_pd_preempted_decode_goes_negative.sq";

fn serq(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_serq"))
        .args(args)
        .output()
        .expect("the serq binary runs")
}

#[test]
fn a_preempted_decode_below_zero_runs_to_the_horizon_with_one_warning() {
    let out = serq(&["run", "--json", PD]);
    assert_eq!(out.status.code(), Some(0));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["end"], 60.0);
    let warnings = report["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let w = &warnings[0];
    // The values pyserq 0.1.0's run passes through (the case's expected
    // file): 15 decodes below 0, the first of session 12 at t = 2.92386,
    // at the decode statement (line 40), o - 1 - (known - prompt) = -0.63.
    assert_eq!(w["kind"], "negative_amount");
    assert_eq!(w["count"], 15);
    assert_eq!(w["first"]["session"], 12);
    assert_eq!(w["first"]["time"], 2.92386);
    assert_eq!(w["first"]["statement"], format!("{PD}:40"));
    assert!((w["min"].as_f64().unwrap() + 0.63).abs() < 1e-12, "{w}");
    // Printed once on stderr, as in text mode.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.matches("warning:").count(), 1, "{stderr}");
    assert!(
        stderr.contains("15 computed amounts went negative"),
        "{stderr}"
    );
}

#[test]
fn strict_makes_the_first_negative_amount_a_run_time_error() {
    let out = serq(&["run", "--strict", PD]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("error[negative]: run-time error in session 12 at t = 2.92386"),
        "{stderr}"
    );
    assert!(stderr.contains(&format!("{PD}:40:5")), "{stderr}");
}

#[test]
fn replications_add_their_counts_and_a_sweep_row_counts_its_warnings() {
    // Deterministic: every replication gives the same 15.
    let out = serq(&["run", "--json", "--replications", "2", PD]);
    assert_eq!(out.status.code(), Some(0));
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["warnings"][0]["count"], 30);
    let out = serq(&["sweep", PD, "--grid", "gap=0.2", "--replications", "2"]);
    assert_eq!(out.status.code(), Some(0));
    let csv = String::from_utf8_lossy(&out.stdout);
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    let at = header.iter().position(|c| *c == "warnings").unwrap();
    assert_eq!(row[at], "30");
    let strict = serq(&["sweep", PD, "--grid", "gap=0.2", "--strict"]);
    assert_eq!(strict.status.code(), Some(1));
}

#[test]
fn a_constant_negative_amount_is_still_a_link_error() {
    let dir = std::env::temp_dir().join(format!("serq-neg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("const.sq");
    std::fs::write(
        &path,
        "stage s : delay;\nworkload { arrive batch(1); }\nsession { run s (-1); }\nrun { horizon 2; }\n",
    )
    .unwrap();
    let out = serq(&["run", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("error[amount]"));
}
