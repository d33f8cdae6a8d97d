//! The README and docs work as written: every `$ serq …` block prints what
//! it shows, and every example file they name exists.

use std::path::Path;
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and every docs/*.md, sorted.
fn documents() -> Vec<(String, String)> {
    let mut names = vec!["README.md".to_string()];
    let mut docs: Vec<String> = std::fs::read_dir(root().join("docs"))
        .expect("docs/ exists")
        .map(|e| {
            e.expect("readable entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("docs/{n}"))
        .collect();
    docs.sort();
    names.extend(docs);
    names
        .into_iter()
        .map(|n| {
            let text = std::fs::read_to_string(root().join(&n)).expect("readable document");
            (n, text)
        })
        .collect()
}

#[test]
fn every_shown_serq_run_prints_what_the_document_shows() {
    let mut shown = 0;
    for (name, text) in documents() {
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let Some(command) = line.strip_prefix("$ serq ") else {
                continue;
            };
            // The shown output: up to the block's end, or `...` (cut there).
            let expected: Vec<&str> = lines[i + 1..]
                .iter()
                .take_while(|l| !l.starts_with("```") && **l != "...")
                .copied()
                .collect();
            let out = Command::new(env!("CARGO_BIN_EXE_serq"))
                .args(command.split_whitespace())
                .current_dir(root())
                .output()
                .expect("serq runs");
            assert!(out.status.success(), "{name}: `serq {command}` failed");
            let stdout = String::from_utf8_lossy(&out.stdout);
            let got: Vec<&str> = stdout.lines().take(expected.len()).collect();
            assert_eq!(got, expected, "{name}: `serq {command}`");
            shown += 1;
        }
    }
    // README: after.sq and vllm.sq.
    assert!(shown >= 2, "{shown}");
}

#[test]
fn every_example_file_the_documents_name_exists() {
    let mut named = 0;
    for (name, text) in documents() {
        for word in text.split(|c: char| c.is_whitespace() || "`()|,;".contains(c)) {
            let glob = word.contains('*');
            if !glob
                && word.starts_with("examples/")
                && [".sq", ".rs", ".py"].iter().any(|e| word.ends_with(e))
            {
                assert!(root().join(word).exists(), "{name} names {word}");
                named += 1;
            }
        }
    }
    assert!(named >= 15, "{named}");
}

/// The README's shell blocks: every line of every ```sh block.
fn readme_commands() -> Vec<String> {
    let text = std::fs::read_to_string(root().join("README.md")).expect("readable README");
    let mut out = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        if line.starts_with("```") {
            inside = line == "```sh";
            continue;
        }
        if inside {
            out.push(line.to_string());
        }
    }
    out
}

#[test]
fn the_readme_points_only_inside_the_repository_and_installs_locked() {
    let text = std::fs::read_to_string(root().join("README.md")).expect("readable README");
    // A clone has no `../shared`: nothing the README tells one to run is outside it.
    assert!(
        !text.contains("../"),
        "the README names a path outside the repository"
    );
    assert!(text.contains("cargo install --locked --path ."));
    assert!(!text.contains("cargo install --path"));
}

#[test]
fn the_shipped_conformance_checker_passes_every_case_as_the_readme_runs_it() {
    let checks: Vec<String> = readme_commands()
        .into_iter()
        .filter(|l| l.starts_with("python3 tools/conformance/check.py"))
        .collect();
    // The top-level cases and the serving engine's (t2/).
    assert_eq!(checks.len(), 2, "{checks:?}");
    if Command::new("python3").arg("--version").output().is_err() {
        eprintln!("python3 is not installed: the checker is not run");
        return;
    }
    for check in checks {
        let args: Vec<String> = check
            .split_whitespace()
            .skip(1)
            .map(|a| {
                if a == "target/release/serq" {
                    env!("CARGO_BIN_EXE_serq").to_string()
                } else {
                    a.to_string()
                }
            })
            .collect();
        let out = Command::new("python3")
            .args(&args)
            .current_dir(root())
            .output()
            .expect("python3 runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "`{check}` failed:\n{stdout}");
        let last = stdout.lines().last().unwrap_or_default();
        // At least the 67 top-level cases or the 54 of t2/, none failing.
        let passed: usize = last
            .split_whitespace()
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        assert!(
            last.ends_with(" passed, 0 failed") && passed >= 50,
            "{last}"
        );
    }
}
