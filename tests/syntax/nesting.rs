//! Deep nesting is capped with one diagnostic; fuzzed text never panics.

use super::*;

/// Runs `f` on a thread with the default test stack, as a fuzzer would.
fn on_small_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn deep_nesting_is_capped_with_one_diagnostic() {
    on_small_stack(|| {
        let n = 20_000;
        for src in [
            format!("let x = {}1{};", "(".repeat(n), ")".repeat(n)),
            format!("let x = {}1;", "2^".repeat(n)),
            format!("let x = {}1;", "a ? b : ".repeat(n)),
            format!("let x = {}1{};", "f(".repeat(n), ")".repeat(n)),
            format!(
                "session {{ {}end;{} }}",
                "loop { ".repeat(n),
                " }".repeat(n)
            ),
            format!("let x = {}", "(".repeat(n)),
            format!("let x = {}1;", "-".repeat(n)),
            format!("let x = {}1;", "1 + ".repeat(n)),
            format!("let x = {}1;", "(1 + ".repeat(n)),
        ] {
            let diags = errors(&src);
            assert!(!diags.is_empty());
            assert!(
                diags[0].message.contains("levels of nesting"),
                "{}",
                diags[0].message
            );
            assert!(diags[0].message.contains("expected"));
            assert!(diags.len() <= 2, "{diags:#?}");
        }
    });
}

#[test]
fn nesting_below_the_cap_and_long_operator_chains_are_accepted() {
    on_small_stack(|| {
        // Below the parser's cap of 100 levels (parser::MAX_DEPTH).
        let n = 90;
        assert!(errors(&format!("let x = {}1{};", "(".repeat(n), ")".repeat(n))).is_empty());
        assert!(
            errors(&format!(
                "session {{ {}end;{} }}",
                "loop { ".repeat(n),
                " }".repeat(n)
            ))
            .is_empty()
        );
        // A sum of 1000 terms is a tree 999 deep, below the tree cap of 1024.
        assert!(errors(&format!("let x = {}1;", "q[0] + ".repeat(999))).is_empty());
        assert!(errors(&format!("let x = {}1;", "-".repeat(500))).is_empty());
    });
}

mod fuzz {
    use super::*;
    use proptest::prelude::*;

    const WORDS: &[&str] = &[
        "let", "def", "pool", "stage", "session", "workload", "run", "hold", "set", "transfer",
        "on", "from", "to", "branch", "else", "loop", "choose", "in", "by", "x", "p", "1", "2.5",
        "1.2.3", "{", "}", "(", ")", "[", "]", ",", ";", ":", "=", "~", "?", "+", "-", "^", "<",
        "==", "&&", "!", "/*", "\"", "%", "é", "keep", "step", "\n",
    ];

    proptest! {
        #[test]
        fn the_parser_never_panics_on_token_soup(words in prop::collection::vec(prop::sample::select(WORDS), 0..120)) {
            let _ = parse(&words.join(" "));
        }

        #[test]
        fn the_parser_never_panics_on_any_text(src in "\\PC{0,200}") {
            let _ = parse(&src);
        }
    }
}
