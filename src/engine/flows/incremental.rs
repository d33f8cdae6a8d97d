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
//! Levels within [`TOL`] of a stage's old λ take the old λ, and a rate within
//! [`TOL`] of the flow's old rate keeps the old rate, so rounding noise does
//! not spread through the cluster as rate changes.

use super::{
    F_FROZEN, F_TOUCHED, FlowSystem, Mark, MarkKind, NONE, S_FILLED, S_REPLAY_SCHEDULED,
    S_REPLAYED, S_VISITED, TOL, same_level,
};
use std::cmp::{Ordering, Reverse};

impl FlowSystem {
    /// Updates the `maxmin` rates after the starts and finishes since the
    /// last solve (their seeds are in `self.seeds` and `self.started`).
    pub(super) fn solve_incremental(&mut self) {
        for k in 0..self.seeds.len() {
            let (stage, level) = self.seeds[k];
            self.push_mark(level, MarkKind::Seed, stage);
        }
        for k in 0..self.started.len() {
            let id = self.started[k];
            if !self.is_live(id) {
                continue;
            }
            let f = id.index;
            self.scratch.set_fflag(f, F_TOUCHED);
            let stages = &self.flows[f as usize].stages;
            let from = stages
                .iter()
                .map(|&s| self.capacity[s as usize] / self.flows_on[s as usize].len() as f64)
                .fold(f64::INFINITY, f64::min);
            for j in 0..stages.len() {
                let s = self.flows[f as usize].stages[j];
                if self.is_finite(s) {
                    self.push_mark(from, MarkKind::Seed, s);
                }
            }
        }
        self.solve_unbounded_starts();

        let mut current = 0.0_f64;
        while let Some(event) = self.next_event() {
            match event {
                Event::Fill(s, level) => current = self.fill(s, level, current),
                Event::Mark(Mark { level, kind, stage }) => {
                    current = current.max(level);
                    match kind {
                        MarkKind::Seed => self.make_dirty(stage, current),
                        MarkKind::Replay => self.replay(stage, current),
                        MarkKind::Release => current = self.release(stage, current),
                    }
                }
            }
        }
        for k in 0..self.scratch.stages.len() {
            let s = self.scratch.stages[k];
            self.level[s as usize] = if self.scratch.sflags(s) & S_FILLED != 0 {
                self.scratch.new_level[s as usize]
            } else {
                f64::INFINITY
            };
        }
    }

    fn push_mark(&mut self, level: f64, kind: MarkKind, stage: u32) {
        self.scratch
            .marks
            .push(Reverse(Mark { level, kind, stage }));
    }

    /// Pops the next event: the least level; at one level a seed, then a
    /// fill, then the other marks.
    fn next_event(&mut self) -> Option<Event> {
        let sc = &mut self.scratch;
        let fill = sc.cand.peek();
        let mark = sc.marks.peek().map(|m| m.0);
        let take_fill = match (fill, mark) {
            (None, None) => return None,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some((_, (level, _))), Some(m)) => match level.total_cmp(&m.level) {
                Ordering::Less => true,
                Ordering::Greater => false,
                Ordering::Equal => m.kind != MarkKind::Seed,
            },
        };
        if take_fill {
            let (s, (level, _)) = sc.cand.pop()?;
            Some(Event::Fill(s, level))
        } else {
            sc.marks.pop().map(|m| Event::Mark(m.0))
        }
    }

    /// Stage `s` becomes dirty at `current`: its residual and unfrozen count
    /// are taken from the flows on it, its rising untouched flows' old
    /// stages are scheduled to replay, and its own old level to release.
    fn make_dirty(&mut self, s: u32, current: f64) {
        let flags = self.scratch.sflags(s);
        if flags & S_VISITED != 0 {
            return;
        }
        if flags & S_REPLAYED != 0 {
            // Every flow of a replayed stage is frozen: nothing can change it.
            return;
        }
        self.scratch.set_sflag(s, S_VISITED);
        self.scratch.stages.push(s);
        let mut residual = self.capacity[s as usize];
        let mut unfrozen = 0u32;
        let mut releasing = false;
        for j in 0..self.flows_on[s as usize].len() {
            let f = self.flows_on[s as usize][j];
            let ff = self.scratch.fflags(f);
            if ff & F_FROZEN != 0 {
                residual -= self.scratch.new_rate[f as usize];
            } else if ff & F_TOUCHED != 0 {
                unfrozen += 1;
            } else {
                let flow = &self.flows[f as usize];
                let (rate, b) = (flow.rate, flow.froze_at);
                let b_clean = b != NONE && self.scratch.sflags(b) & S_VISITED == 0;
                if rate < current && !same_level(rate, current) && b_clean {
                    // It froze at b below this level, as before (a rate that
                    // ties the level may yet be met by a seed at it).
                    self.freeze(f, rate, b, s, current);
                    residual -= rate;
                } else {
                    // Rising. A clean stage of it fills as before, at its old
                    // level; that freezes the flow only if the level is its
                    // old rate (above it, the flow is frozen or released by
                    // then, and a released flow makes the stage dirty).
                    unfrozen += 1;
                    releasing |= b == s;
                    for k in 0..self.flows[f as usize].stages.len() {
                        let t = self.flows[f as usize].stages[k];
                        if t != s
                            && self.scratch.sflags(t) & S_VISITED == 0
                            && (t == b || same_level(self.level[t as usize], rate))
                        {
                            self.schedule_replay(t, current);
                        }
                    }
                }
            }
        }
        self.scratch.residual[s as usize] = residual;
        self.scratch.unfrozen[s as usize] = unfrozen;
        let old = self.level[s as usize];
        if releasing && old.is_finite() {
            self.push_mark(old.max(current), MarkKind::Release, s);
        }
        self.update_candidate(s, current);
    }

    fn schedule_replay(&mut self, b: u32, current: f64) {
        if self.scratch.sflags(b) & S_REPLAY_SCHEDULED != 0 {
            return;
        }
        self.scratch.set_sflag(b, S_REPLAY_SCHEDULED);
        let level = self.level[b as usize];
        if level.is_finite() {
            self.push_mark(level.max(current), MarkKind::Replay, b);
        }
    }

    fn update_candidate(&mut self, t: u32, current: f64) {
        let sc = &mut self.scratch;
        let u = sc.unfrozen[t as usize];
        if u == 0 {
            sc.cand.remove(t);
        } else {
            let level = (sc.residual[t as usize] / f64::from(u)).max(current);
            sc.cand.set(t, (level, u64::from(t)));
        }
    }

    /// Freezes flow `f` at `rate` (frozen by stage `at`), updating every
    /// dirty stage of it but `except`; candidates are clamped to `current`.
    fn freeze(&mut self, f: u32, rate: f64, at: u32, except: u32, current: f64) {
        self.scratch.set_fflag(f, F_FROZEN);
        self.scratch.set_rate(f, rate, at);
        for j in 0..self.flows[f as usize].stages.len() {
            let t = self.flows[f as usize].stages[j];
            if t == except || self.scratch.sflags(t) & S_VISITED == 0 {
                continue;
            }
            debug_assert!(
                self.scratch.sflags(t) & S_FILLED == 0,
                "a filled stage has no rising flow"
            );
            self.scratch.residual[t as usize] -= rate;
            self.scratch.unfrozen[t as usize] -= 1;
            self.update_candidate(t, current);
        }
    }

    /// Dirty stage `s` fills at `candidate` (clamped to `current`); returns
    /// the new current level.
    fn fill(&mut self, s: u32, candidate: f64, current: f64) -> f64 {
        let mut level = candidate.max(current);
        let old = self.level[s as usize];
        if old.is_finite() && same_level(level, old) {
            level = old;
        } else if same_level(level, current) {
            level = current;
        }
        let current = current.max(level);
        self.scratch.cand.remove(s);
        self.scratch.set_sflag(s, S_FILLED);
        self.scratch.new_level[s as usize] = level;
        for j in 0..self.flows_on[s as usize].len() {
            let f = self.flows_on[s as usize][j];
            let ff = self.scratch.fflags(f);
            if ff & F_FROZEN != 0 {
                continue;
            }
            let old_rate = self.flows[f as usize].rate;
            let rate = if same_level(level, old_rate) {
                old_rate
            } else {
                level
            };
            self.freeze(f, rate, s, s, current);
            if ff & F_TOUCHED == 0 && rate != old_rate {
                self.scratch.set_fflag(f, F_TOUCHED);
                for k in 0..self.flows[f as usize].stages.len() {
                    let t = self.flows[f as usize].stages[k];
                    if t != s && self.is_finite(t) {
                        self.make_dirty(t, current);
                    }
                }
            }
        }
        current
    }

    /// Clean stage `b` reaches its old level: nothing on it changed below
    /// that level, so it is full there again, and every flow on it not yet
    /// frozen freezes at its old rate (the level, or lower for a flow whose
    /// own stage froze it before and no dirty stage has met yet).
    fn replay(&mut self, b: u32, current: f64) {
        if self.scratch.sflags(b) & (S_VISITED | S_REPLAYED) != 0 {
            return;
        }
        self.scratch.set_sflag(b, S_REPLAYED);
        let level = self.level[b as usize];
        for j in 0..self.flows_on[b as usize].len() {
            let f = self.flows_on[b as usize][j];
            let ff = self.scratch.fflags(f);
            if ff & F_FROZEN != 0 {
                continue;
            }
            debug_assert!(ff & F_TOUCHED == 0, "a changed flow's stages are dirty");
            let flow = &self.flows[f as usize];
            let at = if same_level(flow.rate, level) {
                b
            } else {
                flow.froze_at
            };
            self.freeze(f, flow.rate, at, NONE, current);
        }
    }

    /// Dirty stage `d` reaches its old level without filling: the flows that
    /// froze there rise on. Returns the new current level.
    fn release(&mut self, d: u32, current: f64) -> f64 {
        if self.scratch.sflags(d) & S_FILLED != 0 {
            return current;
        }
        if self.scratch.cand.contains(d) {
            let (candidate, _) = self.scratch.cand.key(d);
            if candidate <= self.level[d as usize] * (1.0 + TOL) {
                return self.fill(d, candidate, current);
            }
        }
        for j in 0..self.flows_on[d as usize].len() {
            let f = self.flows_on[d as usize][j];
            let ff = self.scratch.fflags(f);
            if ff & (F_FROZEN | F_TOUCHED) != 0 || self.flows[f as usize].froze_at != d {
                continue;
            }
            self.scratch.set_fflag(f, F_TOUCHED);
            for k in 0..self.flows[f as usize].stages.len() {
                let t = self.flows[f as usize].stages[k];
                if t != d && self.is_finite(t) {
                    self.make_dirty(t, current);
                }
            }
        }
        current
    }
}

/// The next step of the walk.
#[derive(Debug)]
enum Event {
    Fill(u32, f64),
    Mark(Mark),
}
