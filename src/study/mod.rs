//! Capacity studies: independent replications of a program with Student-t
//! intervals, sweeps over a grid of `let` values, and their outputs (text,
//! JSON, CSV, JSON lines, an SVG plot).
//!
//! Architecture invariant: a study only compiles and runs programs through
//! the library's public functions ([`crate::compile_source`],
//! [`crate::run`]) and reads [`crate::Report`]s; it never reaches into the
//! engine. Parallel work (rayon) is always collected by index, so every
//! result is the same whatever the number of threads. Seeds: replication k
//! runs with seed `base + k` (wrapping), `base` being the program's seed
//! after overrides; every point of a sweep uses the same seeds.
//!
//! ```
//! use serq::study::{Axis, replicate, sweep};
//! let source = "let lam = 0.5;
//!               stage srv : fifo;
//!               workload { arrive poisson(lam); }
//!               session { set t0 = now; run srv (~exp(1)); observe response = now - t0; }
//!               run { horizon 500; seed 1; }";
//! let program = serq::compile_source(source, &Default::default()).unwrap();
//! let r = replicate(&program, 4).unwrap();
//! assert_eq!(r.observation("response").unwrap().n, 4);
//!
//! let grid = [Axis::parse("lam=0.3:0.6:0.3").unwrap()];
//! let s = sweep(source, &Default::default(), &grid, 2, &|| {}).unwrap();
//! assert_eq!(s.points.len(), 2);
//! ```

mod output;
mod plot;
mod replicate;
mod rows;
mod search;
mod sweep;
mod tdist;

pub use plot::{PlotError, PlotOptions, plot_columns, plot_rows, plot_svg};
pub use replicate::{
    Estimate, ObservationEstimate, PoolEstimate, Replicated, ReplicationError, RunSettings,
    SloEstimate, StageEstimate, replicate, replicate_slo, replicate_with, replicate_with_progress,
    replication_seed,
};
pub use rows::Cell;
pub use search::{
    BATCH, Config, Load, Probe, Runner, SearchError, SearchPlan, SearchResult, SearchSpec, Verdict,
    parse_at, plot_search,
};
pub use sweep::{
    Axis, MAX_AXIS_POINTS, Sweep, SweepError, SweepPlan, SweepPoint, sweep, sweep_replication,
    sweep_replication_with,
};
pub use tdist::{student_t_cdf, student_t_quantile};
