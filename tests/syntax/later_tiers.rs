//! Constructs of later tiers, refused as not supported yet.

use super::*;

#[test]
fn tier_two_constructs_are_refused_as_not_supported_yet() {
    let cases = [
        ("stage e : step { cost 1; budget 4; }", "`step`"),
        ("session { prefill 3; }", "`prefill`"),
        ("session { decode (3); }", "`decode`"),
        ("session { tool 1; }", "`tool`"),
        (
            "stage e : delay; session { run e prefill (3); }",
            "`prefill`",
        ),
        ("stage e : delay; session { run e decode (3); }", "`decode`"),
        (
            "session { hold p (1) { run e (3) growing p; } }",
            "`growing`",
        ),
        ("session { hold p (1) reuse (4) { } }", "`reuse`"),
        (
            "session { hold p (1) at admission (x = 2) { } }",
            "`at admission`",
        ),
        (
            "session { hold p (1) { } cache (4) lease p (1); }",
            "`cache`",
        ),
        ("session { drop p; }", "`drop`"),
        ("session { request; }", "`request`"),
        ("server { run s (1); }", "`server`"),
        ("use \"lib.sq\";", "`use \"lib.sq\"`"),
        ("pool p { block 4; }", "`block`"),
        ("pool p { evict by (age); }", "`evict`"),
        ("pool p { preempt lifo; }", "`preempt`"),
        ("pool p { queue by (waited); }", "`queue`"),
        ("pool p { admit via e; }", "`admit via`"),
        ("pool p { spill q via l (1) when (1); }", "`spill`"),
        ("workload { hidden a, b; }", "`hidden`"),
        ("workload { trace \"t.csv\" ordered; }", "`trace`"),
        ("workload { session { request; } }", "`session`"),
    ];
    for (src, word) in cases {
        let diags = errors(&format!("{src} {B}"));
        assert_eq!(diags.len(), 1, "{src}: {diags:#?}");
        let d = &diags[0];
        assert_eq!(d.rule, "unsupported", "{src}");
        assert!(
            d.message.contains(word) && d.message.contains("not supported yet"),
            "{src}: {}",
            d.message
        );
    }
}

#[test]
fn a_hold_with_tier_two_clauses_still_parses_its_body() {
    let (p, diags) = parse("session { hold p (1) reuse (2) { set x = ; } cache (3) }");
    let messages: Vec<_> = diags.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(messages.len(), 3, "{messages:?}");
    assert!(
        messages[1].starts_with("expected an expression"),
        "the error in the body is found"
    );
    let Item::Session { body, .. } = &p.items[0] else {
        panic!()
    };
    assert!(matches!(body.stmts[0].kind, StmtKind::Hold { .. }));
}
