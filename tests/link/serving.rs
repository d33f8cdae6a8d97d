//! The serving engine's constructs, linked (spec §8): the IR each one
//! becomes, and the refusals of §8.10 with their rule, key words and place.

use super::*;
use serq::ir::{Ctx, Evict, Preempt, RunMode, Serve, StageKind, Step};

/// The step stage of a linked program's first stage.
fn step(p: &ir::Program, i: usize) -> &Step {
    match &p.stages[i].kind {
        StageKind::Step(s) => s,
        other => panic!("not a step stage: {other:?}"),
    }
}

/// The one diagnostic of a refused program, with its rule checked.
fn refused_for(src: &str, rule: &str, words: &[&str]) -> Diagnostic {
    let diags = refused(src, words);
    let d = diags
        .iter()
        .find(|d| d.rule == rule)
        .unwrap_or_else(|| panic!("no `{rule}` diagnostic: {diags:#?}"));
    d.clone()
}

#[test]
fn a_step_stage_links_with_its_defaults_and_options() {
    let p = linked(&with_b(
        "pool kv { cap 64; block 4; }
         stage e : step { budget 8; cost 1 + tokens / 4; chunk 2; memory kv; serve decode first; }
         stage f : step { cost 1; }
         session { hold kv (4) { run e prefill (4) growing kv; run e decode (2) growing kv; } run f prefill (1); }",
    ));
    let e = step(&p, 0);
    assert_eq!(e.budget, Expr::Num(8.0));
    assert_eq!(e.chunk, Expr::Num(2.0));
    assert_eq!(e.memory, Some(0));
    assert!(matches!(&e.cost, Expr::Binary(ir::BinOp::Add, _, b)
        if matches!(&**b, Expr::Binary(ir::BinOp::Div, t, _) if **t == Expr::Ctx(Ctx::Tokens))));
    // `serve decode first` is `serve by (decoding ? 0 : 1)` (docs/ir.md).
    assert_eq!(
        e.serve,
        Serve::By(vec![Expr::Cond(
            Box::new(Expr::Ctx(Ctx::Decoding)),
            Box::new(Expr::Num(0.0)),
            Box::new(Expr::Num(1.0))
        )])
    );
    // Defaults: budget inf, chunk 0 (no cap), serve admission (no keys), no memory.
    let f = step(&p, 1);
    assert_eq!(
        (&f.budget, &f.chunk, &f.serve, f.memory),
        (
            &Expr::Num(f64::INFINITY),
            &Expr::Num(0.0),
            &Serve::By(vec![]),
            None
        )
    );
    let Stmt::Hold { body, .. } = &p.blocks[2][0] else {
        panic!()
    };
    let modes: Vec<(RunMode, bool)> = p.blocks[*body]
        .iter()
        .map(|s| match s {
            Stmt::Run { mode, growing, .. } => (*mode, growing.is_some()),
            s => panic!("{s:?}"),
        })
        .collect();
    assert_eq!(modes, [(RunMode::Prefill, true), (RunMode::Decode, true)]);
}

#[test]
fn serve_exclusive_prefill_and_serve_by_keys_link() {
    let p = linked(&with_b(
        "stage x : step { cost 1; serve exclusive prefill; }
         stage y : step { cost 1; serve by (remaining, -admission); }
         session { run x prefill (1); run y decode (1); }",
    ));
    assert_eq!(step(&p, 0).serve, Serve::ExclusivePrefill);
    let Serve::By(keys) = &step(&p, 1).serve else {
        panic!()
    };
    assert_eq!(keys[0], Expr::Ctx(Ctx::Remaining));
}

#[test]
fn pool_options_link_to_the_pools_members() {
    let p = linked(&with_b(
        "pool kv[2] { cap 10; block 2.5; evict by (age, -size); preempt lifo; queue by (waited); admit via e; }
         pool host { cap 100; }
         stage e[2] : step { cost 1; memory kv; }
         stage pcie : delay;
         pool spilled { cap 4; spill host via pcie (size / 2) when (size > 2); }
         session { hold kv[0] (1) { run e[0] prefill (1); } }",
    ));
    for (i, kv) in p.pools[..2].iter().enumerate() {
        assert_eq!((kv.block, kv.preempt), (Some(2.5), Preempt::Lifo));
        assert!(matches!(&kv.evict, Evict::By(k) if k[0] == Expr::Ctx(Ctx::Age)));
        assert_eq!(kv.queue, Some(vec![Expr::Ctx(Ctx::Waited)]));
        // Families of one size pair member for member: kv[i] is admitted by e[i].
        assert_eq!(kv.admit_via, Some(i));
        assert_eq!(step(&p, i).memory, Some(i));
    }
    let spill = p.pools[3].spill.as_ref().expect("spilled has a spill");
    // pools: kv[0], kv[1], host, spilled; stages: e[0], e[1], pcie.
    assert_eq!((spill.to, spill.via), (2, 2));
    assert_eq!(spill.work.constant_value(), None);
}

#[test]
fn one_engine_serves_every_member_of_a_family() {
    let p = linked(&with_b(
        "pool q[3] { admit via e; } pool kv {} stage e : step { cost 1; memory kv; }
         session { hold q[0] (1) { run e prefill (1); } }",
    ));
    assert!(p.pools[..3].iter().all(|q| q.admit_via == Some(0)));
    // One pool for a family is fine, a family of three for one engine is not.
    refused_for(
        &with_b(
            "pool kv[3] {} stage e : step { cost 1; memory kv; } session { run e prefill (1); }",
        ),
        "family-size",
        &[
            "`e`: `memory` names a family of 3",
            "one for one, or one for all",
        ],
    );
}

#[test]
fn blocksize_folds_to_the_pools_block() {
    let p = linked(&with_b(
        "pool kv { block 16; } stage d : delay; session { run d (2 * blocksize(kv)); }",
    ));
    let Stmt::Run { work, .. } = &p.blocks[2][0] else {
        panic!()
    };
    // 2 * blocksize(kv) = 2 * 16, folded to numbers only where constant: the
    // call itself becomes the number 16.
    assert_eq!(work.constant_value(), Some(32.0));
    let d = refused_for(
        &with_b("pool p {} stage d : delay; session { run d (blocksize(p)); }"),
        "blocksize",
        &["`blocksize(p)`", "no `block`"],
    );
    assert!(d.help.is_some());
}

#[test]
fn the_mode_rule_needs_a_mode_on_a_step_stage_and_forbids_one_elsewhere() {
    for src in [
        "stage e : step { cost 1; } session { run e (1); }",
        "stage d : delay; session { run d prefill (1); }",
    ] {
        refused_for(
            &with_b(src),
            "mode",
            &["`prefill`/`decode` are required on a step stage and not allowed elsewhere"],
        );
    }
    refused_for(
        &with_b("pool p {} stage d : delay; session { hold p (1) { run d (1) growing p; } }"),
        "growing",
        &["growing", "step"],
    );
    refused_for(
        &with_b("pool p {} stage e : step { cost 1; } session { run e prefill (1) growing p; }"),
        "hold-scope",
        &["`growing p` outside a hold of `p`"],
    );
}

#[test]
fn step_and_pool_options_given_twice_or_unknown_are_refused() {
    refused_for(
        &with_b("stage e : step { cost 1; cost 2; } session { run e prefill (1); }"),
        "twice",
        &["stage `e`: `cost` is given twice"],
    );
    refused_for(
        &with_b(
            "stage e : step { cost 1; serve admission; serve by (remaining); } session { run e prefill (1); }",
        ),
        "twice",
        &["serve", "twice"],
    );
    let d = refused_for(
        &with_b("stage e : step { cost 1; chunck 2; } session { run e prefill (1); }"),
        "unknown-option",
        &["unknown step option `chunck`"],
    );
    assert!(d.help.unwrap().contains("`chunk`"));
    refused_for(
        &with_b("pool p { cap 4; evict lru; evict by (age); }"),
        "twice",
        &["pool `p`: `evict` is given twice"],
    );
    refused_for(
        &with_b("stage e : step { budget 4; } session { run e prefill (1); }"),
        "step-cost",
        &["step stage needs `cost`"],
    );
}

#[test]
fn a_constant_budget_must_be_above_zero_and_a_computed_one_may_be_anything() {
    for b in ["0", "-1", "2 - 2"] {
        refused_for(
            &with_b(&format!(
                "stage e : step {{ cost 1; budget {b}; }} session {{ run e prefill (1); }}"
            )),
            "budget",
            &["stage `e`", "budget", "above 0"],
        );
    }
    // 0.1.0 schedules nothing while `4 * decoders` is 0 (spec §10 Q16).
    linked(&with_b(
        "stage e : step { cost 1; budget 4 * decoders; } session { run e prefill (1); }",
    ));
}

#[test]
fn admit_via_a_stage_that_is_not_a_step_stage_is_refused() {
    refused_for(
        &with_b("pool p { admit via d; } stage d : delay; session { hold p (1) { run d (1); } }"),
        "admit-via",
        &["pool `p`", "`admit via d`", "not a step stage"],
    );
}

#[test]
fn a_spill_chain_that_comes_back_to_a_pool_is_refused() {
    // pyserq 0.1.0 loops for ever once such a chain spills (checked on a
    // pool spilling into itself and on a -> b -> a, both full).
    let session = "stage d : delay; session { hold a (6) { run d (1); } cache (6); }";
    refused_for(
        &with_b(&format!(
            "pool a {{ cap 10; spill a via d (1) when (1); }} {session}"
        )),
        "spill-cycle",
        &["pool `a` spills into itself"],
    );
    refused_for(
        &with_b(&format!(
            "pool a {{ cap 10; spill b via d (1) when (size > 1); }} \
             pool b {{ cap 4; spill c via d (1) when (1); }} \
             pool c {{ cap 4; spill b via d (1) when (1); }} {session}"
        )),
        "spill-cycle",
        &["pool `b` spills in a cycle", "`b` -> `c` -> `b`"],
    );
    // A family's members all spill to the target family's first member.
    refused_for(
        &with_b(
            "pool a[2] { cap 10; spill a via d (1) when (1); } stage d : delay; session { hold a[1] (6) { run d (1); } cache (6); }",
        ),
        "spill-cycle",
        &["pool `a` spills into itself"],
    );
    // A chain down the tiers links, and so does a clause that never spills.
    linked(&with_b(&format!(
        "pool a {{ cap 10; spill b via d (1) when (1); }} pool b {{ cap 4; spill c via d (1) when (1); }} \
         pool c {{ cap 4; }} {session}"
    )));
    linked(&with_b(&format!(
        "pool a {{ cap 10; spill a via d (1) when (0); }} {session}"
    )));
}

#[test]
fn a_spill_via_a_step_stage_is_refused() {
    // pyserq 0.1.0 panics ("entered unreachable code") when it spills.
    refused_for(
        &with_b(
            "pool kv { cap 10; spill host via e (1) when (1); } pool host { cap 100; } stage e : step { cost 1; } stage d : delay; session { hold kv (6) { run d (1); } cache (6); }",
        ),
        "spill-via",
        &["pool `kv`", "via e", "step stage"],
    );
}

#[test]
fn context_variables_are_read_only_at_their_moment() {
    let cases = [
        (
            "stage e : step { cost 1; budget tokens; }",
            "`tokens` is read in a step stage's budget or chunk",
        ),
        (
            "stage e : step { cost 1; serve by (tokens); }",
            "`tokens` is read in a step stage's serve keys",
        ),
        (
            "stage e : step { cost remaining; }",
            "`remaining` is read in a step stage's cost",
        ),
        (
            "pool p { queue by (size); }",
            "`size` is read in a pool's queue keys",
        ),
        (
            "pool p { evict by (waited); }",
            "`waited` is read in an eviction key or spill clause",
        ),
        (
            "stage s : ps(tokens);",
            "`tokens` is read in a ps stage's capacity",
        ),
        (
            "session { observe n = residents; }",
            "`residents` is read in a session statement",
        ),
    ];
    for (src, words) in cases {
        refused_for(&with_b(src), "moment", &[words, "exists only in"]);
    }
    // Keywords are contextual: outside its moment a context word may be an attribute.
    linked(&with_b(
        "stage e : step { cost tokens; } session { set tokens = 3; observe t = tokens; run e prefill (tokens); }",
    ));
}

#[test]
fn the_old_names_of_step_totals_get_a_rename_hint() {
    for (old, new) in [
        ("kvb", "kv_decode"),
        ("kvp", "kv_prefill"),
        ("ntok", "tokens"),
        ("ndec", "decoders"),
        ("npre", "prefilled"),
        ("nres", "residents"),
        ("attn", "attention"),
    ] {
        refused_for(
            &with_b(&format!(
                "stage e : step {{ cost {old}; }} session {{ run e prefill (1); }}"
            )),
            "renamed",
            &[&format!("the context variable `{old}` is now `{new}`")],
        );
    }
    refused_for(
        &with_b("pool p { evict by (queued); }"),
        "renamed",
        &["`queued` is now `waiting`"],
    );
}

#[test]
fn draws_are_refused_in_queue_and_serve_keys_and_allowed_in_eviction_keys() {
    refused_for(
        &with_b("pool p { queue by (~exp(1)); }"),
        "may-not-draw",
        &["pool `p`", "queue key may not draw"],
    );
    refused_for(
        &with_b(
            "stage e : step { cost 1; serve by (~uniform(0, 1)); } session { run e prefill (1); }",
        ),
        "may-not-draw",
        &["stage `e`", "serve key may not draw"],
    );
    linked(&with_b(
        "pool p { evict by (~exp(1)); spill q via l (~exp(1)) when (~bernoulli(0.5)); } pool q {} stage l : delay;",
    ));
}

#[test]
fn at_admission_bindings_are_substituted_into_the_header() {
    let p = linked(
        "pool kv { cap 40; } stage d : delay;
         workload { arrive batch(1); init { set prompt = 10; } }
         session { hold kv (need) reuse (hit) at admission (hit = cachedin(kv), need = prompt - hit + 2) { run d (1); } cache (prompt) }
         run { horizon 10; }",
    );
    let Stmt::Hold {
        pools,
        reuse,
        body,
        cache,
        ..
    } = &p.blocks[2][0]
    else {
        panic!()
    };
    let cachedin = Expr::Call(ir::Fun::CachedIn, vec![ir::Arg::Pool(cref(0, 1, None))]);
    assert_eq!(reuse.as_ref(), Some(&cachedin));
    // need = prompt - cachedin(kv) + 2, the earlier binding substituted.
    let prompt = Expr::Attr(9);
    let need = Expr::Binary(
        ir::BinOp::Add,
        Box::new(Expr::Binary(
            ir::BinOp::Sub,
            Box::new(prompt.clone()),
            Box::new(cachedin),
        )),
        Box::new(Expr::Num(2.0)),
    );
    assert_eq!(pools[0].1, need);
    assert_eq!(cache.as_ref(), Some(&prompt));
    // The body reads no binding: nothing is set at its top.
    assert_eq!(p.blocks[*body].len(), 1);
}

#[test]
fn a_binding_the_body_reads_is_set_at_the_top_of_the_body() {
    let p = linked(&with_b(
        "pool kv {} stage d : delay; session { hold kv (w) at admission (w = serial * 2) { observe w = w; run d (1); } }",
    ));
    assert_eq!(p.attrs[9], "w");
    let Stmt::Hold { body, .. } = &p.blocks[2][0] else {
        panic!()
    };
    assert!(
        matches!(&p.blocks[*body][0], Stmt::Set(9, Expr::Binary(ir::BinOp::Mul, a, _)) if **a == Expr::Attr(1))
    );
}

#[test]
fn at_admission_bindings_follow_their_rules() {
    let hold = |bind: &str, body: &str| {
        with_b(&format!(
            "pool p {{}} stage d : delay; session {{ hold p (a) at admission ({bind}) {{ {body} run d (1); }} }}"
        ))
    };
    let d = refused_for(
        &hold("a = ~exp(1)", ""),
        "may-not-draw",
        &["`a` draws", "twice"],
    );
    assert!(d.help.is_some());
    refused_for(
        &hold("a = b + 1, b = 2", ""),
        "binding-order",
        &["`a` reads `b`, which is bound after it"],
    );
    refused_for(&hold("a = 1, a = 2", ""), "twice", &["`a` is bound twice"]);
    for live in ["used(p)", "now", "cached", "cachedin(p)"] {
        refused_for(
            &hold(&format!("a = {live}"), "observe x = a;"),
            "binding-live",
            &["the body reads `a`", "reads only attributes and constants"],
        );
    }
    // Read live state only in the header, and the body may read anything else.
    linked(&hold("a = used(p) + 1", "observe x = cached;"));
}

#[test]
fn a_nested_hold_reads_an_outer_binding_through_its_substituted_header() {
    // pyserq 0.1.0: a hold nested in the body reads the outer binding `c`
    // only through its header with its own bindings substituted and the
    // values of the bindings its body reads; one that binds `c` again
    // reads its own in its body. So an outer `c` of live state links here.
    let outer = |inner: &str| {
        with_b(&format!(
            "pool a {{}} pool b {{}} stage d : delay; session {{ hold a (1) at admission (c = cachedin(a)) {{ {inner} }} }}"
        ))
    };
    for inner in [
        "hold b (1 + c) at admission (c = 2) { run d (1); }",
        "hold b (1) at admission (c = 2) { run d (c); observe x = c; }",
        "hold b (1) at admission (c = c + 1) { run d (1); }",
        "hold b (1) at admission (u = c) { run d (1); }",
        "hold b (1) at admission (c = 2) { hold b (c) { run d (1); } } cache (c)",
    ] {
        linked(&outer(inner));
    }
    for inner in [
        "hold b (1 + c) { run d (1); }",
        "hold b (1 + c) at admission (c = c + 1) { run d (1); }",
        "hold b (1 + u) at admission (u = c) { run d (1); }",
        "hold b (1) at admission (u = c) { run d (1); } cache (u)",
        "hold b (1) at admission (c = 1, u = c) { run d (1); } observe y = c;",
    ] {
        refused_for(&outer(inner), "binding-live", &["the body reads `c`"]);
    }
    // A binding the body reads is set from its value: it may not read
    // itself, even where an outer binding would give it a value.
    refused_for(
        &outer("hold b (1) at admission (c = c * 2) { run d (c); }"),
        "binding-self",
        &["the binding `c` reads itself"],
    );
}

#[test]
fn a_binding_the_body_reads_may_not_name_an_attribute() {
    // pyserq 0.1.0 refuses each: "the body reads `n`, which is also an
    // attribute the program sets (the scheduler sets, for a built-in): the
    // body would not say which it means", wherever the attribute is set
    // (later, in `init`, in the body itself, by `choose`).
    let hold = |before: &str, body: &str| {
        with_b(&format!(
            "pool p {{ cap 40; }} session {{ {before} hold p (n) at admission (n = 5) {{ observe u = n; {body} }} }}"
        ))
    };
    for (before, body) in [
        ("set n = 3;", ""),
        ("", "set n = 7;"),
        ("choose n in 3 by (-n);", ""),
    ] {
        let d = refused_for(
            &hold(before, body),
            "binding-attribute",
            &["the body reads `n`", "attribute the program sets"],
        );
        assert!(d.help.is_some());
    }
    refused_for(
        &with_b(
            "pool p { cap 40; } session { hold p (out) at admission (out = 5) { observe u = out; } }",
        ),
        "binding-attribute",
        &["the body reads `out`", "built-in", "scheduler"],
    );
    // Not read by the body, the binding only names the header's value (as
    // in 0.1.0); two holds may bind one name their bodies read.
    linked(&with_b(
        "pool p { cap 40; } session { set n = 3; hold p (n) at admission (n = 5) { observe v = used(p); } observe w = n; }",
    ));
    linked(&with_b(
        "pool p { cap 40; } session { hold p (m) at admission (m = 5) { observe u = m; } hold p (m) at admission (m = 6) { observe v = m; } }",
    ));
}

#[test]
fn a_binding_is_read_only_in_the_bodies_of_holds_that_bind_it() {
    // pyserq 0.1.0 refuses each: "`m` is read outside the body of the hold
    // that binds it" (before or after the hold, another hold's body,
    // `init`, a queue, eviction or serve key).
    let bind = "hold p (m) at admission (m = 5) { observe u = m; hold p (m) { observe x = 1; } }";
    for (opts, init, before, after) in [
        ("", "", "observe w = m;", ""),
        ("", "", "", "observe w = m;"),
        ("", "", "", "hold p (1) { observe w = m; }"),
        ("", "init { set q = m; }", "", ""),
        ("queue by (m);", "", "", ""),
        ("evict by (m);", "", "", ""),
    ] {
        let src = format!(
            "pool p {{ cap 40; {opts} }} workload {{ arrive batch(1); {init} }} session {{ {before} {bind} {after} }} run {{ horizon 10; }}"
        );
        let d = refused_for(
            &src,
            "binding-scope",
            &["`m` is read outside the body of the hold that binds it"],
        );
        assert!(d.help.is_some());
    }
    // The inner hold's header above is inside the body; so is a nested
    // binding reading the outer one.
    linked(&with_b(&format!(
        "pool p {{ cap 40; }} session {{ {bind} }}"
    )));
    linked(&with_b(
        "pool p { cap 40; } session { hold p (m) at admission (m = 5) { hold p (k) at admission (k = m + 1) { observe v = k + m; } } }",
    ));
}

#[test]
fn a_set_of_live_state_read_by_a_later_header_is_refused() {
    let d = refused_for(
        &with_b(
            "pool p { cap 10; } stage d : delay; session { set room = free(p); hold p (room / 2) { run d (1); } }",
        ),
        "set-then-header",
        &["`room` reads free(p)", "header of a hold on `p`"],
    );
    assert!(d.help.unwrap().contains("at admission (room = …)"));
    // As in 0.1.0 (each line checked against pyserq 0.1.0): any observable
    // counts, of any pool or stage; the header is the units, reserves,
    // reuse and cache, bindings substituted; a branch's block sees the
    // sets before it, a hold's body does not, and an inner set does not
    // change what the outer block sees.
    let lint = |session: &str| {
        with_b(&format!(
            "pool p {{ cap 10; }} pool q {{}} stage d : fifo; session {{ {session} }}"
        ))
    };
    for refused_session in [
        "set b = used(q); hold p (b) { run d (1); }",
        "set b = queue(d); hold p (1) reserve (b) { run d (1); }",
        "set b = est_wait(d); hold p (1) { run d (1); } cache (b)",
        "set b = used(p); hold p (x) at admission (x = b) { run d (1); }",
        "set b = used(p); branch (1) { hold p (b) { run d (1); } }",
        "set b = used(p); hold p (1) { set b = 1; run d (1); } hold p (b) { run d (1); }",
    ] {
        refused_for(
            &lint(refused_session),
            "set-then-header",
            &["reads", "header"],
        );
    }
    for linked_session in [
        "set b = now; hold p (b) { run d (1); }",
        "set b = used(p); set b = 2; hold p (b) { run d (1); }",
        "set b = used(p); hold p (1) { run d (1); } lease p (b);",
        "set b = used(p); hold p (1) at admission (x = b) { run d (1); }",
        "branch (serial == 0) { set b = used(p); } hold p (b) { run d (1); }",
        "set b = used(p); hold p (1) { hold p (b) { run d (1); } }",
    ] {
        linked(&lint(linked_session));
    }
}

#[test]
fn the_serving_vocabulary_finds_the_stage_that_plays_its_role() {
    let p = linked(&with_b(
        "pool kv {} stage prefill : delay; stage e : step { cost 1; } stage tool : delay;
         session { prefill 3; hold kv (1) { decode (2) growing kv; } tool 1; prefill on e (4); decode[0] 1; }",
    ));
    let runs: Vec<(usize, RunMode)> = p
        .blocks
        .iter()
        .flatten()
        .filter_map(|s| match s {
            Stmt::Run { stage, mode, .. } => Some((stage.base, *mode)),
            _ => None,
        })
        .collect();
    // The delay named `prefill` plays prefill (plain); the one step stage
    // plays decode (with its mode); `on e` names the stage (mode added).
    assert_eq!(
        runs,
        [
            (0, RunMode::Plain),
            (2, RunMode::Plain),
            (1, RunMode::Prefill),
            (1, RunMode::Decode),
            (1, RunMode::Decode),
        ]
    );
}

#[test]
fn the_serving_vocabulary_refuses_no_role_and_several() {
    refused_for(
        &with_b("stage d : delay; session { tool 1; }"),
        "serving-role",
        &["no stage declared above plays `tool`"],
    );
    refused_for(
        &with_b("stage a : step { cost 1; } stage b : step { cost 1; } session { decode 1; }"),
        "serving-role",
        &["several stages play `decode` (a, b)"],
    );
    // Declared below the statement does not count.
    refused_for(
        &with_b("session { prefill 1; } stage e : step { cost 1; }"),
        "serving-role",
        &["no stage declared above plays `prefill`"],
    );
}

#[test]
fn in_a_def_the_stages_above_are_those_above_the_use() {
    let p = linked(&with_b(
        "def serve_one(w) { prefill w; } stage e : step { cost 1; } session { serve_one(3); }",
    ));
    assert!(matches!(
        &p.blocks[2][0],
        Stmt::Run {
            mode: RunMode::Prefill,
            ..
        }
    ));
}

#[test]
fn drop_links_to_its_pool() {
    let p = linked(&with_b("pool kv {} session { drop kv; }"));
    assert_eq!(p.blocks[2][0], Stmt::Drop(cref(0, 1, None)));
}

#[test]
fn the_serving_conformance_cases_compile_or_are_refused_for_their_rule() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/t2");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/conformance/t2 holds the serving cases")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "sq"))
        .collect();
    paths.sort();
    assert!(paths.len() >= 50, "{} cases", paths.len());
    let mut failures = Vec::new();
    for path in &paths {
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        let expected: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(path.with_extension("expected.json")).unwrap(),
        )
        .unwrap();
        // From the file, so `use` and the trace resolve beside the case.
        let result = serq::compile_file(path, &Overrides::default());
        if expected["error"] == true {
            let Err(e) = result else {
                failures.push(format!("{name}: compiles, but the reference refuses it"));
                continue;
            };
            let text = e.to_string().to_lowercase();
            let words: Vec<String> = expected["message_contains"]
                .as_array()
                .unwrap()
                .iter()
                .map(|w| w.as_str().unwrap().to_lowercase())
                .collect();
            if text.contains("not supported") || words.iter().any(|w| !text.contains(w)) {
                failures.push(format!("{name}: want {words:?}, got {text}"));
            }
        } else if let Err(e) = result {
            failures.push(format!("{name}: {e}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_hidden_attribute_may_not_be_read_by_the_scheduler() {
    let program = |decls: &str, session: &str| {
        format!(
            "pool kv {{ cap 10; }} stage d : delay; {decls}
             workload {{ arrive batch(1); hidden h; init {{ set h = 2; }} }}
             session {{ {session} }} run {{ horizon 10; }}"
        )
    };
    let hold = "hold kv (1) { run d (1); }";
    for (decls, session) in [
        ("", "hold kv (h) { run d (1); }"),
        ("", "hold kv (1) reserve (h) { run d (1); }"),
        ("", "hold kv (1) reuse (h) { run d (1); }"),
        ("", "hold kv (x) at admission (x = h + 1) { run d (1); }"),
        ("pool q { queue by (h); }", hold),
        ("pool q { evict by (h); }", hold),
        ("pool q { spill kv via d (h) when (1); }", hold),
        ("stage e : step { cost 1; budget h; }", "run e prefill (1);"),
        ("stage e : step { cost h; }", "run e prefill (1);"),
        ("stage e : step { cost 1; chunk h; }", "run e prefill (1);"),
        (
            "stage e : step { cost 1; serve by (h); }",
            "run e prefill (1);",
        ),
    ] {
        refused_for(
            &program(decls, session),
            "hidden",
            &["`h` is hidden from the scheduler"],
        );
    }
    // The session itself may read it: statements, work, branch, choose,
    // cache, a lease's length, and a `set` a header then reads.
    linked(&program(
        "",
        "observe o = h; run d (h); branch (h == 2) { end; } choose j in 2 by (h - j);
         hold kv (1) { run d (1); } cache (h) lease kv (h);
         set y = h; hold kv (y) { run d (1); }",
    ));
}

#[test]
fn hidden_names_an_attribute_something_sets_once() {
    let with = |hidden: &str| {
        format!(
            "stage d : delay; workload {{ arrive batch(1); hidden {hidden}; init {{ set a = 1; }} }}
             session {{ run d (1); }} run {{ horizon 10; }}"
        )
    };
    let p = linked(&with("a, out"));
    // a is slot 9, out the built-in slot 4.
    assert_eq!(p.hidden, [9, 4]);
    refused_for(
        &with("computed"),
        "hidden",
        &["hidden `computed`", "scheduler sets it"],
    );
    refused_for(
        &with("nobody"),
        "hidden",
        &["hidden `nobody`", "nothing sets or chooses it"],
    );
    refused_for(&with("a, a"), "twice", &["hidden twice"]);
}

#[test]
fn request_splices_the_server_at_every_request() {
    let p = linked(
        "stage d : delay;
         workload { arrive batch(1); session { request; branch (1) { request; } } }
         server { run d (1); observe served = now; }
         run { horizon 10; }",
    );
    // The session is the first request's two statements, then the branch,
    // whose block holds the second request's; one observation for both.
    assert_eq!(p.observes, ["served"]);
    assert_eq!(p.blocks[2].len(), 3);
    let Stmt::Branch(_, then, _) = &p.blocks[2][2] else {
        panic!("{:?}", p.blocks[2])
    };
    assert_eq!(p.blocks[*then].len(), 2);
}

#[test]
fn server_and_request_follow_their_rules() {
    let wl =
        |session: &str| format!("workload {{ arrive batch(1); {session} }} run {{ horizon 10; }}");
    let cases = [
        (
            format!("stage d : delay; {}", wl("session { request; }")),
            "a `session` inside `workload` is written against a `server` block",
        ),
        (
            format!("stage d : delay; server {{ run d (1); }} {}", wl("")),
            "a `server` block needs a `session` inside `workload`",
        ),
        (
            format!(
                "stage d : delay; server {{ run d (1); end; }} {}",
                wl("session { request; }")
            ),
            "a `server` may not contain `end`",
        ),
        (
            format!(
                "stage d : delay; server {{ turn; }} {}",
                wl("session { request; }")
            ),
            "a `server` may not contain `turn`",
        ),
        (
            format!(
                "stage d : delay; server {{ run d (1); }} session {{ run d (1); }} {}",
                wl("session { request; }")
            ),
            "either a top-level `session` or a `session` inside `workload`",
        ),
        (
            format!("stage d : delay; session {{ request; }} {}", wl("")),
            "`request` is only allowed in the workload's `session`",
        ),
        (
            format!(
                "stage d : delay; server {{ run d (1); }} server {{ run d (2); }} {}",
                wl("session { request; }")
            ),
            "duplicate server",
        ),
        (
            format!(
                "stage d : delay; server {{ run d (1); }} {}",
                wl("session { run d (1); }")
            ),
            "never does",
        ),
    ];
    for (src, words) in cases {
        refused(&src, &[words]);
    }
    // A request inside a statement def used by the workload's session is spliced too.
    linked(&format!(
        "stage d : delay; def ask() {{ request; }} server {{ run d (1); }} {}",
        wl("session { ask(); }")
    ));
}
