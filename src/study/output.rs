//! Replication results for a person (a text table) and for a program (JSON).
//!
//! Invariant: both print the same estimates in the same order as
//! [`Replicated`] holds them (program and declaration order); an undefined
//! figure prints `-` in the table and `null` in JSON.

use crate::report::runs;
use serde::Serialize;
use std::fmt::Write;

use super::replicate::{Estimate, PoolEstimate, Replicated, StageEstimate};
use crate::report::{Fold, Spread};

/// `x` with `decimals` digits, or `-` when undefined.
fn fixed(x: Option<f64>, decimals: usize) -> String {
    match x {
        Some(v) if v.is_finite() => format!("{v:.decimals$}"),
        _ => "-".to_string(),
    }
}

/// `±x` with `decimals` digits, or `-`.
fn plus_minus(x: Option<f64>, decimals: usize) -> String {
    match x {
        Some(v) if v.is_finite() => format!("±{v:.decimals$}"),
        _ => "-".to_string(),
    }
}

fn member_name(name: &str, member: Option<usize>) -> String {
    match member {
        Some(i) => format!("{name}[{i}]"),
        None => name.to_string(),
    }
}

#[derive(Serialize)]
struct EstimateJson {
    n: usize,
    mean: Option<f64>,
    ci: Option<f64>,
}

impl From<&Estimate> for EstimateJson {
    fn from(e: &Estimate) -> Self {
        EstimateJson {
            n: e.n,
            mean: e.mean.filter(|x| x.is_finite()),
            ci: e.ci.filter(|x| x.is_finite()),
        }
    }
}

#[derive(Serialize)]
struct ObservationJson<'a> {
    name: &'a str,
    mean: EstimateJson,
    p50: EstimateJson,
    p90: EstimateJson,
    p99: EstimateJson,
}

#[derive(Serialize)]
struct StageJson<'a> {
    name: &'a str,
    member: Option<usize>,
    utilization: EstimateJson,
    mean_number: EstimateJson,
    throughput: EstimateJson,
}

#[derive(Serialize)]
struct PoolJson<'a> {
    name: &'a str,
    member: Option<usize>,
    mean_used: EstimateJson,
    mean_wait: EstimateJson,
}

/// A stage family folded across its members: each figure's
/// across-replication mean, spread over the members.
#[derive(Serialize)]
struct StageFamilyJson {
    name: String,
    members: usize,
    utilization: Spread,
    mean_number: Spread,
    throughput: Spread,
}

/// A pool family folded as [`StageFamilyJson`] is.
#[derive(Serialize)]
struct PoolFamilyJson {
    name: String,
    members: usize,
    mean_used: Spread,
    mean_wait: Spread,
}

/// The spread over members of each member's across-replication mean.
fn spread<T>(members: &[T], figure: impl Fn(&T) -> &Estimate) -> Spread {
    Spread::of(members.iter().map(|m| figure(m).mean))
}

fn stage_family(f: &[StageEstimate]) -> StageFamilyJson {
    StageFamilyJson {
        name: f[0].name.clone(),
        members: f.len(),
        utilization: spread(f, |s| &s.utilization),
        mean_number: spread(f, |s| &s.mean_number),
        throughput: spread(f, |s| &s.throughput),
    }
}

fn pool_family(f: &[PoolEstimate]) -> PoolFamilyJson {
    PoolFamilyJson {
        name: f[0].name.clone(),
        members: f.len(),
        mean_used: spread(f, |p| &p.mean_used),
        mean_wait: spread(f, |p| &p.mean_wait),
    }
}

#[derive(Serialize)]
struct ReplicatedJson<'a, S: Serialize, P: Serialize> {
    replications: usize,
    seeds: &'a [u64],
    confidence: f64,
    stable: Option<bool>,
    stability: Option<&'static str>,
    growing: Vec<crate::report::GrowingJson>,
    observes: Vec<ObservationJson<'a>>,
    stages: Vec<S>,
    pools: Vec<P>,
    warnings: Vec<crate::report::WarningJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    slo: Option<SloJson>,
}

#[derive(Serialize)]
struct SloJson {
    attainment: EstimateJson,
    goodput: EstimateJson,
    requests: EstimateJson,
    unfinished: EstimateJson,
}

impl Replicated {
    /// The estimates as one JSON object:
    ///
    /// ```json
    /// {"replications": R, "seeds": [s0, …], "confidence": 0.95, "stable": b,
    ///  "stability": "steady", "growing": [{"kind", "name", "member", "growth"}, …],
    ///  "observes": [{"name": "ttft", "mean": {"n": R, "mean": m, "ci": h},
    ///                "p50": {…}, "p90": {…}, "p99": {…}}, …],
    ///  "stages": [{"name": "D", "member": 0, "utilization": {…},
    ///              "mean_number": {…}, "throughput": {…}}, …],
    ///  "pools": [{"name": "kvD", "member": null, "mean_used": {…}, "mean_wait": {…}}, …],
    ///  "warnings": [{"kind", "count", "message", …}, …]}
    /// ```
    ///
    /// `n` counts the replications whose figure was defined, `mean` is the
    /// mean across them and `ci` the 95% Student-t half-width (`null`
    /// below 2); an observation's `p50`, `p90` and `p99` estimate its
    /// percentiles the same way, from each replication's nearest-rank
    /// percentile; `member` is `null` for a family of one; `stable` is
    /// [`Replicated::is_stable`] and `stability` the verdict, both `null`
    /// when not judged, `growing` the queues that grow; `warnings` is
    /// [`Replicated::warnings`], as a run's JSON writes its own.
    /// Replications run with an SLO add, last, `"slo": {"attainment",
    /// "goodput", "requests", "unfinished"}`, each figure in the same
    /// `{"n", "mean", "ci"}` form.
    ///
    /// ```
    /// # let source = "stage s : delay; workload { arrive batch(1); }
    /// #   session { observe x = 3; } run { horizon 1; seed 5; }";
    /// # let program = serq::compile_source(source, &Default::default()).unwrap();
    /// let json = serq::study::replicate(&program, 2).unwrap().to_json();
    /// assert!(json.starts_with(r#"{"replications":2,"seeds":[5,6],"confidence":0.95,"stable":true,"stability":"steady","growing":[],"observes":[{"name":"x","mean":{"n":2,"mean":3.0,"ci":0.0},"p50":{"n":2,"mean":3.0,"ci":0.0}"#));
    /// ```
    pub fn to_json(&self) -> String {
        let stages = self
            .stages
            .iter()
            .map(|s| StageJson {
                name: &s.name,
                member: s.member,
                utilization: (&s.utilization).into(),
                mean_number: (&s.mean_number).into(),
                throughput: (&s.throughput).into(),
            })
            .collect();
        let pools = self
            .pools
            .iter()
            .map(|p| PoolJson {
                name: &p.name,
                member: p.member,
                mean_used: (&p.mean_used).into(),
                mean_wait: (&p.mean_wait).into(),
            })
            .collect();
        self.json_with(stages, pools)
    }

    /// [`Replicated::to_json`] with every stage and pool family folded
    /// into one entry (`serq run --replications R --by-family --json`):
    /// `{"name", "members", "utilization": {"mean", "min", "max"},
    /// "mean_number": {…}, "throughput": {…}}` for a stage family,
    /// `{"name", "members", "mean_used": {…}, "mean_wait": {…}}` for a
    /// pool family: each figure's across-replication mean, its mean,
    /// least and greatest over the members.
    ///
    /// ```
    /// # let source = "stage d[2] : delay; workload { arrive batch(1); }
    /// #   session { run d[1] (4); } run { horizon 10; }";
    /// # let program = serq::compile_source(source, &Default::default()).unwrap();
    /// let json = serq::study::replicate(&program, 2).unwrap().to_json_by_family();
    /// // d[0] idle, d[1] busy 4 of 10.
    /// assert!(json.contains(r#""stages":[{"name":"d","members":2,"utilization":{"mean":0.2,"min":0.0,"max":0.4}"#));
    /// ```
    pub fn to_json_by_family(&self) -> String {
        let stages = runs(&self.stages, |s| &s.name)
            .into_iter()
            .map(stage_family)
            .collect();
        let pools = runs(&self.pools, |p| &p.name)
            .into_iter()
            .map(pool_family)
            .collect();
        self.json_with(stages, pools)
    }

    fn json_with<S: Serialize, P: Serialize>(&self, stages: Vec<S>, pools: Vec<P>) -> String {
        let (stable, stability, growing) = crate::report::stability_json(self.stability.as_ref());
        let json = ReplicatedJson {
            replications: self.seeds.len(),
            seeds: &self.seeds,
            confidence: 0.95,
            stable,
            stability,
            growing,
            observes: self
                .observations
                .iter()
                .map(|o| ObservationJson {
                    name: &o.name,
                    mean: (&o.mean).into(),
                    p50: (&o.p50).into(),
                    p90: (&o.p90).into(),
                    p99: (&o.p99).into(),
                })
                .collect(),
            stages,
            pools,
            warnings: crate::report::warnings_json(&self.warnings("")),
            slo: self.slo.as_ref().map(|s| SloJson {
                attainment: (&s.attainment).into(),
                goodput: (&s.goodput).into(),
                requests: (&s.requests).into(),
                unfinished: (&s.unfinished).into(),
            }),
        };
        // Plain data with finite numbers: serialising cannot fail.
        serde_json::to_string(&json).expect("replications serialise")
    }

    /// The estimates as a text table: a header line (the program's name,
    /// the replications and their seeds), then observations (mean, p50,
    /// p90, p99), stages and pools, each figure followed by its 95%
    /// half-width.
    ///
    /// ```
    /// # let source = "stage s : delay; workload { arrive batch(1); }
    /// #   session { run s (1); observe x = 3; } run { horizon 10; }";
    /// # let program = serq::compile_source(source, &Default::default()).unwrap();
    /// let table = serq::study::replicate(&program, 2).unwrap().to_table("prog.sq");
    /// assert!(table.starts_with("prog.sq  replications 2  seeds 1 to 2  95% t-intervals\n"));
    /// let row = |l: &str| l.split_whitespace().map(String::from).collect::<Vec<_>>();
    /// assert!(table.lines().any(|l| row(l) == ["x", "2", "3.0000", "±0.0000", "3.0000",
    ///     "±0.0000", "3.0000", "±0.0000", "3.0000", "±0.0000"]));
    /// ```
    pub fn to_table(&self, source_name: &str) -> String {
        self.to_table_folded(source_name, Fold::Members)
    }

    /// [`Replicated::to_table`] with the families `fold` folds as one row
    /// each, `D ×500`: each figure's across-replication mean over the
    /// members, and the least and greatest member's utilisation (stages)
    /// or units used (pools). Exactly [`Replicated::to_table`] when it
    /// folds no family.
    ///
    /// ```
    /// # let source = "stage d[20] : delay; workload { arrive batch(1); }
    /// #   session { run d[1] (4); } run { horizon 10; }";
    /// # let program = serq::compile_source(source, &Default::default()).unwrap();
    /// let r = serq::study::replicate(&program, 2).unwrap();
    /// let table = r.to_table_folded("p.sq", serq::report::Fold::Auto);
    /// // 20 members fold by default: one row, mean 0.4/20, min 0, max 0.4.
    /// let row = |l: &str| l.split_whitespace().map(String::from).collect::<Vec<_>>();
    /// assert!(table.lines().any(|l| row(l) == ["d", "×20", "0.020", "0.000", "0.400", "0.020", "0.005"]));
    /// ```
    pub fn to_table_folded(&self, source_name: &str, fold: Fold) -> String {
        let folds = runs(&self.stages, |s| &s.name)
            .iter()
            .map(|f| f.len())
            .chain(runs(&self.pools, |p| &p.name).iter().map(|f| f.len()))
            .any(|n| fold.folds(n));
        if folds {
            return self.table_folded(source_name, fold);
        }
        let mut out = String::new();
        let seeds = match (self.seeds.first(), self.seeds.last()) {
            (Some(a), Some(b)) => format!("{a} to {b}"),
            _ => "none".to_string(),
        };
        // Writing to a String cannot fail.
        let _ = writeln!(
            out,
            "{source_name}  replications {}  seeds {seeds}  95% t-intervals",
            self.seeds.len()
        );
        let names = self
            .observations
            .iter()
            .map(|o| o.name.clone())
            .chain(self.stages.iter().map(|s| member_name(&s.name, s.member)))
            .chain(self.pools.iter().map(|p| member_name(&p.name, p.member)));
        let w = names.map(|n| n.chars().count()).max().unwrap_or(0).max(11) + 1;
        if !self.observations.is_empty() {
            let _ = writeln!(
                out,
                "{:<w$}{:>7}{:>12}{:>11}{:>12}{:>11}{:>12}{:>11}{:>12}{:>11}",
                "observation", "n", "mean", "±ci", "p50", "±ci", "p90", "±ci", "p99", "±ci"
            );
            for o in &self.observations {
                let _ = write!(out, "{:<w$}{:>7}", o.name, o.mean.n);
                for e in [&o.mean, &o.p50, &o.p90, &o.p99] {
                    let _ = write!(out, "{:>12}{:>11}", fixed(e.mean, 4), plus_minus(e.ci, 4));
                }
                out.push('\n');
            }
        }
        if !self.stages.is_empty() {
            let _ = writeln!(
                out,
                "{:<w$}{:>8}{:>9}{:>9}{:>9}{:>9}{:>9}",
                "stage", "util", "±ci", "number", "±ci", "thrpt", "±ci"
            );
            for s in &self.stages {
                let _ = writeln!(
                    out,
                    "{:<w$}{:>8}{:>9}{:>9}{:>9}{:>9}{:>9}",
                    member_name(&s.name, s.member),
                    fixed(s.utilization.mean, 3),
                    plus_minus(s.utilization.ci, 3),
                    fixed(s.mean_number.mean, 3),
                    plus_minus(s.mean_number.ci, 3),
                    fixed(s.throughput.mean, 3),
                    plus_minus(s.throughput.ci, 3)
                );
            }
        }
        if !self.pools.is_empty() {
            let _ = writeln!(
                out,
                "{:<w$}{:>9}{:>9}{:>10}{:>10}",
                "pool", "used", "±ci", "wait", "±ci"
            );
            for p in &self.pools {
                let _ = writeln!(
                    out,
                    "{:<w$}{:>9}{:>9}{:>10}{:>10}",
                    member_name(&p.name, p.member),
                    fixed(p.mean_used.mean, 3),
                    plus_minus(p.mean_used.ci, 3),
                    fixed(p.mean_wait.mean, 4),
                    plus_minus(p.mean_wait.ci, 4)
                );
            }
        }
        if let Some(s) = &self.slo {
            let _ = writeln!(
                out,
                "slo attainment {} {}  goodput {} {}  requests {}  unfinished {}",
                fixed(s.attainment.mean, 4),
                plus_minus(s.attainment.ci, 4),
                fixed(s.goodput.mean, 4),
                plus_minus(s.goodput.ci, 4),
                fixed(s.requests.mean, 1),
                fixed(s.unfinished.mean, 1)
            );
        }
        out
    }
}

impl Replicated {
    /// The table with families folded (some family folds under `fold`).
    fn table_folded(&self, source_name: &str, fold: Fold) -> String {
        let mut plain = self.clone();
        plain.stages.clear();
        plain.pools.clear();
        let mut out = plain.to_table_folded(source_name, Fold::Members);
        // The SLO line goes last, after the folded stages and pools.
        let slo_line = match out.rfind("\nslo attainment ") {
            Some(i) if self.slo.is_some() => {
                let line = out[i + 1..].to_string();
                out.truncate(i + 1);
                line
            }
            _ => String::new(),
        };
        let label = |name: &str, n: usize, member: Option<usize>| match (n, member) {
            (1, m) => member_name(name, m),
            (n, _) => format!("{name} ×{n}"),
        };
        let stages: Vec<(String, StageFamilyJson)> = runs(&self.stages, |s| &s.name)
            .into_iter()
            .flat_map(|f| {
                if fold.folds(f.len()) {
                    vec![(label(&f[0].name, f.len(), None), stage_family(f))]
                } else {
                    f.iter()
                        .map(|m| {
                            (
                                label(&m.name, 1, m.member),
                                stage_family(std::slice::from_ref(m)),
                            )
                        })
                        .collect()
                }
            })
            .collect();
        let pools: Vec<(String, PoolFamilyJson)> = runs(&self.pools, |p| &p.name)
            .into_iter()
            .flat_map(|f| {
                if fold.folds(f.len()) {
                    vec![(label(&f[0].name, f.len(), None), pool_family(f))]
                } else {
                    f.iter()
                        .map(|m| {
                            (
                                label(&m.name, 1, m.member),
                                pool_family(std::slice::from_ref(m)),
                            )
                        })
                        .collect()
                }
            })
            .collect();
        let w = stages
            .iter()
            .map(|(l, _)| l)
            .chain(pools.iter().map(|(l, _)| l))
            .chain(self.observations.iter().map(|o| &o.name))
            .map(|n| n.chars().count())
            .max()
            .unwrap_or(0)
            .max(11)
            + 1;
        // Writing to a String cannot fail.
        if !stages.is_empty() {
            let _ = writeln!(
                out,
                "{:<w$}{:>8}{:>8}{:>8}{:>9}{:>9}",
                "stage", "util", "min", "max", "number", "thrpt"
            );
            for (label, s) in &stages {
                let _ = writeln!(
                    out,
                    "{:<w$}{:>8}{:>8}{:>8}{:>9}{:>9}",
                    label,
                    fixed(s.utilization.mean, 3),
                    fixed(s.utilization.min, 3),
                    fixed(s.utilization.max, 3),
                    fixed(s.mean_number.mean, 3),
                    fixed(s.throughput.mean, 3)
                );
            }
        }
        if !pools.is_empty() {
            let _ = writeln!(
                out,
                "{:<w$}{:>9}{:>9}{:>9}{:>10}",
                "pool", "used", "min", "max", "wait"
            );
            for (label, p) in &pools {
                let _ = writeln!(
                    out,
                    "{:<w$}{:>9}{:>9}{:>9}{:>10}",
                    label,
                    fixed(p.mean_used.mean, 3),
                    fixed(p.mean_used.min, 3),
                    fixed(p.mean_used.max, 3),
                    fixed(p.mean_wait.mean, 4)
                );
            }
        }
        out.push_str(&slo_line);
        out
    }
}
