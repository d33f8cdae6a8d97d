//! The per-event path's view of the world: every resource and query the
//! systems touch, fetched once per stretch of events (see engine/run/event_loop.rs),
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

use crate::engine::data::code::Expr;
use crate::engine::data::events::EventQueue;
use crate::engine::data::flow_entity::{FlowLink, FlowOf, Flows};
use crate::engine::data::kv::KvPools;
use crate::engine::data::pool::{PoolLevels, PoolStats, Waiters, Waiting};
use crate::engine::data::replay::Replay;
use crate::engine::data::resources::{
    Census, ChooseScratch, Clock, DirtyPs, Members, Observed, Ready, Recording,
};
use crate::engine::data::rng::{Purpose, Streams};
use crate::engine::data::session::{
    AttrRows, Continuation, Dealings, Draws, Holding, Life, Vacant,
};
use crate::engine::data::stage::{Service, StageLoad, StageStats};
use crate::engine::data::traffic::Traffic;
use crate::engine::eval::evaluate::{Cx, Fault, Moment, eval};
use crate::engine::flows::FlowSystem;
use crate::engine::interface::RunError;
use crate::report::{NegativeAmounts, Statement};

/// The clock, the event heap and the run-wide random streams.
pub struct Time<'w> {
    /// The clock.
    pub clock: &'w mut Clock,
    /// The event heap.
    pub events: &'w mut EventQueue,
    /// The random streams that are not a session's own.
    pub streams: &'w mut Streams,
}

/// The sessions: their components, their attributes, the ready queue and
/// the census.
pub struct Sessions<'w, 's> {
    /// What the interpreter reads and writes at every statement.
    pub states: SessionStates<'w, 's>,
    /// Their dealings with pools.
    pub dealings: Query<'w, 's, &'static mut Dealings>,
    /// The entities, to name a session by its index (a lease-end event's).
    pub entities: &'w Entities,
    /// The ready queue.
    pub ready: &'w mut Ready,
    /// Sessions created, live and ended.
    pub census: &'w mut Census,
    /// Session attributes.
    pub attrs: &'w mut AttrRows,
    /// Session entities to reuse.
    pub vacant: &'w mut Vacant,
    /// The workload's trace and each session's place in it.
    pub replay: &'w mut Replay,
    /// The workload's arrival trace, when it arrives by one (an extension).
    pub traffic: &'w mut Traffic,
}

/// The stage members: their components and the columns expressions read.
pub struct Stages<'w, 's> {
    /// Each member's service and figures.
    pub members: Query<'w, 's, (&'static mut Service, &'static mut StageStats)>,
    /// Each member's entity, by stage index.
    pub entities: &'w [Entity],
    /// The columns `choose` keys read.
    pub load: &'w mut StageLoad,
    /// ps stages to issue anew.
    pub dirty: &'w mut DirtyPs,
}

/// The pool members: their waiters and figures, the columns admission
/// reads, and their blocks and caches.
pub struct Pools<'w, 's> {
    /// Each member's waiters and figures.
    pub members: Query<'w, 's, (&'static mut Waiters, &'static mut PoolStats)>,
    /// Each member's entity, by pool index.
    pub entities: &'w [Entity],
    /// The columns expressions and admission read.
    pub levels: &'w mut PoolLevels,
    /// Pools with waiters.
    pub waiting: &'w mut Waiting,
    /// Every pool member's block, cache and serving figures.
    pub kv: &'w mut KvPools,
}

/// The sessions' statement-by-statement components.
pub type SessionStates<'w, 's> = Query<
    'w,
    's,
    (
        &'static mut Continuation,
        &'static mut Draws,
        &'static mut Life,
    ),
>;

/// The sessions' part of [`SimParam`].
#[derive(SystemParam)]
pub struct SessionsParam<'w, 's> {
    states: SessionStates<'w, 's>,
    dealings: Query<'w, 's, &'static mut Dealings>,
    entities: &'w Entities,
    ready: ResMut<'w, Ready>,
    census: ResMut<'w, Census>,
    attrs: ResMut<'w, AttrRows>,
    vacant: ResMut<'w, Vacant>,
    replay: ResMut<'w, Replay>,
    traffic: ResMut<'w, Traffic>,
}

/// The stages' part of [`SimParam`].
#[derive(SystemParam)]
pub struct StagesParam<'w, 's> {
    members: Query<'w, 's, (&'static mut Service, &'static mut StageStats)>,
    load: ResMut<'w, StageLoad>,
    dirty: ResMut<'w, DirtyPs>,
}

/// The pools' part of [`SimParam`].
#[derive(SystemParam)]
pub struct PoolsParam<'w, 's> {
    members: Query<'w, 's, (&'static mut Waiters, &'static mut PoolStats)>,
    levels: ResMut<'w, PoolLevels>,
    waiting: ResMut<'w, Waiting>,
    kv: ResMut<'w, KvPools>,
}

/// What the per-event path changes, as bevy hands it over: fetched once
/// per stretch of events and turned into a [`Sim`].
#[derive(SystemParam)]
pub struct SimParam<'w, 's> {
    clock: ResMut<'w, Clock>,
    events: ResMut<'w, EventQueue>,
    streams: ResMut<'w, Streams>,
    sessions: SessionsParam<'w, 's>,
    stages: StagesParam<'w, 's>,
    pools: PoolsParam<'w, 's>,
    members: Res<'w, Members>,
    observed: ResMut<'w, Observed>,
    flows: ResMut<'w, Flows>,
    flow_owners: Query<'w, 's, &'static mut FlowOf>,
    commands: Commands<'w, 's>,
    scratch: ResMut<'w, ChooseScratch>,
    recording: ResMut<'w, Recording>,
}

impl<'w, 's> SimParam<'w, 's> {
    /// The resources as plain references. Nothing in the engine reads
    /// change ticks, and a `ResMut` writes one at every mutable access
    /// (about 120 M of M/M/1's 1.35 G instructions went to that), so each
    /// resource is marked changed once per stretch and then used directly.
    pub fn into_sim(self) -> Sim<'w, 's> {
        let members = self.members.into_inner();
        let (sessions, stages, pools) = (self.sessions, self.stages, self.pools);
        Sim {
            time: Time {
                clock: self.clock.into_inner(),
                events: self.events.into_inner(),
                streams: self.streams.into_inner(),
            },
            sessions: Sessions {
                states: sessions.states,
                dealings: sessions.dealings,
                entities: sessions.entities,
                ready: sessions.ready.into_inner(),
                census: sessions.census.into_inner(),
                attrs: sessions.attrs.into_inner(),
                vacant: sessions.vacant.into_inner(),
                replay: sessions.replay.into_inner(),
                traffic: sessions.traffic.into_inner(),
            },
            stages: Stages {
                members: stages.members,
                entities: &members.stages,
                load: stages.load.into_inner(),
                dirty: stages.dirty.into_inner(),
            },
            pools: Pools {
                members: pools.members,
                entities: &members.pools,
                levels: pools.levels.into_inner(),
                waiting: pools.waiting.into_inner(),
                kv: pools.kv.into_inner(),
            },
            observed: self.observed.into_inner(),
            flows: self.flows.into_inner(),
            store: Store {
                flows: self.flow_owners,
                commands: self.commands,
                scratch: self.scratch.into_inner(),
                recording: self.recording.into_inner(),
            },
        }
    }
}

/// What no one domain owns: a new flow's entity and its owner,
/// `choose`'s scratch, and the timeline.
pub struct Store<'w, 's> {
    /// Flows: the session each one's run is (a recycled flow entity's is
    /// rewritten in place).
    pub flows: Query<'w, 's, &'static mut FlowOf>,
    /// Deferred changes (a new flow's entity and its `FlowOf`).
    pub commands: Commands<'w, 's>,
    /// Scratch for `choose`.
    pub scratch: &'w mut ChooseScratch,
    /// The timeline, when the run records one (engine/eval/record.rs).
    pub recording: &'w mut Recording,
}

/// Everything the per-event path changes, by domain.
pub struct Sim<'w, 's> {
    /// The clock, the event heap and the run-wide streams.
    pub time: Time<'w>,
    /// The sessions.
    pub sessions: Sessions<'w, 's>,
    /// The stage members.
    pub stages: Stages<'w, 's>,
    /// The pool members.
    pub pools: Pools<'w, 's>,
    /// Samples and turns.
    pub observed: &'w mut Observed,
    /// The flow system.
    pub flows: &'w mut Flows,
    /// The rest.
    pub store: Store<'w, 's>,
}

impl Stages<'_, '_> {
    /// `work(s)` of stage member `s` at `now`.
    pub fn work(&self, flows: &FlowSystem, s: usize, now: f64) -> f64 {
        match self.members.get(self.entities[s]) {
            Ok((service, _)) => service.work(s, now, flows),
            Err(_) => f64::NAN,
        }
    }
}

/// The components of an entity the engine made itself, or a return of
/// the internal error naming `what` it was: `made!(query.get_mut(e),
/// "session", now)`. A session is recycled and never despawned
/// (engine/data/session.rs), a stage or pool member lives the whole run, and
/// a flow's entity is its owner's while it lives: so the lookup cannot fail
/// while those invariants hold, and this is the one place that says so. A
/// macro, not a method, so that the lookup's `Result` is matched in place
/// (a `?` on a returned `Result` moved the components through memory on
/// the hottest path).
macro_rules! made {
    ($lookup:expr, $what:expr, $now:expr) => {
        match $lookup {
            Ok(components) => components,
            Err(_) => return Err($crate::engine::eval::sim::lost($what, $now)),
        }
    };
}
pub(crate) use made;

/// The error of an entity the engine made and lost: impossible while the
/// invariants of engine/data/session.rs hold.
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
            time: self.time.clock.now,
        }
    }

    /// A run-time error in session `e` at statement `at`.
    pub fn session_error(&self, e: Entity, at: (usize, usize), message: String) -> RunError {
        RunError {
            message,
            at: Some(at),
            session: self.sessions.states.get(e).ok().map(|(_, _, l)| l.serial),
            time: self.time.clock.now,
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
        let now = self.time.clock.now;
        let Sim {
            time,
            sessions,
            stages,
            pools,
            flows,
            ..
        } = self;
        let (_, mut draws, life) = made!(sessions.states.get_mut(e), "session", now);
        let streams = &mut *time.streams;
        let (attrs, kv, load, levels) = (
            &mut *sessions.attrs,
            &*pools.kv,
            &*stages.load,
            &*pools.levels,
        );
        let work = |s: usize| stages.work(&flows.system, s, now);
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

impl<'a> Outside<'a> {
    /// An evaluation for no session: no `present`, no attributes, at
    /// `moment`, drawing from `stream`.
    pub fn no_session(stream: RunStream, moment: &'a Moment) -> Outside<'a> {
        Outside {
            present: f64::NAN,
            moment,
            serial: u64::MAX,
            attrs: OutsideAttrs::None,
            stream,
        }
    }
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
        // A number reads nothing and draws nothing: no context is built.
        if let Expr::Num(v) = x {
            return Ok(*v);
        }
        let now = self.time.clock.now;
        let Sim {
            time,
            sessions,
            stages,
            pools,
            flows,
            ..
        } = self;
        let attrs: &[Cell<f64>] = match scope.attrs {
            OutsideAttrs::None => &[],
            OutsideAttrs::Row(row) => sessions.attrs.cells(row),
            OutsideAttrs::Cells(cells) => cells,
        };
        let streams = &mut time.streams;
        let (kv, load, levels) = (&*pools.kv, &*stages.load, &*pools.levels);
        let work = |s: usize| stages.work(&flows.system, s, now);
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
        let session = self.sessions.states.get(e).ok().map(|(_, _, l)| l.serial);
        let statement = Statement { at, line: None };
        let now = self.time.clock.now;
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
        let counted = match self.sessions.dealings.get_mut(e) {
            Ok(mut dealings) => take_holding(&mut dealings.get().holdings, p),
            Err(_) => 0,
        };
        self.return_units(p, units, counted);
    }

    /// [`Sim::give_back`] with the session's holders count on `p` already
    /// taken ([`take_holding`]) from dealings the caller has fetched.
    pub fn return_units(&mut self, p: u32, units: f64, counted: u32) {
        let now = self.time.clock.now;
        if let Ok((_, mut stats)) = self.pools.members.get_mut(self.pools.entities[p as usize]) {
            self.pools
                .levels
                .give_back(&mut stats, p as usize, now, units, counted);
        }
        self.pools.waiting.wake(p as usize);
    }

    /// Starts a flow of `work` over `stages` for `session` (none for a
    /// spill's job): the flow gets an entity (a recycled one if any) whose
    /// `FlowOf` names the session, and a [`FlowLink`] to both.
    pub fn start_flow(
        &mut self,
        session: Option<Entity>,
        stages: &[u32],
        work: f64,
    ) -> Result<(), RunError> {
        let sim = self;
        let now = sim.time.clock.now;
        for &s in stages {
            let Ok((service, mut stats)) =
                sim.stages.members.get_mut(sim.stages.entities[s as usize])
            else {
                return Err(lost("stage", now));
            };
            stats.count(s as usize, true, sim.stages.load, now, 1.0);
            sim.stages.load.set_busy(s as usize, &service);
        }
        let id = sim.flows.system.start(now, stages, work);
        let of = FlowOf { session };
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
        sim.flows.links.insert(
            id,
            FlowLink {
                entity: flow,
                session,
            },
        );
        sim.flows.changed = true;
        Ok(())
    }
}
