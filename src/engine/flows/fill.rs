//! `bottleneck` rates, and `maxmin` rates by progressive filling of every
//! connected component a change touched.
//!
//! Architecture invariant: these solvers read only the incidence arrays and
//! capacities, write new rates into the scratch, and leave applying them to
//! `FlowSystem::apply`; the components filling is the oracle the incremental
//! update is tested against, and it leaves the same `level` / `froze_at`
//! bookkeeping the incremental update starts from.

use super::{F_FROZEN, FlowSystem, NONE, S_FILLED, S_VISITED, same_level};

impl FlowSystem {
    /// `min over s of φ_s / n_s` for the flow in slot `f`.
    pub(super) fn bottleneck_rate(&self, f: u32) -> f64 {
        self.flows[f as usize]
            .stages
            .iter()
            .map(|&s| self.capacity[s as usize] / self.flows_on[s as usize].len() as f64)
            .fold(f64::INFINITY, f64::min)
    }

    /// Only the flows on a stage whose count changed can change rate.
    pub(super) fn solve_bottleneck(&mut self, touched: usize) {
        for k in 0..touched {
            let s = self.load_pending[k];
            if !self.is_finite(s) {
                continue;
            }
            self.scratch.set_sflag(s, S_VISITED);
            for j in 0..self.flows_on[s as usize].len() {
                let f = self.flows_on[s as usize][j];
                if self.scratch.fflags(f) & super::F_SEEN == 0 {
                    let r = self.bottleneck_rate(f);
                    self.scratch.set_rate(f, r, NONE);
                    for k in 0..self.flows[f as usize].stages.len() {
                        let t = self.flows[f as usize].stages[k];
                        self.scratch.set_sflag(t, S_VISITED);
                    }
                }
            }
        }
        self.solve_unbounded_starts();
    }

    /// Progressive filling of each component holding a touched stage.
    pub(super) fn solve_components(&mut self, touched: usize) {
        for k in 0..touched {
            let s = self.load_pending[k];
            if self.is_finite(s) && self.scratch.sflags(s) & S_VISITED == 0 {
                self.collect_component(s);
                self.progressive_fill();
            }
        }
        self.solve_unbounded_starts();
    }

    /// Puts the finite stages reachable from `root` through shared flows in
    /// `scratch.stages` (breadth first), marked visited.
    fn collect_component(&mut self, root: u32) {
        let sc = &mut self.scratch;
        sc.stages.clear();
        sc.set_sflag(root, S_VISITED);
        sc.stages.push(root);
        let mut head = 0;
        while head < sc.stages.len() {
            let s = sc.stages[head];
            head += 1;
            for &f in &self.flows_on[s as usize] {
                for &t in &self.flows[f as usize].stages {
                    if self.capacity[t as usize].is_finite() && sc.sflags(t) & S_VISITED == 0 {
                        sc.set_sflag(t, S_VISITED);
                        sc.stages.push(t);
                    }
                }
            }
        }
    }

    /// Raises every unfrozen flow of the component in `scratch.stages`
    /// together; the stage of least `residual / unfrozen` fills next and its
    /// unfrozen flows freeze at that level. A level within [`super::TOL`] of
    /// the current one is the current one, so stages that tie fill at one
    /// value; a level that rounds below the current one is clamped to it.
    fn progressive_fill(&mut self) {
        let sc = &mut self.scratch;
        sc.cand.clear();
        for &s in &sc.stages {
            let n = self.flows_on[s as usize].len() as u32;
            sc.residual[s as usize] = self.capacity[s as usize];
            sc.unfrozen[s as usize] = n;
            sc.new_level[s as usize] = f64::INFINITY;
            if n > 0 {
                sc.cand
                    .set(s, (self.capacity[s as usize] / f64::from(n), u64::from(s)));
            }
        }
        let mut current = 0.0_f64;
        while let Some((s, (candidate, _))) = sc.cand.pop() {
            let mut level = candidate.max(current);
            if same_level(level, current) {
                level = current;
            }
            current = level;
            sc.set_sflag(s, S_FILLED);
            sc.new_level[s as usize] = level;
            for &f in &self.flows_on[s as usize] {
                if sc.fflags(f) & F_FROZEN != 0 {
                    continue;
                }
                sc.set_fflag(f, F_FROZEN);
                let old = self.flows[f as usize].rate;
                let rate = if same_level(level, old) { old } else { level };
                sc.set_rate(f, rate, s);
                for &t in &self.flows[f as usize].stages {
                    if t == s || !self.capacity[t as usize].is_finite() {
                        continue;
                    }
                    let t_ = t as usize;
                    sc.residual[t_] -= rate;
                    sc.unfrozen[t_] -= 1;
                    if sc.unfrozen[t_] == 0 {
                        sc.cand.remove(t);
                    } else {
                        let c = (sc.residual[t_] / f64::from(sc.unfrozen[t_])).max(current);
                        sc.cand.set(t, (c, u64::from(t)));
                    }
                }
            }
        }
        for &s in &sc.stages {
            self.level[s as usize] = sc.new_level[s as usize];
        }
    }
}
