//! The min-heap of the walk's marks ([`Mark`]s: a level, a kind, a stage),
//! four children a node.
//!
//! A solve pushes and pops a few dozen marks; with four children a node the
//! heap is half as deep as a binary one, and the least of a node's children
//! is found by compares whose results select: a level of a pop branches
//! only on whether to stop there. Slots past the last mark hold
//! [`Mark::MAX`], so every node with a child has four, and the choice
//! among them needs no bound check. The pop is inlined where the walk
//! calls it (docs/performance-log.md measured what a call per pop cost).
//!
//! Not the engine's [`MinHeap`](crate::engine::data::min_heap::MinHeap): its
//! binary layout and `(f64, u64)` keys compared by `total_cmp` ran
//! randidx_200_maxmin at 1 402 M instructions and 16.7 M mispredicts with
//! the marks in it, against 1 156 M and 11.9 M here (a mark compares as
//! one `u128`).
//!
//! Architecture invariant: the heap's pops are the marks in ascending
//! order; marks that compare equal are equal, so the order of a solve's
//! pops is the keys' alone, whatever the layout (the walk's results do not
//! depend on how the heap is built).

use super::Mark;

/// Children of a node.
const ARITY: usize = 4;

/// The marks, least first (see the module's comment).
#[derive(Clone, Debug, Default)]
pub(super) struct MarkHeap {
    /// `slots[..len]` is the heap; `slots[len..len + ARITY]` hold
    /// [`Mark::MAX`] once the first mark is pushed.
    slots: Vec<Mark>,
    len: usize,
}

impl MarkHeap {
    /// Removes every mark (keeping the buffer).
    pub(super) fn clear(&mut self) {
        self.slots[..self.len].fill(Mark::MAX);
        self.len = 0;
    }

    /// The least mark.
    #[inline]
    pub(super) fn peek(&self) -> Option<Mark> {
        (self.len > 0).then(|| self.slots[0])
    }

    /// Adds `mark`.
    #[inline]
    pub(super) fn push(&mut self, mark: Mark) {
        debug_assert!(mark < Mark::MAX, "a mark orders below the sentinel");
        if self.slots.len() < self.len + 1 + ARITY {
            self.grow();
        }
        let mut i = self.len;
        self.len += 1;
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if self.slots[parent] <= mark {
                break;
            }
            self.slots[i] = self.slots[parent];
            i = parent;
        }
        self.slots[i] = mark;
    }

    /// Keeps `ARITY` sentinels past the end once one more slot is taken.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        self.slots.resize(self.len + 1 + ARITY, Mark::MAX);
    }

    /// Removes and returns the least mark.
    #[inline(always)]
    pub(super) fn pop(&mut self) -> Option<Mark> {
        if self.len == 0 {
            return None;
        }
        let top = self.slots[0];
        self.len -= 1;
        let last = std::mem::replace(&mut self.slots[self.len], Mark::MAX);
        if self.len > 0 {
            self.sift_down(last);
        }
        Some(top)
    }

    /// Puts `mark` in the hole at the root and moves the hole down, each
    /// step lifting the least child, until `mark` is no greater than it.
    #[inline(always)]
    fn sift_down(&mut self, mark: Mark) {
        let n = self.len;
        assert!(
            self.slots.len() >= n + 1 + ARITY,
            "sentinels past the end cover a last node's children"
        );
        let s = self.slots.as_mut_ptr();
        // SAFETY: every index read or written is below `n + ARITY` (a node
        // `i < n` with a child `c = ARITY·i + 1 < n` has children up to
        // `c + ARITY − 1 < n + ARITY`), inside `slots` (asserted above).
        let at = |k: usize| unsafe { *s.add(k) };
        let mut i = 0;
        loop {
            let c = ARITY * i + 1;
            if c >= n {
                break;
            }
            // Four children exist (sentinels past `n`): the least by two
            // rounds of compare-and-select.
            let a = c + usize::from(at(c + 1) < at(c));
            let b = c + 2 + usize::from(at(c + 3) < at(c + 2));
            let m = if at(b) < at(a) { b } else { a };
            let least = at(m);
            if mark <= least {
                break;
            }
            // SAFETY: `i < n`, as above.
            unsafe { *s.add(i) = least };
            i = m;
        }
        // SAFETY: `i < n`, as above.
        unsafe { *s.add(i) = mark };
    }
}

#[cfg(test)]
mod tests {
    use super::{Mark, MarkHeap};
    use crate::engine::flows::MarkKind;
    use proptest::prelude::*;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    proptest! {
        /// Any sequence of pushes, pops and clears pops what a binary heap
        /// pops, in the same order (ties included: small levels and stages
        /// make equal marks common).
        #[test]
        fn pops_what_a_binary_heap_pops(ops in prop::collection::vec((0u8..5, 0u32..6, 0u8..4, 0u32..4), 0..300)) {
            let mut heap = MarkHeap::default();
            let mut reference = BinaryHeap::new();
            for (op, level, kind, stage) in ops {
                match op {
                    0 | 1 => {
                        let kind = [MarkKind::Seed, MarkKind::Fill, MarkKind::Replay, MarkKind::Release][kind as usize];
                        let mark = Mark::new(f64::from(level) * 0.25, kind, stage);
                        heap.push(mark);
                        reference.push(Reverse(mark));
                    }
                    2 | 3 => {
                        prop_assert_eq!(heap.pop(), reference.pop().map(|Reverse(m)| m));
                    }
                    _ => {
                        heap.clear();
                        reference.clear();
                    }
                }
                prop_assert_eq!(heap.peek(), reference.peek().map(|&Reverse(m)| m));
            }
            while let Some(Reverse(m)) = reference.pop() {
                prop_assert_eq!(heap.pop(), Some(m));
            }
            prop_assert_eq!(heap.pop(), None);
        }
    }

    /// An infinite level orders below the sentinel (a replay at an old level
    /// of ∞ is never pushed, but a fill candidate can be ∞).
    #[test]
    fn infinite_level_is_below_the_sentinel() {
        let mut heap = MarkHeap::default();
        heap.push(Mark::new(f64::INFINITY, MarkKind::Release, u32::MAX));
        heap.push(Mark::new(1.0, MarkKind::Seed, 7));
        assert_eq!(heap.pop().map(Mark::level), Some(1.0));
        assert_eq!(heap.pop().map(Mark::level), Some(f64::INFINITY));
        assert_eq!(heap.pop(), None);
    }
}
