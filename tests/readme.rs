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
