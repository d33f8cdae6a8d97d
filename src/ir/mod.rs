//! The IR: a linked program, the contract between the front end and the engine.
//!
//! Architecture invariant: nothing here knows the source text or the engine.
//! Every rule a program must obey is checked by [`Program::validate`], so IR
//! that arrives as JSON from another tool meets the same rules as the
//! linker's output. The JSON shape is documented in docs/ir.md; its
//! `"version"` is [`IR_VERSION`].

mod moment;
mod number;
mod ops;
mod real;
mod real_opt;
mod valid;
mod validate;

use serde::{Deserialize, Serialize};

pub use moment::{Moment, RENAMED_CONTEXT};
pub use number::shown;
pub use ops::truth;
pub use valid::ValidProgram;
pub use validate::IrError;

/// The IR version this crate writes and reads. Version 8 added `Run::also`
/// (a run over several stages) and `Program::share`.
pub const IR_VERSION: u32 = 8;

/// The most sessions `batch(n)` or `closed(n)` may create at time 0: each is
/// a live session from the start, so a larger n is a memory blow-up rather
/// than a study (10^7 sessions already take gigabytes).
pub const MAX_SESSIONS_AT_ZERO: u64 = 10_000_000;

/// The largest `choose j in n` count: each of the n candidates is evaluated
/// in turn at one instant, so a larger n is a hang rather than a choice.
pub const MAX_CHOOSE_COUNT: u64 = 10_000_000;

/// The most expected arrivals of `poisson(λ)` up to the horizon, λ·horizon:
/// 2^42, so that at the horizon the clock still resolves the mean gap
/// 1/λ into 2^10 steps (its spacing there is about horizon·2^−52):
/// `horizon 1e300` with `poisson(1)` would otherwise run for ever at one
/// instant. (A workload without an open arrival stream ends when its
/// events run out, whatever the horizon.)
pub const MAX_EXPECTED_ARRIVALS: f64 = 4_398_046_511_104.0;

/// The largest `k` of `~erlang(k, m)`: a draw sums k exponentials (as the
/// reference does, so its stream is the reference's), and more than this
/// would make one draw a hang.
pub const MAX_ERLANG_K: f64 = 1_000_000.0;

/// How deep JSON arrays and objects may nest in an IR file. Linked IR nests
/// at most about 5 levels per level of expression (`{"Call": ["Min",
/// [{"Expr": …}]]}`) and expressions nest at most 100 deep; 1000 leaves room
/// and keeps reading within a 2 MiB thread stack in a debug build.
pub const MAX_JSON_DEPTH: usize = 1000;

/// The line of the first bracket that nests deeper than [`MAX_JSON_DEPTH`],
/// if any (brackets inside strings do not count).
fn json_too_deep(text: &str) -> Option<usize> {
    let (mut depth, mut line) = (0usize, 1usize);
    let (mut in_string, mut escaped) = (false, false);
    for b in text.bytes() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'\n' => line += 1,
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_JSON_DEPTH {
                    return Some(line);
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

/// Number of built-in attribute slots (`cached` … `computed`, slots 0–8).
pub const BUILTIN_ATTRS: [&str; 9] = [
    "cached", "serial", "turn_no", "new", "out", "think", "more", "forced", "computed",
];
/// Slot of the built-in attribute `serial`.
pub const SLOT_SERIAL: usize = 1;
/// Slot of the built-in attribute `turn_no`.
pub const SLOT_TURN: usize = 2;
/// Slot of the built-in attribute `cached` (what an admission consumed).
pub const SLOT_CACHED: usize = 0;
/// Slot of the built-in attribute `new` (a trace row's new tokens).
pub const SLOT_NEW: usize = 3;
/// Slot of the built-in attribute `out` (a trace row's output tokens).
pub const SLOT_OUT: usize = 4;
/// Slot of the built-in attribute `more` (whether trace rows remain).
pub const SLOT_MORE: usize = 6;
/// Slot of the built-in attribute `computed` (a preempted hold's position).
pub const SLOT_COMPUTED: usize = 8;

/// A linked program.
///
/// The JSON reader refuses a field it does not know (docs/ir.md §1): a
/// misspelt or newer field would otherwise be dropped and the program run
/// wrongly. Tier-2 fields are left out of the JSON when they hold their
/// default, so a kernel program's IR reads as it did before they existed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Program {
    /// Always [`IR_VERSION`].
    pub version: u32,
    /// Attribute names by slot: the nine built-ins, then user attributes.
    pub attrs: Vec<String>,
    /// Observation names by index, in program order.
    pub observes: Vec<String>,
    /// Pools, a family `x[N]` flattened into N consecutive entries.
    pub pools: Vec<Pool>,
    /// Stages, flattened like pools.
    pub stages: Vec<Stage>,
    /// How sessions arrive.
    pub arrival: Arrival,
    /// Block run when a session is created (always 0).
    pub init: usize,
    /// Block run at every `turn;` (always 1).
    pub turn: usize,
    /// The session's program (always 2).
    pub session: usize,
    /// An arena of statement lists, indexed by the block numbers above and in statements.
    pub blocks: Vec<Vec<Stmt>>,
    /// Events later than this are not processed.
    #[serde(with = "real")]
    pub horizon: f64,
    /// Statistics cover `[warmup, end]`.
    #[serde(with = "real")]
    pub warmup: f64,
    /// The seed of every random stream.
    pub seed: u64,
    /// Stop after this many open arrivals and end when the last session ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrivals: Option<u64>,
    /// The sharing policy of flows; present exactly when some run has a non-empty `also`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share: Option<Share>,
    /// Attribute slots named by `hidden` (spec §8.5): the scheduler may not
    /// read them. The validator checks every read; the engine ignores it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hidden: Vec<usize>,
    /// The workload's trace (spec §8.7), when it replays one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceSpec>,
    /// Source positions, parallel to `blocks` (one per statement), when the
    /// program came from source text. Used by run-time errors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub positions: Option<Vec<Vec<Position>>>,
}

/// A workload trace: which file the sessions replay, and how (spec §8.7).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceSpec {
    /// The CSV file as written in `trace "…"` (or given by an override);
    /// a relative path is resolved against the program file's directory.
    pub path: String,
    /// `ordered`: session i replays corpus session i mod n; otherwise each
    /// session draws its corpus session from the trace stream.
    #[serde(default, skip_serializing_if = "is_false")]
    pub ordered: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// A line and column (both from 1) in the program's source text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Position {
    /// Line, from 1.
    pub line: u32,
    /// Column in characters, from 1.
    pub col: u32,
}

/// A counted resource (one member of a pool family).
///
/// Every option but `cap` is Tier 2 (spec §8.3) and left out of the JSON
/// when it holds its default.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pool {
    /// The family's name (every member of `x[N]` is named `x`).
    pub name: String,
    /// Capacity in units (`inf` by default).
    #[serde(with = "real")]
    pub cap: f64,
    /// `block b`: allocations round up to multiples of b, cached entries down.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "real_opt")]
    pub block: Option<f64>,
    /// The order cached entries are evicted in.
    #[serde(default, skip_serializing_if = "Evict::is_lru")]
    pub evict: Evict,
    /// What a growth that does not fit does.
    #[serde(default, skip_serializing_if = "Preempt::is_none")]
    pub preempt: Preempt,
    /// `queue by (k…)`: the waiting hold with the smallest key tuple is the
    /// head; `None` is `queue fifo` (join order).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<Vec<Expr>>,
    /// `spill T via L (w) when (c)`: where evicted pieces go.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spill: Option<Spill>,
    /// `admit via E`: the stage member (a step stage) whose iterations admit
    /// this pool member's queue, instead of the settle's admission pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub admit_via: Option<usize>,
}

impl Pool {
    /// A pool of capacity `cap` with every Tier-2 option at its default.
    pub fn with_cap(name: impl Into<String>, cap: f64) -> Pool {
        Pool {
            name: name.into(),
            cap,
            block: None,
            evict: Evict::Lru,
            preempt: Preempt::None,
            queue: None,
            spill: None,
            admit_via: None,
        }
    }
}

/// The order in which a pool evicts cached entries (spec §8.3).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum Evict {
    /// Oldest release first, ties by release order.
    #[default]
    Lru,
    /// Ascending key tuple at the Evict moment, ties by release order.
    By(Vec<Expr>),
}

impl Evict {
    fn is_lru(&self) -> bool {
        matches!(self, Evict::Lru)
    }
}

/// What a growth that does not fit does (spec §8.3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Preempt {
    /// The grower stalls until a release makes room.
    #[default]
    None,
    /// The most recently admitted holder (a resident of the engine whose
    /// memory this is, for such a pool) is preempted until the growth fits.
    Lifo,
}

impl Preempt {
    fn is_none(&self) -> bool {
        matches!(self, Preempt::None)
    }
}

/// `spill T via L (w) when (c)` (spec §8.3).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spill {
    /// The pool member that receives the evicted pieces.
    pub to: usize,
    /// The stage member a job of work `work` runs on per piece.
    pub via: usize,
    /// The work of that job (Evict moment, `size` = the piece).
    pub work: Expr,
    /// Whether a piece spills (Evict moment); non-zero spills.
    pub when: Expr,
}

/// A stage (one member of a stage family).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stage {
    /// The family's name.
    pub name: String,
    /// How the stage serves its jobs.
    pub kind: StageKind,
}

/// How a stage serves jobs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum StageKind {
    /// Infinite servers: every job proceeds at rate 1.
    Delay,
    /// `c` servers in arrival order, rate 1 each.
    Fifo(u32),
    /// Processor sharing of capacity φ (an expression that may read `present`).
    Ps(Expr),
    /// Tier 2: an engine that runs iterations over its residents (spec §8.1).
    Step(Step),
}

/// A step stage: its budget, cost, chunk, serve order and memory (spec §8.1).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// Tokens an iteration may schedule (Budget moment); `inf` by default.
    pub budget: Expr,
    /// How long an iteration lasts (Step moment); required in the language.
    pub cost: Expr,
    /// The most tokens one prefill takes in an iteration (Budget moment);
    /// 0 (the default) or less is no cap.
    pub chunk: Expr,
    /// The order residents take tokens in.
    pub serve: Serve,
    /// The pool member whose units the residents' `kv_decode`/`kv_prefill`
    /// count and whose preemptions pick this engine's residents.
    #[serde(default)]
    pub memory: Option<usize>,
}

/// The order in which a step stage's residents take tokens (spec §8.1).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Serve {
    /// Ascending key tuple (Serve moment), ties in admission order; an empty
    /// tuple is `serve admission`, `serve decode first` is
    /// `By([decoding ? 0 : 1])`.
    By(Vec<Expr>),
    /// `serve exclusive prefill`: a prefill, once served, is served alone.
    ExclusivePrefill,
}

/// The sharing policy for flows (runs over several stages).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Share {
    /// Max-min fair: progressive filling.
    MaxMin,
    /// Each flow gets min over its stages of φ_s / n_s.
    Bottleneck,
}

impl Share {
    /// The policy as written in `share …;` (`maxmin`, `bottleneck`).
    pub fn word(self) -> &'static str {
        match self {
            Share::MaxMin => "maxmin",
            Share::Bottleneck => "bottleneck",
        }
    }
}

/// How sessions arrive.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Arrival {
    /// One at time 0, then gaps `~exp(1/rate)`.
    Poisson(#[serde(with = "real")] f64),
    /// First arrival after one gap; each gap a fresh evaluation.
    Renewal(Expr),
    /// `n` sessions at time 0, each replaced the instant it ends.
    Closed(u64),
    /// `n` sessions at time 0.
    Batch(u64),
    /// No sessions.
    None,
    /// A serq extension: one session per row of an arrival trace.
    Trace(ArrivalTrace),
    /// A serq extension: poisson arrivals at a rate that may read `now`,
    /// sampled by thinning under a declared peak; no arrival is forced at 0.
    Thinned(Thinned),
}

impl Arrival {
    /// The extension the law is, as `serq check` names it; `None` for the
    /// laws of pyserq 0.1.0.
    pub fn extension(&self) -> Option<&'static str> {
        match self {
            Arrival::Trace(_) => Some("arrive trace"),
            Arrival::Thinned(_) => Some("poisson with a peak"),
            _ => None,
        }
    }
}

/// `arrive trace "FILE" [window (start, end)] [speed (x)];` (a serq
/// extension): the row at time t (seconds after the trace's first row)
/// with start ≤ t < end arrives at (t − start) / speed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArrivalTrace {
    /// The trace file as written (or given by an override); a relative
    /// path is resolved against the program file's directory.
    pub path: String,
    /// How many times faster than recorded the rows arrive (above 0, finite).
    #[serde(with = "real")]
    pub speed: f64,
    /// The window's start, seconds after the first row (0 without one).
    #[serde(default, skip_serializing_if = "is_zero", with = "real")]
    pub start: f64,
    /// The window's end, seconds after the first row (`inf` without one).
    #[serde(
        default = "infinity",
        skip_serializing_if = "is_infinite",
        with = "real"
    )]
    pub end: f64,
}

/// `arrive poisson(rate) peak (r);` (a serq extension).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Thinned {
    /// The rate at `now`: numbers, `let`s, pure functions and `now`.
    pub rate: Expr,
    /// The declared peak: candidates come at this rate (above 0, finite).
    #[serde(with = "real")]
    pub peak: f64,
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

fn is_infinite(x: &f64) -> bool {
    *x == f64::INFINITY
}

fn infinity() -> f64 {
    f64::INFINITY
}

/// A reference to a pool or stage member: family `base..base+count`, member `index`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CRef {
    /// Index of the family's first member in `pools` or `stages`.
    pub base: usize,
    /// The family's size.
    pub count: usize,
    /// The member, evaluated when used; `None` for a family of one written without an index.
    pub index: Option<Expr>,
}

/// The mode of a run (Tier 2 step stages need one; every Tier-1 run is `Plain`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum RunMode {
    /// A run on a delay, fifo or ps stage.
    Plain,
    /// Tier 2: a prefill on a step stage.
    Prefill,
    /// Tier 2: a decode on a step stage.
    Decode,
}

/// One pool of a hold: the pool, its units, and an optional reserve.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HoldPool(pub CRef, pub Expr, pub Option<Expr>);

/// A statement.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum Stmt {
    /// `set x = e;` (attribute slot, value).
    Set(usize, Expr),
    /// `observe o = e;` (observation index, value).
    Observe(usize, Expr),
    /// `turn;`
    Turn,
    /// `end;`
    End,
    /// `hold p (u) [reserve (r)], … [reuse (ρ)] { body } [cache (ℓ)] [lease p (t)]`
    /// (`at admission` bindings are substituted by the linker).
    Hold {
        /// The pools in the hold's order; the first one's queue is where it waits.
        pools: Vec<HoldPool>,
        /// Tier 2: at most this many units of the session's own cached entry
        /// are consumed in each pool at admission (spec §8.4); `None` is no
        /// limit (0.1.0 consumes the entry with or without `reuse`, Q9).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reuse: Option<Expr>,
        /// The body's block.
        body: usize,
        /// Tier 2: at release, `min(ℓ, computed)` units become the session's
        /// cached entry in each pool (spec §8.4); `None` caches nothing.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cache: Option<Expr>,
        /// The pool kept as a lease at the end of the body, and the lease's length.
        lease: Option<(CRef, Expr)>,
    },
    /// `grow p (d);`
    Grow(CRef, Expr),
    /// `load p (n);`
    Load(CRef, Expr),
    /// `release p;`
    Release(CRef),
    /// Tier 2: `drop p;` discards the session's live cached entry in p.
    Drop(CRef),
    /// `run s [, s2 …] (w);`
    Run {
        /// The first stage.
        stage: CRef,
        /// Always `Plain` in Tier 1.
        mode: RunMode,
        /// The work.
        work: Expr,
        /// Tier 2: the pool grown as tokens are computed.
        growing: Option<CRef>,
        /// Further stages the same job holds at once (a flow).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        also: Vec<CRef>,
    },
    /// `branch (g) {then} else {else}` (guard, then block, else block).
    Branch(Expr, usize, usize),
    /// `loop { body }`.
    Loop(usize),
    /// `choose j in n by (k…);`
    Choose {
        /// The attribute slot of `j`.
        var: usize,
        /// The candidate count.
        count: Expr,
        /// The key tuple, smallest wins, ties to the smaller index.
        key: Vec<Expr>,
    },
}

/// An expression.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Expr {
    /// A number (`inf` included).
    Num(#[serde(with = "real")] f64),
    /// A session attribute by slot.
    Attr(usize),
    /// A context variable.
    Ctx(Ctx),
    /// A draw from a distribution.
    Sample(Dist, Vec<Expr>),
    /// A pure function or an observable.
    Call(Fun, Vec<Arg>),
    /// `-a` or `!a`.
    Unary(UnOp, Box<Expr>),
    /// `a op b`.
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `c ? a : b`.
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
}

/// A context variable: readable only at its moment (spec §5.4). The Tier-2
/// ones are named as the language writes them (docs/ir.md §Expressions).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Ctx {
    /// `now`: the clock.
    Now,
    /// `present`: jobs at the ps stage whose capacity is being evaluated.
    N,
    /// `size`: the units of the cached entry (or piece) at the Evict moment.
    Size,
    /// `age`: now − the entry's release time (Evict moment).
    Age,
    /// `last`: the entry's release time (Evict moment).
    Last,
    /// `waiting`: 1 if the entry's session waits in a pool's queue (Evict moment).
    Waiting,
    /// `waited`: time the hold has spent in the queue (a `queue by` key).
    Waited,
    /// `residents`: the step stage's residents (Budget, Serve, Step moments).
    Residents,
    /// `decoders`: decode residents (Budget, Serve; Step: those given tokens).
    Decoders,
    /// `kv_decode`: units decode residents hold in the engine's memory.
    KvDecode,
    /// `kv_prefill`: units prefill residents hold in the engine's memory.
    KvPrefill,
    /// `tokens`: tokens the iteration scheduled (Step moment).
    Tokens,
    /// `prefilled`: prefill tokens the iteration scheduled (Step moment).
    Prefilled,
    /// `attention`: Σ over prefill chunks of n·(K + n/2) (Step moment).
    Attention,
    /// `decoding`: 1 for a decode resident, else 0 (Serve moment).
    Decoding,
    /// `admission`: the resident's admission sequence number (Serve moment).
    Admission,
    /// `remaining`: the resident's tokens left (Serve moment).
    Remaining,
}

impl Ctx {
    /// The variable as the language writes it.
    pub fn word(self) -> &'static str {
        match self {
            Ctx::Now => "now",
            Ctx::N => "present",
            Ctx::Size => "size",
            Ctx::Age => "age",
            Ctx::Last => "last",
            Ctx::Waiting => "waiting",
            Ctx::Waited => "waited",
            Ctx::Residents => "residents",
            Ctx::Decoders => "decoders",
            Ctx::KvDecode => "kv_decode",
            Ctx::KvPrefill => "kv_prefill",
            Ctx::Tokens => "tokens",
            Ctx::Prefilled => "prefilled",
            Ctx::Attention => "attention",
            Ctx::Decoding => "decoding",
            Ctx::Admission => "admission",
            Ctx::Remaining => "remaining",
        }
    }
}

/// A distribution.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Dist {
    /// `~det(x)`.
    Det,
    /// `~exp(mean)`.
    Exp,
    /// `~uniform(a, b)`.
    Uniform,
    /// `~erlang(k, mean)`.
    Erlang,
    /// `~h2(mean, c2)`.
    H2,
    /// `~bernoulli(p)`.
    Bernoulli,
}

impl Dist {
    /// The distribution's name in the language.
    pub fn name(self) -> &'static str {
        match self {
            Dist::Det => "det",
            Dist::Exp => "exp",
            Dist::Uniform => "uniform",
            Dist::Erlang => "erlang",
            Dist::H2 => "h2",
            Dist::Bernoulli => "bernoulli",
        }
    }
    /// How many parameters it takes.
    pub fn arity(self) -> usize {
        match self {
            Dist::Det | Dist::Exp | Dist::Bernoulli => 1,
            Dist::Uniform | Dist::Erlang | Dist::H2 => 2,
        }
    }
}

/// A function: pure ones take expressions, observables a pool or stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Fun {
    /// `min(a, b)`, IEEE minNum.
    Min,
    /// `max(a, b)`, IEEE maxNum.
    Max,
    /// `abs(a)`.
    Abs,
    /// `floor(a)`.
    Floor,
    /// `ceil(a)`.
    Ceil,
    /// `sqrt(a)`.
    Sqrt,
    /// `exp(a)`.
    Exp,
    /// `ln(a)`.
    Ln,
    /// `pow(a, b)`.
    Pow,
    /// `queue(s)`: jobs present at a stage.
    Queue,
    /// `busy(s)`: jobs in service.
    Busy,
    /// `work(s)`: remaining work of the jobs present.
    Work,
    /// `used(p)`: allocated units.
    Used,
    /// `free(p)`: capacity minus used.
    Free,
    /// `holders(p)`: allocations (holds and leases).
    Holders,
    /// `queued(p)`: holds waiting in the pool's queue.
    Queued,
    /// `cachedin(p)`: the session's own live cached units in the pool.
    CachedIn,
    /// `budget_left(s)`: a step stage's budget less what its residents would take.
    BudgetLeft,
    /// `est_lambda(s)`: the online estimate of the stage's arrival rate.
    EstLambda,
    /// `est_rho(s)`: the online estimate of the stage's load, at most 0.99.
    EstRho,
    /// `est_wait(s)`: the online estimate of the stage's wait.
    EstWait,
    /// `price(s, s_hit, ds)`: the estimated cost of a cache miss at the stage.
    Price,
}

impl Fun {
    /// The function's name in the language.
    pub fn name(self) -> &'static str {
        match self {
            Fun::Min => "min",
            Fun::Max => "max",
            Fun::Abs => "abs",
            Fun::Floor => "floor",
            Fun::Ceil => "ceil",
            Fun::Sqrt => "sqrt",
            Fun::Exp => "exp",
            Fun::Ln => "ln",
            Fun::Pow => "pow",
            Fun::Queue => "queue",
            Fun::Busy => "busy",
            Fun::Work => "work",
            Fun::Used => "used",
            Fun::Free => "free",
            Fun::Holders => "holders",
            Fun::Queued => "queued",
            Fun::CachedIn => "cachedin",
            Fun::BudgetLeft => "budget_left",
            Fun::EstLambda => "est_lambda",
            Fun::EstRho => "est_rho",
            Fun::EstWait => "est_wait",
            Fun::Price => "price",
        }
    }
    /// What the function's arguments are.
    pub fn signature(self) -> FunKind {
        match self {
            Fun::Min | Fun::Max | Fun::Pow => FunKind::Pure(2),
            Fun::Abs | Fun::Floor | Fun::Ceil | Fun::Sqrt | Fun::Exp | Fun::Ln => FunKind::Pure(1),
            Fun::Queue
            | Fun::Busy
            | Fun::Work
            | Fun::BudgetLeft
            | Fun::EstLambda
            | Fun::EstRho
            | Fun::EstWait => FunKind::OfStage,
            Fun::Used | Fun::Free | Fun::Holders | Fun::Queued | Fun::CachedIn => FunKind::OfPool,
            Fun::Price => FunKind::OfStageAnd(2),
        }
    }
    /// Every function, in a fixed order.
    pub const ALL: [Fun; 22] = [
        Fun::Min,
        Fun::Max,
        Fun::Abs,
        Fun::Floor,
        Fun::Ceil,
        Fun::Sqrt,
        Fun::Exp,
        Fun::Ln,
        Fun::Pow,
        Fun::Queue,
        Fun::Busy,
        Fun::Work,
        Fun::Used,
        Fun::Free,
        Fun::Holders,
        Fun::Queued,
        Fun::CachedIn,
        Fun::BudgetLeft,
        Fun::EstLambda,
        Fun::EstRho,
        Fun::EstWait,
        Fun::Price,
    ];
}

/// The arguments a function takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FunKind {
    /// That many expressions.
    Pure(usize),
    /// One stage reference.
    OfStage,
    /// One pool reference.
    OfPool,
    /// One stage reference, then that many expressions (`price`).
    OfStageAnd(usize),
}

/// An argument of a call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Arg {
    /// An expression (pure functions).
    Expr(Expr),
    /// A pool reference (pool observables).
    Pool(CRef),
    /// A stage reference (stage observables).
    Stage(CRef),
}

/// A prefix operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum UnOp {
    /// `-a`
    Neg,
    /// `!a`: 1 if a == 0 else 0.
    Not,
}

/// A binary operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `^` (powf)
    Pow,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `&&` (short-circuit)
    And,
    /// `||` (short-circuit)
    Or,
}

/// The one field every IR version has, read before the rest.
#[derive(Deserialize)]
struct IrHeader {
    version: Option<u32>,
}

impl Program {
    /// The IR as pretty-printed JSON (two-space indentation).
    pub fn to_json(&self) -> String {
        // Serialising plain data with string keys cannot fail.
        serde_json::to_string_pretty(self).expect("IR serialises")
    }

    /// Reads IR from JSON and validates it.
    pub fn from_json(text: &str) -> Result<ValidProgram, Vec<IrError>> {
        Program::read_json(text).map_err(|e| vec![e])?.validate()
    }

    /// Reads IR from JSON without validating it. JSON nested more than
    /// [`MAX_JSON_DEPTH`] deep is refused before it is read.
    pub fn read_json(text: &str) -> Result<Program, IrError> {
        let refuse = |message: String| IrError::new("ir-json", message);
        if let Some(line) = json_too_deep(text) {
            return Err(refuse(format!(
                "the file is not IR version {IR_VERSION} JSON: it nests arrays and objects more than {MAX_JSON_DEPTH} deep (line {line})"
            )));
        }
        // Another version's IR has other fields: say which version it is
        // before serde names a field this one lacks.
        if let Ok(IrHeader { version: Some(v) }) = serde_json::from_str::<IrHeader>(text)
            && v != IR_VERSION
        {
            let mut e = IrError::new(
                "ir-version",
                format!("IR version {v} (serq reads {IR_VERSION})"),
            );
            e.help =
                Some("compile the source program with this serq (`serq ir FILE.sq` writes its IR)");
            return Err(e);
        }
        let mut de = serde_json::Deserializer::from_str(text);
        // serde_json's own limit (128) is below what linked IR needs; the
        // scan above bounds the depth instead.
        de.disable_recursion_limit();
        let program = Program::deserialize(&mut de)
            .and_then(|p| de.end().map(|()| p))
            .map_err(|e| refuse(format!("the file is not IR version {IR_VERSION} JSON: {e}")))?;
        Ok(program)
    }

    /// The stage family (first member) a reference's `base` names, for messages.
    pub fn stage_name(&self, base: usize) -> &str {
        self.stages.get(base).map_or("?", |s| s.name.as_str())
    }

    /// The pool family (first member) a reference's `base` names, for messages.
    pub fn pool_name(&self, base: usize) -> &str {
        self.pools.get(base).map_or("?", |p| p.name.as_str())
    }

    /// Whether any run holds several stages at once.
    pub fn has_flows(&self) -> bool {
        self.blocks
            .iter()
            .flatten()
            .any(|s| matches!(s, Stmt::Run { also, .. } if !also.is_empty()))
    }

    /// For each stage member, whether it is shared: its family appears in a
    /// run with a non-empty `also` (as the run's stage or in `also`).
    pub fn shared_stages(&self) -> Vec<bool> {
        let mut shared = vec![false; self.stages.len()];
        for stmt in self.blocks.iter().flatten() {
            if let Stmt::Run { stage, also, .. } = stmt {
                if also.is_empty() {
                    continue;
                }
                for r in std::iter::once(stage).chain(also) {
                    for s in shared.iter_mut().skip(r.base).take(r.count) {
                        *s = true;
                    }
                }
            }
        }
        shared
    }
}
