//! Hostile input gets a clear error: never a panic, a stack overflow, a hang
//! or a huge allocation. Each test pins one limit (docs/development.md lists
//! them) or one input a fuzzer found. They run on the test harness's 2 MiB
//! threads in debug builds too, which is the tightest stack serq meets.

use serq::{Overrides, compile_ir, compile_source};
use std::time::{Duration, Instant};

/// A complete program around one session statement.
fn with_session(stmts: &str) -> String {
    format!(
        "stage s : ps(1);\nworkload {{ arrive batch(1); }}\nsession {{ {stmts} run s (1); }}\nrun {{ horizon 10; }}\n"
    )
}

/// The messages of a program that must be refused.
fn refused(source: &str) -> Vec<String> {
    match compile_source(source, &Overrides::default()) {
        Ok(_) => panic!("linked: {}", &source[..source.len().min(200)]),
        Err(d) => {
            // Rendering must not panic either (long lines, spans at the end).
            let _ = serq::syntax::render(&d, "hostile.sq", source);
            d.into_iter().map(|d| d.message).collect()
        }
    }
}

fn assert_mentions(messages: &[String], words: &[&str]) {
    assert!(
        messages.iter().any(|m| words.iter().all(|w| m.contains(w))),
        "no message has all of {words:?}: {messages:?}"
    );
}

// ----- sizes ---------------------------------------------------------------

// ----- nesting -------------------------------------------------------------

#[test]
fn blocks_nested_ten_thousand_deep_are_refused() {
    let source = with_session(&format!(
        "{}{}",
        "branch (1) { ".repeat(10_000),
        "} ".repeat(10_000)
    ));
    assert_mentions(&refused(&source), &["at most 100 levels of nesting"]);
}

#[test]
fn loops_nested_ten_thousand_deep_are_refused() {
    let source = with_session(&format!(
        "{}end; {}",
        "loop { ".repeat(10_000),
        "} ".repeat(10_000)
    ));
    assert_mentions(&refused(&source), &["at most 100 levels of nesting"]);
}

#[test]
fn parentheses_nested_ten_thousand_deep_are_refused() {
    let source = with_session(&format!(
        "set x = {}1{};",
        "(".repeat(10_000),
        ")".repeat(10_000)
    ));
    assert_mentions(&refused(&source), &["at most 100 levels of nesting"]);
}

#[test]
fn a_chain_of_a_hundred_thousand_additions_is_refused() {
    // Left-associative: the tree is as deep as the chain is long.
    let source = with_session(&format!("set x = {};", vec!["1"; 100_000].join(" + ")));
    assert_mentions(&refused(&source), &["at most 100 levels of nesting"]);
}

#[test]
fn a_hundred_thousand_prefix_minuses_are_refused() {
    let source = with_session(&format!("set x = {}1;", "-".repeat(100_000)));
    assert_mentions(&refused(&source), &["at most 100 levels of nesting"]);
}

#[test]
fn a_chain_of_ands_and_a_tower_of_powers_are_refused() {
    let ands = with_session(&format!("set x = {};", vec!["1"; 50_000].join(" && ")));
    assert_mentions(&refused(&ands), &["at most 100 levels of nesting"]);
    let powers = with_session(&format!("set x = {};", vec!["1"; 50_000].join("^")));
    assert_mentions(&refused(&powers), &["at most 100 levels of nesting"]);
}

// ----- defs ----------------------------------------------------------------

// ----- a long line and big numbers -----------------------------------------

// ----- IR JSON -------------------------------------------------------------
