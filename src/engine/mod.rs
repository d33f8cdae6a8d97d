//! The simulation: runs a linked `ir::Program` and fills a `report::Report`.
//!
//! The store is a bevy_ecs `World`: every session, stage member, pool
//! member and flow is an entity with components of one concern each; the
//! clock, the event heap, the streams, the ready queue, the census, the
//! flow solver and the compiled program are resources. The per-event path
//! is systems named for domain events, called as plain functions over one
//! fetched [`sim::Sim`] (docs/architecture.md has the table).
//!
//! Architecture invariant: the engine reads only the IR, never the AST;
//! one seed gives one report, digit for digit. Nothing on the per-event
//! path allocates in steady state or iterates a hash map.

// Layers, bottom up (a file imports only files of its layer or below,
// and tests/engine_layers.rs refuses an import cycle):
// data: events, rng, stats, session, stage, pool, flow, resources, code, flows/
mod code;
mod events;
mod flow;
pub mod flows;
mod interface;
mod kv;
mod min_heap;
mod pool;
mod replay;
mod residents;
mod resources;
pub mod rng;
pub mod serving;
mod session;
mod stage;
mod stats;
mod traffic;
// evaluation and the systems' shared view of the world
mod eval;
mod sim;
// systems, named for domain events
mod admit;
mod arrive;
mod budget;
mod caching;
mod end_flow;
mod end_job;
mod end_lease;
mod end_session;
mod hold;
mod issue_completions;
mod iterate;
mod preempt;
mod run_job;
mod settle;
mod step_session;
// the run loop and its batch systems
mod invariants;
mod report;
mod run;

use crate::ir::ValidProgram;
use crate::report::Report;

pub use interface::{
    MAX_CHOOSE_COUNT, MAX_LIVE_SESSIONS, PROGRESS_EVERY, RunError, RunOptions, SessionCounts,
};

/// Runs a validated program to its horizon (or its `arrivals` drain).
pub fn run(program: &ValidProgram) -> Result<Report, RunError> {
    run_with(program, &mut RunOptions::default())
}

/// Runs a validated program as [`run`] does, watched and bounded by `options`
/// (taken `&mut` because the progress callback is an `FnMut`).
pub fn run_with(program: &ValidProgram, options: &mut RunOptions<'_>) -> Result<Report, RunError> {
    run_counted(program, options).map(|(report, _)| report)
}

/// As [`run_with`], and also how many sessions were created, ended and are
/// still live at the end, for checks that the report alone cannot make.
pub fn run_counted(
    program: &ValidProgram,
    options: &mut RunOptions<'_>,
) -> Result<(Report, SessionCounts), RunError> {
    run::run(program, options)
}
