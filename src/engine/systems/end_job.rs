//! `end_job`: a fifo job's finish event, a delay stage's earliest job's,
//! and a ps stage's one finish event: the job leaves and its session is
//! ready.
//!
//! Invariant: a ps finish whose generation is not the stage's current one
//! is stale and does nothing (it still counts as an event).

use bevy_ecs::prelude::*;

use crate::engine::data::stage::{finish_delay_job, finish_job, finish_ps};
use crate::engine::eval::sim::{Sim, made};
use crate::engine::interface::RunError;

/// The finish event of job `slot` at fifo stage `stage`.
pub fn end_job(sim: &mut Sim, stage: u32, slot: u32) -> Result<(), RunError> {
    let now = sim.time.clock.now;
    let s = stage as usize;
    let (mut service, mut stats) = made!(
        sim.stages.members.get_mut(sim.stages.entities[s]),
        "stage",
        now
    );
    if let Some(e) = finish_job(
        s,
        (&mut service, &mut stats),
        sim.stages.load,
        now,
        slot,
        sim.time.events,
    ) && e != Entity::PLACEHOLDER
    {
        sim.sessions.ready.0.push_back(e);
    }
    Ok(())
}

/// The finish event of delay stage `stage`'s earliest job.
pub fn end_delay_job(sim: &mut Sim, stage: u32) -> Result<(), RunError> {
    let now = sim.time.clock.now;
    let s = stage as usize;
    let (mut service, mut stats) = made!(
        sim.stages.members.get_mut(sim.stages.entities[s]),
        "stage",
        now
    );
    // A spill's job has no session waiting for it.
    if let Some(e) = finish_delay_job(
        s,
        (&mut service, &mut stats),
        sim.stages.load,
        now,
        sim.time.events,
    ) && e != Entity::PLACEHOLDER
    {
        sim.sessions.ready.0.push_back(e);
    }
    Ok(())
}

/// The finish event of generation `generation` of ps stage `stage`.
pub fn end_ps_job(sim: &mut Sim, stage: u32, generation: u64) -> Result<(), RunError> {
    let now = sim.time.clock.now;
    let s = stage as usize;
    // Stale (the stage's finish was issued anew since): dropped before
    // the stage is fetched.
    if sim.stages.dirty.live.get(s) != Some(&generation) {
        return Ok(());
    }
    let (mut service, mut stats) = made!(
        sim.stages.members.get_mut(sim.stages.entities[s]),
        "stage",
        now
    );
    if let Some(e) = finish_ps(s, (&mut service, &mut stats), sim.stages.load, now) {
        sim.stages.dirty.mark(stage);
        // A spill's job has no session waiting for it.
        if e != Entity::PLACEHOLDER {
            sim.sessions.ready.0.push_back(e);
        }
    }
    Ok(())
}
