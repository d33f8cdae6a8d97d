//! The warnings a run gives, in one place: computed amounts that went
//! negative (spec §10 Q13) and the stability verdict (docs/report.md §2.1),
//! one per point.
//! Every output (the JSON report's `"warnings"` array, stderr, a sweep
//! row's `warnings` column) reads [`Report::warnings`].
//!
//! Architecture invariant: the engine fills [`NegativeAmounts`] with raw
//! figures; the wording is made here.

use super::{Growing, Report, Stability, TREND_T, Verdict};

/// Computed amounts (a run's work, a hold's units or reserve, a `grow`, a
/// `load`) that were negative and were taken as the reference takes them
/// (work ≤ 0 completes at once, units < 0 allocate 0, grow and load ≤ 0
/// add nothing), over the whole run.
#[derive(Clone, Debug, PartialEq)]
pub struct NegativeAmounts {
    /// How many amounts were negative.
    pub count: u64,
    /// What the first one was (`the run's work`, `the hold's units`, …).
    pub what: String,
    /// The first one's statement.
    pub statement: Statement,
    /// The first one's session (its serial).
    pub session: Option<u64>,
    /// The clock at the first one.
    pub time: f64,
    /// The first one's value.
    pub value: f64,
    /// The most negative value.
    pub min: f64,
}

impl NegativeAmounts {
    /// The record of one more negative amount `x`, found at `statement`
    /// in `session` at `time` (the first one's place is kept).
    pub fn note(
        record: &mut Option<NegativeAmounts>,
        what: &str,
        x: f64,
        statement: Statement,
        session: Option<u64>,
        time: f64,
    ) {
        match record {
            Some(r) => {
                r.count += 1;
                r.min = r.min.min(x);
            }
            None => {
                *record = Some(NegativeAmounts {
                    count: 1,
                    what: what.to_string(),
                    statement,
                    session,
                    time,
                    value: x,
                    min: x,
                })
            }
        }
    }

    /// Adds another run's record (replications): counts add up, the most
    /// negative value is the least of both, the first stays the first.
    pub fn merge(record: &mut Option<NegativeAmounts>, other: &Option<NegativeAmounts>) {
        match (record.as_mut(), other) {
            (_, None) => {}
            (None, Some(o)) => *record = Some(o.clone()),
            (Some(r), Some(o)) => {
                r.count += o.count;
                r.min = r.min.min(o.min);
            }
        }
    }
}

/// Where a statement is: its place in the IR (block, index in block) and,
/// when the program came from text, its source line.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Statement {
    /// Block and index in block.
    pub at: (usize, usize),
    /// The source line, from 1.
    pub line: Option<u32>,
}

impl Statement {
    /// The statement as a person finds it: `file:line` when the program
    /// came from text (`line N` when the file is unknown), its IR path
    /// (`blocks[2][0]`) otherwise.
    pub fn describe(&self, file: &str) -> String {
        match (self.line, file.is_empty()) {
            (Some(line), false) => format!("{file}:{line}"),
            (Some(line), true) => format!("line {line}"),
            (None, _) => format!("blocks[{}][{}]", self.at.0, self.at.1),
        }
    }
}

/// One warning of a run (or of a point's replications).
#[derive(Clone, Debug, PartialEq)]
pub struct Warning {
    /// What it is about, with its own figures.
    pub kind: WarningKind,
    /// How many times it happened (amounts; flagged runs).
    pub count: u64,
    /// The text a person reads (what stderr prints after `warning: `).
    pub message: String,
}

/// The kinds of [`Warning`].
#[derive(Clone, Debug, PartialEq)]
pub enum WarningKind {
    /// Computed amounts went negative (JSON kind `negative_amount`).
    NegativeAmount {
        /// The first one's statement, as [`Statement::describe`] gives it.
        statement: String,
        /// The first one's session.
        session: Option<u64>,
        /// The clock at the first one.
        time: f64,
        /// The most negative value.
        min: f64,
    },
    /// The point is not steady (JSON kind `stability`).
    Stability {
        /// Transient or overloaded.
        verdict: Verdict,
        /// The fitted growth of the live sessions, per unit of time.
        growth: f64,
    },
}

impl WarningKind {
    /// The JSON `"kind"`.
    pub fn name(&self) -> &'static str {
        match self {
            WarningKind::NegativeAmount { .. } => "negative_amount",
            WarningKind::Stability { .. } => "stability",
        }
    }
}

/// The warning for negative amounts, its file named `file` (may be empty).
pub fn negative_amount_warning(n: &NegativeAmounts, file: &str) -> Warning {
    let statement = n.statement.describe(file);
    let who = match n.session {
        Some(s) => format!(" in session {s}"),
        None => String::new(),
    };
    let times = if n.count == 1 {
        "1 computed amount went negative and was".to_string()
    } else {
        format!("{} computed amounts went negative and were", n.count)
    };
    Warning {
        kind: WarningKind::NegativeAmount {
            statement: statement.clone(),
            session: n.session,
            time: n.time,
            min: n.min,
        },
        count: n.count,
        message: format!(
            "{times} taken as 0, as pyserq 0.1.0 does; the first: {} = {} at \
             {statement}{who} at t = {}; the most negative: {} (--strict makes this a \
             run-time error)",
            n.what, n.value, n.time, n.min
        ),
    }
}

/// The warning for a point that is not steady: one per point, worded
/// by its verdict (docs/report.md §2.1).
pub fn stability_warning(s: &Stability) -> Warning {
    let (a, b) = s.span;
    let warmup = a - (b - a);
    let test = match s.replications {
        1 => format!("trend t = {:.1} > {TREND_T}", s.t),
        r => format!(
            "across {r} replications trend t = {:.1} against t(0.999, {}) = {:.3}, and {} of \
             {r} flagged on their own",
            s.t,
            r - 1,
            s.threshold,
            s.alone
        ),
    };
    let figures = format!(
        "by {:.4} per unit of time over [{a}, {b}] (a rise of {:.1}; {test})",
        s.growth, s.rise
    );
    let growing = growing_list(&s.growing);
    let message = match s.verdict {
        Verdict::Overloaded => format!(
            "overloaded: the live sessions grow {figures}, no slower than the {:.4} of \
             [{warmup}, {a}]: arrivals exceed what the system serves, so its means measure \
             the horizon, not the system{}",
            s.early_growth,
            match growing.as_str() {
                "" => String::new(),
                g => format!(" (growing: {g})"),
            }
        ),
        Verdict::Transient | Verdict::Steady => format!(
            "not yet at a steady state: the live sessions still grow {figures}, but slower \
             than the {:.4} of [{warmup}, {a}]{}: a transient that has not died out; a \
             longer warmup or horizon measures the steady state",
            s.early_growth,
            match growing.as_str() {
                "" => String::new(),
                g => format!(" (filling: {g})"),
            }
        ),
    };
    Warning {
        kind: WarningKind::Stability {
            verdict: s.verdict,
            growth: s.growth,
        },
        count: 1,
        message,
    }
}

/// The growing queues as a person reads them: `stage srv`, `stage D[3]`,
/// or `stage D (12 members)` for several members of one family; stages,
/// then pools, in declaration order.
fn growing_list(growing: &[Growing]) -> String {
    let mut groups: Vec<(&Growing, usize)> = Vec::new();
    for g in growing {
        match groups.last_mut() {
            Some((first, n)) if first.place == g.place && first.name == g.name => *n += 1,
            _ => groups.push((g, 1)),
        }
    }
    groups
        .iter()
        .map(|(g, n)| match (n, g.member) {
            (1, Some(i)) => format!("{} {}[{i}]", g.place.name(), g.name),
            (1, None) => format!("{} {}", g.place.name(), g.name),
            (n, _) => format!("{} {} ({n} members)", g.place.name(), g.name),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

impl Report {
    /// Every warning of this run, in a fixed order: negative amounts, then
    /// the stability verdict (when the run is judged unstable).
    pub fn warnings(&self) -> Vec<Warning> {
        let mut out = Vec::new();
        if let Some(n) = &self.negative_amounts {
            out.push(negative_amount_warning(n, &self.source_name));
        }
        if let Some(s) = self.stability().filter(|s| !s.is_stable()) {
            out.push(stability_warning(&s));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_add_up_and_the_first_stays_first() {
        let at = Statement {
            at: (2, 1),
            line: Some(7),
        };
        let mut a = None;
        NegativeAmounts::note(&mut a, "the run's work", -0.5, at, Some(3), 1.5);
        NegativeAmounts::note(&mut a, "the hold's units", -2.0, at, Some(4), 2.0);
        let mut b = None;
        NegativeAmounts::note(&mut b, "the load", -1.0, at, Some(0), 0.5);
        NegativeAmounts::merge(&mut a, &b);
        let a = a.unwrap();
        assert_eq!((a.count, a.min, a.session, a.time), (3, -2.0, Some(3), 1.5));
        assert_eq!(a.what, "the run's work");
    }

    #[test]
    fn a_statement_reads_as_file_and_line_or_as_its_ir_path() {
        let text = Statement {
            at: (2, 0),
            line: Some(12),
        };
        assert_eq!(text.describe("p.sq"), "p.sq:12");
        assert_eq!(text.describe(""), "line 12");
        let ir = Statement {
            at: (2, 0),
            line: None,
        };
        assert_eq!(ir.describe("p.json"), "blocks[2][0]");
    }
}
