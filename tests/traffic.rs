//! Traffic as it really arrives (serq extensions, docs/language.md §12):
//! `arrive trace "FILE"` (its three formats, `speed`, the window, the
//! `arrivals` limit, an exhausted trace, every bad input refused with its
//! line and field) and `arrive poisson(rate) peak (R)` (thinning, a rate
//! above its peak, no arrival forced at 0); the new words stay names
//! elsewhere, and the IR of the extensions round-trips.

use std::io::Cursor;
use std::path::{Path, PathBuf};

use serq::traffic::{ArrivalReader, ArrivalRow, Format, scan};
use serq::{CompileError, Overrides, Report, compile_source, compile_text_at};

/// A fresh directory for one test's files.
fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("serq-traffic-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn reader(name: &str, text: &str) -> Result<ArrivalReader, serq::trace::TraceError> {
    let jsonl = name.ends_with(".jsonl");
    ArrivalReader::new(
        Path::new(name),
        Box::new(Cursor::new(text.as_bytes().to_vec())),
        jsonl,
    )
}

fn rows(name: &str, text: &str) -> Result<Vec<ArrivalRow>, serq::trace::TraceError> {
    let mut r = reader(name, text)?;
    let mut out = Vec::new();
    while let Some(row) = r.next_row()? {
        out.push(row);
    }
    Ok(out)
}

/// Compiles `program` as the file `main.sq` in `dir`, beside its traces.
fn compile_in(
    dir: &Path,
    program: &str,
    overrides: &Overrides,
) -> Result<serq::ValidProgram, CompileError> {
    compile_text_at(program, &dir.join("main.sq"), overrides)
}

fn run_in(dir: &Path, program: &str) -> Report {
    let p = compile_in(dir, program, &Overrides::default()).unwrap_or_else(|e| panic!("{e}"));
    serq::run(&p).unwrap_or_else(|e| panic!("{e}"))
}

fn samples<'a>(r: &'a Report, name: &str) -> &'a [f64] {
    &r.observes
        .iter()
        .find(|o| o.name == name)
        .expect("observation")
        .samples
}

// ----- the readers --------------------------------------------------------

#[test]
fn a_serq_csv_gives_seconds_after_its_first_row_and_its_sizes() {
    let r = rows(
        "t.csv",
        "time,new,out\n10,100,5\n# a comment\n\n12.5,200,6\n",
    )
    .unwrap();
    assert_eq!(
        reader("t.csv", "time,new,out\n1,1,1\n").unwrap().format(),
        Format::Serq
    );
    assert_eq!(r.len(), 2);
    assert_eq!(
        (r[0].line, r[0].time, r[0].new, r[0].out),
        (2, 0.0, 100.0, 5.0)
    );
    assert_eq!(
        (r[1].line, r[1].time, r[1].new, r[1].out),
        (5, 2.5, 200.0, 6.0)
    );
    // Columns are found by name: order and extra columns do not matter.
    let r = rows("t.csv", "out,session,time,new\n5,x,3,7\n").unwrap();
    assert_eq!((r[0].time, r[0].new, r[0].out), (0.0, 7.0, 5.0));
}

#[test]
fn an_azure_csv_reads_its_datetimes_to_the_tenth_of_a_microsecond() {
    // The first three rows of the Azure conversation trace (CRLF as in the file).
    let text = "TIMESTAMP,ContextTokens,GeneratedTokens\r\n\
                2023-11-16 18:15:46.6805900,374,44\r\n\
                2023-11-16 18:15:50.9951690,396,109\r\n\
                2023-11-16 18:15:51.2224670,879,55\r\n";
    assert_eq!(reader("a.csv", text).unwrap().format(), Format::Azure);
    let r = rows("a.csv", text).unwrap();
    // 50.9951690 − 46.6805900 = 4.3145790 s; 51.2224670 − 46.6805900 = 4.5418770 s.
    assert_eq!(r[0].time, 0.0);
    assert_eq!(r[1].time, 4.314579);
    assert_eq!(r[2].time, 4.541877);
    assert_eq!((r[2].new, r[2].out), (879.0, 55.0));
}

#[test]
fn a_mooncake_jsonl_reads_milliseconds_and_keeps_each_rows_hash_ids() {
    let text = "{\"timestamp\": 0, \"input_length\": 6758, \"output_length\": 500, \"hash_ids\": [0, 1, 2]}\n\
                {\"timestamp\": 1500, \"input_length\": 700, \"output_length\": 3, \"hash_ids\": [0, 14]}\n";
    // Told by its first character even without the extension.
    assert_eq!(reader("m.txt", text).unwrap().format(), Format::Mooncake);
    let r = rows("m.jsonl", text).unwrap();
    assert_eq!((r[0].time, r[0].new, r[0].out), (0.0, 6758.0, 500.0));
    assert_eq!(r[0].hash_ids, [0, 1, 2]);
    assert_eq!(
        (r[1].line, r[1].time, r[1].hash_ids.as_slice()),
        (2, 1.5, &[0u64, 14][..])
    );
}

#[test]
fn the_shipped_slices_read_whole_in_their_formats() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/traffic/traces");
    let azure = scan(&root.join("azure_conv_2000.csv"), None).unwrap();
    // 18:22:50.9400470 − 18:15:46.6805900 = 424.2594570 s.
    assert_eq!(
        (azure.format, azure.rows, azure.last),
        (Format::Azure, 2000, 424.259457)
    );
    let mooncake = scan(&root.join("mooncake_conv_500.jsonl"), None).unwrap();
    // The 500th row's timestamp is 165 000 ms.
    assert_eq!(
        (mooncake.format, mooncake.rows, mooncake.last),
        (Format::Mooncake, 500, 165.0)
    );
}

#[test]
fn a_malformed_row_names_its_line_and_field() {
    let e = rows("t.csv", "time,new,out\n0,1,1\n1,x,1\n").unwrap_err();
    assert_eq!((e.line, e.column), (Some(3), Some(2)));
    assert!(e.message.contains("new is not a number: `x`"), "{e}");
    let e = rows("t.csv", "time,new,out\n0,1\n").unwrap_err();
    assert_eq!(e.line, Some(2));
    assert!(e.message.contains("`out` is missing"), "{e}");
    let e = rows("t.csv", "time,new,out\n0,-4,1\n").unwrap_err();
    assert!(
        e.message
            .contains("new must be a finite number of tokens ≥ 0"),
        "{e}"
    );
    let e = rows(
        "a.csv",
        "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15,1,1\n",
    )
    .unwrap_err();
    assert_eq!((e.line, e.column), (Some(2), Some(1)));
    assert!(
        e.message
            .starts_with("TIMESTAMP: `2023-11-16 18:15` is not a datetime"),
        "{e}"
    );
    let e = rows("m.jsonl", "{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1}\n{\"timestamp\": 5, \"output_length\": 1}\n").unwrap_err();
    assert_eq!(e.line, Some(2));
    assert_eq!(e.message, "missing field `input_length`");
    let e = rows(
        "m.jsonl",
        "{\"timestamp\": 0, \"input_length\": \"many\", \"output_length\": 1}\n",
    )
    .unwrap_err();
    assert!(e.message.contains("invalid type: string \"many\""), "{e}");
    assert!(e.column.is_some());
}

#[test]
fn time_going_backwards_is_refused_at_its_line() {
    let e = rows("t.csv", "time,new,out\n5,1,1\n7,1,1\n6,1,1\n").unwrap_err();
    assert_eq!(e.line, Some(4));
    // 6 − 5 = 1 s after the first row, the row before at 7 − 5 = 2 s.
    assert!(
        e.message.contains(
            "time goes backwards: this row is 1 s after the first row, the row before it 2 s"
        ),
        "{e}"
    );
    // Equal times are not backwards (Mooncake has many rows at one millisecond).
    assert_eq!(
        rows("t.csv", "time,new,out\n5,1,1\n5,1,1\n").unwrap().len(),
        2
    );
}

#[test]
fn an_unknown_header_an_empty_file_and_a_missing_file_are_refused() {
    let e = reader("t.csv", "when,new,out\n0,1,1\n").unwrap_err();
    assert!(e.message.contains("unknown arrival trace format"), "{e}");
    let e = reader("t.csv", "\n# nothing\n").unwrap_err();
    assert!(e.message.contains("empty arrival trace"), "{e}");
    let e = scan(Path::new("/no/such/trace.csv"), None).unwrap_err();
    assert!(
        e.to_string().contains("/no/such/trace.csv") && e.message.contains("cannot read"),
        "{e}"
    );
    let d = dir("header-only");
    std::fs::write(d.join("h.csv"), "time,new,out\n").unwrap();
    assert!(
        scan(&d.join("h.csv"), None)
            .unwrap_err()
            .message
            .contains("no rows")
    );
}

// ----- arrive trace -------------------------------------------------------

/// Rows at 10, 12, 15, 16, 20 s: 0, 2, 5, 6, 10 s after the first.
const FIVE_ROWS: &str = "time,new,out\n10,100,5\n12,200,6\n15,300,7\n16,400,8\n20,500,9\n";

/// Each session observes when it arrived and its row's sizes.
fn replay(arrive: &str, run: &str) -> String {
    format!(
        "let speed = 1;
         stage d : delay;
         workload {{ {arrive} init {{ set p = new; }} }}
         session {{ observe at = now; observe p = p; observe o = out; run d (1); }}
         run {{ {run} }}"
    )
}

#[test]
fn each_row_arrives_at_its_time_after_the_first_divided_by_the_speed() {
    let d = dir("speed");
    std::fs::write(d.join("t.csv"), FIVE_ROWS).unwrap();
    let r = run_in(
        &d,
        &replay("arrive trace \"t.csv\" speed (2);", "horizon 100;"),
    );
    // (0, 2, 5, 6, 10) / 2.
    assert_eq!(samples(&r, "at"), [0.0, 1.0, 2.5, 3.0, 5.0]);
    // `init` reads the row's `new`; the session reads its `out`.
    assert_eq!(samples(&r, "p"), [100.0, 200.0, 300.0, 400.0, 500.0]);
    assert_eq!(samples(&r, "o"), [5.0, 6.0, 7.0, 8.0, 9.0]);
    // Without `speed`, as recorded; `speed` is an expression of `let`s.
    let r = run_in(&d, &replay("arrive trace \"t.csv\";", "horizon 100;"));
    assert_eq!(samples(&r, "at"), [0.0, 2.0, 5.0, 6.0, 10.0]);
    let r = run_in(
        &d,
        &replay("arrive trace \"t.csv\" speed (speed * 4);", "horizon 100;"),
    );
    assert_eq!(samples(&r, "at"), [0.0, 0.5, 1.25, 1.5, 2.5]);
    // The exhausted trace makes no more arrivals; the run goes on to its horizon.
    assert_eq!((r.arrivals, r.end), (5, 100.0));
}

#[test]
fn a_window_replays_its_rows_from_time_zero() {
    let d = dir("window");
    std::fs::write(d.join("t.csv"), FIVE_ROWS).unwrap();
    // [2, 6) s after the first row holds the rows at 2 and 5; they arrive
    // at (2 − 2) / 1 = 0 and (5 − 2) / 1 = 3; the row at 6 is past the end.
    let r = run_in(
        &d,
        &replay("arrive trace \"t.csv\" window (2, 6);", "horizon 100;"),
    );
    assert_eq!(samples(&r, "at"), [0.0, 3.0]);
    assert_eq!(samples(&r, "p"), [200.0, 300.0]);
    // With speed 2, in either order: [1.5, 7) holds the rows at 2, 5 and 6,
    // arriving at (2 − 1.5) / 2, (5 − 1.5) / 2, (6 − 1.5) / 2.
    let r = run_in(
        &d,
        &replay(
            "arrive trace \"t.csv\" speed (2) window (1.5, 7);",
            "horizon 100;",
        ),
    );
    assert_eq!(samples(&r, "at"), [0.25, 1.75, 2.25]);
    // A window's end may be `inf`.
    let r = run_in(
        &d,
        &replay("arrive trace \"t.csv\" window (6, inf);", "horizon 100;"),
    );
    assert_eq!(samples(&r, "at"), [0.0, 4.0]);
}

#[test]
fn arrivals_limits_the_rows_replayed_and_ends_the_run_at_the_drain() {
    let d = dir("limit");
    std::fs::write(d.join("t.csv"), FIVE_ROWS).unwrap();
    let r = run_in(
        &d,
        &replay("arrive trace \"t.csv\";", "horizon 100; arrivals 3;"),
    );
    // Rows at 0, 2, 5; the third session ends at 5 + 1 = 6.
    assert_eq!(samples(&r, "at"), [0.0, 2.0, 5.0]);
    assert_eq!((r.arrivals, r.end), (3, 6.0));
    // More than the window holds is refused before the run.
    let e = compile_in(
        &d,
        &replay(
            "arrive trace \"t.csv\" window (0, 6);",
            "horizon 100; arrivals 4;",
        ),
        &Overrides::default(),
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("arrivals 4, but the trace has only 3 rows in its window"),
        "{e}"
    );
}

#[test]
fn bad_traces_are_refused_before_the_run_naming_the_file_and_line() {
    let d = dir("bad");
    std::fs::write(d.join("t.csv"), FIVE_ROWS).unwrap();
    std::fs::write(d.join("back.csv"), "time,new,out\n0,1,1\n3,1,1\n2,1,1\n").unwrap();
    std::fs::write(d.join("typo.csv"), "time,new,out\n0,1,1\n3,1,one\n").unwrap();
    let refused = |arrive: &str| {
        let e = compile_in(&d, &replay(arrive, "horizon 100;"), &Overrides::default()).unwrap_err();
        assert!(matches!(e, CompileError::Trace { .. }), "{e:?}");
        e.to_string()
    };
    let e = refused("arrive trace \"absent.csv\";");
    assert!(e.contains("absent.csv") && e.contains("cannot read"), "{e}");
    let e = refused("arrive trace \"back.csv\";");
    assert!(
        e.contains("back.csv`: line 4") && e.contains("time goes backwards"),
        "{e}"
    );
    let e = refused("arrive trace \"typo.csv\";");
    assert!(
        e.contains("typo.csv`: line 3, column 3") && e.contains("out is not a number: `one`"),
        "{e}"
    );
    // No row lies in [11, 20) s: the last row is at 10.
    let e = refused("arrive trace \"t.csv\" window (11, 20);");
    assert!(
        e.contains("empty window: no row lies in [11, 20) s after the first row"),
        "{e}"
    );
    // Rows after the first one past the window's end are never read: they
    // may be malformed.
    std::fs::write(d.join("late.csv"), "time,new,out\n0,1,1\n3,1,1\n4,1,one\n").unwrap();
    let r = run_in(
        &d,
        &replay("arrive trace \"late.csv\" window (0, 1);", "horizon 100;"),
    );
    assert_eq!(r.arrivals, 1);
}

#[test]
fn bad_clauses_are_link_errors_with_their_place() {
    let d = dir("clauses");
    std::fs::write(d.join("t.csv"), FIVE_ROWS).unwrap();
    let diagnostics =
        |arrive: &str| match compile_in(&d, &replay(arrive, "horizon 100;"), &Overrides::default())
        {
            Err(CompileError::Diagnostics { diagnostics, .. }) => diagnostics
                .iter()
                .map(|d| d.message.clone())
                .collect::<Vec<_>>()
                .join("\n"),
            other => panic!("{other:?}"),
        };
    assert!(
        diagnostics("arrive trace \"t.csv\" window (5, 5);")
            .contains("window (5, 5) is empty or reversed")
    );
    assert!(
        diagnostics("arrive trace \"t.csv\" window (5);").contains("`window` takes 2 argument(s)")
    );
    assert!(
        diagnostics("arrive trace \"t.csv\" speed (0);")
            .contains("speed must be above 0 and finite, found 0")
    );
    assert!(
        diagnostics("arrive trace \"t.csv\" speed (1) speed (2);")
            .contains("`speed` is given twice")
    );
    assert!(
        diagnostics("arrive trace \"t.csv\" peak (2);")
            .contains("`peak` applies only to `arrive poisson`")
    );
    assert!(
        diagnostics("arrive poisson(1) speed (2);")
            .contains("`speed` applies only to `arrive trace`")
    );
    assert!(diagnostics("arrive trace \"t.csv\" speed (p);").contains("`p` is not a constant"));
    assert!(diagnostics("arrive trace;").contains("file name in quotes after `arrive trace`"));
}

#[test]
fn an_arrival_trace_override_replaces_the_programs_file() {
    let d = dir("override");
    std::fs::write(d.join("other.csv"), "time,new,out\n3,1,1\n4,1,1\n").unwrap();
    let overrides = Overrides {
        arrival_trace: Some(d.join("other.csv")),
        ..Overrides::default()
    };
    let p = compile_in(
        &d,
        &replay("arrive trace \"absent.csv\";", "horizon 100;"),
        &overrides,
    )
    .unwrap();
    assert_eq!(samples(&serq::run(&p).unwrap(), "at"), [0.0, 1.0]);
    // A program that does not arrive by a trace refuses it.
    let e = compile_in(
        &d,
        &replay("arrive poisson(1);", "horizon 100;"),
        &overrides,
    )
    .unwrap_err();
    assert!(e.to_string().contains("does not `arrive trace`"), "{e}");
}

#[test]
fn the_cli_replays_an_arrival_trace_override_and_check_names_the_extension() {
    let d = dir("cli");
    std::fs::write(d.join("t.csv"), FIVE_ROWS).unwrap();
    std::fs::write(d.join("two.csv"), "time,new,out\n0,1,1\n1,1,1\n").unwrap();
    std::fs::write(
        d.join("main.sq"),
        replay("arrive trace \"t.csv\";", "horizon 100;"),
    )
    .unwrap();
    let serq = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_serq"))
            .args(args)
            .current_dir(&d)
            .output()
            .unwrap()
    };
    let out = serq(&["check", "main.sq"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout
            .contains("main.sq: uses serq extensions (arrive trace): pyserq 0.1.0 will not run it"),
        "{stdout}"
    );
    let out = serq(&["run", "main.sq", "--arrival-trace", "two.csv"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("arrivals 2 "),
        "{stdout}"
    );
}

// ----- arrive poisson(rate) peak (R) --------------------------------------

#[test]
fn thinning_counts_lie_within_their_poisson_intervals() {
    // A step: rate 2 on [0, 500), 0.5 on [500, 1000); the peak 2. Each
    // window of 100 s expects 200 or 50 arrivals (Poisson: sd √200 ≈ 14.1,
    // √50 ≈ 7.1); each count lies within 4 sd, on each of 4 seeds.
    let program = "stage d : delay;
        workload { arrive poisson(now < 500 ? 2 : 0.5) peak (2); }
        session { observe at = now; run d (1); }
        run { horizon 1000; }";
    for seed in 1..=4 {
        let overrides = Overrides {
            seed: Some(seed),
            ..Overrides::default()
        };
        let r = serq::run(&compile_source(program, &overrides).unwrap()).unwrap();
        let at = samples(&r, "at");
        for w in 0..10 {
            let (lo, hi) = (w as f64 * 100.0, (w + 1) as f64 * 100.0);
            let k = at.iter().filter(|&&t| lo <= t && t < hi).count() as f64;
            let mean = if w < 5 { 200.0 } else { 50.0 };
            assert!(
                (k - mean).abs() <= 4.0 * mean.sqrt(),
                "seed {seed} window {w}: {k} arrivals, expected {mean}"
            );
        }
        // The whole run: 2·500 + 0.5·500 = 1250, sd √1250 ≈ 35.4.
        assert!(
            (at.len() as f64 - 1250.0).abs() <= 4.0 * 1250f64.sqrt(),
            "{}",
            at.len()
        );
    }
}

#[test]
fn no_arrival_is_forced_at_time_zero_and_a_constant_rate_thins_too() {
    let program = "stage d : delay;
        workload { arrive poisson(1) peak (4); }
        session { observe at = now; run d (1); }
        run { horizon 4000; }";
    let r = serq::run(&compile_source(program, &Overrides::default()).unwrap()).unwrap();
    let at = samples(&r, "at");
    assert!(at[0] > 0.0, "{}", at[0]);
    // Rate 1 over 4000 s: 4000 arrivals, sd 63.2.
    assert!(
        (at.len() as f64 - 4000.0).abs() <= 4.0 * 63.3,
        "{}",
        at.len()
    );
    // One seed, one report: the same digits twice.
    let again = serq::run(&compile_source(program, &Overrides::default()).unwrap()).unwrap();
    assert_eq!(samples(&again, "at"), at);
}

#[test]
fn a_rate_above_its_peak_is_a_run_time_error_naming_the_time() {
    let program = "stage d : delay;
        workload { arrive poisson(now < 5 ? 1 : 3) peak (2); }
        session { run d (1); }
        run { horizon 100; }";
    let e = serq::run(&compile_source(program, &Overrides::default()).unwrap()).unwrap_err();
    assert!(e.message.contains("above its declared peak"), "{e}");
    assert!(
        e.message
            .contains(&format!("the rate at t = {} is 3", e.time)),
        "{e}"
    );
    // The first candidate at or after 5 is the one refused.
    assert!(e.time >= 5.0, "{}", e.time);
}

#[test]
fn a_rate_may_read_now_only_with_a_peak_and_no_attribute_draw_or_observable() {
    let messages = |workload: &str| {
        let program = format!(
            "stage d : delay; workload {{ {workload} }} session {{ set k = 1; run d (k); }} run {{ horizon 10; }}"
        );
        compile_source(&program, &Overrides::default())
            .unwrap_err()
            .iter()
            .map(|d| format!("{} {}", d.message, d.help.clone().unwrap_or_default()))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let m = messages("arrive poisson(1 + now) ;");
    assert!(
        m.contains("a poisson rate that reads `now` needs a declared peak")
            && m.contains("peak (R)"),
        "{m}"
    );
    assert!(
        messages("arrive poisson(k) peak (2);").contains("cannot read the session attribute `k`")
    );
    assert!(
        messages("arrive poisson(~exp(1)) peak (2);").contains("no attribute, draw or observable")
    );
    assert!(
        messages("arrive poisson(busy(d)) peak (2);").contains("no attribute, draw or observable")
    );
    assert!(messages("arrive poisson(3) peak (2);").contains("between 0 and its peak 2"));
    assert!(messages("arrive poisson(now) peak (0);").contains("peak must be above 0"));
}

// ----- the language around them -----------------------------------------

#[test]
fn the_new_words_stay_names_everywhere_else() {
    // `speed`, `peak`, `window` and `trace` as lets, def parameters and
    // attributes: the programs of today keep working, linking to the IR
    // they linked to (no extension is used).
    let program = "let speed = 2; let peak = 3; let window = 1;
        def scaled(speed, peak) = speed * peak;
        stage d : delay;
        workload { arrive poisson(speed) ; init { set trace = window; } }
        session { set k = scaled(speed, peak); run d (k + trace); }
        run { horizon 10; }";
    let p = compile_source(program, &Overrides::default()).unwrap();
    assert_eq!(p.arrival, serq::ir::Arrival::Poisson(2.0));
    assert!(p.arrival.extension().is_none());
    assert!(!p.to_json().contains("Trace") && !p.to_json().contains("Thinned"));
    // And as the clause's own argument.
    let d = dir("words");
    std::fs::write(d.join("t.csv"), FIVE_ROWS).unwrap();
    let r = run_in(
        &d,
        &replay("arrive trace \"t.csv\" speed (speed * 2);", "horizon 100;"),
    );
    assert_eq!(samples(&r, "at"), [0.0, 1.0, 2.5, 3.0, 5.0]);
}

#[test]
fn the_extensions_ir_round_trips_and_the_strict_reader_checks_it() {
    let d = dir("ir");
    std::fs::write(d.join("t.csv"), FIVE_ROWS).unwrap();
    let p = compile_in(
        &d,
        &replay(
            "arrive trace \"t.csv\" window (1, 8) speed (2);",
            "horizon 100;",
        ),
        &Overrides::default(),
    )
    .unwrap();
    let json = p.to_json();
    let path = d.join("t.csv").display().to_string();
    assert!(json.contains(&format!("\"Trace\": {{\n      \"path\": {path:?},\n      \"speed\": 2.0,\n      \"start\": 1.0,\n      \"end\": 8.0\n    }}")), "{json}");
    let back = serq::compile_ir(&json, &Overrides::default()).unwrap();
    assert_eq!(back.program(), p.program());
    // From the IR, the run reads the same rows: at 2, 5 and 6, (t − 1) / 2.
    assert_eq!(samples(&serq::run(&back).unwrap(), "at"), [0.5, 2.0, 2.5]);
    let thinned = compile_source(
        "stage d : delay; workload { arrive poisson(now < 5 ? 1 : 0.5) peak (1); } session { run d (1); } run { horizon 10; }",
        &Overrides::default(),
    )
    .unwrap();
    let json = thinned.to_json();
    assert!(
        json.contains("\"Thinned\"") && json.contains("\"peak\": 1.0"),
        "{json}"
    );
    assert_eq!(
        serq::compile_ir(&json, &Overrides::default())
            .unwrap()
            .program(),
        thinned.program()
    );
    // An unknown field, a bad speed or peak, and a rate reading an attribute are refused.
    let refused = |json: String| {
        serq::compile_ir(&json, &Overrides::default())
            .unwrap_err()
            .iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    };
    let trace_json = p.to_json();
    assert!(
        refused(trace_json.replace("\"speed\": 2.0", "\"speed\": 2.0, \"pace\": 1"))
            .contains("unknown field `pace`")
    );
    assert!(
        refused(trace_json.replace("\"speed\": 2.0", "\"speed\": 0.0"))
            .contains("speed 0 must be above 0")
    );
    assert!(
        refused(trace_json.replace("\"start\": 1.0", "\"start\": 9.0"))
            .contains("needs 0 ≤ start < end")
    );
    assert!(
        refused(json.replace("\"peak\": 1.0", "\"peak\": -1.0"))
            .contains("peak -1 must be above 0")
    );
    assert!(
        refused(json.replace("\"Ctx\": \"Now\"", "\"Attr\": 1"))
            .contains("no attribute, draw or observable")
    );
}
