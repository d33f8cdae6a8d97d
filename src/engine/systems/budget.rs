//! A step stage's expressions and their moments (spec §8.1): the Budget
//! moment's totals over its residents, evaluating `budget`, `chunk` and
//! `cost`, and the `budget_left(E)` column that expressions read.
//!
//! Invariant: an engine's expressions draw from the machine's stream and
//! read no session's attributes; the `budget_left` column of a step stage
//! is refreshed whenever its residents change, and holds the Budget
//! formula's value except while the engine admits (then the iteration's
//! header value, set and restored by the admitting system).

use bevy_ecs::prelude::*;

use crate::engine::data::code::{Code, Expr, StepCode, ctx_index};
use crate::engine::eval::evaluate::Moment;
use crate::engine::eval::sim::{Outside, RunStream, Sim, made};
use crate::engine::interface::RunError;
use crate::engine::serving::iteration::{Mode, budget_left};
use crate::ir::Ctx;

/// The units session `e` holds in pool member `p` by its hold frames
/// (nested holds add up; leases do not count): what `kv_decode` and
/// `kv_prefill` sum.
pub fn held_by_frames(sim: &Sim, e: Entity, p: u32) -> f64 {
    let Ok(dealings) = sim.sessions.dealings.get(e) else {
        return 0.0;
    };
    dealings
        .holds()
        .iter()
        .flat_map(|h| h.pools.iter())
        .filter(|h| h.pool == p && !h.released)
        .map(|h| h.units)
        .sum()
}

/// The Budget moment of engine `s`: `residents`, `decoders`, `kv_decode`
/// and `kv_prefill` over every resident (before this iteration's growth).
pub fn budget_moment(code: &Code, sim: &Sim, s: usize) -> Result<Moment, RunError> {
    let memory = code.steps[s].as_ref().and_then(|st| st.memory);
    let (service, _) = made!(
        sim.stages.members.get(sim.stages.entities[s]),
        "stage",
        sim.time.clock.now
    );
    let mut moment = Moment::NONE;
    let (mut residents, mut decoders, mut kv_decode, mut kv_prefill) = (0.0, 0.0, 0.0, 0.0);
    if let crate::engine::data::stage::Service::Step(engine) = service {
        for r in &engine.residents {
            residents += 1.0;
            let units = if memory.is_some() { r.kv } else { 0.0 };
            match r.mode {
                Mode::Decode => {
                    decoders += 1.0;
                    kv_decode += units;
                }
                Mode::Prefill => kv_prefill += units,
            }
        }
    }
    moment.0[ctx_index(Ctx::Residents)] = residents;
    moment.0[ctx_index(Ctx::Decoders)] = decoders;
    moment.0[ctx_index(Ctx::KvDecode)] = kv_decode;
    moment.0[ctx_index(Ctx::KvPrefill)] = kv_prefill;
    Ok(moment)
}

/// The Budget moment of engine `s` when `budget`, `chunk` or the serve
/// keys read it; otherwise no moment (`Moment::NONE`), which saves the walk
/// over the residents (both are usually numbers).
pub fn budget_moment_if_read(code: &Code, sim: &Sim, s: usize) -> Result<Moment, RunError> {
    match &code.steps[s] {
        Some(step) if step.keys.is_empty() && budget_reads_nothing(step) => Ok(Moment::NONE),
        _ => budget_moment(code, sim, s),
    }
}

/// Whether `budget` and `chunk` are numbers: they read no moment and no
/// state and draw nothing, so `budget_left` depends on the wants alone.
pub fn budget_reads_nothing(step: &StepCode) -> bool {
    matches!(step.budget, Expr::Num(_)) && matches!(step.chunk, Expr::Num(_))
}

/// Evaluates engine `s`'s expression `x` (its `what`) at `moment`.
pub fn eval_engine(
    code: &Code,
    sim: &mut Sim,
    s: usize,
    x: &Expr,
    moment: &Moment,
    what: &str,
) -> Result<f64, RunError> {
    let scope = Outside::no_session(RunStream::Machine, moment);
    sim.evaluate_outside(x, scope).map_err(|f| {
        sim.error(format!(
            "step stage `{}`: {what}: {f}",
            code.program.stages[s].name
        ))
    })
}

/// `budget` and `chunk` of engine `s` at the Budget moment `moment`; a
/// NaN budget is a run-time error.
pub fn budget_and_chunk(
    code: &Code,
    sim: &mut Sim,
    s: usize,
    moment: &Moment,
) -> Result<(f64, f64), RunError> {
    let Some(step) = &code.steps[s] else {
        return Ok((0.0, 0.0));
    };
    let budget = eval_engine(code, sim, s, &step.budget, moment, "budget")?;
    if budget.is_nan() {
        return Err(sim.error(format!(
            "step stage `{}`: the budget is NaN",
            code.program.stages[s].name
        )));
    }
    let chunk = eval_engine(code, sim, s, &step.chunk, moment, "chunk")?;
    Ok((budget, chunk))
}

/// Refreshes engine `s`'s `budget_left(E)` column: `max(0, B − Σ want)`.
pub fn refresh_budget_left(code: &Code, sim: &mut Sim, s: usize) -> Result<(), RunError> {
    let moment = budget_moment_if_read(code, sim, s)?;
    let (budget, chunk) = budget_and_chunk(code, sim, s, &moment)?;
    let (service, _) = made!(
        sim.stages.members.get(sim.stages.entities[s]),
        "stage",
        sim.time.clock.now
    );
    let left = match service {
        crate::engine::data::stage::Service::Step(engine) => budget_left(
            budget,
            chunk,
            engine.residents.iter().map(|r| (r.mode, r.remaining)),
        ),
        _ => f64::NAN,
    };
    sim.stages.load.budget_left[s] = left;
    Ok(())
}
