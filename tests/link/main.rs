//! The linker, end to end from source text: IR fields, sugar, and the
//! diagnostics' key words for every link rule.

use serq::ir::{self, Arrival, CRef, Expr, Stmt};
use serq::link::{Overrides, link};
use serq::syntax::{Diagnostic, parse};

/// Parses and links (what `serq check` does): the parser's diagnostics, or
/// the linker's result.
fn try_link(src: &str) -> Result<ir::Program, Vec<Diagnostic>> {
    let (ast, diags) = parse(src);
    if !diags.is_empty() {
        return Err(diags);
    }
    link(&ast, src, &Overrides::default()).map(ir::ValidProgram::into_program)
}

fn linked(src: &str) -> ir::Program {
    match try_link(src) {
        Ok(p) => p,
        Err(d) => panic!("link errors in {src:?}: {:#?}", d),
    }
}

/// Asserts the program is refused with a message containing every key word.
fn refused(src: &str, words: &[&str]) -> Vec<Diagnostic> {
    let diags = match try_link(src) {
        Ok(_) => panic!("linked, but should be refused: {src}"),
        Err(d) => d,
    };
    let all: Vec<String> = diags
        .iter()
        .map(|d| format!("{} {}", d.message, d.help.clone().unwrap_or_default()))
        .collect();
    assert!(
        all.iter().any(|m| words
            .iter()
            .all(|w| m.to_lowercase().contains(&w.to_lowercase()))),
        "no message has {words:?}: {all:#?}"
    );
    diags
}

const B: &str = " workload { arrive batch(1); } run { horizon 10; }";

fn with_b(src: &str) -> String {
    format!("{src}{B}")
}

#[test]
fn conformance_cases_link_or_are_refused_with_their_key_words() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance");
    let entries = std::fs::read_dir(&dir).expect("tests/conformance holds the public cases");
    let mut names: Vec<_> = entries.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    names.sort();
    let mut failures = Vec::new();
    for path in names
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "sq"))
    {
        let src = std::fs::read_to_string(path).unwrap();
        let expected = std::fs::read_to_string(path.with_extension("expected.json")).unwrap();
        let expected: serde_json::Value = serde_json::from_str(&expected).unwrap();
        let (ast, mut diags) = parse(&src);
        if diags.is_empty()
            && let Err(d) = link(&ast, &src, &Overrides::default())
        {
            diags = d;
        }
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if expected.get("error").and_then(|e| e.as_bool()) == Some(true) {
            let text: String = diags
                .iter()
                .map(|d| d.message.to_lowercase() + "\n")
                .collect();
            let words: Vec<String> = expected["message_contains"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|w| w.as_str().unwrap().to_lowercase())
                        .collect()
                })
                .unwrap_or_default();
            if diags.is_empty() || words.iter().any(|w| !text.contains(w)) {
                failures.push(format!("{name}: want {words:?}, got {text:?}"));
            }
        } else if !diags.is_empty() {
            failures.push(format!(
                "{name}: {:?}",
                diags.iter().map(|d| &d.message).collect::<Vec<_>>()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn cref(base: usize, count: usize, index: Option<Expr>) -> CRef {
    CRef { base, count, index }
}

// One module per feature; each reads the helpers above through `super::*`.
mod defs;
mod flows;
mod ir_shape;
mod names;
mod serving;
mod statements;
mod validator_faults;
