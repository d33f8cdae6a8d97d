//! The report as a text table for a person (spec §6.12): a header line with
//! the run's figures, then observations, stages and pools, columns aligned.
//! The figures are the JSON's; a null CI prints `±inf`, any other null `-`.

use super::{Report, Summary};
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

/// Shortest round-trip digits, as the JSON prints them (`10`, `0.5`).
fn plain(x: f64) -> String {
    if x.is_finite() {
        format!("{x}")
    } else {
        "inf".to_string()
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
            let _ = writeln!(
                out,
                "{:<w$}{:>7}{:>11}{:>11}{:>9}{:>11}{:>11}{:>11}",
                "observation", "count", "mean", "±ci", "cv²", "p50", "p90", "p99"
            );
            for obs in &self.observes {
                let s = Summary::of(&obs.samples);
                let ci = match s.ci {
                    Some(ci) => format!("±{ci:.4}"),
                    None => "±inf".to_string(),
                };
                let _ = writeln!(
                    out,
                    "{:<w$}{:>7}{:>11}{:>11}{:>9}{:>11}{:>11}{:>11}",
                    obs.name,
                    s.count,
                    fixed(s.mean, 4),
                    ci,
                    fixed(s.cv2, 3),
                    fixed(s.p50, 4),
                    fixed(s.p90, 4),
                    fixed(s.p99, 4)
                );
            }
        }
        if !self.stages.is_empty() {
            let _ = writeln!(
                out,
                "{:<w$}{:>7}{:>8}{:>8}{:>8}{:>9}{:>9}",
                "stage", "number", "util", "done", "thrpt", "wait", "service"
            );
            for s in &self.stages {
                let _ = writeln!(
                    out,
                    "{:<w$}{:>7}{:>8}{:>8}{:>8}{:>9}{:>9}",
                    member_name(&s.name, s.member),
                    fixed(Some(s.mean_number), 3),
                    fixed(s.utilization, 3),
                    s.completed,
                    fixed(Some(s.throughput), 3),
                    fixed(s.mean_wait, 4),
                    fixed(s.mean_service, 4)
                );
            }
        }
        if !self.pools.is_empty() {
            let _ = writeln!(
                out,
                "{:<w$}{:>8}{:>9}{:>8}{:>9}{:>9}{:>8}{:>10}",
                "pool", "used", "cached", "queue", "holders", "wait", "admits", "rejected"
            );
            for p in &self.pools {
                let _ = writeln!(
                    out,
                    "{:<w$}{:>8}{:>9}{:>8}{:>9}{:>9}{:>8}{:>10}",
                    member_name(&p.name, p.member),
                    fixed(Some(p.mean_used), 3),
                    fixed(Some(p.mean_cached), 3),
                    fixed(Some(p.mean_queue), 3),
                    fixed(Some(p.mean_holders), 3),
                    fixed(p.mean_wait, 4),
                    p.admissions,
                    p.rejected
                );
            }
        }
        out
    }
}
