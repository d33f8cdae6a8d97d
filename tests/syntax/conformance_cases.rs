//! The conformance cases' syntax: refusals by key word, programs that parse.

use super::*;

fn conformance_cases() -> Vec<std::path::PathBuf> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance");
    let mut cases: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sq"))
        .collect();
    cases.sort();
    assert!(!cases.is_empty());
    cases
}

#[test]
fn conformance_syntax_cases_report_their_key_words() {
    let mut seen = 0;
    for path in conformance_cases() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !name.starts_with("err_syntax_") {
            continue;
        }
        seen += 1;
        let src = std::fs::read_to_string(&path).unwrap();
        let expected: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(path.with_extension("expected.json")).unwrap(),
        )
        .unwrap();
        let diags = errors(&src);
        assert!(!diags.is_empty(), "{name}: no diagnostic");
        for word in expected["message_contains"].as_array().unwrap() {
            let word = word.as_str().unwrap();
            assert!(
                diags.iter().any(|d| d.message.contains(word)),
                "{name}: no message contains {word:?}: {diags:#?}"
            );
        }
    }
    assert!(seen >= 2);
}

#[test]
fn conformance_programs_parse_without_diagnostics() {
    // Every case but the syntax errors: the other `err_` cases fail at link time.
    for path in conformance_cases() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with("err_syntax_") {
            continue;
        }
        let src = std::fs::read_to_string(&path).unwrap();
        let diags = errors(&src);
        assert!(
            diags.is_empty(),
            "{name}: {}",
            serq::syntax::render(&diags, &name, &src)
        );
    }
}
