//! `run_job`: a session's `run` statement: a job at one stage, or a flow
//! over several shared stages (spec §6.3–6.4).
//!
//! Invariant: a run of zero work makes no job and no event, but the
//! session yields to the back of the ready queue (as in pyserq 0.1.0: a
//! session ready behind it reaches a shared fifo first).

use bevy_ecs::prelude::*;
use smallvec::SmallVec;

use super::code::{Code, Expr, Member};
use super::eval::{Cx, eval, member};
use super::flow::FlowOf;
use super::hold::Step;
use super::interface::RunError;
use super::sim::{Sim, check_amount, lost};
use super::stage::{Service, join};

/// The stages a `run` names, evaluated (the first, then the others).
pub type Held = SmallVec<[u32; 4]>;

/// Evaluates `run s [, s2 …] (w);` in a session: its stages, then its
/// work (checked to be an amount), in the reference's order.
pub fn evaluate_run(
    stage: &Member,
    also: &[Member],
    work: &Expr,
    cx: &mut Cx<'_>,
) -> Result<(Held, f64), String> {
    let mut held = Held::new();
    held.push(member(stage, cx, "stage").map_err(|f| f.to_string())? as u32);
    for r in also {
        held.push(member(r, cx, "stage").map_err(|f| f.to_string())? as u32);
    }
    let w = eval(work, cx).map_err(|f| f.to_string())?;
    Ok((held, check_amount("the run's work", w)?))
}

/// `run s [, s2 …] (w);` in session `e`, its stages and work evaluated
/// (by the interpreter, in the one fetch of the session's components).
pub fn run_job(
    code: &Code,
    sim: &mut Sim,
    e: Entity,
    at: (usize, usize),
    held: &[u32],
    w: f64,
) -> Result<Step, RunError> {
    if w == 0.0 {
        sim.ready.0.push_back(e);
        return Ok(Step::Stop);
    }
    let now = sim.clock.now;
    let first = held[0] as usize;
    let Ok((mut service, mut stats)) = sim.store.stages.get_mut(sim.members.stages[first]) else {
        return Err(lost("stage", now));
    };
    if held.len() == 1 && !service.is_shared() {
        let service = service.bypass_change_detection();
        join(
            first,
            (service, stats.bypass_change_detection()),
            sim.load,
            now,
            e,
            w,
            sim.events,
        );
        if let Service::Ps(_) = *service {
            sim.dirty.mark(first as u32);
        }
        return Ok(Step::Stop);
    }
    let is_shared = |sim: &Sim, s: u32| {
        sim.store
            .stages
            .get(sim.members.stages[s as usize])
            .is_ok_and(|(service, _)| service.is_shared())
    };
    if let Some(s) = held.iter().find(|&&s| !is_shared(sim, s)) {
        let name = &code.program.stages[*s as usize].name;
        return Err(sim.session_error(
            e,
            at,
            format!("stage `{name}` is held with others by one run but is not shared"),
        ));
    }
    start_flow(sim, e, held, w)?;
    Ok(Step::Stop)
}

/// Starts a flow of `work` over `stages` for session `e`: the flow gets an
/// entity (a recycled one if any) whose `FlowOf` names the session.
pub fn start_flow(sim: &mut Sim, e: Entity, stages: &[u32], work: f64) -> Result<(), RunError> {
    let now = sim.clock.now;
    for &s in stages {
        let Ok((service, mut stats)) = sim.store.stages.get_mut(sim.members.stages[s as usize])
        else {
            return Err(lost("stage", now));
        };
        stats.count(s as usize, true, &mut sim.load, now, 1.0);
        sim.load.set_busy(s as usize, &service);
    }
    let id = sim.flows.system.start(now, stages, work, e.to_bits());
    let flow = match sim.flows.free.pop() {
        Some(flow) => flow,
        None => sim.store.commands.spawn_empty().id(),
    };
    sim.store
        .commands
        .entity(flow)
        .insert(FlowOf { session: e });
    sim.flows.entity_of.insert(id, flow);
    sim.flows.changed = true;
    Ok(())
}
