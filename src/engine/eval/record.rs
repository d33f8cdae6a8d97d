//! The recorders' hooks (`serq run --timeline`, src/timeline/, and
//! `--series`, src/report/series.rs): what the systems call where a
//! session blocks or runs again, an iteration starts, a victim is taken,
//! a flow's rates or a pool's levels move, and the run loop between events.
//!
//! Invariant: with no recorder every hook is one test of
//! `Store::recording` and nothing else (each `#[inline]`, its body
//! `#[cold]` out of line), so a run without `--timeline` or `--series`
//! does the work it did before. A session runs again and blocks again at
//! one instant (the interpreter never moves the clock), so its blocking
//! (or its end) closes the span it was in: no hook where it resumes. An
//! iteration is recorded from the figures the iteration has at its start,
//! never by walking its residents.

use bevy_ecs::prelude::*;

use crate::engine::data::code::{Code, Stmt};
use crate::engine::data::session::Wait;
use crate::engine::eval::sim::Sim;
use crate::ir::RunMode;
use crate::timeline::{Doing, Iteration, RunKind, Timeline};

impl Sim<'_, '_> {
    /// Whether the run records a timeline or a series.
    #[inline(always)]
    pub fn recording(&self) -> bool {
        self.store.recording.0.is_some()
    }

    /// The timeline, if the run records one.
    fn timeline(&mut self) -> Option<&mut Timeline> {
        self.store.recording.0.as_mut()?.timeline.as_deref_mut()
    }

    /// Session `e` blocked in the `run` at `at` at the stage members `held`.
    #[inline(always)]
    pub fn record_run(&mut self, code: &Code, e: Entity, at: (usize, usize), held: &[u32]) {
        if self.recording() {
            self.run_cold(code, e, at, held);
        }
    }

    #[cold]
    #[inline(never)]
    fn run_cold(&mut self, code: &Code, e: Entity, at: (usize, usize), held: &[u32]) {
        let now = self.time.clock.now;
        let Some(&stage) = held.first() else { return };
        let kind = match code.blocks[at.0].get(at.1) {
            Some(Stmt::Run {
                mode: RunMode::Prefill,
                ..
            }) => RunKind::Prefill,
            Some(Stmt::Run {
                mode: RunMode::Decode,
                ..
            }) => RunKind::Decode,
            _ => RunKind::Plain,
        };
        let doing = Doing::Run {
            stage,
            also: held.len() as u32 - 1,
            kind,
        };
        let live = self.live_serial(e);
        if let (Some(serial), Some(t)) = (live, self.timeline()) {
            t.block(serial, now, doing, held);
        }
    }

    /// Session `e` blocked at a `hold` or a `grow` (a rejected hold ended it).
    #[inline(always)]
    pub fn record_wait(&mut self, e: Entity) {
        if self.recording() {
            self.wait_cold(e);
        }
    }

    #[cold]
    #[inline(never)]
    fn wait_cold(&mut self, e: Entity) {
        let now = self.time.clock.now;
        let Ok(dealings) = self.sessions.dealings.get(e) else {
            return;
        };
        let Some(d) = dealings.0.as_deref() else {
            return;
        };
        let pool_of = |hold: usize, entry: usize| {
            d.holds
                .get(hold)
                .and_then(|f| f.pools.get(entry))
                .map(|h| h.pool)
        };
        let doing = match &d.wait {
            Wait::Hold { pools, .. } => pools.first().map(|&pool| Doing::Wait { pool }),
            Wait::Grow { hold, entry, .. } | Wait::Growth { hold, entry, .. } => {
                pool_of(*hold, *entry).map(|pool| Doing::Grow { pool })
            }
            Wait::None => None,
        };
        let live = self.live_serial(e);
        if let (Some(doing), Some(serial), Some(t)) = (doing, live, self.timeline()) {
            t.block(serial, now, doing, &[]);
        }
    }

    /// Session `e`'s serial, while it is live.
    fn live_serial(&self, e: Entity) -> Option<u64> {
        let (cont, _, life) = self.sessions.states.get(e).ok()?;
        cont.live().then_some(life.serial)
    }

    /// Session `serial` ended.
    #[inline(always)]
    pub fn record_end(&mut self, serial: u64) {
        if self.recording() {
            let now = self.time.clock.now;
            if let Some(t) = self.timeline() {
                end_cold(t, serial, now);
            }
        }
    }

    /// Session `v` is a preemption's victim for pool member `pool`.
    #[inline(always)]
    pub fn record_preempt(&mut self, v: Entity, pool: u32) {
        if self.recording() {
            self.preempt_cold(v, pool);
        }
    }

    #[cold]
    #[inline(never)]
    fn preempt_cold(&mut self, v: Entity, pool: u32) {
        let now = self.time.clock.now;
        let serial = self.sessions.states.get(v).map(|(_, _, life)| life.serial);
        if let (Ok(serial), Some(t)) = (serial, self.timeline()) {
            t.preempted(serial, pool, now);
        }
    }

    /// Step stage member `stage` starts an iteration of these figures.
    #[inline(always)]
    pub fn record_iteration(&mut self, stage: usize, it: Iteration) {
        if self.recording()
            && let Some(t) = self.timeline()
        {
            iteration_cold(t, stage as u32, it);
        }
    }

    /// The flow solver moved the rates: each changed stage's rate in use.
    #[inline(always)]
    pub fn record_rates(&mut self) {
        if self.recording() {
            self.rates_cold();
        }
    }

    #[cold]
    #[inline(never)]
    fn rates_cold(&mut self) {
        let now = self.time.clock.now;
        let system = &self.flows.system;
        let timeline = self.store.recording.0.as_mut();
        if let Some(t) = timeline.and_then(|r| r.timeline.as_deref_mut()) {
            for &s in system.changed_stages() {
                t.rate(s, now, system.load(s));
            }
        }
    }

    /// An event is settled: the pools' levels now, and a series' counts
    /// when the next event starts a window (nothing can change them
    /// before it), one hook per event.
    #[inline(always)]
    pub fn record_settled(&mut self) {
        if self.recording() {
            self.levels_cold();
            let next = self.time.events.next_time().unwrap_or(f64::INFINITY);
            self.marks_cold(next, false);
        }
    }

    #[cold]
    #[inline(never)]
    fn levels_cold(&mut self) {
        let now = self.time.clock.now;
        let (levels, kv) = (&*self.pools.levels, &*self.pools.kv);
        let Some(recorders) = self.store.recording.0.as_deref_mut() else {
            return;
        };
        let cached = |p: usize| kv.cache[p].total();
        if let Some(t) = recorders.timeline.as_deref_mut() {
            t.levels(now, &levels.used, &levels.holders, &levels.queued, cached);
        }
        if let Some(series) = recorders.series.as_deref_mut() {
            series.levels(now, &levels.used, &levels.queued, cached);
            let (load, system) = (&*self.stages.load, &self.flows.system);
            for s in 0..load.present.len() {
                // As the report's: Σ rates / φ on a shared stage, else
                // 1 while a job is present.
                let u = if series.is_shared(s) {
                    system.utilisation(s as u32)
                } else if load.present[s] > 0.0 {
                    1.0
                } else {
                    0.0
                };
                series.utilisation(now, s, u);
            }
        }
    }

    /// The run ended at `end`: a series takes its last counts.
    pub fn record_finish(&mut self, end: f64) {
        if self.recording() {
            self.marks_cold(end, true);
        }
    }

    #[cold]
    #[inline(never)]
    fn marks_cold(&mut self, at: f64, last: bool) {
        let due = self
            .store
            .recording
            .0
            .as_deref()
            .and_then(|r| r.series.as_deref())
            .is_some_and(|s| last || s.next_mark() <= at);
        if !due {
            return;
        }
        // Arrivals, completions, each stage's completions, each
        // observation's samples (docs/timeline.md, series).
        let mut counts = vec![
            self.sessions.census.next_serial,
            self.sessions.census.ended_total,
        ];
        for &e in self.stages.entities {
            counts.push(self.stages.members.get(e).map_or(0, |(_, st)| st.completed));
        }
        counts.extend(self.observed.samples.iter().map(|v| v.len() as u64));
        if let Some(series) = self
            .store
            .recording
            .0
            .as_deref_mut()
            .and_then(|r| r.series.as_deref_mut())
        {
            if last {
                series.finish(at, &counts);
            } else {
                series.mark(at, &counts);
            }
        }
    }
}

#[cold]
#[inline(never)]
fn end_cold(t: &mut Timeline, serial: u64, now: f64) {
    t.resume(serial, now);
}

#[cold]
#[inline(never)]
fn iteration_cold(t: &mut Timeline, stage: u32, it: Iteration) {
    t.iteration(stage, it);
}
