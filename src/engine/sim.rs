//! The per-event path's view of the world: every resource and query the
//! systems touch, fetched once per stretch of events (see engine/run.rs),
//! and the few helpers every system shares (errors, evaluation in a
//! session).
//!
//! Architecture invariant: the queries of [`Store`] touch disjoint
//! components, so a system may hold one session's continuation while it
//! reads stages, pools or another session's dealings. Nothing here runs a
//! statement or handles an event.

use std::cell::Cell;

use bevy_ecs::entity::Entities;
use bevy_ecs::prelude::*;
use bevy_ecs::system::SystemParam;
use smallvec::SmallVec;

use super::code::Expr;
use super::eval::{Cx, Fault, Moment, eval};
use super::events::EventQueue;
use super::flow::{FlowOf, Flows};
use super::flows::FlowSystem;
use super::interface::RunError;
use super::kv::KvPools;
use super::pool::{PoolLevels, PoolStats, Waiters, Waiting};
use super::replay::Replay;
use super::resources::{Census, ChooseScratch, Clock, DirtyPs, Members, Observed, Ready};
use super::rng::{Purpose, Streams};
use super::session::{AttrRows, Continuation, Dealings, Draws, Holding, Life, Vacant};
use super::stage::{Service, StageLoad, StageStats};
use super::traffic::Traffic;
use crate::report::{NegativeAmounts, Statement};

/// The entities' components, by kind.
#[derive(SystemParam)]
pub struct Store<'w, 's> {
    /// Sessions: what the interpreter reads and writes at every statement.
    pub sessions: Query<
        'w,
        's,
        (
            &'static mut Continuation,
            &'static mut Draws,
            &'static mut Life,
        ),
    >,
    /// Sessions: their dealings with pools.
    pub dealings: Query<'w, 's, &'static mut Dealings>,
    /// Stage members.
    pub stages: Query<'w, 's, (&'static mut Service, &'static mut StageStats)>,
    /// Pool members.
    pub pools: Query<'w, 's, (&'static mut Waiters, &'static mut PoolStats)>,
    /// Flows: the session each one's run is (a recycled flow entity's is
    /// rewritten in place).
    pub flows: Query<'w, 's, &'static mut FlowOf>,
    /// Deferred changes (a new flow's entity and its `FlowOf`).
    pub commands: Commands<'w, 's>,
    /// Scratch for `choose`.
    pub scratch: ResMut<'w, ChooseScratch>,
    /// The entities, to name a session by its index (a lease-end event's).
    pub entities: &'w Entities,
}

/// Everything the per-event path changes, as bevy hands it over: fetched
/// once per stretch of events and turned into a [`Sim`].
#[derive(SystemParam)]
pub struct SimParam<'w, 's> {
    clock: ResMut<'w, Clock>,
    events: ResMut<'w, EventQueue>,
    streams: ResMut<'w, Streams>,
    ready: ResMut<'w, Ready>,
    census: ResMut<'w, Census>,
    observed: ResMut<'w, Observed>,
    attrs: ResMut<'w, AttrRows>,
    vacant: ResMut<'w, Vacant>,
    members: Res<'w, Members>,
    load: ResMut<'w, StageLoad>,
    levels: ResMut<'w, PoolLevels>,
    waiting: ResMut<'w, Waiting>,
    dirty: ResMut<'w, DirtyPs>,
    kv: ResMut<'w, KvPools>,
    replay: ResMut<'w, Replay>,
    traffic: ResMut<'w, Traffic>,
    flows: ResMut<'w, Flows>,
    store: Store<'w, 's>,
}

impl<'w, 's> SimParam<'w, 's> {
    /// The resources as plain references. Nothing in the engine reads
    /// change ticks, and a `ResMut` writes one at every mutable access
    /// (about 120 M of M/M/1's 1.35 G instructions went to that), so each
    /// resource is marked changed once per stretch and then used directly.
    pub fn into_sim(self) -> Sim<'w, 's> {
        Sim {
            clock: self.clock.into_inner(),
            events: self.events.into_inner(),
            streams: self.streams.into_inner(),
            ready: self.ready.into_inner(),
            census: self.census.into_inner(),
            observed: self.observed.into_inner(),
            attrs: self.attrs.into_inner(),
            vacant: self.vacant.into_inner(),
            members: self.members.into_inner(),
            load: self.load.into_inner(),
            levels: self.levels.into_inner(),
            waiting: self.waiting.into_inner(),
            dirty: self.dirty.into_inner(),
            kv: self.kv.into_inner(),
            replay: self.replay.into_inner(),
            traffic: self.traffic.into_inner(),
            flows: self.flows.into_inner(),
            store: self.store,
        }
    }
}

/// Everything the per-event path changes.
pub struct Sim<'w, 's> {
    /// The clock.
    pub clock: &'w mut Clock,
    /// The event heap.
    pub events: &'w mut EventQueue,
    /// The random streams that are not a session's own.
    pub streams: &'w mut Streams,
    /// The ready queue.
    pub ready: &'w mut Ready,
    /// Sessions created, live and ended.
    pub census: &'w mut Census,
    /// Samples and turns.
    pub observed: &'w mut Observed,
    /// Session attributes.
    pub attrs: &'w mut AttrRows,
    /// Session entities to reuse.
    pub vacant: &'w mut Vacant,
    /// Stage and pool members' entities.
    pub members: &'w Members,
    /// Stage columns.
    pub load: &'w mut StageLoad,
    /// Pool columns.
    pub levels: &'w mut PoolLevels,
    /// Pools with waiters.
    pub waiting: &'w mut Waiting,
    /// ps stages to issue anew.
    pub dirty: &'w mut DirtyPs,
    /// Every pool member's block, cache and serving figures.
    pub kv: &'w mut KvPools,
    /// The workload's trace and each session's place in it.
    pub replay: &'w mut Replay,
    /// The workload's arrival trace, when it arrives by one (an extension).
    pub traffic: &'w mut Traffic,
    /// The flow system.
    pub flows: &'w mut Flows,
    /// The entities' components.
    pub store: Store<'w, 's>,
}

/// `work(s)` of stage member `s` at `now`.
pub fn stage_work(
    stages: &Query<'_, '_, (&'static mut Service, &'static mut StageStats)>,
    members: &Members,
    flows: &FlowSystem,
    s: usize,
    now: f64,
) -> f64 {
    match stages.get(members.stages[s]) {
        Ok((service, _)) => service.work(s, now, flows),
        Err(_) => f64::NAN,
    }
}

/// The error of an entity the engine made and lost: impossible while the
/// invariants of engine/session.rs hold.
pub fn lost(what: &str, time: f64) -> RunError {
    RunError {
        message: format!("internal: the engine lost the entity of a {what}"),
        at: None,
        session: None,
        time,
    }
}

impl Sim<'_, '_> {
    /// A run-time error at the current time, outside any session.
    pub fn error(&self, message: String) -> RunError {
        RunError {
            message,
            at: None,
            session: None,
            time: self.clock.now,
        }
    }

    /// A run-time error in session `e` at statement `at`.
    pub fn session_error(&self, e: Entity, at: (usize, usize), message: String) -> RunError {
        RunError {
            message,
            at: Some(at),
            session: self.store.sessions.get(e).ok().map(|(_, _, l)| l.serial),
            time: self.clock.now,
        }
    }

    /// Runs `f` with what session `e` may read (its attributes, its own
    /// stream); a fault becomes an error at statement `at`.
    pub fn in_session<T>(
        &mut self,
        e: Entity,
        at: (usize, usize),
        f: impl FnOnce(&mut Cx<'_>) -> Result<T, Fault>,
    ) -> Result<T, RunError> {
        self.in_session_at(e, at, &Moment::NONE, f)
    }

    /// As [`Sim::in_session`], at a moment whose context variables are
    /// `moment`'s (a queue key's `waited`, a serve key's `remaining`, …).
    pub fn in_session_at<T>(
        &mut self,
        e: Entity,
        at: (usize, usize),
        moment: &Moment,
        f: impl FnOnce(&mut Cx<'_>) -> Result<T, Fault>,
    ) -> Result<T, RunError> {
        let now = self.clock.now;
        let Sim {
            streams,
            attrs,
            load,
            levels,
            flows,
            members,
            store,
            kv,
            ..
        } = self;
        let Ok((_, mut draws, life)) = store.sessions.get_mut(e) else {
            return Err(lost("session", now));
        };
        let stages = &store.stages;
        let work = |s: usize| stage_work(stages, members, &flows.system, s, now);
        let mut cx = Cx {
            now,
            present: f64::NAN,
            moment,
            serial: life.serial,
            kv,
            attrs: attrs.cells(life.row),
            rng: &mut draws.0,
            purpose: Purpose::Session(life.serial),
            first: &mut streams.first,
            load,
            levels,
            work: &work,
        };
        f(&mut cx).map_err(|fault| RunError {
            message: fault.to_string(),
            at: Some(at),
            session: Some(life.serial),
            time: now,
        })
    }

    /// Evaluates `x` in session `e`.
    pub fn eval_in(&mut self, e: Entity, at: (usize, usize), x: &Expr) -> Result<f64, RunError> {
        self.in_session(e, at, |cx| eval(x, cx))
    }
}

/// What an evaluation outside a session's own stretch reads: a workload
/// block, a renewal gap, a ps capacity, a step stage's expressions, an
/// eviction key.
pub struct Outside<'a> {
    /// `present` of a ps capacity; NaN elsewhere.
    pub present: f64,
    /// The serving context variables of the moment.
    pub moment: &'a Moment,
    /// The serial of the session it reads for (u64::MAX for none).
    pub serial: u64,
    /// The attributes it reads.
    pub attrs: OutsideAttrs<'a>,
    /// The stream its draws come from.
    pub stream: RunStream,
}

/// The run-wide streams an [`Outside`] evaluation draws from.
#[derive(Clone, Copy)]
pub enum RunStream {
    /// Renewal gaps.
    Arrival,
    /// ps capacities, step stages, eviction keys.
    Machine,
    /// The `init` or `turn` block running now.
    Turn,
}

/// The attributes an [`Outside`] evaluation reads.
pub enum OutsideAttrs<'a> {
    /// None (a run-wide expression).
    None,
    /// A live session's row.
    Row(u32),
    /// Given cells (an ended owner's copied attributes).
    Cells(&'a [Cell<f64>]),
}

impl Sim<'_, '_> {
    /// Evaluates `x` outside a session's stretch, reading what `scope` says.
    pub fn evaluate_outside(&mut self, x: &Expr, scope: Outside<'_>) -> Result<f64, Fault> {
        let now = self.clock.now;
        let Sim {
            streams,
            attrs,
            load,
            levels,
            flows,
            members,
            store,
            kv,
            ..
        } = self;
        let attrs: &[Cell<f64>] = match scope.attrs {
            OutsideAttrs::None => &[],
            OutsideAttrs::Row(row) => attrs.cells(row),
            OutsideAttrs::Cells(cells) => cells,
        };
        let stages = &store.stages;
        let work = |s: usize| stage_work(stages, members, &flows.system, s, now);
        let Streams {
            arrival,
            machine,
            turn,
            first,
            ..
        } = &mut **streams;
        let run_stream = match scope.stream {
            RunStream::Arrival => arrival,
            RunStream::Machine => machine,
            RunStream::Turn => turn,
        };
        let mut cx = Cx {
            now,
            present: scope.present,
            moment: scope.moment,
            serial: scope.serial,
            kv,
            attrs,
            rng: &mut run_stream.stream,
            purpose: run_stream.purpose,
            first,
            load,
            levels,
            work: &work,
        };
        eval(x, &mut cx)
    }
}

/// Drops a session's record on pool member `p` from its `holdings` (an
/// allocation of it there ended) and returns its holders count there (0
/// if it has none).
pub fn take_holding(holdings: &mut SmallVec<[Holding; 4]>, p: u32) -> u32 {
    match holdings.iter().position(|h| h.pool == p) {
        Some(i) => holdings.swap_remove(i).count,
        None => 0,
    }
}

impl Sim<'_, '_> {
    /// A computed amount (run work, hold units, reserve, grow, load) of
    /// session `e` at statement `at`: NaN is a run-time error; a negative
    /// one is taken as 0, as pyserq 0.1.0 takes it, and counted for the
    /// report's warnings, or is a run-time error under `strict` (spec §10
    /// Q13).
    #[inline]
    pub fn amount(
        &mut self,
        what: &'static str,
        x: f64,
        e: Entity,
        at: (usize, usize),
    ) -> Result<f64, RunError> {
        // NaN fails `>=` too.
        if x >= 0.0 {
            Ok(x)
        } else {
            self.negative_amount(what, x, e, at)
        }
    }

    /// [`Sim::amount`] below 0 or NaN. Out of line: every run and hold
    /// checks its amount, and this is rare.
    #[cold]
    #[inline(never)]
    fn negative_amount(
        &mut self,
        what: &'static str,
        x: f64,
        e: Entity,
        at: (usize, usize),
    ) -> Result<f64, RunError> {
        if x.is_nan() || self.observed.strict {
            return Err(self.session_error(e, at, amount_error(what, x)));
        }
        // The source line is looked up when the report is filled.
        let session = self.store.sessions.get(e).ok().map(|(_, _, l)| l.serial);
        let statement = Statement { at, line: None };
        let now = self.clock.now;
        NegativeAmounts::note(
            &mut self.observed.negative_amounts,
            what,
            x,
            statement,
            session,
            now,
        );
        Ok(0.0)
    }
}

/// Why `x` is not an amount. Out of line: every run and hold checks its
/// amount, and the message is rare.
#[cold]
#[inline(never)]
fn amount_error(what: &str, x: f64) -> String {
    if x.is_nan() {
        format!("{what} is NaN; an amount must be a number >= 0")
    } else {
        format!("{what} is negative ({x}); an amount must be >= 0")
    }
}

impl Sim<'_, '_> {
    /// Session `e` returns `units` to pool `p` (its holding there ends).
    pub fn give_back(&mut self, e: Entity, p: u32, units: f64) {
        let counted = match self.store.dealings.get_mut(e) {
            Ok(mut dealings) => take_holding(&mut dealings.get().holdings, p),
            Err(_) => 0,
        };
        self.return_units(p, units, counted);
    }

    /// [`Sim::give_back`] with the session's holders count on `p` already
    /// taken ([`take_holding`]) from dealings the caller has fetched.
    pub fn return_units(&mut self, p: u32, units: f64, counted: u32) {
        let now = self.clock.now;
        if let Ok((_, mut stats)) = self.store.pools.get_mut(self.members.pools[p as usize]) {
            self.levels
                .give_back(&mut stats, p as usize, now, units, counted);
        }
        self.waiting.wake(p as usize);
    }

    /// Starts a flow of `work` over `stages` for session `e`: the flow gets an
    /// entity (a recycled one if any) whose `FlowOf` names the session.
    pub fn start_flow(&mut self, e: Entity, stages: &[u32], work: f64) -> Result<(), RunError> {
        let sim = self;
        let now = sim.clock.now;
        for &s in stages {
            let Ok((service, mut stats)) = sim.store.stages.get_mut(sim.members.stages[s as usize])
            else {
                return Err(lost("stage", now));
            };
            stats.count(s as usize, true, sim.load, now, 1.0);
            sim.load.set_busy(s as usize, &service);
        }
        let id = sim.flows.system.start(now, stages, work, e.to_bits());
        let of = FlowOf { session: e };
        // A recycled entity keeps its component: rewriting it costs a fetch,
        // where a deferred insert costs a command (about 500 instructions a
        // flow). One ended in this stretch has no component yet.
        let flow = match sim.flows.free.pop() {
            Some(flow) => match sim.store.flows.get_mut(flow) {
                Ok(mut old) => {
                    *old = of;
                    flow
                }
                Err(_) => sim.store.commands.entity(flow).insert(of).id(),
            },
            None => sim.store.commands.spawn(of).id(),
        };
        sim.flows.entity_of.insert(id, flow);
        sim.flows.changed = true;
        Ok(())
    }
}
