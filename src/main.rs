//! The `serq` command: check, print the IR of, draw, run, replicate and
//! sweep serq programs, and fit a step stage's cost to measurements.
//!
//! Architecture invariant: only this file knows clap and the process's exit
//! statuses (0 ok, 1 the program's fault, 2 a usage error); everything it
//! does goes through the library's public API.

use clap::{Args, Parser, Subcommand};
use serq::syntax::lexer::is_word;
use serq::{Overrides, Program, RunError, ValidProgram};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// serq: simulate an LLM serving deployment written as a program.
///
/// A program declares memory pools (KV cache, request slots), stages
/// (engines, NICs, delays), a workload, and the path every session runs.
/// `serq run` simulates it and reports latencies, utilisations and queues.
#[derive(Parser)]
#[command(name = "serq", version, about, long_about, after_help = EXAMPLES)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

const EXAMPLES: &str = "\
Examples (from the repository's root; `cargo install --locked --path .` puts serq on the PATH):
  serq check examples/single-turn/mm1.sq                    check a program without running it
  serq run examples/single-turn/mm1.sq                      run it and print the report
  serq run examples/single-turn/mm1.sq --seed 7 --json      another seed, the report as JSON
  serq run examples/pd-disaggregation/capacity.sq --set ND=5 --set lam=12
                                                            replace `let ND` and `let lam`
  serq ir examples/single-turn/mm1.sq > mm1.ir.json         print the linked IR (version 8)
  serq run mm1.ir.json                                      run IR written by serq or another tool
  serq draw examples/pd-disaggregation/capacity.sq -o pd.svg
                                                            draw the deployment as SVG
  serq run examples/single-turn/mm1.sq --replications 8     8 seeds in parallel, 95% t-intervals
  serq sweep examples/pd-disaggregation/capacity.sq --grid lam=4:12:4 --grid ND=2,4 --out r.csv
  serq run examples/single-turn/vllm.sq --timeline vllm.json
                                                            a Chrome trace of the run for ui.perfetto.dev
  serq run examples/hardware/llama8b_h100.sq                a roofline engine (`use <roofline>;`)
  serq fit iterations.csv --terms tokens,kv_decode          fit a step cost to measured iterations

Exit status: 0 success, 1 the program's fault (a parse, link or run-time
error, printed on stderr), 2 a usage error (bad flags, a name a flag gives
that the program lacks, unreadable file), 130 stopped by Ctrl-C (a run prints
its partial report, marked as partial; a sweep keeps the rows written).";

#[derive(Subcommand)]
enum Command {
    /// Run a program and print its report.
    ///
    /// The flags replace the program's `run { … }` options; `--horizon`
    /// supplies one a program lacks. Example:
    ///
    ///   serq run examples/single-turn/mm1.sq --seed 3 --horizon 1000 --warmup 100
    #[command(
        after_help = "Examples:\n  serq run examples/single-turn/mm1.sq --json --samples\n  serq run examples/pd-disaggregation/capacity.sq --set ND=5 --set lam=12"
    )]
    Run {
        #[command(flatten)]
        file: FileArg,
        #[command(flatten)]
        sets: SetArgs,
        #[command(flatten)]
        options: RunOptionArgs,
        /// Print the report as one JSON object (the reference report's field names).
        #[arg(long)]
        json: bool,
        /// Add each observation's samples to the JSON report.
        #[arg(long, requires = "json", conflicts_with = "replications")]
        samples: bool,
        /// Fold every stage and pool array into one row: its member count
        /// and each figure's mean over the members, with the least and
        /// greatest utilisation (JSON: mean, min and max of every figure),
        /// so a 500-member family is one line, not 500. Without it the
        /// text report folds only families of more than 16 members, and
        /// the JSON report folds none (it keeps every member).
        #[arg(long, conflicts_with = "members")]
        by_family: bool,
        /// Print one row per member of every family, however large (the
        /// text report folds families of more than 16 members otherwise).
        #[arg(long)]
        members: bool,
        /// Run R independent replications in parallel and report each
        /// figure's mean across them with a 95% Student-t half-width
        /// (t(0.975, R-1) * s / sqrt(R)). Replication k (0-based) uses seed
        /// base + k, base being --seed or the program's seed, so
        /// replication 0 is the plain run. The result does not depend on
        /// the number of threads (RAYON_NUM_THREADS). With --json:
        /// {"replications", "seeds", "confidence", "stable", "stability",
        /// "growing", "observes": [{"name", "mean", "p50", "p90", "p99"}], "stages": [{"name", "member",
        /// "utilization", "mean_number", "throughput"}], "pools": [{"name",
        /// "member", "mean_used", "mean_wait"}]}, each figure {"n", "mean", "ci"}.
        #[arg(long, value_name = "R", allow_negative_numbers = true, value_parser = clap::value_parser!(u32).range(1..))]
        replications: Option<u32>,
        #[command(flatten)]
        slo: SloArgs,
        /// Write one CSV row per request to OUT (session, turn, arrival,
        /// the largest value of each observation the SLO names, finished,
        /// attained), to check the SLO's count by hand (needs --slo).
        #[arg(
            long,
            value_name = "OUT.csv",
            requires = "bounds",
            conflicts_with = "replications"
        )]
        requests: Option<PathBuf>,
        /// Write what the run did as a Chrome trace (JSON) that Perfetto's
        /// UI (ui.perfetto.dev) and chrome://tracing open: a track per
        /// stage member (iterations, jobs and transfers, a shared stage's
        /// rate), per pool member (used, cached, queued units and holders;
        /// preemptions) and per session (waiting, running, preempted).
        /// docs/timeline.md walks through one.
        #[arg(long, value_name = "OUT.json", conflicts_with = "replications")]
        timeline: Option<PathBuf>,
        /// Write only what happens in [FROM, TO] of simulated time (spans
        /// that cross its ends are cut there). FROM < TO, FROM below the
        /// horizon. Default: the whole run.
        #[arg(long, value_name = "FROM:TO", requires = "timeline", value_parser = parse_window)]
        timeline_window: Option<(f64, f64)>,
        /// Stop writing the timeline after this many events (with a
        /// warning), so that a long run does not fill the disk: about 160
        /// bytes an event.
        #[arg(long, value_name = "EVENTS", requires = "timeline", default_value_t = serq::timeline::DEFAULT_CAP, value_parser = clap::value_parser!(u64).range(1..))]
        timeline_cap: u64,
        /// Write a CSV of figures over time: for each window of --every
        /// from the warmup on, its `from` and `to`, the arrivals and
        /// completions in it, each observation's count, mean and p99,
        /// each stage member's utilisation and throughput, and each pool
        /// member's mean used, cached and queued units. --by-family folds
        /// each family into its mean over the members.
        #[arg(
            long,
            value_name = "OUT.csv",
            requires = "every",
            conflicts_with = "replications"
        )]
        series: Option<PathBuf>,
        /// The width of a --series window, in simulated time (> 0).
        #[arg(long, value_name = "DT", requires = "series", allow_negative_numbers = true, value_parser = parse_every)]
        every: Option<f64>,
        /// Also draw the series' column --y against time as SVG, as
        /// `serq plot-series` does (the CSV is written first).
        #[arg(long, value_name = "OUT.svg", requires_all = ["series", "y"])]
        plot: Option<PathBuf>,
        /// The column --plot draws (`ttft.p99`, `kv.used`, `D[0].util`).
        #[arg(long, value_name = "COLUMN", requires = "plot")]
        y: Option<String>,
    },
    /// Run a program over a grid of `let` values, with replications.
    ///
    /// Every point of the cartesian product of the --grid axes (the first
    /// axis varying slowest) is compiled with its values replacing the
    /// `let` constants of those names, then run --replications times;
    /// all (point, replication) runs go in parallel. Replication k of every
    /// point uses seed base + k (base: --seed or the program's seed), so
    /// the points share their random numbers. One row per point is written,
    /// the same whatever the number of threads. Columns, in order: each
    /// grid parameter (in --grid order); `replications`; `stable` (false
    /// when the point, judged across its replications, is transient or
    /// overloaded: docs/report.md §2.1; empty/null when not judged);
    /// `stability`, that verdict as a word (`steady`, `transient` or
    /// `overloaded`); `warnings` (the point's warnings, counted); with
    /// --slo, `slo.attainment`, `slo.attainment.ci`, `slo.goodput`,
    /// `slo.goodput.ci`, `slo.requests` and `slo.unfinished`
    /// (docs/report.md §10); for each observation (program order)
    /// `NAME.mean` and `NAME.ci` (the mean across replications and its 95%
    /// Student-t half-width, empty/null below 2 replications), then
    /// `NAME.p50`, `NAME.p50_ci`, `NAME.p90`, `NAME.p90_ci`, `NAME.p99`,
    /// `NAME.p99_ci` (each replication's nearest-rank percentile, estimated
    /// the same way); for each stage member (declaration order)
    /// `STAGE.util` or `STAGE[i].util`, the mean utilisation (empty/null
    /// where the point has no such member; an array of one member at some
    /// point, `D[ND]` with ND=1, fills `D[0].util`). A family of more than
    /// 16 members at some point of the grid (any array with --by-family,
    /// none with --members) is folded into three columns instead,
    /// `STAGE.util`, `STAGE.util.min` and `STAGE.util.max`: the mean, least
    /// and greatest of its members' utilisations at the point, so
    /// NP=500 ND=500 is a few columns, not a thousand. A non-empty
    /// --out is refused unless --resume or --force is given; --resume
    /// needs the same columns (the same flags). Numbers are
    /// printed in shortest round-trip form.
    /// Every point is compiled and every name (--grid, --set, --x, --y)
    /// checked before the first run. Rows are written and flushed as the
    /// points complete, in grid order, so an interrupted sweep leaves a
    /// file of the points done (Ctrl-C says how many; --resume runs the
    /// rest). A progress bar is drawn on stderr when it is a terminal,
    /// never otherwise.
    #[command(
        after_help = "Examples:\n  serq sweep examples/pd-disaggregation/capacity.sq --grid lam=4:12:2 --grid ND=2,3,4 --replications 5 --out results.csv\n  serq sweep examples/pd-disaggregation/capacity.sq --grid lam=4:12:4 --grid ND=2,4 --format jsonl\n  serq sweep examples/pd-disaggregation/capacity.sq --grid lam=4:12:2 --grid ND=2,4 --replications 5 --plot ttft.svg --x lam --y ttft.p99 --log-y\n  serq sweep examples/pd-disaggregation/capacity.sq --grid lam=4:12:2 --grid ND=2,3,4 --replications 5 --out results.csv --resume\n  serq sweep examples/pd-disaggregation/nixl_pull.sq --grid ND=8,32 --by-family --out by-family.csv"
    )]
    Sweep {
        #[command(flatten)]
        file: FileArg,
        #[command(flatten)]
        sets: SetArgs,
        /// One axis: NAME=a:b:step (inclusive, a <= b, step > 0, the end
        /// reached within 1e-9 steps, values rounded to 12 significant
        /// digits) or NAME=v1,v2,... (repeatable; NAME is a `let` constant).
        #[arg(long, value_name = "NAME=SPEC", value_parser = serq::study::Axis::parse)]
        grid: Vec<serq::study::Axis>,
        /// Replications per point.
        #[arg(long, value_name = "R", default_value_t = 1, allow_negative_numbers = true, value_parser = clap::value_parser!(u32).range(1..))]
        replications: u32,
        #[command(flatten)]
        options: RunOptionArgs,
        /// Write the rows to OUT instead of standard output.
        #[arg(long, value_name = "OUT")]
        out: Option<PathBuf>,
        /// The rows' format: `csv` (a header line, then one line per point)
        /// or `jsonl` (one object per point, keyed by the column names).
        #[arg(long, value_name = "FORMAT", value_parser = ["csv", "jsonl"], default_value = "csv")]
        format: String,
        /// Continue an interrupted sweep: keep the rows already in --out
        /// (checked to be this grid's first points), run only the points
        /// missing from it, and append their rows, giving the file an
        /// uninterrupted run writes. Without the file, start afresh.
        #[arg(long, requires = "out")]
        resume: bool,
        /// Overwrite a non-empty --out (without it, or --resume, a
        /// non-empty --out is refused and left untouched).
        #[arg(long, requires = "out")]
        force: bool,
        /// Also draw --y against --x as SVG, one line per value of the
        /// other grid parameters, with 95% CI bars and a red ring around
        /// each point judged unstable.
        #[arg(long, value_name = "OUT.svg", requires = "y")]
        plot: Option<PathBuf>,
        /// The plot's x: a grid parameter (default: the first --grid).
        #[arg(long, value_name = "NAME", requires = "plot")]
        x: Option<String>,
        /// The plot's y: an observation (its mean), or any column of the
        /// rows (`ttft.p99`, `D[0].util`).
        #[arg(long, value_name = "NAME", requires = "plot")]
        y: Option<String>,
        /// Draw the plot's y on a logarithmic scale.
        #[arg(long, requires = "plot")]
        log_y: bool,
        /// Draw a dashed horizontal line at this y on the plot, labelled
        /// `target Y` in its legend (an SLO's bound, say).
        #[arg(
            long,
            value_name = "Y",
            requires = "plot",
            allow_negative_numbers = true
        )]
        target: Option<f64>,
        /// The unit of a plot axis, NAME=UNIT (repeatable): NAME a --grid
        /// parameter (the x axis) or an observation or column (the y
        /// axis: `response=s` labels `response.p99` too), shown after the
        /// axis's name, `lam (req/s)`. The language has no units, so the
        /// plot knows them only from here.
        #[arg(long, value_name = "NAME=UNIT", requires = "plot", value_parser = parse_unit)]
        units: Vec<(String, String)>,
        /// Fold every stage array into three columns, `D.util`,
        /// `D.util.min` and `D.util.max` (the mean, least and greatest
        /// member's utilisation at the point), instead of one `D[i].util`
        /// per member. Without it, only families of more than 16 members
        /// (their largest size over the grid) fold.
        #[arg(long, conflicts_with = "members")]
        by_family: bool,
        /// Write one `D[i].util` column per member of every family,
        /// however large (families of more than 16 members fold otherwise).
        #[arg(long)]
        members: bool,
        #[command(flatten)]
        slo: SloArgs,
    },
    /// Find the largest load, or the cheapest configuration, that meets an SLO.
    ///
    /// With --load NAME=LO:HI: the largest value of the `let` NAME at
    /// which the attainment of the --slo is at least --attain, by
    /// bracketing (LO, then HI) and bisection to the relative --tol. Each
    /// probe runs 4 replications, then 4 more at a time, until the 95%
    /// interval of the attainment lies on one side of the target (or
    /// --max-replications ran: the probe is undecided, and widens the
    /// answer). The answer is an interval [low, high]: the highest load
    /// that passed, the lowest that failed; [HI, null] if HI passes,
    /// [null, LO] if LO fails. With --grid axes and --cost: at a fixed
    /// load (--at NAME=VALUE, or the program's) the cheapest
    /// configuration that attains (ties: the higher attainment, then grid
    /// order; dearer ones are not run); with --load, each configuration's
    /// limit (the frontier). Every name is checked and every configuration
    /// compiled before the first run. See docs/capacity.md.
    #[command(
        after_help = "Examples:\n  serq search examples/single-turn/mm1.sq --load lam=0.1:0.99 --slo 'response<=10' --attain 0.9\n  serq search examples/pd-disaggregation/capacity.sq --at lam=12 --grid ND=1:8 --cost 'ND*8 + 8' --slo 'ttft<=0.5' --slo 'tpot<=0.05' --attain 0.9"
    )]
    Search {
        #[command(flatten)]
        file: FileArg,
        #[command(flatten)]
        sets: SetArgs,
        #[command(flatten)]
        options: RunOptionArgs,
        #[command(flatten)]
        slo: SloArgs,
        /// The attainment to reach, a fraction in (0, 1].
        #[arg(long, value_name = "Q", allow_negative_numbers = true)]
        attain: f64,
        /// The load to search: a `let` constant and its range, NAME=LO:HI.
        #[arg(long, value_name = "NAME=LO:HI", value_parser = serq::study::Load::parse)]
        load: Option<serq::study::Load>,
        /// Set a `let` for every probe (repeatable), e.g. the load of a
        /// cost search: --at lam=20.
        #[arg(long, value_name = "NAME=VALUE", value_parser = serq::study::parse_at)]
        at: Vec<(String, f64)>,
        /// A configuration axis, as sweep's --grid (NAME=a:b every integer,
        /// NAME=a:b:step, NAME=v1,v2,...; repeatable).
        #[arg(long, value_name = "NAME=SPEC", value_parser = serq::study::Axis::parse)]
        grid: Vec<serq::study::Axis>,
        /// A configuration's cost: an expression over the `let`s and the
        /// program's constant `def`s, e.g. 'NP*8 + ND*8'.
        #[arg(long, value_name = "EXPR")]
        cost: Option<String>,
        /// A --grid axis along which attainment never falls as it grows
        /// (repeatable): probes it implies are not run.
        #[arg(long, value_name = "NAME")]
        monotone: Vec<String>,
        /// The load search's relative tolerance.
        #[arg(
            long,
            value_name = "FRACTION",
            default_value_t = 0.01,
            allow_negative_numbers = true
        )]
        tol: f64,
        /// The most replications of one probe.
        #[arg(long, value_name = "R", default_value_t = 30)]
        max_replications: usize,
        /// Print the result as one JSON object (docs/report.md, "search").
        #[arg(long)]
        json: bool,
        /// Write one row per probe to OUT, as it is decided.
        #[arg(long, value_name = "OUT")]
        out: Option<PathBuf>,
        /// The rows' format, as sweep's.
        #[arg(long, value_name = "FORMAT", value_parser = ["csv", "jsonl"], default_value = "csv")]
        format: String,
        /// Replay the probes in --out and go on from there.
        #[arg(long, requires = "out")]
        resume: bool,
        /// Overwrite a non-empty --out.
        #[arg(long, requires = "out")]
        force: bool,
        /// Draw attainment against load for each configuration (a load
        /// search) or the limit against the first axis (a frontier) as SVG.
        #[arg(long, value_name = "OUT.svg")]
        plot: Option<PathBuf>,
    },
    /// Check a program: print a one-line summary, or every diagnostic.
    ///
    /// Parses and links the program and checks every link rule, without
    /// running it. Example:
    ///
    ///   serq check examples/pd-disaggregation/pull_maxmin.sq
    #[command(
        after_help = "Example:\n  serq check examples/pd-disaggregation/capacity.sq --set ND=500"
    )]
    Check {
        #[command(flatten)]
        file: FileArg,
        #[command(flatten)]
        sets: SetArgs,
    },
    /// Print the linked program as IR JSON (version 8).
    ///
    /// The IR is what the engine runs: names resolved, constants folded,
    /// sugar (`transfer`, `branch with`) rewritten. Example:
    ///
    ///   serq ir examples/single-turn/mm1.sq > mm1.ir.json && serq run mm1.ir.json
    #[command(
        after_help = "Example:\n  serq ir examples/pd-disaggregation/capacity.sq --set ND=500 > pd500.ir.json"
    )]
    Ir {
        #[command(flatten)]
        file: FileArg,
        #[command(flatten)]
        sets: SetArgs,
    },
    /// Draw a column of a `serq run --series` CSV against time.
    ///
    /// The x axis is each window's start; the style is the sweeps'
    /// (`serq sweep --plot`). Example:
    ///
    ///   serq plot-series vllm.csv --y ttft.p99 -o ttft.svg
    #[command(
        name = "plot-series",
        after_help = "Examples:\n  serq run examples/single-turn/vllm.sq --series vllm.csv --every 10\n  serq plot-series vllm.csv --y ttft.p99 -o ttft.svg\n  serq plot-series vllm.csv --y kv.used --target 9600 -o kv.svg"
    )]
    PlotSeries {
        /// The CSV `serq run --series` wrote.
        file: PathBuf,
        /// The column to draw (`ttft.p99`, `kv.used`, `D[0].util`).
        #[arg(long, value_name = "COLUMN")]
        y: String,
        /// Write the SVG to OUT instead of standard output.
        #[arg(short = 'o', long = "out", value_name = "OUT.svg")]
        out: Option<PathBuf>,
        /// Draw y on a logarithmic scale.
        #[arg(long)]
        log_y: bool,
        /// Draw a dashed horizontal line at this y (a capacity, an SLO's bound).
        #[arg(long, value_name = "Y", allow_negative_numbers = true)]
        target: Option<f64>,
    },
    /// Draw the deployment: stations, pools and the session's path.
    ///
    /// One box per stage member, except that a family of more than 4
    /// members is folded into one box `name ×N` (--members draws every
    /// member, --by-family folds every family); the stations in the order
    /// the session's path reaches them, a family too wide for a screen in
    /// a grid of rows; the pools above them with dashed links to the runs
    /// held inside them (dotted, `lease`, to the runs a lease keeps their
    /// units through), the path as arrows in program order (a branch's
    /// arrows labelled with its guard or `else`, a loop's way back with
    /// `repeat`), a run over several stages as one bracketed job. Example:
    ///
    ///   serq draw examples/pd-disaggregation/pull_maxmin.sq -o pd.svg
    #[command(
        after_help = "Examples:\n  serq draw examples/pd-disaggregation/nixl_pull.sq -o nixl.svg\n  serq draw examples/pd-disaggregation/nixl_pull.sq --members -o nixl-members.svg"
    )]
    Draw {
        #[command(flatten)]
        file: FileArg,
        #[command(flatten)]
        sets: SetArgs,
        /// Fold every family of more than one member into one box `name ×N`.
        #[arg(long, conflicts_with = "members")]
        by_family: bool,
        /// Draw one box per member of every family, however large (a wide
        /// family in a grid of rows).
        #[arg(long)]
        members: bool,
        /// The drawing's format (only `svg` for now).
        #[arg(long, value_name = "FORMAT", value_parser = ["svg"], default_value = "svg")]
        format: String,
        /// Write the drawing to OUT instead of standard output.
        #[arg(short, long, value_name = "OUT")]
        out: Option<PathBuf>,
    },
    /// Fit a step stage's cost to measured iterations.
    ///
    /// DATA.csv has a header and one row per iteration: a column per term,
    /// named as the term, and the measured time in `seconds` (other
    /// columns are ignored; docs/hardware.md says how to produce it from a
    /// vLLM or SGLang run). The cost is linear in the terms plus a
    /// constant, every coefficient at least 0 (Lawson-Hanson), fitted to
    /// the relative residuals. Prints the `cost ...;` line, R² and the
    /// residuals' p50/p90/p99 in percent. With --json: {"coefficients":
    /// {TERM: value, "1": constant}, "cost", "rows", "r2",
    /// "residuals_pct": {"p50", "p90", "p99"}, "holdout": {"rows",
    /// "residuals_pct"}}. A malformed CSV is exit 1, with its line and
    /// column; an unknown term is exit 2.
    #[command(
        after_help = "Examples:\n  serq fit iterations.csv --terms tokens,kv_decode\n  serq fit iterations.csv --terms tokens,kv_decode,residents --holdout 0.2 --seed 7 --json"
    )]
    Fit {
        /// The measured iterations (CSV).
        #[arg(value_name = "DATA.csv")]
        data: PathBuf,
        /// The terms, comma-separated, among the step cost's context
        /// variables: tokens, prefilled, residents, decoders, kv_decode,
        /// kv_prefill, attention.
        #[arg(long, value_name = "T1,T2,...", value_delimiter = ',', required = true)]
        terms: Vec<String>,
        /// Keep this fraction of the rows (0 <= F < 1, a seeded shuffle)
        /// out of the fit and report the residuals on them.
        #[arg(long, value_name = "F", default_value_t = 0.0, value_parser = parse_fraction)]
        holdout: f64,
        /// The seed of the holdout's shuffle.
        #[arg(long, value_name = "S", default_value_t = 1)]
        seed: u64,
        /// Print the fit as one JSON object.
        #[arg(long)]
        json: bool,
    },
}

/// Parses `--holdout F`: a fraction in [0, 1).
fn parse_fraction(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(f) if (0.0..1.0).contains(&f) => Ok(f),
        _ => Err(format!(
            "expected a fraction at least 0 and below 1, found `{text}`"
        )),
    }
}

/// `serq fit`: checks the terms (a usage error, exit 2), reads the CSV (a
/// malformed one is the data's fault, exit 1) and prints the fit.
fn fit(
    data: &Path,
    terms: Vec<String>,
    holdout: f64,
    seed: u64,
    json: bool,
) -> Result<(), Failure> {
    use serq::fit::TERMS;
    for (i, term) in terms.iter().enumerate() {
        if !TERMS.contains(&term.as_str()) {
            let hint = match serq::link::closest(term, TERMS.iter().copied()) {
                Some(c) => format!("did you mean `{c}`? "),
                None => String::new(),
            };
            return Err(Failure::Usage(format!(
                "unknown term `{term}` in --terms: {hint}(the terms are the step cost's context variables: {})",
                TERMS.join(", ")
            )));
        }
        if terms[..i].contains(term) {
            return Err(Failure::Usage(format!("--terms names `{term}` twice")));
        }
    }
    let text = std::fs::read_to_string(data)
        .map_err(|e| Failure::Usage(format!("cannot read `{}`: {e}", data.display())))?;
    let name = data.display().to_string();
    let measurements = serq::fit::Measurements::parse(&text, &terms).map_err(|e| {
        eprint!("error: {}", e.render(&name));
        Failure::Program
    })?;
    let fitted = measurements.fit(holdout, seed).map_err(|e| {
        eprintln!("error: {name}: {e}");
        Failure::Program
    })?;
    if json {
        emit(&format!("{}\n", fitted.to_json()));
    } else {
        emit(&fitted.to_text());
    }
    Ok(())
}

/// A service-level objective.
#[derive(Args)]
struct SloArgs {
    /// A bound of the SLO, NAME<=NUMBER or NAME<NUMBER, NAME an
    /// observation (repeatable; the bounds are joint). A request (one
    /// turn of a session) attains when it recorded every named
    /// observation, each within its bound; one unfinished at the end does
    /// not. Adds attainment, goodput (attained requests per unit of time),
    /// requests and unfinished to the report (docs/report.md, "SLO
    /// attainment"). Example: --slo 'ttft<=0.5' --slo 'tpot<=0.05'
    #[arg(long = "slo", value_name = "NAME<=X", value_parser = serq::report::Bound::parse)]
    bounds: Vec<serq::report::Bound>,
}

impl SloArgs {
    /// The SLO, if any bound was given.
    fn slo(self) -> Option<serq::report::Slo> {
        (!self.bounds.is_empty()).then_some(serq::report::Slo {
            bounds: self.bounds,
        })
    }
}

/// Checks that `program` records every observation the SLO names.
fn check_slo(
    slo: Option<&serq::report::Slo>,
    program: &Program,
    name: &str,
) -> Result<(), Failure> {
    match slo {
        Some(slo) => slo
            .check(&program.observes)
            .map_err(|e| Failure::Usage(format!("{name}: {e}"))),
        None => Ok(()),
    }
}

#[derive(Args)]
struct FileArg {
    /// A program (`.sq`), or IR JSON (a file ending in `.json`).
    #[arg(value_name = "FILE")]
    path: PathBuf,
}

#[derive(Args)]
struct SetArgs {
    /// Replace the `let` constant NAME by VALUE before the program is
    /// linked (repeatable; a later --set of one name wins). Dependents see
    /// the new value: `let b = a*3+1;`, array sizes `stage P[NP]`, stage
    /// rates. VALUE is a number, `inf` or `-inf`. Only for source programs:
    /// IR has no `let`s. Example: --set NP=500 --set ND=500
    #[arg(long = "set", value_name = "NAME=VALUE", value_parser = parse_set)]
    sets: Vec<(String, f64)>,
    /// Replace the body of the expression definition NAME by EXPR
    /// (repeatable), its parameters bound as before. Only for source
    /// programs. Example: --def 'step_time=0.01 + 0.0002 * n'
    #[arg(long = "def", value_name = "NAME=EXPR", value_parser = parse_def)]
    defs: Vec<(String, String)>,
}

impl SetArgs {
    /// The overrides of a command that takes only `--set` and `--def`.
    fn overrides(self) -> Overrides {
        Overrides {
            sets: self.sets,
            defs: self.defs,
            ..Overrides::default()
        }
    }
}

/// Parses one `--def NAME=EXPR` (the expression is parsed when the program is linked).
fn parse_def(pair: &str) -> Result<(String, String), String> {
    let Some((name, body)) = pair.split_once('=') else {
        return Err(format!(
            "expected NAME=EXPR (e.g. 'f=x * 10'), found `{pair}`"
        ));
    };
    let name = name.trim();
    if !is_word(name) {
        return Err(format!("`{name}` is not a definition's name (in `{pair}`)"));
    }
    Ok((name.to_string(), body.to_string()))
}

/// The flags that replace a program's `run { … }` options.
#[derive(Args)]
struct RunOptionArgs {
    /// Seed of every random stream (replaces `run { seed S; }`); the base
    /// seed of replications. A whole number from 0 to 2^64 - 1.
    #[arg(long, value_name = "S", allow_negative_numbers = true, value_parser = parse_seed)]
    seed: Option<u64>,
    /// Stop before any event later than T (replaces or supplies
    /// `horizon`): a finite number above 0. With `poisson(λ)` arrivals,
    /// λ × T is at most 2^42, so that the clock still resolves the mean
    /// gap between arrivals at the horizon.
    #[arg(long, value_name = "T", allow_negative_numbers = true, value_parser = parse_horizon)]
    horizon: Option<f64>,
    /// Measure over [T, end] only (replaces `warmup`): at least 0 and
    /// below the horizon.
    #[arg(long, value_name = "T", allow_negative_numbers = true, value_parser = parse_warmup)]
    warmup: Option<f64>,
    /// Stop after N open arrivals (N at least 1) and end when the last
    /// session ends.
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = parse_arrivals)]
    arrivals: Option<u64>,
    /// Replay FILE instead of the workload's `trace` file (a relative path
    /// is read from the current directory, not the program's).
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// Take arrivals from FILE instead of the workload's `arrive trace`
    /// file (a serq extension; a relative path is read from the current
    /// directory). FILE is serq CSV (`time,new,out`), the Azure LLM
    /// inference CSV or Mooncake JSON lines.
    #[arg(long, value_name = "FILE")]
    arrival_trace: Option<PathBuf>,
    /// Make a computed amount that goes negative (a run's work, a hold's
    /// units or reserve, a `grow`, a `load`) a run-time error. Without it
    /// such an amount is taken as 0, as pyserq 0.1.0 takes it, and the run
    /// warns (on stderr, and in the JSON report's "warnings").
    #[arg(long)]
    strict: bool,
}

impl RunOptionArgs {
    /// How every run of the command goes beyond its program (`--strict`).
    fn settings(&self) -> serq::study::RunSettings {
        serq::study::RunSettings {
            strict: self.strict,
        }
    }

    /// These options and the `--set` values as overrides.
    fn overrides(self, sets: SetArgs) -> Overrides {
        Overrides {
            sets: sets.sets,
            defs: sets.defs,
            horizon: self.horizon,
            warmup: self.warmup,
            seed: self.seed,
            arrivals: self.arrivals,
            trace: self.trace,
            arrival_trace: self.arrival_trace,
        }
    }
}

/// Parses `--horizon T`: a finite number above 0 (the horizon against
/// the workload's rate is the linker's to check).
fn parse_horizon(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(t) if t.is_finite() && t > 0.0 => Ok(t),
        Ok(t) => Err(format!(
            "the horizon must be a finite number above 0, found {}",
            serq::ir::shown(t)
        )),
        Err(_) => Err(format!("expected a number, found `{text}`")),
    }
}

/// Parses `--warmup T`: a finite number at least 0 (below the horizon is
/// checked against the run's horizon when the program links).
fn parse_warmup(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(t) if t.is_finite() && t >= 0.0 => Ok(t),
        Ok(t) => Err(format!(
            "the warmup must be a finite number at least 0, found {}",
            serq::ir::shown(t)
        )),
        Err(_) => Err(format!("expected a number, found `{text}`")),
    }
}

/// Parses `--seed S`: a whole number from 0 to 2^64 - 1.
fn parse_seed(text: &str) -> Result<u64, String> {
    text.trim()
        .parse::<u64>()
        .map_err(|_| format!("a seed is a whole number from 0 to 2^64 - 1, found `{text}`"))
}

/// Parses `--arrivals N`: a whole number at least 1.
fn parse_arrivals(text: &str) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!(
            "the arrivals are a whole number at least 1, found `{text}`"
        )),
    }
}

/// Parses one `--units NAME=UNIT`.
fn parse_unit(pair: &str) -> Result<(String, String), String> {
    match pair.split_once('=') {
        Some((name, unit)) if !name.trim().is_empty() && !unit.trim().is_empty() => {
            Ok((name.trim().to_string(), unit.trim().to_string()))
        }
        _ => Err(format!(
            "expected NAME=UNIT (e.g. lam=req/s or response=s), found `{pair}`"
        )),
    }
}

/// Parses `--every DT`: a finite number above 0.
fn parse_every(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(x) if x > 0.0 && x.is_finite() => Ok(x),
        _ => Err(format!(
            "the window width must be a finite number above 0, found `{text}`"
        )),
    }
}

/// Parses `--timeline-window FROM:TO`: two numbers, 0 <= FROM < TO.
fn parse_window(text: &str) -> Result<(f64, f64), String> {
    let Some((from, to)) = text.split_once(':') else {
        return Err(format!("expected FROM:TO (e.g. 100:110), found `{text}`"));
    };
    let number = |s: &str| s.trim().parse::<f64>().ok().filter(|x| !x.is_nan());
    match (number(from), number(to)) {
        (Some(a), Some(b)) if a >= 0.0 && a < b => Ok((a, b)),
        (Some(_), Some(_)) => Err(format!(
            "the window `{text}` is empty or starts below 0: FROM:TO needs 0 <= FROM < TO"
        )),
        _ => Err(format!(
            "expected two numbers FROM:TO (e.g. 100:110), found `{text}`"
        )),
    }
}

/// Parses one `--set NAME=VALUE`.
fn parse_set(pair: &str) -> Result<(String, f64), String> {
    let Some((name, value)) = pair.split_once('=') else {
        return Err(format!("expected NAME=VALUE (e.g. NP=500), found `{pair}`"));
    };
    let name = name.trim();
    if !is_word(name) {
        return Err(format!("`{name}` is not a constant's name (in `{pair}`)"));
    }
    match value.trim().parse::<f64>() {
        Ok(x) if !x.is_nan() => Ok((name.to_string(), x)),
        _ => Err(format!(
            "the value of `{name}` must be a number or `inf`, found `{value}`"
        )),
    }
}

/// Why the command failed, with the exit status it maps to.
enum Failure {
    /// The program's fault: already printed; exit 1.
    Program,
    /// A usage error (unreadable file, a bad name in a flag); exit 2.
    Usage(String),
    /// A usage error already printed (diagnostics of a flag's name); exit 2.
    UsageShown,
    /// Stopped by Ctrl-C, what was done already printed; exit 130.
    Interrupted,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match execute(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Program) => ExitCode::from(1),
        Err(Failure::UsageShown) => ExitCode::from(2),
        Err(Failure::Interrupted) => ExitCode::from(130),
        Err(Failure::Usage(message)) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}

fn execute(command: Command) -> Result<(), Failure> {
    match command {
        Command::Fit {
            data,
            terms,
            holdout,
            seed,
            json,
        } => fit(&data, terms, holdout, seed, json),
        Command::Sweep {
            file,
            sets,
            grid,
            replications,
            options,
            out,
            format,
            resume,
            force,
            plot,
            x,
            y,
            log_y,
            target,
            units,
            by_family,
            members,
            slo,
        } => sweep(SweepArgs {
            file,
            settings: options.settings(),
            overrides: options.overrides(sets),
            grid,
            replications: replications as usize,
            out,
            jsonl: format == "jsonl",
            resume,
            force,
            plot,
            x,
            y,
            log_y,
            target,
            units,
            fold: match (by_family, members) {
                (true, _) => serq::report::Fold::ByFamily,
                (_, true) => serq::report::Fold::Members,
                _ => serq::report::Fold::Auto,
            },
            slo: slo.slo(),
        }),
        Command::Search {
            file,
            sets,
            options,
            slo,
            attain,
            load,
            at,
            grid,
            cost,
            monotone,
            tol,
            max_replications,
            json,
            out,
            format,
            resume,
            force,
            plot,
        } => {
            let Some(slo) = slo.slo() else {
                return Err(Failure::Usage(
                    "search needs an SLO: --slo NAME<=X (e.g. --slo 'ttft<=0.5')".to_string(),
                ));
            };
            let spec = serq::study::SearchSpec {
                slo,
                target: attain,
                load,
                at,
                grid,
                cost,
                monotone,
                tol,
                max_replications,
                settings: options.settings(),
            };
            search(SearchArgs {
                file,
                overrides: options.overrides(sets),
                spec,
                json,
                out,
                jsonl: format == "jsonl",
                resume,
                force,
                plot,
            })
        }
        Command::Check { file, sets } => {
            let input = Input::read(&file.path)?;
            let program = input.compile(&sets.overrides())?;
            emit(&format!("{}: ok ({})\n", input.name, summary(&program)));
            let extensions = input.extensions(&program);
            if !extensions.is_empty() {
                emit(&format!(
                    "{}: uses serq extensions ({}): pyserq 0.1.0 will not run it\n",
                    input.name,
                    extensions.join(", ")
                ));
            }
            Ok(())
        }
        Command::Ir { file, sets } => {
            let input = Input::read(&file.path)?;
            let program = input.compile(&sets.overrides())?;
            emit(&format!("{}\n", program.to_json()));
            Ok(())
        }
        Command::PlotSeries {
            file,
            y,
            out,
            log_y,
            target,
        } => {
            let text = std::fs::read_to_string(&file)
                .map_err(|e| Failure::Usage(format!("cannot read `{}`: {e}", file.display())))?;
            let svg = plot_series(&text, &y, log_y, target)
                .map_err(|m| Failure::Usage(format!("{}: {m}", file.display())))?;
            match out {
                Some(path) => write_file(&path, &svg),
                None => {
                    emit(&svg);
                    Ok(())
                }
            }
        }
        Command::Draw {
            file,
            sets,
            by_family,
            members,
            format,
            out,
        } => {
            let input = Input::read(&file.path)?;
            let program = input.compile(&sets.overrides())?;
            debug_assert_eq!(format, "svg", "clap admits only svg");
            let fold = match (by_family, members) {
                (true, _) => serq::view::Fold::ByFamily,
                (_, true) => serq::view::Fold::Members,
                _ => serq::view::Fold::Auto,
            };
            let svg = serq::view::svg_folded(&program, &input.name, fold);
            match out {
                Some(path) => write_file(&path, &svg),
                None => {
                    emit(&svg);
                    Ok(())
                }
            }
        }
        Command::Run {
            file,
            sets,
            options,
            json,
            samples,
            by_family,
            members,
            replications,
            slo,
            requests,
            timeline,
            timeline_window,
            timeline_cap,
            series,
            every,
            plot,
            y,
        } => {
            let fold = match (by_family, members) {
                (true, _) => serq::report::Fold::ByFamily,
                (_, true) => serq::report::Fold::Members,
                _ => serq::report::Fold::Auto,
            };
            let input = Input::read(&file.path)?;
            let settings = options.settings();
            let overrides = options.overrides(sets);
            let slo = slo.slo();
            let program = input.compile(&overrides)?;
            check_slo(slo.as_ref(), &program, &input.name)?;
            if let Some(path) = &requests {
                check_writable(path)?;
            }
            let recorder = match &timeline {
                Some(path) => Some(open_timeline(
                    path,
                    timeline_window,
                    timeline_cap,
                    program.horizon,
                )?),
                None => None,
            };
            if let (Some(path), Some(dt)) = (&series, every) {
                check_series(&program, dt)?;
                check_writable(path)?;
            }
            if let Some(path) = &plot {
                check_writable(path)?;
            }
            if let Some(r) = replications {
                // Replications are reported together: Ctrl-C says so and ends.
                let _ = ctrlc::set_handler(|| {
                    eprintln!(
                        "\ninterrupted: replications report together, so nothing is reported"
                    );
                    std::process::exit(130);
                });
                let replicated = serq::study::replicate_slo(
                    &program,
                    r as usize,
                    settings,
                    slo.as_ref(),
                    &|| {},
                )
                .map_err(|e| {
                    eprint!("{}", input.render_run_error(&program, &e.error));
                    eprintln!("(in replication {}, seed {})", e.replication, e.seed);
                    Failure::Program
                })?;
                for w in replicated.warnings(&input.name) {
                    eprintln!("warning: {}: {}", input.name, w.message);
                }
                match (json, by_family) {
                    (true, false) => emit(&format!("{}\n", replicated.to_json())),
                    (true, true) => emit(&format!("{}\n", replicated.to_json_by_family())),
                    (false, _) => emit(&replicated.to_table_folded(&input.name, fold)),
                }
                return Ok(());
            }
            let interrupted = interrupt_flag();
            let mut progress = RunProgress::new(program.horizon, !json);
            let mut tick = |now: f64| progress.tick(now);
            let mut options = serq::RunOptions {
                progress: Some(&mut tick),
                interrupt: interrupted,
                strict: settings.strict,
                timeline: recorder,
                series: every.map(|dt| Box::new(serq::report::Series::new(dt))),
                ..match &slo {
                    Some(_) => serq::report::Slo::run_options(),
                    None => serq::RunOptions::default(),
                }
            };
            let result = serq::run_with(&program, &mut options);
            let recorder = options.timeline.take();
            let recorded_series = options.series.take();
            drop(options);
            progress.finish();
            if let (Some(recorder), Ok(report), Some(path)) = (recorder, &result, &timeline) {
                finish_timeline(*recorder, report.end, path, timeline_cap)?;
            }
            if let (Some(recorded), Ok(report), Some(path)) = (recorded_series, &result, &series) {
                let csv = recorded.to_csv(report, by_family);
                write_file(path, &csv)?;
                if let (Some(svg), Some(y)) = (&plot, &y) {
                    write_file(
                        svg,
                        &plot_series(&csv, y, false, None)
                            .map_err(|m| Failure::Usage(format!("{}: {m}", path.display())))?,
                    )?;
                }
            }
            let mut report = result.map_err(|e| {
                eprint!("{}", input.render_run_error(&program, &e));
                Failure::Program
            })?;
            report.source_name = input.name.clone();
            let partial = interrupted.is_some_and(|i| i.load(std::sync::atomic::Ordering::Relaxed));
            if partial {
                eprintln!(
                    "\ninterrupted at t = {} of the horizon {} ({} events)",
                    serq::ir::shown(report.end),
                    serq::ir::shown(report.horizon),
                    report.events
                );
                if report.end <= report.warmup {
                    eprintln!(
                        "no report: the run stopped before its warmup ({}) ended",
                        serq::ir::shown(report.warmup)
                    );
                    return Err(Failure::Interrupted);
                }
            }
            for w in report.warnings() {
                eprintln!("warning: {}: {}", input.name, w.message);
            }
            let mut text = match (json, by_family) {
                (true, false) => report.to_json(samples),
                (true, true) => report.to_json_by_family(samples),
                (false, _) => report.to_table_folded(fold),
            };
            if let Some(slo) = &slo
                && let Some(a) = slo.attainment(&report)
            {
                if json {
                    text = serq::report::with_slo_json(&text, &a.to_json());
                } else {
                    text.push_str(&slo.table_line(&a));
                }
                if let (Some(path), Some(csv)) = (&requests, slo.requests_csv(&report)) {
                    write_file(path, &csv)?;
                }
            }
            if partial {
                // Marked where a reader of either form looks first.
                text = if json {
                    serq::report::with_field_json(&text, "partial", "true")
                } else {
                    format!(
                        "partial report: interrupted at t = {} of the horizon {}\n{text}",
                        serq::ir::shown(report.end),
                        serq::ir::shown(report.horizon)
                    )
                };
            }
            if json {
                text.push('\n');
            }
            emit(&text);
            if partial {
                return Err(Failure::Interrupted);
            }
            Ok(())
        }
    }
}

/// The flag a plain `serq run` reads to stop early: the first Ctrl-C sets
/// it (the run then ends and prints its partial report), a second ends
/// the process at once. `None` when a handler cannot be set.
fn interrupt_flag() -> Option<&'static std::sync::atomic::AtomicBool> {
    use std::sync::atomic::{AtomicBool, Ordering};
    static INTERRUPTED: AtomicBool = AtomicBool::new(false);
    ctrlc::set_handler(|| {
        if INTERRUPTED.swap(true, Ordering::Relaxed) {
            std::process::exit(130);
        }
    })
    .ok()
    .map(|()| &INTERRUPTED)
}

/// The progress bar of `serq run`: simulated time against the horizon, on
/// stderr, drawn only once a run has taken [`RunProgress::DELAY`] of wall
/// time, and never when stderr is not a terminal or the report is JSON.
/// The engine calls [`RunProgress::tick`] about every 100 000 events, so
/// the wall clock is read there and never per event.
struct RunProgress {
    /// Whether a bar may be drawn at all.
    enabled: bool,
    started: std::time::Instant,
    horizon: f64,
    bar: Option<indicatif::ProgressBar>,
}

impl RunProgress {
    /// Runs shorter than this never show a bar.
    const DELAY: std::time::Duration = std::time::Duration::from_secs(2);
    /// Steps of the bar (per mille of the horizon).
    const STEPS: u64 = 1000;

    fn new(horizon: f64, text_report: bool) -> RunProgress {
        use std::io::IsTerminal;
        RunProgress {
            enabled: text_report && std::io::stderr().is_terminal(),
            started: std::time::Instant::now(),
            horizon,
            bar: None,
        }
    }

    /// The clock has reached `now`.
    fn tick(&mut self, now: f64) {
        if !self.enabled {
            return;
        }
        if self.bar.is_none() {
            if self.started.elapsed() < Self::DELAY {
                return;
            }
            // Elapsed counts from the run's start; the ETA from here on (the
            // first position is a jump that says nothing about the rate).
            let bar = indicatif::ProgressBar::new(Self::STEPS)
                .with_elapsed(self.started.elapsed())
                .with_message(self.clock(now));
            if let Ok(style) = indicatif::ProgressStyle::with_template(
                "{elapsed_precise} [{bar:30}] {percent:>3}%  t = {msg}  eta {eta}",
            ) {
                bar.set_style(style.progress_chars("=> "));
            }
            self.set(&bar, now);
            bar.reset_eta();
            self.bar = Some(bar);
        } else if let Some(bar) = &self.bar {
            self.set(bar, now);
        }
    }

    fn set(&self, bar: &indicatif::ProgressBar, now: f64) {
        // The message first: setting the position may draw a frame, and the
        // first frame must show the time, not a blank.
        bar.set_message(self.clock(now));
        let fraction = (now / self.horizon).clamp(0.0, 1.0);
        bar.set_position((fraction * Self::STEPS as f64) as u64);
    }

    /// `t / horizon`, with about six significant digits of the horizon's magnitude.
    fn clock(&self, now: f64) -> String {
        let decimals = (5.0 - self.horizon.log10().floor()).clamp(0.0, 9.0) as usize;
        format!("{now:.decimals$} / {}", serq::ir::shown(self.horizon))
    }

    /// The run is over: the bar (if any) is cleared before the report prints.
    fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

/// The arguments of `serq sweep`.
struct SweepArgs {
    file: FileArg,
    settings: serq::study::RunSettings,
    overrides: Overrides,
    grid: Vec<serq::study::Axis>,
    replications: usize,
    out: Option<PathBuf>,
    jsonl: bool,
    resume: bool,
    force: bool,
    plot: Option<PathBuf>,
    x: Option<String>,
    y: Option<String>,
    log_y: bool,
    target: Option<f64>,
    units: Vec<(String, String)>,
    /// Which stage families are three columns instead of one per member.
    fold: serq::report::Fold,
    slo: Option<serq::report::Slo>,
}

/// Where a sweep's rows go, and how many are there: shared with the Ctrl-C
/// handler, which takes the lock (so no row is half written) before it
/// says how many points were written and exits.
struct RowSink {
    out: Box<dyn std::io::Write + Send>,
    /// Where the rows go, for messages.
    name: String,
    /// Whether the rows go to standard output.
    to_stdout: bool,
    written: usize,
    total: usize,
}

impl RowSink {
    /// Writes one line and flushes it: a row reaches the file whole. When
    /// standard output's reader has gone (`serq sweep … | head`), the
    /// process ends at once, quietly and successfully, as a tool in a
    /// pipeline does: nobody reads the rest.
    fn write(&mut self, line: &str) -> std::io::Result<()> {
        let written = self
            .out
            .write_all(line.as_bytes())
            .and_then(|()| self.out.flush());
        if self.to_stdout
            && matches!(&written, Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe)
        {
            std::process::exit(0);
        }
        written
    }
}

/// A study's point that did not compile: its diagnostics printed with the
/// point's values, and the fault blamed on a flag (a `--grid`/`--set`
/// name the program lacks: exit 2) or on the program (exit 1).
fn point_failure(
    point: &[(String, f64)],
    error: &serq::CompileError,
    overrides: &Overrides,
) -> Failure {
    let at: Vec<String> = point.iter().map(|(n, v)| format!("{n}={v}")).collect();
    eprintln!("{error} at {}", at.join(", "));
    blame_compile(error, overrides)
}

/// The source program a study (`verb`: sweep or search) reads, with its
/// output files checked before any run: `out` (its path, `--resume`,
/// `--force`) and the plot's path.
fn study_input(
    path: &Path,
    verb: &str,
    (out, resume, force): (Option<&Path>, bool, bool),
    plot: Option<&Path>,
) -> Result<Input, Failure> {
    let input = Input::read(path)?;
    if input.is_ir {
        return Err(Failure::Usage(format!(
            "`{}` is IR, which has no `let` constants to {verb}; {verb} the source program",
            input.name
        )));
    }
    if let Some(path) = out {
        check_out(path, resume, force)?;
    }
    if let Some(path) = plot {
        check_writable(path)?;
    }
    Ok(input)
}

/// Runs a sweep, writes its rows and its plot.
fn sweep(args: SweepArgs) -> Result<(), Failure> {
    use std::io::IsTerminal;
    use std::sync::{Arc, Mutex};
    let input = study_input(
        &args.file.path,
        "sweep",
        (args.out.as_deref(), args.resume, args.force),
        args.plot.as_deref(),
    )?;
    let names: Vec<&str> = args.grid.iter().map(|a| a.name.as_str()).collect();
    let x = match (&args.plot, &args.x, names.first()) {
        (None, _, _) => None,
        (Some(_), Some(x), _) => Some(x.clone()),
        (Some(_), None, Some(first)) => Some(first.to_string()),
        (Some(_), None, None) => {
            return Err(Failure::Usage(
                "--plot needs a --grid parameter for its x axis".to_string(),
            ));
        }
    };
    if let Some(x) = &x
        && !names.contains(&x.as_str())
    {
        let hint = match serq::link::closest(x, names.iter().copied()) {
            Some(c) => format!("; did you mean `{c}`?"),
            None => String::new(),
        };
        return Err(Failure::Usage(format!(
            "--x `{x}` is not a --grid parameter (there are: {}){hint}",
            names.join(", ")
        )));
    }
    // Every point compiles, and every name is checked, before the first run.
    let plan = serq::study::SweepPlan::new(
        &input.text,
        Some(&input.path),
        &args.overrides,
        &args.grid,
        args.replications,
    )
    .map(|plan| plan.with_settings(args.settings).with_fold(args.fold))
    .map_err(|e| match &e {
        serq::study::SweepError::Compile { point, error } => {
            point_failure(point, error, &args.overrides)
        }
        _ => Failure::Usage(format!("{}: {e}", input.name)),
    })?;
    let plan = match args.slo {
        Some(slo) => plan
            .with_slo(slo)
            .map_err(|e| Failure::Usage(format!("{}: {e}", input.name)))?,
        None => plan,
    };
    let y_columns = match &args.y {
        Some(y) => Some(
            serq::study::plot_columns(&plan.columns(), y)
                .map_err(|e| Failure::Usage(format!("--y: {e}")))?,
        ),
        None => None,
    };
    let (x_unit, y_unit) = plot_units(&args.units, &plan, x.as_deref(), args.y.as_deref())?;
    // The rows a resumed sweep keeps, and the file, cut after its last whole line.
    let mut kept: Vec<Vec<serq::study::Cell>> = Vec::new();
    let mut fresh = true;
    if let (true, Some(path)) = (args.resume, &args.out)
        && path.exists()
    {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Failure::Usage(format!("cannot read `{}`: {e}", path.display())))?;
        kept = plan.read_rows(&text, args.jsonl).map_err(|e| {
            Failure::Usage(format!(
                "--resume: `{}` is not an interrupted run of this sweep: {e}",
                path.display()
            ))
        })?;
        let whole = text.rfind('\n').map_or(0, |i| i + 1);
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .and_then(|f| f.set_len(whole as u64).map(|()| f))
            .map_err(|e| Failure::Usage(format!("cannot write `{}`: {e}", path.display())))?;
        drop(file);
        fresh = whole == 0;
    }
    let out: Box<dyn std::io::Write + Send> = match &args.out {
        Some(path) => {
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(!fresh)
                .write(true)
                .truncate(fresh)
                .open(path)
                .map_err(|e| Failure::Usage(format!("cannot write `{}`: {e}", path.display())))?;
            Box::new(file)
        }
        None => Box::new(std::io::stdout()),
    };
    let sink = Arc::new(Mutex::new(RowSink {
        out,
        name: args
            .out
            .as_ref()
            .map_or("standard output".to_string(), |p| {
                format!("`{}`", p.display())
            }),
        to_stdout: args.out.is_none(),
        written: kept.len(),
        total: plan.len(),
    }));
    let write_error = |e: std::io::Error| Failure::Usage(format!("cannot write the rows: {e}"));
    if fresh && !args.jsonl {
        lock(&sink).write(&plan.csv_header()).map_err(write_error)?;
    }
    let handler_sink = Arc::clone(&sink);
    // A second handler cannot be set (a library caller may have one): then
    // Ctrl-C ends the process as it would anyway, the rows written kept.
    let _ = ctrlc::set_handler(move || {
        let sink = lock(&handler_sink);
        eprintln!(
            "\ninterrupted: {} of {} points written to {}; rerun with --resume to run the rest",
            sink.written, sink.total, sink.name
        );
        std::process::exit(130);
    });
    let runs = (plan.len() - kept.len()) * args.replications;
    let bar = if std::io::stderr().is_terminal() && runs > 0 {
        let bar = indicatif::ProgressBar::new(runs as u64);
        if let Ok(style) = indicatif::ProgressStyle::with_template(
            "{elapsed_precise} [{bar:40}] {pos}/{len} runs, eta {eta}",
        ) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar
    } else {
        indicatif::ProgressBar::hidden()
    };
    let mut written_error = None;
    let result = plan.run(kept.len(), &|| bar.inc(1), &mut |point| {
        let line = if args.jsonl {
            plan.jsonl_line(point)
        } else {
            plan.csv_line(point)
        };
        let mut sink = lock(&sink);
        match sink.write(&line) {
            Ok(()) => sink.written += 1,
            Err(e) => {
                written_error.get_or_insert(e);
            }
        }
    });
    bar.finish_and_clear();
    if let Some(e) = written_error {
        return Err(write_error(e));
    }
    let result = result.map_err(|e| {
        eprintln!("error: {}: {e}", input.name);
        let sink = lock(&sink);
        eprintln!(
            "{} of {} points written to {}",
            sink.written, sink.total, sink.name
        );
        Failure::Program
    })?;
    for point in &result.points {
        let at: Vec<String> = result
            .parameters
            .iter()
            .zip(&point.values)
            .map(|(n, v)| format!("{n}={v}"))
            .collect();
        for w in point.result.warnings(&input.name) {
            eprintln!(
                "warning: {} at {}: {}",
                input.name,
                at.join(", "),
                w.message
            );
        }
    }
    if let (Some(path), Some(x), Some(y), Some(_)) = (&args.plot, &x, &args.y, y_columns) {
        let mut rows = kept;
        rows.extend(result.rows());
        let options = serq::study::PlotOptions {
            log_y: args.log_y,
            target: args.target,
            x_unit,
            y_unit,
        };
        let svg =
            serq::study::plot_rows(&result.parameters, &result.columns(), &rows, x, y, options)
                .map_err(|e| {
                    eprintln!("error: {}: {e}", input.name);
                    Failure::Program
                })?;
        write_file(path, &svg)?;
    }
    Ok(())
}

/// The plot's x and y units from `--units NAME=UNIT`: each NAME must be a
/// grid parameter, an observation or a column; y's unit is its column's,
/// or else its observation's (`response` for `response.p99`).
fn plot_units(
    units: &[(String, String)],
    plan: &serq::study::SweepPlan,
    x: Option<&str>,
    y: Option<&str>,
) -> Result<(Option<String>, Option<String>), Failure> {
    let columns = plan.columns();
    let observations = plan.observations();
    for (name, _) in units {
        let known = plan.parameters().contains(name)
            || observations.contains(name)
            || columns.contains(name);
        if !known {
            let candidates = plan
                .parameters()
                .iter()
                .chain(&observations)
                .map(String::as_str);
            let hint = match serq::link::closest(name, candidates) {
                Some(c) => format!("; did you mean `{c}`?"),
                None => String::new(),
            };
            return Err(Failure::Usage(format!(
                "--units `{name}` is not a --grid parameter, an observation or a column{hint}"
            )));
        }
    }
    let unit_of = |name: &str| {
        units
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, u)| u.clone())
    };
    let x_unit = x.and_then(unit_of);
    let y_unit = y.and_then(|y| {
        unit_of(y).or_else(|| {
            y.split_once('.')
                .and_then(|(observation, _)| unit_of(observation))
        })
    });
    Ok((x_unit, y_unit))
}

/// Refuses to overwrite a non-empty output file unless asked to resume it
/// or to overwrite it (`--force`); both at once is a usage error.
fn check_out(path: &Path, resume: bool, force: bool) -> Result<(), Failure> {
    if resume && force {
        return Err(Failure::Usage(
            "--force and --resume contradict each other: --resume keeps the rows in --out, --force discards them".to_string(),
        ));
    }
    check_writable(path)?;
    let non_empty = std::fs::metadata(path).is_ok_and(|m| m.len() > 0);
    if non_empty && !resume && !force {
        return Err(Failure::Usage(format!(
            "`{}` is not empty: add --resume to continue it, or --force to overwrite it",
            path.display()
        )));
    }
    Ok(())
}

/// The arguments of `serq search`.
struct SearchArgs {
    file: FileArg,
    overrides: Overrides,
    spec: serq::study::SearchSpec,
    json: bool,
    out: Option<PathBuf>,
    jsonl: bool,
    resume: bool,
    force: bool,
    plot: Option<PathBuf>,
}

/// Runs a search: its probes to --out as they are decided, its answer to
/// standard output.
fn search(args: SearchArgs) -> Result<(), Failure> {
    use std::io::IsTerminal;
    use std::sync::{Arc, Mutex};
    let input = study_input(
        &args.file.path,
        "search",
        (args.out.as_deref(), args.resume, args.force),
        args.plot.as_deref(),
    )?;
    let plan =
        serq::study::SearchPlan::new(&input.text, Some(&input.path), &args.overrides, args.spec)
            .map_err(|e| match &e {
                serq::study::SearchError::Compile { point, error } => {
                    point_failure(point, error, &args.overrides)
                }
                _ => Failure::Usage(format!("{}: {e}", input.name)),
            })?;
    let mut replay = Vec::new();
    let mut fresh = true;
    if let (true, Some(path)) = (args.resume, &args.out)
        && path.exists()
    {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Failure::Usage(format!("cannot read `{}`: {e}", path.display())))?;
        replay = plan.read_probes(&text, args.jsonl).map_err(|e| {
            Failure::Usage(format!(
                "--resume: `{}` is not an interrupted run of this search: {e}",
                path.display()
            ))
        })?;
        let whole = text.rfind('\n').map_or(0, |i| i + 1);
        std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .and_then(|f| f.set_len(whole as u64))
            .map_err(|e| Failure::Usage(format!("cannot write `{}`: {e}", path.display())))?;
        fresh = whole == 0;
    }
    let replayed = replay.len();
    let out: Option<Box<dyn std::io::Write + Send>> = match &args.out {
        Some(path) => {
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(!fresh)
                .write(true)
                .truncate(fresh)
                .open(path)
                .map_err(|e| Failure::Usage(format!("cannot write `{}`: {e}", path.display())))?;
            Some(Box::new(file))
        }
        None => None,
    };
    let sink = Arc::new(Mutex::new(RowSink {
        out: out.unwrap_or_else(|| Box::new(std::io::sink())),
        name: args
            .out
            .as_ref()
            .map_or("nowhere (no --out)".to_string(), |p| {
                format!("`{}`", p.display())
            }),
        to_stdout: false,
        written: 0,
        total: 0,
    }));
    let write_error = |e: std::io::Error| Failure::Usage(format!("cannot write the probes: {e}"));
    if fresh && !args.jsonl && args.out.is_some() {
        lock(&sink).write(&plan.csv_header()).map_err(write_error)?;
    }
    let handler_sink = Arc::clone(&sink);
    let _ = ctrlc::set_handler(move || {
        let sink = lock(&handler_sink);
        eprintln!(
            "\ninterrupted: {} probes written to {}; rerun with --resume to go on",
            sink.written, sink.name
        );
        std::process::exit(130);
    });
    let bar = if std::io::stderr().is_terminal() {
        let bar = indicatif::ProgressBar::new_spinner();
        if let Ok(style) =
            indicatif::ProgressStyle::with_template("{elapsed_precise} {spinner} {pos} runs  {msg}")
        {
            bar.set_style(style);
        }
        bar
    } else {
        indicatif::ProgressBar::hidden()
    };
    let mut written_error = None;
    let names = plan.parameters().to_vec();
    let load_name = plan.spec().load.as_ref().map(|l| l.name.clone());
    let result = plan.run(replay, &|| bar.inc(1), &mut |probe, was_replayed| {
        let mut sink = lock(&sink);
        sink.written += 1;
        let mut at: Vec<String> = names
            .iter()
            .zip(&plan.points()[probe.config])
            .map(|(n, v)| format!("{n}={v}"))
            .collect();
        if let (Some(n), Some(v)) = (&load_name, probe.load) {
            at.push(format!("{n}={v:.4}"));
        }
        bar.set_message(format!(
            "{} probes; last {}: {}",
            sink.written,
            at.join(" "),
            probe.verdict.word()
        ));
        if was_replayed {
            return;
        }
        let line = if args.jsonl {
            plan.jsonl_line(probe)
        } else {
            plan.csv_line(probe)
        };
        if let Err(e) = sink.write(&line) {
            written_error.get_or_insert(e);
        }
    });
    bar.finish_and_clear();
    if let Some(e) = written_error {
        return Err(write_error(e));
    }
    let result = result.map_err(|e| match e {
        serq::study::SearchError::Resume(m) => Failure::Usage(format!(
            "--resume: `{}` is not an interrupted run of this search: {m}",
            args.out
                .as_ref()
                .map_or(String::new(), |p| p.display().to_string())
        )),
        e => {
            eprintln!("error: {}: {e}", input.name);
            Failure::Program
        }
    })?;
    if replayed > 0 {
        eprintln!("replayed {replayed} probes from the file");
    }
    for w in &result.warnings {
        eprintln!("warning: {}: {w}", input.name);
    }
    if let Some(path) = &args.plot {
        let svg = serq::study::plot_search(&plan, &result).map_err(|e| {
            eprintln!("error: {}: {e}", input.name);
            Failure::Program
        })?;
        write_file(path, &svg)?;
    }
    if args.json {
        emit(&format!("{}\n", result.to_json(plan.spec())));
    } else {
        emit(&result.to_table(plan.spec(), &input.name));
    }
    Ok(())
}

/// The row sink, even if a thread panicked while holding it (its rows are
/// whole lines either way).
fn lock(sink: &std::sync::Mutex<RowSink>) -> std::sync::MutexGuard<'_, RowSink> {
    sink.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A program file as read: its path and display name, its text, and
/// whether it is IR.
struct Input {
    path: PathBuf,
    name: String,
    text: String,
    is_ir: bool,
}

impl Input {
    fn read(path: &Path) -> Result<Input, Failure> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Failure::Usage(format!("cannot read `{}`: {e}", path.display())))?;
        Ok(Input {
            path: path.to_path_buf(),
            name: path.display().to_string(),
            text,
            is_ir: path.extension().is_some_and(|e| e == "json"),
        })
    }

    /// The serq extensions the compiled program uses (docs/language.md §12):
    /// its arrival law's, and the shipped libraries its text names.
    fn extensions(&self, program: &Program) -> Vec<String> {
        let mut out: Vec<String> = program
            .arrival
            .extension()
            .map(String::from)
            .into_iter()
            .collect();
        if !self.is_ir {
            let (ast, _) = serq::syntax::parse(&self.text);
            for item in &ast.items {
                if let serq::syntax::ast::Item::UseShipped { name, .. } = item {
                    out.push(format!("use <{name}>"));
                }
            }
        }
        out
    }

    fn compile(&self, overrides: &Overrides) -> Result<ValidProgram, Failure> {
        if self.is_ir {
            serq::compile_ir(&self.text, overrides).map_err(|errors| {
                for e in &errors {
                    eprintln!("error[{}]: {}: {e}", e.rule, self.name);
                    if let Some(help) = e.help {
                        eprintln!("  = help: {help}");
                    }
                }
                let run_flags = overrides.horizon.is_some()
                    || overrides.warmup.is_some()
                    || overrides.arrivals.is_some();
                blame(
                    errors
                        .iter()
                        .all(|e| e.rule == "set-unknown" || (e.rule == "run-options" && run_flags)),
                )
            })
        } else {
            // From the file's path: `use` and a relative `trace` resolve beside it.
            let program =
                serq::compile_text_at(&self.text, &self.path, overrides).map_err(|e| {
                    eprintln!("{e}");
                    blame_compile(&e, overrides)
                })?;
            // The lints' warnings, on stderr: the exit status and the report stay.
            eprint!("{}", serq::lint_text_at(&self.text, &self.path, overrides));
            Ok(program)
        }
    }

    /// A run-time error: its message, the statement's place (with the
    /// source line and a caret when the program came from source), the
    /// session and the time.
    fn render_run_error(&self, program: &Program, e: &RunError) -> String {
        serq::render_run_error(program, e, &self.name, (!self.is_ir).then_some(&self.text))
    }
}

/// The failure of a compilation already printed: a usage error (exit 2)
/// when every fault is a flag's (a name given by a flag that the program
/// lacks, or a `--horizon`, `--warmup` or `--arrivals` at odds with the
/// run's other settings); the program's (exit 1) otherwise, a `--set`
/// that makes it fail to link included.
fn blame_compile(error: &serq::CompileError, overrides: &Overrides) -> Failure {
    match error {
        serq::CompileError::Diagnostics { diagnostics, .. } => blame(
            diagnostics
                .iter()
                .all(|d| d.rule == "set-unknown" || serq::link::blames_flags(d, overrides)),
        ),
        _ => Failure::Program,
    }
}

/// The failure of a compilation already printed: a usage error (exit 2)
/// when `only_flags`, the program's fault (exit 1) otherwise.
fn blame(only_flags: bool) -> Failure {
    if only_flags {
        Failure::UsageShown
    } else {
        Failure::Program
    }
}

/// The one-line summary `serq check` prints.
fn summary(program: &Program) -> String {
    let count = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    let mut parts = vec![
        count(program.stages.len(), "stage"),
        count(program.pools.len(), "pool"),
        count(program.observes.len(), "observation"),
        count(program.blocks.iter().map(Vec::len).sum(), "statement"),
    ];
    if let Some(share) = program.share {
        parts.push(format!("share {}", share.word()));
    }
    parts.push(format!("horizon {}", serq::ir::shown(program.horizon)));
    parts.join(", ")
}

/// Checks, before any run, that `path` can be written: its directory
/// exists (the file itself is written at the end).
fn check_writable(path: &Path) -> Result<(), Failure> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if dir.is_dir() && !path.is_dir() {
        Ok(())
    } else {
        Err(Failure::Usage(format!(
            "cannot write `{}`: no such directory",
            path.display()
        )))
    }
}

/// `--every DT` against the run: at most a million windows, and at most
/// 50 million figures kept (a window's figure for each stage member and
/// three for each pool member), refused before the run.
fn check_series(program: &serq::ValidProgram, every: f64) -> Result<(), Failure> {
    use serq::report::WindowedAverage;
    let windows = WindowedAverage::windows_of(program.warmup, program.horizon, every);
    let figures = windows * (program.stages.len() + 3 * program.pools.len()).max(1) as f64;
    if windows > WindowedAverage::MAX_EVERY_WINDOWS as f64 || figures > 5e7 {
        return Err(Failure::Usage(format!(
            "--every {} makes {windows} windows of [{}, {}] ({figures} figures to keep); \
             at most {} windows and 5e7 figures: widen --every",
            serq::ir::shown(every),
            serq::ir::shown(program.warmup),
            serq::ir::shown(program.horizon),
            WindowedAverage::MAX_EVERY_WINDOWS
        )));
    }
    Ok(())
}

/// A `--series` CSV's column `y` against each window's start, as SVG.
fn plot_series(csv: &str, y: &str, log_y: bool, target: Option<f64>) -> Result<String, String> {
    let (columns, rows) = series_rows(csv)?;
    let options = serq::study::PlotOptions {
        log_y,
        target,
        x_unit: Some("window start".to_string()),
        y_unit: None,
    };
    let parameters = ["from".to_string()];
    serq::study::plot_rows(&parameters, &columns, &rows, "from", y, options)
        .map_err(|e| e.to_string())
}

/// A `--series` CSV's columns and rows (an empty cell is undefined).
fn series_rows(text: &str) -> Result<(Vec<String>, Vec<Vec<serq::study::Cell>>), String> {
    let mut lines = text.lines();
    let columns: Vec<String> = match lines.next() {
        Some(h) if h.starts_with("from,to,") => h.split(',').map(String::from).collect(),
        _ => return Err("not a `serq run --series` CSV (its header starts `from,to,`)".into()),
    };
    let mut rows = Vec::new();
    for (i, line) in lines.enumerate() {
        let cells: Vec<&str> = line.split(',').collect();
        if cells.len() != columns.len() {
            return Err(format!(
                "line {}: {} cells where the header has {}",
                i + 2,
                cells.len(),
                columns.len()
            ));
        }
        let row = cells.iter().map(|c| match c.trim() {
            "" => Ok(serq::study::Cell::Number(None)),
            x => x
                .parse::<f64>()
                .map(|v| serq::study::Cell::Number(Some(v)))
                .map_err(|_| format!("line {}: `{x}` is not a number", i + 2)),
        });
        rows.push(row.collect::<Result<Vec<_>, _>>()?);
    }
    Ok((columns, rows))
}

/// `--timeline`'s recorder, its window checked against the run's horizon
/// and its file created, before the run: a bad window or an unwritable
/// path is a usage error.
fn open_timeline(
    path: &Path,
    window: Option<(f64, f64)>,
    cap: u64,
    horizon: f64,
) -> Result<Box<serq::timeline::Timeline>, Failure> {
    let window = window.unwrap_or((0.0, f64::INFINITY));
    if window.0 >= horizon {
        return Err(Failure::Usage(format!(
            "--timeline-window {}:{} starts at or after the run's horizon {}: nothing would be written",
            serq::ir::shown(window.0),
            serq::ir::shown(window.1),
            serq::ir::shown(horizon)
        )));
    }
    check_writable(path)?;
    serq::timeline::Timeline::create(path, window, cap)
        .map(Box::new)
        .map_err(|e| Failure::Usage(format!("cannot write `{}`: {e}", path.display())))
}

/// Closes the timeline at the run's end; warns when its cap stopped it.
fn finish_timeline(
    recorder: serq::timeline::Timeline,
    end: f64,
    path: &Path,
    cap: u64,
) -> Result<(), Failure> {
    let written = recorder
        .finish(end)
        .map_err(|e| Failure::Usage(format!("cannot write `{}`: {e}", path.display())))?;
    if written.capped {
        eprintln!(
            "warning: {}: the timeline stopped at its cap of {cap} events before the run's end; \
             narrow it with --timeline-window FROM:TO or raise --timeline-cap",
            path.display()
        );
    }
    Ok(())
}

/// Writes a command's output to the file `--out` or `--plot` names; failing
/// to is a usage error.
fn write_file(path: &Path, text: &str) -> Result<(), Failure> {
    std::fs::write(path, text)
        .map_err(|e| Failure::Usage(format!("cannot write `{}`: {e}", path.display())))
}

/// Writes the command's output to stdout; a closed pipe (`serq ir f | head`)
/// ends the output quietly instead of panicking as `print!` would.
fn emit(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}
