//! `bottleneck` rates, and `maxmin` rates by progressive filling of every
//! connected component a change touched (of every one up to a size, for
//! [`super::MaxMinSolver::BySize`]).
//!
//! Architecture invariant: these solvers read only the incidence arrays and
//! capacities, write new rates into the scratch, and leave applying them to
//! `FlowSystem::apply`; the components filling is the oracle the incremental
//! update is tested against, and it leaves the same `level` / `froze_at`
//! bookkeeping the incremental update starts from.

use super::{
    F_FROZEN, F_SEEN, FlowSystem, Mark, MarkKind, NONE, S_FILLED, S_LARGE, S_VISITED, each_other,
    same_level, stages_of,
};

/// [`super::MaxMinSolver::BySize`]: until which solve a stage counts as
/// part of a component larger than the limit, without a probe (a probe
/// costs as much as a small replay; a component grows and splits slowly,
/// and a stale answer costs time, never exactness).
#[derive(Clone, Debug)]
pub(super) struct LargeComponents {
    /// `until[s]`: stage `s` is believed large until this solve.
    pub(super) until: Vec<u32>,
    /// How long a probe's "large" holds: [`super::LARGE_HOLD`] solves
    /// (tests set less, so that a history switches back to filling).
    pub(super) hold: u32,
}

impl LargeComponents {
    /// No stage believed large, over `stages` stages.
    pub(super) fn new(stages: usize) -> LargeComponents {
        LargeComponents {
            until: vec![0; stages],
            hold: super::LARGE_HOLD,
        }
    }
}

impl FlowSystem {
    /// `min over s of φ_s / n_s` for the flow in slot `f`.
    pub(super) fn bottleneck_rate(&self, f: u32) -> f64 {
        let pair = self.entries[f as usize].pair;
        stages_of(&pair, &self.flows, f)
            .iter()
            .map(|&s| self.flows_on.capacity(s) / self.flows_on.len(s) as f64)
            .fold(f64::INFINITY, f64::min)
    }

    /// Only the flows on a stage whose count changed can change rate.
    pub(super) fn solve_bottleneck(&mut self, touched: usize) {
        for k in 0..touched {
            let s = self.pending.load[k];
            if !self.is_finite(s) {
                continue;
            }
            self.scratch.set_sflag(s, S_VISITED);
            for j in 0..self.flows_on.len(s) {
                let f = self.flows_on.on(s)[j];
                let epoch = self.scratch.epoch;
                if self.entries[f as usize].flags(epoch) & F_SEEN == 0 {
                    let r = self.bottleneck_rate(f);
                    let e = &mut self.entries[f as usize];
                    self.scratch.set_rate(e, f, r, NONE);
                    let pair = e.pair;
                    for &t in stages_of(&pair, &self.flows, f) {
                        self.scratch.set_sflag(t, S_VISITED);
                    }
                }
            }
        }
        self.solve_unbounded_starts();
    }

    /// Progressive filling of each component that holds a touched stage, or
    /// with `limit`, of each one of at most that many stages. Returns
    /// whether a touched component was larger (its stages are marked
    /// `S_LARGE` and believed large for [`super::LARGE_HOLD`] (by default) solves, not filled).
    pub(super) fn solve_components(&mut self, touched: usize, limit: Option<u32>) -> bool {
        let mut large = false;
        for k in 0..touched {
            let s = self.pending.load[k];
            if !self.is_finite(s) || self.scratch.sflags(s) & (S_VISITED | S_LARGE) != 0 {
                continue;
            }
            if limit.is_some() && self.large.until[s as usize] > self.log.solves {
                large = true;
            } else if self.collect_component(s, limit) {
                self.progressive_fill();
            } else {
                large = true;
            }
        }
        self.solve_unbounded_starts();
        large
    }

    /// Puts the finite stages reachable from `root` through shared flows in
    /// `scratch.stages` (breadth first), marked visited, and returns true;
    /// or, once the component proves larger than `limit` stages (it meets a
    /// stage found in a larger one), marks what it collected `S_LARGE` and
    /// large for [`super::LARGE_HOLD`] (by default) solves instead, empties `scratch.stages` and
    /// returns false.
    fn collect_component(&mut self, root: u32, limit: Option<u32>) -> bool {
        let sc = &mut self.scratch;
        sc.stages.clear();
        sc.set_sflag(root, S_VISITED);
        sc.stages.push(root);
        let mut head = 0;
        while head < sc.stages.len() {
            let s = sc.stages[head];
            head += 1;
            for &f in self.flows_on.on(s) {
                let pair = self.entries[f as usize].pair;
                for &t in stages_of(&pair, &self.flows, f) {
                    if !self.flows_on.capacity(t).is_finite() {
                        continue;
                    }
                    let flags = sc.sflags(t);
                    if flags & S_VISITED != 0 {
                        continue;
                    }
                    if let Some(limit) = limit
                        && (flags & S_LARGE != 0
                            || self.large.until[t as usize] > self.log.solves
                            || sc.stages.len() as u32 >= limit)
                    {
                        let until = self.log.solves.saturating_add(self.large.hold);
                        for k in 0..sc.stages.len() {
                            let u = sc.stages[k];
                            sc.reset_sflags(u, S_LARGE);
                            self.large.until[u as usize] = until;
                        }
                        sc.stages.clear();
                        return false;
                    }
                    sc.set_sflag(t, S_VISITED);
                    sc.stages.push(t);
                }
            }
        }
        true
    }

    /// Raises every unfrozen flow of the component in `scratch.stages`
    /// together; the stage of least `residual / unfrozen` fills next and its
    /// unfrozen flows freeze at that level: its residual (capacity less the
    /// rates frozen on it) over them, to the last bit, even where rounding
    /// puts it an ulp below the level of a stage that filled before, as
    /// pyserq 0.1.0 computes it. Candidates only rise as flows freeze (to
    /// rounding), so the queue holds fill marks at or below them (see
    /// `Walk::due_fill`) instead of an indexed heap.
    fn progressive_fill(&mut self) {
        let sc = &mut self.scratch;
        sc.marks.clear();
        for &s in &sc.stages {
            let n = self.flows_on.len(s) as u32;
            let e = &mut sc.stage[s as usize];
            e.residual = self.flows_on.capacity(s);
            e.unfrozen = n;
            e.new_level = f64::INFINITY;
            e.low = f64::INFINITY;
            if n > 0 {
                e.cand = self.flows_on.capacity(s) / f64::from(n);
                e.low = e.cand;
                sc.marks.push(Mark::new(e.cand, MarkKind::Fill, s));
            }
        }
        while let Some(mark) = sc.marks.pop() {
            let (s, candidate) = (mark.stage(), mark.level());
            let filled = sc.sflags(s) & S_FILLED != 0;
            let e = &mut sc.stage[s as usize];
            if filled || e.unfrozen == 0 || candidate > e.cand {
                continue;
            }
            let mut candidate = candidate;
            if candidate < e.cand {
                e.low = e.cand;
                let again = Mark::new(e.cand, MarkKind::Fill, s);
                if sc.marks.peek().is_some_and(|next| next < again) {
                    sc.marks.push(again);
                    continue;
                }
                // It would pop next: it fills now.
                candidate = e.cand;
            }
            // The stage's own share, its capacity less the rates frozen on
            // it over its flows still rising, as 0.1.0 computes it: two
            // stages that tie at 7/3 leave a third flow of the second
            // 7 - 2 * 7/3, one ulp below 7/3, not 7/3.
            let level = candidate;
            sc.set_sflag(s, S_FILLED);
            sc.stage[s as usize].new_level = level;
            for &f in self.flows_on.on(s) {
                let e = &mut self.entries[f as usize];
                if e.flags(sc.epoch) & F_FROZEN != 0 {
                    continue;
                }
                let rate = if same_level(level, e.rate) {
                    e.rate
                } else {
                    level
                };
                sc.freeze(e, f, rate, s);
                let pair = e.pair;
                each_other(pair, &self.flows, f, s, |t| {
                    if !self.flows_on.capacity(t).is_finite() {
                        return;
                    }
                    let e = &mut sc.stage[t as usize];
                    e.residual -= rate;
                    e.unfrozen -= 1;
                    if e.unfrozen > 0 {
                        e.cand = e.residual / f64::from(e.unfrozen);
                        if e.cand < e.low {
                            e.low = e.cand;
                            sc.marks.push(Mark::new(e.cand, MarkKind::Fill, t));
                        }
                    }
                });
            }
        }
        for &s in &sc.stages {
            self.flows_on.set_level(s, sc.stage[s as usize].new_level);
        }
    }
}
