//! `issue_completions`: at the end of a settle, the ps stages whose job
//! set changed get their one finish event anew, in declaration order, then
//! the flow system its one event if any flow started or ended (spec §6.2,
//! §6.4).
//!
//! Invariant: a ps stage's capacity is evaluated here with `present` = its
//! jobs, drawing from the machine's stream, once per issue.

use bevy_ecs::prelude::*;

use crate::engine::data::code::{Code, Expr};
use crate::engine::data::events::EventKind;
use crate::engine::data::stage::issue_ps_finish;
use crate::engine::eval::evaluate::Moment;
use crate::engine::eval::sim::{Outside, RunStream, Sim, lost, made};
use crate::engine::interface::RunError;
use crate::engine::systems::iterate::start_iteration;

/// The next stage the walk visits.
enum Next {
    /// A ps stage whose job set changed.
    Ps(usize),
    /// A step stage that may start an iteration.
    Engine(usize),
}

/// Issues the finish events the settle changed, walking the stages in
/// declaration order: a ps stage whose job set changed gets its finish
/// event, a step stage that is idle with work starts an iteration if no
/// event is pending at the instant (decided once, before the walk); then
/// the flow system gets its event. A ps stage the walk has passed keeps a
/// change made later in the walk for the next walk (spec §6.2,
/// docs/serving-engine.md §2).
#[inline]
pub fn issue_completions(code: &Code, sim: &mut Sim) -> Result<(), RunError> {
    if sim.stages.dirty.engines.next_from(0).is_some() {
        walk(code, sim)?;
    } else if !sim.stages.dirty.list.is_empty() {
        // No step stage to visit: issuing a ps stage marks no other, so
        // the walk is the changed stages in declaration order.
        issue_changed_ps(code, sim)?;
    }
    if sim.flows.changed {
        issue_flows(sim)?;
    }
    Ok(())
}

/// The walk without step stages: every changed ps stage, in declaration
/// order, and the set is empty after it.
#[inline(never)]
fn issue_changed_ps(code: &Code, sim: &mut Sim) -> Result<(), RunError> {
    if let [p] = sim.stages.dirty.list[..] {
        // One stage (an M/M/1 ps): no buffer to move.
        sim.stages.dirty.list.clear();
        sim.stages.dirty.marked[p as usize] = false;
        return issue_ps(code, sim, p as usize);
    }
    let mut list = std::mem::take(&mut sim.stages.dirty.list);
    if list.len() > 1 {
        list.sort_unstable();
    }
    for &p in &list {
        sim.stages.dirty.marked[p as usize] = false;
        issue_ps(code, sim, p as usize)?;
    }
    list.clear();
    // Keep the buffer.
    sim.stages.dirty.list = list;
    Ok(())
}

/// The walk over ps and step stages in declaration order (see
/// [`issue_completions`]). Out of line: the per-event path stays small.
#[inline(never)]
fn walk(code: &Code, sim: &mut Sim) -> Result<(), RunError> {
    let now = sim.time.clock.now;
    let quiet = sim.time.events.next_time().is_none_or(|t| t > now);
    let mut pos = 0;
    loop {
        let ps = sim
            .stages
            .dirty
            .list
            .iter()
            .copied()
            .filter(|&x| x as usize >= pos && sim.stages.dirty.marked[x as usize])
            .min()
            .map(|x| x as usize);
        let engine = sim.stages.dirty.engines.next_from(pos);
        let next = match (ps, engine) {
            (None, None) => break,
            (Some(p), Some(e)) if e < p => Next::Engine(e),
            (Some(p), _) => Next::Ps(p),
            (None, Some(e)) => Next::Engine(e),
        };
        match next {
            Next::Ps(p) => {
                sim.stages.dirty.marked[p] = false;
                issue_ps(code, sim, p)?;
                pos = p + 1;
            }
            Next::Engine(e) => {
                if quiet {
                    start_iteration(code, sim, e)?;
                }
                pos = e + 1;
            }
        }
    }
    let dirty = &mut *sim.stages.dirty;
    let marked = &dirty.marked;
    dirty.list.retain(|&x| marked[x as usize]);
    Ok(())
}

/// The flow system's one event, after a settle that started or ended a
/// flow: the rates solved anew, the shared stages' utilisations follow.
#[inline(never)]
fn issue_flows(sim: &mut Sim) -> Result<(), RunError> {
    let now = sim.time.clock.now;
    let flows = &mut *sim.flows;
    flows.changed = false;
    flows.system.solve(now);
    for &s in flows.system.changed_stages() {
        flows.util[s as usize].set(now, flows.system.utilisation(s));
    }
    flows.generation += 1;
    flows.pending = None;
    if let Some((time, id)) = flows.system.next_end() {
        flows.pending = Some(id);
        sim.time
            .events
            .schedule(time.max(now), EventKind::FlowEnd(flows.generation));
    }
    sim.record_rates();
    Ok(())
}

/// Issues ps stage `s`'s one finish event anew.
#[inline]
fn issue_ps(code: &Code, sim: &mut Sim, s: usize) -> Result<(), RunError> {
    let now = sim.time.clock.now;
    let entity = sim.stages.entities[s];
    if let Some(Expr::Num(phi)) = &code.capacity[s] {
        // A constant capacity (`ps(1)`): no evaluation, one fetch.
        let (mut service, _) = made!(sim.stages.members.get_mut(entity), "stage", now);
        let service = service.bypass_change_detection();
        let phi = if service.ps_present() == 0 { 0.0 } else { *phi };
        issue_ps_finish(
            service,
            s,
            now,
            phi,
            &mut sim.stages.dirty.live[s],
            sim.time.events,
        );
        return Ok(());
    }
    issue_ps_evaluated(code, sim, s)
}

/// [`issue_ps`] for a capacity that is not a constant: evaluated with
/// `present` = the stage's jobs (none when it is empty).
#[inline(never)]
fn issue_ps_evaluated(code: &Code, sim: &mut Sim, s: usize) -> Result<(), RunError> {
    let now = sim.time.clock.now;
    let entity = sim.stages.entities[s];
    let present = match sim.stages.members.get(entity) {
        Ok((service, _)) => service.ps_present(),
        Err(_) => return Err(lost("stage", now)),
    };
    let phi = if present == 0 {
        0.0
    } else {
        let Some(capacity) = &code.capacity[s] else {
            return Ok(());
        };
        let phi = sim.evaluate_outside(
            capacity,
            Outside {
                present: present as f64,
                ..Outside::no_session(RunStream::Machine, &Moment::NONE)
            },
        );
        phi.map_err(|m| {
            sim.error(format!(
                "stage `{}`: capacity: {m}",
                code.program.stages[s].name
            ))
        })?
    };
    let (mut service, _) = made!(sim.stages.members.get_mut(entity), "stage", now);
    issue_ps_finish(
        &mut service,
        s,
        now,
        phi,
        &mut sim.stages.dirty.live[s],
        sim.time.events,
    );
    Ok(())
}
