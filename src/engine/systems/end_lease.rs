//! `end_lease`: a lease's end event returns its units, unless the lease
//! already ended (a `release`, or its session's end).
//!
//! Invariant: a lease-end event names its lease by id; a stale one finds
//! no lease of that id and does nothing (it still counts as an event).

use bevy_ecs::entity::EntityIndex;

use crate::engine::data::code::Code;
use crate::engine::eval::sim::Sim;
use crate::engine::interface::RunError;
use crate::engine::systems::admit::admission_pass;
use crate::engine::systems::caching::{keep, lease_kept};

/// The lease `id` of the session of entity index `index` ends now.
pub fn end_lease(code: &Code, sim: &mut Sim, index: u32, id: u64) -> Result<(), RunError> {
    // A session entity is never despawned (engine/data/session.rs): the entity
    // at its index is its own.
    let Some(index) = EntityIndex::from_raw_u32(index) else {
        return Ok(());
    };
    let e = sim.sessions.entities.resolve_from_index(index);
    match sim.sessions.states.get(e) {
        Ok((cont, _, _)) if cont.live() => {}
        _ => return Ok(()),
    }
    let Ok(mut dealings) = sim.sessions.dealings.get_mut(e) else {
        return Ok(());
    };
    let Some(d) = dealings.0.as_deref_mut() else {
        return Ok(());
    };
    let Some(k) = d.leases.iter().position(|l| l.id == id) else {
        return Ok(());
    };
    let lease = d.leases.remove(k);
    // `give_back` drops the session's record on the pool: 0.1.0 forgets
    // its admission there (tests/serving/preempt_lifo_passes_over_an_ended_lease).
    sim.give_back(e, lease.pool, lease.units);
    let kept = lease_kept(code, sim, e, &lease)?;
    keep(code, sim, e, lease.pool as usize, kept)?;
    admission_pass(code, sim)?;
    Ok(())
}
