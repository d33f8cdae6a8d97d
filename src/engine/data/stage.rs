//! A stage member's components, its service (delay, fifo(c), ps with
//! virtual time, or shared: its jobs are flows) and its figures, and the
//! dense columns that `choose` keys read (spec §6.3–6.4, §6.11).
//!
//! Invariants: a fifo job in service has its own finish event, scheduled
//! when its service starts. A delay stage's jobs are a heap by (end,
//! sequence number), each job taking its sequence number when it joins;
//! the heap's head always has its event in the event queue, scheduled
//! with that number (a job gets its event when it becomes the head, or
//! at once if it joins as the head), so the events pop in the same order
//! and number as one event per job would, with the job stored once. A ps stage has at most one live
//! finish event (its generation in `DirtyPs::live`), for the job of the smallest
//! finish tag, and jobs leave a ps stage only in tag order (ties: join
//! order), so its jobs live in a heap. [`StageLoad`]'s columns always equal
//! the jobs present and in service of every member: every change of either
//! goes through [`StageStats::count`] or [`StageLoad::set_busy`].
//!
//! Architecture invariant: plain data and its arithmetic; nothing here
//! evaluates an expression or knows a session beyond its entity.

use std::collections::VecDeque;

use bevy_ecs::prelude::*;

use crate::engine::data::events::{EventKind, EventQueue};
use crate::engine::data::min_heap::{Keyed, MinHeap};
use crate::engine::data::residents::Engine;
use crate::engine::data::stats::{RunningMean, TimeAvg};
use crate::engine::flows::FlowSystem;
use crate::engine::serving::estimators::Estimators;
use crate::ir::{Expr, StageKind};
use crate::report::WindowedAverage;

/// A job at a delay or fifo stage.
#[derive(Clone, Copy, Debug)]
pub struct Job {
    /// The session.
    pub session: Entity,
    /// The work.
    pub work: f64,
    /// When it reached the stage.
    pub arrived: f64,
    /// When its service started (it ends at `started + work`).
    pub started: f64,
    /// Taken away by a preemption: its slot waits for its finish event,
    /// which then only frees it.
    pub cancelled: bool,
}

/// A job at a ps stage, ordered by (tag, join order), smallest first.
#[derive(Clone, Copy, Debug)]
struct PsJob {
    tag: f64,
    order: u64,
    session: Entity,
    arrived: f64,
}

impl Keyed for PsJob {
    fn key(&self) -> (f64, u64) {
        (self.tag, self.order)
    }
}

/// A job at a delay stage, in its heap: 32 bytes (10^7 of a `batch` are
/// live at once).
#[derive(Clone, Copy, Debug)]
pub struct DelayJob {
    /// When it reached the stage (its service started then).
    started: f64,
    /// The work; it ends at `started + work`.
    work: f64,
    /// Its sequence number (the low 62 bits) and two flags, [`SCHEDULED`]
    /// and [`CANCELLED`].
    seq: u64,
    /// The session.
    session: Entity,
}

/// A [`DelayJob`] whose event is in the event queue.
const SCHEDULED: u64 = 1 << 62;
/// A [`DelayJob`] taken away by a preemption: its event only removes it.
const CANCELLED: u64 = 1 << 63;

impl DelayJob {
    fn end(&self) -> f64 {
        self.started + self.work
    }
    fn seq(&self) -> u64 {
        self.seq & !(SCHEDULED | CANCELLED)
    }
}

impl Keyed for DelayJob {
    fn key(&self) -> (f64, u64) {
        (self.end(), self.seq())
    }
}

/// A delay stage's jobs, earliest end first; only the head's event is
/// sure to be in the event queue.
#[derive(Clone, Debug, Default)]
pub struct DelayJobs {
    jobs: MinHeap<DelayJob>,
}

impl DelayJobs {
    /// A job of `work` from `session` joins at `now`; the earliest job has
    /// its event.
    fn join(
        &mut self,
        index: usize,
        now: f64,
        session: Entity,
        work: f64,
        events: &mut EventQueue,
    ) {
        let seq = events.take_seq();
        self.jobs.push(DelayJob {
            started: now,
            work,
            seq,
            session,
        });
        self.schedule_head(index, events);
    }

    /// Schedules the head's event with its own sequence number, unless
    /// it has one.
    fn schedule_head(&mut self, index: usize, events: &mut EventQueue) {
        // The flag is outside the job's key: the order is kept.
        if let Some(head) = self.jobs.peek_mut_in_order()
            && head.seq & SCHEDULED == 0
        {
            head.seq |= SCHEDULED;
            let (end, seq) = (head.end(), head.seq());
            events.schedule_taken(end, seq, EventKind::DelayEnd(index as u32));
        }
    }

    /// The head's event popped: the head leaves (`None` if it was
    /// cancelled) and the next head gets its event.
    fn finish(&mut self, index: usize, events: &mut EventQueue) -> Option<DelayJob> {
        let job = self.jobs.pop()?;
        self.schedule_head(index, events);
        (job.seq & CANCELLED == 0).then_some(job)
    }

    fn remaining(&self, now: f64) -> f64 {
        self.jobs
            .iter()
            .filter(|j| j.seq & CANCELLED == 0)
            .map(|j| j.work - (now - j.started))
            .sum()
    }

    /// Cancels session `e`'s job, if it has one here (rare: the heap is
    /// rebuilt; the order does not change).
    fn cancel(&mut self, e: Entity) -> bool {
        let mut found = false;
        self.jobs.rebuild(|jobs| {
            found = jobs
                .iter_mut()
                .find(|j| j.session == e && j.seq & CANCELLED == 0)
                .map(|j| j.seq |= CANCELLED)
                .is_some();
        });
        found
    }
}

/// Jobs in service with their own finish events, in reusable slots.
#[derive(Clone, Debug, Default)]
pub struct Slots {
    jobs: Vec<Option<Job>>,
    free: Vec<u32>,
    /// Slots of cancelled jobs whose finish events have not fired yet.
    cancelled: usize,
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
    /// The job in service in `slot` (not cancelled) leaves and the first
    /// waiting job starts at `now` in its slot: `take` and then
    /// `start_waiting`, without the free list (a fifo with jobs waiting has
    /// every server busy, so exactly one starts, in the slot just freed).
    /// Returns both; `None`, changing nothing, when the slot has no such
    /// job or nothing waits.
    #[inline(always)]
    fn hand_over(
        &mut self,
        slot: u32,
        waiting: &mut VecDeque<Job>,
        now: f64,
    ) -> Option<(Job, Job)> {
        let cell = self.jobs.get_mut(slot as usize)?;
        let job = (*cell).filter(|j| !j.cancelled)?;
        let mut next = waiting.pop_front()?;
        next.started = now;
        *cell = Some(next);
        Some((job, next))
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
            .filter(|j| !j.cancelled)
            .map(|j| j.work - (now - j.started))
            .sum()
    }
    fn len(&self) -> usize {
        self.jobs.len() - self.free.len() - self.cancelled
    }
    /// Cancels session `e`'s job, if it has one here.
    fn cancel(&mut self, e: Entity) -> bool {
        let found = self
            .jobs
            .iter_mut()
            .flatten()
            .find(|j| j.session == e && !j.cancelled);
        match found {
            Some(job) => {
                job.cancelled = true;
                self.cancelled += 1;
                true
            }
            None => false,
        }
    }
}

/// Processor sharing by virtual time (spec §6.3).
#[derive(Clone, Debug)]
pub struct Ps {
    v: f64,
    tlast: f64,
    phi: f64,
    /// The jobs present at the last issue: with φ, the rate virtual time
    /// runs at until the next issue, also after a job joined or left that
    /// the settle's walk had passed (0.1.0: a spill's job joining after the
    /// walk slows nobody until the next issue).
    n: f64,
    jobs: MinHeap<PsJob>,
    order: u64,
}

impl Ps {
    /// Moves virtual time to `now` at the rate φ/n fixed at the last issue.
    fn advance(&mut self, now: f64) {
        self.v = self.v_at(now);
        self.tlast = now;
    }

    /// Virtual time at `now`. As in 0.1.0 it moves even when no time has
    /// passed: under `ps(inf)` that is 0 · inf, NaN, for good, and every job
    /// that joins after it has a NaN tag, ordered before every number and
    /// among themselves by joining (see [`Ps::tag`]).
    fn v_at(&self, now: f64) -> f64 {
        if self.n > 0.0 {
            let v = self.v + (now - self.tlast) * (self.phi / self.n);
            // One NaN whatever the hardware makes of 0 · inf: the sign
            // `total_cmp` puts first.
            if v.is_nan() { -f64::NAN } else { v }
        } else {
            self.v
        }
    }

    /// The tag of a job of `work` joining now (after [`Ps::advance`]).
    fn tag(&self, work: f64) -> f64 {
        if self.v.is_nan() {
            self.v
        } else {
            self.v + work
        }
    }

    /// Work left at `now`. Each job counts at least 0, as in 0.1.0: a tag
    /// that rounding left just below V counts 0, and so does a NaN one
    /// (`f64::max` ignores NaN).
    fn remaining(&self, now: f64) -> f64 {
        let v = self.v_at(now);
        self.jobs.iter().map(|j| (j.tag - v).max(0.0)).sum()
    }
}

/// How a stage member serves.
#[derive(Component, Clone, Debug)]
pub enum Service {
    /// Infinite servers.
    Delay(DelayJobs),
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
    /// A step stage: its residents and iteration.
    Step(Box<Engine>),
}

impl Service {
    /// A stage as the IR declares it; `shared` stages serve flows.
    pub fn new(kind: &StageKind, shared: bool) -> Service {
        match kind {
            _ if shared => Service::Shared(match kind {
                StageKind::Ps(Expr::Num(phi)) => *phi,
                _ => f64::NAN,
            }),
            StageKind::Delay => Service::Delay(DelayJobs::default()),
            StageKind::Step(_) => Service::Step(Box::default()),
            StageKind::Fifo(c) => Service::Fifo {
                servers: *c,
                busy: Slots::default(),
                waiting: VecDeque::new(),
            },
            StageKind::Ps(_) => Service::Ps(Box::new(Ps {
                v: 0.0,
                tlast: 0.0,
                phi: 0.0,
                n: 0.0,
                jobs: MinHeap::default(),
                order: 0,
            })),
        }
    }

    /// Whether its jobs are flows.
    pub fn is_shared(&self) -> bool {
        matches!(self, Service::Shared(_))
    }

    /// φ of a shared stage.
    pub fn shared_capacity(&self) -> Option<f64> {
        match self {
            Service::Shared(phi) => Some(*phi),
            _ => None,
        }
    }

    /// Jobs present at a ps stage (for `present`).
    pub fn ps_present(&self) -> usize {
        match self {
            Service::Ps(ps) => ps.jobs.len(),
            _ => 0,
        }
    }

    /// `work(s)`: the remaining work of every job present.
    pub fn work(&self, index: usize, now: f64, flows: &FlowSystem) -> f64 {
        match self {
            Service::Delay(jobs) => jobs.remaining(now),
            Service::Fifo { busy, waiting, .. } => {
                busy.remaining(now) + waiting.iter().map(|j| j.work).sum::<f64>()
            }
            Service::Ps(ps) => ps.remaining(now),
            Service::Shared(_) => flows.work(index as u32, now),
            Service::Step(engine) => engine.work(),
        }
    }

    /// The step stage's engine, if it is one.
    pub fn engine(&mut self) -> Option<&mut Engine> {
        match self {
            Service::Step(engine) => Some(engine),
            _ => None,
        }
    }
}

/// The dense columns of every stage member that expressions read:
/// `queue(s)` and `busy(s)` by IR index, so a `choose` key over a family
/// reads an array, not an entity.
#[derive(Resource, Clone, Debug)]
pub struct StageLoad {
    /// Jobs present (waiting or in service; flows on a shared stage).
    pub present: Vec<f64>,
    /// Jobs in service (a fifo's busy servers; a step stage's residents
    /// served by its running iteration; every job elsewhere).
    pub busy: Vec<f64>,
    /// Each member's online estimators (`est_*`, `price`).
    pub est: Vec<Estimators>,
    /// A step stage's `budget_left`; NaN for other stages.
    pub budget_left: Vec<f64>,
    /// Whether any expression reads `est`: without one, a delay, fifo or
    /// ps completion leaves it alone.
    pub estimating: bool,
}

impl StageLoad {
    /// Every member empty; `estimating` as [`StageLoad::estimating`].
    pub fn new(stages: usize, estimating: bool) -> StageLoad {
        StageLoad {
            present: vec![0.0; stages],
            busy: vec![0.0; stages],
            est: vec![Estimators::default(); stages],
            budget_left: vec![f64::NAN; stages],
            estimating,
        }
    }

    /// A job or a flow completed at member `index`: its figures (and its
    /// estimators, if read) follow.
    #[inline(always)]
    pub fn complete(
        &mut self,
        index: usize,
        stats: &mut StageStats,
        now: f64,
        arrived: f64,
        started: f64,
    ) {
        if self.estimating {
            self.estimate(index, stats, now, arrived, started);
        } else {
            stats.record_times(now, arrived, started);
        }
    }

    /// [`StageLoad::complete`] when something reads the estimators: out of
    /// line, so the common completion stays small.
    #[cold]
    #[inline(never)]
    fn estimate(
        &mut self,
        index: usize,
        stats: &mut StageStats,
        now: f64,
        arrived: f64,
        started: f64,
    ) {
        stats.record(&mut self.est[index], now, arrived, started);
    }

    /// Sets member `index`'s busy column from its service.
    pub fn set_busy(&mut self, index: usize, service: &Service) {
        match service {
            Service::Fifo { busy, .. } => self.in_service(index, busy.len()),
            Service::Step(engine) => self.busy[index] = f64::from(engine.served),
            _ => self.all_in_service(index),
        }
    }

    /// [`StageLoad::set_busy`] of a delay or ps member (or a shared one):
    /// every job present is in service. A caller with its service in hand
    /// calls this arm directly, without the match.
    #[inline(always)]
    pub fn all_in_service(&mut self, index: usize) {
        self.busy[index] = self.present[index];
    }

    /// [`StageLoad::set_busy`] of a fifo member with `n` jobs in service.
    #[inline(always)]
    pub fn in_service(&mut self, index: usize, n: usize) {
        self.busy[index] = n as f64;
    }
}

/// A stage member's figures.
#[derive(Component, Clone, Debug)]
pub struct StageStats {
    /// Jobs present (waiting or in service, flows on a shared stage).
    pub number: TimeAvg,
    /// 1 while not empty (a shared stage's, Σ rates / φ, is in
    /// [`crate::engine::data::flow_entity::Flows::util`]).
    pub util: TimeAvg,
    /// The jobs present over equal windows of `[warmup, horizon]`, for the
    /// stability test's `growing` (docs/report.md §2.1).
    pub present_series: WindowedAverage,
    /// Jobs finishing at t >= warmup.
    pub completed: u64,
    /// Service start − arrival over those jobs.
    pub wait: RunningMean,
    /// Finish − service start over those jobs.
    pub service_time: RunningMean,
    warmup: f64,
}

impl StageStats {
    /// Empty figures over `[warmup, end]`, windowed over `[warmup, horizon]`.
    pub fn new(warmup: f64, horizon: f64) -> StageStats {
        StageStats {
            number: TimeAvg::new(warmup),
            util: TimeAvg::new(warmup),
            present_series: WindowedAverage::new(warmup, horizon),
            completed: 0,
            wait: RunningMean::default(),
            service_time: RunningMean::default(),
            warmup,
        }
    }

    /// The jobs present at stage `index` move by `delta` at `now`.
    pub fn count(
        &mut self,
        index: usize,
        shared: bool,
        load: &mut StageLoad,
        now: f64,
        delta: f64,
    ) {
        let n = self.number.value() + delta;
        self.number.set(now, n);
        self.present_series.set(now, n);
        load.present[index] = n;
        if !shared {
            self.util.set(now, if n > 0.0 { 1.0 } else { 0.0 });
        }
    }

    /// Counts a completion at `now` (if at or after warm-up) and updates
    /// the stage's estimators (whatever the time).
    fn record(&mut self, est: &mut Estimators, now: f64, arrived: f64, started: f64) {
        est.complete(started, started - arrived, now - started);
        self.record_times(now, arrived, started);
    }

    /// Counts a completion at `now` (if at or after warm-up), leaving the
    /// estimators alone.
    #[inline(always)]
    fn record_times(&mut self, now: f64, arrived: f64, started: f64) {
        if now >= self.warmup {
            self.completed += 1;
            self.wait.push(started - arrived);
            self.service_time.push(now - started);
        }
    }
}

/// A job of `work` > 0 from `session` reaches the (unshared) stage `index`.
pub fn join(
    index: usize,
    (service, stats): (&mut Service, &mut StageStats),
    load: &mut StageLoad,
    now: f64,
    session: Entity,
    work: f64,
    events: &mut EventQueue,
) {
    stats.count(index, false, load, now, 1.0);
    // Each arm sets the busy column as `StageLoad::set_busy` would, its
    // service in hand.
    match service {
        Service::Delay(jobs) => {
            jobs.join(index, now, session, work, events);
            load.all_in_service(index);
        }
        Service::Fifo {
            servers,
            busy,
            waiting,
        } => {
            let job = Job {
                session,
                work,
                arrived: now,
                started: now,
                cancelled: false,
            };
            if busy.len() < *servers as usize {
                let slot = busy.insert(job);
                events.schedule(now + work, EventKind::JobEnd(index as u32, slot));
            } else {
                waiting.push_back(job);
            }
            load.in_service(index, busy.len());
        }
        Service::Ps(ps) => {
            ps.advance(now);
            let order = ps.order;
            ps.order += 1;
            ps.jobs.push(PsJob {
                tag: ps.tag(work),
                order,
                session,
                arrived: now,
            });
            load.all_in_service(index);
        }
        // The run statement sends every job on a shared stage to the flow
        // system, and every run on a step stage to its engine.
        Service::Shared(_) | Service::Step(_) => load.set_busy(index, service),
    }
}

/// The finish event of a delay stage's head job: it leaves; returns its
/// session (`None` for a cancelled job, which only leaves).
pub fn finish_delay_job(
    index: usize,
    (service, stats): (&mut Service, &mut StageStats),
    load: &mut StageLoad,
    now: f64,
    events: &mut EventQueue,
) -> Option<Entity> {
    let Service::Delay(jobs) = service else {
        return None;
    };
    let job = jobs.finish(index, events)?;
    stats.count(index, false, load, now, -1.0);
    load.all_in_service(index);
    load.complete(index, stats, now, job.started, job.started);
    Some(job.session)
}

/// The finish event of a fifo job: the job leaves and the fifo starts its
/// next waiting job at once; returns the job's session.
pub fn finish_job(
    index: usize,
    (service, stats): (&mut Service, &mut StageStats),
    load: &mut StageLoad,
    now: f64,
    slot: u32,
    events: &mut EventQueue,
) -> Option<Entity> {
    let Service::Fifo {
        busy,
        servers,
        waiting,
    } = service
    else {
        return None;
    };
    let job = match busy.hand_over(slot, waiting, now) {
        Some((job, next)) => {
            events.schedule(now + next.work, EventKind::JobEnd(index as u32, slot));
            job
        }
        None => {
            let job = busy.take(slot)?;
            if job.cancelled {
                // A preemption took it away; its slot is free now.
                busy.cancelled -= 1;
                return None;
            }
            start_waiting(index, busy, waiting, *servers, now, events);
            job
        }
    };
    stats.count(index, false, load, now, -1.0);
    // `set_busy` of a fifo, its service already in hand.
    load.in_service(index, busy.len());
    load.complete(index, stats, now, job.arrived, job.started);
    Some(job.session)
}

/// Starts the fifo's waiting jobs while a server is free.
#[inline(always)]
fn start_waiting(
    index: usize,
    busy: &mut Slots,
    waiting: &mut VecDeque<Job>,
    servers: u32,
    now: f64,
    events: &mut EventQueue,
) {
    while busy.len() < servers as usize {
        let Some(mut next) = waiting.pop_front() else {
            break;
        };
        next.started = now;
        let slot = busy.insert(next);
        events.schedule(now + next.work, EventKind::JobEnd(index as u32, slot));
    }
}

/// A preemption takes session `e`'s job away from the (unshared, not
/// step) stage `index`: it leaves without completing (a fifo starts its
/// next job at once; a ps stage's finish is issued anew by the caller).
/// Returns whether the session had a job there.
pub fn cancel(
    index: usize,
    (service, stats): (&mut Service, &mut StageStats),
    load: &mut StageLoad,
    now: f64,
    e: Entity,
    events: &mut EventQueue,
) -> bool {
    let found = match service {
        Service::Delay(jobs) => jobs.cancel(e),
        Service::Fifo {
            servers,
            busy,
            waiting,
        } => {
            if busy.cancel(e) {
                start_waiting(index, busy, waiting, *servers, now, events);
                true
            } else if let Some(k) = waiting.iter().position(|j| j.session == e) {
                waiting.remove(k);
                true
            } else {
                false
            }
        }
        Service::Ps(ps) => {
            ps.advance(now);
            let before = ps.jobs.len();
            ps.jobs.rebuild(|jobs| jobs.retain(|j| j.session != e));
            ps.jobs.len() < before
        }
        Service::Shared(_) | Service::Step(_) => false,
    };
    if found {
        stats.count(index, false, load, now, -1.0);
        load.set_busy(index, service);
    }
    found
}

/// The live ps finish event fired (the caller dropped a stale one): the
/// job of the smallest tag leaves. Returns its session.
pub fn finish_ps(
    index: usize,
    (service, stats): (&mut Service, &mut StageStats),
    load: &mut StageLoad,
    now: f64,
) -> Option<Entity> {
    let Service::Ps(ps) = service else {
        return None;
    };
    // Virtual time moves with the clock, but at least to the leaving
    // job's tag: rounding never leaves it a sliver of work (this
    // reproduces the reference's event times to the last bit).
    ps.advance(now);
    let job = ps.jobs.pop()?;
    if job.tag > ps.v {
        ps.v = job.tag;
    }
    stats.count(index, false, load, now, -1.0);
    load.all_in_service(index);
    load.complete(index, stats, now, job.arrived, job.arrived);
    Some(job.session)
}

/// Issues the ps stage's one finish event anew with capacity `phi`
/// (evaluated by the caller with `present` = jobs present); `live` is the
/// stage's generation of its live finish event (`DirtyPs::live`).
pub fn issue_ps_finish(
    service: &mut Service,
    index: usize,
    now: f64,
    phi: f64,
    live: &mut u64,
    events: &mut EventQueue,
) {
    let Service::Ps(ps) = service else {
        return;
    };
    ps.advance(now);
    ps.phi = phi;
    ps.n = ps.jobs.len() as f64;
    *live += 1;
    if let Some(head) = ps.jobs.peek()
        && phi > 0.0
    {
        let n = ps.jobs.len() as f64;
        // Work over the rate φ/n, rounded as 0.1.0 rounds it; a head whose
        // tag rounded just below V (equal tags, one left) ends now, never
        // before, and so does one with a NaN tag (`f64::max` ignores NaN).
        events.schedule(
            (now + (head.tag - ps.v) / (phi / n)).max(now),
            EventKind::PsEnd(index as u32, *live),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delay_jobs_end_in_the_order_and_number_of_one_event_each() {
        let session = |i| Entity::from_raw_u32(i).expect("a small index");
        let mut events = EventQueue::new(10.0);
        let mut jobs = DelayJobs::default();
        // (end, seq): a (2, 0) is the head and queued; the warm-up (1, 1);
        // b (1, 2) becomes the head and is queued; c (1, 3) joins behind
        // b and waits for its turn as the head.
        jobs.join(0, 0.0, session(1), 2.0, &mut events);
        events.schedule(1.0, EventKind::Warmup);
        jobs.join(0, 0.0, session(2), 1.0, &mut events);
        jobs.join(0, 0.5, session(3), 0.5, &mut events);
        let mut order = Vec::new();
        while let Some(event) = events.pop() {
            order.push((event.time, event.seq));
            if event.kind == EventKind::DelayEnd(0) {
                let job = jobs.finish(0, &mut events).expect("the head");
                assert_eq!(job.seq(), event.seq);
            }
        }
        assert_eq!(order, [(1.0, 1), (1.0, 2), (1.0, 3), (2.0, 0)]);
    }

    #[test]
    fn a_cancelled_delay_job_keeps_its_event_and_only_leaves() {
        let session = |i| Entity::from_raw_u32(i).expect("a small index");
        let mut events = EventQueue::new(10.0);
        let mut jobs = DelayJobs::default();
        jobs.join(0, 0.0, session(1), 1.0, &mut events);
        jobs.join(0, 0.0, session(2), 2.0, &mut events);
        assert!(jobs.cancel(session(1)));
        assert!(!jobs.cancel(session(1)));
        // Only session 2's job is left in the work: 2 - (0.5 - 0).
        assert_eq!(jobs.remaining(0.5), 1.5);
        assert_eq!(events.pop().map(|e| e.time), Some(1.0));
        assert!(jobs.finish(0, &mut events).is_none());
        assert_eq!(events.pop().map(|e| e.time), Some(2.0));
        assert_eq!(
            jobs.finish(0, &mut events).map(|j| j.session),
            Some(session(2))
        );
        assert!(events.pop().is_none());
    }
}
