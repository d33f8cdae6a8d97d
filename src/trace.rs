//! Workload traces (spec §8.7): a CSV file of rows
//! `session,turn,new,out,think[,forced]`, read into corpus sessions that
//! the workload's sessions replay at each `turn;`.
//!
//! Architecture invariant: plain data read from a file; nothing here knows
//! the IR or the engine, which takes a [`Trace`] as it is. Memory is one
//! [`TraceRow`] per row and one range per corpus session.

use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

/// One row of a trace: what a `turn;` loads into the session's attributes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TraceRow {
    /// `new`: the turn's new prompt tokens.
    pub new: f64,
    /// `out`: the turn's output tokens.
    pub out: f64,
    /// `think`: the think time after the turn.
    pub think: f64,
    /// `forced`: the sixth column, 0 when the row has five.
    pub forced: f64,
}

/// A trace read from its file: rows in file order, grouped into corpus
/// sessions (maximal runs of consecutive rows with one `session` value).
#[derive(Clone, Debug, PartialEq)]
pub struct Trace {
    rows: Vec<TraceRow>,
    sessions: Vec<Range<usize>>,
}

/// Why a trace could not be read: the file, and where in it.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceError {
    /// The file.
    pub path: PathBuf,
    /// The 1-based line at fault, if any.
    pub line: Option<usize>,
    /// The 1-based column (CSV field) at fault, if any.
    pub column: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "trace `{}`", self.path.display())?;
        match (self.line, self.column) {
            (Some(l), Some(c)) => write!(f, ": line {l}, column {c}")?,
            (Some(l), None) => write!(f, ": line {l}")?,
            _ => {}
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for TraceError {}

/// The columns a row holds, by field number from 1.
const COLUMNS: [&str; 6] = ["session", "turn", "new", "out", "think", "forced"];

impl Trace {
    /// Reads and parses a trace file.
    ///
    /// ```
    /// let path = std::env::temp_dir().join(format!("serq-doc-trace-{}.csv", std::process::id()));
    /// std::fs::write(&path, "session,turn,new,out,think\n7,0,10,3,1\n7,1,4,2,0.5\n3,0,7,1,2\n").unwrap();
    /// let trace = serq::trace::Trace::read(&path).unwrap();
    /// assert_eq!((trace.len(), trace.rows()), (2, 3));
    /// assert_eq!(trace.session(0)[1].new, 4.0);
    /// # std::fs::remove_file(&path).unwrap();
    /// ```
    pub fn read(path: &Path) -> Result<Trace, TraceError> {
        let text = std::fs::read_to_string(path).map_err(|e| TraceError {
            path: path.to_path_buf(),
            line: None,
            column: None,
            message: format!("cannot read it: {e}"),
        })?;
        Trace::parse(path, &text)
    }

    /// Parses a trace's text (`path` names it in errors). Each line is
    /// trimmed, its fields are not: `1, 2` is refused, as 0.1.0 refuses it.
    /// A first line whose first field is `session` is a header; blank lines
    /// and lines starting with `#` are skipped; the `turn` column is not read.
    pub fn parse(path: &Path, text: &str) -> Result<Trace, TraceError> {
        let fault = |line: usize, column: Option<usize>, message: String| TraceError {
            path: path.to_path_buf(),
            line: Some(line),
            column,
            message,
        };
        let mut rows = Vec::new();
        let mut sessions: Vec<Range<usize>> = Vec::new();
        let mut last_session: Option<f64> = None;
        let mut first = true;
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let header = first && line.split(',').next() == Some("session");
            first = false;
            if header {
                continue;
            }
            let mut fields = [""; 6];
            let mut n = 0;
            for f in line.split(',') {
                if n < 6 {
                    fields[n] = f;
                }
                n += 1;
            }
            if !(5..=6).contains(&n) {
                let column = (n < 5).then_some(n + 1);
                return Err(fault(
                    i + 1,
                    column,
                    format!(
                        "expected 5 or 6 fields (session,turn,new,out,think[,forced]), got {n}"
                    ),
                ));
            }
            let number = |k: usize| -> Result<f64, TraceError> {
                fields[k].parse::<f64>().map_err(|_| {
                    fault(
                        i + 1,
                        Some(k + 1),
                        format!("{} is not a number: `{}`", COLUMNS[k], fields[k]),
                    )
                })
            };
            let session = number(0)?;
            let row = TraceRow {
                new: number(2)?,
                out: number(3)?,
                think: number(4)?,
                forced: if n == 6 { number(5)? } else { 0.0 },
            };
            match sessions.last_mut() {
                Some(r) if last_session == Some(session) => r.end += 1,
                _ => sessions.push(rows.len()..rows.len() + 1),
            }
            last_session = Some(session);
            rows.push(row);
        }
        if rows.is_empty() {
            return Err(TraceError {
                path: path.to_path_buf(),
                line: None,
                column: None,
                message: "empty trace: it has no rows".into(),
            });
        }
        Ok(Trace { rows, sessions })
    }

    /// The number of corpus sessions.
    pub fn len(&self) -> usize {
        self.sessions.len()
    }

    /// Whether the trace has no corpus session (never, once read).
    pub fn is_empty(&self) -> bool {
        self.sessions.is_empty()
    }

    /// The number of rows.
    pub fn rows(&self) -> usize {
        self.rows.len()
    }

    /// The rows of corpus session `i`, in file order.
    pub fn session(&self, i: usize) -> &[TraceRow] {
        &self.rows[self.sessions[i].clone()]
    }
}
