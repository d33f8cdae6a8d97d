//! SLO attainment, `serq search` and cost searches: counting rules on
//! deterministic programs (hand-derived), the load limit of M/M/1 and the
//! smallest M/M/c against queueing theory, and bad input refused before
//! any run.

use serq::report::Slo;
use serq::study::{Axis, Load, SearchPlan, SearchSpec, Verdict};
use std::process::{Command, Output};

fn serq(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_serq"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the serq binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn scratch(name: &str, contents: &str) -> String {
    let dir = std::env::temp_dir().join(format!("serq-search-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, contents).expect("write scratch file");
    path.to_string_lossy().into_owned()
}

fn attainment_of(source: &str, bounds: &[&str]) -> serq::report::Attainment {
    let program = serq::compile_source(source, &Default::default()).unwrap();
    let slo = Slo::parse(bounds).unwrap();
    let report = slo.run(&program).unwrap();
    slo.attainment(&report).unwrap()
}

#[test]
fn a_request_unfinished_at_the_horizon_does_not_attain() {
    // Three sessions at 0; session k runs 5(k+1): responses 5, 10 and 15.
    // The horizon 12 cuts the third before it observes. Bound 6: the
    // first attains, the second misses, the third is unfinished.
    let a = attainment_of(
        "stage s : delay; workload { arrive batch(3); }
         session { run s (5 * (serial + 1)); observe response = now; }
         run { horizon 12; }",
        &["response<=6"],
    );
    assert_eq!((a.requests, a.attained, a.unfinished), (3, 1, 1));
    assert_eq!(a.attainment, Some(1.0 / 3.0));
    // One attained request over [0, 12].
    assert_eq!(a.goodput, 1.0 / 12.0);
}

#[test]
fn warmup_counts_the_requests_that_arrive_after_it() {
    // Arrivals every 2 from t = 2 (renewal), each served 1. Warm-up 5:
    // the arrivals at 6, 8, …, 20 count (8); the one at 4 observes at 5
    // but arrived before: not counted. The arrival at 20 is cut by the
    // horizon: unfinished. 7 of 8 attain; goodput 7 / (20 - 5).
    let a = attainment_of(
        "stage s : delay; workload { arrive renewal(2); }
         session { set t0 = now; run s (1); observe response = now - t0; }
         run { horizon 20; warmup 5; }",
        &["response<=1"],
    );
    assert_eq!((a.requests, a.attained, a.unfinished), (8, 7, 1));
    assert_eq!(a.goodput, 7.0 / 15.0);
}

#[test]
fn multi_turn_sessions_are_one_request_a_turn_and_the_worst_sample_counts() {
    // turn 0 ends at once (`turn;` first) having observed nothing: not a
    // request. Turn 1 observes ttft 1; turn 2 observes 3, then 0.5: the
    // worst (3) misses the bound 2. Two requests, one attains.
    let source = "stage s : delay; workload { arrive batch(1); }
         session { turn; observe ttft = 1; run s (1); turn; observe ttft = 3;
                   run s (1); observe ttft = 0.5; end; }
         run { horizon 10; }";
    let a = attainment_of(source, &["ttft<=2"]);
    assert_eq!((a.requests, a.attained, a.unfinished), (2, 1, 0));
    let program = serq::compile_source(source, &Default::default()).unwrap();
    let slo = Slo::parse(["ttft<=2"]).unwrap();
    let csv = slo.requests_csv(&slo.run(&program).unwrap()).unwrap();
    assert_eq!(
        csv,
        "session,turn,arrival,ttft,finished,attained\n0,1,0,1,true,true\n0,2,1,3,true,false\n"
    );
}

#[test]
fn bounds_are_joint_and_a_missing_observation_fails_the_request() {
    // Session k: ttft k, and tpot 0.1 only for even k. Bounds ttft <= 2 and
    // tpot < 0.2: k = 0 and 2 attain; k = 1 has no tpot (ended without
    // it); k = 3 misses ttft (and has no tpot).
    let a = attainment_of(
        "stage s : delay; workload { arrive batch(4); }
         session { observe ttft = serial;
                   branch (serial - 2 * floor(serial / 2) == 0) { observe tpot = 0.1; } }
         run { horizon 10; }",
        &["ttft<=2", "tpot<0.2"],
    );
    assert_eq!((a.requests, a.attained, a.unfinished), (4, 2, 0));
}

#[test]
fn run_json_and_replications_json_carry_the_slo() {
    let program = scratch(
        "det.sq",
        "stage s : delay; workload { arrive batch(3); }
         session { run s (5 * (serial + 1)); observe response = now; }
         run { horizon 12; }",
    );
    let out = serq(&["run", &program, "--slo", "response<=6", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_str(&text(&out.stdout)).unwrap();
    assert_eq!(v["slo"]["requests"], 3);
    assert_eq!(v["slo"]["unfinished"], 1);
    assert_eq!(v["slo"]["attainment"], 1.0 / 3.0);
    let out = serq(&[
        "run",
        &program,
        "--slo",
        "response<=6",
        "--json",
        "--replications",
        "2",
    ]);
    let v: serde_json::Value = serde_json::from_str(&text(&out.stdout)).unwrap();
    assert_eq!(v["slo"]["attainment"]["n"], 2);
    assert_eq!(v["slo"]["attainment"]["ci"], 0.0);
    assert_eq!(v["slo"]["requests"]["mean"], 3.0);
    // Without --slo nothing changes: no field, no line.
    let plain = serq(&["run", &program, "--json"]);
    assert!(!text(&plain.stdout).contains("slo"));
    let table = serq(&["run", &program]);
    assert!(!text(&table.stdout).contains("slo"));
}

/// M/M/1 FIFO with service rate μ = 1: the sojourn time is exponential
/// with rate μ − λ, so P(response ≤ T) = 1 − e^{−(μ−λ)T} ≥ q holds up to
/// λ* = μ + ln(1 − q)/T. With T = 10 and q = 0.9: λ* = 1 − ln(10)/10 =
/// 0.769741. The search's interval must bracket λ* and lie within 2% of it.
#[test]
fn search_finds_the_mm1_limit_of_a_response_time_slo() {
    let source = "let lam = 0.5; stage srv : fifo; workload { arrive poisson(lam); }
                  session { set t0 = now; run srv (~exp(1)); observe response = now - t0; }
                  run { horizon 50000; warmup 1000; seed 1; }";
    let mut spec = SearchSpec::new(Slo::parse(["response<=10"]).unwrap());
    spec.target = 0.9;
    spec.load = Some(Load::parse("lam=0.1:0.99").unwrap());
    let plan = SearchPlan::new(source, None, &Default::default(), spec.clone()).unwrap();
    let result = plan.run(Vec::new(), &|| {}, &mut |_, _| {}).unwrap();
    let star = 1.0 + (0.1f64).ln() / 10.0;
    let (low, high) = result.configs[0].limit.unwrap();
    let (low, high) = (low.unwrap(), high.unwrap());
    assert!(low <= star && star <= high, "[{low}, {high}] vs {star}");
    assert!((low - star).abs() / star < 0.02, "{low} vs {star}");
    assert!((high - star).abs() / star < 0.02, "{high} vs {star}");
    // The same seeds give the same search, probe for probe; a replay of
    // its probes gives the same answer without running anything.
    let again = plan.run(Vec::new(), &|| {}, &mut |_, _| {}).unwrap();
    assert_eq!(again, result);
    let rows: Vec<_> = result.probes.iter().map(|p| plan.row(p)).collect();
    let replayed = plan.run(rows, &|| {}, &mut |_, _| {}).unwrap();
    assert_eq!(replayed.runs, 0);
    assert_eq!(replayed.configs[0].limit, result.configs[0].limit);
}

/// M/M/c through a pool of c slots, λ = 4, μ = 1: the wait before a slot
/// exceeds t with probability C(c, λ/μ)·e^{−(cμ−λ)t} (Erlang C). With
/// t = 0.5: attainment 0.664 (c = 5), 0.895 (6), 0.970 (7), 0.992 (8);
/// below c = 5 the queue grows. For a target of 0.93 the smallest c is 7,
/// and a cost of c makes it the cheapest.
#[test]
fn cost_search_finds_the_smallest_mmc_that_attains() {
    let source = "let c = 1; let lam = 1; pool slots { cap c; } stage srv : delay;
                  workload { arrive poisson(lam); }
                  session { set t0 = now; hold slots (1) { observe wait = now - t0; run srv (~exp(1)); } }
                  run { horizon 20000; warmup 500; seed 3; }";
    let mut spec = SearchSpec::new(Slo::parse(["wait<=0.5"]).unwrap());
    spec.target = 0.93;
    spec.at = vec![("lam".to_string(), 4.0)];
    spec.grid = vec![Axis::parse("c=1:10").unwrap()];
    spec.cost = Some("c".to_string());
    let plan = SearchPlan::new(source, None, &Default::default(), spec).unwrap();
    let result = plan.run(Vec::new(), &|| {}, &mut |_, _| {}).unwrap();
    let best = result.best.unwrap();
    assert_eq!(result.configs[best].values, vec![7.0]);
    assert_eq!(result.configs[best].cost, Some(7.0));
    assert_eq!(result.configs[5].verdict, Some(Verdict::Fail));
    // Dearer configurations than the answer are not run.
    assert_eq!(result.configs[7].verdict, None);
    let a = result.configs[best].slo.unwrap().attainment.mean.unwrap();
    assert!((a - 0.970).abs() < 0.01, "{a}");
}

#[test]
fn search_json_has_best_cost_slo_and_limit() {
    let program = scratch(
        "mmc.sq",
        "let c = 1; let lam = 4; def gpu_price() = 2; pool slots { cap c; } stage srv : delay;
         workload { arrive poisson(lam); }
         session { set t0 = now; hold slots (1) { observe wait = now - t0; run srv (~exp(1)); } }
         run { horizon 5000; warmup 500; seed 3; }",
    );
    let out = serq(&[
        "search",
        &program,
        "--grid",
        "c=5:9",
        "--cost",
        "c * gpu_price()",
        "--slo",
        "wait<=0.5",
        "--attain",
        "0.93",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_str(&text(&out.stdout)).unwrap();
    assert_eq!(v["best"]["c"], 7);
    assert_eq!(v["cost"], 14);
    assert!(v["slo"]["attainment"].as_f64().unwrap() > 0.93);
    // A load search of one configuration: its limit, an interval.
    let out = serq(&[
        "search",
        &program,
        "--set",
        "c=7",
        "--load",
        "lam=1:6.9",
        "--slo",
        "wait<=0.5",
        "--attain",
        "0.93",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_str(&text(&out.stdout)).unwrap();
    let limit = v["limit"].as_array().unwrap();
    let (low, high) = (limit[0].as_f64().unwrap(), limit[1].as_f64().unwrap());
    assert!(low < high && low > 4.0 && high < 6.0, "{limit:?}");
    // HI passes: [HI, null].
    let out = serq(&[
        "search",
        &program,
        "--set",
        "c=9",
        "--load",
        "lam=1:2",
        "--slo",
        "wait<=0.5",
        "--attain",
        "0.9",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&text(&out.stdout)).unwrap();
    assert_eq!(v["limit"], serde_json::json!([2, null]));
}

#[test]
fn bad_input_is_refused_before_any_run_with_exit_2() {
    let program = scratch(
        "mm1.sq",
        "let lam = 0.5; stage srv : fifo; workload { arrive poisson(lam); }
         session { set t0 = now; run srv (~exp(1)); observe response = now - t0; }
         run { horizon 100; }",
    );
    let program = program.as_str();
    let cases: &[(&[&str], &str)] = &[
        (
            &["--load", "lam=0.1:0.9", "--slo", "respnse<=5"],
            "did you mean `response`?",
        ),
        (
            &["--load", "lam=0.1:0.9", "--slo", "response=5"],
            "no `<=` or `<`",
        ),
        (&["--load", "lam=0.9:0.1", "--slo", "response<=5"], "empty"),
        (
            &[
                "--load",
                "lam=0.1:0.9",
                "--slo",
                "response<=5",
                "--attain",
                "1.5",
            ],
            "(0, 1]",
        ),
        (&["--load", "lan=0.1:0.9", "--slo", "response<=5"], "lan"),
        (&["--at", "lan=1", "--slo", "response<=5"], "lan"),
        (&["--grid", "lan=1:2", "--slo", "response<=5"], "lan"),
        (
            &[
                "--load",
                "lam=0.1:0.9",
                "--slo",
                "response<=5",
                "--cost",
                "lan * 2",
            ],
            "did you mean",
        ),
    ];
    for (args, expected) in cases {
        let mut all = vec!["search", program];
        all.extend_from_slice(args);
        if !args.contains(&"--attain") {
            all.extend_from_slice(&["--attain", "0.9"]);
        }
        let out = serq(&all);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
}

#[test]
fn a_non_empty_out_is_refused_unless_resumed_or_forced() {
    let program = scratch(
        "d.sq",
        "let d = 1; stage s : delay; workload { arrive batch(1); }
         session { run s (d); observe response = now; } run { horizon 10; }",
    );
    let out_file = scratch("rows.csv", "precious\n");
    for command in [
        vec!["sweep", &program, "--grid", "d=1:2", "--out", &out_file],
        vec![
            "search",
            &program,
            "--grid",
            "d=1:2",
            "--slo",
            "response<=1",
            "--attain",
            "0.5",
            "--out",
            &out_file,
        ],
    ] {
        let out = serq(&command);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
        assert!(
            text(&out.stderr).contains("--force"),
            "{}",
            text(&out.stderr)
        );
        assert_eq!(std::fs::read_to_string(&out_file).unwrap(), "precious\n");
        let mut both = command.clone();
        both.extend_from_slice(&["--resume", "--force"]);
        let out = serq(&both);
        assert_eq!(out.status.code(), Some(2));
        assert_eq!(std::fs::read_to_string(&out_file).unwrap(), "precious\n");
    }
    let out = serq(&[
        "sweep", &program, "--grid", "d=1:2", "--out", &out_file, "--force",
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        std::fs::read_to_string(&out_file)
            .unwrap()
            .starts_with("d,replications")
    );
}

#[test]
fn sweep_rows_carry_the_slo_columns() {
    let program = scratch(
        "sw.sq",
        "let d = 1; stage s : delay; workload { arrive batch(2); }
         session { run s (d * (serial + 1)); observe response = now; } run { horizon 10; }",
    );
    let out = serq(&["sweep", &program, "--grid", "d=1:2", "--slo", "response<=2"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let csv = text(&out.stdout);
    let mut lines = csv.lines();
    assert!(lines.next().unwrap().starts_with(
        "d,replications,stable,stability,warnings,slo.attainment,slo.attainment.ci,slo.goodput,slo.goodput.ci,slo.requests,slo.unfinished,"
    ));
    // d = 1: responses 1 and 2 attain (0.2 a unit of time); d = 2: 2 and 4, one.
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("1,1,true,steady,0,1,,0.2,,2,0,")
    );
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("2,1,true,steady,0,0.5,,0.1,,2,0,")
    );
}

#[test]
fn a_sweep_whose_replication_fails_under_strict_exits_1() {
    // Two replications: the first fails (work -1 under --strict) and stops
    // the workers before the second runs; the point never completes, and
    // the failure must still be reported (it once ended with no row, exit 0).
    let program = scratch(
        "neg.sq",
        "stage s : delay; workload { arrive batch(1); }
         session { run s (serial - 1); } run { horizon 2; }",
    );
    let out = serq(&["sweep", &program, "--strict", "--replications", "2"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("negative"),
        "{}",
        text(&out.stderr)
    );
}
