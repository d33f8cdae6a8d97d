//! Searches: the largest load at which a deployment meets an SLO, and the
//! cheapest deployment that meets it.
//!
//! A *probe* runs one configuration (a point of the `--grid` axes) at one
//! load: replications in batches of [`BATCH`] (the first batch gives the
//! at-least-3 the sequential rule needs) until the 95% Student-t interval
//! of the attainment lies on one side of the target, or
//! `max_replications` ran (the probe is then *undecided*). The replication
//! seeds are those of every study (base + k), the same at every probe.
//!
//! Invariants: probes run one after another in a fixed order (the
//! configurations in cost order, or in grid order for a load search; the
//! loads in bracketing then bisection order) and only the replications of
//! one batch run in parallel, collected by index: one seed gives one
//! search, probe for probe, whatever the number of threads. A resumed
//! search replays the probes its file holds, in that order, and goes on.
//!
//! The sequential rule looks at the interval after every batch, so its
//! error rate is not the nominal 5% of one look: with up to ten looks
//! (3 to 30 replications) a probe whose true attainment equals the target
//! stops on the wrong side more often than one fixed-size test would;
//! away from the target the interval shrinks as 1/√n and the verdict is
//! right but for the rare unlucky batch. docs/capacity.md says how to read
//! it; undecided probes widen the answer instead of guessing.

use rayon::prelude::*;

use super::replicate::{Estimate, ReplicationError, RunSettings, SloEstimate, run_replication};
use super::rows::{Cell, csv_line, jsonl_line, read_csv, read_jsonl};
use super::sweep::Axis;
use crate::report::{Attainment, Slo};
use crate::{CompileError, Overrides, ValidProgram};
use std::path::{Path, PathBuf};

/// What runs a batch of a probe's replications: the program and the
/// replication indices, to each replication's attainment in index order
/// ([`SearchPlan::run_with`]).
pub type Runner<'a> = dyn Fn(&ValidProgram, std::ops::Range<usize>) -> Vec<Result<Attainment, ReplicationError>>
    + Sync
    + 'a;

/// A load search's answer: the highest load that passed and the lowest
/// that failed (widened by undecided probes), `None` where there is none.
pub type Limit = (Option<f64>, Option<f64>);

/// The attainment of a run without requests.
const NO_REQUESTS: Attainment = Attainment {
    attainment: None,
    goodput: 0.0,
    requests: 0,
    attained: 0,
    unfinished: 0,
};

/// Replications added to a probe at a time (the first batch is the
/// minimum of 3 rounded up to fill two cores).
pub const BATCH: usize = 4;

/// A continuous `let` to search: `NAME=LO:HI`.
///
/// ```
/// use serq::study::Load;
/// let l = Load::parse("lam=2:8.5").unwrap();
/// assert_eq!((l.name.as_str(), l.lo, l.hi), ("lam", 2.0, 8.5));
/// assert!(Load::parse("lam=8:2").is_err());
/// assert!(Load::parse("lam=2").is_err());
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Load {
    /// The `let` constant.
    pub name: String,
    /// The lowest load tried.
    pub lo: f64,
    /// The highest.
    pub hi: f64,
}

impl Load {
    /// Parses `NAME=LO:HI`, LO < HI, both finite.
    pub fn parse(text: &str) -> Result<Load, String> {
        let bad = || format!("expected NAME=LO:HI (e.g. lam=1:20), found `{text}`");
        let (name, range) = text.split_once('=').ok_or_else(bad)?;
        let (lo, hi) = range.split_once(':').ok_or_else(bad)?;
        let name = name.trim();
        if !crate::syntax::lexer::is_word(name) {
            return Err(format!("`{name}` is not a constant's name (in `{text}`)"));
        }
        let number = |s: &str| match s.trim().parse::<f64>() {
            Ok(x) if x.is_finite() => Ok(x),
            _ => Err(format!(
                "`{}` is not a finite number (in `{text}`)",
                s.trim()
            )),
        };
        let (lo, hi) = (number(lo)?, number(hi)?);
        if lo >= hi {
            return Err(format!("the load range `{text}` is empty: write LO < HI"));
        }
        Ok(Load {
            name: name.to_string(),
            lo,
            hi,
        })
    }
}

/// Parses `NAME=VALUE` (`--at lam=20`).
pub fn parse_at(text: &str) -> Result<(String, f64), String> {
    let Some((name, value)) = text.split_once('=') else {
        return Err(format!("expected NAME=VALUE (e.g. lam=20), found `{text}`"));
    };
    let name = name.trim();
    if !crate::syntax::lexer::is_word(name) {
        return Err(format!("`{name}` is not a constant's name (in `{text}`)"));
    }
    match value.trim().parse::<f64>() {
        Ok(x) if x.is_finite() => Ok((name.to_string(), x)),
        _ => Err(format!(
            "the value of `{name}` must be a finite number, found `{value}`"
        )),
    }
}

/// What a search is asked.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchSpec {
    /// The SLO every request is held to.
    pub slo: Slo,
    /// The attainment to reach, in (0, 1].
    pub target: f64,
    /// The load to search, if any (else every probe runs at the program's
    /// load, or `at`'s).
    pub load: Option<Load>,
    /// `let`s set for every probe (`--at lam=20`).
    pub at: Vec<(String, f64)>,
    /// The configuration axes (none: one configuration, the program's).
    pub grid: Vec<Axis>,
    /// The cost of a configuration: an expression over the `let`s and the
    /// program's constant `def`s.
    pub cost: Option<String>,
    /// Axes along which attainment never falls as the value grows
    /// (`--monotone ND`: more decoders never hurt).
    pub monotone: Vec<String>,
    /// The load search's relative tolerance.
    pub tol: f64,
    /// The most replications of one probe.
    pub max_replications: usize,
    /// How every replication runs (`--strict`).
    pub settings: RunSettings,
}

impl SearchSpec {
    /// A spec with the defaults: target 0.9, tolerance 0.01, 30 replications.
    pub fn new(slo: Slo) -> SearchSpec {
        SearchSpec {
            slo,
            target: 0.9,
            load: None,
            at: Vec::new(),
            grid: Vec::new(),
            cost: None,
            monotone: Vec::new(),
            tol: 0.01,
            max_replications: 30,
            settings: RunSettings::default(),
        }
    }
}

/// A probe's outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The attainment's interval lies at or above the target.
    Pass,
    /// It lies below.
    Fail,
    /// It holds the target after `max_replications`.
    Undecided,
}

impl Verdict {
    /// `pass`, `fail`, `undecided`.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
            Verdict::Undecided => "undecided",
        }
    }

    fn flag(self) -> Option<bool> {
        match self {
            Verdict::Pass => Some(true),
            Verdict::Fail => Some(false),
            Verdict::Undecided => None,
        }
    }
}

/// One probe: a configuration at a load, its replications and verdict.
#[derive(Clone, Debug, PartialEq)]
pub struct Probe {
    /// The configuration's index (grid order).
    pub config: usize,
    /// The load (`None` without `--load`).
    pub load: Option<f64>,
    /// The replications run.
    pub replications: usize,
    /// The SLO's figures across them.
    pub slo: SloEstimate,
    /// The verdict.
    pub verdict: Verdict,
}

/// What a search found for one configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// The axes' values.
    pub values: Vec<f64>,
    /// Its cost (`None` without `--cost`).
    pub cost: Option<f64>,
    /// A load search's answer: the highest load that passed and the
    /// lowest that failed, widened by undecided probes (`None`: no such
    /// probe). `None` without `--load`, or when the configuration was not
    /// searched.
    pub limit: Option<(Option<f64>, Option<f64>)>,
    /// Without `--load`: its verdict at the fixed load (`None` when not
    /// probed: costlier than the answer, or implied by a monotone axis).
    pub verdict: Option<Verdict>,
    /// The SLO's figures at the fixed load, or at the limit's low end.
    pub slo: Option<SloEstimate>,
    /// Whether its verdict was implied by `--monotone`, not run.
    pub implied: bool,
    /// Cost per unit of goodput at the limit (or the fixed load).
    pub cost_per_goodput: Option<f64>,
}

/// A search's result.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchResult {
    /// The configuration axes' names.
    pub parameters: Vec<String>,
    /// The load's name, if searched.
    pub load: Option<String>,
    /// Every configuration, in grid order.
    pub configs: Vec<Config>,
    /// The answer's configuration (cheapest passing; for a load search of
    /// one configuration, that one), if any.
    pub best: Option<usize>,
    /// Every probe, in the order run.
    pub probes: Vec<Probe>,
    /// Replications run (not replayed).
    pub runs: usize,
    /// Contradictions of the monotone assumptions, for a person.
    pub warnings: Vec<String>,
}

/// Why a search gave no result.
#[derive(Debug)]
pub enum SearchError {
    /// A flag's value is wrong in itself (a target outside (0, 1], …).
    Usage(String),
    /// The program did not compile at a configuration.
    Compile {
        /// The configuration's `(name, value)` pairs.
        point: Vec<(String, f64)>,
        /// Every diagnostic.
        error: Box<CompileError>,
    },
    /// A replication failed.
    Run {
        /// The probe's `(name, value)` pairs.
        point: Vec<(String, f64)>,
        /// The replication and its error.
        error: Box<ReplicationError>,
    },
    /// A resumed file is not this search's.
    Resume(String),
}

impl std::fmt::Display for SearchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SearchError::Usage(m) | SearchError::Resume(m) => f.write_str(m),
            SearchError::Compile { point, error } => write!(f, "at {}: {error}", describe(point)),
            SearchError::Run { point, error } => write!(f, "at {}: {error}", describe(point)),
        }
    }
}

impl std::error::Error for SearchError {}

fn describe(point: &[(String, f64)]) -> String {
    let parts: Vec<String> = point.iter().map(|(n, v)| format!("{n}={v}")).collect();
    parts.join(", ")
}

/// A search ready to run: every configuration compiled and costed, every
/// name checked.
#[derive(Clone, Debug)]
pub struct SearchPlan {
    source: String,
    origin: Option<PathBuf>,
    overrides: Overrides,
    spec: SearchSpec,
    parameters: Vec<String>,
    points: Vec<Vec<f64>>,
    costs: Vec<Option<f64>>,
}

impl SearchPlan {
    /// Checks the spec and compiles the program at every configuration
    /// (at the load's LO), before any run: an unknown `let` in `--load`,
    /// `--at` or `--grid`, an unknown observation in the SLO, a cost
    /// expression that does not fold to a constant, a target outside
    /// (0, 1] are refused here.
    pub fn new(
        source: &str,
        origin: Option<&Path>,
        overrides: &Overrides,
        spec: SearchSpec,
    ) -> Result<SearchPlan, SearchError> {
        let usage = |m: String| Err(SearchError::Usage(m));
        if !(spec.target > 0.0 && spec.target <= 1.0) {
            return usage(format!(
                "--attain {} is not a fraction in (0, 1]",
                spec.target
            ));
        }
        if !(spec.tol > 0.0 && spec.tol < 1.0) {
            return usage(format!("--tol {} is not a fraction in (0, 1)", spec.tol));
        }
        if spec.max_replications < 3 {
            return usage(format!(
                "--max-replications {} is below the 3 every probe runs",
                spec.max_replications
            ));
        }
        let parameters: Vec<String> = spec.grid.iter().map(|a| a.name.clone()).collect();
        let mut named: Vec<&str> = parameters.iter().map(String::as_str).collect();
        named.extend(spec.load.iter().map(|l| l.name.as_str()));
        named.extend(spec.at.iter().map(|(n, _)| n.as_str()));
        for (i, n) in named.iter().enumerate() {
            if named[..i].contains(n) {
                return usage(format!(
                    "`{n}` is given twice among --grid, --load and --at"
                ));
            }
        }
        for m in &spec.monotone {
            if !parameters.contains(m) {
                let hint = match crate::link::closest(m, parameters.iter().map(String::as_str)) {
                    Some(c) => format!("; did you mean `{c}`?"),
                    None => String::new(),
                };
                return usage(format!("--monotone `{m}` is not a --grid axis{hint}"));
            }
        }
        if spec.grid.iter().any(|a| a.values.is_empty()) {
            return usage("a --grid axis has no value".to_string());
        }
        let points = super::sweep::grid_points(&spec.grid);
        let mut plan = SearchPlan {
            source: source.to_string(),
            origin: origin.map(Path::to_path_buf),
            overrides: overrides.clone(),
            spec,
            parameters,
            points,
            costs: Vec::new(),
        };
        let lo = plan.spec.load.as_ref().map(|l| l.lo);
        let programs = (0..plan.points.len())
            .into_par_iter()
            .map(|c| plan.compile(c, lo, None))
            .collect::<Vec<_>>();
        for (c, program) in programs.into_iter().enumerate() {
            let program = program?;
            plan.spec
                .slo
                .check(&program.observes)
                .map_err(|e| SearchError::Usage(e.to_string()))?;
            let _ = c;
        }
        if let Some(cost) = plan.spec.cost.clone() {
            let costs = (0..plan.points.len())
                .into_par_iter()
                .map(|c| plan.cost_of(c, lo, &cost))
                .collect::<Vec<_>>();
            plan.costs = costs.into_iter().collect::<Result<Vec<_>, _>>()?;
        } else {
            plan.costs = vec![None; plan.points.len()];
        }
        Ok(plan)
    }

    /// The configurations' axis values, in grid order.
    pub fn points(&self) -> &[Vec<f64>] {
        &self.points
    }

    /// The configuration axes' names.
    pub fn parameters(&self) -> &[String] {
        &self.parameters
    }

    /// The spec.
    pub fn spec(&self) -> &SearchSpec {
        &self.spec
    }

    /// The `(name, value)` pairs a probe sets.
    fn sets(&self, c: usize, load: Option<f64>) -> Vec<(String, f64)> {
        let mut sets: Vec<(String, f64)> = self.spec.at.clone();
        sets.extend(
            self.parameters
                .iter()
                .cloned()
                .zip(self.points[c].iter().copied()),
        );
        if let (Some(l), Some(v)) = (&self.spec.load, load) {
            sets.push((l.name.clone(), v));
        }
        sets
    }

    /// Compiles the program of configuration `c` at `load`, with `extra`
    /// text appended (the cost's pool).
    fn compile(
        &self,
        c: usize,
        load: Option<f64>,
        extra: Option<&str>,
    ) -> Result<ValidProgram, SearchError> {
        let sets = self.sets(c, load);
        let mut o = self.overrides.clone();
        o.sets.extend(sets.iter().cloned());
        let text;
        let source = match extra {
            Some(e) => {
                text = format!("{}\n{e}\n", self.source);
                text.as_str()
            }
            None => self.source.as_str(),
        };
        let compiled = match &self.origin {
            Some(path) => crate::compile_text_at(source, path, &o),
            None => {
                crate::compile_source(source, &o).map_err(|diagnostics| CompileError::Diagnostics {
                    path: PathBuf::from("<source>"),
                    sources: crate::syntax::Sources::new("<source>".to_string(), source),
                    diagnostics,
                })
            }
        };
        compiled.map_err(|error| SearchError::Compile {
            point: sets,
            error: Box::new(error),
        })
    }

    /// The cost of configuration `c`: the expression folded by the linker
    /// as the capacity of a pool appended to the program (so that it sees
    /// exactly the `let`s and constant `def`s a pool's `cap` does).
    fn cost_of(&self, c: usize, load: Option<f64>, cost: &str) -> Result<Option<f64>, SearchError> {
        const POOL: &str = "__serq_cost";
        let line = format!("pool {POOL} {{ cap ({cost}); }}");
        match self.compile(c, load, Some(&line)) {
            Ok(p) => Ok(p.pools.iter().find(|p| p.name == POOL).map(|p| p.cap)),
            Err(SearchError::Compile { error, .. }) => {
                let why = match error.as_ref() {
                    CompileError::Diagnostics { diagnostics, .. } => {
                        let parts: Vec<String> = diagnostics
                            .iter()
                            .map(|d| match &d.help {
                                Some(h) => format!("{} ({h})", d.message),
                                None => d.message.clone(),
                            })
                            .collect();
                        parts.join("; ")
                    }
                    e => e.to_string(),
                };
                Err(SearchError::Usage(format!("--cost `{cost}`: {why}")))
            }
            Err(e) => Err(e),
        }
    }

    /// The probe rows' columns: the axes, the load, `replications`,
    /// `slo.attainment`, `slo.attainment.ci`, `slo.goodput`,
    /// `slo.goodput.ci`, `slo.requests`, `slo.unfinished`, `passed`
    /// (true, false, or empty/null for undecided).
    pub fn columns(&self) -> Vec<String> {
        let mut out = self.parameters.clone();
        out.extend(self.spec.load.iter().map(|l| l.name.clone()));
        for c in [
            "replications",
            "slo.attainment",
            "slo.attainment.ci",
            "slo.goodput",
            "slo.goodput.ci",
            "slo.requests",
            "slo.unfinished",
            "passed",
        ] {
            out.push(c.to_string());
        }
        out
    }

    /// A probe's row, one cell per column.
    pub fn row(&self, probe: &Probe) -> Vec<Cell> {
        let mut out: Vec<Cell> = self.points[probe.config]
            .iter()
            .map(|&v| Cell::Number(Some(v)))
            .collect();
        if self.spec.load.is_some() {
            out.push(Cell::Number(probe.load));
        }
        let s = &probe.slo;
        out.push(Cell::Number(Some(probe.replications as f64)));
        for x in [
            s.attainment.mean,
            s.attainment.ci,
            s.goodput.mean,
            s.goodput.ci,
            s.requests.mean,
            s.unfinished.mean,
        ] {
            out.push(Cell::Number(x));
        }
        out.push(Cell::Flag(probe.verdict.flag()));
        out
    }

    /// The CSV header line.
    pub fn csv_header(&self) -> String {
        let mut out = self.columns().join(",");
        out.push('\n');
        out
    }

    /// A probe's CSV line.
    pub fn csv_line(&self, probe: &Probe) -> String {
        csv_line(&self.row(probe))
    }

    /// A probe's JSON line.
    pub fn jsonl_line(&self, probe: &Probe) -> String {
        jsonl_line(&self.columns(), &self.row(probe))
    }

    /// The probes of a file an earlier run of this search wrote (CSV, or
    /// JSON lines when `jsonl`), to replay: their configuration and load
    /// are checked as they are replayed.
    pub fn read_probes(&self, text: &str, jsonl: bool) -> Result<Vec<Vec<Cell>>, String> {
        let columns = self.columns();
        if jsonl {
            read_jsonl(text, &columns)
        } else {
            read_csv(text, &columns)
        }
    }

    /// Runs the search. `replay` holds rows of an earlier run's probes
    /// (from [`SearchPlan::read_probes`]), taken in order instead of
    /// running; `on_probe` sees every probe as it is decided (replayed
    /// ones included, with `true`); `progress` is called after every
    /// replication with the probes done.
    pub fn run(
        &self,
        replay: Vec<Vec<Cell>>,
        progress: &(dyn Fn() + Sync),
        on_probe: &mut dyn FnMut(&Probe, bool),
    ) -> Result<SearchResult, SearchError> {
        let slo = &self.spec.slo;
        let local = |program: &ValidProgram, ks: std::ops::Range<usize>| {
            ks.into_par_iter()
                .map(|k| {
                    let r =
                        run_replication(program, k, self.spec.settings, Some(slo)).map(|report| {
                            // Run with the SLO's options: the marks are there.
                            slo.attainment(&report).unwrap_or(NO_REQUESTS)
                        });
                    progress();
                    r
                })
                .collect::<Vec<_>>()
        };
        self.run_with(replay, &local, on_probe)
    }

    /// [`SearchPlan::run`] with the replications run by `runner`: given a
    /// probe's program and the replication indices of a batch, it returns
    /// each replication's attainment of the plan's SLO, in index order
    /// (replication k on seed `program.seed + k`, run with
    /// [`Slo::run_options`]): what the Python package's executors do.
    pub fn run_with(
        &self,
        replay: Vec<Vec<Cell>>,
        runner: &Runner<'_>,
        on_probe: &mut dyn FnMut(&Probe, bool),
    ) -> Result<SearchResult, SearchError> {
        let mut state = State {
            plan: self,
            replay: replay.into_iter(),
            probes: Vec::new(),
            runs: 0,
            on_probe,
            runner,
        };
        let n = self.points.len();
        let mut configs: Vec<Config> = (0..n)
            .map(|c| Config {
                values: self.points[c].clone(),
                cost: self.costs[c],
                limit: None,
                verdict: None,
                slo: None,
                implied: false,
                cost_per_goodput: None,
            })
            .collect();
        let mut warnings = Vec::new();
        let best;
        if let Some(load) = &self.spec.load {
            // Each configuration's limit, in grid order; a monotone axis
            // carries a proven pass (fail) to the configurations above
            // (below) it.
            for c in 0..n {
                let mut known_pass: Option<f64> = None;
                let mut known_fail: Option<f64> = None;
                for (d, earlier) in configs.iter().enumerate().take(c) {
                    let Some((low, high)) = earlier.limit else {
                        continue;
                    };
                    if self.dominates(c, d) {
                        known_pass = max_opt(known_pass, low);
                    }
                    if self.dominates(d, c) {
                        known_fail = min_opt(known_fail, high);
                    }
                }
                let (limit, at_low) =
                    state.limit(c, load, known_pass, known_fail, &mut warnings)?;
                configs[c].limit = Some(limit);
                configs[c].slo = at_low;
                configs[c].cost_per_goodput = match (configs[c].cost, at_low) {
                    (Some(cost), Some(s)) => s.goodput.mean.filter(|g| *g > 0.0).map(|g| cost / g),
                    _ => None,
                };
            }
            // A frontier's answer is the configuration that serves its
            // limit at the least cost per unit of goodput (without a cost,
            // the highest limit); ties in grid order.
            best = (0..n)
                .filter(|&c| matches!(configs[c].limit, Some((Some(_), _))))
                .min_by(|&a, &b| {
                    let key = |c: usize| match configs[c].cost {
                        Some(_) => configs[c].cost_per_goodput.unwrap_or(f64::INFINITY),
                        None => -configs[c]
                            .limit
                            .and_then(|l| l.0)
                            .unwrap_or(f64::NEG_INFINITY),
                    };
                    key(a).total_cmp(&key(b)).then(a.cmp(&b))
                });
        } else {
            // In cost order (ties in grid order): the first cost level with
            // a pass holds the answer; dearer configurations are not run.
            let mut order: Vec<usize> = (0..n).collect();
            order.sort_by(|&a, &b| {
                configs[a]
                    .cost
                    .unwrap_or(0.0)
                    .total_cmp(&configs[b].cost.unwrap_or(0.0))
                    .then(a.cmp(&b))
            });
            let mut answer_cost: Option<f64> = None;
            for &c in &order {
                if let Some(cost) = answer_cost
                    && configs[c].cost.unwrap_or(0.0) > cost
                {
                    break;
                }
                // A verdict a monotone axis implies.
                let implied = (0..n).find_map(|d| {
                    let v = configs[d].verdict.filter(|_| !configs[d].implied)?;
                    match v {
                        Verdict::Pass if self.dominates(c, d) => Some(Verdict::Pass),
                        Verdict::Fail if self.dominates(d, c) => Some(Verdict::Fail),
                        _ => None,
                    }
                });
                let verdict = match implied {
                    Some(v) => {
                        configs[c].implied = true;
                        v
                    }
                    None => {
                        let probe = state.probe(c, None)?;
                        configs[c].slo = Some(probe.slo);
                        probe.verdict
                    }
                };
                configs[c].verdict = Some(verdict);
                configs[c].cost_per_goodput = match (configs[c].cost, configs[c].slo) {
                    (Some(cost), Some(s)) => s.goodput.mean.filter(|g| *g > 0.0).map(|g| cost / g),
                    _ => None,
                };
                if verdict == Verdict::Pass && answer_cost.is_none() {
                    answer_cost = Some(configs[c].cost.unwrap_or(0.0));
                }
            }
            // Ties: the higher attainment, then the earlier in grid order.
            best = order
                .iter()
                .copied()
                .filter(|&c| configs[c].verdict == Some(Verdict::Pass))
                .min_by(|&a, &b| {
                    let att = |c: usize| {
                        configs[c]
                            .slo
                            .and_then(|s| s.attainment.mean)
                            .unwrap_or(f64::NEG_INFINITY)
                    };
                    configs[a]
                        .cost
                        .unwrap_or(0.0)
                        .total_cmp(&configs[b].cost.unwrap_or(0.0))
                        .then(att(b).total_cmp(&att(a)))
                        .then(a.cmp(&b))
                });
        }
        if state.replay.next().is_some() {
            return Err(SearchError::Resume(
                "it holds more probes than this search makes".to_string(),
            ));
        }
        Ok(SearchResult {
            parameters: self.parameters.clone(),
            load: self.spec.load.as_ref().map(|l| l.name.clone()),
            configs,
            best,
            probes: state.probes,
            runs: state.runs,
            warnings,
        })
    }

    /// Whether configuration `a` is at least `b` on every monotone axis
    /// and equal on the others (so, the axes being monotone, it attains at
    /// least as much). False without a monotone axis.
    fn dominates(&self, a: usize, b: usize) -> bool {
        if self.spec.monotone.is_empty() || a == b {
            return false;
        }
        self.parameters.iter().enumerate().all(|(i, name)| {
            let (x, y) = (self.points[a][i], self.points[b][i]);
            if self.spec.monotone.contains(name) {
                x >= y
            } else {
                x == y
            }
        })
    }
}

fn max_opt(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

fn min_opt(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

/// A running search: the probes so far, what is left to replay.
struct State<'a, 'b> {
    plan: &'a SearchPlan,
    replay: std::vec::IntoIter<Vec<Cell>>,
    probes: Vec<Probe>,
    runs: usize,
    on_probe: &'b mut dyn FnMut(&Probe, bool),
    runner: &'b Runner<'b>,
}

impl State<'_, '_> {
    /// Probes configuration `c` at `load`: replayed from the file when it
    /// holds the next probe, else run.
    fn probe(&mut self, c: usize, load: Option<f64>) -> Result<Probe, SearchError> {
        let plan = self.plan;
        if let Some(row) = self.replay.next() {
            let probe = replayed(plan, c, load, &row, self.probes.len() + 1)?;
            (self.on_probe)(&probe, true);
            self.probes.push(probe.clone());
            return Ok(probe);
        }
        let program = plan.compile(c, load, None)?;
        let target = plan.spec.target;
        let mut runs: Vec<Attainment> = Vec::new();
        let probe = loop {
            let from = runs.len();
            let to = (from + BATCH).min(plan.spec.max_replications);
            let batch = (self.runner)(&program, from..to);
            if batch.len() != to - from {
                return Err(SearchError::Usage(format!(
                    "the runner gave {} replications for {}",
                    batch.len(),
                    to - from
                )));
            }
            for r in batch {
                runs.push(r.map_err(|error| SearchError::Run {
                    point: plan.sets(c, load),
                    error: Box::new(error),
                })?);
            }
            self.runs += to - from;
            let attained: Vec<Attainment> = runs.clone();
            let estimate = SloEstimate::of(&attained);
            let verdict = decide(&estimate.attainment, target);
            let n = runs.len();
            let verdict = match verdict {
                Some(v) => Some(v),
                None if n >= plan.spec.max_replications || estimate.attainment.n == 0 => {
                    Some(Verdict::Undecided)
                }
                None => None,
            };
            if let Some(verdict) = verdict {
                break Probe {
                    config: c,
                    load,
                    replications: n,
                    slo: estimate,
                    verdict,
                };
            }
        };
        (self.on_probe)(&probe, false);
        self.probes.push(probe.clone());
        Ok(probe)
    }

    /// The limit load of configuration `c`: bracketing (LO, then HI), then
    /// bisection to the relative tolerance. `known_pass` and `known_fail`
    /// are loads a monotone axis settles without a probe. Returns the
    /// interval and the SLO's figures at its low end.
    fn limit(
        &mut self,
        c: usize,
        load: &Load,
        known_pass: Option<f64>,
        known_fail: Option<f64>,
        warnings: &mut Vec<String>,
    ) -> Result<(Limit, Option<SloEstimate>), SearchError> {
        // (load, verdict, figures) of every probe of this configuration.
        let mut seen: Vec<(f64, Verdict, Option<SloEstimate>)> = Vec::new();
        let mut go = |state: &mut Self, x: f64| -> Result<bool, SearchError> {
            let p = state.probe(c, Some(x))?;
            seen.push((x, p.verdict, Some(p.slo)));
            Ok(match p.verdict {
                Verdict::Pass => true,
                Verdict::Fail => false,
                // Undecided: follow the estimate; the answer is widened.
                Verdict::Undecided => p
                    .slo
                    .attainment
                    .mean
                    .is_some_and(|m| m >= self_target(state)),
            })
        };
        let (mut lo, mut hi) = (load.lo, load.hi);
        let lo_ok = match known_pass {
            Some(p) if p >= lo => {
                lo = p;
                true
            }
            _ => go(self, lo)?,
        };
        let mut bracketed = lo_ok;
        if lo_ok {
            let hi_ok = match known_fail {
                Some(f) if f <= hi => {
                    hi = f;
                    false
                }
                _ => go(self, hi)?,
            };
            bracketed = !hi_ok;
            if hi_ok {
                lo = hi;
            }
        }
        if bracketed {
            // Relative to the bracket's top, which is never 0 when LO < HI
            // and both are loads (≥ 0).
            while hi - lo > self.plan.spec.tol * hi.abs().max(lo.abs()) {
                let mid = 0.5 * (lo + hi);
                if go(self, mid)? {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
        }
        if let Some(p) = known_pass {
            seen.push((p, Verdict::Pass, None));
        }
        if let Some(f) = known_fail {
            seen.push((f, Verdict::Fail, None));
        }
        let passes = seen.iter().filter(|s| s.1 == Verdict::Pass);
        let fails = seen.iter().filter(|s| s.1 == Verdict::Fail);
        let undecided: Vec<f64> = seen
            .iter()
            .filter(|s| s.1 == Verdict::Undecided)
            .map(|s| s.0)
            .collect();
        let max_pass = passes
            .clone()
            .map(|s| s.0)
            .fold(None, |a, x| max_opt(a, Some(x)));
        let min_fail = fails
            .clone()
            .map(|s| s.0)
            .fold(None, |a, x| min_opt(a, Some(x)));
        if let (Some(p), Some(f)) = (max_pass, min_fail)
            && p > f
        {
            warnings.push(format!(
                "at {}: {} = {p} passes where {f} failed: attainment does not fall with load here \
                 (the answer assumes it does)",
                describe(&self.plan.sets(c, None)),
                load.name
            ));
        }
        let min_undecided = undecided
            .iter()
            .copied()
            .fold(None, |a, x| min_opt(a, Some(x)));
        let max_undecided = undecided
            .iter()
            .copied()
            .fold(None, |a, x| max_opt(a, Some(x)));
        let low = max_pass.map(|p| min_opt(Some(p), min_undecided).unwrap_or(p));
        let high = min_fail.map(|f| max_opt(Some(f), max_undecided).unwrap_or(f));
        let at_low = low.and_then(|l| seen.iter().filter(|s| s.0 == l).find_map(|s| s.2));
        Ok(((low, high), at_low))
    }
}

fn self_target(state: &State<'_, '_>) -> f64 {
    state.plan.spec.target
}

/// The sequential rule: pass when the 95% interval lies at or above the
/// target, fail when below; `None` while it holds the target (or has
/// fewer than 3 replications with an attainment).
fn decide(attainment: &Estimate, target: f64) -> Option<Verdict> {
    if attainment.n < 3 {
        return None;
    }
    let (mean, ci) = (attainment.mean?, attainment.ci?);
    if mean - ci >= target {
        Some(Verdict::Pass)
    } else if mean + ci < target {
        Some(Verdict::Fail)
    } else {
        None
    }
}

/// A probe read back from a file, checked to be the one this search makes next.
fn replayed(
    plan: &SearchPlan,
    c: usize,
    load: Option<f64>,
    row: &[Cell],
    number: usize,
) -> Result<Probe, SearchError> {
    let k = plan.parameters.len();
    let values: Vec<Option<f64>> = row[..k].iter().map(|x| x.number()).collect();
    let expected: Vec<Option<f64>> = plan.points[c].iter().map(|&v| Some(v)).collect();
    let mut i = k;
    let found_load = if plan.spec.load.is_some() {
        i += 1;
        row[k].number()
    } else {
        None
    };
    if values != expected || found_load != load {
        let mut at = plan.sets(c, load);
        at.retain(|(n, _)| !plan.spec.at.iter().any(|(m, _)| m == n));
        return Err(SearchError::Resume(format!(
            "its probe {number} is not this search's next ({})",
            describe(&at)
        )));
    }
    let num = |j: usize| row.get(j).and_then(|x| x.number());
    let n = num(i).unwrap_or(0.0) as usize;
    let est = |mean: Option<f64>, ci: Option<f64>| Estimate { n, mean, ci };
    let slo = SloEstimate {
        attainment: est(num(i + 1), num(i + 2)),
        goodput: est(num(i + 3), num(i + 4)),
        requests: est(num(i + 5), None),
        unfinished: est(num(i + 6), None),
    };
    let verdict = match row.get(i + 7) {
        Some(Cell::Flag(Some(true))) => Verdict::Pass,
        Some(Cell::Flag(Some(false))) => Verdict::Fail,
        _ => Verdict::Undecided,
    };
    Ok(Probe {
        config: c,
        load,
        replications: n,
        slo,
        verdict,
    })
}

/// A number for a person: up to 4 significant decimals, `-` when undefined.
fn show(x: Option<f64>) -> String {
    match x.filter(|v| v.is_finite()) {
        Some(v) if v == v.round() && v.abs() < 1e15 => format!("{v}"),
        Some(v) => format!("{v:.4}"),
        None => "-".to_string(),
    }
}

/// `[low, high]` for a person.
fn show_limit(limit: (Option<f64>, Option<f64>)) -> String {
    let end = |x: Option<f64>| x.map_or("null".to_string(), |v| format!("{v:.4}"));
    format!("[{}, {}]", end(limit.0), end(limit.1))
}

/// A JSON number, or `null` when undefined.
fn json_number(x: Option<f64>) -> String {
    match x.filter(|v| v.is_finite()) {
        // An integral value as an integer (`{"ND": 4}`), as Python writes it.
        Some(v) if v.fract() == 0.0 && v.abs() < 9.0e15 => format!("{}", v as i64),
        Some(v) => serde_json::to_string(&v).unwrap_or_else(|_| "null".to_string()),
        None => "null".to_string(),
    }
}

/// A JSON object of already-serialised values, keys in the order given.
fn json_object(fields: &[(&str, String)]) -> String {
    let parts: Vec<String> = fields
        .iter()
        .map(|(k, v)| {
            // A string serialises infallibly.
            let key = serde_json::to_string(k).expect("a string serialises");
            format!("{key}:{v}")
        })
        .collect();
    format!("{{{}}}", parts.join(","))
}

/// The SLO's figures as a run's JSON has them (means across replications).
fn slo_json(s: Option<&SloEstimate>) -> String {
    match s {
        Some(s) => json_object(&[
            ("attainment", json_number(s.attainment.mean)),
            ("goodput", json_number(s.goodput.mean)),
            ("requests", json_number(s.requests.mean)),
            ("unfinished", json_number(s.unfinished.mean)),
        ]),
        None => "null".to_string(),
    }
}

fn limit_json(limit: (Option<f64>, Option<f64>)) -> String {
    format!("[{},{}]", json_number(limit.0), json_number(limit.1))
}

impl SearchResult {
    /// The configurations in the table's order: by cost (a load search
    /// without cost: by limit, highest first), the answer first, ties in
    /// grid order; those never probed last.
    pub fn ranked(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.configs.len()).collect();
        let key = |c: usize| {
            let k = &self.configs[c];
            let probed = k.limit.is_some() || k.verdict.is_some();
            let limit = k.limit.and_then(|l| l.0).unwrap_or(f64::NEG_INFINITY);
            (!probed, k.cost.unwrap_or(0.0), -limit)
        };
        order.sort_by(|&a, &b| {
            let (ka, kb) = (key(a), key(b));
            (Some(a) != self.best)
                .cmp(&(Some(b) != self.best))
                .then(ka.0.cmp(&kb.0))
                .then(ka.1.total_cmp(&kb.1))
                .then(ka.2.total_cmp(&kb.2))
                .then(a.cmp(&b))
        });
        order
    }

    /// Probes whose verdict stayed undecided.
    pub fn undecided(&self) -> usize {
        self.probes
            .iter()
            .filter(|p| p.verdict == Verdict::Undecided)
            .count()
    }

    fn values_json(&self, c: usize) -> Vec<(&str, String)> {
        self.parameters
            .iter()
            .map(String::as_str)
            .zip(self.configs[c].values.iter().map(|&v| json_number(Some(v))))
            .collect()
    }

    /// The result as one JSON object (docs/report.md, "search"): `target`;
    /// `slo_bounds`; for a load search `limit` (`[low, high]` of the answer,
    /// `null` where no probe passed or failed); with `--grid`, `best` (the
    /// answer's `let` values, `null` if none attains); `cost` and `slo` of
    /// the answer; with `--grid` and `--load`, `frontier` (every
    /// configuration searched: its values, `cost`, `limit`,
    /// `cost_per_goodput`, `slo`); with `--grid` at a fixed load,
    /// `configs` (every configuration probed: its values, `cost`,
    /// `verdict`, `slo`, `cost_per_goodput`); `probes`, `undecided`,
    /// `runs`; `warnings`.
    pub fn to_json(&self, spec: &SearchSpec) -> String {
        let bounds: Vec<String> = spec.slo.bounds.iter().map(|b| b.to_string()).collect();
        let mut fields: Vec<(&str, String)> = vec![
            ("target", json_number(Some(spec.target))),
            (
                "slo_bounds",
                serde_json::to_string(&bounds).expect("strings serialise"),
            ),
        ];
        let best = self.best.map(|b| &self.configs[b]);
        if self.load.is_some() {
            let limit = match (best, self.configs.first()) {
                (Some(b), _) => b.limit,
                // No configuration passed anywhere: the first one's limit
                // says where it failed.
                (None, Some(first)) if self.configs.len() == 1 => first.limit,
                _ => None,
            };
            fields.push(("limit", limit.map_or("[null,null]".to_string(), limit_json)));
        }
        if !self.parameters.is_empty() {
            let b = match self.best {
                Some(b) => json_object(&self.values_json(b)),
                None => "null".to_string(),
            };
            fields.push(("best", b));
        }
        fields.push(("cost", json_number(best.and_then(|b| b.cost))));
        fields.push((
            "slo",
            match (best, self.configs.len()) {
                (Some(b), _) => slo_json(b.slo.as_ref()),
                (None, 1) => slo_json(self.configs[0].slo.as_ref()),
                _ => "null".to_string(),
            },
        ));
        if !self.parameters.is_empty() {
            let rows: Vec<String> = self
                .ranked()
                .into_iter()
                .filter(|&c| self.configs[c].limit.is_some() || self.configs[c].verdict.is_some())
                .map(|c| {
                    let k = &self.configs[c];
                    let mut f = self.values_json(c);
                    f.push(("cost", json_number(k.cost)));
                    if let Some(l) = k.limit {
                        f.push(("limit", limit_json(l)));
                    }
                    if let Some(v) = k.verdict {
                        f.push(("verdict", format!("\"{}\"", v.word())));
                        f.push(("implied", k.implied.to_string()));
                    }
                    f.push(("cost_per_goodput", json_number(k.cost_per_goodput)));
                    f.push(("slo", slo_json(k.slo.as_ref())));
                    json_object(&f)
                })
                .collect();
            let key = if self.load.is_some() {
                "frontier"
            } else {
                "configs"
            };
            fields.push((key, format!("[{}]", rows.join(","))));
        }
        fields.push(("probes", self.probes.len().to_string()));
        fields.push(("undecided", self.undecided().to_string()));
        fields.push(("runs", self.runs.to_string()));
        fields.push((
            "warnings",
            serde_json::to_string(&self.warnings).expect("strings serialise"),
        ));
        json_object(&fields)
    }

    /// The result as a table for a person: a header, the answer, then one
    /// line per configuration probed, the answer first, then by cost.
    pub fn to_table(&self, spec: &SearchSpec, source_name: &str) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{source_name}  search: attainment >= {} of {}  ({} probes, {} undecided, {} runs)",
            spec.target,
            spec.slo.describe(),
            self.probes.len(),
            self.undecided(),
            self.runs
        );
        let name_of = |c: usize| -> String {
            let parts: Vec<String> = self
                .parameters
                .iter()
                .zip(&self.configs[c].values)
                .map(|(n, v)| format!("{n}={v}"))
                .collect();
            parts.join(" ")
        };
        match (self.best, &self.load) {
            (Some(b), Some(load)) => {
                let k = &self.configs[b];
                let _ = writeln!(
                    out,
                    "answer: {}{}{}limit {load} in {}{}",
                    name_of(b),
                    if self.parameters.is_empty() { "" } else { "  " },
                    k.cost
                        .map_or(String::new(), |c| format!("cost {}  ", show(Some(c)))),
                    show_limit(k.limit.unwrap_or((None, None))),
                    // A frontier's answer: the least cost per unit of goodput.
                    match (k.cost_per_goodput, self.configs.len() > 1) {
                        (Some(x), true) => format!("  cost/goodput {x:.4} (the least)"),
                        _ => String::new(),
                    }
                );
            }
            (Some(b), None) => {
                let k = &self.configs[b];
                let _ = writeln!(
                    out,
                    "answer: {}  {}attainment {}",
                    name_of(b),
                    k.cost
                        .map_or(String::new(), |c| format!("cost {}  ", show(Some(c)))),
                    show(k.slo.and_then(|s| s.attainment.mean))
                );
            }
            (None, Some(load)) => {
                let limit = self.configs.first().and_then(|k| k.limit);
                let _ = writeln!(
                    out,
                    "answer: no configuration attains the target at {load} >= {} {}",
                    spec.load.as_ref().map_or(0.0, |l| l.lo),
                    if self.configs.len() == 1 {
                        show_limit(limit.unwrap_or((None, None)))
                    } else {
                        String::new()
                    }
                );
            }
            (None, None) => {
                let _ = writeln!(out, "answer: no configuration attains the target");
            }
        }
        let mut header: Vec<String> = self.parameters.clone();
        if spec.cost.is_some() {
            header.push("cost".into());
        }
        if self.load.is_some() {
            header.push("limit".into());
        } else {
            header.push("verdict".into());
        }
        for h in ["attainment", "±ci", "goodput", "cost/goodput"] {
            header.push(h.into());
        }
        let mut rows = vec![header];
        for c in self.ranked() {
            let k = &self.configs[c];
            if k.limit.is_none() && k.verdict.is_none() {
                continue;
            }
            let mut row: Vec<String> = k.values.iter().map(|&v| show(Some(v))).collect();
            if spec.cost.is_some() {
                row.push(show(k.cost));
            }
            match (k.limit, k.verdict) {
                (Some(l), _) => row.push(show_limit(l)),
                (None, Some(v)) if k.implied => row.push(format!("{} (implied)", v.word())),
                (None, Some(v)) => row.push(v.word().to_string()),
                (None, None) => row.push("-".into()),
            }
            row.push(show(k.slo.and_then(|s| s.attainment.mean)));
            row.push(
                k.slo
                    .and_then(|s| s.attainment.ci)
                    .map_or("-".into(), |x| format!("±{x:.4}")),
            );
            row.push(show(k.slo.and_then(|s| s.goodput.mean)));
            row.push(show(k.cost_per_goodput));
            rows.push(row);
        }
        let widths: Vec<usize> = (0..rows[0].len())
            .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
            .collect();
        for r in &rows {
            let cells: Vec<String> = r
                .iter()
                .zip(&widths)
                .map(|(x, w)| format!("{x:>w$}"))
                .collect();
            let _ = writeln!(out, "{}", cells.join("  "));
        }
        let skipped = self
            .configs
            .iter()
            .filter(|k| k.limit.is_none() && k.verdict.is_none())
            .count();
        if skipped > 0 {
            let _ = writeln!(
                out,
                "({skipped} configurations dearer than the answer not run)"
            );
        }
        let implied = self.configs.iter().filter(|k| k.implied).count();
        if implied > 0 {
            let _ = writeln!(out, "({implied} verdicts implied by --monotone, not run)");
        }
        for w in &self.warnings {
            let _ = writeln!(out, "warning: {w}");
        }
        out
    }
}

/// Draws a search as SVG: for a load search of one configuration, or a
/// search at a fixed load, the attainment of every probe against the load
/// (or the first axis) with 95% bars and the target as a dashed line, one
/// line per configuration; for a frontier, each configuration's limit (its
/// low end) against the first axis, one line per value of the others.
pub fn plot_search(plan: &SearchPlan, result: &SearchResult) -> Result<String, super::PlotError> {
    let options = super::PlotOptions {
        target: Some(plan.spec.target),
        ..Default::default()
    };
    let probe_rows: Vec<Vec<Cell>> = result.probes.iter().map(|p| plan.row(p)).collect();
    let columns = plan.columns();
    match (&plan.spec.load, plan.parameters.first()) {
        (Some(load), Some(first)) if plan.points.len() > 1 => {
            // `lam.limit`: the y axis names the load.
            let y = format!("{}.limit", load.name);
            let mut columns = plan.parameters.clone();
            columns.push(y.clone());
            let rows: Vec<Vec<Cell>> = result
                .configs
                .iter()
                .map(|k| {
                    let mut row: Vec<Cell> =
                        k.values.iter().map(|&v| Cell::Number(Some(v))).collect();
                    row.push(Cell::Number(k.limit.and_then(|l| l.0)));
                    row
                })
                .collect();
            super::plot_rows(
                &plan.parameters,
                &columns,
                &rows,
                first,
                &y,
                super::PlotOptions::default(),
            )
        }
        (Some(load), _) => {
            let mut parameters = plan.parameters.clone();
            parameters.push(load.name.clone());
            super::plot_rows(
                &parameters,
                &columns,
                &probe_rows,
                &load.name,
                "slo.attainment",
                options,
            )
        }
        (None, Some(first)) => super::plot_rows(
            &plan.parameters,
            &columns,
            &probe_rows,
            first,
            "slo.attainment",
            options,
        ),
        (None, None) => Err(super::PlotError::NothingToDraw(
            "a search without --load or --grid has one probe".to_string(),
        )),
    }
}
