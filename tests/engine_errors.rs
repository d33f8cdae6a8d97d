//! Run-time errors (spec §7, §10): the run stops with a message holding the
//! rule's key words, the statement (block, index) and the session.

mod common;

use serq::engine::RunError;

fn fails(source: &str) -> RunError {
    match common::run(source) {
        Ok(_) => panic!("the run should fail:\n{source}"),
        Err(e) => e,
    }
}

/// Runs `source` with `--strict`: a computed negative amount is an error.
fn fails_strictly(source: &str) -> RunError {
    let mut options = serq::RunOptions {
        strict: true,
        ..serq::RunOptions::default()
    };
    match serq::run_with(&common::compile(source), &mut options) {
        Ok(_) => panic!("the run should fail under --strict:\n{source}"),
        Err(e) => e,
    }
}

#[test]
fn a_negative_run_work_is_an_error_under_strict_naming_the_statement_and_session() {
    let e = fails_strictly(
        "stage s : delay; workload { arrive batch(2); }
        session { set w = 1 - serial * 2; run s (w); }
        run { horizon 5; }",
    );
    assert!(e.message.contains("negative"), "{}", e.message);
    // Session 1 computes w = -1; the run is statement 1 of the session block (2).
    assert_eq!((e.session, e.at, e.time), (Some(1), Some((2, 1)), 0.0));
}

#[test]
fn nan_hold_units_are_an_error() {
    let e = fails(
        "pool p { cap 4; } workload { arrive batch(1); }
        session { set u = 0 / 0; hold p (u) {} }
        run { horizon 5; }",
    );
    assert!(e.message.contains("NaN"), "{}", e.message);
}

#[test]
fn a_negative_run_work_is_taken_as_zero_and_counted_by_default() {
    // Sessions 0 and 1 compute w = 1 and -1: session 1's run completes at
    // once (no job); the report counts one negative amount, at statement 1
    // of the session block (2), line 2, session 1, t = 0, value -1.
    let report = common::run(
        "stage s : delay; workload { arrive batch(2); }
        session { set w = 1 - serial * 2; run s (w); }
        run { horizon 5; }",
    )
    .expect("a computed negative amount does not stop the run");
    assert_eq!(report.stages[0].completed, 1);
    let n = report.negative_amounts.as_ref().expect("counted");
    assert_eq!((n.count, n.session, n.time, n.min), (1, Some(1), 0.0, -1.0));
    assert_eq!((n.statement.at, n.statement.line), ((2, 1), Some(2)));
    let warnings = report.warnings();
    assert_eq!(warnings.len(), 1);
    assert!(
        warnings[0]
            .message
            .contains("the run's work = -1 at line 2 in session 1"),
        "{}",
        warnings[0].message
    );
}

#[test]
fn a_negative_grow_under_strict_and_an_oversized_load_are_errors() {
    let e = fails_strictly(
        "pool p { cap 10; } workload { arrive batch(1); }
        session { set d = -1; hold p (2) { grow p (d); } }
        run { horizon 5; }",
    );
    assert!(e.message.contains("negative"), "{}", e.message);
    let e = fails(
        "pool p { cap 10; } workload { arrive batch(1); }
        session { set n = 6; hold p (5) { load p (n); } }
        run { horizon 5; }",
    );
    assert!(
        e.message.contains("load must fit the allocation"),
        "{}",
        e.message
    );
}

#[test]
fn a_computed_index_out_of_range_is_an_error() {
    let e = fails(
        "stage s[2] : delay; workload { arrive batch(1); }
        session { set i = 2; run s[i] (1); }
        run { horizon 5; }",
    );
    assert!(
        e.message.contains("stage index 2 out of range (count 2)"),
        "{}",
        e.message
    );
    let e = fails(
        "pool q[3] { cap 1; } workload { arrive batch(1); }
        session { set i = 7; observe u = used(q[i]); }
        run { horizon 5; }",
    );
    assert!(
        e.message.contains("index 7 out of range (count 3)"),
        "{}",
        e.message
    );
    let e = fails(
        "stage s[2] : delay; workload { arrive batch(1); }
        session { set i = 0.5; run s[i] (1); }
        run { horizon 5; }",
    );
    assert!(e.message.contains("index"), "{}", e.message);
}

#[test]
fn a_guard_of_one_half_is_an_error() {
    let e = fails(
        "workload { arrive batch(1); }
        session { set g = 0.5; branch (g) { end; } }
        run { horizon 5; }",
    );
    assert!(
        e.message.contains("the guard is 0.5, not 0 or 1"),
        "{}",
        e.message
    );
}

#[test]
fn a_loop_that_never_lets_time_pass_is_a_livelock() {
    // The loop has a run (so it links), but of work 0: it never blocks.
    let e = fails(
        "stage s : delay; workload { arrive batch(1); }
        session { loop { run s (0); } }
        run { horizon 5; }",
    );
    assert!(
        e.message.contains("livelock") && e.message.contains("session 0"),
        "{}",
        e.message
    );
    assert_eq!(e.session, Some(0));
}

#[test]
fn a_closed_session_that_ends_at_once_is_a_livelock() {
    let e = fails("workload { arrive closed(1); } session { observe x = 1; } run { horizon 5; }");
    assert!(
        e.message.contains("livelock") && e.message.contains("time 0"),
        "{}",
        e.message
    );
}

#[test]
fn a_large_batch_is_not_a_livelock() {
    // 1 000 001 sessions at 0, each ending at once: creations, not replacements.
    let r = common::run("workload { arrive batch(1000001); } run { horizon 1; }").unwrap();
    assert_eq!(r.ended, 1_000_001);
}

#[test]
fn a_computed_renewal_gap_that_is_not_positive_is_an_error() {
    let e = fails("workload { arrive renewal(~uniform(-2, -1)); } run { horizon 5; }");
    assert!(e.message.contains("renewal"), "{}", e.message);
}

#[test]
fn a_computed_distribution_parameter_out_of_range_is_an_error() {
    let e = fails(
        "workload { arrive batch(1); }
        session { set m = -1; observe x = ~exp(m); }
        run { horizon 5; }",
    );
    assert!(
        e.message.contains("exp") && e.message.contains("parameter"),
        "{}",
        e.message
    );
    let e = fails(
        "workload { arrive batch(1); }
        session { set p = 1.5; branch (~bernoulli(p)) { end; } }
        run { horizon 5; }",
    );
    assert!(
        e.message.contains("bernoulli") && e.message.contains("parameter"),
        "{}",
        e.message
    );
}

#[test]
fn an_infinite_choose_count_is_an_error() {
    let e = fails(
        "workload { arrive batch(1); }
        session { set n = 1 / 0; choose j in n by (j); }
        run { horizon 5; }",
    );
    assert!(e.message.contains("choose"), "{}", e.message);
}

#[test]
fn the_three_arrivals_errors() {
    // 2 arrivals by the horizon 2.5 (at 1 and 2) of 5 requested.
    let e = fails("workload { arrive renewal(1); } run { horizon 2.5; arrivals 5; }");
    assert!(
        e.message
            .contains("horizon 2.5 reached before requested arrivals: got 2, requested 5"),
        "{}",
        e.message
    );
    // Both arrived, one still running at the horizon.
    let e = fails(
        "stage s : delay; workload { arrive renewal(1); } session { run s (10); }
        run { horizon 5; arrivals 2; }",
    );
    assert!(
        e.message
            .contains("failed to drain 2 active sessions within horizon 5"),
        "{}",
        e.message
    );
    // Drained at 1.5, before the warm-up 3.
    let e = fails(
        "stage s : delay; workload { arrive renewal(1); } session { run s (0.5); }
        run { horizon 5; warmup 3; arrivals 1; }",
    );
    assert!(
        e.message
            .contains("arrivals drained at 1.5 before or at warmup 3"),
        "{}",
        e.message
    );
}

// ----- run options: the event cap, the progress callback, invariants --------

#[test]
fn a_nan_cost_is_an_error_naming_the_session_served_and_its_run() {
    // Budget 4: session 0 prefills 3 at 0; the cost 0/0 is NaN.
    let e = fails(
        "stage e : step { budget 4; cost 0 / (tokens - tokens); } workload { arrive batch(1); }
        session { run e prefill (3); }
        run { horizon 5; }",
    );
    assert!(
        e.message.contains("NaN") && e.message.contains("`e`"),
        "{}",
        e.message
    );
    assert_eq!((e.session, e.at, e.time), (Some(0), Some((2, 0)), 0.0));
}

#[test]
fn an_iteration_with_tokens_that_costs_nothing_is_an_error() {
    // Session 1 (first in serve order: session 0 is still at d) reaches e
    // at 0 and prefills 3 there; 1 - tokens = -2. A computed budget of 0
    // (no decoders) would instead schedule nothing and wait.
    let e = fails(
        "stage e : step { budget 4; cost 1 - tokens; } stage d : delay;
        workload { arrive batch(2); }
        session { run d (1 - serial); run e prefill (3); }
        run { horizon 5; }",
    );
    assert!(
        e.message.contains("costs -2") && e.message.contains("above 0"),
        "{}",
        e.message
    );
    assert_eq!((e.session, e.at, e.time), (Some(1), Some((2, 1)), 0.0));
}

#[test]
fn a_computed_budget_of_zero_schedules_nothing_and_the_engine_waits() {
    // budget 4 * decoders with only a prefill resident: no iteration ever.
    let report = common::run(
        "stage e : step { budget 4 * decoders; cost 1; } workload { arrive batch(1); }
        session { run e prefill (3); }
        run { horizon 5; }",
    )
    .expect("runs");
    assert_eq!(report.stages[0].iterations, 0);
    assert_eq!(report.stages[0].completed, 0);
}

fn options_run(source: &str, options: &mut serq::RunOptions<'_>) -> Result<serq::Report, RunError> {
    serq::run_with(&common::compile(source), options)
}

/// Three sessions on a delay stage: three job ends, the only events.
const THREE_EVENTS: &str = "stage s : delay; workload { arrive batch(3); }
    session { run s (serial + 1); }
    run { horizon 10; }";

#[test]
fn a_run_of_exactly_the_event_cap_completes() {
    let mut options = serq::RunOptions {
        max_events: Some(3),
        ..serq::RunOptions::default()
    };
    let report = options_run(THREE_EVENTS, &mut options).expect("3 events fit a cap of 3");
    assert_eq!(report.events, 3);
}

#[test]
fn one_event_past_the_cap_is_an_error_naming_the_cap() {
    let mut options = serq::RunOptions {
        max_events: Some(2),
        ..serq::RunOptions::default()
    };
    let e = options_run(THREE_EVENTS, &mut options).expect_err("3 events exceed a cap of 2");
    assert!(e.message.contains("cap of 2 events"), "{}", e.message);
    // The second job ended at 2; the third (at 3) was not taken.
    assert_eq!(e.time, 2.0);
}

#[test]
fn the_progress_callback_sees_the_clock_every_hundred_thousand_events() {
    // 250 000 job ends at times 1, 2, …, 250 000: the callback runs before
    // the 100 001st and the 200 001st, when the clock reads 100 000 and
    // 200 000.
    let source = "stage s : delay; workload { arrive batch(250000); }
        session { run s (serial + 1); }
        run { horizon 1000000; }";
    let mut seen = Vec::new();
    let mut progress = |now: f64| seen.push(now);
    let mut options = serq::RunOptions {
        progress: Some(&mut progress),
        ..serq::RunOptions::default()
    };
    let report = options_run(source, &mut options).expect("runs");
    assert_eq!(report.events, 250_000);
    assert_eq!(seen, [100_000.0, 200_000.0]);
}

#[test]
fn session_counts_add_up_when_sessions_outlive_the_horizon() {
    // Poisson arrivals at rate 1 over [0, 100], each staying 30 with a
    // warm-up of 50: the last ~30 are live at the end, and the report's
    // `ended` leaves out those that ended before the warm-up.
    let source = "stage s : delay; workload { arrive poisson(1); }
        session { run s (30); }
        run { horizon 100; warmup 50; }";
    let mut options = serq::RunOptions {
        check_invariants: true,
        ..serq::RunOptions::default()
    };
    let (report, counts) =
        serq::engine::run_counted(&common::compile(source), &mut options).expect("runs");
    assert_eq!(counts.created, report.arrivals);
    assert_eq!(counts.live, counts.created - counts.ended);
    assert!(
        counts.live > 10 && counts.ended > report.ended,
        "{counts:?} {}",
        report.ended
    );
}

/// Every example and conformance program, and the serving corpus, as the
/// repository holds them.
fn corpus() -> Vec<(String, String)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in [
        "examples/single-turn",
        "examples/pd-disaggregation",
        "examples/multi-turn",
        "examples/hardware",
        "tests/conformance",
        "tests/conformance/t2",
        "tests/serving",
    ] {
        let mut paths: Vec<_> = std::fs::read_dir(root.join(dir))
            .expect("the directory exists")
            .map(|e| e.expect("an entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == "sq"))
            .collect();
        paths.sort();
        for p in paths {
            let text = std::fs::read_to_string(&p).expect("readable");
            files.push((p.display().to_string(), text));
        }
    }
    files
}

#[test]
fn every_example_conformance_and_serving_program_keeps_the_invariants_after_every_event() {
    let corpus = corpus();
    assert!(corpus.len() > 200, "{} programs", corpus.len());
    for (path, _) in corpus {
        // From the file, so a trace or a library beside it resolves.
        let file = std::path::Path::new(&path);
        let Ok(program) = serq::compile_file(file, &serq::Overrides::default()) else {
            continue; // a rejection case
        };
        let plain = serq::run(&program);
        let mut options = serq::RunOptions {
            check_invariants: true,
            ..serq::RunOptions::default()
        };
        let checked = serq::engine::run_counted(&program, &mut options);
        match (plain, checked) {
            (Ok(plain), Ok((checked, counts))) => {
                // Checking reads the world and changes nothing.
                assert_eq!(plain.to_json(true), checked.to_json(true), "{path}");
                assert_eq!(counts.created, checked.arrivals, "{path}");
                assert_eq!(counts.live, counts.created - counts.ended, "{path}");
            }
            (Err(plain), Err(checked)) => {
                assert_eq!(plain, checked, "{path}: the same run-time error");
            }
            (plain, checked) => panic!("{path}: {plain:?} but checked {checked:?}"),
        }
    }
}
