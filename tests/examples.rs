//! Every example program runs, and its key figures are what its header
//! comment promises: queueing theory for the single-turn queues (within a
//! tolerance the run's length allows), the seed's hand-derived values for
//! the P/D programs.

use serq::{Overrides, Report};
use std::path::Path;

fn run_example(path: &str) -> Report {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(path);
    let source = std::fs::read_to_string(&file).expect("the example exists");
    let program = serq::compile_source(&source, &Overrides::default()).expect("links");
    serq::run(&program).expect("runs")
}

fn mean(r: &Report, name: &str) -> f64 {
    let obs = r
        .observes
        .iter()
        .find(|o| o.name == name)
        .expect("observation");
    serq::report::Summary::of(&obs.samples)
        .mean
        .expect("samples")
}

fn utilization(r: &Report, name: &str) -> f64 {
    r.stages
        .iter()
        .find(|s| s.name == name)
        .and_then(|s| s.utilization)
        .expect("stage")
}

fn within(actual: f64, expected: f64, relative: f64) -> bool {
    (actual - expected).abs() <= relative * expected.abs()
}

#[test]
fn mm1_responds_in_one_over_one_minus_rho() {
    // ρ = 0.8, E[S] = 1: E[T] = 1/(1 - 0.8) = 5; the server is busy 80%.
    let r = run_example("single-turn/mm1.sq");
    assert!(
        within(mean(&r, "response"), 5.0, 0.15),
        "{}",
        mean(&r, "response")
    );
    assert!(within(utilization(&r, "srv"), 0.8, 0.03));
}

#[test]
fn md1_waits_half_as_long_as_mm1() {
    // Pollaczek-Khinchine with cv² = 0: W = 0.8·1/(2·0.2) = 2, T = 3.
    let r = run_example("single-turn/mg1_det.sq");
    assert!(
        within(mean(&r, "response"), 3.0, 0.1),
        "{}",
        mean(&r, "response")
    );
}

#[test]
fn mg1_with_h2_service_waits_ten() {
    // cv² = 4: W = 0.8·(1 + 4)/(2·0.2)·1 = 10, T = 11 (heavy tails: 25%).
    let r = run_example("single-turn/mg1_h2.sq");
    assert!(
        within(mean(&r, "response"), 11.0, 0.25),
        "{}",
        mean(&r, "response")
    );
}

#[test]
fn processor_sharing_has_the_mm1_mean_response() {
    // M/M/1-PS: E[T] = E[S]/(1 - ρ) = 5, as under fifo.
    let r = run_example("single-turn/ps_server.sq");
    assert!(
        within(mean(&r, "response"), 5.0, 0.15),
        "{}",
        mean(&r, "response")
    );
    // A request of work w > 2 takes w/(1 - ρ) on average: more than 10.
    assert!(mean(&r, "slow") > 10.0);
}

#[test]
fn request_slots_bound_what_is_inside_the_engine() {
    // At most 6 slots: mean used ≤ 6, and the engine (4 servers, offered 3)
    // holds on average what the pool lends: Little's law makes them equal.
    let r = run_example("single-turn/fifo4_slots.sq");
    let slots = &r.pools[0];
    let engine = &r.stages[0];
    assert!(slots.mean_used <= 6.0);
    assert!(within(slots.mean_used, engine.mean_number, 1e-9));
    assert!(slots.mean_wait.expect("someone waited") > 0.0);
}

#[test]
fn before_the_reads_end_at_2_and_after_at_3() {
    // The seed's derivation: alone on the decoder's link, 1 + 1 = 2; sharing
    // the sender's egress at 1/2 each, 1 + 2 = 3.
    let before = run_example("pd-disaggregation/before.sq");
    assert_eq!(before.observes[0].samples, [2.0, 2.0]);
    let after = run_example("pd-disaggregation/after.sq");
    assert_eq!(after.observes[0].samples, [3.0, 3.0]);
    assert!(within(utilization(&after, "egress"), 0.2, 1e-12));
}

#[test]
fn maxmin_reads_are_never_slower_than_bottleneck_reads() {
    // Same workload and seed: maxmin hands the capacity bottleneck leaves
    // idle to other reads. The reference measured 1.84 and 1.93.
    let maxmin = mean(&run_example("pd-disaggregation/pull_maxmin.sq"), "read");
    let bottleneck = mean(&run_example("pd-disaggregation/pull_bottleneck.sq"), "read");
    assert!(maxmin < bottleneck, "{maxmin} vs {bottleneck}");
    assert!(within(maxmin, 1.84, 0.05) && within(bottleneck, 1.93, 0.05));
}

/// Whether `actual` lies within the bounds check.py gives a stochastic
/// case: max(3 × the reference's ci, 5% of the reference's mean).
fn as_the_reference(actual: f64, mean: f64, ci: f64) -> bool {
    (actual - mean).abs() <= (3.0 * ci).max(0.05 * mean.abs())
}

fn pool<'r>(r: &'r Report, name: &str) -> &'r serq::report::PoolRow {
    r.pools.iter().find(|p| p.name == name).expect("pool")
}

#[test]
fn the_vllm_engine_batches_preempts_and_answers_as_the_reference() {
    // pyserq 0.1.0 on examples/single-turn/vllm.sq (seed 1): ttft 0.061364
    // (ci 0.007), response 0.550749 (ci 0.017361), engine utilisation
    // 0.8537; 343 preemptions: 600 blocks are tight for 4 requests a second.
    let r = run_example("single-turn/vllm.sq");
    let (ttft, response) = (mean(&r, "ttft"), mean(&r, "response"));
    assert!(as_the_reference(ttft, 0.061364, 0.007), "ttft {ttft}");
    assert!(
        as_the_reference(response, 0.550749, 0.017361),
        "response {response}"
    );
    assert!((utilization(&r, "engine") - 0.8537).abs() <= 0.03);
    assert!(ttft < response);
    let kv = pool(&r, "kv");
    assert!(kv.preemptions > 0 && kv.evicted_entries > 0);
    // The engine batches: more than one resident on average.
    assert!(r.stages[0].mean_number > 1.5);
}

#[test]
fn the_chat_reuses_its_conversations_prefix_as_the_reference() {
    // pyserq 0.1.0 on examples/multi-turn/chat.sq: reused 762.26 (ci
    // 45.46) of prompts prefilled 1056.14 (ci 66.43); ttft 0.034417 (ci
    // 0.002292); turn_time 1.036293 (ci 0.033192).
    let r = run_example("multi-turn/chat.sq");
    assert!(as_the_reference(mean(&r, "reused"), 762.262574, 45.460491));
    assert!(as_the_reference(
        mean(&r, "prefilled"),
        1056.141548,
        66.433878
    ));
    assert!(as_the_reference(mean(&r, "ttft"), 0.034417, 0.002292));
    assert!(as_the_reference(mean(&r, "turn_time"), 1.036293, 0.033192));
    // The prefix cache holds tens of thousands of tokens.
    assert!(pool(&r, "kv").mean_cached > 20_000.0);
}

#[test]
fn nixl_pull_reads_each_prompt_over_both_nics_as_the_reference() {
    // pyserq 0.1.0 on examples/pd-disaggregation/nixl_pull.sq at 8 + 8:
    // hit 1637.99 (ci 116.13), ttft 0.039408 (ci 0.001544), read 0.013957
    // (ci 0.000496), response 0.944596 (ci 0.053121).
    let r = run_example("pd-disaggregation/nixl_pull.sq");
    assert!(as_the_reference(mean(&r, "hit"), 1637.986014, 116.125977));
    assert!(as_the_reference(mean(&r, "ttft"), 0.039408, 0.001544));
    assert!(as_the_reference(mean(&r, "read"), 0.013957, 0.000496));
    assert!(as_the_reference(mean(&r, "response"), 0.944596, 0.053121));
    // A read of ~2000 tokens at 2e5 tokens a second takes ~10 ms alone.
    assert!(mean(&r, "read") > 0.01);
    // 8 + 8 instances: every engine and NIC row is present.
    assert_eq!(r.stages.iter().filter(|s| s.name == "egress").count(), 8);
}

/// An example compiled with `let` overrides (`--set NAME=VALUE`).
fn run_example_with(path: &str, sets: &[(&str, f64)]) -> Report {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(path);
    let source = std::fs::read_to_string(&file).expect("the example exists");
    let overrides = Overrides {
        sets: sets.iter().map(|(n, v)| (n.to_string(), *v)).collect(),
        ..Overrides::default()
    };
    let program = serq::compile_source(&source, &overrides).expect("links");
    serq::run(&program).expect("runs")
}

fn median(r: &Report, name: &str) -> f64 {
    let obs = r
        .observes
        .iter()
        .find(|o| o.name == name)
        .expect("observation");
    serq::report::Summary::of(&obs.samples)
        .p50
        .expect("samples")
}

#[test]
fn llama8b_on_an_h100_decodes_above_its_bandwidth_bound_with_a_pool_far_from_full() {
    // The head's figures: a decode step of batch 1 takes 16.06e9 / 2.68e12
    // + 1 ms = 6.99 ms, so no request decodes faster; at 6 requests a
    // second the batch is small and tpot stays near it (about 11 ms).
    // The pool: floor(467 291 / 16) · 16 = 467 280 tokens, of which about
    // 24 000 are used, so nothing is preempted.
    let r = run_example("hardware/llama8b_h100.sq");
    let tpot = mean(&r, "tpot");
    assert!((0.00699..0.015).contains(&tpot), "tpot {tpot}");
    let ttft = mean(&r, "ttft");
    // At least the mean prompt's own prefill, 1 500 · 32.5 µs ≈ 49 ms, on average.
    assert!((0.049..0.2).contains(&ttft), "ttft {ttft}");
    let kv = pool(&r, "kv");
    assert!(kv.mean_used < 100_000.0 && kv.preemptions == 0);
    let program = serq::compile_source(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/hardware/llama8b_h100.sq"),
        )
        .unwrap(),
        &Overrides::default(),
    )
    .unwrap();
    assert_eq!(program.pools[0].cap, 467_280.0);
}

#[test]
fn llama70b_decodes_faster_on_h200s_by_about_the_bandwidths_ratio() {
    // The head: on H100s a decode of a small batch takes 15.4 ms, on H200s
    // 11.4 ms; the median tpot (23 and 16 ms, the prefill chunks sharing
    // iterations) keeps the bandwidths' ratio 3.35 / 4.8 = 0.70 within a
    // few percent, while ttft (compute-bound, equal FLOP/s) is the same.
    let h100 = run_example("hardware/llama70b_tp4.sq");
    let h200 = run_example_with("hardware/llama70b_tp4.sq", &[("gpu", 3.0)]);
    let ratio = median(&h200, "tpot") / median(&h100, "tpot");
    assert!((0.65..0.78).contains(&ratio), "tpot ratio {ratio}");
    assert!(median(&h100, "tpot") > 0.0154 && median(&h200, "tpot") > 0.0114);
    let ttft = median(&h200, "ttft") / median(&h100, "ttft");
    assert!((0.97..1.03).contains(&ttft), "ttft ratio {ttft}");
    // Four GPUs at the list prices: 4 · 2.99 and 4 · 4.54 dollars an hour.
    assert!((mean(&h100, "dollars") - 11.96).abs() < 1e-9);
    assert!((mean(&h200, "dollars") - 18.16).abs() < 1e-9);
}

#[test]
fn pd_in_bytes_reads_each_prompts_kv_at_the_nics_bytes_per_second() {
    // A prompt of n tokens is n · 327 680 bytes: at 50 GB/s, 2 000 to 6 000
    // tokens read in 13.1 to 39.3 ms alone (26.2 ms for the mean), longer
    // when reads share a NIC. The decode step is at least 9.19 + 1 ms.
    let r = run_example("hardware/pd_bytes.sq");
    let read = median(&r, "read");
    assert!((0.0262..0.0393).contains(&read), "read {read}");
    let obs = r.observes.iter().find(|o| o.name == "read").unwrap();
    let fastest = obs.samples.iter().copied().fold(f64::INFINITY, f64::min);
    assert!(
        fastest >= 2000.0 * 327_680.0 / 50e9 * (1.0 - 1e-9),
        "{fastest}"
    );
    let tpot = mean(&r, "tpot");
    assert!((0.0102..0.015).contains(&tpot), "tpot {tpot}");
    // A NIC ten times slower: the reads take ten times as long at least.
    let slow = run_example_with("hardware/pd_bytes.sq", &[("nic", 5e9)]);
    assert!(
        median(&slow, "read") > 10.0 * 0.0262,
        "{}",
        median(&slow, "read")
    );
}

/// An example compiled from its file, so that its trace resolves beside it.
fn run_example_file(path: &str, sets: &[(&str, f64)]) -> Report {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(path);
    let overrides = Overrides {
        sets: sets.iter().map(|(n, v)| (n.to_string(), *v)).collect(),
        ..Overrides::default()
    };
    let program = serq::compile_file(&file, &overrides).unwrap_or_else(|e| panic!("{e}"));
    serq::run(&program).expect("runs")
}

#[test]
fn azure_replay_replays_every_row_of_its_slice_and_speed_compresses_it() {
    // 2 000 rows over 424.26 s: every row arrives by the horizon 600, the
    // trace is then exhausted and the run goes on to 600.
    let r = run_example_file("traffic/azure_replay.sq", &[]);
    assert_eq!((r.arrivals, r.end), (2000, 600.0));
    assert_eq!(pool(&r, "kv").preemptions, 0);
    // Twice as fast: the same 2 000 rows by 424.26 / 2 = 212.13 s, so a
    // horizon of 213 still sees them all (and 212 does not).
    let fast = |h: f64| {
        let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/traffic/azure_replay.sq");
        let o = Overrides {
            sets: vec![("speed".into(), 2.0)],
            horizon: Some(h),
            warmup: Some(0.0),
            ..Overrides::default()
        };
        serq::run(&serq::compile_file(&file, &o).unwrap())
            .unwrap()
            .arrivals
    };
    assert_eq!((fast(213.0), fast(212.0)), (2000, 1999));
    // The faster replay queues more: a higher mean response.
    let twice = run_example_file("traffic/azure_replay.sq", &[("speed", 2.0)]);
    assert!(mean(&twice, "response") > mean(&r, "response"));
}

#[test]
fn diurnal_arrivals_follow_the_rate_in_each_tenth_of_the_day() {
    // The head's integrals of the rate over each 24 s tenth; each count
    // lies within 4 sd of its Poisson mean (sd = √mean).
    let r = run_example_file("traffic/diurnal.sq", &[]);
    let expected = [
        38.4, 67.2, 96.0, 124.8, 203.6, 153.6, 124.8, 96.0, 67.2, 38.4,
    ];
    let tenth = &r
        .observes
        .iter()
        .find(|o| o.name == "tenth")
        .unwrap()
        .samples;
    for (i, mu) in expected.iter().enumerate() {
        let k = tenth.iter().filter(|&&t| t == i as f64).count() as f64;
        assert!(
            (k - mu).abs() <= 4.0 * mu.sqrt(),
            "tenth {i}: {k} arrivals, expected {mu}"
        );
    }
    assert!((tenth.len() as f64 - 1010.0).abs() <= 4.0 * 1010f64.sqrt());
}
