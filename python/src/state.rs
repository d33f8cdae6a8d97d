//! Reports and replication failures as plain Python values and back: what
//! pickle sends between a Ray or Dask worker and the driver.
//!
//! Invariant: a value read back equals the one written, field for field
//! and bit for bit (samples travel as their IEEE bytes, so NaN and ±inf
//! survive); a state of another layout is refused, never misread.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

use serq::report::{Observation, PoolRow, Report, StageRow};

/// The layout of the tuples below; raised when one changes.
const LAYOUT: u32 = 1;

type RunState = (String, f64, f64, f64, u64, u64, u64, u64, u64, f64);
type StageState = (
    String,
    Option<usize>,
    f64,
    Option<f64>,
    u64,
    f64,
    Option<f64>,
    Option<f64>,
    u64,
);
type PoolState = (
    (String, Option<usize>),
    (f64, f64, f64, f64, Option<f64>),
    (u64, u64, f64, u64, u64, u64, u64),
);

/// `(LAYOUT, run, observes, stages, pools)` of a report; each observation
/// is its name and its samples' bytes.
type ReportState<'py> = (
    u32,
    RunState,
    Vec<(String, Bound<'py, PyBytes>)>,
    Vec<StageState>,
    Vec<PoolState>,
);

/// A report's [`ReportState`].
pub fn report_state<'py>(py: Python<'py>, r: &Report) -> PyResult<Bound<'py, PyTuple>> {
    let run: RunState = (
        r.source_name.clone(),
        r.horizon,
        r.end,
        r.warmup,
        r.seed,
        r.events,
        r.arrivals,
        r.ended,
        r.turns,
        r.mean_live,
    );
    let observes: Vec<(String, Bound<'py, PyBytes>)> = r
        .observes
        .iter()
        .map(|o| {
            let bytes: Vec<u8> = o.samples.iter().flat_map(|x| x.to_le_bytes()).collect();
            (o.name.clone(), PyBytes::new(py, &bytes))
        })
        .collect();
    let stages: Vec<StageState> = r
        .stages
        .iter()
        .map(|s| {
            (
                s.name.clone(),
                s.member,
                s.mean_number,
                s.utilization,
                s.completed,
                s.throughput,
                s.mean_wait,
                s.mean_service,
                s.iterations,
            )
        })
        .collect();
    let pools: Vec<PoolState> = r
        .pools
        .iter()
        .map(|p| {
            (
                (p.name.clone(), p.member),
                (
                    p.mean_used,
                    p.mean_cached,
                    p.mean_queue,
                    p.mean_holders,
                    p.mean_wait,
                ),
                (
                    p.admissions,
                    p.evicted_entries,
                    p.evicted_units,
                    p.preemptions,
                    p.spills,
                    p.rejected,
                    p.stuck,
                ),
            )
        })
        .collect();
    let state: ReportState<'py> = (LAYOUT, run, observes, stages, pools);
    state.into_pyobject(py)
}

/// The report [`report_state`] wrote.
pub fn report_from_state(state: &Bound<'_, PyAny>) -> PyResult<Report> {
    let (layout, run, observes, stages, pools): ReportState<'_> = state.extract()?;
    if layout != LAYOUT {
        return Err(PyValueError::new_err(format!(
            "a serq report pickled in layout {layout}; this serq reads layout {LAYOUT}"
        )));
    }
    let (source_name, horizon, end, warmup, seed, events, arrivals, ended, turns, mean_live) = run;
    let observes = observes
        .into_iter()
        .map(|(name, bytes)| {
            let bytes = bytes.as_bytes();
            if bytes.len() % 8 != 0 {
                return Err(PyValueError::new_err(format!(
                    "the samples of `{name}` are {} bytes, not whole f64s",
                    bytes.len()
                )));
            }
            let samples = bytes
                .chunks_exact(8)
                .map(|c| {
                    let mut word = [0u8; 8];
                    word.copy_from_slice(c);
                    f64::from_le_bytes(word)
                })
                .collect();
            Ok(Observation { name, samples })
        })
        .collect::<PyResult<Vec<_>>>()?;
    let stages = stages
        .into_iter()
        .map(|s| StageRow {
            name: s.0,
            member: s.1,
            mean_number: s.2,
            utilization: s.3,
            completed: s.4,
            throughput: s.5,
            mean_wait: s.6,
            mean_service: s.7,
            iterations: s.8,
        })
        .collect();
    let pools = pools
        .into_iter()
        .map(|((name, member), means, counts)| PoolRow {
            name,
            member,
            mean_used: means.0,
            mean_cached: means.1,
            mean_queue: means.2,
            mean_holders: means.3,
            mean_wait: means.4,
            admissions: counts.0,
            evicted_entries: counts.1,
            evicted_units: counts.2,
            preemptions: counts.3,
            spills: counts.4,
            rejected: counts.5,
            stuck: counts.6,
        })
        .collect();
    Ok(Report {
        source_name,
        horizon,
        end,
        warmup,
        seed,
        events,
        arrivals,
        ended,
        turns,
        mean_live,
        observes,
        stages,
        pools,
    })
}

type FailureState = (
    u32,
    usize,
    u64,
    String,
    Option<(usize, usize)>,
    Option<u64>,
    f64,
);

/// A replication's run-time error as a tuple.
pub fn failure_state(e: &serq::study::ReplicationError) -> FailureState {
    (
        LAYOUT,
        e.replication,
        e.seed,
        e.error.message.clone(),
        e.error.at,
        e.error.session,
        e.error.time,
    )
}

/// The error [`failure_state`] wrote.
pub fn failure_from_state(state: &Bound<'_, PyAny>) -> PyResult<serq::study::ReplicationError> {
    let (layout, replication, seed, message, at, session, time): FailureState = state.extract()?;
    if layout != LAYOUT {
        return Err(PyValueError::new_err(format!(
            "a serq replication pickled in layout {layout}; this serq reads layout {LAYOUT}"
        )));
    }
    Ok(serq::study::ReplicationError {
        replication,
        seed,
        error: serq::RunError {
            message,
            at,
            session,
            time,
        },
    })
}
