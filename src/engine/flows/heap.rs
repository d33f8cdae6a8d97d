//! An indexed binary min-heap: items are dense `u32` ids, each present at most
//! once, with a key that can be raised or lowered in place (the flows' ends).
//!
//! Architecture invariant: keys are ordered by `(f64, u64)`, lexicographically;
//! no key is NaN, so the order is total and deterministic (and agrees with
//! `f64::total_cmp` but for −0 = +0, which no time or level is).

const ABSENT: u32 = u32::MAX;

/// A key: a time or a level, then a tie-breaker (start order, stage index).
pub(super) type Key = (f64, u64);

fn less(a: Key, b: Key) -> bool {
    a.0 < b.0 || (a.0 == b.0 && a.1 < b.1)
}

/// The heap. `pos[item]` is the item's place in `heap`, or `ABSENT`; each
/// place holds its item's key, so a sift compares without an indirection.
#[derive(Clone, Debug, Default)]
pub(super) struct IndexedHeap {
    heap: Vec<(Key, u32)>,
    pos: Vec<u32>,
}

impl IndexedHeap {
    /// Makes room for items `0..n`.
    pub(super) fn grow(&mut self, n: usize) {
        if self.pos.len() < n {
            self.pos.resize(n, ABSENT);
        }
    }

    /// Inserts `item`, or moves it to its new `key`.
    pub(super) fn set(&mut self, item: u32, key: Key) {
        debug_assert!(!key.0.is_nan(), "a heap key is not NaN");
        self.grow(item as usize + 1);
        let i = item as usize;
        if self.pos[i] == ABSENT {
            let p = self.heap.len();
            self.heap.push((key, item));
            self.up(p);
        } else {
            let p = self.pos[i] as usize;
            let old = self.heap[p].0;
            self.heap[p].0 = key;
            if less(key, old) {
                self.up(p);
            } else {
                self.down(p);
            }
        }
    }

    /// Removes `item` if present.
    pub(super) fn remove(&mut self, item: u32) {
        let Some(&p) = self.pos.get(item as usize) else {
            return;
        };
        if p == ABSENT {
            return;
        }
        let p = p as usize;
        self.pos[item as usize] = ABSENT;
        let last = self.heap.pop().expect("a present item is in the heap");
        if p < self.heap.len() {
            // The last entry belongs near the bottom: the hole goes down to
            // a leaf by the lesser child (one compare a level), and the
            // entry rises from there.
            let leaf = self.hole_to_leaf(p);
            self.heap[leaf] = last;
            self.up(leaf);
        }
    }

    /// Moves the entry at `p` out and the hole down to a leaf, each step
    /// lifting the lesser child into it; returns the leaf.
    fn hole_to_leaf(&mut self, mut p: usize) -> usize {
        let n = self.heap.len();
        loop {
            let l = 2 * p + 1;
            if l >= n {
                return p;
            }
            let r = l + 1;
            let c = if r < n && less(self.heap[r].0, self.heap[l].0) {
                r
            } else {
                l
            };
            self.heap[p] = self.heap[c];
            self.pos[self.heap[p].1 as usize] = p as u32;
            p = c;
        }
    }

    /// Gives every item the key `key(item)`, then restores the heap order
    /// in one pass (Floyd's): for a solve that moves every flow's end.
    pub(super) fn rekey_all(&mut self, mut key: impl FnMut(u32) -> Key) {
        for place in &mut self.heap {
            place.0 = key(place.1);
            debug_assert!(!place.0.0.is_nan(), "a heap key is not NaN");
        }
        for p in (0..self.heap.len() / 2).rev() {
            self.down(p);
        }
    }

    /// Appends to `out` every item whose key's time is at most `bound`
    /// (a walk down from the root that stops at a larger key).
    pub(super) fn keys_up_to(&self, bound: f64, out: &mut Vec<u32>) {
        let start = out.len();
        if self.heap.first().is_some_and(|&(key, _)| key.0 <= bound) {
            out.push(0);
        }
        // `out[start..]` holds places first, turned into items as they are visited.
        let mut k = start;
        while k < out.len() {
            let p = out[k] as usize;
            out[k] = self.heap[p].1;
            for c in [2 * p + 1, 2 * p + 2] {
                if c < self.heap.len() && self.heap[c].0.0 <= bound {
                    out.push(c as u32);
                }
            }
            k += 1;
        }
    }

    /// `item`'s key, if present.
    pub(super) fn key(&self, item: u32) -> Option<Key> {
        let p = *self.pos.get(item as usize)?;
        (p != ABSENT).then(|| self.heap[p as usize].0)
    }

    /// The least item and its key.
    pub(super) fn peek(&self) -> Option<(u32, Key)> {
        self.heap.first().map(|&(key, it)| (it, key))
    }

    /// Removes and returns the least item and its key.
    #[cfg(test)]
    pub(super) fn pop(&mut self) -> Option<(u32, Key)> {
        let top = self.peek()?;
        self.remove(top.0);
        Some(top)
    }

    /// Moves the entry at `p` up to its place (a hole moves, not swaps).
    fn up(&mut self, mut p: usize) {
        let entry = self.heap[p];
        while p > 0 {
            let parent = (p - 1) / 2;
            if !less(entry.0, self.heap[parent].0) {
                break;
            }
            self.heap[p] = self.heap[parent];
            self.pos[self.heap[p].1 as usize] = p as u32;
            p = parent;
        }
        self.heap[p] = entry;
        self.pos[entry.1 as usize] = p as u32;
    }

    /// Moves the entry at `p` down to its place.
    fn down(&mut self, mut p: usize) {
        let n = self.heap.len();
        let entry = self.heap[p];
        loop {
            let l = 2 * p + 1;
            if l >= n {
                break;
            }
            let r = l + 1;
            let c = if r < n && less(self.heap[r].0, self.heap[l].0) {
                r
            } else {
                l
            };
            if !less(self.heap[c].0, entry.0) {
                break;
            }
            self.heap[p] = self.heap[c];
            self.pos[self.heap[p].1 as usize] = p as u32;
            p = c;
        }
        self.heap[p] = entry;
        self.pos[entry.1 as usize] = p as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heap_pops_in_key_order_after_updates_and_removals() {
        let mut h = IndexedHeap::default();
        for i in 0..20u32 {
            h.set(i, (f64::from((i * 7) % 20), u64::from(i)));
        }
        h.set(3, (-1.0, 3));
        h.set(5, (100.0, 5));
        h.remove(0);
        h.remove(0);
        let mut last = (f64::NEG_INFINITY, 0);
        let mut n = 0;
        while let Some((_, k)) = h.pop() {
            assert!(!less(k, last));
            last = k;
            n += 1;
        }
        assert_eq!(n, 19);
        assert_eq!(last.0, 100.0);
    }
}
