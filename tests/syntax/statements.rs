//! Statement shapes: set, observe, hold, run, branch, loop, choose, transfer, def uses.

use super::*;

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
    let StmtKind::Hold {
        pools, body, lease, ..
    } = stmt(
        "hold kvD[j] (p + o) reserve (p + o + 2), slots[j] (1) { run D[j] (o); } lease kvD[j] (inf);",
    )
    else {
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
    let StmtKind::Run { stages, work, .. } = stmt("run S (1);") else {
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
