//! Independent replications of one program and the Student-t interval of
//! each figure across them.
//!
//! Invariants: replication k (0-based) runs with seed
//! [`replication_seed`]`(base, k)` = `base + k` (wrapping), `base` being the
//! program's seed (after any `--seed` override), so replication 0 is the
//! plain run; the replications run in parallel (rayon) but their reports are
//! collected by index and reduced in that order, so the result is the same
//! digit for digit whatever the number of threads.

use rayon::prelude::*;

use super::tdist::student_t_quantile;
use crate::report::{
    Attainment, NegativeAmounts, Report, Slo, Stability, Summary, Trends, Warning, judge,
    negative_amount_warning, stability_warning,
};
use crate::{RunError, ValidProgram};

/// The seed of replication `k` of a study whose base seed is `base`:
/// `base + k`, wrapping at 2⁶⁴. Every seed gives independent random
/// streams (each is hashed into the ChaCha key), so consecutive seeds are
/// as independent as any others.
///
/// ```
/// use serq::study::replication_seed;
/// assert_eq!(replication_seed(1, 0), 1);
/// assert_eq!(replication_seed(1, 7), 8);
/// assert_eq!(replication_seed(u64::MAX, 1), 0);
/// ```
pub fn replication_seed(base: u64, k: usize) -> u64 {
    base.wrapping_add(k as u64)
}

/// The mean of one figure across replications and the half-width of its
/// 95% Student-t confidence interval.
///
/// ```
/// use serq::study::Estimate;
/// // Means 1, 2, 3: mean 2, s² = (1 + 0 + 1)/2 = 1, half-width t(0.975, 2)·1/√3
/// // = 4.303/1.732 = 2.484.
/// let e = Estimate::of(&[1.0, 2.0, 3.0]);
/// assert_eq!((e.n, e.mean), (3, Some(2.0)));
/// assert_eq!(format!("{:.3}", e.ci.unwrap()), "2.484");
/// // One replication has no interval; none has no mean.
/// assert_eq!(Estimate::of(&[5.0]).ci, None);
/// assert_eq!(Estimate::of(&[]).mean, None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    /// The replications whose figure was defined (finite).
    pub n: usize,
    /// The mean of those figures; `None` when n = 0.
    pub mean: Option<f64>,
    /// t(0.975, n − 1) · s / √n, s the sample standard deviation (divisor
    /// n − 1); `None` when n < 2.
    pub ci: Option<f64>,
}

impl Estimate {
    /// The estimate from one value per replication; a non-finite value (a
    /// figure the replication left undefined) is left out.
    ///
    /// ```
    /// use serq::study::Estimate;
    /// let e = Estimate::of(&[4.0, f64::NAN, 4.0]);
    /// assert_eq!((e.n, e.mean, e.ci), (2, Some(4.0), Some(0.0)));
    /// ```
    pub fn of(values: &[f64]) -> Estimate {
        let finite: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        let n = finite.len();
        if n == 0 {
            return Estimate {
                n,
                mean: None,
                ci: None,
            };
        }
        // Shifted by the first value: equal values give exactly that value
        // and a zero spread (a deterministic program's CI is 0, not 1e-17).
        let shift = finite[0];
        let mean = shift + finite.iter().map(|x| x - shift).sum::<f64>() / n as f64;
        let ci = (n >= 2).then(|| {
            let s2 = finite.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1) as f64;
            // n ≥ 2, so df ≥ 1 and the quantile is defined.
            let t = student_t_quantile(0.975, (n - 1) as f64).expect("df >= 1");
            t * (s2 / n as f64).sqrt()
        });
        Estimate {
            n,
            mean: Some(mean),
            ci,
        }
    }

    fn of_options(values: impl Iterator<Item = Option<f64>>) -> Estimate {
        let values: Vec<f64> = values.map(|x| x.unwrap_or(f64::NAN)).collect();
        Estimate::of(&values)
    }
}

/// An observation's mean and percentiles across replications: each
/// replication contributes its sample mean and its nearest-rank p50, p90
/// and p99 (see [`Summary`]), and each figure is estimated across them.
///
/// ```
/// # let program = serq::compile_source("stage s : delay; workload { arrive batch(4); }
/// #   session { observe ttft = 2 + serial; } run { horizon 1; }", &Default::default()).unwrap();
/// let r = serq::study::replicate(&program, 2).unwrap();
/// let ttft = &r.observations[0];
/// assert_eq!((ttft.name.as_str(), ttft.mean.mean), ("ttft", Some(3.5)));
/// // Samples 2 3 4 5 in every replication: p50 the 2nd, p90 and p99 the 4th.
/// assert_eq!((ttft.p50.mean, ttft.p90.mean, ttft.p99.mean), (Some(3.0), Some(5.0), Some(5.0)));
/// assert_eq!(ttft.p99.ci, Some(0.0));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ObservationEstimate {
    /// The observation's name.
    pub name: String,
    /// The estimate of its mean (each replication contributes its sample mean).
    pub mean: Estimate,
    /// The estimate of its median (each replication contributes its p50).
    pub p50: Estimate,
    /// The estimate of its 90th percentile.
    pub p90: Estimate,
    /// The estimate of its 99th percentile.
    pub p99: Estimate,
}

/// A stage member's figures across replications.
///
/// ```
/// # let program = serq::compile_source("stage s : delay; workload { arrive batch(1); }
/// #   session { run s (4); } run { horizon 10; }", &Default::default()).unwrap();
/// let r = serq::study::replicate(&program, 2).unwrap();
/// // One job of 4 in [0, 10]: util 0.4, one completion in 10: thrpt 0.1.
/// let s = &r.stages[0];
/// assert_eq!((s.utilization.mean, s.throughput.mean), (Some(0.4), Some(0.1)));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct StageEstimate {
    /// The family's name.
    pub name: String,
    /// The member's index when the family has more than one member.
    pub member: Option<usize>,
    /// Utilisation.
    pub utilization: Estimate,
    /// Time-average number of jobs present.
    pub mean_number: Estimate,
    /// Completions per unit time.
    pub throughput: Estimate,
}

/// A pool member's figures across replications.
///
/// ```
/// # let program = serq::compile_source("pool kv { cap 4; } stage s : delay;
/// #   workload { arrive batch(2); } session { hold kv (4) { run s (1); } }
/// #   run { horizon 10; }", &Default::default()).unwrap();
/// let r = serq::study::replicate(&program, 2).unwrap();
/// // The second session waits 1 for the first to release kv.
/// assert_eq!(r.pools[0].mean_wait.mean, Some(0.5));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct PoolEstimate {
    /// The family's name.
    pub name: String,
    /// The member's index when the family has more than one member.
    pub member: Option<usize>,
    /// Time-average allocated units.
    pub mean_used: Estimate,
    /// Mean queue wait of admissions.
    pub mean_wait: Estimate,
}

/// What R replications of one program measured: every figure's mean across
/// them with its 95% interval.
///
/// ```
/// # let program = serq::compile_source("stage s : delay; workload { arrive batch(1); }
/// #   session { run s (1); observe x = 1; } run { horizon 2; seed 7; }", &Default::default()).unwrap();
/// let r = serq::study::replicate(&program, 3).unwrap();
/// assert_eq!(r.seeds, vec![7, 8, 9]);
/// assert_eq!((r.observations.len(), r.stages.len(), r.pools.len()), (1, 1, 0));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Replicated {
    /// The seed of each replication, in replication order.
    pub seeds: Vec<u64>,
    /// The point's stability test across its replications
    /// ([`crate::report::judge`], docs/report.md §2.1); `None` when not
    /// judged (a run ended by an `arrivals` limit).
    pub stability: Option<Stability>,
    /// One per observation, in program order.
    pub observations: Vec<ObservationEstimate>,
    /// One per stage member, in declaration order.
    pub stages: Vec<StageEstimate>,
    /// One per pool member, in declaration order.
    pub pools: Vec<PoolEstimate>,
    /// The replications' negative amounts, added up
    /// ([`NegativeAmounts::merge`], in replication order).
    pub negative_amounts: Option<NegativeAmounts>,
    /// SLO attainment across the replications, when they were run with
    /// an SLO ([`replicate_slo`]).
    pub slo: Option<SloEstimate>,
}

/// An SLO's figures across replications: each replication contributes its
/// [`Attainment`], and each figure is estimated across them.
///
/// ```
/// use serq::report::Slo;
/// # let program = serq::compile_source("stage s : delay; workload { arrive batch(4); }
/// #   session { run s (serial + 1); observe response = now; } run { horizon 10; }",
/// #   &Default::default()).unwrap();
/// let slo = Slo::parse(["response<=3"]).unwrap();
/// let r = serq::study::replicate_slo(&program, 2, Default::default(), Some(&slo), &|| {}).unwrap();
/// // Responses 1, 2, 3, 4 in each: 3 of 4 attain, 0.3 a unit of time.
/// let e = r.slo.unwrap();
/// assert_eq!((e.attainment.mean, e.attainment.ci, e.goodput.mean), (Some(0.75), Some(0.0), Some(0.3)));
/// assert_eq!((e.requests.mean, e.unfinished.mean), (Some(4.0), Some(0.0)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SloEstimate {
    /// The fraction of requests that attained.
    pub attainment: Estimate,
    /// Attained requests per unit of time.
    pub goodput: Estimate,
    /// Requests counted per replication.
    pub requests: Estimate,
    /// Unfinished requests per replication.
    pub unfinished: Estimate,
}

impl SloEstimate {
    /// The estimates across replications' attainments.
    pub(crate) fn of(runs: &[Attainment]) -> SloEstimate {
        let figure = |f: fn(&Attainment) -> Option<f64>| Estimate::of_options(runs.iter().map(f));
        SloEstimate {
            attainment: figure(|a| a.attainment),
            goodput: figure(|a| Some(a.goodput)),
            requests: figure(|a| Some(a.requests as f64)),
            unfinished: figure(|a| Some(a.unfinished as f64)),
        }
    }
}

/// How every replication of a study runs, beyond its program.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RunSettings {
    /// `--strict`: a computed negative amount is a run-time error
    /// ([`crate::RunOptions::strict`]).
    pub strict: bool,
}

/// A replication that stopped on a run-time error.
///
/// ```
/// # let program = serq::compile_source("stage s : delay; workload { arrive batch(1); }
/// #   session { run s (serial / serial); } run { horizon 2; seed 3; }", &Default::default()).unwrap();
/// // Session 0's work is 0 / 0, NaN: every replication fails.
/// let e = serq::study::replicate(&program, 2).unwrap_err();
/// assert_eq!((e.replication, e.seed), (0, 3));
/// assert!(e.to_string().starts_with("replication 0 (seed 3): "));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ReplicationError {
    /// The replication's index (0-based).
    pub replication: usize,
    /// Its seed.
    pub seed: u64,
    /// What stopped it.
    pub error: RunError,
}

impl std::fmt::Display for ReplicationError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "replication {} (seed {}): {}",
            self.replication, self.seed, self.error
        )
    }
}

impl std::error::Error for ReplicationError {}

impl Replicated {
    /// Reduces reports of one program, one per replication in replication
    /// order (their seeds are read from them). An empty slice gives empty
    /// lists.
    ///
    /// ```
    /// use serq::study::Replicated;
    /// let source = "stage s : delay; workload { arrive batch(1); }
    ///               session { observe x = 1 + ~uniform(0, 1); } run { horizon 1; }";
    /// let reports: Vec<_> = (1..=3)
    ///     .map(|seed| {
    ///         let o = serq::Overrides { seed: Some(seed), ..Default::default() };
    ///         serq::run(&serq::compile_source(source, &o).unwrap()).unwrap()
    ///     })
    ///     .collect();
    /// let r = Replicated::of(&reports);
    /// assert_eq!(r.seeds, vec![1, 2, 3]);
    /// assert_eq!(r.observation("x").unwrap().n, 3);
    /// ```
    pub fn of(reports: &[Report]) -> Replicated {
        Replicated::of_slo(reports, None)
    }

    /// [`Replicated::of`], with each report's attainment of `slo` (the
    /// reports run with [`Slo::run_options`]).
    pub fn of_slo(reports: &[Report], slo: Option<&Slo>) -> Replicated {
        let summarised: Vec<Summarised> = reports.iter().map(|r| Summarised::of(r, slo)).collect();
        Replicated::of_summarised(&summarised)
    }

    /// Reduces replications already summarised, in replication order.
    pub(crate) fn of_summarised(runs: &[Summarised]) -> Replicated {
        let Some(first) = runs.first() else {
            return Replicated {
                seeds: Vec::new(),
                stability: None,
                observations: Vec::new(),
                stages: Vec::new(),
                pools: Vec::new(),
                slo: None,
                negative_amounts: None,
            };
        };
        let observations = first
            .observations
            .iter()
            .enumerate()
            .map(|(i, (name, _))| {
                let figure = |f: fn(&Summary) -> Option<f64>| {
                    Estimate::of_options(
                        runs.iter()
                            .map(|r| r.observations.get(i).and_then(|(_, s)| f(s))),
                    )
                };
                ObservationEstimate {
                    name: name.clone(),
                    mean: figure(|s| s.mean),
                    p50: figure(|s| s.p50),
                    p90: figure(|s| s.p90),
                    p99: figure(|s| s.p99),
                }
            })
            .collect();
        let stages = first
            .stages
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let figure = |f: fn(&crate::report::StageRow) -> Option<f64>| {
                    Estimate::of_options(runs.iter().map(|r| r.stages.get(i).and_then(f)))
                };
                StageEstimate {
                    name: s.name.clone(),
                    member: s.member,
                    utilization: figure(|s| s.utilization),
                    mean_number: figure(|s| Some(s.mean_number)),
                    throughput: figure(|s| Some(s.throughput)),
                }
            })
            .collect();
        let pools = first
            .pools
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let figure = |f: fn(&crate::report::PoolRow) -> Option<f64>| {
                    Estimate::of_options(runs.iter().map(|r| r.pools.get(i).and_then(f)))
                };
                PoolEstimate {
                    name: p.name.clone(),
                    member: p.member,
                    mean_used: figure(|p| Some(p.mean_used)),
                    mean_wait: figure(|p| p.mean_wait),
                }
            })
            .collect();
        let slo = runs
            .iter()
            .map(|r| r.slo)
            .collect::<Option<Vec<Attainment>>>()
            .map(|a| SloEstimate::of(&a));
        let stage_names: Vec<_> = first
            .stages
            .iter()
            .map(|s| (s.name.clone(), s.member))
            .collect();
        let pool_names: Vec<_> = first
            .pools
            .iter()
            .map(|p| (p.name.clone(), p.member))
            .collect();
        let stability = runs
            .iter()
            .map(|r| r.trends.clone())
            .collect::<Option<Vec<Trends>>>()
            .and_then(|t| judge(&t, &stage_names, &pool_names));
        Replicated {
            seeds: runs.iter().map(|r| r.seed).collect(),
            stability,
            observations,
            stages,
            pools,
            slo,
            negative_amounts: runs.iter().fold(None, |mut all, r| {
                NegativeAmounts::merge(&mut all, &r.negative_amounts);
                all
            }),
        }
    }

    /// The replications' warnings (`file` names the program in them):
    /// negative amounts added up over the replications, and the point's
    /// one stability verdict when it is not steady.
    pub fn warnings(&self, file: &str) -> Vec<Warning> {
        let mut out = Vec::new();
        if let Some(n) = &self.negative_amounts {
            out.push(negative_amount_warning(n, file));
        }
        if let Some(s) = self.stability.as_ref().filter(|s| !s.is_stable()) {
            out.push(stability_warning(s));
        }
        out
    }

    /// Whether the point is steady: `Some(false)` when the stability test
    /// across its replications finds it transient or overloaded,
    /// `Some(true)` when steady, `None` when not judged (a run ended by an
    /// `arrivals` limit).
    ///
    /// ```
    /// # let source = "stage s : fifo; workload { arrive poisson(3); }
    /// #   session { run s (~exp(1)); } run { horizon 1000; }";
    /// # let program = serq::compile_source(source, &Default::default()).unwrap();
    /// // Three arrivals a unit of time for one of service: every queue grows.
    /// let r = serq::study::replicate(&program, 2).unwrap();
    /// assert_eq!(r.is_stable(), Some(false));
    /// ```
    pub fn is_stable(&self) -> Option<bool> {
        self.stability.as_ref().map(Stability::is_stable)
    }

    /// The estimate of the mean of the observation `name`.
    ///
    /// ```
    /// # let source = "stage s : delay; workload { arrive batch(2); }
    /// #   session { observe x = 3; } run { horizon 1; }";
    /// # let program = serq::compile_source(source, &Default::default()).unwrap();
    /// let r = serq::study::replicate(&program, 4).unwrap();
    /// // Every replication's mean is 3: no spread, a zero-width interval.
    /// let x = r.observation("x").unwrap();
    /// assert_eq!((x.n, x.mean, x.ci), (4, Some(3.0), Some(0.0)));
    /// ```
    pub fn observation(&self, name: &str) -> Option<&Estimate> {
        self.observations
            .iter()
            .find(|o| o.name == name)
            .map(|o| &o.mean)
    }

    /// A stage member's estimates (`member` as for [`Report::stage`]).
    ///
    /// ```
    /// # let source = "stage d[2] : delay; workload { arrive batch(1); }
    /// #   session { run d[1] (5); } run { horizon 10; }";
    /// # let program = serq::compile_source(source, &Default::default()).unwrap();
    /// let r = serq::study::replicate(&program, 2).unwrap();
    /// // d[1] holds one job over [0, 5] of [0, 10].
    /// assert_eq!(r.stage("d", Some(1)).unwrap().mean_number.mean, Some(0.5));
    /// ```
    pub fn stage(&self, name: &str, member: Option<usize>) -> Option<&StageEstimate> {
        self.stages
            .iter()
            .find(|s| s.name == name && s.member == member)
    }

    /// A pool member's estimates (`member` as for [`Report::pool`]).
    ///
    /// ```
    /// # let source = "pool kv { cap 8; } stage d : delay; workload { arrive batch(1); }
    /// #   session { hold kv (8) { run d (5); } } run { horizon 10; }";
    /// # let program = serq::compile_source(source, &Default::default()).unwrap();
    /// let r = serq::study::replicate(&program, 2).unwrap();
    /// // 8 units over [0, 5] of [0, 10].
    /// assert_eq!(r.pool("kv", None).unwrap().mean_used.mean, Some(4.0));
    /// ```
    pub fn pool(&self, name: &str, member: Option<usize>) -> Option<&PoolEstimate> {
        self.pools
            .iter()
            .find(|p| p.name == name && p.member == member)
    }
}

/// Runs `replications` independent replications of `program` in parallel
/// (on rayon's global pool) and reduces them; the first failing
/// replication (by index) is the error. Zero replications give empty lists.
///
/// ```
/// let source = "stage srv : fifo;
///               workload { arrive poisson(0.5); }
///               session { set t0 = now; run srv (~exp(1)); observe response = now - t0; }
///               run { horizon 200; seed 10; }";
/// let program = serq::compile_source(source, &Default::default()).unwrap();
/// let r = serq::study::replicate(&program, 4).unwrap();
/// assert_eq!(r.seeds, vec![10, 11, 12, 13]);
/// let response = r.observation("response").unwrap();
/// assert!(response.ci.unwrap() > 0.0);
/// ```
pub fn replicate(
    program: &ValidProgram,
    replications: usize,
) -> Result<Replicated, ReplicationError> {
    replicate_with_progress(program, replications, &|| {})
}

/// [`replicate`], calling `progress` once as each replication ends (from
/// whichever thread ran it).
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// # let source = "stage s : delay; workload { arrive batch(1); }
/// #   session { run s (1); } run { horizon 2; }";
/// # let program = serq::compile_source(source, &Default::default()).unwrap();
/// let done = AtomicUsize::new(0);
/// serq::study::replicate_with_progress(&program, 3, &|| {
///     done.fetch_add(1, Ordering::Relaxed);
/// })
/// .unwrap();
/// assert_eq!(done.into_inner(), 3);
/// ```
pub fn replicate_with_progress(
    program: &ValidProgram,
    replications: usize,
    progress: &(dyn Fn() + Sync),
) -> Result<Replicated, ReplicationError> {
    replicate_with(program, replications, RunSettings::default(), progress)
}

/// [`replicate_with_progress`], every replication run with `settings`.
///
/// ```
/// # let source = "stage s : delay; workload { arrive batch(1); }
/// #   session { run s (serial - 1); } run { horizon 2; seed 3; }";
/// # let program = serq::compile_source(source, &Default::default()).unwrap();
/// use serq::study::{RunSettings, replicate_with};
/// // The work is -1: taken as 0 and counted, or an error under `strict`.
/// let r = replicate_with(&program, 2, RunSettings::default(), &|| {}).unwrap();
/// assert_eq!(r.negative_amounts.unwrap().count, 2);
/// let strict = RunSettings { strict: true };
/// assert!(replicate_with(&program, 2, strict, &|| {}).is_err());
/// ```
pub fn replicate_with(
    program: &ValidProgram,
    replications: usize,
    settings: RunSettings,
    progress: &(dyn Fn() + Sync),
) -> Result<Replicated, ReplicationError> {
    replicate_slo(program, replications, settings, None, progress)
}

/// [`replicate_with`], measuring each replication's attainment of `slo`
/// when given ([`Replicated::slo`]). Without it, exactly
/// [`replicate_with`]: the runs keep nothing more.
pub fn replicate_slo(
    program: &ValidProgram,
    replications: usize,
    settings: RunSettings,
    slo: Option<&Slo>,
    progress: &(dyn Fn() + Sync),
) -> Result<Replicated, ReplicationError> {
    let runs = (0..replications)
        .into_par_iter()
        .map(|k| {
            let result =
                run_replication(program, k, settings, slo).map(|r| Summarised::of(&r, slo));
            progress();
            result
        })
        .collect::<Vec<Result<Summarised, ReplicationError>>>();
    // Sequentially, so that the error is the first by index, not the first in time.
    let runs = runs.into_iter().collect::<Result<Vec<Summarised>, _>>()?;
    Ok(Replicated::of_summarised(&runs))
}

/// One replication's report with each observation's samples replaced by
/// their [`Summary`]: what [`Replicated`] reduces, a few numbers a run, so
/// a sweep of many points does not hold every sample of every run.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Summarised {
    /// The replication's seed.
    pub seed: u64,
    /// Each observation's name and summary, in program order.
    pub observations: Vec<(String, Summary)>,
    /// The report's stage rows.
    pub stages: Vec<crate::report::StageRow>,
    /// The report's pool rows.
    pub pools: Vec<crate::report::PoolRow>,
    /// What the report gives the stability test.
    pub trends: Option<Trends>,
    /// Its attainment of the study's SLO, if it has one.
    pub slo: Option<Attainment>,
    /// The report's negative amounts.
    pub negative_amounts: Option<NegativeAmounts>,
}

impl Summarised {
    /// Summarises a report.
    pub(crate) fn of(report: &Report, slo: Option<&Slo>) -> Summarised {
        Summarised {
            seed: report.seed,
            observations: report
                .observes
                .iter()
                .map(|o| (o.name.clone(), o.summary()))
                .collect(),
            stages: report.stages.clone(),
            pools: report.pools.clone(),
            trends: report.trends(),
            slo: slo.and_then(|s| s.attainment(report)),
            negative_amounts: report.negative_amounts.clone(),
        }
    }
}

/// Runs replication `k` of `program` with `settings`, keeping what
/// attainment of `slo` needs when given.
pub(crate) fn run_replication(
    program: &ValidProgram,
    k: usize,
    settings: RunSettings,
    slo: Option<&Slo>,
) -> Result<Report, ReplicationError> {
    run_replication_until(program, k, settings, slo, None)
}

/// [`run_replication`], ended early (a partial report) once `interrupt`
/// holds `true`.
pub(crate) fn run_replication_until(
    program: &ValidProgram,
    k: usize,
    settings: RunSettings,
    slo: Option<&Slo>,
    interrupt: Option<&std::sync::atomic::AtomicBool>,
) -> Result<Report, ReplicationError> {
    let seed = replication_seed(program.seed, k);
    let mut options = match slo {
        Some(_) => Slo::run_options(),
        None => crate::RunOptions::default(),
    };
    options.strict = settings.strict;
    options.interrupt = interrupt;
    crate::run_with(&program.with_seed(seed), &mut options).map_err(|error| ReplicationError {
        replication: k,
        seed,
        error,
    })
}
