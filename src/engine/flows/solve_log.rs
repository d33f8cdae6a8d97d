//! The solve log: the times of the solves some flow has not yet applied,
//! so that a flow's remaining work is advanced only when it is read.

/// The times of the solves numbered `first ..`: the last one's, and those
/// some flow has not yet applied.
#[derive(Clone, Debug, Default)]
pub(super) struct SolveLog {
    /// The solves' times, from solve `first` on.
    pub(super) times: Vec<f64>,
    /// `gaps[k] = times[k] − times[k − 1]` (0 for the first): the step of a
    /// flow advanced to the solve before.
    pub(super) gaps: Vec<f64>,
    /// The number of the solve at `times[0]`.
    pub(super) first: u64,
    /// Every live flow has applied the solves numbered below this one (set
    /// when the times are trimmed; a flow starts with them applied).
    pub(super) all_advanced_to: u64,
    /// Solves so far.
    pub(super) solves: u32,
}
