//! `end_flow`: the flow system's one event ends the earliest flow; it
//! completes once at every stage it held and its session is ready.
//!
//! Invariant: only the event of the current generation ends a flow (every
//! issue makes the earlier one stale); the flow's entity is recycled.

use bevy_ecs::prelude::*;

use crate::engine::eval::sim::{Sim, made};
use crate::engine::flows::FlowId;
use crate::engine::interface::RunError;

/// The flow-system event of generation `generation`.
pub fn end_flow(sim: &mut Sim, generation: u64) -> Result<(), RunError> {
    if generation != sim.flows.generation {
        return Ok(());
    }
    let Some(id) = sim.flows.pending.take() else {
        return Ok(());
    };
    let now = sim.time.clock.now;
    // A spill's job has no session waiting for it.
    if let Some(e) = take_flow(sim, id, now, true)? {
        sim.sessions.ready.0.push_back(e);
    }
    Ok(())
}

/// Takes flow `id` out of the flow system and off every stage it held: each
/// counts one job fewer and, if `completed`, one completion of a job that
/// started when the flow did (a preempted flow leaves uncompleted). The
/// rates are solved anew at the settle's end. Returns the flow's session.
pub(crate) fn take_flow(
    sim: &mut Sim,
    id: FlowId,
    now: f64,
    completed: bool,
) -> Result<Option<Entity>, RunError> {
    let flows = &mut *sim.flows;
    flows.stages.clear();
    flows.stages.extend_from_slice(flows.system.stages_of(id));
    let start = flows.system.finish(now, id);
    let link = flows.links.remove(id);
    if let Some(link) = link {
        flows.free.push(link.entity);
    }
    for &s in &flows.stages {
        let (service, mut stats) = made!(
            sim.stages.members.get_mut(sim.stages.entities[s as usize]),
            "stage",
            now
        );
        stats.count(s as usize, true, sim.stages.load, now, -1.0);
        sim.stages.load.set_busy(s as usize, &service);
        if completed {
            sim.stages
                .load
                .complete(s as usize, &mut stats, now, start, start);
        }
    }
    flows.changed = true;
    Ok(link.and_then(|link| link.session))
}
