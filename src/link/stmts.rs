//! Statements: attribute and observation slots, blocks numbered in
//! pre-order, and the sugar that never reaches the IR (`transfer` in all its
//! forms, `branch with`).
//!
//! Architecture invariant: every statement pushed into a block has its
//! source span pushed into the parallel span table, so a validator fault at
//! (block, statement) maps back to the text.

use super::exprs::Moment;
use super::{Linker, names};
use crate::ir;
use crate::syntax::Diagnostic;
use crate::syntax::ast::{self, Ident, Role, Span, StmtKind, TransferTarget};

/// The statement's leading word, for messages.
pub(super) fn word(kind: &StmtKind) -> &'static str {
    match kind {
        StmtKind::Set { .. } => "set",
        StmtKind::Observe { .. } => "observe",
        StmtKind::Turn => "turn",
        StmtKind::End => "end",
        StmtKind::Hold { .. } => "hold",
        StmtKind::Grow { .. } => "grow",
        StmtKind::Load { .. } => "load",
        StmtKind::Release { .. } => "release",
        StmtKind::Run { .. } => "run",
        StmtKind::Branch { .. } => "branch",
        StmtKind::Loop { .. } => "loop",
        StmtKind::Choose { .. } => "choose",
        StmtKind::Call { .. } => "def use",
        StmtKind::Transfer { .. } => "transfer",
        StmtKind::Drop { .. } => "drop",
        StmtKind::Request => "request",
        StmtKind::Serving { role, .. } => role.word(),
    }
}

impl Linker<'_> {
    /// Allocates the slots of the attributes a block assigns and of the
    /// observations it makes, depth first, in the order they are met.
    pub(super) fn collect_slots(&mut self, stmts: &[ast::Stmt]) {
        for s in stmts {
            match &s.kind {
                StmtKind::Set { name, .. } => self.writes(name, "set"),
                StmtKind::Choose { var, .. } => self.writes(var, "choose"),
                StmtKind::Observe { name, .. } => {
                    if let Some(d) = names::retired(&name.name, name.span) {
                        self.err(d);
                    } else if !self.observe_index.contains_key(&name.name) {
                        self.observe_index
                            .insert(name.name.clone(), self.observes.len());
                        self.observes.push(name.name.clone());
                    }
                }
                StmtKind::Hold { bindings, body, .. } => {
                    for b in super::admission::read_by_body(bindings, body) {
                        self.bound.entry(b.name.name.clone()).or_insert(b.name.span);
                        self.assigns(&b.name, "at admission");
                    }
                    self.collect_slots(&body.stmts)
                }
                StmtKind::Loop { body } => self.collect_slots(&body.stmts),
                StmtKind::Branch {
                    then, otherwise, ..
                } => {
                    self.collect_slots(&then.stmts);
                    if let Some(o) = otherwise {
                        self.collect_slots(&o.stmts);
                    }
                }
                _ => {}
            }
        }
    }

    fn writes(&mut self, name: &Ident, what: &str) {
        self.written.entry(name.name.clone()).or_insert(name.span);
        self.assigns(name, what);
    }

    fn assigns(&mut self, name: &Ident, what: &str) {
        let before = self.diags.len();
        names::check_bound(&name.name, what, name.span, &mut self.diags);
        if self.diags.len() == before && !self.attr_slot.contains_key(&name.name) {
            self.attr_slot.insert(name.name.clone(), self.attrs.len());
            self.attrs.push(name.name.clone());
        }
    }

    /// Starts a new block and returns its index.
    pub(super) fn new_block(&mut self) -> usize {
        self.blocks.push(Vec::new());
        self.spans.push(Vec::new());
        self.sites.push(Vec::new());
        self.blocks.len() - 1
    }

    /// Appends a statement to block `b`, with its span and its site (the
    /// use in the program's file of the `def` it was spliced from, or its
    /// span).
    fn push(&mut self, b: usize, stmt: ir::Stmt, span: Span, site: Span) {
        self.sites[b].push(site);
        self.blocks[b].push(stmt);
        self.spans[b].push(span);
    }

    /// Lowers statements into block `b`; inner blocks are numbered as they
    /// are started (pre-order).
    pub(super) fn lower_block(&mut self, stmts: &[ast::Stmt], b: usize) {
        for s in stmts {
            self.lower_stmt(s, b);
        }
    }

    fn sub_block(&mut self, block: &ast::Block) -> usize {
        let id = self.new_block();
        self.lower_block(&block.stmts, id);
        id
    }

    fn session(&mut self, e: &ast::Expr) -> ir::Expr {
        self.lower_expr(e, Moment::SESSION)
    }

    fn pool(&mut self, r: &ast::Ref) -> Option<ir::CRef> {
        self.lower_ref(r, false, Moment::SESSION)
    }

    fn lower_stmt(&mut self, s: &ast::Stmt, b: usize) {
        let outer = self.lowering;
        // Where the statement stands in the session's text: its own span,
        // or the use it was spliced at from a statement `def`.
        self.lowering = Some(s.site.unwrap_or(s.span));
        self.lower_stmt_at(s, b);
        self.lowering = outer;
    }

    fn lower_stmt_at(&mut self, s: &ast::Stmt, b: usize) {
        let span = s.span;
        let site = s.site.unwrap_or(span);
        let stmt = match &s.kind {
            StmtKind::Set { name, value } => {
                let value = self.session(value);
                let Some(slot) = self.attr_slot.get(&name.name).copied() else {
                    return;
                };
                ir::Stmt::Set(slot, value)
            }
            StmtKind::Observe { name, value } => {
                let value = self.session(value);
                let Some(i) = self.observe_index.get(&name.name).copied() else {
                    return;
                };
                ir::Stmt::Observe(i, value)
            }
            StmtKind::Turn => ir::Stmt::Turn,
            StmtKind::End => ir::Stmt::End,
            StmtKind::Hold {
                pools,
                reuse,
                bindings,
                body,
                cache,
                lease,
            } => {
                let header = self.admission(pools, reuse, bindings, body, cache, lease);
                let (pools, reuse, cache, lease) =
                    (&header.pools, &header.reuse, &header.cache, &header.lease);
                let mut ok = true;
                let mut hold_pools = Vec::with_capacity(pools.len());
                for h in pools {
                    let r = self.pool(&h.pool);
                    let units = self.session(&h.units);
                    let reserve = h.reserve.as_ref().map(|e| self.session(e));
                    match r {
                        Some(r) => hold_pools.push(ir::HoldPool(r, units, reserve)),
                        None => ok = false,
                    }
                }
                let reuse = reuse.as_ref().map(|e| self.session(e));
                let body_id = self.new_block();
                for (name, value, span) in &header.sets {
                    let value = self.session(value);
                    if let Some(slot) = self.attr_slot.get(&name.name).copied() {
                        self.push(body_id, ir::Stmt::Set(slot, value), *span, site);
                    }
                }
                let scope = self.in_binding.len();
                self.in_binding
                    .extend(header.sets.iter().map(|(name, _, _)| name.name.clone()));
                self.lower_block(&body.stmts, body_id);
                self.in_binding.truncate(scope);
                let body = body_id;
                let cache = cache.as_ref().map(|e| self.session(e));
                let lease = match lease {
                    None => None,
                    Some((r, t)) => {
                        let r = self.pool(r);
                        let t = self.session(t);
                        ok &= r.is_some();
                        r.map(|r| (r, t))
                    }
                };
                if !ok {
                    return;
                }
                ir::Stmt::Hold {
                    pools: hold_pools,
                    reuse,
                    body,
                    cache,
                    lease,
                }
            }
            StmtKind::Grow { pool, amount } | StmtKind::Load { pool, amount } => {
                let r = self.pool(pool);
                let amount = self.session(amount);
                let Some(r) = r else { return };
                if matches!(s.kind, StmtKind::Grow { .. }) {
                    ir::Stmt::Grow(r, amount)
                } else {
                    ir::Stmt::Load(r, amount)
                }
            }
            StmtKind::Release { pool } => match self.pool(pool) {
                Some(r) => ir::Stmt::Release(r),
                None => return,
            },
            StmtKind::Drop { pool } => match self.pool(pool) {
                Some(r) => ir::Stmt::Drop(r),
                None => return,
            },
            // Spliced with the server's statements; one left here was refused.
            StmtKind::Request => return,
            StmtKind::Run {
                stages,
                mode,
                work,
                growing,
            } => {
                let mode = match mode {
                    None => ir::RunMode::Plain,
                    Some((ast::RunMode::Prefill, _)) => ir::RunMode::Prefill,
                    Some((ast::RunMode::Decode, _)) => ir::RunMode::Decode,
                };
                match self.run(stages, mode, work, growing.as_ref()) {
                    Some(run) => run,
                    None => return,
                }
            }
            StmtKind::Serving {
                role,
                target,
                work,
                growing,
            } => match self.serving(s, *role, target, work, growing.as_ref()) {
                Some(run) => run,
                None => return,
            },
            StmtKind::Branch {
                guard,
                with,
                then,
                otherwise,
            } => {
                let mut g = self.session(guard);
                if *with {
                    g = ir::Expr::Sample(ir::Dist::Bernoulli, vec![g]);
                }
                let then = self.sub_block(then);
                let otherwise = match otherwise {
                    Some(o) => self.sub_block(o),
                    None => self.new_block(),
                };
                ir::Stmt::Branch(g, then, otherwise)
            }
            StmtKind::Loop { body } => ir::Stmt::Loop(self.sub_block(body)),
            StmtKind::Choose { var, count, keys } => {
                let count = self.session(count);
                let key = keys.iter().map(|k| self.session(k)).collect();
                let Some(var) = self.attr_slot.get(&var.name).copied() else {
                    return;
                };
                ir::Stmt::Choose { var, count, key }
            }
            // Spliced by `def` expansion; one left here was already refused.
            StmtKind::Call { .. } => return,
            StmtKind::Transfer {
                target,
                work,
                from,
                to,
                amount,
            } => {
                self.transfer(s, target, work, from, to, amount, b);
                return;
            }
        };
        self.push(b, stmt, span, site);
    }

    /// `run s1, s2, … (w)`: the first stage, the others in `also`.
    fn run(
        &mut self,
        stages: &[ast::Ref],
        mode: ir::RunMode,
        work: &ast::Expr,
        growing: Option<&ast::Ref>,
    ) -> Option<ir::Stmt> {
        let refs: Vec<Option<ir::CRef>> = stages
            .iter()
            .map(|r| self.lower_ref(r, true, Moment::SESSION))
            .collect();
        let work = self.session(work);
        let growing = match growing {
            Some(g) => Some(self.pool(g)?),
            None => None,
        };
        let mut refs: Vec<ir::CRef> = refs.into_iter().collect::<Option<_>>()?;
        if refs.is_empty() {
            return None;
        }
        let stage = refs.remove(0);
        Some(ir::Stmt::Run {
            stage,
            mode,
            work,
            growing,
            also: refs,
        })
    }

    /// `prefill W;` and its kin (spec §8.6): a run on the stage that plays
    /// the role, with the mode a step stage needs.
    fn serving(
        &mut self,
        s: &ast::Stmt,
        role: Role,
        target: &TransferTarget,
        work: &ast::Expr,
        growing: Option<&ast::Ref>,
    ) -> Option<ir::Stmt> {
        let stage = match target {
            TransferTarget::On(refs) => refs.first()?.clone(),
            TransferTarget::Role | TransferTarget::Indexed(_) => {
                let index = match target {
                    TransferTarget::Indexed(i) => Some(i.clone()),
                    _ => None,
                };
                let name = self.role_stage(s, role.word())?;
                ast::Ref {
                    name: Ident { name, span: s.span },
                    index,
                    span: s.span,
                }
            }
        };
        let step = self
            .find(&self.stages, &stage.name.name)
            .is_some_and(|f| matches!(self.ir_stages[f.base].kind, ir::StageKind::Step(_)));
        let mode = match role {
            Role::Prefill if step => ir::RunMode::Prefill,
            Role::Decode if step => ir::RunMode::Decode,
            _ => ir::RunMode::Plain,
        };
        self.run(std::slice::from_ref(&stage), mode, work, growing)
    }

    /// The stage declared above `s` (above its use site, for a statement
    /// spliced from a `def`) that plays `role`: the unique one named for
    /// the role (`link` or `transfer` for `transfer`), failing that, for
    /// `prefill` and `decode`, the unique step stage family.
    fn role_stage(&mut self, s: &ast::Stmt, role: &str) -> Option<String> {
        let site = s.site.unwrap_or(s.span).start;
        let names: &[&str] = match role {
            "transfer" => &["link", "transfer"],
            other => &[other][..],
        };
        let above: Vec<&super::Family> =
            self.stages.iter().filter(|f| f.span.start < site).collect();
        let mut found: Vec<String> = above
            .iter()
            .filter(|f| names.contains(&f.name.as_str()))
            .map(|f| f.name.clone())
            .collect();
        let engines = matches!(role, "prefill" | "decode");
        if found.is_empty() && engines {
            found = above
                .iter()
                .filter(|f| matches!(self.ir_stages[f.base].kind, ir::StageKind::Step(_)))
                .map(|f| f.name.clone())
                .collect();
        }
        match found.as_slice() {
            [one] => Some(one.clone()),
            [] => {
                let help = match role {
                    "transfer" => "declare `stage link : ps(φ);` above this statement, or write `transfer on S (X) from P to Q (n);`".to_string(),
                    "tool" => "name a stage `tool`, or write `tool on STAGE (…)`".to_string(),
                    r => format!("name a stage `{r}`, declare a `step` engine, or write `{r} on STAGE (…)`"),
                };
                self.err(
                    Diagnostic::new(
                        "serving-role",
                        s.span,
                        format!("no stage declared above plays `{role}`"),
                    )
                    .with_help(help),
                );
                None
            }
            several => {
                self.err(
                    Diagnostic::new(
                        "serving-role",
                        s.span,
                        format!("several stages play `{role}` ({})", several.join(", ")),
                    )
                    .with_help(format!("write `{role} on STAGE (…)`")),
                );
                None
            }
        }
    }

    /// `transfer … (X) from P to Q (n);` ≡ `run S… (X); load Q (n); release P;`
    #[allow(clippy::too_many_arguments)]
    fn transfer(
        &mut self,
        s: &ast::Stmt,
        target: &TransferTarget,
        work: &ast::Expr,
        from: &ast::Ref,
        to: &ast::Ref,
        amount: &ast::Expr,
        b: usize,
    ) {
        let stages = match target {
            TransferTarget::On(refs) => refs.clone(),
            TransferTarget::Role | TransferTarget::Indexed(_) => {
                let Some(one) = self.role_stage(s, "transfer") else {
                    return;
                };
                let index = match target {
                    TransferTarget::Indexed(i) => Some(i.clone()),
                    _ => None,
                };
                vec![ast::Ref {
                    name: Ident {
                        name: one,
                        span: s.span,
                    },
                    index,
                    span: s.span,
                }]
            }
        };
        let run = self.run(&stages, ir::RunMode::Plain, work, None);
        let to_ref = self.pool(to);
        let amount = self.session(amount);
        let from_ref = self.pool(from);
        if let (Some(run), Some(to_ref), Some(from_ref)) = (run, to_ref, from_ref) {
            let site = s.site.unwrap_or(s.span);
            self.push(b, run, s.span, site);
            self.push(b, ir::Stmt::Load(to_ref, amount), s.span, site);
            self.push(b, ir::Stmt::Release(from_ref), s.span, site);
        }
    }
}
