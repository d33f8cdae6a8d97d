//! The incidence of flows on stages: each stage's flows (slots) in one
//! arena, a stage's list a chunk of it with slack, read through the
//! stage's record, which also holds its capacity, its fill level and its
//! load: what the walk and the loads' sums read of a stage, in one cache
//! line.
//!
//! A stage's chunk moves to the end of the arena, at twice its capacity,
//! when it is full; the chunk it leaves is not reused. A chunk's capacity
//! never shrinks, so the arena is at most twice the sum of the chunks'
//! capacities, and the steady state (flow counts below their highs)
//! allocates nothing. Removal is a swap with the chunk's last slot.
//!
//! Architecture invariant: the spans and the arena are this file's; the
//! solvers read a stage's flows as a slice, in the order of its pushes and
//! swap-removes, as `Vec::push`/`Vec::swap_remove` would leave them.

use std::hint::select_unpredictable;

/// A stage as the solver holds it: φ, the `maxmin` fill level, the load
/// and its chunk of the arena, in 32 bytes, so that two share a cache
/// line and none straddles one (the chunk's capacity, which only `push`
/// reads, is apart).
#[derive(Clone, Copy, Debug)]
#[repr(C, align(32))]
struct Stage {
    capacity: f64,
    level: f64,
    load: f64,
    start: u32,
    len: u32,
}

const _: () = assert!(std::mem::size_of::<Stage>() == 32);

/// The flows on each stage, and each stage's capacity, level and load (see
/// the module's comment).
#[derive(Clone, Debug, Default)]
pub(super) struct Incidence {
    spans: Vec<Stage>,
    /// Each stage's chunk capacity.
    rooms: Vec<u32>,
    arena: Vec<u32>,
}

/// The capacity of a stage's first chunk.
const FIRST_CAP: u32 = 4;

/// `KEEP[len - 1][k]`: all ones if slot `k` of a chunk holds one of `len`
/// flows, else zero (for [`Incidence::settle_load`]).
const KEEP: [[u64; FIRST_CAP as usize]; FIRST_CAP as usize] = {
    let mut keep = [[0; FIRST_CAP as usize]; FIRST_CAP as usize];
    let mut len = 1;
    while len <= FIRST_CAP as usize {
        let mut k = 0;
        while k < len {
            keep[len - 1][k] = u64::MAX;
            k += 1;
        }
        len += 1;
    }
    keep
};

/// The bits of −0.0.
const NEG_ZERO: u64 = 1 << 63;

impl Incidence {
    /// No flow on any of the stages of these capacities, every level ∞.
    pub(super) fn new(capacity: impl Iterator<Item = f64>) -> Incidence {
        let spans: Vec<Stage> = capacity
            .map(|capacity| Stage {
                capacity,
                level: f64::INFINITY,
                load: 0.0,
                start: 0,
                len: 0,
            })
            .collect();
        Incidence {
            rooms: vec![0; spans.len()],
            spans,
            arena: Vec::new(),
        }
    }

    /// The number of stages.
    pub(super) fn stages(&self) -> usize {
        self.spans.len()
    }

    /// φ of stage `s`.
    #[inline(always)]
    pub(super) fn capacity(&self, s: u32) -> f64 {
        self.spans[s as usize].capacity
    }

    /// The level at which stage `s` filled in the last `maxmin` solve.
    #[inline(always)]
    pub(super) fn level(&self, s: u32) -> f64 {
        self.spans[s as usize].level
    }

    /// Sets the level at which stage `s` filled.
    #[inline(always)]
    pub(super) fn set_level(&mut self, s: u32, level: f64) {
        self.spans[s as usize].level = level;
    }

    /// Σ rates of the flows on stage `s`, as last set.
    #[inline(always)]
    pub(super) fn load(&self, s: u32) -> f64 {
        self.spans[s as usize].load
    }

    /// Sums the rates `rate(f)` of the flows on stage `s` (in the order of
    /// its list) and keeps it as its load; returns whether it changed.
    #[inline(always)]
    pub(super) fn settle_load(&mut self, s: u32, rate: impl Fn(u32) -> f64) -> bool {
        let sp = &mut self.spans[s as usize];
        let (start, len) = (sp.start as usize, sp.len as usize);
        let load: f64 = if (1..=FIRST_CAP as usize).contains(&len) {
            // A stage's few flows without a loop whose exit depends on their
            // number: the chunk holds `FIRST_CAP` slots; those past `len`
            // read the first flow again and add −0.0 instead of its rate,
            // which changes no sum (the sum starts at −0.0, as
            // `Iterator::sum` does). The −0.0 is put in by a mask loaded from
            // a table: a mask the compiler sees as a test becomes a branch.
            let chunk = &self.arena[start..start + FIRST_CAP as usize];
            let keep = &KEEP[len - 1];
            let mut load = -0.0;
            for (k, &f) in chunk.iter().enumerate() {
                let r = rate(select_unpredictable(k < len, f, chunk[0])).to_bits();
                load += f64::from_bits((r & keep[k]) | (NEG_ZERO & !keep[k]));
            }
            load
        } else {
            self.arena[start..start + len]
                .iter()
                .map(|&f| rate(f))
                .sum()
        };
        let changed = load != sp.load;
        sp.load = load;
        changed
    }

    /// The flows on stage `s`.
    #[inline(always)]
    pub(super) fn on(&self, s: u32) -> &[u32] {
        let sp = self.spans[s as usize];
        &self.arena[sp.start as usize..(sp.start + sp.len) as usize]
    }

    /// The spans and the arena as two slices, for a reader that holds them
    /// (one load fewer a read than through `&Incidence`).
    pub(super) fn view(&self) -> View<'_> {
        View {
            spans: &self.spans,
            arena: &self.arena,
        }
    }

    /// `n_s`: the number of flows on stage `s`.
    #[inline(always)]
    pub(super) fn len(&self, s: u32) -> usize {
        self.spans[s as usize].len as usize
    }

    /// Adds slot `f` on stage `s`; returns its index in `on(s)`.
    pub(super) fn push(&mut self, s: u32, f: u32) -> u32 {
        let mut sp = self.spans[s as usize];
        if sp.len == self.rooms[s as usize] {
            let cap = (sp.len * 2).max(FIRST_CAP);
            let start = u32::try_from(self.arena.len())
                .ok()
                .filter(|start| start.checked_add(cap).is_some())
                .expect("the incidence arena holds fewer than 2^32 slots");
            self.arena
                .extend_from_within(sp.start as usize..(sp.start + sp.len) as usize);
            self.arena.resize((start + cap) as usize, 0);
            sp.start = start;
            self.rooms[s as usize] = cap;
        }
        self.arena[(sp.start + sp.len) as usize] = f;
        sp.len += 1;
        self.spans[s as usize] = sp;
        sp.len - 1
    }

    /// Removes the flow at index `p` of `on(s)`, moving the last into its
    /// place; returns the moved flow, if one moved.
    pub(super) fn swap_remove(&mut self, s: u32, p: u32) -> Option<u32> {
        let sp = &mut self.spans[s as usize];
        assert!(p < sp.len, "index {p} of a flow on stage {s}");
        sp.len -= 1;
        let last = self.arena[(sp.start + sp.len) as usize];
        if p == sp.len {
            return None;
        }
        self.arena[(sp.start + p) as usize] = last;
        Some(last)
    }
}

/// An [`Incidence`] read through its two slices.
#[derive(Clone, Copy, Debug)]
pub(super) struct View<'a> {
    spans: &'a [Stage],
    arena: &'a [u32],
}

impl<'a> View<'a> {
    /// φ of stage `s`, unchecked in a release build.
    ///
    /// # Safety
    /// `s < self.stages()`: callers say which invariant gives it.
    #[inline(always)]
    pub(super) unsafe fn capacity_unchecked(&self, s: u32) -> f64 {
        debug_assert!((s as usize) < self.spans.len(), "stage {s} in range");
        // SAFETY: the caller's.
        unsafe { self.spans.get_unchecked(s as usize).capacity }
    }

    /// Stage `s`'s (φ, level, load), unchecked in a release build.
    ///
    /// # Safety
    /// `s` is a stage index.
    #[inline(always)]
    pub(super) unsafe fn record_unchecked(&self, s: u32) -> (f64, f64, f64) {
        debug_assert!((s as usize) < self.spans.len(), "stage {s} in range");
        // SAFETY: the caller's.
        let sp = unsafe { self.spans.get_unchecked(s as usize) };
        (sp.capacity, sp.level, sp.load)
    }

    /// Stage `s`'s level of the last solve, unchecked in a release build.
    ///
    /// # Safety
    /// `s < self.stages()`: callers say which invariant gives it.
    #[inline(always)]
    pub(super) unsafe fn level_unchecked(&self, s: u32) -> f64 {
        debug_assert!((s as usize) < self.spans.len(), "stage {s} in range");
        // SAFETY: the caller's.
        unsafe { self.spans.get_unchecked(s as usize).level }
    }

    /// The flows on stage `s`, unchecked in a release build.
    ///
    /// # Safety
    /// `s < self.stages()`: callers say which invariant gives it.
    #[inline(always)]
    pub(super) unsafe fn on_unchecked(&self, s: u32) -> &'a [u32] {
        debug_assert!((s as usize) < self.spans.len(), "stage {s} in range");
        // SAFETY: the caller's; every span lies inside the arena (`push`
        // grows the arena before a span covers it).
        unsafe {
            let sp = *self.spans.get_unchecked(s as usize);
            std::slice::from_raw_parts(self.arena.as_ptr().add(sp.start as usize), sp.len as usize)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Incidence;

    /// Pushes and swap-removes leave each stage's list as a `Vec`'s, across
    /// chunk moves (a stage grows past 4 and 8 while the others hold theirs).
    #[test]
    fn lists_match_vecs_across_chunk_moves() {
        let mut inc = Incidence::new([1.0; 3].into_iter());
        let mut vecs = vec![Vec::new(); 3];
        for f in 0..20u32 {
            let s = f % 3;
            let p = inc.push(s, f);
            assert_eq!(p as usize, vecs[s as usize].len());
            vecs[s as usize].push(f);
        }
        for (s, p) in [(0u32, 1u32), (1, 6), (2, 0), (0, 5)] {
            let v = &mut vecs[s as usize];
            v.swap_remove(p as usize);
            let moved = inc.swap_remove(s, p);
            assert_eq!(moved, v.get(p as usize).copied());
        }
        for s in 0..3u32 {
            assert_eq!(inc.on(s), vecs[s as usize].as_slice());
            assert_eq!(inc.len(s), vecs[s as usize].len());
        }
        // Stage 0 held 7 flows: chunks of 4 then 8; the arena keeps the
        // abandoned chunks (4 + 8 for stage 0, 4 + 8 for stages 1, 2 which
        // held 7 and 6).
        assert_eq!(inc.arena.len(), 36);
    }

    /// A load is the sum of its flows' rates in list order, bit for bit as
    /// `Iterator::sum` gives it (−0.0 for no flow), for every count on both
    /// sides of the chunk's first capacity.
    #[test]
    fn loads_are_the_list_order_sums() {
        let rates: Vec<f64> = (0..8).map(|f| 0.1 * f64::from(f + 1) + 1e-17).collect();
        for n in 0..=7u32 {
            let mut inc = Incidence::new([1.0].into_iter());
            for f in 0..n {
                inc.push(0, f);
            }
            // One pushed and removed again: a stale slot past the end.
            let p = inc.push(0, 7);
            inc.swap_remove(0, p);
            inc.settle_load(0, |f| rates[f as usize]);
            let sum: f64 = (0..n).map(|f| rates[f as usize]).sum();
            assert_eq!(inc.load(0).to_bits(), sum.to_bits(), "{n} flows");
        }
    }
}
