//! Invariant checks, run after every event when a caller asks for them
//! ([`super::RunOptions::check_invariants`]).
//!
//! Architecture invariant: the checks only read the world; each recomputes
//! its figure from the entities themselves (a stage's flow rates from the
//! flows, not from the solver's running `load`), so a bookkeeping slip in
//! the incremental structures shows up here. Nothing here runs unless asked.

use super::RunError;
use super::world::World;

/// Relative tolerance of a sum against a capacity: rates and units are sums
/// of floating-point terms, so equality at the cap may come out a few ulps
/// above it.
pub const TOLERANCE: f64 = 1e-9;

/// Whether `x` exceeds `cap` by more than the tolerance (NaN always does).
fn exceeds(x: f64, cap: f64) -> bool {
    x.is_nan() || x > cap + TOLERANCE * cap.abs().max(1.0)
}

impl World<'_> {
    /// Checks, now: every pool's allocation is within its capacity; every
    /// shared stage's flows have rates ≥ 0 summing within its capacity; the
    /// live sessions are those created and not ended.
    pub fn check_invariants(&mut self) -> Result<(), RunError> {
        for (p, pool) in self.pools.iter().enumerate() {
            if exceeds(pool.used(), pool.cap) {
                return Err(self.error(format!(
                    "invariant broken: pool `{}` (member {p}) has {} units allocated, above its capacity {}",
                    self.prog.pools[p].name,
                    pool.used(),
                    pool.cap
                )));
            }
        }
        let mut sums = std::mem::take(&mut self.rate_sums);
        sums.clear();
        sums.resize(self.stages.len(), 0.0);
        let mut negative = None;
        for id in self.flows.ids() {
            let rate = self.flows.rate(id);
            if rate.is_nan() || rate < 0.0 {
                negative = Some(rate);
            }
            for &s in self.flows.stages_of(id) {
                sums[s as usize] += rate;
            }
        }
        let over = self.stages.iter().enumerate().find_map(|(s, stage)| {
            let cap = stage.shared_capacity()?;
            exceeds(sums[s], cap).then_some((s, sums[s], cap))
        });
        self.rate_sums = sums;
        if let Some(rate) = negative {
            return Err(self.error(format!(
                "invariant broken: a flow has rate {rate}, not a number >= 0"
            )));
        }
        if let Some((s, sum, cap)) = over {
            return Err(self.error(format!(
                "invariant broken: the flows on stage `{}` (member {s}) have rates summing to {sum}, above its capacity {cap}",
                self.prog.stages[s].name
            )));
        }
        let (created, ended, live) = self.session_counts();
        let slots = self.occupied_slots();
        if created.checked_sub(ended) != Some(live) || slots != live {
            return Err(self.error(format!(
                "invariant broken: {created} sessions created and {ended} ended, \
                 but {live} counted live and {slots} session slots in use"
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::session::Session;
    use super::super::stages::Service;
    use super::World;
    use crate::{Overrides, compile_source};

    fn program(source: &str) -> crate::ValidProgram {
        compile_source(source, &Overrides::default()).expect("links")
    }

    #[test]
    fn a_pool_allocated_past_its_capacity_breaks_an_invariant() {
        let prog = program(
            "pool p { cap 10; } stage s : delay; workload { arrive batch(1); }
             session { hold p (4) { run s (1); } } run { horizon 5; }",
        );
        let mut world = World::new(&prog);
        world.check_invariants().expect("an empty world keeps them");
        // 10 units plus the tolerance's worth (1e-9 · 10) is still within.
        world.pools[0].used_avg.add(0.0, 10.0 + 5e-9);
        world.check_invariants().expect("within the tolerance");
        world.pools[0].used_avg.add(0.0, 1.0);
        let e = world
            .check_invariants()
            .expect_err("11 units in a pool of 10");
        assert!(
            e.message.contains("invariant") && e.message.contains("`p`"),
            "{}",
            e.message
        );
    }

    #[test]
    fn flows_whose_rates_exceed_a_stage_break_an_invariant() {
        let prog = program(
            "stage a : ps(1); stage b : ps(1); share maxmin; workload { arrive batch(1); }
             session { run a, b (1); } run { horizon 5; }",
        );
        let mut world = World::new(&prog);
        world.start_flow(0, &[0, 1], 1.0);
        world.flows.solve(0.0);
        world
            .check_invariants()
            .expect("one flow at rate 1 on two ps(1) stages");
        // The solver saw capacity 1; the stage now says 0.5.
        world.stages[1].service = Service::Shared(0.5);
        let e = world
            .check_invariants()
            .expect_err("rate 1 on capacity 0.5");
        assert!(
            e.message.contains("invariant") && e.message.contains("`b`"),
            "{}",
            e.message
        );
    }

    #[test]
    fn a_session_slot_nobody_created_breaks_an_invariant() {
        let prog = program(
            "stage s : delay; workload { arrive batch(1); }
             session { run s (1); } run { horizon 5; }",
        );
        let mut world = World::new(&prog);
        world.create_session().expect("one session");
        world
            .check_invariants()
            .expect("1 created, 0 ended, 1 live");
        world.sessions.push(Session::new(&prog, 99));
        let e = world
            .check_invariants()
            .expect_err("2 slots in use, 1 live");
        assert!(
            e.message.contains("invariant") && e.message.contains("2 session slots"),
            "{}",
            e.message
        );
    }
}
