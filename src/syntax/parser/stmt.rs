//! Blocks and statements (spec §1 `stmt`, §4, §8): the kernel's, the
//! serving engine's clauses (`reuse`, `at admission`, `cache`, run modes,
//! `growing`, `drop`) and the serving vocabulary.

use super::{Fail, PResult, Parser};
use crate::syntax::Diagnostic;
use crate::syntax::ast::{
    Binding, Block, Expr, HoldPool, Ref, Role, RunMode, Stmt, StmtKind, TransferTarget,
};
use crate::syntax::lexer::TokenKind;

impl Parser<'_> {
    /// `{ stmts }`. A missing `}` is reported and the block kept.
    pub(super) fn block(&mut self, context: &str) -> PResult<Block> {
        let open = self.expect(TokenKind::LBrace, context)?;
        if !self.enter(false) {
            self.eat(&TokenKind::RBrace);
            return Ok(Block {
                stmts: Vec::new(),
                span: self.since(open),
            });
        }
        let mut stmts = Vec::new();
        while !self.at(&TokenKind::RBrace) && !self.at_eof() {
            let before = self.pos;
            match self.stmt() {
                Ok(stmt) => stmts.push(stmt),
                Err(Fail) => self.sync_in_block(),
            }
            if self.pos == before && !self.at(&TokenKind::RBrace) {
                self.bump();
            }
        }
        self.leave();
        // At `}` or the end of the text: a missing `}` is reported, the block kept.
        let _ = self.expect_close(TokenKind::RBrace, open);
        Ok(Block {
            stmts,
            span: self.since(open),
        })
    }

    /// One statement. A dispatcher only: each form is its own function, so
    /// nested blocks recurse through small stack frames.
    fn stmt(&mut self) -> PResult<Stmt> {
        let start = self.span();
        // One call site for every form keeps this frame small in debug builds.
        let form: fn(&mut Self) -> PResult<StmtKind> = match self.word() {
            Some("set") => |p| p.assignment(true),
            Some("observe") => |p| p.assignment(false),
            Some("turn") => |p| p.bare(StmtKind::Turn, "`turn`"),
            Some("end") => |p| p.bare(StmtKind::End, "`end`"),
            Some("hold") => Self::hold,
            Some("grow") => |p| p.pool_amount(true),
            Some("load") => |p| p.pool_amount(false),
            Some("release") => Self::release,
            Some("run") => Self::run,
            Some("branch") => Self::branch,
            Some("loop") => Self::looped,
            Some("choose") => Self::choose,
            Some("transfer") => Self::transfer,
            Some("request") => |p| p.bare(StmtKind::Request, "`request`"),
            Some("drop") => |p| {
                p.bump();
                let pool = p.reference("a pool after `drop`")?;
                p.expect_semi("the `drop` statement")?;
                Ok(StmtKind::Drop { pool })
            },
            Some("prefill") => |p| p.serving(Role::Prefill),
            Some("decode") => |p| p.serving(Role::Decode),
            Some("tool") => |p| p.serving(Role::Tool),
            Some(_) if self.nth(1) == &TokenKind::LParen => Self::call,
            _ => return Err(self.not_a_statement()),
        };
        let kind = form(self)?;
        Ok(Stmt {
            kind,
            span: self.since(start),
            site: None,
        })
    }

    /// `turn;` or `end;`
    fn bare(&mut self, kind: StmtKind, what: &str) -> PResult<StmtKind> {
        self.bump();
        self.expect_semi(what)?;
        Ok(kind)
    }

    /// `grow p (d);` or `load p (n);`
    fn pool_amount(&mut self, grow: bool) -> PResult<StmtKind> {
        let word = if grow { "grow" } else { "load" };
        self.bump();
        let pool = self.reference("a pool")?;
        let amount = self.paren_expr(&format!("around the amount of `{word}`"))?;
        self.expect_semi(&format!("the `{word}` statement"))?;
        Ok(if grow {
            StmtKind::Grow { pool, amount }
        } else {
            StmtKind::Load { pool, amount }
        })
    }

    /// `release p;`
    fn release(&mut self) -> PResult<StmtKind> {
        self.bump();
        let pool = self.reference("a pool")?;
        self.expect_semi("the `release` statement")?;
        Ok(StmtKind::Release { pool })
    }

    /// `loop { … }`
    fn looped(&mut self) -> PResult<StmtKind> {
        self.bump();
        Ok(StmtKind::Loop {
            body: self.block("after `loop`")?,
        })
    }

    /// `name(args);`
    fn call(&mut self) -> PResult<StmtKind> {
        let name = self.name()?;
        let args = self.args()?;
        if self.at(&TokenKind::LBrace) {
            // `while (c) { … }`, `if (c) { … }`: not a use of a definition.
            let d = Diagnostic::new(
                "syntax",
                name.span,
                format!("expected a statement, found `{}`", name.name),
            )
            .with_label("expected a statement")
            .with_help(
                "serq repeats with `loop { … }` and tests with `branch (g) { … } else { … }`",
            );
            self.report(d);
            return Err(Fail);
        }
        self.expect_semi(&format!("the use of `{}`", name.name))?;
        Ok(StmtKind::Call { name, args })
    }

    /// `prefill W;`, `decode[j] W;`, `tool on S (W);`, each `[growing P]`.
    fn serving(&mut self, role: Role) -> PResult<StmtKind> {
        self.bump();
        let target = if let Some(index) = self.index()? {
            TransferTarget::Indexed(index)
        } else if self.at_word("on") && matches!(self.nth(1), TokenKind::Ident(_)) {
            self.bump();
            TransferTarget::On(vec![self.reference("a stage after `on`")?])
        } else {
            TransferTarget::Role
        };
        let work = self.expr()?;
        let growing = self.growing()?;
        self.expect_semi(&format!("the `{}` statement", role.word()))?;
        Ok(StmtKind::Serving {
            role,
            target,
            work,
            growing,
        })
    }

    /// An optional `growing P`.
    fn growing(&mut self) -> PResult<Option<Ref>> {
        if !self.eat_word("growing") {
            return Ok(None);
        }
        Ok(Some(self.reference("a pool after `growing`")?))
    }

    #[cold]
    #[inline(never)]
    fn not_a_statement(&mut self) -> Fail {
        let Some(word) = self.word().map(str::to_string) else {
            return self.error_expected("a statement");
        };
        let mut d = Diagnostic::new(
            "syntax",
            self.span(),
            format!("expected a statement, found `{word}`"),
        )
        .with_label("expected a statement");
        if self.nth(1) == &TokenKind::Assign {
            d = d.with_help(format!("assign an attribute with `set {word} = …;`"));
        } else if word == "else" {
            d = d.with_help("`else` follows the block of a `branch`");
        }
        self.report(d);
        Fail
    }

    /// `set x = e;` or `observe o = e;`
    fn assignment(&mut self, set: bool) -> PResult<StmtKind> {
        let word = if set { "set" } else { "observe" };
        self.bump();
        let name = self.name()?;
        self.expect(TokenKind::Assign, &format!("after `{word} {}`", name.name))?;
        let value = self.expr()?;
        self.expect_semi(&format!("the `{word}` statement"))?;
        Ok(if word == "set" {
            StmtKind::Set { name, value }
        } else {
            StmtKind::Observe { name, value }
        })
    }

    /// A pool or stage reference `name [ "[" expr "]" ]`.
    pub(super) fn reference(&mut self, what: &str) -> PResult<Ref> {
        if !matches!(self.peek(), TokenKind::Ident(_)) {
            return Err(self.error_expected(what));
        }
        let name = self.name()?;
        let index = self.index()?;
        Ok(Ref {
            span: self.since(name.span),
            name,
            index,
        })
    }

    /// `hold P (u) [reserve (r)], … [reuse (ρ)] [at admission (x = e, …)]
    /// { body } [cache (ℓ)] [lease P (t)] [;]`
    fn hold(&mut self) -> PResult<StmtKind> {
        self.bump();
        let pools = self.hold_pools()?;
        let reuse = if self.eat_word("reuse") {
            Some(self.paren_expr("after `reuse`")?)
        } else {
            None
        };
        let bindings = self.at_admission()?;
        let body = self.block("before the body of the hold")?;
        let cache = if self.eat_word("cache") {
            Some(self.paren_expr("after `cache`")?)
        } else {
            None
        };
        let lease = self.hold_tail()?;
        self.eat(&TokenKind::Semi);
        Ok(StmtKind::Hold {
            pools,
            reuse,
            bindings,
            body,
            cache,
            lease,
        })
    }

    /// `[at admission (x = e, …)]`
    fn at_admission(&mut self) -> PResult<Vec<Binding>> {
        if !(self.at_word("at") && self.nth_is_word(1, "admission")) {
            return Ok(Vec::new());
        }
        self.bump();
        self.bump();
        let open = self.expect(TokenKind::LParen, "after `at admission`")?;
        let mut bindings = Vec::new();
        loop {
            let name = self.name()?;
            self.expect(
                TokenKind::Assign,
                &format!("after `{}` in `at admission`", name.name),
            )?;
            let value = self.expr()?;
            bindings.push(Binding { name, value });
            if !self.eat(&TokenKind::Comma) {
                break;
            }
        }
        self.expect_close(TokenKind::RParen, open)?;
        Ok(bindings)
    }

    /// `P (u) [reserve (r)], …`
    fn hold_pools(&mut self) -> PResult<Vec<HoldPool>> {
        let mut pools = Vec::new();
        loop {
            let pool = self.reference("a pool after `hold`")?;
            let units =
                self.paren_expr(&format!("around the units held in `{}`", pool.name.name))?;
            let reserve = if self.eat_word("reserve") {
                Some(self.paren_expr("after `reserve`")?)
            } else {
                None
            };
            pools.push(HoldPool {
                pool,
                units,
                reserve,
            });
            if !self.eat(&TokenKind::Comma) {
                return Ok(pools);
            }
        }
    }

    /// `[lease P (t)]` after a hold's body (and its `cache`).
    fn hold_tail(&mut self) -> PResult<Option<(Ref, Expr)>> {
        if !self.eat_word("lease") {
            return Ok(None);
        }
        let pool = self.reference("the leased pool after `lease`")?;
        let length = self.paren_expr("around the lease's length")?;
        Ok(Some((pool, length)))
    }

    /// `run s (w);` or `run s1, s2, … (w);`
    fn run(&mut self) -> PResult<StmtKind> {
        self.bump();
        let mut stages = vec![self.reference("a stage after `run`")?];
        while self.eat(&TokenKind::Comma) {
            stages.push(self.reference("a stage after `,`")?);
        }
        let mode = match self.word() {
            Some("prefill") => Some((RunMode::Prefill, self.bump().span)),
            Some("decode") => Some((RunMode::Decode, self.bump().span)),
            _ => None,
        };
        let work = self.paren_expr("around the run's work")?;
        let growing = self.growing()?;
        self.expect_semi("the `run` statement")?;
        Ok(StmtKind::Run {
            stages,
            mode,
            work,
            growing,
        })
    }

    /// `branch [with] (g) {…} [else {…}]`
    fn branch(&mut self) -> PResult<StmtKind> {
        self.bump();
        let with = self.eat_word("with");
        let guard = self.paren_expr(if with {
            "after `branch with`"
        } else {
            "after `branch`"
        })?;
        let then = self.block("before the branch's block")?;
        let otherwise = if self.at_word("else") {
            self.bump();
            if !self.at(&TokenKind::LBrace) {
                let d = Diagnostic::new(
                    "syntax",
                    self.span(),
                    format!("expected `{{` after `else`, found {}", self.found()),
                )
                .with_label("expected `{`")
                .with_help("`else` needs a block: write `else { branch … }`");
                self.report(d);
                return Err(Fail);
            }
            Some(self.block("after `else`")?)
        } else {
            None
        };
        Ok(StmtKind::Branch {
            guard,
            with,
            then,
            otherwise,
        })
    }

    /// `choose j in n by (k1, …);`
    fn choose(&mut self) -> PResult<StmtKind> {
        self.bump();
        let var = self.name()?;
        if !self.eat_word("in") {
            return Err(self.error_expected(&format!("`in` after `choose {}`", var.name)));
        }
        let count = self.expr()?;
        if !self.eat_word("by") {
            return Err(self.error_expected("`by (keys)` after the count of `choose`"));
        }
        let keys = self.keys("`choose`")?;
        self.expect_semi("the `choose` statement")?;
        Ok(StmtKind::Choose { var, count, keys })
    }

    /// `transfer [ "[" j "]" | on S1, S2 ] X from P to Q (n);`
    fn transfer(&mut self) -> PResult<StmtKind> {
        let start = self.bump().span;
        let target = if let Some(index) = self.index()? {
            TransferTarget::Indexed(index)
        } else if self.eat_word("on") {
            let mut stages = vec![self.reference("a stage after `on`")?];
            while self.eat(&TokenKind::Comma) {
                stages.push(self.reference("a stage after `,`")?);
            }
            TransferTarget::On(stages)
        } else {
            TransferTarget::Role
        };
        let work: Expr = self.expr()?;
        if !self.eat_word("from") {
            let d = Diagnostic::new(
                "syntax",
                self.span(),
                format!(
                    "`transfer` without `from P to Q (n)`: expected `from`, found {}",
                    self.found()
                ),
            )
            .with_label("expected `from`")
            .with_secondary(start, "this transfer")
            .with_help("write `transfer (X) from P to Q (n);`");
            self.report(d);
            return Err(Fail);
        }
        let from = self.reference("the pool the transfer leaves")?;
        if !self.eat_word("to") {
            return Err(self.error_expected("`to Q (n)` in the transfer"));
        }
        let to = self.reference("the pool the transfer reaches")?;
        let amount = self.paren_expr("around the units the transfer loads")?;
        self.expect_semi("the `transfer` statement")?;
        Ok(StmtKind::Transfer {
            target,
            work,
            from,
            to,
            amount,
        })
    }
}
