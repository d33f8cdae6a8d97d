//! One arrival trace, read a row at a time: its format told from its
//! header (or its first character, or its extension), every row checked
//! as it is read, and its time made seconds after the first row.
//!
//! Architecture invariant: the reader holds one line and one row at a
//! time, never the file: a million-row trace costs what a ten-row one does.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::datetime::parse_nanos;
use crate::trace::TraceError;

/// One request of an arrival trace.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ArrivalRow {
    /// The 1-based line of the file it was read from.
    pub line: usize,
    /// Seconds after the trace's first row.
    pub time: f64,
    /// The prompt's tokens (the session's `new`).
    pub new: f64,
    /// The output's tokens (the session's `out`).
    pub out: f64,
    /// Mooncake's `hash_ids`: the prompt's blocks of 512 tokens, equal ids
    /// equal content. Read and kept for prefixes shared across requests;
    /// nothing uses them yet (empty for the CSV formats).
    pub hash_ids: Vec<u64>,
}

/// The formats an arrival trace may have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// serq's own CSV: a header naming `time` (seconds), `new` and `out`.
    Serq,
    /// The Azure LLM inference trace: `TIMESTAMP,ContextTokens,GeneratedTokens`.
    Azure,
    /// The Mooncake trace: JSON lines with `timestamp` (ms),
    /// `input_length`, `output_length`, `hash_ids`.
    Mooncake,
}

impl Format {
    /// The format's name as messages and docs give it.
    pub fn name(self) -> &'static str {
        match self {
            Format::Serq => "serq CSV (time,new,out)",
            Format::Azure => "Azure CSV (TIMESTAMP,ContextTokens,GeneratedTokens)",
            Format::Mooncake => "Mooncake JSON lines",
        }
    }
}

/// A row's time in the unit its format writes, kept exact until the
/// difference from the first row is taken.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Stamp {
    /// Seconds (serq CSV).
    Seconds(f64),
    /// Nanoseconds since 1970 (Azure's datetimes).
    Nanos(i64),
    /// Milliseconds (Mooncake).
    Millis(f64),
}

impl Stamp {
    /// Seconds from `first` to `self`.
    fn since(self, first: Stamp) -> f64 {
        match (self, first) {
            (Stamp::Seconds(t), Stamp::Seconds(t0)) => t - t0,
            (Stamp::Nanos(t), Stamp::Nanos(t0)) => (t - t0) as f64 / 1e9,
            (Stamp::Millis(t), Stamp::Millis(t0)) => (t - t0) / 1e3,
            _ => f64::NAN,
        }
    }
}

/// The CSV columns of a format, found by name in its header.
#[derive(Clone, Copy, Debug)]
struct Columns {
    time: usize,
    new: usize,
    out: usize,
    names: [&'static str; 3],
}

/// A Mooncake line (other fields are ignored).
#[derive(Deserialize)]
struct MooncakeLine {
    timestamp: f64,
    input_length: f64,
    output_length: f64,
    #[serde(default)]
    hash_ids: Vec<u64>,
}

/// An arrival trace open for reading, row by row.
pub struct ArrivalReader {
    path: PathBuf,
    lines: Box<dyn BufRead + Send + Sync>,
    format: Format,
    columns: Option<Columns>,
    line: usize,
    buf: String,
    /// A first data line read while telling the format (JSON lines have no header).
    pending: Option<(usize, String)>,
    first: Option<Stamp>,
    last: f64,
}

impl std::fmt::Debug for ArrivalReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArrivalReader")
            .field("path", &self.path)
            .field("format", &self.format)
            .field("line", &self.line)
            .finish()
    }
}

impl ArrivalReader {
    /// Opens the trace file and reads its header.
    pub fn open(path: &Path) -> Result<ArrivalReader, TraceError> {
        let file = File::open(path).map_err(|e| TraceError {
            path: path.to_path_buf(),
            line: None,
            column: None,
            message: format!("cannot read it: {e}"),
        })?;
        let jsonl = path
            .extension()
            .is_some_and(|e| e == "jsonl" || e == "json");
        ArrivalReader::new(path, Box::new(BufReader::new(file)), jsonl)
    }

    /// Reads a trace from `lines` (`path` names it in errors); `jsonl`
    /// says the file's name ends in `.jsonl` (or `.json`).
    pub fn new(
        path: &Path,
        lines: Box<dyn BufRead + Send + Sync>,
        jsonl: bool,
    ) -> Result<ArrivalReader, TraceError> {
        let mut reader = ArrivalReader {
            path: path.to_path_buf(),
            lines,
            format: Format::Serq,
            columns: None,
            line: 0,
            buf: String::new(),
            pending: None,
            first: None,
            last: f64::NEG_INFINITY,
        };
        let Some(header) = reader.next_line()? else {
            return Err(reader.fault(None, None, "empty arrival trace: it has no rows".into()));
        };
        if jsonl || header.starts_with('{') {
            reader.format = Format::Mooncake;
            reader.pending = Some((reader.line, header));
            return Ok(reader);
        }
        let names: Vec<&str> = header.split(',').map(str::trim).collect();
        let find = |want: [&'static str; 3]| -> Option<Columns> {
            let at = |w: &str| names.iter().position(|n| *n == w);
            Some(Columns {
                time: at(want[0])?,
                new: at(want[1])?,
                out: at(want[2])?,
                names: want,
            })
        };
        if let Some(c) = find(["TIMESTAMP", "ContextTokens", "GeneratedTokens"]) {
            reader.format = Format::Azure;
            reader.columns = Some(c);
        } else if let Some(c) = find(["time", "new", "out"]) {
            reader.columns = Some(c);
        } else {
            return Err(reader.fault(
                Some(reader.line),
                None,
                format!(
                    "unknown arrival trace format: the header `{header}` names neither \
                     `time,new,out` (serq) nor `TIMESTAMP,ContextTokens,GeneratedTokens` \
                     (Azure), and the file is not JSON lines (Mooncake, `.jsonl`)"
                ),
            ));
        }
        Ok(reader)
    }

    /// The trace's format.
    pub fn format(&self) -> Format {
        self.format
    }

    /// The file, as errors name it.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The next row, `None` at the end of the file. A malformed row names
    /// its line and field; a row earlier than the one before is refused.
    pub fn next_row(&mut self) -> Result<Option<ArrivalRow>, TraceError> {
        let (line, text) = match self.pending.take() {
            Some(p) => p,
            None => match self.next_line()? {
                Some(t) => (self.line, t),
                None => return Ok(None),
            },
        };
        let (stamp, new, out, hash_ids) = match self.columns {
            None => self.mooncake(line, &text)?,
            Some(c) => self.csv(line, &text, c)?,
        };
        let first = *self.first.get_or_insert(stamp);
        let time = stamp.since(first);
        if time < self.last {
            return Err(self.fault(
                Some(line),
                None,
                format!(
                    "time goes backwards: this row is {} s after the first row, the row before it {} s",
                    time, self.last
                ),
            ));
        }
        self.last = time;
        Ok(Some(ArrivalRow {
            line,
            time,
            new,
            out,
            hash_ids,
        }))
    }

    /// The next line that is not blank or a `#` comment, trimmed.
    fn next_line(&mut self) -> Result<Option<String>, TraceError> {
        loop {
            self.buf.clear();
            let n = self
                .lines
                .read_line(&mut self.buf)
                .map_err(|e| TraceError {
                    path: self.path.clone(),
                    line: Some(self.line + 1),
                    column: None,
                    message: format!("cannot read it: {e}"),
                })?;
            if n == 0 {
                return Ok(None);
            }
            self.line += 1;
            let t = self.buf.trim();
            if !t.is_empty() && !t.starts_with('#') {
                return Ok(Some(t.to_string()));
            }
        }
    }

    fn csv(
        &self,
        line: usize,
        text: &str,
        c: Columns,
    ) -> Result<(Stamp, f64, f64, Vec<u64>), TraceError> {
        let fields: smallvec::SmallVec<[&str; 8]> = text.split(',').collect();
        let field = |k: usize, name: &str| -> Result<&str, TraceError> {
            fields.get(k).map(|f| f.trim()).ok_or_else(|| {
                self.fault(
                    Some(line),
                    Some(fields.len() + 1),
                    format!("the row has {} fields; `{name}` is missing", fields.len()),
                )
            })
        };
        let time = field(c.time, c.names[0])?;
        let stamp = match self.format {
            Format::Azure => Stamp::Nanos(parse_nanos(time).map_err(|m| {
                self.fault(Some(line), Some(c.time + 1), format!("{}: {m}", c.names[0]))
            })?),
            _ => Stamp::Seconds(self.number(line, c.time, c.names[0], time, true)?),
        };
        let new = self.number(line, c.new, c.names[1], field(c.new, c.names[1])?, false)?;
        let out = self.number(line, c.out, c.names[2], field(c.out, c.names[2])?, false)?;
        Ok((stamp, new, out, Vec::new()))
    }

    /// A CSV field's number: finite, and for a size ≥ 0.
    fn number(
        &self,
        line: usize,
        k: usize,
        name: &str,
        text: &str,
        is_time: bool,
    ) -> Result<f64, TraceError> {
        match text.parse::<f64>() {
            Ok(x) if x.is_finite() && (is_time || x >= 0.0) => Ok(x),
            Ok(x) => Err(self.fault(
                Some(line),
                Some(k + 1),
                if is_time {
                    format!("{name} must be finite, found {x}")
                } else {
                    format!("{name} must be a finite number of tokens ≥ 0, found {x}")
                },
            )),
            Err(_) => Err(self.fault(
                Some(line),
                Some(k + 1),
                format!("{name} is not a number: `{text}`"),
            )),
        }
    }

    fn mooncake(&self, line: usize, text: &str) -> Result<(Stamp, f64, f64, Vec<u64>), TraceError> {
        let row: MooncakeLine = serde_json::from_str(text).map_err(|e| {
            // serde_json's own place is within the line: keep the column,
            // drop its "at line 1 column c".
            let message = e.to_string();
            let message = match message.find(" at line ") {
                Some(i) => message[..i].to_string(),
                None => message,
            };
            self.fault(Some(line), Some(e.column()).filter(|c| *c > 0), message)
        })?;
        let check = |name: &str, x: f64, is_time: bool| -> Result<f64, TraceError> {
            if x.is_finite() && (is_time || x >= 0.0) {
                Ok(x)
            } else {
                Err(self.fault(
                    Some(line),
                    None,
                    format!("`{name}` must be finite and ≥ 0, found {x}"),
                ))
            }
        };
        Ok((
            Stamp::Millis(check("timestamp", row.timestamp, true)?),
            check("input_length", row.input_length, false)?,
            check("output_length", row.output_length, false)?,
            row.hash_ids,
        ))
    }

    fn fault(&self, line: Option<usize>, column: Option<usize>, message: String) -> TraceError {
        TraceError {
            path: self.path.clone(),
            line,
            column,
            message,
        }
    }
}

/// What a pass over a trace's window found: checked before any run, so
/// that a malformed row or an empty window is refused then.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scan {
    /// The trace's format.
    pub format: Format,
    /// The rows in the window.
    pub rows: u64,
    /// The last row's time read (seconds after the first row).
    pub last: f64,
}

/// Reads every row of the trace up to the window's end (`[start, end)`
/// seconds after its first row; `None` for the whole trace), checking
/// each, and counts those in the window. An empty window is an error.
pub fn scan(path: &Path, window: Option<(f64, f64)>) -> Result<Scan, TraceError> {
    let mut reader = ArrivalReader::open(path)?;
    let (start, end) = window.unwrap_or((0.0, f64::INFINITY));
    let (mut rows, mut last, mut any) = (0u64, 0.0, false);
    while let Some(row) = reader.next_row()? {
        any = true;
        last = row.time;
        if row.time >= end {
            break;
        }
        if row.time >= start {
            rows += 1;
        }
    }
    if !any {
        return Err(TraceError {
            path: path.to_path_buf(),
            line: None,
            column: None,
            message: "empty arrival trace: it has no rows".into(),
        });
    }
    if rows == 0 {
        return Err(TraceError {
            path: path.to_path_buf(),
            line: None,
            column: None,
            message: format!(
                "empty window: no row lies in [{start}, {end}) s after the first row \
                 (the rows read span 0 to {last} s)"
            ),
        });
    }
    Ok(Scan {
        format: reader.format,
        rows,
        last,
    })
}
