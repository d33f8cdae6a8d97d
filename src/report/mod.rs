//! The report of a run: what the engine measured, as a text table for a
//! person and as JSON with the reference report's field names.
//!
//! Architecture invariant: the report knows nothing of the engine; the engine
//! fills a [`Report`] with raw figures (samples, time averages, counts) and
//! the statistics of samples (mean, CI, cv², percentiles) are computed here.

mod family;
mod json;
mod lookup;
mod series;
mod slo;
mod stability;
mod stats;
mod table;
mod warnings;

pub(crate) use family::runs;
pub use family::{Fold, PoolFamily, Spread, StageFamily};
pub(crate) use json::{GrowingJson, WarningJson, stability_json, warnings_json};
pub use lookup::ObservationView;
pub use series::{Series, WindowedAverage};
pub use slo::{Attainment, Bound, Request, Slo, SloError, with_field_json, with_slo_json};
pub use stability::{
    Growing, Place, Stability, TREND_LAG, TREND_LEVEL, TREND_T, Trend, Trends, Verdict, judge,
};
pub use stats::{Summary, Welford};
pub use warnings::{
    NegativeAmounts, Statement, Warning, WarningKind, negative_amount_warning, stability_warning,
};

/// The version of the JSON report's fields ([`Report::to_json`],
/// docs/report.md): the reference's `REPORT_VERSION` 1, whose field names
/// and order it keeps. A field renamed or removed raises it.
pub const REPORT_VERSION: u32 = 1;

/// Everything a run measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    /// The program's file name (for the text header; empty when unknown).
    pub source_name: String,
    /// The configured horizon.
    pub horizon: f64,
    /// The end of the measured interval: the horizon, or the drain instant under `arrivals`.
    pub end: f64,
    /// The start of the measured interval.
    pub warmup: f64,
    /// The seed.
    pub seed: u64,
    /// Events taken from the queue with time <= horizon (stale ones included).
    pub events: u64,
    /// Sessions created over the whole run.
    pub arrivals: u64,
    /// Sessions that ended at t >= warmup.
    pub ended: u64,
    /// `turn` statements executed at t >= warmup.
    pub turns: u64,
    /// Time average of live sessions over [warmup, end].
    pub mean_live: f64,
    /// Time average of live sessions over each of the
    /// [`WindowedAverage::WINDOWS`] equal windows of [warmup, horizon] that
    /// end by `end` (all of them unless an `arrivals` limit ended the run
    /// early), in time order: the series the stability test reads.
    pub live_series: Vec<f64>,
    /// The jobs present at each stage member (declaration order) over the
    /// same windows as [`Report::live_series`]: what the stability test's
    /// `growing` reads.
    pub stage_series: Vec<Vec<f64>>,
    /// The holds waiting in each pool member's queue (declaration order)
    /// over the same windows.
    pub pool_series: Vec<Vec<f64>>,
    /// One per observation name, in program order.
    pub observes: Vec<Observation>,
    /// One per stage member, in declaration order.
    pub stages: Vec<StageRow>,
    /// One per pool member, in declaration order.
    pub pools: Vec<PoolRow>,
    /// Computed amounts that went negative and were taken as 0 (spec §10
    /// Q13); `None` when there was none. [`Report::warnings`] words it.
    pub negative_amounts: Option<NegativeAmounts>,
    /// Where each turn began and each session ended, when the run was
    /// asked to keep them ([`crate::RunOptions::turn_marks`]; `None`
    /// otherwise, as for `serq run` without `--slo`).
    pub turn_marks: Option<TurnMarks>,
}

/// The starts of turns and the ends of sessions at t >= warmup, in the
/// order they happened: with the observations' [`Provenance`], what SLO
/// attainment ([`Slo`]) counts requests from.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TurnMarks {
    /// `(session serial, turn_no, time)` of each turn's start: the
    /// session's creation for turn 0, each `turn;` for the turn it begins.
    pub starts: Vec<(u64, u64, f64)>,
    /// `(session serial, time)` of each session's end.
    pub ends: Vec<(u64, f64)>,
}

/// An observation's samples, taken at t >= warmup, in recording order.
#[derive(Clone, Debug, PartialEq)]
pub struct Observation {
    /// The observation's name.
    pub name: String,
    /// The samples in recording order.
    pub samples: Vec<f64>,
    /// Their running moments, as the engine kept them while recording
    /// ([`Welford::of`] the samples gives the same bits).
    pub moments: Welford,
    /// When, by whom and in which turn each sample was taken, when the run
    /// was asked to keep it ([`crate::RunOptions::provenance`]; `None`
    /// otherwise, as for `serq run`).
    pub provenance: Option<Provenance>,
}

impl Observation {
    /// The statistics of its samples.
    pub fn summary(&self) -> Summary {
        Summary::with_moments(&self.samples, self.moments)
    }
}

/// Where an observation's samples came from, one entry per sample in the
/// samples' order (the Python package's `Observe.times`, `.sessions`,
/// `.turns`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Provenance {
    /// The clock when each sample was taken.
    pub times: Vec<f64>,
    /// The serial of the session that took each.
    pub sessions: Vec<u64>,
    /// That session's `turn_no` then (0 before its first `turn`; the `init`
    /// block's samples are turn 0, a `turn` block's the turn it runs for).
    pub turns: Vec<u64>,
}

impl Provenance {
    /// Notes one more sample's origin.
    pub fn push(&mut self, time: f64, session: u64, turn: u64) {
        self.times.push(time);
        self.sessions.push(session);
        self.turns.push(turn);
    }
}

/// A stage member's figures over [warmup, end].
#[derive(Clone, Debug, PartialEq)]
pub struct StageRow {
    /// The family's name.
    pub name: String,
    /// The member's index when the family has more than one member.
    pub member: Option<usize>,
    /// Time-average jobs present.
    pub mean_number: f64,
    /// Fraction of time not empty; on a shared stage the time average of Σ r_f / φ
    /// (`None` when undefined, e.g. a shared stage of infinite capacity).
    pub utilization: Option<f64>,
    /// Jobs finishing at t >= warmup.
    pub completed: u64,
    /// completed / (end - warmup).
    pub throughput: f64,
    /// Mean wait (service start - arrival) over completed jobs; `None` if none.
    pub mean_wait: Option<f64>,
    /// Mean service (finish - service start) over completed jobs; `None` if none.
    pub mean_service: Option<f64>,
    /// Step-stage iterations (Tier 2; 0 otherwise).
    pub iterations: u64,
}

/// A pool member's figures.
#[derive(Clone, Debug, PartialEq)]
pub struct PoolRow {
    /// The family's name.
    pub name: String,
    /// The member's index when the family has more than one member.
    pub member: Option<usize>,
    /// Time-average allocated units (leases included).
    pub mean_used: f64,
    /// Time-average cached units (Tier 2; 0).
    pub mean_cached: f64,
    /// Time-average holds waiting in this pool's queue.
    pub mean_queue: f64,
    /// Time-average allocations (holds and leases).
    pub mean_holders: f64,
    /// Mean queue wait of admissions at t >= warmup whose first pool is this one.
    pub mean_wait: Option<f64>,
    /// Admissions over the whole run, counted at every pool of a hold.
    pub admissions: u64,
    /// Tier 2 (0).
    pub evicted_entries: u64,
    /// Tier 2 (0).
    pub evicted_units: f64,
    /// Tier 2 (0).
    pub preemptions: u64,
    /// Tier 2 (0).
    pub spills: u64,
    /// Requests above the capacity, over the whole run.
    pub rejected: u64,
    /// Tier 2 (0).
    pub stuck: u64,
}
