//! Workloads, turns, warm-up and the run's figures (spec §3.6–3.8, §6.1,
//! §6.5, §6.9, §6.11).

mod common;

use common::{run, samples};

#[test]
fn poisson_arrives_at_zero_and_renewal_after_one_gap() {
    // poisson(0) gives exactly the arrival at 0; renewal(2) first arrives
    // at 2, then 4, 6 (8 is beyond the horizon 7).
    let r = run("workload { arrive poisson(0); } session { observe at = now; } run { horizon 7; }")
        .unwrap();
    assert_eq!((samples(&r, "at"), r.arrivals, r.events), (vec![0.0], 1, 1));
    let r = run("workload { arrive renewal(2); } session { observe at = now; } run { horizon 7; }")
        .unwrap();
    assert_eq!(samples(&r, "at"), [2.0, 4.0, 6.0]);
}

#[test]
fn an_arrival_exactly_at_the_horizon_counts() {
    // Events at H are processed: renewal(2) with horizon 6 arrives at 2, 4, 6.
    let r = run("workload { arrive renewal(2); } session { observe at = now; } run { horizon 6; }")
        .unwrap();
    assert_eq!((r.arrivals, samples(&r, "at").len()), (3, 3));
}

#[test]
fn closed_replaces_a_session_at_the_instant_it_ends() {
    // closed(1), each session runs 1: sessions start at 0, 1, 2, 3; the one
    // started at 3 is still running at the horizon 3.5.
    let r = run("stage d : delay; workload { arrive closed(1); }
        session { observe born = now; run d (1); }
        run { horizon 3.5; }")
    .unwrap();
    assert_eq!(samples(&r, "born"), [0.0, 1.0, 2.0, 3.0]);
    assert_eq!((r.arrivals, r.ended, r.mean_live), (4, 3, 1.0));
}

#[test]
fn init_runs_at_creation_and_turn_at_every_turn_statement() {
    // turn_no is incremented before the turn block runs, so the block sees
    // the new value; init sees serial.
    let r = run(
        "workload { arrive batch(2); init { set k = 10 * serial; } turn { set k = k + turn_no; } }
        session { turn; turn; observe k_seen = k; observe t = turn_no; }
        run { horizon 1; }",
    )
    .unwrap();
    // k = 10·serial + 1 + 2.
    assert_eq!(samples(&r, "k_seen"), [3.0, 13.0]);
    assert_eq!(samples(&r, "t"), [2.0, 2.0]);
    assert_eq!(r.turns, 4);
}

#[test]
fn warmup_filters_samples_completions_and_time_averages() {
    // renewal(1) arrivals at 1, 2, …, each running 1.5 on a delay stage;
    // warmup 4, horizon 8. Samples at t >= 4 only (an observation exactly
    // at 4 counts); completions at t >= 4 (jobs of arrivals 3..6 end at
    // 4.5..7.5); arrivals count the whole run (1..8).
    let r = run("stage d : delay; workload { arrive renewal(1); }
        session { observe start = now; run d (1.5); }
        run { horizon 8; warmup 4; }")
    .unwrap();
    assert_eq!(samples(&r, "start"), [4.0, 5.0, 6.0, 7.0, 8.0]);
    assert_eq!(r.arrivals, 8);
    assert_eq!((r.stages[0].completed, r.ended), (4, 4));
    // Over [4, 8]: jobs present alternate 2 (for 0.5) and 1 (for 0.5) each
    // unit: mean 1.5; throughput 4 / 4.
    assert_eq!(r.stages[0].mean_number, 1.5);
    assert_eq!(r.stages[0].throughput, 1.0);
    // The warm-up marker is an event: 8 arrivals + 6 job ends by 8 + marker.
    assert_eq!(r.events, 15);
}

#[test]
fn pool_wait_counts_admissions_after_warmup_even_when_the_wait_began_before() {
    // cap 1, batch(2), each holds for 2: session 1 waits on [0, 2]; warmup
    // 1. Its admission at 2 counts with the whole wait 2; session 0's at 0
    // does not count (but both count as admissions).
    let r = run(
        "pool p { cap 1; } stage d : delay; workload { arrive batch(2); }
        session { hold p (1) { run d (2); } }
        run { horizon 5; warmup 1; }",
    )
    .unwrap();
    assert_eq!(
        (r.pools[0].admissions, r.pools[0].mean_wait),
        (2, Some(2.0))
    );
    // Queue 1 on [1, 2) of [1, 5].
    assert_eq!(r.pools[0].mean_queue, 0.25);
}

#[test]
fn arrivals_stop_after_n_and_the_run_ends_when_they_drain() {
    // renewal(1) arrivals at 1..3, each 1.5 at a fifo: they end at 2.5,
    // 4, 5.5; `end` is 5.5.
    let r = run("stage s : fifo; workload { arrive renewal(1); }
        session { run s (1.5); observe done = now; }
        run { horizon 100; arrivals 3; }")
    .unwrap();
    assert_eq!(samples(&r, "done"), [2.5, 4.0, 5.5]);
    assert_eq!((r.end, r.arrivals, r.ended), (5.5, 3, 3));
    // Utilisation over [0, 5.5]: busy on [1, 5.5].
    assert_eq!(r.stages[0].utilization, Some(4.5 / 5.5));
}

#[test]
fn choose_ties_go_to_the_smaller_index_and_nan_never_replaces() {
    // Keys (j == 1 ? 0/0 : 5): 0 has 5, 1 has NaN (never replaces), 2 has
    // 5 (a tie keeps 0). Keys (2 - j, 0): strictly smaller each time: 2.
    let r = run("workload { arrive batch(1); }
        session {
          choose a in 3 by (a == 1 ? 0/0 : 5);
          choose b in 3 by (2 - b, 0);
          set zero = 0;
          choose c in zero by (c);
          set n = 2.9;
          choose d in n by (-d);
          observe oa = a; observe ob = b; observe oc = c; observe od = d;
        }
        run { horizon 1; }")
    .unwrap();
    assert_eq!(samples(&r, "oa"), [0.0]);
    assert_eq!(samples(&r, "ob"), [2.0]);
    // A computed count <= 0 gives 0; 2.9 truncates to 2 candidates (a
    // constant one that is not a whole number is a link error).
    assert_eq!(samples(&r, "oc"), [0.0]);
    assert_eq!(samples(&r, "od"), [1.0]);
}

#[test]
fn choose_keys_read_the_candidates_members() {
    // The session at 1 finds every K free (4), unused, every P empty: it
    // picks 0 three times (ties go to the smaller index), holds a unit of
    // K[0] and runs 5 at P[0]. The session at 2 sees free [3, 4, 4] (least:
    // 0), used [1, 0, 0] (least: 1) and queue [1, 0] (least: 1). pyserq 0.1.0
    // gives the same means (0, 0.5, 0.5).
    let r = run("pool K[3] { cap 4; } stage P[2] : fifo;
        workload { arrive renewal(1); }
        session {
          choose f in 3 by (free(K[f]));
          choose u in 3 by (used(K[u]));
          choose q in 2 by (queue(P[q]), busy(P[q]));
          observe of = f; observe ou = u; observe oq = q;
          hold K[f] (1) { run P[q] (5); }
        }
        run { horizon 2.5; }")
    .unwrap();
    assert_eq!(samples(&r, "of"), [0.0, 0.0]);
    assert_eq!(samples(&r, "ou"), [0.0, 1.0]);
    assert_eq!(samples(&r, "oq"), [0.0, 1.0]);
}

#[test]
fn a_choose_by_one_uniform_key_picks_as_the_general_scan_does() {
    // `by (~uniform(a, b))` alone takes its draws in a loop of its own; the
    // constant second key of `(~uniform(a, b), 0)` breaks no tie the first
    // leaves (equal draws tie in both), so the two scans must pick the same
    // candidates and leave the stream at the same draw (the `~exp` after).
    // Counts 3 (within the shared first draws) and 700 (past them), and a
    // range of another offset and width.
    let program = |key: &str| {
        format!(
            "workload {{ arrive batch(300); }}
            session {{
              choose s in 3 by ({key});
              choose l in 700 by ({key});
              choose f in 700 by (~uniform(-1, 3){tail});
              observe os = s; observe ol = l; observe of = f; observe w = ~exp(1);
            }}
            run {{ horizon 1; seed 11; }}",
            tail = if key.ends_with(", 0") { ", 0" } else { "" },
        )
    };
    let alone = run(&program("~uniform(0, 1)")).unwrap();
    let general = run(&program("~uniform(0, 1), 0")).unwrap();
    for name in ["os", "ol", "of", "w"] {
        assert_eq!(samples(&alone, name), samples(&general, name), "{name}");
    }
    // The picks are spread over the candidates (uniform: mean (n - 1) / 2),
    // not stuck at the first: 300 picks of 700 have a standard error of
    // 202 / sqrt(300) = 11.7.
    let mean = |v: Vec<f64>| v.iter().sum::<f64>() / v.len() as f64;
    for name in ["ol", "of"] {
        let m = mean(samples(&alone, name));
        assert!((m - 349.5).abs() < 60.0, "{name}: mean pick {m}");
    }
}

#[test]
fn a_choose_past_its_family_stops_at_the_first_candidate_outside() {
    // Candidates 0..3 are members of P[3]; candidate 3 is not.
    let e = run("stage P[3] : fifo;
        workload { arrive batch(1); }
        session { choose i in 4 by (queue(P[i])); run P[i] (1); }
        run { horizon 1; }")
    .unwrap_err();
    assert!(
        e.message.contains("index 3 out of range (count 3)"),
        "{}",
        e.message
    );
}

#[test]
fn one_seed_gives_one_report_digit_for_digit() {
    let src = "stage s : fifo; workload { arrive poisson(0.8); }
        session { set t0 = now; run s (~exp(1)); observe resp = now - t0; }
        run { horizon 2000; seed 7; }";
    let (a, b) = (run(src).unwrap(), run(src).unwrap());
    assert_eq!(a, b);
    let other = run(&src.replace("seed 7", "seed 8")).unwrap();
    assert_ne!(samples(&a, "resp"), samples(&other, "resp"));
}

#[test]
fn a_sessions_draws_do_not_depend_on_the_others() {
    // Common random numbers: session k's work is the same whether or not
    // another program draws more in its sessions.
    let one = run(
        "workload { arrive batch(3); } session { observe w = ~exp(1); } run { horizon 1; seed 3; }",
    )
    .unwrap();
    let two = run("workload { arrive batch(3); } session { observe w = ~exp(1); observe extra = ~exp(1); } run { horizon 1; seed 3; }").unwrap();
    assert_eq!(samples(&one, "w"), samples(&two, "w"));
}
