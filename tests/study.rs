//! Capacity studies: replications and their Student-t intervals, sweeps and
//! their rows, through the library and the `serq` binary.

use serq::report::{Observation, Report, StageRow, Welford};
use serq::study::{Axis, Cell, Estimate, Replicated, replicate, sweep};
use serq::{Overrides, compile_source, run};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// M/M/1-like: Poisson arrivals of rate `lam`, exponential service of mean
/// 1, `ND` idle stations (so an axis can size an array).
const MM1: &str = "let lam = 0.5;
let ND = 1;
stage srv : fifo;
stage idle[ND] : delay;
workload { arrive poisson(lam); }
session { set t0 = now; run srv (~exp(1)); observe response = now - t0; end; }
run { horizon 300; seed 10; }
";

fn program_file(name: &str, text: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("study");
    std::fs::create_dir_all(&dir).expect("the target directory is writable");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("the program file is writable");
    path
}

/// Runs the binary with `RAYON_NUM_THREADS` set.
fn serq(threads: usize, args: &[&str], file: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_serq"))
        .env("RAYON_NUM_THREADS", threads.to_string())
        .args(args)
        .arg(file)
        .output()
        .expect("the serq binary runs")
}

fn stdout(out: &Output) -> String {
    assert!(
        out.status.success(),
        "serq failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).expect("UTF-8")
}

/// A report with one observation holding `samples` and one stage of
/// utilisation `util`.
fn report(seed: u64, samples: &[f64], util: Option<f64>) -> Report {
    Report {
        source_name: String::new(),
        horizon: 10.0,
        end: 10.0,
        warmup: 0.0,
        seed,
        events: 0,
        arrivals: 0,
        ended: 0,
        turns: 0,
        mean_live: 0.0,
        live_series: Vec::new(),
        stage_series: Vec::new(),
        pool_series: Vec::new(),
        observes: vec![Observation {
            name: "ttft".into(),
            samples: samples.to_vec(),
            moments: Welford::of(samples),
            provenance: None,
        }],
        stages: vec![StageRow {
            name: "D".into(),
            member: None,
            mean_number: 0.0,
            utilization: util,
            completed: 0,
            throughput: 0.0,
            mean_wait: None,
            mean_service: None,
            iterations: 0,
        }],
        pools: Vec::new(),
        turn_marks: None,
        negative_amounts: None,
    }
}

// Replications.

#[test]
fn the_t_interval_of_known_replication_means_is_the_hand_derived_one() {
    // Replication means 2, 4, 6, 8 (each the mean of its samples: 2 = (1+3)/2, …).
    // Grand mean 5; s² = (9 + 1 + 1 + 9)/3 = 20/3; s/√4 = √(20/3)/2 = 1.290994;
    // t(0.975, 3) = 3.182446; half-width 3.182446 · 1.290994 = 4.108521.
    let reports = [
        report(1, &[1.0, 3.0], Some(0.5)),
        report(2, &[4.0], Some(0.5)),
        report(3, &[6.0, 6.0, 6.0], Some(0.5)),
        report(4, &[8.0], Some(0.5)),
    ];
    let r = Replicated::of(&reports);
    let ttft = r.observation("ttft").unwrap();
    assert_eq!((ttft.n, ttft.mean), (4, Some(5.0)));
    assert!((ttft.ci.unwrap() - 4.108_521).abs() < 1e-6, "{ttft:?}");
    // Equal utilisations: no spread.
    let d = r.stage("D", None).unwrap();
    assert_eq!(
        (d.utilization.mean, d.utilization.ci),
        (Some(0.5), Some(0.0))
    );
    assert_eq!(r.seeds, vec![1, 2, 3, 4]);
}

#[test]
fn a_replication_without_a_figure_is_left_out_of_its_estimate() {
    // The second replication has no samples and an undefined utilisation:
    // means 1 and 3 remain, s² = 2, t(0.975, 1) = 12.706205, √(2/2) = 1.
    let reports = [
        report(1, &[1.0], Some(0.2)),
        report(2, &[], None),
        report(3, &[3.0], Some(0.4)),
    ];
    let r = Replicated::of(&reports);
    let ttft = r.observation("ttft").unwrap();
    assert_eq!((ttft.n, ttft.mean), (2, Some(2.0)));
    assert!((ttft.ci.unwrap() - 12.706_205).abs() < 1e-6);
    assert_eq!(r.stage("D", None).unwrap().utilization.n, 2);
}

#[test]
fn a_deterministic_program_has_zero_width_intervals() {
    let source = "pool kv { cap 10; }
stage d : delay;
workload { arrive batch(2); }
session { set t0 = now; hold kv (5) { run d (2); } observe response = now - t0; end; }
run { horizon 10; }";
    let program = compile_source(source, &Overrides::default()).unwrap();
    let r = replicate(&program, 5).unwrap();
    // Every replication: responses 2 and 2; d holds 2 jobs over [0, 2] of
    // [0, 10] (mean number 0.4, util 0.2, 2 done in 10: thrpt 0.2); kv holds
    // 10 units over [0, 2]: mean used 2.
    let response = r.observation("response").unwrap();
    assert_eq!(
        (response.n, response.mean, response.ci),
        (5, Some(2.0), Some(0.0))
    );
    let d = r.stage("d", None).unwrap();
    assert_eq!(
        (d.utilization, d.mean_number.mean, d.throughput.ci),
        (
            Estimate {
                n: 5,
                mean: Some(0.2),
                ci: Some(0.0)
            },
            Some(0.4),
            Some(0.0)
        )
    );
    let kv = r.pool("kv", None).unwrap();
    assert_eq!((kv.mean_used.mean, kv.mean_used.ci), (Some(2.0), Some(0.0)));
    assert_eq!(r.seeds, vec![1, 2, 3, 4, 5]);
}

#[test]
fn replication_k_is_the_plain_run_with_seed_base_plus_k() {
    let program = compile_source(MM1, &Overrides::default()).unwrap();
    let r = replicate(&program, 3).unwrap();
    assert_eq!(r.seeds, vec![10, 11, 12]);
    // The same three runs by hand, seeds 10, 11, 12.
    let means: Vec<f64> = (10..13)
        .map(|seed| {
            let o = Overrides {
                seed: Some(seed),
                ..Overrides::default()
            };
            let report = run(&compile_source(MM1, &o).unwrap()).unwrap();
            report.observation("response").unwrap().mean().unwrap()
        })
        .collect();
    assert_eq!(r.observation("response").unwrap(), &Estimate::of(&means));
    assert!(r.observation("response").unwrap().ci.unwrap() > 0.0);
}

#[test]
fn a_failing_replication_names_its_index_and_seed() {
    let source = "stage s : delay; workload { arrive batch(1); }
                  session { run s (serial / serial); } run { horizon 10; seed 4; }";
    let program = compile_source(source, &Overrides::default()).unwrap();
    let e = replicate(&program, 3).expect_err("every replication runs NaN units");
    // All three fail; the error is the first by index, not the first in time.
    assert_eq!((e.replication, e.seed), (0, 4));
}

#[test]
fn serq_run_replications_is_the_same_with_one_and_two_threads() {
    let path = program_file("mm1_rep.sq", MM1);
    let args = ["run", "--replications", "6"];
    let one = stdout(&serq(1, &args, &path));
    assert_eq!(one, stdout(&serq(2, &args, &path)));
    assert!(one.contains("replications 6  seeds 10 to 15"), "{one}");
}

#[test]
fn serq_run_replications_json_has_the_documented_shape() {
    let path = program_file("mm1_json.sq", MM1);
    let out = stdout(&serq(
        2,
        &["run", "--replications", "4", "--seed", "3", "--json"],
        &path,
    ));
    let json: serde_json::Value = serde_json::from_str(&out).expect("one JSON object");
    assert_eq!(json["replications"], 4);
    assert_eq!(json["seeds"], serde_json::json!([3, 4, 5, 6]));
    assert_eq!(json["confidence"], 0.95);
    assert_eq!(json["observes"][0]["name"], "response");
    assert_eq!(json["observes"][0]["mean"]["n"], 4);
    assert!(json["observes"][0]["mean"]["ci"].as_f64().unwrap() > 0.0);
    let stages = json["stages"].as_array().unwrap();
    // srv, then idle (one member: member null).
    assert_eq!(stages[0]["name"], "srv");
    assert_eq!(stages[1]["member"], serde_json::Value::Null);
    for figure in ["utilization", "mean_number", "throughput"] {
        assert!(stages[0][figure]["mean"].as_f64().is_some(), "{figure}");
    }
    assert_eq!(json["pools"], serde_json::json!([]));
}

// Sweeps.

#[test]
fn sweep_columns_are_parameters_replications_observations_then_members() {
    let axes = [
        Axis::parse("lam=0.2,0.4").unwrap(),
        Axis::parse("ND=1,3").unwrap(),
    ];
    let s = sweep(MM1, &Overrides::default(), &axes, 2, &|| {}).unwrap();
    // `idle[ND]` with ND = 1 is reported as `idle` but is the array's [0].
    assert_eq!(
        s.columns(),
        [
            "lam",
            "ND",
            "replications",
            "stable",
            "stability",
            "warnings",
            "response.mean",
            "response.ci",
            "response.p50",
            "response.p50_ci",
            "response.p90",
            "response.p90_ci",
            "response.p99",
            "response.p99_ci",
            "srv.util",
            "idle[0].util",
            "idle[1].util",
            "idle[2].util"
        ]
    );
    // First axis slowest; delay stages never filled: util 0; ND = 1 has no idle[1].
    let rows = s.rows();
    let heads: Vec<(f64, f64)> = rows
        .iter()
        .map(|r| (r[0].number().unwrap(), r[1].number().unwrap()))
        .collect();
    assert_eq!(heads, [(0.2, 1.0), (0.2, 3.0), (0.4, 1.0), (0.4, 3.0)]);
    let utils = |row: &[Cell]| row[15..].iter().map(|c| c.number()).collect::<Vec<_>>();
    assert_eq!(utils(&rows[0]), [Some(0.0), None, None]);
    assert_eq!(utils(&rows[1]), [Some(0.0), Some(0.0), Some(0.0)]);
    assert!(rows.iter().all(|r| r[2] == Cell::Number(Some(2.0))));
    // ρ ≤ 0.4 over 300: no queue grows, and no amount goes negative.
    assert!(rows.iter().all(|r| r[3] == Cell::Flag(Some(true))));
    assert!(rows.iter().all(|r| r[4] == Cell::Word(Some("steady"))));
    assert!(rows.iter().all(|r| r[5] == Cell::Number(Some(0.0))));
}

#[test]
fn sweep_points_share_their_seeds() {
    // A point's replication k uses seed 10 + k whatever the point, so the
    // point lam = 0.5 of a sweep is `replicate` of the program as written.
    let axes = [Axis::parse("lam=0.3,0.5").unwrap()];
    let s = sweep(MM1, &Overrides::default(), &axes, 3, &|| {}).unwrap();
    let plain = replicate(&compile_source(MM1, &Overrides::default()).unwrap(), 3).unwrap();
    assert_eq!(s.points[1].result.seeds, vec![10, 11, 12]);
    assert_eq!(
        s.points[1].result.observation("response"),
        plain.observation("response")
    );
}

#[test]
fn sweep_csv_is_the_same_file_with_one_and_two_threads() {
    let path = program_file("mm1_sweep.sq", MM1);
    let args = [
        "sweep",
        "--grid",
        "lam=0.3:0.7:0.2",
        "--grid",
        "ND=1,2",
        "--replications",
        "3",
    ];
    let one = stdout(&serq(1, &args, &path));
    let two = stdout(&serq(2, &args, &path));
    assert_eq!(one, two);
    let lines: Vec<&str> = one.lines().collect();
    // A header and 3 × 2 points.
    assert_eq!(lines.len(), 1 + 6);
    assert_eq!(
        lines[0],
        "lam,ND,replications,stable,stability,warnings,response.mean,response.ci,response.p50,response.p50_ci,\
         response.p90,response.p90_ci,response.p99,response.p99_ci,srv.util,idle[0].util,idle[1].util"
    );
    let heads: Vec<String> = lines[1..]
        .iter()
        .map(|l| l.split(',').take(3).collect::<Vec<_>>().join(","))
        .collect();
    assert_eq!(
        heads,
        [
            "0.3,1,3", "0.3,2,3", "0.5,1,3", "0.5,2,3", "0.7,1,3", "0.7,2,3"
        ]
    );
}

#[test]
fn sweep_jsonl_has_one_object_per_point_keyed_by_column() {
    let path = program_file("mm1_jsonl.sq", MM1);
    let out_path = path.with_extension("jsonl");
    // A sweep refuses a non-empty --out: an earlier run's file goes first.
    let _ = std::fs::remove_file(&out_path);
    let out = serq(
        2,
        &[
            "sweep",
            "--grid",
            "lam=0.4",
            "--replications",
            "1",
            "--format",
            "jsonl",
            "--out",
            out_path.to_str().unwrap(),
        ],
        &path,
    );
    assert_eq!(stdout(&out), "");
    let text = std::fs::read_to_string(&out_path).unwrap();
    assert_eq!(text.lines().count(), 1);
    let row: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
    assert_eq!(
        (row["lam"].as_f64(), row["replications"].as_f64()),
        (Some(0.4), Some(1.0))
    );
    // One replication: no interval.
    assert_eq!(row["response.ci"], serde_json::Value::Null);
    assert!(text.starts_with(
        "{\"lam\":0.4,\"replications\":1,\"stable\":true,\"stability\":\"steady\",\"warnings\":0,\"response.mean\":"
    ));
}

#[test]
fn a_grid_name_no_let_declares_is_refused_naming_it() {
    let path = program_file("mm1_unknown.sq", MM1);
    let out = serq(2, &["sweep", "--grid", "mu=1,2"], &path);
    // A name a flag gives that the program lacks is a usage error.
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("`mu`") && err.contains("mu=1"), "{err}");
    let typo = serq(2, &["sweep", "--grid", "lamb=1,2"], &path);
    assert_eq!(typo.status.code(), Some(2));
    let err = String::from_utf8_lossy(&typo.stderr);
    assert!(err.contains("did you mean `lam`?"), "{err}");
}

#[test]
fn a_malformed_grid_is_a_usage_error() {
    let path = program_file("mm1_malformed.sq", MM1);
    let out = serq(2, &["sweep", "--grid", "lam=0.9:0.1:0.1"], &path);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("backwards"));
}

#[test]
fn sweep_plot_draws_one_line_per_value_of_the_other_parameter() {
    let path = program_file("mm1_plot.sq", MM1);
    let svg_path = path.with_extension("svg");
    let out = serq(
        2,
        &[
            "sweep",
            "--grid",
            "lam=0.2:0.6:0.2",
            "--grid",
            "ND=1,2",
            "--replications",
            "3",
            "--plot",
            svg_path.to_str().unwrap(),
            "--x",
            "lam",
            "--y",
            "response",
        ],
        &path,
    );
    stdout(&out);
    let svg = std::fs::read_to_string(&svg_path).unwrap();
    assert!(svg.starts_with("<svg"));
    // The legend names each line by the other axis's value.
    // (plotters writes a <text>'s content on a line of its own.)
    let texts: Vec<&str> = svg.lines().map(str::trim).collect();
    assert!(
        texts.contains(&"ND=1") && texts.contains(&"ND=2"),
        "no legend"
    );
    assert!(texts.contains(&"mean response against lam (bars: 95% CI)"));
    // --y must be an observation.
    let bad = serq(
        2,
        &[
            "sweep",
            "--grid",
            "lam=0.2",
            "--plot",
            svg_path.to_str().unwrap(),
            "--y",
            "ttft",
        ],
        &path,
    );
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("`ttft`"));
}

/// A sweep of 16 points whose n-th point runs n·20000 time units of M/M/1,
/// so that it is still running well after its first rows are written.
const SLOW: &str = "let lam = 0.5;
let H = 20000;
stage srv : fifo;
workload { arrive poisson(lam); }
session { set t0 = now; run srv (~exp(1)); observe response = now - t0; end; }
run { horizon H; seed 3; }
";

const SLOW_GRID: [&str; 2] = ["--grid", "H=20000:320000:20000"];

/// Starts `serq sweep` on SLOW into `out`, one worker thread.
fn start_slow_sweep(path: &Path, out: &Path) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_serq"))
        .env("RAYON_NUM_THREADS", "1")
        .arg("sweep")
        .args(SLOW_GRID)
        .arg("--out")
        .arg(out)
        .arg(path)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the serq binary starts")
}

/// `serq sweep --resume --out OUT` on SLOW.
fn resume(path: &Path, out: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_serq"))
        .args(["sweep", "--resume", "--out"])
        .arg(out)
        .args(SLOW_GRID)
        .arg(path)
        .output()
        .expect("the serq binary runs")
}

/// Waits until `out` holds a header and at least two whole rows.
fn wait_for_rows(out: &Path) {
    loop {
        let text = std::fs::read_to_string(out).unwrap_or_default();
        if text.matches('\n').count() >= 3 {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

#[test]
fn a_killed_sweep_leaves_its_points_done_and_resume_completes_it_byte_for_byte() {
    let path = program_file("slow.sq", SLOW);
    let whole = path.with_file_name("slow_whole.csv");
    let cut = path.with_file_name("slow_cut.csv");
    let _ = std::fs::remove_file(&cut);
    let _ = std::fs::remove_file(&whole);
    let mut child = start_slow_sweep(&path, &cut);
    wait_for_rows(&cut);
    child.kill().expect("the sweep can be killed");
    child.wait().expect("the sweep ends");
    // What it leaves is a valid file: the header, then whole rows of the
    // grid's first points, in order.
    let text = std::fs::read_to_string(&cut).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(text.ends_with('\n'));
    assert!(lines[0].starts_with("H,replications,stable,stability,warnings,response.mean,"));
    let done = lines.len() - 1;
    assert!((2..16).contains(&done), "{done} rows");
    for (i, line) in lines[1..].iter().enumerate() {
        assert!(
            line.starts_with(&format!("{},1,", 20000 * (i + 1))),
            "{line}"
        );
    }
    // --resume runs the rest; the file is then the uninterrupted run's.
    let resumed = resume(&path, &cut);
    assert!(
        resumed.status.success(),
        "{}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    let out = serq(
        2,
        &[
            "sweep",
            SLOW_GRID[0],
            SLOW_GRID[1],
            "--out",
            whole.to_str().unwrap(),
        ],
        &path,
    );
    stdout(&out);
    assert_eq!(std::fs::read(&cut).unwrap(), std::fs::read(&whole).unwrap());
    // Resuming a finished file runs nothing and changes nothing.
    let again = resume(&path, &cut);
    assert!(again.status.success());
    assert_eq!(std::fs::read(&cut).unwrap(), std::fs::read(&whole).unwrap());
}

#[test]
fn resume_refuses_a_file_of_another_sweep() {
    let path = program_file("slow_other.sq", SLOW);
    let other = path.with_file_name("slow_other.csv");
    std::fs::write(&other, "H,replications\n20000,1\n").unwrap();
    let out = resume(&path, &other);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("not an interrupted run of this sweep"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(&other).unwrap(),
        "H,replications\n20000,1\n"
    );
}

#[test]
fn a_resume_mismatch_names_the_first_differing_column_not_both_headers() {
    let path = program_file("slow_column.sq", SLOW);
    let other = path.with_file_name("slow_column.csv");
    // SLOW's columns begin H,replications,stable,stability,warnings,response.mean.
    let file = "H,replications,stable,stability,warnings,latency.mean\n";
    std::fs::write(&other, file).unwrap();
    let out = resume(&path, &other);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("column 6 is `latency.mean`, where this sweep has `response.mean`"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!err.contains("srv.util"), "{err}");
    // A header cut short names the column that should come next.
    std::fs::write(&other, "H,replications\n").unwrap();
    let err = String::from_utf8_lossy(&resume(&path, &other).stderr).into_owned();
    assert!(
        err.contains("it ends after 2 columns, where this sweep goes on with `stable`"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&other).unwrap(), "H,replications\n");
}

#[test]
fn a_jsonl_resume_mismatch_names_the_missing_column() {
    let path = program_file("slow_key.sq", SLOW);
    let other = path.with_file_name("slow_key.jsonl");
    std::fs::write(&other, "{\"H\":20000,\"replications\":1}\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_serq"))
        .args(["sweep", "--resume", "--format", "jsonl", "--out"])
        .arg(&other)
        .args(SLOW_GRID)
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("line 1 is not a row of this sweep: it has no `stable`"),
        "{err}"
    );
}

#[test]
fn force_with_resume_is_a_usage_error_and_leaves_the_file() {
    let path = program_file("slow_force.sq", SLOW);
    let other = path.with_file_name("slow_force.csv");
    std::fs::write(&other, "H,replications\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_serq"))
        .args(["sweep", "--resume", "--force", "--out"])
        .arg(&other)
        .args(SLOW_GRID)
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--force and --resume"), "{err}");
    assert_eq!(std::fs::read_to_string(&other).unwrap(), "H,replications\n");
}

#[test]
fn ctrl_c_stops_a_sweep_and_says_how_many_points_were_written() {
    let path = program_file("slow_int.sq", SLOW);
    let out = path.with_file_name("slow_int.csv");
    let _ = std::fs::remove_file(&out);
    let child = start_slow_sweep(&path, &out);
    wait_for_rows(&out);
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
    let ended = child.wait_with_output().unwrap();
    assert_eq!(ended.status.code(), Some(130));
    let rows = std::fs::read_to_string(&out).unwrap().lines().count() - 1;
    let err = String::from_utf8_lossy(&ended.stderr);
    assert!(
        err.contains(&format!("interrupted: {rows} of 16 points written to `")),
        "{err}"
    );
    assert!(err.contains("--resume"), "{err}");
}

#[test]
fn a_sweep_with_a_bad_y_exits_2_having_run_no_point() {
    let path = program_file("slow_bad_y.sq", SLOW);
    let out = path.with_file_name("slow_bad_y.csv");
    let _ = std::fs::remove_file(&out);
    let svg = path.with_file_name("slow_bad_y.svg");
    let ended = Command::new(env!("CARGO_BIN_EXE_serq"))
        .env("RAYON_NUM_THREADS", "1")
        .arg("sweep")
        .args(SLOW_GRID)
        .arg("--out")
        .arg(&out)
        .arg("--plot")
        .arg(&svg)
        .args(["--y", "respnse"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(ended.status.code(), Some(2));
    let err = String::from_utf8_lossy(&ended.stderr);
    assert!(err.contains("did you mean `response`?"), "{err}");
    // No row, no file, no progress: the name was checked before any run.
    assert!(!out.exists() && !svg.exists());
    assert!(ended.stdout.is_empty());
    assert_eq!(err.lines().count(), 1, "{err}");
}

// Sweep rows at a thousand nodes: a stage family of more than 16 members
// at some point of the grid is three columns, D.util, D.util.min and
// D.util.max; --by-family folds every array, --members none.

/// ND delay stations, one session per station arriving at 0: session k
/// runs D[k] for k + 1, so over the horizon of 100 D[k]'s utilisation is
/// exactly (k + 1)/100.
const FAMILY: &str = "let ND = 2;
stage D[ND] : delay;
workload { arrive batch(ND); }
session { run D[serial] (serial + 1); }
run { horizon 100; }
";

fn close(cell: Cell, expected: f64) -> bool {
    cell.number().is_some_and(|x| (x - expected).abs() < 1e-12)
}

#[test]
fn a_family_of_more_than_16_members_at_some_point_folds_into_mean_min_max_columns() {
    let axes = [Axis::parse("ND=2,20").unwrap()];
    let s = sweep(FAMILY, &Overrides::default(), &axes, 2, &|| {}).unwrap();
    // The largest size over the grid (20) decides: ND = 2 folds too.
    assert_eq!(
        s.columns(),
        [
            "ND",
            "replications",
            "stable",
            "stability",
            "warnings",
            "D.util",
            "D.util.min",
            "D.util.max"
        ]
    );
    let rows = s.rows();
    // ND = 2: utilisations 0.01 and 0.02: mean 0.015.
    assert!(close(rows[0][5], 0.015) && close(rows[0][6], 0.01) && close(rows[0][7], 0.02));
    // ND = 20: 0.01 … 0.20, mean (1 + … + 20)/20/100 = 10.5/100.
    assert!(close(rows[1][5], 0.105) && close(rows[1][6], 0.01) && close(rows[1][7], 0.2));
}

#[test]
fn a_family_of_at_most_16_members_at_every_point_keeps_one_column_per_member() {
    let axes = [Axis::parse("ND=2,16").unwrap()];
    let s = sweep(FAMILY, &Overrides::default(), &axes, 1, &|| {}).unwrap();
    let members: Vec<String> = (0..16).map(|i| format!("D[{i}].util")).collect();
    assert_eq!(s.columns()[5..], members[..]);
    let rows = s.rows();
    // ND = 2 has D[0] and D[1] only; ND = 16's D[15] is busy 16 of 100.
    assert!(close(rows[0][6], 0.02) && rows[0][7] == Cell::Number(None));
    assert!(close(rows[1][20], 0.16));
}

#[test]
fn members_restores_one_column_per_member_and_by_family_folds_a_small_family() {
    let path = program_file("family.sq", FAMILY);
    let every = stdout(&serq(
        2,
        &["sweep", "--grid", "ND=2,20", "--members"],
        &path,
    ));
    let header: Vec<&str> = every.lines().next().unwrap().split(',').collect();
    assert_eq!(header[5], "D[0].util");
    assert_eq!(header.last(), Some(&"D[19].util"));
    assert!(!header.contains(&"D.util.min"), "{every}");
    // ND = 2: D[1] busy 2 of 100, D[2] … D[19] absent (empty).
    assert!(every.contains("\n2,1,true,steady,0,0.01,0.02,,"), "{every}");
    let folded = stdout(&serq(
        2,
        &["sweep", "--grid", "ND=2,3", "--by-family"],
        &path,
    ));
    // ND = 3: 0.01, 0.02, 0.03: mean 0.02.
    let lines: Vec<&str> = folded.lines().collect();
    assert_eq!(
        lines[0],
        "ND,replications,stable,stability,warnings,D.util,D.util.min,D.util.max"
    );
    assert_eq!(lines[1], "2,1,true,steady,0,0.015,0.01,0.02");
    let row: Vec<f64> = lines[2]
        .split(',')
        .skip(5)
        .map(|x| x.parse().unwrap())
        .collect();
    assert!(
        (row[0] - 0.02).abs() < 1e-12 && row[1] == 0.01 && row[2] == 0.03,
        "{folded}"
    );
    // The two flags contradict each other.
    let both = serq(
        2,
        &["sweep", "--grid", "ND=2", "--by-family", "--members"],
        &path,
    );
    assert_eq!(both.status.code(), Some(2));
}

#[test]
fn a_folded_file_resumes_with_its_flags_and_is_refused_with_members() {
    let path = program_file("family_resume.sq", FAMILY);
    let whole = path.with_file_name("family_whole.csv");
    let cut = path.with_file_name("family_cut.csv");
    let _ = std::fs::remove_file(&whole);
    let grid = ["sweep", "--grid", "ND=2,20,30", "--out"];
    stdout(&serq(
        2,
        &[&grid[..], &[whole.to_str().unwrap()]].concat(),
        &path,
    ));
    let text = std::fs::read_to_string(&whole).unwrap();
    assert!(text.starts_with("ND,replications,stable,stability,warnings,D.util,"));
    // The header and the first row: a sweep interrupted after one point.
    let first: String = text.split_inclusive('\n').take(2).collect();
    std::fs::write(&cut, &first).unwrap();
    let members = serq(
        2,
        &[&grid[..], &[cut.to_str().unwrap(), "--resume", "--members"]].concat(),
        &path,
    );
    assert_eq!(members.status.code(), Some(2));
    let err = String::from_utf8_lossy(&members.stderr);
    assert!(
        err.contains("column 6 is `D.util`, where this sweep has `D[0].util`"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&cut).unwrap(), first);
    // Resumed with the flags it was written with, it is the whole run's file.
    let resumed = serq(
        2,
        &[&grid[..], &[cut.to_str().unwrap(), "--resume"]].concat(),
        &path,
    );
    assert!(
        resumed.status.success(),
        "{}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    assert_eq!(std::fs::read_to_string(&cut).unwrap(), text);
}

#[test]
fn the_stability_column_is_steady_at_a_stable_point_and_overloaded_at_an_overloaded_one() {
    // M/M/1, service mean 1, over 2000: ρ = 0.3 is steady; λ = 3 is thrice
    // what the server does, its queue grows by about 2 per unit of time.
    let source = MM1.replace("horizon 300", "horizon 2000");
    let path = program_file("mm1_stability.sq", &source);
    let out = path.with_file_name("mm1_stability.jsonl");
    let _ = std::fs::remove_file(&out);
    let args = ["sweep", "--grid", "lam=0.3,3", "--replications", "3"];
    let csv = stdout(&serq(2, &args, &path));
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0].starts_with("lam,replications,stable,stability,warnings,"));
    assert!(lines[1].starts_with("0.3,3,true,steady,0,"), "{csv}");
    assert!(lines[2].starts_with("3,3,false,overloaded,1,"), "{csv}");
    // JSON lines write the word as a string, and read it back to resume.
    let jsonl = [
        &args[..],
        &["--format", "jsonl", "--out", out.to_str().unwrap()],
    ]
    .concat();
    stdout(&serq(2, &jsonl, &path));
    let text = std::fs::read_to_string(&out).unwrap();
    let rows: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        (&rows[0]["stability"], &rows[1]["stability"]),
        (&"steady".into(), &"overloaded".into())
    );
    let first = text.split_inclusive('\n').next().unwrap().to_string();
    std::fs::write(&out, &first).unwrap();
    let resumed = serq(2, &[&jsonl[..], &["--resume"]].concat(), &path);
    assert!(
        resumed.status.success(),
        "{}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), text);
}
