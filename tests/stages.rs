//! Stage service (spec §6.3): delay, fifo(c), ps by virtual time, and the
//! order of simultaneous finishes. Each number carries its derivation.

mod common;

use common::{run, samples};

#[test]
fn two_equal_jobs_on_ps1_from_zero_both_end_at_2() {
    // Two jobs of work 1 share capacity 1: each runs at 1/2, so both need
    // 2 time units. They have equal tags (V + 1 = 1); the first to join
    // leaves first, in its own event, and sees the other still there.
    let r = run("stage cpu : ps(1);
        workload { arrive batch(2); }
        session { run cpu (1); observe done = now; observe left = queue(cpu); }
        run { horizon 5; }")
    .unwrap();
    assert_eq!(samples(&r, "done"), [2.0, 2.0]);
    assert_eq!(samples(&r, "left"), [1.0, 0.0]);
    let cpu = &r.stages[0];
    // Each sojourn is 2; the stage holds 2 jobs over [0, 2] of [0, 5].
    assert_eq!(
        (cpu.completed, cpu.mean_service, cpu.mean_wait),
        (2, Some(2.0), Some(0.0))
    );
    assert_eq!(cpu.mean_number, 4.0 / 5.0);
    assert_eq!(cpu.utilization, Some(2.0 / 5.0));
    // Finish events: the one issued at 0 (live), then the one reissued
    // after the first leaves (live): 2 events, no stale one.
    assert_eq!(r.events, 2);
}

#[test]
fn a_ps_job_that_joins_later_moves_the_finish_and_leaves_a_stale_event() {
    // Virtual time: A (work 2) joins at 0: V = 0, tag 2, finish issued for
    // 0 + (2 − 0)·1/1 = 2. B (work 1) joins at 1 after a delay: V = 0 +
    // (1 − 0)·1/1 = 1, tag 1 + 1 = 2; the finish is reissued for
    // 1 + (2 − 1)·2/1 = 3 (the tie goes to A, which joined first), and the
    // event at 2 becomes stale. At 3 A leaves, V = 1 + 2·1/2 = 2, and B's
    // finish is issued for 3 + (2 − 2)·1/1 = 3: a separate event.
    let r = run("stage gap : delay; stage cpu : ps(1);
        workload { arrive batch(2); }
        session { run gap (serial); run cpu (2 - serial); observe done = now; observe left = queue(cpu); }
        run { horizon 10; }")
    .unwrap();
    assert_eq!(samples(&r, "done"), [3.0, 3.0]);
    assert_eq!(samples(&r, "left"), [1.0, 0.0]);
    // gap's finish at 1, the stale ps finish at 2, A at 3, B at 3.
    assert_eq!(r.events, 4);
    // Sojourns 3 and 2.
    assert_eq!(r.stages[1].mean_service, Some(2.5));
}

#[test]
fn ps_present_reissues_a_finish_even_when_its_time_does_not_change() {
    // ps(present) gives every job rate 1. A (work 2) at 0 ends at 2; B
    // (work 2) joins at 1 and ends at 3. B's arrival reissues A's finish at
    // the same time 2, so the first one is stale but still an event.
    let r = run("stage gap : delay; stage cpu : ps(present);
        workload { arrive batch(2); }
        session { run gap (serial); run cpu (2); observe done = now; }
        run { horizon 10; }")
    .unwrap();
    assert_eq!(samples(&r, "done"), [2.0, 3.0]);
    // gap at 1, stale at 2, A at 2, B at 3.
    assert_eq!(r.events, 4);
}

#[test]
fn fifo2_with_three_jobs() {
    // Two servers, jobs of work 2, 1, 1 at 0: jobs 0 and 1 start at once;
    // job 2 waits for the first free server (job 1 at 1) and ends at 2.
    let r = run("stage f : fifo(2);
        workload { arrive batch(3); }
        session { run f (serial == 0 ? 2 : 1); observe done = now; observe busy_after = busy(f); }
        run { horizon 4; }")
    .unwrap();
    assert_eq!(samples(&r, "done"), [1.0, 2.0, 2.0]);
    // At 1 job 1 leaves and job 2 starts in the same event: 2 in service.
    // At 2 job 0 leaves first (scheduled first), then job 2.
    assert_eq!(samples(&r, "busy_after"), [2.0, 1.0, 0.0]);
    let f = &r.stages[0];
    // Waits 0, 0, 1 → 1/3; services 2, 1, 1 → 4/3.
    assert_eq!(
        (f.completed, f.mean_wait, f.mean_service),
        (3, Some(1.0 / 3.0), Some(4.0 / 3.0))
    );
    // Jobs present: 3 on [0,1), 2 on [1,2): (3 + 2) / 4. Not empty on [0,2]: 2/4.
    assert_eq!(f.mean_number, 5.0 / 4.0);
    assert_eq!(f.utilization, Some(0.5));
}

#[test]
fn two_delay_jobs_ending_together_leave_in_two_events() {
    // Spec §6.2: the first session after the run sees the other job still
    // there, the second sees none.
    let r = run("stage d : delay;
        workload { arrive batch(2); }
        session { run d (1); observe q = queue(d); }
        run { horizon 5; }")
    .unwrap();
    assert_eq!(samples(&r, "q"), [1.0, 0.0]);
    assert_eq!(r.events, 2);
}

#[test]
fn work_counts_waiting_and_served_jobs() {
    // A fifo with one server: job 0 (work 2) in service, job 1 (work 1.5)
    // waiting. A probe at 0.5 reads (2 − 0.5) + 1.5 = 3; busy 1, queue 2.
    let r = run("stage f : fifo; stage clock : delay;
        workload { arrive batch(3); }
        session {
          branch (serial == 2) { run clock (0.5); observe w = work(f); observe b = busy(f); observe q = queue(f); end; }
          run f (serial == 0 ? 2 : 1.5);
        }
        run { horizon 5; }")
    .unwrap();
    assert_eq!(samples(&r, "w"), [3.0]);
    assert_eq!(samples(&r, "b"), [1.0]);
    assert_eq!(samples(&r, "q"), [2.0]);
}

#[test]
fn ps_finishes_at_one_instant_follow_stage_declaration_order() {
    // Y is declared before X; both finishes are issued at the end of the
    // settle at 0, Y's first, so at 1 the X job's session still sees Y empty
    // and the Y job's session sees X busy.
    let r = run("stage Y : ps(1); stage X : ps(1);
        workload { arrive batch(2); }
        session {
          branch (serial == 0) { run X (1); observe x_sees_y = queue(Y); }
          else { run Y (1); observe y_sees_x = queue(X); }
        }
        run { horizon 10; }")
    .unwrap();
    assert_eq!(samples(&r, "y_sees_x"), [1.0]);
    assert_eq!(samples(&r, "x_sees_y"), [0.0]);
}

#[test]
fn infinite_work_never_completes() {
    // A job of work inf stays at the stage to the horizon.
    let r = run("stage d : delay;
        workload { arrive batch(1); }
        session { run d (inf); observe never = 1; }
        run { horizon 4; }")
    .unwrap();
    assert!(samples(&r, "never").is_empty());
    assert_eq!(
        (r.stages[0].completed, r.stages[0].mean_number, r.ended),
        (0, 1.0, 0)
    );
}

#[test]
fn a_zero_work_run_yields_to_the_sessions_ready_behind_it() {
    // No job and no event, but the session goes to the back of the ready
    // queue (pyserq 0.1.0): session 1, ready behind session 0, reaches the
    // fifo g first and ends at 1; session 0 ends at 2.
    let r = run("stage f : delay; stage g : fifo;
        workload { arrive batch(2); }
        session { branch (serial == 0) { run f (0); } run g (1); observe who = serial; }
        run { horizon 5; }")
    .unwrap();
    assert_eq!(samples(&r, "who"), [1.0, 0.0]);
    assert_eq!(r.events, 2);
}

#[test]
fn a_ps_finish_moves_virtual_time_at_least_to_the_leaving_tag() {
    // Two jobs of work 1 with equal tags on ps(min(present, 2)) after a
    // delay of 2/3: when the first leaves, virtual time is its tag exactly,
    // so the other has no sliver of work left: work() reads 0 or -0, not
    // 2e-16, and both end at one instant.
    let r = run("stage g : delay; stage s : ps(0.5 + present / 2);
        workload { arrive batch(2); }
        session { run g (0.75); run s (1); observe w = work(s); observe t = now; }
        run { horizon 5; }")
    .unwrap();
    assert!(
        samples(&r, "w").iter().all(|w| *w == 0.0),
        "{:?}",
        samples(&r, "w")
    );
    let t = samples(&r, "t");
    assert_eq!(t[0], t[1]);
}

#[test]
fn a_zero_work_run_passes_at_once_and_is_counted_nowhere() {
    // At a busy fifo the run of 0 does not wait; no completion, no event.
    let r = run("stage f : fifo;
        workload { arrive batch(2); }
        session { run f (serial == 0 ? 1 : 0); observe done = now; }
        run { horizon 3; }")
    .unwrap();
    assert_eq!(samples(&r, "done"), [0.0, 1.0]);
    assert_eq!((r.stages[0].completed, r.events), (1, 1));
}
