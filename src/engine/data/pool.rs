//! A pool member's components (its waiters and its figures) and the dense
//! columns of every member that expressions and admission read (spec
//! §6.6–6.8).
//!
//! Invariants: a waiting hold sits in the queue of its first pool only;
//! [`PoolLevels::used`] always equals the sum over hold frames and leases
//! of the member's units, `holders` the sum over sessions of their
//! holdings, `queued` the length of the member's queue. [`Waiting`] holds
//! exactly the members with a queued hold or a stalled grower, and marks
//! asleep only members none of whose waiters can move before units come
//! back to that member.
//!
//! Holders, as the reference counts them: a session's allocations on a pool
//! (hold frames and leases) count one each from admission on, but returning
//! any one of them (a hold's end, a `release`, a lease's end) drops the
//! session's whole count on that pool, so with nested holds on `p` the
//! outer one no longer counts once the inner one ends. Measured on pyserq
//! 0.1.0 (`holders` after an inner hold ends, a lease ending during a hold);
//! spec §5.3's "number of allocations" holds while nothing was returned.
//!
//! Architecture invariant: plain data and its arithmetic; nothing here
//! evaluates an expression. (A pool with blocks and caching will add its
//! `Cache` as a component of its own.)

use std::collections::VecDeque;

use bevy_ecs::prelude::*;

use crate::engine::data::stats::{RunningMean, TimeAvg};
use crate::report::WindowedAverage;

/// Why a queue head whose units read no state did not fit: while the pool
/// it did not fit in has had no units back, it still does not.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Blocked {
    /// The head's session.
    pub head: Entity,
    /// The pool member it did not fit in.
    pub on: u32,
    /// That member's `returns` then.
    pub returns: u64,
}

/// The sessions waiting at a pool member.
#[derive(Component, Clone, Debug, Default)]
pub struct Waiters {
    /// Holds waiting for admission, in join order.
    pub queue: VecDeque<Entity>,
    /// Sessions stalled in a `grow`, in stall order.
    pub stalled: VecDeque<Entity>,
    /// The head that provably still does not fit, if known.
    pub blocked: Option<Blocked>,
    /// How many holds at the queue's front are preemption victims, each
    /// pushed there when taken (the last taken first). 0.1.0 serves them
    /// before a `queue by` order, which ranks only the holds behind them.
    pub requeued: usize,
}

impl Waiters {
    /// Puts a preemption victim's hold at the queue's front.
    pub fn push_victim(&mut self, e: Entity) {
        self.queue.push_front(e);
        self.requeued += 1;
    }

    /// Takes the hold at place `k` out of the queue.
    pub fn remove_at(&mut self, k: usize) {
        if k == 0 {
            self.queue.pop_front();
        } else {
            self.queue.remove(k);
        }
        if k < self.requeued {
            self.requeued -= 1;
        }
    }
}

/// A pool member's figures.
#[derive(Component, Clone, Debug)]
pub struct PoolStats {
    /// Allocated units (its value is `used`).
    pub used_avg: TimeAvg,
    /// Holds waiting in the queue.
    pub queue_avg: TimeAvg,
    /// Holds waiting over equal windows of `[warmup, horizon]`, for the
    /// stability test's `growing` (docs/report.md §2.1).
    pub queue_series: WindowedAverage,
    /// Allocations (hold frames and leases).
    pub holders_avg: TimeAvg,
    /// Queue waits of admissions at t >= warmup whose first pool this is.
    pub wait: RunningMean,
    /// Admissions over the whole run.
    pub admissions: u64,
    /// Rejections over the whole run.
    pub rejected: u64,
}

impl PoolStats {
    /// Empty figures over `[warmup, end]`, windowed over `[warmup, horizon]`.
    pub fn new(warmup: f64, horizon: f64) -> PoolStats {
        PoolStats {
            used_avg: TimeAvg::new(warmup),
            queue_avg: TimeAvg::new(warmup),
            queue_series: WindowedAverage::new(warmup, horizon),
            holders_avg: TimeAvg::new(warmup),
            wait: RunningMean::default(),
            admissions: 0,
            rejected: 0,
        }
    }
}

/// The dense columns of every pool member, by IR index: what `used`,
/// `free`, `holders` and `queued` read and what admission compares.
#[derive(Resource, Clone, Debug)]
pub struct PoolLevels {
    /// Capacity.
    pub cap: Vec<f64>,
    /// Allocated units.
    pub used: Vec<f64>,
    /// Allocations counted as the reference counts them (above).
    pub holders: Vec<f64>,
    /// Holds waiting in the queue.
    pub queued: Vec<f64>,
    /// How many times units came back: `used` can only fall when this moves.
    pub returns: Vec<u64>,
}

impl PoolLevels {
    /// Every member empty, of these capacities.
    pub fn new(cap: Vec<f64>) -> PoolLevels {
        let n = cap.len();
        PoolLevels {
            cap,
            used: vec![0.0; n],
            holders: vec![0.0; n],
            queued: vec![0.0; n],
            returns: vec![0; n],
        }
    }

    /// Member `p` allocates `units` to one more holder at `now`.
    pub fn take(&mut self, stats: &mut PoolStats, p: usize, now: f64, units: f64) {
        self.used[p] += units;
        stats.used_avg.set(now, self.used[p]);
        self.holders[p] += 1.0;
        stats.holders_avg.set(now, self.holders[p]);
    }

    /// A stalled grow of `units` is applied at `now`.
    pub fn grow(&mut self, stats: &mut PoolStats, p: usize, now: f64, units: f64) {
        self.used[p] += units;
        stats.used_avg.set(now, self.used[p]);
    }

    /// Units come back; `counted` is the returning session's whole holding.
    pub fn give_back(
        &mut self,
        stats: &mut PoolStats,
        p: usize,
        now: f64,
        units: f64,
        counted: u32,
    ) {
        self.used[p] -= units;
        stats.used_avg.set(now, self.used[p]);
        self.returns[p] += 1;
        if counted > 0 {
            self.holders[p] -= f64::from(counted);
            stats.holders_avg.set(now, self.holders[p]);
        }
    }

    /// Member `p`'s queue is now `len` long.
    pub fn set_queued(&mut self, stats: &mut PoolStats, p: usize, now: f64, len: usize) {
        self.queued[p] = len as f64;
        stats.queue_avg.set(now, len as f64);
        stats.queue_series.set(now, len as f64);
    }
}

/// The pools that have waiters (a queued hold or a stalled grower), as a
/// bitset, so an admission pass visits only those, in declaration order;
/// and of those the ones *asleep*: whose every waiter provably cannot
/// move until units come back to that very pool (its stalled front grower
/// did not fit, its queue head did not fit there and its units read no
/// state). An admission pass skips an asleep pool. Used units only fall
/// by a return, so a return to the pool wakes it; a new waiter wakes it
/// too (a new front is tried once). A pool of a thousand blocked queues
/// (a router whose leases fill the pools) costs nothing per pass.
#[derive(Resource, Clone, Debug, Default)]
pub struct Waiting {
    words: Vec<u64>,
    asleep: Vec<u64>,
    /// `words & !asleep`, kept as they change: what a pass visits.
    awake: Vec<u64>,
    /// How many words of `awake` are not zero: most settles ask whether
    /// any pool is awake, and this answers without a scan.
    awake_words: usize,
}

impl Waiting {
    /// An empty set over `n` pools.
    pub fn new(n: usize) -> Waiting {
        Waiting {
            words: vec![0; n.div_ceil(64)],
            asleep: vec![0; n.div_ceil(64)],
            awake: vec![0; n.div_ceil(64)],
            awake_words: 0,
        }
    }

    /// Word `w` of `words` or `asleep` changed: its awake word follows.
    #[inline]
    fn refresh(&mut self, w: usize) {
        let was = self.awake[w] != 0;
        self.awake[w] = self.words[w] & !self.asleep[w];
        let is = self.awake[w] != 0;
        self.awake_words = self.awake_words + usize::from(is) - usize::from(was);
    }

    /// Member `p` has a new waiter (and is awake).
    pub fn insert(&mut self, p: usize) {
        self.words[p / 64] |= 1 << (p % 64);
        self.asleep[p / 64] &= !(1 << (p % 64));
        self.refresh(p / 64);
    }

    /// Member `p` has none.
    pub fn remove(&mut self, p: usize) {
        self.words[p / 64] &= !(1 << (p % 64));
        self.asleep[p / 64] &= !(1 << (p % 64));
        self.refresh(p / 64);
    }

    /// Member `p`'s waiters cannot move until units come back to it.
    pub fn sleep(&mut self, p: usize) {
        self.asleep[p / 64] |= 1 << (p % 64);
        self.refresh(p / 64);
    }

    /// Units came back to member `p`.
    #[inline]
    pub fn wake(&mut self, p: usize) {
        self.asleep[p / 64] &= !(1 << (p % 64));
        self.refresh(p / 64);
    }

    /// The smallest awake member with waiters at or after `p`.
    #[inline]
    pub fn next_from(&self, p: usize) -> Option<usize> {
        if self.awake_words == 0 {
            return None;
        }
        let mut w = p / 64;
        let mut bits = *self.awake.get(w)? & (u64::MAX << (p % 64));
        loop {
            if bits != 0 {
                return Some(w * 64 + bits.trailing_zeros() as usize);
            }
            w += 1;
            bits = *self.awake.get(w)?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pass_visits_the_awake_members_with_waiters_in_order() {
        let mut w = Waiting::new(130);
        assert_eq!(w.next_from(0), None);
        for p in [3, 70, 129] {
            w.insert(p);
        }
        w.sleep(70);
        assert_eq!(w.next_from(0), Some(3));
        assert_eq!(w.next_from(4), Some(129));
        // A member without waiters, put to sleep, is still not visited.
        w.sleep(5);
        assert_eq!(w.next_from(4), Some(129));
        w.wake(70);
        assert_eq!(w.next_from(4), Some(70));
        w.remove(3);
        w.remove(70);
        w.sleep(129);
        assert_eq!(w.next_from(0), None);
        w.wake(129);
        assert_eq!(w.next_from(0), Some(129));
        w.remove(129);
        assert_eq!(w.next_from(0), None);
    }
}
