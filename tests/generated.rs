//! Property tests over generated programs (tests/gen/mod.rs), Tier 1 and
//! serving: every one
//! links, its IR round-trips through JSON, and (with the engine) it runs to
//! a report of finite figures that one seed reproduces.

// `gen` is a reserved word in edition 2024, hence the path.
#[path = "gen/mod.rs"]
mod generator;

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use serq::{Overrides, RunOptions, compile_ir, compile_source};

/// Generated programs run under a small horizon: a few thousand events at
/// most. A run that needs more than this is a runaway.
const MAX_EVENTS: u64 = 1_000_000;

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        // A generated program prints as source when a case fails.
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

fn link(source: &str) -> serq::ValidProgram {
    match compile_source(source, &Overrides::default()) {
        Ok(p) => p,
        Err(d) => panic!(
            "a generated program does not link:\n{source}\n{}",
            serq::syntax::render(&d, "generated.sq", source)
        ),
    }
}

proptest! {
    #![proptest_config(config(300))]

    #[test]
    fn generated_programs_link_and_their_ir_round_trips(program in generator::program()) {
        let source = program.to_string();
        let linked = link(&source);
        let json = linked.to_json();
        let back = compile_ir(&json, &Overrides::default())
            .unwrap_or_else(|e| panic!("IR of\n{source}\ndoes not read back: {e:?}"));
        prop_assert_eq!(back, linked, "IR JSON round-trip of\n{}", source);
    }

    #[test]
    fn generated_serving_programs_link_and_their_ir_round_trips(program in generator::serving_program()) {
        let source = program.to_string();
        let linked = link(&source);
        prop_assert!(linked.stages.iter().any(|s| matches!(s.kind, serq::ir::StageKind::Step(_))));
        let json = linked.to_json();
        let back = compile_ir(&json, &Overrides::default())
            .unwrap_or_else(|e| panic!("IR of\n{source}\ndoes not read back: {e:?}"));
        prop_assert_eq!(back, linked, "IR JSON round-trip of\n{}", source);
    }
}

/// Every figure of a report that has a value is finite (samples may be
/// anything the program observed, but generated programs observe only
/// finite values).
fn assert_finite(report: &serq::Report, source: &str) {
    let mut figures: Vec<(String, f64)> = vec![
        ("end".into(), report.end),
        ("mean_live".into(), report.mean_live),
    ];
    for o in &report.observes {
        figures.extend(
            o.samples
                .iter()
                .map(|x| (format!("observe {}", o.name), *x)),
        );
    }
    for s in &report.stages {
        let name = format!("stage {}{:?}", s.name, s.member);
        figures.push((format!("{name} mean_number"), s.mean_number));
        figures.push((format!("{name} throughput"), s.throughput));
        figures.extend(s.utilization.map(|x| (format!("{name} utilization"), x)));
        figures.extend(s.mean_wait.map(|x| (format!("{name} mean_wait"), x)));
        figures.extend(s.mean_service.map(|x| (format!("{name} mean_service"), x)));
    }
    for p in &report.pools {
        let name = format!("pool {}{:?}", p.name, p.member);
        figures.push((format!("{name} mean_used"), p.mean_used));
        figures.push((format!("{name} mean_queue"), p.mean_queue));
        figures.push((format!("{name} mean_holders"), p.mean_holders));
        figures.extend(p.mean_wait.map(|x| (format!("{name} mean_wait"), x)));
    }
    for (what, x) in figures {
        assert!(x.is_finite(), "{what} is {x} in the report of\n{source}");
    }
}

/// Runs a generated program with the invariants checked after every event
/// (pools within capacity, and with their cache; flow rates within every
/// shared stage; an iteration's grants within its budget; a growing
/// resident's position within its allocation; live sessions = created -
/// ended); the cap turns a runaway program into an error. Its report is
/// finite and one seed reproduces it.
fn runs_checked_and_reproducibly(source: &str) -> Result<(), TestCaseError> {
    let linked = link(source);
    let mut options = RunOptions {
        max_events: Some(MAX_EVENTS),
        check_invariants: true,
        ..RunOptions::default()
    };
    let (report, counts) = serq::engine::run_counted(&linked, &mut options)
        .unwrap_or_else(|e| panic!("a generated program fails at run time: {e:?}\n{source}"));
    assert_finite(&report, source);
    prop_assert_eq!(
        counts.created,
        report.arrivals,
        "sessions created in\n{}",
        source
    );
    prop_assert_eq!(
        counts.live,
        counts.created - counts.ended,
        "live sessions counted one by one, of\n{}",
        source
    );
    // `ended` in the report counts only ends at or after the warm-up.
    prop_assert!(
        counts.ended >= report.ended,
        "{:?} {} of\n{}",
        counts,
        report.ended,
        source
    );
    let again = serq::run(&linked).expect("ran once");
    // As JSON: the same seed gives the same report, digit for digit,
    // and checking the invariants changed nothing.
    prop_assert_eq!(
        report.to_json(true),
        again.to_json(true),
        "two runs of\n{}",
        source
    );
    Ok(())
}

proptest! {
    #![proptest_config(config(200))]

    #[test]
    fn generated_programs_run_to_finite_reports_that_one_seed_reproduces(program in generator::program()) {
        runs_checked_and_reproducibly(&program.to_string())?;
    }

    #[test]
    fn generated_serving_programs_run_keeping_the_invariants(program in generator::serving_program()) {
        runs_checked_and_reproducibly(&program.to_string())?;
    }
}

#[test]
fn a_horizon_of_1e300_ends_when_the_events_run_out() {
    let source = "stage s : ps(1);\nworkload { arrive batch(3); }\nsession { run s (1); }\nrun { horizon 1e300; }\n";
    let report = serq::run(&link(source)).expect("runs");
    // Three jobs share ps(1) from 0: all end at 3, the last event.
    assert_finite(&report, source);
    assert_eq!(report.stages[0].completed, 3);
}

#[test]
fn the_generator_makes_programs_with_flows_holds_loops_and_every_arrival() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let (mut flows, mut holds, mut loops, mut leases) = (0, 0, 0, 0);
    let mut arrivals = [0; 3];
    for _ in 0..300 {
        let p = generator::program()
            .new_tree(&mut runner)
            .unwrap()
            .current();
        let text = p.to_string();
        flows += usize::from(text.contains("share "));
        holds += usize::from(text.contains("hold "));
        loops += usize::from(text.contains("loop {"));
        leases += usize::from(text.contains(" lease "));
        arrivals[match p.arrival {
            generator::Arrival::Batch(_) => 0,
            generator::Arrival::Poisson(_) => 1,
            generator::Arrival::Closed(_) => 2,
        }] += 1;
    }
    assert!(
        flows > 20 && holds > 20 && loops > 20 && leases > 10,
        "{flows} {holds} {loops} {leases}"
    );
    assert!(arrivals.iter().all(|&n| n > 30), "{arrivals:?}");
}

#[test]
fn the_serving_generator_exercises_the_engine_its_pools_server_and_traces() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let (mut servers, mut traces, mut spills) = (0, 0, 0);
    let (mut iterated, mut preempted, mut cached, mut spilled) = (0, 0, 0, 0);
    for _ in 0..300 {
        let p = generator::serving_program()
            .new_tree(&mut runner)
            .unwrap()
            .current();
        let text = p.to_string();
        servers += usize::from(text.contains("server {"));
        traces += usize::from(text.contains("trace \""));
        spills += usize::from(text.contains(" spill "));
        let report = serq::run(&link(&text)).expect("runs");
        let kv = report
            .pools
            .iter()
            .find(|q| q.name == "kv_e")
            .expect("kv_e");
        let eng = report.stages.iter().find(|s| s.name == "eng").expect("eng");
        iterated += usize::from(eng.iterations > 0);
        preempted += usize::from(kv.preemptions > 0);
        cached += usize::from(kv.mean_cached > 0.0);
        spilled += usize::from(kv.spills > 0);
    }
    assert!(
        servers > 100 && traces > 150 && spills > 100,
        "{servers} {traces} {spills}"
    );
    assert!(
        iterated > 120 && preempted > 0 && cached > 80 && spilled > 20,
        "{iterated} {preempted} {cached} {spilled}"
    );
}
