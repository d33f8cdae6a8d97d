//! The linker, end to end from source text: IR fields, sugar, and the
//! diagnostics' key words for every link rule.

use serq::ir::{self, Arrival, CRef, Expr, Stmt};
use serq::link::{Overrides, link};
use serq::syntax::{Diagnostic, parse};

/// Parses and links (what `serq check` does): the parser's diagnostics, or
/// the linker's result.
fn try_link(src: &str) -> Result<ir::Program, Vec<Diagnostic>> {
    let (ast, diags) = parse(src);
    if !diags.is_empty() {
        return Err(diags);
    }
    link(&ast, src, &Overrides::default())
}

fn linked(src: &str) -> ir::Program {
    match try_link(src) {
        Ok(p) => p,
        Err(d) => panic!("link errors in {src:?}: {:#?}", d),
    }
}

/// Asserts the program is refused with a message containing every key word.
fn refused(src: &str, words: &[&str]) -> Vec<Diagnostic> {
    let diags = match try_link(src) {
        Ok(_) => panic!("linked, but should be refused: {src}"),
        Err(d) => d,
    };
    let all: Vec<String> = diags
        .iter()
        .map(|d| format!("{} {}", d.message, d.help.clone().unwrap_or_default()))
        .collect();
    assert!(
        all.iter().any(|m| words
            .iter()
            .all(|w| m.to_lowercase().contains(&w.to_lowercase()))),
        "no message has {words:?}: {all:#?}"
    );
    diags
}

const B: &str = " workload { arrive batch(1); } run { horizon 10; }";

fn with_b(src: &str) -> String {
    format!("{src}{B}")
}

#[test]
fn conformance_cases_link_or_are_refused_with_their_key_words() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/conformance/cases");
    let dir = if dir.exists() {
        dir
    } else {
        std::path::PathBuf::from("/work/shared/conformance/cases")
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return;
    };
    let mut names: Vec<_> = entries.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    names.sort();
    let mut failures = Vec::new();
    for path in names
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "sq"))
    {
        let src = std::fs::read_to_string(path).unwrap();
        let expected = std::fs::read_to_string(path.with_extension("expected.json")).unwrap();
        let expected: serde_json::Value = serde_json::from_str(&expected).unwrap();
        let (ast, mut diags) = parse(&src);
        if diags.is_empty()
            && let Err(d) = link(&ast, &src, &Overrides::default())
        {
            diags = d;
        }
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if expected.get("error").and_then(|e| e.as_bool()) == Some(true) {
            let text: String = diags
                .iter()
                .map(|d| d.message.to_lowercase() + "\n")
                .collect();
            let words: Vec<String> = expected["message_contains"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|w| w.as_str().unwrap().to_lowercase())
                        .collect()
                })
                .unwrap_or_default();
            if diags.is_empty() || words.iter().any(|w| !text.contains(w)) {
                failures.push(format!("{name}: want {words:?}, got {text:?}"));
            }
        } else if !diags.is_empty() {
            failures.push(format!(
                "{name}: {:?}",
                diags.iter().map(|d| &d.message).collect::<Vec<_>>()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn cref(base: usize, count: usize, index: Option<Expr>) -> CRef {
    CRef { base, count, index }
}

// ---- IR shape -------------------------------------------------------------

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
        &["arrivals", "poisson or renewal"],
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

// ---- names ------------------------------------------------------------------

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
        &["present", "ps capacity"],
    );
    let d = refused(&with_b("stage s : ps(n);"), &["unknown name `n`"]);
    assert!(d[0].help.as_deref().unwrap_or("").contains("present"));
    refused(
        &with_b("session { set x = tokens; }"),
        &["`tokens`", "step stage"],
    );
}

// ---- defs -------------------------------------------------------------------

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

// ---- statements and sugar ---------------------------------------------------

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
        &with_b("pool p { block 4; }"),
        &["block", "not supported yet"],
    );
}

// ---- flows and share ----------------------------------------------------------

#[test]
fn flow_rules_of_the_seed() {
    refused(
        &with_b("stage a:ps(1); stage b:ps(1); session { run a, b (1); }"),
        &["share"],
    );
    refused(
        &with_b("stage a:ps(1); share maxmin; session { run a (1); }"),
        &["share", "without"],
    );
    refused(
        &with_b("stage a:ps(1); stage b:fifo; share maxmin; session { run a, b (1); }"),
        &["stage `b`", "ps", "above 0"],
    );
    refused(
        &with_b("stage a:ps(1); stage b:ps(0); share maxmin; session { run a, b (1); }"),
        &["stage `b`", "above 0"],
    );
    refused(
        &with_b(
            "stage a:ps(1); stage b:ps(min(present,2)); share maxmin; session { run a, b (1); }",
        ),
        &["stage `b`", "constant"],
    );
    refused(
        &with_b("stage a[2]:ps(1); share maxmin; session { run a[0], a[1] (1); }"),
        &["stage `a`", "twice"],
    );
    refused(
        &with_b(
            "stage a:ps(1); stage b:ps(1); share maxmin; share bottleneck; session { run a, b (1); }",
        ),
        &["share", "twice"],
    );
    refused(
        &with_b("stage a:ps(1); share fair; session { run a (1); }"),
        &["`share` takes `maxmin` or `bottleneck`, found `fair`"],
    );
    let p = linked(&with_b(
        "let C = 4; stage a:ps(1+1); stage b:ps(C); share bottleneck; session { run a, b (1); run a (1); }",
    ));
    assert_eq!(p.share, Some(ir::Share::Bottleneck));
    assert_eq!(p.shared_stages(), vec![true, true]);
}

#[test]
fn validator_faults_point_at_the_statement() {
    let src = with_b("stage a[2] : delay;\nsession {\n  run a[7] (1);\n}");
    let d = refused(&src, &["index 7"]);
    assert_eq!(
        &src[d[0].span.start as usize..d[0].span.end as usize],
        "run a[7] (1);"
    );
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

#[test]
fn a_validator_fault_renders_with_file_line_column_and_caret() {
    let src = "stage A : ps(1);\nstage C : fifo;\nshare maxmin;\nsession {\n  run A, C (1);\n}\nworkload { arrive batch(1); } run { horizon 5; }";
    let d = refused(src, &["stage `C`", "`fifo`", "ps"]);
    let text = serq::syntax::render(&d, "egress.sq", src);
    assert!(text.contains("egress.sq:5:3"), "{text}");
    assert!(text.contains("run A, C (1);"), "{text}");
    assert!(text.contains("help:"), "{text}");
}
