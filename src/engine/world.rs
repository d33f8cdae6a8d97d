//! The world: every entity and resource of a run, the event loop and the
//! settle (spec §6.1–6.2), and the report it fills at the end.
//!
//! Invariants: the clock only moves to the time of the popped event; after
//! every event the world settles (ready sessions run in FIFO order, then an
//! admission pass, until neither does anything), and at the settle's end the
//! ps stages whose job set changed get their one finish event anew, in
//! declaration order, then the flow system if any flow started or ended.
//! Stages and pools are indexed by their IR index; sessions live in reused
//! slots (a free list), so the per-event path allocates nothing.

use std::collections::VecDeque;

use super::eval::{Cx, eval, exponential_of};
use super::events::{EventKind, EventQueue};
use super::flows::{FlowId, FlowSystem};
use super::pools::{PoolState, Waiting};
use super::rng::{FirstDraws, Purpose, Stream};
use super::session::{Attrs, Session};
use super::stages::StageState;
use super::stats::TimeAvg;
use super::{MAX_LIVE_SESSIONS, PROGRESS_EVERY, RunError, RunOptions, SessionCounts};
use crate::ir::{Arrival, Program, Share, StageKind};
use crate::report::{Observation, PoolRow, Report, StageRow, WindowedAverage};
use smallvec::SmallVec;

/// More statements than this by one session at one instant, or more
/// `closed` replacements at one instant, is a livelock.
pub const LIVELOCK: u64 = 1_000_000;

/// Everything a run knows.
pub struct World<'p> {
    /// The program.
    pub prog: &'p Program,
    /// The clock.
    pub now: f64,
    /// The event heap.
    pub events: EventQueue,
    /// Sessions by slot; ended ones are reused.
    pub sessions: Vec<Session>,
    /// The sessions' attributes, by slot.
    pub attrs: Attrs,
    free_sessions: Vec<u32>,
    /// Sessions ready to run, in the order they became ready.
    pub ready: VecDeque<u32>,
    /// Stage members by IR index.
    pub stages: Vec<StageState>,
    /// Pool members by IR index.
    /// For every statement (by block, index): a `hold` whose units and
    /// reserves read no state (see `Expr::reads_state`), so a head that did
    /// not fit stays so until units come back.
    pub static_holds: Vec<Vec<bool>>,
    pub pools: Vec<PoolState>,
    /// Pools with waiters.
    pub waiting: Waiting,
    /// Flows on shared stages.
    pub flows: FlowSystem,
    /// Scratch: the stages of the flow that is finishing.
    flow_stages: SmallVec<[u32; 4]>,
    /// Whether a flow started or ended since the last issue.
    pub flows_changed: bool,
    flow_gen: u64,
    flow_pending: Option<FlowId>,
    /// ps stages whose job set changed since the last issue.
    pub dirty_ps: Vec<u32>,
    /// Whether each stage is in `dirty_ps`.
    is_dirty: Vec<bool>,
    /// Draws of the machine (ps capacities).
    pub machine_rng: Stream,
    arrival_rng: Stream,
    /// The stream of the `init` or `turn` block running now (re-targeted
    /// for each, so its generator's box is reused).
    pub turn_rng: Stream,
    /// The shared first draws of per-session streams.
    pub first_draws: FirstDraws,
    /// The next session's serial.
    next_serial: u64,
    /// The next lease's id.
    pub next_lease: u64,
    open_arrivals: u64,
    replacements: (f64, u64),
    // Figures.
    events_taken: u64,
    arrivals: u64,
    /// Sessions that ended at t >= warmup.
    pub ended: u64,
    /// Sessions that ended, at any time.
    pub ended_total: u64,
    /// `turn` statements at t >= warmup.
    pub turns: u64,
    live: TimeAvg,
    /// The live sessions over equal windows of [warmup, horizon].
    live_series: WindowedAverage,
    live_count: u64,
    /// Samples by observation index.
    pub samples: Vec<Vec<f64>>,
    /// Scratch for `choose` keys.
    pub keys: Vec<f64>,
    /// Scratch for `choose` keys.
    pub best: Vec<f64>,
    /// Scratch for the invariant checks: Σ flow rates by stage.
    pub rate_sums: Vec<f64>,
}

impl<'p> World<'p> {
    /// A world at time 0 with nothing in it yet.
    pub fn new(prog: &'p Program) -> World<'p> {
        let warmup = prog.warmup;
        let shared = prog.shared_stages();
        let stages = prog
            .stages
            .iter()
            .zip(&shared)
            .map(|(s, &is_shared)| StageState::new(&s.kind, is_shared, warmup))
            .collect::<Vec<_>>();
        let capacity = stages
            .iter()
            .map(|s| s.shared_capacity().unwrap_or(f64::NAN))
            .collect();
        World {
            prog,
            now: 0.0,
            events: EventQueue::new(prog.horizon),
            sessions: Vec::new(),
            attrs: Attrs::new(prog),
            free_sessions: Vec::new(),
            ready: VecDeque::new(),
            stages,
            pools: prog
                .pools
                .iter()
                .map(|p| PoolState::new(p.cap, warmup))
                .collect(),
            static_holds: prog
                .blocks
                .iter()
                .map(|b| b.iter().map(is_static_hold).collect())
                .collect(),
            waiting: Waiting::new(prog.pools.len()),
            flows: FlowSystem::new(capacity, prog.share.unwrap_or(Share::MaxMin)),
            flow_stages: SmallVec::new(),
            flows_changed: false,
            flow_gen: 0,
            flow_pending: None,
            dirty_ps: Vec::new(),
            is_dirty: vec![false; prog.stages.len()],
            machine_rng: Stream::new(prog.seed, Purpose::Machine),
            arrival_rng: Stream::new(prog.seed, Purpose::Arrivals),
            turn_rng: Stream::new(prog.seed, Purpose::Machine),
            first_draws: FirstDraws::new(prog.seed),
            next_serial: 0,
            next_lease: 0,
            open_arrivals: 0,
            replacements: (0.0, 0),
            events_taken: 0,
            arrivals: 0,
            ended: 0,
            ended_total: 0,
            turns: 0,
            live: TimeAvg::new(warmup),
            live_series: WindowedAverage::new(warmup, prog.horizon),
            live_count: 0,
            samples: vec![Vec::new(); prog.observes.len()],
            keys: Vec::new(),
            best: Vec::new(),
            rate_sums: Vec::new(),
        }
    }

    /// A run-time error at the current time, outside any session.
    pub fn error(&self, message: String) -> RunError {
        RunError {
            rule: RunError::rule_of(&message),
            message,
            at: None,
            session: None,
            time: self.now,
        }
    }

    /// Runs the program to its end and fills the report; `options` bound
    /// the events, watch the clock and check invariants after every event.
    pub fn run(
        mut self,
        options: &mut RunOptions<'_>,
    ) -> Result<(Report, SessionCounts), RunError> {
        let prog = self.prog;
        if !(prog.warmup >= 0.0 && prog.warmup < prog.horizon && prog.horizon.is_finite()) {
            return Err(self.error("run: need 0 <= warmup < horizon (a finite horizon)".into()));
        }
        if prog.arrivals.is_some()
            && !matches!(prog.arrival, Arrival::Poisson(_) | Arrival::Renewal(_))
        {
            return Err(
                self.error("run: arrivals applies only to poisson or renewal workloads".into())
            );
        }
        match &prog.arrival {
            Arrival::Batch(n) | Arrival::Closed(n) => {
                // All n live at once: reserve exactly, not by doubling.
                let n_slots = usize::try_from(*n).unwrap_or(usize::MAX);
                self.sessions.reserve_exact(n_slots);
                self.attrs.reserve_slots(n_slots);
                for _ in 0..*n {
                    self.create_session()?;
                }
            }
            Arrival::Poisson(_) => self.events.schedule(0.0, EventKind::Arrival),
            Arrival::Renewal(_) => {
                let gap = self.renewal_gap()?;
                self.events.schedule(gap, EventKind::Arrival);
            }
            Arrival::None => {}
        }
        if prog.warmup > 0.0 {
            self.events.schedule(prog.warmup, EventKind::Warmup);
        }
        self.settle()?;
        let check = options.check_invariants;
        if check {
            self.check_invariants()?;
        }
        // One comparison per event: `checkpoint` is the next event count at
        // which the cap or the progress callback needs attention.
        let max_events = options.max_events.unwrap_or(u64::MAX);
        let mut next_progress = if options.progress.is_some() {
            PROGRESS_EVERY
        } else {
            u64::MAX
        };
        let mut checkpoint = next_progress.min(max_events);
        let mut end = prog.horizon;
        if let Some(limit) = prog.arrivals
            && self.drained(limit)
        {
            return Err(self.drained_too_early());
        }
        while let Some(event) = self.events.pop() {
            if event.time > prog.horizon {
                break;
            }
            if self.events_taken >= checkpoint {
                if self.events_taken >= max_events {
                    return Err(self.error(format!(
                        "the run reached its cap of {max_events} events (max_events) before \
                         its end; raise the cap or shorten the horizon"
                    )));
                }
                if let Some(progress) = options.progress.as_mut() {
                    progress(self.now);
                }
                next_progress = next_progress.saturating_add(PROGRESS_EVERY);
                checkpoint = next_progress.min(max_events);
            }
            self.now = event.time;
            self.events_taken += 1;
            self.handle(event.kind)?;
            self.settle()?;
            if check {
                self.check_invariants()?;
            }
            if let Some(limit) = prog.arrivals
                && self.drained(limit)
            {
                if self.now <= prog.warmup {
                    return Err(self.drained_too_early());
                }
                end = self.now;
                break;
            }
        }
        if let Some(limit) = prog.arrivals
            && end == prog.horizon
            && !self.drained(limit)
        {
            self.now = prog.horizon;
            return Err(if self.open_arrivals < limit {
                self.error(format!(
                    "run: horizon {} reached before requested arrivals: got {}, requested {limit}",
                    prog.horizon, self.open_arrivals
                ))
            } else {
                self.error(format!(
                    "run: failed to drain {} active sessions within horizon {}",
                    self.live_count, prog.horizon
                ))
            });
        }
        let counts = SessionCounts {
            created: self.arrivals,
            ended: self.ended_total,
            live: self.sessions.iter().filter(|s| s.live).count() as u64,
        };
        Ok((self.report(end), counts))
    }

    /// (created, ended at any time, live) as the world counts them.
    pub fn session_counts(&self) -> (u64, u64, u64) {
        (self.arrivals, self.ended_total, self.live_count)
    }

    /// Session slots not on the free list.
    pub fn occupied_slots(&self) -> u64 {
        (self.sessions.len() - self.free_sessions.len()) as u64
    }

    fn drained(&self, limit: u64) -> bool {
        self.open_arrivals >= limit && self.live_count == 0
    }

    fn drained_too_early(&self) -> RunError {
        self.error(format!(
            "run: arrivals drained at {} before or at warmup {}; no measurement interval",
            self.now, self.prog.warmup
        ))
    }

    fn renewal_gap(&mut self) -> Result<f64, RunError> {
        let Arrival::Renewal(gap) = &self.prog.arrival else {
            return Ok(f64::INFINITY);
        };
        let flows = &self.flows;
        let mut cx = Cx {
            now: self.now,
            present: f64::NAN,
            attrs: &[],
            rng: &mut self.arrival_rng,
            first: &mut self.first_draws,
            stages: &self.stages,
            pools: &self.pools,
            flows,
        };
        let g = eval(gap, &mut cx).map_err(|m| self.error(format!("renewal gap: {m}")))?;
        if !(g > 0.0 && g.is_finite()) {
            return Err(self.error(format!(
                "renewal interarrival must be positive and finite (got {g})"
            )));
        }
        Ok(self.now + g)
    }

    fn handle(&mut self, kind: EventKind) -> Result<(), RunError> {
        match kind {
            EventKind::Arrival => {
                self.open_arrivals += 1;
                self.create_session()?;
                if self
                    .prog
                    .arrivals
                    .is_none_or(|limit| self.open_arrivals < limit)
                {
                    let next = match self.prog.arrival {
                        Arrival::Poisson(rate) => {
                            let u = self.arrival_rng.uniform(&mut self.first_draws);
                            self.now + exponential_of(1.0 / rate, u)
                        }
                        _ => self.renewal_gap()?,
                    };
                    self.events.schedule(next, EventKind::Arrival);
                }
            }
            EventKind::Warmup => {}
            EventKind::JobEnd(stage, slot) => {
                let now = self.now;
                if let Some(s) = self.stages[stage as usize].finish_job(
                    stage as usize,
                    now,
                    slot,
                    &mut self.events,
                ) {
                    self.ready.push_back(s);
                }
            }
            EventKind::PsEnd(stage, generation) => {
                if let Some(s) = self.stages[stage as usize].finish_ps(self.now, generation) {
                    self.mark_ps(stage);
                    self.ready.push_back(s);
                }
            }
            EventKind::FlowEnd(generation) => {
                if generation == self.flow_gen
                    && let Some(id) = self.flow_pending.take()
                {
                    self.finish_flow(id);
                }
            }
            EventKind::LeaseEnd(session, lease) => self.end_lease_event(session, lease)?,
        }
        Ok(())
    }

    /// Notes that a ps stage's job set changed in this settle.
    pub fn mark_ps(&mut self, stage: u32) {
        if !self.is_dirty[stage as usize] {
            self.is_dirty[stage as usize] = true;
            self.dirty_ps.push(stage);
        }
    }

    /// Starts a flow of `work` over `stages` for session `session` (its owner).
    pub fn start_flow(&mut self, session: u32, stages: &[u32], work: f64) {
        for &s in stages {
            self.stages[s as usize].flow_count(self.now, 1.0);
        }
        self.flows.start(self.now, stages, work, u64::from(session));
        self.flows_changed = true;
    }

    /// The flow's end: it completes once at every stage it held.
    fn finish_flow(&mut self, id: FlowId) {
        let now = self.now;
        self.flow_stages.clear();
        self.flow_stages.extend_from_slice(self.flows.stages_of(id));
        let (owner, start) = self.flows.finish(now, id);
        for &s in &self.flow_stages {
            let stage = &mut self.stages[s as usize];
            stage.flow_count(now, -1.0);
            stage.record(now, start, start);
        }
        self.flows_changed = true;
        self.ready.push_back(owner as u32);
    }

    /// Runs ready sessions and admission passes until neither does anything,
    /// then issues the ps and flow finish events (spec §6.2).
    pub fn settle(&mut self) -> Result<(), RunError> {
        loop {
            while let Some(s) = self.ready.pop_front() {
                self.run_session(s)?;
            }
            if !self.admission_pass()? && self.ready.is_empty() {
                break;
            }
        }
        self.issue_completions()
    }

    fn issue_completions(&mut self) -> Result<(), RunError> {
        if !self.dirty_ps.is_empty() {
            self.dirty_ps.sort_unstable();
            for i in 0..self.dirty_ps.len() {
                let s = self.dirty_ps[i] as usize;
                self.is_dirty[s] = false;
                let present = self.stages[s].ps_present();
                let phi = if present == 0 {
                    0.0
                } else {
                    let StageKind::Ps(capacity) = &self.prog.stages[s].kind else {
                        continue;
                    };
                    let mut cx = Cx {
                        now: self.now,
                        present: present as f64,
                        attrs: &[],
                        rng: &mut self.machine_rng,
                        first: &mut self.first_draws,
                        stages: &self.stages,
                        pools: &self.pools,
                        flows: &self.flows,
                    };
                    eval(capacity, &mut cx).map_err(|m| {
                        self.error(format!(
                            "stage `{}`: capacity: {m}",
                            self.prog.stages[s].name
                        ))
                    })?
                };
                let now = self.now;
                self.stages[s].issue_ps_finish(s, now, phi, &mut self.events);
            }
            self.dirty_ps.clear();
        }
        if self.flows_changed {
            self.flows_changed = false;
            let now = self.now;
            self.flows.solve(now);
            for &s in self.flows.changed_stages() {
                let stage = &mut self.stages[s as usize];
                let phi = stage.shared_capacity().unwrap_or(f64::NAN);
                stage.util.set(now, self.flows.load(s) / phi);
            }
            self.flow_gen += 1;
            self.flow_pending = None;
            if let Some((time, id)) = self.flows.next_end() {
                self.flow_pending = Some(id);
                self.events
                    .schedule(time.max(now), EventKind::FlowEnd(self.flow_gen));
            }
        }
        Ok(())
    }

    /// Creates a session now: its serial, `init` block, and a place in the ready queue.
    pub fn create_session(&mut self) -> Result<(), RunError> {
        if self.live_count >= MAX_LIVE_SESSIONS {
            return Err(self.error(format!(
                "more than {MAX_LIVE_SESSIONS} live sessions at once (the limit); \
                 sessions arrive faster than they end (is an arrival rate too high?)"
            )));
        }
        let serial = self.next_serial;
        self.next_serial += 1;
        self.arrivals += 1;
        let prog = self.prog;
        let slot = match self.free_sessions.pop() {
            Some(slot) => {
                self.sessions[slot as usize].reset(prog, serial);
                slot
            }
            None => {
                self.sessions.push(Session::new(prog, serial));
                (self.sessions.len() - 1) as u32
            }
        };
        self.attrs.reset(slot, serial);
        self.live_count += 1;
        self.live.set(self.now, self.live_count as f64);
        self.live_series.set(self.now, self.live_count as f64);
        self.run_workload_block(slot, prog.init, 0)?;
        self.ready.push_back(slot);
        Ok(())
    }

    /// The session in `slot` has ended (its holds and leases are already
    /// returned): count it, free its slot, and replace it under `closed`.
    pub fn retire_session(&mut self, slot: u32) -> Result<(), RunError> {
        if self.now >= self.prog.warmup {
            self.ended += 1;
        }
        self.ended_total += 1;
        self.live_count -= 1;
        self.live.set(self.now, self.live_count as f64);
        self.live_series.set(self.now, self.live_count as f64);
        self.sessions[slot as usize].live = false;
        self.free_sessions.push(slot);
        if let Arrival::Closed(_) = self.prog.arrival {
            if self.replacements.0 != self.now {
                self.replacements = (self.now, 0);
            }
            self.replacements.1 += 1;
            if self.replacements.1 > LIVELOCK {
                return Err(self.error(format!(
                    "livelock: more than {LIVELOCK} closed replacements at time {} without the clock moving (session {} ended at once)",
                    self.now, self.sessions[slot as usize].serial
                )));
            }
            self.create_session()?;
        }
        Ok(())
    }

    fn report(&self, end: f64) -> Report {
        let prog = self.prog;
        let span = end - prog.warmup;
        let stage_members = members(prog.stages.iter().map(|s| s.name.as_str()));
        let pool_members = members(prog.pools.iter().map(|p| p.name.as_str()));
        let stages = self
            .stages
            .iter()
            .enumerate()
            .map(|(i, s)| StageRow {
                name: prog.stages[i].name.clone(),
                member: stage_members[i],
                mean_number: s.number.mean(end),
                utilization: Some(s.util.mean(end)).filter(|u| !u.is_nan()),
                completed: s.completed,
                throughput: s.completed as f64 / span,
                mean_wait: s.wait.mean(),
                mean_service: s.service_time.mean(),
                iterations: 0,
            })
            .collect();
        let pools = self
            .pools
            .iter()
            .enumerate()
            .map(|(i, p)| PoolRow {
                name: prog.pools[i].name.clone(),
                member: pool_members[i],
                mean_used: p.used_avg.mean(end),
                mean_cached: 0.0,
                mean_queue: p.queue_avg.mean(end),
                mean_holders: p.holders_avg.mean(end),
                mean_wait: p.wait.mean(),
                admissions: p.admissions,
                evicted_entries: 0,
                evicted_units: 0.0,
                preemptions: 0,
                spills: 0,
                rejected: p.rejected,
                stuck: 0,
            })
            .collect();
        Report {
            source_name: String::new(),
            horizon: prog.horizon,
            end,
            warmup: prog.warmup,
            seed: prog.seed,
            events: self.events_taken,
            arrivals: self.arrivals,
            ended: self.ended,
            turns: self.turns,
            mean_live: self.live.mean(end),
            live_series: self.live_series.means(end),
            observes: prog
                .observes
                .iter()
                .zip(&self.samples)
                .map(|(name, samples)| Observation {
                    name: name.clone(),
                    samples: samples.clone(),
                })
                .collect(),
            stages,
            pools,
        }
    }
}

/// Each entry's index in its family (a run of equal names, as the IR
/// flattens `x[N]`), or `None` in a family of one.
fn members<'n>(names: impl Iterator<Item = &'n str>) -> Vec<Option<usize>> {
    let names: Vec<&str> = names.collect();
    let mut out = vec![None; names.len()];
    let mut start = 0;
    while start < names.len() {
        let end = start
            + names[start..]
                .iter()
                .take_while(|&&n| n == names[start])
                .count();
        if end - start > 1 {
            for (k, slot) in out[start..end].iter_mut().enumerate() {
                *slot = Some(k);
            }
        }
        start = end;
    }
    out
}

/// Whether a statement is a `hold` whose units and reserves read no state.
fn is_static_hold(stmt: &crate::ir::Stmt) -> bool {
    use crate::ir::{Expr, Stmt};
    match stmt {
        Stmt::Hold { pools, .. } => pools
            .iter()
            .all(|hp| !hp.1.reads_state() && !hp.2.as_ref().is_some_and(Expr::reads_state)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::members;

    #[test]
    fn families_are_runs_of_equal_names() {
        let got = members(["a", "x", "x", "x", "b", "y", "y"].into_iter());
        assert_eq!(
            got,
            [None, Some(0), Some(1), Some(2), None, Some(0), Some(1)]
        );
    }
}
