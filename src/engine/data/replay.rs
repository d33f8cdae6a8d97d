//! Trace replay (spec §8.7): which corpus session of the workload's trace
//! each session replays, and how far it has got.
//!
//! Invariant: a session's cursor is set when it is created (corpus session
//! `serial mod n` with `ordered`, else one drawn from the trace stream)
//! and advances by one row per `turn;`; it is kept by the session's
//! attribute row, fixed for its entity's life.
//!
//! Architecture invariant: plain data; nothing here evaluates or schedules.

use bevy_ecs::prelude::*;

use crate::trace::{Trace, TraceRow};

/// Where a session is in its corpus session.
#[derive(Clone, Copy, Debug, Default)]
pub struct Cursor {
    /// The corpus session it replays.
    pub corpus: u32,
    /// Its next row.
    pub next: u32,
}

/// The workload's trace and every session's cursor into it.
#[derive(Resource, Clone, Debug, Default)]
pub struct Replay {
    /// The trace, when the workload replays one.
    pub trace: Option<Trace>,
    /// Whether corpus sessions are taken in serial order.
    pub ordered: bool,
    /// Each session's cursor, by attribute row.
    pub cursor: Vec<Cursor>,
}

impl Replay {
    /// A session of attribute row `row` starts corpus session `corpus`.
    pub fn start(&mut self, row: u32, corpus: u32) {
        let row = row as usize;
        if self.cursor.len() <= row {
            self.cursor.resize(row + 1, Cursor::default());
        }
        self.cursor[row] = Cursor { corpus, next: 0 };
    }

    /// The next row of the session of attribute row `row`, and whether
    /// rows remain after it; `None` past its last row.
    pub fn next_row(&mut self, row: u32) -> Option<(TraceRow, bool)> {
        let trace = self.trace.as_ref()?;
        let cursor = self.cursor.get_mut(row as usize)?;
        let rows = trace.session(cursor.corpus as usize);
        let r = *rows.get(cursor.next as usize)?;
        cursor.next += 1;
        Some((r, (cursor.next as usize) < rows.len()))
    }
}
