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

/// Where an expression is evaluated, which decides what it may read: a
/// moment of the running system (the IR's table), or a constant position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Moment {
    /// Evaluated while the program runs, at this moment.
    At(ir::Moment),
    /// A constant position (folded at link time).
    Constant,
}

impl Moment {
    /// A session statement.
    pub(super) const SESSION: Moment = Moment::At(ir::Moment::Session);
    /// A ps capacity.
    pub(super) const PS: Moment = Moment::At(ir::Moment::PsCapacity);
    /// A renewal gap.
    pub(super) const RENEWAL: Moment = Moment::At(ir::Moment::Renewal);
    /// A time-varying poisson rate (an extension).
    pub(super) const RATE: Moment = Moment::At(ir::Moment::Rate);
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
        let ctx = ir::Ctx::from_word(n);
        match (n, m) {
            ("inf", _) => return ir::Expr::Num(f64::INFINITY),
            ("now", Moment::Constant) => {
                return self.refuse("not-constant", span, "`now` is not a constant".into());
            }
            ("now", Moment::RENEWAL) => return self.refuse_renewal(span),
            ("now" | "present", _) => {
                let c = ctx.expect("`now` and `present` are context variables");
                return match m {
                    Moment::At(at) if c.exists_in(at) => ir::Expr::Ctx(c),
                    _ => self.misplaced(c, m, span),
                };
            }
            // A context variable at its moment; elsewhere the name may still
            // be a `let` or an attribute (keywords are contextual).
            (_, Moment::At(at)) if ctx.is_some_and(|c| c.exists_in(at)) => {
                return ir::Expr::Ctx(ctx.expect("checked just above"));
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
            self.check_binding_scope(n, span);
            return match m {
                Moment::Constant => self.refuse(
                    "not-constant",
                    span,
                    format!("`{n}` is not a constant (it is a session attribute)"),
                ),
                Moment::RENEWAL => self.refuse_renewal(span),
                Moment::At(at) if !at.reads_attributes() => self.refuse(
                    "moment",
                    span,
                    format!("{} cannot read the session attribute `{n}`", at.place()),
                ),
                Moment::At(_) => ir::Expr::Attr(slot),
            };
        }
        if let Some(c) = ctx {
            return self.misplaced(c, m, span);
        }
        if let Some((_, now)) = ir::RENAMED_CONTEXT.iter().find(|(old, _)| *old == n) {
            return self.refuse(
                "renamed",
                span,
                format!("the context variable `{n}` is now `{now}`"),
            );
        }
        let mut d = Diagnostic::new("unknown-name", span, format!("unknown name `{n}`"))
            .with_label("not declared");
        if self.find(&self.pools, n).is_some() || self.find(&self.stages, n).is_some() {
            d = d.with_help(format!("`{n}` is a pool or stage; an observable such as `used({n})` or `queue({n})` reads it"));
        } else {
            let candidates: Vec<String> =
                self.lets.keys().chain(self.attrs.iter()).cloned().collect();
            d = names::did_you_mean(d, n, candidates.iter().map(String::as_str));
        }
        self.err(d);
        ir::Expr::Num(0.0)
    }

    /// Refuses a context variable read outside its moment.
    fn misplaced(&mut self, c: ir::Ctx, m: Moment, span: Span) -> ir::Expr {
        let message = match m {
            Moment::At(at) => c.misplaced(at),
            Moment::Constant => format!(
                "`{}` is not a constant (it is a context variable of {})",
                c.word(),
                c.home()
            ),
        };
        let rule = if m == Moment::Constant {
            "not-constant"
        } else {
            "moment"
        };
        self.refuse(rule, span, message)
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
                Moment::RENEWAL => return self.refuse_renewal(span),
                _ => {}
            }
            let extra = match fun.signature() {
                ir::FunKind::OfStageAnd(n) => n,
                _ => 0,
            };
            if args.len() != 1 + extra {
                return self.arity(f, 1 + extra, args.len());
            }
            let is_stage = fun.signature() != ir::FunKind::OfPool;
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
            let mut out = vec![arg];
            out.extend(
                args[1..]
                    .iter()
                    .map(|a| ir::Arg::Expr(self.lower_expr(a, m))),
            );
            return ir::Expr::Call(fun, out);
        }
        if f.name == "blocksize" {
            return self.blocksize(f, args);
        }
        if self.defs.knows(&f.name) {
            // A use outside the statements (a stage's or a pool's option,
            // a step stage's cost): statements had theirs expanded before
            // lowering; these expand here, as 0.1.0 accepts them.
            let call = ast::Expr {
                kind: ExprKind::Call(f.clone(), args.to_vec()),
                span,
            };
            let mut diags = Vec::new();
            let expanded = self.defs.expand_expr(&call, &mut diags);
            self.diags.extend(diags);
            return self.lower_expr(&expanded, m);
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

    /// `blocksize(p)`, folded to the pool's `block`.
    fn blocksize(&mut self, f: &Ident, args: &[ast::Expr]) -> ir::Expr {
        let [arg] = args else {
            return self.arity(f, 1, args.len());
        };
        let name = match &arg.kind {
            ExprKind::Name(n) => n,
            ExprKind::Index(id, _) => &id.name,
            _ => {
                return self.refuse(
                    "arity",
                    arg.span,
                    "`blocksize` takes a pool, not an expression".into(),
                );
            }
        };
        let Some(fam) = self.find(&self.pools, name).cloned() else {
            return self.refuse("unknown-pool", arg.span, format!("unknown pool `{name}`"));
        };
        match self.ir_pools[fam.base].block {
            Some(b) => ir::Expr::Num(b),
            None => {
                self.err(
                    Diagnostic::new(
                        "blocksize",
                        arg.span,
                        format!("`blocksize({name})`: pool `{name}` has no `block`"),
                    )
                    .with_help(format!(
                        "give the pool a block: `pool {name} {{ block b; }}`"
                    )),
                );
                ir::Expr::Num(0.0)
            }
        }
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
