//! Calibration: fits a step stage's `cost`, linear in some of its context
//! variables plus a constant, to measured iterations (`serq fit`).
//!
//! The data is a CSV with a header: a column per term, named as the term
//! (`tokens`, `kv_decode`, …), and the measured time of the iteration in
//! `seconds`; other columns are ignored. The fit minimises the squared
//! *relative* residuals, `Σ ((ŷ - y) / y)²`, with every coefficient
//! non-negative ([`nnls`]): iteration times span orders of magnitude (a
//! decode step of a few ms, a long prefill of a second), and what a user
//! reads, and what the residual percentiles report, is the relative error.
//!
//! Architecture invariant: plain data in, a [`Fit`] out; nothing here
//! knows the engine or a program (the terms are names, checked against
//! [`TERMS`]), and a malformed file is a [`CsvError`], never a panic.

pub mod nnls;

use nalgebra::{DMatrix, DVector};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use std::fmt;

/// The context variables a step stage's cost may read that a fit may use
/// (spec §8.1's Step moment, less `now`).
pub const TERMS: &[&str] = &[
    "tokens",
    "prefilled",
    "residents",
    "decoders",
    "kv_decode",
    "kv_prefill",
    "attention",
];

/// The column holding the measured time of each iteration.
pub const SECONDS: &str = "seconds";

/// Measured iterations: for each row, the terms' values and the seconds.
#[derive(Clone, Debug, PartialEq)]
pub struct Measurements {
    /// The terms, in the order asked for.
    pub terms: Vec<String>,
    /// One row per iteration: the terms' values, in `terms` order.
    pub rows: Vec<Vec<f64>>,
    /// The measured time of each row.
    pub seconds: Vec<f64>,
}

/// Why a CSV could not be read: where, and what is wrong.
#[derive(Clone, Debug, PartialEq)]
pub struct CsvError {
    /// The 1-based line at fault (none for a fault of the whole file).
    pub line: Option<usize>,
    /// The 1-based column (CSV field) at fault, if one is.
    pub column: Option<usize>,
    /// The line's text and the byte range of the field at fault, for a caret.
    pub source: Option<(String, std::ops::Range<usize>)>,
    /// What is wrong.
    pub message: String,
}

impl CsvError {
    /// The error as `serq fit` prints it for the file `name`: the place,
    /// the message, and the line with a caret under the field at fault.
    ///
    /// ```
    /// let e = serq::fit::Measurements::parse("tokens,seconds\n12,x\n", &["tokens".into()]).unwrap_err();
    /// assert_eq!(
    ///     e.render("d.csv"),
    ///     "d.csv:2:2: `seconds` is not a number: `x`\n  2 | 12,x\n    |    ^\n"
    /// );
    /// ```
    pub fn render(&self, name: &str) -> String {
        let mut out = String::from(name);
        if let Some(l) = self.line {
            out += &format!(":{l}");
            if let Some(c) = self.column {
                out += &format!(":{c}");
            }
        }
        out += &format!(": {}\n", self.message);
        if let (Some(l), Some((text, range))) = (self.line, &self.source) {
            let gutter = l.to_string();
            let pad = " ".repeat(gutter.len());
            let lead = " ".repeat(text[..range.start].chars().count());
            let width = text[range.clone()].chars().count().max(1);
            out += &format!(
                "  {gutter} | {text}\n  {pad} | {lead}{}\n",
                "^".repeat(width)
            );
        }
        out
    }
}

impl fmt::Display for CsvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.column) {
            (Some(l), Some(c)) => write!(f, "line {l}, column {c}: ")?,
            (Some(l), None) => write!(f, "line {l}: ")?,
            _ => {}
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for CsvError {}

/// The byte ranges of a line's comma-separated fields.
fn field_ranges(line: &str) -> Vec<std::ops::Range<usize>> {
    let mut ranges = Vec::new();
    let mut start = 0;
    for (i, c) in line.char_indices() {
        if c == ',' {
            ranges.push(start..i);
            start = i + 1;
        }
    }
    ranges.push(start..line.len());
    ranges
}

impl Measurements {
    /// Parses a CSV of measured iterations for `terms`. The first line that
    /// is not blank or a `#` comment is the header; each term, and
    /// `seconds`, must name one of its columns; every later row must give
    /// each of those a finite number (fields are trimmed), and `seconds`
    /// a positive one (a relative residual divides by it).
    ///
    /// ```
    /// let text = "# from a vLLM run\ntokens,kv_decode,seconds\n512,0,0.021\n1,4000,0.0062\n";
    /// let m = serq::fit::Measurements::parse(text, &["kv_decode".into()]).unwrap();
    /// assert_eq!((m.rows, m.seconds), (vec![vec![0.0], vec![4000.0]], vec![0.021, 0.0062]));
    /// ```
    pub fn parse(text: &str, terms: &[String]) -> Result<Measurements, CsvError> {
        let mut lines = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
        let Some((h, header)) = lines.next() else {
            return Err(CsvError {
                line: None,
                column: None,
                source: None,
                message: format!(
                    "no header: expected a first line naming the columns ({}, {SECONDS})",
                    terms.join(", ")
                ),
            });
        };
        let header_ranges = field_ranges(header);
        let names: Vec<&str> = header_ranges
            .iter()
            .map(|r| header[r.clone()].trim())
            .collect();
        for (i, name) in names.iter().enumerate() {
            if let Some(first) = names[..i].iter().position(|n| n == name) {
                return Err(CsvError {
                    line: Some(h + 1),
                    column: Some(i + 1),
                    source: Some((header.to_string(), header_ranges[i].clone())),
                    message: format!(
                        "column `{name}` is named twice (first as column {})",
                        first + 1
                    ),
                });
            }
        }
        let mut wanted: Vec<&str> = terms.iter().map(String::as_str).collect();
        wanted.push(SECONDS);
        let mut columns = Vec::with_capacity(wanted.len());
        for name in &wanted {
            let Some(c) = names.iter().position(|n| n == name) else {
                return Err(CsvError {
                    line: Some(h + 1),
                    column: Some(names.len() + 1),
                    source: Some((header.to_string(), header.len()..header.len())),
                    message: format!(
                        "no column `{name}`: the header names {}",
                        names
                            .iter()
                            .map(|n| format!("`{n}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                });
            };
            columns.push(c);
        }
        let mut rows = Vec::new();
        let mut seconds = Vec::new();
        for (i, line) in lines {
            let ranges = field_ranges(line);
            let mut values = Vec::with_capacity(columns.len());
            for (k, &c) in columns.iter().enumerate() {
                let name = wanted[k];
                let Some(range) = ranges.get(c) else {
                    return Err(CsvError {
                        line: Some(i + 1),
                        column: Some(ranges.len() + 1),
                        source: Some((line.to_string(), line.len()..line.len())),
                        message: format!(
                            "the row has {} fields, but `{name}` is column {} of the header",
                            ranges.len(),
                            c + 1
                        ),
                    });
                };
                let cell = line[range.clone()].trim();
                let fault = |message: String| CsvError {
                    line: Some(i + 1),
                    column: Some(c + 1),
                    source: Some((line.to_string(), range.clone())),
                    message,
                };
                let value = match cell.parse::<f64>() {
                    Ok(v) if v.is_finite() => v,
                    _ => return Err(fault(format!("`{name}` is not a number: `{cell}`"))),
                };
                if name == SECONDS && value <= 0.0 {
                    return Err(fault(format!(
                        "`{SECONDS}` must be above 0 (a relative residual divides by it), found {cell}"
                    )));
                }
                values.push(value);
            }
            seconds.push(values.pop().expect("`seconds` is the last wanted column"));
            rows.push(values);
        }
        Ok(Measurements {
            terms: terms.to_vec(),
            rows,
            seconds,
        })
    }
}

/// Relative residuals' percentiles, in percent: `|ŷ - y| / y × 100`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Residuals {
    /// The nearest-rank median.
    pub p50: f64,
    /// The nearest-rank 90th percentile.
    pub p90: f64,
    /// The nearest-rank 99th percentile.
    pub p99: f64,
}

impl Residuals {
    /// The percentiles of `|ŷ - y| / y` in percent, nearest-rank as the
    /// report's are (the ⌈q n⌉-th smallest); none for no rows.
    fn of(predicted: &[f64], measured: &[f64]) -> Option<Residuals> {
        let mut r: Vec<f64> = predicted
            .iter()
            .zip(measured)
            .map(|(p, y)| (p - y).abs() / y * 100.0)
            .collect();
        if r.is_empty() {
            return None;
        }
        r.sort_by(f64::total_cmp);
        let rank = |q: f64| r[((q * r.len() as f64).ceil() as usize).clamp(1, r.len()) - 1];
        Some(Residuals {
            p50: rank(0.5),
            p90: rank(0.9),
            p99: rank(0.99),
        })
    }

    fn to_json(self) -> serde_json::Value {
        serde_json::json!({"p50": self.p50, "p90": self.p90, "p99": self.p99})
    }
}

/// The rows held out of a fit and how well it predicts them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Holdout {
    /// How many rows were held out.
    pub rows: usize,
    /// The residuals on them.
    pub residuals: Residuals,
}

/// A fitted cost: `constant + Σ coefficient × term`.
#[derive(Clone, Debug, PartialEq)]
pub struct Fit {
    /// The terms, in the order asked for.
    pub terms: Vec<String>,
    /// Each term's coefficient (seconds per unit), all at least 0.
    pub coefficients: Vec<f64>,
    /// The constant (seconds), at least 0.
    pub constant: f64,
    /// The rows the coefficients were fitted to.
    pub rows: usize,
    /// R² of the fit on its rows, in seconds: `1 - Σ(y - ŷ)² / Σ(y - ȳ)²`.
    pub r2: f64,
    /// The relative residuals on the fitted rows.
    pub residuals: Residuals,
    /// The held-out rows, when some were.
    pub holdout: Option<Holdout>,
}

/// Why a fit could not be made.
#[derive(Clone, Debug, PartialEq)]
pub enum FitError {
    /// Fewer rows to fit than coefficients (the terms and the constant).
    TooFewRows {
        /// The rows left to fit (after the holdout).
        rows: usize,
        /// The coefficients to fit.
        coefficients: usize,
        /// The rows held out.
        held_out: usize,
    },
}

impl fmt::Display for FitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FitError::TooFewRows {
                rows,
                coefficients,
                held_out,
            } => {
                write!(
                    f,
                    "{rows} rows to fit {coefficients} coefficients (the terms and the constant): \
                     give at least {coefficients} rows"
                )?;
                if *held_out > 0 {
                    write!(f, " besides the {held_out} held out")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for FitError {}

impl Measurements {
    /// Fits the cost to these rows, keeping a fraction `holdout` of them
    /// (0 ≤ holdout < 1, `round(holdout × rows)` rows, chosen by a
    /// ChaCha8 shuffle seeded with `seed`) out of the fit to report its
    /// residuals on them.
    ///
    /// ```
    /// // seconds = 0.002 + 1e-5 · tokens exactly: the fit finds both.
    /// let text: String = std::iter::once("tokens,seconds\n".to_string())
    ///     .chain((1..=20).map(|t| format!("{},{}\n", 100 * t, 0.002 + 1e-5 * (100 * t) as f64)))
    ///     .collect();
    /// let m = serq::fit::Measurements::parse(&text, &["tokens".into()]).unwrap();
    /// let fit = m.fit(0.0, 1).unwrap();
    /// assert!((fit.constant - 0.002).abs() < 1e-12 && (fit.coefficients[0] - 1e-5).abs() < 1e-15);
    /// assert_eq!(fit.cost_line(), "cost 0.002 + 1e-5 * tokens;");
    /// ```
    pub fn fit(&self, holdout: f64, seed: u64) -> Result<Fit, FitError> {
        let n = self.rows.len();
        let k = self.terms.len() + 1;
        let mut order: Vec<usize> = (0..n).collect();
        let held_out = ((holdout * n as f64).round() as usize).min(n);
        if held_out > 0 {
            order.shuffle(&mut rand_chacha::ChaCha8Rng::seed_from_u64(seed));
        }
        let (held, fitted) = order.split_at(held_out);
        if fitted.len() < k {
            return Err(FitError::TooFewRows {
                rows: fitted.len(),
                coefficients: k,
                held_out,
            });
        }
        // Each row divided by its seconds: least squares on this is least
        // squares on the relative residuals.
        let a = DMatrix::from_fn(fitted.len(), k, |i, j| {
            let row = fitted[i];
            let x = if j == 0 { 1.0 } else { self.rows[row][j - 1] };
            x / self.seconds[row]
        });
        let b = DVector::from_element(fitted.len(), 1.0);
        let x = nnls::solve(&a, &b);
        let constant = x[0];
        let coefficients: Vec<f64> = x.iter().skip(1).copied().collect();
        let predict = |row: usize| {
            constant
                + coefficients
                    .iter()
                    .zip(&self.rows[row])
                    .map(|(c, v)| c * v)
                    .sum::<f64>()
        };
        let predicted: Vec<f64> = fitted.iter().map(|&r| predict(r)).collect();
        let measured: Vec<f64> = fitted.iter().map(|&r| self.seconds[r]).collect();
        let mean = measured.iter().sum::<f64>() / measured.len() as f64;
        let ss_res: f64 = predicted
            .iter()
            .zip(&measured)
            .map(|(p, y)| (y - p).powi(2))
            .sum();
        let ss_tot: f64 = measured.iter().map(|y| (y - mean).powi(2)).sum();
        let r2 = if ss_tot > 0.0 {
            1.0 - ss_res / ss_tot
        } else {
            f64::NAN
        };
        let residuals = Residuals::of(&predicted, &measured).expect("at least one fitted row");
        let holdout = (!held.is_empty()).then(|| {
            let p: Vec<f64> = held.iter().map(|&r| predict(r)).collect();
            let y: Vec<f64> = held.iter().map(|&r| self.seconds[r]).collect();
            Holdout {
                rows: held.len(),
                residuals: Residuals::of(&p, &y).expect("a held-out row"),
            }
        });
        Ok(Fit {
            terms: self.terms.clone(),
            coefficients,
            constant,
            rows: fitted.len(),
            r2,
            residuals,
            holdout,
        })
    }
}

/// A coefficient as a program writes it: six significant digits, plain
/// between 1e-3 and 1e6, else in `1.5e-5` form (which the lexer reads).
fn number(x: f64) -> String {
    if x == 0.0 {
        return "0".to_string();
    }
    let e = format!("{x:.5e}");
    let (mantissa, exponent) = e.split_once('e').expect("`{:e}` writes an exponent");
    let exponent: i32 = exponent.parse().expect("`{:e}` writes a whole exponent");
    let trim = |s: &str| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if (-3..6).contains(&exponent) {
        let decimals = (5 - exponent).max(0) as usize;
        trim(&format!("{x:.decimals$}"))
    } else {
        format!("{}e{exponent}", trim(mantissa))
    }
}

impl Fit {
    /// The fitted cost as a step stage's option, ready to paste.
    pub fn cost_line(&self) -> String {
        let mut line = format!("cost {}", number(self.constant));
        for (term, c) in self.terms.iter().zip(&self.coefficients) {
            line += &format!(" + {} * {term}", number(*c));
        }
        line + ";"
    }

    /// The fit as `serq fit` prints it: the cost line, R², the residuals
    /// and, with a holdout, the residuals on the held-out rows.
    pub fn to_text(&self) -> String {
        let r = self.residuals;
        let mut out = format!(
            "{}\n\nrows {}  r2 {:.6}\nresiduals (|fit - measured| / measured)  p50 {:.2}%  p90 {:.2}%  p99 {:.2}%\n",
            self.cost_line(),
            self.rows,
            self.r2,
            r.p50,
            r.p90,
            r.p99
        );
        if let Some(h) = self.holdout {
            let r = h.residuals;
            out += &format!(
                "holdout {} rows                          p50 {:.2}%  p90 {:.2}%  p99 {:.2}%\n",
                h.rows, r.p50, r.p90, r.p99
            );
        }
        out
    }

    /// The fit as one JSON object: `coefficients` (term → value, the
    /// constant under `"1"`), `cost` (the line), `rows`, `r2`,
    /// `residuals_pct` {p50, p90, p99} and, with a holdout, `holdout`
    /// {rows, residuals_pct}.
    pub fn to_json(&self) -> serde_json::Value {
        let mut coefficients = serde_json::Map::new();
        for (term, c) in self.terms.iter().zip(&self.coefficients) {
            coefficients.insert(term.clone(), (*c).into());
        }
        coefficients.insert("1".to_string(), self.constant.into());
        let mut out = serde_json::json!({
            "coefficients": coefficients,
            "cost": self.cost_line(),
            "rows": self.rows,
            "r2": self.r2,
            "residuals_pct": self.residuals.to_json(),
        });
        if let Some(h) = self.holdout {
            out["holdout"] =
                serde_json::json!({"rows": h.rows, "residuals_pct": h.residuals.to_json()});
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coefficients_print_as_a_program_reads_them() {
        assert_eq!(number(0.002), "0.002");
        assert_eq!(number(1.5e-5), "1.5e-5");
        assert_eq!(number(2.0000004e-8), "2e-8");
        assert_eq!(number(123.456789), "123.457");
        assert_eq!(number(0.0), "0");
    }
}
