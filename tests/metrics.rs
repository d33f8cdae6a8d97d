//! `tools/metrics.json` counts the language's keywords and the IR's `Stmt`
//! and `Expr` variants. Adding a keyword or a variant without rerunning
//! `cargo run --example metrics` fails here; adding a variant without
//! listing it below fails to compile (the matches are exhaustive).

#[allow(dead_code)] // only `metrics_json` and `variant_names` are used here
#[path = "../examples/metrics.rs"]
mod metrics_example;

use metrics_example::{metrics_json, variant_names};
use serq::ir::{Expr, Stmt};

/// Every `Stmt` variant, in declaration order (serde's order).
const STMT_NAMES: [&str; 13] = [
    "Set", "Observe", "Turn", "End", "Hold", "Grow", "Load", "Release", "Drop", "Run", "Branch",
    "Loop", "Choose",
];

/// The name of a statement's variant. Exhaustive: a new variant does not
/// compile until it has an arm here and a name in [`STMT_NAMES`].
fn stmt_name(s: &Stmt) -> &'static str {
    match s {
        Stmt::Set(..) => STMT_NAMES[0],
        Stmt::Observe(..) => STMT_NAMES[1],
        Stmt::Turn => STMT_NAMES[2],
        Stmt::End => STMT_NAMES[3],
        Stmt::Hold { .. } => STMT_NAMES[4],
        Stmt::Grow(..) => STMT_NAMES[5],
        Stmt::Load(..) => STMT_NAMES[6],
        Stmt::Release(..) => STMT_NAMES[7],
        Stmt::Drop(..) => STMT_NAMES[8],
        Stmt::Run { .. } => STMT_NAMES[9],
        Stmt::Branch(..) => STMT_NAMES[10],
        Stmt::Loop(..) => STMT_NAMES[11],
        Stmt::Choose { .. } => STMT_NAMES[12],
    }
}

/// Every `Expr` variant, in declaration order.
const EXPR_NAMES: [&str; 8] = [
    "Num", "Attr", "Ctx", "Sample", "Call", "Unary", "Binary", "Cond",
];

/// The name of an expression's variant. Exhaustive, like [`stmt_name`].
fn expr_name(e: &Expr) -> &'static str {
    match e {
        Expr::Num(..) => EXPR_NAMES[0],
        Expr::Attr(..) => EXPR_NAMES[1],
        Expr::Ctx(..) => EXPR_NAMES[2],
        Expr::Sample(..) => EXPR_NAMES[3],
        Expr::Call(..) => EXPR_NAMES[4],
        Expr::Unary(..) => EXPR_NAMES[5],
        Expr::Binary(..) => EXPR_NAMES[6],
        Expr::Cond(..) => EXPR_NAMES[7],
    }
}

fn checked_in() -> serde_json::Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/metrics.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).expect("tools/metrics.json is JSON")
}

#[test]
fn the_checked_in_metrics_equal_what_the_metrics_example_computes_now() {
    let now: serde_json::Value =
        serde_json::from_str(&metrics_json()).expect("the example writes JSON");
    assert_eq!(
        checked_in(),
        now,
        "tools/metrics.json is stale: run `cargo run --example metrics`"
    );
}

#[test]
fn the_keyword_count_is_the_length_of_the_lexers_keyword_list() {
    assert_eq!(
        checked_in()["keywords"],
        serq::syntax::KEYWORDS.len(),
        "run `cargo run --example metrics`"
    );
}

#[test]
fn the_stmt_count_is_every_variant_the_exhaustive_match_names() {
    // The match is exhaustive, and serde lists the same names in the same order.
    assert_eq!(stmt_name(&Stmt::Turn), "Turn");
    assert_eq!(variant_names::<Stmt>(), STMT_NAMES);
    assert_eq!(checked_in()["stmt_variants"], STMT_NAMES.len());
}

#[test]
fn the_expr_count_is_every_variant_the_exhaustive_match_names() {
    assert_eq!(expr_name(&Expr::Num(1.0)), "Num");
    assert_eq!(variant_names::<Expr>(), EXPR_NAMES);
    assert_eq!(checked_in()["expr_variants"], EXPR_NAMES.len());
}
