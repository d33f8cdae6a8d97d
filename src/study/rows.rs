//! A sweep as rows: its columns, CSV and JSON lines.
//!
//! Invariant: the column order is a pure function of the sweep's points in
//! their order (never of a hash map or of which thread ran what), so one
//! grid and one seed give one file.

use super::replicate::{Estimate, ObservationEstimate};
use super::sweep::Sweep;

/// What a column holds.
#[derive(Clone, Debug, PartialEq)]
enum Column {
    /// The value of axis i.
    Parameter(usize),
    /// The replications per point.
    Replications,
    /// An observation's figure (its mean or a percentile) across
    /// replications, or that figure's 95% half-width.
    Observed(String, Figure, Part),
    /// A stage member's mean utilisation.
    Utilization(String, Option<usize>),
}

/// An observation's figure in the rows.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Figure {
    Mean,
    P50,
    P90,
    P99,
}

impl Figure {
    const ALL: [Figure; 4] = [Figure::Mean, Figure::P50, Figure::P90, Figure::P99];

    fn word(self) -> &'static str {
        match self {
            Figure::Mean => "mean",
            Figure::P50 => "p50",
            Figure::P90 => "p90",
            Figure::P99 => "p99",
        }
    }

    fn of(self, o: &ObservationEstimate) -> &Estimate {
        match self {
            Figure::Mean => &o.mean,
            Figure::P50 => &o.p50,
            Figure::P90 => &o.p90,
            Figure::P99 => &o.p99,
        }
    }
}

/// The estimate's value, or its half-width.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Part {
    Value,
    Ci,
}

/// `name[i]` for an array member, `name` otherwise.
fn member_name(name: &str, member: Option<usize>) -> String {
    match member {
        Some(i) => format!("{name}[{i}]"),
        None => name.to_string(),
    }
}

/// A number as Rust's shortest round-trip decimal (`2`, `0.5`), the same
/// in CSV and JSON; `None` when not finite.
fn number(x: Option<f64>) -> Option<String> {
    x.filter(|v| v.is_finite()).map(|v| format!("{v}"))
}

impl Sweep {
    fn layout(&self) -> Vec<Column> {
        let mut observations: Vec<String> = Vec::new();
        // Stage members grouped by family in order of first appearance; a
        // member first seen at a later point (a larger `D[ND]`) goes after
        // its family's last member seen so far.
        let mut members: Vec<(String, Option<usize>)> = Vec::new();
        for point in &self.points {
            for o in &point.result.observations {
                if !observations.contains(&o.name) {
                    observations.push(o.name.clone());
                }
            }
            for s in &point.result.stages {
                let key = (s.name.clone(), self.member_of(&s.name, s.member));
                if members.contains(&key) {
                    continue;
                }
                match members.iter().rposition(|(n, _)| *n == s.name) {
                    Some(last) => members.insert(last + 1, key),
                    None => members.push(key),
                }
            }
        }
        let mut columns: Vec<Column> = (0..self.parameters.len()).map(Column::Parameter).collect();
        columns.push(Column::Replications);
        for name in observations {
            for figure in Figure::ALL {
                columns.push(Column::Observed(name.clone(), figure, Part::Value));
                columns.push(Column::Observed(name.clone(), figure, Part::Ci));
            }
        }
        columns.extend(members.into_iter().map(|(n, m)| Column::Utilization(n, m)));
        columns
    }

    /// The column index of a stage member: a family of one member has
    /// member `None` in its report, but where the same family has several
    /// members at another point (an array sized by an axis, `D[ND]` with
    /// ND = 1), that lone member is `[0]`.
    fn member_of(&self, name: &str, member: Option<usize>) -> Option<usize> {
        let is_array = || {
            self.points.iter().any(|p| {
                p.result
                    .stages
                    .iter()
                    .any(|s| s.name == name && s.member.is_some())
            })
        };
        match member {
            None if is_array() => Some(0),
            m => m,
        }
    }

    /// The column names, in order: each axis's name (in axis order);
    /// `replications`; for each observation (in program order) `NAME.mean`
    /// and `NAME.ci` (the mean across replications and its 95% half-width),
    /// then `NAME.p50`, `NAME.p50_ci`, `NAME.p90`, `NAME.p90_ci`,
    /// `NAME.p99`, `NAME.p99_ci` (each replication's nearest-rank
    /// percentile, estimated in the same way); for each stage member (families
    /// in declaration order, members by index) `STAGE.util` or
    /// `STAGE[i].util`, the mean utilisation. Members that exist at some
    /// points only (an array sized by an axis) have a column all the same,
    /// empty where the member does not exist; an array of one member at
    /// some point is its `[0]` (`s[N]` with N = 1 fills `s[0].util`).
    ///
    /// ```
    /// use serq::study::{Axis, sweep};
    /// let source = "let N = 1; let d = 1;
    ///               stage s[N] : delay;
    ///               workload { arrive batch(1); }
    ///               session { run s[0] (d); observe response = now; }
    ///               run { horizon 10; }";
    /// let axes = [Axis::parse("d=1,2").unwrap(), Axis::parse("N=1,2").unwrap()];
    /// let result = sweep(source, &Default::default(), &axes, 1, &|| {}).unwrap();
    /// assert_eq!(result.columns(), ["d", "N", "replications", "response.mean",
    ///     "response.ci", "response.p50", "response.p50_ci", "response.p90",
    ///     "response.p90_ci", "response.p99", "response.p99_ci", "s[0].util", "s[1].util"]);
    /// ```
    pub fn columns(&self) -> Vec<String> {
        self.layout()
            .iter()
            .map(|c| match c {
                Column::Parameter(i) => self.parameters[*i].clone(),
                Column::Replications => "replications".to_string(),
                Column::Observed(name, Figure::Mean, Part::Ci) => format!("{name}.ci"),
                Column::Observed(name, figure, Part::Value) => format!("{name}.{}", figure.word()),
                Column::Observed(name, figure, Part::Ci) => format!("{name}.{}_ci", figure.word()),
                Column::Utilization(name, member) => format!("{}.util", member_name(name, *member)),
            })
            .collect()
    }

    /// One row per point (first axis varying slowest), one cell per
    /// column of [`Sweep::columns`]; `None` where a figure is undefined (a
    /// CI of one replication, an observation without samples, a member the
    /// point lacks).
    ///
    /// ```
    /// use serq::study::{Axis, sweep};
    /// let source = "let d = 1; stage s : delay; workload { arrive batch(1); }
    ///               session { run s (d); observe response = now; } run { horizon 10; }";
    /// let axes = [Axis::parse("d=1,2").unwrap()];
    /// let result = sweep(source, &Default::default(), &axes, 3, &|| {}).unwrap();
    /// // d, replications, response's mean, p50, p90, p99 (each 2, deterministic:
    /// // a CI of 0), s.util (d/10).
    /// let two = [Some(2.0), Some(0.0)];
    /// let expected: Vec<_> = [Some(2.0), Some(3.0)].into_iter()
    ///     .chain(two.repeat(4)).chain([Some(0.2)]).collect();
    /// assert_eq!(result.rows()[1], expected);
    /// ```
    pub fn rows(&self) -> Vec<Vec<Option<f64>>> {
        let layout = self.layout();
        self.points
            .iter()
            .map(|p| {
                let r = &p.result;
                layout
                    .iter()
                    .map(|c| match c {
                        Column::Parameter(i) => p.values.get(*i).copied(),
                        Column::Replications => Some(self.replications as f64),
                        Column::Observed(name, figure, part) => {
                            let o = r.observations.iter().find(|o| o.name == *name)?;
                            let e = figure.of(o);
                            match part {
                                Part::Value => e.mean,
                                Part::Ci => e.ci,
                            }
                        }
                        Column::Utilization(name, member) => r
                            .stages
                            .iter()
                            .find(|s| s.name == *name && self.member_of(name, s.member) == *member)
                            .and_then(|s| s.utilization.mean),
                    })
                    .collect()
            })
            .collect()
    }

    /// The sweep as CSV: a header of [`Sweep::columns`], then
    /// [`Sweep::rows`]; numbers in shortest round-trip form, an undefined
    /// cell empty. Names are identifiers, so nothing needs quoting.
    ///
    /// ```
    /// use serq::study::{Axis, sweep};
    /// let source = "let d = 1; stage s : delay; workload { arrive batch(1); }
    ///               session { run s (d); observe response = now; } run { horizon 10; }";
    /// let axes = [Axis::parse("d=1,2").unwrap()];
    /// let csv = sweep(source, &Default::default(), &axes, 1, &|| {}).unwrap().to_csv();
    /// // One replication: no CI.
    /// assert_eq!(csv, "d,replications,response.mean,response.ci,response.p50,response.p50_ci,\
    ///                  response.p90,response.p90_ci,response.p99,response.p99_ci,s.util\n\
    ///                  1,1,1,,1,,1,,1,,0.1\n\
    ///                  2,1,2,,2,,2,,2,,0.2\n");
    /// ```
    pub fn to_csv(&self) -> String {
        let mut out = self.columns().join(",");
        out.push('\n');
        for row in self.rows() {
            let cells: Vec<String> = row
                .into_iter()
                .map(|x| number(x).unwrap_or_default())
                .collect();
            out.push_str(&cells.join(","));
            out.push('\n');
        }
        out
    }

    /// The sweep as JSON lines: one object per row, keyed by the column
    /// names in column order, an undefined cell `null`.
    ///
    /// ```
    /// use serq::study::{Axis, sweep};
    /// let source = "let d = 1; stage s : delay; workload { arrive batch(1); }
    ///               session { run s (d); observe response = now; } run { horizon 10; }";
    /// let axes = [Axis::parse("d=2").unwrap()];
    /// let jsonl = sweep(source, &Default::default(), &axes, 1, &|| {}).unwrap().to_jsonl();
    /// assert!(jsonl.starts_with("{\"d\":2,\"replications\":1,\"response.mean\":2,\
    ///                    \"response.ci\":null,\"response.p50\":2,\"response.p50_ci\":null,"));
    /// assert!(jsonl.ends_with(",\"response.p99_ci\":null,\"s.util\":0.2}\n"));
    /// ```
    pub fn to_jsonl(&self) -> String {
        let columns = self.columns();
        let mut out = String::new();
        for row in self.rows() {
            let fields: Vec<String> = columns
                .iter()
                .zip(row)
                .map(|(name, x)| {
                    // A string serialises infallibly.
                    let key = serde_json::to_string(name).expect("a string serialises");
                    format!("{key}:{}", number(x).unwrap_or_else(|| "null".to_string()))
                })
                .collect();
            out.push('{');
            out.push_str(&fields.join(","));
            out.push_str("}\n");
        }
        out
    }
}
