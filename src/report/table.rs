//! The report as a text table for a person (spec §6.12): a header line with
//! the run's figures, then observations, stages and pools, columns aligned.
//! The figures are the JSON's; a null CI prints `±inf`, any other null `-`.

use super::Report;
use std::fmt::Write;

/// `x` with `decimals` digits, or `-` when undefined.
fn fixed(x: Option<f64>, decimals: usize) -> String {
    match x {
        Some(v) if v.is_finite() => format!("{v:.decimals$}"),
        _ => "-".to_string(),
    }
}

/// A family member's display name: `name[i]` for arrays.
fn member_name(name: &str, member: Option<usize>) -> String {
    match member {
        Some(i) => format!("{name}[{i}]"),
        None => name.to_string(),
    }
}

/// A header's time: the language's form (`1e300`, not 301 digits), and
/// `inf` for any infinity.
fn plain(x: f64) -> String {
    if x.is_finite() {
        crate::ir::shown(x)
    } else {
        "inf".to_string()
    }
}

/// Writes a header and its rows: the first column left-aligned, the others
/// right-aligned, each at least its given width and wider when a cell
/// needs it, so that a large figure never runs into its neighbour.
fn aligned(out: &mut String, head: &[(&str, usize)], rows: Vec<Vec<String>>) {
    let widths: Vec<usize> = head
        .iter()
        .enumerate()
        .map(|(i, &(name, min))| {
            let widest = rows
                .iter()
                .map(|r| r[i].chars().count())
                .chain(std::iter::once(name.chars().count()))
                .max()
                .unwrap_or(0);
            min.max(widest + 1)
        })
        .collect();
    let names: Vec<String> = head.iter().map(|&(name, _)| name.to_string()).collect();
    for row in std::iter::once(&names).chain(&rows) {
        for (i, cell) in row.iter().enumerate() {
            let w = widths[i];
            // Writing to a String cannot fail.
            let _ = if i == 0 {
                write!(out, "{cell:<w$}")
            } else {
                write!(out, "{cell:>w$}")
            };
        }
        out.push('\n');
    }
}

impl Report {
    /// The text report.
    pub fn to_table(&self) -> String {
        let mut out = String::new();
        let name = if self.source_name.is_empty() {
            "program"
        } else {
            &self.source_name
        };
        // Writing to a String cannot fail.
        let _ = writeln!(
            out,
            "{name}  seed {}  horizon {}  end {}  warmup {}  events {}  arrivals {}  ended {}  mean_live {}",
            self.seed,
            plain(self.horizon),
            plain(self.end),
            plain(self.warmup),
            self.events,
            self.arrivals,
            self.ended,
            fixed(Some(self.mean_live), 3),
        );
        let names = self
            .observes
            .iter()
            .map(|o| o.name.clone())
            .chain(self.stages.iter().map(|s| member_name(&s.name, s.member)))
            .chain(self.pools.iter().map(|p| member_name(&p.name, p.member)));
        let w = names.map(|n| n.chars().count()).max().unwrap_or(0).max(11) + 1;

        if !self.observes.is_empty() {
            let rows = self.observes.iter().map(|obs| {
                let s = obs.summary();
                let ci = match s.ci {
                    Some(ci) => format!("±{ci:.4}"),
                    None => "±inf".to_string(),
                };
                vec![
                    obs.name.clone(),
                    s.count.to_string(),
                    fixed(s.mean, 4),
                    ci,
                    fixed(s.cv2, 3),
                    fixed(s.p50, 4),
                    fixed(s.p90, 4),
                    fixed(s.p95, 4),
                    fixed(s.p99, 4),
                ]
            });
            let head = [
                ("observation", w),
                ("count", 7),
                ("mean", 11),
                ("±ci", 11),
                ("cv²", 9),
                ("p50", 11),
                ("p90", 11),
                ("p95", 11),
                ("p99", 11),
            ];
            aligned(&mut out, &head, rows.collect());
        }
        // A serving program's figures: iterations, evictions, preemptions.
        let serving = self.stages.iter().any(|s| s.iterations > 0)
            || self.pools.iter().any(|p| {
                p.mean_cached > 0.0 || p.evicted_units > 0.0 || p.preemptions > 0 || p.spills > 0
            });
        if !self.stages.is_empty() {
            let rows = self.stages.iter().map(|s| {
                let mut row = vec![
                    member_name(&s.name, s.member),
                    fixed(Some(s.mean_number), 3),
                    fixed(s.utilization, 3),
                    s.completed.to_string(),
                    fixed(Some(s.throughput), 3),
                    fixed(s.mean_wait, 4),
                    fixed(s.mean_service, 4),
                ];
                if serving {
                    row.push(s.iterations.to_string());
                }
                row
            });
            let mut head = vec![
                ("stage", w),
                ("number", 7),
                ("util", 8),
                ("done", 8),
                ("thrpt", 8),
                ("wait", 9),
                ("service", 9),
            ];
            if serving {
                head.push(("iters", 9));
            }
            aligned(&mut out, &head, rows.collect());
        }
        if !self.pools.is_empty() {
            let rows = self.pools.iter().map(|p| {
                let mut row = vec![
                    member_name(&p.name, p.member),
                    fixed(Some(p.mean_used), 3),
                    fixed(Some(p.mean_cached), 3),
                    fixed(Some(p.mean_queue), 3),
                    fixed(Some(p.mean_holders), 3),
                    fixed(p.mean_wait, 4),
                    p.admissions.to_string(),
                    p.rejected.to_string(),
                ];
                if serving {
                    row.push(fixed(Some(p.evicted_units), 0));
                    row.push(p.preemptions.to_string());
                }
                row
            });
            let mut head = vec![
                ("pool", w),
                ("used", 8),
                ("cached", 9),
                ("queue", 8),
                ("holders", 9),
                ("wait", 9),
                ("admits", 8),
                ("rejected", 10),
            ];
            if serving {
                head.push(("evicted", 10));
                head.push(("preempted", 10));
            }
            aligned(&mut out, &head, rows.collect());
        }
        out
    }
}
