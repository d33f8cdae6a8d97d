//! `serq._serq`, the native half of the Python package `serq`: compile a
//! program, run it with the GIL released, read its report, and the pieces
//! of a study that the package's executors (local, Ray, Dask) share.
//!
//! Architecture invariant: a thin binding. Every figure, statistic, row and
//! column comes from the serq crate; this crate only converts between
//! Python values and serq's types, releases the GIL around simulation, and
//! pickles what crosses a process boundary. Nothing here re-derives a
//! statistic or knows the engine.

use pyo3::prelude::*;

mod errors;
mod program;
mod report;
mod rng;
mod state;
mod study;

/// The module function `name` that unpickles a value: pickle stores it by
/// its module and name, so it must be the module's own attribute.
fn restorer(py: Python<'_>, name: &str) -> PyResult<Py<PyAny>> {
    Ok(py.import("serq._serq")?.getattr(name)?.unbind())
}

/// The native module; `serq/__init__.py` re-exports it.
#[pymodule]
fn _serq(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("IR_VERSION", serq::ir::IR_VERSION)?;
    m.add("REPORT_VERSION", serq::report::REPORT_VERSION)?;
    m.add("CompileError", py.get_type::<errors::CompileError>())?;
    m.add("RunError", py.get_type::<errors::RunError>())?;
    m.add_class::<program::Program>()?;
    m.add_class::<report::Report>()?;
    m.add_class::<report::Observe>()?;
    m.add_class::<report::Stage>()?;
    m.add_class::<report::Pool>()?;
    m.add_class::<rng::Rng>()?;
    m.add_class::<study::Replication>()?;
    m.add_class::<study::Plan>()?;
    m.add_class::<study::RowsOut>()?;
    m.add_function(wrap_pyfunction!(program::compile, m)?)?;
    m.add_function(wrap_pyfunction!(program::run, m)?)?;
    m.add_function(wrap_pyfunction!(program::read_trace, m)?)?;
    m.add_function(wrap_pyfunction!(program::restore_program, m)?)?;
    m.add_function(wrap_pyfunction!(report::restore_report, m)?)?;
    m.add_function(wrap_pyfunction!(study::parse_axis, m)?)?;
    m.add_function(wrap_pyfunction!(study::replication, m)?)?;
    m.add_function(wrap_pyfunction!(study::restore_replication, m)?)?;
    m.add_function(wrap_pyfunction!(study::slo_replication, m)?)?;
    m.add_function(wrap_pyfunction!(study::search, m)?)?;
    Ok(())
}
