//! Reading a report by name: an observation's statistics, a stage or pool
//! member's figures.
//!
//! Architecture invariant: lookups only read the [`Report`]; the statistics
//! are [`Summary::of`] the samples, the same numbers the table and the JSON
//! print.

use super::{PoolRow, Report, StageRow, Summary};

/// One observation of a report: its samples and their statistics.
///
/// ```
/// let source = "stage s : delay;
///               workload { arrive batch(2); }
///               session { run s (1 + serial); observe done = now; }
///               run { horizon 10; }";
/// let program = serq::compile_source(source, &serq::Overrides::default()).unwrap();
/// let report = serq::run(&program).unwrap();
/// let done = report.observation("done").unwrap();
/// // Session 0 ends at 1, session 1 at 2.
/// assert_eq!(done.samples(), &[1.0, 2.0]);
/// assert_eq!((done.count(), done.mean(), done.p99()), (2, Some(1.5), Some(2.0)));
/// // The batch-means CI needs 40 samples.
/// assert_eq!(done.ci(), None);
/// assert!(report.observation("ttft").is_none());
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ObservationView<'a> {
    name: &'a str,
    samples: &'a [f64],
    summary: Summary,
}

impl<'a> ObservationView<'a> {
    /// The observation's name.
    ///
    /// ```
    /// # let program = serq::compile_source("stage s : delay; workload { arrive batch(1); }
    /// #   session { observe x = 1; } run { horizon 1; }", &Default::default()).unwrap();
    /// let report = serq::run(&program).unwrap();
    /// assert_eq!(report.observation("x").unwrap().name(), "x");
    /// ```
    pub fn name(&self) -> &'a str {
        self.name
    }

    /// The samples taken at t >= warmup, in recording order.
    ///
    /// ```
    /// # let program = serq::compile_source("stage s : delay; workload { arrive batch(2); }
    /// #   session { observe x = serial; } run { horizon 1; }", &Default::default()).unwrap();
    /// let report = serq::run(&program).unwrap();
    /// assert_eq!(report.observation("x").unwrap().samples(), &[0.0, 1.0]);
    /// ```
    pub fn samples(&self) -> &'a [f64] {
        self.samples
    }

    /// All the statistics at once (count, mean, CI, cv², p50, p90, p95, p99).
    ///
    /// ```
    /// # let program = serq::compile_source("stage s : delay; workload { arrive batch(2); }
    /// #   session { observe x = 3; } run { horizon 1; }", &Default::default()).unwrap();
    /// let report = serq::run(&program).unwrap();
    /// let summary = report.observation("x").unwrap().summary();
    /// assert_eq!((summary.count, summary.cv2), (2, Some(0.0)));
    /// ```
    pub fn summary(&self) -> Summary {
        self.summary
    }

    /// The number of samples.
    ///
    /// ```
    /// # let program = serq::compile_source("stage s : delay; workload { arrive batch(4); }
    /// #   session { observe x = 3; } run { horizon 1; }", &Default::default()).unwrap();
    /// let report = serq::run(&program).unwrap();
    /// assert_eq!(report.observation("x").unwrap().count(), 4);
    /// ```
    pub fn count(&self) -> u64 {
        self.summary.count
    }

    /// The mean; `None` without samples.
    ///
    /// ```
    /// # let program = serq::compile_source("stage s : delay; workload { arrive batch(4); }
    /// #   session { observe x = serial; } run { horizon 1; }", &Default::default()).unwrap();
    /// let report = serq::run(&program).unwrap();
    /// // (0 + 1 + 2 + 3) / 4
    /// assert_eq!(report.observation("x").unwrap().mean(), Some(1.5));
    /// ```
    pub fn mean(&self) -> Option<f64> {
        self.summary.mean
    }

    /// The 95% CI half-width from 20 batch means; `None` below 40 samples.
    ///
    /// ```
    /// # let program = serq::compile_source("stage s : delay; workload { arrive batch(40); }
    /// #   session { observe x = 2; } run { horizon 1; }", &Default::default()).unwrap();
    /// let report = serq::run(&program).unwrap();
    /// // 40 equal samples: 20 equal batch means, no spread.
    /// assert_eq!(report.observation("x").unwrap().ci(), Some(0.0));
    /// ```
    pub fn ci(&self) -> Option<f64> {
        self.summary.ci
    }

    /// The ⌈0.99 n⌉-th smallest sample; `None` without samples.
    ///
    /// ```
    /// # let program = serq::compile_source("stage s : delay; workload { arrive batch(100); }
    /// #   session { observe x = serial; } run { horizon 1; }", &Default::default()).unwrap();
    /// let report = serq::run(&program).unwrap();
    /// // The 99th smallest of 0..100.
    /// assert_eq!(report.observation("x").unwrap().p99(), Some(98.0));
    /// ```
    pub fn p99(&self) -> Option<f64> {
        self.summary.p99
    }

    /// The nearest-rank median, the ⌈0.5 n⌉-th smallest sample; `None`
    /// without samples.
    ///
    /// ```
    /// # let program = serq::compile_source("stage s : delay; workload { arrive batch(10); }
    /// #   session { observe x = serial; } run { horizon 1; }", &Default::default()).unwrap();
    /// let report = serq::run(&program).unwrap();
    /// // Samples 0..10: p50 is the 5th smallest, p90 the 9th, p95 the ⌈9.5⌉ = 10th.
    /// let x = report.observation("x").unwrap();
    /// assert_eq!((x.p50(), x.p90(), x.p95()), (Some(4.0), Some(8.0), Some(9.0)));
    /// ```
    pub fn p50(&self) -> Option<f64> {
        self.summary.p50
    }

    /// The ⌈0.9 n⌉-th smallest sample; `None` without samples.
    pub fn p90(&self) -> Option<f64> {
        self.summary.p90
    }

    /// The ⌈0.95 n⌉-th smallest sample; `None` without samples.
    pub fn p95(&self) -> Option<f64> {
        self.summary.p95
    }
}

impl Report {
    /// The observation named `name`, or `None` if the program has none by
    /// that name.
    ///
    /// ```
    /// # let program = serq::compile_source("stage s : delay; workload { arrive batch(1); }
    /// #   session { observe ttft = 0.25; } run { horizon 1; }", &Default::default()).unwrap();
    /// let report = serq::run(&program).unwrap();
    /// assert_eq!(report.observation("ttft").unwrap().mean(), Some(0.25));
    /// assert!(report.observation("tpot").is_none());
    /// ```
    pub fn observation(&self, name: &str) -> Option<ObservationView<'_>> {
        let obs = self.observes.iter().find(|o| o.name == name)?;
        Some(ObservationView {
            name: &obs.name,
            samples: &obs.samples,
            summary: obs.summary(),
        })
    }

    /// A stage member's figures: `member` is `Some(i)` for `name[i]` of an
    /// array family, `None` for a stage declared without `[N]`.
    ///
    /// ```
    /// # let program = serq::compile_source("stage egress[2] : ps(1); stage d : delay;
    /// #   workload { arrive batch(1); } session { run egress[0] (2); run d (1); }
    /// #   run { horizon 10; }", &Default::default()).unwrap();
    /// let report = serq::run(&program).unwrap();
    /// // egress[0] is busy over [0, 2] of [0, 10].
    /// assert_eq!(report.stage("egress", Some(0)).unwrap().utilization, Some(0.2));
    /// assert_eq!(report.stage("d", None).unwrap().completed, 1);
    /// assert!(report.stage("egress", Some(2)).is_none());
    /// assert!(report.stage("egress", None).is_none());
    /// ```
    pub fn stage(&self, name: &str, member: Option<usize>) -> Option<&StageRow> {
        self.stages
            .iter()
            .find(|s| s.name == name && s.member == member)
    }

    /// A pool member's figures, `member` as for [`Report::stage`].
    ///
    /// ```
    /// # let program = serq::compile_source("pool kvD { cap 10; } stage d : delay;
    /// #   workload { arrive batch(1); } session { hold kvD (4) { run d (5); } }
    /// #   run { horizon 10; }", &Default::default()).unwrap();
    /// let report = serq::run(&program).unwrap();
    /// // 4 units held over [0, 5] of [0, 10]: 2 on average.
    /// assert_eq!(report.pool("kvD", None).unwrap().mean_used, 2.0);
    /// ```
    pub fn pool(&self, name: &str, member: Option<usize>) -> Option<&PoolRow> {
        self.pools
            .iter()
            .find(|p| p.name == name && p.member == member)
    }
}
