//! What changed since the last solve: the flows started, the stages whose
//! load or flow set changed, and (`maxmin` incremental) where a finish
//! lowered a level.

use super::FlowId;

/// The changes the next solve starts from.
#[derive(Clone, Debug)]
pub(super) struct Pending {
    /// Flows started since the last solve.
    pub(super) started: Vec<FlowId>,
    /// `maxmin` incremental: (stage, level) from which a finish changed it.
    pub(super) seeds: Vec<(u32, f64)>,
    /// Stages whose load may have changed; the first `touched` of them are
    /// the stages whose flow set changed since the last solve.
    pub(super) load: Vec<u32>,
    /// `is_load[s]`: stage `s` is in `load`.
    pub(super) is_load: Vec<bool>,
    /// Stages whose flow set changed, for the solve.
    pub(super) changed: Vec<u32>,
}

impl Pending {
    /// Nothing pending, over `stages` stages.
    pub(super) fn new(stages: usize) -> Pending {
        Pending {
            started: Vec::new(),
            seeds: Vec::new(),
            load: Vec::new(),
            is_load: vec![false; stages],
            changed: Vec::new(),
        }
    }
}
