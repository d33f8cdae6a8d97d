//! Expressions: precedence, associativity, samples and calls, spans.

use super::*;

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
