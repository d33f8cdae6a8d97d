//! `end_session`: a session ends (its last statement, `end`, or a
//! rejection): its holds are returned innermost first, then its leases;
//! it is counted, its entity becomes vacant, and under `closed` a new
//! session replaces it.
//!
//! Invariant: unlike a hold's end or a `release`, a session's end runs no
//! admission pass of its own: its waiters are admitted by the settle's next
//! pass, after the sessions already ready (and a `closed` replacement) ran,
//! in pool declaration order. Measured on pyserq 0.1.0: a session ready
//! behind one that `end`s inside a hold, ends holding a lease, or is
//! rejected still sees the freed pool's waiter queued.

use bevy_ecs::prelude::*;

use crate::engine::data::code::Code;
use crate::engine::eval::sim::{Sim, made};
use crate::engine::interface::RunError;
use crate::engine::systems::arrive::create_session;
use crate::engine::systems::caching::{freeze_owner, keep, lease_kept, release_frame};
use crate::ir::Arrival;

/// More statements than this by one session at one instant, or more
/// `closed` replacements at one instant, is a livelock.
pub const LIVELOCK: u64 = 1_000_000;

/// Ends session `e`: returns what it holds, then retires it.
pub fn end_session(code: &Code, sim: &mut Sim, e: Entity) -> Result<(), RunError> {
    let now = sim.time.clock.now;
    let (mut cont, _, life) = made!(sim.sessions.states.get_mut(e), "session", now);
    // An empty continuation is an ended session.
    cont.0.clear();
    let serial = life.serial;
    end_closed_session(code, sim, e, serial)
}

/// Ends session `e` (serial `serial`) whose own components are already
/// closed (its continuation empty, not live): what the interpreter calls
/// once it has done that in its one fetch of them. Returns what it holds
/// and leaves its dealings empty for the entity's next session.
pub fn end_closed_session(
    code: &Code,
    sim: &mut Sim,
    e: Entity,
    serial: u64,
) -> Result<(), RunError> {
    sim.record_end(serial);
    // Without pools a session never deals with one: no fetch.
    let dealings = if code.pools.is_empty() {
        None
    } else {
        sim.sessions.dealings.get_mut(e).ok()
    };
    let holds = match dealings {
        Some(mut dealings) => match dealings.bypass_change_detection().0.as_deref_mut() {
            // It never held: nothing to return (and no box to build).
            None => None,
            // It holds nothing now (the usual end): its dealings are
            // emptied in this fetch.
            Some(d) if d.holds.is_empty() && d.leases.is_empty() && !code.caching => {
                d.clear();
                None
            }
            Some(d) => Some((std::mem::take(&mut d.holds), std::mem::take(&mut d.leases))),
        },
        None => None,
    };
    if let Some((mut holds, mut leases)) = holds {
        while let Some(hold) = holds.pop() {
            release_frame(code, sim, e, &hold)?;
        }
        for lease in leases.drain(..) {
            sim.give_back(e, lease.pool, lease.units);
            let kept = lease_kept(code, sim, e, &lease)?;
            keep(code, sim, e, lease.pool as usize, kept)?;
        }
        if code.caching {
            freeze_owner(code, sim, e)?;
        }
        // Keep the buffers for the entity's next session.
        if let Ok(mut dealings) = sim.sessions.dealings.get_mut(e) {
            dealings.clear();
            let d = dealings.get();
            d.holds = holds;
            d.leases = leases;
        }
    }
    retire_session(code, sim, e, serial)
}

/// Session `e` has ended (what it held is returned, its components are
/// closed): count it, free its entity, and replace it under `closed`.
fn retire_session(code: &Code, sim: &mut Sim, e: Entity, serial: u64) -> Result<(), RunError> {
    let now = sim.time.clock.now;
    let prog = &code.program;
    let census = &mut *sim.sessions.census;
    if now >= prog.warmup {
        census.ended += 1;
    }
    census.ended_total += 1;
    census.live -= 1;
    census.live_changed(now);
    sim.observed.mark_end(serial, now, prog.warmup);
    sim.sessions.vacant.push(e);
    if let Arrival::Closed(_) = prog.arrival {
        let census = &mut *sim.sessions.census;
        if census.replacements.0 != now {
            census.replacements = (now, 0);
        }
        census.replacements.1 += 1;
        if census.replacements.1 > LIVELOCK {
            return Err(sim.error(format!(
                "livelock: more than {LIVELOCK} closed replacements at time {now} without the clock moving (session {serial} ended at once)"
            )));
        }
        create_session(code, sim)?;
    }
    Ok(())
}
