//! Expressions: operators, distributions, pure functions and observables.
//!
//! Invariant: evaluation reads the world and never changes it, except that
//! a draw advances the random stream of the evaluation site (the `Cx`'s).
//! Errors are messages (an index out of range, a distribution parameter out
//! of range); the caller adds the statement, the session and the time.

use super::flows::FlowSystem;
use super::pools::PoolState;
use super::rng::{FirstDraws, Stream};
use super::stages::StageState;
use crate::ir::{Arg, BinOp, CRef, Ctx, Dist, Expr, Fun, truth};

/// What an expression may read where it is evaluated.
pub struct Cx<'a> {
    /// The clock.
    pub now: f64,
    /// `present` (jobs at the ps stage whose capacity is evaluated); NaN elsewhere.
    pub present: f64,
    /// The session's attributes (empty outside a session).
    pub attrs: &'a [f64],
    /// The stream draws come from.
    pub rng: &'a mut Stream,
    /// The shared first draws of per-session streams.
    pub first: &'a mut FirstDraws,
    /// Every stage member.
    pub stages: &'a [StageState],
    /// Every pool member.
    pub pools: &'a [PoolState],
    /// The flows on shared stages.
    pub flows: &'a FlowSystem,
}

impl Cx<'_> {
    /// A uniform draw in [0, 1) from the evaluation site's stream.
    fn uniform(&mut self) -> f64 {
        self.rng.uniform(self.first)
    }
}

/// The family member a reference names: its index is a whole number in
/// `0..count`. `what` is `"stage"`, `"pool"` or `""` (an observable's
/// argument) and starts the message (`stage index 2 out of range (count 2)`).
pub fn member(r: &CRef, cx: &mut Cx<'_>, what: &str) -> Result<usize, String> {
    let Some(index) = &r.index else {
        return Ok(r.base);
    };
    let i = eval(index, cx)?;
    if i >= 0.0 && i < r.count as f64 && (i as usize) as f64 == i {
        return Ok(r.base + i as usize);
    }
    let sep = if what.is_empty() { "" } else { " " };
    if i >= r.count as f64 {
        Err(format!(
            "{what}{sep}index {i} out of range (count {})",
            r.count
        ))
    } else {
        Err(format!("{what}{sep}index {i} is not a whole number >= 0"))
    }
}

fn truthy(x: f64) -> bool {
    x != 0.0
}

/// Evaluates an expression.
pub fn eval(e: &Expr, cx: &mut Cx<'_>) -> Result<f64, String> {
    Ok(match e {
        Expr::Num(x) => *x,
        Expr::Attr(slot) => match cx.attrs.get(*slot) {
            Some(x) => *x,
            None => return Err(format!("attribute slot {slot} is not readable here")),
        },
        Expr::Ctx(Ctx::Now) => cx.now,
        Expr::Ctx(Ctx::N) => cx.present,
        Expr::Ctx(c) => {
            return Err(format!(
                "the context variable `{}` is not supported yet",
                c.word()
            ));
        }
        Expr::Sample(dist, args) => sample(*dist, args, cx)?,
        Expr::Call(fun, args) => call(*fun, args, cx)?,
        Expr::Unary(op, a) => op.apply(eval(a, cx)?),
        Expr::Binary(BinOp::And, a, b) => truth(truthy(eval(a, cx)?) && truthy(eval(b, cx)?)),
        Expr::Binary(BinOp::Or, a, b) => truth(truthy(eval(a, cx)?) || truthy(eval(b, cx)?)),
        Expr::Binary(op, a, b) => op.apply(eval(a, cx)?, eval(b, cx)?),
        Expr::Cond(c, a, b) => {
            if truthy(eval(c, cx)?) {
                eval(a, cx)?
            } else {
                eval(b, cx)?
            }
        }
    })
}

fn arg_expr(args: &[Arg], i: usize, fun: Fun) -> Result<&Expr, String> {
    match args.get(i) {
        Some(Arg::Expr(e)) => Ok(e),
        _ => Err(format!(
            "`{}` needs a number as argument {}",
            fun.name(),
            i + 1
        )),
    }
}

fn call(fun: Fun, args: &[Arg], cx: &mut Cx<'_>) -> Result<f64, String> {
    let x =
        |cx: &mut Cx<'_>, i: usize| -> Result<f64, String> { eval(arg_expr(args, i, fun)?, cx) };
    Ok(match fun {
        Fun::Min
        | Fun::Max
        | Fun::Pow
        | Fun::Abs
        | Fun::Floor
        | Fun::Ceil
        | Fun::Sqrt
        | Fun::Exp
        | Fun::Ln => {
            // Arguments left to right: a draw in the first comes first.
            let a = x(cx, 0)?;
            let b = if args.len() > 1 { x(cx, 1)? } else { f64::NAN };
            fun.apply_pure(a, b).unwrap_or(f64::NAN)
        }
        Fun::CachedIn
        | Fun::BudgetLeft
        | Fun::EstLambda
        | Fun::EstRho
        | Fun::EstWait
        | Fun::Price => {
            return Err(format!("`{}` is not supported yet", fun.name()));
        }
        Fun::Queue | Fun::Busy | Fun::Work => {
            let Some(Arg::Stage(r)) = args.first() else {
                return Err(format!("`{}` needs a stage", fun.name()));
            };
            let s = member(r, cx, "")?;
            let stage = &cx.stages[s];
            match fun {
                Fun::Queue => stage.queue(s, cx.flows),
                Fun::Busy => stage.busy(s, cx.flows),
                _ => stage.work(s, cx.now, cx.flows),
            }
        }
        Fun::Used | Fun::Free | Fun::Holders | Fun::Queued => {
            let Some(Arg::Pool(r)) = args.first() else {
                return Err(format!("`{}` needs a pool", fun.name()));
            };
            let p = &cx.pools[member(r, cx, "")?];
            match fun {
                Fun::Used => p.used(),
                Fun::Free => p.cap - p.used(),
                Fun::Holders => p.holders() as f64,
                _ => p.queued() as f64,
            }
        }
    })
}

fn parameter_error(dist: Dist, what: &str, x: f64) -> String {
    format!("`~{}`: parameter {what} is {x}, out of range", dist.name())
}

/// `-mean·ln(1 - u)`: an exponential of `mean` by inversion of the uniform `u`.
pub fn exponential_of(mean: f64, u: f64) -> f64 {
    -mean * (1.0 - u).ln()
}

fn exponential(mean: f64, cx: &mut Cx<'_>) -> f64 {
    exponential_of(mean, cx.uniform())
}

fn sample(dist: Dist, args: &[Expr], cx: &mut Cx<'_>) -> Result<f64, String> {
    let mut p = [0.0f64; 2];
    if args.len() != dist.arity() {
        return Err(format!(
            "`~{}` takes {} argument(s), got {}",
            dist.name(),
            dist.arity(),
            args.len()
        ));
    }
    for (slot, a) in p.iter_mut().zip(args) {
        *slot = eval(a, cx)?;
    }
    let nonneg = |what: &str, x: f64| {
        if x >= 0.0 {
            Ok(())
        } else {
            Err(parameter_error(dist, what, x))
        }
    };
    Ok(match dist {
        Dist::Det => p[0],
        Dist::Exp => {
            nonneg("mean", p[0])?;
            exponential(p[0], cx)
        }
        Dist::Uniform => {
            let (a, b) = (p[0], p[1]);
            if b < a || a.is_nan() || b.is_nan() {
                return Err(format!(
                    "`~uniform({a}, {b})`: parameter b is below a (or NaN), out of range"
                ));
            }
            a + (b - a) * cx.uniform()
        }
        Dist::Erlang => {
            let (k, m) = (p[0], p[1]);
            if !(k >= 1.0 && k.fract() == 0.0 && k <= crate::ir::MAX_ERLANG_K) {
                return Err(parameter_error(
                    dist,
                    "k (a whole number from 1 to 10^6)",
                    k,
                ));
            }
            nonneg("mean", m)?;
            let phase = m / k;
            let mut sum = 0.0;
            for _ in 0..k as u64 {
                sum += exponential(phase, cx);
            }
            sum
        }
        Dist::H2 => {
            let (m, c2) = (p[0], p[1]);
            nonneg("mean", m)?;
            if c2 < 1.0 || c2.is_nan() {
                return Err(parameter_error(dist, "c2 (at least 1)", c2));
            }
            let p1 = 0.5 * (1.0 + ((c2 - 1.0) / (c2 + 1.0)).sqrt());
            let mean = if cx.uniform() < p1 {
                m / (2.0 * p1)
            } else {
                m / (2.0 * (1.0 - p1))
            };
            exponential(mean, cx)
        }
        Dist::Bernoulli => {
            let q = p[0];
            if !(0.0..=1.0).contains(&q) {
                return Err(parameter_error(dist, "p (in [0, 1])", q));
            }
            truth(cx.uniform() < q)
        }
    })
}
