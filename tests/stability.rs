//! The stability test (docs/report.md §2.1): a point (one run, or the
//! replications of one program) whose live sessions grow over the second
//! half of its measured interval is flagged, once, as transient or
//! overloaded, in the JSON (`stable`, `stability`, `growing`), in
//! replications and on stderr.

use serq::report::{Place, Report, TREND_T, Trend, Trends, Verdict, WindowedAverage, judge};
use serq::study::{replicate, student_t_quantile};
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
        assert_eq!(s.verdict, Verdict::Overloaded, "ρ = {rho}: {s:?}");
        assert!((s.growth - (rho - 1.0)).abs() < 0.02, "ρ = {rho}: {s:?}");
    }
}

#[test]
fn an_mm1_queue_below_capacity_is_not_flagged_over_a_long_horizon() {
    for rho in [0.5, 0.95] {
        let s = mm1(rho).stability().expect("judged");
        assert!(s.is_stable(), "ρ = {rho}: {s:?}");
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
    let two = capacity(2.0).stability().unwrap();
    assert_eq!(two.verdict, Verdict::Overloaded);
    // 5 serve about 20.
    assert_eq!(
        capacity(5.0).stability().map(|s| s.verdict),
        Some(Verdict::Steady)
    );
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
fn a_straight_rise_is_overloaded_and_a_flat_line_steady() {
    // Windows of 1: y = k/2 rises by 0.5 a window, 16 over the second half,
    // as fast as over the first; no residual, so t is infinite.
    let rise: Vec<f64> = (0..64).map(|k| f64::from(k) / 2.0).collect();
    let s = with_series(rise).stability().unwrap();
    assert_eq!(
        (s.verdict, s.growth, s.early_growth, s.t, s.rise),
        (Verdict::Overloaded, 0.5, 0.5, f64::INFINITY, 16.0)
    );
    assert_eq!(
        (s.span, s.threshold, s.replications),
        ((32.0, 64.0), TREND_T, 1)
    );
    let flat = with_series(vec![3.0; 64]).stability().unwrap();
    assert!(flat.is_stable() && flat.t == 0.0 && flat.growing.is_empty());
}

#[test]
fn a_rise_that_slows_to_less_than_half_is_transient() {
    // Slope 2 a window over the first half (y = 2k), 0.5 over the second
    // (y = 64 + (k − 32)/2): a quarter of the first half's growth (below
    // half: settling), and a rise of 0.5 · 32 = 16 sessions.
    let series: Vec<f64> = (0..64)
        .map(|k| {
            let k = f64::from(k);
            if k < 32.0 {
                2.0 * k
            } else {
                64.0 + (k - 32.0) / 2.0
            }
        })
        .collect();
    let s = with_series(series).stability().unwrap();
    assert_eq!(
        (s.verdict, s.early_growth, s.growth, s.rise),
        (Verdict::Transient, 2.0, 0.5, 16.0)
    );
}

#[test]
fn a_rise_below_one_session_is_not_a_growing_queue() {
    // y = k/100 over the second half rises by 0.32 only: however straight,
    // less than one session is not a queue that grows.
    let small: Vec<f64> = (0..64).map(|k| f64::from(k) / 100.0).collect();
    let s = with_series(small).stability().unwrap();
    assert!(
        s.is_stable() && s.t > TREND_T && (s.rise - 0.32).abs() < 1e-12,
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
        stderr.starts_with("warning: ") && stderr.contains("overloaded: the live sessions grow"),
        "{stderr}"
    );
    assert!(serq("0.5").stderr.is_empty());
}

/// Write `source` as `NAME.sq` in this test's directory.
fn program_file(name: &str, source: &str) -> std::path::PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("stability");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.sq"));
    std::fs::write(&path, source).unwrap();
    path
}

/// `serq run ARGS…`: its exit status, stdout and stderr.
fn serq(args: &[&str]) -> (bool, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_serq"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Sessions that arrive at rate 1 and each stay in a delay stage for a
/// time uniform on [0, 20000), over a horizon of 20000 from empty: the
/// live sessions are L(t) = t − t²/40000 in mean, whose slope 1 − t/20000
/// averages 0.75 over the first half and 0.25 over the second (a third:
/// still settling), a rise of 0.25 · 10000 = 2500 sessions.
const FILLING: &str = "stage d : delay;
workload { arrive poisson(1); }
session { run d (~uniform(0, 20000)); }
run { horizon 20000; seed 1; }";

/// Arrivals at rate 2 to a fifo server of service 2/3 (the jobs present
/// grow by 2 − 1.5 = 0.5 a unit of time, at the first half's rate), whose
/// 1.5 a unit of time then queue for a pool of one unit held for 1 by way
/// of a delay stage (its queue grows by 1.5 − 1 = 0.5 a unit of time; the
/// delay stage holds one job at most).
const OVERLOADED: &str = "pool kv { cap 1; }
stage s[2] : fifo;
stage d : delay;
workload { arrive poisson(2); }
session { run s[1] (2 / 3); hold kv (1) { run d (1); } }
run { horizon 4000; seed 1; }";

#[test]
fn a_filling_system_is_transient_and_names_what_fills() {
    let report = run(&compile_source(FILLING, &Overrides::default()).unwrap()).unwrap();
    let s = report.stability().unwrap();
    assert_eq!(s.verdict, Verdict::Transient, "{s:?}");
    // 0.75 and 0.25 a unit of time, give or take the Poisson noise.
    assert!(
        (s.early_growth - 0.75).abs() < 0.05 && (s.growth - 0.25).abs() < 0.05,
        "{s:?}"
    );
    assert_eq!(s.growing.len(), 1);
    assert_eq!(
        (s.growing[0].place, s.growing[0].name.as_str()),
        (Place::Stage, "d")
    );
    // A warm-up past the filling (every stay ends by 20000) makes it steady.
    let o = Overrides {
        horizon: Some(60000.0),
        warmup: Some(20000.0),
        ..Overrides::default()
    };
    let settled = run(&compile_source(FILLING, &o).unwrap()).unwrap();
    assert_eq!(settled.stability().unwrap().verdict, Verdict::Steady);
}

#[test]
fn an_overloaded_system_names_the_stage_member_and_the_pool_that_grow() {
    let program = compile_source(OVERLOADED, &Overrides::default()).unwrap();
    for s in [
        run(&program).unwrap().stability().unwrap(),
        replicate(&program, 4).unwrap().stability.unwrap(),
    ] {
        assert_eq!(s.verdict, Verdict::Overloaded, "{s:?}");
        // s[1] and kv each gain about 0.5 a unit of time; s[0] has no job,
        // d one at most.
        let growing: Vec<_> = s
            .growing
            .iter()
            .map(|g| (g.place, g.name.as_str(), g.member))
            .collect();
        assert_eq!(
            growing,
            [(Place::Stage, "s", Some(1)), (Place::Pool, "kv", None)],
            "{s:?}"
        );
        assert!(
            s.growing.iter().all(|g| (g.growth - 0.5).abs() < 0.1),
            "{s:?}"
        );
    }
}

#[test]
fn the_json_says_stable_stability_and_growing_for_a_run_and_for_replications() {
    let path = program_file("overloaded", OVERLOADED);
    let path = path.to_str().unwrap();
    for args in [
        vec!["run", "--json", path],
        vec!["run", "--json", "--replications", "3", path],
    ] {
        let (ok, stdout, _) = serq(&args);
        assert!(ok);
        let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(
            (&v["stable"], &v["stability"]),
            (&false.into(), &"overloaded".into()),
            "{args:?}"
        );
        let g = &v["growing"];
        assert_eq!(g.as_array().unwrap().len(), 2);
        assert_eq!(
            (&g[0]["kind"], &g[0]["name"], &g[0]["member"]),
            (&"stage".into(), &"s".into(), &1.into())
        );
        assert_eq!(
            (&g[1]["kind"], &g[1]["name"], &g[1]["member"]),
            (&"pool".into(), &"kv".into(), &serde_json::Value::Null)
        );
        // One verdict per point, whatever the replications.
        let w = &v["warnings"][0];
        assert_eq!(
            (&w["kind"], &w["count"], &w["stability"]),
            (&"stability".into(), &1.into(), &"overloaded".into())
        );
    }
    let (_, stdout, _) = serq(&[
        "run",
        "--json",
        program_file("mm1_json", MM1).to_str().unwrap(),
    ]);
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        (&v["stable"], &v["stability"], &v["growing"]),
        (&true.into(), &"steady".into(), &serde_json::json!([]))
    );
    assert_eq!(v["warnings"], serde_json::json!([]));
}

#[test]
fn a_run_ended_by_an_arrivals_limit_has_no_verdict_in_the_json() {
    let (ok, stdout, _) = serq(&[
        "run",
        "--json",
        "--arrivals",
        "50",
        program_file("mm1_arrivals", MM1).to_str().unwrap(),
    ]);
    assert!(ok);
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        (&v["stable"], &v["stability"], &v["growing"]),
        (
            &serde_json::Value::Null,
            &serde_json::Value::Null,
            &serde_json::json!([])
        )
    );
}

#[test]
fn each_verdict_has_its_own_warning() {
    let (_, _, overloaded) = serq(&[
        "run",
        program_file("overloaded_warns", OVERLOADED)
            .to_str()
            .unwrap(),
    ]);
    assert!(
        overloaded.contains(": overloaded: the live sessions grow by "),
        "{overloaded}"
    );
    assert!(
        overloaded.contains(
            "arrivals exceed what the system serves, so its means measure the horizon, not the \
         system (growing: stage s[1], pool kv)"
        ),
        "{overloaded}"
    );
    assert_eq!(overloaded.lines().count(), 1, "{overloaded}");
    let (_, _, transient) = serq(&[
        "run",
        "--replications",
        "3",
        program_file("filling_warns", FILLING).to_str().unwrap(),
    ]);
    assert!(
        transient.contains(": not yet at a steady state: the live sessions still grow by "),
        "{transient}"
    );
    assert!(
        transient.contains("across 3 replications trend t = "),
        "{transient}"
    );
    assert!(transient.contains("(filling: stage d): a transient that has not died out; a longer warmup or horizon measures the steady state"), "{transient}");
    assert_eq!(
        transient.lines().count(),
        1,
        "one verdict for the point: {transient}"
    );
}

/// A run's trends with live late slopes `late` (early 0, each with a
/// Newey–West error of 0.1) over [0, 64].
fn runs(late: &[f64]) -> Vec<Trends> {
    late.iter()
        .map(|&late| Trends {
            live: Trend {
                early: 0.0,
                late,
                se: 0.1,
            },
            stages: Vec::new(),
            pools: Vec::new(),
            interval: (0.0, 64.0),
        })
        .collect()
}

#[test]
fn replications_are_judged_by_their_spread_not_one_by_one() {
    // Slopes 0, 2, 4 a window: the last two alone are t = 20 and 40 on
    // their own error of 0.1; across the three, mean 2, s = 2, error
    // 2/√3, t = √3 = 1.73 < t(0.999, 2) = 22.33: steady.
    let s = judge(&runs(&[0.0, 2.0, 4.0]), &[], &[]).unwrap();
    assert_eq!(s.verdict, Verdict::Steady);
    assert!((s.t - 3f64.sqrt()).abs() < 1e-12, "{s:?}");
    assert!((s.threshold - 22.327).abs() < 1e-3, "{s:?}");
    assert_eq!((s.replications, s.alone), (3, 2));
    // Slopes 1, 2, 3: t = 3.46 across them, but every one is flagged on
    // its own (t ≥ 10), which a steady point does with probability p³.
    let s = judge(&runs(&[1.0, 2.0, 3.0]), &[], &[]).unwrap();
    assert!((s.t - 2.0 * 3f64.sqrt()).abs() < 1e-12, "{s:?}");
    assert_eq!((s.verdict, s.alone), (Verdict::Overloaded, 3));
    // One of twenty flagged alone (slope 3, t = 30 on its own error) among
    // slopes that cancel: the point is steady, where flagging any one
    // replication would flag it.
    let mut late = [0.5, -0.5].repeat(10);
    late[0] = 3.0;
    assert_eq!(
        judge(&runs(&late), &[], &[]).unwrap().verdict,
        Verdict::Steady
    );
    assert_eq!(
        judge(&runs(&late[..1]), &[], &[]).unwrap().verdict,
        Verdict::Overloaded
    );
}

#[test]
fn nixl_pull_at_its_defaults_over_20_replications_is_steady() {
    // Issue 40: judged one replication at a time, 2 of these 20 seeds were
    // flagged and so was the point.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let program = compile_file(
        &root.join("examples/pd-disaggregation/nixl_pull.sq"),
        &Overrides::default(),
    )
    .unwrap();
    let r = replicate(&program, 20).unwrap();
    let s = r.stability.as_ref().unwrap();
    assert_eq!(
        (s.verdict, r.is_stable()),
        (Verdict::Steady, Some(true)),
        "{s:?}"
    );
    assert!(r.warnings("").is_empty());
}
