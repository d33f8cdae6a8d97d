//! `admit`: an admission pass over the pools with waiters (spec §6.6–6.7).
//!
//! Invariants: a pass visits pools in declaration order, and in each the
//! stalled growers (in stall order) before the queue head, stopping at the
//! first that does not fit; an admitted hold's session gets its hold frame
//! and goes to the back of the ready queue. A pass skips the pools
//! [`Waiting`](crate::engine::data::pool::Waiting) holds asleep: their stalled front and
//! their queue head did not fit in that pool, their amounts read no state,
//! and no units came back to it since, so they would not fit now.

use bevy_ecs::prelude::*;
use smallvec::SmallVec;

use crate::engine::data::code::{Code, Expr, Stmt, ctx_index};
use crate::engine::data::kv::KvPools;
use crate::engine::data::pool::{Blocked, PoolLevels, PoolStats, Waiters};
use crate::engine::data::resources::Census;
use crate::engine::data::session::{
    Frame, FrameKind, Held, HoldFrame, Holding, PoolDealings, Wait,
};
use crate::engine::eval::evaluate::{Moment, eval};
use crate::engine::eval::sim::{Pools, Sessions, Sim, lost, made};
use crate::engine::interface::RunError;
use crate::engine::serving::EPS;
use crate::engine::serving::order::strictly_before;
use crate::engine::systems::caching::{consume, make_room};
use crate::ir::{Ctx, SLOT_CACHED};

/// One admission pass over every pool in declaration order; returns
/// whether it admitted anything (a hold or a stalled grow). The queue of a
/// pool with `admit via` is its engine's to serve, not the pass's; its
/// stalled growers are the pass's all the same.
#[inline(always)]
pub fn admission_pass(code: &Code, sim: &mut Sim) -> Result<bool, RunError> {
    // Most settles find no pool with an awake waiter: no call.
    if sim.pools.waiting.next_from(0).is_none() {
        return Ok(false);
    }
    pass(code, sim)
}

/// [`admission_pass`] over the pools with awake waiters.
fn pass(code: &Code, sim: &mut Sim) -> Result<bool, RunError> {
    let mut any = false;
    let mut next = 0;
    while let Some(p) = sim.pools.waiting.next_from(next) {
        let pool = sim.pools.entities[p];
        if code.pools[p].admit_via.is_none() && code.pools[p].queue.is_none() {
            // A join-order queue: its stalled front and its head are read
            // in one fetch of the pool, and so is whether the pool sleeps.
            let mut growers = true;
            let asleep = loop {
                match fifo_head(code, sim, p, growers, &mut any)? {
                    Head::Grower(e) => {
                        growers = grant(code, sim, pool, e)?;
                        any |= growers;
                    }
                    Head::Evaluate(e) => {
                        if try_admit(code, sim, e, 0)? {
                            any = true;
                        } else {
                            break None;
                        }
                    }
                    Head::Stays { asleep } => break Some(asleep),
                    Head::Empty { stalled: false } => {
                        sim.pools.waiting.remove(p);
                        break Some(false);
                    }
                    Head::Empty { stalled: true } => break Some(true),
                }
            };
            match asleep {
                Some(true) => sim.pools.waiting.sleep(p),
                Some(false) => {}
                None => sleep_if_blocked(sim, p),
            }
            next = p + 1;
            continue;
        }
        while let Some(e) = front(sim, pool, true) {
            if !grant(code, sim, pool, e)? {
                break;
            }
            any = true;
        }
        if code.pools[p].admit_via.is_none() {
            while let Some((e, k)) = head(code, sim, p)? {
                if (k == 0 && still_blocked(sim, pool, e)) || !try_admit(code, sim, e, k)? {
                    break;
                }
                any = true;
            }
        }
        sleep_if_blocked(sim, p);
        next = p + 1;
    }
    Ok(any)
}

/// Retries the stalled front grower `e` of `pool`; whether it was granted
/// (and left the stalled list).
fn grant(code: &Code, sim: &mut Sim, pool: Entity, e: Entity) -> Result<bool, RunError> {
    match resume_grow(code, sim, e)? {
        Grant::No => return Ok(false),
        Grant::Session => sim.sessions.ready.0.push_back(e),
        Grant::Resident => {}
    }
    if let Ok((mut waiters, _)) = sim.pools.members.get_mut(pool) {
        waiters.stalled.pop_front();
    }
    Ok(true)
}

/// After a pass over pool `p`: its stalled front (if any) did not fit, nor
/// its queue head (if any). It leaves the set if it has no waiter, and
/// sleeps if nothing but a return of units to it can change that.
fn sleep_if_blocked(sim: &mut Sim, p: usize) {
    let pool = sim.pools.entities[p];
    if let Ok((waiters, _)) = sim.pools.members.get(pool) {
        match waiters.queue.front() {
            None if waiters.stalled.is_empty() => sim.pools.waiting.remove(p),
            None => sim.pools.waiting.sleep(p),
            Some(&head) => {
                if waiters.blocked.is_some_and(|b| b.on as usize == p)
                    && blocked_still(waiters, &sim.pools.levels.returns, head)
                {
                    sim.pools.waiting.sleep(p);
                }
            }
        }
    }
}

/// What a pass found at a join-order queue's head.
enum Head {
    /// The queue is empty.
    Empty {
        /// Whether growers still stall at the pool.
        stalled: bool,
    },
    /// The head does not fit.
    Stays {
        /// Whether only a return of units to this pool can change that.
        asleep: bool,
    },
    /// The stalled front grower is to be retried first.
    Grower(Entity),
    /// The head's amounts are to be evaluated now, by [`try_admit`].
    Evaluate(Entity),
}

/// Pool `p`'s stalled front grower (if `growers`), else its join-order
/// queue's heads while they are admitted, in one fetch of the pool and
/// one of each session's dealings: a hold of `p` alone whose amounts are
/// known from its join is admitted (`any` set) or found not to fit
/// without evaluating anything (unless the run keeps a cache: [`try_admit`]
/// consumes it). Returns what stopped it.
fn fifo_head(
    code: &Code,
    sim: &mut Sim,
    p: usize,
    growers: bool,
    any: &mut bool,
) -> Result<Head, RunError> {
    let now = sim.time.clock.now;
    let Sim {
        pools:
            Pools {
                members: pool_members,
                entities: pool_entities,
                levels,
                kv,
                ..
            },
        sessions:
            Sessions {
                states,
                dealings,
                census,
                ready,
                ..
            },
        ..
    } = sim;
    let (mut waiters, mut stats) = made!(pool_members.get_mut(pool_entities[p]), "pool", now);
    let waiters = waiters.bypass_change_detection();
    let stats = stats.bypass_change_detection();
    if growers && let Some(&g) = waiters.stalled.front() {
        return Ok(Head::Grower(g));
    }
    loop {
        let Some(&e) = waiters.queue.front() else {
            return Ok(Head::Empty {
                stalled: !waiters.stalled.is_empty(),
            });
        };
        if blocked_still(waiters, &levels.returns, e) {
            return Ok(Head::Stays {
                asleep: waiters.blocked.is_some_and(|b| b.on as usize == p),
            });
        }
        if code.caching {
            return Ok(Head::Evaluate(e));
        }
        let mut dealings = made!(dealings.get_mut(e), "session", now);
        let Some(d) = dealings.bypass_change_detection().0.as_deref_mut() else {
            return Ok(Head::Evaluate(e));
        };
        let Wait::Hold {
            at,
            joined,
            known: Some(known),
            ..
        } = d.wait
        else {
            return Ok(Head::Evaluate(e));
        };
        let Stmt::Hold { body, .. } = &code.blocks[at.0][at.1] else {
            return Ok(Head::Evaluate(e));
        };
        // Amounts are never NaN (checked), so `>` is the negation of "fits".
        if levels.used[p] + known.gate > levels.cap[p] + EPS {
            waiters.blocked = Some(Blocked {
                head: e,
                on: p as u32,
                returns: levels.returns[p],
            });
            return Ok(Head::Stays { asleep: true });
        }
        let member = Member {
            p,
            levels,
            stats: &mut *stats,
        };
        leave_queue(code, member, waiters, 0, now, joined);
        let member = Member {
            p,
            levels,
            stats: &mut *stats,
        };
        allocate(code, member, kv, now, known.units, e);
        let held = Held {
            pool: p as u32,
            units: known.units,
            position: 0.0,
            released: false,
        };
        let mut pools = SmallVec::new();
        pools.push(held);
        enter_hold(d, at, pools, census);
        let (mut cont, _, _) = made!(states.get_mut(e), "session", now);
        cont.bypass_change_detection()
            .0
            .push(Frame::start(*body, FrameKind::Hold));
        ready.0.push_back(e);
        *any = true;
    }
}

/// A pool member an admission takes units from: its columns and figures.
struct Member<'a> {
    p: usize,
    levels: &'a mut PoolLevels,
    stats: &'a mut PoolStats,
}

/// The first pool's side of an admission: the hold leaves place `k` of its
/// queue, and its wait since `joined` counts.
#[inline(always)]
fn leave_queue(
    code: &Code,
    member: Member,
    waiters: &mut Waiters,
    k: usize,
    now: f64,
    joined: f64,
) {
    waiters.remove_at(k);
    let len = waiters.queue.len();
    member.levels.set_queued(member.stats, member.p, now, len);
    if now >= code.program.warmup {
        member.stats.wait.push(now - joined);
    }
}

/// Pool `p` allocates `units` to session `e`'s admitted hold.
#[inline(always)]
fn allocate(code: &Code, member: Member, kv: &mut KvPools, now: f64, units: f64, e: Entity) {
    let p = member.p;
    member.levels.take(member.stats, p, now, units);
    member.stats.admissions += 1;
    let pc = &code.pools[p];
    if pc.lifo && pc.memory_of.is_empty() && !kv.lifo_holders[p].contains(&e) {
        kv.lifo_holders[p].push(e);
    }
}

/// The session's side of an admission: it counts in each pool's holders,
/// waits no more, and has the hold of `at` (whose frame the caller
/// pushes), numbered the run's next admission.
#[inline(always)]
fn enter_hold(
    d: &mut PoolDealings,
    at: (usize, usize),
    held: SmallVec<[Held; 4]>,
    census: &mut Census,
) {
    let admission = census.admissions;
    census.admissions += 1;
    for h in &held {
        match d.holdings.iter_mut().find(|x| x.pool == h.pool) {
            Some(x) => {
                x.count += 1;
                x.admission = admission;
            }
            None => d.holdings.push(Holding {
                pool: h.pool,
                count: 1,
                admission,
            }),
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

/// The head of pool `p`'s queue and its place in it: the first in join
/// order, or under `queue by (k…)` the one of the smallest key tuple at the
/// Admit moment (`waited` the time it has waited; ties in join order). A
/// preemption victim at the front comes before any key (0.1.0's order).
pub fn head(code: &Code, sim: &mut Sim, p: usize) -> Result<Option<(Entity, usize)>, RunError> {
    let Some(keys) = &code.pools[p].queue else {
        return Ok(front(sim, sim.pools.entities[p], false).map(|e| (e, 0)));
    };
    let n = match sim.pools.members.get(sim.pools.entities[p]) {
        Ok((waiters, _)) if waiters.requeued > 0 => {
            return Ok(waiters.queue.front().map(|&e| (e, 0)));
        }
        Ok((waiters, _)) => waiters.queue.len(),
        Err(_) => return Err(lost("pool", sim.time.clock.now)),
    };
    let (mut best, mut best_key, mut key) = (None, Vec::new(), Vec::new());
    for k in 0..n {
        let Some(e) = sim
            .pools
            .members
            .get(sim.pools.entities[p])
            .ok()
            .and_then(|(w, _)| w.queue.get(k).copied())
        else {
            break;
        };
        let (at, joined) = match sim
            .sessions
            .dealings
            .get(e)
            .ok()
            .and_then(|d| d.0.as_deref())
        {
            Some(d) => match &d.wait {
                Wait::Hold { at, joined, .. } => (*at, *joined),
                _ => continue,
            },
            None => continue,
        };
        let mut moment = Moment::NONE;
        moment.0[ctx_index(Ctx::Waited)] = sim.time.clock.now - joined;
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
    let (waiters, _) = sim.pools.members.get(pool).ok()?;
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
    sim.pools
        .members
        .get(pool)
        .is_ok_and(|(waiters, _)| blocked_still(waiters, &sim.pools.levels.returns, e))
}

/// [`still_blocked`] on a pool's waiters already fetched (`returns` by member).
fn blocked_still(waiters: &Waiters, returns: &[u64], e: Entity) -> bool {
    waiters
        .blocked
        .is_some_and(|b| b.head == e && returns[b.on as usize] == b.returns)
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
    let u = sim.amount("the hold's units", u, e, at)?;
    let r = match &hp.reserve {
        Some(Expr::Num(r)) => sim.amount("the hold's reserve", *r, e, at)?,
        Some(x) => {
            let r = sim.in_session(e, at, |cx| eval(x, cx))?;
            sim.amount("the hold's reserve", r, e, at)?
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
    let block = sim.pools.kv.block[p];
    (block.up(u), block.up(u.max(r)))
}

/// Admits the waiting hold of session `e` (at place `k` of its first
/// pool's queue, the head) if it fits in every pool now: it consumes the
/// session's cached entries, evicts what its allocation needs, and takes
/// its units.
pub fn try_admit(code: &Code, sim: &mut Sim, e: Entity, k: usize) -> Result<bool, RunError> {
    let now = sim.time.clock.now;
    let dealings = made!(sim.sessions.dealings.get(e), "session", now);
    let Some(Wait::Hold {
        at, pools, joined, ..
    }) = dealings.0.as_deref().map(|d| &d.wait)
    else {
        return Ok(false);
    };
    let (at, joined) = (*at, *joined);
    // A copy of four words (the member list is inline); the hold frame's
    // entries are built from it only once the hold fits.
    let members: SmallVec<[u32; 4]> = SmallVec::from_slice(pools);
    let Stmt::Hold { body, reuse, .. } = &code.blocks[at.0][at.1] else {
        return Ok(false);
    };
    let Some(mut held) = fitting(code, sim, e, at, k, &members)? else {
        return Ok(false);
    };
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
    take_units(code, sim, e, k, joined, &held)?;
    // `cached` := the most consumed over the hold's pools.
    let most = held.iter().map(|h| h.position).fold(0.0, f64::max);
    if let Ok(mut dealings) = sim.sessions.dealings.get_mut(e) {
        enter_hold(dealings.get(), at, held, sim.sessions.census);
    }
    let (mut cont, _, life) = made!(sim.sessions.states.get_mut(e), "session", now);
    if code.caching
        && let Some(a) = sim
            .sessions
            .attrs
            .get_mut(life.row, code.column(SLOT_CACHED))
    {
        *a = most;
    }
    cont.0.push(Frame::start(*body, FrameKind::Hold));
    sim.sessions.ready.0.push_back(e);
    Ok(true)
}

/// The entries of session `e`'s hold at `at` if its units fit in every
/// pool of `members` now; otherwise `None`, the first pool's queue marked
/// blocked on the pool that did not fit when nothing but returned units
/// can let it in.
fn fitting(
    code: &Code,
    sim: &mut Sim,
    e: Entity,
    at: (usize, usize),
    k: usize,
    members: &[u32],
) -> Result<Option<SmallVec<[Held; 4]>>, RunError> {
    let Stmt::Hold { reads_no_state, .. } = &code.blocks[at.0][at.1] else {
        return Ok(None);
    };
    let first = members[0] as usize;
    let mut held: SmallVec<[Held; 4]> = SmallVec::new();
    for (i, &p) in members.iter().enumerate() {
        let (u, r) = units_of(code, sim, e, at, i)?;
        let p = p as usize;
        let (u, gate) = rounded(sim, p, u, r);
        // Amounts are never NaN (checked), so `>` is the negation of "fits".
        if sim.pools.levels.used[p] + gate > sim.pools.levels.cap[p] + EPS {
            // Keys that read state may put another waiter at the head
            // before any units come back (prog_queue_by_waited_flips_head).
            let blocked = (*reads_no_state && k == 0 && !code.pools[first].queue_reads_state)
                .then_some(Blocked {
                    head: e,
                    on: p as u32,
                    returns: sim.pools.levels.returns[p],
                });
            if let Ok((mut waiters, _)) = sim.pools.members.get_mut(sim.pools.entities[first]) {
                waiters.blocked = blocked;
            }
            return Ok(None);
        }
        held.push(Held {
            pool: p as u32,
            units: u,
            position: 0.0,
            released: false,
        });
    }
    Ok(Some(held))
}

/// Each pool of an admitted hold allocates its entry's units; the first
/// one's queue lets the hold go from place `k`.
fn take_units(
    code: &Code,
    sim: &mut Sim,
    e: Entity,
    k: usize,
    joined: f64,
    held: &[Held],
) -> Result<(), RunError> {
    let now = sim.time.clock.now;
    for (i, h) in held.iter().enumerate() {
        let p = h.pool as usize;
        let (mut waiters, mut stats) = made!(
            sim.pools.members.get_mut(sim.pools.entities[p]),
            "pool",
            now
        );
        let levels = &mut *sim.pools.levels;
        if i == 0 {
            let member = Member {
                p,
                levels: &mut *levels,
                stats: &mut stats,
            };
            leave_queue(code, member, &mut waiters, k, now, joined);
        }
        let member = Member {
            p,
            levels,
            stats: &mut stats,
        };
        allocate(code, member, sim.pools.kv, now, h.units, e);
    }
    Ok(())
}

/// Applies session `e`'s pending grow or growth if it fits (evicting what
/// it needs); returns what it did.
pub fn resume_grow(code: &Code, sim: &mut Sim, e: Entity) -> Result<Grant, RunError> {
    let now = sim.time.clock.now;
    let mut dealings = made!(sim.sessions.dealings.get_mut(e), "session", now);
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
                sim.pools.kv.block[p].up(held.units + amount),
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
    if sim.pools.levels.used[p] + more > sim.pools.levels.cap[p] + EPS {
        return Ok(Grant::No);
    }
    if code.caching {
        make_room(code, sim, p, more)?;
    }
    let mut dealings = made!(sim.sessions.dealings.get_mut(e), "session", now);
    let d = dealings.get();
    let held = &mut d.holds[hold].pools[entry];
    held.units = new_units;
    held.position += advance;
    d.wait = Wait::None;
    if let Ok((_, mut stats)) = sim.pools.members.get_mut(sim.pools.entities[p]) {
        sim.pools.levels.grow(&mut stats, p, now, more);
    }
    let Some(stage) = stage else {
        return Ok(Grant::Session);
    };
    if let Ok((mut service, _)) = sim
        .stages
        .members
        .get_mut(sim.stages.entities[stage as usize])
        && let Some(engine) = service.engine()
        && let Some(r) = engine.find(e)
    {
        engine.residents[r].stalled = false;
        if code.steps[stage as usize].as_ref().and_then(|st| st.memory) == Some(p as u32) {
            engine.residents[r].kv += more;
        }
    }
    sim.stages.dirty.engines.insert(stage as usize);
    Ok(Grant::Resident)
}
