//! What a hold's header reads at admission (spec §8.4): the `at
//! admission (x = e, …)` bindings, checked and substituted into the header,
//! and the lint on a `set` of live state that a later header reads.
//!
//! Architecture invariant: works on the expanded AST (no `def` use is
//! left), before it is lowered; the IR never holds a binding, only its
//! substituted value (and a `set` at the top of the body for a binding the
//! body reads).

use std::collections::BTreeMap;

use super::Linker;
use super::defs::{
    Subst, expr_draws, inner_blocks, reads_in_expr, stmt_exprs, sub_exprs, subst_expr,
};
use crate::ir;
use crate::syntax::Diagnostic;
use crate::syntax::ast::{
    Binding, Block, Expr, ExprKind, HoldPool, Ident, Ref, Span, Stmt, StmtKind,
};

/// A hold's header with its bindings substituted.
pub(super) struct Header {
    /// The pools, units and reserves.
    pub pools: Vec<HoldPool>,
    /// `reuse (ρ)`.
    pub reuse: Option<Expr>,
    /// `cache (ℓ)`.
    pub cache: Option<Expr>,
    /// `lease P (t)`.
    pub lease: Option<(Ref, Expr)>,
    /// The bindings the body reads, `set` at the top of the body: name,
    /// substituted value, and the binding's place.
    pub sets: Vec<(Ident, Expr, Span)>,
}

/// The bindings that the body reads (those become attributes).
pub(super) fn read_by_body<'b>(bindings: &'b [Binding], body: &Block) -> Vec<&'b Binding> {
    bindings
        .iter()
        .filter(|b| body.stmts.iter().any(|s| reads_binding(s, &b.name.name)))
        .collect()
}

/// Whether `s`, in the body of a hold that binds `name`, reads that
/// binding, as 0.1.0 counts it: a hold nested in the body reads it through
/// its header with its own bindings substituted (units, reserves, `reuse`,
/// `cache`, the lease's length) and through the substituted values of the
/// bindings its body reads, and through its body unless it binds `name`
/// again (its body then reads its own). So an unused binding of a nested
/// hold reads nothing, and `hold a (1) at admission (c = cachedin(a)) {
/// hold b (1 + c) at admission (c = 2) {…} }` leaves the outer `c` unread,
/// while `hold b (c) at admission (c = 2 * c)` reads it.
fn reads_binding(s: &Stmt, name: &str) -> bool {
    let StmtKind::Hold {
        pools,
        reuse,
        bindings,
        body,
        cache,
        lease,
    } = &s.kind
    else {
        return stmt_exprs(s)
            .into_iter()
            .any(|e| reads_in_expr(e, name) > 0)
            || inner_blocks(s)
                .into_iter()
                .flat_map(|b| &b.stmts)
                .any(|s| reads_binding(s, name));
    };
    let values = binding_values(bindings);
    let map = substitution(bindings, &values);
    let reads = |e: &Expr| reads_in_expr(&subst_expr(e, &map), name) > 0;
    let index = |r: &Ref| r.index.as_ref().is_some_and(|i| reads_in_expr(i, name) > 0);
    pools
        .iter()
        .any(|h| index(&h.pool) || reads(&h.units) || h.reserve.as_ref().is_some_and(reads))
        || reuse.as_ref().is_some_and(reads)
        || cache.as_ref().is_some_and(reads)
        || lease.as_ref().is_some_and(|(r, t)| index(r) || reads(t))
        || read_by_body(bindings, body)
            .iter()
            .any(|b| reads_in_expr(map[b.name.name.as_str()], name) > 0)
        || (!bindings.iter().any(|b| b.name.name == name)
            && body.stmts.iter().any(|s| reads_binding(s, name)))
}

/// Each binding's name for its value (`values` as [`binding_values`]
/// gives them).
fn substitution<'a>(bindings: &'a [Binding], values: &'a [Expr]) -> Subst<'a> {
    bindings
        .iter()
        .zip(values)
        .map(|(b, v)| (b.name.name.as_str(), v))
        .collect()
}

/// The bindings' values with the earlier bindings substituted (a later one
/// read, which is refused, stands as written).
fn binding_values(bindings: &[Binding]) -> Vec<Expr> {
    let mut values: Vec<Expr> = Vec::with_capacity(bindings.len());
    for (k, b) in bindings.iter().enumerate() {
        let earlier = substitution(&bindings[..k], &values);
        // A later binding read (refused) stands as written, so its name is
        // not refused again as unknown.
        let later: Subst = bindings[k + 1..]
            .iter()
            .map(|b| (b.name.name.as_str(), &b.value))
            .collect();
        values.push(subst_expr(&subst_expr(&b.value, &earlier), &later));
    }
    values
}

/// Functions whose value depends on the running system, which a binding
/// the body reads may not call.
const PURE: [&str; 9] = [
    "min", "max", "abs", "floor", "ceil", "sqrt", "exp", "ln", "pow",
];

/// The first read of live state in `e` (an observable, `now`, `cached`),
/// as a message shows it.
fn live_read(e: &Expr) -> Option<String> {
    match &e.kind {
        ExprKind::Call(f, _) if !PURE.contains(&f.name.as_str()) => {
            return Some(format!("`{}(…)`", f.name));
        }
        ExprKind::Name(n) if n == "now" || n == "cached" => return Some(format!("`{n}`")),
        _ => {}
    }
    sub_exprs(e).into_iter().find_map(live_read)
}

impl Linker<'_> {
    /// Checks a hold's `at admission` bindings and substitutes them into
    /// the header: later bindings see earlier ones, none may draw, read a
    /// later binding, or be bound twice; one the body reads is `set` at
    /// the top of the body and may read only attributes and constants.
    pub(super) fn admission(
        &mut self,
        pools: &[HoldPool],
        reuse: &Option<Expr>,
        bindings: &[Binding],
        body: &Block,
        cache: &Option<Expr>,
        lease: &Option<(Ref, Expr)>,
    ) -> Header {
        for (k, b) in bindings.iter().enumerate() {
            let name = &b.name.name;
            if let Some(first) = bindings[..k].iter().find(|o| o.name.name == *name) {
                self.err(
                    Diagnostic::new(
                        "twice",
                        b.name.span,
                        format!("`{name}` is bound twice in `at admission`"),
                    )
                    .with_secondary(first.name.span, "first bound here"),
                );
            }
            if expr_draws(&b.value) {
                self.err(
                    Diagnostic::new(
                        "may-not-draw",
                        b.value.span,
                        format!("`{name}` draws a sample: an `at admission` binding is substituted, so a name used twice would draw twice"),
                    )
                    .with_help("sample into an attribute first (`set x = ~…;` before the hold)"),
                );
            }
            if let Some(later) = bindings[k + 1..]
                .iter()
                .find(|l| l.name.name != *name && reads_in_expr(&b.value, &l.name.name) > 0)
            {
                self.err(
                    Diagnostic::new(
                        "binding-order",
                        b.value.span,
                        format!(
                            "`{name}` reads `{}`, which is bound after it: a binding sees the ones before it",
                            later.name.name
                        ),
                    )
                    .with_secondary(later.name.span, "bound here")
                    .with_help("bind it first"),
                );
            }
        }
        let values = binding_values(bindings);
        let map = substitution(bindings, &values);
        let sub = |e: &Expr| subst_expr(e, &map);
        let mut sets = Vec::new();
        for b in read_by_body(bindings, body) {
            if reads_in_expr(&b.value, &b.name.name) > 0 {
                self.err(
                    Diagnostic::new(
                        "binding-self",
                        b.value.span,
                        format!("the binding `{}` reads itself", b.name.name),
                    )
                    .with_help("the body reads the binding, which is set from its value: name the value it reads otherwise"),
                );
            }
            let value = map[b.name.name.as_str()].clone();
            if let Some(live) = live_read(&value) {
                self.err(
                    Diagnostic::new(
                        "binding-live",
                        b.name.span,
                        format!(
                            "the body reads `{}`, and `{}` reads {live}: the body sees a binding that reads only attributes and constants",
                            b.name.name, b.name.name
                        ),
                    )
                    .with_help("in the body read `cached`, the units the admission consumed"),
                );
            }
            sets.push((b.name.clone(), value, b.name.span));
        }
        Header {
            pools: pools
                .iter()
                .map(|h| HoldPool {
                    pool: h.pool.clone(),
                    units: sub(&h.units),
                    reserve: h.reserve.as_ref().map(sub),
                })
                .collect(),
            reuse: reuse.as_ref().map(sub),
            cache: cache.as_ref().map(sub),
            lease: lease.as_ref().map(|(r, t)| (r.clone(), sub(t))),
            sets,
        }
    }

    /// A binding the body reads becomes an attribute of that body only, so
    /// its name may not be an attribute of the session already (a
    /// built-in, or one a `set` or `choose` assigns anywhere): the body
    /// would not say which it means (0.1.0's rule). Such names leave
    /// `bound`, which then holds the names that only bindings make.
    pub(super) fn check_binding_names(&mut self) {
        let bound = std::mem::take(&mut self.bound);
        for (name, span) in bound {
            let (whose, set) = if ir::BUILTIN_ATTRS.contains(&name.as_str()) {
                ("a built-in attribute (the scheduler sets it)", None)
            } else if let Some(&set) = self.written.get(&name) {
                ("a session attribute the program sets", Some(set))
            } else {
                self.bound.insert(name, span);
                continue;
            };
            let mut d = Diagnostic::new(
                "binding-attribute",
                span,
                format!(
                    "the body reads `{name}`, bound `at admission`, which is also {whose}: the body would not say which it means"
                ),
            )
            .with_help("rename the binding");
            if let Some(set) = set {
                d = d.with_secondary(set, "the attribute is set here");
            }
            self.err(d);
        }
    }

    /// A name that only `at admission` bindings make an attribute is read
    /// only in the bodies of holds that bind it (their headers see the
    /// substituted value): anywhere else (before or after the hold,
    /// another hold's body, a queue, eviction or serve key) 0.1.0 refuses
    /// it. Reported once per name.
    pub(super) fn check_binding_scope(&mut self, name: &str, span: Span) {
        if self.in_binding.iter().any(|b| b == name) {
            return;
        }
        if let Some(bound) = self.bound.remove(name) {
            self.err(
                Diagnostic::new(
                    "binding-scope",
                    span,
                    format!("`{name}` is read outside the body of the hold that binds it"),
                )
                .with_secondary(bound, "bound `at admission` here")
                .with_help(format!(
                    "a binding names a value for its hold's header and body only; to read it elsewhere, copy it into an attribute in the body (`set x = {name};`)"
                )),
            );
        }
    }

    /// The lint of spec §8.4: a `set x = e` where `e` reads the running
    /// system (an observable: `used`, `free`, `cachedin`, `budget_left`,
    /// `queue`, …; not `now`), with `x` then read in the header of a hold
    /// (its units, reserves, `reuse` or `cache`, bindings substituted),
    /// which is read at admission, not when the `set` ran. As in 0.1.0, a
    /// `set` is seen by the statements after it and by the blocks of a
    /// `branch` or `loop` among them, not by a hold's body, and a `set` in
    /// an inner block does not change what the outer one sees.
    pub(super) fn set_then_header(&mut self, stmts: &[Stmt]) {
        self.lint_block(stmts, BTreeMap::new());
    }

    fn lint_block(&mut self, stmts: &[Stmt], mut live: BTreeMap<String, (String, Span)>) {
        for s in stmts {
            match &s.kind {
                StmtKind::Set { name, value } => match observable(value) {
                    Some(call) => {
                        live.insert(name.name.clone(), (call, s.span));
                    }
                    None => {
                        live.remove(&name.name);
                    }
                },
                StmtKind::Choose { var, .. } => {
                    live.remove(&var.name);
                }
                StmtKind::Hold {
                    pools,
                    reuse,
                    bindings,
                    cache,
                    body,
                    ..
                } => {
                    let mut values: Vec<Expr> = Vec::new();
                    for (k, b) in bindings.iter().enumerate() {
                        let earlier: Subst = bindings[..k]
                            .iter()
                            .zip(&values)
                            .map(|(b, v)| (b.name.name.as_str(), v))
                            .collect();
                        values.push(subst_expr(&b.value, &earlier));
                    }
                    let map: Subst = bindings
                        .iter()
                        .zip(&values)
                        .map(|(b, v)| (b.name.name.as_str(), v))
                        .collect();
                    let header: Vec<Expr> = pools
                        .iter()
                        .flat_map(|h| std::iter::once(&h.units).chain(&h.reserve))
                        .chain(reuse)
                        .chain(cache)
                        .map(|e| subst_expr(e, &map))
                        .collect();
                    let found = live
                        .iter()
                        .find(|(x, _)| header.iter().any(|e| reads_in_expr(e, x) > 0));
                    if let (Some((x, (call, set))), Some(first)) = (found, pools.first()) {
                        let pool = &first.pool.name.name;
                        let d = Diagnostic::new(
                            "set-then-header",
                            s.span,
                            format!(
                                "`{x}` reads {call} when the session reaches the `set`, and is used in the header of a hold on `{pool}`, which is read when the session is admitted"
                            ),
                        )
                        .with_secondary(*set, "set here")
                        .with_help(format!(
                            "write `at admission ({x} = …)` if the admission value is what you meant"
                        ));
                        self.err(d);
                    }
                    self.lint_block(&body.stmts, BTreeMap::new());
                    continue;
                }
                _ => {}
            }
            for b in inner_blocks(s) {
                self.lint_block(&b.stmts, live.clone());
            }
        }
    }
}

/// The first observable `e` calls, as a message shows it (`used(p)`).
fn observable(e: &Expr) -> Option<String> {
    if let ExprKind::Call(f, args) = &e.kind
        && !PURE.contains(&f.name.as_str())
        && f.name != "blocksize"
    {
        let arg = match args.first().map(|a| &a.kind) {
            Some(ExprKind::Name(n)) => n.clone(),
            Some(ExprKind::Index(id, _)) => format!("{}[…]", id.name),
            _ => "…".to_string(),
        };
        return Some(format!("{}({arg})", f.name));
    }
    sub_exprs(e).into_iter().find_map(observable)
}
