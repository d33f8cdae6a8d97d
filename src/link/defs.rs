//! `def`s: checked where they are declared, then expanded by textual
//! substitution wherever they are used.
//!
//! Architecture invariant: works on the AST only and returns AST; after
//! expansion no `def` use is left, so the rest of the linker never sees one.
//! A body may use only earlier `def`s, so expanding the uses left after a
//! substitution terminates.

use std::cell::Cell;
use std::collections::{BTreeMap, HashMap};

use super::names;
use crate::syntax::Diagnostic;
use crate::syntax::ast::{
    Binding, Block, DefBody, Expr, ExprKind, HoldPool, Ident, Item, Ref, Span, Stmt, StmtKind,
    TransferTarget,
};

/// One definition, its body already expanded by the definitions before it.
#[derive(Clone, Debug)]
struct Def {
    params: Vec<Ident>,
    body: DefBody,
}

/// How deep expansion may nest: blocks, expression levels and the uses of
/// `def`s being expanded count together, as the parser counts its nesting.
/// A use substitutes a body that may use other `def`s, so the expanded
/// program can be far deeper than the text; past this the linker refuses it
/// rather than overflow the stack.
pub const MAX_EXPANDED_DEPTH: u32 = crate::syntax::parser::MAX_DEPTH;

/// How many expression nodes and statements the uses of `def`s may produce in
/// all. `def f1(x) = f0(x) + f0(x);` doubles at each level, so forty such
/// lines would otherwise expand to 2^40 nodes.
pub const MAX_EXPANDED_SIZE: usize = 1_000_000;

/// The program's definitions, in declaration order.
#[derive(Debug, Default)]
pub struct Defs {
    /// Lookup by name (iteration order never reaches the output).
    by_name: HashMap<String, Def>,
    /// The nesting of the expansion in progress (see [`MAX_EXPANDED_DEPTH`]).
    depth: Cell<u32>,
    /// Nodes produced by substitutions so far (see [`MAX_EXPANDED_SIZE`]).
    produced: Cell<usize>,
    /// Whether the depth or the size limit was reported (once each).
    reported_depth: Cell<bool>,
    reported_size: Cell<bool>,
}

/// The refusal of a `def` or `def` parameter named by a word of the
/// language (`def serve(x)`, `def f(run)`): the reference refuses both, and
/// a `def min` would hide the function.
fn language_word(code: &'static str, name: &str, what: &str, span: Span) -> Diagnostic {
    Diagnostic::new(
        code,
        span,
        format!("{what} `{name}` is a word of the language; choose another name"),
    )
    .with_label("a word of the language")
    .with_help(format!("rename it, e.g. `{name}_`"))
}

/// Parameter name -> argument expression.
pub(super) type Subst<'a> = BTreeMap<&'a str, &'a Expr>;

impl Defs {
    /// Checks and expands every `def` of the program. `lets` are the names of
    /// the program's `let` constants (a `def` may not share one).
    pub fn build(
        items: &[Item],
        lets: &BTreeMap<String, (f64, Ident)>,
        replaced: &[(String, String)],
        diags: &mut Vec<Diagnostic>,
    ) -> Defs {
        let mut order: BTreeMap<&str, (usize, &Ident)> = BTreeMap::new();
        let mut decls = Vec::new();
        for item in items {
            if let Item::Def {
                name, params, body, ..
            } = item
            {
                if let Some((_, first)) = order.get(name.name.as_str()) {
                    diags.push(
                        Diagnostic::new(
                            "duplicate",
                            name.span,
                            format!("duplicate def `{}`: defined twice", name.name),
                        )
                        .with_secondary(first.span, "first defined here"),
                    );
                    continue;
                }
                order.insert(&name.name, (decls.len(), name));
                decls.push((name, params, body));
            }
        }
        let replacements = replacements(&decls, replaced, diags);
        let mut defs = Defs::default();
        for (k, (name, params, body)) in decls.into_iter().enumerate() {
            let body = replacements.get(name.name.as_str()).unwrap_or(body);
            if let Some(d) = names::hides(&name.name, "def", name.span)
                .or_else(|| names::retired(&name.name, name.span))
                .or_else(|| {
                    names::is_def_word(&name.name)
                        .then(|| language_word("def-name", &name.name, "def", name.span))
                })
            {
                diags.push(d);
            }
            if let Some((_, l)) = lets.get(&name.name) {
                diags.push(
                    Diagnostic::new(
                        "duplicate",
                        name.span,
                        format!("`{}` is both a `def` and a `let`", name.name),
                    )
                    .with_secondary(l.span, "the `let` is here"),
                );
            }
            for (i, p) in params.iter().enumerate() {
                if params[..i].iter().any(|q| q.name == p.name) {
                    diags.push(Diagnostic::new(
                        "def-parameter",
                        p.span,
                        format!("`{}`: parameter `{}` is given twice", name.name, p.name),
                    ));
                }
                if let Some(d) = names::hides(&p.name, "def parameter", p.span)
                    .or_else(|| names::retired(&p.name, p.span))
                    .or_else(|| {
                        names::is_language_word(&p.name).then(|| {
                            language_word("def-parameter", &p.name, "def parameter", p.span)
                        })
                    })
                {
                    diags.push(d);
                }
            }
            let mut uses = Vec::new();
            match body {
                DefBody::Expr(e) => calls_in_expr(e, &mut uses),
                DefBody::Block(b) => calls_in_block(b, &mut uses),
            }
            let mut bad_use = false;
            for u in uses {
                if let Some((j, _)) = order.get(u.name.as_str())
                    && *j >= k
                {
                    bad_use = true;
                    let message = if *j == k {
                        format!(
                            "`{}` uses itself; a definition cannot be recursive",
                            name.name
                        )
                    } else {
                        format!(
                            "`{}` uses `{}`, which is defined after it",
                            name.name, u.name
                        )
                    };
                    diags.push(Diagnostic::new("def-order", u.span, message));
                }
            }
            if let DefBody::Block(b) = body {
                assigned_params(&name.name, params, &b.stmts, diags);
            }
            if bad_use {
                continue;
            }
            // The body is kept as written: a use substitutes the arguments
            // first and expands the uses in the result afterwards, so a free
            // name of an inner definition is never captured by a parameter
            // of this one (as the reference does).
            let body = body.clone();
            defs.by_name.insert(
                name.name.clone(),
                Def {
                    params: params.clone(),
                    body,
                },
            );
        }
        defs
    }

    /// Whether `name` is a definition.
    pub fn knows(&self, name: &str) -> bool {
        self.by_name.contains_key(name)
    }

    /// The names of the definitions (for did-you-mean notes; the order is
    /// a map's and never reaches the output).
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.by_name.keys().map(String::as_str)
    }

    /// Expands every use in a list of statements.
    pub fn expand_stmts(&self, stmts: &[Stmt], diags: &mut Vec<Diagnostic>) -> Vec<Stmt> {
        let mut out = Vec::with_capacity(stmts.len());
        for s in stmts {
            if let StmtKind::Call { name, args } = &s.kind {
                let Some(def) = self.by_name.get(&name.name) else {
                    let d = Diagnostic::new(
                        "unknown-function",
                        name.span,
                        format!("unknown function `{}`", name.name),
                    );
                    diags.push(names::did_you_mean(d, &name.name, self.names()));
                    continue;
                };
                let DefBody::Block(body) = &def.body else {
                    diags.push(Diagnostic::new(
                        "def-kind",
                        s.span,
                        format!(
                            "`{}` is an expression, not statements; use it in an expression",
                            name.name
                        ),
                    ));
                    continue;
                };
                let args: Vec<Expr> = args.iter().map(|a| self.expand_expr(a, diags)).collect();
                if let Some(map) = self.bind(
                    name,
                    &def.params,
                    &args,
                    DefBody::Block(body.clone()),
                    diags,
                ) {
                    let size = body.stmts.iter().map(stmt_size).sum::<usize>()
                        + map
                            .iter()
                            .map(|(p, a)| {
                                body.stmts
                                    .iter()
                                    .map(|st| reads_in_stmt(st, p))
                                    .sum::<usize>()
                                    * expr_size(a)
                            })
                            .sum::<usize>();
                    if self.within_limits(size, s.span, diags) {
                        let spliced: Vec<Stmt> =
                            body.stmts.iter().map(|st| subst_stmt(st, &map)).collect();
                        let mut expanded = self.expand_stmts(&spliced, diags);
                        // The outermost use is the site: an enclosing
                        // expansion overwrites what an inner one set.
                        let site = s.site.unwrap_or(s.span);
                        expanded.iter_mut().for_each(|st| set_site(st, site));
                        out.extend(expanded);
                        self.leave();
                    }
                }
                continue;
            }
            out.push(self.expand_stmt(s, diags));
        }
        out
    }

    fn expand_block(&self, b: &Block, diags: &mut Vec<Diagnostic>) -> Block {
        if !self.enter(b.span, diags) {
            return Block {
                stmts: Vec::new(),
                span: b.span,
            };
        }
        let stmts = self.expand_stmts(&b.stmts, diags);
        self.leave();
        Block {
            stmts,
            span: b.span,
        }
    }

    /// Enters one level of expansion; past [`MAX_EXPANDED_DEPTH`] reports it
    /// (once) and returns false.
    fn enter(&self, span: Span, diags: &mut Vec<Diagnostic>) -> bool {
        if self.depth.get() >= MAX_EXPANDED_DEPTH {
            if !self.reported_depth.replace(true) {
                diags.push(
                    Diagnostic::new(
                        "nesting",
                        span,
                        format!(
                            "expected at most {MAX_EXPANDED_DEPTH} levels of nesting once the `def`s are expanded, found deeper nesting"
                        ),
                    )
                    .with_label("nested too deeply here")
                    .with_help("set an attribute to an inner part and use the attribute"),
                );
            }
            return false;
        }
        self.depth.set(self.depth.get() + 1);
        true
    }

    fn leave(&self) {
        self.depth.set(self.depth.get() - 1);
    }

    /// Enters the expansion of one use that produces `size` nodes; refuses
    /// it past [`MAX_EXPANDED_DEPTH`] or [`MAX_EXPANDED_SIZE`].
    fn within_limits(&self, size: usize, span: Span, diags: &mut Vec<Diagnostic>) -> bool {
        let produced = self.produced.get().saturating_add(size);
        if produced > MAX_EXPANDED_SIZE {
            if !self.reported_size.replace(true) {
                diags.push(
                    Diagnostic::new(
                        "expansion-size",
                        span,
                        format!(
                            "expanding the `def`s would produce more than {MAX_EXPANDED_SIZE} expression nodes and statements"
                        ),
                    )
                    .with_label("expanding this use goes past the limit")
                    .with_help("a `def` is substituted at every use; set an attribute once and read it instead"),
                );
            }
            return false;
        }
        self.produced.set(produced);
        self.enter(span, diags)
    }

    /// Expands the uses in a statement that is not itself a use (those are
    /// spliced by [`Defs::expand_stmts`]).
    fn expand_stmt(&self, s: &Stmt, diags: &mut Vec<Diagnostic>) -> Stmt {
        debug_assert!(
            !matches!(s.kind, StmtKind::Call { .. }),
            "statement uses are spliced by expand_stmts"
        );
        rewrite_stmt(s, &mut Expansion { defs: self, diags })
    }

    fn expand_ref(&self, r: &Ref, diags: &mut Vec<Diagnostic>) -> Ref {
        Ref {
            name: r.name.clone(),
            index: r.index.as_ref().map(|i| self.expand_expr(i, diags)),
            span: r.span,
        }
    }

    /// Expands every use in an expression.
    pub fn expand_expr(&self, e: &Expr, diags: &mut Vec<Diagnostic>) -> Expr {
        if matches!(e.kind, ExprKind::Num(_) | ExprKind::Name(_)) {
            return e.clone();
        }
        if !self.enter(e.span, diags) {
            return Expr {
                kind: ExprKind::Num(0.0),
                span: e.span,
            };
        }
        let out = self.expand_expr_in(e, diags);
        self.leave();
        out
    }

    fn expand_expr_in(&self, e: &Expr, diags: &mut Vec<Diagnostic>) -> Expr {
        let kind = match &e.kind {
            ExprKind::Num(_) | ExprKind::Name(_) => return e.clone(),
            ExprKind::Index(id, i) => {
                ExprKind::Index(id.clone(), Box::new(self.expand_expr(i, diags)))
            }
            ExprKind::Call(name, args) => {
                let args: Vec<Expr> = args.iter().map(|a| self.expand_expr(a, diags)).collect();
                let Some(def) = self.by_name.get(&name.name) else {
                    return Expr {
                        kind: ExprKind::Call(name.clone(), args),
                        span: e.span,
                    };
                };
                let DefBody::Expr(body) = &def.body else {
                    diags.push(Diagnostic::new(
                        "def-kind",
                        e.span,
                        format!(
                            "`{}` is statements, not an expression; use it as a statement `{}(…);`",
                            name.name, name.name
                        ),
                    ));
                    return Expr {
                        kind: ExprKind::Num(0.0),
                        span: e.span,
                    };
                };
                let zero = Expr {
                    kind: ExprKind::Num(0.0),
                    span: e.span,
                };
                let Some(map) =
                    self.bind(name, &def.params, &args, DefBody::Expr(body.clone()), diags)
                else {
                    return zero;
                };
                let size = expr_size(body)
                    + map
                        .iter()
                        .map(|(p, a)| reads_in_expr(body, p) * expr_size(a))
                        .sum::<usize>();
                if !self.within_limits(size, e.span, diags) {
                    return zero;
                }
                let out = self.expand_expr(&subst_expr(body, &map), diags);
                self.leave();
                return out;
            }
            ExprKind::Sample(d, args) => ExprKind::Sample(
                d.clone(),
                args.iter().map(|a| self.expand_expr(a, diags)).collect(),
            ),
            ExprKind::Unary(op, a) => ExprKind::Unary(*op, Box::new(self.expand_expr(a, diags))),
            ExprKind::Binary(op, a, b) => ExprKind::Binary(
                *op,
                Box::new(self.expand_expr(a, diags)),
                Box::new(self.expand_expr(b, diags)),
            ),
            ExprKind::Cond(c, a, b) => ExprKind::Cond(
                Box::new(self.expand_expr(c, diags)),
                Box::new(self.expand_expr(a, diags)),
                Box::new(self.expand_expr(b, diags)),
            ),
        };
        Expr { kind, span: e.span }
    }

    /// Binds arguments to parameters: checks the arity and that no argument
    /// that draws goes to a parameter the body reads more than once.
    fn bind<'a>(
        &self,
        name: &Ident,
        params: &'a [Ident],
        args: &'a [Expr],
        body: DefBody,
        diags: &mut Vec<Diagnostic>,
    ) -> Option<Subst<'a>> {
        if params.len() != args.len() {
            diags.push(Diagnostic::new(
                "arity",
                name.span,
                format!(
                    "`{}` takes {} argument(s), got {}",
                    name.name,
                    params.len(),
                    args.len()
                ),
            ));
            return None;
        }
        let mut ok = true;
        for (p, a) in params.iter().zip(args) {
            if !expr_draws(a) {
                continue;
            }
            let reads = match &body {
                DefBody::Expr(e) => reads_in_expr(e, &p.name),
                DefBody::Block(b) => b.stmts.iter().map(|s| reads_in_stmt(s, &p.name)).sum(),
            };
            if reads > 1 {
                ok = false;
                diags.push(
                    Diagnostic::new(
                        "def-draw",
                        a.span,
                        format!(
                            "the argument for `{}` draws, and `{}` reads `{}` {reads} times (each read would draw again)",
                            p.name, name.name, p.name
                        ),
                    )
                    .with_help("sample into an attribute first and pass the attribute"),
                );
            }
        }
        ok.then(|| params.iter().map(|p| p.name.as_str()).zip(args).collect())
    }
}

/// `set`/`choose` of a parameter in a statement definition's body.
fn assigned_params(def: &str, params: &[Ident], stmts: &[Stmt], diags: &mut Vec<Diagnostic>) {
    for s in stmts {
        let target = match &s.kind {
            StmtKind::Set { name, .. } => Some(name),
            StmtKind::Choose { var, .. } => Some(var),
            _ => None,
        };
        if let Some(t) = target
            && params.iter().any(|p| p.name == t.name)
        {
            diags.push(Diagnostic::new(
                "def-parameter",
                t.span,
                format!(
                    "`{def}` assigns its parameter `{}`; a parameter cannot be assigned",
                    t.name
                ),
            ));
        }
        for b in inner_blocks(s) {
            assigned_params(def, params, &b.stmts, diags);
        }
    }
}

/// The blocks directly inside a statement.
pub(super) fn inner_blocks(s: &Stmt) -> Vec<&Block> {
    match &s.kind {
        StmtKind::Hold { body, .. } | StmtKind::Loop { body } => vec![body],
        StmtKind::Branch {
            then, otherwise, ..
        } => std::iter::once(then).chain(otherwise).collect(),
        _ => Vec::new(),
    }
}

/// Every expression directly in a statement (not in its inner blocks).
pub(super) fn stmt_exprs(s: &Stmt) -> Vec<&Expr> {
    fn refs(r: &Ref) -> Option<&Expr> {
        r.index.as_ref()
    }
    let mut out: Vec<&Expr> = Vec::new();
    match &s.kind {
        StmtKind::Set { value, .. } | StmtKind::Observe { value, .. } => out.push(value),
        StmtKind::Turn | StmtKind::End => {}
        StmtKind::Hold {
            pools,
            reuse,
            bindings,
            cache,
            lease,
            ..
        } => {
            for h in pools {
                out.extend(refs(&h.pool));
                out.push(&h.units);
                out.extend(h.reserve.as_ref());
            }
            out.extend(reuse.as_ref());
            out.extend(bindings.iter().map(|b| &b.value));
            out.extend(cache.as_ref());
            if let Some((r, t)) = lease {
                out.extend(refs(r));
                out.push(t);
            }
        }
        StmtKind::Drop { pool } => out.extend(refs(pool)),
        StmtKind::Request => {}
        StmtKind::Serving {
            target,
            work,
            growing,
            ..
        } => {
            match target {
                TransferTarget::Role => {}
                TransferTarget::Indexed(i) => out.push(i),
                TransferTarget::On(rs) => rs.iter().for_each(|r| out.extend(refs(r))),
            }
            out.push(work);
            out.extend(growing.as_ref().and_then(refs));
        }
        StmtKind::Grow { pool, amount } | StmtKind::Load { pool, amount } => {
            out.extend(refs(pool));
            out.push(amount);
        }
        StmtKind::Release { pool } => out.extend(refs(pool)),
        StmtKind::Run {
            stages,
            work,
            growing,
            ..
        } => {
            stages.iter().for_each(|r| out.extend(refs(r)));
            out.push(work);
            out.extend(growing.as_ref().and_then(refs));
        }
        StmtKind::Branch { guard, .. } => out.push(guard),
        StmtKind::Loop { .. } => {}
        StmtKind::Choose { count, keys, .. } => {
            out.push(count);
            out.extend(keys);
        }
        StmtKind::Call { args, .. } => out.extend(args),
        StmtKind::Transfer {
            target,
            work,
            from,
            to,
            amount,
        } => {
            match target {
                TransferTarget::Role => {}
                TransferTarget::Indexed(i) => out.push(i),
                TransferTarget::On(rs) => rs.iter().for_each(|r| out.extend(refs(r))),
            }
            out.push(work);
            out.extend(refs(from));
            out.extend(refs(to));
            out.push(amount);
        }
    }
    out
}

fn calls_in_block<'a>(b: &'a Block, out: &mut Vec<&'a Ident>) {
    for s in &b.stmts {
        if let StmtKind::Call { name, .. } = &s.kind {
            out.push(name);
        }
        stmt_exprs(s)
            .into_iter()
            .for_each(|e| calls_in_expr(e, out));
        inner_blocks(s)
            .into_iter()
            .for_each(|b| calls_in_block(b, out));
    }
}

fn calls_in_expr<'a>(e: &'a Expr, out: &mut Vec<&'a Ident>) {
    if let ExprKind::Call(name, _) = &e.kind {
        out.push(name);
    }
    sub_exprs(e).into_iter().for_each(|s| calls_in_expr(s, out));
}

/// The direct sub-expressions of `e`.
pub(super) fn sub_exprs(e: &Expr) -> Vec<&Expr> {
    match &e.kind {
        ExprKind::Num(_) | ExprKind::Name(_) => Vec::new(),
        ExprKind::Index(_, i) => vec![i],
        ExprKind::Call(_, a) | ExprKind::Sample(_, a) => a.iter().collect(),
        ExprKind::Unary(_, a) => vec![a],
        ExprKind::Binary(_, a, b) => vec![a, b],
        ExprKind::Cond(c, a, b) => vec![c, a, b],
    }
}

/// Nodes in an expression.
fn expr_size(e: &Expr) -> usize {
    1 + sub_exprs(e).into_iter().map(expr_size).sum::<usize>()
}

/// A statement, its expressions and its inner blocks' statements.
fn stmt_size(s: &Stmt) -> usize {
    1 + stmt_exprs(s).into_iter().map(expr_size).sum::<usize>()
        + inner_blocks(s)
            .into_iter()
            .flat_map(|b| &b.stmts)
            .map(stmt_size)
            .sum::<usize>()
}

/// Whether evaluating `e` may draw.
pub(super) fn expr_draws(e: &Expr) -> bool {
    matches!(e.kind, ExprKind::Sample(..)) || sub_exprs(e).into_iter().any(expr_draws)
}

/// How often `e` reads the name `p`.
pub(super) fn reads_in_expr(e: &Expr, p: &str) -> usize {
    let own = usize::from(matches!(&e.kind, ExprKind::Name(n) if n == p));
    own + sub_exprs(e)
        .into_iter()
        .map(|s| reads_in_expr(s, p))
        .sum::<usize>()
}

/// How often `s` (its inner blocks included) reads the name `p`.
pub(super) fn reads_in_stmt(s: &Stmt, p: &str) -> usize {
    stmt_exprs(s)
        .into_iter()
        .map(|e| reads_in_expr(e, p))
        .sum::<usize>()
        + inner_blocks(s)
            .into_iter()
            .flat_map(|b| &b.stmts)
            .map(|s| reads_in_stmt(s, p))
            .sum::<usize>()
}

/// `e` with each name in `map` replaced by its expression (a `def`'s
/// parameters, a hold's `at admission` bindings).
pub(super) fn subst_expr(e: &Expr, map: &Subst) -> Expr {
    let kind = match &e.kind {
        ExprKind::Num(_) => return e.clone(),
        ExprKind::Name(n) => match map.get(n.as_str()) {
            Some(arg) => return (*arg).clone(),
            None => return e.clone(),
        },
        ExprKind::Index(id, i) => {
            let id = match map.get(id.name.as_str()).map(|a| &a.kind) {
                Some(ExprKind::Name(n)) => Ident {
                    name: n.clone(),
                    span: id.span,
                },
                _ => id.clone(),
            };
            ExprKind::Index(id, Box::new(subst_expr(i, map)))
        }
        ExprKind::Call(f, a) => {
            ExprKind::Call(f.clone(), a.iter().map(|x| subst_expr(x, map)).collect())
        }
        ExprKind::Sample(d, a) => {
            ExprKind::Sample(d.clone(), a.iter().map(|x| subst_expr(x, map)).collect())
        }
        ExprKind::Unary(op, a) => ExprKind::Unary(*op, Box::new(subst_expr(a, map))),
        ExprKind::Binary(op, a, b) => ExprKind::Binary(
            *op,
            Box::new(subst_expr(a, map)),
            Box::new(subst_expr(b, map)),
        ),
        ExprKind::Cond(c, a, b) => ExprKind::Cond(
            Box::new(subst_expr(c, map)),
            Box::new(subst_expr(a, map)),
            Box::new(subst_expr(b, map)),
        ),
    };
    Expr { kind, span: e.span }
}

/// A reference whose name is a parameter takes the argument's name (and
/// its index, when the argument is `x[i]` and the reference has none).
fn subst_ref(r: &Ref, map: &Subst) -> Ref {
    let mut out = Ref {
        name: r.name.clone(),
        index: r.index.as_ref().map(|i| subst_expr(i, map)),
        span: r.span,
    };
    match map.get(r.name.name.as_str()).map(|a| &a.kind) {
        Some(ExprKind::Name(n)) => out.name.name = n.clone(),
        Some(ExprKind::Index(id, i)) if out.index.is_none() => {
            out.name.name = id.name.clone();
            out.index = Some((**i).clone());
        }
        _ => {}
    }
    out
}

/// The substitution of a use's arguments for its parameters.
struct Substitution<'m, 'a>(&'m Subst<'a>);

impl Rewrite for Substitution<'_, '_> {
    fn expr(&mut self, e: &Expr) -> Expr {
        subst_expr(e, self.0)
    }

    fn reference(&mut self, r: &Ref) -> Ref {
        subst_ref(r, self.0)
    }

    fn block(&mut self, b: &Block) -> Block {
        Block {
            stmts: b.stmts.iter().map(|s| subst_stmt(s, self.0)).collect(),
            span: b.span,
        }
    }
}

fn subst_stmt(s: &Stmt, map: &Subst) -> Stmt {
    rewrite_stmt(s, &mut Substitution(map))
}

/// What a rewrite of a statement does to each of its parts; the shape of
/// the statement is [`rewrite_stmt`]'s.
trait Rewrite {
    fn expr(&mut self, e: &Expr) -> Expr;
    fn reference(&mut self, r: &Ref) -> Ref;
    fn block(&mut self, b: &Block) -> Block;
}

/// The expansion of the uses in a statement's parts.
struct Expansion<'d> {
    defs: &'d Defs,
    diags: &'d mut Vec<Diagnostic>,
}

impl Rewrite for Expansion<'_> {
    fn expr(&mut self, e: &Expr) -> Expr {
        self.defs.expand_expr(e, self.diags)
    }

    fn reference(&mut self, r: &Ref) -> Ref {
        self.defs.expand_ref(r, self.diags)
    }

    fn block(&mut self, b: &Block) -> Block {
        self.defs.expand_block(b, self.diags)
    }
}

/// A statement of the same kind and span with each part rewritten. The
/// parts are visited in the order they are written (a hold's pools, its
/// lease, then its body), so an expansion reports in source order.
fn rewrite_stmt(s: &Stmt, rw: &mut impl Rewrite) -> Stmt {
    let kind = match &s.kind {
        StmtKind::Set { name, value } => StmtKind::Set {
            name: name.clone(),
            value: rw.expr(value),
        },
        StmtKind::Observe { name, value } => StmtKind::Observe {
            name: name.clone(),
            value: rw.expr(value),
        },
        StmtKind::Turn => StmtKind::Turn,
        StmtKind::End => StmtKind::End,
        StmtKind::Hold {
            pools,
            reuse,
            bindings,
            body,
            cache,
            lease,
        } => {
            let pools = pools
                .iter()
                .map(|h| HoldPool {
                    pool: rw.reference(&h.pool),
                    units: rw.expr(&h.units),
                    reserve: h.reserve.as_ref().map(|r| rw.expr(r)),
                })
                .collect();
            let reuse = reuse.as_ref().map(|r| rw.expr(r));
            let bindings = bindings
                .iter()
                .map(|b| Binding {
                    name: b.name.clone(),
                    value: rw.expr(&b.value),
                })
                .collect();
            let cache = cache.as_ref().map(|c| rw.expr(c));
            let lease = lease.as_ref().map(|(p, t)| (rw.reference(p), rw.expr(t)));
            StmtKind::Hold {
                pools,
                reuse,
                bindings,
                body: rw.block(body),
                cache,
                lease,
            }
        }
        StmtKind::Drop { pool } => StmtKind::Drop {
            pool: rw.reference(pool),
        },
        StmtKind::Request => StmtKind::Request,
        StmtKind::Serving {
            role,
            target,
            work,
            growing,
        } => StmtKind::Serving {
            role: *role,
            target: rewrite_target(target, rw),
            work: rw.expr(work),
            growing: growing.as_ref().map(|g| rw.reference(g)),
        },
        StmtKind::Grow { pool, amount } => StmtKind::Grow {
            pool: rw.reference(pool),
            amount: rw.expr(amount),
        },
        StmtKind::Load { pool, amount } => StmtKind::Load {
            pool: rw.reference(pool),
            amount: rw.expr(amount),
        },
        StmtKind::Release { pool } => StmtKind::Release {
            pool: rw.reference(pool),
        },
        StmtKind::Run {
            stages,
            mode,
            work,
            growing,
        } => StmtKind::Run {
            stages: stages.iter().map(|r| rw.reference(r)).collect(),
            mode: *mode,
            work: rw.expr(work),
            growing: growing.as_ref().map(|g| rw.reference(g)),
        },
        StmtKind::Branch {
            guard,
            with,
            then,
            otherwise,
        } => StmtKind::Branch {
            guard: rw.expr(guard),
            with: *with,
            then: rw.block(then),
            otherwise: otherwise.as_ref().map(|b| rw.block(b)),
        },
        StmtKind::Loop { body } => StmtKind::Loop {
            body: rw.block(body),
        },
        StmtKind::Choose { var, count, keys } => StmtKind::Choose {
            var: var.clone(),
            count: rw.expr(count),
            keys: keys.iter().map(|k| rw.expr(k)).collect(),
        },
        StmtKind::Call { name, args } => StmtKind::Call {
            name: name.clone(),
            args: args.iter().map(|a| rw.expr(a)).collect(),
        },
        StmtKind::Transfer {
            target,
            work,
            from,
            to,
            amount,
        } => StmtKind::Transfer {
            target: rewrite_target(target, rw),
            work: rw.expr(work),
            from: rw.reference(from),
            to: rw.reference(to),
            amount: rw.expr(amount),
        },
    };
    Stmt {
        kind,
        span: s.span,
        site: s.site,
    }
}

fn rewrite_target(target: &TransferTarget, rw: &mut impl Rewrite) -> TransferTarget {
    match target {
        TransferTarget::Role => TransferTarget::Role,
        TransferTarget::Indexed(i) => TransferTarget::Indexed(rw.expr(i)),
        TransferTarget::On(rs) => TransferTarget::On(rs.iter().map(|r| rw.reference(r)).collect()),
    }
}

/// Marks a spliced statement and every statement of its inner blocks as
/// spliced at `site`.
fn set_site(s: &mut Stmt, site: Span) {
    s.site = Some(site);
    match &mut s.kind {
        StmtKind::Hold { body, .. } | StmtKind::Loop { body } => {
            body.stmts.iter_mut().for_each(|t| set_site(t, site))
        }
        StmtKind::Branch {
            then, otherwise, ..
        } => {
            then.stmts.iter_mut().for_each(|t| set_site(t, site));
            if let Some(o) = otherwise {
                o.stmts.iter_mut().for_each(|t| set_site(t, site));
            }
        }
        _ => {}
    }
}

/// The bodies `--def NAME=EXPR` gives, parsed, by name: each must name an
/// expression `def` and parse as one expression. Its spans are the
/// `def`'s name, the only place in the text it can point to.
fn replacements<'a>(
    decls: &[(&'a Ident, &'a Vec<Ident>, &'a DefBody)],
    replaced: &'a [(String, String)],
    diags: &mut Vec<Diagnostic>,
) -> BTreeMap<&'a str, DefBody> {
    let mut out = BTreeMap::new();
    for (name, text) in replaced {
        let Some((ident, _, body)) = decls.iter().find(|(n, _, _)| n.name == *name) else {
            let declared: Vec<&str> = decls
                .iter()
                .filter(|(_, _, b)| matches!(b, DefBody::Expr(_)))
                .map(|(n, _, _)| n.name.as_str())
                .collect();
            let help = if declared.is_empty() {
                "--def replaces the body of a declared `def NAME(...) = expr;`, and the program declares none".to_string()
            } else {
                format!(
                    "--def replaces the body of a declared `def NAME(...) = expr;`; the program declares: {}",
                    declared.join(", ")
                )
            };
            diags.push(
                Diagnostic::new(
                    "def-override",
                    Span::default(),
                    format!("unknown --def `{name}`"),
                )
                .with_label("from an override (`--def`), not from this file")
                .with_help(help),
            );
            continue;
        };
        if matches!(body, DefBody::Block(_)) {
            diags.push(
                Diagnostic::new(
                    "def-override",
                    ident.span,
                    format!("--def {name}: `def {name}` is statements; --def replaces the body of an expression definition"),
                )
                .with_label("a statement definition"),
            );
            continue;
        }
        match crate::syntax::parse_expr(text) {
            Ok(mut e) => {
                respan(&mut e, ident.span);
                out.insert(name.as_str(), DefBody::Expr(e));
            }
            Err(errors) => {
                let first = errors.first().map_or(String::new(), |d| {
                    let (line, col) = crate::syntax::diagnostic::line_col(text, d.span.start);
                    format!(": {line}:{col}: {}", d.message)
                });
                diags.push(
                    Diagnostic::new(
                        "def-override",
                        ident.span,
                        format!("invalid expression in --def `{name} = {text}`{first}"),
                    )
                    .with_label("the definition --def replaces"),
                );
            }
        }
    }
    out
}

/// Gives every node of `e` the span `at`.
fn respan(e: &mut Expr, at: Span) {
    e.span = at;
    match &mut e.kind {
        ExprKind::Num(_) | ExprKind::Name(_) => {}
        ExprKind::Index(id, i) => {
            id.span = at;
            respan(i, at);
        }
        ExprKind::Call(f, args) | ExprKind::Sample(f, args) => {
            f.span = at;
            args.iter_mut().for_each(|a| respan(a, at));
        }
        ExprKind::Unary(_, a) => respan(a, at),
        ExprKind::Binary(_, a, b) => {
            respan(a, at);
            respan(b, at);
        }
        ExprKind::Cond(c, a, b) => {
            respan(c, at);
            respan(a, at);
            respan(b, at);
        }
    }
}
