//! The report as JSON, with the reference report's field names (spec §6.11,
//! conformance/README.md). A value that is not finite prints as `null`.

use super::{Observation, PoolRow, Report, Stability, StageRow, Warning, WarningKind};
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

/// A number that prints as `null` when it is not finite.
fn real(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

fn opt(x: Option<f64>) -> Option<f64> {
    x.and_then(real)
}

#[derive(Serialize)]
struct RunJson<'a, S, P> {
    horizon: Option<f64>,
    end: Option<f64>,
    warmup: Option<f64>,
    seed: u64,
    events: u64,
    arrivals: u64,
    ended: u64,
    turns: u64,
    mean_live: Option<f64>,
    stable: Option<bool>,
    stability: Option<&'static str>,
    growing: Vec<GrowingJson>,
    observes: Observes<'a>,
    stages: Vec<S>,
    pools: Vec<P>,
    warnings: Vec<WarningJson>,
}

/// One warning as JSON (docs/report.md §2.2): `kind`, `count`, `message`,
/// then the kind's own fields.
#[derive(Serialize)]
pub(crate) struct WarningJson {
    kind: &'static str,
    count: u64,
    message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    first: Option<FirstJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    min: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stability: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    growth: Option<f64>,
}

/// Where the first negative amount was.
#[derive(Serialize)]
struct FirstJson {
    statement: String,
    session: Option<u64>,
    time: Option<f64>,
}

impl From<&Warning> for WarningJson {
    fn from(w: &Warning) -> Self {
        let (mut first, mut min, mut stability, mut growth) = (None, None, None, None);
        match &w.kind {
            WarningKind::NegativeAmount {
                statement,
                session,
                time,
                min: m,
            } => {
                first = Some(FirstJson {
                    statement: statement.clone(),
                    session: *session,
                    time: real(*time),
                });
                min = real(*m);
            }
            WarningKind::Stability { verdict, growth: g } => {
                stability = Some(verdict.name());
                growth = real(*g);
            }
        }
        WarningJson {
            kind: w.kind.name(),
            count: w.count,
            message: w.message.clone(),
            first,
            min,
            stability,
            growth,
        }
    }
}

/// A growing queue as JSON (docs/report.md §2.1).
#[derive(Serialize)]
pub(crate) struct GrowingJson {
    kind: &'static str,
    name: String,
    member: Option<usize>,
    growth: Option<f64>,
}

/// A point's `"stable"`, `"stability"` and `"growing"` (all `null`, `[]`
/// when not judged).
pub(crate) fn stability_json(
    s: Option<&Stability>,
) -> (Option<bool>, Option<&'static str>, Vec<GrowingJson>) {
    let Some(s) = s else {
        return (None, None, Vec::new());
    };
    let growing = s
        .growing
        .iter()
        .map(|g| GrowingJson {
            kind: g.place.name(),
            name: g.name.clone(),
            member: g.member,
            growth: real(g.growth),
        })
        .collect();
    (Some(s.is_stable()), Some(s.verdict.name()), growing)
}

/// Warnings as their JSON array.
pub(crate) fn warnings_json(warnings: &[Warning]) -> Vec<WarningJson> {
    warnings.iter().map(WarningJson::from).collect()
}

/// The observations as an object keyed by name, in program order.
struct Observes<'a> {
    list: &'a [Observation],
    with_samples: bool,
}

#[derive(Serialize)]
struct ObserveJson {
    count: u64,
    mean: Option<f64>,
    ci: Option<f64>,
    cv2: Option<f64>,
    p99: Option<f64>,
    p50: Option<f64>,
    p90: Option<f64>,
    p95: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    samples: Option<Vec<Option<f64>>>,
}

impl Serialize for Observes<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.list.len()))?;
        for obs in self.list {
            let summary = obs.summary();
            let entry = ObserveJson {
                count: summary.count,
                mean: summary.mean,
                ci: summary.ci,
                cv2: summary.cv2,
                p99: summary.p99,
                p50: summary.p50,
                p90: summary.p90,
                p95: summary.p95,
                samples: self
                    .with_samples
                    .then(|| obs.samples.iter().map(|&x| real(x)).collect()),
            };
            map.serialize_entry(&obs.name, &entry)?;
        }
        map.end()
    }
}

#[derive(Serialize)]
struct StageJson<'a> {
    name: &'a str,
    member: Option<usize>,
    mean_number: Option<f64>,
    utilization: Option<f64>,
    completed: u64,
    throughput: Option<f64>,
    mean_wait: Option<f64>,
    mean_service: Option<f64>,
    iterations: u64,
}

impl<'a> From<&'a StageRow> for StageJson<'a> {
    fn from(r: &'a StageRow) -> Self {
        StageJson {
            name: &r.name,
            member: r.member,
            mean_number: real(r.mean_number),
            utilization: opt(r.utilization),
            completed: r.completed,
            throughput: real(r.throughput),
            mean_wait: opt(r.mean_wait),
            mean_service: opt(r.mean_service),
            iterations: r.iterations,
        }
    }
}

#[derive(Serialize)]
struct PoolJson<'a> {
    name: &'a str,
    member: Option<usize>,
    mean_used: Option<f64>,
    mean_cached: Option<f64>,
    mean_queue: Option<f64>,
    mean_holders: Option<f64>,
    mean_wait: Option<f64>,
    admissions: u64,
    evicted_entries: u64,
    evicted_units: Option<f64>,
    preemptions: u64,
    spills: u64,
    rejected: u64,
    stuck: u64,
}

impl<'a> From<&'a PoolRow> for PoolJson<'a> {
    fn from(r: &'a PoolRow) -> Self {
        PoolJson {
            name: &r.name,
            member: r.member,
            mean_used: real(r.mean_used),
            mean_cached: real(r.mean_cached),
            mean_queue: real(r.mean_queue),
            mean_holders: real(r.mean_holders),
            mean_wait: opt(r.mean_wait),
            admissions: r.admissions,
            evicted_entries: r.evicted_entries,
            evicted_units: real(r.evicted_units),
            preemptions: r.preemptions,
            spills: r.spills,
            rejected: r.rejected,
            stuck: r.stuck,
        }
    }
}

impl Report {
    /// The report as one JSON object; `with_samples` adds each observation's samples.
    pub fn to_json(&self, with_samples: bool) -> String {
        let stages = self.stages.iter().map(StageJson::from).collect();
        let pools = self.pools.iter().map(PoolJson::from).collect();
        self.json_with(with_samples, stages, pools)
    }

    /// The report as JSON with each family folded into one row
    /// ([`Report::stage_families`], [`Report::pool_families`]): `name`,
    /// `members`, and each figure as `{"mean", "min", "max"}` over them.
    ///
    /// ```
    /// # let program = serq::compile_source("stage d[3] : delay; workload { arrive batch(1); }
    /// #   session { run d[2] (5); } run { horizon 10; }", &Default::default()).unwrap();
    /// let json = serq::run(&program).unwrap().to_json_by_family(false);
    /// let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    /// assert_eq!(v["stages"][0]["members"], 3);
    /// assert_eq!(v["stages"][0]["utilization"]["max"], 0.5);
    /// ```
    pub fn to_json_by_family(&self, with_samples: bool) -> String {
        self.json_with(with_samples, self.stage_families(), self.pool_families())
    }

    fn json_with<S: Serialize, P: Serialize>(
        &self,
        with_samples: bool,
        stages: Vec<S>,
        pools: Vec<P>,
    ) -> String {
        let point = self.stability();
        let (stable, stability, growing) = stability_json(point.as_ref());
        let json = RunJson {
            horizon: real(self.horizon),
            end: real(self.end),
            warmup: real(self.warmup),
            seed: self.seed,
            events: self.events,
            arrivals: self.arrivals,
            ended: self.ended,
            turns: self.turns,
            mean_live: real(self.mean_live),
            stable,
            stability,
            growing,
            observes: Observes {
                list: &self.observes,
                with_samples,
            },
            stages,
            pools,
            warnings: warnings_json(&self.warnings()),
        };
        // Plain data with string keys and finite numbers: serialising cannot fail.
        serde_json::to_string(&json).expect("report serialises")
    }
}
