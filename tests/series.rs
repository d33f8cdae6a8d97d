//! `serq run --series OUT.csv --every DT`: figures over windows of DT from
//! the warmup on (docs/timeline.md, "Series"). Its windows tile the
//! measured interval, and averaged back over it (each window weighted by
//! its length, or by its count for an observation's mean) they give the
//! report's own figures, to rounding.

use std::path::Path;
use std::process::Command;

use serq::report::Series;
use serq::{Overrides, Report, RunOptions};

/// The run of `file` and its series rows by column name.
fn series_of(file: &str, every: f64, by_family: bool) -> (Report, Vec<String>, Vec<Vec<f64>>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
    let program = serq::compile_file(&path, &Overrides::default()).expect("compiles");
    let mut options = RunOptions {
        series: Some(Box::new(Series::new(every))),
        ..RunOptions::default()
    };
    let report = serq::run_with(&program, &mut options).expect("runs");
    let series = options.series.take().expect("given back");
    let csv = series.to_csv(&report, by_family);
    let mut lines = csv.lines();
    let header: Vec<String> = lines
        .next()
        .expect("a header")
        .split(',')
        .map(String::from)
        .collect();
    let rows = lines
        .map(|l| {
            l.split(',')
                .map(|x| x.parse::<f64>().unwrap_or(f64::NAN))
                .collect::<Vec<f64>>()
        })
        .collect();
    (report, header, rows)
}

fn column(header: &[String], rows: &[Vec<f64>], name: &str) -> Vec<f64> {
    let k = header
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column {name} in {header:?}"));
    rows.iter().map(|r| r[k]).collect()
}

fn close(a: f64, b: f64, what: &str) {
    assert!(
        (a - b).abs() <= 1e-9 * b.abs().max(1.0),
        "{what}: the series gives {a}, the report {b}"
    );
}

/// Σ x × (to − from) / (end − warmup): a figure's time average.
fn time_average(header: &[String], rows: &[Vec<f64>], name: &str, report: &Report) -> f64 {
    let (from, to) = (column(header, rows, "from"), column(header, rows, "to"));
    let x = column(header, rows, name);
    let area: f64 = (0..rows.len()).map(|k| x[k] * (to[k] - from[k])).sum();
    area / (report.end - report.warmup)
}

fn member(name: &str, member: Option<usize>) -> String {
    match member {
        Some(k) => format!("{name}[{k}]"),
        None => name.to_string(),
    }
}

/// The checks every series must pass against its report.
fn averages_back(report: &Report, header: &[String], rows: &[Vec<f64>]) {
    let (from, to) = (column(header, rows, "from"), column(header, rows, "to"));
    // The windows tile [warmup, end]: the first starts at the warmup.
    assert_eq!(from[0], report.warmup);
    assert_eq!(*to.last().expect("a window"), report.end);
    for k in 1..rows.len() {
        assert_eq!(from[k], to[k - 1]);
    }
    let completions: f64 = column(header, rows, "completions").iter().sum();
    assert_eq!(completions as u64, report.ended);
    for o in &report.observes {
        let counts = column(header, rows, &format!("{}.count", o.name));
        let means = column(header, rows, &format!("{}.mean", o.name));
        let n: f64 = counts.iter().sum();
        assert_eq!(n as usize, o.samples.len(), "{}", o.name);
        let sum: f64 = counts
            .iter()
            .zip(&means)
            .filter(|(c, _)| **c > 0.0)
            .map(|(c, m)| c * m)
            .sum();
        let mean = o.samples.iter().sum::<f64>() / n;
        close(sum / n, mean, &format!("{}'s mean", o.name));
    }
    for s in &report.stages {
        let name = member(&s.name, s.member);
        if let Some(util) = s.utilization {
            let average = time_average(header, rows, &format!("{name}.util"), report);
            close(average, util, &format!("{name}'s utilisation"));
        }
        let average = time_average(header, rows, &format!("{name}.thrpt"), report);
        close(average, s.throughput, &format!("{name}'s throughput"));
    }
    for p in &report.pools {
        let name = member(&p.name, p.member);
        for (key, mean) in [
            ("used", p.mean_used),
            ("cached", p.mean_cached),
            ("queued", p.mean_queue),
        ] {
            let average = time_average(header, rows, &format!("{name}.{key}"), report);
            close(average, mean, &format!("{name}'s mean {key}"));
        }
    }
}

#[test]
fn a_pd_series_with_flows_averages_back_to_its_report() {
    let (report, header, rows) = series_of("examples/pd-disaggregation/nixl_pull.sq", 20.0, false);
    // [20, 200] in windows of 20: 9 of them.
    assert_eq!(rows.len(), 9);
    averages_back(&report, &header, &rows);
}

#[test]
fn a_last_window_cut_short_by_the_horizon_still_averages_back() {
    // vllm.sq measures [100, 1000]: 900 / 7 = 128.6, so 129 windows, the
    // last one [996, 1000].
    let (report, header, rows) = series_of("examples/single-turn/vllm.sq", 7.0, false);
    assert_eq!(rows.len(), 129);
    assert_eq!(column(&header, &rows, "from")[128], 996.0);
    averages_back(&report, &header, &rows);
}

#[test]
fn by_family_a_column_is_the_mean_over_the_members() {
    let (_, header, rows) = series_of("examples/pd-disaggregation/nixl_pull.sq", 20.0, false);
    let (_, folded_header, folded) =
        series_of("examples/pd-disaggregation/nixl_pull.sq", 20.0, true);
    assert!(folded_header.contains(&"D.util".to_string()));
    assert!(!folded_header.iter().any(|h| h.starts_with("D[")));
    let d = column(&folded_header, &folded, "D.util");
    for (k, &folded_util) in d.iter().enumerate() {
        let members: f64 = (0..8)
            .map(|m| column(&header, &rows, &format!("D[{m}].util"))[k])
            .sum();
        close(folded_util, members / 8.0, "D's mean utilisation");
    }
}

#[test]
fn every_must_be_above_zero_and_is_refused_before_the_run() {
    let out = std::env::temp_dir().join(format!("serq-series-{}.csv", std::process::id()));
    let out = out.to_string_lossy();
    let too_many = Command::new(env!("CARGO_BIN_EXE_serq"))
        .args([
            "run",
            "examples/single-turn/mm1.sq",
            "--series",
            &out,
            "--every",
            "0.001",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("runs");
    // mm1.sq measures [1000, 20000]: 19 million windows of 0.001.
    assert_eq!(too_many.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&too_many.stderr).contains("19000000 windows"));
    for every in ["0", "-1", "inf", "x"] {
        let run = Command::new(env!("CARGO_BIN_EXE_serq"))
            .args([
                "run",
                "examples/single-turn/mm1.sq",
                "--series",
                &out,
                "--every",
                every,
            ])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .expect("runs");
        assert_eq!(run.status.code(), Some(2), "--every {every}");
        assert!(run.stdout.is_empty());
        assert!(String::from_utf8_lossy(&run.stderr).contains("above 0"));
    }
}

#[test]
fn run_writes_the_series_file() {
    let out = std::env::temp_dir().join(format!("serq-series-w-{}.csv", std::process::id()));
    let run = Command::new(env!("CARGO_BIN_EXE_serq"))
        .args(["run", "examples/single-turn/mm1.sq", "--series"])
        .arg(&out)
        .args(["--every", "1000"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("runs");
    assert_eq!(run.status.code(), Some(0));
    let csv = std::fs::read_to_string(&out).expect("written");
    // mm1.sq measures [1000, 20000]: 19 windows and a header.
    assert_eq!(csv.lines().count(), 20);
    assert!(csv.starts_with("from,to,arrivals,completions,response.count"));
}

#[test]
fn plot_series_draws_a_column_against_time_and_refuses_what_it_cannot_read() {
    let dir = std::env::temp_dir().join(format!("serq-plot-series-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let csv = dir.join("mm1.csv");
    let serq = |args: &[&std::ffi::OsStr]| {
        Command::new(env!("CARGO_BIN_EXE_serq"))
            .args(args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .expect("runs")
    };
    let os = |s: &str| std::ffi::OsString::from(s);
    let run = serq(&[
        &os("run"),
        &os("examples/single-turn/mm1.sq"),
        &os("--series"),
        csv.as_os_str(),
        &os("--every"),
        &os("1000"),
    ]);
    assert_eq!(run.status.code(), Some(0));
    let plot = serq(&[
        &os("plot-series"),
        csv.as_os_str(),
        &os("--y"),
        &os("response.p99"),
    ]);
    assert_eq!(plot.status.code(), Some(0));
    let svg = String::from_utf8_lossy(&plot.stdout);
    // 19 windows: one line of 19 points, against the windows' starts.
    assert!(
        svg.starts_with("<svg") && svg.contains("response.p99"),
        "{svg}"
    );
    assert!(svg.contains("from (window start)"));
    assert_eq!(
        svg.matches("<circle").count(),
        19 + 1,
        "19 points and the legend's"
    );
    // A column it lacks, and a file that is no series, are usage errors.
    let typo = serq(&[
        &os("plot-series"),
        csv.as_os_str(),
        &os("--y"),
        &os("respons.p99"),
    ]);
    assert_eq!(typo.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&typo.stderr).contains("did you mean `response.p99`?"));
    let other = dir.join("other.csv");
    std::fs::write(&other, "lam,ttft.mean\n1,2\n").expect("written");
    let refused = serq(&[
        &os("plot-series"),
        other.as_os_str(),
        &os("--y"),
        &os("ttft"),
    ]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("not a `serq run --series` CSV"));
}

#[test]
fn run_with_plot_writes_the_series_and_draws_its_column() {
    let dir = std::env::temp_dir().join(format!("serq-run-plot-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let (csv, svg) = (dir.join("mm1.csv"), dir.join("mm1.svg"));
    let run = |y: &str| {
        Command::new(env!("CARGO_BIN_EXE_serq"))
            .args([
                "run",
                "examples/single-turn/mm1.sq",
                "--every",
                "1000",
                "--y",
                y,
            ])
            .arg("--series")
            .arg(&csv)
            .arg("--plot")
            .arg(&svg)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .expect("runs")
    };
    let drawn = run("response.p99");
    assert_eq!(drawn.status.code(), Some(0));
    let text = std::fs::read_to_string(&svg).expect("drawn");
    assert!(text.starts_with("<svg") && text.contains("response.p99"));
    // A column the series lacks: the CSV is written, the plot refused.
    std::fs::remove_file(&csv).expect("removed");
    let typo = run("respons.p99");
    assert_eq!(typo.status.code(), Some(2));
    assert!(csv.exists());
    assert!(String::from_utf8_lossy(&typo.stderr).contains("did you mean `response.p99`?"));
}
