//! A capacity study with the serq library: the cheapest prefill/decode
//! deployment that serves a request rate within an SLO, as `serq search`
//! finds it (docs/capacity.md walks through the same question).
//!
//! `cargo run --release --example capacity_study` runs
//! examples/pd-disaggregation/slo.sq at 6 requests a second over NP = 1..4
//! prefill and ND = 1..8 decode instances, 8 GPUs each, and asks for 90%
//! of requests with TTFT ≤ 0.5 s and TPOT ≤ 50 ms. Configurations are
//! probed in cost order; each probe runs replications until the 95%
//! interval of its attainment lies on one side of 0.9.
//!
//! To adapt it: point PROGRAM at your program (its `let` constants are the
//! axes), change the axes, the cost, the load and the SLO below.

use serq::report::Slo;
use serq::study::{Axis, SearchPlan, SearchSpec};
use std::error::Error;
use std::path::Path;

const PROGRAM: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/examples/pd-disaggregation/slo.sq"
);

fn main() -> Result<(), Box<dyn Error>> {
    let source = std::fs::read_to_string(PROGRAM)?;
    let mut spec = SearchSpec::new(Slo::parse(["ttft<=0.5", "tpot<=0.05"])?);
    spec.target = 0.9;
    spec.at = vec![("lam".to_string(), 6.0)];
    spec.grid = vec![Axis::parse("NP=1:4")?, Axis::parse("ND=1:8")?];
    spec.cost = Some("NP*8 + ND*8".to_string());
    let plan = SearchPlan::new(&source, Some(Path::new(PROGRAM)), &Default::default(), spec)?;
    let result = plan.run(Vec::new(), &|| {}, &mut |_, _| {})?;
    print!("{}", result.to_table(plan.spec(), "slo.sq"));
    Ok(())
}
