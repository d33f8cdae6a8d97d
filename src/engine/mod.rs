//! The simulation: runs a linked `ir::Program` and fills a `report::Report`.
//!
//! Architecture invariant: the engine reads only the IR, never the AST;
//! one seed gives one report, digit for digit. The per-event path is plain
//! functions over the [`world::World`]; nothing in it allocates in steady
//! state or iterates a hash map.

mod eval;
mod events;
pub mod flows;
mod pools;
mod rng;
mod session;
mod stages;
mod stats;
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

/// Runs a validated program to its horizon (or its `arrivals` drain).
pub fn run(program: &Program) -> Result<Report, RunError> {
    world::World::new(program).run()
}
