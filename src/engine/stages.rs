//! Stage service: delay, fifo(c), ps with virtual time, and the figures of
//! shared stages whose jobs are flows (spec §6.3–6.4, §6.11).
//!
//! Invariants: a delay or fifo job in service has its own finish event,
//! scheduled when its service starts; a ps stage has at most one live
//! finish event (generation `generation`), for the job of the smallest finish tag,
//! and jobs leave a ps stage only in tag order (ties: join order), so its
//! jobs live in a heap. `number` always equals the jobs present.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

use super::events::{EventKind, EventQueue};
use super::flows::FlowSystem;
use super::stats::{RunningMean, TimeAvg};
use crate::ir::{Expr, StageKind};

/// A job at a delay or fifo stage.
#[derive(Clone, Copy, Debug)]
pub struct Job {
    /// The session's slot.
    pub session: u32,
    /// The work.
    pub work: f64,
    /// When it reached the stage.
    pub arrived: f64,
    /// When its service started (it ends at `started + work`).
    pub started: f64,
}

/// A job at a ps stage, ordered by (tag, join order), smallest first.
#[derive(Clone, Copy, Debug)]
struct PsJob {
    tag: f64,
    order: u64,
    session: u32,
    arrived: f64,
}

impl PartialEq for PsJob {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for PsJob {}
impl PartialOrd for PsJob {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for PsJob {
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .tag
            .total_cmp(&self.tag)
            .then(other.order.cmp(&self.order))
    }
}

/// Jobs in service with their own finish events, in reusable slots.
#[derive(Clone, Debug, Default)]
pub struct Slots {
    jobs: Vec<Option<Job>>,
    free: Vec<u32>,
}

impl Slots {
    fn insert(&mut self, job: Job) -> u32 {
        match self.free.pop() {
            Some(slot) => {
                self.jobs[slot as usize] = Some(job);
                slot
            }
            None => {
                self.jobs.push(Some(job));
                (self.jobs.len() - 1) as u32
            }
        }
    }
    fn take(&mut self, slot: u32) -> Option<Job> {
        let job = self.jobs.get_mut(slot as usize)?.take();
        if job.is_some() {
            self.free.push(slot);
        }
        job
    }
    fn remaining(&self, now: f64) -> f64 {
        // work − elapsed, as the reference sums it (not end − now: they
        // differ in the last bits).
        self.jobs
            .iter()
            .flatten()
            .map(|j| j.work - (now - j.started))
            .sum()
    }
    fn len(&self) -> usize {
        self.jobs.len() - self.free.len()
    }
}

/// Processor sharing by virtual time (spec §6.3).
#[derive(Clone, Debug)]
pub struct Ps {
    v: f64,
    tlast: f64,
    phi: f64,
    jobs: BinaryHeap<PsJob>,
    order: u64,
    /// The generation of the live finish event.
    pub generation: u64,
}

impl Ps {
    /// Moves virtual time to `now` at the rate φ/n fixed at the last issue.
    fn advance(&mut self, now: f64) {
        let n = self.jobs.len();
        if n > 0 && now > self.tlast {
            self.v += (now - self.tlast) * self.phi / n as f64;
        }
        self.tlast = now;
    }

    fn remaining(&self, now: f64) -> f64 {
        let n = self.jobs.len();
        let v = if n > 0 && now > self.tlast {
            self.v + (now - self.tlast) * self.phi / n as f64
        } else {
            self.v
        };
        self.jobs.iter().map(|j| j.tag - v).sum()
    }
}

/// How a stage member serves.
#[derive(Clone, Debug)]
pub enum Service {
    /// Infinite servers.
    Delay(Slots),
    /// `servers` servers in arrival order.
    Fifo {
        /// The number of servers.
        servers: u32,
        /// Jobs in service.
        busy: Slots,
        /// Jobs waiting, in arrival order.
        waiting: VecDeque<Job>,
    },
    /// Processor sharing.
    Ps(Box<Ps>),
    /// Every job is a flow of the flow system; φ is the capacity.
    Shared(f64),
}

/// A stage member: its service and its figures.
#[derive(Clone, Debug)]
pub struct StageState {
    /// How it serves.
    pub service: Service,
    /// Jobs present (waiting or in service, flows on a shared stage).
    pub number: TimeAvg,
    /// 1 while not empty; on a shared stage Σ rates / φ.
    pub util: TimeAvg,
    /// Jobs finishing at t >= warmup.
    pub completed: u64,
    /// Service start − arrival over those jobs.
    pub wait: RunningMean,
    /// Finish − service start over those jobs.
    pub service_time: RunningMean,
    warmup: f64,
}

impl StageState {
    /// A stage as the IR declares it; `shared` stages serve flows.
    pub fn new(kind: &StageKind, shared: bool, warmup: f64) -> StageState {
        let service = match kind {
            _ if shared => Service::Shared(match kind {
                StageKind::Ps(Expr::Num(phi)) => *phi,
                _ => f64::NAN,
            }),
            // The validator refuses step stages until the serving engine lands.
            StageKind::Delay | StageKind::Step(_) => Service::Delay(Slots::default()),
            StageKind::Fifo(c) => Service::Fifo {
                servers: *c,
                busy: Slots::default(),
                waiting: VecDeque::new(),
            },
            StageKind::Ps(_) => Service::Ps(Box::new(Ps {
                v: 0.0,
                tlast: 0.0,
                phi: 0.0,
                jobs: BinaryHeap::new(),
                order: 0,
                generation: 0,
            })),
        };
        StageState {
            service,
            number: TimeAvg::new(warmup),
            util: TimeAvg::new(warmup),
            completed: 0,
            wait: RunningMean::default(),
            service_time: RunningMean::default(),
            warmup,
        }
    }

    /// Whether its jobs are flows.
    pub fn is_shared(&self) -> bool {
        matches!(self.service, Service::Shared(_))
    }

    /// φ of a shared stage.
    pub fn shared_capacity(&self) -> Option<f64> {
        match self.service {
            Service::Shared(phi) => Some(phi),
            _ => None,
        }
    }

    fn count(&mut self, now: f64, delta: f64) {
        let n = self.number.value() + delta;
        self.number.set(now, n);
        if !self.is_shared() {
            self.util.set(now, if n > 0.0 { 1.0 } else { 0.0 });
        }
    }

    /// A job of `work` > 0 from session `session` reaches the (unshared) stage `index`.
    pub fn join(
        &mut self,
        index: usize,
        now: f64,
        session: u32,
        work: f64,
        events: &mut EventQueue,
    ) {
        self.count(now, 1.0);
        let job = Job {
            session,
            work,
            arrived: now,
            started: now,
        };
        match &mut self.service {
            Service::Delay(slots) => {
                let slot = slots.insert(job);
                events.schedule(now + work, EventKind::JobEnd(index as u32, slot));
            }
            Service::Fifo {
                servers,
                busy,
                waiting,
            } => {
                if busy.len() < *servers as usize {
                    let slot = busy.insert(job);
                    events.schedule(now + work, EventKind::JobEnd(index as u32, slot));
                } else {
                    waiting.push_back(job);
                }
            }
            Service::Ps(ps) => {
                ps.advance(now);
                let order = ps.order;
                ps.order += 1;
                ps.jobs.push(PsJob {
                    tag: ps.v + work,
                    order,
                    session,
                    arrived: now,
                });
            }
            Service::Shared(_) => unreachable!("flows join through the flow system"),
        }
    }

    /// The finish event of a delay or fifo job: the job leaves (a fifo
    /// starts its next waiting job at once); returns the job's session.
    pub fn finish_job(
        &mut self,
        index: usize,
        now: f64,
        slot: u32,
        events: &mut EventQueue,
    ) -> Option<u32> {
        let job = match &mut self.service {
            Service::Delay(slots) => slots.take(slot)?,
            Service::Fifo { busy, waiting, .. } => {
                let job = busy.take(slot)?;
                if let Some(mut next) = waiting.pop_front() {
                    next.started = now;
                    let slot = busy.insert(next);
                    events.schedule(now + next.work, EventKind::JobEnd(index as u32, slot));
                }
                job
            }
            _ => return None,
        };
        self.count(now, -1.0);
        self.record(now, job.arrived, job.started);
        Some(job.session)
    }

    /// Counts a completion at `now` (if at or after warm-up).
    pub fn record(&mut self, now: f64, arrived: f64, started: f64) {
        if now >= self.warmup {
            self.completed += 1;
            self.wait.push(started - arrived);
            self.service_time.push(now - started);
        }
    }

    /// The live ps finish event fired: the job of the smallest tag leaves.
    /// Returns its session, or `None` when the event was stale.
    pub fn finish_ps(&mut self, now: f64, generation: u64) -> Option<u32> {
        let Service::Ps(ps) = &mut self.service else {
            return None;
        };
        if generation != ps.generation {
            return None;
        }
        // Virtual time moves with the clock, but at least to the leaving
        // job's tag: rounding never leaves it a sliver of work (this
        // reproduces the reference's event times to the last bit).
        ps.advance(now);
        let job = ps.jobs.pop()?;
        if job.tag > ps.v {
            ps.v = job.tag;
        }
        self.count(now, -1.0);
        self.record(now, job.arrived, job.arrived);
        Some(job.session)
    }

    /// Jobs present at a ps stage (for `present`).
    pub fn ps_present(&self) -> usize {
        match &self.service {
            Service::Ps(ps) => ps.jobs.len(),
            _ => 0,
        }
    }

    /// Issues the ps stage's one finish event anew with capacity `phi`
    /// (evaluated by the caller with `present` = jobs present).
    pub fn issue_ps_finish(&mut self, index: usize, now: f64, phi: f64, events: &mut EventQueue) {
        let Service::Ps(ps) = &mut self.service else {
            return;
        };
        ps.advance(now);
        ps.phi = phi;
        ps.generation += 1;
        if let Some(head) = ps.jobs.peek()
            && phi > 0.0
        {
            let n = ps.jobs.len() as f64;
            events.schedule(
                now + (head.tag - ps.v) * n / phi,
                EventKind::PsEnd(index as u32, ps.generation),
            );
        }
    }

    /// A flow started (`+1`) or ended (`-1`) on this shared stage.
    pub fn flow_count(&mut self, now: f64, delta: f64) {
        self.count(now, delta);
    }

    /// `queue(s)`: jobs present.
    pub fn queue(&self, index: usize, flows: &FlowSystem) -> f64 {
        match &self.service {
            Service::Shared(_) => flows.count(index as u32) as f64,
            _ => self.number.value(),
        }
    }

    /// `busy(s)`: jobs in service.
    pub fn busy(&self, index: usize, flows: &FlowSystem) -> f64 {
        match &self.service {
            Service::Fifo { busy, .. } => (busy.len()) as f64,
            _ => self.queue(index, flows),
        }
    }

    /// `work(s)`: the remaining work of every job present.
    pub fn work(&self, index: usize, now: f64, flows: &FlowSystem) -> f64 {
        match &self.service {
            Service::Delay(slots) => slots.remaining(now),
            Service::Fifo { busy, waiting, .. } => {
                busy.remaining(now) + waiting.iter().map(|j| j.work).sum::<f64>()
            }
            Service::Ps(ps) => ps.remaining(now),
            Service::Shared(_) => flows.work(index as u32, now),
        }
    }
}
