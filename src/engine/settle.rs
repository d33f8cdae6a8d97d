//! `settle`: after every event, ready sessions run in FIFO order, then an
//! admission pass, until neither does anything; then the completions are
//! issued (spec §6.2).

use super::admit::admission_pass;
use super::code::Code;
use super::interface::RunError;
use super::issue_completions::issue_completions;
use super::sim::Sim;
use super::step_session::step_session;

/// Settles the instant.
pub fn settle(code: &Code, sim: &mut Sim) -> Result<(), RunError> {
    loop {
        while let Some(e) = sim.ready.0.pop_front() {
            step_session(code, sim, e)?;
        }
        if !admission_pass(code, sim)? && sim.ready.0.is_empty() {
            break;
        }
    }
    issue_completions(code, sim)
}
