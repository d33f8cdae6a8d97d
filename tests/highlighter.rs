//! The TextMate grammar (docs/sq.tmLanguage.json) highlights exactly the
//! lexer's keywords: one added to `syntax::KEYWORDS` without the grammar,
//! or left in the grammar after leaving the lexer, fails here.

use serq::syntax::KEYWORDS;
use std::collections::BTreeSet;

/// The words of every plain alternation group `(a|b|c)` in the `match`
/// regexes of the grammar's `keywords` rules.
fn highlighted_keywords() -> BTreeSet<String> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/sq.tmLanguage.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let grammar: serde_json::Value = serde_json::from_str(&text).expect("the grammar is JSON");
    let patterns = grammar["repository"]["keywords"]["patterns"]
        .as_array()
        .expect("the grammar has a `keywords` rule with patterns");
    let mut words = BTreeSet::new();
    for pattern in patterns {
        let regex = pattern["match"]
            .as_str()
            .expect("a keyword rule has a `match`");
        words.extend(alternation_words(regex));
    }
    words
}

/// The words of the groups `(w1|w2|…)` of a regex whose content is only
/// word characters and `|` (lookarounds and classes are skipped).
fn alternation_words(regex: &str) -> Vec<String> {
    let mut words = Vec::new();
    for (open, _) in regex.match_indices('(') {
        let rest = &regex[open + 1..];
        let Some(close) = rest.find(')') else {
            continue;
        };
        let group = &rest[..close];
        let is_plain = !group.is_empty()
            && group
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '|');
        if is_plain {
            words.extend(group.split('|').map(str::to_string));
        }
    }
    words
}

#[test]
fn every_keyword_of_the_lexer_is_highlighted_as_a_keyword() {
    let highlighted = highlighted_keywords();
    let missing: Vec<&str> = KEYWORDS
        .iter()
        .copied()
        .filter(|k| !highlighted.contains(*k))
        .collect();
    assert!(
        missing.is_empty(),
        "keywords missing from the `keywords` rules of docs/sq.tmLanguage.json: {missing:?}"
    );
}

#[test]
fn every_word_highlighted_as_a_keyword_is_a_keyword_of_the_lexer() {
    let extra: Vec<String> = highlighted_keywords()
        .into_iter()
        .filter(|w| !KEYWORDS.contains(&w.as_str()))
        .collect();
    assert!(
        extra.is_empty(),
        "docs/sq.tmLanguage.json highlights words the lexer does not know: {extra:?}"
    );
}

#[test]
fn alternation_words_skip_lookarounds_and_classes() {
    let regex = r"(?<![\p{L}\p{N}_])(let|def)(?![\p{L}\p{N}_])";
    assert_eq!(alternation_words(regex), ["let", "def"]);
}

#[test]
fn every_library_serq_ships_is_highlighted_after_use() {
    // `use <name>;` (an extension): the grammar's rule for it names each
    // shipped library, so the list cannot drift from the binary's.
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/sq.tmLanguage.json");
    let grammar: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let rules = grammar["repository"]["declarations"]["patterns"]
        .as_array()
        .unwrap();
    let rule = rules
        .iter()
        .filter_map(|r| r["match"].as_str())
        .find(|m| m.contains("(use)\\s*(<)"))
        .expect("a rule for `use <name>`");
    for name in serq::syntax::shipped::names() {
        assert!(
            alternation_words(rule).iter().any(|w| w == name),
            "{name} in {rule}"
        );
    }
}

#[test]
fn every_arrival_clause_word_is_highlighted_by_the_extensions_rule() {
    // `peak`, `speed`, `window` (and `arrive trace`'s `trace`) are serq
    // extensions' words, contextual, so they are not in the keywords rules
    // (which must equal the lexer's keywords) but in a rule of their own.
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/sq.tmLanguage.json");
    let grammar: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let rule = grammar["repository"]["declarations"]["patterns"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["match"].as_str())
        .find(|m| m.contains("(trace|"))
        .expect("a rule for the extensions' words");
    let words = alternation_words(rule);
    for w in serq::syntax::ARRIVE_CLAUSES.iter().chain(&["trace"]) {
        assert!(words.iter().any(|x| x == w), "{w} in {rule}");
    }
}
