//! A flow's entity and the flow system as a resource: the solver (its
//! incidence arrays inside) and the one flow-system event (spec §6.4).
//!
//! Invariants: every live flow of the solver has exactly one entity, and
//! its `FlowOf` names the session whose run it is, as its [`FlowLink`] in
//! [`Flows::links`] does (the per-event path reads the link, the invariant
//! check the component; the solver knows no owner); ended
//! flows' entities are recycled, never despawned. At most one `FlowEnd`
//! event is live: the one whose generation equals [`Flows::generation`].
//!
//! Architecture invariant: plain data; nothing here evaluates or knows the
//! interpreter.

use bevy_ecs::prelude::*;
use slotmap::SecondaryMap;
use smallvec::SmallVec;

use crate::engine::data::stats::TimeAvg;
use crate::engine::flows::{FlowId, FlowSystem};

/// A flow: the session whose run it is (none for a spill's job, which no
/// session waits for). Its stages, rate and remaining work live in the
/// solver's arrays.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct FlowOf {
    /// The session.
    pub session: Option<Entity>,
}

/// A live flow's entity and the session whose run it is.
#[derive(Clone, Copy, Debug)]
pub struct FlowLink {
    /// The flow's entity.
    pub entity: Entity,
    /// The session waiting for it (none for a spill's job).
    pub session: Option<Entity>,
}

/// The flow solver and the bookkeeping of its one event.
#[derive(Resource)]
pub struct Flows {
    /// The solver.
    pub system: FlowSystem,
    /// Whether a flow started or ended since the last issue.
    pub changed: bool,
    /// The generation of the live flow-system event.
    pub generation: u64,
    /// The flow that event ends.
    pub pending: Option<FlowId>,
    /// Each live flow's entity and session, by the solver's handle.
    pub links: SecondaryMap<FlowId, FlowLink>,
    /// Entities of ended flows, for the next ones.
    pub free: Vec<Entity>,
    /// Scratch: the stages of the flow that is finishing.
    pub stages: SmallVec<[u32; 4]>,
    /// Each shared stage's utilisation, Σ rates / φ, set after every solve
    /// that moves the stage's load (kept here, not in the stage's
    /// `StageStats`, so that a solve's changed stages cost no entity fetch).
    pub util: Vec<TimeAvg>,
}

impl Flows {
    /// No flows yet on `stages` stages, utilisations measured from
    /// `warmup`.
    pub fn new(system: FlowSystem, stages: usize, warmup: f64) -> Flows {
        Flows {
            util: vec![TimeAvg::new(warmup); stages],
            system,
            changed: false,
            generation: 0,
            pending: None,
            links: SecondaryMap::new(),
            free: Vec::new(),
            stages: SmallVec::new(),
        }
    }
}
