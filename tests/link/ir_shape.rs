//! The shape of the linked IR: flattened arrays, slots, block numbering,
//! folded constants, the workload and the run options.

use super::*;

#[test]
fn arrays_are_flattened_into_consecutive_entries() {
    let p = linked(&with_b(
        "pool kv[2] { cap 3; } stage s : delay; stage d[3] : fifo(2); session { run d[1] (1); }",
    ));
    assert_eq!(p.pools.len(), 2);
    assert!(p.pools.iter().all(|x| x.name == "kv" && x.cap == 3.0));
    assert_eq!(p.stages.len(), 4);
    assert_eq!(p.stages[1].kind, ir::StageKind::Fifo(2));
    match &p.blocks[2][0] {
        Stmt::Run { stage, .. } => assert_eq!(*stage, cref(1, 3, Some(Expr::Num(1.0)))),
        s => panic!("{s:?}"),
    }
}

#[test]
fn array_sizes_may_be_constant_expressions() {
    let p = linked(&with_b(
        "let NP = 5; stage P[NP - 2] : delay; session { run P[0] (1); }",
    ));
    assert_eq!(p.stages.len(), 3);
}

#[test]
fn array_size_must_be_a_whole_number_of_at_least_one() {
    for size in ["0", "1.5", "-1", "inf"] {
        refused(
            &with_b(&format!("stage s[{size}] : delay;")),
            &["array size", "positive integer"],
        );
    }
}

#[test]
fn user_attributes_follow_the_builtins_in_assignment_order() {
    let src = "workload { arrive batch(1); init { set b = 1; } turn { set a = b; } }
               session { branch (1) { set c = 1; } else { choose j in 2 by (j); } set b = 2; set serial = 3; }
               run { horizon 10; }";
    let p = linked(src);
    assert_eq!(&p.attrs[9..], ["b", "a", "c", "j"]);
}

#[test]
fn reading_a_name_does_not_allocate_a_slot() {
    refused(
        &with_b("stage S : ps(1); session { set tokens_in = 4; run S (tokens_out / 2); }"),
        &["unknown", "tokens_out"],
    );
}

#[test]
fn observations_are_numbered_in_program_order() {
    let src = "workload { arrive batch(1); turn { observe t = 1; } init { observe i = 1; } }
               session { observe s = 1; observe i = 2; } run { horizon 10; }";
    assert_eq!(linked(src).observes, ["i", "t", "s"]);
}

#[test]
fn blocks_are_numbered_in_pre_order_and_a_branch_without_else_gets_an_empty_block() {
    let p = linked(&with_b(
        "stage d : delay; session { branch (1) { loop { end; } } else { set b = 2; } branch (0) { run d (1); } }",
    ));
    assert_eq!(p.blocks[2][0], Stmt::Branch(Expr::Num(1.0), 3, 5));
    assert_eq!(p.blocks[3], vec![Stmt::Loop(4)]);
    assert_eq!(p.blocks[4], vec![Stmt::End]);
    assert!(matches!(p.blocks[2][1], Stmt::Branch(_, 6, 7)));
    assert!(p.blocks[7].is_empty());
}

#[test]
fn lets_are_folded_into_numbers() {
    let p = linked(&with_b(
        "let a = 2; let b = a * 3 + 1; stage s : delay; session { run s (b); }",
    ));
    match &p.blocks[2][0] {
        Stmt::Run { work, .. } => assert_eq!(*work, Expr::Num(7.0)),
        s => panic!("{s:?}"),
    }
}

#[test]
fn a_let_reads_only_earlier_lets() {
    refused(&with_b("let a = b; let b = 1;"), &["`b`", "after"]);
}

#[test]
fn a_let_that_is_nan_is_refused() {
    refused(&with_b("let x = 0/0;"), &["let x", "NaN"]);
    refused(&with_b("pool p { cap inf - inf; }"), &["pool `p`", "NaN"]);
}

#[test]
fn a_constant_cannot_sample_or_read_attributes() {
    refused(&with_b("pool p { cap ~exp(1); }"), &["constant", "sample"]);
    refused(&with_b("let x = serial;"), &["`serial`", "not a constant"]);
    refused(&with_b("let x = now;"), &["`now`", "not a constant"]);
}

#[test]
fn a_let_may_not_share_a_name_with_an_attribute() {
    refused(&with_b("let serial = 1;"), &["serial", "let", "attribute"]);
    refused(
        &with_b("let k = 1; session { set k = 2; }"),
        &["`k`", "attribute"],
    );
}

#[test]
fn a_let_given_twice_is_refused_with_the_first_place() {
    let d = refused(&with_b("let a = 1; let a = 2;"), &["let a", "twice"]);
    assert!(!d[0].secondary.is_empty());
}

#[test]
fn ps_capacity_is_folded_when_constant_and_kept_when_it_reads_present() {
    let p = linked(&with_b(
        "let C = 4; stage a : ps(C / 2); stage b : ps(min(present, 2)); session { }",
    ));
    assert_eq!(p.stages[0].kind, ir::StageKind::Ps(Expr::Num(2.0)));
    assert!(matches!(
        &p.stages[1].kind,
        ir::StageKind::Ps(Expr::Call(..))
    ));
}

#[test]
fn missing_workload_means_no_arrivals_and_empty_session_is_absent() {
    let p = linked("session { } run { horizon 5; }");
    assert_eq!(p.arrival, Arrival::None);
    assert!(p.blocks[2].is_empty());
    assert_eq!((p.warmup, p.seed, p.arrivals), (0.0, 1, None));
}

#[test]
fn run_options_fold_and_seed_truncates_with_saturation() {
    let p = linked(
        "workload { arrive poisson(2); } run { horizon 2 + 3; warmup 1; seed 1e20; arrivals 4.7; }",
    );
    assert_eq!(
        (p.horizon, p.warmup, p.seed, p.arrivals),
        (5.0, 1.0, u64::MAX, Some(4))
    );
    assert_eq!(p.arrival, Arrival::Poisson(2.0));
    let p = linked("run { horizon 5; seed -3; }");
    assert_eq!(p.seed, 0);
}

#[test]
fn overrides_replace_run_options_before_they_are_checked() {
    let src = "workload { arrive batch(1); } run { horizon inf; }";
    let (ast, _) = parse(src);
    let ov = Overrides {
        horizon: Some(7.0),
        seed: Some(9),
        ..Overrides::default()
    };
    let p = link(&ast, src, &ov).unwrap();
    assert_eq!((p.horizon, p.seed), (7.0, 9));
    let src = "workload { arrive batch(1); }";
    let (ast, _) = parse(src);
    assert_eq!(link(&ast, src, &ov).unwrap().horizon, 7.0);
}

#[test]
fn run_block_rules() {
    refused(
        "workload { arrive batch(1); } run { seed 2; }",
        &["no horizon"],
    );
    refused(
        "workload { arrive batch(1); } run { horizon 10; warmup 10; }",
        &["warmup", "below the horizon"],
    );
    refused(
        "workload { arrive batch(1); } run { horizon 10; warmup -1; }",
        &["warmup"],
    );
    refused(
        "workload { arrive batch(1); } run { horizon 10; length 3; }",
        &["unknown run option `length`"],
    );
    refused(
        "workload { arrive batch(1); } run { horizon inf; }",
        &["horizon", "finite"],
    );
    refused(
        "workload { arrive batch(1); } run { horizon 0; }",
        &["horizon", "above 0"],
    );
    refused(
        "workload { arrive batch(1); } run { horizon 5; horizon 6; }",
        &["horizon", "twice"],
    );
    refused(
        "workload { arrive batch(1); } run { horizon 5; } run { seed 2; }",
        &["run", "twice"],
    );
    refused(
        "workload { arrive batch(1); } run { horizon 5; arrivals 3; }",
        &["arrivals", "poisson, renewal or trace"],
    );
}

#[test]
fn arrival_laws_are_checked() {
    let run = " run { horizon 5; }";
    refused(
        &format!("workload {{ arrive poisson(-1); }}{run}"),
        &["poisson", "rate"],
    );
    refused(
        &format!("workload {{ arrive poisson(inf); }}{run}"),
        &["poisson", "rate"],
    );
    linked(&format!("workload {{ arrive poisson(0); }}{run}"));
    refused(
        &format!("workload {{ arrive renewal(0); }}{run}"),
        &["renewal"],
    );
    refused(
        &format!("workload {{ arrive renewal(serial); }}{run}"),
        &["renewal", "only constants"],
    );
    refused(
        &format!("workload {{ arrive renewal(now); }}{run}"),
        &["renewal", "only constants"],
    );
    let p = linked(&format!("workload {{ arrive renewal(~exp(2)); }}{run}"));
    assert!(matches!(p.arrival, Arrival::Renewal(Expr::Sample(..))));
    refused(
        &format!("workload {{ arrive batch(0); }}{run}"),
        &["batch", "whole"],
    );
    refused(
        &format!("workload {{ arrive batch(1.5); }}{run}"),
        &["batch", "whole"],
    );
    refused(
        &format!("workload {{ arrive closed(-1); }}{run}"),
        &["closed", "whole"],
    );
    assert_eq!(
        linked(&format!("workload {{ arrive closed(0); }}{run}")).arrival,
        Arrival::Closed(0)
    );
    refused(
        &format!("workload {{ arrive batch(1); arrive batch(2); }}{run}"),
        &["arrive", "twice"],
    );
}

#[test]
fn workload_blocks_may_only_set_and_observe() {
    refused(
        "stage s:delay; workload { arrive batch(1); init { run s (1); } } run {horizon 10;}",
        &["workload blocks may only `set` and `observe`"],
    );
    refused(
        "workload { arrive batch(1); init { set a = 1; } init { set b = 1; } } run {horizon 10;}",
        &["init", "twice"],
    );
}
