//! The resources of one concern each that are not a stage's, a pool's, a
//! session's or a flow's: the clock, the ready queue, the census of
//! sessions, what sessions observed, the ps stages to issue anew, the
//! entity of every stage and pool member, and `choose`'s scratch.
//!
//! Architecture invariant: plain data; nothing here evaluates or schedules.

use std::collections::VecDeque;

use bevy_ecs::prelude::*;

use crate::engine::data::pool::Waiting;
use crate::engine::data::stats::TimeAvg;
use crate::report::{NegativeAmounts, Provenance, TurnMarks, Welford, WindowedAverage};

/// What a run records beside its report: its timeline (`serq run
/// --timeline`) and its series (`--series`), when it records either.
#[derive(Default)]
pub struct Recorders {
    /// The timeline.
    pub timeline: Option<Box<crate::timeline::Timeline>>,
    /// The series.
    pub series: Option<Box<crate::report::Series>>,
}

/// The run's recorders, when it has one: one `Option` that every hook
/// tests first, so a run without one pays a branch per hook.
#[derive(Resource, Default)]
pub struct Recording(pub Option<Box<Recorders>>);

/// The clock.
#[derive(Resource, Clone, Copy, Debug, Default)]
pub struct Clock {
    /// Simulated time now.
    pub now: f64,
}

/// Sessions ready to run, in the order they became ready.
#[derive(Resource, Clone, Debug, Default)]
pub struct Ready(pub VecDeque<Entity>);

/// How many sessions were created, are live and ended.
#[derive(Resource, Clone, Debug)]
pub struct Census {
    /// The next session's serial (= sessions created, the report's `arrivals`).
    pub next_serial: u64,
    /// Open arrivals so far (the `arrivals` drain counts them).
    pub open_arrivals: u64,
    /// Sessions live now.
    pub live: u64,
    /// Their time average.
    pub live_avg: TimeAvg,
    /// Their average over equal windows of [warmup, horizon], for the
    /// report's stability test.
    pub live_series: WindowedAverage,
    /// Sessions that ended at t >= warmup.
    pub ended: u64,
    /// Sessions that ended, at any time.
    pub ended_total: u64,
    /// `closed` replacements at one instant: (instant, count).
    pub replacements: (f64, u64),
    /// Hold admissions so far (the next admission's number, spec §8.1).
    pub admissions: u64,
}

impl Census {
    /// No sessions yet.
    pub fn new(warmup: f64, horizon: f64) -> Census {
        Census {
            next_serial: 0,
            open_arrivals: 0,
            live: 0,
            live_avg: TimeAvg::new(warmup),
            live_series: WindowedAverage::new(warmup, horizon),
            ended: 0,
            ended_total: 0,
            replacements: (0.0, 0),
            admissions: 0,
        }
    }

    /// The live count changed at `now`: both its averages follow.
    #[inline]
    pub fn live_changed(&mut self, now: f64) {
        self.live_avg.set(now, self.live as f64);
        self.live_series.set(now, self.live as f64);
    }
}

/// What sessions observed and counted at or after warm-up.
#[derive(Resource, Clone, Debug)]
pub struct Observed {
    /// Samples by observation index.
    pub samples: Vec<Vec<f64>>,
    /// Their running moments, by observation index.
    pub moments: Vec<Welford>,
    /// Each sample's time, session and turn, by observation index, when the
    /// run keeps them ([`crate::engine::RunOptions::provenance`]); `None` for `serq
    /// run`, so nothing grows beside the samples.
    pub provenance: Option<Vec<Provenance>>,
    /// `turn` statements.
    pub turns: u64,
    /// The next lease's id (unique over the run).
    pub next_lease: u64,
    /// Each turn's start and each session's end at or after warm-up, when
    /// the run keeps them ([`crate::engine::RunOptions::turn_marks`], for SLO
    /// attainment); `None` otherwise, so a plain run pays one branch at a
    /// session's creation, `turn;` and end.
    pub marks: Option<TurnMarks>,
    /// Computed amounts that went negative and were taken as 0 (spec §10 Q13).
    pub negative_amounts: Option<NegativeAmounts>,
    /// `--strict`: a computed negative amount is a run-time error instead.
    pub strict: bool,
}

impl Observed {
    /// Notes that session `serial` began turn `turn` (0 at its creation)
    /// at `now`, when the run keeps turn marks and `now` is measured.
    #[inline]
    pub fn mark_turn(&mut self, serial: u64, turn: u64, now: f64, warmup: f64) {
        if let Some(marks) = self.marks.as_mut().filter(|_| now >= warmup) {
            marks.starts.push((serial, turn, now));
        }
    }

    /// Notes that session `serial` ended at `now`, as [`Observed::mark_turn`].
    #[inline]
    pub fn mark_end(&mut self, serial: u64, now: f64, warmup: f64) {
        if let Some(marks) = self.marks.as_mut().filter(|_| now >= warmup) {
            marks.ends.push((serial, now));
        }
    }

    /// Records sample `v` of observation `index`, taken at `now`; when the
    /// run keeps provenance, `whence` is called for the session and turn.
    #[inline]
    pub fn record(&mut self, index: u32, v: f64, now: f64, whence: impl FnOnce() -> (u64, u64)) {
        let index = index as usize;
        if let (Some(samples), Some(moments)) =
            (self.samples.get_mut(index), self.moments.get_mut(index))
        {
            samples.push(v);
            moments.push(v);
        }
        if self.provenance.is_some() {
            self.record_origin(index, now, whence());
        }
    }

    /// The provenance of a sample, when the run keeps it. Out of line:
    /// `serq run` keeps none, and every `observe` records.
    #[cold]
    #[inline(never)]
    fn record_origin(&mut self, index: usize, now: f64, (session, turn): (u64, u64)) {
        if let Some(origin) = self.provenance.as_mut().and_then(|p| p.get_mut(index)) {
            origin.push(now, session, turn);
        }
    }
}

/// What the walk at a settle's end visits: ps stages whose job set
/// changed since the last issue, each once, and step stages that may
/// start an iteration.
#[derive(Resource, Clone, Debug)]
pub struct DirtyPs {
    /// The stages, in the order they changed.
    pub list: Vec<u32>,
    /// Whether each stage is in `list`.
    pub marked: Vec<bool>,
    /// The generation of each ps stage's live finish event: a finish of
    /// another is stale and is dropped before its stage is fetched.
    pub live: Vec<u64>,
    /// Step stages to try (residents joined, an iteration ended, a hold
    /// joined a queue they admit for).
    pub engines: Waiting,
}

impl DirtyPs {
    /// Notes that ps stage `stage`'s job set changed.
    #[inline]
    pub fn mark(&mut self, stage: u32) {
        if !self.marked[stage as usize] {
            self.marked[stage as usize] = true;
            self.list.push(stage);
        }
    }
}

/// The entity of every stage and pool member, by IR index.
#[derive(Resource, Clone, Debug, Default)]
pub struct Members {
    /// Stage members.
    pub stages: Vec<Entity>,
    /// Pool members.
    pub pools: Vec<Entity>,
}

/// Scratch for `choose`: the candidate's keys and the best so far.
#[derive(Resource, Clone, Debug, Default)]
pub struct ChooseScratch {
    /// The candidate's key tuple.
    pub keys: Vec<f64>,
    /// The best key tuple so far.
    pub best: Vec<f64>,
}
