//! Whether a point reached a steady state, and if not, whether it is still
//! settling (*transient*) or its queues grow without end (*overloaded*):
//! trends of the live sessions over the two halves of the measured
//! interval, tested across the point's replications (a plain run is a
//! point of one), and the same test on each stage's jobs and each pool's
//! queue to name what grows.
//!
//! Architecture invariant: reads only the report's series
//! ([`Report::live_series`], [`Report::stage_series`],
//! [`Report::pool_series`]); the test and its constants are documented in
//! docs/report.md §2.1, and nothing here is tuned to a program. Student's t
//! quantile is `crate::study`'s (pure arithmetic, no study).

use super::{Report, WindowedAverage};
use crate::study::student_t_quantile;

/// One-sided Student-t quantile t(0.999, 30): the level of a one-run
/// point's trend test, 32 windows less 2 fitted parameters, as an exact
/// constant (checked against `study::student_t_quantile` in
/// tests/stability.rs).
pub const TREND_T: f64 = 3.385;

/// The one-sided level of the trend test, whatever the replications:
/// a steady point is flagged with probability 0.001.
pub const TREND_LEVEL: f64 = 0.999;

/// The lag of the Newey–West estimate: ⌊4·(m/100)^(2/9)⌋ for m = 32
/// windows (Newey and West's 1994 rule of thumb).
pub const TREND_LAG: usize = 3;

/// The windows of each half of the measured interval.
const HALF: usize = WindowedAverage::WINDOWS / 2;

/// A series' trend over one run, in units of the series per window.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Trend {
    /// The least-squares slope over the first half of the windows.
    pub early: f64,
    /// The least-squares slope over the second half.
    pub late: f64,
    /// The Newey–West standard error of `late` (lag [`TREND_LAG`]).
    pub se: f64,
}

impl Trend {
    /// The trend of a series of [`WindowedAverage::WINDOWS`] window
    /// averages; `None` for any other length (a run that ended early).
    ///
    /// ```
    /// use serq::report::Trend;
    /// // Rising by 1 a window, then flat: early slope 1, late slope 0.
    /// let series: Vec<f64> = (0..64).map(|k| f64::from(k.min(32))).collect();
    /// let t = Trend::of(&series).unwrap();
    /// assert_eq!((t.early, t.late, t.se), (1.0, 0.0, 0.0));
    /// ```
    pub fn of(series: &[f64]) -> Option<Trend> {
        if series.len() != WindowedAverage::WINDOWS {
            return None;
        }
        let (early, _) = fit(&series[..HALF]);
        let (late, se) = fit(&series[HALF..]);
        Some(Trend { early, late, se })
    }
}

/// A least-squares line through `ys` at x = 0, 1, …: its slope and the
/// slope's Newey–West standard error.
fn fit(ys: &[f64]) -> (f64, f64) {
    let m = ys.len() as f64;
    let x_mean = (m - 1.0) / 2.0;
    let y_mean = ys.iter().sum::<f64>() / m;
    let (mut sxx, mut sxy) = (0.0, 0.0);
    for (i, &y) in ys.iter().enumerate() {
        let dx = i as f64 - x_mean;
        sxx += dx * dx;
        sxy += dx * (y - y_mean);
    }
    let slope = sxy / sxx;
    (slope, newey_west_se(ys, slope, x_mean, y_mean, sxx))
}

/// The slope's standard error by Newey and West (Bartlett weights
/// 1 − l/(ℓ+1) up to lag ℓ = [`TREND_LAG`]), so that windows whose averages
/// are correlated (a queue that drifts slowly about its mean) do not pass
/// for a trend; with the small-sample factor m/(m − 2).
fn newey_west_se(ys: &[f64], slope: f64, x_mean: f64, y_mean: f64, sxx: f64) -> f64 {
    let m = ys.len();
    let u: Vec<f64> = ys
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

/// What one run gives the stability test: the trend of its live sessions,
/// of each stage member's jobs present and of each pool member's queue.
#[derive(Clone, Debug, PartialEq)]
pub struct Trends {
    /// The live sessions'.
    pub live: Trend,
    /// Each stage member's, in declaration order.
    pub stages: Vec<Trend>,
    /// Each pool member's, in declaration order.
    pub pools: Vec<Trend>,
    /// The measured interval `[warmup, end]`.
    pub interval: (f64, f64),
}

impl Trends {
    /// The width of a window, in units of time.
    fn width(&self) -> f64 {
        (self.interval.1 - self.interval.0) / WindowedAverage::WINDOWS as f64
    }
}

/// The verdict on a point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// No growth of the live sessions: the means describe the system.
    Steady,
    /// The live sessions grow, but the growth slowed to less than half of
    /// its first-half rate: still settling (a warm-up too short, a slow
    /// relaxation).
    Transient,
    /// The live sessions grow at least half as fast as in the first half:
    /// arrivals exceed what the system serves.
    Overloaded,
}

impl Verdict {
    /// The JSON `"stability"`: `steady`, `transient` or `overloaded`.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Steady => "steady",
            Verdict::Transient => "transient",
            Verdict::Overloaded => "overloaded",
        }
    }
}

/// Which kind of member a [`Growing`] queue is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// A stage member: its jobs present grow.
    Stage,
    /// A pool member: the holds in its queue grow.
    Pool,
}

impl Place {
    /// `stage` or `pool`, as the JSON and the warning write it.
    pub fn name(self) -> &'static str {
        match self {
            Place::Stage => "stage",
            Place::Pool => "pool",
        }
    }
}

/// A stage or pool member whose queue grows over the second half.
#[derive(Clone, Debug, PartialEq)]
pub struct Growing {
    /// Stage or pool.
    pub place: Place,
    /// The family's name.
    pub name: String,
    /// The member's index when the family has more than one member.
    pub member: Option<usize>,
    /// Its fitted growth per unit of time over the second half (mean
    /// across replications).
    pub growth: f64,
}

/// What the stability test found at one point.
#[derive(Clone, Debug, PartialEq)]
pub struct Stability {
    /// Steady, transient or overloaded.
    pub verdict: Verdict,
    /// The replications judged together.
    pub replications: usize,
    /// The fitted growth of the live sessions per unit of time over the
    /// second half of `[warmup, end]`, mean across replications.
    pub growth: f64,
    /// The same over the first half.
    pub early_growth: f64,
    /// The late slope's t statistic across the replications (a point of
    /// one: the run's own, on its Newey–West error); `inf` for a perfectly
    /// straight rise.
    pub t: f64,
    /// The t it is compared with: [`TREND_T`] for one replication,
    /// t([`TREND_LEVEL`], R − 1) for R.
    pub threshold: f64,
    /// The replications flagged on their own test (t > [`TREND_T`] on
    /// their Newey–West error, and a rise of at least one session).
    pub alone: usize,
    /// The fitted rise over the second half (growth × its length).
    pub rise: f64,
    /// The second half's start and end.
    pub span: (f64, f64),
    /// The stages and pools whose queues grow, in declaration order
    /// (empty when steady).
    pub growing: Vec<Growing>,
}

impl Stability {
    /// Whether the point is steady: the JSON's `"stable"`.
    pub fn is_stable(&self) -> bool {
        self.verdict == Verdict::Steady
    }
}

/// The trend test of one series across a point's runs (docs/report.md
/// §2.1), in units per window.
struct TrendTest {
    early: f64,
    late: f64,
    /// The mean late slope over its error across the runs (s/√R, s their
    /// standard deviation); one run's own t for a point of one.
    t: f64,
    /// t([`TREND_LEVEL`], R − 1); [`TREND_T`] for a point of one.
    threshold: f64,
    /// The runs each flagged on their own (late slope over its Newey–West
    /// error above [`TREND_T`], a rise of at least one).
    alone: usize,
    runs: usize,
}

/// A late slope (per window) that rises by at least one over the half:
/// less than one session (or job) is no queue growing, however straight
/// the line.
fn rises(late: f64) -> bool {
    late * HALF as f64 >= 1.0
}

/// `late / se`: 0 for a slope that does not rise, `inf` for an exact line.
fn t_of(late: f64, se: f64) -> f64 {
    if late <= 0.0 {
        0.0
    } else if se > 0.0 {
        late / se
    } else {
        f64::INFINITY
    }
}

impl TrendTest {
    fn of(trends: &[Trend]) -> TrendTest {
        let r = trends.len();
        let n = r as f64;
        let late = trends.iter().map(|t| t.late).sum::<f64>() / n;
        let early = trends.iter().map(|t| t.early).sum::<f64>() / n;
        let alone = trends
            .iter()
            .filter(|t| rises(t.late) && t_of(t.late, t.se) > TREND_T)
            .count();
        let (t, threshold) = if r == 1 {
            (t_of(late, trends[0].se), TREND_T)
        } else {
            let s2 = trends.iter().map(|t| (t.late - late).powi(2)).sum::<f64>() / (n - 1.0);
            // r ≥ 2: df ≥ 1, where the quantile is defined.
            let q = student_t_quantile(TREND_LEVEL, n - 1.0).unwrap_or(f64::INFINITY);
            (t_of(late, (s2 / n).sqrt()), q)
        };
        TrendTest {
            early,
            late,
            t,
            threshold,
            alone,
            runs: r,
        }
    }

    /// The series grows when its mean late slope rises by at least one and
    /// is significant across the runs (independent runs make the level
    /// exact whatever R), or when every run is flagged on its own (which a
    /// steady series does with probability p^R, p one run's rate: this is
    /// what finds a growth with two or three replications, too few for
    /// their spread to say much). One run is flagged by its own test.
    fn grows(&self) -> bool {
        (self.runs > 1 && rises(self.late) && self.t > self.threshold) || self.alone == self.runs
    }
}

/// The stability test of a point whose runs gave `runs` (one per
/// replication, in replication order); `stages` and `pools` name the
/// members, in declaration order. `None` when there is no run.
///
/// ```
/// use serq::report::{Trends, Verdict, judge, Trend};
/// // Three runs whose live sessions rise by 1 a window throughout (0.5 a
/// // unit of time: windows of 2 over [0, 128]), give or take a little.
/// let run = |late| Trends {
///     live: Trend { early: 1.0, late, se: 0.1 },
///     stages: vec![], pools: vec![], interval: (0.0, 128.0),
/// };
/// let s = judge(&[run(0.9), run(1.0), run(1.1)], &[], &[]).unwrap();
/// assert_eq!(s.verdict, Verdict::Overloaded);
/// assert_eq!((s.growth, s.rise), (0.5, 32.0));
/// ```
pub fn judge(
    runs: &[Trends],
    stages: &[(String, Option<usize>)],
    pools: &[(String, Option<usize>)],
) -> Option<Stability> {
    let first = runs.first()?;
    let width = first.width();
    let live: Vec<Trend> = runs.iter().map(|r| r.live).collect();
    let test = TrendTest::of(&live);
    let verdict = if !test.grows() {
        Verdict::Steady
    } else if test.late >= test.early / 2.0 {
        Verdict::Overloaded
    } else {
        Verdict::Transient
    };
    let mut growing = Vec::new();
    if verdict != Verdict::Steady {
        let mut members =
            |place: Place, names: &[(String, Option<usize>)], of: fn(&Trends) -> &[Trend]| {
                for (i, (name, member)) in names.iter().enumerate() {
                    let Some(trends) = runs
                        .iter()
                        .map(|r| of(r).get(i).copied())
                        .collect::<Option<Vec<Trend>>>()
                    else {
                        continue;
                    };
                    let t = TrendTest::of(&trends);
                    if t.grows() {
                        growing.push(Growing {
                            place,
                            name: name.clone(),
                            member: *member,
                            growth: t.late / width,
                        });
                    }
                }
            };
        members(Place::Stage, stages, |r| &r.stages);
        members(Place::Pool, pools, |r| &r.pools);
    }
    let (warmup, end) = first.interval;
    Some(Stability {
        verdict,
        replications: runs.len(),
        growth: test.late / width,
        early_growth: test.early / width,
        t: test.t,
        threshold: test.threshold,
        alone: test.alone,
        rise: test.late * HALF as f64,
        span: (warmup + width * HALF as f64, end),
        growing,
    })
}

impl Report {
    /// The trends the stability test reads from this run; `None` when the
    /// run ended before its horizon (an `arrivals` limit: such a run
    /// drains by design, so a trend says nothing).
    pub fn trends(&self) -> Option<Trends> {
        if self.end != self.horizon {
            return None;
        }
        Some(Trends {
            live: Trend::of(&self.live_series)?,
            // Every series or none: a member's trend is found by its index.
            stages: self
                .stage_series
                .iter()
                .map(|s| Trend::of(s))
                .collect::<Option<_>>()?,
            pools: self
                .pool_series
                .iter()
                .map(|s| Trend::of(s))
                .collect::<Option<_>>()?,
            interval: (self.warmup, self.end),
        })
    }

    /// The names of the stage members and of the pool members, in
    /// declaration order, as [`judge`] takes them.
    pub(crate) fn member_names(&self) -> [Vec<(String, Option<usize>)>; 2] {
        [
            self.stages
                .iter()
                .map(|s| (s.name.clone(), s.member))
                .collect(),
            self.pools
                .iter()
                .map(|p| (p.name.clone(), p.member))
                .collect(),
        ]
    }

    /// The stability test of this run, a point of one replication
    /// (docs/report.md §2.1): a least-squares line through the live
    /// sessions' averages over each half of the 64 equal windows of
    /// `[warmup, end]`; the run is *steady* unless the second half's slope
    /// has t > [`TREND_T`] (on its Newey–West error) and rises by at least
    /// one session, and then *overloaded* when that slope is at least half
    /// the first half's, *transient* otherwise. `None` when the run ended
    /// before its horizon.
    ///
    /// ```
    /// # let src = "stage s : fifo; workload { arrive poisson(2); }
    /// #   session { run s (~exp(1)); } run { horizon 2000; seed 1; }";
    /// # let program = serq::compile_source(src, &Default::default()).unwrap();
    /// // Arrivals at 2, service at 1: the queue grows by about 1 a unit of time.
    /// let report = serq::run(&program).unwrap();
    /// let s = report.stability().unwrap();
    /// assert_eq!(s.verdict, serq::report::Verdict::Overloaded);
    /// assert!((s.growth - 1.0).abs() < 0.2, "{s:?}");
    /// assert_eq!((s.growing[0].name.as_str(), s.growing[0].member), ("s", None));
    /// ```
    pub fn stability(&self) -> Option<Stability> {
        let [stages, pools] = self.member_names();
        judge(&[self.trends()?], &stages, &pools)
    }
}
