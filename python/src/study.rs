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

use serq::report::{Fold, Slo};
use serq::study::{Axis, Cell, ReplicationError, RunSettings, Sweep, SweepError, SweepPlan};

use crate::errors::{CompileError, RunError};
use crate::program::{Options, Program};
use crate::report::Report;
use crate::state;

/// Columns and rows: what every study function returns to Python.
type Rows<'py> = (Vec<String>, Vec<Vec<Bound<'py, PyAny>>>);

/// A cell as Python holds it: a float, a bool, a str (`stability`), or
/// `None` where undefined (a non-finite number too, as `serq sweep` leaves
/// its cell empty).
fn cell<'py>(py: Python<'py>, c: Cell) -> PyResult<Bound<'py, PyAny>> {
    Ok(match c {
        Cell::Number(_) => c.number().into_pyobject(py)?.into_any(),
        Cell::Flag(b) => b.into_pyobject(py)?.into_any(),
        Cell::Word(w) => w.into_pyobject(py)?.into_any(),
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

/// Which stage families a study's rows fold (`serq sweep --by-family`,
/// `--members`; both is an error, as the two flags are).
fn fold_of(by_family: bool, members: bool) -> PyResult<Fold> {
    match (by_family, members) {
        (true, true) => Err(PyValueError::new_err(
            "by_family and members contradict each other: by_family folds every array, members none",
        )),
        (true, false) => Ok(Fold::ByFamily),
        (false, true) => Ok(Fold::Members),
        (false, false) => Ok(Fold::Auto),
    }
}

/// The plan measuring the SLO `bounds` too (`["ttft<=0.5"]`), if given.
fn with_slo(plan: SweepPlan, bounds: Option<Vec<String>>, name: &str) -> PyResult<SweepPlan> {
    match bounds {
        None => Ok(plan),
        Some(bounds) => {
            let slo = Slo::parse(&bounds).map_err(PyValueError::new_err)?;
            plan.with_slo(slo)
                .map_err(|e| PyValueError::new_err(format!("{name}: {e}")))
        }
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

/// A study's `out=` file opened with `serq sweep --out`'s rules: a
/// non-empty file is refused unless `resume` (its rows, read by `read`,
/// are kept and the file cut after its last whole line) or `force` (it
/// is overwritten); a fresh CSV file gets `header`. Returns the file, at
/// its end, and what `read` found (`T::default()` when fresh).
fn open_out<T: Default>(
    path: &std::path::Path,
    (resume, force): (bool, bool),
    header: Option<&str>,
    what: &str,
    read: impl FnOnce(&str) -> Result<T, String>,
) -> PyResult<(std::fs::File, T)> {
    use std::io::Write;
    let cannot = |e: std::io::Error| {
        PyValueError::new_err(format!("cannot write `{}`: {e}", path.display()))
    };
    if resume && force {
        return Err(PyValueError::new_err(
            "force and resume contradict each other: resume keeps the rows in out, force discards them",
        ));
    }
    let text = std::fs::read_to_string(path).unwrap_or_default();
    if !text.is_empty() && !resume && !force {
        return Err(PyValueError::new_err(format!(
            "`{}` is not empty: pass resume=True to continue it, or force=True to overwrite it",
            path.display()
        )));
    }
    let mut kept = T::default();
    let mut fresh = true;
    if resume && !text.is_empty() {
        kept = read(&text).map_err(|e| {
            PyValueError::new_err(format!(
                "resume: `{}` is not an interrupted run of this {what}: {e}",
                path.display()
            ))
        })?;
        let whole = text.rfind('\n').map_or(0, |i| i + 1);
        fresh = whole == 0;
        std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .and_then(|f| f.set_len(whole as u64))
            .map_err(cannot)?;
    }
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(!fresh)
        .write(true)
        .truncate(fresh)
        .open(path)
        .map_err(cannot)?;
    if let (true, Some(header)) = (fresh, header) {
        file.write_all(header.as_bytes()).map_err(cannot)?;
    }
    Ok((file, kept))
}

/// Where a sweep's rows go as its points complete: the rows so far (those
/// an `out=` file kept first) and that file, each row written and flushed
/// whole, so an interrupted sweep leaves the points done.
#[pyclass(module = "serq._serq")]
pub struct RowsOut {
    plan: Py<Plan>,
    file: Option<std::fs::File>,
    jsonl: bool,
    rows: Vec<Vec<Cell>>,
}

impl RowsOut {
    /// Adds `point`'s row, writing it to the file if there is one.
    fn push(&mut self, plan: &SweepPlan, point: &serq::study::SweepPoint) -> std::io::Result<()> {
        use std::io::Write;
        if let Some(f) = self.file.as_mut() {
            let line = if self.jsonl {
                plan.jsonl_line(point)
            } else {
                plan.csv_line(point)
            };
            f.write_all(line.as_bytes())?;
            f.flush()?;
        }
        self.rows.push(plan.row(point));
        Ok(())
    }

    fn rows_of<'py>(&self, py: Python<'py>) -> PyResult<Rows<'py>> {
        let rows = self
            .rows
            .iter()
            .map(|row| row.iter().map(|&c| cell(py, c)).collect())
            .collect::<PyResult<_>>()?;
        Ok((self.plan.get().plan.columns(), rows))
    }
}

#[pymethods]
impl RowsOut {
    /// The points done: those the file kept, and those added since.
    #[getter]
    fn done(&self) -> usize {
        self.rows.len()
    }

    /// The columns and every row so far.
    fn rows<'py>(&self, py: Python<'py>) -> PyResult<Rows<'py>> {
        self.rows_of(py)
    }

    /// Adds point `p` (the next one: `done`) from its replications run
    /// elsewhere, in order; raises `RunError` on the first that failed.
    fn point(
        &mut self,
        py: Python<'_>,
        p: usize,
        outcomes: Vec<PyRef<'_, Replication>>,
    ) -> PyResult<()> {
        let owner = self.plan.clone_ref(py);
        let plan = owner.get();
        if p != self.rows.len() || p >= plan.plan.len() {
            return Err(PyValueError::new_err(format!(
                "point {p} out of order: {} points of {} are done",
                self.rows.len(),
                plan.plan.len()
            )));
        }
        let reports = outcomes.iter().map(|r| r.outcome.clone()).collect();
        let point = plan.plan.point(p, reports).map_err(|e| plan.error(e))?;
        self.push(&plan.plan, &point)
            .map_err(|e| PyValueError::new_err(format!("cannot write the rows: {e}")))
    }

    /// Runs the points not done on all local cores, the GIL released,
    /// checking for Ctrl-C (Python's signal handlers) at least every 50 ms:
    /// then no new replication starts, those running stop, and `True` is
    /// returned (`False` when every point ran). A run-time error raises
    /// `RunError`, the points before it kept.
    fn run(&mut self, py: Python<'_>) -> PyResult<bool> {
        let owner = self.plan.clone_ref(py);
        let plan = owner.get();
        let mut interrupted = false;
        let mut write_error = None;
        let from = self.rows.len();
        let result = py.detach(|| {
            let mut keep_going = || {
                interrupted |= Python::attach(|py| py.check_signals()).is_err();
                !interrupted
            };
            plan.plan
                .run_watched(from, &|| {}, &mut keep_going, &mut |point| {
                    if let Err(e) = self.push(&plan.plan, point) {
                        write_error.get_or_insert(e);
                    }
                })
        });
        if let Some(e) = write_error {
            return Err(PyValueError::new_err(format!("cannot write the rows: {e}")));
        }
        result.map_err(|e| plan.error(e))?;
        Ok(interrupted)
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
    /// `trace`) and apply at every point. `by_family` and `members` fold
    /// the rows' stage families as `serq sweep`'s flags do.
    #[new]
    #[pyo3(signature = (source, origin, name, axes, replications, strict=false, slo=None, by_family=false, members=false, **overrides))]
    #[allow(clippy::too_many_arguments)] // Python's constructor: its keywords
    fn new(
        py: Python<'_>,
        source: String,
        origin: Option<PathBuf>,
        name: String,
        axes: Vec<(String, Vec<f64>)>,
        replications: usize,
        strict: bool,
        slo: Option<Vec<String>>,
        by_family: bool,
        members: bool,
        overrides: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Plan> {
        let fold = fold_of(by_family, members)?;
        let overrides = Options::from_keywords(overrides)?.overrides()?;
        let axes: Vec<Axis> = axes
            .into_iter()
            .map(|(name, values)| Axis { name, values })
            .collect();
        let plan = py
            .detach(|| SweepPlan::new(&source, origin.as_deref(), &overrides, &axes, replications))
            .map_err(compile_error)?
            .with_settings(RunSettings { strict })
            .with_fold(fold);
        Ok(Plan {
            plan: with_slo(plan, slo, &name)?,
            replications,
            strict,
            name,
            source: Some(Arc::from(source)),
        })
    }

    /// `Plan.of_program(program, replications, strict=False, slo=None,
    /// by_family=False, members=False)`: one program replicated.
    #[staticmethod]
    #[pyo3(signature = (program, replications, strict=false, slo=None, by_family=false, members=false))]
    fn of_program(
        program: &Program,
        replications: usize,
        strict: bool,
        slo: Option<Vec<String>>,
        by_family: bool,
        members: bool,
    ) -> PyResult<Plan> {
        let plan = SweepPlan::of_program(program.ir.clone(), replications)
            .with_settings(RunSettings { strict })
            .with_fold(fold_of(by_family, members)?);
        Ok(Plan {
            plan: with_slo(plan, slo, &program.name)?,
            replications,
            strict,
            name: program.name.clone(),
            source: program.source.clone(),
        })
    }

    /// Whether the plan measures an SLO (its replications must then run
    /// here: a remote replication's report carries no turn marks).
    #[getter]
    fn has_slo(&self) -> bool {
        self.plan.slo().is_some()
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

    /// `plan.output(out=None, jsonl=False, resume=False, force=False)`:
    /// where the rows go, `out` a file with `serq sweep --out`'s rules.
    #[pyo3(signature = (out=None, jsonl=false, resume=false, force=false))]
    fn output(
        slf: &Bound<'_, Plan>,
        out: Option<PathBuf>,
        jsonl: bool,
        resume: bool,
        force: bool,
    ) -> PyResult<RowsOut> {
        let plan = slf.get();
        let (file, rows) = match &out {
            Some(path) => {
                let header = plan.plan.csv_header();
                let (file, rows) = open_out(
                    path,
                    (resume, force),
                    (!jsonl).then_some(header.as_str()),
                    "sweep",
                    |text| plan.plan.read_rows(text, jsonl),
                )?;
                (Some(file), rows)
            }
            None => (None, Vec::new()),
        };
        Ok(RowsOut {
            plan: slf.clone().unbind(),
            file,
            jsonl,
            rows,
        })
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

/// `slo_replication(program, k, bounds)`: replication `k` of `program`
/// (seed `program.seed + k`) held to the SLO `bounds` (`["ttft<=0.5"]`),
/// with the GIL released; one Ray or Dask task of `serq.search`. Returns
/// `(attainment, goodput, requests, attained, unfinished)` (`attainment`
/// `None` without requests); raises `RunError` on a run-time error.
#[pyfunction]
#[pyo3(signature = (program, k, bounds, strict=false))]
pub fn slo_replication(
    py: Python<'_>,
    program: &Program,
    k: usize,
    bounds: Vec<String>,
    strict: bool,
) -> PyResult<(Option<f64>, f64, u64, u64, u64)> {
    let slo = Slo::parse(&bounds).map_err(PyValueError::new_err)?;
    let seed = serq::study::replication_seed(program.ir.seed, k);
    let ir = program.ir.with_seed(seed);
    let outcome = py.detach(|| {
        let mut options = Slo::run_options();
        options.strict = strict;
        serq::run_with(&ir, &mut options)
    });
    let report = outcome.map_err(|e| {
        let text = serq::render_run_error(&ir, &e, &program.name, program.source.as_deref());
        RunError::new_err(format!(
            "{}\n(in replication {k}, seed {seed})",
            text.trim_end()
        ))
    })?;
    let a = slo
        .attainment(&report)
        .ok_or_else(|| PyValueError::new_err("the run kept no turn marks"))?;
    Ok((
        a.attainment,
        a.goodput,
        a.requests,
        a.attained,
        a.unfinished,
    ))
}

/// `search(source, origin, name, bounds, attain, load, at, grid, cost,
/// monotone, tol, max_replications, dispatch, out, jsonl, resume, force,
/// **overrides)`: `serq search`'s answer as its JSON text, with the probe
/// rows `(columns, rows)`. `dispatch`, when not `None`, is called with a
/// probe's `Program` and a list of replication indices and returns one
/// `slo_replication` tuple per index (the Ray, Dask or futures executor);
/// otherwise the replications run on all local cores. `out` names a file
/// for the probe rows (CSV, or JSON lines with `jsonl`), with `serq
/// search --out`'s rules: a non-empty file needs `resume` (replay its
/// probes and go on) or `force`.
#[pyfunction]
#[pyo3(signature = (source, origin, name, bounds, attain, load, at, grid, cost, monotone, tol, max_replications, dispatch, out, jsonl, resume, force, strict=false, **overrides))]
#[allow(clippy::too_many_arguments)]
pub fn search<'py>(
    py: Python<'py>,
    source: String,
    origin: Option<PathBuf>,
    name: String,
    bounds: Vec<String>,
    attain: f64,
    load: Option<String>,
    at: Vec<(String, f64)>,
    grid: Vec<(String, Vec<f64>)>,
    cost: Option<String>,
    monotone: Vec<String>,
    tol: f64,
    max_replications: usize,
    dispatch: Option<Py<PyAny>>,
    out: Option<PathBuf>,
    jsonl: bool,
    resume: bool,
    force: bool,
    strict: bool,
    overrides: Option<&Bound<'_, PyDict>>,
) -> PyResult<(String, Rows<'py>)> {
    use serq::study::{Load, SearchError, SearchPlan, SearchSpec};
    let overrides = Options::from_keywords(overrides)?.overrides()?;
    let slo = Slo::parse(&bounds).map_err(PyValueError::new_err)?;
    let load = load
        .map(|l| Load::parse(&l))
        .transpose()
        .map_err(PyValueError::new_err)?;
    let spec = SearchSpec {
        slo,
        target: attain,
        load,
        at,
        grid: grid
            .into_iter()
            .map(|(name, values)| Axis { name, values })
            .collect(),
        cost,
        monotone,
        tol,
        max_replications,
        settings: RunSettings { strict },
    };
    let plan = py
        .detach(|| SearchPlan::new(&source, origin.as_deref(), &overrides, spec))
        .map_err(|e| match e {
            SearchError::Compile { point, error } => {
                let at: Vec<String> = point.iter().map(|(n, v)| format!("{n}={v}")).collect();
                CompileError::new_err(format!("{error} at {}", at.join(", ")))
            }
            other => PyValueError::new_err(format!("{name}: {other}")),
        })?;
    // The output file, with `serq search --out`'s rules.
    let mut replay = Vec::new();
    let mut file: Option<std::fs::File> = None;
    if let Some(path) = &out {
        let header = plan.csv_header();
        let (f, probes) = open_out(
            path,
            (resume, force),
            (!jsonl).then_some(header.as_str()),
            "search",
            |text| plan.read_probes(text, jsonl),
        )?;
        replay = probes;
        file = Some(f);
    }
    let mut write_error: Option<std::io::Error> = None;
    let mut on_probe = |probe: &serq::study::Probe, replayed: bool| {
        use std::io::Write;
        if let (Some(f), false) = (file.as_mut(), replayed) {
            let line = if jsonl {
                plan.jsonl_line(probe)
            } else {
                plan.csv_line(probe)
            };
            if let Err(e) = f.write_all(line.as_bytes()).and_then(|()| f.flush()) {
                write_error.get_or_insert(e);
            }
        }
    };
    let source_arc: Arc<str> = Arc::from(source.as_str());
    let result = match &dispatch {
        None => py.detach(|| plan.run(replay, &|| {}, &mut on_probe)),
        Some(dispatch) => {
            // Errors of the executor, kept to raise once the search stops.
            let failure: std::sync::Mutex<Option<PyErr>> = std::sync::Mutex::new(None);
            let runner = |ir: &serq::ValidProgram, ks: std::ops::Range<usize>| {
                Python::attach(|py| {
                    let program = Program {
                        ir: ir.clone(),
                        name: name.clone(),
                        source: Some(Arc::clone(&source_arc)),
                    };
                    let ks: Vec<usize> = ks.collect();
                    let n = ks.len();
                    let got = dispatch
                        .call1(py, (program, ks))
                        .and_then(|r| r.extract::<Vec<(Option<f64>, f64, u64, u64, u64)>>(py));
                    match got {
                        Ok(list) => list
                            .into_iter()
                            .map(|(attainment, goodput, requests, attained, unfinished)| {
                                Ok(serq::report::Attainment {
                                    attainment,
                                    goodput,
                                    requests,
                                    attained,
                                    unfinished,
                                })
                            })
                            .collect(),
                        Err(e) => {
                            let mut slot = failure.lock().unwrap_or_else(|p| p.into_inner());
                            slot.get_or_insert(e);
                            // A wrong count stops the search; the error is raised below.
                            Vec::with_capacity(n)
                        }
                    }
                })
            };
            let result = py.detach(|| plan.run_with(replay, &runner, &mut on_probe));
            if let Some(e) = failure.into_inner().unwrap_or_else(|p| p.into_inner()) {
                return Err(e);
            }
            result
        }
    };
    if let Some(e) = write_error {
        return Err(PyValueError::new_err(format!(
            "cannot write the probes: {e}"
        )));
    }
    let result = result.map_err(|e| match e {
        SearchError::Run { .. } => RunError::new_err(format!("{name}: {e}")),
        other => PyValueError::new_err(format!("{name}: {other}")),
    })?;
    let rows = result
        .probes
        .iter()
        .map(|p| plan.row(p).into_iter().map(|c| cell(py, c)).collect())
        .collect::<PyResult<_>>()?;
    Ok((result.to_json(plan.spec()), (plan.columns(), rows)))
}
