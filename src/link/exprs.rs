//! Expressions and references: names resolved to `let` values, attribute
//! slots, context variables, functions, observables and distributions, each
//! allowed only where its moment permits.
//!
//! Architecture invariant: every `def` use is already expanded; the result
//! is IR with `let`s folded to numbers and nothing else folded (constant
//! positions are folded by their callers through `ir::Expr::constant_value`).

use super::{Family, Linker, names};
use crate::ir;
use crate::syntax::Diagnostic;
use crate::syntax::ast::{self, ExprKind, Ident, Span};

/// Where an expression is evaluated, which decides what it may read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Moment {
    /// A session statement: attributes, `now`, observables, draws.
    Session,
    /// A ps capacity: `present`, `now`, `let`s, observables, draws.
    PsCapacity,
    /// A renewal gap: constants and draws.
    Renewal,
    /// A constant position (folded at link time).
    Constant,
}

impl Moment {
    fn place(self) -> &'static str {
        match self {
            Moment::Session => "a session statement",
            Moment::PsCapacity => "a ps capacity",
            Moment::Renewal => "a renewal gap",
            Moment::Constant => "a constant",
        }
    }
}

const PURE: [(&str, ir::Fun); 9] = [
    ("min", ir::Fun::Min),
    ("max", ir::Fun::Max),
    ("abs", ir::Fun::Abs),
    ("floor", ir::Fun::Floor),
    ("ceil", ir::Fun::Ceil),
    ("sqrt", ir::Fun::Sqrt),
    ("exp", ir::Fun::Exp),
    ("ln", ir::Fun::Ln),
    ("pow", ir::Fun::Pow),
];

const DISTS: [ir::Dist; 6] = [
    ir::Dist::Det,
    ir::Dist::Exp,
    ir::Dist::Uniform,
    ir::Dist::Erlang,
    ir::Dist::H2,
    ir::Dist::Bernoulli,
];

impl Linker<'_> {
    /// Folds a constant position; `what` names it in messages (`pool `p`: cap`).
    /// Returns `None` (after reporting) when it is not a constant or is NaN.
    pub(super) fn constant(&mut self, e: &ast::Expr, what: &str) -> Option<f64> {
        let before = self.diags.len();
        let ir = self.lower_expr(e, Moment::Constant);
        if self.diags.len() > before {
            return None;
        }
        let x = ir.constant_value()?;
        if x.is_nan() {
            self.err(Diagnostic::new("nan", e.span, format!("{what} is NaN")));
            return None;
        }
        Some(x)
    }

    /// Lowers an expression evaluated at `m`.
    pub(super) fn lower_expr(&mut self, e: &ast::Expr, m: Moment) -> ir::Expr {
        match &e.kind {
            ExprKind::Num(x) => ir::Expr::Num(*x),
            ExprKind::Name(n) => self.lower_name(n, e.span, m),
            ExprKind::Index(id, _) => {
                self.err(Diagnostic::new(
                    "misplaced-reference",
                    e.span,
                    format!(
                        "`{}[…]` names a pool or stage member; only an observable's argument may",
                        id.name
                    ),
                ));
                ir::Expr::Num(0.0)
            }
            ExprKind::Call(f, args) => self.lower_call(f, args, e.span, m),
            ExprKind::Sample(d, args) => {
                let Some(dist) = DISTS.iter().copied().find(|x| x.name() == d.name) else {
                    let diag = Diagnostic::new(
                        "unknown-distribution",
                        d.span,
                        format!("unknown distribution `{}`", d.name),
                    );
                    self.err(names::did_you_mean(
                        diag,
                        &d.name,
                        DISTS.iter().map(|x| x.name()),
                    ));
                    return ir::Expr::Num(0.0);
                };
                match m {
                    Moment::Constant => {
                        self.err(Diagnostic::new(
                            "not-constant",
                            e.span,
                            format!("a constant cannot sample (`~{}`)", d.name),
                        ));
                        return ir::Expr::Num(0.0);
                    }
                    _ if args.len() != dist.arity() => {
                        self.err(Diagnostic::new(
                            "arity",
                            e.span,
                            format!(
                                "`~{}` takes {} argument(s), got {}",
                                d.name,
                                dist.arity(),
                                args.len()
                            ),
                        ));
                        return ir::Expr::Num(0.0);
                    }
                    _ => {}
                }
                ir::Expr::Sample(dist, args.iter().map(|a| self.lower_expr(a, m)).collect())
            }
            ExprKind::Unary(op, a) => {
                let op = match op {
                    ast::UnOp::Neg => ir::UnOp::Neg,
                    ast::UnOp::Not => ir::UnOp::Not,
                };
                ir::Expr::Unary(op, Box::new(self.lower_expr(a, m)))
            }
            ExprKind::Binary(op, a, b) => {
                let op = binop(*op);
                ir::Expr::Binary(
                    op,
                    Box::new(self.lower_expr(a, m)),
                    Box::new(self.lower_expr(b, m)),
                )
            }
            ExprKind::Cond(c, a, b) => ir::Expr::Cond(
                Box::new(self.lower_expr(c, m)),
                Box::new(self.lower_expr(a, m)),
                Box::new(self.lower_expr(b, m)),
            ),
        }
    }

    fn lower_name(&mut self, n: &str, span: Span, m: Moment) -> ir::Expr {
        if let Some(d) = names::retired(n, span) {
            self.err(d);
            return ir::Expr::Num(0.0);
        }
        match n {
            "inf" => return ir::Expr::Num(f64::INFINITY),
            "now" => {
                return match m {
                    Moment::Session | Moment::PsCapacity => ir::Expr::Ctx(ir::Ctx::Now),
                    Moment::Constant => {
                        self.refuse("not-constant", span, "`now` is not a constant".into())
                    }
                    Moment::Renewal => self.refuse_renewal(span),
                };
            }
            "present" => {
                return if m == Moment::PsCapacity {
                    ir::Expr::Ctx(ir::Ctx::N)
                } else {
                    self.refuse(
                        "moment",
                        span,
                        format!(
                            "the context variable `present` is read in {}, but it exists only in a ps capacity",
                            m.place()
                        ),
                    )
                };
            }
            _ => {}
        }
        if let Some((x, _)) = self.lets.get(n) {
            return ir::Expr::Num(*x);
        }
        if m == Moment::Constant
            && let Some(later) = self.all_lets.get(n)
        {
            let d = Diagnostic::new(
                "let-order",
                span,
                format!(
                    "`{n}` is a `let` declared after this one; a `let` reads only earlier ones"
                ),
            )
            .with_secondary(*later, "declared here");
            self.err(d);
            return ir::Expr::Num(0.0);
        }
        if let Some(slot) = self.attr_slot.get(n).copied() {
            return match m {
                Moment::Session => ir::Expr::Attr(slot),
                Moment::Constant => self.refuse(
                    "not-constant",
                    span,
                    format!("`{n}` is not a constant (it is a session attribute)"),
                ),
                Moment::Renewal => self.refuse_renewal(span),
                Moment::PsCapacity => self.refuse(
                    "moment",
                    span,
                    format!("a ps capacity cannot read the session attribute `{n}`"),
                ),
            };
        }
        if let Some((_, place)) = names::TIER2_CONTEXT.iter().find(|(w, _)| *w == n) {
            return self.refuse(
                "moment",
                span,
                format!(
                    "`{n}` is read in {}, but it exists only in {place} (not supported yet)",
                    m.place()
                ),
            );
        }
        let mut d = Diagnostic::new("unknown-name", span, format!("unknown name `{n}`"))
            .with_label("not declared");
        if m == Moment::PsCapacity && n == "n" {
            d = d.with_help("the context variable `n` is now `present`");
        } else if self.find(&self.pools, n).is_some() || self.find(&self.stages, n).is_some() {
            d = d.with_help(format!("`{n}` is a pool or stage; an observable such as `used({n})` or `queue({n})` reads it"));
        } else {
            let candidates: Vec<String> =
                self.lets.keys().chain(self.attrs.iter()).cloned().collect();
            d = names::did_you_mean(d, n, candidates.iter().map(String::as_str));
        }
        self.err(d);
        ir::Expr::Num(0.0)
    }

    /// Reports a fault of `rule` and stands a 0 in for the expression.
    fn refuse(&mut self, rule: &'static str, span: Span, message: String) -> ir::Expr {
        self.err(Diagnostic::new(rule, span, message));
        ir::Expr::Num(0.0)
    }

    fn refuse_renewal(&mut self, span: Span) -> ir::Expr {
        self.refuse(
            "renewal",
            span,
            "renewal arrival may use only constants and sampled distributions (no attribute, `now` or observable)".into(),
        )
    }

    fn lower_call(&mut self, f: &Ident, args: &[ast::Expr], span: Span, m: Moment) -> ir::Expr {
        if let Some((_, fun)) = PURE.iter().find(|(n, _)| *n == f.name) {
            if args.len() != fun.signature().arity() {
                return self.arity(f, fun.signature().arity(), args.len());
            }
            return ir::Expr::Call(
                *fun,
                args.iter()
                    .map(|a| ir::Arg::Expr(self.lower_expr(a, m)))
                    .collect(),
            );
        }
        if let Some(fun) = ir::Fun::ALL.iter().copied().find(|x| x.name() == f.name) {
            match m {
                Moment::Constant => {
                    return self.refuse(
                        "not-constant",
                        span,
                        format!(
                            "`{}` reads the running system and is not a constant",
                            f.name
                        ),
                    );
                }
                Moment::Renewal => return self.refuse_renewal(span),
                _ => {}
            }
            if args.len() != 1 {
                return self.arity(f, 1, args.len());
            }
            let is_stage = fun.signature() == ir::FunKind::OfStage;
            let r = match &args[0].kind {
                ExprKind::Name(n) => ast::Ref {
                    name: Ident {
                        name: n.clone(),
                        span: args[0].span,
                    },
                    index: None,
                    span: args[0].span,
                },
                ExprKind::Index(id, i) => ast::Ref {
                    name: id.clone(),
                    index: Some((**i).clone()),
                    span: args[0].span,
                },
                _ => {
                    let word = if is_stage { "stage" } else { "pool" };
                    return self.refuse(
                        "arity",
                        args[0].span,
                        format!("`{}` takes a {word}, not an expression", f.name),
                    );
                }
            };
            let Some(c) = self.lower_ref(&r, is_stage, m) else {
                return ir::Expr::Num(0.0);
            };
            let arg = if is_stage {
                ir::Arg::Stage(c)
            } else {
                ir::Arg::Pool(c)
            };
            return ir::Expr::Call(fun, vec![arg]);
        }
        if names::TIER2_FUNCTIONS.contains(&f.name.as_str()) {
            return self.refuse(
                "unsupported",
                f.span,
                format!("`{}` is a Tier-2 observable, not supported yet", f.name),
            );
        }
        let d = Diagnostic::new(
            "unknown-function",
            f.span,
            format!("unknown function `{}`", f.name),
        );
        let candidates: Vec<String> = ir::Fun::ALL
            .iter()
            .map(|x| x.name().to_string())
            .chain(self.defs.names().map(String::from))
            .collect();
        self.err(names::did_you_mean(
            d,
            &f.name,
            candidates.iter().map(String::as_str),
        ));
        ir::Expr::Num(0.0)
    }

    fn arity(&mut self, f: &Ident, want: usize, got: usize) -> ir::Expr {
        self.refuse(
            "arity",
            f.span,
            format!("`{}` takes {want} argument(s), got {got}", f.name),
        )
    }

    /// The family named `name`, if declared.
    pub(super) fn find<'f>(&self, fams: &'f [Family], name: &str) -> Option<&'f Family> {
        fams.iter().find(|f| f.name == name)
    }

    /// Resolves a pool or stage reference; the index is evaluated at `m`.
    pub(super) fn lower_ref(
        &mut self,
        r: &ast::Ref,
        is_stage: bool,
        m: Moment,
    ) -> Option<ir::CRef> {
        let (word, other) = if is_stage {
            ("stage", "pool")
        } else {
            ("pool", "stage")
        };
        let fams = if is_stage { &self.stages } else { &self.pools };
        let Some(fam) = self.find(fams, &r.name.name).cloned() else {
            let mut d = Diagnostic::new(
                if is_stage {
                    "unknown-stage"
                } else {
                    "unknown-pool"
                },
                r.name.span,
                format!("unknown {word} `{}`", r.name.name),
            );
            let others = if is_stage { &self.pools } else { &self.stages };
            if self.find(others, &r.name.name).is_some() {
                d = d.with_help(format!("`{}` is a {other}, not a {word}", r.name.name));
            } else {
                d = names::did_you_mean(d, &r.name.name, fams.iter().map(|f| f.name.as_str()));
            }
            self.err(d);
            return None;
        };
        let index = match &r.index {
            None if fam.count > 1 => {
                self.err(
                    Diagnostic::new(
                        "array-index",
                        r.span,
                        format!("{word} `{}` is an array; index it", fam.name),
                    )
                    .with_help(format!(
                        "write `{}[i]` with i from 0 to {}",
                        fam.name,
                        fam.count - 1
                    )),
                );
                return None;
            }
            None => None,
            Some(i) => {
                let index = self.lower_expr(i, m);
                // A constant index is checked here, with the file's other
                // link errors (the validator checks it again, for IR).
                if let Some(x) = index.constant_value()
                    && !(x >= 0.0 && x.fract() == 0.0 && x < fam.count as f64)
                {
                    let last = fam.count.saturating_sub(1);
                    let (what, help) = if x >= 0.0 && x.fract() == 0.0 {
                        (
                            "out of range",
                            format!(
                                "`{}` has indices 0 to {last}; to have more members, declare `{word} {}[{}]`",
                                fam.name,
                                fam.name,
                                x + 1.0
                            ),
                        )
                    } else {
                        (
                            "not a whole number ≥ 0",
                            format!(
                                "an index of `{}` is a whole number from 0 to {last}",
                                fam.name
                            ),
                        )
                    };
                    self.err(
                        Diagnostic::new(
                            "index",
                            i.span,
                            format!(
                                "{word} `{}`: index {x} {what} (count {})",
                                fam.name, fam.count
                            ),
                        )
                        .with_label(format!("a constant index of `{}`", fam.name))
                        .with_help(help),
                    );
                }
                Some(index)
            }
        };
        Some(ir::CRef {
            base: fam.base,
            count: fam.count,
            index,
        })
    }
}

fn binop(op: ast::BinOp) -> ir::BinOp {
    use ast::BinOp as A;
    use ir::BinOp as B;
    match op {
        A::Add => B::Add,
        A::Sub => B::Sub,
        A::Mul => B::Mul,
        A::Div => B::Div,
        A::Pow => B::Pow,
        A::Lt => B::Lt,
        A::Le => B::Le,
        A::Gt => B::Gt,
        A::Ge => B::Ge,
        A::Eq => B::Eq,
        A::Ne => B::Ne,
        A::And => B::And,
        A::Or => B::Or,
    }
}

/// The number of expressions a pure function takes.
trait Arity {
    fn arity(self) -> usize;
}

impl Arity for ir::FunKind {
    fn arity(self) -> usize {
        match self {
            ir::FunKind::Pure(n) => n,
            ir::FunKind::OfStage | ir::FunKind::OfPool => 1,
            ir::FunKind::OfStageAnd(n) => n + 1,
        }
    }
}
