//! Reports and replication failures as plain Python values and back: what
//! pickle sends between a Ray or Dask worker and the driver.
//!
//! Invariant: a value read back equals the one written, field for field
//! and bit for bit (samples travel as their IEEE bytes, so NaN and ±inf
//! survive); a state of another layout is refused, never misread.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

use serq::report::{
    NegativeAmounts, Observation, PoolRow, Provenance, Report, StageRow, Statement, Welford,
};

/// The layout of the tuples below; raised when one changes.
const LAYOUT: u32 = 4;

/// An observation: its name, its samples' bytes, and its provenance's
/// times, sessions and turns as bytes when the run kept them.
type ObservationState<'py> = (
    String,
    Bound<'py, PyBytes>,
    Option<(
        Bound<'py, PyBytes>,
        Bound<'py, PyBytes>,
        Bound<'py, PyBytes>,
    )>,
);

type RunState<'py> = (
    String,
    f64,
    f64,
    f64,
    u64,
    u64,
    u64,
    u64,
    u64,
    f64,
    Bound<'py, PyBytes>,
);
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

/// A report's negative amounts: count, what, the statement (block, index,
/// line), session, time, the first value and the least.
type AmountsState = (
    u64,
    String,
    (usize, usize, Option<u32>),
    Option<u64>,
    (f64, f64, f64),
);

/// Each stage member's and each pool member's series (the stability
/// test's), as bytes.
type SeriesState<'py> = (Vec<Bound<'py, PyBytes>>, Vec<Bound<'py, PyBytes>>);

/// `(LAYOUT, run, observes, stages, pools, amounts, series)` of a report;
/// numbers travel as bytes (the series, the samples and their provenance).
type ReportState<'py> = (
    u32,
    RunState<'py>,
    Vec<ObservationState<'py>>,
    Vec<StageState>,
    Vec<PoolState>,
    Option<AmountsState>,
    SeriesState<'py>,
);

/// A report's [`ReportState`].
pub fn report_state<'py>(py: Python<'py>, r: &Report) -> PyResult<Bound<'py, PyTuple>> {
    let run: RunState<'py> = (
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
        bytes_of(py, &r.live_series, f64::to_le_bytes),
    );
    let observes: Vec<ObservationState<'py>> = r
        .observes
        .iter()
        .map(|o| {
            let provenance = o.provenance.as_ref().map(|p| {
                (
                    bytes_of(py, &p.times, f64::to_le_bytes),
                    bytes_of(py, &p.sessions, u64::to_le_bytes),
                    bytes_of(py, &p.turns, u64::to_le_bytes),
                )
            });
            let samples = bytes_of(py, &o.samples, f64::to_le_bytes);
            (o.name.clone(), samples, provenance)
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
    let amounts: Option<AmountsState> = r.negative_amounts.as_ref().map(|n| {
        (
            n.count,
            n.what.clone(),
            (n.statement.at.0, n.statement.at.1, n.statement.line),
            n.session,
            (n.time, n.value, n.min),
        )
    });
    let series: SeriesState<'py> = (
        r.stage_series
            .iter()
            .map(|s| bytes_of(py, s, f64::to_le_bytes))
            .collect(),
        r.pool_series
            .iter()
            .map(|s| bytes_of(py, s, f64::to_le_bytes))
            .collect(),
    );
    let state: ReportState<'py> = (LAYOUT, run, observes, stages, pools, amounts, series);
    state.into_pyobject(py)
}

/// The report [`report_state`] wrote.
pub fn report_from_state(state: &Bound<'_, PyAny>) -> PyResult<Report> {
    // The layout first: a state of another layout has another shape.
    let layout: u32 = state.get_item(0)?.extract()?;
    if layout != LAYOUT {
        return Err(PyValueError::new_err(format!(
            "a serq report pickled in layout {layout}; this serq reads layout {LAYOUT}"
        )));
    }
    let (_, run, observes, stages, pools, amounts, series): ReportState<'_> = state.extract()?;
    let (
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
        live_series,
    ) = run;
    let live_series = numbers_of(&live_series, "the live series", f64::from_le_bytes)?;
    let series_of = |all: Vec<Bound<'_, PyBytes>>, what: &str| {
        all.iter()
            .map(|b| numbers_of(b, what, f64::from_le_bytes))
            .collect::<PyResult<Vec<Vec<f64>>>>()
    };
    let stage_series = series_of(series.0, "a stage's series")?;
    let pool_series = series_of(series.1, "a pool's series")?;
    let observes = observes
        .into_iter()
        .map(|(name, bytes, provenance)| {
            let what = format!("the samples of `{name}`");
            let samples = numbers_of(&bytes, &what, f64::from_le_bytes)?;
            let provenance = match provenance {
                None => None,
                Some((times, sessions, turns)) => {
                    let p = Provenance {
                        times: numbers_of(&times, &what, f64::from_le_bytes)?,
                        sessions: numbers_of(&sessions, &what, u64::from_le_bytes)?,
                        turns: numbers_of(&turns, &what, u64::from_le_bytes)?,
                    };
                    if [p.times.len(), p.sessions.len(), p.turns.len()] != [samples.len(); 3] {
                        return Err(PyValueError::new_err(format!(
                            "{what} and their times, sessions and turns differ in number"
                        )));
                    }
                    Some(p)
                }
            };
            Ok(Observation {
                name,
                moments: Welford::of(&samples),
                samples,
                provenance,
            })
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
        live_series,
        stage_series,
        pool_series,
        observes,
        stages,
        pools,
        negative_amounts: amounts.map(
            |(count, what, (b, i, line), session, (time, value, min))| NegativeAmounts {
                count,
                what,
                statement: Statement { at: (b, i), line },
                session,
                time,
                value,
                min,
            },
        ),
        // A pickled report carries no turn marks: `serq.search`'s tasks
        // return their attainment, not their report.
        turn_marks: None,
    })
}

/// Numbers as their little-endian bytes (`f64::to_le_bytes`,
/// `u64::to_le_bytes`).
fn bytes_of<'py, T: Copy>(py: Python<'py>, xs: &[T], le: fn(T) -> [u8; 8]) -> Bound<'py, PyBytes> {
    let bytes: Vec<u8> = xs.iter().flat_map(|&x| le(x)).collect();
    PyBytes::new(py, &bytes)
}

/// The numbers [`bytes_of`] wrote (`from_le`: `f64::from_le_bytes`,
/// `u64::from_le_bytes`); `what` names them in the error.
fn numbers_of<T>(
    bytes: &Bound<'_, PyBytes>,
    what: &str,
    from_le: fn([u8; 8]) -> T,
) -> PyResult<Vec<T>> {
    let bytes = bytes.as_bytes();
    if bytes.len() % 8 != 0 {
        return Err(PyValueError::new_err(format!(
            "{what} are {} bytes, not whole 8-byte numbers",
            bytes.len()
        )));
    }
    Ok(bytes
        .chunks_exact(8)
        .map(|c| {
            let mut word = [0u8; 8];
            word.copy_from_slice(c);
            from_le(word)
        })
        .collect())
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
