//! Preemption's bookkeeping (spec §8.3, §8.9): which holder is the victim,
//! and when a preemption makes its session `stuck`.
//!
//! Invariant: the victim is a function of the candidates' latest
//! admission numbers only (distinct numbers, so there is one latest); a
//! `stuck` record belongs to one session and one pool, and its position is
//! reset only when a hold of that session on that pool completes; a
//! session counts once in all (the caller says whether it was counted
//! at another pool).

/// The victim among `candidates` (an id and the session's latest hold
/// admission number each): the latest admission. For a pool that is an
/// engine's `memory` the candidates are that engine's residents holding
/// the pool (the grower itself included); for another pool, the sessions
/// holding it in a hold (a lease is never preempted).
pub fn latest<T>(candidates: impl IntoIterator<Item = (T, f64)>) -> Option<T> {
    let mut best: Option<(T, f64)> = None;
    for (id, admission) in candidates {
        if best.as_ref().is_none_or(|(_, a)| admission > *a) {
            best = Some((id, admission));
        }
    }
    best.map(|(id, _)| id)
}

/// One session's preemptions on one pool, for `stuck`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Stuck {
    /// The position of the latest preemption since the session's hold on
    /// the pool last completed.
    last: Option<f64>,
    /// Whether the session was counted at this pool.
    counted: bool,
}

impl Stuck {
    /// A preemption at `position`: whether it counts now in the pool's
    /// `stuck` (the position is not beyond the previous preemption's, and
    /// the session was counted neither here nor, `elsewhere`, at another
    /// pool: 0.1.0 counts a session once, at the first pool it got stuck
    /// at; `preempt_stuck_counts_a_session_once`).
    pub fn preempted(&mut self, position: f64, elsewhere: bool) -> bool {
        let stuck = self.last.is_some_and(|last| position <= last) && !self.counted && !elsewhere;
        self.counted |= stuck;
        self.last = Some(position);
        stuck
    }

    /// A hold of the session on the pool completed: the next preemption
    /// starts afresh.
    pub fn completed(&mut self) {
        self.last = None;
    }

    /// Whether the session was counted at this pool.
    pub fn counted(&self) -> bool {
        self.counted
    }
}

#[cfg(test)]
mod tests {
    use super::{Stuck, latest};

    #[test]
    fn the_victim_is_the_latest_admission() {
        // t2_preempt_lifo_grow: holders 0, 1, 2 admitted in that order: 2 goes,
        // then 1.
        assert_eq!(latest([("s0", 0.0), ("s1", 1.0), ("s2", 2.0)]), Some("s2"));
        assert_eq!(latest([("s0", 0.0), ("s1", 1.0)]), Some("s1"));
        assert_eq!(latest(Vec::<(u32, f64)>::new()), None);
    }

    #[test]
    fn stuck_counts_a_preemption_that_did_not_get_further_once() {
        // tests/serving/preempt_stuck_counts_no_progress: preempted at 8, then
        // 10 (progress), 10 (stuck), 10 (counted already).
        let mut s = Stuck::default();
        assert!(!s.preempted(8.0, false));
        assert!(!s.preempted(10.0, false));
        assert!(s.preempted(10.0, false));
        assert!(!s.preempted(10.0, false));
        // Counted at another pool already: never again.
        let mut t = Stuck::default();
        assert!(!t.preempted(8.0, true));
        assert!(!t.preempted(8.0, true));
    }

    #[test]
    fn a_completed_hold_starts_the_record_afresh() {
        // The same test's kw: preempted at 8, the hold completes, preempted at
        // 8 again: not stuck.
        let mut s = Stuck::default();
        assert!(!s.preempted(8.0, false));
        s.completed();
        assert!(!s.preempted(8.0, false));
        // t2_stuck: the same position twice in a row is stuck.
        assert!(s.preempted(8.0, false));
    }
}
