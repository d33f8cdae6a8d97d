//! The event heap: events ordered by (time, sequence number).
//!
//! Invariant: the sequence number is a global counter taken when an event is
//! scheduled, so simultaneous events pop in the order they were scheduled.
//! An event made stale (a superseded ps or flow finish, a lease ended early)
//! is never searched for and removed: it carries a generation stamp or an id
//! that its handler compares with the current one, and it still pops (and
//! counts in `events`).

use std::cmp::Ordering;

use bevy_ecs::prelude::*;

/// What an event does when it pops.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum EventKind {
    /// The next open arrival.
    Arrival,
    /// The warm-up marker (does nothing; counts as an event).
    Warmup,
    /// A fifo job ends: (stage, job slot).
    JobEnd(u32, u32),
    /// The earliest job of a delay stage ends: (stage).
    DelayEnd(u32),
    /// The one pending finish of a ps stage: (stage, generation).
    PsEnd(u32, u64),
    /// The one pending finish of the flow system: (generation).
    FlowEnd(u64),
    /// A lease ends: (its session entity's index, lease id). The index,
    /// not the 8-byte entity, keeps an event in 32 bytes (a session entity
    /// is never despawned, so its index names it).
    LeaseEnd(u32, u64),
    /// A step stage's iteration ends: (stage, generation).
    IterationEnd(u32, u64),
}

/// A scheduled event: 32 bytes (pinned by a test in engine/run.rs), which
/// the heap moves at every level of a push or pop.
#[derive(Clone, Copy, Debug)]
pub struct Event {
    /// When it happens.
    pub time: f64,
    /// The scheduling order.
    pub seq: u64,
    /// What it does.
    pub kind: EventKind,
}

impl PartialEq for Event {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Event {}
impl PartialOrd for Event {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Event {
    /// By time, then sequence number: the earlier is the lesser.
    fn cmp(&self, other: &Self) -> Ordering {
        self.time
            .total_cmp(&other.time)
            .then(self.seq.cmp(&other.seq))
    }
}

impl Event {
    /// Whether `self` pops before `other`: [`Ord`]'s `<`, written for the
    /// heap's inner loops.
    #[inline(always)]
    fn before(&self, other: &Event) -> bool {
        self.cmp(other) == Ordering::Less
    }
}

/// The event heap with its sequence counter.
///
/// A binary min-heap of its own rather than `std`'s `BinaryHeap`, whose
/// `pop` writes the last event over the root in 8-byte stores and reads it
/// back at once in 16-byte loads: the store cannot be forwarded, and that
/// stall was an eighth of an M/M/1 run's event loop. Here `pop` reads the
/// root before anything is written, moves the hole to a leaf by the lesser
/// child and sifts the last event up from there. The pop order is the same
/// as any heap's: (time, sequence) is a total order with unique keys.
#[derive(Resource, Debug, Default)]
pub struct EventQueue {
    heap: Vec<Event>,
    seq: u64,
    /// Events popped so far (the report's `events`).
    pub taken: u64,
    /// Events later than this are never processed, so they are not stored.
    horizon: f64,
}

impl EventQueue {
    /// An empty queue that drops events later than `horizon`.
    pub fn new(horizon: f64) -> EventQueue {
        EventQueue {
            heap: Vec::with_capacity(64),
            seq: 0,
            taken: 0,
            horizon,
        }
    }

    /// Schedules `kind` at `time`. A time that is NaN or beyond the horizon
    /// never comes, so nothing is stored (the sequence counter still moves,
    /// which keeps the order of the others unchanged).
    pub fn schedule(&mut self, time: f64, kind: EventKind) {
        let seq = self.take_seq();
        self.schedule_taken(time, seq, kind);
    }

    /// Takes the next sequence number, for an event scheduled later (a
    /// delay job's, when it becomes its stage's earliest).
    pub fn take_seq(&mut self) -> u64 {
        let seq = self.seq;
        self.seq += 1;
        seq
    }

    /// Schedules `kind` at `time` with `seq`, taken earlier by
    /// [`EventQueue::take_seq`]; as [`EventQueue::schedule`] otherwise.
    /// Inlined, so that the event is built in registers and stored once,
    /// where it belongs (see [`EventQueue::make_room`]).
    #[inline(always)]
    pub fn schedule_taken(&mut self, time: f64, seq: u64, kind: EventKind) {
        if time <= self.horizon {
            let at = self.make_room(time, seq);
            self.heap[at] = Event { time, seq, kind };
        }
    }

    /// Opens the slot where an event keyed (`time`, `seq`) belongs: the
    /// heap grows by one and the later events on the way up move down.
    /// Only keys are compared, so the new event never passes through
    /// memory before its slot: its kind, handed over by reference and
    /// loaded whole right after the caller's field-by-field stores, was
    /// a store-forwarding stall.
    #[inline(never)]
    fn make_room(&mut self, time: f64, seq: u64) -> usize {
        let key = Event {
            time,
            seq,
            kind: EventKind::Warmup,
        };
        self.heap.push(key);
        let h = &mut self.heap;
        let mut at = h.len() - 1;
        while at > 0 {
            let parent = (at - 1) / 2;
            if !key.before(&h[parent]) {
                break;
            }
            h[at] = h[parent];
            at = parent;
        }
        at
    }

    /// Takes the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<Event> {
        let last = self.heap.pop()?;
        let Some(&top) = self.heap.first() else {
            return Some(last);
        };
        let h = &mut self.heap;
        let n = h.len();
        // The hole left by the root goes down by the lesser child to a
        // leaf; the last event fills it and rises to its place.
        let mut hole = 0;
        let mut child = 1;
        while child < n {
            if child + 1 < n && h[child + 1].before(&h[child]) {
                child += 1;
            }
            h[hole] = h[child];
            hole = child;
            child = 2 * hole + 1;
        }
        self.sift_up(hole, last);
        Some(top)
    }

    /// Puts `e` in the hole at `at` or above, where it belongs (`e` in
    /// registers, not read back from a slot just written).
    #[inline]
    fn sift_up(&mut self, mut at: usize, e: Event) {
        let h = &mut self.heap;
        while at > 0 {
            let parent = (at - 1) / 2;
            if !e.before(&h[parent]) {
                break;
            }
            h[at] = h[parent];
            at = parent;
        }
        h[at] = e;
    }

    /// When the earliest event happens, if any.
    pub fn next_time(&self) -> Option<f64> {
        self.heap.first().map(|e| e.time)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_pop_in_time_then_scheduling_order_through_pushes_and_pops() {
        // Times drawn from a small set, so many tie and their sequence
        // numbers decide; pops interleaved with pushes. The expected order
        // is a sort of what was pushed by (time, seq).
        let mut q = EventQueue::new(100.0);
        let mut pending: Vec<(f64, u32)> = Vec::new();
        let mut popped = Vec::new();
        let mut x = 7u64;
        for i in 0..2000u32 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let t = ((x >> 33) % 13) as f64 * 0.5;
            q.schedule(t, EventKind::DelayEnd(i));
            pending.push((t, i));
            if x >> 62 != 0 {
                let e = q.pop().expect("an event is pending");
                let EventKind::DelayEnd(id) = e.kind else {
                    panic!("only delay ends were scheduled")
                };
                popped.push((e.time, id));
                // The popped one is the least pending by (time, order).
                let least = *pending
                    .iter()
                    .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)))
                    .expect("pending");
                assert_eq!((e.time, id), least);
                pending.retain(|&p| p != least);
            }
        }
        assert_eq!(pending.len() + popped.len(), 2000);
        while let Some(e) = q.pop() {
            let EventKind::DelayEnd(id) = e.kind else {
                panic!("only delay ends were scheduled")
            };
            let least = *pending
                .iter()
                .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)))
                .expect("pending");
            assert_eq!((e.time, id), least);
            pending.retain(|&p| p != least);
        }
        assert!(pending.is_empty());
    }

    #[test]
    fn simultaneous_events_pop_in_scheduling_order() {
        let mut q = EventQueue::new(10.0);
        q.schedule(2.0, EventKind::Warmup);
        q.schedule(1.0, EventKind::PsEnd(0, 1));
        q.schedule(1.0, EventKind::Arrival);
        q.schedule(11.0, EventKind::Arrival); // beyond the horizon: dropped
        q.schedule(f64::NAN, EventKind::Arrival); // never
        let kinds: Vec<_> = std::iter::from_fn(|| q.pop()).map(|e| e.kind).collect();
        assert_eq!(
            kinds,
            [
                EventKind::PsEnd(0, 1),
                EventKind::Arrival,
                EventKind::Warmup
            ]
        );
    }
}
