//! Expressions in the IR as the validator needs them: constant folding,
//! "does it draw", and the text a message shows for a reference.
//!
//! Architecture invariant: pure functions of the IR; no rule is decided here.

use super::super::{Arg, CRef, Expr, Program, UnOp};

impl Expr {
    /// The value of an expression that reads nothing a run provides (no
    /// attribute, context variable, draw or observable); `None` otherwise.
    pub fn constant_value(&self) -> Option<f64> {
        Some(match self {
            Expr::Num(x) => *x,
            Expr::Attr(_) | Expr::Ctx(_) | Expr::Sample(..) => return None,
            Expr::Call(f, args) => {
                let mut xs = Vec::with_capacity(args.len());
                for a in args {
                    match a {
                        Arg::Expr(e) => xs.push(e.constant_value()?),
                        Arg::Pool(_) | Arg::Stage(_) => return None,
                    }
                }
                let x = |i: usize| xs.get(i).copied().unwrap_or(f64::NAN);
                f.apply_pure(x(0), x(1))?
            }
            Expr::Unary(op, a) => op.apply(a.constant_value()?),
            Expr::Binary(op, a, b) => op.apply(a.constant_value()?, b.constant_value()?),
            Expr::Cond(c, a, b) => {
                if c.constant_value()? != 0.0 {
                    a.constant_value()?
                } else {
                    b.constant_value()?
                }
            }
        })
    }

    /// Whether evaluating the expression may draw from a distribution.
    pub fn draws(&self) -> bool {
        let mut found = false;
        self.visit(&mut |e| found |= matches!(e, Expr::Sample(..)));
        found
    }

    /// Whether the expression nests more than `limit` levels (a leaf is one
    /// level). Recurses at most `limit` deep, whatever the expression.
    pub fn deeper_than(&self, limit: usize) -> bool {
        if limit == 0 {
            return true;
        }
        let below = limit - 1;
        match self {
            Expr::Num(_) | Expr::Attr(_) | Expr::Ctx(_) => false,
            Expr::Sample(_, args) => args.iter().any(|a| a.deeper_than(below)),
            Expr::Call(_, args) => args.iter().any(|a| match a {
                Arg::Expr(e) => e.deeper_than(below),
                Arg::Pool(r) | Arg::Stage(r) => r
                    .index
                    .as_ref()
                    .is_some_and(|i| below == 0 || i.deeper_than(below - 1)),
            }),
            Expr::Unary(_, a) => a.deeper_than(below),
            Expr::Binary(_, a, b) => a.deeper_than(below) || b.deeper_than(below),
            Expr::Cond(c, a, b) => {
                c.deeper_than(below) || a.deeper_than(below) || b.deeper_than(below)
            }
        }
    }

    /// Whether its value can change while nothing but the clock moves:
    /// it reads `now`, `present`, an observable, or draws. An expression
    /// without these depends on numbers and the session's attributes only.
    pub fn reads_state(&self) -> bool {
        let mut found = false;
        self.visit(&mut |e| {
            found |= match e {
                Expr::Ctx(_) | Expr::Sample(..) => true,
                Expr::Call(f, _) => !matches!(f.signature(), super::super::FunKind::Pure(_)),
                _ => false,
            }
        });
        found
    }

    /// Calls `f` on this expression and every sub-expression (index
    /// expressions of references included).
    pub fn visit(&self, f: &mut dyn FnMut(&Expr)) {
        f(self);
        match self {
            Expr::Num(_) | Expr::Attr(_) | Expr::Ctx(_) => {}
            Expr::Sample(_, args) => args.iter().for_each(|a| a.visit(f)),
            Expr::Call(_, args) => {
                for a in args {
                    match a {
                        Arg::Expr(e) => e.visit(f),
                        Arg::Pool(r) | Arg::Stage(r) => {
                            if let Some(i) = &r.index {
                                i.visit(f);
                            }
                        }
                    }
                }
            }
            Expr::Unary(_, a) => a.visit(f),
            Expr::Binary(_, a, b) => {
                a.visit(f);
                b.visit(f);
            }
            Expr::Cond(c, a, b) => {
                c.visit(f);
                a.visit(f);
                b.visit(f);
            }
        }
    }
}

/// A number as the language prints it (`2`, `0.5`, `inf`; `1e300`, not
/// its 301 digits).
pub(super) fn num(x: f64) -> String {
    crate::ir::shown(x)
}

/// A reference as the program would write it (`kv`, `kvD[j]`).
pub(super) fn ref_text(p: &Program, r: &CRef, is_stage: bool) -> String {
    let name = if is_stage {
        p.stage_name(r.base)
    } else {
        p.pool_name(r.base)
    };
    match &r.index {
        None => name.to_string(),
        Some(i) => format!("{name}[{}]", expr_text(p, i)),
    }
}

/// An expression as the program would write it, fully parenthesised.
pub(super) fn expr_text(p: &Program, e: &Expr) -> String {
    let list = |args: &mut dyn Iterator<Item = String>| args.collect::<Vec<_>>().join(", ");
    match e {
        Expr::Num(x) => num(*x),
        Expr::Attr(s) => p
            .attrs
            .get(*s)
            .cloned()
            .unwrap_or_else(|| format!("attr{s}")),
        Expr::Ctx(c) => c.word().into(),
        Expr::Sample(d, a) => format!(
            "~{}({})",
            d.name(),
            list(&mut a.iter().map(|e| expr_text(p, e)))
        ),
        Expr::Call(f, a) => format!(
            "{}({})",
            f.name(),
            list(&mut a.iter().map(|a| match a {
                Arg::Expr(e) => expr_text(p, e),
                Arg::Pool(r) => ref_text(p, r, false),
                Arg::Stage(r) => ref_text(p, r, true),
            }))
        ),
        Expr::Unary(UnOp::Neg, a) => format!("-{}", expr_text(p, a)),
        Expr::Unary(UnOp::Not, a) => format!("!{}", expr_text(p, a)),
        Expr::Binary(op, a, b) => {
            let op = op.symbol();
            format!("({} {op} {})", expr_text(p, a), expr_text(p, b))
        }
        Expr::Cond(c, a, b) => format!(
            "({} ? {} : {})",
            expr_text(p, c),
            expr_text(p, a),
            expr_text(p, b)
        ),
    }
}
