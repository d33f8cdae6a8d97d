//! Every rule's diagnostic, rendered as a user sees it, pinned by a snapshot
//! (as ruff pins its rules): each fixture under `tests/diagnostics/` is run
//! through `serq run` and its exit status and stderr compared with
//! `tests/snapshots/diagnostics__rule@FIXTURE.snap`.
//!
//! A fixture is named for its rule: `RULE.sq` (or `RULE--CASE.sq`, or
//! `.json` for IR), and must produce `error[RULE]`. A first line
//! `// args: …` gives flags to pass. Adding a rule's fixture is one file:
//! write it, run `INSTA_UPDATE=always cargo test --test diagnostics` (or
//! `cargo insta test --review`), and review the new `.snap` file.
//! `every_rule_has_a_fixture` finds the rules in the source, so a new rule
//! without a fixture fails the suite.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

/// The rule a fixture is for: its file stem up to `--`.
fn rule_of(path: &Path) -> String {
    let stem = path.file_stem().unwrap_or_default().to_string_lossy();
    stem.split("--").next().unwrap_or_default().to_string()
}

/// `serq run FIXTURE ARGS` in the fixtures' directory: its exit status and stderr.
fn rendered(path: &Path) -> String {
    let text = std::fs::read_to_string(path).expect("a readable fixture");
    let args: Vec<&str> = text
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("// args:"))
        .map(|a| a.split_whitespace().collect())
        .unwrap_or_default();
    let dir = path.parent().expect("a fixture has a directory");
    let name = path.file_name().expect("a fixture has a name");
    let out = Command::new(env!("CARGO_BIN_EXE_serq"))
        .current_dir(dir)
        .arg("run")
        .arg(name)
        .args(&args)
        .output()
        .expect("the serq binary runs");
    format!(
        "exit: {}\n{}",
        out.status
            .code()
            .map_or("signal".to_string(), |c| c.to_string()),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn rule() {
    insta::glob!("diagnostics/*.{sq,json}", |path| {
        let text = rendered(path);
        let rule = rule_of(path);
        assert!(
            text.contains(&format!("error[{rule}]")),
            "{} does not produce error[{rule}]:\n{text}",
            path.display()
        );
        insta::assert_snapshot!(text);
    });
}

/// `serq check FIXTURE` in the lints' directory: its exit status and stderr.
fn checked(path: &Path) -> String {
    let dir = path.parent().expect("a fixture has a directory");
    let name = path.file_name().expect("a fixture has a name");
    let out = Command::new(env!("CARGO_BIN_EXE_serq"))
        .current_dir(dir)
        .arg("check")
        .arg(name)
        .output()
        .expect("the serq binary runs");
    format!(
        "exit: {}\n{}",
        out.status
            .code()
            .map_or("signal".to_string(), |c| c.to_string()),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The lints: each fixture under `tests/diagnostics/lints/` is named for
/// its rule, links (exit 0) and gives `warning[RULE]`, pinned by a
/// snapshot of `serq check`'s stderr.
#[test]
fn lint() {
    insta::glob!("diagnostics/lints/*.sq", |path| {
        let text = checked(path);
        let rule = rule_of(path);
        assert!(
            text.starts_with("exit: 0\n") && text.contains(&format!("warning[{rule}]")),
            "{} does not link with warning[{rule}]:\n{text}",
            path.display()
        );
        assert!(!text.contains("error["), "{text}");
        insta::assert_snapshot!(text);
    });
}

/// Rules no fixture can reach through `serq run`, each with the reason.
const UNREACHABLE: [(&str, &str); 5] = [
    (
        "invariant",
        "an engine bug: checked only with RunOptions::check_invariants",
    ),
    (
        "max-events",
        "only RunOptions::max_events sets an event cap; the CLI has none",
    ),
    (
        "run-time",
        "the fallback of RunError::rule_of, for a message without key words",
    ),
    (
        "live-limit",
        "10^7 live sessions take about 3 GB: tests/hostile.rs checks it in release builds",
    ),
    (
        "trace-unused",
        "IR given --trace without a trace workload: an IR fixture takes no flags; tests/traces.rs pins it",
    ),
];

/// The rule identifiers the source gives a diagnostic: string literals at
/// the top of the first argument of `Diagnostic::new(`, `IrError::new(`
/// and the validator's `self.err(` (or in the braces of an `if` there),
/// and the rules of run-time errors.
fn rules_in_source() -> BTreeSet<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = vec![root];
    let mut rules = BTreeSet::new();
    while let Some(path) = files.pop() {
        if path.is_dir() {
            for e in std::fs::read_dir(&path).expect("readable src") {
                files.push(e.expect("an entry").path());
            }
            continue;
        }
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("readable source");
        // Leave out a file's unit tests.
        let text = text.split("#[cfg(test)]").next().unwrap_or_default();
        for opener in ["Diagnostic::new(", "IrError::new(", "self.err("] {
            for (at, _) in text.match_indices(opener) {
                rules.extend(first_argument_rules(&text[at + opener.len()..]));
            }
        }
    }
    rules.extend(serq::RunError::RULES.iter().map(|(_, r)| r.to_string()));
    rules
}

/// Rule-shaped string literals (`lower-case-words`) in the first argument
/// of a call, outside nested parentheses and brackets.
fn first_argument_rules(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (mut depth, mut literal, mut in_string) = (0usize, String::new(), false);
    for c in text.chars() {
        if in_string {
            if c == '"' {
                in_string = false;
                let shaped = !literal.is_empty()
                    && literal.split('-').all(|w| {
                        !w.is_empty()
                            && w.chars()
                                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
                    });
                if depth == 0 && shaped {
                    out.push(std::mem::take(&mut literal));
                }
                literal.clear();
            } else {
                literal.push(c);
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '(' | '[' => depth += 1,
            ')' | ']' if depth == 0 => break,
            ')' | ']' => depth -= 1,
            ',' | ';' if depth == 0 => break,
            _ => {}
        }
    }
    out
}

#[test]
fn every_rule_has_a_fixture() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/diagnostics");
    let covered: BTreeSet<String> = std::fs::read_dir(&dir)
        .expect("tests/diagnostics holds the fixtures")
        .map(|e| rule_of(&e.expect("an entry").path()))
        .collect();
    let missing: Vec<String> = rules_in_source()
        .into_iter()
        .filter(|r| !covered.contains(r) && !UNREACHABLE.iter().any(|(u, _)| u == r))
        .collect();
    assert!(
        missing.is_empty(),
        "rules without a fixture in tests/diagnostics/ (add RULE.sq, see this file's header): {missing:?}"
    );
}
