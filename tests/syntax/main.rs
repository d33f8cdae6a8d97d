//! The lexer and the parser: token forms, precedence, statement and item
//! shapes, refusals of later-tier constructs, recovery, and the conformance
//! cases' syntax.

use serq::syntax::ast::{
    BinOp, DefBody, Expr, ExprKind, Item, PoolOption, Program, Span, StageKind, Stmt, StmtKind,
    TransferTarget, UnOp, WorkloadItem,
};
use serq::syntax::{Diagnostic, KEYWORDS, parse};

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

// One module per feature; each reads the helpers above through `super::*`.
mod conformance_cases;
mod expressions;
mod items;
mod keywords;
mod nesting;
mod recovery;
mod serving;
mod statements;
