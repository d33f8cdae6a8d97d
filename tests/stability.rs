//! The stability test (docs/report.md §2.1): a run whose live sessions grow
//! over the second half of its measured interval is flagged, in the report's
//! JSON (`stable`), in replications and on stderr.

use serq::report::{Report, TREND_T, WindowedAverage};
use serq::study::student_t_quantile;
use serq::{Overrides, compile_file, compile_source, run};
use std::path::Path;

/// M/M/1: Poisson arrivals at rate `rho`, exponential service of mean 1.
const MM1: &str = "let rho = 0.5;
stage srv : fifo;
workload { arrive poisson(rho); }
session { set t0 = now; run srv (~exp(1)); observe response = now - t0; }
run { horizon 100000; seed 1; }";

fn mm1(rho: f64) -> Report {
    let o = Overrides {
        sets: vec![("rho".into(), rho)],
        ..Overrides::default()
    };
    run(&compile_source(MM1, &o).expect("MM1 links")).expect("MM1 runs")
}

#[test]
fn an_mm1_queue_above_capacity_is_flagged() {
    // ρ = 1.05 grows by about 0.05 a unit of time, 2500 over the second half.
    for rho in [1.05, 1.2] {
        let s = mm1(rho)
            .stability()
            .expect("judged: the run reaches its horizon");
        assert!(!s.stable, "ρ = {rho}: {s:?}");
        assert!((s.growth - (rho - 1.0)).abs() < 0.02, "ρ = {rho}: {s:?}");
    }
}

#[test]
fn an_mm1_queue_below_capacity_is_not_flagged_over_a_long_horizon() {
    for rho in [0.5, 0.95] {
        let s = mm1(rho).stability().expect("judged");
        assert!(s.stable, "ρ = {rho}: {s:?}");
    }
}

fn capacity(nd: f64) -> Report {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let o = Overrides {
        sets: vec![("ND".into(), nd), ("lam".into(), 12.0)],
        ..Overrides::default()
    };
    let program = compile_file(&root.join("examples/pd-disaggregation/capacity.sq"), &o)
        .expect("the example links");
    run(&program).expect("the example runs")
}

#[test]
fn the_capacity_example_is_unstable_with_two_decoders_at_rate_12() {
    // Each decoder serves about 4 requests a second: 2 serve 8 of the 12.
    assert_eq!(capacity(2.0).stability().map(|s| s.stable), Some(false));
    // 5 serve about 20.
    assert_eq!(capacity(5.0).stability().map(|s| s.stable), Some(true));
}

/// A report whose live sessions averaged `series` over its 64 windows of [0, 64].
fn with_series(series: Vec<f64>) -> Report {
    let mut report = mm1(0.5);
    report.horizon = 64.0;
    report.end = 64.0;
    report.warmup = 0.0;
    report.live_series = series;
    report
}

#[test]
fn a_straight_rise_is_unstable_and_a_flat_line_stable() {
    // Windows of 1: y = k/2 rises by 0.5 a window, 16 over the second half;
    // no residual, so t is infinite.
    let rise: Vec<f64> = (0..64).map(|k| f64::from(k) / 2.0).collect();
    let s = with_series(rise).stability().unwrap();
    assert_eq!(
        (s.stable, s.growth, s.t, s.rise),
        (false, 0.5, f64::INFINITY, 16.0)
    );
    assert_eq!(s.span, (32.0, 64.0));
    let flat = with_series(vec![3.0; 64]).stability().unwrap();
    assert!(flat.stable && flat.t == 0.0);
}

#[test]
fn a_rise_below_one_session_is_not_a_growing_queue() {
    // y = k/100 over the second half rises by 0.32 only: however straight,
    // less than one session is not a queue that grows.
    let small: Vec<f64> = (0..64).map(|k| f64::from(k) / 100.0).collect();
    let s = with_series(small).stability().unwrap();
    assert!(
        s.stable && s.t > TREND_T && (s.rise - 0.32).abs() < 1e-12,
        "{s:?}"
    );
}

#[test]
fn a_run_ended_by_an_arrivals_limit_is_not_judged() {
    let mut report = with_series(vec![1.0; 40]);
    report.end = 40.0;
    assert_eq!(report.stability(), None);
    assert_eq!(WindowedAverage::WINDOWS, 64);
}

#[test]
fn the_trend_level_is_students_t_at_30_degrees_of_freedom() {
    // 32 windows, 2 fitted parameters: 30 degrees of freedom, one-sided 0.001.
    let t = student_t_quantile(0.999, 30.0).unwrap();
    assert!((t - TREND_T).abs() < 5e-4, "{t}");
}

#[test]
fn the_json_report_says_whether_the_run_is_stable() {
    let v: serde_json::Value = serde_json::from_str(&mm1(1.2).to_json(false)).unwrap();
    assert_eq!(v["stable"], false);
    let v: serde_json::Value = serde_json::from_str(&mm1(0.5).to_json(false)).unwrap();
    assert_eq!(v["stable"], true);
}

#[test]
fn serq_run_warns_on_stderr_about_an_unstable_run() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("stability");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("mm1.sq");
    std::fs::write(&path, MM1).unwrap();
    let serq = |rho: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_serq"))
            .args(["run", "--horizon", "10000", "--set", &format!("rho={rho}")])
            .arg(&path)
            .output()
            .unwrap()
    };
    let out = serq("1.2");
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("warning: ") && stderr.contains("unstable: the live sessions grow"),
        "{stderr}"
    );
    assert!(serq("0.5").stderr.is_empty());
}
