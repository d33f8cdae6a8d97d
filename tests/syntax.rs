//! The lexer and the parser: token forms, precedence, statement and item
//! shapes, refusals of later-tier constructs, recovery, and the conformance
//! cases' syntax.

use serq::syntax::ast::{
    BinOp, DefBody, Expr, ExprKind, Item, Program, Span, StageKind, Stmt, StmtKind, TransferTarget,
    UnOp, WorkloadItem,
};
use serq::syntax::{Diagnostic, KEYWORDS, parse};

// ----- helpers ---------------------------------------------------------------

/// Parses a program that must have no diagnostic.
fn parse_ok(src: &str) -> Program {
    let (program, diags) = parse(src);
    assert!(
        diags.is_empty(),
        "unexpected diagnostics for {src:?}: {diags:#?}"
    );
    program
}

/// The diagnostics of a program.
fn errors(src: &str) -> Vec<Diagnostic> {
    parse(src).1
}

/// The one diagnostic of a program.
fn one_error(src: &str) -> Diagnostic {
    let diags = errors(src);
    assert_eq!(
        diags.len(),
        1,
        "expected one diagnostic for {src:?}: {diags:#?}"
    );
    diags.into_iter().next().unwrap()
}

/// The expression of `let x = SRC;`.
fn expr(src: &str) -> Expr {
    match parse_ok(&format!("let x = {src};")).items.remove(0) {
        Item::Let { value, .. } => value,
        other => panic!("not a let: {other:?}"),
    }
}

/// An expression as an S-expression, for compact shape assertions.
fn show(e: &Expr) -> String {
    let list = |args: &[Expr]| args.iter().map(show).collect::<Vec<_>>().join(" ");
    match &e.kind {
        ExprKind::Num(v) => format!("{v}"),
        ExprKind::Name(n) => n.clone(),
        ExprKind::Index(n, i) => format!("{}[{}]", n.name, show(i)),
        ExprKind::Call(n, args) => format!("({} {})", n.name, list(args)),
        ExprKind::Sample(n, args) => format!("(~{} {})", n.name, list(args)),
        ExprKind::Unary(UnOp::Neg, a) => format!("(neg {})", show(a)),
        ExprKind::Unary(UnOp::Not, a) => format!("(! {})", show(a)),
        ExprKind::Binary(op, a, b) => {
            let op = match op {
                BinOp::Add => "+",
                BinOp::Sub => "-",
                BinOp::Mul => "*",
                BinOp::Div => "/",
                BinOp::Pow => "^",
                BinOp::Lt => "<",
                BinOp::Le => "<=",
                BinOp::Gt => ">",
                BinOp::Ge => ">=",
                BinOp::Eq => "==",
                BinOp::Ne => "!=",
                BinOp::And => "&&",
                BinOp::Or => "||",
            };
            format!("({op} {} {})", show(a), show(b))
        }
        ExprKind::Cond(c, a, b) => format!("(? {} {} {})", show(c), show(a), show(b)),
    }
}

/// The statements of `session { SRC }`, which must parse cleanly.
fn stmts(src: &str) -> Vec<Stmt> {
    match parse_ok(&format!("session {{ {src} }}")).items.remove(0) {
        Item::Session { body, .. } => body.stmts,
        other => panic!("not a session: {other:?}"),
    }
}

fn stmt(src: &str) -> StmtKind {
    let mut all = stmts(src);
    assert_eq!(all.len(), 1, "{all:#?}");
    all.remove(0).kind
}

/// The text a span covers.
fn text(src: &str, span: Span) -> &str {
    &src[span.start as usize..span.end as usize]
}

/// A workload and run block that make a program complete.
const B: &str = "workload { arrive batch(1); } run { horizon 10; }";

// ----- keywords --------------------------------------------------------------

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

// ----- expressions -----------------------------------------------------------

#[test]
fn power_binds_tighter_than_prefix_minus() {
    // -2^2 = -(2^2) = -4
    assert_eq!(show(&expr("-2^2")), "(neg (^ 2 2))");
    assert_eq!(show(&expr("!2^2")), "(! (^ 2 2))");
}

#[test]
fn the_exponent_is_a_unary_so_two_to_minus_one_parses() {
    // 2^-1 = 0.5
    assert_eq!(show(&expr("2^-1")), "(^ 2 (neg 1))");
    assert_eq!(show(&expr("2^--x")), "(^ 2 (neg (neg x)))");
}

#[test]
fn power_is_right_associative() {
    // 2^3^2 = 2^9 = 512
    assert_eq!(show(&expr("2^3^2")), "(^ 2 (^ 3 2))");
}

#[test]
fn binary_operators_follow_the_precedence_ladder() {
    assert_eq!(
        show(&expr("a || b && c < d + e * f")),
        "(|| a (&& b (< c (+ d (* e f)))))"
    );
    assert_eq!(
        show(&expr("a * b + c >= d || e && f")),
        "(|| (>= (+ (* a b) c) d) (&& e f))"
    );
    assert_eq!(show(&expr("-a * b")), "(* (neg a) b)");
}

#[test]
fn additive_and_multiplicative_operators_are_left_associative() {
    assert_eq!(show(&expr("20 - x - 3")), "(- (- 20 x) 3)");
    assert_eq!(show(&expr("8 / 4 / 2")), "(/ (/ 8 4) 2)");
}

#[test]
fn conditional_binds_loosest_and_is_right_associative() {
    assert_eq!(
        show(&expr("a || b ? c : d ? e : f")),
        "(? (|| a b) c (? d e f))"
    );
    assert_eq!(show(&expr("x > 1 ? s : -s")), "(? (> x 1) s (neg s))");
}

#[test]
fn comparison_does_not_chain() {
    let src = "let x = 1 < 2 == 1;";
    let d = one_error(src);
    assert_eq!(d.rule, "syntax");
    assert!(
        d.message.contains("expected") && d.message.contains("do not chain"),
        "{}",
        d.message
    );
    assert_eq!(text(src, d.span), "==");
    assert!(d.help.is_some());
    // Also when the first comparison is the right operand of `&&`.
    assert_eq!(one_error("let x = 1 && 3 < 4 < 5;").rule, "syntax");
}

#[test]
fn a_parenthesised_comparison_may_be_compared() {
    assert_eq!(show(&expr("(1 < 2) < 3")), "(< (< 1 2) 3)");
    assert_eq!(show(&expr("1 < 2 && 2 < 3")), "(&& (< 1 2) (< 2 3))");
}

#[test]
fn samples_calls_and_members_parse_with_spaces_allowed() {
    assert_eq!(show(&expr("~ exp (1)")), "(~exp 1)");
    assert_eq!(
        show(&expr("~uniform(1, 2) + min(a, 2)")),
        "(+ (~uniform 1 2) (min a 2))"
    );
    assert_eq!(show(&expr("f()")), "(f )");
    assert_eq!(show(&expr("used(q[i + 1])")), "(used q[(+ i 1)])");
    // A member outside call arguments is an Index too; the linker refuses it.
    assert_eq!(show(&expr("q[0] + 1")), "(+ q[0] 1)");
}

#[test]
fn a_sample_needs_a_name_and_parentheses() {
    assert!(
        one_error("let x = ~(1);")
            .message
            .contains("expected a distribution name")
    );
    let d = one_error("let x = ~exp;");
    assert_eq!(d.message, "expected `(` after `~exp`, found `;`");
}

#[test]
fn expression_spans_cover_their_text_parentheses_included() {
    let src = "let x = 1 + (2 * 3);";
    let e = match parse_ok(src).items.remove(0) {
        Item::Let { value, .. } => value,
        _ => unreachable!(),
    };
    assert_eq!(text(src, e.span), "1 + (2 * 3)");
    let ExprKind::Binary(_, _, rhs) = &e.kind else {
        panic!()
    };
    assert_eq!(text(src, rhs.span), "(2 * 3)");
}

#[test]
fn a_missing_operand_is_an_expected_expression() {
    let src = "let x = 1 + ;";
    let d = one_error(src);
    assert_eq!(d.message, "expected an expression, found `;`");
    assert_eq!(text(src, d.span), ";");
}

// ----- statements ------------------------------------------------------------

#[test]
fn set_observe_turn_and_end_parse() {
    let s = stmts("set x = 1; observe o = x * 2; turn; end;");
    let kinds: Vec<_> = s.iter().map(|s| &s.kind).collect();
    assert!(
        matches!(kinds[0], StmtKind::Set { name, value } if name.name == "x" && show(value) == "1")
    );
    assert!(
        matches!(kinds[1], StmtKind::Observe { name, value } if name.name == "o" && show(value) == "(* x 2)")
    );
    assert_eq!(kinds[2], &StmtKind::Turn);
    assert_eq!(kinds[3], &StmtKind::End);
}

#[test]
fn statement_spans_run_from_first_to_last_token() {
    let src = "session { set x = 1 + 2; end; }";
    let Item::Session { body, span } = parse_ok(src).items.remove(0) else {
        panic!()
    };
    assert_eq!(text(src, span), src);
    assert_eq!(text(src, body.stmts[0].span), "set x = 1 + 2;");
    assert_eq!(text(src, body.stmts[1].span), "end;");
}

#[test]
fn hold_takes_several_pools_a_reserve_and_a_lease() {
    let StmtKind::Hold { pools, body, lease } = stmt(
        "hold kvD[j] (p + o) reserve (p + o + 2), slots[j] (1) { run D[j] (o); } lease kvD[j] (inf);",
    ) else {
        panic!()
    };
    assert_eq!(pools.len(), 2);
    assert_eq!(pools[0].pool.name.name, "kvD");
    assert_eq!(show(pools[0].pool.index.as_ref().unwrap()), "j");
    assert_eq!(show(&pools[0].units), "(+ p o)");
    assert_eq!(show(pools[0].reserve.as_ref().unwrap()), "(+ (+ p o) 2)");
    assert!(pools[1].reserve.is_none());
    assert_eq!(body.stmts.len(), 1);
    let (pool, length) = lease.unwrap();
    assert_eq!(
        (pool.name.name.as_str(), show(&length)),
        ("kvD", "inf".to_string())
    );
}

#[test]
fn a_holds_trailing_semicolon_is_optional() {
    assert_eq!(stmts("hold p (1) { } end;").len(), 2);
    assert_eq!(stmts("hold p (1) { }; end;").len(), 2);
    assert_eq!(stmts("hold p (1) { } lease p (3) end;").len(), 2);
}

#[test]
fn grow_load_and_release_take_a_pool_reference() {
    let s = stmts("grow p (2); load q[1] (n); release p;");
    assert!(
        matches!(&s[0].kind, StmtKind::Grow { pool, amount } if pool.name.name == "p" && show(amount) == "2")
    );
    assert!(matches!(&s[1].kind, StmtKind::Load { pool, .. } if pool.index.is_some()));
    assert!(matches!(&s[2].kind, StmtKind::Release { pool } if pool.name.name == "p"));
}

#[test]
fn run_names_one_stage_or_a_list_of_stages() {
    let StmtKind::Run { stages, work } = stmt("run S (1);") else {
        panic!()
    };
    assert_eq!((stages.len(), show(&work)), (1, "1".to_string()));
    let StmtKind::Run { stages, .. } = stmt("run a, b[i], c (w);") else {
        panic!()
    };
    let names: Vec<_> = stages.iter().map(|s| s.name.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "c"]);
    assert!(stages[1].index.is_some());
}

#[test]
fn branch_takes_with_and_an_optional_else_block() {
    let StmtKind::Branch {
        guard,
        with,
        then,
        otherwise,
    } = stmt("branch (x == 1) { end; }")
    else {
        panic!()
    };
    assert_eq!(
        (show(&guard), with, then.stmts.len(), otherwise),
        ("(== x 1)".to_string(), false, 1, None)
    );
    let StmtKind::Branch {
        with, otherwise, ..
    } = stmt("branch with (0.3) { } else { end; }")
    else {
        panic!()
    };
    assert!(with);
    assert_eq!(otherwise.unwrap().stmts.len(), 1);
}

#[test]
fn else_needs_a_block() {
    let src = "session { branch (1) {} else branch (1) {} }";
    let d = one_error(src);
    assert_eq!(d.message, "expected `{` after `else`, found `branch`");
    assert_eq!(text(src, d.span), "branch");
    assert!(d.help.unwrap().contains("else {"));
}

#[test]
fn loop_and_choose_parse() {
    let StmtKind::Loop { body } = stmt("loop { run s (1); }") else {
        panic!()
    };
    assert_eq!(body.stmts.len(), 1);
    let StmtKind::Choose { var, count, keys } = stmt("choose j in n + 1 by (queued(p[j]), -j);")
    else {
        panic!()
    };
    assert_eq!(var.name, "j");
    assert_eq!(show(&count), "(+ n 1)");
    let keys: Vec<_> = keys.iter().map(show).collect();
    assert_eq!(keys, ["(queued p[j])", "(neg j)"]);
}

#[test]
fn choose_needs_at_least_one_key() {
    let d = one_error("session { choose j in 3 by (); }");
    assert_eq!(d.message, "expected at least one key, found `)`");
}

#[test]
fn a_name_with_arguments_is_a_statement_definition_use() {
    let StmtKind::Call { name, args } = stmt("visit(B, q[1], 2 * x);") else {
        panic!()
    };
    assert_eq!(name.name, "visit");
    let args: Vec<_> = args.iter().map(show).collect();
    assert_eq!(args, ["B", "q[1]", "(* 2 x)"]);
}

#[test]
fn transfer_parses_in_all_three_forms() {
    let StmtKind::Transfer {
        target,
        work,
        from,
        to,
        amount,
    } = stmt("transfer (X) from P to Q (n);")
    else {
        panic!()
    };
    assert_eq!(target, TransferTarget::Role);
    assert_eq!(
        (
            show(&work),
            from.name.name.as_str(),
            to.name.name.as_str(),
            show(&amount)
        ),
        ("X".into(), "P", "Q", "n".into())
    );
    let StmtKind::Transfer {
        target: TransferTarget::Indexed(j),
        ..
    } = stmt("transfer[j] (X) from P to Q[2] (n);")
    else {
        panic!()
    };
    assert_eq!(show(&j), "j");
    let StmtKind::Transfer {
        target: TransferTarget::On(stages),
        from,
        ..
    } = stmt("transfer on egress[i], ingress[j] (p / 8) from kvP[i] to kvD[j] (p);")
    else {
        panic!()
    };
    assert_eq!(stages.len(), 2);
    assert_eq!(show(from.index.as_ref().unwrap()), "i");
}

#[test]
fn the_parentheses_around_a_transfers_work_are_optional() {
    let StmtKind::Transfer { work, .. } = stmt("transfer 3 from P to Q (5);") else {
        panic!()
    };
    assert_eq!(show(&work), "3");
    let StmtKind::Transfer { work, .. } = stmt("transfer on L x * 2 from P to Q (5);") else {
        panic!()
    };
    assert_eq!(show(&work), "(* x 2)");
}

#[test]
fn transfer_without_from_to_is_refused() {
    let src = "session { transfer (1); }";
    let d = one_error(src);
    assert!(
        d.message.contains("`transfer` without `from P to Q (n)`"),
        "{}",
        d.message
    );
    assert!(d.message.contains("expected"));
    assert_eq!(text(src, d.span), ";");
    assert!(
        one_error("session { transfer (1) from P (3); }")
            .message
            .contains("expected `to")
    );
}

#[test]
fn a_word_that_begins_no_statement_is_an_expected_statement() {
    let d = one_error("session { x = 3; }");
    assert_eq!(d.message, "expected a statement, found `x`");
    assert!(d.help.unwrap().contains("set x ="));
    assert_eq!(
        one_error("session { while (1) { } }").message,
        "expected a statement, found `while`"
    );
    assert_eq!(
        one_error("session { 3; }").message,
        "expected a statement, found `3`"
    );
}

// ----- items -----------------------------------------------------------------

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
    assert_eq!(
        (options[0].name.name.as_str(), show(&options[0].value)),
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
        "unexpected `let` in workload: expected `arrive`, `init` or `turn`"
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

// ----- later tiers -----------------------------------------------------------

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

// ----- recovery --------------------------------------------------------------

#[test]
fn every_error_in_a_file_is_reported() {
    let src = "\
let a = 1 +;
stage S : ps(1)
pool p { cap ; }
session {
  set x = (1;
  run S (1);
  set = 2;
  end;
}
gauge g = 1;
run { horizon 10; }
";
    let (program, diags) = parse(src);
    let lines: Vec<u32> = diags
        .iter()
        .map(|d| serq::syntax::diagnostic::line_col(src, d.span.start).0)
        .collect();
    assert_eq!(lines, [1, 3, 3, 5, 7, 10], "{diags:#?}");
    assert!(
        diags.iter().all(|d| d.message.contains("expected")),
        "{diags:#?}"
    );
    // What could be built is kept: stage, pool, session (with `run` and `end`), run.
    assert_eq!(program.items.len(), 4, "{:#?}", program.items);
    let Item::Session { body, .. } = &program.items[2] else {
        panic!()
    };
    let kinds: Vec<_> = body
        .stmts
        .iter()
        .map(|s| std::mem::discriminant(&s.kind))
        .collect();
    assert_eq!(kinds.len(), 2);
}

#[test]
fn a_missing_semicolon_before_a_new_line_keeps_the_next_declaration() {
    let src = "stage S : ps(1)\nworkload { arrive batch(1); }\n";
    let (program, diags) = parse(src);
    assert_eq!(diags.len(), 1);
    assert_eq!(
        diags[0].message,
        "expected `;` after the declaration of stage `S`, found `workload`"
    );
    assert_eq!(text(src, diags[0].span), "workload");
    assert_eq!(program.items.len(), 2);
}

#[test]
fn a_statement_error_skips_to_the_next_line_that_begins_a_statement() {
    let (program, diags) = parse("session {\n  set x = 1 2\n  run S (1);\n}");
    assert_eq!(diags.len(), 1, "{diags:#?}");
    let Item::Session { body, .. } = &program.items[0] else {
        panic!()
    };
    assert!(matches!(body.stmts[0].kind, StmtKind::Run { .. }));
}

#[test]
fn an_unclosed_block_is_reported_at_the_end_with_its_opening() {
    let src = "session { run S (1);";
    let d = one_error(src);
    assert_eq!(d.message, "expected `}` to close `{`, found end of file");
    assert_eq!(d.secondary[0].0, Span { start: 8, end: 9 });
}

#[test]
fn diagnostics_render_with_line_column_and_caret() {
    let src = "session {\n  run S ((1 + 2);\n}";
    let text = serq::syntax::render(&errors(src), "x.sq", src);
    assert!(
        text.contains("error[syntax]: expected `)` to close `(`, found `;`"),
        "{text}"
    );
    assert!(text.contains("x.sq:2:17"), "{text}");
}

// ----- nesting and robustness ------------------------------------------------

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

// ----- conformance cases -----------------------------------------------------

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
