//! The engine on small programs, one run per iteration (parse and link
//! happen once, outside the timing). Divide by the run's `events` (printed
//! once per program) for the time per event; the reference spends ~145 ns
//! of CPU per event on M/M/1 on the development machine.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

const MM1: &str = "stage srv : fifo; workload { arrive poisson(0.5); }
    session { set t0 = now; run srv (~exp(1)); observe resp = now - t0; end; }
    run { horizon 40000; seed 5; }";

const MG1_PS: &str = "stage cpu : ps(1); workload { arrive poisson(0.7); }
    session { set t0 = now; run cpu (~h2(1, 4)); observe resp = now - t0; end; }
    run { horizon 40000; seed 5; }";

const POOL: &str = "pool slots { cap 4; } stage srv : delay; workload { arrive poisson(3); }
    session { set t0 = now; hold slots (1) { run srv (~exp(1)); } observe resp = now - t0; }
    run { horizon 10000; seed 5; }";

const FLOWS: &str = "stage E[4] : ps(1); stage I[4] : ps(1); share maxmin;
    workload { arrive poisson(2); }
    session { set i = floor(~uniform(0, 4)); set j = floor(~uniform(0, 4)); run E[i], I[j] (~exp(1)); }
    run { horizon 20000; seed 5; }";

/// A vLLM-like engine: 64 closed-loop users keep about 64 residents of one
/// step stage, chunked prefill under a token budget, KV growing by blocks
/// of 16, a prefix cache the next turn reuses, preemption, admission by the
/// engine (tools/bench/programs/vllm_64.sq, whose ratio to the reference
/// tools/bench/compare.py measures).
const VLLM: &str = include_str!("../tools/bench/programs/vllm_64.sq");

/// 64 closed-loop sessions that each decode 4 000 tokens on one step
/// stage without memory, keys or admission: the serving engine's plain
/// per-resident path (divide by iterations × 64 for a resident-iteration).
const DECODE_64: &str = "stage engine : step { budget 4096; cost 0.01 + 0.0001 * tokens; }
    workload { arrive closed(64); }
    session { run engine decode (4000); }
    run { horizon 400; seed 1; }";

/// examples/pd-disaggregation/nixl_pull.sq: 8 + 8 step engines whose KV
/// reads cross shared NICs (its default size), and the program
/// tools/bench/compare.py times against the reference.
const NIXL_PULL: &str = include_str!("../examples/pd-disaggregation/nixl_pull.sq");

/// A thousand-node prefill/decode deployment whose KV reads contend for
/// both NICs (tools/bench/programs/pd_1000.sq).
const PD_1000: &str = include_str!("../tools/bench/programs/pd_1000.sq");

fn compile(source: &str) -> serq::ValidProgram {
    let (ast, diags) = serq::syntax::parse(source);
    assert!(diags.is_empty(), "{diags:?}");
    serq::link::link(&ast, source, &Default::default()).expect("the bench programs link")
}

fn bench(c: &mut Criterion) {
    for (name, source) in [
        ("mm1_fifo", MM1),
        ("mg1_ps_h2", MG1_PS),
        ("pool_slots", POOL),
        ("flows_4x4", FLOWS),
        ("vllm_64", VLLM),
    ] {
        let program = compile(source);
        let events = serq::engine::run(&program)
            .expect("the bench programs run")
            .events;
        println!("{name}: {events} events per run");
        c.bench_function(name, |b| {
            b.iter(|| serq::engine::run(black_box(&program)).map(|r| r.events))
        });
    }
}

/// Whole deployments, as throughput in events per second: what a study
/// of serving engines and of a thousand nodes costs per simulated event.
fn deployments(c: &mut Criterion) {
    let sized = |source: &str, sets: &[(&str, f64)], horizon: Option<f64>| {
        let overrides = serq::link::Overrides {
            sets: sets.iter().map(|(n, v)| (n.to_string(), *v)).collect(),
            horizon,
            warmup: horizon.map(|_| 0.0),
            ..Default::default()
        };
        serq::compile_source(source, &overrides).expect("the bench programs link")
    };
    let mut group = c.benchmark_group("deployments");
    group.sample_size(10);
    for (name, program) in [
        ("decode_64", sized(DECODE_64, &[], None)),
        ("nixl_pull_8x8", sized(NIXL_PULL, &[], None)),
        (
            "nixl_pull_500x500_h5",
            sized(NIXL_PULL, &[("NP", 500.0), ("ND", 500.0)], Some(5.0)),
        ),
        ("pd_1000", sized(PD_1000, &[], None)),
    ] {
        let report = serq::engine::run(&program).expect("the bench programs run");
        let iterations: u64 = report.stages.iter().map(|s| s.iterations).sum();
        println!(
            "{name}: {} events, {iterations} iterations per run",
            report.events
        );
        group.throughput(Throughput::Elements(report.events));
        group.bench_function(name, |b| {
            b.iter(|| serq::engine::run(black_box(&program)).map(|r| r.events))
        });
    }
    group.finish();
}

criterion_group! {
    name = engine;
    config = Criterion::default().sample_size(20);
    targets = bench, deployments
}
criterion_main!(engine);
