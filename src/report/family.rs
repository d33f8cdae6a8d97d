//! A report folded by family: one row per stage or pool array (mean, min
//! and max of each figure over its members), so a 500 × 500 deployment
//! prints a few lines instead of 3000 (`serq run --by-family`).
//!
//! Architecture invariant: reads only the [`Report`]'s rows, in their
//! order; a family is a run of rows with one name, as the report lays
//! arrays out.

use super::{PoolRow, Report, StageRow};
use serde::Serialize;
use std::fmt::Write;

/// A figure over a family's members: the mean, the least and the greatest
/// of the members whose figure is defined (`None` when none is).
///
/// ```
/// use serq::report::Spread;
/// let s = Spread::of([Some(0.2), None, Some(0.6)]);
/// assert_eq!((s.mean, s.min, s.max), (Some(0.4), Some(0.2), Some(0.6)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Spread {
    /// The mean over the defined members.
    pub mean: Option<f64>,
    /// The least.
    pub min: Option<f64>,
    /// The greatest.
    pub max: Option<f64>,
}

impl Spread {
    /// The spread of the finite values.
    pub fn of(values: impl IntoIterator<Item = Option<f64>>) -> Spread {
        let values: Vec<f64> = values
            .into_iter()
            .flatten()
            .filter(|x| x.is_finite())
            .collect();
        if values.is_empty() {
            return Spread {
                mean: None,
                min: None,
                max: None,
            };
        }
        Spread {
            mean: Some(values.iter().sum::<f64>() / values.len() as f64),
            min: values.iter().copied().reduce(f64::min),
            max: values.iter().copied().reduce(f64::max),
        }
    }
}

/// A stage family's figures over its members.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StageFamily {
    /// The family's name.
    pub name: String,
    /// Its members.
    pub members: usize,
    /// Time-average jobs present.
    pub mean_number: Spread,
    /// Utilisation.
    pub utilization: Spread,
    /// Jobs completed.
    pub completed: Spread,
    /// Completions per unit of time.
    pub throughput: Spread,
    /// Mean wait.
    pub mean_wait: Spread,
    /// Mean service.
    pub mean_service: Spread,
}

/// A pool family's figures over its members.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PoolFamily {
    /// The family's name.
    pub name: String,
    /// Its members.
    pub members: usize,
    /// Time-average units allocated.
    pub mean_used: Spread,
    /// Time-average holds queued.
    pub mean_queue: Spread,
    /// Time-average allocations.
    pub mean_holders: Spread,
    /// Mean queue wait.
    pub mean_wait: Spread,
    /// Admissions.
    pub admissions: Spread,
    /// Rejections.
    pub rejected: Spread,
}

/// Which families a report, a replication table or a sweep's rows fold
/// into one row (the flags of `serq draw`, with the reports' threshold).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Fold {
    /// A family of more than [`Fold::AUTO_ABOVE`] members folds, the
    /// others are one row per member (no flag).
    #[default]
    Auto,
    /// Every family of more than one member folds (`--by-family`).
    ByFamily,
    /// No family folds, however large (`--members`).
    Members,
}

impl Fold {
    /// Families up to this many members are one row per member by default.
    pub const AUTO_ABOVE: usize = 16;

    /// Whether a family of `members` members (a sweep's: its largest over
    /// the grid) folds.
    ///
    /// ```
    /// use serq::report::Fold;
    /// assert!(!Fold::Auto.folds(16) && Fold::Auto.folds(17));
    /// assert!(Fold::ByFamily.folds(2) && !Fold::ByFamily.folds(1));
    /// assert!(!Fold::Members.folds(1000));
    /// ```
    pub fn folds(self, members: usize) -> bool {
        match self {
            Fold::Auto => members > Self::AUTO_ABOVE,
            Fold::ByFamily => members > 1,
            Fold::Members => false,
        }
    }
}

/// The runs of rows with one name, in order (a family is a run of its
/// members).
pub(crate) fn runs<T>(rows: &[T], name: impl Fn(&T) -> &str) -> Vec<&[T]> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < rows.len() {
        let n = rows[start..]
            .iter()
            .take_while(|r| name(r) == name(&rows[start]))
            .count();
        out.push(&rows[start..start + n]);
        start += n;
    }
    out
}

impl Report {
    /// The stage families, in declaration order.
    ///
    /// ```
    /// # let program = serq::compile_source("stage d[4] : delay; workload { arrive batch(1); }
    /// #   session { run d[1] (2); run d[3] (6); } run { horizon 10; }", &Default::default()).unwrap();
    /// let report = serq::run(&program).unwrap();
    /// // d[1] busy 2 of 10, d[3] 6 of 10, the others idle: mean 0.2, max 0.6.
    /// let d = &report.stage_families()[0];
    /// assert_eq!((d.members, d.utilization.mean, d.utilization.max), (4, Some(0.2), Some(0.6)));
    /// ```
    pub fn stage_families(&self) -> Vec<StageFamily> {
        self.stage_rows_folded(Fold::ByFamily)
    }

    /// The stage rows with the families `fold` folds as one row each
    /// (named by the family) and the others one row per member (named
    /// `name[i]` in a family of several), in declaration order.
    fn stage_rows_folded(&self, fold: Fold) -> Vec<StageFamily> {
        let family = |name: String, f: &[StageRow]| {
            let spread = |g: fn(&StageRow) -> Option<f64>| Spread::of(f.iter().map(g));
            StageFamily {
                name,
                members: f.len(),
                mean_number: spread(|s| Some(s.mean_number)),
                utilization: spread(|s| s.utilization),
                completed: spread(|s| Some(s.completed as f64)),
                throughput: spread(|s| Some(s.throughput)),
                mean_wait: spread(|s| s.mean_wait),
                mean_service: spread(|s| s.mean_service),
            }
        };
        let mut out = Vec::new();
        for f in runs(&self.stages, |s: &StageRow| &s.name) {
            if fold.folds(f.len()) || f.len() == 1 {
                out.push(family(f[0].name.clone(), f));
            } else {
                for (i, row) in f.iter().enumerate() {
                    out.push(family(
                        format!("{}[{i}]", row.name),
                        std::slice::from_ref(row),
                    ));
                }
            }
        }
        out
    }

    /// The pool families, in declaration order.
    pub fn pool_families(&self) -> Vec<PoolFamily> {
        self.pool_rows_folded(Fold::ByFamily)
    }

    /// The pool rows folded as [`Report::stage_rows_folded`] folds stages.
    fn pool_rows_folded(&self, fold: Fold) -> Vec<PoolFamily> {
        let family = |name: String, f: &[PoolRow]| {
            let spread = |g: fn(&PoolRow) -> Option<f64>| Spread::of(f.iter().map(g));
            PoolFamily {
                name,
                members: f.len(),
                mean_used: spread(|p| Some(p.mean_used)),
                mean_queue: spread(|p| Some(p.mean_queue)),
                mean_holders: spread(|p| Some(p.mean_holders)),
                mean_wait: spread(|p| p.mean_wait),
                admissions: spread(|p| Some(p.admissions as f64)),
                rejected: spread(|p| Some(p.rejected as f64)),
            }
        };
        let mut out = Vec::new();
        for f in runs(&self.pools, |p: &PoolRow| &p.name) {
            if fold.folds(f.len()) || f.len() == 1 {
                out.push(family(f[0].name.clone(), f));
            } else {
                for (i, row) in f.iter().enumerate() {
                    out.push(family(
                        format!("{}[{i}]", row.name),
                        std::slice::from_ref(row),
                    ));
                }
            }
        }
        out
    }

    /// Whether `fold` folds any family of the report.
    pub fn folds_any(&self, fold: Fold) -> bool {
        let stages = runs(&self.stages, |s: &StageRow| &s.name);
        let pools = runs(&self.pools, |p: &PoolRow| &p.name);
        stages
            .iter()
            .map(|f| f.len())
            .chain(pools.iter().map(|f| f.len()))
            .any(|n| fold.folds(n))
    }

    /// The text report as `fold` asks: [`Report::to_table`] when it folds
    /// no family (the default for families of at most 16 members), else
    /// the folded layout of [`Report::to_table_by_family`], in which a
    /// family it does not fold is one row per member.
    pub fn to_table_folded(&self, fold: Fold) -> String {
        if self.folds_any(fold) {
            self.table_folded(fold)
        } else {
            self.to_table()
        }
    }

    /// The text report with each family folded into one row: its name and
    /// member count, each figure's mean over the members, and the least
    /// and greatest utilisation (stages) or units used (pools).
    pub fn to_table_by_family(&self) -> String {
        self.table_folded(Fold::ByFamily)
    }

    fn table_folded(&self, fold: Fold) -> String {
        let mut folded = self.clone();
        folded.stages.clear();
        folded.pools.clear();
        let mut out = folded.to_table();
        let fixed = |x: Option<f64>, d: usize| match x {
            Some(v) => format!("{v:.d$}"),
            None => "-".to_string(),
        };
        let stages = self.stage_rows_folded(fold);
        let pools = self.pool_rows_folded(fold);
        let label = |name: &str, n: usize| {
            if n > 1 {
                format!("{name} ×{n}")
            } else {
                name.to_string()
            }
        };
        let w = stages
            .iter()
            .map(|s| label(&s.name, s.members))
            .chain(pools.iter().map(|p| label(&p.name, p.members)))
            .chain(self.observes.iter().map(|o| o.name.clone()))
            .map(|n| n.chars().count())
            .max()
            .unwrap_or(0)
            .max(11)
            + 1;
        // Writing to a String cannot fail.
        if !stages.is_empty() {
            let _ = writeln!(
                out,
                "{:<w$}{:>7}{:>8}{:>8}{:>8}{:>9}{:>8}{:>9}{:>9}",
                "stage", "number", "util", "min", "max", "done", "thrpt", "wait", "service"
            );
            for s in &stages {
                let _ = writeln!(
                    out,
                    "{:<w$}{:>7}{:>8}{:>8}{:>8}{:>9}{:>8}{:>9}{:>9}",
                    label(&s.name, s.members),
                    fixed(s.mean_number.mean, 3),
                    fixed(s.utilization.mean, 3),
                    fixed(s.utilization.min, 3),
                    fixed(s.utilization.max, 3),
                    fixed(s.completed.mean, 1),
                    fixed(s.throughput.mean, 3),
                    fixed(s.mean_wait.mean, 4),
                    fixed(s.mean_service.mean, 4)
                );
            }
        }
        if !pools.is_empty() {
            let _ = writeln!(
                out,
                "{:<w$}{:>11}{:>11}{:>11}{:>8}{:>9}{:>9}{:>8}{:>10}",
                "pool", "used", "min", "max", "queue", "holders", "wait", "admits", "rejected"
            );
            for p in &pools {
                let _ = writeln!(
                    out,
                    "{:<w$}{:>11}{:>11}{:>11}{:>8}{:>9}{:>9}{:>8}{:>10}",
                    label(&p.name, p.members),
                    fixed(p.mean_used.mean, 3),
                    fixed(p.mean_used.min, 3),
                    fixed(p.mean_used.max, 3),
                    fixed(p.mean_queue.mean, 3),
                    fixed(p.mean_holders.mean, 3),
                    fixed(p.mean_wait.mean, 4),
                    fixed(p.admissions.mean, 1),
                    fixed(p.rejected.mean, 1)
                );
            }
        }
        out
    }
}
