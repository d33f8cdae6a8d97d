//! The serving engine's syntax (spec §1, §8, §9): step stages and their
//! options, pool options, run modes and `growing`, the hold's caching
//! clauses, `drop`, the serving vocabulary, the workload's `hidden`,
//! `trace` and `session`, `server`, `request` and `use`.

use super::*;
use serq::syntax::ast::{Role, RunMode, ServeOrder, StepOption};

fn step_options(src: &str) -> Vec<StepOption> {
    match parse_ok(&format!("stage e : step {{ {src} }}"))
        .items
        .remove(0)
    {
        Item::Stage {
            kind: StageKind::Step(options, _),
            ..
        } => options,
        other => panic!("not a step stage: {other:?}"),
    }
}

fn pool_options(src: &str) -> Vec<PoolOption> {
    match parse_ok(&format!("pool p {{ {src} }}")).items.remove(0) {
        Item::Pool { options, .. } => options,
        other => panic!("not a pool: {other:?}"),
    }
}

#[test]
fn a_step_stage_reads_every_option_and_needs_no_semicolon_after_its_block() {
    let options = step_options(
        "budget 8; cost 1 + tokens / 4; chunk 2; memory kv; serve by (remaining, -admission);",
    );
    let words: Vec<&str> = options.iter().map(|o| o.word()).collect();
    assert_eq!(words, ["budget", "cost", "chunk", "memory", "serve"]);
    let StepOption::Value(cost) = &options[1] else {
        panic!()
    };
    assert_eq!(show(&cost.value), "(+ 1 (/ tokens 4))");
    assert!(matches!(&options[3], StepOption::Memory { pool, .. } if pool.name == "kv"));
    let StepOption::Serve {
        order: ServeOrder::By(keys),
        ..
    } = &options[4]
    else {
        panic!()
    };
    assert_eq!(
        keys.iter().map(show).collect::<Vec<_>>(),
        ["remaining", "(neg admission)"]
    );
    // `stage e : step { … }` ends without `;` (the cases write it so), and with one.
    let p = parse_ok("stage e : step { cost 1; } stage f : step { cost 1; }; stage d : delay;");
    assert_eq!(p.items.len(), 3);
}

#[test]
fn serve_takes_its_four_forms_and_refuses_others() {
    let order = |src: &str| match &step_options(&format!("serve {src};"))[0] {
        StepOption::Serve { order, .. } => order.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(order("admission"), ServeOrder::Admission);
    assert_eq!(order("decode first"), ServeOrder::DecodeFirst);
    assert_eq!(order("exclusive prefill"), ServeOrder::ExclusivePrefill);
    let d = one_error("stage e : step { cost 1; serve only (decoding); }");
    assert_eq!(d.rule, "serve-order");
    assert!(d.message.contains("`only`"), "{}", d.message);
    assert!(
        one_error("stage e : step { serve by (); }")
            .message
            .contains("at least one key")
    );
}

#[test]
fn bare_decode_first_and_exclusive_prefill_get_a_rename_hint() {
    for old in ["decode first", "exclusive prefill"] {
        let src = format!("stage e : step {{ cost 1; {old}; }}");
        let d = one_error(&src);
        assert_eq!(d.rule, "renamed");
        assert!(
            d.message.contains(&format!("serve {old};")),
            "{}",
            d.message
        );
        assert_eq!(text(&src, d.span), old);
    }
}

#[test]
fn pool_options_of_the_serving_engine_parse() {
    let options = pool_options(
        "cap 64; block 16; evict by (age, -size); preempt lifo; queue by (waited); admit via e; spill host via pcie (size / 2) when (size > 8);",
    );
    let words: Vec<&str> = options.iter().map(|o| o.word()).collect();
    assert_eq!(
        words,
        [
            "cap",
            "block",
            "evict",
            "preempt",
            "queue",
            "admit via",
            "spill"
        ]
    );
    assert!(
        matches!(&options[2], PoolOption::Evict { by: Some(k), .. } if k.len() == 2 && show(&k[1]) == "(neg size)")
    );
    assert!(matches!(
        &options[3],
        PoolOption::Preempt { lifo: true, .. }
    ));
    assert!(matches!(&options[5], PoolOption::AdmitVia { stage, .. } if stage.name == "e"));
    let PoolOption::Spill {
        to,
        via,
        work,
        when,
        ..
    } = &options[6]
    else {
        panic!()
    };
    assert_eq!(
        (to.name.as_str(), via.name.as_str(), show(work), show(when)),
        ("host", "pcie", "(/ size 2)".into(), "(> size 8)".into())
    );
    let defaults = pool_options("evict lru; preempt none; queue fifo;");
    assert!(matches!(&defaults[0], PoolOption::Evict { by: None, .. }));
    assert!(matches!(
        &defaults[1],
        PoolOption::Preempt { lifo: false, .. }
    ));
    assert!(matches!(&defaults[2], PoolOption::Queue { by: None, .. }));
    assert!(
        one_error("pool p { preempt fifo; }")
            .message
            .contains("`none` or `lifo`")
    );
    // An unknown word with a value is the linker's to refuse.
    assert!(matches!(&pool_options("size 2;")[0], PoolOption::Value(o) if o.name.name == "size"));
}

#[test]
fn a_run_takes_a_mode_and_growing() {
    let StmtKind::Run {
        stages,
        mode,
        work,
        growing,
    } = stmt("run e[j] prefill (new) growing kv[j];")
    else {
        panic!()
    };
    assert_eq!(stages[0].name.name, "e");
    assert_eq!(mode.map(|(m, _)| m), Some(RunMode::Prefill));
    assert_eq!(show(&work), "new");
    assert_eq!(growing.map(|g| g.name.name), Some("kv".to_string()));
    let StmtKind::Run { mode, growing, .. } = stmt("run e decode (out);") else {
        panic!()
    };
    assert_eq!(
        (mode.map(|(m, _)| m), growing),
        (Some(RunMode::Decode), None)
    );
}

#[test]
fn a_hold_takes_reuse_at_admission_and_cache_in_that_order() {
    let StmtKind::Hold {
        pools,
        reuse,
        bindings,
        body,
        cache,
        lease,
    } = stmt(
        "hold kv (need) reuse (hit) at admission (hit = cachedin(kv), need = prompt - hit) { run e prefill (need); } cache (prompt) lease kv (5);",
    )
    else {
        panic!()
    };
    assert_eq!(show(&pools[0].units), "need");
    assert_eq!(reuse.as_ref().map(show).as_deref(), Some("hit"));
    let bound: Vec<(String, String)> = bindings
        .iter()
        .map(|b| (b.name.name.clone(), show(&b.value)))
        .collect();
    assert_eq!(
        bound,
        [
            ("hit".to_string(), "(cachedin kv)".to_string()),
            ("need".to_string(), "(- prompt hit)".to_string())
        ]
    );
    assert_eq!(body.stmts.len(), 1);
    assert_eq!(cache.as_ref().map(show).as_deref(), Some("prompt"));
    assert!(lease.is_some());
}

#[test]
fn drop_and_request_are_statements() {
    assert!(matches!(stmt("drop kv[0];"), StmtKind::Drop { pool } if pool.name.name == "kv"));
    assert_eq!(stmt("request;"), StmtKind::Request);
}

#[test]
fn the_serving_vocabulary_names_its_stage_three_ways() {
    let StmtKind::Serving {
        role,
        target,
        work,
        growing,
    } = stmt("prefill new growing kv;")
    else {
        panic!()
    };
    assert_eq!(
        (role, target, show(&work)),
        (Role::Prefill, TransferTarget::Role, "new".into())
    );
    assert!(growing.is_some());
    let StmtKind::Serving { target, work, .. } = stmt("decode[j] (out);") else {
        panic!()
    };
    assert!(matches!(target, TransferTarget::Indexed(i) if show(&i) == "j"));
    assert_eq!(show(&work), "out");
    let StmtKind::Serving { role, target, .. } = stmt("tool on search (2);") else {
        panic!()
    };
    assert_eq!(role, Role::Tool);
    assert!(matches!(target, TransferTarget::On(s) if s.len() == 1 && s[0].name.name == "search"));
}

#[test]
fn the_workload_takes_hidden_trace_and_a_session() {
    let p = parse_ok(
        "workload { arrive batch(2); hidden out, secret; trace \"t.csv\" ordered; session { request; } }",
    );
    let Item::Workload { items, .. } = &p.items[0] else {
        panic!()
    };
    assert!(
        matches!(&items[1], WorkloadItem::Hidden(names, _) if names.iter().map(|n| n.name.as_str()).collect::<Vec<_>>() == ["out", "secret"])
    );
    assert!(
        matches!(&items[2], WorkloadItem::Trace { path, ordered: true, .. } if path == "t.csv")
    );
    assert!(matches!(&items[3], WorkloadItem::Session(b, _) if b.stmts.len() == 1));
    let p = parse_ok("workload { trace \"a.csv\"; }");
    let Item::Workload { items, .. } = &p.items[0] else {
        panic!()
    };
    assert!(matches!(
        &items[0],
        WorkloadItem::Trace { ordered: false, .. }
    ));
}

#[test]
fn server_and_use_are_items() {
    let p = parse_ok("use \"lib/vllm.sq\"; server { prefill new; decode out; }");
    assert!(matches!(&p.items[0], Item::Use { path, .. } if path == "lib/vllm.sq"));
    assert!(matches!(&p.items[1], Item::Server { body, .. } if body.stmts.len() == 2));
    assert!(one_error("use lib;").message.contains("in quotes"));
}

#[test]
fn a_hold_with_an_error_in_its_clauses_still_parses_its_body() {
    let (p, diags) = parse("session { hold p (1) reuse (2) { set x = ; } cache (3) }");
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert!(diags[0].message.starts_with("expected an expression"));
    let Item::Session { body, .. } = &p.items[0] else {
        panic!()
    };
    assert!(matches!(body.stmts[0].kind, StmtKind::Hold { .. }));
}
