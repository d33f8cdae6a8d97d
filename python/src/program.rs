//! `compile`, `run` and `Program`: program text or IR to a validated
//! program, and a run of it with the GIL released.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use crate::errors::{CompileError, RunError};
use crate::report::Report;

/// What a program's diagnostics call program text given as `source=`.
pub const SOURCE_NAME: &str = "<source>";

/// A compiled program: its IR, with the name and text its run-time errors
/// point into.
#[pyclass(frozen, module = "serq._serq")]
pub struct Program {
    /// The validated IR.
    pub ir: serq::ValidProgram,
    /// The file's name, or `<source>`.
    pub name: String,
    /// The program text, when it came from text (IR has none).
    pub source: Option<Arc<str>>,
}

impl Program {
    /// A run-time error of this program, rendered as `serq run` prints it.
    pub fn run_error(&self, error: &serq::RunError) -> PyErr {
        RunError::new_err(
            serq::render_run_error(&self.ir, error, &self.name, self.source.as_deref())
                .trim_end()
                .to_string(),
        )
    }
}

#[pymethods]
impl Program {
    /// The IR as JSON, as `serq ir` prints it (version `IR_VERSION`).
    fn to_json(&self) -> String {
        self.ir.to_json()
    }

    /// The program whose IR `text` is (what `to_json` writes); it is
    /// validated, and IR of another version is refused.
    #[staticmethod]
    fn from_json(py: Python<'_>, text: &str) -> PyResult<Program> {
        let ir = py.detach(|| serq::compile_ir(text, &serq::Overrides::default()));
        Ok(Program {
            ir: ir.map_err(ir_errors)?,
            name: "<json>".to_string(),
            source: None,
        })
    }

    /// The seed every replication of a study counts from.
    #[getter]
    fn seed(&self) -> u64 {
        self.ir.seed
    }

    /// The file's name (`<source>` for text, `<json>` for IR read with
    /// `from_json`).
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    fn __repr__(&self) -> String {
        format!(
            "<serq.Program {} seed {} horizon {}: {} stages, {} pools>",
            self.name,
            self.ir.seed,
            self.ir.horizon,
            self.ir.stages.len(),
            self.ir.pools.len()
        )
    }

    /// Pickles as its IR, name and text (Ray and Dask send
    /// programs to their workers this way).
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Py<PyAny>, Bound<'py, PyTuple>)> {
        let restore = crate::restorer(py, "_restore_program")?;
        let state = (
            self.ir.to_json(),
            self.name.clone(),
            self.source.as_deref().map(str::to_string),
        );
        Ok((restore, state.into_pyobject(py)?))
    }
}

/// The IR errors of a program read from JSON, one a line.
fn ir_errors(errors: Vec<serq::ir::IrError>) -> PyErr {
    let lines: Vec<String> = errors.iter().map(|e| format!("error: {e}")).collect();
    CompileError::new_err(lines.join("\n"))
}

/// Unpickles a [`Program`] (see `Program.__reduce__`).
#[pyfunction]
#[pyo3(name = "_restore_program")]
pub fn restore_program(
    py: Python<'_>,
    ir: &str,
    name: String,
    source: Option<String>,
) -> PyResult<Program> {
    let ir = py
        .detach(|| serq::compile_ir(ir, &serq::Overrides::default()))
        .map_err(ir_errors)?;
    Ok(Program {
        ir,
        name,
        source: source.map(Arc::from),
    })
}

/// `(name, value)` pairs of a mapping, in its order.
pub fn mapping_pairs<'py, T>(mapping: Option<&Bound<'py, PyAny>>) -> PyResult<Vec<(String, T)>>
where
    T: for<'a> FromPyObject<'a, 'py, Error = PyErr>,
{
    let Some(mapping) = mapping else {
        return Ok(Vec::new());
    };
    let mut pairs = Vec::new();
    for item in mapping.call_method0("items")?.try_iter()? {
        pairs.push(item?.extract::<(String, T)>()?);
    }
    Ok(pairs)
}

/// The overrides of `serq run` as `compile` takes them.
pub struct Options<'py> {
    /// `sets={NAME: value}`: `--set`.
    pub sets: Option<Bound<'py, PyAny>>,
    /// `defs={NAME: "expr"}`: `--def`.
    pub defs: Option<Bound<'py, PyAny>>,
    /// `--seed`.
    pub seed: Option<u64>,
    /// `--horizon`.
    pub horizon: Option<f64>,
    /// `--warmup`.
    pub warmup: Option<f64>,
    /// `--arrivals`.
    pub arrivals: Option<u64>,
    /// The workload's trace file.
    pub trace: Option<PathBuf>,
    /// The file of `arrive trace` (a serq extension).
    pub arrival_trace: Option<PathBuf>,
}

impl<'py> Options<'py> {
    /// The overrides given as keywords (`sets=`, `defs=`, `seed=`,
    /// `horizon=`, `warmup=`, `arrivals=`); any other keyword is refused.
    pub fn from_keywords(keywords: Option<&Bound<'py, PyDict>>) -> PyResult<Options<'py>> {
        let mut options = Options {
            sets: None,
            defs: None,
            seed: None,
            horizon: None,
            warmup: None,
            arrivals: None,
            trace: None,
            arrival_trace: None,
        };
        let Some(keywords) = keywords else {
            return Ok(options);
        };
        for (key, value) in keywords.iter() {
            if value.is_none() {
                continue;
            }
            match key.extract::<String>()?.as_str() {
                "sets" => options.sets = Some(value),
                "defs" => options.defs = Some(value),
                "seed" => options.seed = Some(value.extract()?),
                "horizon" => options.horizon = Some(value.extract()?),
                "warmup" => options.warmup = Some(value.extract()?),
                "arrivals" => options.arrivals = Some(value.extract()?),
                "trace" => options.trace = Some(value.extract()?),
                "arrival_trace" => options.arrival_trace = Some(value.extract()?),
                other => {
                    return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                        "unexpected keyword `{other}`: the overrides are sets, defs, seed, \
                         horizon, warmup, arrivals, trace and arrival_trace"
                    )));
                }
            }
        }
        Ok(options)
    }

    /// serq's overrides.
    pub fn overrides(&self) -> PyResult<serq::Overrides> {
        Ok(serq::Overrides {
            sets: mapping_pairs::<f64>(self.sets.as_ref())?,
            defs: mapping_pairs::<String>(self.defs.as_ref())?,
            seed: self.seed,
            horizon: self.horizon,
            warmup: self.warmup,
            arrivals: self.arrivals,
            trace: self.trace.clone(),
            arrival_trace: self.arrival_trace.clone(),
        })
    }
}

/// The program with its trace's path absolute (against the current
/// directory), so a worker in another directory reads the same file.
pub fn with_absolute_trace(ir: serq::ValidProgram) -> serq::ValidProgram {
    // The arrival trace too (a serq extension): it travels to Ray and Dask
    // workers by its path, each worker streaming the file.
    let ir = match &ir.arrival {
        serq::ir::Arrival::Trace(spec) => {
            let path = PathBuf::from(&spec.path);
            let path = std::path::absolute(&path).unwrap_or(path);
            ir.with_arrival_trace_path(path.display().to_string())
        }
        _ => ir,
    };
    let Some(spec) = &ir.trace else {
        return ir;
    };
    let path = PathBuf::from(&spec.path);
    let path = std::path::absolute(&path).unwrap_or(path);
    ir.with_trace_path(path.display().to_string())
}

/// What a program is read from.
pub enum Input {
    /// A file: program text, or IR when its name ends in `.json`.
    Path(PathBuf),
    /// Program text.
    Source(String),
}

impl Input {
    /// Exactly one of `path` and `source`.
    pub fn of(path: Option<PathBuf>, source: Option<String>) -> PyResult<Input> {
        match (path, source) {
            (Some(path), None) => Ok(Input::Path(path)),
            (None, Some(source)) => Ok(Input::Source(source)),
            _ => Err(pyo3::exceptions::PyValueError::new_err(
                "compile takes exactly one of a path and a source",
            )),
        }
    }

    /// The program's name in diagnostics.
    pub fn name(&self) -> String {
        match self {
            Input::Path(path) => path.display().to_string(),
            Input::Source(_) => SOURCE_NAME.to_string(),
        }
    }

    /// Reads, parses, links and validates with the GIL released; `use`
    /// and a relative `trace` resolve beside the file (for text: in the
    /// current directory).
    pub fn compile(self, py: Python<'_>, overrides: &serq::Overrides) -> PyResult<Program> {
        let name = self.name();
        match self {
            Input::Path(path) => {
                let ir = py
                    .detach(|| serq::compile_file(&path, overrides))
                    .map_err(compile_error)?;
                let is_ir = path.extension().is_some_and(|e| e == "json");
                // compile_file read it a moment ago; a failure now is a race
                // with a writer, and the text only serves error messages.
                let source = (!is_ir)
                    .then(|| std::fs::read_to_string(&path).ok())
                    .flatten();
                Ok(Program {
                    ir,
                    name,
                    source: source.map(Arc::from),
                })
            }
            Input::Source(source) => {
                // `<source>` has no directory: its `use`s and trace are read
                // from the current one.
                let ir = py
                    .detach(|| serq::compile_text_at(&source, Path::new(SOURCE_NAME), overrides))
                    .map_err(compile_error)?;
                Ok(Program {
                    ir,
                    name,
                    source: Some(Arc::from(source)),
                })
            }
        }
    }
}

/// A compile error as the exception that carries its rendering.
pub fn compile_error(error: serq::CompileError) -> PyErr {
    CompileError::new_err(error.to_string())
}

/// `compile(path=None, *, source=None, sets={}, defs={}, seed=None,
/// horizon=None, warmup=None, arrivals=None, trace=None, arrival_trace=None)`:
/// a program file
/// (program text, or IR when its name ends in `.json`) or program text to
/// a validated program, with the overrides of `serq run`: `sets` replaces
/// `let` constants by name (`--set`), `defs` an expression definition's
/// body (`--def`), `trace` the workload's trace file, `arrival_trace` the
/// file of `arrive trace` (`--arrival-trace`). A program that does
/// not compile raises `CompileError` (a `ValueError`) whose text is every
/// diagnostic.
#[pyfunction]
#[pyo3(signature = (path=None, *, source=None, sets=None, defs=None, seed=None,
                    horizon=None, warmup=None, arrivals=None, trace=None, arrival_trace=None))]
#[expect(
    clippy::too_many_arguments,
    reason = "pyserq's signature, keyword by keyword"
)]
pub fn compile<'py>(
    py: Python<'py>,
    path: Option<PathBuf>,
    source: Option<String>,
    sets: Option<Bound<'py, PyAny>>,
    defs: Option<Bound<'py, PyAny>>,
    seed: Option<u64>,
    horizon: Option<f64>,
    warmup: Option<f64>,
    arrivals: Option<u64>,
    trace: Option<PathBuf>,
    arrival_trace: Option<PathBuf>,
) -> PyResult<Program> {
    let options = Options {
        sets,
        defs,
        seed,
        horizon,
        warmup,
        arrivals,
        trace,
        arrival_trace,
    };
    let overrides = options.overrides()?;
    let mut program = Input::of(path, source)?.compile(py, &overrides)?;
    program.ir = with_absolute_trace(program.ir);
    Ok(program)
}

/// `run(program, *, strict=False, timeline=None, timeline_window=None)`:
/// simulates it and returns its `Report`. The GIL is released while it
/// runs, so runs in threads proceed in parallel. A run-time error raises
/// `RunError` (a `ValueError`); `strict=True` makes a computed negative
/// amount one (it is otherwise taken as 0 and counted in
/// `Report.warnings`). `timeline=PATH` writes the run's Chrome trace
/// there, as `serq run --timeline` does (of `timeline_window=(FROM, TO)`
/// only, when given); a window or path it cannot use raises `ValueError`
/// before the run.
#[pyfunction]
#[pyo3(signature = (program, *, strict=false, timeline=None, timeline_window=None))]
pub fn run(
    py: Python<'_>,
    program: &Program,
    strict: bool,
    timeline: Option<PathBuf>,
    timeline_window: Option<(f64, f64)>,
) -> PyResult<Report> {
    let value_error = |m: String| pyo3::exceptions::PyValueError::new_err(m);
    let recorder = match &timeline {
        Some(path) => {
            let window = timeline_window.unwrap_or((0.0, f64::INFINITY));
            if !(window.0 >= 0.0 && window.0 < window.1 && window.0 < program.ir.horizon) {
                return Err(value_error(format!(
                    "timeline_window ({}, {}) needs 0 <= FROM < TO and FROM below the horizon {}",
                    window.0, window.1, program.ir.horizon
                )));
            }
            let cap = serq::timeline::DEFAULT_CAP;
            let recorder = serq::timeline::Timeline::create(path, window, cap)
                .map_err(|e| value_error(format!("cannot write `{}`: {e}", path.display())))?;
            Some(Box::new(recorder))
        }
        None if timeline_window.is_some() => {
            return Err(value_error("timeline_window needs timeline=".to_string()));
        }
        None => None,
    };
    // pyserq's reports know each sample's time, session and turn.
    let (result, recorder) = py.detach(|| {
        let mut options = serq::RunOptions {
            provenance: true,
            strict,
            timeline: recorder,
            ..serq::RunOptions::default()
        };
        let result = serq::run_with(&program.ir, &mut options);
        (result, options.timeline.take())
    });
    let mut report = result.map_err(|e| program.run_error(&e))?;
    if let (Some(recorder), Some(path)) = (recorder, &timeline) {
        py.detach(|| recorder.finish(report.end))
            .map_err(|e| value_error(format!("cannot write `{}`: {e}", path.display())))?;
    }
    report.source_name = program.name.clone();
    Ok(Report::new(report))
}

/// One turn of a trace: `(new, out, think, forced)`.
type Turn = (f64, f64, f64, f64);

/// `read_trace(path)`: a trace's corpus sessions, each a list of its turns
/// `(new, out, think, forced)`, read as a replay reads it (spec §8.7). A
/// relative path is read from the current directory; a missing or
/// malformed file raises `ValueError` naming the line and column.
#[pyfunction]
pub fn read_trace(py: Python<'_>, path: PathBuf) -> PyResult<Vec<Vec<Turn>>> {
    let trace = py
        .detach(|| serq::trace::Trace::read(&path))
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
    Ok((0..trace.len())
        .map(|i| {
            let rows = trace.session(i).iter();
            rows.map(|r| (r.new, r.out, r.think, r.forced)).collect()
        })
        .collect())
}
