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

/// The heap. `pos[item]` is the item's place in `heap`, or `ABSENT`.
#[derive(Clone, Debug, Default)]
pub(super) struct IndexedHeap {
    heap: Vec<u32>,
    keys: Vec<Key>,
    pos: Vec<u32>,
}

impl IndexedHeap {
    /// Makes room for items `0..n`.
    pub(super) fn grow(&mut self, n: usize) {
        if self.pos.len() < n {
            self.pos.resize(n, ABSENT);
            self.keys.resize(n, (0.0, 0));
        }
    }

    /// Inserts `item`, or moves it to its new `key`.
    pub(super) fn set(&mut self, item: u32, key: Key) {
        debug_assert!(!key.0.is_nan(), "a heap key is not NaN");
        self.grow(item as usize + 1);
        let i = item as usize;
        if self.pos[i] == ABSENT {
            self.keys[i] = key;
            self.pos[i] = self.heap.len() as u32;
            self.heap.push(item);
            self.up(self.heap.len() - 1);
        } else {
            let old = self.keys[i];
            self.keys[i] = key;
            let p = self.pos[i] as usize;
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
        let last = self.heap.len() - 1;
        self.swap(p, last);
        self.heap.pop();
        self.pos[item as usize] = ABSENT;
        if p < self.heap.len() {
            self.down(p);
            self.up(p);
        }
    }

    /// The least item and its key.
    pub(super) fn peek(&self) -> Option<(u32, Key)> {
        self.heap.first().map(|&it| (it, self.keys[it as usize]))
    }

    /// Removes and returns the least item and its key.
    #[cfg(test)]
    pub(super) fn pop(&mut self) -> Option<(u32, Key)> {
        let top = self.peek()?;
        self.remove(top.0);
        Some(top)
    }

    fn swap(&mut self, a: usize, b: usize) {
        self.heap.swap(a, b);
        self.pos[self.heap[a] as usize] = a as u32;
        self.pos[self.heap[b] as usize] = b as u32;
    }

    fn key_at(&self, p: usize) -> Key {
        self.keys[self.heap[p] as usize]
    }

    fn up(&mut self, mut p: usize) {
        while p > 0 {
            let parent = (p - 1) / 2;
            if less(self.key_at(p), self.key_at(parent)) {
                self.swap(p, parent);
                p = parent;
            } else {
                break;
            }
        }
    }

    fn down(&mut self, mut p: usize) {
        let n = self.heap.len();
        loop {
            let l = 2 * p + 1;
            if l >= n {
                break;
            }
            let r = l + 1;
            let c = if r < n && less(self.key_at(r), self.key_at(l)) {
                r
            } else {
                l
            };
            if less(self.key_at(c), self.key_at(p)) {
                self.swap(p, c);
                p = c;
            } else {
                break;
            }
        }
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
