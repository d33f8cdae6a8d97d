//! `check_invariants`: the batch system run after every event when a
//! caller asks for it ([`crate::engine::RunOptions::check_invariants`]).
//!
//! Architecture invariant: the checks only read the world; each recomputes
//! its figure from the entities themselves (a stage's flow rates from the
//! flows, not from the solver's running `load`; the live sessions by
//! counting their entities), so a bookkeeping slip in the incremental
//! structures shows up here. Nothing here runs unless asked.

use bevy_ecs::prelude::*;
use bevy_ecs::system::SystemParam;

use crate::engine::data::code::Code;
use crate::engine::data::flow_entity::{FlowOf, Flows};
use crate::engine::data::kv::KvPools;
use crate::engine::data::pool::PoolLevels;
use crate::engine::data::resources::{Census, Clock, Members};
use crate::engine::data::session::{Continuation, Dealings, Vacant};
use crate::engine::data::stage::Service;
use crate::engine::interface::RunError;

/// Relative tolerance of a sum against a capacity: rates and units are sums
/// of floating-point terms, so equality at the cap may come out a few ulps
/// above it.
pub const TOLERANCE: f64 = 1e-9;

/// The checks' verdict.
#[derive(Resource)]
pub struct Verdict(pub Result<(), RunError>);

/// Whether `x` exceeds `cap` by more than the tolerance (NaN always does).
fn exceeds(x: f64, cap: f64) -> bool {
    x.is_nan() || x > cap + TOLERANCE * cap.abs().max(1.0)
}

/// What the checks read: the whole world, read-only.
#[derive(SystemParam)]
pub struct Checked<'w, 's> {
    code: Res<'w, Code>,
    clock: Res<'w, Clock>,
    levels: Res<'w, PoolLevels>,
    kv: Res<'w, KvPools>,
    dealings: Query<'w, 's, &'static Dealings>,
    flows: Res<'w, Flows>,
    members: Res<'w, Members>,
    census: Res<'w, Census>,
    vacant: Res<'w, Vacant>,
    services: Query<'w, 's, &'static Service>,
    sessions: Query<'w, 's, &'static Continuation>,
    flow_of: Query<'w, 's, &'static FlowOf>,
}

/// Checks, now: every pool's allocation is within its capacity, and its
/// allocation and cached units together too (a spill target excepted: it
/// takes spilled pieces before it evicts, spec §8.3); a running
/// iteration's grants are within its budget, and each growing resident
/// given tokens has its position within its hold's allocation; every
/// shared stage's flows have rates ≥ 0 summing within its capacity, and
/// every flow's entity names its session; the live sessions are those
/// created and not ended, and every session entity is live or vacant.
pub fn check_invariants(world: Checked, mut verdict: ResMut<Verdict>) {
    let checked = world
        .pools()
        .and_then(|()| world.iterations())
        .and_then(|()| world.flows())
        .and_then(|()| world.sessions());
    if let Err(message) = checked {
        verdict.0 = Err(RunError {
            message: format!("invariant broken: {message}"),
            at: None,
            session: None,
            time: world.clock.now,
        });
    }
}

impl Checked<'_, '_> {
    /// Every pool's allocation, and allocation and cache, within its
    /// capacity.
    fn pools(&self) -> Result<(), String> {
        let prog = &self.code.program;
        let mut spill_target = vec![false; prog.pools.len()];
        for q in &prog.pools {
            if let Some(t) = q.spill.as_ref().and_then(|s| spill_target.get_mut(s.to)) {
                *t = true;
            }
        }
        for (p, (&used, &cap)) in self.levels.used.iter().zip(&self.levels.cap).enumerate() {
            if exceeds(used, cap) {
                return Err(format!(
                    "pool `{}` (member {p}) has {used} units allocated, above its capacity {cap}",
                    prog.pools[p].name
                ));
            }
            let cached = self.kv.cache.get(p).map_or(0.0, |c| c.total());
            if !spill_target[p] && exceeds(used + cached, cap) {
                return Err(format!(
                    "pool `{}` (member {p}) has {used} units allocated and {cached} cached, above its capacity {cap}",
                    prog.pools[p].name
                ));
            }
        }
        Ok(())
    }

    /// A running iteration's grants within its budget, and each growing
    /// resident given tokens within its hold's allocation.
    fn iterations(&self) -> Result<(), String> {
        let prog = &self.code.program;
        for (s, &e) in self.members.stages.iter().enumerate() {
            let Ok(Service::Step(engine)) = self.services.get(e) else {
                continue;
            };
            if !engine.running {
                continue;
            }
            let granted: f64 = engine.residents.iter().map(|r| r.granted).sum();
            if exceeds(granted, engine.budget) {
                return Err(format!(
                    "step stage `{}` (member {s}) granted {granted} tokens in an iteration of budget {}",
                    prog.stages[s].name, engine.budget
                ));
            }
            for r in engine.residents.iter().filter(|r| r.granted > 0.0) {
                let Some(p) = r.growing else {
                    continue;
                };
                let held = self.dealings.get(r.session).ok().and_then(|d| {
                    d.holds()
                        .iter()
                        .rev()
                        .flat_map(|h| h.pools.iter())
                        .find(|x| x.pool == p && !x.released)
                        .copied()
                });
                let Some(held) = held else {
                    return Err(format!(
                        "a growing resident of step stage `{}` holds no `{}`",
                        prog.stages[s].name, prog.pools[p as usize].name
                    ));
                };
                if exceeds(held.position, held.units) {
                    return Err(format!(
                        "a growing resident of step stage `{}` is at position {} of `{}`, beyond its allocation {}",
                        prog.stages[s].name, held.position, prog.pools[p as usize].name, held.units
                    ));
                }
            }
        }
        Ok(())
    }

    /// Every flow's rate a number ≥ 0, its entity naming its live session
    /// (or none), and each shared stage's rates within its capacity.
    fn flows(&self) -> Result<(), String> {
        let prog = &self.code.program;
        let system = &self.flows.system;
        let mut sums = vec![0.0; self.members.stages.len()];
        for id in system.ids() {
            let rate = system.rate(id);
            if rate.is_nan() || rate < 0.0 {
                return Err(format!("a flow has rate {rate}, not a number >= 0"));
            }
            for &s in system.stages_of(id) {
                sums[s as usize] += rate;
            }
            // The entity's component agrees with the link, and names a live
            // session or none (a spill's job).
            let named = self.flows.links.get(id).is_some_and(|link| {
                self.flow_of.get(link.entity).ok()
                    == Some(&FlowOf {
                        session: link.session,
                    })
                    && link
                        .session
                        .is_none_or(|e| self.sessions.get(e).is_ok_and(Continuation::live))
            });
            if !named {
                return Err("a flow's entity does not name its live session".to_string());
            }
        }
        for (s, &e) in self.members.stages.iter().enumerate() {
            let Some(cap) = self.services.get(e).ok().and_then(Service::shared_capacity) else {
                continue;
            };
            if exceeds(sums[s], cap) {
                return Err(format!(
                    "the flows on stage `{}` (member {s}) have rates summing to {}, above its capacity {cap}",
                    prog.stages[s].name, sums[s]
                ));
            }
        }
        Ok(())
    }

    /// The live sessions are those created and not ended, and every
    /// session entity is live or vacant.
    fn sessions(&self) -> Result<(), String> {
        let census = &self.census;
        let (created, ended, live) = (census.next_serial, census.ended_total, census.live);
        let counted = self.sessions.iter().filter(|c| c.live()).count() as u64;
        let entities = self.sessions.iter().count() as u64;
        let slots = entities - self.vacant.len() as u64;
        if created.checked_sub(ended) != Some(live) || slots != live || counted != live {
            return Err(format!(
                "{created} sessions created and {ended} ended, \
                 but {live} counted live and {slots} session entities in use"
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::check_invariants;
    use crate::engine::data::pool::PoolLevels;
    use crate::engine::data::session::Vacant;
    use crate::engine::data::stage::Service;
    use crate::engine::run::event_loop::{build, spawn_sessions, verdict};
    use crate::{Overrides, compile_source};
    use bevy_ecs::prelude::*;

    fn world(source: &str) -> (World, Schedule) {
        let program = compile_source(source, &Overrides::default()).expect("links");
        let mut schedule = Schedule::default();
        schedule.add_systems(check_invariants);
        (build(&program), schedule)
    }

    #[test]
    fn a_pool_allocated_past_its_capacity_breaks_an_invariant() {
        let (mut world, mut checks) = world(
            "pool p { cap 10; } stage s : delay; workload { arrive batch(1); }
             session { hold p (4) { run s (1); } } run { horizon 5; }",
        );
        verdict(&mut world, &mut checks).expect("an empty world keeps them");
        // 10 units plus the tolerance's worth (1e-9 · 10) is still within.
        world.resource_mut::<PoolLevels>().used[0] = 10.0 + 5e-9;
        verdict(&mut world, &mut checks).expect("within the tolerance");
        world.resource_mut::<PoolLevels>().used[0] = 11.0;
        let e = verdict(&mut world, &mut checks).expect_err("11 units in a pool of 10");
        assert!(
            e.message.contains("invariant") && e.message.contains("`p`"),
            "{}",
            e.message
        );
    }

    #[test]
    fn a_stage_whose_flows_exceed_its_capacity_breaks_an_invariant() {
        let (mut world, mut checks) = world(
            "stage a : ps(1); stage b : ps(1); share maxmin; workload { arrive batch(1); }
             session { run a, b (1); } run { horizon 5; }",
        );
        // No flow: the stage's capacity can drop to anything ≥ 0.
        let b = world
            .resource::<crate::engine::data::resources::Members>()
            .stages[1];
        *world.get_mut::<Service>(b).expect("stage b") = Service::Shared(0.5);
        verdict(&mut world, &mut checks).expect("no flows");
    }

    #[test]
    fn a_session_entity_neither_live_nor_vacant_breaks_an_invariant() {
        let (mut world, mut checks) = world(
            "stage s : delay; workload { arrive batch(1); }
             session { run s (1); } run { horizon 5; }",
        );
        spawn_sessions(&mut world, 2);
        verdict(&mut world, &mut checks).expect("2 vacant, 0 live");
        world.resource_mut::<Vacant>().pop();
        let e = verdict(&mut world, &mut checks).expect_err("1 entity in use, 0 live");
        assert!(
            e.message.contains("invariant") && e.message.contains("1 session entities"),
            "{}",
            e.message
        );
    }

    #[test]
    fn a_pool_whose_cache_and_allocation_pass_its_capacity_breaks_an_invariant() {
        use crate::engine::data::kv::{KvPools, Owner};
        let source = "pool p { cap 10; spill q via s (0) when (1); } pool q { cap 4; } stage s : delay;
             workload { arrive batch(1); } session { hold p (4) { run s (1); } cache (4) } run { horizon 5; }";
        let (mut world, mut checks) = world(source);
        world.resource_mut::<PoolLevels>().used[0] = 8.0;
        world.resource_mut::<KvPools>().cache[0].store(0, Owner::Ended(Box::new([])), 2.0, 0.0);
        verdict(&mut world, &mut checks).expect("8 used + 2 cached in a pool of 10");
        {
            let mut kv = world.resource_mut::<KvPools>();
            kv.cache[0].store(0, Owner::Ended(Box::new([])), 3.0, 0.0);
            // A spill target may hold more than its capacity until it evicts.
            kv.cache[1].store(0, Owner::Ended(Box::new([])), 6.0, 0.0);
        }
        let e = verdict(&mut world, &mut checks).expect_err("8 used + 3 cached in a pool of 10");
        assert!(
            e.message.contains("invariant") && e.message.contains("3 cached"),
            "{}",
            e.message
        );
        world.resource_mut::<KvPools>().cache[0].drop_live(0);
        verdict(&mut world, &mut checks).expect("q is a spill target: 6 cached in a pool of 4");
    }

    #[test]
    fn an_iteration_granting_past_its_budget_breaks_an_invariant() {
        use crate::engine::data::residents::Resident;
        use crate::engine::serving::iteration::Mode;
        let (mut world, mut checks) = world(
            "stage e : step { budget 4; cost 1; } workload { arrive batch(1); }
             session { run e prefill (10); } run { horizon 5; }",
        );
        spawn_sessions(&mut world, 1);
        let session = {
            let mut vacant = world.resource_mut::<Vacant>();
            let session = vacant.pop().expect("one spawned");
            vacant.push(session);
            session
        };
        let e = world
            .resource::<crate::engine::data::resources::Members>()
            .stages[0];
        {
            let mut service = world.get_mut::<Service>(e).expect("stage e");
            let Service::Step(engine) = &mut *service else {
                panic!("e is a step stage");
            };
            engine.running = true;
            engine.budget = 4.0;
            engine.residents.push(Resident {
                session,
                mode: Mode::Prefill,
                remaining: 10.0,
                growing: None,
                joined: 0.0,
                order: 0,
                granted: 4.0,
                stalled: false,
                fresh: false,
                rank: 0,
                at: (0, 0),
                admission: 0.0,
                kv: 0.0,
            });
        }
        verdict(&mut world, &mut checks).expect("4 tokens of a budget of 4");
        if let Some(mut service) = world.get_mut::<Service>(e)
            && let Service::Step(engine) = &mut *service
        {
            engine.residents[0].granted = 5.0;
        }
        let err = verdict(&mut world, &mut checks).expect_err("5 tokens of a budget of 4");
        assert!(
            err.message.contains("invariant") && err.message.contains("budget 4"),
            "{}",
            err.message
        );
    }
}
