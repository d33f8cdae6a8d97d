//! The words of the language and the checks every bound name passes:
//! retired words, names that would hide `now`, `inf` or `present`, words a
//! `def` or its parameter may not be, and the did-you-mean note for unknown names.
//!
//! Architecture invariant: pure functions over strings; no tables of the
//! program being linked live here.

use crate::syntax::ast::Span;
use crate::syntax::{Diagnostic, KEYWORDS};

/// Words retired from the language, with what replaced them.
const RETIRED: [(&str, &str); 5] = [
    ("admit", "`admit` is only a pool option now (`admit via E`)"),
    ("keep", "`keep` is now `cache`"),
    ("enter", "`enter` is now `hold`"),
    ("fit", "`fit` is now `fits`"),
    ("where", "`where` is now `at admission`"),
];

/// Words of the language besides the lexer's [`KEYWORDS`]: the serving
/// engine's keywords, `fits`, every function and observable name, and
/// `bernoulli`. A `def` parameter may be none of these nor a keyword.
const MORE_WORDS: &[&str] = &[
    "server",
    "use",
    "block",
    "evict",
    "lru",
    "preempt",
    "lifo",
    "queue",
    "admit",
    "via",
    "spill",
    "when",
    "step",
    "budget",
    "cost",
    "chunk",
    "memory",
    "serve",
    "admission",
    "decode",
    "first",
    "exclusive",
    "prefill",
    "hidden",
    "trace",
    "ordered",
    "request",
    "reuse",
    "at",
    "cache",
    "drop",
    "growing",
    "tool",
    "fits",
    "min",
    "max",
    "abs",
    "floor",
    "ceil",
    "sqrt",
    "exp",
    "ln",
    "pow",
    "busy",
    "work",
    "used",
    "free",
    "holders",
    "queued",
    "cachedin",
    "blocksize",
    "budget_left",
    "price",
    "est_lambda",
    "est_rho",
    "est_wait",
    "bernoulli",
];

/// Distribution names a `def` parameter may take but a `def` may not (the
/// reference's rule; `exp` and `bernoulli` are words for both).
const DISTRIBUTIONS: &[&str] = &["det", "uniform", "erlang", "h2"];

/// Whether `name` is a word of the language (a `def` parameter may not be one).
pub fn is_language_word(name: &str) -> bool {
    KEYWORDS.contains(&name) || MORE_WORDS.contains(&name)
}

/// Whether a `def` may not be named `name`: a word of the language or a
/// distribution's name.
pub fn is_def_word(name: &str) -> bool {
    is_language_word(name) || DISTRIBUTIONS.contains(&name)
}

/// The refusal of a retired word used as a name, if `name` is one.
pub fn retired(name: &str, span: Span) -> Option<Diagnostic> {
    let (_, hint) = RETIRED.iter().find(|(w, _)| *w == name)?;
    Some(
        Diagnostic::new(
            "retired-word",
            span,
            format!("`{name}` is a retired word and names nothing: {hint}"),
        )
        .with_label("retired word"),
    )
}

/// The refusal of a bound name that would hide `now`, `inf` or `present`.
/// `what` says what binds it (`let`, `set`, `choose`, `def`, `def` parameter).
pub fn hides(name: &str, what: &str, span: Span) -> Option<Diagnostic> {
    let hidden = match name {
        "now" => "the clock `now`",
        "inf" => "the number `inf`",
        "present" => "the context variable `present`",
        _ => return None,
    };
    Some(
        Diagnostic::new(
            "hides-builtin",
            span,
            format!("{what} `{name}` hides {hidden}"),
        )
        .with_label("choose another name"),
    )
}

/// Checks a name a statement or declaration binds: retired words and names
/// that hide a built-in. Pushes what it finds onto `diags`.
pub fn check_bound(name: &str, what: &str, span: Span, diags: &mut Vec<Diagnostic>) {
    if let Some(d) = retired(name, span) {
        diags.push(d);
    } else if let Some(d) = hides(name, what, span) {
        diags.push(d);
    }
}

/// The closest candidate to a name, shared with the syntax layer (a
/// shipped library's did-you-mean is found before linking).
pub use crate::syntax::spelling::closest;

/// Adds a did-you-mean help to `d` when a candidate is close to `name`.
pub fn did_you_mean<'a>(
    d: Diagnostic,
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Diagnostic {
    match closest(name, candidates) {
        Some(c) => d.with_help(format!("did you mean `{c}`?")),
        None => d,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_one_letter_typo_is_suggested() {
        assert_eq!(closest("prefil", ["prefill", "decode"]), Some("prefill"));
        assert_eq!(closest("zzz", ["prefill"]), None);
    }

    #[test]
    fn parameters_may_not_be_words_of_the_language() {
        assert!(is_language_word("run"));
        assert!(is_language_word("queued"));
        assert!(!is_language_word("uniform"));
        assert!(!is_language_word("now"));
    }

    #[test]
    fn every_keyword_is_a_language_word() {
        assert!(KEYWORDS.iter().all(|w| is_language_word(w)));
    }
}
