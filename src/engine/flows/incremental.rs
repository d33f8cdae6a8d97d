//! The incremental `maxmin` update. For now it re-solves the touched
//! components by progressive filling, as `MaxMinSolver::Components` does.
use super::FlowSystem;

impl FlowSystem {
    pub(super) fn solve_incremental(&mut self) {
        let touched = self.load_pending.len();
        self.solve_components(touched);
    }
}
