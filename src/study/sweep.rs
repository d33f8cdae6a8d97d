//! Sweeps: a program run at every point of a grid of `let` values, each
//! point replicated, and the results as rows.
//!
//! Invariants: the points are the cartesian product of the axes, the first
//! axis varying slowest; point p's replication k runs with seed
//! [`replication_seed`](super::replication_seed)`(seed, k)`, the same seeds at every point (common
//! random numbers: two points differ by their parameters, not their luck);
//! every point is compiled (and so every column known) before any run;
//! the (point, replication) pairs are taken in grid order by worker
//! threads and their reports collected by index, and a point is passed on
//! only once every point before it is, so the rows are the same digit for
//! digit whatever the number of threads, and a sweep stopped at any moment
//! has passed on exactly a prefix of the grid. Column order: see
//! [`Sweep::columns`].

use rayon::prelude::*;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;

use super::replicate::{
    Replicated, ReplicationError, RunSettings, Summarised, run_replication, run_replication_until,
};
use super::rows::{Cell, Layout, csv_line, jsonl_line, read_csv, read_jsonl};
use crate::report::{Fold, Report, Slo};
use crate::syntax::lexer::is_word;
use crate::{CompileError, Overrides, ValidProgram};
use std::path::{Path, PathBuf};

/// The most points one axis may have (a typo like `0:1e6:1` is refused
/// instead of running for ever).
///
/// ```
/// use serq::study::{Axis, MAX_AXIS_POINTS};
/// assert_eq!(Axis::parse("x=1:10000:1").unwrap().values.len(), MAX_AXIS_POINTS);
/// assert!(Axis::parse("x=0:10000:1").is_err());
/// ```
pub const MAX_AXIS_POINTS: usize = 10_000;

/// One grid axis: a `let` constant's name and the values it takes.
///
/// ```
/// use serq::study::Axis;
/// // `a:b:step` is inclusive, b reached within a tolerance of 1e-9 steps, and
/// // every value is rounded to 12 significant digits (0.5 + 3·0.1 is 0.8, not
/// // 0.8000000000000000444).
/// let lam = Axis::parse("lam=0.5:0.9:0.1").unwrap();
/// assert_eq!(lam.name, "lam");
/// assert_eq!(lam.values, vec![0.5, 0.6, 0.7, 0.8, 0.9]);
/// // A comma list is taken as written, in its order.
/// assert_eq!(Axis::parse("ND=2,4,8").unwrap().values, vec![2.0, 4.0, 8.0]);
/// assert!(Axis::parse("lam=0.9:0.5:0.1").is_err());
/// assert!(Axis::parse("lam").is_err());
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    /// The `let` constant it replaces.
    pub name: String,
    /// Its values, in sweep order.
    pub values: Vec<f64>,
}

/// Rounds to 12 significant digits, so that `a + i·step` prints as typed.
fn round12(x: f64) -> f64 {
    format!("{x:.11e}").parse().unwrap_or(x)
}

impl Axis {
    /// Parses `NAME=a:b:step` (a ≤ b, step > 0, inclusive), `NAME=a:b`
    /// (every integer from a to b) or `NAME=v1,v2,…`; the error says what
    /// is wrong.
    ///
    /// ```
    /// use serq::study::Axis;
    /// assert_eq!(Axis::parse("ND=1:4").unwrap().values, vec![1.0, 2.0, 3.0, 4.0]);
    /// assert!(Axis::parse("ND=1:2.5").is_err());
    /// assert!(Axis::parse("ND=4:1").is_err());
    /// let e = Axis::parse("lam=0.5:0.9:0").unwrap_err();
    /// assert!(e.contains("step"), "{e}");
    /// ```
    pub fn parse(text: &str) -> Result<Axis, String> {
        let Some((name, values)) = text.split_once('=') else {
            return Err(format!(
                "expected NAME=a:b:step or NAME=v1,v2,… (e.g. lam=0.5:0.9:0.1), found `{text}`"
            ));
        };
        let name = name.trim();
        if !is_word(name) {
            return Err(format!("`{name}` is not a constant's name (in `{text}`)"));
        }
        let number = |s: &str| -> Result<f64, String> {
            match s.trim().parse::<f64>() {
                Ok(x) if x.is_finite() => Ok(x),
                _ => Err(format!(
                    "`{}` is not a finite number (in `{text}`)",
                    s.trim()
                )),
            }
        };
        let values = if values.contains(':') {
            let parts: Vec<&str> = values.split(':').collect();
            let (a, b, step) = match parts[..] {
                [a, b, step] => (number(a)?, number(b)?, number(step)?),
                // `a:b`: every integer from a to b.
                [a, b] => {
                    let (a, b) = (number(a)?, number(b)?);
                    if a.fract() != 0.0 || b.fract() != 0.0 {
                        return Err(format!(
                            "`{values}` is a:b, every integer from a to b, so a and b must be integers; \
                             write a:b:step for other values (in `{text}`)"
                        ));
                    }
                    (a, b, 1.0)
                }
                _ => {
                    return Err(format!(
                        "a range is a:b:step or a:b (every integer), found `{values}` (in `{text}`)"
                    ));
                }
            };
            if step <= 0.0 {
                return Err(format!("the step of `{text}` must be above 0"));
            }
            if a > b {
                return Err(format!("the range `{text}` runs backwards: write a ≤ b"));
            }
            let steps = ((b - a) / step + 1e-9).floor();
            if steps >= MAX_AXIS_POINTS as f64 {
                return Err(format!(
                    "`{text}` has more than {MAX_AXIS_POINTS} points; use a larger step"
                ));
            }
            (0..=steps as usize)
                .map(|i| round12(a + i as f64 * step))
                .collect()
        } else {
            values
                .split(',')
                .map(number)
                .collect::<Result<Vec<_>, _>>()?
        };
        Ok(Axis {
            name: name.to_string(),
            values,
        })
    }
}

/// One point of a sweep and what its replications measured.
///
/// ```
/// use serq::study::{Axis, sweep};
/// let source = "let d = 1; stage s : delay; workload { arrive batch(1); }
///               session { run s (d); } run { horizon 10; }";
/// let result = sweep(source, &Default::default(), &[Axis::parse("d=3").unwrap()], 1, &|| {}).unwrap();
/// assert_eq!(result.points[0].values, vec![3.0]);
/// assert_eq!(result.points[0].result.stage("s", None).unwrap().utilization.mean, Some(0.3));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct SweepPoint {
    /// The value of each axis, in axis order.
    pub values: Vec<f64>,
    /// The estimates across its replications.
    pub result: Replicated,
}

/// A finished sweep: the axes' names and one [`SweepPoint`] per point.
///
/// ```
/// use serq::study::{Axis, sweep};
/// let source = "let a = 1; let b = 1; stage s : delay; workload { arrive batch(1); }
///               session { run s (a + b); } run { horizon 10; }";
/// let axes = [Axis::parse("a=1,2").unwrap(), Axis::parse("b=1,2,3").unwrap()];
/// let result = sweep(source, &Default::default(), &axes, 2, &|| {}).unwrap();
/// assert_eq!((result.parameters.len(), result.replications, result.points.len()), (2, 2, 6));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Sweep {
    /// The axes' names, in axis order.
    pub parameters: Vec<String>,
    /// Replications per point.
    pub replications: usize,
    /// The points, first axis varying slowest.
    pub points: Vec<SweepPoint>,
    /// The rows' columns, decided from the compiled points.
    pub(crate) layout: Layout,
}

/// Why a sweep gave no result.
///
/// ```
/// use serq::study::{Axis, SweepError, sweep};
/// let source = "let N = 1; stage s[N] : delay; workload { arrive batch(1); }
///               session { run s[0] (1); } run { horizon 10; }";
/// let axes = [Axis::parse("N=2,0.5").unwrap()];
/// let e = sweep(source, &Default::default(), &axes, 1, &|| {}).unwrap_err();
/// // N = 0.5 is not an array size; every point is compiled before any runs.
/// assert!(matches!(&e, SweepError::Compile { point, .. } if point[0].1 == 0.5));
/// ```
#[derive(Debug)]
pub enum SweepError {
    /// Two axes name one constant.
    DuplicateAxis(String),
    /// The program did not compile at a point (an unknown name, an array
    /// size the value makes invalid, …).
    Compile {
        /// The point's `(name, value)` pairs.
        point: Vec<(String, f64)>,
        /// Every diagnostic, with the texts they point into.
        error: Box<CompileError>,
    },
    /// A replication stopped on a run-time error.
    Run {
        /// The point's `(name, value)` pairs.
        point: Vec<(String, f64)>,
        /// The replication and its error (boxed: it is large, and rare).
        error: Box<ReplicationError>,
    },
}

/// `lam=0.5, ND=2`.
fn describe(point: &[(String, f64)]) -> String {
    let parts: Vec<String> = point.iter().map(|(n, v)| format!("{n}={v}")).collect();
    parts.join(", ")
}

impl std::fmt::Display for SweepError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SweepError::DuplicateAxis(name) => write!(f, "two --grid axes set `{name}`"),
            SweepError::Compile { point, error } => write!(f, "at {}: {error}", describe(point)),
            SweepError::Run { point, error } => write!(f, "at {}: {error}", describe(point)),
        }
    }
}

impl std::error::Error for SweepError {}

/// The points of the grid, first axis varying slowest.
pub(crate) fn grid_points(axes: &[Axis]) -> Vec<Vec<f64>> {
    let mut points = vec![Vec::new()];
    for axis in axes {
        points = points
            .into_iter()
            .flat_map(|p| {
                axis.values.iter().map(move |&v| {
                    let mut q = p.clone();
                    q.push(v);
                    q
                })
            })
            .collect();
    }
    points
}

/// A sweep ready to run: every point of the grid compiled, and so the
/// columns of its rows and the names it measures known before any run.
///
/// ```
/// use serq::study::{Axis, SweepPlan};
/// let source = "let d = 1; stage s : delay; workload { arrive batch(1); }
///               session { run s (d); observe response = now; } run { horizon 10; }";
/// let plan = SweepPlan::new(source, None, &Default::default(), &[Axis::parse("d=1,2,3").unwrap()], 2)
///     .unwrap();
/// assert_eq!((plan.len(), plan.observations()), (3, vec!["response".to_string()]));
/// // Run the points from the second on, one row each as it completes, in grid order.
/// let mut lines = Vec::new();
/// let result = plan.run(1, &|| {}, &mut |p| lines.push(plan.csv_line(p))).unwrap();
/// assert_eq!(result.points.len(), 2);
/// assert!(lines[0].starts_with("2,2,true,steady,0,2,0,"), "{}", lines[0]);
/// ```
#[derive(Clone, Debug)]
pub struct SweepPlan {
    parameters: Vec<String>,
    points: Vec<Vec<f64>>,
    programs: Vec<ValidProgram>,
    replications: usize,
    layout: Layout,
    settings: RunSettings,
    slo: Option<Slo>,
    fold: Fold,
}

impl SweepPlan {
    /// The plan with every replication run with `settings` (`--strict`).
    pub fn with_settings(mut self, settings: RunSettings) -> SweepPlan {
        self.settings = settings;
        self
    }

    /// Compiles `source` at every point of the grid: each axis's value
    /// replaces its `let` constant (after `overrides.sets`, so an axis wins
    /// over a `--set` of the same name); the other overrides apply at
    /// every point. Zero axes give one point. `origin` is the program's
    /// file, when it came from one: its `use`s and a relative `trace`
    /// resolve beside it (text without a file cannot `use`).
    pub fn new(
        source: &str,
        origin: Option<&Path>,
        overrides: &Overrides,
        axes: &[Axis],
        replications: usize,
    ) -> Result<SweepPlan, SweepError> {
        for (i, axis) in axes.iter().enumerate() {
            if axes[..i].iter().any(|a| a.name == axis.name) {
                return Err(SweepError::DuplicateAxis(axis.name.clone()));
            }
        }
        let parameters: Vec<String> = axes.iter().map(|a| a.name.clone()).collect();
        let points = grid_points(axes);
        let programs = points
            .par_iter()
            .map(|values| {
                let mut o = overrides.clone();
                o.sets.extend(named(&parameters, values));
                match origin {
                    Some(path) => crate::compile_text_at(source, path, &o),
                    None => crate::compile_source(source, &o).map_err(|diagnostics| {
                        CompileError::Diagnostics {
                            path: PathBuf::from("<source>"),
                            sources: crate::syntax::Sources::new("<source>".to_string(), source),
                            diagnostics,
                        }
                    }),
                }
            })
            .collect::<Vec<_>>();
        let programs = programs
            .into_iter()
            .zip(&points)
            .map(|(compiled, values)| {
                compiled.map_err(|error| SweepError::Compile {
                    point: named(&parameters, values),
                    error: Box::new(error),
                })
            })
            .collect::<Result<Vec<ValidProgram>, SweepError>>()?;
        let layout = Layout::of(&parameters, &programs, false, Fold::Auto);
        Ok(SweepPlan {
            parameters,
            points,
            programs,
            replications,
            layout,
            settings: RunSettings::default(),
            slo: None,
            fold: Fold::Auto,
        })
    }

    /// The plan measuring each replication's attainment of `slo` too: its
    /// rows gain `slo.attainment`, `slo.attainment.ci`, `slo.goodput`,
    /// `slo.goodput.ci`, `slo.requests` and `slo.unfinished` after
    /// `warnings`. The error names an observation no point records.
    ///
    /// ```
    /// use serq::{report::Slo, study::{Axis, SweepPlan}};
    /// let source = "let d = 1; stage s : delay; workload { arrive batch(2); }
    ///               session { run s (d * (serial + 1)); observe response = now; } run { horizon 10; }";
    /// let plan = SweepPlan::new(source, None, &Default::default(), &[Axis::parse("d=1:2").unwrap()], 1)
    ///     .unwrap()
    ///     .with_slo(Slo::parse(["response<=2"]).unwrap())
    ///     .unwrap();
    /// let rows = plan.run(0, &|| {}, &mut |_| {}).unwrap().to_csv();
    /// // d = 1: responses 1, 2 (both attain); d = 2: 2, 4 (one).
    /// assert!(rows.starts_with("d,replications,stable,stability,warnings,slo.attainment,slo.attainment.ci,\
    ///     slo.goodput,slo.goodput.ci,slo.requests,slo.unfinished,response.mean,"), "{rows}");
    /// assert!(rows.contains("\n1,1,true,steady,0,1,,0.2,,2,0,"), "{rows}");
    /// assert!(rows.contains("\n2,1,true,steady,0,0.5,,0.1,,2,0,"), "{rows}");
    /// ```
    pub fn with_slo(mut self, slo: Slo) -> Result<SweepPlan, crate::report::SloError> {
        for program in &self.programs {
            slo.check(&program.observes)?;
        }
        self.layout = Layout::of(&self.parameters, &self.programs, true, self.fold);
        self.slo = Some(slo);
        Ok(self)
    }

    /// The plan with its stage families folded as `fold` asks (the
    /// default, [`Fold::Auto`], folds a family of more than 16 members;
    /// `serq sweep --by-family` and `--members` ask for the others): a
    /// folded family `D` is three columns where its members were,
    /// `D.util`, `D.util.min` and `D.util.max`, the mean, least and
    /// greatest over the point's members of each member's mean
    /// utilisation. A family folds when its largest size over the grid's
    /// points does, so one header holds for every row.
    ///
    /// ```
    /// use serq::{report::Fold, study::{Axis, SweepPlan}};
    /// let source = "let N = 2; stage d[N] : delay; workload { arrive batch(1); }
    ///               session { run d[1] (4); } run { horizon 10; }";
    /// let plan = SweepPlan::new(source, None, &Default::default(), &[Axis::parse("N=2,3").unwrap()], 1)
    ///     .unwrap()
    ///     .with_fold(Fold::ByFamily);
    /// assert_eq!(plan.columns()[5..], ["d.util", "d.util.min", "d.util.max"]);
    /// // N = 3: d[1] busy 4 of 10, d[0] and d[2] idle: mean 0.4/3, min 0, max 0.4.
    /// let rows = plan.run(1, &|| {}, &mut |_| {}).unwrap().to_csv();
    /// assert!(rows.ends_with("\n3,1,true,steady,0,0.13333333333333333,0,0.4\n"), "{rows}");
    /// ```
    pub fn with_fold(mut self, fold: Fold) -> SweepPlan {
        self.fold = fold;
        self.layout = Layout::of(&self.parameters, &self.programs, self.slo.is_some(), fold);
        self
    }

    /// The SLO the plan measures, if any.
    pub fn slo(&self) -> Option<&Slo> {
        self.slo.as_ref()
    }

    /// Runs replication `k` of point `p` as [`SweepPlan::run`] does (with
    /// the plan's SLO, if any), for a caller that runs them elsewhere and
    /// hands the reports to [`SweepPlan::gather`].
    pub fn replication(&self, p: usize, k: usize) -> Result<Report, ReplicationError> {
        run_replication(&self.programs[p], k, self.settings, self.slo.as_ref())
    }

    /// The plan of one compiled program replicated: a grid of no axis, one
    /// point, so its rows are those `serq sweep` writes of the program's
    /// file without `--grid` (for a caller that holds a program, not its
    /// text: the Python package's `replicate`).
    ///
    /// ```
    /// use serq::study::{SweepPlan, sweep};
    /// let source = "stage s : delay; workload { arrive poisson(1); }
    ///               session { run s (1); observe t = now; } run { horizon 50; }";
    /// let program = serq::compile_source(source, &Default::default()).unwrap();
    /// let plan = SweepPlan::of_program(program, 3);
    /// let rows = plan.run(0, &|| {}, &mut |_| {}).unwrap();
    /// assert_eq!(rows, sweep(source, &Default::default(), &[], 3, &|| {}).unwrap());
    /// ```
    pub fn of_program(program: ValidProgram, replications: usize) -> SweepPlan {
        let programs = vec![program];
        let layout = Layout::of(&[], &programs, false, Fold::Auto);
        SweepPlan {
            parameters: Vec::new(),
            points: vec![Vec::new()],
            programs,
            replications,
            layout,
            settings: RunSettings::default(),
            slo: None,
            fold: Fold::Auto,
        }
    }

    /// The number of points.
    pub fn len(&self) -> usize {
        self.points.len()
    }

    /// Whether the grid has no point (an axis with no value).
    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    /// Each point's axis values, in grid order.
    pub fn points(&self) -> &[Vec<f64>] {
        &self.points
    }

    /// Each point's compiled program, in grid order.
    pub fn programs(&self) -> &[ValidProgram] {
        &self.programs
    }

    /// Gathers replications run elsewhere (another process or machine:
    /// [`sweep_replication`] of each point's program) into the sweep
    /// [`SweepPlan::run`] would give: `reports` holds, for each point in
    /// order, its replications in order (point p's replication k at
    /// `p·R + k`). The first failure in that order is the error, whichever
    /// finished first.
    ///
    /// ```
    /// use serq::study::{Axis, SweepPlan, sweep, sweep_replication};
    /// let source = "let d = 1; stage s : delay; workload { arrive poisson(1); }
    ///               session { run s (d); observe t = now; } run { horizon 50; }";
    /// let axes = [Axis::parse("d=1,2").unwrap()];
    /// let plan = SweepPlan::new(source, None, &Default::default(), &axes, 3).unwrap();
    /// let reports = plan.programs().iter()
    ///     .flat_map(|p| (0..3).map(move |k| sweep_replication(p, k)))
    ///     .collect();
    /// let gathered = plan.gather(reports).unwrap();
    /// assert_eq!(gathered, sweep(source, &Default::default(), &axes, 3, &|| {}).unwrap());
    /// ```
    pub fn gather(
        &self,
        reports: Vec<Result<Report, ReplicationError>>,
    ) -> Result<Sweep, SweepError> {
        let r = self.replications;
        let mut reports = reports.into_iter();
        let mut swept = Vec::with_capacity(self.points.len());
        for p in 0..self.points.len() {
            swept.push(self.point(p, reports.by_ref().take(r).collect())?);
        }
        Ok(Sweep {
            parameters: self.parameters.clone(),
            replications: r,
            points: swept,
            layout: self.layout.clone(),
        })
    }

    /// Point `p` of the grid from its replications run elsewhere, in
    /// order ([`SweepPlan::gather`] for one point, for a caller that
    /// writes each point's row as its replications come in); the first
    /// failure is the error. Panics, as indexing does, if `p` is not
    /// below [`SweepPlan::len`].
    pub fn point(
        &self,
        p: usize,
        reports: Vec<Result<Report, ReplicationError>>,
    ) -> Result<SweepPoint, SweepError> {
        let values = &self.points[p];
        let mut runs = Vec::with_capacity(reports.len());
        for report in reports {
            let report = report.map_err(|error| SweepError::Run {
                point: named(&self.parameters, values),
                error: Box::new(error),
            })?;
            runs.push(Summarised::of(&report, self.slo.as_ref()));
        }
        Ok(SweepPoint {
            values: values.clone(),
            result: Replicated::of_summarised(&runs),
        })
    }

    /// A point's row, one cell per column ([`Sweep::rows`] for one point).
    pub fn row(&self, point: &SweepPoint) -> Vec<Cell> {
        self.layout.row(&point.values, &point.result)
    }

    /// The axes' names, in axis order.
    pub fn parameters(&self) -> &[String] {
        &self.parameters
    }

    /// The columns of the rows ([`Sweep::columns`]).
    pub fn columns(&self) -> Vec<String> {
        self.layout.names()
    }

    /// The observations the points measure, in column order.
    pub fn observations(&self) -> Vec<String> {
        self.layout.observations()
    }

    /// The CSV header line (with its newline).
    pub fn csv_header(&self) -> String {
        self.layout.csv_header()
    }

    /// A point's CSV line (with its newline), as [`Sweep::to_csv`] writes it.
    pub fn csv_line(&self, point: &SweepPoint) -> String {
        csv_line(&self.layout.row(&point.values, &point.result))
    }

    /// A point's JSON line (with its newline), as [`Sweep::to_jsonl`] writes it.
    pub fn jsonl_line(&self, point: &SweepPoint) -> String {
        jsonl_line(
            &self.layout.names(),
            &self.layout.row(&point.values, &point.result),
        )
    }

    /// The rows of a CSV (`jsonl` false) or JSON-lines file written by an
    /// earlier run of this plan, interrupted or not: the points done,
    /// checked to be this grid's first points in order (same columns, same
    /// axis values). An incomplete last line is left out.
    pub fn read_rows(&self, text: &str, jsonl: bool) -> Result<Vec<Vec<Cell>>, String> {
        let columns = self.columns();
        let rows = if jsonl {
            read_jsonl(text, &columns)?
        } else {
            read_csv(text, &columns)?
        };
        if rows.len() > self.points.len() {
            return Err(format!(
                "it has {} rows, and this grid {} points",
                rows.len(),
                self.points.len()
            ));
        }
        for (i, (row, values)) in rows.iter().zip(&self.points).enumerate() {
            let found: Vec<Option<f64>> = row[..values.len()].iter().map(|c| c.number()).collect();
            let expected: Vec<Option<f64>> = values.iter().map(|&v| Some(v)).collect();
            let replications = row.get(values.len()).and_then(|c| c.number());
            if found != expected || replications != Some(self.replications as f64) {
                return Err(format!(
                    "its row {} is not this grid's point {} ({} with {} replications)",
                    i + 1,
                    i + 1,
                    describe(&named(&self.parameters, values)),
                    self.replications
                ));
            }
        }
        Ok(rows)
    }

    /// How long [`SweepPlan::run_watched`] waits at most between two
    /// questions to its `keep_going`.
    pub const WATCH_EVERY: std::time::Duration = std::time::Duration::from_millis(50);

    /// Runs the points from `from` on (the earlier ones are skipped: a
    /// resumed sweep), `replications` each, and returns them.
    ///
    /// The (point, replication) runs are taken in grid order by
    /// `RAYON_NUM_THREADS` (or one per core) worker threads; `on_point`
    /// sees each point as soon as it and every point before it are done,
    /// in grid order, so a caller that writes a row there leaves a file of
    /// the points done whenever it stops. `progress` is called once per
    /// finished replication. The first failing point in grid order is the
    /// error; every point before it has been passed to `on_point`.
    pub fn run(
        &self,
        from: usize,
        progress: &(dyn Fn() + Sync),
        on_point: &mut dyn FnMut(&SweepPoint),
    ) -> Result<Sweep, SweepError> {
        self.run_watched(from, progress, &mut || true, on_point)
    }

    /// [`SweepPlan::run`], asking `keep_going` (on the calling thread)
    /// whenever a replication ends and at least every
    /// [`SweepPlan::WATCH_EVERY`] meanwhile: once it answers `false` no new
    /// replication starts, those running end at once (their partial
    /// reports dropped), and the sweep of the points passed to `on_point`
    /// so far is returned. A Python caller checks for Ctrl-C there.
    pub fn run_watched(
        &self,
        from: usize,
        progress: &(dyn Fn() + Sync),
        keep_going: &mut dyn FnMut() -> bool,
        on_point: &mut dyn FnMut(&SweepPoint),
    ) -> Result<Sweep, SweepError> {
        let r = self.replications;
        let todo = self.points.len().saturating_sub(from);
        let jobs = todo * r;
        let next_job = AtomicUsize::new(0);
        let stop = AtomicBool::new(false);
        // Set when `keep_going` says stop: read by the running replications.
        let halt = AtomicBool::new(false);
        let (sender, receiver) = mpsc::channel();
        let workers = rayon::current_num_threads().clamp(1, jobs.max(1));
        let mut done: Vec<Option<Result<Summarised, ReplicationError>>> = vec![None; jobs];
        let mut swept = Vec::with_capacity(todo);
        let mut failure = None;
        std::thread::scope(|scope| {
            for _ in 0..workers {
                let sender = sender.clone();
                let (next_job, stop, halt) = (&next_job, &stop, &halt);
                scope.spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        let job = next_job.fetch_add(1, Ordering::Relaxed);
                        if job >= jobs {
                            break;
                        }
                        let program = &self.programs[from + job / r];
                        let slo = self.slo.as_ref();
                        let result =
                            run_replication_until(program, job % r, self.settings, slo, Some(halt))
                                .map(|x| Summarised::of(&x, slo));
                        if result.is_err() {
                            stop.store(true, Ordering::Relaxed);
                        }
                        if sender.send((job, result)).is_err() {
                            break;
                        }
                    }
                });
            }
            drop(sender);
            // Points are reduced and passed on in grid order as they complete.
            let mut next_point = 0;
            loop {
                let got = receiver.recv_timeout(Self::WATCH_EVERY);
                if !keep_going() {
                    stop.store(true, Ordering::Relaxed);
                    halt.store(true, Ordering::Relaxed);
                    break;
                }
                let (job, result) = match got {
                    Ok(message) => message,
                    Err(mpsc::RecvTimeoutError::Timeout) => continue,
                    Err(mpsc::RecvTimeoutError::Disconnected) => break,
                };
                progress();
                done[job] = Some(result);
                while failure.is_none() && next_point < todo {
                    let chunk = &mut done[next_point * r..(next_point + 1) * r];
                    if chunk.iter().any(Option::is_none) {
                        break;
                    }
                    let values = &self.points[from + next_point];
                    let runs: Result<Vec<Summarised>, ReplicationError> =
                        chunk.iter_mut().filter_map(Option::take).collect();
                    match runs {
                        Ok(runs) => {
                            let point = SweepPoint {
                                values: values.clone(),
                                result: Replicated::of_summarised(&runs),
                            };
                            on_point(&point);
                            swept.push(point);
                            next_point += 1;
                        }
                        Err(error) => {
                            failure = Some(SweepError::Run {
                                point: named(&self.parameters, values),
                                error: Box::new(error),
                            });
                        }
                    }
                }
            }
        });
        // A failure stops the workers before its point's other replications
        // run, so that point never completes: jobs are taken in order, so
        // every job before the failing one ran, and the first error left is
        // the first in grid order.
        // Stopped by `keep_going`: what ran after is partial, and no failure.
        if failure.is_none() && swept.len() < todo && !halt.load(Ordering::Relaxed) {
            let first = done[swept.len() * r..]
                .iter_mut()
                .enumerate()
                .find_map(|(i, d)| match d.take() {
                    Some(Err(error)) => Some((i, error)),
                    _ => None,
                });
            if let Some((i, error)) = first {
                let values = &self.points[from + swept.len() + i / r];
                failure = Some(SweepError::Run {
                    point: named(&self.parameters, values),
                    error: Box::new(error),
                });
            }
        }
        if let Some(e) = failure {
            return Err(e);
        }
        Ok(Sweep {
            parameters: self.parameters.clone(),
            replications: r,
            points: swept,
            layout: self.layout.clone(),
        })
    }
}

/// Runs replication `k` of one point's program (seed
/// [`replication_seed`](super::replication_seed)`(program.seed, k)`), for a
/// caller that runs a [`SweepPlan`]'s replications elsewhere and hands the
/// reports to [`SweepPlan::gather`].
pub fn sweep_replication(program: &ValidProgram, k: usize) -> Result<Report, ReplicationError> {
    run_replication(program, k, RunSettings::default(), None)
}

/// [`sweep_replication`] with `settings` (`strict`).
pub fn sweep_replication_with(
    program: &ValidProgram,
    k: usize,
    settings: RunSettings,
) -> Result<Report, ReplicationError> {
    run_replication(program, k, settings, None)
}

/// `(name, value)` pairs of a point.
fn named(parameters: &[String], values: &[f64]) -> Vec<(String, f64)> {
    parameters
        .iter()
        .zip(values)
        .map(|(a, &v)| (a.clone(), v))
        .collect()
}

/// Runs `source` at every point of the grid, `replications` times each
/// ([`SweepPlan::new`], then [`SweepPlan::run`] from the first point).
/// Every point is compiled before any runs. `progress` is called once per
/// finished replication.
///
/// ```
/// use serq::study::{Axis, sweep};
/// let source = "let d = 1;
///               stage s : delay;
///               workload { arrive batch(1); }
///               session { run s (d); observe response = now; }
///               run { horizon 10; }";
/// let axes = [Axis::parse("d=1,2,3").unwrap()];
/// let result = sweep(source, &Default::default(), &axes, 2, &|| {}).unwrap();
/// let means: Vec<_> = result.points.iter()
///     .map(|p| p.result.observation("response").unwrap().mean.unwrap())
///     .collect();
/// assert_eq!(means, vec![1.0, 2.0, 3.0]);
/// ```
pub fn sweep(
    source: &str,
    overrides: &Overrides,
    axes: &[Axis],
    replications: usize,
    progress: &(dyn Fn() + Sync),
) -> Result<Sweep, SweepError> {
    SweepPlan::new(source, None, overrides, axes, replications)?.run(0, progress, &mut |_| {})
}

impl Sweep {
    /// The column names, in order: each axis's name (in axis order);
    /// `replications`; `stable` ([`Replicated::is_stable`]: `false` when the
    /// point is transient or overloaded across its replications,
    /// empty/`null` when not judged); `stability` (the verdict itself:
    /// `steady`, `transient` or `overloaded`, a string in JSON lines,
    /// empty/`null` when not judged);
    /// `warnings` (the point's warnings counted, [`Replicated::warnings`]); for
    /// each observation (in program order) `NAME.mean` and `NAME.ci` (the
    /// mean across replications and its 95% half-width), then `NAME.p50`,
    /// `NAME.p50_ci`, `NAME.p90`, `NAME.p90_ci`, `NAME.p99`, `NAME.p99_ci`
    /// (each replication's nearest-rank percentile, estimated in the same
    /// way); for each stage member (families in declaration order, members
    /// by index) `STAGE.util` or `STAGE[i].util`, the mean utilisation.
    /// Members that exist at some points only (an array sized by an axis)
    /// have a column all the same, empty where the member does not exist;
    /// an array of one member at some point is its `[0]` (`s[N]` with N = 1
    /// fills `s[0].util`). A family folded ([`SweepPlan::with_fold`]; by
    /// default one of more than 16 members at some point) is three columns
    /// instead, `STAGE.util`, `STAGE.util.min` and `STAGE.util.max`: the
    /// mean, least and greatest over the point's members.
    ///
    /// ```
    /// use serq::study::{Axis, sweep};
    /// let source = "let N = 1; let d = 1;
    ///               stage s[N] : delay;
    ///               workload { arrive batch(1); }
    ///               session { run s[0] (d); observe response = now; }
    ///               run { horizon 10; }";
    /// let axes = [Axis::parse("d=1,2").unwrap(), Axis::parse("N=1,2").unwrap()];
    /// let result = sweep(source, &Default::default(), &axes, 1, &|| {}).unwrap();
    /// assert_eq!(result.columns(), ["d", "N", "replications", "stable", "stability",
    ///     "warnings", "response.mean", "response.ci", "response.p50", "response.p50_ci",
    ///     "response.p90", "response.p90_ci", "response.p99", "response.p99_ci", "s[0].util",
    ///     "s[1].util"]);
    /// ```
    pub fn columns(&self) -> Vec<String> {
        self.layout.names()
    }

    /// One row per point (first axis varying slowest), one cell per
    /// column of [`Sweep::columns`]; an undefined cell (a CI of one
    /// replication, an observation without samples, a member the point
    /// lacks) holds `None`.
    ///
    /// ```
    /// use serq::study::{Axis, Cell, sweep};
    /// let source = "let d = 1; stage s : delay; workload { arrive batch(1); }
    ///               session { run s (d); observe response = now; } run { horizon 10; }";
    /// let axes = [Axis::parse("d=1,2").unwrap()];
    /// let result = sweep(source, &Default::default(), &axes, 3, &|| {}).unwrap();
    /// // d, replications, stable, stability, warnings, response's mean,
    /// // p50, p90, p99 (each 2, deterministic: a CI of 0), s.util (d/10).
    /// let row = &result.rows()[1];
    /// assert_eq!(row[..6], [Cell::Number(Some(2.0)), Cell::Number(Some(3.0)),
    ///                       Cell::Flag(Some(true)), Cell::Word(Some("steady")),
    ///                       Cell::Number(Some(0.0)), Cell::Number(Some(2.0))]);
    /// assert_eq!(row.last(), Some(&Cell::Number(Some(0.2))));
    /// ```
    pub fn rows(&self) -> Vec<Vec<Cell>> {
        self.points
            .iter()
            .map(|p| self.layout.row(&p.values, &p.result))
            .collect()
    }

    /// The sweep as CSV: a header of [`Sweep::columns`], then
    /// [`Sweep::rows`]; numbers in shortest round-trip form, a flag `true`
    /// or `false`, an undefined cell empty.
    ///
    /// ```
    /// use serq::study::{Axis, sweep};
    /// let source = "let d = 1; stage s : delay; workload { arrive batch(1); }
    ///               session { run s (d); observe response = now; } run { horizon 10; }";
    /// let axes = [Axis::parse("d=1,2").unwrap()];
    /// let csv = sweep(source, &Default::default(), &axes, 1, &|| {}).unwrap().to_csv();
    /// // One replication: no CI.
    /// assert_eq!(csv, "d,replications,stable,stability,warnings,response.mean,response.ci,response.p50,\
    ///                  response.p50_ci,response.p90,response.p90_ci,response.p99,\
    ///                  response.p99_ci,s.util\n\
    ///                  1,1,true,steady,0,1,,1,,1,,1,,0.1\n\
    ///                  2,1,true,steady,0,2,,2,,2,,2,,0.2\n");
    /// ```
    pub fn to_csv(&self) -> String {
        let mut out = self.layout.csv_header();
        for row in self.rows() {
            out.push_str(&csv_line(&row));
        }
        out
    }

    /// The sweep as JSON lines: one object per row, keyed by the column
    /// names in column order, an undefined cell `null`.
    ///
    /// ```
    /// use serq::study::{Axis, sweep};
    /// let source = "let d = 1; stage s : delay; workload { arrive batch(1); }
    ///               session { run s (d); observe response = now; } run { horizon 10; }";
    /// let axes = [Axis::parse("d=2").unwrap()];
    /// let jsonl = sweep(source, &Default::default(), &axes, 1, &|| {}).unwrap().to_jsonl();
    /// assert!(jsonl.starts_with("{\"d\":2,\"replications\":1,\"stable\":true,\"stability\":\"steady\",\"warnings\":0,\
    ///     \"response.mean\":2,\"response.ci\":null,\"response.p50\":2,"));
    /// assert!(jsonl.ends_with(",\"response.p99_ci\":null,\"s.util\":0.2}\n"));
    /// ```
    pub fn to_jsonl(&self) -> String {
        let columns = self.layout.names();
        self.rows()
            .iter()
            .map(|row| jsonl_line(&columns, row))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_axis_varies_slowest() {
        let a = Axis::parse("a=1,2").unwrap();
        let b = Axis::parse("b=10,20,30").unwrap();
        assert_eq!(
            grid_points(&[a, b]),
            vec![
                vec![1.0, 10.0],
                vec![1.0, 20.0],
                vec![1.0, 30.0],
                vec![2.0, 10.0],
                vec![2.0, 20.0],
                vec![2.0, 30.0]
            ]
        );
    }

    #[test]
    fn a_range_reaches_its_end_despite_rounding() {
        // (0.3 - 0.0) / 0.1 = 2.9999999999999996 in binary: still 4 points.
        assert_eq!(
            Axis::parse("x=0:0.3:0.1").unwrap().values,
            vec![0.0, 0.1, 0.2, 0.3]
        );
        // An end between steps is not reached.
        assert_eq!(Axis::parse("x=1:2.5:1").unwrap().values, vec![1.0, 2.0]);
    }

    #[test]
    fn a_huge_range_is_refused() {
        assert!(Axis::parse("x=0:1e6:1").unwrap_err().contains("points"));
    }
}
