//! The keyword list and contextual keywords; retired words.

use super::*;

#[test]
fn keywords_list_every_tier_one_word() {
    let words = "let def pool stage share maxmin bottleneck workload session run cap delay fifo ps arrive \
                 poisson renewal closed batch none init turn horizon warmup seed arrivals set observe end \
                 hold reserve lease grow load release branch with else loop choose in by transfer on from to";
    for w in words.split_whitespace() {
        assert!(KEYWORDS.contains(&w), "{w} missing from KEYWORDS");
    }
    for w in ["step", "prefill", "cache", "keep", "gauge"] {
        assert!(!KEYWORDS.contains(&w), "{w} is not a Tier-1 word");
    }
}

#[test]
fn keywords_are_contextual_and_may_name_attributes() {
    for w in KEYWORDS {
        let src = format!("session {{ set {w} = {w} + 1; observe {w} = {w}; }}");
        parse_ok(&src);
    }
    let p = parse_ok("stage run : delay; pool hold { cap 1; } let now = 3;");
    assert_eq!(p.items.len(), 3);
}

#[test]
fn retired_words_are_refused_anywhere_as_a_name_with_a_hint() {
    let d = one_error("session { set keep = 1; }");
    assert_eq!(
        d.message,
        "`keep` is a retired word and names nothing: `keep` is now `cache`"
    );
    assert_eq!(d.span, Span { start: 14, end: 18 });
    for (src, word) in [
        ("let fit = 1;", "fit"),
        ("session { set y = where + 1; }", "where"),
        ("def f(enter) = 1;", "enter"),
        ("session { set admit = 1; }", "admit"),
        ("pool p { admit 3; }", "admit"),
        ("session { hold p (1) {} keep (3); }", "keep"),
    ] {
        let d = one_error(src);
        assert!(
            d.message
                .starts_with(&format!("`{word}` is a retired word")),
            "{src}: {}",
            d.message
        );
    }
}
