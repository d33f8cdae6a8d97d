//! The hand-derived values of RFC #118 and spec §6.4, and the API's edges.

use super::{FlowId, FlowSystem, MaxMinSolver};
use crate::ir::Share;

/// Every way of solving `maxmin`: `BySize` with limit 1 replays every
/// component of two stages or more.
const SOLVERS: [MaxMinSolver; 4] = [
    MaxMinSolver::Incremental,
    MaxMinSolver::Components,
    MaxMinSolver::BySize { limit: 1 },
    MaxMinSolver::BySize {
        limit: super::FILL_LIMIT,
    },
];

/// Runs the system as the engine would: the earliest end fires, the flow is
/// finished, the settle ends with a solve. Returns (flow, end) in order.
fn run_out(sys: &mut FlowSystem) -> Vec<(FlowId, f64)> {
    let mut out = Vec::new();
    while let Some((t, id)) = sys.next_end() {
        sys.finish(t, id);
        out.push((id, t));
        sys.solve(t);
    }
    out
}

/// A = ps(1) (stage 0) carries f1, f2; B = ps(2) (stage 1) carries f1, f3.
fn three_flows(policy: Share, solver: MaxMinSolver) -> (FlowSystem, [FlowId; 3]) {
    let mut sys = FlowSystem::with_solver(vec![1.0, 2.0], policy, solver);
    let f1 = sys.start(0.0, &[0, 1], 1.0);
    let f2 = sys.start(0.0, &[0], 1.0);
    let f3 = sys.start(0.0, &[1], 1.0);
    sys.solve(0.0);
    (sys, [f1, f2, f3])
}

#[test]
fn three_flows_maxmin_f3_takes_the_rest_of_b() {
    for solver in SOLVERS {
        let (mut sys, [f1, f2, f3]) = three_flows(Share::MaxMin, solver);
        // A fills first, at 1/2 for f1 and f2 (B's level would be 2/2 = 1);
        // f3 takes what B has left: 2 − 1/2 = 3/2.
        assert_eq!(sys.rate(f1), 0.5);
        assert_eq!(sys.rate(f2), 0.5);
        assert_eq!(sys.rate(f3), 1.5);
        // B carries 2 of 2; A 1 of 1.
        assert_eq!(sys.load(1), 2.0);
        assert_eq!(sys.load(0), 1.0);
        // f3 ends at 1 / (3/2) = 2/3; f1, f2 keep 1/2 (A is still full) and
        // end at 1 / (1/2) = 2, in start order.
        assert_eq!(
            run_out(&mut sys),
            vec![(f3, 2.0 / 3.0), (f1, 2.0), (f2, 2.0)]
        );
    }
}

#[test]
fn three_flows_bottleneck_leaves_part_of_b_unused() {
    let (mut sys, [f1, f2, f3]) = three_flows(Share::Bottleneck, MaxMinSolver::Incremental);
    // f1 = min(1/2, 2/2) = 1/2, f2 = 1/2, f3 = 2/2 = 1.
    assert_eq!(sys.rate(f1), 0.5);
    assert_eq!(sys.rate(f2), 0.5);
    assert_eq!(sys.rate(f3), 1.0);
    // B carries 3/2 of 2: utilisation 3/4.
    assert_eq!(sys.load(1), 1.5);
    // f3 ends at 1 / 1 = 1; f1 = min(1/2, 2/1) stays 1/2, f1 and f2 end at 2.
    assert_eq!(run_out(&mut sys), vec![(f3, 1.0), (f1, 2.0), (f2, 2.0)]);
}

/// A = ps(4) (stage 0), B = ps(1) (stage 1); f1 on A, B; f2, f3 on A; work 3.
fn fast_a_slow_b(policy: Share, solver: MaxMinSolver) -> (FlowSystem, [FlowId; 3]) {
    let mut sys = FlowSystem::with_solver(vec![4.0, 1.0], policy, solver);
    let f1 = sys.start(0.0, &[0, 1], 3.0);
    let f2 = sys.start(0.0, &[0], 3.0);
    let f3 = sys.start(0.0, &[0], 3.0);
    sys.solve(0.0);
    (sys, [f1, f2, f3])
}

#[test]
fn slow_b_caps_f1_and_maxmin_gives_the_rest_of_a_to_f2_f3() {
    for solver in SOLVERS {
        let (mut sys, [f1, f2, f3]) = fast_a_slow_b(Share::MaxMin, solver);
        // B fills at 1 (A's level would be 4/3): f1 = 1. A has 3 left for f2,
        // f3: 3/2 each, so they end at 3 / (3/2) = 2; f1 stays at 1 (B) and
        // ends at 3 / 1 = 3.
        assert_eq!(run_out(&mut sys), vec![(f2, 2.0), (f3, 2.0), (f1, 3.0)]);
    }
}

#[test]
fn slow_b_caps_f1_and_bottleneck_gives_f2_f3_a_third_of_a() {
    let (mut sys, [f1, f2, f3]) = fast_a_slow_b(Share::Bottleneck, MaxMinSolver::Incremental);
    // f1 = min(4/3, 1/1) = 1; f2 = f3 = 4/3, ending at 3 / (4/3) = 2.25 (f3's
    // remainder there rounds to zero); f1 = min(4/1, 1) stays 1, ends at 3.
    assert_eq!(run_out(&mut sys), vec![(f2, 2.25), (f3, 2.25), (f1, 3.0)]);
}

#[test]
fn two_reads_share_the_senders_link() {
    let policies = SOLVERS
        .map(|solver| (Share::MaxMin, solver))
        .into_iter()
        .chain([(Share::Bottleneck, MaxMinSolver::Incremental)]);
    for (policy, solver) in policies {
        // egress (stage 0) = ps(1), ingress 1 and 2 = ps(1). Both start at 1;
        // the egress is the bottleneck at 1/2 each: both end at 1 + 1/(1/2) = 3.
        let mut sys = FlowSystem::with_solver(vec![1.0, 1.0, 1.0], policy, solver);
        let a = sys.start(1.0, &[0, 1], 1.0);
        let b = sys.start(1.0, &[0, 2], 1.0);
        sys.solve(1.0);
        assert_eq!(run_out(&mut sys), vec![(a, 3.0), (b, 3.0)]);
    }
}

#[test]
fn a_flow_on_infinite_stages_only_ends_at_once() {
    for policy in [Share::MaxMin, Share::Bottleneck] {
        let mut sys = FlowSystem::new(vec![f64::INFINITY, f64::INFINITY], policy);
        let f = sys.start(5.0, &[0, 1], 7.0);
        sys.solve(5.0);
        assert_eq!(sys.rate(f), f64::INFINITY);
        assert_eq!(sys.next_end(), Some((5.0, f)));
        assert_eq!(sys.work(0, 5.0), 0.0);
    }
}

#[test]
fn an_infinite_stage_never_limits_a_flow_crossing_a_finite_one() {
    for policy in [Share::MaxMin, Share::Bottleneck] {
        // Stage 0 = ps(inf) carries both; stage 1 = ps(2) carries f alone.
        let mut sys = FlowSystem::new(vec![f64::INFINITY, 2.0], policy);
        let f = sys.start(0.0, &[0, 1], 1.0);
        let g = sys.start(0.0, &[0], 1.0);
        sys.solve(0.0);
        assert_eq!(sys.rate(f), 2.0);
        assert_eq!(sys.rate(g), f64::INFINITY);
        // g ends at once, f at 1/2.
        assert_eq!(run_out(&mut sys), vec![(g, 0.0), (f, 0.5)]);
    }
}

#[test]
fn no_flow_means_no_end() {
    let mut sys = FlowSystem::new(vec![1.0], Share::MaxMin);
    sys.solve(0.0);
    assert_eq!(sys.next_end(), None);
    assert!(sys.is_empty());
}

#[test]
fn work_and_count_follow_the_flows_lazily() {
    let mut sys = FlowSystem::new(vec![1.0], Share::MaxMin);
    let a = sys.start(0.0, &[0], 1.0);
    sys.solve(0.0);
    assert_eq!(sys.work(0, 0.5), 0.5);
    let b = sys.start(0.5, &[0], 2.0);
    sys.solve(0.5);
    // a has 1/2 left at 1/2 a unit a second; b 2.
    assert_eq!(sys.count(0), 2);
    assert_eq!(sys.rate(a), 0.5);
    assert_eq!(sys.work(0, 0.5), 2.5);
    assert_eq!(sys.work(0, 1.0), 2.0);
    assert_eq!(sys.stages_of(b), &[0]);
    // a ends at 0.5 + 0.5 / 0.5 = 1.5.
    assert_eq!(sys.next_end(), Some((1.5, a)));
}

#[test]
fn changed_stages_name_the_stages_whose_load_moved() {
    let mut sys = FlowSystem::new(vec![1.0, 1.0, 1.0], Share::MaxMin);
    sys.start(0.0, &[2, 0], 1.0);
    sys.solve(0.0);
    // In the order the flow lists them.
    assert_eq!(sys.changed_stages(), &[2, 0]);
    let b = sys.start(0.0, &[1], 1.0);
    sys.solve(0.0);
    assert_eq!(sys.changed_stages(), &[1]);
    sys.finish(1.0, b);
    sys.solve(1.0);
    assert_eq!(sys.changed_stages(), &[1]);
    assert_eq!(sys.load(1), 0.0);
}

#[test]
fn a_finished_handle_is_not_live_after_its_slot_is_reused() {
    let mut sys = FlowSystem::new(vec![1.0], Share::Bottleneck);
    let a = sys.start(0.0, &[0], 1.0);
    sys.solve(0.0);
    assert_eq!(sys.finish(1.0, a), 0.0);
    let b = sys.start(1.0, &[0], 1.0);
    assert!(!sys.is_live(a));
    assert!(sys.is_live(b));
    assert_ne!(a, b);
}

/// Whether the last solve of `sys` replayed stage `s` (a `BySize` probe
/// found it in a component over the limit, or believed an earlier one)
/// rather than filling it.
fn replayed(sys: &FlowSystem, s: u32) -> bool {
    sys.large.until[s as usize] > sys.log.solves
}

#[test]
fn by_size_switches_to_replay_past_its_limit_and_back_after_the_hold() {
    // Stages 0, 1, 2 of φ = 1, limit 2 stages, a probe's "large" held for
    // 2 solves.
    let mut sys = FlowSystem::with_solver(
        vec![1.0; 3],
        Share::MaxMin,
        MaxMinSolver::BySize { limit: 2 },
    );
    sys.set_large_hold(2);
    // Solve 1: a on {0, 1}, a component of 2 stages: filled, rate 1.
    let a = sys.start(0.0, &[0, 1], 10.0);
    sys.solve(0.0);
    assert!(!replayed(&sys, 0));
    assert_eq!(sys.rate(a), 1.0);
    // Solve 2: b on {1, 2} joins it: 3 stages > 2, replayed (held until
    // solve 2 + 2 = 4); a and b share stage 1, 1/2 each.
    let b = sys.start(0.0, &[1, 2], 10.0);
    sys.solve(0.0);
    assert!(replayed(&sys, 1));
    assert_eq!((sys.rate(a), sys.rate(b)), (0.5, 0.5));
    // Solve 3: b finishes; {0, 1} is small again but still believed large
    // (4 > 3): replayed, a back to 1.
    sys.finish(1.0, b);
    sys.solve(1.0);
    assert!(replayed(&sys, 0));
    assert_eq!(sys.rate(a), 1.0);
    // Solve 4: c on {0}; the hold is over (4 > 4 fails), so the probe
    // finds {0, 1} of 2 stages and fills it: a and c share stage 0.
    let c = sys.start(2.0, &[0], 10.0);
    sys.solve(2.0);
    assert!(!replayed(&sys, 0));
    assert_eq!((sys.rate(a), sys.rate(c)), (0.5, 0.5));
}

#[test]
fn every_solve_advances_every_flow_as_the_reference_does() {
    // Flow a (work 30 on stage 0, ps(30)) from 0.4; flow b starts on
    // stage 1, another component, at 0.2 + 0.2 + 0.2 = 0.6000000000000001.
    // a's rate stays 30, but the solve at b's start advances it: 30 −
    // 30 × 0.20000000000000007 = 24, so a ends at 0.6000000000000001 +
    // 24 / 30 = 1.4000000000000001 (pyserq 0.1.0), not at 0.4 + 30 / 30 =
    // 1.4, which would go before an engine's iteration ending at 1.4.
    assert_eq!(T_B, 0.6000000000000001);
    for policy in [Share::MaxMin, Share::Bottleneck] {
        for solver in SOLVERS {
            let (sys, a) = flow_a_then_b(policy, solver, 0);
            assert_eq!(sys.next_end(), Some((1.4000000000000001, a)));
            assert_eq!(sys.remaining(a, T_B), 24.0);
        }
    }
}

/// When flow b starts: 0.2 + 0.2 + 0.2.
const T_B: f64 = 0.2 + 0.2 + 0.2;

/// Flow a (work 30 on stage 0, ps(30)) from 0.4, solved (it ends at 1.4),
/// then flow b (work 30 on stage 1, ps(30)) from [`T_B`], solved; beside
/// them `long` flows of work 1e6 on ps(1) stages of their own from 0.
fn flow_a_then_b(policy: Share, solver: MaxMinSolver, long: usize) -> (FlowSystem, FlowId) {
    let mut capacity = vec![30.0, 30.0];
    capacity.extend(std::iter::repeat_n(1.0, long));
    let mut sys = FlowSystem::with_solver(capacity, policy, solver);
    if long > 0 {
        for k in 0..long {
            sys.start(0.0, &[2 + k as u32], 1e6);
        }
        sys.solve(0.0);
    }
    let a = sys.start(0.4, &[0], 30.0);
    sys.solve(0.4);
    assert_eq!(sys.next_end(), Some((1.4, a)));
    sys.start(T_B, &[1], 30.0);
    sys.solve(T_B);
    (sys, a)
}

#[test]
fn a_solve_of_a_large_system_advances_only_the_flows_it_changes() {
    // As above, but with EVERY_FLOW_LIMIT long flows (work 1e6 on stages
    // of their own, ps(1): they end at 1e6) beside a: at b's start the
    // system holds more than the limit, so the solve leaves a alone (its
    // rate does not change) and a still ends at 0.4 + 30 / 30 = 1.4.
    for policy in [Share::MaxMin, Share::Bottleneck] {
        for solver in SOLVERS {
            let (sys, a) = flow_a_then_b(policy, solver, super::EVERY_FLOW_LIMIT);
            assert_eq!(sys.next_end(), Some((1.4, a)));
            // 30 − 30 × (0.6000000000000001 − 0.4) in one step.
            assert_eq!(sys.remaining(a, T_B), 30.0 - 30.0 * (T_B - 0.4));
        }
    }
}

#[test]
fn a_long_flow_replays_every_solve_of_its_life_across_trims() {
    // Flow a (work 1000 at rate 3 on stage 0) lives through 300 solves of
    // short flows on stage 1 (more than the 2 × live + 64 solve times the
    // system keeps, so it trims); its remaining work and end are those of
    // advancing it at every solve, step by step, as 0.1.0 does.
    for policy in [Share::MaxMin, Share::Bottleneck] {
        let mut sys = FlowSystem::new(vec![3.0, 7.0], policy);
        let a = sys.start(0.0, &[0], 1000.0);
        sys.solve(0.0);
        let (mut rem, mut t) = (1000.0_f64, 0.0_f64);
        let mut now = 0.0_f64;
        for k in 0..300u64 {
            now += 0.013 + 0.001 * (k % 7) as f64;
            let b = sys.start(now, &[1], 0.01);
            sys.solve(now);
            rem -= 3.0 * (now - t);
            t = now;
            assert_eq!(sys.remaining(a, now), rem);
            // b (rate 7) ends first; finishing it is one more solve.
            let (end, id) = sys.next_end().expect("b is running");
            assert_eq!(id, b);
            sys.finish(end, b);
            sys.solve(end);
            rem -= 3.0 * (end - t);
            t = end;
            now = end;
        }
        assert_eq!(sys.next_end(), Some((t + rem / 3.0, a)));
    }
}
