//! `MinHeap`: the binary min-heap of the event queue, the delay stages'
//! jobs and the ps stages' jobs.
//!
//! Its own rather than `std`'s `BinaryHeap`, whose `pop` writes the last
//! item over the root in 8-byte stores and reads it back at once in 16-byte
//! loads: a store that cannot be forwarded, which perf put at an eighth of
//! an M/M/1 run's event loop. Here nothing is read back from a slot just
//! written: `pop` reads the root first, moves the hole to a leaf by the
//! lesser child and sifts the last item up from registers; `push` stores
//! the item where the inlined caller has it, in registers, and compares its
//! key (two scalars, out of line) on its way up.
//!
//! Invariant: every item's key is at or above its parent's. Every user's
//! keys are unique (a sequence number breaks ties), so the order of pops is
//! that of any heap: the sorted order.

use std::cmp::Ordering;

/// An item of a [`MinHeap`]: ordered by its key, a time (by `total_cmp`)
/// and then a sequence number.
pub trait Keyed: Copy {
    /// The item's key.
    fn key(&self) -> (f64, u64);
}

/// Whether key `a` is less than key `b`.
#[inline(always)]
fn less(a: (f64, u64), b: (f64, u64)) -> bool {
    match a.0.total_cmp(&b.0) {
        Ordering::Less => true,
        Ordering::Greater => false,
        Ordering::Equal => a.1 < b.1,
    }
}

/// A binary min-heap of small `Copy` items.
#[derive(Clone, Debug)]
pub struct MinHeap<T> {
    items: Vec<T>,
}

impl<T> Default for MinHeap<T> {
    fn default() -> Self {
        MinHeap { items: Vec::new() }
    }
}

impl<T: Keyed> MinHeap<T> {
    /// An empty heap with room for `n` items.
    pub fn with_capacity(n: usize) -> Self {
        MinHeap {
            items: Vec::with_capacity(n),
        }
    }

    /// The number of items.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// The least item.
    pub fn peek(&self) -> Option<&T> {
        self.items.first()
    }

    /// The least item, to change in a way that keeps its order against
    /// every other (a flag outside its key).
    pub fn peek_mut_in_order(&mut self) -> Option<&mut T> {
        self.items.first_mut()
    }

    /// The items in no particular order.
    pub fn iter(&self) -> std::slice::Iter<'_, T> {
        self.items.iter()
    }

    /// Adds `item`.
    #[inline(always)]
    pub fn push(&mut self, item: T) {
        self.items.push(item);
        let last = self.items.len() - 1;
        let at = self.make_room(last, item.key());
        if at != last {
            self.items[at] = item;
        }
    }

    /// Opens the slot at `at` or above where an item of `key` belongs,
    /// moving the greater items on its way up down, and returns it. Only
    /// the key comes in: the item was just stored, and reading it back
    /// whole could not be forwarded from its stores.
    #[inline(never)]
    fn make_room(&mut self, mut at: usize, key: (f64, u64)) -> usize {
        let h = &mut self.items;
        while at > 0 {
            let parent = (at - 1) / 2;
            if !less(key, h[parent].key()) {
                break;
            }
            h[at] = h[parent];
            at = parent;
        }
        at
    }

    /// Takes the least item.
    #[inline]
    pub fn pop(&mut self) -> Option<T> {
        let last = self.items.pop()?;
        let Some(&top) = self.items.first() else {
            return Some(last);
        };
        let h = &mut self.items;
        let n = h.len();
        // The hole left by the root goes down by the lesser child to a
        // leaf; the last item fills it and rises to its place.
        let mut hole = 0;
        let mut child = 1;
        while child < n {
            if child + 1 < n && less(h[child + 1].key(), h[child].key()) {
                child += 1;
            }
            h[hole] = h[child];
            hole = child;
            child = 2 * hole + 1;
        }
        self.sift_up(hole, last);
        Some(top)
    }

    /// Puts `item` in the hole at `at` or above, where it belongs: the loop
    /// of [`MinHeap::make_room`], kept inline here (`pop` calling
    /// `make_room`, or both inlining one helper, ran mm1_fifo 5–7 % slower).
    #[inline]
    fn sift_up(&mut self, mut at: usize, item: T) {
        let h = &mut self.items;
        let key = item.key();
        while at > 0 {
            let parent = (at - 1) / 2;
            if !less(key, h[parent].key()) {
                break;
            }
            h[at] = h[parent];
            at = parent;
        }
        h[at] = item;
    }

    /// Hands the items to `change` (in no particular order; it may change,
    /// add or remove any) and restores the heap order: for the rare
    /// cancellation, not for the per-event path.
    pub fn rebuild(&mut self, change: impl FnOnce(&mut Vec<T>)) {
        change(&mut self.items);
        let n = self.items.len();
        for start in (0..n / 2).rev() {
            self.sift_down(start);
        }
    }

    /// Moves the item at `at` down to its place.
    fn sift_down(&mut self, mut at: usize) {
        let h = &mut self.items;
        let n = h.len();
        let item = h[at];
        let key = item.key();
        loop {
            let mut child = 2 * at + 1;
            if child >= n {
                break;
            }
            if child + 1 < n && less(h[child + 1].key(), h[child].key()) {
                child += 1;
            }
            if !less(h[child].key(), key) {
                break;
            }
            h[at] = h[child];
            at = child;
        }
        h[at] = item;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A test item: (value, insertion number).
    #[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
    struct Item(f64, u64);

    impl Keyed for Item {
        fn key(&self) -> (f64, u64) {
            (self.0, self.1)
        }
    }

    /// A small linear congruential stream, for reproducible test input.
    fn stream(seed: u64) -> impl FnMut() -> u64 {
        let mut x = seed;
        move || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            x >> 33
        }
    }

    #[test]
    fn pops_come_in_sorted_order_through_interleaved_pushes_and_pops() {
        // Keys (value, insertion number), so ties are broken as the users'
        // sequence numbers break them; the expected pop is always the least
        // of what is pending.
        let mut next = stream(7);
        let mut heap = MinHeap::default();
        let mut pending: Vec<Item> = Vec::new();
        let least = |p: &[Item]| {
            *p.iter()
                .min_by(|a, b| a.partial_cmp(b).expect("no NaN"))
                .expect("pending")
        };
        for i in 0..3000 {
            let item = Item((next() % 13) as f64 * 0.5, i);
            heap.push(item);
            pending.push(item);
            if !next().is_multiple_of(4) {
                let least = least(&pending);
                assert_eq!(heap.pop(), Some(least));
                pending.retain(|&p| p != least);
            }
            assert_eq!(heap.len(), pending.len());
        }
        pending.sort_by(|a, b| a.partial_cmp(b).expect("no NaN"));
        let rest: Vec<_> = std::iter::from_fn(|| heap.pop()).collect();
        assert_eq!(rest, pending);
    }

    #[test]
    fn a_rebuild_after_removals_and_changes_keeps_the_sorted_order() {
        let mut next = stream(11);
        let mut heap = MinHeap::default();
        for i in 0..500 {
            heap.push(Item((next() % 50) as f64, i));
        }
        // Drop the odd insertion numbers and lower every value by one.
        heap.rebuild(|items| {
            items.retain(|item| item.1.is_multiple_of(2));
            for item in items.iter_mut() {
                item.0 -= 1.0;
            }
        });
        let mut expected: Vec<_> = heap.iter().copied().collect();
        expected.sort_by(|a, b| a.partial_cmp(b).expect("no NaN"));
        assert_eq!(expected.len(), 250);
        let got: Vec<_> = std::iter::from_fn(|| heap.pop()).collect();
        assert_eq!(got, expected);
    }
}
