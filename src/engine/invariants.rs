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
