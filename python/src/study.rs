//! The native steps of `serq.replicate` and `serq.sweep`: a grid's points
//! compiled into a plan, one replication run (what a Ray or Dask task
//! calls), and the replications gathered into the rows and columns `serq
//! sweep` writes.
//!
//! Invariant: rows come from `serq::study` alone (`SweepPlan::run`,
//! `SweepPlan::gather`, `Sweep::rows`), and a replication's seed is
//! `replication_seed(point's seed, k)`, so the rows are the same whichever
//! executor ran the replications, in whatever order they finished.

use std::path::PathBuf;
use std::sync::Arc;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use serq::study::{Axis, Cell, ReplicationError, RunSettings, Sweep, SweepError, SweepPlan};

use crate::errors::{CompileError, RunError};
use crate::program::{Options, Program};
use crate::report::Report;
use crate::state;

/// Columns and rows: what every study function returns to Python.
type Rows<'py> = (Vec<String>, Vec<Vec<Bound<'py, PyAny>>>);

/// A cell as Python holds it: a float, a bool, or `None` where undefined
/// (a non-finite number too, as `serq sweep` leaves its cell empty).
fn cell<'py>(py: Python<'py>, c: Cell) -> PyResult<Bound<'py, PyAny>> {
    Ok(match c {
        Cell::Number(_) => c.number().into_pyobject(py)?.into_any(),
        Cell::Flag(b) => b.into_pyobject(py)?.into_any(),
    })
}

fn rows_of<'py>(py: Python<'py>, sweep: &Sweep) -> PyResult<Rows<'py>> {
    let rows = sweep
        .rows()
        .into_iter()
        .map(|row| row.into_iter().map(|c| cell(py, c)).collect())
        .collect::<PyResult<_>>()?;
    Ok((sweep.columns(), rows))
}

/// `NAME=a:b:step` or `NAME=v1,v2,…` (the syntax of `serq sweep --grid`)
/// to `(NAME, values)`.
#[pyfunction]
pub fn parse_axis(text: &str) -> PyResult<(String, Vec<f64>)> {
    let axis = Axis::parse(text).map_err(PyValueError::new_err)?;
    Ok((axis.name, axis.values))
}

/// One replication's outcome: its report or its run-time error.
/// Picklable, so a worker returns it rather than raising, and the driver
/// reports the first failure in replication order, not in finishing order.
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

/// `replication(program, k, strict=False)`: runs replication `k` of
/// `program` (seed `program.seed + k`) with the GIL released; one Ray or
/// Dask task.
#[pyfunction]
#[pyo3(signature = (program, k, strict=false))]
pub fn replication(py: Python<'_>, program: &Program, k: usize, strict: bool) -> Replication {
    let settings = RunSettings { strict };
    let outcome = py.detach(|| serq::study::sweep_replication_with(&program.ir, k, settings));
    Replication { outcome }
}

/// A study ready to run: every point of a grid compiled (or one program,
/// for `replicate`), with the name and text its errors point into.
#[pyclass(frozen, module = "serq._serq")]
pub struct Plan {
    plan: SweepPlan,
    replications: usize,
    strict: bool,
    name: String,
    source: Option<Arc<str>>,
}

impl Plan {
    /// A failure of a run of the plan, as `serq sweep` (or, for one
    /// program, `serq run --replications`) prints it.
    fn error(&self, e: SweepError) -> PyErr {
        match e {
            SweepError::Run { point, error } if point.is_empty() => self.replication_error(&error),
            SweepError::Run { .. } => RunError::new_err(format!("{}: {e}", self.name)),
            other => compile_error(other),
        }
    }

    /// A replication's failure, rendered at its statement.
    fn replication_error(&self, e: &ReplicationError) -> PyErr {
        let program = &self.plan.programs()[0];
        let text = serq::render_run_error(program, &e.error, &self.name, self.source.as_deref());
        RunError::new_err(format!(
            "{}\n(in replication {}, seed {})",
            text.trim_end(),
            e.replication,
            e.seed
        ))
    }
}

/// A plan that could not be made: the point's diagnostics with its values,
/// as `serq sweep` prints them.
fn compile_error(e: SweepError) -> PyErr {
    match e {
        SweepError::Compile { point, error } => {
            let at: Vec<String> = point.iter().map(|(n, v)| format!("{n}={v}")).collect();
            CompileError::new_err(format!("{error} at {}", at.join(", ")))
        }
        other => PyValueError::new_err(other.to_string()),
    }
}

#[pymethods]
impl Plan {
    /// `Plan(source, origin, name, axes, replications, **overrides)`:
    /// `source` compiled at every point of the grid (`axes`: `(name,
    /// values)` pairs, the first varying slowest). `origin` is the file
    /// the text came from (its `use`s and a relative `trace` resolve
    /// beside it), or `None` for text. `overrides` are `compile`'s
    /// keywords (`sets`, `defs`, `seed`, `horizon`, `warmup`, `arrivals`,
    /// `trace`) and apply at every point.
    #[new]
    #[pyo3(signature = (source, origin, name, axes, replications, strict=false, **overrides))]
    #[allow(clippy::too_many_arguments)] // Python's constructor: its keywords
    fn new(
        py: Python<'_>,
        source: String,
        origin: Option<PathBuf>,
        name: String,
        axes: Vec<(String, Vec<f64>)>,
        replications: usize,
        strict: bool,
        overrides: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Plan> {
        let overrides = Options::from_keywords(overrides)?.overrides()?;
        let axes: Vec<Axis> = axes
            .into_iter()
            .map(|(name, values)| Axis { name, values })
            .collect();
        let plan = py
            .detach(|| SweepPlan::new(&source, origin.as_deref(), &overrides, &axes, replications))
            .map_err(compile_error)?
            .with_settings(RunSettings { strict });
        Ok(Plan {
            plan,
            replications,
            strict,
            name,
            source: Some(Arc::from(source)),
        })
    }

    /// `Plan.of_program(program, replications, strict=False)`: one
    /// program replicated.
    #[staticmethod]
    #[pyo3(signature = (program, replications, strict=false))]
    fn of_program(program: &Program, replications: usize, strict: bool) -> Plan {
        Plan {
            plan: SweepPlan::of_program(program.ir.clone(), replications)
                .with_settings(RunSettings { strict }),
            replications,
            strict,
            name: program.name.clone(),
            source: program.source.clone(),
        }
    }

    /// Replications per point.
    #[getter]
    fn replications(&self) -> usize {
        self.replications
    }

    /// Whether a computed negative amount is a run-time error.
    #[getter]
    fn strict(&self) -> bool {
        self.strict
    }

    /// Every point's program, in grid order.
    fn programs(&self) -> Vec<Program> {
        self.plan
            .programs()
            .iter()
            .map(|ir| Program {
                ir: ir.clone(),
                name: self.name.clone(),
                source: self.source.clone(),
            })
            .collect()
    }

    /// Every point's replications on all cores, as rows.
    fn run<'py>(&self, py: Python<'py>) -> PyResult<Rows<'py>> {
        let swept = py.detach(|| self.plan.run(0, &|| {}, &mut |_| {}));
        rows_of(py, &swept.map_err(|e| self.error(e))?)
    }

    /// The rows of replications run elsewhere: `outcomes` holds each
    /// point's replications in order, points in the order of
    /// `programs()`.
    fn gather<'py>(
        &self,
        py: Python<'py>,
        outcomes: Vec<PyRef<'_, Replication>>,
    ) -> PyResult<Rows<'py>> {
        let expected = self.plan.len() * self.replications;
        if outcomes.len() != expected {
            return Err(PyValueError::new_err(format!(
                "{} outcomes for {} points of {} replications",
                outcomes.len(),
                self.plan.len(),
                self.replications
            )));
        }
        let reports = outcomes.iter().map(|r| r.outcome.clone()).collect();
        let gathered = self.plan.gather(reports);
        rows_of(py, &gathered.map_err(|e| self.error(e))?)
    }
}
