//! What the operators and pure functions compute, and how they are written:
//! one definition for the constant folder, the engine and the printers, so
//! a folded constant and a value computed at run time cannot disagree.

use super::{BinOp, Fun, UnOp};

/// 1 for true, 0 for false: the language's truth values.
pub fn truth(t: bool) -> f64 {
    if t { 1.0 } else { 0.0 }
}

impl UnOp {
    /// `-a` is IEEE negation; `!a` is 1 when `a == 0` (so `!NaN` is 0).
    #[inline]
    pub fn apply(self, a: f64) -> f64 {
        match self {
            UnOp::Neg => -a,
            UnOp::Not => truth(a == 0.0),
        }
    }

    /// The operator as written in the language.
    pub fn symbol(self) -> &'static str {
        match self {
            UnOp::Neg => "-",
            UnOp::Not => "!",
        }
    }
}

impl BinOp {
    /// The operator on two evaluated operands: IEEE arithmetic, comparisons
    /// giving 1 or 0, `&&`/`||` on truthiness (non-zero, NaN included). The
    /// engine short-circuits `&&` and `||` before evaluating the right
    /// operand; on values the result is the same.
    #[inline]
    pub fn apply(self, a: f64, b: f64) -> f64 {
        match self {
            BinOp::Add => a + b,
            BinOp::Sub => a - b,
            BinOp::Mul => a * b,
            BinOp::Div => a / b,
            BinOp::Pow => a.powf(b),
            BinOp::Lt => truth(a < b),
            BinOp::Le => truth(a <= b),
            BinOp::Gt => truth(a > b),
            BinOp::Ge => truth(a >= b),
            BinOp::Eq => truth(a == b),
            BinOp::Ne => truth(a != b),
            BinOp::And => truth(a != 0.0 && b != 0.0),
            BinOp::Or => truth(a != 0.0 || b != 0.0),
        }
    }

    /// The operator as written in the language.
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Pow => "^",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::And => "&&",
            BinOp::Or => "||",
        }
    }
}

impl Fun {
    /// A pure function on its evaluated arguments (`b` is ignored by the
    /// one-argument ones); `None` for an observable, which reads the state.
    /// `min` and `max` ignore a NaN operand (IEEE minNum/maxNum).
    #[inline]
    pub fn apply_pure(self, a: f64, b: f64) -> Option<f64> {
        Some(match self {
            Fun::Min => a.min(b),
            Fun::Max => a.max(b),
            Fun::Pow => a.powf(b),
            Fun::Abs => a.abs(),
            Fun::Floor => a.floor(),
            Fun::Ceil => a.ceil(),
            Fun::Sqrt => a.sqrt(),
            Fun::Exp => a.exp(),
            Fun::Ln => a.ln(),
            Fun::Queue
            | Fun::Busy
            | Fun::Work
            | Fun::Used
            | Fun::Free
            | Fun::Holders
            | Fun::Queued
            | Fun::CachedIn
            | Fun::BudgetLeft
            | Fun::EstLambda
            | Fun::EstRho
            | Fun::EstWait
            | Fun::Price => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparisons_follow_ieee_and_give_one_or_zero() {
        // NaN == NaN is 0, NaN != NaN is 1, -0 == 0 is 1 (spec §5.1).
        assert_eq!(BinOp::Eq.apply(f64::NAN, f64::NAN), 0.0);
        assert_eq!(BinOp::Ne.apply(f64::NAN, f64::NAN), 1.0);
        assert_eq!(BinOp::Eq.apply(-0.0, 0.0), 1.0);
        assert_eq!(UnOp::Not.apply(f64::NAN), 0.0);
        assert_eq!(BinOp::And.apply(f64::NAN, 2.0), 1.0);
    }

    #[test]
    fn min_and_max_ignore_a_nan_operand() {
        assert_eq!(Fun::Max.apply_pure(f64::NAN, 1.0), Some(1.0));
        assert_eq!(Fun::Min.apply_pure(3.0, f64::NAN), Some(3.0));
        assert_eq!(Fun::Used.apply_pure(1.0, 1.0), None);
    }
}
