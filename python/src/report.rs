//! `Report`, `Observe`, `Stage` and `Pool`: a run's report read by name,
//! with the JSON report's field names.
//!
//! Undefined figures are floats, as pyserq 0.1.0 gives them: NaN (a mean
//! without samples, a wait without completions), and a CI of `inf` where
//! serq has none (below 40 samples), as `serq run`'s table prints `±inf`.
//! The JSON (`Report.json()`) prints each as `null`, byte for byte as
//! `serq run --json` does.

use std::sync::Arc;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use crate::state;

/// NaN where serq has no figure.
fn figure(x: Option<f64>) -> f64 {
    x.unwrap_or(f64::NAN)
}

/// What a run reports: the fields of `serq run --json`, by the same names
/// (`REPORT_VERSION`), with each observation's samples.
#[pyclass(frozen, module = "serq._serq")]
pub struct Report {
    report: Arc<serq::Report>,
}

impl Report {
    /// Wraps a finished run's report.
    pub fn new(report: serq::Report) -> Report {
        Report {
            report: Arc::new(report),
        }
    }

    /// The report itself.
    pub fn inner(&self) -> &serq::Report {
        &self.report
    }

    fn observe_at(&self, index: usize) -> Observe {
        let obs = &self.report.observes[index];
        Observe {
            report: Arc::clone(&self.report),
            index,
            summary: serq::report::Summary::of(&obs.samples),
        }
    }
}

#[pymethods]
impl Report {
    /// The horizon the run was configured with.
    #[getter]
    fn horizon(&self) -> f64 {
        self.report.horizon
    }

    /// The end of the measured interval: the horizon, or the drain instant
    /// under `arrivals`.
    #[getter]
    fn end(&self) -> f64 {
        self.report.end
    }

    /// The start of the measured interval.
    #[getter]
    fn warmup(&self) -> f64 {
        self.report.warmup
    }

    /// The seed.
    #[getter]
    fn seed(&self) -> u64 {
        self.report.seed
    }

    /// Events taken from the event queue up to the horizon (serq's count).
    #[getter]
    fn events(&self) -> u64 {
        self.report.events
    }

    /// Sessions created over the whole run.
    #[getter]
    fn arrivals(&self) -> u64 {
        self.report.arrivals
    }

    /// Sessions that ended at t >= warmup.
    #[getter]
    fn ended(&self) -> u64 {
        self.report.ended
    }

    /// `turn;` statements executed at t >= warmup.
    #[getter]
    fn turns(&self) -> u64 {
        self.report.turns
    }

    /// Time average of live sessions over [warmup, end].
    #[getter]
    fn mean_live(&self) -> f64 {
        self.report.mean_live
    }

    /// The run's warnings (docs/report.md §2.2), as the JSON report's
    /// `warnings` holds them: dicts of `kind`, `count`, `message` and the
    /// kind's own fields; `[]` when there is none.
    #[getter]
    fn warnings<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let json = py.import("json")?;
        let all = json.call_method1("loads", (self.report.to_json(false),))?;
        all.get_item("warnings")
    }

    /// The summary `serq run --json` prints (with `samples=True`, what
    /// `serq run --json --samples` prints), without its newline.
    #[pyo3(signature = (samples=false))]
    fn json(&self, samples: bool) -> String {
        self.report.to_json(samples)
    }

    /// The text report `serq run` prints.
    fn table(&self) -> String {
        self.report.to_table()
    }

    /// The observation `name`, or `None`.
    fn observe(&self, name: &str) -> Option<Observe> {
        let index = self.report.observes.iter().position(|o| o.name == name)?;
        Some(self.observe_at(index))
    }

    /// The observations by name, in the program's order.
    #[getter]
    fn observes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        for (index, obs) in self.report.observes.iter().enumerate() {
            dict.set_item(&obs.name, self.observe_at(index))?;
        }
        Ok(dict)
    }

    /// The first stage named `name` (a family's member 0), or `None`.
    fn stage(&self, name: &str) -> Option<Stage> {
        self.report
            .stages
            .iter()
            .find(|s| s.name == name)
            .map(Stage::from)
    }

    /// Every row of the stage `name`: a family's members, in index order
    /// (empty for a name the program does not have).
    fn stages_named(&self, name: &str) -> Vec<Stage> {
        let rows = self.report.stages.iter().filter(|s| s.name == name);
        rows.map(Stage::from).collect()
    }

    /// One row per stage member, in declaration order (a family `s[N]`
    /// has N rows, each named `s`).
    #[getter]
    fn stages(&self) -> Vec<Stage> {
        self.report.stages.iter().map(Stage::from).collect()
    }

    /// The first pool named `name` (a family's member 0), or `None`.
    fn pool(&self, name: &str) -> Option<Pool> {
        self.report
            .pools
            .iter()
            .find(|p| p.name == name)
            .map(Pool::from)
    }

    /// Every row of the pool `name`, in index order.
    fn pools_named(&self, name: &str) -> Vec<Pool> {
        let rows = self.report.pools.iter().filter(|p| p.name == name);
        rows.map(Pool::from).collect()
    }

    /// One row per pool member, in declaration order.
    #[getter]
    fn pools(&self) -> Vec<Pool> {
        self.report.pools.iter().map(Pool::from).collect()
    }

    fn __repr__(&self) -> String {
        let r = &self.report;
        format!(
            "<serq.Report seed {} end {} events {} arrivals {} ended {}>",
            r.seed, r.end, r.events, r.arrivals, r.ended
        )
    }

    /// Pickles as its figures and samples (Ray and Dask send reports back
    /// from their workers this way).
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Py<PyAny>, Bound<'py, PyTuple>)> {
        let restore = crate::restorer(py, "_restore_report")?;
        let args = PyTuple::new(py, [state::report_state(py, &self.report)?])?;
        Ok((restore, args))
    }
}

/// Unpickles a [`Report`] (see `Report.__reduce__`).
#[pyfunction]
#[pyo3(name = "_restore_report")]
pub fn restore_report(state: &Bound<'_, PyAny>) -> PyResult<Report> {
    Ok(Report::new(state::report_from_state(state)?))
}

/// One observation: its statistics as `serq run --json` prints them, and
/// its samples (taken at t >= warmup, in recording order) with when, by
/// which session and in which turn each was taken. Each access to
/// `samples`, `times`, `sessions` or `turns` makes a new list: bind it once.
#[pyclass(frozen, module = "serq._serq")]
pub struct Observe {
    report: Arc<serq::Report>,
    index: usize,
    summary: serq::report::Summary,
}

impl Observe {
    fn observation(&self) -> &serq::report::Observation {
        &self.report.observes[self.index]
    }
}

impl Observe {
    /// Where the samples came from; a report of a study's replication
    /// (which keeps values only, as `serq sweep` does) has none.
    fn provenance(&self, what: &str) -> PyResult<&serq::report::Provenance> {
        self.observation().provenance.as_ref().ok_or_else(|| {
            PyValueError::new_err(format!(
                "Observe.{what}: this report was made without each sample's time, session \
                 and turn (a study's replication keeps the values only); serq.run keeps them"
            ))
        })
    }
}

#[pymethods]
impl Observe {
    /// The observation's name.
    #[getter]
    fn name(&self) -> &str {
        &self.observation().name
    }

    /// The number of samples.
    #[getter]
    fn count(&self) -> u64 {
        self.summary.count
    }

    /// The Welford mean (NaN without samples).
    #[getter]
    fn mean(&self) -> f64 {
        figure(self.summary.mean)
    }

    /// The 95% half-width from 20 batch means (`inf` below 40 samples).
    #[getter]
    fn ci(&self) -> f64 {
        self.summary.ci.unwrap_or(f64::INFINITY)
    }

    /// The squared coefficient of variation (NaN below 2 samples, or when
    /// every sample is 0).
    #[getter]
    fn cv2(&self) -> f64 {
        figure(self.summary.cv2)
    }

    /// The nearest-rank median (NaN without samples).
    #[getter]
    fn p50(&self) -> f64 {
        figure(self.summary.p50)
    }

    /// The nearest-rank 90th percentile (NaN without samples).
    #[getter]
    fn p90(&self) -> f64 {
        figure(self.summary.p90)
    }

    /// The nearest-rank 95th percentile (NaN without samples).
    #[getter]
    fn p95(&self) -> f64 {
        figure(self.summary.p95)
    }

    /// The nearest-rank 99th percentile (NaN without samples).
    #[getter]
    fn p99(&self) -> f64 {
        figure(self.summary.p99)
    }

    /// Every sample, in recording order.
    #[getter]
    fn samples(&self) -> Vec<f64> {
        self.observation().samples.clone()
    }

    /// When each sample was taken (the clock), in the samples' order.
    #[getter]
    fn times(&self) -> PyResult<Vec<f64>> {
        Ok(self.provenance("times")?.times.clone())
    }

    /// The serial of the session that took each sample.
    #[getter]
    fn sessions(&self) -> PyResult<Vec<u64>> {
        Ok(self.provenance("sessions")?.sessions.clone())
    }

    /// The turn each sample was taken in: its session's `turn_no` then (0
    /// before the first `turn;` and in the `init` block).
    #[getter]
    fn turns(&self) -> PyResult<Vec<u64>> {
        Ok(self.provenance("turns")?.turns.clone())
    }

    fn __repr__(&self) -> String {
        format!(
            "<serq.Observe {} count {} mean {}>",
            self.observation().name,
            self.summary.count,
            self.mean()
        )
    }
}

/// A stage member's figures over [warmup, end], the fields of the JSON
/// report's stage row.
#[pyclass(frozen, get_all, module = "serq._serq")]
#[derive(Clone, Debug, PartialEq)]
pub struct Stage {
    /// The family's name.
    name: String,
    /// The member's index in its family, `None` for a family of one (serq's
    /// own field: the JSON row has no `member`).
    member: Option<usize>,
    /// Time-average jobs present (waiting and in service).
    mean_number: f64,
    /// Fraction of time with at least one job present; on a shared stage,
    /// the time average of Σ rate / φ (NaN for a shared stage of infinite
    /// capacity).
    utilization: f64,
    /// Jobs finishing at t >= warmup.
    completed: u64,
    /// completed / (end - warmup).
    throughput: f64,
    /// Mean wait of the completed jobs (NaN if none).
    mean_wait: f64,
    /// Mean service of the completed jobs (NaN if none).
    mean_service: f64,
    /// Step stages: iterations run (0 otherwise).
    iterations: u64,
}

impl From<&serq::report::StageRow> for Stage {
    fn from(s: &serq::report::StageRow) -> Stage {
        Stage {
            name: s.name.clone(),
            member: s.member,
            mean_number: s.mean_number,
            utilization: figure(s.utilization),
            completed: s.completed,
            throughput: s.throughput,
            mean_wait: figure(s.mean_wait),
            mean_service: figure(s.mean_service),
            iterations: s.iterations,
        }
    }
}

#[pymethods]
impl Stage {
    fn __repr__(&self) -> String {
        format!(
            "<serq.Stage {} util {} completed {}>",
            member_name(&self.name, self.member),
            self.utilization,
            self.completed
        )
    }
}

/// A pool member's figures, the fields of the JSON report's pool row.
#[pyclass(frozen, get_all, module = "serq._serq")]
#[derive(Clone, Debug, PartialEq)]
pub struct Pool {
    /// The family's name.
    name: String,
    /// The member's index in its family, `None` for a family of one (serq's
    /// own field).
    member: Option<usize>,
    /// Time-average allocated units (leases included).
    mean_used: f64,
    /// Time-average cached units.
    mean_cached: f64,
    /// Time-average holds waiting in this pool's queue.
    mean_queue: f64,
    /// Time-average allocations (holds and leases).
    mean_holders: f64,
    /// Mean queue wait of admissions at t >= warmup whose first pool is
    /// this one (NaN if none).
    mean_wait: f64,
    /// Admissions over the whole run, counted at every pool of a hold.
    admissions: u64,
    /// Cache entries evicted.
    evicted_entries: u64,
    /// Cached units evicted.
    evicted_units: f64,
    /// Sessions preempted.
    preemptions: u64,
    /// Spills to the next tier.
    spills: u64,
    /// Requests above the capacity, over the whole run.
    rejected: u64,
    /// Sessions preempted again without progress.
    stuck: u64,
}

impl From<&serq::report::PoolRow> for Pool {
    fn from(p: &serq::report::PoolRow) -> Pool {
        Pool {
            name: p.name.clone(),
            member: p.member,
            mean_used: p.mean_used,
            mean_cached: p.mean_cached,
            mean_queue: p.mean_queue,
            mean_holders: p.mean_holders,
            mean_wait: figure(p.mean_wait),
            admissions: p.admissions,
            evicted_entries: p.evicted_entries,
            evicted_units: p.evicted_units,
            preemptions: p.preemptions,
            spills: p.spills,
            rejected: p.rejected,
            stuck: p.stuck,
        }
    }
}

#[pymethods]
impl Pool {
    fn __repr__(&self) -> String {
        format!(
            "<serq.Pool {} used {} admissions {}>",
            member_name(&self.name, self.member),
            self.mean_used,
            self.admissions
        )
    }
}

/// `name[i]` for an array member, `name` otherwise.
fn member_name(name: &str, member: Option<usize>) -> String {
    match member {
        Some(i) => format!("{name}[{i}]"),
        None => name.to_string(),
    }
}
