//! `admit`: an admission pass over the pools with waiters (spec §6.6–6.7).
//!
//! Invariants: a pass visits pools in declaration order, and in each the
//! stalled growers (in stall order) before the queue head, stopping at the
//! first that does not fit; an admitted hold's session gets its hold frame
//! and goes to the back of the ready queue. A pass skips the pools
//! [`Waiting`](super::pool::Waiting) holds asleep: their stalled front and
//! their queue head did not fit in that pool, their amounts read no state,
//! and no units came back to it since, so they would not fit now.

use bevy_ecs::prelude::*;
use smallvec::SmallVec;

use super::code::{Code, Stmt};
use super::eval::eval;
use super::interface::RunError;
use super::pool::Blocked;
use super::session::{Frame, FrameKind, Held, HoldFrame, Wait};
use super::sim::{Sim, check_amount, lost};

/// One admission pass over every pool in declaration order; returns
/// whether it admitted anything (a hold or a stalled grow).
pub fn admission_pass(code: &Code, sim: &mut Sim) -> Result<bool, RunError> {
    let mut any = false;
    let mut next = 0;
    while let Some(p) = sim.waiting.next_from(next) {
        let pool = sim.members.pools[p];
        while let Some(e) = front(sim, pool, true) {
            if !resume_grow(sim, e)? {
                break;
            }
            if let Ok((mut waiters, _)) = sim.store.pools.get_mut(pool) {
                waiters.stalled.pop_front();
            }
            sim.ready.0.push_back(e);
            any = true;
        }
        while let Some(e) = front(sim, pool, false) {
            if still_blocked(sim, pool, e) || !try_admit(code, sim, e)? {
                break;
            }
            any = true;
        }
        // Its stalled front (if any) did not fit, nor its queue head (if any).
        if let Ok((waiters, _)) = sim.store.pools.get(pool) {
            match waiters.queue.front() {
                None if waiters.stalled.is_empty() => sim.waiting.remove(p),
                None => sim.waiting.sleep(p),
                Some(&head) => {
                    if waiters.blocked.is_some_and(|b| b.on as usize == p)
                        && still_blocked(sim, pool, head)
                    {
                        sim.waiting.sleep(p);
                    }
                }
            }
        }
        next = p + 1;
    }
    Ok(any)
}

fn front(sim: &Sim, pool: Entity, stalled: bool) -> Option<Entity> {
    let (waiters, _) = sim.store.pools.get(pool).ok()?;
    if stalled {
        waiters.stalled.front().copied()
    } else {
        waiters.queue.front().copied()
    }
}

/// Whether the head `e` of a pool's queue provably still does not fit: its
/// units read neither the clock nor an observable, so it can only come to
/// fit once the pool it did not fit in gets units back. Pools with many
/// waiters are retried after every event; this keeps those retries from
/// re-evaluating every head.
fn still_blocked(sim: &Sim, pool: Entity, e: Entity) -> bool {
    let Ok((waiters, _)) = sim.store.pools.get(pool) else {
        return false;
    };
    waiters
        .blocked
        .is_some_and(|b| b.head == e && sim.levels.returns[b.on as usize] == b.returns)
}

/// Units and reserve of a hold's pool `k`, evaluated now in session `e`.
pub fn units_of(
    code: &Code,
    sim: &mut Sim,
    e: Entity,
    at: (usize, usize),
    k: usize,
) -> Result<(f64, f64), RunError> {
    let Stmt::Hold { pools, .. } = &code.blocks[at.0][at.1] else {
        return Ok((0.0, 0.0));
    };
    let hp = &pools[k];
    let u = sim.eval_in(e, at, &hp.units)?;
    let u = check_amount("the hold's units", u).map_err(|m| sim.session_error(e, at, m))?;
    let r = match &hp.reserve {
        Some(x) => {
            let r = sim.in_session(e, at, |cx| eval(x, cx))?;
            check_amount("the hold's reserve", r).map_err(|m| sim.session_error(e, at, m))?
        }
        None => 0.0,
    };
    Ok((u, r))
}

/// Admits the waiting hold of session `e` (the head of its first pool's
/// queue) if it fits in every pool now.
fn try_admit(code: &Code, sim: &mut Sim, e: Entity) -> Result<bool, RunError> {
    let now = sim.clock.now;
    let (at, members, joined) = match sim.store.dealings.get_mut(e) {
        Ok(mut dealings) => match &dealings.get().wait {
            Wait::Hold { at, pools, joined } => (*at, pools.clone(), *joined),
            _ => return Ok(false),
        },
        Err(_) => return Err(lost("session", now)),
    };
    let Stmt::Hold {
        body,
        reads_no_state,
        ..
    } = &code.blocks[at.0][at.1]
    else {
        return Ok(false);
    };
    let first = members[0] as usize;
    let mut units: SmallVec<[f64; 4]> = SmallVec::new();
    for (k, &p) in members.iter().enumerate() {
        let (u, r) = units_of(code, sim, e, at, k)?;
        let p = p as usize;
        // Amounts are never NaN (checked), so `>` is the negation of "fits".
        if sim.levels.used[p] + u.max(r) > sim.levels.cap[p] {
            let blocked = reads_no_state.then_some(Blocked {
                head: e,
                on: p as u32,
                returns: sim.levels.returns[p],
            });
            if let Ok((mut waiters, _)) = sim.store.pools.get_mut(sim.members.pools[first]) {
                waiters.blocked = blocked;
            }
            return Ok(false);
        }
        units.push(u);
    }
    let warmup = code.program.warmup;
    let mut held: SmallVec<[Held; 4]> = SmallVec::new();
    for (i, (&p, &u)) in members.iter().zip(&units).enumerate() {
        let entity = sim.members.pools[p as usize];
        let Ok((mut waiters, mut stats)) = sim.store.pools.get_mut(entity) else {
            return Err(lost("pool", now));
        };
        if i == 0 {
            waiters.queue.pop_front();
            let len = waiters.queue.len();
            sim.levels.set_queued(&mut stats, p as usize, now, len);
            if now >= warmup {
                stats.wait.push(now - joined);
            }
        }
        sim.levels.take(&mut stats, p as usize, now, u);
        stats.admissions += 1;
        if let Ok(mut dealings) = sim.store.dealings.get_mut(e) {
            let holdings = &mut dealings.get().holdings;
            match holdings.iter_mut().find(|h| h.0 == p) {
                Some(h) => h.1 += 1,
                None => holdings.push((p, 1)),
            }
        }
        held.push(Held {
            pool: p,
            units: u,
            loaded: None,
            released: false,
        });
    }
    if let Ok(mut dealings) = sim.store.dealings.get_mut(e) {
        let d = dealings.get();
        d.wait = Wait::None;
        d.holds.push(HoldFrame { at, pools: held });
    }
    let Ok((mut cont, _, _)) = sim.store.sessions.get_mut(e) else {
        return Err(lost("session", now));
    };
    cont.0.push(Frame {
        block: *body,
        pc: 0,
        kind: FrameKind::Hold,
    });
    sim.ready.0.push_back(e);
    Ok(true)
}

/// Applies session `e`'s pending grow if it fits; returns whether it did.
pub fn resume_grow(sim: &mut Sim, e: Entity) -> Result<bool, RunError> {
    let now = sim.clock.now;
    let Ok(mut dealings) = sim.store.dealings.get_mut(e) else {
        return Err(lost("session", now));
    };
    let d = dealings.get();
    let Wait::Grow {
        hold,
        entry,
        amount,
    } = d.wait
    else {
        return Ok(false);
    };
    let p = d.holds[hold].pools[entry].pool as usize;
    if sim.levels.used[p] + amount > sim.levels.cap[p] {
        return Ok(false);
    }
    d.holds[hold].pools[entry].units += amount;
    d.wait = Wait::None;
    if let Ok((_, mut stats)) = sim.store.pools.get_mut(sim.members.pools[p]) {
        sim.levels.grow(&mut stats, p, now, amount);
    }
    Ok(true)
}
