//! Runs over several stages (flows, spec §6.4) as the engine drives them:
//! event order, shared-stage figures and `ps(inf)`.

mod common;

use common::{run, samples};

#[test]
fn a_shared_stage_reports_carried_capacity_and_counts_each_flow_once() {
    // A = ps(1) carries f1 (over A and B) and f2 (A alone); B = ps(2)
    // carries f1 and f3 (B alone), all work 1 from 0. maxmin: A fills at
    // 1/2 (f1, f2), f3 takes B's rest 3/2 and ends at 2/3; f1, f2 end at 2.
    let r = run("stage A : ps(1); stage B : ps(2); share maxmin;
        workload { arrive batch(3); }
        session {
          branch (serial == 0) { run A, B (1); observe f1 = now; end; }
          branch (serial == 1) { run A (1); observe f2 = now; end; }
          run B (1); observe f3 = now;
        }
        run { horizon 10; }")
    .unwrap();
    assert_eq!(samples(&r, "f3"), [2.0 / 3.0]);
    assert_eq!(
        (samples(&r, "f1"), samples(&r, "f2")),
        (vec![2.0], vec![2.0])
    );
    let (a, b) = (&r.stages[0], &r.stages[1]);
    // B carries 2/2 on [0, 2/3) and 1/2 / 2 on [2/3, 2): (2/3 + 1/3) / 10.
    assert!((b.utilization.unwrap() - 0.1).abs() < 1e-12);
    // A is full on [0, 2]: 0.2. Each flow completes once at every stage it held.
    assert_eq!((a.utilization, a.completed, b.completed), (Some(0.2), 2, 2));
    // Service is start to end; no flow waits.
    assert_eq!((a.mean_service, a.mean_wait), (Some(2.0), Some(0.0)));
}

#[test]
fn simultaneous_flow_ends_leave_one_per_event_in_start_order() {
    let r = run("stage E : ps(1); stage I[2] : ps(1); share maxmin;
        workload { arrive batch(2); }
        session { set j = serial; run E, I[j] (1); observe left_on_E = queue(E); }
        run { horizon 10; }")
    .unwrap();
    // Both end at 2; the first to finish sees the other still on E.
    assert_eq!(samples(&r, "left_on_E"), [1.0, 0.0]);
    // Two flow finishes; the flow event is reissued at 0 and at 2 only.
    assert_eq!(r.events, 2);
}

#[test]
fn a_tiny_remainder_of_work_is_kept_to_its_own_end() {
    // Two flows share N = ps(200) from 0, works 1 and 1 + 1e-13: the first
    // ends at 1/100, the other has 1e-13 left and alone ends 1e-13/200
    // later (pyserq 0.1.0: 0.0100000000000005). serq once took a remainder
    // within 1e-12 of the work for zero, so both ended at 0.01 and events
    // that fell between them came in another order (differential runs).
    let r = run("stage N : ps(200); stage I[2] : ps(inf); share maxmin;
        workload { arrive batch(2); }
        session { run N, I[serial] (serial == 0 ? 1 : 1 + 1e-13); observe t = now; }
        run { horizon 10; }")
    .unwrap();
    assert_eq!(samples(&r, "t"), [0.01, 0.0100000000000005]);
}

#[test]
fn a_delay_job_scheduled_later_ends_before_a_reissued_flow_event() {
    // A flow on A, B from 0 ends at 2. A delay job scheduled at 0.5 ends at
    // 2. A flow on C, D starting at 1 reissues the flow event after the delay
    // job's, so at 2 the delay job's session sees the first flow still on A.
    let r = run(
        "stage A : ps(1); stage B : ps(1); stage C : ps(1); stage D : ps(1); stage W : delay;
        share maxmin;
        workload { arrive batch(3); }
        session {
          branch (serial == 0) { run A, B (2); end; }
          branch (serial == 1) { run W (0.5); run W (1.5); observe seen_on_A = queue(A); end; }
          run W (1); run C, D (5);
        }
        run { horizon 20; }",
    )
    .unwrap();
    assert_eq!(samples(&r, "seen_on_A"), [1.0]);
}

#[test]
fn a_flow_over_infinite_stages_ends_at_once_and_their_utilization_is_null() {
    let r = run("stage A : ps(inf); stage B : ps(inf); share bottleneck;
        workload { arrive batch(1); }
        session { run A, B (5); observe done = now; }
        run { horizon 1; }")
    .unwrap();
    assert_eq!(samples(&r, "done"), [0.0]);
    assert_eq!((r.stages[0].utilization, r.stages[0].completed), (None, 1));
}

#[test]
fn work_on_a_shared_stage_is_the_remaining_work_of_its_flows() {
    // Two flows of work 2 and 3 on E (ps(1)) with I (ps(2)): each gets 1/2.
    // A probe at 1 reads (2 − 0.5) + (3 − 0.5) = 4 and 2 flows.
    let r = run(
        "stage E : ps(1); stage I : ps(2); stage clock : delay; share maxmin;
        workload { arrive batch(3); }
        session {
          branch (serial == 2) { run clock (1); observe w = work(E); observe n = busy(E); end; }
          run E, I (2 + serial);
        }
        run { horizon 10; }",
    )
    .unwrap();
    assert_eq!(samples(&r, "w"), [4.0]);
    assert_eq!(samples(&r, "n"), [2.0]);
}

#[test]
fn an_infinite_stage_that_never_limits_a_flow_reports_utilization_0() {
    // The flow over A (ps(inf)) and B (ps(1)) runs at B's 1 and ends at 2.
    // A carries 1/inf = 0 of its capacity; B is full on [0, 2] of [0, 4].
    // (Utilisation is undefined only where a flow of infinite rate is held,
    // even for no time: inf/inf.)
    let r = run("stage A : ps(inf); stage B : ps(1); share maxmin;
        workload { arrive batch(1); }
        session { run A, B (2); observe done = now; }
        run { horizon 4; }")
    .unwrap();
    assert_eq!(samples(&r, "done"), [2.0]);
    assert_eq!(
        (r.stages[0].utilization, r.stages[1].utilization),
        (Some(0.0), Some(0.5))
    );
    assert_eq!(r.stages[0].mean_number, 0.5);
}
