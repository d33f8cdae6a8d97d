//! The pool statements of a session: `hold` (joining a queue, or a
//! rejection), the end of a hold's body, `release`, `grow` and `load`
//! (spec §6.6–6.8).
//!
//! Invariant: every return of units while the session goes on (a hold's
//! end, `release`) runs one admission pass at once, before the returning
//! session continues.

use bevy_ecs::prelude::*;
use smallvec::SmallVec;

use crate::engine::data::code::{Code, Expr, Member, Stmt};
use crate::engine::data::events::EventKind;
use crate::engine::data::session::{Amounts, HoldFrame, Lease, Wait};
use crate::engine::eval::evaluate::{member, member_at};
use crate::engine::eval::sim::{Sim, lost, made, take_holding};
use crate::engine::interface::RunError;
use crate::engine::systems::admit::{Grant, admission_pass, resume_grow, rounded, units_of};
use crate::engine::systems::caching::{keep, kept_units, lease_kept};
use crate::engine::systems::end_session::end_session;
use crate::engine::systems::preempt::{Fit, Taken, make_fit};
use crate::ir;

/// What a statement did to the session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Go on with the next statement.
    Next,
    /// The session blocked (or ended): stop running it.
    Stop,
}

/// The member a reference names now, in session `e`.
#[inline(always)]
pub fn member_in(
    sim: &mut Sim,
    e: Entity,
    at: (usize, usize),
    r: &Member,
    what: &'static str,
) -> Result<usize, RunError> {
    // A member named without an index (the usual shape) inlines to a read.
    match &r.index {
        None => Ok(r.base as usize),
        Some(index) => member_indexed(sim, e, at, r, index, what),
    }
}

/// [`member_in`] of a reference whose index is `index`.
fn member_indexed(
    sim: &mut Sim,
    e: Entity,
    at: (usize, usize),
    r: &Member,
    index: &Expr,
    what: &'static str,
) -> Result<usize, RunError> {
    match index {
        // `kv[i]`, the usual shape: the attribute read from the session's
        // row, without an evaluation context.
        Expr::Attr(slot) => {
            let now = sim.time.clock.now;
            let (_, _, life) = made!(sim.sessions.states.get(e), "session", now);
            let index = sim.sessions.attrs.of(life.row).get(*slot as usize).copied();
            member_at(r.base, r.count, index.unwrap_or(f64::NAN), what)
                .map_err(|fault| sim.session_error(e, at, fault.to_string()))
        }
        _ => sim.in_session(e, at, |cx| member(r, cx, what)),
    }
}

/// `hold …`: a request above a capacity is rejected (the session ends);
/// otherwise it joins its first pool's queue and the session blocks.
pub fn join_hold(
    code: &Code,
    sim: &mut Sim,
    e: Entity,
    at: (usize, usize),
) -> Result<Step, RunError> {
    let Stmt::Hold {
        pools,
        reads_no_state,
        ..
    } = &code.blocks[at.0][at.1]
    else {
        return Ok(Step::Next);
    };
    let mut members: SmallVec<[u32; 4]> = SmallVec::new();
    let mut rejected_at = None;
    let mut known = None;
    for (k, hp) in pools.iter().enumerate() {
        let p = member_in(sim, e, at, &hp.pool, "pool")?;
        let (u, r) = units_of(code, sim, e, at, k)?;
        let (units, gate) = rounded(sim, p, u, r);
        if rejected_at.is_none() && gate > sim.pools.levels.cap[p] {
            rejected_at = Some(p);
        }
        members.push(p as u32);
        known = Some(Amounts { units, gate });
    }
    let now = sim.time.clock.now;
    if let Some(p) = rejected_at {
        if let Ok((_, mut stats)) = sim.pools.members.get_mut(sim.pools.entities[p]) {
            stats.rejected += 1;
        }
        end_session(code, sim, e)?;
        return Ok(Step::Stop);
    }
    let Some(&first) = members.first() else {
        return Ok(Step::Next);
    };
    let mut dealings = made!(sim.sessions.dealings.get_mut(e), "session", now);
    dealings.get().wait = Wait::Hold {
        at,
        known: known.filter(|_| *reads_no_state && members.len() == 1),
        pools: members,
        joined: now,
    };
    let first = first as usize;
    let (mut waiters, mut stats) = made!(
        sim.pools.members.get_mut(sim.pools.entities[first]),
        "pool",
        now
    );
    let behind = !waiters.queue.is_empty() && code.pools[first].queue.is_none();
    waiters.queue.push_back(e);
    let len = waiters.queue.len();
    sim.pools.levels.set_queued(&mut stats, first, now, len);
    // Behind a join-order queue's head the pool's state stays as it is:
    // asleep if its head provably does not fit.
    if !behind {
        sim.pools.waiting.insert(first);
    }
    if let Some(s) = code.pools[first].admit_via {
        sim.stages.dirty.engines.insert(s as usize);
    }
    Ok(Step::Stop)
}

/// The body of session `e`'s innermost hold ended: its pools are returned
/// (the leased one becomes a lease), then one admission pass.
pub fn end_hold(code: &Code, sim: &mut Sim, e: Entity) -> Result<(), RunError> {
    let now = sim.time.clock.now;
    let mut dealings = made!(sim.sessions.dealings.get_mut(e), "session", now);
    let d = dealings.get();
    let Some(hold) = d.holds.pop() else {
        return Ok(());
    };
    let Stmt::Hold { lease, cache, .. } = &code.blocks[hold.at.0][hold.at.1] else {
        return Ok(());
    };
    // Without a lease every entry not released goes back below: its
    // holders counts are taken in this fetch of the session's dealings.
    let mut counted: SmallVec<[u32; 4]> = SmallVec::new();
    if lease.is_none() {
        for h in &hold.pools {
            counted.push(if h.released {
                0
            } else {
                take_holding(&mut d.holdings, h.pool)
            });
        }
    }
    // Pools go back in written order, each before its `cache` clause (or
    // the lease's length) is read, as pyserq 0.1.0 reads them: `cache
    // (used(kv) + 2)` on `hold kv (4)` keeps 2.
    for (i, h) in hold.pools.iter().enumerate() {
        if h.released {
            continue;
        }
        if let Some((leased, length)) = lease
            && *leased == i
        {
            start_lease(sim, e, &hold, i, length)?;
            continue;
        }
        match counted.get(i) {
            Some(&c) => sim.return_units(h.pool, h.units, c),
            None => sim.give_back(e, h.pool, h.units),
        }
        if let Some(x) = cache {
            let l = sim.eval_in(e, hold.at, x)?;
            let kept = kept_units(sim, h.pool as usize, Some(l), hold.ran, h.position, h.units);
            keep(code, sim, e, h.pool as usize, kept)?;
        }
    }
    completed(code, sim, e, &hold)?;
    // Every hold's end runs a pass, even one that returned nothing (its
    // pool leased): pyserq 0.1.0 admits a waiter of another pool there
    // before the session goes on (tests/serving/preempt_step_totals_and_requeue_order).
    admission_pass(code, sim)?;
    Ok(())
}

/// The leased pool `i` of `hold` (session `e`'s, its body just ended)
/// becomes a lease of the length `length` reads now; its end is an event.
fn start_lease(
    sim: &mut Sim,
    e: Entity,
    hold: &HoldFrame,
    i: usize,
    length: &Expr,
) -> Result<(), RunError> {
    let now = sim.time.clock.now;
    let t = sim.eval_in(e, hold.at, length)?;
    let id = sim.observed.next_lease;
    sim.observed.next_lease += 1;
    let h = hold.pools[i];
    if let Ok(mut dealings) = sim.sessions.dealings.get_mut(e) {
        dealings.get().leases.push(Lease {
            id,
            pool: h.pool,
            units: h.units,
            at: hold.at,
            ran: hold.ran,
            position: h.position,
        });
    }
    if t <= 0.0 {
        sim.time
            .events
            .schedule(now, EventKind::LeaseEnd(e.index_u32(), id));
    } else if t.is_finite() {
        sim.time
            .events
            .schedule(now + t, EventKind::LeaseEnd(e.index_u32(), id));
    }
    Ok(())
}

/// A hold's body ended: `computed` is reset, and the session's `stuck`
/// records for the hold's pools start afresh.
fn completed(code: &Code, sim: &mut Sim, e: Entity, hold: &HoldFrame) -> Result<(), RunError> {
    let computed = code.column(ir::SLOT_COMPUTED);
    let lifo = code.preempts;
    // Nothing reads `computed` and no pool preempts: no fetch.
    if computed >= code.width && !lifo {
        return Ok(());
    }
    let now = sim.time.clock.now;
    let (_, _, life) = made!(sim.sessions.states.get(e), "session", now);
    let (row, serial) = (life.row, life.serial);
    if let Some(c) = sim.sessions.attrs.get_mut(row, computed) {
        *c = 0.0;
    }
    if lifo {
        for h in &hold.pools {
            sim.pools.kv.hold_completed(serial, h.pool);
        }
    }
    Ok(())
}

/// The innermost hold entry of session `e` on pool member `p` whose
/// allocation is still held: (hold index, entry index).
///
/// `release`, `grow` and `load` name their pool as the hold does (the
/// linker checks the text), but like the reference the engine matches
/// the member the reference evaluates to now, not the text: in
/// `hold q[i] (3) { set i = 1; release q[i]; }` the release ends a
/// lease of `q[1]` (pyserq 0.1.0).
fn find_held(sim: &Sim, e: Entity, p: u32) -> Option<(usize, usize)> {
    let dealings = sim.sessions.dealings.get(e).ok()?;
    for (h, frame) in dealings.holds().iter().enumerate().rev() {
        for (i, held) in frame.pools.iter().enumerate() {
            if held.pool == p && !held.released {
                return Some((h, i));
            }
        }
    }
    None
}

/// `release p;`: the innermost hold's allocation on p, else the oldest lease of p.
pub fn release(
    code: &Code,
    sim: &mut Sim,
    e: Entity,
    at: (usize, usize),
    r: &Member,
) -> Result<(), RunError> {
    let p = member_in(sim, e, at, r, "pool")? as u32;
    let now = sim.time.clock.now;
    if let Some((h, i)) = find_held(sim, e, p) {
        let mut dealings = made!(sim.sessions.dealings.get_mut(e), "session", now);
        let frame = &mut dealings.get().holds[h];
        let ran = frame.ran;
        let at = frame.at;
        let held = &mut frame.pools[i];
        held.released = true;
        let (units, position) = (held.units, held.position);
        sim.give_back(e, p, units);
        if let Stmt::Hold { cache: Some(x), .. } = &code.blocks[at.0][at.1] {
            let l = sim.eval_in(e, at, x)?;
            let kept = kept_units(sim, p as usize, Some(l), ran, position, units);
            keep(code, sim, e, p as usize, kept)?;
        }
        admission_pass(code, sim)?;
        return Ok(());
    }
    let mut dealings = made!(sim.sessions.dealings.get_mut(e), "session", now);
    let leases = &mut dealings.get().leases;
    if let Some(k) = leases.iter().position(|l| l.pool == p) {
        let lease = leases.remove(k);
        sim.give_back(e, p, lease.units);
        let kept = lease_kept(code, sim, e, &lease)?;
        keep(code, sim, e, p as usize, kept)?;
        admission_pass(code, sim)?;
    }
    Ok(())
}

/// `drop p;`: the session's live cached entry in p goes.
pub fn drop_cached(
    sim: &mut Sim,
    e: Entity,
    at: (usize, usize),
    r: &Member,
) -> Result<(), RunError> {
    let p = member_in(sim, e, at, r, "pool")?;
    crate::engine::systems::caching::drop_entry(sim, e, p)
}

/// The pool member `r` names now and the innermost hold frame (and its
/// entry) that holds it, or the run-time error of a `what` (`grow`,
/// `load`) outside a hold of that pool.
fn held_for(
    code: &Code,
    sim: &mut Sim,
    e: Entity,
    at: (usize, usize),
    r: &Member,
    what: &str,
) -> Result<(u32, usize, usize), RunError> {
    let p = member_in(sim, e, at, r, "pool")? as u32;
    match find_held(sim, e, p) {
        Some((h, i)) => Ok((p, h, i)),
        None => {
            let name = code.program.pool_name(r.base as usize);
            Err(sim.session_error(e, at, format!("{what} outside a hold of pool `{name}`")))
        }
    }
}

/// `grow p (d);`: at once if it fits, else the session stalls.
pub fn grow(code: &Code, sim: &mut Sim, e: Entity, at: (usize, usize)) -> Result<Step, RunError> {
    let Stmt::Grow(r, x) = &code.blocks[at.0][at.1] else {
        return Ok(Step::Next);
    };
    let (p, h, i) = held_for(code, sim, e, at, r, "grow")?;
    let d = sim.eval_in(e, at, x)?;
    let d = sim.amount("the grow", d, e, at)?;
    let d_amount = d;
    let now = sim.time.clock.now;
    let mut dealings = made!(sim.sessions.dealings.get_mut(e), "session", now);
    dealings.get().wait = Wait::Grow {
        hold: h,
        entry: i,
        amount: d,
    };
    if resume_grow(code, sim, e)? != Grant::No {
        return Ok(Step::Next);
    }
    if code.pools[p as usize].lifo {
        // `preempt lifo`: victims until the growth fits (perhaps the
        // grower itself, which then waits at its hold's queue's head).
        let more = match sim.sessions.dealings.get(e) {
            Ok(d) => {
                let units = d.holds()[h].pools[i].units;
                sim.pools.kv.block[p as usize].up(units + d_amount) - units
            }
            Err(_) => return Err(lost("session", now)),
        };
        match make_fit(code, sim, p as usize, more, e, &mut withdraw_from_forming)? {
            Fit::GrowerTaken => return Ok(Step::Stop),
            Fit::Fits => {
                if resume_grow(code, sim, e)? != Grant::No {
                    return Ok(Step::Next);
                }
            }
            Fit::NoVictim => {}
        }
    }
    if let Ok((mut waiters, _)) = sim.pools.members.get_mut(sim.pools.entities[p as usize]) {
        waiters.stalled.push_back(e);
    }
    sim.pools.waiting.insert(p as usize);
    Ok(Step::Stop)
}

/// `load p (n);`: the hold's computed position advances within its allocation.
pub fn load(code: &Code, sim: &mut Sim, e: Entity, at: (usize, usize)) -> Result<(), RunError> {
    let Stmt::Load(r, x) = &code.blocks[at.0][at.1] else {
        return Ok(());
    };
    let (_, h, i) = held_for(code, sim, e, at, r, "load")?;
    let n = sim.eval_in(e, at, x)?;
    let n = sim.amount("the load", n, e, at)?;
    let now = sim.time.clock.now;
    let mut dealings = made!(sim.sessions.dealings.get_mut(e), "session", now);
    let frame = &mut dealings.get().holds[h];
    frame.ran = true;
    let held = &mut frame.pools[i];
    let computed = held.position;
    if computed + n > held.units {
        let units = held.units;
        let name = code.program.pool_name(r.base as usize);
        return Err(sim.session_error(
            e,
            at,
            format!(
                "`load {name} ({n})`: the hold has {units} allocated and {computed} computed; a load must fit the allocation (grow first)"
            ),
        ));
    }
    held.position = computed + n;
    Ok(())
}

/// A victim of a `grow` statement that a forming iteration had served (the
/// statement runs in a session that iteration admitted): its grant goes
/// back to that iteration, as a growth's victim's does.
fn withdraw_from_forming(sim: &mut Sim, taken: Taken) -> Result<(), RunError> {
    if let Some((s, granted, mode, k)) = taken.resident
        && granted > 0.0
        && let Ok((mut service, _)) = sim.stages.members.get_mut(sim.stages.entities[s as usize])
        && let Some(engine) = service.engine()
        && engine.forming
    {
        engine.withdrawn.push((mode, granted, k));
    }
    Ok(())
}
