//! `arrive`: a session is created (its serial, its `init` block, a place in
//! the ready queue), and the open workload's next arrival is scheduled.
//!
//! Invariant: a session takes a vacant entity (the run loop keeps one
//! vacant before every event, and an event creates at most one session
//! beyond those its sessions' ends free); its components and attribute row
//! are reset (its dealings at its last session's end), so nothing of the
//! entity's last session remains.

use bevy_ecs::prelude::*;

use crate::engine::data::code::{Code, Stmt};
use crate::engine::data::events::EventKind;
use crate::engine::data::rng::Purpose;
use crate::engine::data::session::{Frame, FrameKind};
use crate::engine::eval::evaluate::{Moment, exponential_of};
use crate::engine::eval::sim::{Outside, OutsideAttrs, RunStream, Sim, lost, made};
use crate::engine::interface::{MAX_LIVE_SESSIONS, RunError};
use crate::ir::{self, Arrival};

/// The open workload's arrival event: a session arrives and the next
/// arrival is scheduled (unless the `arrivals` count is reached).
pub fn arrive(code: &Code, sim: &mut Sim) -> Result<(), RunError> {
    sim.sessions.census.open_arrivals += 1;
    let prog = &code.program;
    if let Arrival::Trace(_) = prog.arrival {
        // The row arriving now gives the session its sizes; the next is read.
        sim.sessions
            .traffic
            .take()
            .map_err(|e| sim.error(e.to_string()))?;
    }
    create_session(code, sim)?;
    if prog
        .arrivals
        .is_none_or(|limit| sim.sessions.census.open_arrivals < limit)
    {
        let next = match prog.arrival {
            Arrival::Poisson(rate) => {
                let streams = &mut *sim.time.streams;
                let u = streams.arrival.uniform(&mut streams.first);
                sim.time.clock.now + exponential_of(1.0 / rate, u)
            }
            // An exhausted trace, or no candidate accepted by the horizon:
            // no more arrivals.
            Arrival::Trace(_) => sim.sessions.traffic.next_time().unwrap_or(f64::INFINITY),
            Arrival::Thinned(_) => thinned_arrival(code, sim)?,
            _ => renewal_gap(code, sim)?,
        };
        if next.is_finite() {
            sim.time.events.schedule(next, EventKind::Arrival);
        }
    }
    Ok(())
}

/// The time of the next arrival of `poisson(rate) peak (r)` after now, by
/// thinning: candidates come at rate r (exponential gaps from the arrival
/// stream) and each is accepted with probability rate(t) / r (a second
/// uniform from the same stream), rate(t) read with `now` = t. Infinite
/// when no candidate up to the horizon is accepted. A rate above its peak,
/// negative or NaN at a candidate is a run-time error at that time.
pub fn thinned_arrival(code: &Code, sim: &mut Sim) -> Result<f64, RunError> {
    let Some((rate, peak)) = &code.thinned else {
        return Ok(f64::INFINITY);
    };
    let (start, peak) = (sim.time.clock.now, *peak);
    let mut t = start;
    loop {
        let streams = &mut *sim.time.streams;
        let u = streams.arrival.uniform(&mut streams.first);
        t += exponential_of(1.0 / peak, u);
        if t > code.program.horizon {
            return Ok(f64::INFINITY);
        }
        // The rate reads `now`: the clock stands at the candidate while it is read.
        sim.time.clock.now = t;
        let r = sim.evaluate_outside(rate, Outside::no_session(RunStream::Arrival, &Moment::NONE));
        // An error is made with the clock at the candidate: it names that time.
        let r = r.map_err(|m| sim.error(format!("arrive poisson(…) peak ({peak}): rate: {m}")))?;
        if !(0.0..=peak).contains(&r) {
            let why = if r > peak {
                "above its declared peak; declare a peak at least as high as the rate ever is"
            } else {
                "not a number ≥ 0"
            };
            return Err(sim.error(format!(
                "arrive poisson(…) peak ({peak}): the rate at t = {t} is {r}, {why}"
            )));
        }
        sim.time.clock.now = start;
        let streams = &mut *sim.time.streams;
        let v = streams.arrival.uniform(&mut streams.first);
        if v * peak < r {
            return Ok(t);
        }
    }
}

/// The time of the next renewal arrival (now + a fresh gap).
pub fn renewal_gap(code: &Code, sim: &mut Sim) -> Result<f64, RunError> {
    let Some(gap) = &code.renewal else {
        return Ok(f64::INFINITY);
    };
    let now = sim.time.clock.now;
    let g = sim.evaluate_outside(gap, Outside::no_session(RunStream::Arrival, &Moment::NONE));
    let g = g.map_err(|m| sim.error(format!("renewal gap: {m}")))?;
    if !(g > 0.0 && g.is_finite()) {
        return Err(sim.error(format!(
            "renewal interarrival must be positive and finite (got {g})"
        )));
    }
    Ok(now + g)
}

/// Creates a session now: its serial, `init` block, and a place in the ready queue.
pub fn create_session(code: &Code, sim: &mut Sim) -> Result<(), RunError> {
    if sim.sessions.census.live >= MAX_LIVE_SESSIONS {
        return Err(sim.error(format!(
            "more than {MAX_LIVE_SESSIONS} live sessions at once (the limit); \
             sessions arrive faster than they end (is an arrival rate too high?)"
        )));
    }
    let now = sim.time.clock.now;
    let Some(e) = sim.sessions.vacant.pop() else {
        return Err(lost("vacant session", now));
    };
    let prog = &code.program;
    let serial = sim.sessions.census.next_serial;
    sim.sessions.census.next_serial += 1;
    let (mut cont, mut draws, mut life) = made!(sim.sessions.states.get_mut(e), "session", now);
    // (Its dealings were emptied at its last session's end.)
    cont.0.clear();
    cont.0
        .push(Frame::start(prog.session as u32, FrameKind::Top));
    draws.0.reset();
    life.serial = serial;
    life.steps = 0;
    life.steps_at = f64::NAN;
    let row = life.row;
    let attrs = sim.sessions.attrs.of_mut(row);
    zero(attrs);
    if let Some(a) = attrs.get_mut(code.column(ir::SLOT_SERIAL)) {
        *a = serial as f64;
    }
    if let Some((new, out)) = sim.sessions.traffic.sizes() {
        let attrs = sim.sessions.attrs.of_mut(row);
        if let Some(a) = attrs.get_mut(code.column(ir::SLOT_NEW)) {
            *a = new;
        }
        if let Some(a) = attrs.get_mut(code.column(ir::SLOT_OUT)) {
            *a = out;
        }
    }
    sim.sessions.census.live += 1;
    sim.sessions.census.live_changed(now);
    sim.observed.mark_turn(serial, 0, now, prog.warmup);
    if let Some(n) = sim.sessions.replay.trace.as_ref().map(|t| t.len() as u64) {
        let corpus = if sim.sessions.replay.ordered {
            serial % n
        } else {
            let streams = &mut *sim.time.streams;
            let u = streams.trace.uniform(&mut streams.first);
            ((u * n as f64) as u64).min(n - 1)
        };
        sim.sessions.replay.start(row, corpus as u32);
    }
    if !code.blocks[prog.init].is_empty() {
        run_workload_block(code, sim, e, prog.init, 0)?;
    }
    sim.sessions.ready.0.push_back(e);
    Ok(())
}

/// Sets a new session's attributes to 0. A row is a few words (the slots
/// the program reads): short rows are stored directly, not by a call of
/// `memset`, which costs more than the stores.
#[inline]
fn zero(attrs: &mut [f64]) {
    match attrs {
        [] => {}
        [a] => *a = 0.0,
        [a, b] => (*a, *b) = (0.0, 0.0),
        [a, b, c] => (*a, *b, *c) = (0.0, 0.0, 0.0),
        [a, b, c, d] => (*a, *b, *c, *d) = (0.0, 0.0, 0.0, 0.0),
        _ => attrs.fill(0.0),
    }
}

/// Runs the `init` (turn 0) or `turn` block of session `e` with the
/// world's one turn stream, re-targeted (it keeps its boxed generator, so
/// a block that draws often allocates nothing); these blocks only `set`
/// and `observe`.
pub fn run_workload_block(
    code: &Code,
    sim: &mut Sim,
    e: Entity,
    block: usize,
    turn: u64,
) -> Result<(), RunError> {
    let stmts = &code.blocks[block];
    if stmts.is_empty() {
        return Ok(());
    }
    let now = sim.time.clock.now;
    let (_, _, life) = made!(sim.sessions.states.get(e), "session", now);
    let (serial, row) = (life.serial, life.row);
    sim.time.streams.turn.reset(Purpose::Turn { serial, turn });
    for (i, stmt) in stmts.iter().enumerate() {
        let (target, x, is_set) = match stmt {
            Stmt::Set(t, x) => (*t, x, true),
            Stmt::Observe(t, x) => (*t, x, false),
            _ => {
                return Err(sim.session_error(
                    e,
                    (block, i),
                    "workload blocks may only `set` and `observe`".into(),
                ));
            }
        };
        let v = sim.evaluate_outside(
            x,
            Outside {
                present: f64::NAN,
                moment: &Moment::NONE,
                // The session's own: `cachedin` reads its cached units.
                serial,
                attrs: OutsideAttrs::Row(row),
                stream: RunStream::Turn,
            },
        );
        let v = v.map_err(|m| sim.session_error(e, (block, i), m.to_string()))?;
        if is_set {
            if let Some(a) = sim.sessions.attrs.of_mut(row).get_mut(target as usize) {
                *a = v;
            }
        } else {
            observe(code, sim, target, v, (serial, turn));
        }
    }
    Ok(())
}

/// Records an observation (at or after warm-up) taken by session and
/// turn `whence`.
pub fn observe(code: &Code, sim: &mut Sim, index: u32, v: f64, whence: (u64, u64)) {
    let now = sim.time.clock.now;
    if now >= code.program.warmup {
        sim.observed.record(index, v, now, || whence);
    }
}
