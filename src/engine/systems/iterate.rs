//! `iterate`: a step stage's iteration (spec §8.1): formed at the end of a
//! quiet settle (the Budget moment, the serve order, the hand-out of the
//! budget with growth, stalls and preemptions, then admissions through
//! `admit via`), costed at the Step moment, and ended by one event that
//! credits its grants and completes the runs done.
//!
//! Invariants: an engine forms at most one iteration at a time and has at
//! most one end event live; a resident takes tokens only from the
//! iteration's hand-out, and its growing hold covers its position before
//! the tokens are granted; completions at an iteration's end go on in its
//! serve order. docs/serving-engine.md says why each step is so.

use bevy_ecs::prelude::*;
use smallvec::SmallVec;

use crate::engine::data::code::{Code, ctx_index};
use crate::engine::data::events::EventKind;
use crate::engine::data::residents::{Engine, Resident};
use crate::engine::data::session::{Dealings, Wait};
use crate::engine::data::stage::Service;
use crate::engine::eval::evaluate::{Moment, eval};
use crate::engine::eval::sim::{Sim, lost, made};
use crate::engine::interface::RunError;
use crate::engine::serving::EPS;
use crate::engine::serving::iteration::{Handout, Mode, StepTotals, Withdrawal};
use crate::engine::serving::order::{Rank, serve_order};
use crate::engine::serving::position::StalledGrowth;
use crate::engine::systems::admit::{head, try_admit};
use crate::engine::systems::budget::{
    budget_and_chunk, budget_moment_if_read, budget_reads_nothing, eval_engine, refresh_budget_left,
};
use crate::engine::systems::caching::make_room;
use crate::engine::systems::preempt::{Fit, Taken, make_fit};
use crate::engine::systems::step_session::step_session;
use crate::ir::Ctx;
use crate::timeline::Iteration;

/// The engine of step stage `s`.
fn engine_of<'a>(sim: &'a mut Sim, s: usize) -> Result<Mut<'a, Service>, RunError> {
    let now = sim.time.clock.now;
    match sim.stages.members.get_mut(sim.stages.entities[s]) {
        Ok((service, _)) => Ok(service),
        Err(_) => Err(lost("stage", now)),
    }
}

/// Whether step stage `s` is idle with work: residents, or a waiting
/// queue of a pool it admits for.
fn has_work(code: &Code, sim: &Sim, s: usize) -> bool {
    let Ok((service, _)) = sim.stages.members.get(sim.stages.entities[s]) else {
        return false;
    };
    let Service::Step(engine) = service else {
        return false;
    };
    if engine.running {
        return false;
    }
    !engine.residents.is_empty() || has_queue(code, sim, s)
}

/// Whether a pool that step stage `s` admits for has a waiting hold.
fn has_queue(code: &Code, sim: &Sim, s: usize) -> bool {
    code.admits[s].iter().any(|&p| {
        sim.pools
            .members
            .get(sim.pools.entities[p as usize])
            .is_ok_and(|(w, _)| !w.queue.is_empty())
    })
}

/// At a quiet settle's end: step stage `s` starts an iteration if it is
/// idle with work and its budget is above 0.
pub fn start_iteration(code: &Code, sim: &mut Sim, s: usize) -> Result<(), RunError> {
    if !has_work(code, sim, s) {
        sim.stages.dirty.engines.remove(s);
        return Ok(());
    }
    let Some(step) = &code.steps[s] else {
        return Ok(());
    };
    let moment = budget_moment_if_read(code, sim, s)?;
    let (budget, chunk) = budget_and_chunk(code, sim, s, &moment)?;
    if budget <= 0.0 {
        // Nothing is scheduled; the engine tries again at the next settle.
        return Ok(());
    }
    sim.stages.dirty.engines.remove(s);
    serve_ranks(code, sim, s, &moment)?;
    let prefill_resident = step.exclusive && {
        let engine = engine_of(sim, s)?;
        let Service::Step(engine) = &*engine else {
            return Ok(());
        };
        engine
            .residents
            .iter()
            .any(|r| r.mode == Mode::Prefill && r.remaining > 0.0)
    };
    let mut handout = Handout::new(budget, chunk, step.exclusive, prefill_resident);
    let mut preempted = false;
    serve_in_order(code, sim, s, &mut handout, &mut preempted)?;
    if !preempted && handout.admits() {
        admit(code, sim, s, &mut handout, &mut preempted)?;
    }
    let totals = handout.totals();
    if totals.served == 0 && !preempted {
        // A queue head that did not fit is tried again at every quiet
        // settle's end, as in 0.1.0: units may come back by a `release`
        // or a lease's end, or its units may read the clock
        // (tests/serving/admit_via_retried_every_settle).
        if has_queue(code, sim, s) {
            sim.stages.dirty.engines.insert(s);
        }
        refresh_budget_left(code, sim, s)?;
        return Ok(());
    }
    let step_moment = step_moment(sim, s, step.memory.is_some(), &totals)?;
    let residents = step_moment.0[ctx_index(Ctx::Residents)];
    let cost = eval_engine(code, sim, s, &step.cost, &step_moment, "cost")?;
    if cost.is_nan() || (totals.tokens > 0.0 && cost <= 0.0) {
        return Err(cost_error(code, sim, s, cost, totals.tokens));
    }
    let now = sim.time.clock.now;
    let generation = {
        let mut service = engine_of(sim, s)?;
        let Some(engine) = service.engine() else {
            return Ok(());
        };
        engine.running = true;
        engine.generation += 1;
        engine.iterations += 1;
        engine.served = totals.served;
        engine.budget = budget;
        engine.generation
    };
    if let Ok((service, _)) = sim.stages.members.get(sim.stages.entities[s]) {
        sim.stages.load.set_busy(s, service);
    }
    sim.record_iteration(
        s,
        Iteration {
            start: now,
            duration: cost.max(0.0),
            tokens: totals.tokens,
            prefill: totals.prefilled,
            residents,
            cost,
        },
    );
    sim.time.events.schedule(
        now + cost.max(0.0),
        EventKind::IterationEnd(s as u32, generation),
    );
    // With a budget and chunk that are numbers, `budget_left` follows the
    // residents' wants only, and every join and preemption during the
    // forming refreshed it already (grants do not change a want).
    if budget_reads_nothing(step) {
        return Ok(());
    }
    refresh_budget_left(code, sim, s)
}

/// The Step moment of step stage `s`: the hand-out's totals, and
/// `residents`, `kv_decode` and `kv_prefill` over the residents given
/// tokens, after growth (the kv sums only for an engine with `memory`).
fn step_moment(
    sim: &mut Sim,
    s: usize,
    memory: bool,
    totals: &StepTotals,
) -> Result<Moment, RunError> {
    let (mut kv_decode, mut kv_prefill, mut residents) = (0.0, 0.0, 0.0);
    let engine = engine_of(sim, s)?;
    if let Service::Step(engine) = &*engine {
        residents += engine.residents.len() as f64;
        if memory {
            for r in engine.residents.iter().filter(|r| r.granted > 0.0) {
                match r.mode {
                    Mode::Decode => kv_decode += r.kv,
                    Mode::Prefill => kv_prefill += r.kv,
                }
            }
        }
    }
    let mut moment = Moment::NONE;
    moment.0[ctx_index(Ctx::Tokens)] = totals.tokens;
    moment.0[ctx_index(Ctx::Prefilled)] = totals.prefilled;
    moment.0[ctx_index(Ctx::Decoders)] = f64::from(totals.decoders);
    moment.0[ctx_index(Ctx::KvDecode)] = kv_decode;
    moment.0[ctx_index(Ctx::KvPrefill)] = kv_prefill;
    moment.0[ctx_index(Ctx::Residents)] = residents;
    moment.0[ctx_index(Ctx::Attention)] = totals.attention;
    Ok(moment)
}

/// A cost that is NaN, or not above 0 for an iteration that schedules
/// tokens: a run-time error naming the session first served and its run
/// statement (the iteration's, when nobody was served).
fn cost_error(code: &Code, sim: &mut Sim, s: usize, cost: f64, tokens: f64) -> RunError {
    let name = &code.program.stages[s].name;
    let message = if cost.is_nan() {
        format!("step stage `{name}`: the cost of an iteration of {tokens} tokens is NaN")
    } else {
        format!(
            "step stage `{name}`: an iteration of {tokens} tokens costs {cost}; a cost must be above 0"
        )
    };
    let first = engine_of(sim, s).ok().and_then(|mut service| {
        let engine = service.engine()?;
        engine
            .residents
            .iter()
            .filter(|r| r.granted > 0.0)
            .min_by_key(|r| r.rank)
            .map(|r| (r.session, r.at))
    });
    match first {
        Some((e, at)) => sim.session_error(e, at, message),
        None => sim.error(message),
    }
}

/// Puts the residents of step stage `s` in serve order (their `rank`
/// their place): the serve keys at the Serve moment, then the admission
/// number, then the join order.
fn serve_ranks(code: &Code, sim: &mut Sim, s: usize, budget: &Moment) -> Result<(), RunError> {
    let keys = code.steps[s].as_ref().map_or(&[][..], |st| &st.keys[..]);
    if keys.is_empty() {
        rank_by_admission(engine_of(sim, s)?.engine());
        return Ok(());
    }
    let mut residents = match engine_of(sim, s)?.engine() {
        Some(engine) => std::mem::take(&mut engine.residents),
        None => return Ok(()),
    };
    let mut ranks: Vec<(Rank<SmallVec<[f64; 4]>>, usize)> = Vec::with_capacity(residents.len());
    for (i, r) in residents.iter().enumerate() {
        let mut row: SmallVec<[f64; 4]> = SmallVec::new();
        if !keys.is_empty() {
            let mut moment = *budget;
            moment.0[ctx_index(Ctx::Decoding)] = if r.mode == Mode::Decode { 1.0 } else { 0.0 };
            moment.0[ctx_index(Ctx::Admission)] = r.admission;
            moment.0[ctx_index(Ctx::Remaining)] = r.remaining;
            for k in keys {
                match sim.in_session_at(r.session, r.at, &moment, |cx| eval(k, cx)) {
                    Ok(v) => row.push(v),
                    Err(err) => {
                        if let Some(engine) = engine_of(sim, s)?.engine() {
                            engine.residents = residents;
                        }
                        return Err(err);
                    }
                }
            }
        }
        ranks.push((
            Rank {
                keys: row,
                admission: r.admission,
                joined: r.order,
            },
            i,
        ));
    }
    ranks.sort_unstable_by(|a, b| serve_order(&a.0, &b.0));
    let mut sorted = Vec::with_capacity(residents.len());
    for (rank, (_, i)) in ranks.iter().enumerate() {
        let mut r = residents[*i];
        r.rank = rank as u32;
        sorted.push(r);
    }
    residents.clear();
    if let Some(engine) = engine_of(sim, s)?.engine() {
        engine.residents = sorted;
    }
    Ok(())
}

/// The residents of step stage `s`, in serve order, take their tokens.
/// Most are served in place ([`serve_in_place`]); one whose growth needs
/// units goes through [`serve`], whose preemption may take residents out
/// anywhere, so the walk finds its place again (normally where it was).
fn serve_in_order(
    code: &Code,
    sim: &mut Sim,
    s: usize,
    handout: &mut Handout,
    preempted: &mut bool,
) -> Result<(), RunError> {
    let mut i = 0;
    loop {
        match serve_in_place(sim, s, &mut i, handout)? {
            InPlace::Done => return Ok(()),
            InPlace::WithdrawDecodes => withdraw_decodes(sim, s)?,
            InPlace::Grows(e) => {
                serve(code, sim, s, i, e, handout, preempted)?;
                i = match engine_of(sim, s)?.engine().and_then(|g| g.find_at(i, e)) {
                    Some(j) => j + 1,
                    None => i,
                };
            }
        }
    }
}

/// Why [`serve_in_place`] stopped.
enum InPlace {
    /// Every resident from the start place on was served.
    Done,
    /// A prefill took the iteration alone (`exclusive prefill`): the
    /// decode grants before it are withdrawn, then the walk goes on.
    WithdrawDecodes,
    /// The resident at the place, of this session, must grow its hold (or
    /// holds no frame of its `growing` pool): [`serve`] serves it.
    Grows(Entity),
}

/// Serves the residents of step stage `s` from place `*at` on, as
/// [`serve`] would, while none needs more units: one borrow of the engine
/// and the sessions' dealings for the whole walk, where [`serve`] looks
/// both up per resident. Leaves `*at` at the first resident not served.
fn serve_in_place(
    sim: &mut Sim,
    s: usize,
    at: &mut usize,
    handout: &mut Handout,
) -> Result<InPlace, RunError> {
    let now = sim.time.clock.now;
    let (mut service, _) = made!(
        sim.stages.members.get_mut(sim.stages.entities[s]),
        "stage",
        now
    );
    let Some(engine) = service.engine() else {
        return Ok(InPlace::Done);
    };
    let blocks = &sim.pools.kv.block;
    while let Some(&r) = engine.residents.get(*at) {
        if r.stalled {
            *at += 1;
            continue;
        }
        let tokens = handout.offer(r.mode, r.remaining);
        if tokens <= 0.0 {
            *at += 1;
            continue;
        }
        let mut k = 0.0;
        if let Some(p) = r.growing {
            let mut d = made!(sim.sessions.dealings.get_mut(r.session), "session", now);
            let Some((h, i)) = innermost_of(&d, p) else {
                return Ok(InPlace::Grows(r.session));
            };
            let x = d.holds()[h].pools[i];
            if StalledGrowth::of(x.units, x.position, tokens, blocks[p as usize]).is_some() {
                return Ok(InPlace::Grows(r.session));
            }
            let frame = &mut d.get().holds[h];
            frame.ran = true;
            frame.pools[i].position = x.position + tokens;
            k = x.position;
        }
        // `take` withdraws decodes only for a prefill: this resident keeps
        // its grant whether it is given before or after the withdrawal.
        let withdrawal = handout.take(r.mode, tokens, k);
        engine.residents[*at].granted = tokens;
        *at += 1;
        if withdrawal == Withdrawal::Decodes {
            return Ok(InPlace::WithdrawDecodes);
        }
    }
    Ok(InPlace::Done)
}

/// The serve order without keys: by admission number, then join order
/// ([`serve_order`] with empty keys), sorted in place. The residents are
/// usually in that order already (the last iteration's, newcomers after).
fn rank_by_admission(engine: Option<&mut Engine>) {
    let Some(engine) = engine else {
        return;
    };
    let before = |a: &Resident, b: &Resident| {
        a.admission
            .total_cmp(&b.admission)
            .then(a.order.cmp(&b.order))
    };
    if !engine
        .residents
        .is_sorted_by(|a, b| before(a, b) != std::cmp::Ordering::Greater)
    {
        engine.residents.sort_unstable_by(before);
    }
    for (rank, r) in engine.residents.iter_mut().enumerate() {
        r.rank = rank as u32;
    }
}

/// The resident of session `e` at step stage `s` takes its tokens from the
/// hand-out, its growing hold first grown to cover them.
fn serve(
    code: &Code,
    sim: &mut Sim,
    s: usize,
    hint: usize,
    e: Entity,
    handout: &mut Handout,
    preempted: &mut bool,
) -> Result<(), RunError> {
    let now = sim.time.clock.now;
    let (mode, remaining, growing, stalled) = {
        let engine = engine_of(sim, s)?;
        let Service::Step(engine) = &*engine else {
            return Ok(());
        };
        let Some(r) = engine.find_at(hint, e) else {
            return Ok(());
        };
        let r = engine.residents[r];
        (r.mode, r.remaining, r.growing, r.stalled)
    };
    if stalled {
        return Ok(());
    }
    let tokens = handout.offer(mode, remaining);
    if tokens <= 0.0 {
        return Ok(());
    }
    let mut k = 0.0;
    if let Some(p) = growing {
        let Some((h, i)) = innermost(sim, e, p) else {
            return Err(sim.error(format!(
                "`growing {}` outside a hold of it",
                code.program.pools[p as usize].name
            )));
        };
        let (units, position) = {
            let d = made!(sim.sessions.dealings.get(e), "session", now);
            let x = d.holds()[h].pools[i];
            (x.units, x.position)
        };
        if let Some(grow) =
            StalledGrowth::of(units, position, tokens, sim.pools.kv.block[p as usize])
        {
            let entry = GrowingEntry {
                frame: h,
                index: i,
                pool: p,
                units,
            };
            let place = (s, hint, e);
            match grow_before_grant(code, sim, place, entry, grow, handout, preempted)? {
                Fit::Fits => {}
                Fit::GrowerTaken | Fit::NoVictim => return Ok(()),
            }
        }
        let mut d = made!(sim.sessions.dealings.get_mut(e), "session", now);
        let frame = &mut d.get().holds[h];
        frame.ran = true;
        frame.pools[i].position = position + tokens;
        k = position;
    }
    let withdrawal = handout.take(mode, tokens, k);
    if withdrawal == Withdrawal::Decodes {
        withdraw_decodes(sim, s)?;
    }
    let mut service = engine_of(sim, s)?;
    let Some(engine) = service.engine() else {
        return Ok(());
    };
    if let Some(r) = engine.find_at(hint, e) {
        engine.residents[r].granted = tokens;
    }
    Ok(())
}

/// A growing resident's hold entry on its `growing` pool: its frame and
/// place there, the pool, and the units it holds.
struct GrowingEntry {
    frame: usize,
    index: usize,
    pool: u32,
    units: f64,
}

/// The resident of session `e` at step stage `s` (found first at `hint`)
/// grows `entry` to `grow.allocation` before it takes its tokens: victims
/// are preempted while the growth does not fit (a victim this iteration
/// served gives its grant back to `handout`), the cache makes room, and
/// the pool's level and the resident's `kv` follow; with nobody to
/// preempt, the resident stalls. Returns what [`make_fit`] found.
fn grow_before_grant(
    code: &Code,
    sim: &mut Sim,
    (s, hint, e): (usize, usize, Entity),
    entry: GrowingEntry,
    grow: StalledGrowth,
    handout: &mut Handout,
    preempted: &mut bool,
) -> Result<Fit, RunError> {
    let now = sim.time.clock.now;
    let (p, pu) = (entry.pool, entry.pool as usize);
    let more = grow.allocation - entry.units;
    let mut withdraw = |sim: &mut Sim, taken: Taken| {
        *preempted = true;
        if let Some((v_stage, granted, v_mode, v_k)) = taken.resident
            && v_stage as usize == s
            && granted > 0.0
        {
            handout.withdraw(v_mode, granted, v_k);
            let _ = sim;
        }
        Ok(())
    };
    let fit = make_fit(code, sim, pu, more, e, &mut withdraw)?;
    match fit {
        Fit::Fits => {
            if code.caching {
                make_room(code, sim, pu, more)?;
            }
            let mut d = made!(sim.sessions.dealings.get_mut(e), "session", now);
            d.get().holds[entry.frame].pools[entry.index].units = grow.allocation;
            if let Ok((_, mut stats)) = sim.pools.members.get_mut(sim.pools.entities[pu]) {
                sim.pools.levels.grow(&mut stats, pu, now, more);
            }
            if code.steps[s].as_ref().and_then(|st| st.memory) == Some(p)
                && let Some(engine) = engine_of(sim, s)?.engine()
                && let Some(r) = engine.find_at(hint, e)
            {
                engine.residents[r].kv += more;
            }
        }
        Fit::GrowerTaken => {}
        Fit::NoVictim => stall(sim, s, e, entry.frame, entry.index, p, grow)?,
    }
    Ok(fit)
}

/// Under `exclusive prefill`, a prefill admitted in the iteration took it
/// alone: the decode grants made before it are withdrawn, and a growing
/// decode's position goes back by its token (its grown allocation stays,
/// as in the reference: tests/serving/serve_exclusive_withdrawn_decode).
fn withdraw_decodes(sim: &mut Sim, s: usize) -> Result<(), RunError> {
    let now = sim.time.clock.now;
    let mut taken: SmallVec<[(Entity, u32, f64); 4]> = SmallVec::new();
    if let Some(engine) = engine_of(sim, s)?.engine() {
        for r in engine.residents.iter_mut() {
            if r.mode == Mode::Decode && r.granted > 0.0 {
                if let Some(p) = r.growing {
                    taken.push((r.session, p, r.granted));
                }
                r.granted = 0.0;
            }
        }
    }
    for (e, p, tokens) in taken {
        let Some((h, i)) = innermost(sim, e, p) else {
            continue;
        };
        let mut d = made!(sim.sessions.dealings.get_mut(e), "session", now);
        d.get().holds[h].pools[i].position -= tokens;
    }
    Ok(())
}

/// The innermost hold frame (and entry) of session `e` holding pool `p`.
fn innermost(sim: &Sim, e: Entity, p: u32) -> Option<(usize, usize)> {
    innermost_of(sim.sessions.dealings.get(e).ok()?, p)
}

/// The innermost hold frame (and entry) of `d` holding pool `p`.
fn innermost_of(d: &Dealings, p: u32) -> Option<(usize, usize)> {
    for (h, frame) in d.holds().iter().enumerate().rev() {
        for (i, x) in frame.pools.iter().enumerate() {
            if x.pool == p && !x.released {
                return Some((h, i));
            }
        }
    }
    None
}

/// A growing resident's growth does not fit and nobody can be preempted
/// (`preempt none`): it stalls as a grower of its pool.
fn stall(
    sim: &mut Sim,
    s: usize,
    e: Entity,
    h: usize,
    i: usize,
    p: u32,
    grow: StalledGrowth,
) -> Result<(), RunError> {
    let now = sim.time.clock.now;
    let mut d = made!(sim.sessions.dealings.get_mut(e), "session", now);
    d.get().wait = Wait::Growth {
        hold: h,
        entry: i,
        allocation: grow.allocation,
        asked: grow.asked,
        stage: s as u32,
    };
    if let Ok((mut waiters, _)) = sim.pools.members.get_mut(sim.pools.entities[p as usize]) {
        waiters.stalled.push_back(e);
    }
    sim.pools.waiting.insert(p as usize);
    let mut service = engine_of(sim, s)?;
    if let Some(engine) = service.engine()
        && let Some(r) = engine.find(e)
    {
        engine.residents[r].stalled = true;
    }
    Ok(())
}

/// The iteration admits from the queues of the pools that name the stage
/// (`admit via`), in declaration order, while budget is left: each
/// admitted session runs at once (the whole ready queue does), and runs
/// that join the stage meanwhile take tokens from what is left. The first
/// head that does not fit ends the admissions.
fn admit(
    code: &Code,
    sim: &mut Sim,
    s: usize,
    handout: &mut Handout,
    preempted: &mut bool,
) -> Result<(), RunError> {
    for &p in &code.admits[s] {
        let p = p as usize;
        loop {
            if *preempted || !handout.admits() {
                return Ok(());
            }
            let Some((e, k)) = head(code, sim, p)? else {
                break;
            };
            let saved = sim.stages.load.budget_left[s];
            sim.stages.load.budget_left[s] = handout.header_budget_left();
            let admitted = try_admit(code, sim, e, k);
            sim.stages.load.budget_left[s] = saved;
            if !admitted? {
                return Ok(());
            }
            if let Some(engine) = engine_of(sim, s)?.engine() {
                engine.forming = true;
            }
            let before = preemptions(sim);
            let drained = drain(code, sim);
            if let Some(engine) = engine_of(sim, s)?.engine() {
                engine.forming = false;
            }
            drained?;
            // A `grow` statement the admitted session ran may have
            // preempted: the admissions stop there too, and a victim this
            // iteration served gives its grant back.
            *preempted |= preemptions(sim) != before;
            serve_newcomers(code, sim, s, handout, preempted)?;
        }
        if let Ok((waiters, _)) = sim.pools.members.get(sim.pools.entities[p])
            && waiters.queue.is_empty()
            && waiters.stalled.is_empty()
        {
            sim.pools.waiting.remove(p);
        }
    }
    Ok(())
}

/// After an admission's drain: grants that a `grow` statement preempted
/// go back to the hand-out, the runs that joined meanwhile (`fresh`) take
/// their tokens from what is left, and they rank after the residents
/// already ranked, in join order.
fn serve_newcomers(
    code: &Code,
    sim: &mut Sim,
    s: usize,
    handout: &mut Handout,
    preempted: &mut bool,
) -> Result<(), RunError> {
    if let Some(engine) = engine_of(sim, s)?.engine() {
        for (mode, tokens, k) in engine.withdrawn.drain(..) {
            handout.withdraw(mode, tokens, k);
        }
    }
    let fresh: SmallVec<[Entity; 4]> = {
        let mut service = engine_of(sim, s)?;
        let Some(engine) = service.engine() else {
            return Ok(());
        };
        let mut fresh = SmallVec::new();
        for r in engine.residents.iter_mut().filter(|r| r.fresh) {
            r.fresh = false;
            r.rank = u32::MAX;
            fresh.push(r.session);
        }
        fresh
    };
    for e in fresh {
        let hint = engine_of(sim, s)?
            .engine()
            .and_then(|g| g.find(e))
            .unwrap_or(0);
        serve(code, sim, s, hint, e, handout, preempted)?;
    }
    if let Ok(mut service) = engine_of(sim, s)
        && let Some(engine) = service.engine()
    {
        // Newcomers go on, at the end, after the ranked residents.
        let ranked = engine
            .residents
            .iter()
            .filter(|r| r.rank != u32::MAX)
            .count();
        let newcomers = engine.residents.iter_mut().filter(|r| r.rank == u32::MAX);
        for (k, r) in newcomers.enumerate() {
            r.rank = (ranked + k) as u32;
        }
    }
    Ok(())
}

/// Runs every ready session until none is.
fn drain(code: &Code, sim: &mut Sim) -> Result<(), RunError> {
    while let Some(e) = sim.sessions.ready.0.pop_front() {
        step_session(code, sim, e)?;
    }
    Ok(())
}

/// The end event of generation `generation` of step stage `s`: every
/// grant is credited; runs with at most EPS left complete, their sessions
/// going on in the iteration's serve order.
pub fn end_iteration(
    code: &Code,
    sim: &mut Sim,
    s: usize,
    generation: u64,
) -> Result<(), RunError> {
    let now = sim.time.clock.now;
    let (mut service, mut stats) = made!(
        sim.stages.members.get_mut(sim.stages.entities[s]),
        "stage",
        now
    );
    let Some(engine) = service.engine() else {
        return Ok(());
    };
    if generation != engine.generation || !engine.running {
        return Ok(());
    }
    engine.running = false;
    engine.served = 0;
    let mut done: SmallVec<[(u32, u64, Entity, f64); 8]> = SmallVec::new();
    for r in engine.residents.iter_mut() {
        if r.granted > 0.0 {
            r.remaining -= r.granted;
            r.granted = 0.0;
        }
        if r.remaining <= EPS {
            done.push((r.rank, r.order, r.session, r.joined));
        }
    }
    done.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
    engine.residents.retain(|r| r.remaining > EPS);
    for &(_, _, e, joined) in &done {
        stats.count(s, false, sim.stages.load, now, -1.0);
        sim.stages.load.complete(s, &mut stats, now, joined, joined);
        sim.sessions.ready.0.push_back(e);
    }
    sim.stages.load.set_busy(s, &service);
    sim.stages.dirty.engines.insert(s);
    refresh_budget_left(code, sim, s)
}

/// Victims preempted so far, over every pool.
fn preemptions(sim: &Sim) -> u64 {
    sim.pools.kv.figures.iter().map(|f| f.preemptions).sum()
}
