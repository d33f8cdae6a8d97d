//! The flow solver: jobs ("flows") that hold several shared `ps` stages at
//! once, with rates set by the program's `share` policy (spec §6.4, RFC #118).
//!
//! A solve of a system of at most [`EVERY_FLOW_LIMIT`] live flows advances
//! every live flow to its time, whether or not its rate changed
//! (`remaining −= rate × (now − t_mark)`), and gives it the end `now +
//! remaining / rate`, as 0.1.0 does: the end is the chain of remainders
//! over every such solve of the flow's life, an ulp or two from `start +
//! work / rate`, and which of two events at one instant goes first follows
//! the reference's rounding. A solve of a larger system advances only the
//! flows whose rate it changes, so that it costs what it touches; an end
//! then lies a few ulps from 0.1.0's, which decides nothing but exact ties,
//! and those do not arise among thousands of flows of random work (see
//! docs/performance-log.md). A remainder that rounding takes to zero or below
//! is zero, and any above it is kept, however small (as 0.1.0 keeps one of
//! 1e-13 of the work). The advance is lazy: the system keeps the times of
//! the advancing solves since the oldest one a flow's `remaining` is as of,
//! and a flow replays them, step by step, when its rate changes, when its
//! work is read, and when its end may be the next (an end heap key older
//! than the last solve is within [`drift`] of the flow's true end).
//!
//! Invariants (after every [`FlowSystem::solve`], property-tested):
//! * for every stage `s`, `Σ rate(f on s) ≤ φ_s` (relative `1e-9`);
//! * under `maxmin` every flow on a finite stage has a stage that is full and
//!   where no flow has a higher rate (the max-min certificate); a flow whose
//!   stages are all `ps(inf)` has rate ∞ and ends at once;
//! * every `bottleneck` rate is `min over s of φ_s / n_s`, at or below the
//!   `maxmin` rate of the same flow;
//! * the incremental `maxmin` update equals a full progressive filling, and
//!   [`MaxMinSolver::BySize`] (the default) may switch between them at any
//!   solve: each leaves the bookkeeping (`level`, `froze_at`) the other
//!   starts from;
//! * `flows_on[s][flow.pos[k]] == flow` for `s = flow.stages[k]` (back-index);
//! * every flow of positive rate is in the end heap, keyed by (end, start
//!   order), or (past [`EVERY_FLOW_LIMIT`] flows, marked `early`) by a key
//!   below its end; no other is, and the top is never `early`;
//! * a [`FlowId`] is a slotmap key naming one flow for its life; inside, a
//!   flow is a dense slot (`u32`) that the incidence arrays, heaps and
//!   scratch index, reused after it finishes.
//!
//! Architecture invariant: this module knows stage indices and capacities,
//! nothing of the IR beyond [`Share`], nothing of sessions or events; the
//! engine owns the one flow-system event and asks [`FlowSystem::next_end`].
//! Nothing iterates a hash map, and the steady state allocates nothing beyond
//! the amortized growth of its buffers: every buffer lives in the system and
//! is reused.

mod end_queue;
mod fill;
mod heap;
mod incidence;
mod incremental;
mod mark_heap;
#[cfg(test)]
mod oracle;
mod pending;
#[cfg(test)]
mod proptests;
mod solve_log;
#[cfg(test)]
mod tests;

use crate::ir::Share;
use end_queue::EndQueue;
use fill::LargeComponents;
use incidence::Incidence;
use mark_heap::MarkHeap;
use pending::Pending;
use slotmap::{SlotMap, new_key_type};
use smallvec::SmallVec;
use solve_log::SolveLog;

/// No stage / no flow.
const NONE: u32 = u32::MAX;

/// Relative tolerance under which two levels tie.
pub const TOL: f64 = 1e-12;

/// Whether two levels (rates) are the same up to [`TOL`], relative: `|a −
/// b| ≤ TOL · max(|a|, |b|)`. Levels and rates are not negative, so the
/// larger minus the smaller is `|a − b|` (exactly: a rounded difference is
/// symmetric), without `abs` or `f64::max`'s NaN handling.
#[inline]
fn same_level(a: f64, b: f64) -> bool {
    debug_assert!(a >= 0.0 && b >= 0.0, "levels and rates are not negative");
    let (hi, lo) = if a > b { (a, b) } else { (b, a) };
    a == b || hi - lo <= TOL * hi
}

new_key_type! {
    /// A stable handle to a flow (a slotmap key), so a handle to a finished
    /// flow never names the flow that reuses its slot.
    pub struct FlowId;
}

/// How `maxmin` rates are recomputed; `bottleneck` ignores it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MaxMinSolver {
    /// Replay the last progressive filling from the lowest level a change
    /// touches; only stages whose fill can differ are visited.
    Incremental,
    /// Progressive filling of every connected component a change touches.
    Components,
    /// Progressive filling of a touched component of at most `limit` stages,
    /// the incremental replay of a larger one: a full filling of a handful
    /// of stages costs less than the replay's bookkeeping, and the replay
    /// visits a few of a large component's stages where the filling visits
    /// all of them.
    BySize {
        /// The most stages of a component that is filled in full.
        limit: u32,
    },
}

/// The default `limit` of [`MaxMinSolver::BySize`]: `cargo bench --bench
/// flows` measures the full filling and the replay on small systems.
pub const FILL_LIMIT: u32 = 16;

/// For how many solves a [`MaxMinSolver::BySize`] probe that found a large
/// component is believed.
const LARGE_HOLD: u32 = 1024;

/// The most live flows a solve advances all of, as 0.1.0 advances every
/// flow at every solve: up to here the lazy replay costs a fraction of a
/// solve; past it the replay would cost a step per live flow a solve
/// (randidx_1000_bottleneck 232 M → 529 M instructions), where the
/// incremental update costs what it touches.
pub const EVERY_FLOW_LIMIT: usize = 256;

/// One flow slot: what the walk does not read (the walk's fields are in
/// the flow's [`Entry`]).
#[derive(Clone, Debug, Default)]
struct Flow {
    /// All its stages (the walk reads the first two from the entry).
    stages: SmallVec<[u32; 2]>,
    /// The handle of the flow in this slot.
    id: FlowId,
    /// `pos[k]`: this flow's index in `flows_on[stages[k]]`.
    pos: SmallVec<[u32; 2]>,
    /// The first solve (numbered as [`FlowSystem::first_solve`]) not yet
    /// applied to `remaining`.
    k_mark: u64,
    /// Remaining work at `t_mark`, after the solves before `k_mark`.
    remaining: f64,
    t_mark: f64,
    start: f64,
    order: u64,
}

// The slot's size (x86-64): the memory a flow costs (docs/performance-log.md).
#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::size_of::<Flow>() == 96);

impl Flow {
    /// The remaining work at `now` of this flow running at `rate`.
    fn remaining_at(&self, rate: f64, now: f64) -> f64 {
        if rate == f64::INFINITY {
            return 0.0;
        }
        let r = if rate > 0.0 {
            self.remaining - rate * (now - self.t_mark)
        } else {
            self.remaining
        };
        if r <= 0.0 { 0.0 } else { r }
    }

    /// `(remaining, t_mark)` after the solves at `times` (0.1.0's advance
    /// at every solve, at `rate`, step by step: each step rounds); `gaps[k]`
    /// is `times[k] − times[k − 1]` (`gaps[0]` is not read: the first step
    /// is from `t_mark`). A remainder at or below zero stays so (each step
    /// takes a product ≥ 0 off), so one clamp at the end is the clamp at
    /// every step.
    fn replayed(&self, rate: f64, times: &[f64], gaps: &[f64]) -> (f64, f64) {
        let (Some(&first), Some(&last)) = (times.first(), times.last()) else {
            return (self.remaining, self.t_mark);
        };
        if rate == f64::INFINITY {
            return (0.0, last);
        }
        let mut r = self.remaining;
        if rate > 0.0 {
            r -= rate * (first - self.t_mark);
            // Four steps a turn (in order: each subtraction rounds): the
            // loop is most of a flow-heavy run's solves.
            let mut quads = gaps[1..].chunks_exact(4);
            for q in &mut quads {
                r -= rate * q[0];
                r -= rate * q[1];
                r -= rate * q[2];
                r -= rate * q[3];
            }
            for &gap in quads.remainder() {
                r -= rate * gap;
            }
            if r <= 0.0 {
                r = 0.0;
            }
        }
        (r, last)
    }

    /// Its end after a catch-up to the solve at `t_mark`.
    fn end(&self, rate: f64) -> f64 {
        if rate == f64::INFINITY || self.remaining == 0.0 {
            self.t_mark
        } else {
            self.t_mark + self.remaining / rate
        }
    }
}

/// A bound on how far the end of a flow that `steps` solves have not yet
/// advanced may lie from its heap key `key`: each step rounds the
/// remainder and the end by an ulp or so of the end's magnitude.
fn drift(key: f64, steps: usize) -> f64 {
    (steps as f64 + 2.0) * 16.0 * f64::EPSILON * key.abs().max(1.0)
}

/// A flow's entry for the solvers: what they read of it (its first two
/// stages, its rate, the stage that froze it) and its scratch of the
/// current solve (flags, new rate), in 32 bytes, so a flow the walk meets
/// costs one load of one entry.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(32))]
struct Entry {
    rate: f64,
    /// The rate this solve gives it (valid when its flags say frozen or
    /// listed).
    new_rate: f64,
    /// Its two stages if it has two; `[NONE, NONE]` if it has one or more
    /// than two, which are in its [`Flow`]'s list.
    pair: [u32; 2],
    /// `maxmin`: the stage whose filling froze this flow (its rate is that
    /// stage's level), or `NONE`. A solve overwrites it when it freezes the
    /// flow: no step reads the old value of a frozen flow.
    froze_at: u32,
    /// `epoch << 3 | flags`: the flow's flags in the solve of that epoch
    /// (none in any other).
    mark: u32,
}

const _: () = assert!(std::mem::size_of::<Entry>() == 32);

impl Default for Entry {
    fn default() -> Self {
        Entry {
            rate: 0.0,
            new_rate: 0.0,
            pair: [NONE, NONE],
            froze_at: NONE,
            mark: 0,
        }
    }
}

impl Entry {
    /// An entry for a flow on `stages` at rate 0, frozen nowhere.
    fn new(stages: &[u32]) -> Entry {
        let pair = match *stages {
            [s, t] => [s, t],
            _ => [NONE, NONE],
        };
        Entry {
            pair,
            ..Entry::default()
        }
    }

    /// The flow's flags in the solve whose mark is `ep` (`epoch << 3`):
    /// `mark ^ ep` is the flags if the epochs agree, at least 8 if not.
    #[inline(always)]
    fn flags(&self, ep: u32) -> u8 {
        let x = self.mark ^ ep;
        if x < 8 { x as u8 } else { 0 }
    }

    /// Sets `flag` among the flow's flags of the solve whose mark is `ep`.
    #[inline(always)]
    fn set_flag(&mut self, ep: u32, flag: u8) {
        if self.mark ^ ep >= 8 {
            self.mark = ep;
        }
        self.mark |= u32::from(flag);
    }
}

/// `v[i]`, unchecked in a release build.
///
/// # Safety
/// `i < v.len()`: callers say which invariant gives it.
#[inline(always)]
unsafe fn at<T>(v: &[T], i: u32) -> &T {
    debug_assert!((i as usize) < v.len(), "index {i} within {}", v.len());
    // SAFETY: the caller's.
    unsafe { v.get_unchecked(i as usize) }
}

/// `&mut v[i]`, unchecked in a release build.
///
/// # Safety
/// `i < v.len()`: callers say which invariant gives it.
#[inline(always)]
unsafe fn at_mut<T>(v: &mut [T], i: u32) -> &mut T {
    debug_assert!((i as usize) < v.len(), "index {i} within {}", v.len());
    // SAFETY: the caller's.
    unsafe { v.get_unchecked_mut(i as usize) }
}

/// `if cond { a } else { b }` for floats, on their bits: x86-64 has no
/// conditional move for a float register, so a float select compiles to a
/// branch, which a random `cond` mispredicts half the time.
#[inline(always)]
fn select_f64(cond: bool, a: f64, b: f64) -> f64 {
    let mask = u64::from(cond).wrapping_neg();
    f64::from_bits((a.to_bits() & mask) | (b.to_bits() & !mask))
}

/// Sets slot `i`'s `early` flag to `to`, keeping the count of those set.
fn mark_early(early: &mut [bool], earlies: &mut usize, i: u32, to: bool) {
    let was = std::mem::replace(&mut early[i as usize], to);
    *earlies = *earlies + usize::from(to) - usize::from(was);
}

/// Appends `x` to `v` if `cond`, without a branch on `cond`: `x` is written
/// past the end either way and the length grows by `cond` (the walk's
/// "first time this stage is met" tests are as random as the stages).
#[inline(always)]
fn push_if(v: &mut Vec<u32>, x: u32, cond: bool) {
    if v.len() == v.capacity() {
        v.reserve(1);
    }
    let len = v.len();
    // SAFETY: `len < capacity` (reserved above), so the write is inside the
    // allocation, and the length covers only initialized slots.
    unsafe {
        v.as_mut_ptr().add(len).write(x);
        v.set_len(len + usize::from(cond));
    }
}

/// The stages of the flow in slot `f`, whose pair is `pair` (a copy of its
/// entry's, so that the caller may write the entries while it reads them).
#[inline(always)]
fn stages_of<'a>(pair: &'a [u32; 2], flows: &'a [Flow], f: u32) -> &'a [u32] {
    if pair[1] != NONE {
        pair
    } else {
        &flows[f as usize].stages
    }
}

/// Calls `each(t)` for every stage `t` but `s` of the flow in slot `f`,
/// which holds `s`, in the order of its stages; `pair` as in [`stages_of`].
/// A flow on two stages has one other, `pair[0] ^ pair[1] ^ s`, found
/// without a loop (most flows the walk meets are on two).
#[inline(always)]
fn each_other(pair: [u32; 2], flows: &[Flow], f: u32, s: u32, mut each: impl FnMut(u32)) {
    debug_assert!(stages_of(&pair, flows, f).contains(&s), "the flow holds s");
    if pair[1] != NONE {
        each(pair[0] ^ pair[1] ^ s);
    } else {
        for &t in &flows[f as usize].stages {
            if t != s {
                each(t);
            }
        }
    }
}

/// The first stage `t` but `s` of the flow in slot `f` (which holds `s`)
/// for which `test(t)`, in the order of [`each_other`].
#[inline(always)]
fn find_other(
    pair: [u32; 2],
    flows: &[Flow],
    f: u32,
    s: u32,
    test: impl Fn(u32) -> bool,
) -> Option<u32> {
    debug_assert!(stages_of(&pair, flows, f).contains(&s), "the flow holds s");
    if pair[1] != NONE {
        let t = pair[0] ^ pair[1] ^ s;
        test(t).then_some(t)
    } else {
        flows[f as usize]
            .stages
            .iter()
            .copied()
            .find(|&t| t != s && test(t))
    }
}

/// An event of the incremental update other than a stage's fill, packed
/// into one integer whose order is the walk's: level, then kind, then
/// stage. A level is ≥ +0, and the bits of non-negative floats order as
/// the floats do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Mark(u128);

impl Mark {
    /// Above every mark (a level's bits are at most ∞'s): the mark heap's
    /// sentinel.
    const MAX: Mark = Mark(u128::MAX);

    fn new(level: f64, kind: MarkKind, stage: u32) -> Mark {
        debug_assert!(level >= 0.0, "a level is not negative");
        // `+ 0.0` turns a −0 into +0, whose bits order below every level.
        let bits = (level + 0.0).to_bits();
        Mark(u128::from(bits) << 64 | (kind as u128) << 32 | u128::from(stage))
    }

    fn level(self) -> f64 {
        f64::from_bits((self.0 >> 64) as u64)
    }

    fn kind(self) -> MarkKind {
        match (self.0 >> 32) as u8 {
            0 => MarkKind::Seed,
            1 => MarkKind::Fill,
            2 => MarkKind::Replay,
            _ => MarkKind::Release,
        }
    }

    fn stage(self) -> u32 {
        self.0 as u32
    }
}

/// At one level: seeds before fills, fills before replays, replays before
/// releases (`incremental.rs` says why).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum MarkKind {
    Seed = 0,
    Fill = 1,
    Replay = 2,
    Release = 3,
}

/// A stage's entry in the scratch of one solve, valid when its mark is the
/// solve's: the fields a filling reads together, in one place.
#[derive(Clone, Copy, Debug, Default)]
struct StageScratch {
    /// Flows on it not yet frozen in this solve.
    unfrozen: u32,
    /// φ minus the rates of its frozen flows.
    residual: f64,
    new_level: f64,
    /// The level it would fill at next, `residual / unfrozen` clamped to the
    /// level current when that last changed.
    cand: f64,
    /// The least `cand` of a fill mark pushed for it (∞ for none); a `cand`
    /// that drops below gets a new mark.
    low: f64,
}

/// Buffers of one solve, reused.
///
/// A stage's flags are one byte in an array of their own, cleared at the
/// start of the next solve through the list of the stages this one
/// flagged: the walk tests the flags of many stages it does not otherwise
/// read, and a test is one load of a byte that stays in the first-level
/// cache. A flow's flags are in its [`Entry`], valid when their epoch is
/// the solve's.
#[derive(Clone, Debug, Default)]
struct Scratch {
    /// The solve's epoch shifted by 3, as an entry's mark keeps it (never 0,
    /// which no entry is valid at).
    epoch: u32,
    /// Each stage's flags in this solve (0 for one it has not met).
    sflag: Vec<u8>,
    /// The stages whose flags this solve set: the stages it visited.
    flagged: Vec<u32>,
    stage: Vec<StageScratch>,
    /// Stages visited by this solve, in visiting order.
    stages: Vec<u32>,
    /// Flows whose new rate is set, in order (a frozen flow only if its
    /// rate or `froze_at` changes).
    flows: Vec<u32>,
    /// The events of a filling or of the incremental walk, fills among
    /// them.
    marks: MarkHeap,
    /// The old levels of the stages that filled with their release not yet
    /// marked (`S_RELEASE_DUE`): the levels at which those releases would
    /// have popped and done nothing but raise the walk's current level.
    floors: Vec<f64>,
}

// Stage flags.
const S_VISITED: u8 = 1;
const S_FILLED: u8 = 2;
const S_REPLAY_SCHEDULED: u8 = 4;
const S_REPLAYED: u8 = 8;
/// Met by a probe of [`MaxMinSolver::BySize`] in a component larger than
/// its limit.
const S_LARGE: u8 = 16;
/// A flow of it started since the last solve (the incremental update
/// looks at it at the started flow's seed first).
const S_STARTED: u8 = 32;
/// Dirty, with flows that froze there before still rising, and its
/// release not yet marked: its candidate has stayed at or below its old
/// level so far.
const S_RELEASE_DUE: u8 = 64;
// Flow flags.
const F_SEEN: u8 = 1;
const F_FROZEN: u8 = 2;
const F_TOUCHED: u8 = 4;

/// The epoch after which the entries' marks are cleared and epochs start
/// again at 1.
const LAST_EPOCH: u32 = ((1 << 29) - 1) << 3;

impl Scratch {
    fn begin(&mut self, n_stages: usize, entries: &mut [Entry]) {
        if self.epoch == LAST_EPOCH {
            entries.iter_mut().for_each(|e| e.mark = 0);
            self.epoch = 0;
        }
        self.epoch += 8;
        for &s in &self.flagged {
            self.sflag[s as usize] = 0;
        }
        self.flagged.clear();
        if self.stage.len() < n_stages {
            self.stage.resize(n_stages, StageScratch::default());
            self.sflag.resize(n_stages, 0);
        }
        self.stages.clear();
        self.flows.clear();
        self.marks.clear();
        self.floors.clear();
    }

    /// `s`'s flags in this solve.
    #[inline(always)]
    fn sflags(&self, s: u32) -> u8 {
        // SAFETY: `s` is a stage index (every stage index the system holds
        // was checked against `flows_on` when its flow started), and
        // `begin` sizes `sflag` to the stages before a solve reads it.
        unsafe { *at(&self.sflag, s) }
    }

    /// Sets `flag` among `s`'s flags in this solve.
    #[inline(always)]
    fn set_sflag(&mut self, s: u32, flag: u8) {
        // SAFETY: as in `sflags`.
        let m = unsafe { at_mut(&mut self.sflag, s) };
        let first = *m == 0;
        *m |= flag;
        push_if(&mut self.flagged, s, first);
    }

    /// `s`'s entry in this solve's scratch.
    #[inline(always)]
    fn stage_mut(&mut self, s: u32) -> &mut StageScratch {
        // SAFETY: as in `sflags` (`begin` sizes `stage` with `sflag`).
        unsafe { at_mut(&mut self.stage, s) }
    }

    /// Replaces `s`'s flags of this solve by `flags` (`s` is flagged).
    fn reset_sflags(&mut self, s: u32, flags: u8) {
        debug_assert!(self.sflag[s as usize] != 0, "a reset stage is flagged");
        self.sflag[s as usize] = flags;
    }

    /// Gives `e` (the entry of slot `f`) its new rate, frozen by
    /// `froze_at` (listed once per solve).
    fn set_rate(&mut self, e: &mut Entry, f: u32, rate: f64, froze_at: u32) {
        if e.flags(self.epoch) & F_SEEN == 0 {
            e.set_flag(self.epoch, F_SEEN);
            self.flows.push(f);
        }
        e.new_rate = rate;
        e.froze_at = froze_at;
    }

    /// Freezes `e` (the entry of slot `f`) at `rate`, frozen by stage
    /// `froze_at`. Listed for `FlowSystem::apply` only if its rate or
    /// `froze_at` changes: most flows a solve freezes keep both.
    #[inline(always)]
    fn freeze(&mut self, e: &mut Entry, f: u32, rate: f64, froze_at: u32) {
        let changed = rate != e.rate || froze_at != e.froze_at;
        e.set_flag(self.epoch, F_FROZEN);
        e.new_rate = rate;
        e.froze_at = froze_at;
        if changed && e.mark & u32::from(F_SEEN) == 0 {
            e.mark |= u32::from(F_SEEN);
            self.flows.push(f);
        }
    }
}

/// The flows on the shared stages, their rates and their ends.
#[derive(Clone, Debug)]
pub struct FlowSystem {
    policy: Share,
    solver: MaxMinSolver,
    /// Incidence: the flows (slots) on each stage, beside its capacity φ,
    /// (`maxmin`) the level at which it filled (∞ if it froze no flow) and
    /// its load (Σ rates of its flows).
    flows_on: Incidence,
    /// Live flows' handles, each naming its slot.
    handles: SlotMap<FlowId, u32>,
    flows: Vec<Flow>,
    /// Each slot's [`Entry`], beside `flows`.
    entries: Vec<Entry>,
    free: Vec<u32>,
    next_order: u64,
    /// When each flow ends, in order.
    ends: EndQueue,
    /// The solves' times, for flows advanced lazily.
    log: SolveLog,
    /// What changed since the last solve.
    pending: Pending,
    /// Which stages lie in a component too large to fill.
    large: LargeComponents,
    scratch: Scratch,
}

impl FlowSystem {
    /// A system over stages `0..capacity.len()`; `capacity[s]` is φ of stage
    /// `s` (only the shared ones are used; `f64::INFINITY` allowed).
    pub fn new(capacity: Vec<f64>, policy: Share) -> Self {
        Self::with_solver(capacity, policy, MaxMinSolver::BySize { limit: FILL_LIMIT })
    }

    /// As [`FlowSystem::new`], choosing how `maxmin` rates are recomputed.
    pub fn with_solver(capacity: Vec<f64>, policy: Share, solver: MaxMinSolver) -> Self {
        let n = capacity.len();
        let capacity = capacity.into_iter().map(|c| if c > 0.0 { c } else { 0.0 });
        FlowSystem {
            policy,
            solver,
            flows_on: Incidence::new(capacity),
            handles: SlotMap::with_key(),
            flows: Vec::new(),
            entries: Vec::new(),
            free: Vec::new(),
            next_order: 0,
            ends: EndQueue::default(),
            log: SolveLog::default(),
            pending: Pending::new(n),
            large: LargeComponents::new(n),
            scratch: Scratch::default(),
        }
    }

    /// Changes how `maxmin` rates are recomputed from the next solve on;
    /// every method leaves the bookkeeping the others start from.
    pub fn set_solver(&mut self, solver: MaxMinSolver) {
        self.solver = solver;
    }

    /// Holds a [`MaxMinSolver::BySize`] probe's "large" for `solves` solves
    /// instead of [`LARGE_HOLD`].
    #[cfg(test)]
    fn set_large_hold(&mut self, solves: u32) {
        self.large.hold = solves;
    }

    /// The sharing policy.
    pub fn policy(&self) -> Share {
        self.policy
    }

    /// A flow of `work > 0` starts at `now` on `stages` (distinct stage
    /// indices). Its rate is 0 until the next [`FlowSystem::solve`]. The
    /// solver knows no owner: the engine links a flow to its session
    /// (engine/data/flow_entity.rs).
    pub fn start(&mut self, now: f64, stages: &[u32], work: f64) -> FlowId {
        debug_assert!(work > 0.0, "a flow starts with positive work");
        debug_assert!(!stages.is_empty(), "a flow holds at least one stage");
        let index = match self.free.pop() {
            Some(i) => i,
            None => {
                self.flows.push(Flow::default());
                self.entries.push(Entry::default());
                self.ends.early.push(false);
                (self.flows.len() - 1) as u32
            }
        };
        let id = self.handles.insert(index);
        let mut pos = std::mem::take(&mut self.flows[index as usize].pos);
        pos.clear();
        for &s in stages {
            pos.push(self.flows_on.push(s, index));
            self.mark_load(s);
        }
        let order = self.next_order;
        self.next_order += 1;
        let flow = &mut self.flows[index as usize];
        flow.id = id;
        flow.stages.clear();
        flow.stages.extend_from_slice(stages);
        flow.pos = pos;
        flow.k_mark = self.log.first + self.log.times.len() as u64;
        flow.remaining = work;
        flow.t_mark = now;
        flow.start = now;
        flow.order = order;
        // Its mark is of an earlier solve's epoch: no flags in the next.
        let mark = self.entries[index as usize].mark;
        self.entries[index as usize] = Entry {
            mark,
            ..Entry::new(stages)
        };
        self.pending.started.push(id);
        id
    }

    /// Removes a finished flow; returns its start time. The engine
    /// calls [`FlowSystem::solve`] again at the end of the settle.
    ///
    /// # Panics
    /// If `id` names no live flow (the engine finishes a flow once).
    pub fn finish(&mut self, now: f64, id: FlowId) -> f64 {
        let _ = now;
        let index = self.check(id);
        self.handles.remove(id);
        let flow = std::mem::take(&mut self.flows[index as usize].stages);
        let pos = std::mem::take(&mut self.flows[index as usize].pos);
        let rate = self.entries[index as usize].rate;
        for (k, &s) in flow.iter().enumerate() {
            let p = pos[k];
            if let Some(moved) = self.flows_on.swap_remove(s, p) {
                let m = &mut self.flows[moved as usize];
                let j = m
                    .stages
                    .iter()
                    .position(|&t| t == s)
                    .expect("back-index: a flow on s lists s");
                m.pos[j] = p;
            }
            self.mark_load(s);
            if self.policy == Share::MaxMin && self.is_finite(s) {
                self.pending
                    .seeds
                    .push((s, rate.min(self.flows_on.level(s))));
            }
        }
        self.ends.heap.remove(index);
        self.clear_early(index);
        self.exact_early_top();
        let f = &mut self.flows[index as usize];
        f.stages = flow;
        f.pos = pos;
        f.stages.clear();
        f.pos.clear();
        self.free.push(index);
        f.start
    }

    /// Re-solves the rates after the starts and finishes since the last
    /// solve, at `now`: every flow of a system of at most
    /// [`EVERY_FLOW_LIMIT`] is advanced to `now` and gets its end anew (see
    /// the module's comment); in a larger one, every flow whose rate changes.
    pub fn solve(&mut self, now: f64) {
        self.log.solves = self.log.solves.wrapping_add(1);
        if self.log.solves == 0 {
            self.large.until.iter_mut().for_each(|u| *u = 0);
            self.log.solves = 1;
        }
        if self.handles.len() <= EVERY_FLOW_LIMIT {
            let gap = self.log.times.last().map_or(0.0, |&t| now - t);
            self.log.times.push(now);
            self.log.gaps.push(gap);
            // Keys are as of each flow's `k_mark` again, and within
            // [`drift`] of its end: no bound stays below one.
            self.rekey_earlies();
        }
        self.scratch
            .begin(self.flows_on.stages(), &mut self.entries);
        let touched = self.pending.load.len();
        match (self.policy, self.solver) {
            (Share::Bottleneck, _) => self.solve_bottleneck(touched),
            (Share::MaxMin, MaxMinSolver::Components) => {
                self.solve_components(touched, None);
            }
            (Share::MaxMin, MaxMinSolver::Incremental) => {
                self.solve_unbounded_starts();
                self.solve_incremental();
            }
            (Share::MaxMin, MaxMinSolver::BySize { limit }) => {
                if self.solve_components(touched, Some(limit)) {
                    self.solve_incremental();
                }
            }
        }
        self.pending.started.clear();
        self.pending.seeds.clear();
        self.apply(now);
        // While no flow is behind the last advancing solve, the heap's keys
        // are the flows' ends.
        if self.next_solve() != self.log.all_advanced_to {
            self.exact_top();
            self.trim_solve_times();
        }
        self.exact_early_top();
        self.settle_loads();
    }

    /// The number of the next solve: a flow with this `k_mark` is advanced
    /// to the last.
    fn next_solve(&self) -> u64 {
        self.log.first + self.log.times.len() as u64
    }

    /// Advances slot `i` to the last solve, as 0.1.0 advances every flow at
    /// every solve: a flow of work 30 at rate 30 from 0.4, with a solve at
    /// 0.6000000000000001 (another flow's start, in any component), ends at
    /// 1.4000000000000001, not at 1.4, so after an iteration ending at 1.4.
    /// Inlined: most slots are advanced already (every one, past
    /// [`EVERY_FLOW_LIMIT`] flows), and a call costs more than the test.
    #[inline(always)]
    fn catch_up(&mut self, i: u32) {
        if self.flows[i as usize].k_mark != self.next_solve() {
            self.replay_solves(i);
        }
    }

    /// [`FlowSystem::catch_up`] of a slot behind the last solve.
    #[inline(never)]
    fn replay_solves(&mut self, i: u32) {
        let next = self.next_solve();
        let f = &self.flows[i as usize];
        let from = (f.k_mark - self.log.first) as usize;
        let (r, t) = f.replayed(
            self.entries[i as usize].rate,
            &self.log.times[from..],
            &self.log.gaps[from..],
        );
        let f = &mut self.flows[i as usize];
        f.remaining = r;
        f.t_mark = t;
        f.k_mark = next;
    }

    /// Makes the end heap's top the true next end: the top and every key
    /// within [`drift`] of it are advanced to the last solve and re-keyed,
    /// until the top is advanced and no key not advanced is that near.
    fn exact_top(&mut self) {
        let next = self.next_solve();
        let steps = self.log.times.len();
        loop {
            let Some((top, (key, _))) = self.ends.heap.peek() else {
                return;
            };
            if self.flows[top as usize].k_mark != next {
                self.rekey_advanced(top);
                continue;
            }
            let mut near = std::mem::take(&mut self.ends.near);
            near.clear();
            self.ends
                .heap
                .keys_up_to(key + drift(key, steps), &mut near);
            near.retain(|&i| self.flows[i as usize].k_mark != next);
            let done = near.is_empty();
            for &i in &near {
                self.rekey_advanced(i);
            }
            self.ends.near = near;
            if done {
                return;
            }
        }
    }

    /// Re-keys the top of the end heap while it is `early`: every other
    /// key is at or below its flow's end, so a top that is not `early` is
    /// the next end.
    fn exact_early_top(&mut self) {
        while self.ends.earlies > 0 {
            let Some((top, _)) = self.ends.heap.peek() else {
                return;
            };
            if !self.ends.early[top as usize] {
                return;
            }
            self.clear_early(top);
            self.rekey_advanced(top);
        }
    }

    /// Gives every `early` slot its end.
    fn rekey_earlies(&mut self) {
        if self.ends.earlies == 0 {
            return;
        }
        for i in 0..self.ends.early.len() as u32 {
            if self.ends.early[i as usize] {
                self.clear_early(i);
                let f = &self.flows[i as usize];
                let end = f.end(self.entries[i as usize].rate);
                self.ends.heap.set(i, (end, f.order));
            }
        }
    }

    /// Slot `i`'s heap key is its end, or it is not in the heap.
    fn clear_early(&mut self, i: u32) {
        mark_early(&mut self.ends.early, &mut self.ends.earlies, i, false);
    }

    /// Advances slot `i` (in the end heap) and gives it its end anew.
    fn rekey_advanced(&mut self, i: u32) {
        self.catch_up(i);
        let f = &self.flows[i as usize];
        let end = f.end(self.entries[i as usize].rate);
        self.ends.heap.set(i, (end, f.order));
    }

    /// Keeps the solve times few: once they outnumber the live flows twice
    /// (and 64), or once the system has grown past [`EVERY_FLOW_LIMIT`]
    /// (whose solves add none), every flow is advanced to the last
    /// advancing solve (the steps it would replay later anyway) and only
    /// that solve's time is kept.
    fn trim_solve_times(&mut self) {
        let live = self.handles.len();
        if live <= EVERY_FLOW_LIMIT && self.log.times.len() <= 2 * live + 64 {
            return;
        }
        for k in 0..self.flows.len() {
            if self.handles.contains_key(self.flows[k].id) {
                self.catch_up(k as u32);
            }
        }
        let flows = &self.flows;
        let entries = &self.entries;
        self.ends.heap.rekey_all(|i| {
            (
                flows[i as usize].end(entries[i as usize].rate),
                flows[i as usize].order,
            )
        });
        self.ends.early.iter_mut().for_each(|e| *e = false);
        self.ends.earlies = 0;
        let last = *self.log.times.last().expect("a solve pushed its time");
        self.log.first = self.next_solve() - 1;
        self.log.times.clear();
        self.log.times.push(last);
        self.log.gaps.clear();
        self.log.gaps.push(0.0);
        self.log.all_advanced_to = self.next_solve();
    }

    /// The flow with the earliest end, ties to the one started first, as
    /// (end time, id); `None` if no flow has a positive rate.
    pub fn next_end(&self) -> Option<(f64, FlowId)> {
        self.ends
            .heap
            .peek()
            .map(|(index, (end, _))| (end, self.flows[index as usize].id))
    }

    /// The stages `id` holds, in the order it was started with.
    pub fn stages_of(&self, id: FlowId) -> &[u32] {
        &self.flows[self.check(id) as usize].stages
    }

    /// `n_s`: the number of flows holding stage `s`.
    pub fn count(&self, s: u32) -> usize {
        self.flows_on.len(s)
    }

    /// Σ remaining work at `now` of the flows on `s`.
    pub fn work(&self, s: u32, now: f64) -> f64 {
        self.flows_on
            .on(s)
            .iter()
            .map(|&f| self.remaining_of(f, now))
            .sum()
    }

    /// The remaining work of slot `f` at `now`, advanced through the solves
    /// it has not applied.
    fn remaining_of(&self, f: u32, now: f64) -> f64 {
        let flow = &self.flows[f as usize];
        let rate = self.entries[f as usize].rate;
        let from = (flow.k_mark - self.log.first) as usize;
        let (remaining, t_mark) =
            flow.replayed(rate, &self.log.times[from..], &self.log.gaps[from..]);
        Flow {
            remaining,
            t_mark,
            ..Flow::default()
        }
        .remaining_at(rate, now)
    }

    /// Σ rates of the flows on `s` (utilisation is `load / φ_s`).
    pub fn load(&self, s: u32) -> f64 {
        self.flows_on.load(s)
    }

    /// `load(s) / φ_s`: the utilisation of stage `s`.
    pub fn utilisation(&self, s: u32) -> f64 {
        self.flows_on.load(s) / self.flows_on.capacity(s)
    }

    /// The stages whose [`FlowSystem::load`] changed in the last solve, in
    /// the order the solve met them (deterministic; unsorted: the engine
    /// sets each one's utilisation on its own).
    pub fn changed_stages(&self) -> &[u32] {
        &self.pending.changed
    }

    /// How many stages the last solve visited: the stages of the components
    /// it filled, the dirty and replayed stages of an incremental update
    /// (and those a [`MaxMinSolver::BySize`] probe met), or the stages whose
    /// flows' `bottleneck` rates it recomputed. For benches: the share of the
    /// system one update reads.
    pub fn visited_stages(&self) -> usize {
        self.scratch.flagged.len()
    }

    /// The rate of `id` (0 before its first solve).
    pub fn rate(&self, id: FlowId) -> f64 {
        self.entries[self.check(id) as usize].rate
    }

    /// The remaining work of `id` at `now`.
    pub fn remaining(&self, id: FlowId, now: f64) -> f64 {
        self.remaining_of(self.check(id), now)
    }

    /// Whether `id` names a flow not yet finished.
    pub fn is_live(&self, id: FlowId) -> bool {
        self.handles.contains_key(id)
    }

    /// The number of live flows.
    pub fn len(&self) -> usize {
        self.handles.len()
    }

    /// Whether no flow is live.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The live flows, in the slotmap's order (deterministic, not start
    /// order).
    pub fn ids(&self) -> impl Iterator<Item = FlowId> + '_ {
        self.handles.keys()
    }

    fn check(&self, id: FlowId) -> u32 {
        match self.handles.get(id) {
            Some(&index) => index,
            None => panic!("flow {id:?} is not live"),
        }
    }

    fn is_finite(&self, s: u32) -> bool {
        self.flows_on.capacity(s).is_finite()
    }

    fn mark_load(&mut self, s: u32) {
        if !self.pending.is_load[s as usize] {
            self.pending.is_load[s as usize] = true;
            self.pending.load.push(s);
        }
    }

    /// Started flows none of whose stages is finite: rate ∞.
    fn solve_unbounded_starts(&mut self) {
        for k in 0..self.pending.started.len() {
            let Some(&index) = self.handles.get(self.pending.started[k]) else {
                continue;
            };
            let f = &self.flows[index as usize];
            if f.stages.iter().all(|&s| !self.is_finite(s)) {
                let e = &mut self.entries[index as usize];
                self.scratch.set_rate(e, index, f64::INFINITY, NONE);
            }
        }
    }

    /// Gives every flow of `scratch.flows` its new rate; a flow whose rate
    /// changes is advanced to `now` and gets a new end.
    fn apply(&mut self, now: f64) {
        let large = self.handles.len() > EVERY_FLOW_LIMIT;
        assert!(
            self.entries.len() == self.flows.len() && self.ends.early.len() == self.flows.len(),
            "every slot has an entry and an early flag"
        );
        for k in 0..self.scratch.flows.len() {
            let i = self.scratch.flows[k];
            // SAFETY (here and below): the solvers list slots only.
            let e = unsafe { at_mut(&mut self.entries, i) };
            let rate = e.new_rate;
            if rate == e.rate {
                continue;
            }
            self.catch_up(i);
            let e = unsafe { at_mut(&mut self.entries, i) };
            let f = unsafe { at_mut(&mut self.flows, i) };
            // To `now`: a no-op after a solve that advanced every flow
            // (`t_mark` is `now`), the advance of this one after one that
            // did not.
            f.remaining = f.remaining_at(e.rate, now);
            f.t_mark = now;
            e.rate = rate;
            if rate > 0.0 {
                let end = if rate == f64::INFINITY || f.remaining == 0.0 {
                    now
                } else {
                    now + f.remaining / rate
                };
                let key = (end, f.order);
                // An end that moves later in a large system keeps its
                // key, below the end (see `early`).
                let early = large && self.ends.heap.key(i).is_some_and(|old| old <= key);
                if !early {
                    self.ends.heap.set(i, key);
                }
                mark_early(&mut self.ends.early, &mut self.ends.earlies, i, early);
            } else {
                self.ends.heap.remove(i);
                mark_early(&mut self.ends.early, &mut self.ends.earlies, i, false);
            }
            let pair = e.pair;
            for &s in stages_of(&pair, &self.flows, i) {
                // `mark_load`, on the fields it writes, without a branch.
                let pending = std::mem::replace(&mut self.pending.is_load[s as usize], true);
                push_if(&mut self.pending.load, s, !pending);
            }
        }
    }

    /// Recomputes the loads of the pending stages and lists those that changed.
    fn settle_loads(&mut self) {
        self.pending.changed.clear();
        for k in 0..self.pending.load.len() {
            let s = self.pending.load[k];
            self.pending.is_load[s as usize] = false;
            let entries = &self.entries;
            // SAFETY: a stage's list holds slots, each with an entry.
            let changed = self
                .flows_on
                .settle_load(s, |f| unsafe { at(entries, f) }.rate);
            push_if(&mut self.pending.changed, s, changed);
        }
        self.pending.load.clear();
    }
}
