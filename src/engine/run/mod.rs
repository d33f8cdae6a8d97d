//! The run: building the world, the event loop, and the batch systems
//! that run around it (the invariant check, the report).

pub mod event_loop;
pub mod invariants;
pub mod report;
