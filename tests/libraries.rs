//! `use "path";` (spec §9), compiled from files on disk under
//! tests/fixtures/libraries: paths relative to the file that says `use`,
//! each file read once, libraries hold only `def`s and `use`s, and an error
//! inside a library names the library's file, line and column.

use std::path::PathBuf;

use serq::{CompileError, Overrides, compile_file, compile_source};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/libraries")
        .join(name)
}

/// The rendered refusal of a fixture (every diagnostic with its file and caret).
fn refusal(name: &str) -> (Vec<&'static str>, String) {
    match compile_file(&fixture(name), &Overrides::default()) {
        Err(e @ CompileError::Diagnostics { .. }) => {
            let CompileError::Diagnostics { diagnostics, .. } = &e else {
                unreachable!()
            };
            let rules = diagnostics.iter().map(|d| d.rule).collect();
            (rules, e.to_string())
        }
        other => panic!("{name}: {other:?}"),
    }
}

#[test]
fn libraries_resolve_beside_the_file_that_uses_them_and_are_read_once() {
    let program = compile_file(&fixture("main.sq"), &Overrides::default()).expect("links");
    // per_token(10) + from_b(1) = 0.5 * 10 + 2 * 1 = 7: the session ends its run at 7.
    let report = serq::run(&program).unwrap();
    assert_eq!(report.observation("t").unwrap().samples(), [7.0]);
}

#[test]
fn a_library_holds_only_definitions_and_uses() {
    let (rules, text) = refusal("bad_item.sq");
    assert_eq!(rules, ["library"]);
    assert!(
        text.contains("a library holds definitions: found `let` where `def` or `use` goes"),
        "{text}"
    );
    // The caret is in the library, on its line 2.
    assert!(text.contains("has_let.sq:2:1"), "{text}");
    assert!(text.contains("let rate = 2;"), "{text}");
}

#[test]
fn a_missing_library_says_which_path_was_tried() {
    let (rules, text) = refusal("missing.sq");
    assert_eq!(rules, ["use"]);
    let tried = fixture("lib/absent.sq");
    assert!(
        text.contains(&format!("cannot read `{}`", tried.display())),
        "{text}"
    );
    assert!(text.contains("missing.sq:1:1"), "{text}");
}

#[test]
fn an_error_inside_a_library_names_the_librarys_file_line_and_column() {
    let (rules, text) = refusal("error_inside.sq");
    assert_eq!(rules, ["unknown-name"]);
    // `rate` is at line 2, column 19 of lib/unknown_name.sq.
    assert!(text.contains("unknown_name.sq:2:19"), "{text}");
    assert!(text.contains("def slow(x) = x * rate;"), "{text}");
}

#[test]
fn a_syntax_error_inside_a_library_is_reported_in_the_library() {
    let (rules, text) = refusal("syntax_error.sq");
    assert_eq!(rules, ["syntax"]);
    assert!(text.contains("broken.sq:1:15"), "{text}");
}

#[test]
fn a_def_given_in_a_library_and_in_the_program_is_refused() {
    let (_, text) = refusal("twice_defined.sq");
    assert!(text.contains("duplicate def `per_token`"), "{text}");
    assert!(
        text.contains("cost.sq"),
        "the first definition is shown: {text}"
    );
}

#[test]
fn a_program_given_as_text_cannot_use() {
    let e = compile_source(
        "use \"lib.sq\"; workload { arrive batch(1); } run { horizon 1; }",
        &Overrides::default(),
    )
    .unwrap_err();
    assert_eq!(e[0].rule, "use");
    assert!(
        e[0].message
            .contains("reads a file next to the program, and this program was given as text")
    );
}

#[test]
fn serq_check_reads_libraries_beside_the_file_and_shows_a_librarys_line() {
    let serq = |name: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_serq"))
            .args(["check".as_ref(), fixture(name).as_os_str()])
            .output()
            .expect("the serq binary runs")
    };
    assert!(serq("main.sq").status.success());
    let out = serq("error_inside.sq");
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("unknown_name.sq:2:19"), "{stderr}");
    assert!(stderr.contains("1 error(s) in"), "{stderr}");
}

#[test]
fn a_run_time_error_in_a_library_statement_is_placed_at_its_use() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_serq"))
        .args([
            "run".as_ref(),
            "--strict".as_ref(),
            fixture("runtime.sq").as_os_str(),
        ])
        .output()
        .expect("the serq binary runs");
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    // `slow_down(a);` is line 6, column 3 of runtime.sq; the run inside it
    // (work a - 5 = -4, an error under --strict) is written in the library.
    assert!(stderr.contains("runtime.sq:6:3"), "{stderr}");
    assert!(stderr.contains("slow_down(a);"), "{stderr}");
}
