//! Pools (spec §6.6–6.8): admission, head-of-line blocking, reserve,
//! rejection, grow stalls, release and leases.

mod common;

use common::{run, samples};

#[test]
fn head_of_line_blocking_on_a_pool() {
    // cap 8; requests 5, 5, 1 at 0. Session 0 holds 5 on [0, 2]; session 1
    // (5) waits, and session 2 (1) waits behind it although 3 units are
    // free. At 2 session 0's release admits both at once, before session 0
    // goes on: it already sees 2 holders.
    let r = run("pool mem { cap 8; } stage work : delay;
        workload { arrive batch(3); }
        session {
          hold mem (serial < 2 ? 5 : 1) { observe admitted = now; run work (2); }
          observe holders_after = holders(mem);
        }
        run { horizon 10; }")
    .unwrap();
    assert_eq!(samples(&r, "admitted"), [0.0, 2.0, 2.0]);
    assert_eq!(samples(&r, "holders_after"), [2.0, 1.0, 0.0]);
    let mem = &r.pools[0];
    // Waits 0, 2, 2 (every hold's first pool is mem).
    assert_eq!((mem.admissions, mem.mean_wait), (3, Some(4.0 / 3.0)));
    // Queue 2 on [0, 2) over [0, 10].
    assert_eq!(mem.mean_queue, 0.4);
    // Used 5 on [0, 2), 6 on [2, 4): 22 / 10.
    assert_eq!(mem.mean_used, 2.2);
}

#[test]
fn a_hold_joins_the_queue_without_an_admission_pass() {
    // Spec §6.2: all three observe free 10 before any of them is admitted.
    let r = run("pool p { cap 10; } stage d : delay;
        workload { arrive batch(3); }
        session { observe f = free(p); hold p (4) { run d (1); } }
        run { horizon 5; }")
    .unwrap();
    assert_eq!(samples(&r, "f"), [10.0, 10.0, 10.0]);
}

#[test]
fn reserve_gates_admission_but_takes_only_the_units() {
    // cap 10, hold 1 reserve 8: a session fits while used + 8 <= 10, so
    // sessions 0, 1 and 2 (used 0, 1, 2) are admitted at 0 and see used 3;
    // session 3 sees 3 + 8 > 10 and waits. At 1 the first release (used
    // 2) admits it at once; it runs before the other two finish events.
    let r = run("pool p { cap 10; } stage d : delay;
        workload { arrive batch(4); }
        session { hold p (1) reserve (8) { observe at = now; observe u = used(p); run d (1); } }
        run { horizon 5; }")
    .unwrap();
    assert_eq!(samples(&r, "at"), [0.0, 0.0, 0.0, 1.0]);
    assert_eq!(samples(&r, "u"), [3.0, 3.0, 3.0, 3.0]);
}

#[test]
fn a_request_above_the_capacity_is_rejected_and_ends_the_session() {
    let r = run("pool p { cap 4; } stage d : delay;
        workload { arrive batch(2); }
        session { hold p (serial == 0 ? 5 : 4) { run d (1); } observe done = now; }
        run { horizon 5; }")
    .unwrap();
    assert_eq!(samples(&r, "done"), [1.0]);
    assert_eq!(
        (r.pools[0].rejected, r.pools[0].admissions, r.ended),
        (1, 1, 2)
    );
}

#[test]
fn a_multi_pool_hold_waits_in_its_first_pool_queue_only() {
    // cpu cap 10, slots cap 1. Session 0 takes both; session 1 waits in
    // cpu's queue (slots is full), and blocks session 2's cpu-only hold.
    let r = run("pool cpu { cap 10; } pool slots { cap 1; } stage d : delay;
        workload { arrive batch(3); }
        session {
          branch (serial < 2) { hold cpu (2), slots (1) { run d (1); } }
          else { hold cpu (1) { observe single_at = now; run d (1); } }
        }
        run { horizon 4; }")
    .unwrap();
    assert_eq!(samples(&r, "single_at"), [1.0]);
    let (cpu, slots) = (&r.pools[0], &r.pools[1]);
    // cpu queue: 2 on [0, 1) over [0, 4]; slots never has a queue or a wait.
    assert_eq!((cpu.mean_queue, cpu.mean_wait), (0.5, Some(2.0 / 3.0)));
    assert_eq!(
        (slots.mean_queue, slots.mean_wait, slots.admissions),
        (0.0, None, 2)
    );
}

#[test]
fn a_lease_released_by_a_later_release() {
    // Session 0 holds kv (4) on [0, 1] and keeps it as a lease (inf); it
    // gives it back by `release kv` at 3. Session 1 needs the whole pool
    // (cap 6: 4 + 6 > 6) and is admitted by that release, at 3.
    let r = run("pool kv { cap 6; } stage d : delay;
        workload { arrive batch(2); }
        session {
          branch (serial == 0) {
            hold kv (4) { run d (1); } lease kv (inf);
            observe leased = used(kv);
            run d (2);
            release kv;
            observe after = used(kv);
          } else {
            hold kv (6) { observe admitted = now; run d (1); }
          }
        }
        run { horizon 10; }")
    .unwrap();
    assert_eq!(samples(&r, "leased"), [4.0]);
    assert_eq!(samples(&r, "admitted"), [3.0]);
    // The release admitted session 1 at once: session 0 sees its 6.
    assert_eq!(samples(&r, "after"), [6.0]);
    // used 4 on [0, 3), 6 on [3, 4): 18 / 10; holders 1 on [0, 4): 0.4.
    assert_eq!((r.pools[0].mean_used, r.pools[0].mean_holders), (1.8, 0.4));
}

#[test]
fn a_lease_ends_at_its_time_or_with_its_session() {
    // Session 0 leases 2 units for 1.5 after its hold ends at 1 (to 2.5);
    // session 1 leases 3 units with no end and ends at 2: its lease ends then.
    let r = run("pool p { cap 10; } stage d : delay; stage clock : delay;
        workload { arrive batch(3); }
        session {
          branch (serial == 0) { hold p (2) { run d (1); } lease p (1.5); run d (5); end; }
          branch (serial == 1) { hold p (3) { run d (1); } lease p (inf); run d (1); end; }
          loop { run clock (0.75); observe u = used(p); branch (now >= 3) { end; } }
        }
        run { horizon 10; }")
    .unwrap();
    // At 0.75: 5 held; 1.5: both leases (5); 2.25: session 1 ended at 2 (2); 3: none.
    assert_eq!(samples(&r, "u"), [5.0, 5.0, 2.0, 0.0]);
}

#[test]
fn a_second_release_in_one_hold_gives_back_the_enclosing_hold() {
    // Nested holds on p (3 outside, 5 inside): the first `release p` gives
    // back the inner allocation, the second the outer one (innermost
    // allocation still held, as the reference does).
    let r = run("pool p { cap 20; } stage s : delay;
        workload { arrive batch(1); }
        session {
          hold p (3) { hold p (5) { release p; observe a = used(p); release p; observe b = used(p); run s (1); } }
        }
        run { horizon 10; }")
    .unwrap();
    assert_eq!((samples(&r, "a"), samples(&r, "b")), (vec![3.0], vec![0.0]));
}

#[test]
fn stalled_growers_are_retried_in_stall_order_before_the_queue() {
    // cap 10. Sessions 0 and 1 hold 4 each; at 1 session 0 grows by 3
    // (stalls: 8 + 3 > 10), at 2 session 1 grows by 1 (fits at once, 9)
    // although session 0 is stalled. Session 2 (hold 1) queues at 0.5 and
    // waits too. Session 1 ends at 3 (frees 5): the pass retries the
    // grower first (4 + 3 = 7), then admits session 2 (8).
    let r = run("pool p { cap 10; } stage d : delay;
        workload { arrive batch(3); }
        session {
          branch (serial == 2) { run d (0.5); hold p (3) { observe admitted = now; observe u2 = used(p); } end; }
          hold p (4) {
            run d (1 + serial);
            grow p (serial == 0 ? 3 : 1);
            observe grown = now;
            observe u = used(p);
            run d (1);
          }
        }
        run { horizon 10; }")
    .unwrap();
    // Session 1 grows at 2 (used 9), session 0 at 3 when session 1 leaves;
    // by the time session 0 runs, the same pass has admitted session 2 (10).
    assert_eq!(samples(&r, "grown"), [2.0, 3.0]);
    assert_eq!(samples(&r, "u"), [9.0, 10.0]);
    // Session 2 needs 3: at 3, 7 + 3 = 10 fits after the grower.
    assert_eq!(samples(&r, "admitted"), [3.0]);
    assert_eq!(samples(&r, "u2"), [10.0]);
    // A stalled grower is not queued: the queue holds session 2 on [0.5, 3).
    assert_eq!(r.pools[0].mean_queue, 2.5 / 10.0);
}

#[test]
fn ending_a_session_returns_its_leases_and_admits_pool_by_pool() {
    // Session 0 leases b, then a (a is declared first), and ends at 1. Its
    // leases end together, and one pass admits the waiters in pool
    // declaration order: a's waiter (session 2) becomes ready first, so it
    // reaches the fifo first and ends at 2; b's waiter ends at 3.
    let r = run(
        "pool a { cap 1; } pool b { cap 1; } stage d : delay; stage f : fifo;
        workload { arrive batch(3); }
        session {
          branch (serial == 0) {
            hold b (1) {} lease b (inf);
            hold a (1) {} lease a (inf);
            run d (1);
            end;
          }
          run d (0.5);
          branch (serial == 1) { hold b (1) { run f (1); observe b_done = now; } }
          else { hold a (1) { run f (1); observe a_done = now; } }
        }
        run { horizon 5; }",
    )
    .unwrap();
    assert_eq!(
        (samples(&r, "a_done"), samples(&r, "b_done")),
        (vec![2.0], vec![3.0])
    );
}

#[test]
fn returning_one_allocation_drops_the_sessions_whole_holder_count() {
    // As pyserq 0.1.0 counts holders: session 0 holds p twice (nested), so
    // with session 1's hold there are 3; when the inner hold ends, session
    // 0's whole count on p goes (1 left) although its outer hold still has
    // its 3 units (used 3 + 1).
    let r = run("pool p { cap 10; } stage s : delay;
        workload { arrive batch(2); }
        session {
          branch (serial == 1) { hold p (1) { run s (5); } end; }
          hold p (3) {
            hold p (2) { observe inner = holders(p); run s (1); }
            observe after_inner = holders(p);
            observe used_after_inner = used(p);
            run s (1);
          }
        }
        run { horizon 10; }")
    .unwrap();
    assert_eq!(samples(&r, "inner"), [3.0]);
    assert_eq!(samples(&r, "after_inner"), [1.0]);
    assert_eq!(samples(&r, "used_after_inner"), [4.0]);
    // holders: 3 on [0, 1), 1 on [1, 5): 7 / 10.
    assert_eq!(r.pools[0].mean_holders, 0.7);
}

#[test]
fn release_grow_and_load_find_the_pool_member_the_reference_names_now() {
    // The hold took q[0] (i = 0). After `set i = 1`, `release q[i]` names
    // q[1]: no hold holds it, so it ends the lease of q[1] (2 units) and
    // the hold keeps its 3 on q[0] (as pyserq 0.1.0 does).
    let r = run("pool q[2] { cap 10; }
        workload { arrive batch(1); }
        session {
          set i = 0;
          hold q[0] (1) {} lease q[0] (inf);
          hold q[1] (2) {} lease q[1] (inf);
          hold q[i] (3) { set i = 1; release q[i]; observe u0 = used(q[0]); observe u1 = used(q[1]); }
        }
        run { horizon 10; }")
    .unwrap();
    assert_eq!(
        (samples(&r, "u0"), samples(&r, "u1")),
        (vec![4.0], vec![0.0])
    );
    // And a grow whose index moved away from the hold's member is outside a hold.
    let e = common::run(
        "pool q[2] { cap 10; }
        workload { arrive batch(1); }
        session { set i = 0; hold q[i] (3) { set i = 1; grow q[i] (1); } }
        run { horizon 10; }",
    )
    .unwrap_err();
    assert!(
        e.message.contains("grow outside a hold of pool `q`"),
        "{}",
        e.message
    );
}

#[test]
fn a_sessions_end_leaves_its_waiters_to_the_next_admission_pass() {
    // Sessions 0 and 3 are admitted to r together at 1 (ready in that
    // order). Session 0 then ends inside its hold of p; session 2 waits for
    // p. Unlike a hold's end, the session's end runs no pass of its own:
    // session 3, already ready, still sees session 2 queued; the settle's
    // next pass admits it at the same instant.
    let r = run("pool p { cap 1; } pool r { cap 2; } stage d : delay;
        workload { arrive batch(4); }
        session {
          branch (serial == 0) { hold p (1) { hold r (1) { end; } } }
          branch (serial == 1) { hold r (2) { run d (1); } end; }
          branch (serial == 2) { run d (0.5); hold p (1) { observe admitted = now; } end; }
          run d (0.25); hold r (1) { observe h = holders(p); observe q = queued(p); } end;
        }
        run { horizon 5; }")
    .unwrap();
    assert_eq!((samples(&r, "h"), samples(&r, "q")), (vec![0.0], vec![1.0]));
    assert_eq!(samples(&r, "admitted"), [1.0]);
}

#[test]
fn a_closed_replacement_runs_before_the_waiters_of_the_ended_session() {
    // Session 0 holds p as a lease and ends at 1; session 1 waits for p.
    // The replacement (created at the end) is ready before the pass admits
    // session 1, so it reaches the fifo first: it ends at 2, session 1's
    // body would end at 3 (beyond the horizon).
    let r = run("pool p { cap 1; } stage d : delay; stage f : fifo;
        workload { arrive closed(2); }
        session {
          branch (serial == 0) { hold p (1) {} lease p (inf); run d (1); end; }
          branch (serial == 1) { run d (0.5); hold p (1) { run f (1); observe waiter_done = now; } end; }
          run f (1); observe replacement_done = now; end;
        }
        run { horizon 2.5; }")
    .unwrap();
    assert_eq!(samples(&r, "replacement_done"), [2.0]);
    assert!(samples(&r, "waiter_done").is_empty());
}

#[test]
fn a_waiting_head_whose_units_read_the_clock_is_evaluated_again_at_every_pass() {
    // cap 10. Session 0 holds 6 on [0, 10]. Session 1 asks for
    // `now >= 1 ? 4 : 5`: 6 + 5 > 10 at 0, so it waits. Session 2's delay
    // ends at 1: the pass after that event finds 6 + 4 = 10, which fits,
    // although no units came back.
    let r = run("pool p { cap 10; } stage d : delay;
        workload { arrive batch(3); }
        session {
          branch (serial == 2) { run d (1); end; }
          hold p (serial == 0 ? 6 : (now >= 1 ? 4 : 5)) {
            observe admitted = now;
            run d (10);
          }
        }
        run { horizon 20; }")
    .unwrap();
    assert_eq!(samples(&r, "admitted"), [0.0, 1.0]);
}

#[test]
fn a_multi_pool_head_blocked_on_its_second_pool_is_admitted_when_that_pool_gets_units_back() {
    // Session 0 holds q (8) on [0, 3]. Session 1 asks p (1), q (5) at 0.5
    // (after session 0 was admitted): p has room, q has 2, so it waits in
    // p's queue. At 3 q gets 8 back and the head fits: admitted at 3.
    let r = run("pool p { cap 10; } pool q { cap 10; } stage d : delay;
        workload { arrive batch(2); }
        session {
          branch (serial == 0) { hold q (8) { run d (3); } end; }
          run d (0.5);
          hold p (1), q (5) { observe admitted = now; run d (1); }
        }
        run { horizon 20; }")
    .unwrap();
    assert_eq!(samples(&r, "admitted"), [3.0]);
    // The wait is recorded at the first pool only: 3 - 0.5.
    assert_eq!(r.pools[0].mean_wait, Some(2.5));
    assert_eq!(r.pools[1].mean_wait, Some(0.0));
}
