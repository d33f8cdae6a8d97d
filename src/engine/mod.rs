//! The simulation: runs a linked `ir::Program` and fills a `report::Report`.
//!
//! Architecture invariant: the engine reads only the IR, never the AST;
//! one seed gives one report, digit for digit. The per-event path is plain
//! functions over the [`world::World`]; nothing in it allocates in steady
//! state or iterates a hash map.

mod eval;
mod events;
pub mod flows;
mod invariants;
mod pools;
mod rng;
pub mod serving;
mod session;
mod stages;
mod stats;
mod unsupported;
mod world;

use crate::ir::Program;
use crate::report::Report;

/// A run-time error: the run stops and says where and who.
#[derive(Clone, Debug, PartialEq)]
pub struct RunError {
    /// What went wrong (key words per spec §7/§10: `index`, `negative`, `livelock`, …).
    pub message: String,
    /// The statement at fault as (block, index in block), when there is one.
    pub at: Option<(usize, usize)>,
    /// The session's `serial`, when a session was running.
    pub session: Option<u64>,
    /// The clock when it happened.
    pub time: f64,
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "run-time error at time {}", self.time)?;
        if let Some(s) = self.session {
            write!(f, ", session {s}")?;
        }
        if let Some((b, i)) = self.at {
            write!(f, ", block {b}, statement {i}")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for RunError {}

/// The progress callback is called once every this many events.
pub const PROGRESS_EVERY: u64 = 100_000;

/// More live sessions than this at once is a run-time error: a flood such as
/// `poisson(1e300)` would otherwise fill the memory. It equals the most
/// sessions `batch(n)` may create at time 0 ([`crate::ir::MAX_SESSIONS_AT_ZERO`]).
pub const MAX_LIVE_SESSIONS: u64 = crate::ir::MAX_SESSIONS_AT_ZERO;

/// A computed `choose` count above this is a run-time error (a constant one
/// is refused by the validator): every candidate is evaluated in turn.
pub const MAX_CHOOSE_COUNT: f64 = crate::ir::MAX_CHOOSE_COUNT as f64;

/// How a run is watched and bounded, beyond what the program says.
///
/// ```
/// use serq::engine::{RunOptions, run_with};
/// let source = "stage s : delay;
///               workload { arrive poisson(1); }
///               session { run s (1); }
///               run { horizon 100; }";
/// let program = serq::compile_source(source, &serq::Overrides::default()).unwrap();
/// let mut options = RunOptions { check_invariants: true, ..RunOptions::default() };
/// assert!(run_with(&program, &mut options).is_ok());
/// let mut capped = RunOptions { max_events: Some(10), ..RunOptions::default() };
/// let error = run_with(&program, &mut capped).unwrap_err();
/// assert!(error.message.contains("10 events"));
/// ```
#[derive(Default)]
pub struct RunOptions<'a> {
    /// Called with the clock about once every [`PROGRESS_EVERY`] events
    /// (never per event); a caller that draws a progress bar reads the wall
    /// clock here, not in the loop.
    pub progress: Option<&'a mut dyn FnMut(f64)>,
    /// Stop with a [`RunError`] (naming the cap and `events`) instead of
    /// taking more than this many events.
    pub max_events: Option<u64>,
    /// After every event, check the engine's invariants (pool allocations
    /// within capacity, flow rates within every shared stage's capacity,
    /// live sessions = created − ended); a violation is a [`RunError`]
    /// whose message contains `invariant`. Costs time in proportion to the
    /// pools, stages and flows at every event.
    pub check_invariants: bool,
}

impl std::fmt::Debug for RunOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunOptions")
            .field("progress", &self.progress.is_some())
            .field("max_events", &self.max_events)
            .field("check_invariants", &self.check_invariants)
            .finish()
    }
}

/// How many sessions a run created and ended, over the whole run
/// (warm-up included, unlike the report's `ended`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionCounts {
    /// Sessions created (the report's `arrivals`).
    pub created: u64,
    /// Sessions that ended, at any time.
    pub ended: u64,
    /// Sessions live at the end, counted one by one (not from the two above).
    pub live: u64,
}

/// Runs a validated program to its horizon (or its `arrivals` drain).
pub fn run(program: &Program) -> Result<Report, RunError> {
    run_with(program, &mut RunOptions::default())
}

/// Runs a validated program as [`run`] does, watched and bounded by `options`
/// (taken `&mut` because the progress callback is an `FnMut`).
pub fn run_with(program: &Program, options: &mut RunOptions<'_>) -> Result<Report, RunError> {
    run_counted(program, options).map(|(report, _)| report)
}

/// As [`run_with`], and also how many sessions were created, ended and are
/// still live at the end, for checks that the report alone cannot make.
pub fn run_counted(
    program: &Program,
    options: &mut RunOptions<'_>,
) -> Result<(Report, SessionCounts), RunError> {
    if let Some(message) = unsupported::unsupported(program) {
        return Err(RunError {
            message,
            at: None,
            session: None,
            time: 0.0,
        });
    }
    world::World::new(program).run(options)
}
