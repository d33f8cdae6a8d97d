//! The engine's interface types: what a caller gives a run (its options)
//! and gets back (a run-time error, the session counts), and the run-time
//! limits.
//!
//! Architecture invariant: a leaf: every engine file may import it, it
//! imports none of them.

use crate::ir;

/// A run-time error: the run stops and says where and who.
#[derive(Clone, Debug, PartialEq)]
pub struct RunError {
    /// What went wrong (key words per spec §7/§10: `index`, `negative`, `livelock`, …).
    pub message: String,
    /// The statement at fault as (block, index in block), when there is one.
    pub at: Option<(usize, usize)>,
    /// The session's `serial`, when a session was running.
    pub session: Option<u64>,
    /// The clock when it happened.
    pub time: f64,
}

impl RunError {
    /// The rule broken, a short stable identifier as a link error has
    /// (`index`, `negative`, `livelock`, …): [`RunError::rule_of`] its message.
    pub fn rule(&self) -> &'static str {
        Self::rule_of(&self.message)
    }

    /// The rule of a run-time error's message, read off its key words (the
    /// engine's messages carry them, spec §7/§10), most specific first.
    /// Every rule has a fixture under `tests/diagnostics/run/`.
    ///
    /// ```
    /// use serq::RunError;
    /// assert_eq!(RunError::rule_of("the run's work is negative (-1); an amount must be >= 0"), "negative");
    /// assert_eq!(RunError::rule_of("stage `s`: index 3 out of range (count 2)"), "index");
    /// ```
    pub fn rule_of(message: &str) -> &'static str {
        Self::RULES
            .iter()
            .find(|(key, _)| message.contains(key))
            .map_or("run-time", |&(_, rule)| rule)
    }

    /// The key words of [`RunError::rule_of`] and the rule each gives, most
    /// specific first (a message with none is `run-time`).
    pub const RULES: [(&'static str, &'static str); 16] = [
        ("invariant broken", "invariant"),
        ("livelock", "livelock"),
        ("(max_events)", "max-events"),
        ("live sessions at once", "live-limit"),
        ("is not shared", "share"),
        ("index", "index"),
        ("is negative", "negative"),
        ("NaN", "nan"),
        ("`~", "distribution"),
        ("renewal", "renewal"),
        ("choose count", "choose"),
        ("outside a hold", "outside-hold"),
        ("guard", "guard"),
        ("arrivals", "arrivals"),
        ("failed to drain", "arrivals"),
        ("warmup", "run-options"),
    ];
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "run-time error[{}] at time {}", self.rule(), self.time)?;
        if let Some(s) = self.session {
            write!(f, ", session {s}")?;
        }
        if let Some((b, i)) = self.at {
            write!(f, ", block {b}, statement {i}")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for RunError {}

/// The progress callback is called once every this many events.
pub const PROGRESS_EVERY: u64 = 100_000;

/// More live sessions than this at once is a run-time error: a flood such as
/// `poisson(1e300)` would otherwise fill the memory. It equals the most
/// sessions `batch(n)` may create at time 0 ([`ir::MAX_SESSIONS_AT_ZERO`]).
pub const MAX_LIVE_SESSIONS: u64 = ir::MAX_SESSIONS_AT_ZERO;

/// A computed `choose` count above this is a run-time error (a constant one
/// is refused by the validator): every candidate is evaluated in turn.
pub const MAX_CHOOSE_COUNT: f64 = ir::MAX_CHOOSE_COUNT as f64;

/// How a run is watched and bounded, beyond what the program says.
///
/// ```
/// use serq::engine::{RunOptions, run_with};
/// let source = "stage s : delay;
///               workload { arrive poisson(1); }
///               session { run s (1); }
///               run { horizon 100; }";
/// let program = serq::compile_source(source, &serq::Overrides::default()).unwrap();
/// let mut options = RunOptions { check_invariants: true, ..RunOptions::default() };
/// assert!(run_with(&program, &mut options).is_ok());
/// let mut capped = RunOptions { max_events: Some(10), ..RunOptions::default() };
/// let error = run_with(&program, &mut capped).unwrap_err();
/// assert!(error.message.contains("10 events"));
/// ```
#[derive(Default)]
pub struct RunOptions<'a> {
    /// Called with the clock about once every [`PROGRESS_EVERY`] events
    /// (never per event); a caller that draws a progress bar reads the wall
    /// clock here, not in the loop.
    pub progress: Option<&'a mut dyn FnMut(f64)>,
    /// Read as often as `progress` is called: once it holds `true` (a
    /// Ctrl-C handler sets it), the run ends at the current clock and
    /// reports what it measured so far, its `end` below the horizon.
    pub interrupt: Option<&'a std::sync::atomic::AtomicBool>,
    /// Stop with a [`RunError`] (naming the cap and `events`) instead of
    /// taking more than this many events.
    pub max_events: Option<u64>,
    /// After every event, check the engine's invariants (pool allocations
    /// within capacity, flow rates within every shared stage's capacity,
    /// live sessions = created − ended); a violation is a [`RunError`]
    /// whose message contains `invariant`. Costs time in proportion to the
    /// pools, stages and flows at every event.
    pub check_invariants: bool,
    /// Keep, beside each observation sample, when it was taken, by which
    /// session and in which turn ([`crate::report::Observation::provenance`]).
    /// Off for `serq run`: a run then keeps the samples' values only.
    pub provenance: bool,
    /// Keep where each turn of a session began and where each session
    /// ended, at or after warm-up ([`crate::Report::turn_marks`]): with
    /// [`RunOptions::provenance`], what SLO attainment counts requests
    /// from ([`crate::report::Slo`]). Off for a plain run.
    pub turn_marks: bool,
    /// A computed amount that is negative (a run's work, a hold's units or
    /// reserve, a `grow`, a `load`) is a run-time error, as `--strict`
    /// asks; by default it is taken as 0, as pyserq 0.1.0 takes it, and
    /// counted in the report's warnings (spec §10 Q13).
    pub strict: bool,
    /// Record what the run did as a Chrome trace (`serq run --timeline`,
    /// docs/timeline.md): taken by the run, given back here at its end,
    /// for the caller to [`crate::timeline::Timeline::finish`] with the
    /// run's end. `None`: nothing is recorded and nothing is paid.
    pub timeline: Option<Box<crate::timeline::Timeline>>,
    /// Record the series over time (`serq run --series`): taken by the
    /// run, given back here at its end with every window's figures, for
    /// [`crate::report::Series::to_csv`] with the run's report.
    pub series: Option<Box<crate::report::Series>>,
}

impl std::fmt::Debug for RunOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunOptions")
            .field("progress", &self.progress.is_some())
            .field("interrupt", &self.interrupt.is_some())
            .field("max_events", &self.max_events)
            .field("check_invariants", &self.check_invariants)
            .field("provenance", &self.provenance)
            .field("turn_marks", &self.turn_marks)
            .field("strict", &self.strict)
            .field("timeline", &self.timeline.is_some())
            .field("series", &self.series.is_some())
            .finish()
    }
}

/// How many sessions a run created and ended, over the whole run
/// (warm-up included, unlike the report's `ended`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionCounts {
    /// Sessions created (the report's `arrivals`).
    pub created: u64,
    /// Sessions that ended, at any time.
    pub ended: u64,
    /// Sessions live at the end, counted one by one (not from the two above).
    pub live: u64,
}
