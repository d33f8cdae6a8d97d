//! `end_lease`: a lease's end event returns its units, unless the lease
//! already ended (a `release`, or its session's end).
//!
//! Invariant: a lease-end event names its lease by id; a stale one finds
//! no lease of that id and does nothing (it still counts as an event).

use bevy_ecs::prelude::*;

use super::admit::admission_pass;
use super::caching::keep;
use super::code::Code;
use super::interface::RunError;
use super::sim::Sim;

/// The lease `id` of session `e` ends now.
pub fn end_lease(code: &Code, sim: &mut Sim, e: Entity, id: u64) -> Result<(), RunError> {
    match sim.store.sessions.get(e) {
        Ok((cont, _, _)) if cont.live() => {}
        _ => return Ok(()),
    }
    let Ok(mut dealings) = sim.store.dealings.get_mut(e) else {
        return Ok(());
    };
    let Some(d) = dealings.0.as_deref_mut() else {
        return Ok(());
    };
    let Some(k) = d.leases.iter().position(|l| l.id == id) else {
        return Ok(());
    };
    let lease = d.leases.remove(k);
    sim.give_back(e, lease.pool, lease.units);
    keep(code, sim, e, lease.pool as usize, lease.cache)?;
    admission_pass(code, sim)?;
    Ok(())
}
