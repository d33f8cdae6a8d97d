//! A sweep as rows: its columns, one row per point, CSV and JSON lines,
//! and reading such a file back (to resume a sweep or plot it).
//!
//! Invariant: the columns are a pure function of the compiled programs of
//! the grid's points in grid order and of the [`Fold`] asked for (never of
//! a hash map, of which thread ran what, or of the results), so they are
//! known before the first run and one grid and one seed give one file,
//! row by row.

use super::replicate::{Estimate, ObservationEstimate, Replicated, SloEstimate};
use crate::report::{Fold, Spread};
use crate::{Program, ValidProgram};

/// What a column holds.
#[derive(Clone, Debug, PartialEq)]
enum Column {
    /// The value of axis i.
    Parameter(usize),
    /// The replications per point.
    Replications,
    /// Whether the point's replications are stable.
    Stable,
    /// The point's stability verdict: `steady`, `transient` or `overloaded`.
    Stability,
    /// The point's warnings, counted ([`Replicated::warnings`]).
    Warnings,
    /// An observation's figure (its mean or a percentile) across
    /// replications, or that figure's 95% half-width.
    Observed(String, Figure, Part),
    /// A stage member's mean utilisation.
    Utilization(String, Option<usize>),
    /// A folded stage family's utilisation: the mean, least or greatest
    /// over its members of each member's mean utilisation.
    FamilyUtilization(String, Extent),
    /// An SLO figure across replications (its mean, or its half-width).
    Slo(SloFigure, Part),
}

/// An SLO figure in the rows.
#[derive(Clone, Copy, Debug, PartialEq)]
enum SloFigure {
    Attainment,
    Goodput,
    Requests,
    Unfinished,
}

impl SloFigure {
    fn of(self, s: &SloEstimate) -> &Estimate {
        match self {
            SloFigure::Attainment => &s.attainment,
            SloFigure::Goodput => &s.goodput,
            SloFigure::Requests => &s.requests,
            SloFigure::Unfinished => &s.unfinished,
        }
    }

    fn word(self) -> &'static str {
        match self {
            SloFigure::Attainment => "attainment",
            SloFigure::Goodput => "goodput",
            SloFigure::Requests => "requests",
            SloFigure::Unfinished => "unfinished",
        }
    }
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

/// Which figure of a [`Spread`] over a folded family's members a column holds.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Extent {
    Mean,
    Min,
    Max,
}

impl Extent {
    fn of(self, s: &Spread) -> Option<f64> {
        match self {
            Extent::Mean => s.mean,
            Extent::Min => s.min,
            Extent::Max => s.max,
        }
    }
}

/// The estimate's value, or its half-width.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Part {
    Value,
    Ci,
}

/// One cell of a row: a number, a flag or a word, each possibly undefined.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Cell {
    /// A figure (`None`: undefined, an empty CSV cell or `null`).
    Number(Option<f64>),
    /// A yes/no figure (`stable`; `None`: not judged).
    Flag(Option<bool>),
    /// A word of a fixed vocabulary (`stability`: `steady`, `transient`
    /// or `overloaded`; `None`: not judged): bare in CSV, a string in JSON.
    Word(Option<&'static str>),
}

/// The words of the `stability` column ([`crate::report::Verdict::name`]).
const STABILITY_WORDS: [&str; 3] = ["steady", "transient", "overloaded"];

impl Cell {
    /// The number, if the cell holds a defined one.
    pub fn number(self) -> Option<f64> {
        match self {
            Cell::Number(x) => x.filter(|v| v.is_finite()),
            Cell::Flag(_) | Cell::Word(_) => None,
        }
    }

    /// The word, if the cell holds one.
    pub fn word(self) -> Option<&'static str> {
        match self {
            Cell::Word(w) => w,
            Cell::Number(_) | Cell::Flag(_) => None,
        }
    }

    /// The cell as CSV writes it; `None` when undefined.
    fn text(self) -> Option<String> {
        match self {
            // Rust's shortest round-trip decimal (`2`, `0.5`), the same in CSV and JSON.
            Cell::Number(x) => x.filter(|v| v.is_finite()).map(|v| format!("{v}")),
            Cell::Flag(b) => b.map(|b| b.to_string()),
            Cell::Word(w) => w.map(str::to_string),
        }
    }

    /// The cell as a JSON value; `None` when undefined.
    fn json(self) -> Option<String> {
        match self {
            // A vocabulary word needs no escaping.
            Cell::Word(w) => w.map(|w| format!("\"{w}\"")),
            other => other.text(),
        }
    }
}

/// What a column named `name` holds, for reading a file back.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Number,
    Flag,
    Word(&'static [&'static str]),
}

impl Kind {
    /// The kind of the column `name` (`passed`: a search's probe rows).
    fn of(name: &str) -> Kind {
        match name {
            "stable" | "passed" => Kind::Flag,
            "stability" => Kind::Word(&STABILITY_WORDS),
            _ => Kind::Number,
        }
    }
}

/// `name[i]` for an array member, `name` otherwise.
fn member_name(name: &str, member: Option<usize>) -> String {
    match member {
        Some(i) => format!("{name}[{i}]"),
        None => name.to_string(),
    }
}

/// The stage families of a program: (name, members), in declaration order.
fn stage_families(program: &Program) -> Vec<(String, usize)> {
    let mut out: Vec<(String, usize)> = Vec::new();
    for stage in &program.stages {
        match out.last_mut() {
            Some((name, count)) if *name == stage.name => *count += 1,
            _ => out.push((stage.name.clone(), 1)),
        }
    }
    out
}

/// The stage members of a program: (family name, index when the family
/// has several members), as the report names them.
fn stage_members(program: &Program) -> Vec<(String, Option<usize>)> {
    let names: Vec<&str> = program.stages.iter().map(|s| s.name.as_str()).collect();
    let mut out = Vec::with_capacity(names.len());
    let mut start = 0;
    while start < names.len() {
        let n = names[start..]
            .iter()
            .take_while(|&&x| x == names[start])
            .count();
        for k in 0..n {
            out.push((names[start].to_string(), (n > 1).then_some(k)));
        }
        start += n;
    }
    out
}

/// The columns of a sweep's rows, decided from its points' programs.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Layout {
    parameters: Vec<String>,
    columns: Vec<Column>,
    /// Families with several members at some point (their lone member
    /// elsewhere is `[0]`).
    arrays: Vec<String>,
}

impl Layout {
    /// The layout of a sweep over `parameters` whose points compile to
    /// `programs`, in grid order; `slo`: whether its points measure an SLO
    /// (its six columns follow `warnings`); `fold`: which stage families
    /// are three columns (`D.util`, `D.util.min`, `D.util.max`) instead of
    /// one per member, judged on each family's largest size over the
    /// points, so one header holds for every row.
    pub(crate) fn of(
        parameters: &[String],
        programs: &[ValidProgram],
        slo: bool,
        fold: Fold,
    ) -> Layout {
        let mut observations: Vec<String> = Vec::new();
        let mut arrays: Vec<String> = Vec::new();
        // (family, its largest size over the points), in order of first appearance.
        let mut sizes: Vec<(String, usize)> = Vec::new();
        for program in programs {
            for (name, count) in stage_families(program) {
                if count > 1 && !arrays.contains(&name) {
                    arrays.push(name.clone());
                }
                match sizes.iter_mut().find(|(n, _)| *n == name) {
                    Some((_, largest)) => *largest = (*largest).max(count),
                    None => sizes.push((name, count)),
                }
            }
        }
        let folded = |name: &str| {
            sizes
                .iter()
                .any(|(n, largest)| n == name && fold.folds(*largest))
        };
        // Stage members grouped by family in order of first appearance; a
        // member first seen at a later point (a larger `D[ND]`) goes after
        // its family's last member seen so far. A folded family is one
        // entry, `None`.
        let mut members: Vec<(String, Option<usize>)> = Vec::new();
        for program in programs {
            for o in &program.observes {
                if !observations.contains(o) {
                    observations.push(o.clone());
                }
            }
            for (name, member) in stage_members(program) {
                let member = match folded(&name) {
                    true => None,
                    false => member_of(&arrays, &name, member),
                };
                let key = (name.clone(), member);
                if members.contains(&key) {
                    continue;
                }
                match members.iter().rposition(|(n, _)| *n == name) {
                    Some(last) => members.insert(last + 1, key),
                    None => members.push(key),
                }
            }
        }
        let mut columns: Vec<Column> = (0..parameters.len()).map(Column::Parameter).collect();
        columns.push(Column::Replications);
        columns.push(Column::Stable);
        columns.push(Column::Stability);
        columns.push(Column::Warnings);
        if slo {
            for (figure, ci) in [
                (SloFigure::Attainment, true),
                (SloFigure::Goodput, true),
                (SloFigure::Requests, false),
                (SloFigure::Unfinished, false),
            ] {
                columns.push(Column::Slo(figure, Part::Value));
                if ci {
                    columns.push(Column::Slo(figure, Part::Ci));
                }
            }
        }
        for name in observations {
            for figure in Figure::ALL {
                columns.push(Column::Observed(name.clone(), figure, Part::Value));
                columns.push(Column::Observed(name.clone(), figure, Part::Ci));
            }
        }
        for (name, member) in members {
            if folded(&name) {
                for extent in [Extent::Mean, Extent::Min, Extent::Max] {
                    columns.push(Column::FamilyUtilization(name.clone(), extent));
                }
            } else {
                columns.push(Column::Utilization(name, member));
            }
        }
        Layout {
            parameters: parameters.to_vec(),
            columns,
            arrays,
        }
    }

    /// The column names, in order.
    pub(crate) fn names(&self) -> Vec<String> {
        self.columns
            .iter()
            .map(|c| match c {
                Column::Parameter(i) => self.parameters[*i].clone(),
                Column::Replications => "replications".to_string(),
                Column::Stable => "stable".to_string(),
                Column::Stability => "stability".to_string(),
                Column::Warnings => "warnings".to_string(),
                Column::Observed(name, Figure::Mean, Part::Ci) => format!("{name}.ci"),
                Column::Observed(name, figure, Part::Value) => format!("{name}.{}", figure.word()),
                Column::Observed(name, figure, Part::Ci) => format!("{name}.{}_ci", figure.word()),
                Column::Utilization(name, member) => format!("{}.util", member_name(name, *member)),
                Column::FamilyUtilization(name, Extent::Mean) => format!("{name}.util"),
                Column::FamilyUtilization(name, Extent::Min) => format!("{name}.util.min"),
                Column::FamilyUtilization(name, Extent::Max) => format!("{name}.util.max"),
                Column::Slo(figure, Part::Value) => format!("slo.{}", figure.word()),
                Column::Slo(figure, Part::Ci) => format!("slo.{}.ci", figure.word()),
            })
            .collect()
    }

    /// The observations' names, in column order.
    pub(crate) fn observations(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for c in &self.columns {
            if let Column::Observed(name, ..) = c
                && !out.contains(name)
            {
                out.push(name.clone());
            }
        }
        out
    }

    /// The row of a point: its axis values and what its replications measured.
    pub(crate) fn row(&self, values: &[f64], result: &Replicated) -> Vec<Cell> {
        self.columns
            .iter()
            .map(|c| match c {
                Column::Parameter(i) => Cell::Number(values.get(*i).copied()),
                Column::Replications => Cell::Number(Some(result.seeds.len() as f64)),
                Column::Stable => Cell::Flag(result.is_stable()),
                Column::Stability => {
                    Cell::Word(result.stability.as_ref().map(|s| s.verdict.name()))
                }
                Column::Warnings => Cell::Number(Some(
                    result.warnings("").iter().map(|w| w.count).sum::<u64>() as f64,
                )),
                Column::Observed(name, figure, part) => Cell::Number(
                    result
                        .observations
                        .iter()
                        .find(|o| o.name == *name)
                        .and_then(|o| {
                            let e = figure.of(o);
                            match part {
                                Part::Value => e.mean,
                                Part::Ci => e.ci,
                            }
                        }),
                ),
                Column::Utilization(name, member) => Cell::Number(
                    result
                        .stages
                        .iter()
                        .find(|s| {
                            s.name == *name && member_of(&self.arrays, name, s.member) == *member
                        })
                        .and_then(|s| s.utilization.mean),
                ),
                Column::FamilyUtilization(name, extent) => {
                    let members = result.stages.iter().filter(|s| s.name == *name);
                    Cell::Number(extent.of(&Spread::of(members.map(|s| s.utilization.mean))))
                }
                Column::Slo(figure, part) => Cell::Number(result.slo.as_ref().and_then(|s| {
                    let e = figure.of(s);
                    match part {
                        Part::Value => e.mean,
                        Part::Ci => e.ci,
                    }
                })),
            })
            .collect()
    }

    /// The CSV header line.
    pub(crate) fn csv_header(&self) -> String {
        let mut out = self.names().join(",");
        out.push('\n');
        out
    }
}

/// The column index of a stage member: a family of one member has
/// member `None` in its report, but where the same family has several
/// members at another point (an array sized by an axis, `D[ND]` with
/// ND = 1), that lone member is `[0]`.
fn member_of(arrays: &[String], name: &str, member: Option<usize>) -> Option<usize> {
    match member {
        None if arrays.iter().any(|a| a == name) => Some(0),
        m => m,
    }
}

/// One row as a CSV line: an undefined cell empty. Names are identifiers,
/// so nothing needs quoting.
pub(crate) fn csv_line(row: &[Cell]) -> String {
    let cells: Vec<String> = row.iter().map(|c| c.text().unwrap_or_default()).collect();
    let mut out = cells.join(",");
    out.push('\n');
    out
}

/// One row as a JSON line keyed by the column names, in column order; an
/// undefined cell `null`.
pub(crate) fn jsonl_line(columns: &[String], row: &[Cell]) -> String {
    let fields: Vec<String> = columns
        .iter()
        .zip(row)
        .map(|(name, c)| {
            // A string serialises infallibly.
            let key = serde_json::to_string(name).expect("a string serialises");
            format!("{key}:{}", c.json().unwrap_or_else(|| "null".to_string()))
        })
        .collect();
    format!("{{{}}}\n", fields.join(","))
}

/// Reads the rows of a CSV file this module wrote, given its columns: the
/// header must be exactly theirs. A line is one row; an incomplete last
/// line (no newline) is left out.
pub(crate) fn read_csv(text: &str, columns: &[String]) -> Result<Vec<Vec<Cell>>, String> {
    let mut lines = text.split_inclusive('\n').filter(|l| l.ends_with('\n'));
    let header = columns.join(",");
    match lines.next() {
        None => return Ok(Vec::new()),
        Some(h) if h.trim_end_matches('\n') == header => {}
        Some(h) => {
            let found: Vec<&str> = h.trim_end_matches(['\n', '\r']).split(',').collect();
            return Err(format!(
                "its header is not this sweep's: {}",
                first_difference(&found, columns)
            ));
        }
    }
    let mut rows = Vec::new();
    for (i, line) in lines.enumerate() {
        let cells: Vec<&str> = line.trim_end_matches('\n').split(',').collect();
        if cells.len() != columns.len() {
            return Err(format!(
                "row {} has {} cells, not {}",
                i + 1,
                cells.len(),
                columns.len()
            ));
        }
        let row = cells
            .iter()
            .zip(columns)
            .map(|(text, name)| parse_cell(text, Kind::of(name)))
            .collect::<Result<Vec<Cell>, String>>()
            .map_err(|e| format!("row {}: {e}", i + 1))?;
        rows.push(row);
    }
    Ok(rows)
}

/// Reads the rows of a JSON-lines file this module wrote, given its
/// columns: every line an object with exactly those keys. An incomplete
/// last line (no newline) is left out.
pub(crate) fn read_jsonl(text: &str, columns: &[String]) -> Result<Vec<Vec<Cell>>, String> {
    let mut rows = Vec::new();
    for (i, line) in text
        .split_inclusive('\n')
        .filter(|l| l.ends_with('\n'))
        .enumerate()
    {
        let value: serde_json::Value =
            serde_json::from_str(line).map_err(|e| format!("line {} is not JSON: {e}", i + 1))?;
        let Some(object) = value.as_object() else {
            return Err(format!("line {} is not a row of this sweep", i + 1));
        };
        // A JSON object's keys have no order to compare: name the first of
        // this sweep's columns it lacks, or else a key it has beyond them.
        if let Some(missing) = columns.iter().find(|c| !object.contains_key(c.as_str())) {
            return Err(format!(
                "line {} is not a row of this sweep: it has no `{missing}`",
                i + 1
            ));
        }
        if let Some(extra) = object.keys().find(|k| !columns.contains(k)) {
            return Err(format!(
                "line {} is not a row of this sweep: it has `{extra}`, which this sweep has not",
                i + 1
            ));
        }
        let mut row = Vec::with_capacity(columns.len());
        for name in columns {
            let cell = match (object.get(name), Kind::of(name)) {
                (None, _) => return Err(format!("line {} has no `{name}`", i + 1)),
                (Some(serde_json::Value::Null), Kind::Flag) => Cell::Flag(None),
                (Some(serde_json::Value::Null), Kind::Word(_)) => Cell::Word(None),
                (Some(serde_json::Value::Null), Kind::Number) => Cell::Number(None),
                (Some(serde_json::Value::Bool(b)), _) => Cell::Flag(Some(*b)),
                (Some(serde_json::Value::String(w)), Kind::Word(words)) => {
                    parse_cell(w, Kind::Word(words)).map_err(|e| format!("line {}: {e}", i + 1))?
                }
                (Some(v), _) => match v.as_f64() {
                    Some(x) => Cell::Number(Some(x)),
                    None => return Err(format!("line {}: `{name}` is not a number", i + 1)),
                },
            };
            row.push(cell);
        }
        rows.push(row);
    }
    Ok(rows)
}

/// Where the columns a file has (`found`) first part from this sweep's
/// (`expected`): one column named, not both whole headers (a thousand
/// stage members make a header of 24 KB).
fn first_difference(found: &[&str], expected: &[String]) -> String {
    let at = found
        .iter()
        .zip(expected)
        .position(|(f, e)| f != e)
        .unwrap_or(found.len().min(expected.len()));
    match (found.get(at), expected.get(at)) {
        (Some(f), Some(e)) => format!("column {} is `{f}`, where this sweep has `{e}`", at + 1),
        (None, Some(e)) => format!(
            "it ends after {} columns, where this sweep goes on with `{e}`",
            found.len()
        ),
        (Some(f), None) => format!(
            "it has {} columns, this sweep {}: the first extra one is `{f}`",
            found.len(),
            expected.len()
        ),
        (None, None) => "it has the same columns".to_string(),
    }
}

/// A CSV cell as [`Cell::text`] wrote it, in a column of `kind`.
fn parse_cell(text: &str, kind: Kind) -> Result<Cell, String> {
    match (text, kind) {
        ("", Kind::Flag) => Ok(Cell::Flag(None)),
        ("", Kind::Word(_)) => Ok(Cell::Word(None)),
        ("", Kind::Number) => Ok(Cell::Number(None)),
        ("true", Kind::Flag) => Ok(Cell::Flag(Some(true))),
        ("false", Kind::Flag) => Ok(Cell::Flag(Some(false))),
        (t, Kind::Number) => t
            .parse::<f64>()
            .map(|x| Cell::Number(Some(x)))
            .map_err(|_| format!("`{t}` is not a number")),
        (t, Kind::Flag) => Err(format!("`{t}` is not true or false")),
        (t, Kind::Word(words)) => match words.iter().find(|&&w| w == t) {
            Some(w) => Ok(Cell::Word(Some(w))),
            None => Err(format!("`{t}` is not one of {}", words.join(", "))),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Verdict;

    #[test]
    fn the_stability_words_are_the_verdicts_names() {
        let names = [Verdict::Steady, Verdict::Transient, Verdict::Overloaded].map(Verdict::name);
        assert_eq!(names, STABILITY_WORDS);
    }

    #[test]
    fn a_stability_cell_outside_the_vocabulary_is_refused_naming_the_words() {
        let columns = ["replications".to_string(), "stability".to_string()];
        let rows = read_csv("replications,stability\n2,overloaded\n3,\n", &columns).unwrap();
        assert_eq!(rows[0][1], Cell::Word(Some("overloaded")));
        assert_eq!(rows[1][1], Cell::Word(None));
        let e = read_csv("replications,stability\n2,calm\n", &columns).unwrap_err();
        assert_eq!(
            e,
            "row 1: `calm` is not one of steady, transient, overloaded"
        );
        let e = read_jsonl("{\"replications\":2,\"stability\":\"calm\"}\n", &columns).unwrap_err();
        assert_eq!(
            e,
            "line 1: `calm` is not one of steady, transient, overloaded"
        );
    }
}
