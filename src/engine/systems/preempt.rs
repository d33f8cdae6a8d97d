//! Preemption (spec §8.3 `preempt lifo`): when a growth does not fit, the
//! latest-admitted holder is taken until it does: its job leaves its
//! stage, its hold on the pool (and every hold inside it) is released
//! with their `cache` clauses, and it waits at the head of the hold's
//! queue to be admitted again, `computed` set to the position it reached.
//!
//! Invariants: a victim holds the pool in a hold frame (a lease is never
//! a victim) and no allocation of it on the pool ended since its latest
//! admission there (0.1.0 then forgets that admission: the session has no
//! [`Holding`] there, though an outer hold may still hold the pool); for
//! a pool that is some engine's `memory`, the victims are those engines'
//! residents, latest by their sessions' latest admission anywhere, and for
//! any other pool the holders, latest by their admission on the pool; the
//! releases of a preemption run no admission pass (the victim, and anyone
//! its releases would let in, is admitted at the next event's settle at
//! the earliest).

use bevy_ecs::prelude::*;
use smallvec::SmallVec;

use crate::engine::data::code::Code;
use crate::engine::data::residents::Resident;
use crate::engine::data::session::{FrameKind, HoldFrame, Wait};
use crate::engine::data::stage::{Service, cancel};
use crate::engine::eval::sim::{Sim, lost, made};
use crate::engine::interface::RunError;
use crate::engine::serving::EPS;
use crate::engine::serving::iteration::Mode;
use crate::engine::systems::admit::{rounded, units_of};
use crate::engine::systems::budget::refresh_budget_left;
use crate::engine::systems::caching::release_frame;
use crate::engine::systems::end_flow::take_flow;
use crate::engine::systems::end_session::end_session;
use crate::ir;

/// Where a victim was served when it was taken.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Taken {
    /// The victim.
    pub session: Entity,
    /// The step stage it was a resident of, with the tokens the running or
    /// forming iteration had granted it and its mode (`None`: not a resident).
    pub resident: Option<(u32, f64, Mode, f64)>,
}

/// If session `e` holds pool member `p` in a hold frame and 0.1.0 still
/// knows its admission there (its [`Holding`] on `p`: an allocation of it
/// there that ended since drops it, and the session is no victim until
/// admitted there again), the number of that admission and of its latest
/// admission anywhere.
fn admissions(sim: &Sim, e: Entity, p: u32) -> Option<(u64, u64)> {
    let d = sim.sessions.dealings.get(e).ok()?;
    let pd = d.0.as_deref()?;
    let on_pool = pd.holdings.iter().find(|h| h.pool == p)?.admission;
    let held = pd
        .holds
        .iter()
        .any(|h| h.pools.iter().any(|x| x.pool == p && !x.released));
    held.then(|| (on_pool, pd.admission.unwrap_or(on_pool)))
}

/// The victim for pool `p`: the candidate holder of the latest admission.
pub fn victim(code: &Code, sim: &mut Sim, p: usize) -> Option<Entity> {
    let pool = p as u32;
    let mut best: Option<(Entity, u64)> = None;
    let memory_of = &code.pools[p].memory_of;
    if memory_of.is_empty() {
        // The sessions admitted to the pool since, still holding it; the
        // latest by their admission on this pool (an admission on another
        // pool since does not count: tests/serving/preempt_lifo_plain_pool_orders_by_admission_there).
        let mut list = std::mem::take(&mut sim.pools.kv.lifo_holders[p]);
        // A session dropped here is pushed again when admitted there again.
        list.retain(|&e| {
            let Some((a, _)) = admissions(sim, e, pool) else {
                return false;
            };
            if best.is_none_or(|(_, b)| a > b) {
                best = Some((e, a));
            }
            true
        });
        sim.pools.kv.lifo_holders[p] = list;
    } else {
        for &s in memory_of.iter() {
            let Ok((service, _)) = sim.stages.members.get(sim.stages.entities[s as usize]) else {
                continue;
            };
            let Service::Step(engine) = service else {
                continue;
            };
            for r in &engine.residents {
                if let Some((_, a)) = admissions(sim, r.session, pool)
                    && best.is_none_or(|(_, b)| a > b)
                {
                    best = Some((r.session, a));
                }
            }
        }
    }
    best.map(|(e, _)| e)
}

/// What a growth's attempt to fit did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fit {
    /// It fits now (victims may have been taken).
    Fits,
    /// It does not fit and there is no victim left: the grower stalls.
    NoVictim,
    /// The grower itself was taken.
    GrowerTaken,
}

/// Takes victims for pool `p` until `more` units fit (`used + more ≤ cap +
/// EPS`), each reported to `taken`.
pub fn make_fit(
    code: &Code,
    sim: &mut Sim,
    p: usize,
    more: f64,
    grower: Entity,
    taken: &mut impl FnMut(&mut Sim, Taken) -> Result<(), RunError>,
) -> Result<Fit, RunError> {
    loop {
        if sim.pools.levels.used[p] + more <= sim.pools.levels.cap[p] + EPS {
            return Ok(Fit::Fits);
        }
        if !code.pools[p].lifo {
            return Ok(Fit::NoVictim);
        }
        let Some(v) = victim(code, sim, p) else {
            return Ok(Fit::NoVictim);
        };
        let t = preempt(code, sim, v, p)?;
        taken(sim, t)?;
        if v == grower {
            return Ok(Fit::GrowerTaken);
        }
    }
}

/// Preempts session `v` for pool `p`: it leaves the queue it waits in and
/// the stage it is at, its hold on the pool is released with every hold
/// inside it, and it waits at the head of that hold's queue again.
pub fn preempt(code: &Code, sim: &mut Sim, v: Entity, p: usize) -> Result<Taken, RunError> {
    sim.record_preempt(v, p as u32);
    let now = sim.time.clock.now;
    let pool = p as u32;
    let hold = VictimHold::of(sim, v, pool, now)?;
    leave_wait(sim, v, &hold.wait, now);
    let left = match hold.at_stage {
        Some(s) => leave_stage(sim, v, s as usize, now)?,
        None => None,
    };
    if let Some(k) = sim.sessions.ready.0.iter().position(|&x| x == v) {
        sim.sessions.ready.0.remove(k);
    }
    let released = release_holds(code, sim, v, &hold, pool, left, now)?;
    let Released {
        taken,
        position,
        at,
        members,
        serial,
    } = released;
    // Back at the head of the first pool's queue. A fetch of its own: the
    // victim waits for nothing while its holds are released (an eviction
    // key's `waiting` reads that), and for the hold only after.
    let first = members[0] as usize;
    let pools = members.clone();
    if let Ok(mut dealings) = sim.sessions.dealings.get_mut(v) {
        dealings.get().wait = Wait::Hold {
            at,
            pools: members,
            joined: now,
            known: None,
        };
    }
    if let Ok((mut waiters, mut stats)) = sim.pools.members.get_mut(sim.pools.entities[first]) {
        waiters.push_victim(v);
        let len = waiters.queue.len();
        sim.pools.levels.set_queued(&mut stats, first, now, len);
    }
    sim.pools.waiting.insert(first);
    if let Some(s) = code.pools[first].admit_via {
        sim.stages.dirty.engines.insert(s as usize);
    }
    let figures = &mut sim.pools.kv.figures[p];
    figures.preemptions += 1;
    if sim.pools.kv.stuck_preempted(serial, pool, position) {
        sim.pools.kv.figures[p].stuck += 1;
    }
    if let Some((s, ..)) = taken.resident {
        refresh_budget_left(code, sim, s as usize)?;
    }
    reject_again(code, sim, v, at, &pools)?;
    Ok(taken)
}

/// What a victim holds where it is taken: its innermost hold frame on the
/// pool, its position there, the stage it is at, and what it waits for.
struct VictimHold {
    /// The frame's index among its hold frames.
    frame: usize,
    /// Its position on the pool in that frame.
    position: f64,
    /// The stage its run is at, if any.
    at_stage: Option<u32>,
    /// What it waits for, with the pool a stalled growth waits on.
    wait: (Wait, Option<usize>),
}

impl VictimHold {
    fn of(sim: &Sim, v: Entity, pool: u32, now: f64) -> Result<VictimHold, RunError> {
        let dealings = made!(sim.sessions.dealings.get(v), "session", now);
        let frames = dealings.holds();
        let Some(frame) = frames
            .iter()
            .rposition(|f| f.pools.iter().any(|x| x.pool == pool && !x.released))
        else {
            return Err(lost("victim's hold", now));
        };
        let position = frames[frame]
            .pools
            .iter()
            .find(|x| x.pool == pool)
            .map_or(0.0, |x| x.position);
        let at_stage = dealings.0.as_deref().and_then(|d| d.at_stage);
        let wait = dealings
            .0
            .as_deref()
            .map(|d| d.wait.clone())
            .unwrap_or_default();
        let stalled_on = match wait {
            Wait::Grow { hold, entry, .. } | Wait::Growth { hold, entry, .. } => {
                Some(frames[hold].pools[entry].pool as usize)
            }
            _ => None,
        };
        Ok(VictimHold {
            frame,
            position,
            at_stage,
            wait: (wait, stalled_on),
        })
    }
}

/// The victim leaves the queue it waits in: a hold's queue, or the
/// stalled growers of a pool.
fn leave_wait(sim: &mut Sim, v: Entity, wait: &(Wait, Option<usize>), now: f64) {
    match wait {
        (Wait::Hold { pools, .. }, _) => {
            let first = pools[0] as usize;
            if let Ok((mut waiters, mut stats)) =
                sim.pools.members.get_mut(sim.pools.entities[first])
                && let Some(k) = waiters.queue.iter().position(|&x| x == v)
            {
                waiters.remove_at(k);
                let len = waiters.queue.len();
                sim.pools.levels.set_queued(&mut stats, first, now, len);
            }
        }
        (_, Some(q)) => {
            if let Ok((mut waiters, _)) = sim.pools.members.get_mut(sim.pools.entities[*q])
                && let Some(k) = waiters.stalled.iter().position(|&x| x == v)
            {
                waiters.stalled.remove(k);
            }
        }
        _ => {}
    }
}

/// A victim that was a step stage's resident.
#[derive(Clone, Copy)]
struct LeftEngine {
    stage: u32,
    resident: Resident,
    /// Whether the engine's iteration was running (not being formed).
    running: bool,
}

/// The victim's run leaves stage `s`: a resident leaves its engine, a
/// flow the flow system, a job its stage (not completed).
fn leave_stage(
    sim: &mut Sim,
    v: Entity,
    s: usize,
    now: f64,
) -> Result<Option<LeftEngine>, RunError> {
    let (mut service, mut stats) = made!(
        sim.stages.members.get_mut(sim.stages.entities[s]),
        "stage",
        now
    );
    match &mut *service {
        Service::Step(engine) => {
            let Some(r) = engine.find(v) else {
                return Ok(None);
            };
            let resident = engine.residents.remove(r);
            let running = engine.running;
            if resident.granted > 0.0 && running {
                engine.served = engine.served.saturating_sub(1);
            }
            stats.count(s, false, sim.stages.load, now, -1.0);
            sim.stages.load.set_busy(s, &service);
            return Ok(Some(LeftEngine {
                stage: s as u32,
                resident,
                running,
            }));
        }
        Service::Shared(_) => {
            // Its flow leaves every stage it holds, not completed; the
            // rates are solved anew at the settle's end (0.1.0).
            cancel_flow(sim, v, now)?;
        }
        _ => {
            let is_ps = matches!(*service, Service::Ps(_));
            if cancel(
                s,
                (&mut service, &mut stats),
                sim.stages.load,
                now,
                v,
                sim.time.events,
            ) && is_ps
            {
                sim.stages.dirty.mark(s as u32);
            }
        }
    }
    Ok(None)
}

/// What releasing a victim's holds leaves to do.
struct Released {
    taken: Taken,
    /// Its position on the pool (its `computed`).
    position: f64,
    /// The released outer hold's statement and pools.
    at: (usize, usize),
    members: SmallVec<[u32; 4]>,
    serial: u64,
}

/// Releases the victim's hold on the pool and every hold inside it,
/// innermost first, each with its cache clause (no admission pass), and
/// unwinds its continuation to the hold statement, `computed` set to the
/// position it reached.
fn release_holds(
    code: &Code,
    sim: &mut Sim,
    v: Entity,
    hold: &VictimHold,
    pool: u32,
    left: Option<LeftEngine>,
    now: f64,
) -> Result<Released, RunError> {
    let mut dealings = made!(sim.sessions.dealings.get_mut(v), "session", now);
    let d = dealings.get();
    let mut taken = Taken {
        session: v,
        resident: None,
    };
    let mut position = hold.position;
    if let Some(left) = left {
        let r = left.resident;
        // Attention's K of its grant, if it was served: its position then.
        let k = r
            .growing
            .and_then(|g| innermost_position(&d.holds, g))
            .map_or(0.0, |x| x - r.granted);
        taken.resident = Some((left.stage, r.granted, r.mode, k));
        // A resident served by an iteration still being formed (a `grow`
        // statement run by a session it admits takes it): its tokens were
        // not committed, so its position goes back by them (0.1.0;
        // tests/serving/admit_via_grow_statement_preempts_stops_admissions).
        if !left.running
            && r.granted > 0.0
            && let Some(g) = r.growing
        {
            if g == pool {
                position -= r.granted;
            }
            if let Some(x) = d
                .holds
                .iter_mut()
                .rev()
                .flat_map(|f| f.pools.iter_mut())
                .find(|x| x.pool == g && !x.released)
            {
                x.position -= r.granted;
            }
        }
    }
    let released: Vec<_> = d.holds.drain(hold.frame..).collect();
    d.wait = Wait::None;
    let (at, members) = {
        let outer = &released[0];
        let members: SmallVec<[u32; 4]> = outer.pools.iter().map(|x| x.pool).collect();
        (outer.at, members)
    };
    for frame in released.iter().rev() {
        release_frame(code, sim, v, frame)?;
    }
    // Unwind the continuation to the frame that holds the hold statement.
    let depth = released.len();
    let (mut cont, _, life) = made!(sim.sessions.states.get_mut(v), "session", now);
    let (row, serial) = (life.row, life.serial);
    let mut popped = 0;
    while popped < depth {
        match cont.0.pop() {
            Some(f) if f.kind() == FrameKind::Hold => popped += 1,
            Some(_) => {}
            None => break,
        }
    }
    if let Some(c) = sim
        .sessions
        .attrs
        .get_mut(row, code.column(ir::SLOT_COMPUTED))
    {
        *c = position;
    }
    Ok(Released {
        taken,
        position,
        at,
        members,
        serial,
    })
}

/// The position of the innermost unreleased entry on pool `g` in `frames`.
fn innermost_position(frames: &[HoldFrame], g: u32) -> Option<f64> {
    frames
        .iter()
        .rev()
        .flat_map(|f| f.pools.iter())
        .find(|x| x.pool == g && !x.released)
        .map(|x| x.position)
}

/// 0.1.0 executes a victim's hold statement again at once: its units are
/// re-read now (`computed` set) and, as when a session first reaches a
/// hold, a request above a pool's capacity is rejected there and the
/// session ends (tests/serving/preempt_victim_rejected_when_units_pass_cap).
/// Otherwise it waits at the head, re-read at every admission attempt.
fn reject_again(
    code: &Code,
    sim: &mut Sim,
    v: Entity,
    at: (usize, usize),
    pools: &[u32],
) -> Result<(), RunError> {
    let mut rejected_at = None;
    for (k, &p) in pools.iter().enumerate() {
        let (u, r) = units_of(code, sim, v, at, k)?;
        let (_, gate) = rounded(sim, p as usize, u, r);
        if gate > sim.pools.levels.cap[p as usize] {
            rejected_at = Some(p as usize);
            break;
        }
    }
    let Some(q) = rejected_at else {
        return Ok(());
    };
    let first = pools[0] as usize;
    let now = sim.time.clock.now;
    if let Ok((mut waiters, mut stats)) = sim.pools.members.get_mut(sim.pools.entities[first])
        && let Some(k) = waiters.queue.iter().position(|&x| x == v)
    {
        waiters.remove_at(k);
        let len = waiters.queue.len();
        sim.pools.levels.set_queued(&mut stats, first, now, len);
    }
    if let Ok(mut dealings) = sim.sessions.dealings.get_mut(v) {
        dealings.get().wait = Wait::None;
    }
    if let Ok((_, mut stats)) = sim.pools.members.get_mut(sim.pools.entities[q]) {
        stats.rejected += 1;
    }
    end_session(code, sim, v)
}

/// Takes session `v`'s flow, if it has one, out of the flow system: it
/// leaves each of its stages without completing (no completion, no
/// estimator update), and the flow-system event is issued anew at the
/// settle's end.
fn cancel_flow(sim: &mut Sim, v: Entity, now: f64) -> Result<(), RunError> {
    let flows = &mut *sim.flows;
    let Some(id) = flows
        .links
        .iter()
        .find_map(|(id, link)| (link.session == Some(v)).then_some(id))
    else {
        // Its flow ended in this event: the session is ready, not at a stage.
        return Ok(());
    };
    if flows.pending == Some(id) {
        flows.pending = None;
    }
    take_flow(sim, id, now, false)?;
    Ok(())
}
