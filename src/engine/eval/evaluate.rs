//! Evaluating compiled expressions: operators, distributions, pure
//! functions and observables.
//!
//! Invariant: evaluation reads the state and never changes it, except that
//! a draw advances the random stream of the evaluation site (the `Cx`'s).
//! Observables other than `work` read [`StageLoad`] and [`PoolLevels`],
//! dense columns by member index, so a `choose` key over a family runs at
//! the speed of an array. A fault is a [`Fault`] value (an index out of
//! range, a distribution parameter out of range), made a message only when
//! the caller reports it with the statement, the session and the time.

use std::cell::Cell;

use crate::engine::data::code::{CTX_COUNT, Expr, Leaf, Member, Observable, Op};
use crate::engine::data::kv::KvPools;
use crate::engine::data::pool::PoolLevels;
use crate::engine::data::rng::{FirstDraws, Purpose, Stream};
use crate::engine::data::stage::StageLoad;
use crate::ir::{Dist, truth};

/// The serving context variables of a moment (spec §5.4), by
/// [`crate::engine::data::code::ctx_index`]; NaN outside their moment (the validator
/// keeps every read at its moment).
#[derive(Clone, Copy, Debug)]
pub struct Moment(pub [f64; CTX_COUNT]);

impl Moment {
    /// No context variable.
    pub const NONE: Moment = Moment([f64::NAN; CTX_COUNT]);
}

/// What an expression may read where it is evaluated.
pub struct Cx<'a> {
    /// The clock.
    pub now: f64,
    /// `present` (jobs at the ps stage whose capacity is evaluated); NaN elsewhere.
    pub present: f64,
    /// The serving context variables of the moment.
    pub moment: &'a Moment,
    /// The serial of the session evaluating (u64::MAX outside a session).
    pub serial: u64,
    /// Every pool member's cache (`cachedin`).
    pub kv: &'a KvPools,
    /// The session's attributes (empty outside a session), as cells: a
    /// statement may set one (a `choose` its candidate) between the
    /// evaluations of one `Cx`.
    pub attrs: &'a [Cell<f64>],
    /// The stream draws come from.
    pub rng: &'a mut Stream,
    /// What that stream is for.
    pub purpose: Purpose,
    /// The shared first draws of per-session streams.
    pub first: &'a mut FirstDraws,
    /// Every stage member's jobs present and in service.
    pub load: &'a StageLoad,
    /// Every pool member's levels.
    pub levels: &'a PoolLevels,
    /// `work(s)` of stage member `s` now (it reads the member's jobs).
    pub work: &'a dyn Fn(usize) -> f64,
}

/// Why an evaluation failed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Fault {
    /// An index is not a member of its family: `what` is `"stage"`, `"pool"`
    /// or `""` (an observable's argument).
    Index {
        /// What the reference names.
        what: &'static str,
        /// The index.
        index: f64,
        /// The family's size.
        count: u32,
    },
    /// A distribution parameter is out of range.
    Parameter {
        /// The distribution.
        dist: Dist,
        /// Which parameter, and its range.
        what: &'static str,
        /// Its value.
        x: f64,
    },
    /// `~uniform(a, b)` with b below a.
    UniformOrder(f64, f64),
    /// `budget_left(s)` of a stage that is not a step stage.
    NotStep,
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Fault::Index { what, index, count } => {
                let sep = if what.is_empty() { "" } else { " " };
                if index >= count as f64 {
                    write!(f, "{what}{sep}index {index} out of range (count {count})")
                } else {
                    write!(f, "{what}{sep}index {index} is not a whole number >= 0")
                }
            }
            Fault::Parameter { dist, what, x } => {
                write!(
                    f,
                    "`~{}`: parameter {what} is {x}, out of range",
                    dist.name()
                )
            }
            Fault::UniformOrder(a, b) => write!(
                f,
                "`~uniform({a}, {b})`: parameter b is below a (or NaN), out of range"
            ),
            Fault::NotStep => write!(f, "budget_left needs a step stage"),
        }
    }
}

impl Cx<'_> {
    /// A uniform draw in [0, 1) from the evaluation site's stream.
    #[inline]
    pub(crate) fn uniform(&mut self) -> f64 {
        self.rng.uniform(self.purpose, self.first)
    }

    #[inline]
    fn leaf(&self, l: Leaf) -> f64 {
        match l {
            Leaf::Num(x) => x,
            Leaf::Attr(slot) => self.attr(slot),
            Leaf::Now => self.now,
        }
    }

    #[inline]
    fn attr(&self, slot: u32) -> f64 {
        // The validator keeps slots in range where attributes exist.
        self.attrs.get(slot as usize).map_or(f64::NAN, Cell::get)
    }
}

/// The member `index` names in `base..base + count`.
#[inline]
pub fn member_at(base: u32, count: u32, index: f64, what: &'static str) -> Result<usize, Fault> {
    if index >= 0.0 && index < count as f64 && (index as usize) as f64 == index {
        Ok(base as usize + index as usize)
    } else {
        Err(Fault::Index { what, index, count })
    }
}

/// The member a reference names now.
pub fn member(r: &Member, cx: &mut Cx<'_>, what: &'static str) -> Result<usize, Fault> {
    match &r.index {
        None => Ok(r.base as usize),
        Some(index) => member_at(r.base, r.count, eval(index, cx)?, what),
    }
}

/// Evaluates a `choose` key for one candidate: a uniform draw (the key
/// of a random choice over a thousand members) where the call is, the
/// rest by [`eval`].
#[inline(always)]
pub fn eval_key(e: &Expr, cx: &mut Cx<'_>) -> Result<f64, Fault> {
    match *e {
        Expr::Draw(Dist::Uniform, a, b) => Ok(uniform_in(a, b, cx.uniform())),
        _ => eval(e, cx),
    }
}

/// A `choose` key as the scan over candidates `0..n` reads it: a key of
/// the usual shapes costs an array read or a draw, not an evaluation.
#[derive(Clone, Copy)]
pub enum ScanKey<'k> {
    /// `~uniform(a, b)`.
    Uniform(f64, f64),
    /// `queue(P[j])` and the like: candidate j's value is `column[j]`.
    Column(&'k [f64]),
    /// `free(K[j])`: candidate j's is `cap[j] - used[j]`.
    Free(&'k [f64], &'k [f64]),
    /// Any other observable of member `base + j`.
    Member(Observable, usize),
    /// Anything else, evaluated.
    Other(&'k Expr),
}

impl<'k> ScanKey<'k> {
    /// How key `e` of a scan over candidates `0..n` in attribute `var` is
    /// read. An observable of `F[var]` reads columns only when every
    /// candidate is a member of `F` (else the evaluation's index fault
    /// must stop the scan at the first candidate past it).
    pub fn of(
        e: &'k Expr,
        var: usize,
        n: f64,
        load: &'k StageLoad,
        levels: &'k PoolLevels,
    ) -> Self {
        match *e {
            Expr::Draw(Dist::Uniform, a, b) => ScanKey::Uniform(a, b),
            Expr::ObserveAttr(what, base, count, slot)
                if slot as usize == var && n <= count as f64 =>
            {
                let family = base as usize..(base + count) as usize;
                match what {
                    Observable::Queue => ScanKey::Column(&load.present[family]),
                    Observable::Busy => ScanKey::Column(&load.busy[family]),
                    Observable::Used => ScanKey::Column(&levels.used[family]),
                    Observable::Holders => ScanKey::Column(&levels.holders[family]),
                    Observable::Queued => ScanKey::Column(&levels.queued[family]),
                    Observable::Free => {
                        ScanKey::Free(&levels.cap[family.clone()], &levels.used[family])
                    }
                    _ => ScanKey::Member(what, base as usize),
                }
            }
            _ => ScanKey::Other(e),
        }
    }

    /// The key of candidate `j` (its attribute already set to `j`).
    #[inline(always)]
    pub fn at(self, j: usize, cx: &mut Cx<'_>) -> Result<f64, Fault> {
        match self {
            ScanKey::Uniform(a, b) => Ok(uniform_in(a, b, cx.uniform())),
            ScanKey::Column(column) => Ok(column[j]),
            ScanKey::Free(cap, used) => Ok(cap[j] - used[j]),
            ScanKey::Member(what, base) => observe(what, base + j, cx),
            ScanKey::Other(e) => eval(e, cx),
        }
    }
}

/// `~uniform(a, b)` of the draw `u` in [0, 1).
#[inline(always)]
pub(crate) fn uniform_in(a: f64, b: f64, u: f64) -> f64 {
    a + (b - a) * u
}

/// Evaluates a compiled expression.
#[inline]
pub fn eval(e: &Expr, cx: &mut Cx<'_>) -> Result<f64, Fault> {
    match e {
        Expr::Num(x) => Ok(*x),
        Expr::Attr(slot) => Ok(cx.attr(*slot)),
        Expr::Now => Ok(cx.now),
        Expr::Draw(dist, a, b) => Ok(draw(*dist, *a, *b, cx)),
        Expr::Binary(op, a, b) => Ok(op.apply(cx.leaf(*a), cx.leaf(*b))),
        Expr::Observe(what, m) => observe(*what, *m as usize, cx),
        Expr::ObserveAttr(what, base, count, slot) => {
            let m = member_at(*base, *count, cx.attr(*slot), "")?;
            observe(*what, m, cx)
        }
        Expr::Ops(ops) => run(ops, cx),
    }
}

/// Observable `what` of member `m` (`price` is read by [`observe_op`],
/// with its two numbers; the compiler makes it flat code only).
#[inline]
fn observe(what: Observable, m: usize, cx: &Cx<'_>) -> Result<f64, Fault> {
    Ok(match what {
        Observable::Queue => cx.load.present[m],
        Observable::Busy => cx.load.busy[m],
        Observable::Work => (cx.work)(m),
        Observable::Used => cx.levels.used[m],
        Observable::Free => cx.levels.cap[m] - cx.levels.used[m],
        Observable::Holders => cx.levels.holders[m],
        Observable::Queued => cx.levels.queued[m],
        Observable::CachedIn => cx.kv.cached_in(m, cx.serial),
        Observable::BudgetLeft => {
            let left = cx.load.budget_left[m];
            if left.is_nan() {
                return Err(Fault::NotStep);
            }
            left
        }
        Observable::EstLambda => cx.load.est[m].lambda(),
        Observable::EstRho => cx.load.est[m].rho(),
        Observable::EstWait => cx.load.est[m].wait(),
        Observable::Price => f64::NAN,
    })
}

/// [`observe`] in flat code, where `price` takes its two numbers off the stack.
fn observe_op(what: Observable, m: usize, cx: &Cx<'_>, stack: &mut Stack) -> Result<f64, Fault> {
    match what {
        Observable::Price => {
            let ds = stack.pop();
            let s_hit = stack.pop();
            Ok(cx.load.est[m].price(s_hit, ds))
        }
        _ => observe(what, m, cx),
    }
}

fn run(ops: &[Op], cx: &mut Cx<'_>) -> Result<f64, Fault> {
    let mut stack = Stack::new();
    // Every op pops only what earlier ops pushed (the compiler emits
    // operands before operators), so the stack never underflows.
    let pop = |stack: &mut Stack| stack.pop();
    let mut pc = 0;
    while let Some(op) = ops.get(pc) {
        pc += 1;
        let x = match *op {
            Op::Num(x) => x,
            Op::Attr(slot) => cx.attr(slot),
            Op::Now => cx.now,
            Op::Present => cx.present,
            Op::Ctx(i) => cx.moment.0[i as usize],
            Op::Unary(u) => u.apply(pop(&mut stack)),
            Op::Binary(b) => {
                let y = pop(&mut stack);
                b.apply(pop(&mut stack), y)
            }
            Op::Truthy => truth(pop(&mut stack) != 0.0),
            Op::AndJump(to) => {
                if pop(&mut stack) == 0.0 {
                    pc = to as usize;
                    0.0
                } else {
                    continue;
                }
            }
            Op::OrJump(to) => {
                if pop(&mut stack) != 0.0 {
                    pc = to as usize;
                    1.0
                } else {
                    continue;
                }
            }
            Op::JumpIfFalse(to) => {
                if pop(&mut stack) == 0.0 {
                    pc = to as usize;
                }
                continue;
            }
            Op::Jump(to) => {
                pc = to as usize;
                continue;
            }
            Op::Pure1(f) => f.apply_pure(pop(&mut stack), f64::NAN).unwrap_or(f64::NAN),
            Op::Pure2(f) => {
                let b = pop(&mut stack);
                f.apply_pure(pop(&mut stack), b).unwrap_or(f64::NAN)
            }
            Op::Sample(dist) => {
                let b = if dist.arity() > 1 {
                    pop(&mut stack)
                } else {
                    f64::NAN
                };
                let a = pop(&mut stack);
                sample(dist, a, b, cx)?
            }
            Op::SampleConst(dist, a, b) => draw(dist, a, b, cx),
            Op::Observe(what, m) => observe_op(what, m as usize, cx, &mut stack)?,
            Op::ObserveAt(what, base, count) => {
                let m = member_at(base, count, pop(&mut stack), "")?;
                observe_op(what, m, cx, &mut stack)?
            }
        };
        stack.push(x);
    }
    Ok(pop(&mut stack))
}

/// Flat code's operand stack: a fixed array for the usual shallow
/// expression, spilling to a vector past it. A pop of the empty stack is
/// NaN (it cannot happen: operands come before their operators).
struct Stack {
    inline: [f64; STACK_INLINE],
    len: usize,
    spill: Vec<f64>,
}

/// Operands held without the spill vector.
const STACK_INLINE: usize = 16;

impl Stack {
    #[inline(always)]
    fn new() -> Stack {
        Stack {
            inline: [0.0; STACK_INLINE],
            len: 0,
            spill: Vec::new(),
        }
    }

    #[inline(always)]
    fn push(&mut self, x: f64) {
        match self.inline.get_mut(self.len) {
            Some(slot) => *slot = x,
            None => self.spill.push(x),
        }
        self.len += 1;
    }

    #[inline(always)]
    fn pop(&mut self) -> f64 {
        if self.len == 0 {
            return f64::NAN;
        }
        self.len -= 1;
        match self.inline.get(self.len) {
            Some(&x) => x,
            None => self.spill.pop().unwrap_or(f64::NAN),
        }
    }
}

/// `-mean·ln(1 - u)`: an exponential of `mean` by inversion of the uniform `u`.
pub fn exponential_of(mean: f64, u: f64) -> f64 {
    -mean * (1.0 - u).ln()
}

/// Checks a distribution's parameters, then draws.
fn sample(dist: Dist, a: f64, b: f64, cx: &mut Cx<'_>) -> Result<f64, Fault> {
    let bad = |what: &'static str, x: f64| Err(Fault::Parameter { dist, what, x });
    match dist {
        Dist::Det => {}
        Dist::Exp if a.is_nan() || a < 0.0 => return bad("mean", a),
        Dist::Exp => {}
        Dist::Uniform => {
            if b < a || a.is_nan() || b.is_nan() {
                return Err(Fault::UniformOrder(a, b));
            }
        }
        Dist::Erlang => {
            if !(a >= 1.0 && a.fract() == 0.0 && a <= crate::ir::MAX_ERLANG_K) {
                return bad("k (a whole number from 1 to 10^6)", a);
            }
            if b.is_nan() || b < 0.0 {
                return bad("mean", b);
            }
        }
        Dist::H2 => {
            if a.is_nan() || a < 0.0 {
                return bad("mean", a);
            }
            if b < 1.0 || b.is_nan() {
                return bad("c2 (at least 1)", b);
            }
        }
        Dist::Bernoulli => {
            if !(0.0..=1.0).contains(&a) {
                return bad("p (in [0, 1])", a);
            }
        }
    }
    Ok(draw(dist, a, b, cx))
}

/// A draw with parameters in range.
#[inline]
fn draw(dist: Dist, a: f64, b: f64, cx: &mut Cx<'_>) -> f64 {
    match dist {
        Dist::Det => a,
        Dist::Exp => exponential_of(a, cx.uniform()),
        Dist::Uniform => uniform_in(a, b, cx.uniform()),
        Dist::Bernoulli => truth(cx.uniform() < a),
        Dist::Erlang | Dist::H2 => draw_phases(dist, a, b, cx),
    }
}

/// A draw of several uniforms (Erlang, H2), out of the inlined path.
#[inline(never)]
fn draw_phases(dist: Dist, a: f64, b: f64, cx: &mut Cx<'_>) -> f64 {
    match dist {
        Dist::Erlang => {
            let phase = b / a;
            let mut sum = 0.0;
            for _ in 0..a as u64 {
                sum += exponential_of(phase, cx.uniform());
            }
            sum
        }
        Dist::H2 => {
            let p1 = 0.5 * (1.0 + ((b - 1.0) / (b + 1.0)).sqrt());
            let mean = if cx.uniform() < p1 {
                a / (2.0 * p1)
            } else {
                a / (2.0 * (1.0 - p1))
            };
            exponential_of(mean, cx.uniform())
        }
        _ => draw(dist, a, b, cx),
    }
}
