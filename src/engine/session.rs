//! A session's components (one concern each) and the resources that hold
//! what every session has: the attribute rows and the vacant entities.
//!
//! Invariant: a session entity is spawned once and recycled, never
//! despawned: an ended session's entity goes to [`Vacant`] and the next
//! session takes it with its components reset (buffers kept). Its attribute
//! row in [`AttrRows`] is fixed for the entity's life ([`Life::row`]). A
//! frame of kind `Hold` has exactly one entry on the session's hold stack,
//! pushed with it at admission and popped with it when the body ends, so
//! the two stacks nest alike.
//!
//! Architecture invariant: plain data; nothing here evaluates or schedules.

use std::cell::Cell;

use bevy_ecs::prelude::*;
use smallvec::SmallVec;

use super::rng::Stream;

/// What a block frame does when its statements run out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameKind {
    /// The session's program: the session ends.
    Top,
    /// A branch arm: continue after the branch.
    Seq,
    /// A loop body: start it again.
    Loop,
    /// A hold body: the hold returns its units (or leases one pool).
    Hold,
}

/// A block being executed and the next statement in it.
#[derive(Clone, Copy, Debug)]
pub struct Frame {
    /// The block.
    pub block: u32,
    /// The next statement.
    pub pc: u32,
    /// What happens at its end.
    pub kind: FrameKind,
}

/// The session's continuation: the stack of block frames, innermost last.
/// Two frames inline (the program and one branch, loop or hold) cover
/// most programs without a heap block per session.
#[derive(Component, Clone, Debug, Default)]
pub struct Continuation(pub SmallVec<[Frame; 2]>);

/// The session's own random stream (its statements' draws).
#[derive(Component, Clone, Debug)]
pub struct Draws(pub Stream);

/// Who the session is and how long it has run at this instant.
#[derive(Component, Clone, Copy, Debug)]
pub struct Life {
    /// Creation order, from 0.
    pub serial: u64,
    /// The instant `steps` counts at.
    pub steps_at: f64,
    /// Statements run at `steps_at` (the livelock counter).
    pub steps: u32,
    /// Its row in [`AttrRows`], fixed for the entity's life.
    pub row: u32,
    /// Not ended.
    pub live: bool,
}

/// One pool of an admitted hold.
#[derive(Clone, Copy, Debug)]
pub struct Held {
    /// The pool member.
    pub pool: u32,
    /// Units allocated (grows with `grow`).
    pub units: f64,
    /// The computed position (spec §8.2): the cached prefix consumed at
    /// admission, plus `load`s, plus growing tokens as they are scheduled.
    pub position: f64,
    /// Given back early by `release`.
    pub released: bool,
}

/// An admitted hold: its statement and its pools in the hold's order.
#[derive(Clone, Debug)]
pub struct HoldFrame {
    /// The hold statement (block, index).
    pub at: (usize, usize),
    /// Its pools.
    pub pools: SmallVec<[Held; 4]>,
    /// Whether it ran growing tokens or a `load`: a release then caches
    /// each pool's position, not its allocation.
    pub ran: bool,
}

/// A lease: an allocation that outlived its hold.
#[derive(Clone, Copy, Debug)]
pub struct Lease {
    /// Unique over the run (a lease-end event names it).
    pub id: u64,
    /// The pool member.
    pub pool: u32,
    /// Units.
    pub units: f64,
    /// What its end caches (its hold's `cache` clause, read when the hold
    /// ended), 0 for none.
    pub cache: f64,
}

/// What a blocked session waits for.
#[derive(Clone, Debug, Default)]
pub enum Wait {
    /// Nothing (ready, running or at a stage).
    #[default]
    None,
    /// Admission of the hold at `at` to `pools` (queued at the first), since `joined`.
    Hold {
        /// The hold statement.
        at: (usize, usize),
        /// The pool members, in the hold's order.
        pools: SmallVec<[u32; 4]>,
        /// When it joined the queue.
        joined: f64,
    },
    /// A stalled grow of entry `entry` of hold frame `hold` by `amount`.
    Grow {
        /// Index in the hold stack.
        hold: usize,
        /// Index in the hold's pools.
        entry: usize,
        /// Units to add.
        amount: f64,
    },
    /// A resident of step stage `stage` stalled in its run's growth of
    /// entry `entry` of hold frame `hold` to `allocation`; the grant also
    /// advances the position by `asked` (spec §8.3).
    Growth {
        /// Index in the hold stack.
        hold: usize,
        /// Index in the hold's pools.
        entry: usize,
        /// The allocation asked for.
        allocation: f64,
        /// What it asked beyond the old allocation, unrounded.
        asked: f64,
        /// The step stage member it is a resident of.
        stage: u32,
    },
}

/// A session's dealings with pools.
#[derive(Clone, Debug, Default)]
pub struct PoolDealings {
    /// Admitted holds, outermost first.
    pub holds: Vec<HoldFrame>,
    /// Leases, oldest first.
    pub leases: Vec<Lease>,
    /// Allocations counted in each pool's `holders`: (pool, count).
    pub holdings: SmallVec<[(u32, u32); 4]>,
    /// What it waits for (a hold's admission or a stalled grow).
    pub wait: Wait,
    /// Its latest hold admission's number (spec §8.1 `admission`), if any.
    pub admission: Option<u64>,
    /// The stage member of its latest job (a preemption looks there).
    pub at_stage: Option<u32>,
}

impl PoolDealings {
    fn clear(&mut self) {
        self.holds.clear();
        self.leases.clear();
        self.holdings.clear();
        self.wait = Wait::None;
        self.admission = None;
        self.at_stage = None;
    }
}

/// Holds, leases and what the session waits for; boxed and built only at
/// its first `hold`, so a session that never holds carries one word.
#[derive(Component, Clone, Debug, Default)]
pub struct Dealings(pub Option<Box<PoolDealings>>);

impl Dealings {
    /// Its pool dealings, built empty at the first call.
    pub fn get(&mut self) -> &mut PoolDealings {
        self.0.get_or_insert_with(Box::default)
    }

    /// Its admitted holds (none before its first `hold`).
    pub fn holds(&self) -> &[HoldFrame] {
        self.0.as_deref().map_or(&[], |p| &p.holds)
    }

    /// Forgets everything, keeping the box for the entity's next session.
    pub fn clear(&mut self) {
        if let Some(d) = &mut self.0 {
            d.clear();
        }
    }
}

/// Every session's attributes in one arena, `width` values per row (the
/// columns of the slots the program reads, `Code::columns`): a session
/// costs exactly what it reads, with no header or heap block of its own
/// (10^7 sessions of a `batch` live at once).
#[derive(Resource, Clone, Debug)]
pub struct AttrRows {
    width: usize,
    rows: usize,
    values: Vec<f64>,
}

impl AttrRows {
    /// An empty arena of `width` attributes a row.
    pub fn new(width: usize) -> AttrRows {
        AttrRows {
            width,
            rows: 0,
            values: Vec::new(),
        }
    }

    /// Room for `rows` rows more, reserved exactly.
    pub fn reserve_rows(&mut self, rows: usize) {
        self.values.reserve_exact(rows.saturating_mul(self.width));
    }

    /// A new row, all zeros; rows are handed out in order.
    pub fn push_row(&mut self) -> u32 {
        let row = self.rows;
        self.rows += 1;
        self.values.resize(self.values.len() + self.width, 0.0);
        row as u32
    }

    /// Rows handed out so far.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The attributes of row `row`.
    #[inline]
    pub fn of(&self, row: u32) -> &[f64] {
        let at = row as usize * self.width;
        &self.values[at..at + self.width]
    }

    /// Column `column` of row `row`, to change (`None` beyond the row: a
    /// slot nothing reads).
    #[inline]
    pub fn get_mut(&mut self, row: u32, column: usize) -> Option<&mut f64> {
        self.of_mut(row).get_mut(column)
    }

    /// The attributes of row `row`, to change.
    #[inline]
    pub fn of_mut(&mut self, row: u32) -> &mut [f64] {
        let at = row as usize * self.width;
        &mut self.values[at..at + self.width]
    }

    /// The attributes of row `row` as cells, for an evaluation that may
    /// set one between reads (see `eval::Cx`).
    #[inline]
    pub fn cells(&mut self, row: u32) -> &[Cell<f64>] {
        Cell::from_mut(self.of_mut(row)).as_slice_of_cells()
    }
}

/// Session entities whose sessions ended, ready for the next ones (most
/// recently ended last).
#[derive(Resource, Clone, Debug, Default)]
pub struct Vacant(pub Vec<Entity>);
