//! The flow solver: jobs ("flows") that hold several shared `ps` stages at
//! once, with rates set by the program's `share` policy (spec §6.4, RFC #118).
//!
//! A flow keeps its remaining work as of the last time its rate changed
//! (`t_mark`) and is advanced lazily: `remaining(now) = remaining − rate ×
//! (now − t_mark)`. Its end is `t_mark + remaining / rate`, computed once when
//! the rate changes, so flows that the hand derivation ends together get the
//! same end by the same arithmetic; a remainder within `TOL × work` of zero is
//! zero.
//!
//! Invariants (after every [`FlowSystem::solve`], property-tested):
//! * for every stage `s`, `Σ rate(f on s) ≤ φ_s` (relative `1e-9`);
//! * under `maxmin` every flow on a finite stage has a stage that is full and
//!   where no flow has a higher rate (the max-min certificate); a flow whose
//!   stages are all `ps(inf)` has rate ∞ and ends at once;
//! * every `bottleneck` rate is `min over s of φ_s / n_s`, at or below the
//!   `maxmin` rate of the same flow;
//! * the incremental `maxmin` update equals a full progressive filling;
//! * `flows_on[s][flow.pos[k]] == flow` for `s = flow.stages[k]` (back-index);
//! * every flow of positive rate is in the end heap, keyed by (end, start
//!   order); no other is.
//!
//! Architecture invariant: this module knows stage indices and capacities,
//! nothing of the IR beyond [`Share`], nothing of sessions or events; the
//! engine owns the one flow-system event and asks [`FlowSystem::next_end`].
//! Nothing iterates a hash map, and the steady state allocates nothing beyond
//! the amortized growth of its buffers: every buffer lives in the system and
//! is reused.

mod fill;
mod heap;
mod incremental;
#[cfg(test)]
mod oracle;
#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;

use crate::ir::Share;
use heap::IndexedHeap;
use smallvec::SmallVec;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// No stage / no flow.
const NONE: u32 = u32::MAX;

/// Relative tolerance under which two levels tie and a remainder is zero.
pub const TOL: f64 = 1e-12;

/// Whether two levels (rates) are the same up to [`TOL`], relative.
fn same_level(a: f64, b: f64) -> bool {
    a == b || (a - b).abs() <= TOL * a.abs().max(b.abs())
}

/// A stable handle to a flow: a slot index and the slot's generation, so a
/// handle to a finished flow never names the flow that reuses its slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FlowId {
    index: u32,
    generation: u32,
}

/// How `maxmin` rates are recomputed; `bottleneck` ignores it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MaxMinSolver {
    /// Replay the last progressive filling from the lowest level a change
    /// touches; only stages whose fill can differ are visited.
    Incremental,
    /// Progressive filling of every connected component a change touches.
    Components,
}

/// One flow slot.
#[derive(Clone, Debug, Default)]
struct Flow {
    generation: u32,
    is_live: bool,
    stages: SmallVec<[u32; 2]>,
    /// `pos[k]`: this flow's index in `flows_on[stages[k]]`.
    pos: SmallVec<[u32; 2]>,
    work: f64,
    /// Remaining work at `t_mark`.
    remaining: f64,
    t_mark: f64,
    rate: f64,
    start: f64,
    order: u64,
    owner: u64,
    /// `maxmin`: the stage whose filling froze this flow (its rate is that
    /// stage's level), or `NONE`.
    froze_at: u32,
}

impl Flow {
    fn remaining_at(&self, now: f64) -> f64 {
        if self.rate == f64::INFINITY {
            return 0.0;
        }
        let r = if self.rate > 0.0 {
            self.remaining - self.rate * (now - self.t_mark)
        } else {
            self.remaining
        };
        if r <= TOL * self.work { 0.0 } else { r }
    }
}

/// An event of the incremental update other than a stage's fill.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Mark {
    level: f64,
    kind: MarkKind,
    stage: u32,
}

/// At one level: seeds before fills, fills before replays, replays before
/// releases (`incremental.rs` says why).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum MarkKind {
    Seed = 0,
    Replay = 2,
    Release = 3,
}

impl Eq for Mark {}
impl PartialOrd for Mark {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Mark {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.level
            .total_cmp(&other.level)
            .then(self.kind.cmp(&other.kind))
            .then(self.stage.cmp(&other.stage))
    }
}

/// Buffers of one solve, reused; per-stage and per-flow entries are valid
/// only when their epoch is the current one.
#[derive(Clone, Debug, Default)]
struct Scratch {
    epoch: u32,
    /// Stages whose flags this solve set: the stages it visited.
    visited: u32,
    stage_epoch: Vec<u32>,
    stage_flags: Vec<u8>,
    residual: Vec<f64>,
    unfrozen: Vec<u32>,
    new_level: Vec<f64>,
    flow_epoch: Vec<u32>,
    flow_flags: Vec<u8>,
    new_rate: Vec<f64>,
    new_froze_at: Vec<u32>,
    /// Stages visited by this solve, in visiting order.
    stages: Vec<u32>,
    /// Flows whose new rate is set, in order.
    flows: Vec<u32>,
    cand: IndexedHeap,
    marks: BinaryHeap<Reverse<Mark>>,
}

// Stage flags.
const S_VISITED: u8 = 1;
const S_FILLED: u8 = 2;
const S_REPLAY_SCHEDULED: u8 = 4;
const S_REPLAYED: u8 = 8;
// Flow flags.
const F_SEEN: u8 = 1;
const F_FROZEN: u8 = 2;
const F_TOUCHED: u8 = 4;

impl Scratch {
    fn begin(&mut self, n_stages: usize, n_slots: usize) {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.stage_epoch.iter_mut().for_each(|e| *e = 0);
            self.flow_epoch.iter_mut().for_each(|e| *e = 0);
            self.epoch = 1;
        }
        if self.stage_epoch.len() < n_stages {
            self.stage_epoch.resize(n_stages, 0);
            self.stage_flags.resize(n_stages, 0);
            self.residual.resize(n_stages, 0.0);
            self.unfrozen.resize(n_stages, 0);
            self.new_level.resize(n_stages, f64::INFINITY);
            self.cand.grow(n_stages);
        }
        if self.flow_epoch.len() < n_slots {
            self.flow_epoch.resize(n_slots, 0);
            self.flow_flags.resize(n_slots, 0);
            self.new_rate.resize(n_slots, 0.0);
            self.new_froze_at.resize(n_slots, NONE);
        }
        self.visited = 0;
        self.stages.clear();
        self.flows.clear();
        self.cand.clear();
        self.marks.clear();
    }

    fn sflags(&self, s: u32) -> u8 {
        if self.stage_epoch[s as usize] == self.epoch {
            self.stage_flags[s as usize]
        } else {
            0
        }
    }

    fn set_sflag(&mut self, s: u32, flag: u8) {
        let i = s as usize;
        if self.stage_epoch[i] != self.epoch {
            self.stage_epoch[i] = self.epoch;
            self.stage_flags[i] = 0;
            self.visited += 1;
        }
        self.stage_flags[i] |= flag;
    }

    fn fflags(&self, f: u32) -> u8 {
        if self.flow_epoch[f as usize] == self.epoch {
            self.flow_flags[f as usize]
        } else {
            0
        }
    }

    fn set_fflag(&mut self, f: u32, flag: u8) {
        let i = f as usize;
        if self.flow_epoch[i] != self.epoch {
            self.flow_epoch[i] = self.epoch;
            self.flow_flags[i] = 0;
        }
        self.flow_flags[i] |= flag;
    }

    /// Records `f`'s new rate (once per solve).
    fn set_rate(&mut self, f: u32, rate: f64, froze_at: u32) {
        if self.fflags(f) & F_SEEN == 0 {
            self.flows.push(f);
        }
        self.set_fflag(f, F_SEEN);
        self.new_rate[f as usize] = rate;
        self.new_froze_at[f as usize] = froze_at;
    }
}

/// The flows on the shared stages, their rates and their ends.
#[derive(Clone, Debug)]
pub struct FlowSystem {
    policy: Share,
    solver: MaxMinSolver,
    capacity: Vec<f64>,
    /// Incidence: the flows (slot indices) on each stage.
    flows_on: Vec<Vec<u32>>,
    /// `maxmin`: the level at which each stage filled (∞ if it froze no flow).
    level: Vec<f64>,
    /// Σ rates of the flows on each stage.
    load: Vec<f64>,
    flows: Vec<Flow>,
    free: Vec<u32>,
    next_order: u64,
    /// Flow ends: slot → (end, start order).
    ends: IndexedHeap,
    /// Flows started since the last solve.
    started: Vec<FlowId>,
    /// `maxmin` incremental: (stage, level) from which a finish changed it.
    seeds: Vec<(u32, f64)>,
    /// Stages whose load may have changed; the first `touched` of them are
    /// the stages whose flow set changed since the last solve.
    load_pending: Vec<u32>,
    is_load_pending: Vec<bool>,
    changed: Vec<u32>,
    scratch: Scratch,
}

impl FlowSystem {
    /// A system over stages `0..capacity.len()`; `capacity[s]` is φ of stage
    /// `s` (only the shared ones are used; `f64::INFINITY` allowed).
    pub fn new(capacity: Vec<f64>, policy: Share) -> Self {
        Self::with_solver(capacity, policy, MaxMinSolver::Incremental)
    }

    /// As [`FlowSystem::new`], choosing how `maxmin` rates are recomputed.
    pub fn with_solver(capacity: Vec<f64>, policy: Share, solver: MaxMinSolver) -> Self {
        let n = capacity.len();
        let capacity = capacity
            .into_iter()
            .map(|c| if c > 0.0 { c } else { 0.0 })
            .collect();
        FlowSystem {
            policy,
            solver,
            capacity,
            flows_on: vec![Vec::new(); n],
            level: vec![f64::INFINITY; n],
            load: vec![0.0; n],
            flows: Vec::new(),
            free: Vec::new(),
            next_order: 0,
            ends: IndexedHeap::default(),
            started: Vec::new(),
            seeds: Vec::new(),
            load_pending: Vec::new(),
            is_load_pending: vec![false; n],
            changed: Vec::new(),
            scratch: Scratch::default(),
        }
    }

    /// Changes how `maxmin` rates are recomputed from the next solve on;
    /// every method leaves the bookkeeping the others start from.
    pub fn set_solver(&mut self, solver: MaxMinSolver) {
        self.solver = solver;
    }

    /// The sharing policy.
    pub fn policy(&self) -> Share {
        self.policy
    }

    /// A flow of `work > 0` starts at `now` on `stages` (distinct stage
    /// indices); `owner` is returned by [`FlowSystem::finish`]. Its rate is 0
    /// until the next [`FlowSystem::solve`].
    pub fn start(&mut self, now: f64, stages: &[u32], work: f64, owner: u64) -> FlowId {
        debug_assert!(work > 0.0, "a flow starts with positive work");
        debug_assert!(!stages.is_empty(), "a flow holds at least one stage");
        let index = match self.free.pop() {
            Some(i) => i,
            None => {
                self.flows.push(Flow::default());
                (self.flows.len() - 1) as u32
            }
        };
        let mut pos = std::mem::take(&mut self.flows[index as usize].pos);
        pos.clear();
        for &s in stages {
            pos.push(self.flows_on[s as usize].len() as u32);
            self.flows_on[s as usize].push(index);
            self.mark_load(s);
        }
        let order = self.next_order;
        self.next_order += 1;
        let flow = &mut self.flows[index as usize];
        flow.is_live = true;
        flow.stages.clear();
        flow.stages.extend_from_slice(stages);
        flow.pos = pos;
        flow.work = work;
        flow.remaining = work;
        flow.t_mark = now;
        flow.rate = 0.0;
        flow.start = now;
        flow.order = order;
        flow.owner = owner;
        flow.froze_at = NONE;
        let id = FlowId {
            index,
            generation: flow.generation,
        };
        self.started.push(id);
        id
    }

    /// Removes a finished flow; returns its (owner, start time). The engine
    /// calls [`FlowSystem::solve`] again at the end of the settle.
    ///
    /// # Panics
    /// If `id` names no live flow (the engine finishes a flow once).
    pub fn finish(&mut self, now: f64, id: FlowId) -> (u64, f64) {
        let _ = now;
        let index = self.check(id);
        let flow = std::mem::take(&mut self.flows[index as usize].stages);
        let pos = std::mem::take(&mut self.flows[index as usize].pos);
        let rate = self.flows[index as usize].rate;
        for (k, &s) in flow.iter().enumerate() {
            let list = &mut self.flows_on[s as usize];
            let p = pos[k] as usize;
            list.swap_remove(p);
            if let Some(&moved) = list.get(p) {
                let m = &mut self.flows[moved as usize];
                let j = m
                    .stages
                    .iter()
                    .position(|&t| t == s)
                    .expect("back-index: a flow on s lists s");
                m.pos[j] = p as u32;
            }
            self.mark_load(s);
            if self.policy == Share::MaxMin && self.capacity[s as usize].is_finite() {
                self.seeds.push((s, rate.min(self.level[s as usize])));
            }
        }
        self.ends.remove(index);
        let f = &mut self.flows[index as usize];
        f.stages = flow;
        f.pos = pos;
        f.stages.clear();
        f.pos.clear();
        f.is_live = false;
        f.generation = f.generation.wrapping_add(1);
        self.free.push(index);
        (f.owner, f.start)
    }

    /// Re-solves the rates after the starts and finishes since the last
    /// solve, at `now`: flows whose rate changes are advanced to `now` first.
    pub fn solve(&mut self, now: f64) {
        self.scratch.begin(self.capacity.len(), self.flows.len());
        let touched = self.load_pending.len();
        match (self.policy, self.solver) {
            (Share::Bottleneck, _) => self.solve_bottleneck(touched),
            (Share::MaxMin, MaxMinSolver::Components) => self.solve_components(touched),
            (Share::MaxMin, MaxMinSolver::Incremental) => self.solve_incremental(),
        }
        self.started.clear();
        self.seeds.clear();
        self.apply(now);
        self.settle_loads();
    }

    /// The flow with the earliest end, ties to the one started first, as
    /// (end time, id); `None` if no flow has a positive rate.
    pub fn next_end(&self) -> Option<(f64, FlowId)> {
        self.ends.peek().map(|(index, (end, _))| {
            let id = FlowId {
                index,
                generation: self.flows[index as usize].generation,
            };
            (end, id)
        })
    }

    /// The stages `id` holds, in the order it was started with.
    pub fn stages_of(&self, id: FlowId) -> &[u32] {
        &self.flows[self.check(id) as usize].stages
    }

    /// `n_s`: the number of flows holding stage `s`.
    pub fn count(&self, s: u32) -> usize {
        self.flows_on[s as usize].len()
    }

    /// Σ remaining work at `now` of the flows on `s`.
    pub fn work(&self, s: u32, now: f64) -> f64 {
        self.flows_on[s as usize]
            .iter()
            .map(|&f| self.flows[f as usize].remaining_at(now))
            .sum()
    }

    /// Σ rates of the flows on `s` (utilisation is `load / φ_s`).
    pub fn load(&self, s: u32) -> f64 {
        self.load[s as usize]
    }

    /// The stages whose [`FlowSystem::load`] changed in the last solve, in
    /// increasing index order.
    pub fn changed_stages(&self) -> &[u32] {
        &self.changed
    }

    /// How many stages the last solve visited: the stages of the components
    /// it filled, the dirty and replayed stages of an incremental update, or
    /// the stages whose flows' `bottleneck` rates it recomputed. For benches:
    /// the share of the system one update reads.
    pub fn visited_stages(&self) -> usize {
        self.scratch.visited as usize
    }

    /// The rate of `id` (0 before its first solve).
    pub fn rate(&self, id: FlowId) -> f64 {
        self.flows[self.check(id) as usize].rate
    }

    /// The remaining work of `id` at `now`.
    pub fn remaining(&self, id: FlowId, now: f64) -> f64 {
        self.flows[self.check(id) as usize].remaining_at(now)
    }

    /// Whether `id` names a flow not yet finished.
    pub fn is_live(&self, id: FlowId) -> bool {
        self.flows
            .get(id.index as usize)
            .is_some_and(|f| f.is_live && f.generation == id.generation)
    }

    /// The number of live flows.
    pub fn len(&self) -> usize {
        self.flows.len() - self.free.len()
    }

    /// Whether no flow is live.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The live flows, in slot order (deterministic, not start order).
    pub fn ids(&self) -> impl Iterator<Item = FlowId> + '_ {
        self.flows
            .iter()
            .enumerate()
            .filter(|(_, f)| f.is_live)
            .map(|(i, f)| FlowId {
                index: i as u32,
                generation: f.generation,
            })
    }

    fn check(&self, id: FlowId) -> u32 {
        assert!(self.is_live(id), "flow {id:?} is not live");
        id.index
    }

    fn is_finite(&self, s: u32) -> bool {
        self.capacity[s as usize].is_finite()
    }

    fn mark_load(&mut self, s: u32) {
        if !self.is_load_pending[s as usize] {
            self.is_load_pending[s as usize] = true;
            self.load_pending.push(s);
        }
    }

    /// Started flows none of whose stages is finite: rate ∞.
    fn solve_unbounded_starts(&mut self) {
        for k in 0..self.started.len() {
            let id = self.started[k];
            if !self.is_live(id) {
                continue;
            }
            let f = &self.flows[id.index as usize];
            if f.stages.iter().all(|&s| !self.is_finite(s)) {
                self.scratch.set_rate(id.index, f64::INFINITY, NONE);
            }
        }
    }

    /// Gives every flow of `scratch.flows` its new rate; a flow whose rate
    /// changes is advanced to `now` and gets a new end.
    fn apply(&mut self, now: f64) {
        for k in 0..self.scratch.flows.len() {
            let i = self.scratch.flows[k];
            let rate = self.scratch.new_rate[i as usize];
            let f = &mut self.flows[i as usize];
            f.froze_at = self.scratch.new_froze_at[i as usize];
            if rate == f.rate {
                continue;
            }
            f.remaining = f.remaining_at(now);
            f.t_mark = now;
            f.rate = rate;
            if rate > 0.0 {
                let end = if rate == f64::INFINITY || f.remaining == 0.0 {
                    now
                } else {
                    now + f.remaining / rate
                };
                self.ends.set(i, (end, f.order));
            } else {
                self.ends.remove(i);
            }
            for j in 0..self.flows[i as usize].stages.len() {
                let s = self.flows[i as usize].stages[j];
                self.mark_load(s);
            }
        }
    }

    /// Recomputes the loads of the pending stages and lists those that changed.
    fn settle_loads(&mut self) {
        self.changed.clear();
        for k in 0..self.load_pending.len() {
            let s = self.load_pending[k];
            self.is_load_pending[s as usize] = false;
            let load: f64 = self.flows_on[s as usize]
                .iter()
                .map(|&f| self.flows[f as usize].rate)
                .sum();
            if load != self.load[s as usize] {
                self.load[s as usize] = load;
                self.changed.push(s);
            }
        }
        self.load_pending.clear();
        self.changed.sort_unstable();
    }
}
