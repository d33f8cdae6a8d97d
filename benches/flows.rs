//! The flow solver at scale: N = 1000 prefill/decode pairs, 2000 NIC stages
//! of capacity 1, ~2500 flows each on a random (egress, ingress) pair. One
//! iteration is one engine event: the earliest flow ends (finish), its
//! session starts a new transfer (start), the settle ends (solve).

use criterion::{Criterion, criterion_group, criterion_main};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serq::engine::flows::{FlowSystem, MaxMinSolver};
use serq::ir::Share;
use std::hint::black_box;

const PAIRS: u32 = 1000;
const FLOWS: usize = 2500;

fn start_random(sys: &mut FlowSystem, rng: &mut ChaCha8Rng, now: f64, owner: u64) {
    let egress = rng.random_range(0..PAIRS);
    let ingress = PAIRS + rng.random_range(0..PAIRS);
    let work = rng.random_range(0.5..1.5);
    sys.start(now, &[egress, ingress], work, owner);
}

fn cluster(policy: Share, solver: MaxMinSolver) -> (FlowSystem, ChaCha8Rng) {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut sys = FlowSystem::with_solver(vec![1.0; 2 * PAIRS as usize], policy, solver);
    for k in 0..FLOWS {
        start_random(&mut sys, &mut rng, 0.0, k as u64);
    }
    sys.solve(0.0);
    // Warm up past the start, so the flows' ages are mixed.
    for k in 0..5 * FLOWS {
        event(&mut sys, &mut rng, k as u64);
    }
    (sys, rng)
}

fn event(sys: &mut FlowSystem, rng: &mut ChaCha8Rng, owner: u64) {
    let (t, id) = sys.next_end().expect("a flow is running");
    sys.finish(t, id);
    start_random(sys, rng, t, owner);
    sys.solve(t);
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("flows_1000_pairs");
    for (name, policy, solver) in [
        (
            "maxmin_incremental",
            Share::MaxMin,
            MaxMinSolver::Incremental,
        ),
        ("maxmin_components", Share::MaxMin, MaxMinSolver::Components),
        ("bottleneck", Share::Bottleneck, MaxMinSolver::Incremental),
    ] {
        let (mut sys, mut rng) = cluster(policy, solver);
        let mut owner = 0;
        group.bench_function(name, |b| {
            b.iter(|| {
                owner += 1;
                event(&mut sys, &mut rng, owner);
                black_box(sys.changed_stages().len())
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
