//! The native steps of `serq.replicate` and `serq.sweep`: a grid's points
//! compiled, one replication run (what a Ray or Dask task calls), and the
//! replications gathered into the rows and columns `serq sweep` writes.
//!
//! Invariant: rows come from `serq::study` alone (`Sweep::columns`,
//! `Sweep::rows`), and a replication's seed is `replication_seed(point's
//! seed, k)`, so the rows are the same whichever executor ran the
//! replications, in whatever order they finished.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use serq::study::{Axis, ReplicationError, Sweep, SweepError, SweepPoint};

use crate::errors::{CompileError, RunError};
use crate::program::{Options, Program};
use crate::report::Report;
use crate::state;

/// Columns and rows: what every study function returns to Python.
type Rows = (Vec<String>, Vec<Vec<Option<f64>>>);

fn rows_of(sweep: &Sweep) -> Rows {
    (sweep.columns(), sweep.rows())
}

/// `NAME=a:b:step` or `NAME=v1,v2,…` (the syntax of `serq sweep --grid`)
/// to `(NAME, values)`.
#[pyfunction]
pub fn parse_axis(text: &str) -> PyResult<(String, Vec<f64>)> {
    let axis = Axis::parse(text).map_err(PyValueError::new_err)?;
    Ok((axis.name, axis.values))
}

/// One replication's outcome: its report (samples reduced to their means,
/// as a sweep keeps them) or its run-time error. Picklable, so a worker
/// returns it rather than raising, and the driver reports the first
/// failure in replication order, not in finishing order.
#[pyclass(frozen, module = "serq._serq", name = "_Replication")]
pub struct Replication {
    outcome: Result<serq::Report, ReplicationError>,
}

#[pymethods]
impl Replication {
    /// The report, or `None` if the replication failed.
    #[getter]
    fn report(&self) -> Option<Report> {
        self.outcome.as_ref().ok().map(|r| Report::new(r.clone()))
    }

    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Py<PyAny>, Bound<'py, PyTuple>)> {
        let restore = crate::restorer(py, "_restore_replication")?;
        let args = match &self.outcome {
            Ok(report) => (true, state::report_state(py, report)?.into_any()),
            Err(e) => (false, state::failure_state(e).into_pyobject(py)?.into_any()),
        };
        Ok((restore, args.into_pyobject(py)?))
    }
}

/// Unpickles a [`Replication`].
#[pyfunction]
#[pyo3(name = "_restore_replication")]
pub fn restore_replication(ok: bool, state: &Bound<'_, PyAny>) -> PyResult<Replication> {
    let outcome = if ok {
        Ok(state::report_from_state(state)?)
    } else {
        Err(state::failure_from_state(state)?)
    };
    Ok(Replication { outcome })
}

/// `replication(program, k)`: runs replication `k` of `program` (seed
/// `program.seed + k`) with the GIL released; one Ray or Dask task.
#[pyfunction]
pub fn replication(py: Python<'_>, program: &Program, k: usize) -> Replication {
    let outcome = py.detach(|| serq::study::sweep_replication(&program.ir, k));
    Replication { outcome }
}

/// The outcomes as serq's study takes them, in the order given.
fn in_order(list: &[PyRef<'_, Replication>]) -> Vec<Result<serq::Report, ReplicationError>> {
    list.iter().map(|r| r.outcome.clone()).collect()
}

/// A replication's failure as `serq run --replications` prints it.
fn replication_error(program: &Program, e: &ReplicationError) -> PyErr {
    let text = serq::render_run_error(
        &program.ir,
        &e.error,
        &program.name,
        program.source.as_deref(),
    );
    RunError::new_err(format!(
        "{}\n(in replication {}, seed {})",
        text.trim_end(),
        e.replication,
        e.seed
    ))
}

/// The rows of a replicated program: one point, no parameters.
fn replicated_rows(result: serq::study::Replicated, replications: usize) -> Rows {
    let sweep = Sweep {
        parameters: Vec::new(),
        replications,
        points: vec![SweepPoint {
            values: Vec::new(),
            result,
        }],
    };
    rows_of(&sweep)
}

/// `replicate_local(program, replications)`: `serq run --replications R`
/// on all cores (rayon), as rows.
#[pyfunction]
pub fn replicate_local(py: Python<'_>, program: &Program, replications: usize) -> PyResult<Rows> {
    let result = py.detach(|| serq::study::replicate(&program.ir, replications));
    let result = result.map_err(|e| replication_error(program, &e))?;
    Ok(replicated_rows(result, replications))
}

/// `gather_replications(program, outcomes)`: the rows of replications
/// run elsewhere, given in replication order.
#[pyfunction]
pub fn gather_replications(
    program: &Program,
    outcomes: Vec<PyRef<'_, Replication>>,
) -> PyResult<Rows> {
    let replications = outcomes.len();
    let gathered = Sweep::gather(&[], replications, vec![Vec::new()], in_order(&outcomes));
    match gathered {
        Ok(sweep) => Ok(rows_of(&sweep)),
        Err(SweepError::Run { error, .. }) => Err(replication_error(program, &error)),
        Err(other) => Err(RunError::new_err(other.to_string())),
    }
}

/// A program and a grid of its `let` values: what `serq.sweep` runs.
#[pyclass(frozen, module = "serq._serq")]
pub struct Grid {
    source: String,
    name: String,
    overrides: serq::Overrides,
    axes: Vec<Axis>,
}

impl Grid {
    /// A sweep's failure, as `serq sweep` prints it.
    fn error(&self, e: SweepError) -> PyErr {
        match &e {
            SweepError::Compile { point, diagnostics } => {
                let rendered = serq::syntax::render(diagnostics, &self.name, &self.source);
                let at: Vec<String> = point.iter().map(|(n, v)| format!("{n}={v}")).collect();
                CompileError::new_err(format!(
                    "{rendered}{} error(s) in {} at {}",
                    diagnostics.len(),
                    self.name,
                    at.join(", ")
                ))
            }
            SweepError::DuplicateAxis(_) => PyValueError::new_err(e.to_string()),
            SweepError::Run { .. } => RunError::new_err(format!("{}: {e}", self.name)),
        }
    }
}

#[pymethods]
impl Grid {
    /// `Grid(source, name, axes, **overrides)`: `axes` are `(name,
    /// values)` pairs, the first varying slowest; `overrides` are
    /// `compile`'s keywords but `trace` (`sets`, `defs`, `seed`, `horizon`,
    /// `warmup`, `arrivals`) and apply at every point.
    #[new]
    #[pyo3(signature = (source, name, axes, **overrides))]
    fn new(
        source: String,
        name: String,
        axes: Vec<(String, Vec<f64>)>,
        overrides: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Grid> {
        Ok(Grid {
            source,
            name,
            overrides: Options::from_keywords(overrides)?.overrides()?,
            axes: axes
                .into_iter()
                .map(|(name, values)| Axis { name, values })
                .collect(),
        })
    }

    /// Every point compiled, first axis slowest: `(values, Program)` pairs.
    fn points(&self, py: Python<'_>) -> PyResult<Vec<(Vec<f64>, Program)>> {
        let points =
            py.detach(|| serq::study::sweep_points(&self.source, &self.overrides, &self.axes));
        let points = points.map_err(|e| self.error(e))?;
        Ok(points
            .into_iter()
            .map(|p| {
                let program = Program {
                    ir: p.program,
                    name: self.name.clone(),
                    source: Some(std::sync::Arc::from(self.source.as_str())),
                };
                (p.values, program)
            })
            .collect())
    }

    /// `serq sweep` on all cores (rayon), as rows.
    fn run(&self, py: Python<'_>, replications: usize) -> PyResult<Rows> {
        let swept = py.detach(|| {
            serq::study::sweep(
                &self.source,
                &self.overrides,
                &self.axes,
                replications,
                &|| {},
            )
        });
        Ok(rows_of(&swept.map_err(|e| self.error(e))?))
    }

    /// The rows of replications run elsewhere: `outcomes` holds each
    /// point's `replications` outcomes in order, points in the order
    /// `points()` gave them.
    fn gather(
        &self,
        replications: usize,
        points: Vec<Vec<f64>>,
        outcomes: Vec<PyRef<'_, Replication>>,
    ) -> PyResult<Rows> {
        if outcomes.len() != points.len() * replications {
            return Err(PyValueError::new_err(format!(
                "{} outcomes for {} points of {replications} replications",
                outcomes.len(),
                points.len()
            )));
        }
        let gathered = Sweep::gather(&self.axes, replications, points, in_order(&outcomes));
        Ok(rows_of(&gathered.map_err(|e| self.error(e))?))
    }
}
