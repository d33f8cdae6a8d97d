//! The run: builds the world (every stage and pool member an entity, the
//! resources, the compiled program), then takes events until the horizon
//! (or the `arrivals` drain), settling after each (spec §6.1–6.2).
//!
//! The per-event path calls the systems as plain functions over one
//! [`Sim`] fetched for a stretch of events: a bevy `Schedule` run per
//! event costs about 83 ns on the development machine (three trivial
//! systems), more than the reference's whole 145 ns event on M/M/1, and a
//! `SystemState::get_mut` of the engine's parameters about 17 ns and up.
//! Between stretches the run applies deferred commands (new flow
//! entities), spawns session entities when none is vacant, and runs the
//! batch schedules (invariant checks when asked; the report at the end).
//!
//! Invariants: the clock only moves to the time of the popped event; at
//! least one session entity is vacant before every event (an event creates
//! at most one session beyond those its sessions' ends free: an open
//! arrival; `closed` replaces each ended session with its own entity).

use bevy_ecs::prelude::*;
use bevy_ecs::system::SystemState;

use crate::engine::data::code::Code;
use crate::engine::data::events::{EventKind, EventQueue};
use crate::engine::data::flow_entity::Flows;
use crate::engine::data::kv::KvPools;
use crate::engine::data::pool::{PoolLevels, PoolStats, Waiters, Waiting};
use crate::engine::data::replay::Replay;
use crate::engine::data::resources::{
    Census, ChooseScratch, Clock, DirtyPs, Members, Observed, Ready, Recorders, Recording,
};
use crate::engine::data::rng::{Stream, Streams};
use crate::engine::data::session::{AttrRows, Continuation, Dealings, Draws, Life, Vacant};
use crate::engine::data::stage::{Service, StageLoad, StageStats};
use crate::engine::data::traffic::Traffic;
use crate::engine::eval::sim::{Sim, SimParam};
use crate::engine::flows::FlowSystem;
use crate::engine::interface::{PROGRESS_EVERY, RunError, RunOptions, SessionCounts};
use crate::engine::run::invariants::{Verdict, check_invariants};
use crate::engine::run::report::{End, Output, families, fill_report};
use crate::engine::systems::arrive::{arrive, create_session, renewal_gap, thinned_arrival};
use crate::engine::systems::budget::refresh_budget_left;
use crate::engine::systems::end_flow::end_flow;
use crate::engine::systems::end_job::{end_delay_job, end_job, end_ps_job};
use crate::engine::systems::end_lease::end_lease;
use crate::engine::systems::iterate::end_iteration;
use crate::engine::systems::settle::settle;
use crate::ir::{Arrival, Share, ValidProgram};
use crate::report::Report;
use crate::report::Welford;

/// Events taken in one stretch at most, so deferred commands stay few.
const STRETCH: u64 = 4096;

/// A world at time 0 with every stage and pool member and no session.
pub fn build(program: &ValidProgram) -> World {
    let mut world = World::new();
    let code = Code::new(program);
    let prog = &code.program;
    let warmup = prog.warmup;
    let shared = prog.shared_stages();
    let services: Vec<Service> = prog
        .stages
        .iter()
        .zip(&shared)
        .map(|(s, &is_shared)| Service::new(&s.kind, is_shared))
        .collect();
    let capacity = services
        .iter()
        .map(|s| s.shared_capacity().unwrap_or(f64::NAN))
        .collect();
    let flows = FlowSystem::new(capacity, prog.share.unwrap_or(Share::MaxMin));
    let stages = world
        .spawn_batch(
            services
                .into_iter()
                .map(|service| (service, StageStats::new(warmup, prog.horizon))),
        )
        .collect();
    let pools = world
        .spawn_batch(
            prog.pools
                .iter()
                .map(|_| (Waiters::default(), PoolStats::new(warmup, prog.horizon))),
        )
        .collect();
    world.insert_resource(Members { stages, pools });
    world.insert_resource(Clock::default());
    world.insert_resource(EventQueue::new(prog.horizon));
    world.insert_resource(Streams::new(prog.seed));
    world.insert_resource(Ready::default());
    world.insert_resource(Census::new(warmup, prog.horizon));
    world.insert_resource(Observed {
        samples: vec![Vec::new(); prog.observes.len()],
        moments: vec![Welford::default(); prog.observes.len()],
        provenance: None,
        turns: 0,
        next_lease: 0,
        marks: None,
        negative_amounts: None,
        strict: false,
    });
    world.insert_resource(AttrRows::new(code.width));
    world.insert_resource(Vacant::default());
    world.insert_resource(StageLoad::new(prog.stages.len(), code.estimates));
    world.insert_resource(PoolLevels::new(prog.pools.iter().map(|p| p.cap).collect()));
    world.insert_resource(Waiting::new(prog.pools.len()));
    world.insert_resource(DirtyPs {
        list: Vec::new(),
        marked: vec![false; prog.stages.len()],
        live: vec![0; prog.stages.len()],
        engines: Waiting::new(prog.stages.len()),
    });
    world.insert_resource(Replay::default());
    world.insert_resource(Traffic::default());
    world.insert_resource(KvPools::new(
        &prog.pools.iter().map(|p| p.block).collect::<Vec<_>>(),
        warmup,
    ));
    world.insert_resource(Flows::new(flows, prog.stages.len(), warmup));
    world.insert_resource(ChooseScratch::default());
    world.insert_resource(Recording::default());
    world.insert_resource(code);
    world
}

/// Batches at least this large are spawned entity by entity, the last
/// first ([`spawn_sessions`]); smaller ones in one `spawn_batch`.
const GROWN_BATCH: usize = 1 << 16;

/// A vacant session's components.
fn vacant_session(row: u32) -> (Continuation, Draws, Life, Dealings) {
    (
        Continuation::default(),
        Draws(Stream::new()),
        Life {
            serial: 0,
            steps_at: f64::NAN,
            steps: 0,
            row,
        },
        Dealings::default(),
    )
}

/// Spawns `n` vacant session entities, each with an attribute row.
///
/// bevy's entity index fills its whole capacity with records whenever it
/// grows, so a large batch spawned onto a doubling index touches up to
/// twice the records it needs (24 bytes an entity: 160 MB at 10^7). A
/// large batch therefore allocates its entities, spawns the last of them
/// first (the index grows once, to exactly the batch) and then the others
/// in order.
pub fn spawn_sessions(world: &mut World, n: usize) {
    let mut attrs = world.resource_mut::<AttrRows>();
    attrs.reserve_rows(n);
    let rows: Vec<u32> = (0..n).map(|_| attrs.push_row()).collect();
    let spawned: Vec<Entity> = match u32::try_from(n) {
        Ok(count) if n >= GROWN_BATCH => {
            let ids: Vec<Entity> = world.entity_allocator().alloc_many(count).collect();
            let mut order = ids.len().checked_sub(1).into_iter().chain(0..n - 1);
            // Spawning an allocated entity fails only for one that exists.
            if order.any(|i| world.spawn_at(ids[i], vacant_session(rows[i])).is_err()) {
                unreachable!("a freshly allocated entity is vacant");
            }
            ids
        }
        _ => world
            .spawn_batch(rows.into_iter().map(vacant_session))
            .collect(),
    };
    world.resource_mut::<Vacant>().extend_fresh(spawned);
}

/// Whether the `arrivals` drain is complete.
fn drained(sim: &Sim, limit: u64) -> bool {
    sim.sessions.census.open_arrivals >= limit && sim.sessions.census.live == 0
}

fn drained_too_early(code: &Code, sim: &Sim) -> RunError {
    sim.error(format!(
        "run: arrivals drained at {} before or at warmup {}; no measurement interval",
        sim.time.clock.now, code.program.warmup
    ))
}

/// What a stretch of events ended on.
enum Pause {
    /// The run is over at this end time.
    Over(f64),
    /// No session entity is vacant.
    NeedSessions,
    /// The stretch is full (or invariants are to be checked).
    Stretch,
}

/// The engine's parameters, fetched once per stretch of events.
type RunState = SystemState<(Res<'static, Code>, SimParam<'static, 'static>)>;

/// Runs `f` over the compiled program and one [`Sim`] fetched from
/// `world`, then applies its deferred commands.
fn with_sim<T>(
    state: &mut RunState,
    world: &mut World,
    f: impl FnOnce(&Code, &mut Sim) -> Result<T, RunError>,
) -> Result<T, RunError> {
    let result = {
        let (code, sim) = state
            .get_mut(world)
            .map_err(|_| crate::engine::eval::sim::lost("resource", 0.0))?;
        let mut sim = sim.into_sim();
        f(&code, &mut sim)
    };
    state.apply(world);
    result
}

/// A start-up error (a file that cannot be read, a schedule that does
/// not build): no statement, no session, time 0.
fn at_start(message: String) -> RunError {
    RunError {
        message,
        at: None,
        session: None,
        time: 0.0,
    }
}

/// Runs `program` to its end.
pub fn run(
    program: &ValidProgram,
    options: &mut RunOptions<'_>,
) -> Result<(Report, SessionCounts), RunError> {
    let mut world = build(program);
    let prog = program.program();
    open_traces(&mut world, program)?;
    let initial = match prog.arrival {
        // All n live at once, and the one vacant the loop keeps: a batch
        // never grows its tables (growth doubles them) after the start.
        Arrival::Batch(n) | Arrival::Closed(n) => {
            usize::try_from(n).map_or(usize::MAX, |n| n.saturating_add(1))
        }
        _ => 1,
    };
    // Every resource and schedule exists before the sessions: a resource
    // is an entity, and one created after 10^7 session entities would get
    // a sparse index of 4 bytes for each of them.
    let check = options.check_invariants;
    let mut checks = Schedule::default();
    checks.add_systems(check_invariants);
    let mut report = Schedule::default();
    report.add_systems(fill_report);
    world.insert_resource(End(f64::NAN));
    world.insert_resource(Output::default());
    world.insert_resource(Verdict(Ok(())));
    for schedule in [&mut checks, &mut report] {
        schedule
            .initialize(&mut world)
            .map_err(|e| at_start(format!("internal: a batch schedule does not build: {e}")))?;
    }
    spawn_sessions(&mut world, initial);
    if initial > 1 {
        // Every batch session is ready at once: an exact queue wraps onto
        // the pages it has touched, not onto the slack of a doubled one.
        world.resource_mut::<Ready>().0.reserve_exact(initial);
    }
    observe_as_asked(&mut world, options, prog.observes.len());
    record_as_asked(&mut world, options, program);
    let mut state: RunState = SystemState::new(&mut world);
    with_sim(&mut state, &mut world, start)?;
    if check {
        verdict(&mut world, &mut checks)?;
    }
    if let Some(limit) = prog.arrivals {
        with_sim(&mut state, &mut world, |code, sim| {
            match drained(sim, limit) {
                true => Err(drained_too_early(code, sim)),
                false => Ok(()),
            }
        })?;
    }
    let mut checkpoints = Checkpoints::new(options);
    let end = loop {
        let pause = with_sim(&mut state, &mut world, |code, sim| {
            stretch(code, sim, options, &mut checkpoints)
        })?;
        if check {
            verdict(&mut world, &mut checks)?;
        }
        match pause {
            Pause::Over(end) => break end,
            Pause::NeedSessions => {
                let spawned = world.resource::<AttrRows>().rows();
                spawn_sessions(&mut world, (spawned / 8).max(16));
            }
            Pause::Stretch => {}
        }
    };
    if prog.arrivals.is_some() && end == prog.horizon {
        with_sim(&mut state, &mut world, |code, sim| {
            arrivals_met_by_the_horizon(code, sim)
        })?;
    }
    with_sim(&mut state, &mut world, |_, sim| {
        sim.record_finish(end);
        Ok(())
    })?;
    give_back_recorders(&mut world, options);
    finish(&mut world, &mut report, end)
}

/// Reads the turn trace (`trace`) and opens the arrival trace (`arrive
/// trace`, an extension) of the program, when it has them.
fn open_traces(world: &mut World, program: &ValidProgram) -> Result<(), RunError> {
    let prog = program.program();
    if let Some(spec) = &prog.trace {
        let trace = crate::trace::Trace::read(std::path::Path::new(&spec.path))
            .map_err(|e| at_start(e.to_string()))?;
        world.insert_resource(Replay {
            trace: Some(trace),
            ordered: spec.ordered,
            cursor: Vec::new(),
        });
    }
    if let Arrival::Trace(spec) = &prog.arrival {
        let traffic = Traffic::open(spec).map_err(|e| at_start(e.to_string()))?;
        world.insert_resource(traffic);
    }
    Ok(())
}

/// What the caller asked the observations to keep: strict amounts, each
/// sample's provenance, the turns' marks.
fn observe_as_asked(world: &mut World, options: &RunOptions<'_>, observations: usize) {
    let mut observed = world.resource_mut::<Observed>();
    observed.strict = options.strict;
    // A timeline draws each sample where and when it was taken: from the
    // provenance, so that `observe` itself does no more than it did.
    if options.provenance || options.timeline.is_some() {
        observed.provenance = Some(vec![Default::default(); observations]);
    }
    if options.turn_marks {
        observed.marks = Some(Default::default());
    }
}

/// The caller's timeline and series, declared with the program's members,
/// as the run's recorders.
fn record_as_asked(world: &mut World, options: &mut RunOptions<'_>, program: &ValidProgram) {
    let prog = program.program();
    let timeline = options.timeline.take().map(|mut timeline| {
        timeline.declare(timeline_members(program));
        timeline
    });
    let series = options.series.take().map(|mut series| {
        series.declare(
            prog.warmup,
            prog.horizon,
            prog.shared_stages(),
            prog.pools.len(),
        );
        series
    });
    if timeline.is_some() || series.is_some() {
        let recorders = Recorders { timeline, series };
        world.insert_resource(Recording(Some(Box::new(recorders))));
    }
}

/// The recorders go back to the caller, the timeline with every sample.
fn give_back_recorders(world: &mut World, options: &mut RunOptions<'_>) {
    if let Some(mut recorders) = world.resource_mut::<Recording>().0.take() {
        if let Some(timeline) = recorders.timeline.as_deref_mut() {
            draw_samples(timeline, world.resource::<Observed>());
        }
        options.timeline = recorders.timeline;
        options.series = recorders.series;
    }
}

/// Every sample, on its session's track at its time (observation by
/// observation, each in the order taken).
fn draw_samples(timeline: &mut crate::timeline::Timeline, observed: &Observed) {
    let Some(origins) = &observed.provenance else {
        return;
    };
    for (i, (samples, origin)) in observed.samples.iter().zip(origins).enumerate() {
        for ((&value, &time), &session) in samples.iter().zip(&origin.times).zip(&origin.sessions) {
            timeline.observe(session, i as u32, value, time);
        }
    }
}

/// The names and kinds of the program's members, for a timeline's tracks.
fn timeline_members(program: &ValidProgram) -> crate::timeline::Members {
    let prog = program.program();
    let named = |names: Vec<&str>| -> Vec<String> {
        let members = families(names.iter().copied());
        names
            .iter()
            .zip(members)
            .map(|(n, m)| match m {
                Some(k) => format!("{n}[{k}]"),
                None => n.to_string(),
            })
            .collect()
    };
    crate::timeline::Members {
        stages: named(prog.stages.iter().map(|s| s.name.as_str()).collect()),
        step: prog
            .stages
            .iter()
            .map(|s| matches!(s.kind, crate::ir::StageKind::Step(..)))
            .collect(),
        shared: prog.shared_stages(),
        pools: named(prog.pools.iter().map(|p| p.name.as_str()).collect()),
        observes: prog.observes.clone(),
    }
}

/// Time 0: the step stages' budgets, the first sessions or arrivals, the
/// warmup's event, and the first settle.
fn start(code: &Code, sim: &mut Sim) -> Result<(), RunError> {
    let prog = &code.program;
    // The budgets first (once: a budget may draw): a batch session's
    // `init` may read `budget_left(E)`, the full budget then.
    for s in 0..prog.stages.len() {
        if code.steps[s].is_some() {
            refresh_budget_left(code, sim, s)?;
        }
    }
    match &prog.arrival {
        Arrival::Batch(n) | Arrival::Closed(n) => {
            for _ in 0..*n {
                create_session(code, sim)?;
            }
        }
        Arrival::Poisson(_) => sim.time.events.schedule(0.0, EventKind::Arrival),
        Arrival::Trace(_) => {
            if let Some(t) = sim.sessions.traffic.next_time() {
                sim.time.events.schedule(t, EventKind::Arrival);
            }
        }
        // Unlike `poisson(λ)`'s, the first arrival is not forced at 0.
        Arrival::Thinned(_) => {
            let t = thinned_arrival(code, sim)?;
            if t.is_finite() {
                sim.time.events.schedule(t, EventKind::Arrival);
            }
        }
        Arrival::Renewal(_) => {
            let gap = renewal_gap(code, sim)?;
            sim.time.events.schedule(gap, EventKind::Arrival);
        }
        Arrival::None => {}
    }
    if prog.warmup > 0.0 {
        sim.time.events.schedule(prog.warmup, EventKind::Warmup);
    }
    settle(code, sim)?;
    sim.record_settled();
    Ok(())
}

/// The event counts at which the run looks up from its events: the cap
/// (`max_events`), the progress callback and the interrupt flag. One
/// comparison per event: `next` is the nearer of the two.
struct Checkpoints {
    max_events: u64,
    progress: u64,
    next: u64,
}

impl Checkpoints {
    fn new(options: &RunOptions<'_>) -> Checkpoints {
        let max_events = options.max_events.unwrap_or(u64::MAX);
        let progress = if options.progress.is_some() || options.interrupt.is_some() {
            PROGRESS_EVERY
        } else {
            u64::MAX
        };
        Checkpoints {
            max_events,
            progress,
            next: progress.min(max_events),
        }
    }

    /// At a checkpoint: the cap is an error; the callback is told the
    /// clock; an interrupt ends the run now (its report partial).
    #[cold]
    fn reached(
        &mut self,
        sim: &Sim,
        options: &mut RunOptions<'_>,
    ) -> Result<Option<Pause>, RunError> {
        if sim.time.events.taken >= self.max_events {
            return Err(sim.error(format!(
                "the run reached its cap of {} events (max_events) before its end; raise the \
                 cap or shorten the horizon",
                self.max_events
            )));
        }
        // The callback is the caller's and reads the wall clock; it needs
        // no part of the world but the clock.
        if let Some(progress) = options.progress.as_mut() {
            progress(sim.time.clock.now);
        }
        if options
            .interrupt
            .is_some_and(|i| i.load(std::sync::atomic::Ordering::Relaxed))
        {
            return Ok(Some(Pause::Over(sim.time.clock.now)));
        }
        self.progress = self.progress.saturating_add(PROGRESS_EVERY);
        self.next = self.progress.min(self.max_events);
        Ok(None)
    }
}

/// Takes events until the stretch is full, no session entity is vacant, or
/// the run is over: each event's system, then the settle.
fn stretch(
    code: &Code,
    sim: &mut Sim,
    options: &mut RunOptions<'_>,
    checkpoints: &mut Checkpoints,
) -> Result<Pause, RunError> {
    let prog = &code.program;
    let stop_at = sim.time.events.taken + if options.check_invariants { 1 } else { STRETCH };
    loop {
        if sim.sessions.vacant.is_empty() {
            return Ok(Pause::NeedSessions);
        }
        if sim.time.events.taken >= stop_at {
            return Ok(Pause::Stretch);
        }
        let Some(event) = sim.time.events.pop() else {
            return Ok(Pause::Over(prog.horizon));
        };
        if event.time > prog.horizon {
            return Ok(Pause::Over(prog.horizon));
        }
        if sim.time.events.taken >= checkpoints.next
            && let Some(pause) = checkpoints.reached(sim, options)?
        {
            return Ok(pause);
        }
        sim.time.clock.now = event.time;
        sim.time.events.taken += 1;
        match event.kind {
            EventKind::Arrival => arrive(code, sim)?,
            EventKind::Warmup => {}
            EventKind::JobEnd(stage, slot) => end_job(sim, stage, slot)?,
            EventKind::DelayEnd(stage) => end_delay_job(sim, stage)?,
            EventKind::PsEnd(stage, generation) => end_ps_job(sim, stage, generation)?,
            EventKind::FlowEnd(generation) => end_flow(sim, generation)?,
            EventKind::LeaseEnd(index, id) => end_lease(code, sim, index, id)?,
            EventKind::IterationEnd(stage, generation) => {
                end_iteration(code, sim, stage as usize, generation)?
            }
        }
        settle(code, sim)?;
        sim.record_settled();
        if let Some(limit) = prog.arrivals
            && drained(sim, limit)
        {
            if sim.time.clock.now <= prog.warmup {
                return Err(drained_too_early(code, sim));
            }
            return Ok(Pause::Over(sim.time.clock.now));
        }
    }
}

/// A run with `arrivals N` that reached its horizon: an error unless all
/// N arrived and drained.
fn arrivals_met_by_the_horizon(code: &Code, sim: &mut Sim) -> Result<(), RunError> {
    let prog = &code.program;
    let Some(limit) = prog.arrivals else {
        return Ok(());
    };
    if drained(sim, limit) {
        return Ok(());
    }
    sim.time.clock.now = prog.horizon;
    Err(if sim.sessions.census.open_arrivals < limit {
        sim.error(format!(
            "run: horizon {} reached before requested arrivals: got {}, requested {limit}",
            prog.horizon, sim.sessions.census.open_arrivals
        ))
    } else {
        sim.error(format!(
            "run: failed to drain {} active sessions within horizon {}",
            sim.sessions.census.live, prog.horizon
        ))
    })
}

/// The run is over at `end`: the session counts, then the report.
fn finish(
    world: &mut World,
    report: &mut Schedule,
    end: f64,
) -> Result<(Report, SessionCounts), RunError> {
    let live = world
        .query::<&Continuation>()
        .iter(world)
        .filter(|c| c.live())
        .count() as u64;
    let census = world.resource::<Census>();
    let counts = SessionCounts {
        created: census.next_serial,
        ended: census.ended_total,
        live,
    };
    world.insert_resource(End(end));
    report.run(world);
    let report = world
        .get_resource_mut::<Output>()
        .and_then(|mut o| o.0.take())
        .ok_or_else(|| crate::engine::eval::sim::lost("report", end))?;
    Ok((report, counts))
}

/// Runs the invariant checks (a batch schedule) and returns their verdict.
pub fn verdict(world: &mut World, schedule: &mut Schedule) -> Result<(), RunError> {
    world.insert_resource(Verdict(Ok(())));
    schedule.run(world);
    world
        .get_resource_mut::<Verdict>()
        .map_or(Ok(()), |mut v| std::mem::replace(&mut v.0, Ok(())))
}

#[cfg(test)]
mod sizes {
    use crate::engine::data::events::Event;
    use crate::engine::data::session::{Continuation, Dealings, Draws, Life};
    use crate::engine::data::stage::DelayJob;

    #[test]
    fn a_live_session_costs_what_docs_development_md_says() {
        // docs/development.md gives these sizes (x86-64) as the bytes of a
        // live session; a component that grows must update the figures.
        let sizes = [
            ("continuation", size_of::<Continuation>()),
            ("draws", size_of::<Draws>()),
            ("life", size_of::<Life>()),
            ("dealings", size_of::<Dealings>()),
            ("delay job", size_of::<DelayJob>()),
            ("event", size_of::<Event>()),
        ];
        eprintln!("{sizes:?}");
        assert_eq!(sizes.map(|(_, n)| n), [24, 16, 24, 8, 32, 32], "{sizes:?}");
    }
}
