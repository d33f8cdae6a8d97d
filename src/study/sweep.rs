//! Sweeps: a program run at every point of a grid of `let` values, each
//! point replicated, and the results as rows.
//!
//! Invariants: the points are the cartesian product of the axes, the first
//! axis varying slowest; point p's replication k runs with seed
//! [`replication_seed`](super::replication_seed)`(seed, k)`, the same seeds at every point (common
//! random numbers: two points differ by their parameters, not their luck);
//! every (point, replication) pair runs in parallel on rayon's pool, and
//! the reports are collected by index, so the rows are the same digit for
//! digit whatever the number of threads. Column order: see [`Sweep::columns`].

use rayon::prelude::*;

use super::replicate::{Replicated, ReplicationError, run_replication};
use crate::report::Report;
use crate::syntax::Diagnostic;
use crate::syntax::lexer::is_word;
use crate::{Overrides, ValidProgram};

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
    /// Parses `NAME=a:b:step` (a ≤ b, step > 0, inclusive) or
    /// `NAME=v1,v2,…`; the error says what is wrong.
    ///
    /// ```
    /// use serq::study::Axis;
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
            let [a, b, step] = parts[..] else {
                return Err(format!(
                    "a range is a:b:step, found `{values}` (in `{text}`)"
                ));
            };
            let (a, b, step) = (number(a)?, number(b)?, number(step)?);
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
#[derive(Clone, Debug, PartialEq)]
pub enum SweepError {
    /// Two axes name one constant.
    DuplicateAxis(String),
    /// The program did not compile at a point (an unknown name, an array
    /// size the value makes invalid, …).
    Compile {
        /// The point's `(name, value)` pairs.
        point: Vec<(String, f64)>,
        /// Every diagnostic.
        diagnostics: Vec<Diagnostic>,
    },
    /// A replication stopped on a run-time error.
    Run {
        /// The point's `(name, value)` pairs.
        point: Vec<(String, f64)>,
        /// The replication and its error.
        error: ReplicationError,
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
            SweepError::Compile { point, diagnostics } => {
                write!(f, "at {}: ", describe(point))?;
                let messages: Vec<&str> = diagnostics.iter().map(|d| d.message.as_str()).collect();
                f.write_str(&messages.join("; "))
            }
            SweepError::Run { point, error } => write!(f, "at {}: {error}", describe(point)),
        }
    }
}

impl std::error::Error for SweepError {}

/// The points of the grid, first axis varying slowest.
fn grid_points(axes: &[Axis]) -> Vec<Vec<f64>> {
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

/// Drops each observation's samples but their mean (as one sample), so a
/// large sweep holds a few numbers per report; the mean of one sample is
/// that sample, so [`Replicated::of`] sees the same means.
fn compact(mut report: Report) -> Report {
    for obs in &mut report.observes {
        if let Some(mean) = crate::report::Summary::of(&obs.samples).mean {
            obs.samples = vec![mean];
        } else {
            obs.samples.clear();
        }
    }
    report
}

/// One point of a sweep, compiled and not yet run.
#[derive(Clone, Debug, PartialEq)]
pub struct PointProgram {
    /// The value of each axis, in axis order.
    pub values: Vec<f64>,
    /// The program with those values in place of their `let`s.
    pub program: ValidProgram,
}

/// Compiles `source` at every point of the grid (first axis varying
/// slowest): each axis's value replaces its `let` constant (after
/// `overrides.sets`, so an axis wins over a `--set` of the same name); the
/// other overrides apply at every point. Zero axes give one point.
///
/// With [`sweep_replication`] and [`Sweep::gather`] this is [`sweep`] in
/// three steps, for a caller that runs the replications elsewhere (another
/// process, another machine) and gathers them back.
///
/// ```
/// use serq::study::{Axis, sweep_points};
/// let source = "let d = 1; stage s : delay; workload { arrive batch(1); }
///               session { run s (d); } run { horizon 10; seed 4; }";
/// let points = sweep_points(source, &Default::default(), &[Axis::parse("d=1,2").unwrap()]).unwrap();
/// assert_eq!(points.len(), 2);
/// assert_eq!((points[1].values[0], points[1].program.seed), (2.0, 4));
/// ```
pub fn sweep_points(
    source: &str,
    overrides: &Overrides,
    axes: &[Axis],
) -> Result<Vec<PointProgram>, SweepError> {
    for (i, axis) in axes.iter().enumerate() {
        if axes[..i].iter().any(|a| a.name == axis.name) {
            return Err(SweepError::DuplicateAxis(axis.name.clone()));
        }
    }
    let points = grid_points(axes);
    let programs = points
        .par_iter()
        .map(|values| {
            let mut o = overrides.clone();
            o.sets.extend(named(axes, values));
            crate::compile_source(source, &o)
        })
        .collect::<Vec<_>>();
    programs
        .into_iter()
        .zip(points)
        .map(|(compiled, values)| match compiled {
            Ok(program) => Ok(PointProgram { values, program }),
            Err(diagnostics) => Err(SweepError::Compile {
                point: named(axes, &values),
                diagnostics,
            }),
        })
        .collect()
}

/// `(name, value)` for each axis of a point.
fn named(axes: &[Axis], values: &[f64]) -> Vec<(String, f64)> {
    axes.iter()
        .zip(values)
        .map(|(a, &v)| (a.name.clone(), v))
        .collect()
}

/// Runs replication `k` of one point's program (seed
/// [`replication_seed`](super::replication_seed)`(program.seed, k)`) and
/// keeps of its report what a sweep's rows read: each observation's
/// samples are reduced to their mean.
///
/// ```
/// # let source = "stage s : delay; workload { arrive batch(2); }
/// #   session { observe x = serial; } run { horizon 1; seed 9; }";
/// # let program = serq::compile_source(source, &Default::default()).unwrap();
/// let report = serq::study::sweep_replication(&program, 2).unwrap();
/// // Seed 9 + 2; the samples 0 and 1 kept as their mean.
/// assert_eq!((report.seed, report.observes[0].samples.clone()), (11, vec![0.5]));
/// ```
pub fn sweep_replication(program: &ValidProgram, k: usize) -> Result<Report, ReplicationError> {
    run_replication(program, k).map(compact)
}

impl Sweep {
    /// Gathers the replications of a sweep's points into its result:
    /// `reports` holds, for each point in order, its `replications`
    /// replications in order (point p's replication k at `p·R + k`), as
    /// [`sweep_replication`] returns them. The first failure in that order
    /// is the error, whichever finished first.
    ///
    /// ```
    /// use serq::study::{Axis, Sweep, sweep, sweep_points, sweep_replication};
    /// let source = "let d = 1; stage s : delay; workload { arrive poisson(1); }
    ///               session { run s (d); } run { horizon 50; }";
    /// let axes = [Axis::parse("d=1,2").unwrap()];
    /// let points = sweep_points(source, &Default::default(), &axes).unwrap();
    /// let reports: Vec<_> = points.iter()
    ///     .flat_map(|p| (0..3).map(|k| sweep_replication(&p.program, k)))
    ///     .collect();
    /// let values = points.into_iter().map(|p| p.values).collect();
    /// let gathered = Sweep::gather(&axes, 3, values, reports).unwrap();
    /// assert_eq!(gathered, sweep(source, &Default::default(), &axes, 3, &|| {}).unwrap());
    /// ```
    pub fn gather(
        axes: &[Axis],
        replications: usize,
        points: Vec<Vec<f64>>,
        reports: Vec<Result<Report, ReplicationError>>,
    ) -> Result<Sweep, SweepError> {
        let mut reports = reports.into_iter();
        let mut swept = Vec::with_capacity(points.len());
        for values in points {
            let mut chunk = Vec::with_capacity(replications);
            for report in reports.by_ref().take(replications) {
                chunk.push(report.map_err(|error| SweepError::Run {
                    point: named(axes, &values),
                    error,
                })?);
            }
            swept.push(SweepPoint {
                values,
                result: Replicated::of(&chunk),
            });
        }
        Ok(Sweep {
            parameters: axes.iter().map(|a| a.name.clone()).collect(),
            replications,
            points: swept,
        })
    }
}

/// Runs `source` at every point of the grid, `replications` times each:
/// [`sweep_points`], then every (point, replication) pair in parallel
/// ([`sweep_replication`]), then [`Sweep::gather`]. Every point is compiled
/// before any runs. `progress` is called once per finished replication.
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
    let points = sweep_points(source, overrides, axes)?;
    let jobs = points.len() * replications;
    let reports = (0..jobs)
        .into_par_iter()
        .map(|job| {
            let report = sweep_replication(&points[job / replications].program, job % replications);
            progress();
            report
        })
        .collect::<Vec<_>>();
    let values = points.into_iter().map(|p| p.values).collect();
    Sweep::gather(axes, replications, values, reports)
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
