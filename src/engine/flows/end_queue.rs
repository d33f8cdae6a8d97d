//! The end-time queue: every live flow's end, as of its rate, in order.

use super::heap::IndexedHeap;

/// Flow ends: slot → (end, start order), each as of the flow's `k_mark`
/// (the top one as of the last solve), or below the end for a slot marked
/// `early`.
#[derive(Clone, Debug, Default)]
pub(super) struct EndQueue {
    /// The ends by slot.
    pub(super) heap: IndexedHeap,
    /// `early[slot]`: in a system past [`super::EVERY_FLOW_LIMIT`], the
    /// slot's end moved later (its rate dropped) and its heap key stayed, a
    /// bound below the end, re-keyed only if it reaches the top
    /// ([`super::FlowSystem::exact_early_top`]): about half the rates a
    /// solve changes drop, and the bound spares their heap moves.
    pub(super) early: Vec<bool>,
    /// How many slots are `early`.
    pub(super) earlies: usize,
    /// Slots of [`super::FlowSystem::exact_top`]'s near-top keys, reused.
    pub(super) near: Vec<u32>,
}
