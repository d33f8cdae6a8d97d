//! The timeline's hooks (`serq run --timeline`, src/timeline/): what the
//! systems call where a session blocks or runs again, an iteration starts,
//! a victim is taken, a flow's rates or a pool's levels move.
//!
//! Invariant: with no timeline every hook is one test of
//! `Store::recording` and nothing else (each `#[inline]`, its body
//! `#[cold]` out of line), so a run without `--timeline` does the work it
//! did before. An iteration is recorded from the figures the iteration has
//! at its start, never by walking its residents.

use bevy_ecs::prelude::*;

use crate::engine::data::session::Wait;
use crate::engine::eval::sim::Sim;
use crate::timeline::{Doing, Iteration};

impl Sim<'_, '_> {
    /// Whether the run records a timeline.
    #[inline(always)]
    pub fn recording(&self) -> bool {
        self.store.recording.0.is_some()
    }

    /// Session `e` runs again (the interpreter takes it up).
    #[inline(always)]
    pub fn record_resume(&mut self, e: Entity) {
        if self.recording() {
            self.resume_cold(e);
        }
    }

    #[cold]
    #[inline(never)]
    fn resume_cold(&mut self, e: Entity) {
        let now = self.time.clock.now;
        if let (Ok((_, _, life)), Some(t)) = (
            self.sessions.states.get(e),
            self.store.recording.0.as_mut(),
        ) {
            t.resume(life.serial, now);
        }
    }

    /// Session `e` blocked in a `run` at the stage members `held`.
    #[inline(always)]
    pub fn record_run(&mut self, e: Entity, held: &[u32]) {
        if self.recording() {
            self.run_cold(e, held);
        }
    }

    #[cold]
    #[inline(never)]
    fn run_cold(&mut self, e: Entity, held: &[u32]) {
        let now = self.time.clock.now;
        let Some(&stage) = held.first() else { return };
        let doing = Doing::Run {
            stage,
            also: held.len() as u32 - 1,
        };
        if let (Ok((cont, _, life)), Some(t)) = (
            self.sessions.states.get(e),
            self.store.recording.0.as_mut(),
        ) && cont.live()
        {
            t.block(life.serial, now, doing, held);
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
        if let (Some(doing), Ok((cont, _, life)), Some(t)) = (
            doing,
            self.sessions.states.get(e),
            self.store.recording.0.as_mut(),
        ) && cont.live()
        {
            t.block(life.serial, now, doing, &[]);
        }
    }

    /// Session `serial` ended.
    #[inline(always)]
    pub fn record_end(&mut self, serial: u64) {
        if let Some(t) = self.store.recording.0.as_mut() {
            end_cold(t, serial, self.time.clock.now);
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
        if let (Ok((_, _, life)), Some(t)) = (
            self.sessions.states.get(v),
            self.store.recording.0.as_mut(),
        ) {
            t.preempted(life.serial, pool, now);
        }
    }

    /// Step stage member `stage` starts an iteration of these figures.
    #[inline(always)]
    pub fn record_iteration(&mut self, stage: usize, it: Iteration) {
        if let Some(t) = self.store.recording.0.as_mut() {
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
        if let Some(t) = self.store.recording.0.as_mut() {
            for &s in system.changed_stages() {
                t.rate(s, now, system.load(s));
            }
        }
    }

    /// An event is settled: the pools' levels now.
    #[inline(always)]
    pub fn record_levels(&mut self) {
        if self.recording() {
            self.levels_cold();
        }
    }

    #[cold]
    #[inline(never)]
    fn levels_cold(&mut self) {
        let now = self.time.clock.now;
        let (levels, kv) = (&*self.pools.levels, &*self.pools.kv);
        if let Some(t) = self.store.recording.0.as_mut() {
            t.levels(now, &levels.used, &levels.holders, &levels.queued, |p| {
                kv.cache[p].total()
            });
        }
    }
}

#[cold]
#[inline(never)]
fn end_cold(t: &mut crate::timeline::Timeline, serial: u64, now: f64) {
    t.resume(serial, now);
}

#[cold]
#[inline(never)]
fn iteration_cold(t: &mut crate::timeline::Timeline, stage: u32, it: Iteration) {
    t.iteration(stage, it);
}
