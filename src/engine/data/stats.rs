//! Time-average accumulators over the measured interval `[warmup, end]`,
//! and running means.
//!
//! Invariant: an accumulator holds a piecewise-constant value; its area
//! counts only the part of each piece that lies at or after `warmup`, so the
//! warm-up marker needs no handling of its own. (The reference integrates
//! every accumulator at every event; integrating only where a value changes
//! costs nothing per event for the thousands of stages and pools of a large
//! topology and differs from it in the last bits only.) A NaN value held at any
//! instant of the interval, even for no time, makes the average NaN.

/// The integral of a piecewise-constant value from `warmup` on.
#[derive(Clone, Copy, Debug)]
pub struct TimeAvg {
    value: f64,
    since: f64,
    area: f64,
    warmup: f64,
}

impl TimeAvg {
    /// Starts at value 0 at time 0.
    pub fn new(warmup: f64) -> TimeAvg {
        TimeAvg {
            value: 0.0,
            since: 0.0,
            area: 0.0,
            warmup,
        }
    }

    /// The current value.
    pub fn value(&self) -> f64 {
        self.value
    }

    /// The value changes to `value` at `now`.
    #[inline]
    pub fn set(&mut self, now: f64, value: f64) {
        // A piece of zero length still adds `value · 0`: 0 for a number, NaN
        // for NaN (an infinite flow rate over a ps(inf) stage makes the
        // utilisation undefined, as in the reference).
        if now >= self.warmup {
            let from = if self.since > self.warmup {
                self.since
            } else {
                self.warmup
            };
            self.area += self.value * (now - from);
        }
        self.since = now;
        self.value = value;
    }

    /// The time average over `[warmup, end]`.
    pub fn mean(&self, end: f64) -> f64 {
        let mut area = self.area;
        if end >= self.warmup {
            let from = if self.since > self.warmup {
                self.since
            } else {
                self.warmup
            };
            area += self.value * (end - from);
        }
        area / (end - self.warmup)
    }
}

/// A running mean (`m += (x − m) / n`), as the reference averages waits
/// and service times: the same figure as Σx / n up to the last bits.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunningMean {
    n: u64,
    mean: f64,
}

impl RunningMean {
    /// Adds a value.
    #[inline]
    pub fn push(&mut self, x: f64) {
        self.n += 1;
        self.mean += (x - self.mean) / self.n as f64;
    }

    /// The mean, `None` without values.
    pub fn mean(&self) -> Option<f64> {
        (self.n > 0).then_some(self.mean)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_part_after_warmup_counts() {
        // value 1 on [0, 3), 3 on [3, 5), 0 after; warmup 2, end 6:
        // (1·1 + 3·2 + 0·1) / 4 = 1.75.
        let mut a = TimeAvg::new(2.0);
        a.set(0.0, 1.0);
        a.set(3.0, 3.0);
        a.set(5.0, 0.0);
        assert_eq!(a.mean(6.0), 1.75);
    }
}
