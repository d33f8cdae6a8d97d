//! `serq fit`: it recovers known coefficients from noisy synthetic
//! iterations, holds rows out by a seeded shuffle, and refuses bad input
//! with the exit status of the rest of the command (2 for a flag or an
//! unknown term, 1 for a malformed CSV, with its line and column).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
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
    let dir = std::env::temp_dir().join(format!("serq-fit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, contents).expect("write scratch file");
    path.to_string_lossy().into_owned()
}

/// The true cost of the synthetic engine: 4 ms + 2.5 µs a token + 25 ns a
/// decoder's KV token + 20 µs a resident.
const CONSTANT: f64 = 0.004;
const PER_TOKEN: f64 = 2.5e-6;
const PER_KV: f64 = 2.5e-8;
const PER_RESIDENT: f64 = 2e-5;

/// A standard normal by Box–Muller (two uniforms, one normal kept: the
/// test needs a few thousand, not speed).
fn gaussian(rng: &mut ChaCha8Rng) -> f64 {
    let u1: f64 = 1.0 - rng.random::<f64>(); // (0, 1]: ln is finite
    let u2: f64 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// 4 000 iterations: tokens uniform on [1, 8192] (a decode step to a full
/// budget), kv_decode on [0, 400 000] (up to a whole H100's pool of an 8B
/// model), residents on [1, 256] (max_num_seqs), times with a 2%
/// multiplicative Gaussian noise. Mean contributions: 4 ms, 2.5e-6 · 4096.5
/// = 10.24 ms, 2.5e-8 · 200 000 = 5 ms, 2e-5 · 128.5 = 2.57 ms, of a mean
/// 21.81 ms: 18%, 47%, 23% and 12%, each at least 10%.
fn synthetic() -> String {
    let mut rng = ChaCha8Rng::seed_from_u64(37);
    let mut csv = String::from("tokens,kv_decode,residents,seconds\n");
    let (mut sums, mut total) = ([0.0; 4], 0.0);
    for _ in 0..4000 {
        let tokens = rng.random_range(1.0..=8192.0f64).round();
        let kv = rng.random_range(0.0..=400_000.0f64).round();
        let residents = rng.random_range(1.0..=256.0f64).round();
        let parts = [
            CONSTANT,
            PER_TOKEN * tokens,
            PER_KV * kv,
            PER_RESIDENT * residents,
        ];
        let exact: f64 = parts.iter().sum();
        for (s, p) in sums.iter_mut().zip(parts) {
            *s += p;
        }
        total += exact;
        let seconds = exact * (1.0 + 0.02 * gaussian(&mut rng));
        csv += &format!("{tokens},{kv},{residents},{seconds}\n");
    }
    for s in sums {
        assert!(
            s / total >= 0.10,
            "each term is at least 10% of the mean time"
        );
    }
    csv
}

fn fit_json(args: &[&str]) -> serde_json::Value {
    let out = serq(args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

fn within(actual: f64, expected: f64, relative: f64) -> bool {
    (actual - expected).abs() <= relative * expected.abs()
}

#[test]
fn the_fit_recovers_known_coefficients_within_one_percent_and_reports_r2_and_residuals() {
    let path = scratch("synthetic.csv", &synthetic());
    let fit = fit_json(&[
        "fit",
        &path,
        "--terms",
        "tokens,kv_decode,residents",
        "--json",
    ]);
    let c = &fit["coefficients"];
    for (name, truth) in [
        ("1", CONSTANT),
        ("tokens", PER_TOKEN),
        ("kv_decode", PER_KV),
        ("residents", PER_RESIDENT),
    ] {
        let got = c[name].as_f64().expect(name);
        assert!(within(got, truth, 0.01), "{name}: {got} vs {truth}");
    }
    assert_eq!(fit["rows"], 4000);
    // With 2% noise the relative residuals are |N(0, 0.02)|: median
    // 0.674 · 2% = 1.35%, p90 1.645 · 2% = 3.29%, p99 2.576 · 2% = 5.15%.
    let r = &fit["residuals_pct"];
    let p = |k: &str| r[k].as_f64().expect(k);
    assert!(within(p("p50"), 1.35, 0.1), "{r}");
    assert!(within(p("p90"), 3.29, 0.1), "{r}");
    assert!(within(p("p99"), 5.15, 0.15), "{r}");
    // The spread of the times (a range of ~9 ms) dwarfs 2% of ~22 ms.
    let r2 = fit["r2"].as_f64().unwrap();
    assert!(r2 > 0.99 && r2 < 1.0, "{r2}");
    assert!(fit.get("holdout").is_none());
}

#[test]
fn the_text_output_is_a_cost_line_to_paste_then_r2_and_residuals() {
    let path = scratch("synthetic_text.csv", &synthetic());
    let out = serq(&["fit", &path, "--terms", "tokens,kv_decode,residents"]);
    assert_eq!(out.status.code(), Some(0));
    let stdout = text(&out.stdout);
    let line = stdout.lines().next().unwrap();
    assert!(line.starts_with("cost 0.00"), "{stdout}");
    assert!(line.ends_with(" * residents;"), "{stdout}");
    assert!(stdout.contains("rows 4000  r2 0.99"), "{stdout}");
    assert!(
        stdout.contains("p50 1.") && stdout.contains("p99 "),
        "{stdout}"
    );
    // The line is a cost a step stage takes as it is.
    let program = format!(
        "stage e : step {{ budget 8192; {line} }}\nworkload {{ arrive batch(1); }}\n\
         session {{ run e decode (1); }}\nrun {{ horizon 1; }}\n"
    );
    serq::compile_source(&program, &serq::Overrides::default()).expect("the cost line links");
}

#[test]
fn a_holdout_keeps_a_seeded_share_of_rows_out_and_reports_them() {
    let path = scratch("synthetic_holdout.csv", &synthetic());
    let args = |seed: &'static str| {
        vec![
            "fit",
            "PATH",
            "--terms",
            "tokens,kv_decode,residents",
            "--holdout",
            "0.25",
            "--seed",
            seed,
            "--json",
        ]
    };
    let run = |seed| {
        let mut a = args(seed);
        a[1] = &path;
        fit_json(&a)
    };
    let a = run("7");
    // round(0.25 · 4000) = 1000 held out, 3000 fitted.
    assert_eq!(a["rows"], 3000);
    assert_eq!(a["holdout"]["rows"], 1000);
    // Held-out residuals are those of the noise too: a median near 1.35%.
    let p50 = a["holdout"]["residuals_pct"]["p50"].as_f64().unwrap();
    assert!(within(p50, 1.35, 0.15), "{p50}");
    // The same seed gives the same split; another seed another.
    assert_eq!(a, run("7"));
    assert_ne!(a["coefficients"], run("8")["coefficients"]);
}

#[test]
fn a_coefficient_the_data_would_make_negative_is_held_at_zero() {
    // seconds = 0.01 - 1e-6 · decoders exactly: least squares would give
    // the slope -1e-6; NNLS holds it at 0 and the constant takes the mean
    // seconds, 0.01 - 1e-6 · 5.5 = 0.0099945 (minimising relative residuals
    // moves it a little; the slope is exactly 0).
    let mut csv = String::from("decoders,seconds\n");
    for d in 1..=10 {
        csv += &format!("{d},{}\n", 0.01 - 1e-6 * d as f64);
    }
    let path = scratch("negative.csv", &csv);
    let fit = fit_json(&["fit", &path, "--terms", "decoders", "--json"]);
    assert_eq!(fit["coefficients"]["decoders"], 0.0);
    let c = fit["coefficients"]["1"].as_f64().unwrap();
    assert!(within(c, 0.0099945, 0.001), "{c}");
}

#[test]
fn an_unknown_term_is_a_usage_error_with_a_did_you_mean() {
    let path = scratch("ok.csv", "tokens,seconds\n1,0.1\n2,0.2\n");
    let out = serq(&["fit", &path, "--terms", "tokens,kv_decod"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("unknown term `kv_decod` in --terms: did you mean `kv_decode`?"),
        "{err}"
    );
    // Far from every term: the list, no guess.
    let out = serq(&["fit", &path, "--terms", "latency"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(!err.contains("did you mean"), "{err}");
    assert!(
        err.contains("tokens, prefilled, residents, decoders, kv_decode, kv_prefill, attention"),
        "{err}"
    );
    // A term named twice.
    let out = serq(&["fit", &path, "--terms", "tokens,tokens"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--terms names `tokens` twice"));
}

#[test]
fn a_bad_flag_is_a_usage_error() {
    let path = scratch("flags.csv", "tokens,seconds\n1,0.1\n2,0.2\n");
    for args in [
        vec![
            "fit",
            path.as_str(),
            "--terms",
            "tokens",
            "--holdout",
            "1.5",
        ],
        vec![
            "fit",
            path.as_str(),
            "--terms",
            "tokens",
            "--holdout",
            "-0.1",
        ],
        vec!["fit", path.as_str(), "--terms", "tokens", "--seed", "x"],
        vec!["fit", path.as_str(), "--terms", "tokens", "--bogus"],
        vec!["fit", path.as_str()],
        vec!["fit", "/nonexistent/d.csv", "--terms", "tokens"],
    ] {
        let out = serq(&args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
}

#[test]
fn a_non_numeric_cell_is_refused_with_its_line_column_and_a_caret() {
    // Line 1 is a comment, line 2 the header; the bad cell is line 4's
    // second field, `kv_decode`.
    let path = scratch(
        "cell.csv",
        "# measured\ntokens,kv_decode,seconds\n8,100,0.01\n16,12k,0.02\n",
    );
    let out = serq(&["fit", &path, "--terms", "tokens,kv_decode"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("cell.csv:4:2: `kv_decode` is not a number: `12k`"),
        "{err}"
    );
    assert!(err.contains("  4 | 16,12k,0.02\n    |    ^^^\n"), "{err}");
}

#[test]
fn a_missing_column_is_refused_at_the_header() {
    let path = scratch("column.csv", "tokens,secs\n1,0.1\n2,0.2\n");
    let out = serq(&["fit", &path, "--terms", "tokens"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("column.csv:1:3: no column `seconds`: the header names `tokens`, `secs`"),
        "{err}"
    );
    // A row shorter than the header: the field it lacks.
    let path = scratch("short.csv", "tokens,seconds\n1,0.1\n2\n");
    let out = serq(&["fit", &path, "--terms", "tokens"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains(
            "short.csv:3:2: the row has 1 fields, but `seconds` is column 2 of the header"
        ),
        "{err}"
    );
}

#[test]
fn fewer_rows_than_coefficients_and_non_positive_times_are_refused() {
    // Two terms and the constant need three rows; two are given.
    let path = scratch("few.csv", "tokens,decoders,seconds\n1,1,0.1\n2,1,0.2\n");
    let out = serq(&["fit", &path, "--terms", "tokens,decoders"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("2 rows to fit 3 coefficients"), "{err}");
    // A time of 0 has no relative residual.
    let path = scratch("zero.csv", "tokens,seconds\n1,0.1\n2,0\n3,0.3\n");
    let out = serq(&["fit", &path, "--terms", "tokens"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("zero.csv:3:2: `seconds` must be above 0"));
}
