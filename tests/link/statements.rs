//! Statements and sugar: `transfer`, `branch with`, constant guards,
//! amounts and indices, hold scopes, distributions, loops, options.

use super::*;

#[test]
fn transfer_on_two_stages_is_run_load_release() {
    let p = linked(
        "pool kvP { cap 10; } pool kvD[2] { cap 10; } stage P : delay; stage egress : ps(1); stage ingress[2] : ps(1);
         share maxmin; workload { arrive batch(2); }
         session { set j = serial; hold kvP (10) { run P (1); } lease kvP (inf);
                   hold kvD[j] (10) { transfer on egress, ingress[j] (1) from kvP to kvD[j] (10); } }
         run { horizon 10; }",
    );
    let j = || Some(Expr::Attr(9));
    let body = &p.blocks[4];
    assert_eq!(
        body[0],
        Stmt::Run {
            stage: cref(1, 1, None),
            mode: ir::RunMode::Plain,
            work: Expr::Num(1.0),
            growing: None,
            also: vec![cref(2, 2, j())]
        }
    );
    assert_eq!(body[1], Stmt::Load(cref(1, 2, j()), Expr::Num(10.0)));
    assert_eq!(body[2], Stmt::Release(cref(0, 1, None)));
    assert_eq!(p.share, Some(ir::Share::MaxMin));
    let positions = p.positions.as_ref().unwrap();
    assert_eq!(positions[4][0], positions[4][2]);
}

#[test]
fn transfer_by_role_finds_the_stage_named_link_declared_above() {
    let src = "pool p {} pool q[2] {} stage link[2] : ps(1);
               session { hold p (1) { hold q[1] (1) { transfer[1] (2) from p to q[1] (1); } } }";
    let p = linked(&with_b(src));
    assert!(
        matches!(&p.blocks[4][0], Stmt::Run { stage, also, .. } if *stage == cref(0, 2, Some(Expr::Num(1.0))) && also.is_empty())
    );
    refused(
        &with_b(
            "pool p {} pool q {} session { hold p (1) { hold q (1) { transfer (1) from p to q (1); } } } stage link : ps(1);",
        ),
        &["no stage declared above plays `transfer`"],
    );
    refused(
        &with_b(
            "stage link:ps(1); stage transfer:ps(1); pool p{} pool q{} session { hold p (1) { hold q (1) { transfer (1) from p to q (1); } } }",
        ),
        &["several stages play `transfer`", "link", "transfer"],
    );
}

#[test]
fn branch_with_is_a_bernoulli_guard() {
    let p = linked(&with_b("session { branch with (0.3) { end; } }"));
    assert!(
        matches!(&p.blocks[2][0], Stmt::Branch(Expr::Sample(ir::Dist::Bernoulli, a), 3, 4) if a == &vec![Expr::Num(0.3)])
    );
    refused(
        &with_b("session { branch with (1.5) { end; } }"),
        &["bernoulli", "parameter"],
    );
}

#[test]
fn a_constant_guard_must_be_zero_or_one() {
    refused(
        &with_b("session { branch (0.5) { end; } }"),
        &["branch (0.5)", "branch with"],
    );
    refused(
        &with_b("session { branch (2) { end; } }"),
        &["guard is 0 or 1"],
    );
}

#[test]
fn constant_index_out_of_range_is_refused_on_a_branch_never_taken() {
    refused(
        &with_b("stage a[2] : delay; session { branch (0) { run a[5] (1); } }"),
        &["index 5 out of range (count 2)"],
    );
    refused(
        &with_b("stage a[2] : delay; session { run a[-1] (1); }"),
        &["index"],
    );
    refused(
        &with_b("stage a[2] : delay; session { run a[0.5] (1); }"),
        &["index"],
    );
}

#[test]
fn constant_amounts_may_not_be_negative_or_nan() {
    refused(
        &with_b("stage s : delay; session { run s (-1); }"),
        &["run work", "negative"],
    );
    refused(
        &with_b("stage s : delay; session { run s (0/0); }"),
        &["run work", "NaN"],
    );
    refused(
        &with_b("pool p {} session { hold p (-2) {} }"),
        &["hold units", "negative"],
    );
    refused(
        &with_b("pool p {} session { hold p (1) reserve (-1) {} }"),
        &["reserve", "negative"],
    );
    refused(
        &with_b("pool p {} session { hold p (1) { grow p (-1); } }"),
        &["grow", "negative"],
    );
    refused(
        &with_b("pool p {} session { hold p (1) { load p (0/0); } }"),
        &["load", "NaN"],
    );
    linked(&with_b(
        "stage s : delay; session { run s (0); run s (inf); }",
    ));
}

#[test]
fn hold_units_may_not_draw() {
    refused(
        &with_b("pool p {} session { hold p (~exp(1)) {} }"),
        &["may not draw"],
    );
    refused(
        &with_b("pool p {} session { hold p (1) reserve (~det(1)) {} }"),
        &["may not draw"],
    );
}

#[test]
fn grow_release_load_and_lease_need_their_hold() {
    refused(
        &with_b("pool p {} session { release p; }"),
        &["`release p`", "outside a hold"],
    );
    refused(
        &with_b("pool p {} session { load p (1); }"),
        &["`load p`", "outside a hold"],
    );
    refused(
        &with_b("pool p {} session { grow p (1); }"),
        &["`grow p`", "outside a hold"],
    );
    refused(
        &with_b("pool p {} pool q {} session { hold p (1) {} lease q (1); }"),
        &["`lease q`", "does not take"],
    );
    refused(
        &with_b("pool q[2] {} session { hold q[0] (1) { release q[1]; } }"),
        &["release q[1]", "outside a hold"],
    );
    linked(&with_b(
        "pool p {} session { hold p (1) { release p; } hold p (1) {} lease p (inf); release p; }",
    ));
}

#[test]
fn a_pool_named_twice_in_one_hold_is_refused() {
    refused(
        &with_b("pool p { cap 10; } session { hold p (6), p (6) {} }"),
        &["pool `p`", "twice"],
    );
    linked(&with_b(
        "pool q[2] {} session { hold q[0] (1), q[1] (1) {} }",
    ));
}

#[test]
fn distribution_parameters_out_of_range_are_refused_when_constant() {
    refused(
        &with_b("session { set x = ~exp(-1); }"),
        &["exp", "parameter"],
    );
    refused(
        &with_b("session { set x = ~h2(1, 0.5); }"),
        &["h2", "parameter"],
    );
    refused(
        &with_b("session { set x = ~erlang(1.5, 1); }"),
        &["erlang", "parameter"],
    );
    refused(
        &with_b("session { set x = ~uniform(2, 1); }"),
        &["uniform", "parameter"],
    );
    refused(
        &with_b("session { set x = ~bernoulli(-0.1); }"),
        &["bernoulli", "parameter"],
    );
    linked(&with_b("session { set x = ~uniform(a, 1); set a = 2; }"));
}

#[test]
fn a_loop_that_never_lets_time_pass_is_refused() {
    refused(
        &with_b("session { loop { set i = i + 1; } }"),
        &["loop", "livelock"],
    );
    linked(&with_b(
        "stage s : delay; session { loop { branch (i > 3) { end; } set i = i + 1; run s (1); } }",
    ));
}

#[test]
fn choose_counts_must_be_whole_numbers_of_at_least_one() {
    refused(
        &with_b("session { choose j in inf by (j); }"),
        &["choose", "whole"],
    );
    refused(
        &with_b("session { choose j in 0 by (j); }"),
        &["choose", "whole"],
    );
    linked(&with_b("session { choose j in serial by (j); }"));
}

#[test]
fn stage_and_pool_options_are_checked() {
    refused(
        &with_b("stage s : fifo(0);"),
        &["stage `s`", "fifo servers must be a positive integer"],
    );
    refused(&with_b("stage s : fifo(2.5);"), &["fifo servers"]);
    refused(&with_b("pool p { cap -1; }"), &["pool `p`", "negative"]);
    linked(&with_b("pool p { cap 0; }"));
    refused(&with_b("stage s : ps(0);"), &["stage `s`", "above 0"]);
    refused(&with_b("stage s : ps(-1);"), &["stage `s`", "above 0"]);
    refused(&with_b("pool p { cap 1; cap 2; }"), &["cap", "twice"]);
    refused(
        &with_b("pool p { block 0; }"),
        &["pool `p`", "block must be positive"],
    );
    refused(&with_b("pool p { block 2; block 4; }"), &["block", "twice"]);
}
