//! The exact incremental `maxmin` update (design.md §The incremental update):
//! replay the last progressive filling and recompute only the stages whose
//! fill can differ.
//!
//! Between solves every stage keeps its fill level λ_s (∞ if it froze no
//! flow) and every flow the stage that froze it (`froze_at`, whose λ is its
//! rate). Below the level at which a change first matters, the new filling
//! is the old one: a finished flow of rate r changes its stages from r on; a
//! new flow changes its stages from `min φ_s / n_s` over them (no stage of it
//! can fill lower). Those stages are *seeded*: they become *dirty* at that
//! level. The update then walks levels upwards through four kinds of event:
//!
//! * **seed**: the stage becomes dirty;
//! * **fill** of a dirty stage at `residual / unfrozen`: its rising flows
//!   freeze there; a flow whose rate differs from before makes its other
//!   stages dirty at that level;
//! * **replay** of a clean stage at its old λ, scheduled when a dirty stage
//!   holds a rising flow that crosses it and whose old rate is that λ (its
//!   `froze_at`, or a stage that tied it): no input of the clean stage below
//!   λ changed, so it is full at λ as before and every flow on it still
//!   rising freezes there, at its old rate (also a flow whose old `froze_at`
//!   is a dirty stage that filled at the same level: ties are common);
//! * **release** of a dirty stage at its old λ if it has not filled by then:
//!   the flows that froze there rise on, so their other stages become dirty.
//!
//! At one level seeds come before fills (a seeded stage must not be replayed
//! at the level its inputs changed), fills before replays, replays before
//! releases (a dirty stage whose fill lands within [`TOL`] of its old λ fills
//! there instead of releasing).
//!
//! Invariant of the walk: for every dirty stage `t`, `unfrozen[t]` is the
//! number of its flows not yet frozen in this solve and `residual[t]` is φ_t
//! minus the new rates of the others. A flow untouched by the change whose
//! old rate is below the current level and whose `froze_at` is clean froze
//! as before; the walk freezes it explicitly the first time a dirty stage
//! meets it, so every dirty stage sees one consistent state.
//!
//! A stage that filled no flow before (λ = ∞) is *slack*, and most stages
//! a change reaches are (about 60 % in the random-pair bench programs). A
//! slack stage the walk would make dirty stays clean while a bound on its
//! new load keeps it below φ: each frozen flow at its new rate, each
//! untouched one at its old rate (no flow rises past its old rate without
//! being touched, which calls on its stages again, nor changes its rate
//! without telling them), and each touched one still rising at least at
//! the level. With rising flows it cannot fill below `room / rising`, and
//! a seed at that level looks at it again, unless the rising flows cannot
//! fill it at any level: each reaches at most the residual of a dirty
//! stage of it (φ minus the final rates frozen there). A stage that stays
//! clean binds no flow, so the max-min rates are those of the system
//! without it, and it costs the walk neither its scan, nor the replays its
//! flows would schedule, nor a fill mark. A drop of a flow's rate can only
//! lower that bound, so it needs no look at all ([`Walk::tell_changed`]).
//!
//! Levels within [`TOL`] of a stage's old λ take the old λ, and a rate within
//! [`TOL`] of the flow's old rate keeps the old rate, so rounding noise does
//! not spread through the cluster as rate changes.

use super::incidence::View;
use super::{
    Entry, F_FROZEN, F_TOUCHED, Flow, FlowSystem, Mark, MarkKind, NONE, S_FILLED, S_RELEASE_DUE,
    S_REPLAY_SCHEDULED, S_REPLAYED, S_STARTED, S_VISITED, Scratch, TOL, at, at_mut, each_other,
    find_other, same_level, select_f64, stages_of,
};

/// How far below φ a stage's bound on its new load must stay for it to
/// stay clean: far above the rounding of the walk's sums.
const SLACK_MARGIN: f64 = 1e-9;

impl FlowSystem {
    /// Updates the `maxmin` rates after the starts and finishes since the
    /// last solve (their seeds are in `self.pending.seeds` and `self.pending.started`).
    /// Stages a component filling already visited in this solve are left
    /// alone, and so are started flows on infinite stages only (the caller
    /// gives them rate ∞ first).
    pub(super) fn solve_incremental(&mut self) {
        self.scratch.stages.clear();
        let n = self.flows_on.stages();
        assert!(
            self.scratch.sflag.len() >= n
                && self.scratch.stage.len() >= n
                && self.entries.len() == self.flows.len(),
            "every per-stage array covers the stages and every slot has an entry"
        );
        let mut walk = Walk {
            flows_on: self.flows_on.view(),
            flows: &self.flows,
            entries: &mut self.entries,
            epoch: self.scratch.epoch,
            sc: &mut self.scratch,
        };
        for &(stage, level) in &self.pending.seeds {
            walk.push_mark(level, MarkKind::Seed, stage);
        }
        for &id in &self.pending.started {
            let Some(&f) = self.handles.get(id) else {
                continue;
            };
            walk.entries[f as usize].set_flag(walk.epoch, F_TOUCHED);
            let pair = walk.entries[f as usize].pair;
            let stages = stages_of(&pair, walk.flows, f);
            let from = stages
                .iter()
                .map(|&s| self.flows_on.capacity(s) / self.flows_on.len(s) as f64)
                .fold(f64::INFINITY, f64::min);
            for &s in stages {
                if self.flows_on.capacity(s).is_finite() {
                    walk.sc.set_sflag(s, S_STARTED);
                    walk.push_mark(from, MarkKind::Seed, s);
                }
            }
        }
        walk.run();
        let sc = &self.scratch;
        for &s in &sc.stages {
            // A select, not a branch (filled or not is as random as `s`).
            let filled = sc.sflags(s) & S_FILLED != 0;
            let new = sc.stage[s as usize].new_level;
            let level = select_f64(filled, new, f64::INFINITY);
            self.flows_on.set_level(s, level);
        }
    }
}

/// The walk's view of the system: what it reads (the stages' records with
/// their flows, capacities and old levels, and the flows' entries with
/// their old rates) and the scratch it writes (the stages' and the
/// entries' of this solve).
struct Walk<'a> {
    flows_on: View<'a>,
    /// Read only for the stages of a flow on more than two.
    flows: &'a [Flow],
    entries: &'a mut [Entry],
    /// The solve's epoch (`sc.epoch`).
    epoch: u32,
    sc: &'a mut Scratch,
}

// The walk reads its arrays unchecked: it indexes the per-stage arrays
// (`flows_on`'s records, the system's stage count long; the scratch's,
// sized by `Scratch::begin`) only with stage indices, each
// checked against `flows_on` when its flow started, and `entries` (as long
// as the slots) only with slots read from `flows_on`. `solve_incremental`
// asserts the lengths once.
impl<'a> Walk<'a> {
    fn is_finite(&self, s: u32) -> bool {
        self.cap(s).is_finite()
    }

    /// φ of stage `s`.
    #[inline(always)]
    fn cap(&self, s: u32) -> f64 {
        // SAFETY: a stage index (see above).
        unsafe { self.flows_on.capacity_unchecked(s) }
    }

    /// The level at which stage `s` filled in the last solve.
    #[inline(always)]
    fn old_level(&self, s: u32) -> f64 {
        // SAFETY: a stage index (see above).
        unsafe { self.flows_on.level_unchecked(s) }
    }

    /// The flows on stage `s`.
    #[inline(always)]
    fn on(&self, s: u32) -> &'a [u32] {
        // SAFETY: a stage index (see above).
        unsafe { self.flows_on.on_unchecked(s) }
    }

    /// The entry of slot `f`.
    #[inline(always)]
    fn entry(&self, f: u32) -> &Entry {
        // SAFETY: a slot read from `flows_on` (see above).
        unsafe { at(self.entries, f) }
    }

    fn push_mark(&mut self, level: f64, kind: MarkKind, stage: u32) {
        self.sc.marks.push(Mark::new(level, kind, stage));
    }

    /// Walks the levels upwards until no stage is left to fill or replay.
    fn run(&mut self) {
        let mut current = 0.0_f64;
        while let Some(mark) = self.sc.marks.pop() {
            let (level, stage) = (mark.level(), mark.stage());
            match mark.kind() {
                MarkKind::Fill => {
                    if let Some(level) = self.due_fill(stage, level) {
                        if !self.sc.floors.is_empty() {
                            current = self.pass_floors(level, current);
                        }
                        current = self.fill(stage, level, current);
                    }
                }
                MarkKind::Seed => {
                    current = current.max(level);
                    self.make_dirty(stage, current);
                }
                MarkKind::Replay => {
                    current = current.max(level);
                    self.replay(stage);
                }
                MarkKind::Release => {
                    current = current.max(level);
                    current = self.release(stage, current);
                }
            }
        }
    }

    /// A fill mark of `s` at `level` pops: the level to fill at if the mark
    /// is `s`'s candidate, else `None` (a mark below a candidate that rose
    /// since is pushed again at the candidate; one above a candidate that
    /// dropped, or of a stage filled or with nothing left to freeze, goes).
    /// So fills pop in the order of an indexed heap of candidates, without
    /// a heap update per freeze. A mark pushed again that would pop next
    /// is not pushed: its stage fills at once.
    fn due_fill(&mut self, s: u32, level: f64) -> Option<f64> {
        if self.sc.sflags(s) & S_FILLED != 0 {
            return None;
        }
        let e = self.sc.stage_mut(s);
        if e.unfrozen == 0 || level > e.cand {
            return None;
        }
        if level == e.cand {
            return Some(level);
        }
        let cand = e.cand;
        e.low = cand;
        let flags = self.sc.sflags(s);
        if flags & S_RELEASE_DUE != 0 && cand > self.old_level(s) {
            // Every fill mark of `s` since it became dirty was at or below
            // its old level, and so is `level`: the release is where
            // `make_clean_dirty` would have put it.
            self.sc.reset_sflags(s, flags & !S_RELEASE_DUE);
            self.push_mark(self.old_level(s).max(level), MarkKind::Release, s);
        }
        let again = Mark::new(cand, MarkKind::Fill, s);
        if self.sc.marks.peek().is_none_or(|next| again <= next) {
            // It would pop next: fill now instead of a push and a pop.
            return Some(cand);
        }
        self.sc.marks.push(again);
        None
    }

    /// The walk's current level as a fill at `level` finds it: raised to
    /// every floor below `level` (a release mark there would have popped
    /// first), whose floors are then passed. Only a fill needs this: every
    /// other mark raises the current level to its own.
    fn pass_floors(&mut self, level: f64, current: f64) -> f64 {
        let mut current = current;
        self.sc.floors.retain(|&floor| {
            let passed = floor < level;
            if passed {
                current = current.max(floor);
            }
            !passed
        });
        current
    }

    /// A flow of stage `t` (finite) froze at a rate other than its old one,
    /// lower if `dropped`: `t` becomes dirty ([`Walk::make_dirty`]).
    ///
    /// A drop on a clean slack stage whose old load is below φ by
    /// [`SLACK_MARGIN`] and on which no flow started ([`S_STARTED`]) leaves
    /// it clean without a scan: every earlier change of its load was told
    /// to it, a rise or a release with [`Walk::stays_slack`]'s look, so its
    /// bound only fell since that look (or, without one, is below its old
    /// load), and the seed that look pushed, if any, is at or below the
    /// level this look would push.
    #[inline(always)]
    fn tell_changed(&mut self, t: u32, dropped: bool, current: f64) {
        if dropped && self.sc.sflags(t) & S_STARTED == 0 {
            // SAFETY: a stage index (see above).
            let (cap, level, load) = unsafe { self.flows_on.record_unchecked(t) };
            if level == f64::INFINITY && load <= cap * (1.0 - SLACK_MARGIN) {
                return;
            }
        }
        self.make_dirty(t, current);
    }

    /// Stage `s` becomes dirty at `current`: its residual and unfrozen count
    /// are taken from the flows on it, its rising untouched flows' old
    /// stages are scheduled to replay, and its own old level to release.
    /// A stage already dirty, or replayed (every flow of it is frozen:
    /// nothing can change it), is left alone; that test is inlined where
    /// the walk calls it, as most calls end there. So is a slack stage
    /// that stays below φ ([`Walk::stays_slack`]).
    #[inline]
    fn make_dirty(&mut self, s: u32, current: f64) {
        if self.sc.sflags(s) & (S_VISITED | S_REPLAYED) == 0
            && (self.old_level(s) != f64::INFINITY || !self.stays_slack(s, current))
        {
            self.make_clean_dirty(s, current);
        }
    }

    /// Whether clean stage `s`, which filled no flow before (its caller
    /// tests that inline, sparing a call for the others), can stay clean
    /// at `current`: the bound on its new load of the module's comment
    /// stays below φ, by [`SLACK_MARGIN`]. With touched flows still
    /// rising, a seed is pushed where the bound would reach φ.
    #[inline(never)]
    fn stays_slack(&mut self, s: u32, current: f64) -> bool {
        debug_assert!(self.old_level(s) == f64::INFINITY, "a slack stage");
        let mut load = 0.0;
        let mut rising = 0u32;
        let mut most = 0.0;
        for &f in self.on(s) {
            // Selects, not branches: which kind a flow is is as random as
            // the flow (and `+ 0.0` leaves the sum be).
            let e = self.entry(f);
            let ff = e.flags(self.epoch);
            let frozen = ff & F_FROZEN != 0;
            let touched = !frozen & (ff & F_TOUCHED != 0);
            let known = select_f64(touched, 0.0, e.rate);
            load += select_f64(frozen, e.new_rate, known);
            rising += u32::from(touched);
            if touched {
                most += self.most_of_rising(e.pair, f, s);
            }
        }
        let room = self.cap(s) * (1.0 - SLACK_MARGIN) - load;
        if rising == 0 {
            return room >= 0.0;
        }
        if most <= room {
            // The rising flows cannot fill `s` whatever rates they reach.
            return true;
        }
        // Each rising flow takes at least the level, so `s` cannot fill
        // below `room / rising`: it is looked at again there (a seed).
        let until = room / f64::from(rising);
        if until > current {
            self.push_mark(until, MarkKind::Seed, s);
            return true;
        }
        false
    }

    /// A bound on the rate rising flow `f` (on `s`, with stages `pair` as
    /// in [`stages_of`]) reaches in this solve: at most the residual of a
    /// dirty stage of it that has not filled (φ minus its frozen flows'
    /// rates, which are final), at most φ of any other stage.
    fn most_of_rising(&self, pair: [u32; 2], f: u32, s: u32) -> f64 {
        let mut most = f64::INFINITY;
        each_other(pair, self.flows, f, s, |t| {
            let dirty = self.sc.sflags(t) & (S_VISITED | S_FILLED) == S_VISITED;
            let bound = if dirty {
                // SAFETY: as in `Scratch::sflags`.
                unsafe { at(&self.sc.stage, t) }.residual
            } else {
                self.cap(t)
            };
            most = most.min(bound);
        });
        most
    }

    #[inline(never)]
    fn make_clean_dirty(&mut self, s: u32, current: f64) {
        self.sc.set_sflag(s, S_VISITED);
        self.sc.stages.push(s);
        let flows = self.flows;
        let mut residual = self.cap(s);
        let mut unfrozen = 0u32;
        let mut releasing = false;
        for &f in self.on(s) {
            let e = self.entry(f);
            let ff = e.flags(self.epoch);
            if ff & F_FROZEN != 0 {
                residual -= e.new_rate;
            } else if ff & F_TOUCHED != 0 {
                unfrozen += 1;
            } else {
                let (rate, b, pair) = (e.rate, e.froze_at, e.pair);
                debug_assert!(
                    b == NONE || stages_of(&pair, flows, f).contains(&b),
                    "froze_at is its stage"
                );
                let sc = &*self.sc;
                // `s` itself is not replayed (`make_dirty` tested it).
                if let Some(replayed) =
                    find_other(pair, flows, f, s, |t| sc.sflags(t) & S_REPLAYED != 0)
                {
                    // A replay froze it at its old rate; it had no dirty
                    // stage then, so nothing else needs telling.
                    let at = self.replay_froze_at(rate, b, replayed);
                    self.freeze_met(f, rate, at, s);
                    residual -= rate;
                    continue;
                }
                let b_clean = b != NONE && sc.sflags(b) & S_VISITED == 0;
                if rate < current && !same_level(rate, current) && b_clean {
                    // It froze at b below this level, as before (a rate that
                    // ties the level may yet be met by a seed at it).
                    self.freeze_met(f, rate, b, s);
                    residual -= rate;
                } else {
                    // Rising. A clean stage of it fills as before, at its old
                    // level; that freezes the flow only if the level is its
                    // old rate (above it, the flow is frozen or released by
                    // then, and a released flow makes the stage dirty).
                    unfrozen += 1;
                    releasing |= b == s;
                    each_other(pair, flows, f, s, |t| {
                        if self.sc.sflags(t) & S_VISITED == 0
                            && (t == b || same_level(self.old_level(t), rate))
                        {
                            self.schedule_replay(t, current);
                        }
                    });
                }
            }
        }
        let e = self.sc.stage_mut(s);
        e.residual = residual;
        e.unfrozen = unfrozen;
        e.low = f64::INFINITY;
        self.update_candidate(s, current);
        let old = self.old_level(s);
        if releasing && old.is_finite() {
            // A stage whose candidate is at or below its old level fills
            // there unless the candidate rises first, which its fill mark
            // finds when it pops ([`Walk::due_fill`]): the release waits
            // for that (about half the releases find their stage filled).
            // A releasing stage has a rising flow, so its candidate is set.
            if self.sc.stage_mut(s).cand > old {
                self.push_mark(old.max(current), MarkKind::Release, s);
            } else {
                self.sc.set_sflag(s, S_RELEASE_DUE);
            }
        }
    }

    fn schedule_replay(&mut self, b: u32, current: f64) {
        if self.sc.sflags(b) & S_REPLAY_SCHEDULED != 0 {
            return;
        }
        self.sc.set_sflag(b, S_REPLAY_SCHEDULED);
        let level = self.old_level(b);
        if level.is_finite() {
            self.push_mark(level.max(current), MarkKind::Replay, b);
        }
    }

    /// Dirty stage `t`'s residual or unfrozen count changed: its candidate
    /// level is recomputed, and marked if it dropped below its marks. A
    /// stage made dirty at `floor` starts there (its candidate is clamped
    /// to it); after a freeze the candidate is not clamped (`floor` 0), so
    /// a fill takes the stage's own share to the last bit, as the full
    /// filling does (fill.rs) and as pyserq 0.1.0 computes it.
    fn update_candidate(&mut self, t: u32, floor: f64) {
        let e = self.sc.stage_mut(t);
        if e.unfrozen == 0 {
            return;
        }
        let level = (e.residual / f64::from(e.unfrozen)).max(floor);
        e.cand = level;
        if level < e.low {
            e.low = level;
            self.push_mark(level, MarkKind::Fill, t);
        }
    }

    /// Freezes untouched flow `f`, met first by dirty stage `s`, at its old
    /// `rate` (frozen by stage `at`): no other stage of it is dirty (one
    /// made dirty before would have frozen it, at or below its rate by the
    /// replay of its old stage), so only the scratch learns it (inlined:
    /// it is a few stores).
    #[inline(always)]
    fn freeze_met(&mut self, f: u32, rate: f64, at: u32, s: u32) {
        // SAFETY: a slot read from `flows_on` (see above).
        let e = unsafe { at_mut(self.entries, f) };
        debug_assert!(
            stages_of(&e.pair.clone(), self.flows, f)
                .iter()
                .all(|&t| t == s || self.sc.sflags(t) & S_VISITED == 0),
            "a flow met first by a dirty stage has no other dirty stage"
        );
        self.sc.freeze(e, f, rate, at);
    }

    /// Freezes flow `f` at `rate` (frozen by stage `at`), updating every
    /// dirty stage of it but `except` (one of its stages); their candidates
    /// are not clamped ([`Walk::update_candidate`]).
    /// Inlined into its two callers (fill, replay): a freeze is a few loads
    /// and stores, and a call's saved registers cost as much.
    #[inline(always)]
    fn freeze(&mut self, f: u32, rate: f64, at: u32, except: u32) {
        // SAFETY: a slot read from `flows_on` (see above).
        let e = unsafe { at_mut(self.entries, f) };
        self.sc.freeze(e, f, rate, at);
        let pair = e.pair;
        each_other(pair, self.flows, f, except, |t| {
            if self.sc.sflags(t) & S_VISITED == 0 {
                return;
            }
            debug_assert!(
                self.sc.sflags(t) & S_FILLED == 0,
                "a filled stage has no rising flow"
            );
            let e = self.sc.stage_mut(t);
            e.residual -= rate;
            e.unfrozen -= 1;
            self.update_candidate(t, 0.0);
        });
    }

    /// Dirty stage `s` fills at `candidate`; returns the new current level.
    fn fill(&mut self, s: u32, candidate: f64, current: f64) -> f64 {
        // The stage's own share (its residual over its rising flows), as
        // 0.1.0 computes it, kept at the old level within TOL of it.
        let mut level = candidate;
        let old = self.old_level(s);
        if old.is_finite() && same_level(level, old) {
            level = old;
        }
        let current = current.max(level);
        if self.sc.sflags(s) & S_RELEASE_DUE != 0 {
            // Filled at or below its old level: its release would pop there
            // and do nothing but raise the current level.
            self.sc.floors.push(old);
        }
        self.sc.set_sflag(s, S_FILLED);
        self.sc.stage_mut(s).new_level = level;
        for &f in self.on(s) {
            let e = self.entry(f);
            let ff = e.flags(self.epoch);
            if ff & F_FROZEN != 0 {
                continue;
            }
            let (old_rate, pair) = (e.rate, e.pair);
            let rate = if same_level(level, old_rate) {
                old_rate
            } else {
                level
            };
            self.freeze(f, rate, s, s);
            if ff & F_TOUCHED == 0 && rate != old_rate {
                // SAFETY: a slot read from `flows_on` (see above).
                unsafe { at_mut(self.entries, f) }.set_flag(self.epoch, F_TOUCHED);
                let dropped = rate < old_rate;
                each_other(pair, self.flows, f, s, |t| {
                    if self.is_finite(t) {
                        self.tell_changed(t, dropped, current);
                    }
                });
            }
        }
        current
    }

    /// Clean stage `b` reaches its old level: nothing on it changed below
    /// that level, so it is full there again, and every flow on it not yet
    /// frozen freezes at its old rate (the level, or lower for a flow whose
    /// own stage froze it before and no dirty stage has met yet). Only the
    /// flows with a dirty stage are frozen now; the others are frozen by
    /// the first dirty stage that meets them ([`Walk::make_dirty`]).
    fn replay(&mut self, b: u32) {
        if self.sc.sflags(b) & (S_VISITED | S_REPLAYED) != 0 {
            return;
        }
        self.sc.set_sflag(b, S_REPLAYED);
        for &f in self.on(b) {
            let e = self.entry(f);
            let ff = e.flags(self.epoch);
            if ff & F_FROZEN != 0 {
                continue;
            }
            debug_assert!(ff & F_TOUCHED == 0, "a changed flow's stages are dirty");
            let (rate, froze_at, pair) = (e.rate, e.froze_at, e.pair);
            let sc = &*self.sc;
            if find_other(pair, self.flows, f, b, |t| sc.sflags(t) & S_VISITED != 0).is_some() {
                let at = self.replay_froze_at(rate, froze_at, b);
                // `b` is not dirty: no stage is left out.
                self.freeze(f, rate, at, b);
            }
        }
    }

    /// The stage a replay of `b` records as freezing a flow of old `rate`,
    /// frozen by `froze_at` before: `b` if that rate is `b`'s level, else
    /// `froze_at`.
    fn replay_froze_at(&self, rate: f64, froze_at: u32, b: u32) -> u32 {
        if same_level(rate, self.old_level(b)) {
            b
        } else {
            froze_at
        }
    }

    /// Dirty stage `d` reaches its old level without filling: the flows that
    /// froze there rise on. Returns the new current level.
    fn release(&mut self, d: u32, current: f64) -> f64 {
        if self.sc.sflags(d) & S_FILLED != 0 {
            return current;
        }
        let e = *self.sc.stage_mut(d);
        if e.unfrozen > 0 && e.cand <= self.old_level(d) * (1.0 + TOL) {
            return self.fill(d, e.cand, current);
        }
        for &f in self.on(d) {
            // SAFETY: a slot read from `flows_on` (see above).
            let e = unsafe { at_mut(self.entries, f) };
            if e.flags(self.epoch) & (F_FROZEN | F_TOUCHED) != 0 || e.froze_at != d {
                continue;
            }
            e.set_flag(self.epoch, F_TOUCHED);
            let pair = e.pair;
            each_other(pair, self.flows, f, d, |t| {
                if self.is_finite(t) {
                    self.make_dirty(t, current);
                }
            });
        }
        current
    }
}
