//! Names: did-you-mean, arity, indexing, duplicates, names that hide
//! built-ins, retired words, `present`.

use super::*;

#[test]
fn unknown_names_get_a_did_you_mean() {
    let d = refused(
        &with_b("stage prefill : fifo; session { run prefil (1); }"),
        &["unknown stage `prefil`"],
    );
    assert!(d[0].help.as_deref().unwrap_or("").contains("prefill"));
    refused(&with_b("session { hold p (1) {} }"), &["unknown pool `p`"]);
    refused(&with_b("session { set x = y + 1; }"), &["unknown name `y`"]);
    refused(
        &with_b("session { set x = foo(1); }"),
        &["unknown function `foo`"],
    );
    refused(
        &with_b("session { set x = ~gamma(1); }"),
        &["unknown distribution `gamma`"],
    );
    refused(
        &with_b("stage d : delay; session { set x = used(d); }"),
        &["unknown pool `d`"],
    );
}

#[test]
fn arity_is_checked() {
    refused(
        &with_b("session { set x = min(1); }"),
        &["`min` takes 2 argument(s), got 1"],
    );
    refused(
        &with_b("session { set x = ~uniform(1); }"),
        &["`~uniform` takes 2 argument(s)"],
    );
    refused(
        &with_b("pool q[2] {} session { set x = used(q[0], 1); }"),
        &["`used` takes 1 argument(s)"],
    );
}

#[test]
fn an_array_must_be_indexed() {
    refused(
        &with_b("stage s[2]:delay; session { run s (1); }"),
        &["stage `s` is an array; index it"],
    );
    refused(
        &with_b("pool p[2] {} session { set x = used(p); }"),
        &["pool `p` is an array; index it"],
    );
}

#[test]
fn index_zero_on_a_single_stage_is_a_family_of_one() {
    let p = linked(&with_b("stage d : delay; session { run d[0] (1); }"));
    assert!(
        matches!(&p.blocks[2][0], Stmt::Run { stage, .. } if *stage == cref(0, 1, Some(Expr::Num(0.0))))
    );
}

#[test]
fn duplicate_declarations_name_the_first() {
    let d = refused(&with_b("pool p {} pool p {}"), &["duplicate pool `p`"]);
    assert!(!d[0].secondary.is_empty());
    refused(
        &with_b("stage s : delay; stage s : delay;"),
        &["duplicate stage `s`"],
    );
    refused(
        &with_b("session { end; } session { end; }"),
        &["duplicate session"],
    );
    refused(
        "workload { } workload { } run { horizon 1; }",
        &["duplicate workload"],
    );
    linked(&with_b("pool x {} stage x : delay;"));
}

#[test]
fn names_that_hide_now_inf_or_present_are_refused() {
    refused(&with_b("session { set now = 5; }"), &["now", "hides"]);
    refused(&with_b("session { set inf = 1; }"), &["inf", "hides"]);
    refused(&with_b("let now = 3;"), &["now", "hides"]);
    refused(
        &with_b("session { choose present in 2 by (1); }"),
        &["present", "hides"],
    );
    refused(&with_b("def f(now) = now;"), &["now", "hides"]);
    linked(&with_b(
        "stage work : delay; pool link {} session { set serial = 4; observe prefilled = 1; run work (1); }",
    ));
}

#[test]
fn retired_words_name_nothing() {
    refused(
        &with_b("session { set keep = 1; }"),
        &["`keep` is a retired word", "cache"],
    );
}

#[test]
fn present_is_read_only_in_a_ps_capacity_and_n_gets_a_rename_hint() {
    refused(
        &with_b("session { set x = present; }"),
        &["present", "ps stage's capacity"],
    );
    refused(
        &with_b("stage s : ps(n);"),
        &["the context variable `n` is now `present`"],
    );
    refused(
        &with_b("session { set x = tokens; }"),
        &["`tokens`", "step stage"],
    );
}
