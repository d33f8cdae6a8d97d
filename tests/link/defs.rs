//! `def`s: substitution in both forms, the rules on them, arguments that
//! draw, and free names that are not captured.

use super::*;

#[test]
fn defs_substitute_in_both_forms_with_free_names_read_at_the_use_site() {
    let p = linked(&with_b(
        "let base = 2; def service(x) = base * x + k; def visit(s, w) { run s (w); observe visited = now; }
         stage A : delay; stage B : fifo;
         session { set k = serial; run A (service(1)); visit(B, 1); }",
    ));
    assert_eq!(p.observes, ["visited"]);
    assert!(matches!(&p.blocks[2][2], Stmt::Run { stage, .. } if stage.base == 1));
    assert!(matches!(
        &p.blocks[2][3],
        Stmt::Observe(0, Expr::Ctx(ir::Ctx::Now))
    ));
}

#[test]
fn def_rules_are_checked() {
    refused(
        &with_b("def f(x)=x; session { set y = f(1,2); }"),
        &["takes 1 argument(s), got 2"],
    );
    refused(
        &with_b("def f(x)=g(x); def g(x)=x;"),
        &["`f` uses `g`, which is defined after it"],
    );
    refused(&with_b("def f(x)=f(x);"), &["`f` uses itself"]);
    refused(
        &with_b("def f(x)=x; session { f(1); }"),
        &["`f` is an expression, not statements"],
    );
    refused(
        &with_b("def w(x) { set y = x; } session { set z = w(1); }"),
        &["`w` is statements"],
    );
    refused(
        &with_b("def f(run)=run;"),
        &["`run` is a word of the language"],
    );
    // pyserq 0.1.0 refuses a def named by a word of the language, the
    // distributions included (`det` is a fine parameter, not a def name).
    refused(
        &with_b("def serve(x)=x; session { set y = serve(1); }"),
        &["def `serve`", "word of the language"],
    );
    refused(
        &with_b("def min(x)=x; session { set y = min(1); }"),
        &["def `min`", "word of the language"],
    );
    refused(
        &with_b("def det(x)=x; session { set y = det(1); }"),
        &["def `det`", "word of the language"],
    );
    refused(&with_b("def f(x, x)=x;"), &["parameter `x`", "twice"]);
    refused(&with_b("def f(x)=x; def f(y)=y;"), &["def `f`", "twice"]);
    refused(&with_b("let f = 1; def f(x)=x;"), &["`f`", "def", "let"]);
    refused(
        &with_b("def w(x) { set x = 1; } session { w(1); }"),
        &["assigns its parameter `x`"],
    );
}

#[test]
fn an_argument_that_draws_may_not_go_to_a_parameter_read_twice() {
    refused(
        &with_b("def f(x) = x + x; session { set y = f(~det(2)); }"),
        &["argument for `x` draws", "2 times"],
    );
    refused(
        &with_b("def f(x) = c ? x : x; session { set c = 1; set y = f(~exp(1)); }"),
        &["draws"],
    );
    linked(&with_b("def f(x) = x + 1; session { set y = f(~exp(1)); }"));
}

#[test]
fn a_free_name_of_an_inner_def_is_not_captured_by_an_outer_parameter() {
    // g's free `x` is the attribute at the use site, not f's parameter: 1 + x.
    let p = linked(&with_b(
        "def g(y) = y + x; def f(x) = g(1); session { set x = 5; set r = f(7); }",
    ));
    assert_eq!(
        p.blocks[2][1],
        Stmt::Set(
            10,
            Expr::Binary(
                ir::BinOp::Add,
                Box::new(Expr::Num(1.0)),
                Box::new(Expr::Attr(9))
            )
        )
    );
}

#[test]
fn a_drawing_argument_is_refused_where_an_inner_def_reads_it_twice() {
    refused(
        &with_b("def g(y) = y * y; def f(x) = g(x); session { set r = f(~exp(1)); }"),
        &["argument for `y` draws"],
    );
}
