//! Workload traces (spec §8.7): the rows a CSV file holds, its corpus
//! sessions, and every malformed file refused with its file, line and
//! column; a program's relative `trace` path read beside the program.

use std::path::{Path, PathBuf};

use serq::trace::{Trace, TraceError, TraceRow};
use serq::{CompileError, Overrides, compile_file};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/traces")
        .join(name)
}

fn parse(text: &str) -> Result<Trace, TraceError> {
    Trace::parse(Path::new("t.csv"), text)
}

fn row(new: f64, out: f64, think: f64, forced: f64) -> TraceRow {
    TraceRow {
        new,
        out,
        think,
        forced,
    }
}

#[test]
fn a_trace_groups_consecutive_rows_of_one_session() {
    let t = Trace::read(&fixture("good.csv")).unwrap();
    // Header, comment and blank line skipped; sessions 7, 7, 3: two corpus sessions.
    assert_eq!((t.len(), t.rows()), (2, 3));
    assert_eq!(
        t.session(0),
        [row(10.0, 3.0, 1.0, 0.0), row(4.0, 2.0, 0.5, 1.0)]
    );
    assert_eq!(t.session(1), [row(7.0, 1.0, 2.0, 0.0)]);
    // Rows of sessions 7, 3, 7, 3 make four corpus sessions; `turn` is not read.
    let t = parse("7,x,1,1,1\n3,0,1,1,1\n7,0,1,1,1\n3,0,1,1,1\n").unwrap();
    assert_eq!(t.len(), 4);
}

#[test]
fn lines_are_trimmed_and_fields_are_not() {
    assert_eq!(parse("  0,0,10,2,1  \r\n").unwrap().session(0)[0].new, 10.0);
    // 0.1.0: `column 3 (new): invalid number ` 10``.
    let e = parse("0, 0, 10, 2, 1\n").unwrap_err();
    // `turn` is not read, so the first field refused is `new`'s.
    assert_eq!((e.line, e.column), (Some(1), Some(3)));
    assert!(e.message.contains("new is not a number: ` 10`"), "{e}");
}

#[test]
fn a_header_with_more_columns_than_the_rows_use_is_accepted() {
    let t = parse("session,turn,new,out,think,forced,extra\n0,0,10,2,1\n").unwrap();
    assert_eq!(t.rows(), 1);
}

#[test]
fn malformed_traces_name_the_file_line_and_column() {
    let e = Trace::read(&fixture("short_row.csv")).unwrap_err();
    assert_eq!((e.line, e.column), (Some(1), Some(5)));
    assert!(e.to_string().contains("short_row.csv"), "{e}");
    assert!(e.message.contains("expected 5 or 6 fields"), "{e}");
    let e = Trace::read(&fixture("not_a_number.csv")).unwrap_err();
    assert_eq!((e.line, e.column), (Some(1), Some(5)));
    assert!(e.message.contains("think is not a number: `x`"), "{e}");
    let e = Trace::read(&fixture("empty.csv")).unwrap_err();
    assert!(e.message.contains("empty trace"), "{e}");
    let e = parse("0,0,10,2,1\n0,0,10,2,1,1,9\n").unwrap_err();
    assert_eq!(e.line, Some(2));
    let e = Trace::read(&fixture("absent.csv")).unwrap_err();
    assert!(
        e.to_string().contains("absent.csv") && e.message.contains("cannot read"),
        "{e}"
    );
}

#[test]
fn a_program_reads_its_trace_beside_it_and_refuses_a_bad_one_before_running() {
    let p = compile_file(&fixture("program.sq"), &Overrides::default()).unwrap();
    let spec = p.trace.clone().expect("the program replays a trace");
    assert!(spec.ordered);
    assert_eq!(PathBuf::from(&spec.path), fixture("good.csv"));
    match compile_file(&fixture("bad_program.sq"), &Overrides::default()) {
        Err(e @ CompileError::Trace { .. }) => {
            let text = e.to_string();
            assert!(
                text.contains("short_row.csv") && text.contains("line 1, column 5"),
                "{text}"
            );
        }
        other => panic!("{other:?}"),
    }
}

/// Two turns, each a delay of the turn's `think`; its own trace file does
/// not exist, so only an override lets it compile.
const REPLAY_TWO: &str = "stage d : delay;
    workload { arrive batch(1); trace \"absent.csv\" ordered; }
    session { turn; run d (think); observe t = now; turn; run d (think); observe t = now; }
    run { horizon 100; }";

fn replayed(dir: &Path, trace: &Path) -> Vec<f64> {
    let overrides = Overrides {
        trace: Some(trace.to_path_buf()),
        ..Overrides::default()
    };
    let program = serq::compile_text_at(REPLAY_TWO, &dir.join("replay.sq"), &overrides)
        .unwrap_or_else(|e| panic!("{e}"));
    serq::run(&program).unwrap().observes[0].samples.clone()
}

#[test]
fn a_trace_override_replaces_the_programs_trace_file() {
    let dir = std::env::temp_dir().join(format!("serq-trace-override-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let other = dir.join("other.csv");
    std::fs::write(&other, "session,turn,new,out,think\n1,0,1,1,4\n1,1,1,1,2\n").unwrap();
    // good.csv, relative to the working directory (the crate's root under
    // cargo test), not to the program's directory: session 7 thinks 1 then
    // 0.5, so the two delays end at 1 and 1.5.
    let relative = Path::new("tests/fixtures/traces/good.csv");
    assert_eq!(replayed(&dir, relative), vec![1.0, 1.5]);
    // other.csv: 4 then 2, ending at 4 and 6.
    assert_eq!(replayed(&dir, &other), vec![4.0, 6.0]);
    // Without an override the program's own (absent) file is read.
    let own = serq::compile_text_at(REPLAY_TWO, &dir.join("replay.sq"), &Overrides::default());
    assert!(matches!(own, Err(CompileError::Trace { .. })));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_trace_override_needs_a_trace_workload() {
    let overrides = Overrides {
        trace: Some(fixture("good.csv")),
        ..Overrides::default()
    };
    let plain =
        "stage d : delay; workload { arrive batch(1); } session { run d (1); } run { horizon 5; }";
    match serq::compile_text_at(plain, Path::new("plain.sq"), &overrides) {
        Err(e @ CompileError::Trace { .. }) => {
            assert!(e.to_string().contains("no `trace` workload"), "{e}")
        }
        other => panic!("{other:?}"),
    }
    // IR: the override is written into a program that replays, refused otherwise.
    let replaying = compile_file(&fixture("program.sq"), &Overrides::default()).unwrap();
    let ir = serq::compile_ir(&replaying.to_json(), &overrides).unwrap();
    assert_eq!(
        ir.trace.as_ref().map(|t| PathBuf::from(&t.path)),
        Some(fixture("good.csv"))
    );
    let json = serq::compile_source(plain, &Overrides::default())
        .unwrap()
        .to_json();
    let refused = serq::compile_ir(&json, &overrides).unwrap_err();
    assert_eq!(refused[0].rule, "trace-unused");
}
