//! Whether a run reached a steady state: a trend test on the live sessions
//! over the second half of the measured interval.
//!
//! Architecture invariant: reads only the report's series
//! ([`Report::live_series`]); the test and its constants are documented in
//! docs/report.md §2.1, and nothing here is tuned to a program.

use super::{Report, WindowedAverage};

/// One-sided Student-t quantile t(0.999, 30): the level of the trend test
/// with 32 windows (30 degrees of freedom), as an exact constant (checked
/// against `study::student_t_quantile` in tests/report.rs).
pub const TREND_T: f64 = 3.385;

/// What the stability test found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stability {
    /// Whether the live sessions do *not* grow (the run is judged stable).
    pub stable: bool,
    /// The fitted growth of the live sessions, per unit of time, over the
    /// second half of `[warmup, end]`.
    pub growth: f64,
    /// The slope's t statistic (`inf` for a perfectly straight rise).
    pub t: f64,
    /// The fitted rise over the second half (growth × its length).
    pub rise: f64,
    /// The second half's start and end.
    pub span: (f64, f64),
}

impl Report {
    /// The stability test (docs/report.md §2.1): a least-squares line
    /// through the live sessions' averages over the last 32 of the 64 equal
    /// windows of `[warmup, end]`, its standard error by Newey and West
    /// (lag [`TREND_LAG`]); the run is *unstable* when the slope is above 0
    /// with t > [`TREND_T`] (one-sided, level 0.001) and the line rises by
    /// at least one session over the half. `None` when the run
    /// ended before its horizon (an `arrivals` limit: such a run drains by
    /// design, so a trend says nothing).
    ///
    /// ```
    /// # let src = "stage s : fifo; workload { arrive poisson(2); }
    /// #   session { run s (~exp(1)); } run { horizon 2000; seed 1; }";
    /// # let program = serq::compile_source(src, &Default::default()).unwrap();
    /// // Arrivals at 2, service at 1: the queue grows by about 1 a unit of time.
    /// let report = serq::run(&program).unwrap();
    /// let s = report.stability().unwrap();
    /// assert!(!s.stable && (s.growth - 1.0).abs() < 0.2, "{s:?}");
    /// ```
    pub fn stability(&self) -> Option<Stability> {
        let k = WindowedAverage::WINDOWS;
        if self.live_series.len() != k || self.end != self.horizon {
            return None;
        }
        let half = &self.live_series[k / 2..];
        let m = half.len() as f64;
        let width = (self.end - self.warmup) / k as f64;
        // x = window index (0..m), centred; y = the window's average.
        let x_mean = (m - 1.0) / 2.0;
        let y_mean = half.iter().sum::<f64>() / m;
        let (mut sxx, mut sxy) = (0.0, 0.0);
        for (i, &y) in half.iter().enumerate() {
            let dx = i as f64 - x_mean;
            sxx += dx * dx;
            sxy += dx * (y - y_mean);
        }
        let slope = sxy / sxx;
        let se = newey_west_se(half, slope, x_mean, y_mean, sxx);
        let t = if slope <= 0.0 {
            0.0
        } else if se > 0.0 {
            slope / se
        } else {
            f64::INFINITY
        };
        let rise = slope * m;
        Some(Stability {
            stable: !(t > TREND_T && rise >= 1.0),
            growth: slope / width,
            t,
            rise,
            span: (self.warmup + width * (k / 2) as f64, self.end),
        })
    }
}

/// The lag of the Newey–West estimate: ⌊4·(m/100)^(2/9)⌋ for m = 32
/// windows (Newey and West's 1994 rule of thumb).
pub const TREND_LAG: usize = 3;

/// The slope's standard error by Newey and West (Bartlett weights
/// 1 − l/(ℓ+1) up to lag ℓ = [`TREND_LAG`]), so that windows whose averages
/// are correlated (a queue that drifts slowly about its mean) do not pass
/// for a trend; with the small-sample factor m/(m − 2).
fn newey_west_se(half: &[f64], slope: f64, x_mean: f64, y_mean: f64, sxx: f64) -> f64 {
    let m = half.len();
    let u: Vec<f64> = half
        .iter()
        .enumerate()
        .map(|(i, &y)| {
            let dx = i as f64 - x_mean;
            dx * (y - y_mean - slope * dx)
        })
        .collect();
    let mut s: f64 = u.iter().map(|v| v * v).sum();
    for lag in 1..=TREND_LAG.min(m - 1) {
        let w = 1.0 - lag as f64 / (TREND_LAG + 1) as f64;
        let c: f64 = (lag..m).map(|t| u[t] * u[t - lag]).sum();
        s += 2.0 * w * c;
    }
    let m = m as f64;
    (s.max(0.0) / (sxx * sxx) * m / (m - 2.0)).sqrt()
}

impl std::fmt::Display for Stability {
    /// The warning's text: what grew, by how much, and the test's figures.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "unstable: the live sessions grow by {:.4} per unit of time over [{}, {}] \
             (a rise of {:.1}, trend t = {:.1} > {TREND_T}); arrivals exceed what the system \
             serves, or it is far from a steady state, so its means measure the horizon",
            self.growth, self.span.0, self.span.1, self.rise, self.t
        )
    }
}
