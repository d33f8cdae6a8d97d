//! Runs over several stages (flows) and the `share` policies: every value
//! the seed (bandwidth-sharing RFC) derives by hand, each derivation in a
//! comment, and the link rules for shared stages.

use serq::{Overrides, Report};

fn compile(src: &str) -> serq::ValidProgram {
    match serq::compile_source(src, &Overrides::default()) {
        Ok(p) => p,
        Err(d) => panic!("does not link: {d:?}"),
    }
}

fn run(src: &str) -> Report {
    serq::run(&compile(src)).expect("runs")
}

fn samples(r: &Report, name: &str) -> Vec<f64> {
    let mut s = r
        .observes
        .iter()
        .find(|o| o.name == name)
        .unwrap_or_else(|| panic!("no observation {name}"))
        .samples
        .clone();
    s.sort_by(f64::total_cmp);
    s
}

fn stage<'a>(r: &'a Report, name: &str, member: Option<usize>) -> &'a serq::report::StageRow {
    r.stages
        .iter()
        .find(|s| s.name == name && (s.member == member || member.is_none()))
        .unwrap_or_else(|| panic!("no stage {name}"))
}

fn assert_close(actual: f64, expected: f64) {
    assert!(
        (actual - expected).abs() <= 1e-12 * expected.abs().max(1.0),
        "expected {expected}, got {actual}"
    );
}

/// The seed's Before and After share this skeleton: one prefiller computes
/// two prompts (work 1 on a delay, both done at t = 1) and leases their KV;
/// each of two decoders then reads one prompt, a second's worth of bytes.
fn two_reads(read: &str, share: &str) -> String {
    format!(
        "pool kvP {{ cap 100; }}
         pool kvD[2] {{ cap 100; }}
         stage P : delay;
         stage link[2] : ps(1);
         stage egress : ps(1);
         stage ingress[2] : ps(1);
         stage D[2] : delay;
         {share}
         workload {{ arrive batch(2); }}
         session {{
           set j = serial;
           hold kvP (10) {{ run P (1); }} lease kvP (inf);
           hold kvD[j] (10) {{
             {read}
             observe transferred = now;
             observe egress_after = queue(egress);
             run D[j] (1);
           }}
           end;
         }}
         run {{ horizon 10; }}"
    )
}

#[test]
fn before_two_reads_on_the_decoders_links_alone_end_at_2() {
    // Each read is alone on its own link[j] of capacity 1 from t = 1: 1 + 1/1 = 2.
    let r = run(&two_reads("transfer[j] (1) from kvP to kvD[j] (10);", ""));
    assert_eq!(samples(&r, "transferred"), [2.0, 2.0]);
}

#[test]
fn two_reads_share_the_senders_egress_and_end_at_3_under_both_policies() {
    // Both flows hold egress (1) and their own ingress (1) from t = 1. The
    // egress is the bottleneck: maxmin fills it at 1/2 each; bottleneck gives
    // min(1/2, 1/1) = 1/2 each. Work 1 at rate 1/2 ends at 1 + 2 = 3.
    for share in ["share maxmin;", "share bottleneck;"] {
        let r = run(&two_reads(
            "transfer on egress, ingress[j] (1) from kvP to kvD[j] (10);",
            share,
        ));
        assert_eq!(samples(&r, "transferred"), [3.0, 3.0], "{share}");
        // The egress carried capacity 1 (two flows at 1/2) over [1, 3] of
        // [0, 10]: utilisation 0.2, mean number 2·2/10 = 0.4; each flow counts
        // once with service 3 - 1 = 2.
        let egress = stage(&r, "egress", None);
        assert_close(egress.utilization.unwrap(), 0.2);
        assert_close(egress.mean_number, 0.4);
        assert_eq!(egress.completed, 2);
        assert_close(egress.mean_service.unwrap(), 2.0);
        // Each ingress carried 1/2 of its capacity over [1, 3]: 0.5·2/10 = 0.1.
        assert_close(stage(&r, "ingress", Some(0)).utilization.unwrap(), 0.1);
    }
}

#[test]
fn flows_that_end_together_leave_one_event_at_a_time_in_start_order() {
    // Both reads end at 3 in two events (spec §6.4): the first session's
    // statements after its read run before the second flow has left, so it
    // sees queue(egress) = 1; the second sees 0.
    let r = run(&two_reads(
        "transfer on egress, ingress[j] (1) from kvP to kvD[j] (10);",
        "share maxmin;",
    ));
    let seen = &r
        .observes
        .iter()
        .find(|o| o.name == "egress_after")
        .unwrap()
        .samples;
    assert_eq!(seen, &[1.0, 0.0]);
}

/// Three flows, two stages, all work 1 from t = 0: A (capacity 1) carries
/// f1 (over A and B) and f2 (A alone); B (capacity 2) carries f1 and f3
/// (a single-stage run on the shared stage B).
fn three_flows(share: &str) -> String {
    format!(
        "stage A : ps(1);
         stage B : ps(2);
         {share}
         workload {{ arrive batch(3); }}
         session {{
           branch (serial == 0) {{ run A, B (1); observe f1 = now; end; }}
           branch (serial == 1) {{ run A (1); observe f2 = now; end; }}
           run B (1);
           observe f3 = now;
           end;
         }}
         run {{ horizon 3; }}"
    )
}

#[test]
fn three_flows_maxmin_f3_takes_the_rest_of_b_and_ends_at_two_thirds() {
    // Progressive filling: A fills first at level 1/2 (two flows on capacity
    // 1), freezing f1 and f2 at 1/2; B has 2 - 1/2 = 3/2 left for f3 alone,
    // so f3 ends at 1/(3/2) = 2/3. Then A still limits f1, f2 to 1/2 each:
    // they end at 2.
    let r = run(&three_flows("share maxmin;"));
    assert_close(samples(&r, "f3")[0], 2.0 / 3.0);
    assert_close(samples(&r, "f1")[0], 2.0);
    assert_close(samples(&r, "f2")[0], 2.0);
}

#[test]
fn three_flows_bottleneck_f3_gets_its_equal_share_of_b_and_ends_at_1() {
    // f1 = min(1/2, 2/2) = 1/2, f2 = 1/1·... = 1/2 (A has two flows), f3 =
    // 2/2 = 1 (B has two flows): f3 ends at 1; f1, f2 at 2. The capacity
    // maxmin gave f3 beyond 1 is left unused.
    let r = run(&three_flows("share bottleneck;"));
    assert_close(samples(&r, "f3")[0], 1.0);
    assert_close(samples(&r, "f1")[0], 2.0);
    assert_close(samples(&r, "f2")[0], 2.0);
}

#[test]
fn utilisation_of_b_before_two_thirds_is_full_under_maxmin_and_three_quarters_under_bottleneck() {
    // Up to t = 2/3 nothing ends. B carries f1 + f3: maxmin 1/2 + 3/2 = 2 of
    // 2 (utilisation 1); bottleneck 1/2 + 1 = 3/2 of 2 (3/4). With the
    // horizon at 1/2 the time average is that constant.
    for (share, expected) in [("share maxmin;", 1.0), ("share bottleneck;", 0.75)] {
        let program = serq::compile_source(
            &three_flows(share),
            &Overrides {
                horizon: Some(0.5),
                ..Overrides::default()
            },
        )
        .expect("links");
        let r = serq::run(&program).expect("runs");
        assert_close(stage(&r, "B", None).utilization.unwrap(), expected);
        // A carries f1 + f2 at 1/2 each under both policies: full.
        assert_close(stage(&r, "A", None).utilization.unwrap(), 1.0);
    }
}

#[test]
fn wide_and_narrow_stages_differ_between_the_policies() {
    // A = ps(4) carries f1, f2, f3; B = ps(1) carries f1 only; work 3 each.
    // maxmin: B caps f1 at 1; A's remaining 3 goes to f2, f3 at 3/2: they end
    // at 2, f1 at 3. bottleneck: f1 = min(4/3, 1) = 1, f2 = f3 = 4/3: they
    // end at 3/(4/3) = 2.25; f1 at 3 (its rate stays 1 once they leave).
    let program = |share: &str| {
        format!(
            "stage A : ps(4);
             stage B : ps(1);
             {share}
             workload {{ arrive batch(3); }}
             session {{
               branch (serial == 0) {{ run A, B (3); observe f1 = now; end; }}
               run A (3);
               observe f23 = now;
               end;
             }}
             run {{ horizon 10; }}"
        )
    };
    let r = run(&program("share maxmin;"));
    assert_eq!(samples(&r, "f23"), [2.0, 2.0]);
    assert_close(samples(&r, "f1")[0], 3.0);
    let r = run(&program("share bottleneck;"));
    assert_close(samples(&r, "f23")[0], 2.25);
    assert_close(samples(&r, "f23")[1], 2.25);
    assert_close(samples(&r, "f1")[0], 3.0);
}

#[test]
fn a_ps_stage_nobody_shares_is_served_as_before() {
    // `solo` appears in no run over several stages, so it keeps processor
    // sharing: two jobs of work 1 on ps(1) from t = 0 each get 1/2 and both
    // end at 2.0, whatever the program's share policy.
    let r = run("stage solo : ps(1);
                 stage a : ps(1);
                 stage b : ps(1);
                 share bottleneck;
                 workload { arrive batch(2); }
                 session {
                   run solo (1);
                   observe done = now;
                   branch (serial == 0) { run a, b (1); }
                   end;
                 }
                 run { horizon 10; }");
    assert_eq!(samples(&r, "done"), [2.0, 2.0]);
    // A plain ps stage's utilisation is the time it is not empty: [0, 2] of 10.
    assert_close(stage(&r, "solo", None).utilization.unwrap(), 0.2);
}

#[test]
fn a_flow_counts_once_at_each_stage_it_held() {
    // One flow of work 2 over a (ps 1) and b (ps 4): rate min-limited by a at
    // 1, so it ends at 2. Each stage counts one completion with service 2.
    let r = run("stage a : ps(1);
                 stage b : ps(4);
                 share maxmin;
                 workload { arrive batch(1); }
                 session { run a, b (2); observe done = now; end; }
                 run { horizon 4; }");
    assert_eq!(samples(&r, "done"), [2.0]);
    for name in ["a", "b"] {
        let s = stage(&r, name, None);
        assert_eq!(s.completed, 1, "{name}");
        assert_close(s.mean_service.unwrap(), 2.0);
        assert_close(s.mean_number, 0.5);
    }
    // b carried rate 1 of its 4 for half the run: 1/4 · 2/4 = 0.125.
    assert_close(stage(&r, "b", None).utilization.unwrap(), 0.125);
}

#[test]
fn transfer_on_two_stages_has_the_ir_of_run_load_release() {
    let decls = "pool p { cap 10; }
                 pool q { cap 10; }
                 stage a : ps(1);
                 stage b : ps(2);
                 share maxmin;
                 workload { arrive batch(1); }
                 run { horizon 5; }";
    let sugar = compile(&format!(
        "{decls} session {{ hold p (1) {{ hold q (2) {{ transfer on a, b (3) from p to q (2); }} }} }}"
    ));
    let plain = compile(&format!(
        "{decls} session {{ hold p (1) {{ hold q (2) {{ run a, b (3); load q (2); release p; }} }} }}"
    ));
    assert_eq!(sugar.blocks, plain.blocks);
}

fn refused(src: &str) -> String {
    match serq::compile_source(src, &Overrides::default()) {
        Ok(_) => panic!("linked, expected a refusal:\n{src}"),
        Err(d) => d
            .iter()
            .map(|d| d.message.clone())
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

const B: &str = "workload { arrive batch(1); } run { horizon 10; }";

#[test]
fn a_run_over_several_stages_needs_share() {
    let m = refused(&format!(
        "stage a : ps(1); stage b : ps(1); session {{ run a, b (1); }} {B}"
    ));
    assert!(m.contains("share"), "{m}");
}

#[test]
fn share_without_a_run_over_several_stages_is_refused() {
    let m = refused(&format!(
        "stage a : ps(1); share maxmin; session {{ run a (1); }} {B}"
    ));
    assert!(m.contains("share"), "{m}");
}

#[test]
fn share_given_twice_is_refused() {
    let m = refused(&format!(
        "stage a : ps(1); stage b : ps(1); share maxmin; share bottleneck;
         session {{ run a, b (1); }} {B}"
    ));
    assert!(m.contains("twice"), "{m}");
}

#[test]
fn every_stage_of_a_flow_is_ps_of_a_constant_above_0() {
    for (kind, words) in [
        ("fifo", vec!["`b`", "ps"]),
        ("delay", vec!["`b`", "ps"]),
        ("ps(0)", vec!["`b`", "above 0"]),
        ("ps(present)", vec!["`b`", "constant"]),
    ] {
        let m = refused(&format!(
            "stage a : ps(1); stage b : {kind}; share maxmin; session {{ run a, b (1); }} {B}"
        ));
        for w in words {
            assert!(m.contains(w), "{kind}: {m}");
        }
    }
    // A constant expression that folds above 0 is fine in serq (0.1.0 wants a literal).
    compile(&format!(
        "let c = 2; stage a : ps(1+1); stage b : ps(c*2); share maxmin; session {{ run a, b (1); }} {B}"
    ));
}

#[test]
fn a_stage_family_named_twice_in_one_run_is_refused() {
    let m = refused(&format!(
        "stage a[2] : ps(1); share maxmin; session {{ run a[0], a[1] (1); }} {B}"
    ));
    assert!(m.contains("twice"), "{m}");
}

#[test]
fn ir_json_with_a_flow_and_no_share_is_refused_by_validate() {
    let mut program = compile(&format!(
        "stage a : ps(1); stage b : ps(1); share maxmin; session {{ run a, b (1); }} {B}"
    ))
    .into_program();
    program.share = None;
    let errors = serq::compile_ir(&program.to_json(), &Overrides::default()).unwrap_err();
    assert!(
        errors.iter().any(|e| e.message.contains("share")),
        "{errors:?}"
    );
}

#[test]
fn a_seeded_stochastic_program_with_flows_reproduces_its_report_digit_for_digit() {
    let src = "stage egress[2] : ps(1.5);
               stage ingress[2] : ps(1);
               share maxmin;
               workload { arrive poisson(0.6); }
               session {
                 set i = ~bernoulli(0.5);
                 set j = ~bernoulli(0.5);
                 set t0 = now;
                 run egress[i], ingress[j] (~exp(1));
                 observe read = now - t0;
                 end;
               }
               run { horizon 2000; seed 13; }";
    let a = run(src).to_json(true);
    let b = run(src).to_json(true);
    assert_eq!(a, b);
    let other = serq::run(
        &serq::compile_source(
            src,
            &Overrides {
                seed: Some(14),
                ..Overrides::default()
            },
        )
        .unwrap(),
    )
    .unwrap()
    .to_json(true);
    assert_ne!(a, other, "another seed gives another run");
}
