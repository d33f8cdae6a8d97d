//! `settle`: after every event, ready sessions run in FIFO order, then an
//! admission pass, until neither does anything; then the completions are
//! issued (spec §6.2).

use crate::engine::data::code::Code;
use crate::engine::eval::sim::Sim;
use crate::engine::interface::RunError;
use crate::engine::systems::admit::admission_pass;
use crate::engine::systems::issue_completions::issue_completions;
use crate::engine::systems::step_session::step_session;

/// Settles the instant.
pub fn settle(code: &Code, sim: &mut Sim) -> Result<(), RunError> {
    loop {
        while let Some(e) = sim.sessions.ready.0.pop_front() {
            step_session(code, sim, e)?;
        }
        if !admission_pass(code, sim)? && sim.sessions.ready.0.is_empty() {
            break;
        }
    }
    issue_completions(code, sim)
}
