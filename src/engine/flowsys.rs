//! SEAM: the flow system the engine drives for runs over several stages and
//! for every run on a shared stage (spec §6.4).
//!
//! The real solver is `crate::engine::flows::FlowSystem` (branch `flows`,
//! incremental progressive filling). Until it is merged, this file is a
//! small stand-in with the same API: it advances every flow and re-solves
//! every rate from scratch at each `solve` (full progressive filling, or the
//! bottleneck rule), which is exact and slow at scale. To switch, replace the
//! body of this file with `pub use super::flows::{FlowId, FlowSystem};`.
//!
//! Invariant: between two `solve`s every flow keeps its rate; a flow's
//! remaining work is exact at `updated` and decreases linearly after it.

use crate::ir::Share;
use smallvec::SmallVec;

/// A flow's handle (its slot; slots are reused after `finish`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowId(u32);

#[derive(Clone, Debug)]
struct Flow {
    stages: SmallVec<[u32; 4]>,
    remaining: f64,
    work: f64,
    updated: f64,
    rate: f64,
    start: f64,
    order: u64,
    owner: u64,
}

/// Flows over shared stages and their rates.
#[derive(Clone, Debug)]
pub struct FlowSystem {
    capacity: Vec<f64>,
    policy: Share,
    flows: Vec<Option<Flow>>,
    free: Vec<u32>,
    on_stage: Vec<Vec<u32>>,
    load: Vec<f64>,
    changed: Vec<u32>,
    order: u64,
    // scratch for progressive filling
    residual: Vec<f64>,
    unfrozen: Vec<u32>,
    frozen: Vec<bool>,
}

impl FlowSystem {
    /// A system over stages of these capacities (φ; `inf` allowed).
    pub fn new(capacity: Vec<f64>, policy: Share) -> FlowSystem {
        let n = capacity.len();
        FlowSystem {
            capacity,
            policy,
            flows: Vec::new(),
            free: Vec::new(),
            on_stage: vec![Vec::new(); n],
            load: vec![0.0; n],
            changed: Vec::new(),
            order: 0,
            residual: vec![0.0; n],
            unfrozen: vec![0; n],
            frozen: Vec::new(),
        }
    }

    /// Starts a flow of `work` over `stages` (rate 0 until the next `solve`).
    pub fn start(&mut self, now: f64, stages: &[u32], work: f64, owner: u64) -> FlowId {
        let flow = Flow {
            stages: stages.iter().copied().collect(),
            remaining: work,
            work,
            updated: now,
            rate: 0.0,
            start: now,
            order: self.order,
            owner,
        };
        self.order += 1;
        let slot = match self.free.pop() {
            Some(slot) => {
                self.flows[slot as usize] = Some(flow);
                slot
            }
            None => {
                self.flows.push(Some(flow));
                (self.flows.len() - 1) as u32
            }
        };
        for &s in stages {
            self.on_stage[s as usize].push(slot);
        }
        FlowId(slot)
    }

    /// Ends a flow; returns its owner and start time.
    pub fn finish(&mut self, _now: f64, id: FlowId) -> (u64, f64) {
        let flow = self.flows[id.0 as usize]
            .take()
            .expect("a finished flow is live");
        for &s in &flow.stages {
            let list = &mut self.on_stage[s as usize];
            if let Some(i) = list.iter().position(|&f| f == id.0) {
                list.remove(i);
            }
        }
        self.free.push(id.0);
        (flow.owner, flow.start)
    }

    /// Advances every flow to `now` and solves every rate again.
    pub fn solve(&mut self, now: f64) {
        for flow in self.flows.iter_mut().flatten() {
            if now > flow.updated {
                flow.remaining -= flow.rate * (now - flow.updated);
                if flow.remaining <= 1e-12 * flow.work {
                    flow.remaining = 0.0;
                }
            }
            flow.updated = now;
        }
        match self.policy {
            Share::Bottleneck => {
                for flow in self.flows.iter_mut().flatten() {
                    flow.rate = flow
                        .stages
                        .iter()
                        .map(|&s| {
                            self.capacity[s as usize] / self.on_stage[s as usize].len() as f64
                        })
                        .fold(f64::INFINITY, f64::min);
                }
            }
            Share::MaxMin => self.progressive_fill(),
        }
        self.changed.clear();
        for s in 0..self.capacity.len() {
            let load: f64 = self.on_stage[s]
                .iter()
                .map(|&f| self.flows[f as usize].as_ref().map_or(0.0, |f| f.rate))
                .sum();
            if load != self.load[s] || !self.on_stage[s].is_empty() {
                self.load[s] = load;
                self.changed.push(s as u32);
            }
        }
    }

    fn progressive_fill(&mut self) {
        self.frozen.clear();
        self.frozen.resize(self.flows.len(), false);
        for s in 0..self.capacity.len() {
            self.residual[s] = self.capacity[s];
            self.unfrozen[s] = self.on_stage[s].len() as u32;
        }
        let mut left = self.flows.iter().flatten().count();
        let mut level = 0.0;
        while left > 0 {
            let step = (0..self.capacity.len())
                .filter(|&s| self.unfrozen[s] > 0)
                .map(|s| self.residual[s] / f64::from(self.unfrozen[s]))
                .fold(f64::INFINITY, f64::min);
            if step.is_infinite() {
                for (f, flow) in self.flows.iter_mut().enumerate() {
                    if let Some(flow) = flow
                        && !self.frozen[f]
                    {
                        flow.rate = f64::INFINITY;
                    }
                }
                break;
            }
            level += step;
            for s in 0..self.capacity.len() {
                if self.unfrozen[s] > 0 {
                    self.residual[s] -= step * f64::from(self.unfrozen[s]);
                }
            }
            for s in 0..self.capacity.len() {
                if self.unfrozen[s] == 0 || self.residual[s] > 1e-12 * self.capacity[s] {
                    continue;
                }
                for i in 0..self.on_stage[s].len() {
                    let f = self.on_stage[s][i] as usize;
                    if self.frozen[f] {
                        continue;
                    }
                    self.frozen[f] = true;
                    left -= 1;
                    let flow = self.flows[f].as_mut().expect("a flow on a stage is live");
                    flow.rate = level;
                    for &t in &flow.stages {
                        self.unfrozen[t as usize] -= 1;
                    }
                }
            }
        }
    }

    /// The earliest end (ties: the flow started first).
    pub fn next_end(&self) -> Option<(f64, FlowId)> {
        let mut best: Option<(f64, u64, u32)> = None;
        for (i, flow) in self.flows.iter().enumerate() {
            let Some(flow) = flow else { continue };
            let end = if flow.remaining <= 0.0 {
                flow.updated
            } else {
                flow.updated + flow.remaining / flow.rate
            };
            if end.is_nan() {
                continue;
            }
            if best.is_none_or(|(t, o, _)| end < t || (end == t && flow.order < o)) {
                best = Some((end, flow.order, i as u32));
            }
        }
        best.map(|(t, _, i)| (t, FlowId(i)))
    }

    /// Flows on stage `s`.
    pub fn count(&self, s: usize) -> usize {
        self.on_stage[s].len()
    }

    /// Remaining work of the flows on stage `s` at `now`.
    pub fn work(&self, s: usize, now: f64) -> f64 {
        self.on_stage[s]
            .iter()
            .filter_map(|&f| self.flows[f as usize].as_ref())
            .map(|f| f.remaining - f.rate * (now - f.updated))
            .sum()
    }

    /// Σ rates of the flows on stage `s` (as of the last `solve`).
    pub fn load(&self, s: usize) -> f64 {
        self.load[s]
    }

    /// Stages whose load may have changed in the last `solve`.
    pub fn changed_stages(&self) -> &[u32] {
        &self.changed
    }
}
