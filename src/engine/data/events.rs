//! The event heap: events ordered by (time, sequence number).
//!
//! Invariant: the sequence number is a global counter taken when an event is
//! scheduled, so simultaneous events pop in the order they were scheduled.
//! An event made stale (a superseded ps or flow finish, a lease ended early)
//! is never searched for and removed: it carries a generation stamp or an id
//! that its handler compares with the current one, and it still pops (and
//! counts in `events`).

use bevy_ecs::prelude::*;

use crate::engine::data::min_heap::{Keyed, MinHeap};

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

/// A scheduled event: 32 bytes (pinned by a test in engine/run/event_loop.rs), which
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

impl Keyed for Event {
    fn key(&self) -> (f64, u64) {
        (self.time, self.seq)
    }
}

/// The event heap with its sequence counter.
#[derive(Resource, Debug, Default)]
pub struct EventQueue {
    heap: MinHeap<Event>,
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
            heap: MinHeap::with_capacity(64),
            seq: 0,
            taken: 0,
            horizon,
        }
    }

    /// Schedules `kind` at `time`. A time that is NaN or beyond the horizon
    /// never comes, so nothing is stored (the sequence counter still moves,
    /// which keeps the order of the others unchanged).
    #[inline(always)]
    pub fn schedule(&mut self, time: f64, kind: EventKind) {
        let seq = self.take_seq();
        self.schedule_taken(time, seq, kind);
    }

    /// Takes the next sequence number, for an event scheduled later (a
    /// delay job's, when it becomes its stage's earliest).
    #[inline]
    pub fn take_seq(&mut self) -> u64 {
        let seq = self.seq;
        self.seq += 1;
        seq
    }

    /// Schedules `kind` at `time` with `seq`, taken earlier by
    /// [`EventQueue::take_seq`]; as [`EventQueue::schedule`] otherwise.
    /// Inlined, so that the event is built in registers and stored once,
    /// in its slot ([`MinHeap::push`]).
    #[inline(always)]
    pub fn schedule_taken(&mut self, time: f64, seq: u64, kind: EventKind) {
        if time <= self.horizon {
            self.heap.push(Event { time, seq, kind });
        }
    }

    /// Takes the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<Event> {
        self.heap.pop()
    }

    /// When the earliest event happens, if any.
    pub fn next_time(&self) -> Option<f64> {
        self.heap.peek().map(|e| e.time)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
