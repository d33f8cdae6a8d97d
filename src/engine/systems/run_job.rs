//! `run_job`: a session's `run` statement: a job at one stage, or a flow
//! over several shared stages (spec §6.3–6.4).
//!
//! Invariant: a run of zero work makes no job and no event, but the
//! session yields to the back of the ready queue (as in pyserq 0.1.0: a
//! session ready behind it reaches a shared fifo first).

use bevy_ecs::prelude::*;
use smallvec::SmallVec;

use crate::engine::data::code::{Code, Expr, Member, Stmt};
use crate::engine::data::residents::Resident;
use crate::engine::data::stage::{Service, join};
use crate::engine::eval::evaluate::{Cx, eval, member};
use crate::engine::eval::sim::{Sim, lost, made};
use crate::engine::interface::RunError;
use crate::engine::serving::iteration::Mode;
use crate::engine::serving::order::NEVER_ADMITTED;
use crate::engine::systems::budget::{held_by_frames, refresh_budget_left};
use crate::engine::systems::hold::Step;
use crate::ir::RunMode;

/// The stages a `run` names, evaluated (the first, then the others).
pub type Held = SmallVec<[u32; 4]>;

/// Evaluates `run s [, s2 …] (w);` in a session: its stages, then its
/// work (the caller checks it is an amount: [`Sim::amount`]), in the
/// reference's order.
#[inline]
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
    Ok((held, w))
}

/// `run s [, s2 …] (w);` in session `e`, its stages and work evaluated
/// (by the interpreter, in the one fetch of the session's components).
#[inline]
pub fn run_job(
    code: &Code,
    sim: &mut Sim,
    e: Entity,
    at: (usize, usize),
    held: &[u32],
    w: f64,
) -> Result<Step, RunError> {
    if w == 0.0 {
        sim.sessions.ready.0.push_back(e);
        return Ok(Step::Stop);
    }
    let now = sim.time.clock.now;
    let first = held[0] as usize;
    // Only a preemption reads where the session's job is: without one, no fetch.
    if code.preempts
        && let Ok(mut dealings) = sim.sessions.dealings.get_mut(e)
        && let Some(d) = dealings.bypass_change_detection().0.as_deref_mut()
    {
        d.at_stage = Some(held[0]);
    }
    if let Stmt::Run { mode, .. } = &code.blocks[at.0][at.1]
        && *mode != RunMode::Plain
    {
        return join_engine(code, sim, e, at, first, w);
    }
    let (mut service, mut stats) = made!(
        sim.stages.members.get_mut(sim.stages.entities[first]),
        "stage",
        now
    );
    if held.len() == 1 && !service.is_shared() {
        let service = service.bypass_change_detection();
        join(
            first,
            (service, stats.bypass_change_detection()),
            sim.stages.load,
            now,
            e,
            w,
            sim.time.events,
        );
        if let Service::Ps(_) = *service {
            sim.stages.dirty.mark(first as u32);
        }
        return Ok(Step::Stop);
    }
    let is_shared = |sim: &Sim, s: u32| {
        sim.stages
            .members
            .get(sim.stages.entities[s as usize])
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
    sim.start_flow(Some(e), held, w)?;
    Ok(Step::Stop)
}

/// A run `run E prefill|decode (T) [growing P]` of `w` > 0 tokens joins
/// step stage `s` as a resident; the session blocks until it completes.
/// While the engine forms an iteration (it admits), the newcomer is
/// served by that iteration. Its mode and `growing` pool are the run
/// statement's at `at`.
fn join_engine(
    code: &Code,
    sim: &mut Sim,
    e: Entity,
    at: (usize, usize),
    s: usize,
    w: f64,
) -> Result<Step, RunError> {
    let now = sim.time.clock.now;
    let Stmt::Run { mode, growing, .. } = &code.blocks[at.0][at.1] else {
        return Err(lost("run statement", now));
    };
    let mode = *mode;
    let growing = match growing {
        None => None,
        Some(r) => {
            // Whether a hold of it is open is checked when an iteration
            // grows the run (0.1.0: a run no iteration serves, after its
            // hold's `release`, raises nothing).
            let p = sim.in_session(e, at, |cx| member(r, cx, "pool"))? as u32;
            Some(p)
        }
    };
    let admission = sim
        .sessions
        .dealings
        .get(e)
        .ok()
        .and_then(|d| d.0.as_deref().and_then(|d| d.admission))
        .map_or(NEVER_ADMITTED, |a| a as f64);
    let kv = code.steps[s]
        .as_ref()
        .and_then(|st| st.memory)
        .map_or(0.0, |m| held_by_frames(sim, e, m));
    let (mut service, mut stats) = made!(
        sim.stages.members.get_mut(sim.stages.entities[s]),
        "stage",
        now
    );
    let Some(engine) = service.engine() else {
        let name = &code.program.stages[s].name;
        return Err(sim.session_error(
            e,
            at,
            format!("`prefill`/`decode` run on `{name}`, which is not a step stage"),
        ));
    };
    let forming = engine.forming;
    engine.join(Resident {
        session: e,
        mode: if mode == RunMode::Decode {
            Mode::Decode
        } else {
            Mode::Prefill
        },
        remaining: w,
        growing,
        joined: now,
        order: 0,
        granted: 0.0,
        stalled: false,
        fresh: forming,
        rank: u32::MAX,
        at,
        admission,
        kv,
    });
    sim.stages.dirty.engines.insert(s);
    stats.count(s, false, sim.stages.load, now, 1.0);
    sim.stages.load.set_busy(s, &service);
    refresh_budget_left(code, sim, s)?;
    Ok(Step::Stop)
}
