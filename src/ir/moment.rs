//! Moments: where an expression is evaluated, and so which context
//! variables, attributes, observables and draws it may read (spec §5.4).
//!
//! Architecture invariant: one table, read by the linker (to refuse a name
//! with its source span) and by the validator (to refuse the same IR from
//! JSON); neither keeps a copy of it.

use super::Ctx;

/// Where an expression is evaluated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Moment {
    /// A session statement, a run's work, a hold's header, cache and lease.
    Session,
    /// A ps stage's capacity.
    PsCapacity,
    /// A renewal gap.
    Renewal,
    /// A time-varying poisson rate (a serq extension), read at a candidate time.
    Rate,
    /// A step stage's budget or chunk, before an iteration.
    Budget,
    /// A step stage's cost, once the iteration is formed.
    Step,
    /// A step stage's serve keys.
    Serve,
    /// A pool's queue keys.
    Queue,
    /// A pool's eviction keys and spill clauses.
    Evict,
}

impl Moment {
    /// The place, as a message names it.
    pub fn place(self) -> &'static str {
        match self {
            Moment::Session => "a session statement, a run or a hold's cache",
            Moment::PsCapacity => "a ps stage's capacity",
            Moment::Renewal => "a renewal gap",
            Moment::Rate => "an arrival rate",
            Moment::Budget => "a step stage's budget or chunk, planned before the iteration",
            Moment::Step => "a step stage's cost, after the iteration",
            Moment::Serve => "a step stage's serve keys",
            Moment::Queue => "a pool's queue keys, read before selecting a waiting session",
            Moment::Evict => "an eviction key or spill clause",
        }
    }

    /// Whether session attributes may be read here (a ps capacity and a
    /// renewal gap belong to no session).
    pub fn reads_attributes(self) -> bool {
        !matches!(self, Moment::PsCapacity | Moment::Renewal | Moment::Rate)
    }

    /// Whether a draw is allowed here: keys that order a queue or the
    /// residents are read again and again, so a draw would reorder them
    /// under the scheduler's feet.
    pub fn may_draw(self) -> bool {
        !matches!(self, Moment::Serve | Moment::Queue | Moment::Rate)
    }
}

impl Ctx {
    /// Whether the variable exists at `m`.
    pub fn exists_in(self, m: Moment) -> bool {
        use Moment as M;
        match self {
            Ctx::Now => m != M::Renewal,
            Ctx::N => m == M::PsCapacity,
            Ctx::Size | Ctx::Age | Ctx::Last | Ctx::Waiting => m == M::Evict,
            Ctx::Waited => m == M::Queue,
            Ctx::Residents | Ctx::Decoders | Ctx::KvDecode | Ctx::KvPrefill => {
                matches!(m, M::Budget | M::Step | M::Serve)
            }
            Ctx::Tokens | Ctx::Prefilled | Ctx::Attention => m == M::Step,
            Ctx::Decoding | Ctx::Admission | Ctx::Remaining => m == M::Serve,
        }
    }

    /// Where the variable exists, as a message names it.
    pub fn home(self) -> &'static str {
        match self {
            Ctx::Now => "every expression but a constant and a renewal gap",
            Ctx::N => "a ps stage's capacity",
            Ctx::Size | Ctx::Age | Ctx::Last | Ctx::Waiting => "an eviction key or spill clause",
            Ctx::Waited => "a pool's queue keys",
            Ctx::Residents | Ctx::Decoders | Ctx::KvDecode | Ctx::KvPrefill => {
                "a step stage's budget, chunk, cost or serve keys"
            }
            Ctx::Tokens | Ctx::Prefilled | Ctx::Attention => {
                "a step stage's cost, after the iteration"
            }
            Ctx::Decoding | Ctx::Admission | Ctx::Remaining => "a step stage's serve keys",
        }
    }

    /// The variable a word names, if any.
    pub fn from_word(word: &str) -> Option<Ctx> {
        Ctx::ALL.iter().copied().find(|c| c.word() == word)
    }

    /// Every context variable.
    pub const ALL: [Ctx; 17] = [
        Ctx::Now,
        Ctx::N,
        Ctx::Size,
        Ctx::Age,
        Ctx::Last,
        Ctx::Waiting,
        Ctx::Waited,
        Ctx::Residents,
        Ctx::Decoders,
        Ctx::KvDecode,
        Ctx::KvPrefill,
        Ctx::Tokens,
        Ctx::Prefilled,
        Ctx::Attention,
        Ctx::Decoding,
        Ctx::Admission,
        Ctx::Remaining,
    ];

    /// The misplaced-variable message: `` `size` is read in …, but it exists only in … ``.
    pub fn misplaced(self, m: Moment) -> String {
        format!(
            "`{}` is read in {}, but it exists only in {}",
            self.word(),
            m.place(),
            self.home()
        )
    }
}

/// Names older releases gave context variables, with today's name: the
/// linker refuses them with a rename hint.
pub const RENAMED_CONTEXT: [(&str, &str); 9] = [
    ("n", "present"),
    ("kvb", "kv_decode"),
    ("kvp", "kv_prefill"),
    ("ntok", "tokens"),
    ("ndec", "decoders"),
    ("npre", "prefilled"),
    ("nres", "residents"),
    ("attn", "attention"),
    ("queued", "waiting"),
];
