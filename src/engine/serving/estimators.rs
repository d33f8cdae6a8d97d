//! A stage's online estimators (spec §8.9): `est_lambda`, `est_rho`,
//! `est_wait` and `price`, updated whenever a job completes there.
//!
//! Invariant: the state is three exponentially weighted averages (weight
//! [`WEIGHT`] for the new value, the first value taken as is) and the
//! previous completion's service start; nothing else is remembered, so an
//! update costs the same at every completion.

/// The weight of a new value in each average.
pub const WEIGHT: f64 = 0.01;

/// `est_rho` never reads above this.
pub const MAX_RHO: f64 = 0.99;

/// One stage's estimators.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Estimators {
    /// The weighted gap between successive service starts, in completion
    /// order (none before the second completion).
    gap: Option<f64>,
    /// The weighted service time.
    service: Option<f64>,
    /// The weighted wait.
    wait: Option<f64>,
    /// The service start of the latest completion.
    last_start: Option<f64>,
}

fn blend(average: Option<f64>, x: f64) -> f64 {
    match average {
        None => x,
        Some(a) => (1.0 - WEIGHT) * a + WEIGHT * x,
    }
}

impl Estimators {
    /// A job completed: it started service at `start` after waiting `wait`
    /// and was served for `service` (a step stage's run starts when it
    /// joins and waits 0).
    pub fn complete(&mut self, start: f64, wait: f64, service: f64) {
        if let Some(last) = self.last_start {
            self.gap = Some(blend(self.gap, start - last));
        }
        self.last_start = Some(start);
        self.service = Some(blend(self.service, service));
        self.wait = Some(blend(self.wait, wait));
    }

    /// `est_lambda(s)`: 1 / the weighted gap; 0 before a second completion
    /// or while the gap is not above 0.
    pub fn lambda(&self) -> f64 {
        match self.gap {
            Some(g) if g > 0.0 => 1.0 / g,
            _ => 0.0,
        }
    }

    /// `est_rho(s)`: `min(est_lambda · service, 0.99)`, 0 while
    /// `est_lambda` is.
    pub fn rho(&self) -> f64 {
        let lambda = self.lambda();
        if lambda == 0.0 {
            return 0.0;
        }
        (lambda * self.service.unwrap_or(0.0)).min(MAX_RHO)
    }

    /// `est_wait(s)`: the weighted wait, 0 before the first completion.
    pub fn wait(&self) -> f64 {
        self.wait.unwrap_or(0.0)
    }

    /// `price(s, s_hit, ds)`: `ds + λ(s_miss² − s_hit²)/(2(1−ρ)) +
    /// λ·W·ds/(1−ρ)` with `s_miss = s_hit + ds` and the three estimates.
    pub fn price(&self, s_hit: f64, ds: f64) -> f64 {
        let (lambda, rho, wait) = (self.lambda(), self.rho(), self.wait());
        let s_miss = s_hit + ds;
        ds + lambda * (s_miss * s_miss - s_hit * s_hit) / (2.0 * (1.0 - rho))
            + lambda * wait * ds / (1.0 - rho)
    }
}

#[cfg(test)]
mod tests {
    use super::Estimators;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn three_fifo_jobs_give_the_specs_estimates() {
        // t2_estimators: fifo, jobs of 2 joining at 0, 0.5 and 4 (starts 0,
        // 2, 4; waits 0, 1.5, 0).
        let mut e = Estimators::default();
        e.complete(0.0, 0.0, 2.0);
        // After one completion: lambda 0, rho 0, wait 0, price = ds = 2.
        assert_eq!(
            (e.lambda(), e.rho(), e.wait(), e.price(1.0, 2.0)),
            (0.0, 0.0, 0.0, 2.0)
        );
        e.complete(2.0, 1.5, 2.0);
        // Gap 2: lambda 0.5, rho min(0.5 * 2, 0.99), wait 0.01 * 1.5;
        // price 2 + 0.5 * (9 - 1) / 0.02 + 0.5 * 0.015 * 2 / 0.01 = 203.5.
        assert_eq!((e.lambda(), e.rho()), (0.5, 0.99));
        assert!(close(e.wait(), 0.015));
        assert!(close(e.price(1.0, 2.0), 203.5));
        e.complete(4.0, 0.0, 2.0);
        // Gap 2 again; wait 0.99 * 0.015 = 0.01485: price 203.485.
        assert!(close(e.wait(), 0.01485));
        assert!(close(e.price(1.0, 2.0), 203.485));
    }

    #[test]
    fn a_gap_that_is_not_positive_reads_no_rate() {
        // Two jobs that started together (a ps stage, a step iteration).
        let mut e = Estimators::default();
        e.complete(1.0, 0.0, 3.0);
        e.complete(1.0, 0.0, 3.0);
        assert_eq!((e.lambda(), e.rho()), (0.0, 0.0));
    }
}
