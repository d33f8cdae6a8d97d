//! The linker's lints (`unused-attribute`, `unset-attribute`) and the one
//! report of a fault inside a `def` used twice. The rendered warnings are
//! pinned by tests/diagnostics/lints/ (see tests/diagnostics.rs); these
//! tests pin what silences them, what counts as set, and that a warning
//! changes neither the exit status nor the report.

use serq::{Overrides, lint_text_at};
use std::path::{Path, PathBuf};
use std::process::Command;

fn lints(text: &str) -> String {
    lint_text_at(text, Path::new("x.sq"), &Overrides::default())
}

/// A conversation whose turn-2 prompt should grow by K: `set {name}` where
/// `K` was meant.
fn typo(name: &str) -> String {
    format!(
        "stage P : delay;
         workload {{ arrive batch(3); init {{ set K = 0; }} }}
         session {{
           loop {{
             set prompt = K + 100;
             run P (prompt / 1000);
             observe prompt = prompt;
             set {name} = prompt + 20;
             branch (turn_no < 1) {{ set turn_no = 1; }} else {{ end; }}
           }}
         }}
         run {{ horizon 20; }}"
    )
}

#[test]
fn a_set_never_read_warns_with_the_name_meant() {
    let text = lints(&typo("k"));
    assert!(text.contains("warning[unused-attribute]: the attribute `k` is set but never read"));
    assert!(text.contains("did you mean `K`?"), "{text}");
    // The caret is under `k` of `set k`: line 8, column 18.
    assert!(text.contains("x.sq:8:18"), "{text}");
    // With K set as meant, nothing to say.
    assert_eq!(lints(&typo("K")), "");
}

#[test]
fn a_leading_underscore_silences_both_lints() {
    assert_eq!(lints(&typo("_k")), "");
    let early = |name: &str| {
        format!(
            "stage s : fifo; workload {{ arrive batch(1); }}
             session {{ observe a = {name}; set {name} = 1; run s ({name}); }}
             run {{ horizon 10; }}"
        )
    };
    let text = lints(&early("x"));
    assert!(
        text.contains("warning[unset-attribute]: the attribute `x`"),
        "{text}"
    );
    assert_eq!(lints(&early("_x")), "");
}

#[test]
fn built_ins_bindings_and_a_first_pass_idiom_count_as_set() {
    // `think`, `new`, `out` (a trace's columns), `serial`, `turn_no`: read,
    // never set in the text; `more` set, read by nobody in the text.
    let text = lints(
        "pool kv { cap 100; }
         stage s : delay;
         workload { arrive batch(2); }
         session {
           set more = 1;
           run s (think + new + out + serial + turn_no);
           hold kv (c + 1) at admission (c = 2) { observe c = c; }
           loop {
             branch (first == 0) { observe first = now; set first = 1; }
             run s (1);
             branch (now > 5) { end; }
           }
         }
         run { horizon 10; }",
    );
    assert_eq!(text, "");
    // Set in `init`, read in `turn` and the session: set.
    let text = lints(
        "stage s : delay;
         workload { arrive batch(1); init { set K = 3; } turn { set n = K + 1; } }
         session { turn; run s (n); }
         run { horizon 10; }",
    );
    assert_eq!(text, "");
}

#[test]
fn every_example_links_without_a_warning() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<PathBuf> = Vec::new();
    for dir in std::fs::read_dir(root.join("examples")).expect("examples/") {
        let dir = dir.expect("an entry").path();
        if dir.is_dir() {
            for f in std::fs::read_dir(&dir).expect("a directory") {
                let f = f.expect("an entry").path();
                if f.extension().is_some_and(|e| e == "sq") {
                    files.push(f);
                }
            }
        }
    }
    files.sort();
    assert!(files.len() >= 9);
    for f in files {
        let text = std::fs::read_to_string(&f).expect("readable");
        let warnings = lint_text_at(&text, &f, &Overrides::default());
        assert_eq!(warnings, "", "{}", f.display());
    }
}

/// `serq ARGS` on `prog.sq` holding `text`, in a directory of its own.
fn serq_on(text: &str, tag: &str, args: &[&str]) -> std::process::Output {
    let dir = std::env::temp_dir().join(format!("serq-lints-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    std::fs::write(dir.join("prog.sq"), text).expect("writable");
    let out = Command::new(env!("CARGO_BIN_EXE_serq"))
        .current_dir(&dir)
        .args(args)
        .arg("prog.sq")
        .output()
        .expect("serq runs");
    let _ = std::fs::remove_dir_all(&dir);
    out
}

#[test]
fn a_warning_changes_neither_the_exit_status_nor_the_report() {
    let warned = serq_on(&typo("k"), "warned", &["run", "--json"]);
    let silent = serq_on(&typo("_k"), "silent", &["run", "--json"]);
    assert_eq!(warned.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&warned.stderr);
    assert!(stderr.contains("warning[unused-attribute]"), "{stderr}");
    assert!(!String::from_utf8_lossy(&silent.stderr).contains("warning["));
    // The same report, byte for byte.
    assert_eq!(warned.stdout, silent.stdout);
    let checked = serq_on(&typo("k"), "check", &["check"]);
    assert_eq!(checked.status.code(), Some(0));
    let table = serq_on(&typo("k"), "table", &["run"]);
    assert_eq!(table.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&table.stdout).contains("prompt"));
}

#[test]
fn a_fault_inside_a_def_used_twice_is_one_error_naming_both_uses() {
    let source = "stage d : delay;
                  def slow(x) = x * nope;
                  workload { arrive batch(1); }
                  session { run d (slow(1)); run d (slow(2)); }
                  run { horizon 10; }";
    let errors = serq::compile_source(source, &Overrides::default()).expect_err("nope is unknown");
    assert_eq!(errors.len(), 1, "{errors:?}");
    let e = &errors[0];
    assert_eq!(e.rule, "unknown-name");
    assert_eq!(&source[e.span.start as usize..e.span.end as usize], "nope");
    let uses: Vec<&str> = e
        .secondary
        .iter()
        .map(|(s, label)| {
            assert_eq!(label, "in this use of the definition");
            &source[s.start as usize..s.end as usize]
        })
        .collect();
    assert_eq!(uses, ["run d (slow(1));", "run d (slow(2));"]);

    // Two different faults stay two errors.
    let two = "stage d : delay;
               def slow(x) = x * nope;
               workload { arrive batch(1); }
               session { run d (slow(1)); run d (zilch); }
               run { horizon 10; }";
    let errors = serq::compile_source(two, &Overrides::default()).expect_err("two faults");
    assert_eq!(errors.len(), 2, "{errors:?}");
}
