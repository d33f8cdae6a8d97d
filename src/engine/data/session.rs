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

use bevy_ecs::entity::{EntityGeneration, EntityIndex};
use bevy_ecs::prelude::*;
use smallvec::SmallVec;

use crate::engine::data::rng::Stream;

/// What a block frame does when its statements run out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum FrameKind {
    /// The session's program: the session ends.
    Top = 0,
    /// A branch arm: continue after the branch.
    Seq = 1,
    /// A loop body: start it again.
    Loop = 2,
    /// A hold body: the hold returns its units (or leases one pool).
    Hold = 3,
}

/// A block being executed and the next statement in it.
///
/// The block and what happens at its end share one word (the kind in the
/// top two bits), so two frames fit a session's continuation in 24 bytes:
/// with 10^7 live sessions every word of it is 80 MB.
#[derive(Clone, Copy, Debug)]
pub struct Frame {
    /// The next statement.
    pub pc: u32,
    /// The block (low 30 bits) and its [`FrameKind`] (top two bits).
    block_kind: u32,
}

/// The bits of [`Frame::block_kind`] that hold the block.
const BLOCK_BITS: u32 = (1 << 30) - 1;

impl Frame {
    /// A frame at the first statement of `block`.
    #[inline]
    pub fn start(block: u32, kind: FrameKind) -> Frame {
        // A program of 2^30 blocks would take gigabytes of source text.
        debug_assert!(
            block <= BLOCK_BITS,
            "block {block} beyond a frame's 30 bits"
        );
        Frame {
            pc: 0,
            block_kind: (block & BLOCK_BITS) | (kind as u32) << 30,
        }
    }

    /// The block.
    #[inline]
    pub fn block(self) -> u32 {
        self.block_kind & BLOCK_BITS
    }

    /// What happens at the block's end.
    #[inline]
    pub fn kind(self) -> FrameKind {
        match self.block_kind >> 30 {
            0 => FrameKind::Top,
            1 => FrameKind::Seq,
            2 => FrameKind::Loop,
            _ => FrameKind::Hold,
        }
    }
}

/// The session's continuation: the stack of block frames, innermost last.
/// Two frames inline (the program and one branch, loop or hold) cover
/// most programs without a heap block per session. A session is live
/// while it has a frame: its end empties the stack (so no flag of its
/// own is kept).
#[derive(Component, Clone, Debug, Default)]
pub struct Continuation(pub SmallVec<[Frame; 2]>);

impl Continuation {
    /// Whether the session is live (created and not ended).
    #[inline]
    pub fn live(&self) -> bool {
        !self.0.is_empty()
    }
}

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
    /// Its hold statement: its `cache` clause is read when the lease ends
    /// (as 0.1.0 reads it), bounded by the state below.
    pub at: (usize, usize),
    /// Whether the hold ran `growing` or `load` (it caches its position).
    pub ran: bool,
    /// The hold's position on the pool when its body ended.
    pub position: f64,
}

/// A waiting hold's amounts in one pool: the units it takes (rounded up
/// to the block) and what the pool must fit (`max(units, reserve)`
/// rounded up).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Amounts {
    /// Units taken at admission.
    pub units: f64,
    /// Units that must fit.
    pub gate: f64,
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
        /// Its amounts as evaluated at the join, for a hold of one pool
        /// whose amounts read no state (what they read cannot change while
        /// it waits), so an admission pass need not evaluate them again.
        known: Option<Amounts>,
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

/// A session's record on one pool, as 0.1.0 keeps it: made or renewed by
/// every hold admitted there, dropped whole when any allocation of the
/// session there ends (a hold's end or `release`, a preemption, a
/// lease's end), though an outer hold may still hold the pool. A hold that
/// ends in a lease keeps it. `holders(p)` counts `count`, and `preempt
/// lifo` takes only a session with a record (engine/systems/preempt.rs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Holding {
    /// The pool member.
    pub pool: u32,
    /// Allocations counted in the pool's `holders`.
    pub count: u32,
    /// The number of the latest admission there (the `admission` order).
    pub admission: u64,
}

/// A session's dealings with pools.
#[derive(Clone, Debug, Default)]
pub struct PoolDealings {
    /// Admitted holds, outermost first.
    pub holds: Vec<HoldFrame>,
    /// Leases, oldest first.
    pub leases: Vec<Lease>,
    /// Its allocations on each pool, as 0.1.0 records them (one record
    /// per pool, see [`Holding`]).
    pub holdings: SmallVec<[Holding; 4]>,
    /// What it waits for (a hold's admission or a stalled grow).
    pub wait: Wait,
    /// Its latest hold admission's number (spec §8.1 `admission`), if any.
    pub admission: Option<u64>,
    /// The stage member of its latest job (a preemption looks there).
    pub at_stage: Option<u32>,
}

impl PoolDealings {
    /// Forgets everything, keeping its buffers.
    pub fn clear(&mut self) {
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

/// Session entities ready for the next sessions: those whose sessions
/// ended (the most recently ended taken first), then the spawned ones never
/// used, in spawn order. Both are kept as runs of consecutive indices (of
/// one generation), not as a list of 8 bytes an entity: a batch's
/// entities are spawned, and its sessions end, in index order.
#[derive(Resource, Clone, Debug, Default)]
pub struct Vacant {
    /// Ended sessions' entities: runs `start..end`, taken from the end of
    /// the last run.
    ended: Vec<(u32, u32, EntityGeneration)>,
    /// Never used, taken from the start.
    fresh: std::ops::Range<u32>,
    /// The generation of `fresh`.
    generation: Option<EntityGeneration>,
}

fn entity(index: u32, generation: EntityGeneration) -> Option<Entity> {
    Some(Entity::from_index_and_generation(
        EntityIndex::from_raw_u32(index)?,
        generation,
    ))
}

impl Vacant {
    /// An entity to use, if any is vacant.
    #[inline]
    pub fn pop(&mut self) -> Option<Entity> {
        if let Some((start, end, generation)) = self.ended.last_mut() {
            *end -= 1;
            let e = entity(*end, *generation);
            if *start == *end {
                self.ended.pop();
            }
            return e;
        }
        entity(self.fresh.next()?, self.generation?)
    }

    /// Session `e`'s entity is vacant again.
    #[inline]
    pub fn push(&mut self, e: Entity) {
        let (index, generation) = (e.index_u32(), e.generation());
        match self.ended.last_mut() {
            Some((_, end, g)) if *end == index && *g == generation => *end += 1,
            _ => self.ended.push((index, index + 1, generation)),
        }
    }

    /// Whether no entity is vacant.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.ended.is_empty() && self.fresh.is_empty()
    }

    /// How many entities are vacant.
    pub fn len(&self) -> usize {
        self.ended
            .iter()
            .map(|(s, e, _)| (e - s) as usize)
            .sum::<usize>()
            + self.fresh.len()
    }

    /// Adds never-used entities, taken in this order after those vacant now.
    pub fn extend_fresh(&mut self, spawned: Vec<Entity>) {
        let first = spawned.first().copied();
        let consecutive = first.is_some_and(|f| {
            spawned
                .iter()
                .zip(f.index_u32()..)
                .all(|(e, i)| e.index_u32() == i && e.generation() == f.generation())
        });
        match first {
            Some(f) if consecutive && self.is_empty() => {
                self.fresh = f.index_u32()..f.index_u32() + spawned.len() as u32;
                self.generation = Some(f.generation());
            }
            _ => {
                // As ended ones, last taken first: the vacant now, then the
                // spawned in order.
                let now: Vec<Entity> = std::iter::from_fn(|| self.pop()).collect();
                for e in now.into_iter().chain(spawned).rev() {
                    self.push(e);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vacant_entities_go_ended_last_first_then_fresh_in_spawn_order() {
        let e = |i| Entity::from_raw_u32(i).expect("a small index");
        let mut vacant = Vacant::default();
        vacant.extend_fresh((10..13).map(e).collect());
        assert_eq!(vacant.pop(), Some(e(10)));
        // Ended 10, then 4, 5 (a run), then 7: taken 7, 5, 4, 10, then fresh.
        for i in [10, 4, 5, 7] {
            vacant.push(e(i));
        }
        assert_eq!(vacant.len(), 6);
        let order: Vec<_> = std::iter::from_fn(|| vacant.pop()).collect();
        assert_eq!(order, [7, 5, 4, 10, 11, 12].map(e));
        assert!(vacant.is_empty());
        // Not consecutive: kept as runs, the first spawned taken first.
        vacant.extend_fresh([3, 9, 4].map(e).to_vec());
        let order: Vec<_> = std::iter::from_fn(|| vacant.pop()).collect();
        assert_eq!(order, [3, 9, 4].map(e));
    }
}
