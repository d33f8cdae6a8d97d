//! Item shapes: let, def, pool, stage, share, workload, run.

use super::*;

#[test]
fn let_and_def_parse_in_both_forms() {
    let p = parse_ok(
        "let base = 2; def f() = 7; def service(x, y) = base * x + y; def visit(s, w) { run s (w); }",
    );
    assert!(
        matches!(&p.items[0], Item::Let { name, value, .. } if name.name == "base" && show(value) == "2")
    );
    let Item::Def {
        params,
        body: DefBody::Expr(e),
        ..
    } = &p.items[1]
    else {
        panic!()
    };
    assert!(params.is_empty());
    assert_eq!(show(e), "7");
    let Item::Def { params, .. } = &p.items[2] else {
        panic!()
    };
    assert_eq!(
        params.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(),
        ["x", "y"]
    );
    assert!(matches!(&p.items[3], Item::Def { body: DefBody::Block(b), .. } if b.stmts.len() == 1));
}

#[test]
fn def_without_parentheses_is_a_parse_error() {
    let src = "def f = 7;";
    let d = one_error(src);
    assert_eq!(d.message, "expected `(` after `def f`, found `=`");
    assert_eq!(text(src, d.span), "=");
    assert!(d.help.unwrap().contains("def f()"));
}

#[test]
fn pools_and_stages_take_sizes_options_and_kinds() {
    let p = parse_ok(
        "pool kv[2] { cap 40; } pool free {} stage P[N] : fifo; stage F : fifo(2); stage D : ps(min(present, 2)); stage d : delay;",
    );
    let Item::Pool {
        name,
        size,
        options,
        ..
    } = &p.items[0]
    else {
        panic!()
    };
    assert_eq!(
        (name.name.as_str(), show(size.as_ref().unwrap())),
        ("kv", "2".to_string())
    );
    let PoolOption::Value(cap) = &options[0] else {
        panic!("cap is a valued option: {options:?}")
    };
    assert_eq!(
        (cap.name.name.as_str(), show(&cap.value)),
        ("cap", "40".to_string())
    );
    assert!(matches!(&p.items[1], Item::Pool { size: None, options, .. } if options.is_empty()));
    assert!(
        matches!(&p.items[2], Item::Stage { size: Some(n), kind: StageKind::Fifo(None, _), .. } if show(n) == "N")
    );
    assert!(
        matches!(&p.items[3], Item::Stage { kind: StageKind::Fifo(Some(c), _), .. } if show(c) == "2")
    );
    assert!(
        matches!(&p.items[4], Item::Stage { kind: StageKind::Ps(e, _), .. } if show(e) == "(min present 2)")
    );
    assert!(matches!(
        &p.items[5],
        Item::Stage {
            kind: StageKind::Delay(_),
            ..
        }
    ));
}

#[test]
fn an_unknown_stage_kind_is_an_expected_kind() {
    let d = one_error("stage s : lifo;");
    assert!(
        d.message.starts_with("expected a stage kind"),
        "{}",
        d.message
    );
    assert!(d.message.ends_with("found `lifo`"));
}

#[test]
fn share_keeps_its_policy_word_for_the_linker() {
    let p = parse_ok("share maxmin; share fair;");
    assert!(matches!(&p.items[1], Item::Share { policy, .. } if policy.name == "fair"));
}

#[test]
fn workload_takes_arrivals_init_and_turn() {
    let p = parse_ok(
        "workload { arrive poisson(0.5); init { set a = 1; } turn { observe t = now; } arrive none; }",
    );
    let Item::Workload { items, .. } = &p.items[0] else {
        panic!()
    };
    assert!(
        matches!(&items[0], WorkloadItem::Arrive { law, arg: Some(a), .. } if law.name == "poisson" && show(a) == "0.5")
    );
    assert!(matches!(&items[1], WorkloadItem::Init(b, _) if b.stmts.len() == 1));
    assert!(matches!(&items[2], WorkloadItem::Turn(b, _) if b.stmts.len() == 1));
    assert!(matches!(&items[3], WorkloadItem::Arrive { law, arg: None, .. } if law.name == "none"));
    assert!(
        one_error("workload { arrive poisson; }")
            .message
            .contains("expected `(`")
    );
}

#[test]
fn other_words_in_a_workload_are_unexpected() {
    let d = one_error("workload { let x = 1; } run { horizon 10; }");
    assert_eq!(
        d.message,
        "unexpected `let` in workload: expected `arrive`, `init`, `turn`, `session`, `hidden` or `trace`"
    );
}

#[test]
fn run_block_keeps_every_option_word_for_the_linker() {
    let p = parse_ok("run { horizon 2 + 3; warmup 1; seed 7; arrivals 100; length 3; }");
    let Item::Run { options, .. } = &p.items[0] else {
        panic!()
    };
    let words: Vec<_> = options.iter().map(|o| o.name.name.as_str()).collect();
    assert_eq!(words, ["horizon", "warmup", "seed", "arrivals", "length"]);
    assert_eq!(show(&options[0].value), "(+ 2 3)");
}

#[test]
fn a_run_statement_at_top_level_is_refused_with_a_hint() {
    let d = one_error("run S (1);");
    assert_eq!(
        d.message,
        "expected `{` after `run` at top level, found `S`"
    );
    assert!(d.help.unwrap().contains("session"));
}

#[test]
fn later_language_constructs_are_unexpected_at_top_level() {
    for (src, word) in [
        ("gauge g = 1;", "gauge"),
        ("queue Q : prefill { cap 3; }", "queue"),
        ("fn main() { run s (1); }", "fn"),
        ("while (1) { }", "while"),
        ("7 % 2;", "7"),
    ] {
        let diags = errors(src);
        let d = diags
            .iter()
            .find(|d| d.rule == "syntax")
            .unwrap_or_else(|| panic!("{src}: {diags:?}"));
        assert!(
            d.message
                .starts_with(&format!("unexpected `{word}` at top level")),
            "{src}: {}",
            d.message
        );
        assert!(d.message.contains("expected"));
    }
}
