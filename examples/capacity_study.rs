//! A capacity study with the serq library: the smallest number of decode
//! instances whose mean response stays under a target across a range of
//! arrival rates.
//!
//! `cargo run --release --example capacity_study` sweeps
//! examples/pd-disaggregation/capacity.sq over `lam` (the arrival rate) and
//! `ND` (decode instances), 5 replications a point, and prints a table: the
//! mean response ± its 95% half-width at each point, `*` where the upper end
//! of the interval is under the target, and for each rate the smallest ND
//! that meets it. The answer is the smallest ND that meets it at every
//! rate; a last run of 10 replications at the highest rate confirms it.
//!
//! To adapt it: point PROGRAM at your program (its `let` constants are the
//! axes), change the axes, the observation and the target below.

use serq::study::{Axis, Sweep, replicate, sweep};
use serq::{Overrides, compile_file};
use std::error::Error;
use std::path::Path;

const PROGRAM: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/examples/pd-disaggregation/capacity.sq"
);
/// The arrival rates to cover (requests per second).
const RATES: &str = "lam=4:12:2";
/// The deployments to try: decode instances.
const SIZES: &str = "ND=1:8:1";
/// The observation to hold under the target, and the target (seconds).
const OBSERVATION: &str = "response";
const TARGET: f64 = 1.0;
const REPLICATIONS: usize = 5;

/// The mean and half-width of OBSERVATION at (lam, nd).
fn at(result: &Sweep, lam: f64, nd: f64) -> Option<(f64, Option<f64>)> {
    let point = result.points.iter().find(|p| p.values == [lam, nd])?;
    let e = point.result.observation(OBSERVATION)?;
    Some((e.mean?, e.ci))
}

/// Whether a point meets the target: the upper end of its 95% interval
/// is under it (one replication, without an interval, never does).
fn meets(estimate: Option<(f64, Option<f64>)>) -> bool {
    matches!(estimate, Some((mean, Some(ci))) if mean + ci < TARGET)
}

fn main() -> Result<(), Box<dyn Error>> {
    let source = std::fs::read_to_string(PROGRAM)?;
    let (rates, sizes) = (Axis::parse(RATES)?, Axis::parse(SIZES)?);
    let result = sweep(
        &source,
        &Overrides::default(),
        &[rates.clone(), sizes.clone()],
        REPLICATIONS,
        &|| {},
    )?;

    println!(
        "mean {OBSERVATION} ± 95% CI ({REPLICATIONS} replications); * = upper bound under {TARGET}"
    );
    print!("{:>6}", "lam");
    for nd in &sizes.values {
        print!("{:>16}", format!("ND={nd}"));
    }
    println!("{:>10}", "smallest");
    let mut answer: Option<f64> = Some(0.0);
    for &lam in &rates.values {
        print!("{lam:>6}");
        for &nd in &sizes.values {
            let cell = match at(&result, lam, nd) {
                Some((mean, ci)) => format!(
                    "{mean:.3}±{}{}",
                    ci.map_or("-".to_string(), |c| format!("{c:.3}")),
                    if meets(Some((mean, ci))) { "*" } else { " " }
                ),
                None => "-".to_string(),
            };
            print!("{cell:>16}");
        }
        let smallest = sizes
            .values
            .iter()
            .copied()
            .find(|&nd| meets(at(&result, lam, nd)));
        println!(
            "{:>10}",
            smallest.map_or("none".to_string(), |nd| nd.to_string())
        );
        answer = match (answer, smallest) {
            (Some(a), Some(s)) => Some(a.max(s)),
            _ => None,
        };
    }

    let Some(nd) = answer else {
        println!("no ND in {SIZES} keeps {OBSERVATION} under {TARGET} at every rate");
        return Ok(());
    };
    let top = rates.values.last().copied().unwrap_or_default();
    println!(
        "answer: ND = {nd} decode instances keep mean {OBSERVATION} under {TARGET} s up to lam = {top}"
    );

    // Confirm at the highest rate with more replications, through the
    // single-program API: compile the file with both constants set, replicate.
    let overrides = Overrides {
        sets: vec![("lam".into(), top), ("ND".into(), nd)],
        ..Overrides::default()
    };
    let program = compile_file(Path::new(PROGRAM), &overrides)?;
    let confirm = replicate(&program, 10)?;
    if let Some(e) = confirm.observation(OBSERVATION) {
        println!(
            "check: lam = {top}, ND = {nd}, 10 replications: {OBSERVATION} {:.3} ± {:.3}",
            e.mean.unwrap_or(f64::NAN),
            e.ci.unwrap_or(f64::NAN)
        );
    }
    if let Some(d) = confirm.stage("D", Some(0)) {
        println!(
            "        D[0] utilisation {:.3} ± {:.3}",
            d.utilization.mean.unwrap_or(f64::NAN),
            d.utilization.ci.unwrap_or(f64::NAN)
        );
    }
    Ok(())
}
