//! `step_session`: the interpreter. A ready session runs until it blocks
//! (a job of positive work, a pool queue, a stalled grow) or ends;
//! commands take no time (spec §4).
//!
//! The statements that touch only the session and what expressions read
//! (`set`, `observe`, `branch`, `loop`, `choose`) run in one loop that
//! fetches the session's components once; the others (`run`, `hold`,
//! `grow`, `load`, `release`, `turn`, `end`, a hold body's end) are the
//! systems of their own files, called with the whole [`Sim`].
//!
//! Invariant: the livelock counter counts every statement run and every
//! loop restart at one instant, as the reference does.

use std::cell::Cell;

use bevy_ecs::prelude::*;
use rand::Rng;

use crate::engine::data::code::{Code, Expr, Stmt};
use crate::engine::data::resources::ChooseScratch;
use crate::engine::data::rng::Purpose;
use crate::engine::data::session::{Frame, FrameKind};
use crate::engine::eval::evaluate::{Cx, Fault, Moment, ScanKey, eval, eval_key, uniform_in};
use crate::engine::eval::sim::{Sim, made};
use crate::engine::interface::{MAX_CHOOSE_COUNT, RunError};
use crate::engine::systems::arrive::run_workload_block;
use crate::engine::systems::end_session::{LIVELOCK, end_closed_session};
use crate::engine::systems::hold::{Step, drop_cached, end_hold, grow, join_hold, load, release};
use crate::engine::systems::run_job::{Held, evaluate_run, run_job};
use crate::ir;

/// Where the session's loop stopped.
enum Stop {
    /// At a statement that needs the whole world: (block, index).
    Wide(usize, usize),
    /// At a `run`, its stages and work evaluated.
    Run((usize, usize), Held, f64),
    /// At the end of a hold's body (its frame already popped).
    HoldEnded,
    /// At the end of the session (its continuation emptied, no longer
    /// live): its serial.
    End(u64),
}

/// Runs session `e` until it blocks or ends.
pub fn step_session(code: &Code, sim: &mut Sim, e: Entity) -> Result<(), RunError> {
    loop {
        let at = match narrow(code, sim, e)? {
            Stop::End(serial) => return end_closed_session(code, sim, e, serial),
            Stop::HoldEnded => {
                end_hold(code, sim, e)?;
                continue;
            }
            Stop::Run(at, held, w) => {
                let w = sim.amount("the run's work", w, e, at)?;
                if run_job(code, sim, e, at, &held, w)? == Step::Stop {
                    sim.record_run(code, e, at, &held);
                    return Ok(());
                }
                continue;
            }
            Stop::Wide(b, i) => (b, i),
        };
        let step = match &code.blocks[at.0][at.1] {
            Stmt::Hold { .. } => join_hold(code, sim, e, at)?,
            Stmt::Grow(..) => grow(code, sim, e, at)?,
            Stmt::Load(..) => {
                load(code, sim, e, at)?;
                Step::Next
            }
            Stmt::Release(r) => {
                release(code, sim, e, at, r)?;
                Step::Next
            }
            Stmt::Drop(r) => {
                drop_cached(sim, e, at, r)?;
                Step::Next
            }
            Stmt::Turn => {
                turn(code, sim, e)?;
                Step::Next
            }
            // `narrow` runs every other statement itself.
            _ => Step::Next,
        };
        if step == Step::Stop {
            sim.record_wait(e);
            return Ok(());
        }
    }
}

/// `turn;`: the turn counter moves and the `turn` block runs. Not
/// inlined: the interpreter's loop stays small.
#[inline(never)]
fn turn(code: &Code, sim: &mut Sim, e: Entity) -> Result<(), RunError> {
    let now = sim.time.clock.now;
    let (_, _, life) = made!(sim.sessions.states.get(e), "session", now);
    let attrs = sim.sessions.attrs.of_mut(life.row);
    let turn = match attrs.get_mut(code.column(ir::SLOT_TURN)) {
        Some(t) => {
            *t += 1.0;
            t.max(0.0) as u64
        }
        None => 0,
    };
    if now >= code.program.warmup {
        sim.observed.turns += 1;
    }
    sim.observed
        .mark_turn(life.serial, turn, now, code.program.warmup);
    if sim.sessions.replay.trace.is_some() {
        let row = life.row;
        let attrs = sim.sessions.attrs.of_mut(row);
        // The next row's new, out, think and forced (slots 3-5 and 7),
        // with `more`; past the last row only `more` changes (to 0).
        match sim.sessions.replay.next_row(row) {
            Some((r, more)) => {
                for (slot, x) in [(3, r.new), (4, r.out), (5, r.think), (7, r.forced)] {
                    if let Some(a) = attrs.get_mut(code.column(slot)) {
                        *a = x;
                    }
                }
                if let Some(a) = attrs.get_mut(code.column(ir::SLOT_MORE)) {
                    *a = if more { 1.0 } else { 0.0 };
                }
            }
            None => {
                if let Some(a) = attrs.get_mut(code.column(ir::SLOT_MORE)) {
                    *a = 0.0;
                }
            }
        }
    }
    run_workload_block(code, sim, e, code.program.turn, turn)
}

/// Runs the session's statements that need only the session and what
/// expressions read, until one that needs more.
///
/// One piece, the interpreter's inner loop: one evaluation context for the
/// whole stretch of statements, and the current frame and its block kept
/// in hand between them; a statement in a function of its own would take
/// the context, the frames and the livelock count as arguments each time.
fn narrow(code: &Code, sim: &mut Sim, e: Entity) -> Result<Stop, RunError> {
    let now = sim.time.clock.now;
    let warmup = code.program.warmup;
    let turn_column = code.column(ir::SLOT_TURN);
    let Sim {
        time,
        sessions,
        stages,
        pools,
        flows,
        observed,
        store,
    } = &mut *sim;
    let (streams, attrs, load, levels) = (
        &mut *time.streams,
        &mut *sessions.attrs,
        &*stages.load,
        &*pools.levels,
    );
    let kv = &*pools.kv;
    let (mut cont, mut draws, mut life) = made!(sessions.states.get_mut(e), "session", now);
    // Nothing reads change ticks (engine/eval/sim.rs).
    let frames = &mut cont.bypass_change_detection().0;
    let rng = &mut draws.bypass_change_detection().0;
    let life = life.bypass_change_detection();
    let scratch = &mut *store.scratch;
    let stages = &*stages;
    let work = |s: usize| stages.work(&flows.system, s, now);
    // One evaluation context for every statement of this stretch.
    let mut cx = Cx {
        now,
        present: f64::NAN,
        moment: &Moment::NONE,
        serial: life.serial,
        kv,
        attrs: attrs.cells(life.row),
        rng,
        purpose: Purpose::Session(life.serial),
        first: &mut streams.first,
        load,
        levels,
        work: &work,
    };
    let fail = |at: (usize, usize), message: String| RunError {
        message,
        at: Some(at),
        session: Some(life.serial),
        time: now,
    };
    // The livelock counter counts at this instant (`now` is fixed here).
    if life.steps_at != now {
        life.steps_at = now;
        life.steps = 0;
    }
    loop {
        let Some(frame) = frames.last_mut() else {
            return Ok(Stop::End(life.serial));
        };
        let b = frame.block() as usize;
        let block = &code.blocks[b];
        // The statements of this frame's block, until one pushes or pops
        // a frame or stops the session: the frame and block stay in hand.
        let stmt = loop {
            let at = (b, frame.pc as usize);
            let stmt = block.get(frame.pc as usize);
            match stmt {
                Some(_) => frame.pc += 1,
                None => match frame.kind() {
                    FrameKind::Seq => break None,
                    FrameKind::Loop => frame.pc = 0,
                    FrameKind::Hold => {
                        frames.pop();
                        return Ok(Stop::HoldEnded);
                    }
                    FrameKind::Top => {
                        frames.clear();
                        return Ok(Stop::End(life.serial));
                    }
                },
            }
            life.steps += 1;
            if u64::from(life.steps) > LIVELOCK {
                let serial = life.serial;
                return Err(fail(
                    at,
                    format!(
                        "livelock: session {serial} ran more than {LIVELOCK} statements at time {now} without the clock moving"
                    ),
                ));
            }
            let Some(stmt) = stmt else { continue };
            match stmt {
                Stmt::Set(target, x) => {
                    let v = eval(x, &mut cx).map_err(|f| fail(at, f.to_string()))?;
                    if let Some(a) = cx.attrs.get(*target as usize) {
                        a.set(v);
                    }
                }
                Stmt::Observe(index, x) => {
                    let v = eval(x, &mut cx).map_err(|f| fail(at, f.to_string()))?;
                    if now >= warmup {
                        let turn = || cx.attrs.get(turn_column).map_or(0, |t| t.get() as u64);
                        observed.record(*index, v, now, || (cx.serial, turn()));
                    }
                }
                _ => break Some((at, stmt)),
            }
        };
        // The end of a branch arm's block: back to the frame below.
        let Some((at, stmt)) = stmt else {
            frames.pop();
            continue;
        };
        match stmt {
            Stmt::Branch(guard, then, other) => {
                let g = eval(guard, &mut cx).map_err(|f| fail(at, f.to_string()))?;
                let block = if g == 1.0 {
                    *then
                } else if g == 0.0 {
                    *other
                } else {
                    return Err(fail(at, format!("the guard is {g}, not 0 or 1")));
                };
                frames.push(Frame::start(block, FrameKind::Seq));
            }
            Stmt::Loop(body) => frames.push(Frame::start(*body, FrameKind::Loop)),
            Stmt::Choose { var, count, key } => {
                let n = eval(count, &mut cx).map_err(|f| fail(at, f.to_string()))?;
                let best = choose_loop(n, *var as usize, key, scratch, &mut cx)
                    .map_err(|m| fail(at, m))?;
                if let Some(a) = cx.attrs.get(*var as usize) {
                    a.set(best);
                }
            }
            Stmt::Run {
                stage, work, also, ..
            } => {
                let (held, w) =
                    evaluate_run(stage, also, work, &mut cx).map_err(|m| fail(at, m))?;
                return Ok(Stop::Run(at, held, w));
            }
            Stmt::End => {
                frames.clear();
                return Ok(Stop::End(life.serial));
            }
            _ => return Ok(Stop::Wide(at.0, at.1)),
        }
    }
}

/// `choose j in n by (k…)`: every candidate j in `0..n` in turn, its key
/// tuple evaluated with `j` set; the smallest tuple wins, ties to the
/// smaller j. Returns the winner (0 when n ≤ 0). Not inlined: the
/// interpreter's loop stays small.
#[inline(never)]
fn choose_loop(
    n: f64,
    var: usize,
    key: &[Expr],
    scratch: &mut ChooseScratch,
    cx: &mut Cx<'_>,
) -> Result<f64, String> {
    if !n.is_finite() {
        return Err(format!("the choose count is {n}, not a finite number"));
    }
    let n = n.trunc();
    if n > MAX_CHOOSE_COUNT {
        return Err(format!(
            "the choose count is {n}, above the limit of {MAX_CHOOSE_COUNT} candidates"
        ));
    }
    let Some(j) = cx.attrs.get(var) else {
        return Ok(0.0);
    };
    if n <= 0.0 {
        return Ok(0.0);
    }
    // Tuples of up to three keys live in registers: a scan of a thousand
    // members costs its key reads (array reads and draws) and a compare each.
    let (load, levels) = (cx.load, cx.levels);
    let scan = |k| ScanKey::of(k, var, n, load, levels);
    match key {
        [k] => match scan(k) {
            ScanKey::Uniform(a, b) => Ok(choose_by_uniform(n as usize, a, b, cx)),
            k => choose_by::<1>(n, j, [k], cx),
        },
        [a, b] => choose_by::<2>(n, j, [scan(a), scan(b)], cx),
        [a, b, c] => choose_by::<3>(n, j, [scan(a), scan(b), scan(c)], cx),
        _ => choose_by_tuple(n, j, key, scratch, cx),
    }
    .map_err(|f| f.to_string())
}

/// [`choose_loop`] for a key tuple of `K` keys; `var` is the candidate's
/// attribute.
#[inline]
fn choose_by<const K: usize>(
    n: f64,
    var: &Cell<f64>,
    key: [ScanKey<'_>; K],
    cx: &mut Cx<'_>,
) -> Result<f64, Fault> {
    let mut best = [0.0; K];
    let mut best_j = 0;
    // n ≤ MAX_CHOOSE_COUNT: a whole number of candidates, exact in both types.
    for j in 0..n as usize {
        var.set(j as f64);
        let mut keys = [0.0; K];
        for (x, k) in keys.iter_mut().zip(key) {
            *x = k.at(j, cx)?;
        }
        if j == 0 || strictly_less(&keys, &best) {
            best = keys;
            best_j = j;
        }
    }
    Ok(best_j as f64)
}

/// [`choose_loop`] for the one key `~uniform(a, b)` (random pairs, random
/// placement): the key reads no attribute, so the candidate is not set,
/// and once the stream's own generator is current the draws come straight
/// from it (a thousand candidates cost a thousand draws and compares, not
/// a thousand trips through the stream's checks). Ties go to the smaller
/// j, as in [`choose_by`]; a NaN key never wins.
fn choose_by_uniform(n: usize, a: f64, b: f64, cx: &mut Cx<'_>) -> f64 {
    let mut best = (uniform_in(a, b, cx.uniform()), 0);
    let mut j = 1;
    // The first draws of a per-session stream come from the shared blocks.
    while j < n && cx.rng.own_generator().is_none() {
        keep_least(&mut best, uniform_in(a, b, cx.uniform()), j);
        j += 1;
    }
    if let Some(rng) = cx.rng.own_generator() {
        for j in j..n {
            keep_least(&mut best, uniform_in(a, b, rng.random::<f64>()), j);
        }
    }
    best.1 as f64
}

/// `best` (key, candidate) becomes (`k`, `j`) if `k` is strictly less.
#[inline(always)]
fn keep_least(best: &mut (f64, usize), k: f64, j: usize) {
    if k < best.0 {
        *best = (k, j);
    }
}

/// [`choose_loop`] for a longer key tuple, in the scratch buffers.
fn choose_by_tuple(
    n: f64,
    var: &Cell<f64>,
    key: &[Expr],
    scratch: &mut ChooseScratch,
    cx: &mut Cx<'_>,
) -> Result<f64, Fault> {
    let ChooseScratch { keys, best } = scratch;
    best.clear();
    let mut best_j = 0.0;
    let mut j = 0.0;
    while j < n {
        var.set(j);
        keys.clear();
        for k in key {
            keys.push(eval_key(k, cx)?);
        }
        if j == 0.0 || strictly_less(keys, best) {
            std::mem::swap(keys, best);
            best_j = j;
        }
        j += 1.0;
    }
    Ok(best_j)
}

/// Lexicographic `a < b` with IEEE `<` and `==` (a NaN never compares less).
fn strictly_less(a: &[f64], b: &[f64]) -> bool {
    for (x, y) in a.iter().zip(b) {
        if x < y {
            return true;
        }
        if x != y {
            return false;
        }
    }
    false
}
