//! The flow solver as it grows: N egress and N ingress NIC stages of
//! capacity 1 (N = 4, 50, 200, 1000, 5000 pairs) carrying 2.5 N flows, each
//! on a random (egress, ingress) pair, so the pairs form one giant component.
//! One iteration is one engine event: the earliest flow ends (finish), its
//! session starts a new transfer (start), the settle ends (solve).
//!
//! Criterion measures each method's mean per update. After it, a table gives
//! each method's mean over 50 000 updates in thread CPU time (robust to
//! preemption on a shared machine), the p50 and p99 of single updates timed
//! one by one on the cycle counter, and the share of the system's stages one
//! update visits. Every system is warmed up by
//! incremental updates (5 × flows events) so the flows' ages are mixed, then
//! handed to the method measured.
//!
//! `FLOWS_ONLY=n1000/maxmin_incremental cargo bench --bench flows` prints
//! the rows whose `system/method` contains that text, without criterion
//! (`FLOWS_ONLY=/` the whole table; `FLOWS_UPDATES=N` sets the count): under
//! `valgrind --tool=callgrind --toggle-collect='*time_updates*'` it gives a
//! repeatable instruction count per update on a loaded machine.

use criterion::{Criterion, criterion_group};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serq::engine::flows::{FlowSystem, MaxMinSolver};
use serq::ir::Share;
use std::hint::black_box;
use std::time::Instant;

/// The sizes measured: (name, pairs).
const SYSTEMS: [(&str, u32); 5] = [
    ("4x4", 4),
    ("n50", 50),
    ("n200", 200),
    ("n1000", 1000),
    ("n5000", 5000),
];

/// The methods measured: (name, policy, maxmin solver); `maxmin_by_size`
/// is the engine's default.
const METHODS: [(&str, Share, MaxMinSolver); 4] = [
    (
        "maxmin_incremental",
        Share::MaxMin,
        MaxMinSolver::Incremental,
    ),
    ("maxmin_components", Share::MaxMin, MaxMinSolver::Components),
    (
        "maxmin_by_size",
        Share::MaxMin,
        MaxMinSolver::BySize {
            limit: serq::engine::flows::FILL_LIMIT,
        },
    ),
    ("bottleneck", Share::Bottleneck, MaxMinSolver::Incremental),
];

/// A system of `pairs` pairs mid-run, and the random stream that drives it.
struct Cluster {
    sys: FlowSystem,
    rng: ChaCha8Rng,
    pairs: u32,
}

impl Cluster {
    fn new(pairs: u32, policy: Share, solver: MaxMinSolver) -> Self {
        let rng = ChaCha8Rng::seed_from_u64(7);
        let sys = FlowSystem::with_solver(vec![1.0; 2 * pairs as usize], policy, solver);
        let mut c = Cluster { sys, rng, pairs };
        let flows = 5 * pairs as usize / 2;
        c.sys.set_solver(MaxMinSolver::Incremental);
        for _ in 0..flows {
            c.start(0.0);
        }
        c.sys.solve(0.0);
        for _ in 0..5 * flows {
            c.event();
        }
        c.sys.set_solver(solver);
        c
    }

    fn start(&mut self, now: f64) {
        let egress = self.rng.random_range(0..self.pairs);
        let ingress = self.pairs + self.rng.random_range(0..self.pairs);
        let work = self.rng.random_range(0.5..1.5);
        self.sys.start(now, &[egress, ingress], work);
    }

    fn event(&mut self) -> usize {
        let (t, id) = self.sys.next_end().expect("a flow is running");
        self.sys.finish(t, id);
        self.start(t);
        self.sys.solve(t);
        self.sys.changed_stages().len()
    }
}

fn bench(c: &mut Criterion) {
    for (system, pairs) in SYSTEMS {
        let mut group = c.benchmark_group(format!("flows_{system}"));
        for (method, policy, solver) in METHODS {
            let mut cluster = Cluster::new(pairs, policy, solver);
            group.bench_function(method, |b| b.iter(|| black_box(cluster.event())));
        }
        group.finish();
    }
}

/// CPU time of this thread (ns): unlike the wall clock it stops while the
/// thread is preempted, so a mean over many updates holds on a loaded machine.
fn thread_cpu_ns() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for clock_gettime to write.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "CLOCK_THREAD_CPUTIME_ID is available on Linux");
    ts.tv_sec as f64 * 1e9 + ts.tv_nsec as f64
}

/// A cheap cycle counter for timing one update (a clock read costs more
/// than some updates here), and its ticks per ns.
#[cfg(target_arch = "x86_64")]
fn ticks() -> u64 {
    // SAFETY: rdtsc has no preconditions on x86_64.
    unsafe { std::arch::x86_64::_rdtsc() }
}

#[cfg(not(target_arch = "x86_64"))]
fn ticks() -> u64 {
    use std::sync::OnceLock;
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    ORIGIN.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

fn ticks_per_ns() -> f64 {
    let (t, c) = (Instant::now(), ticks());
    std::thread::sleep(std::time::Duration::from_millis(200));
    (ticks() - c) as f64 / t.elapsed().as_nanos() as f64
}

/// One method on one system: the mean (thread CPU time over all updates),
/// p50 and p99 (cycle counter, each update on its own) in ns, and the mean
/// share of the system's stages an update visits.
struct Distribution {
    mean: f64,
    p50: f64,
    p99: f64,
    visited: f64,
}

#[inline(never)] // a symbol for callgrind's --toggle-collect
fn time_updates(cluster: &mut Cluster, updates: usize, per_ns: f64) -> Distribution {
    let mut ns = Vec::with_capacity(updates);
    let mut visited = 0usize;
    let cpu = thread_cpu_ns();
    for _ in 0..updates {
        let t = ticks();
        black_box(cluster.event());
        ns.push((ticks() - t) as f64 / per_ns);
        visited += cluster.sys.visited_stages();
    }
    let mean = (thread_cpu_ns() - cpu) / updates as f64;
    ns.sort_by(f64::total_cmp);
    let at = |q: f64| ns[((updates as f64 * q) as usize).min(updates - 1)];
    Distribution {
        mean,
        p50: at(0.5),
        p99: at(0.99),
        visited: visited as f64 / updates as f64 / f64::from(2 * cluster.pairs),
    }
}

/// Prints the table; `only` keeps the rows whose `system/method` contains it.
fn table(only: Option<&str>) {
    let per_ns = ticks_per_ns();
    println!();
    println!(
        "single updates: mean = thread CPU time / updates; p50, p99 = each update \
         on the cycle counter ({per_ns:.2} ticks/ns); visited = stages read / all"
    );
    println!(
        "{:<8} {:>6} {:<20} {:>10} {:>10} {:>10} {:>9}",
        "system", "flows", "method", "mean ns", "p50 ns", "p99 ns", "visited"
    );
    for (system, pairs) in SYSTEMS {
        for (method, policy, solver) in METHODS {
            if only.is_some_and(|o| !format!("{system}/{method}").contains(o)) {
                continue;
            }
            let mut cluster = Cluster::new(pairs, policy, solver);
            // A full filling of the giant component costs O(N): keep its
            // sample at about the same total time as the others'.
            let updates = match solver {
                MaxMinSolver::Components if policy == Share::MaxMin => {
                    (2_000_000 / pairs as usize).clamp(200, 50_000)
                }
                _ => 50_000,
            };
            let updates = std::env::var("FLOWS_UPDATES")
                .ok()
                .and_then(|n| n.parse().ok())
                .unwrap_or(updates);
            let d = time_updates(&mut cluster, updates, per_ns);
            println!(
                "{:<8} {:>6} {:<20} {:>10.0} {:>10.0} {:>10.0} {:>8.2}%",
                system,
                5 * pairs / 2,
                method,
                d.mean,
                d.p50,
                d.p99,
                100.0 * d.visited
            );
        }
    }
}

criterion_group! {
    name = flows;
    config = Criterion::default().sample_size(30);
    targets = bench
}

fn main() {
    if let Ok(only) = std::env::var("FLOWS_ONLY") {
        table(Some(&only));
        return;
    }
    flows();
    Criterion::default().configure_from_args().final_summary();
    table(None);
}
