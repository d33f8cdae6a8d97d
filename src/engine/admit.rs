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

use super::caching::{consume, make_room};
use super::code::{Code, Expr, Stmt, ctx_index};
use super::eval::{Moment, eval};
use super::interface::RunError;
use super::pool::{Blocked, Waiters};
use super::serving::EPS;
use super::serving::order::strictly_before;
use super::session::{Frame, FrameKind, Held, HoldFrame, Wait};
use super::sim::{Sim, check_amount, lost};
use crate::ir::{Ctx, SLOT_CACHED};

/// One admission pass over every pool in declaration order; returns
/// whether it admitted anything (a hold or a stalled grow). The queue of a
/// pool with `admit via` is its engine's to serve, not the pass's; its
/// stalled growers are the pass's all the same.
#[inline]
pub fn admission_pass(code: &Code, sim: &mut Sim) -> Result<bool, RunError> {
    // Most settles find no pool with an awake waiter: no call.
    if sim.waiting.next_from(0).is_none() {
        return Ok(false);
    }
    pass(code, sim)
}

/// [`admission_pass`] over the pools with awake waiters.
fn pass(code: &Code, sim: &mut Sim) -> Result<bool, RunError> {
    let mut any = false;
    let mut next = 0;
    while let Some(p) = sim.waiting.next_from(next) {
        let pool = sim.members.pools[p];
        while let Some(e) = front(sim, pool, true) {
            match resume_grow(code, sim, e)? {
                Grant::No => break,
                Grant::Session => sim.ready.0.push_back(e),
                Grant::Resident => {}
            }
            if let Ok((mut waiters, _)) = sim.store.pools.get_mut(pool) {
                waiters.stalled.pop_front();
            }
            any = true;
        }
        if code.pools[p].admit_via.is_none() {
            loop {
                // A join-order queue's head and its blocked mark come in one fetch.
                let (e, k, blocked) = if code.pools[p].queue.is_none() {
                    match fifo_front(sim, pool) {
                        Some((e, blocked)) => (e, 0, blocked),
                        None => break,
                    }
                } else {
                    match head(code, sim, p)? {
                        Some((e, k)) => (e, k, k == 0 && still_blocked(sim, pool, e)),
                        None => break,
                    }
                };
                if blocked || !try_admit(code, sim, e, k)? {
                    break;
                }
                any = true;
            }
        }
        // Its stalled front (if any) did not fit, nor its queue head (if any).
        if let Ok((waiters, _)) = sim.store.pools.get(pool) {
            match waiters.queue.front() {
                None if waiters.stalled.is_empty() => sim.waiting.remove(p),
                None => sim.waiting.sleep(p),
                Some(&head) => {
                    if waiters.blocked.is_some_and(|b| b.on as usize == p)
                        && blocked_still(waiters, &sim.levels.returns, head)
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

/// The head of pool `p`'s queue and its place in it: the first in join
/// order, or under `queue by (k…)` the one of the smallest key tuple at the
/// Admit moment (`waited` the time it has waited; ties in join order). A
/// preemption victim at the front comes before any key (0.1.0's order).
pub fn head(code: &Code, sim: &mut Sim, p: usize) -> Result<Option<(Entity, usize)>, RunError> {
    let Some(keys) = &code.pools[p].queue else {
        return Ok(front(sim, sim.members.pools[p], false).map(|e| (e, 0)));
    };
    let n = match sim.store.pools.get(sim.members.pools[p]) {
        Ok((waiters, _)) if waiters.requeued > 0 => {
            return Ok(waiters.queue.front().map(|&e| (e, 0)));
        }
        Ok((waiters, _)) => waiters.queue.len(),
        Err(_) => return Err(lost("pool", sim.clock.now)),
    };
    let (mut best, mut best_key, mut key) = (None, Vec::new(), Vec::new());
    for k in 0..n {
        let Some(e) = sim
            .store
            .pools
            .get(sim.members.pools[p])
            .ok()
            .and_then(|(w, _)| w.queue.get(k).copied())
        else {
            break;
        };
        let (at, joined) = match sim.store.dealings.get(e).ok().and_then(|d| d.0.as_deref()) {
            Some(d) => match &d.wait {
                Wait::Hold { at, joined, .. } => (*at, *joined),
                _ => continue,
            },
            None => continue,
        };
        let mut moment = Moment::NONE;
        moment.0[ctx_index(Ctx::Waited)] = sim.clock.now - joined;
        key.clear();
        for x in keys.iter() {
            key.push(sim.in_session_at(e, at, &moment, |cx| eval(x, cx))?);
        }
        if best.is_none() || strictly_before(&key, &best_key) {
            best = Some((e, k));
            std::mem::swap(&mut best_key, &mut key);
        }
    }
    Ok(best)
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
    sim.store
        .pools
        .get(pool)
        .is_ok_and(|(waiters, _)| blocked_still(waiters, &sim.levels.returns, e))
}

/// [`still_blocked`] on a pool's waiters already fetched (`returns` by member).
fn blocked_still(waiters: &Waiters, returns: &[u64], e: Entity) -> bool {
    waiters
        .blocked
        .is_some_and(|b| b.head == e && returns[b.on as usize] == b.returns)
}

/// The head of a join-order queue and whether it provably still does not
/// fit ([`still_blocked`]), in one fetch of the pool.
fn fifo_front(sim: &Sim, pool: Entity) -> Option<(Entity, bool)> {
    let (waiters, _) = sim.store.pools.get(pool).ok()?;
    let e = *waiters.queue.front()?;
    Some((e, blocked_still(waiters, &sim.levels.returns, e)))
}

/// Units and reserve of a hold's pool `k`, evaluated now in session `e`.
#[inline]
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
    // A constant (`hold kv (10)`, the usual shape) needs no fetch of the
    // session to evaluate.
    let u = match &hp.units {
        Expr::Num(u) => *u,
        x => sim.eval_in(e, at, x)?,
    };
    let u = check_amount("the hold's units", u).map_err(|m| sim.session_error(e, at, m))?;
    let r = match &hp.reserve {
        Some(Expr::Num(r)) => {
            check_amount("the hold's reserve", *r).map_err(|m| sim.session_error(e, at, m))?
        }
        Some(x) => {
            let r = sim.in_session(e, at, |cx| eval(x, cx))?;
            check_amount("the hold's reserve", r).map_err(|m| sim.session_error(e, at, m))?
        }
        None => 0.0,
    };
    Ok((u, r))
}

/// What a stalled growth's retry did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grant {
    /// It still does not fit.
    No,
    /// A `grow` statement's: the session goes on.
    Session,
    /// A growing resident's: it takes tokens again from the next iteration.
    Resident,
}

/// The units a hold's pool takes (its units rounded up to the block) and
/// what it must fit (`max(units, reserve)` rounded up).
pub fn rounded(sim: &Sim, p: usize, u: f64, r: f64) -> (f64, f64) {
    let block = sim.kv.block[p];
    (block.up(u), block.up(u.max(r)))
}

/// Admits the waiting hold of session `e` (at place `k` of its first
/// pool's queue, the head) if it fits in every pool now: it consumes the
/// session's cached entries, evicts what its allocation needs, and takes
/// its units.
pub fn try_admit(code: &Code, sim: &mut Sim, e: Entity, k: usize) -> Result<bool, RunError> {
    let now = sim.clock.now;
    let Ok(dealings) = sim.store.dealings.get(e) else {
        return Err(lost("session", now));
    };
    let Some(Wait::Hold { at, pools, joined }) = dealings.0.as_deref().map(|d| &d.wait) else {
        return Ok(false);
    };
    let (at, joined) = (*at, *joined);
    // A copy of four words (the member list is inline); the hold frame's
    // entries are built from it only once the hold fits.
    let members: SmallVec<[u32; 4]> = SmallVec::from_slice(pools);
    let Stmt::Hold {
        body,
        reads_no_state,
        reuse,
        ..
    } = &code.blocks[at.0][at.1]
    else {
        return Ok(false);
    };
    let first = members[0] as usize;
    let mut held: SmallVec<[Held; 4]> = SmallVec::new();
    for (i, &p) in members.iter().enumerate() {
        let (u, r) = units_of(code, sim, e, at, i)?;
        let p = p as usize;
        let (u, gate) = rounded(sim, p, u, r);
        // Amounts are never NaN (checked), so `>` is the negation of "fits".
        if sim.levels.used[p] + gate > sim.levels.cap[p] + EPS {
            let blocked = (*reads_no_state && k == 0).then_some(Blocked {
                head: e,
                on: p as u32,
                returns: sim.levels.returns[p],
            });
            if let Ok((mut waiters, _)) = sim.store.pools.get_mut(sim.members.pools[first]) {
                waiters.blocked = blocked;
            }
            return Ok(false);
        }
        held.push(Held {
            pool: p as u32,
            units: u,
            position: 0.0,
            released: false,
        });
    }
    if code.caching {
        let limit = match reuse {
            Some(x) => sim.eval_in(e, at, x)?,
            None => f64::INFINITY,
        };
        let mut consumed: SmallVec<[f64; 4]> = SmallVec::new();
        consume(code, sim, e, &members, limit, &mut consumed)?;
        for (h, &c) in held.iter_mut().zip(&consumed) {
            h.position = c;
        }
        for h in &held {
            make_room(code, sim, h.pool as usize, h.units)?;
        }
    }
    let warmup = code.program.warmup;
    for (i, h) in held.iter().enumerate() {
        let p = h.pool as usize;
        let Ok((mut waiters, mut stats)) = sim.store.pools.get_mut(sim.members.pools[p]) else {
            return Err(lost("pool", now));
        };
        if i == 0 {
            waiters.remove_at(k);
            let len = waiters.queue.len();
            sim.levels.set_queued(&mut stats, p, now, len);
            if now >= warmup {
                stats.wait.push(now - joined);
            }
        }
        sim.levels.take(&mut stats, p, now, h.units);
        stats.admissions += 1;
        let pc = &code.pools[p];
        if pc.lifo && pc.memory_of.is_empty() && !sim.kv.lifo_holders[p].contains(&e) {
            sim.kv.lifo_holders[p].push(e);
        }
    }
    // `cached` := the most consumed over the hold's pools.
    let most = held.iter().map(|h| h.position).fold(0.0, f64::max);
    let admission = sim.census.admissions;
    sim.census.admissions += 1;
    if let Ok(mut dealings) = sim.store.dealings.get_mut(e) {
        let d = dealings.get();
        for h in &held {
            match d.holdings.iter_mut().find(|x| x.0 == h.pool) {
                Some(x) => x.1 += 1,
                None => d.holdings.push((h.pool, 1)),
            }
        }
        d.wait = Wait::None;
        d.admission = Some(admission);
        d.holds.push(HoldFrame {
            at,
            pools: held,
            ran: false,
        });
    }
    let Ok((mut cont, _, life)) = sim.store.sessions.get_mut(e) else {
        return Err(lost("session", now));
    };
    if code.caching
        && let Some(a) = sim.attrs.get_mut(life.row, code.column(SLOT_CACHED))
    {
        *a = most;
    }
    cont.0.push(Frame::start(*body, FrameKind::Hold));
    sim.ready.0.push_back(e);
    Ok(true)
}

/// Applies session `e`'s pending grow or growth if it fits (evicting what
/// it needs); returns what it did.
pub fn resume_grow(code: &Code, sim: &mut Sim, e: Entity) -> Result<Grant, RunError> {
    let now = sim.clock.now;
    let Ok(mut dealings) = sim.store.dealings.get_mut(e) else {
        return Err(lost("session", now));
    };
    let d = dealings.get();
    let (hold, entry, new_units, advance, stage) = match d.wait {
        Wait::Grow {
            hold,
            entry,
            amount,
        } => {
            let held = &d.holds[hold].pools[entry];
            let p = held.pool as usize;
            (
                hold,
                entry,
                sim.kv.block[p].up(held.units + amount),
                0.0,
                None,
            )
        }
        Wait::Growth {
            hold,
            entry,
            allocation,
            asked,
            stage,
        } => (hold, entry, allocation, asked, Some(stage)),
        _ => return Ok(Grant::No),
    };
    let held = d.holds[hold].pools[entry];
    let p = held.pool as usize;
    let more = new_units - held.units;
    if sim.levels.used[p] + more > sim.levels.cap[p] + EPS {
        return Ok(Grant::No);
    }
    if code.caching {
        make_room(code, sim, p, more)?;
    }
    let Ok(mut dealings) = sim.store.dealings.get_mut(e) else {
        return Err(lost("session", now));
    };
    let d = dealings.get();
    let held = &mut d.holds[hold].pools[entry];
    held.units = new_units;
    held.position += advance;
    d.wait = Wait::None;
    if let Ok((_, mut stats)) = sim.store.pools.get_mut(sim.members.pools[p]) {
        sim.levels.grow(&mut stats, p, now, more);
    }
    let Some(stage) = stage else {
        return Ok(Grant::Session);
    };
    if let Ok((mut service, _)) = sim.store.stages.get_mut(sim.members.stages[stage as usize])
        && let Some(engine) = service.engine()
        && let Some(r) = engine.find(e)
    {
        engine.residents[r].stalled = false;
        if code.steps[stage as usize].as_ref().and_then(|st| st.memory) == Some(p as u32) {
            engine.residents[r].kv += more;
        }
    }
    sim.dirty.engines.insert(stage as usize);
    Ok(Grant::Resident)
}
