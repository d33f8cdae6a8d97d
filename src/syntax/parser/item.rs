//! Top-level items (spec §1 `item`, §3, §8, §9): `let`, `def`, `pool`
//! and its options, `stage` (a step stage's options included), `share`,
//! `workload`, `session`, `server`, `run`, `use`.

use super::{Fail, PResult, Parser};
use crate::syntax::Diagnostic;
use crate::syntax::ast::{
    ArriveClause, DefBody, Expr, Item, Opt, PoolOption, Program, ServeOrder, Span, StageKind,
    StepOption, WorkloadItem,
};
use crate::syntax::lexer::{ARRIVE_CLAUSES, TokenKind};

impl Parser<'_> {
    /// The whole program: items until the end of the text.
    pub(super) fn program(&mut self) -> Program {
        let mut items = Vec::new();
        while !self.at_eof() {
            let before = self.pos;
            match self.item() {
                Ok(item) => items.push(item),
                Err(Fail) => self.sync_top(),
            }
            if self.pos == before {
                self.bump();
            }
        }
        Program { items }
    }

    fn item(&mut self) -> PResult<Item> {
        let start = self.span();
        let Some(word) = self.word().map(str::to_string) else {
            return Err(self.unexpected_at_top());
        };
        match word.as_str() {
            "let" => {
                self.bump();
                let name = self.name()?;
                self.expect(TokenKind::Assign, &format!("after `let {}`", name.name))?;
                let value = self.expr()?;
                self.expect_semi("the `let` declaration")?;
                Ok(Item::Let {
                    name,
                    value,
                    span: self.since(start),
                })
            }
            "def" => self.def(start),
            "pool" => self.pool(start),
            "stage" => self.stage(start),
            "share" => {
                self.bump();
                let policy = self.name()?;
                self.expect_semi("the `share` declaration")?;
                Ok(Item::Share {
                    policy,
                    span: self.since(start),
                })
            }
            "workload" => self.workload(start),
            "session" => {
                self.bump();
                let body = self.block("after `session`")?;
                Ok(Item::Session {
                    body,
                    span: self.since(start),
                })
            }
            "run" => self.run_block(start),
            "server" => {
                self.bump();
                let body = self.block("after `server`")?;
                Ok(Item::Server {
                    body,
                    span: self.since(start),
                })
            }
            "use" => {
                self.bump();
                if self.at(&TokenKind::Lt) {
                    return self.use_shipped(start);
                }
                let path = self.string("a file name in quotes after `use` (`use \"lib.sq\";`)")?;
                self.expect_semi("the `use` line")?;
                Ok(Item::Use {
                    path,
                    span: self.since(start),
                })
            }
            _ => Err(self.unexpected_at_top()),
        }
    }

    /// `use <name>;`: a library serq ships (an extension: no program can
    /// mean it today, since `use` otherwise takes a quoted path).
    fn use_shipped(&mut self, start: Span) -> PResult<Item> {
        let open = self.bump().span;
        let TokenKind::Ident(name) = self.peek().clone() else {
            return Err(self.error_expected("a library's name after `<` (`use <roofline>;`)"));
        };
        self.bump();
        self.expect_close(TokenKind::Gt, open)?;
        self.expect_semi("the `use` line")?;
        Ok(Item::UseShipped {
            name,
            span: self.since(start),
        })
    }

    fn unexpected_at_top(&mut self) -> Fail {
        let d = Diagnostic::new(
            "syntax",
            self.span(),
            format!(
                "unexpected {} at top level: expected `let`, `def`, `pool`, `stage`, `share`, `workload`, `session`, `server`, `run` or `use`",
                self.found()
            ),
        )
        .with_label("not a declaration");
        let d = match self.word() {
            Some(
                "set" | "observe" | "hold" | "transfer" | "choose" | "branch" | "loop" | "end"
                | "turn",
            ) => d.with_help("statements go inside `session { … }`"),
            _ => d,
        };
        self.report(d);
        Fail
    }

    /// `def f(params) = expr;` or `def f(params) { stmts }`
    fn def(&mut self, start: Span) -> PResult<Item> {
        self.bump();
        let name = self.name()?;
        if !self.at(&TokenKind::LParen) {
            let d = Diagnostic::new(
                "syntax",
                self.span(),
                format!(
                    "expected `(` after `def {}`, found {}",
                    name.name,
                    self.found()
                ),
            )
            .with_label("expected `(`")
            .with_help(format!(
                "a definition lists its parameters, even none: `def {}() = …;`",
                name.name
            ));
            self.report(d);
            return Err(Fail);
        }
        let open = self.bump().span;
        let mut params = Vec::new();
        if !self.at(&TokenKind::RParen) {
            loop {
                params.push(self.name()?);
                if !self.eat(&TokenKind::Comma) {
                    break;
                }
            }
        }
        self.expect_close(TokenKind::RParen, open)?;
        let body = if self.eat(&TokenKind::Assign) {
            let e = self.expr()?;
            self.expect_semi("the definition")?;
            DefBody::Expr(e)
        } else if self.at(&TokenKind::LBrace) {
            DefBody::Block(self.block("")?)
        } else {
            return Err(self.error_expected(&format!("`=` or `{{` after `def {}(…)`", name.name)));
        };
        Ok(Item::Def {
            name,
            params,
            body,
            span: self.since(start),
        })
    }

    /// An optional array size `[ expr ]` after a pool's or stage's name.
    fn size(&mut self) -> PResult<Option<crate::syntax::ast::Expr>> {
        self.index()
    }

    /// `pool NAME [size] { options }`
    fn pool(&mut self, start: Span) -> PResult<Item> {
        self.bump();
        let name = self.name()?;
        let size = self.size()?;
        let open = self.expect(
            TokenKind::LBrace,
            &format!("before the options of pool `{}`", name.name),
        )?;
        let mut options = Vec::new();
        while !self.at(&TokenKind::RBrace) && !self.at_eof() {
            let before = self.pos;
            match self.pool_option() {
                Ok(opt) => options.push(opt),
                Err(Fail) => self.sync_in_block(),
            }
            if self.pos == before && !self.at(&TokenKind::RBrace) {
                self.bump();
            }
        }
        let _ = self.expect_close(TokenKind::RBrace, open);
        Ok(Item::Pool {
            name,
            size,
            options,
            span: self.since(start),
        })
    }

    fn pool_option(&mut self) -> PResult<PoolOption> {
        let start = self.span();
        match self.word() {
            Some("evict") => {
                self.bump();
                let by = self.lru_or_keys("lru", "`evict`")?;
                self.expect_semi("the pool option `evict`")?;
                Ok(PoolOption::Evict {
                    by,
                    span: self.since(start),
                })
            }
            Some("queue") => {
                self.bump();
                let by = self.lru_or_keys("fifo", "`queue`")?;
                self.expect_semi("the pool option `queue`")?;
                Ok(PoolOption::Queue {
                    by,
                    span: self.since(start),
                })
            }
            Some("preempt") => {
                self.bump();
                let lifo = match self.word() {
                    Some("none") => false,
                    Some("lifo") => true,
                    _ => return Err(self.error_expected("`none` or `lifo` after `preempt`")),
                };
                self.bump();
                self.expect_semi("the pool option `preempt`")?;
                Ok(PoolOption::Preempt {
                    lifo,
                    span: self.since(start),
                })
            }
            Some("admit") if self.nth_is_word(1, "via") => {
                self.bump();
                self.bump();
                let stage = self.name()?;
                self.expect_semi("the pool option `admit via`")?;
                Ok(PoolOption::AdmitVia {
                    stage,
                    span: self.since(start),
                })
            }
            Some("spill") => {
                self.bump();
                let to = self.name()?;
                if !self.eat_word("via") {
                    return Err(self.error_expected("`via L` after `spill T`"));
                }
                let via = self.name()?;
                let work = self.paren_expr("around the work of a spill")?;
                if !self.eat_word("when") {
                    return Err(self.error_expected("`when (c)` after the spill's work"));
                }
                let when = self.paren_expr("around the condition of a spill")?;
                self.expect_semi("the pool option `spill`")?;
                Ok(PoolOption::Spill {
                    to,
                    via,
                    work,
                    when,
                    span: self.since(start),
                })
            }
            Some(_) => Ok(PoolOption::Value(self.option("pool option")?)),
            None => Err(self.error_expected("a pool option (`cap N;`)")),
        }
    }

    /// `WORD;` (the default, `None`) or `by (k, …)` (at least one key).
    fn lru_or_keys(&mut self, default: &str, what: &str) -> PResult<Option<Vec<Expr>>> {
        if self.eat_word(default) {
            return Ok(None);
        }
        if !self.eat_word("by") {
            return Err(self.error_expected(&format!("`{default}` or `by (keys)` after {what}")));
        }
        Ok(Some(self.keys(what)?))
    }

    /// `( k, … )` with at least one key.
    pub(super) fn keys(&mut self, what: &str) -> PResult<Vec<Expr>> {
        if !self.at(&TokenKind::LParen) {
            return Err(self.error_expected(&format!("`(` before the keys of {what}")));
        }
        if self.nth(1) == &TokenKind::RParen {
            self.bump();
            return Err(self.error_expected("at least one key"));
        }
        self.args()
    }

    /// A string literal.
    fn string(&mut self, what: &str) -> PResult<String> {
        match self.peek() {
            TokenKind::Str(s) => {
                let s = s.clone();
                self.bump();
                Ok(s)
            }
            _ => Err(self.error_expected(what)),
        }
    }

    /// `step { options }`, at `step`.
    fn step(&mut self, at: Span) -> PResult<StageKind> {
        self.bump();
        let open = self.expect(TokenKind::LBrace, "before the options of a step stage")?;
        let mut options = Vec::new();
        while !self.at(&TokenKind::RBrace) && !self.at_eof() {
            let before = self.pos;
            match self.step_option() {
                Ok(opt) => options.push(opt),
                Err(Fail) => self.sync_in_block(),
            }
            if self.pos == before && !self.at(&TokenKind::RBrace) {
                self.bump();
            }
        }
        self.expect_close(TokenKind::RBrace, open)?;
        Ok(StageKind::Step(options, self.since(at)))
    }

    fn step_option(&mut self) -> PResult<StepOption> {
        let start = self.span();
        match self.word() {
            Some("memory") => {
                self.bump();
                let pool = self.name()?;
                self.expect_semi("the step option `memory`")?;
                Ok(StepOption::Memory {
                    pool,
                    span: self.since(start),
                })
            }
            Some("serve") => {
                self.bump();
                let order = self.serve_order()?;
                self.expect_semi("the step option `serve`")?;
                Ok(StepOption::Serve {
                    order,
                    span: self.since(start),
                })
            }
            Some(w @ ("decode" | "exclusive"))
                if self.nth_is_word(1, if w == "decode" { "first" } else { "prefill" }) =>
            {
                let old = if w == "decode" {
                    "decode first"
                } else {
                    "exclusive prefill"
                };
                self.bump();
                let end = self.bump().span;
                let d = Diagnostic::new(
                    "renamed",
                    Span::join(start, end),
                    format!("`{old};` is now `serve {old};`: a step stage serves its residents in one way"),
                )
                .with_label("renamed")
                .with_help(format!("write `serve {old};`"));
                self.report(d);
                Err(Fail)
            }
            Some(_) => Ok(StepOption::Value(self.option("step option")?)),
            None => Err(self.error_expected("a step option (`cost C;`)")),
        }
    }

    /// What follows `serve`.
    fn serve_order(&mut self) -> PResult<ServeOrder> {
        let order = match self.word() {
            Some("admission") => ServeOrder::Admission,
            Some("decode") if self.nth_is_word(1, "first") => {
                self.bump();
                ServeOrder::DecodeFirst
            }
            Some("exclusive") if self.nth_is_word(1, "prefill") => {
                self.bump();
                ServeOrder::ExclusivePrefill
            }
            Some("by") => {
                self.bump();
                return Ok(ServeOrder::By(self.keys("`serve by`")?));
            }
            _ => {
                let d = Diagnostic::new(
                    "serve-order",
                    self.span(),
                    format!(
                        "`serve` takes `admission`, `decode first`, `exclusive prefill` or `by (keys)`, found {}",
                        self.found()
                    ),
                )
                .with_label("not a serve order")
                .with_help("`serve by (k…)` orders the residents by any keys");
                self.report(d);
                return Err(Fail);
            }
        };
        self.bump();
        Ok(order)
    }

    /// `WORD expr ;`: a pool or run option, the word kept for the linker.
    fn option(&mut self, what: &str) -> PResult<Opt> {
        let start = self.span();
        let name = self.name()?;
        let value = self.expr()?;
        self.expect_semi(&format!("the {what} `{}`", name.name))?;
        Ok(Opt {
            name,
            value,
            span: self.since(start),
        })
    }

    /// `stage NAME [size] : kind;`
    fn stage(&mut self, start: Span) -> PResult<Item> {
        self.bump();
        let name = self.name()?;
        let size = self.size()?;
        self.expect(
            TokenKind::Colon,
            &format!("before the kind of stage `{}`", name.name),
        )?;
        let at = self.span();
        let kind = match self.word() {
            Some("delay") => {
                self.bump();
                StageKind::Delay(at)
            }
            Some("fifo") => {
                self.bump();
                let servers = if self.at(&TokenKind::LParen) {
                    Some(self.paren_expr("around the servers of `fifo`")?)
                } else {
                    None
                };
                StageKind::Fifo(servers, self.since(at))
            }
            Some("ps") => {
                self.bump();
                let capacity = self.paren_expr("around the capacity of `ps`")?;
                StageKind::Ps(capacity, self.since(at))
            }
            Some("step") => self.step(at)?,
            _ => {
                return Err(self.error_expected(
                    "a stage kind (`delay`, `fifo`, `fifo(c)`, `ps(φ)` or `step { … }`)",
                ));
            }
        };
        // A step stage's block may end the declaration (`stage e : step { … }`).
        if !matches!(kind, StageKind::Step(..)) || self.at(&TokenKind::Semi) {
            self.expect_semi(&format!("the declaration of stage `{}`", name.name))?;
        }
        Ok(Item::Stage {
            name,
            size,
            kind,
            span: self.since(start),
        })
    }

    /// `workload { arrive …; init {…} turn {…} }`
    fn workload(&mut self, start: Span) -> PResult<Item> {
        self.bump();
        let open = self.expect(TokenKind::LBrace, "after `workload`")?;
        let mut items = Vec::new();
        while !self.at(&TokenKind::RBrace) && !self.at_eof() {
            let before = self.pos;
            match self.workload_item() {
                Ok(item) => items.push(item),
                Err(Fail) => self.sync_in_block(),
            }
            if self.pos == before && !self.at(&TokenKind::RBrace) {
                self.bump();
            }
        }
        let _ = self.expect_close(TokenKind::RBrace, open);
        Ok(Item::Workload {
            items,
            span: self.since(start),
        })
    }

    /// `word (e, …)` after an arrival law, at the word.
    fn arrive_clause(&mut self) -> PResult<ArriveClause> {
        let start = self.span();
        let word = self.name()?;
        let context = format!("after `{}`", word.name);
        let open = self.expect(TokenKind::LParen, &context)?;
        let mut args = vec![self.expr()?];
        while self.eat(&TokenKind::Comma) {
            args.push(self.expr()?);
        }
        self.expect_close(TokenKind::RParen, open)?;
        Ok(ArriveClause {
            word,
            args,
            span: self.since(start),
        })
    }

    /// One item of the workload block.
    fn workload_item(&mut self) -> PResult<WorkloadItem> {
        let start = self.span();
        match self.word() {
            Some("arrive") => {
                self.bump();
                let law = self.name()?;
                let path = if law.name == "trace" {
                    Some(self.string(
                        "a file name in quotes after `arrive trace` (`arrive trace \"t.csv\";`)",
                    )?)
                } else {
                    None
                };
                let arg = match law.name.as_str() {
                    "none" | "trace" => None,
                    "poisson" | "renewal" | "closed" | "batch" => {
                        Some(self.paren_expr(&format!("around the argument of `{}`", law.name))?)
                    }
                    // An unknown law is the linker's to name; read what follows.
                    _ if self.at(&TokenKind::LParen) => Some(self.paren_expr("")?),
                    _ => None,
                };
                let mut clauses = Vec::new();
                while let Some(word) = self.word()
                    && ARRIVE_CLAUSES.contains(&word)
                    && matches!(self.nth(1), TokenKind::LParen)
                {
                    clauses.push(self.arrive_clause()?);
                }
                self.expect_semi("the `arrive` line")?;
                Ok(WorkloadItem::Arrive {
                    law,
                    arg,
                    path,
                    clauses,
                    span: self.since(start),
                })
            }
            Some("init") => {
                self.bump();
                let block = self.block("after `init`")?;
                Ok(WorkloadItem::Init(block, self.since(start)))
            }
            Some("turn") => {
                self.bump();
                let block = self.block("after `turn`")?;
                Ok(WorkloadItem::Turn(block, self.since(start)))
            }
            Some("session") => {
                self.bump();
                let block = self.block("after `session`")?;
                Ok(WorkloadItem::Session(block, self.since(start)))
            }
            Some("hidden") => {
                self.bump();
                let mut names = vec![self.name()?];
                while self.eat(&TokenKind::Comma) {
                    names.push(self.name()?);
                }
                self.expect_semi("the `hidden` line")?;
                Ok(WorkloadItem::Hidden(names, self.since(start)))
            }
            Some("trace") => {
                self.bump();
                let path =
                    self.string("a file name in quotes after `trace` (`trace \"t.csv\";`)")?;
                let ordered = self.eat_word("ordered");
                self.expect_semi("the `trace` line")?;
                Ok(WorkloadItem::Trace {
                    path,
                    ordered,
                    span: self.since(start),
                })
            }
            _ => {
                let d = Diagnostic::new(
                    "syntax",
                    start,
                    format!(
                        "unexpected {} in workload: expected `arrive`, `init`, `turn`, `session`, `hidden` or `trace`",
                        self.found()
                    ),
                )
                .with_label("not a workload item");
                self.report(d);
                Err(Fail)
            }
        }
    }

    /// `run { horizon H; warmup W; seed S; arrivals N; }`; every option word
    /// is kept as written (the linker refuses unknown ones).
    fn run_block(&mut self, start: Span) -> PResult<Item> {
        self.bump();
        if !self.at(&TokenKind::LBrace) {
            let d = Diagnostic::new("syntax", self.span(), format!("expected `{{` after `run` at top level, found {}", self.found()))
                .with_label("expected `{`")
                .with_help("a `run` statement goes inside `session { … }`; at top level write `run { horizon T; }`");
            self.report(d);
            return Err(Fail);
        }
        let open = self.bump().span;
        let mut options = Vec::new();
        while !self.at(&TokenKind::RBrace) && !self.at_eof() {
            let before = self.pos;
            match self.option("run option") {
                Ok(opt) => options.push(opt),
                Err(Fail) => self.sync_in_block(),
            }
            if self.pos == before && !self.at(&TokenKind::RBrace) {
                self.bump();
            }
        }
        let _ = self.expect_close(TokenKind::RBrace, open);
        Ok(Item::Run {
            options,
            span: self.since(start),
        })
    }
}
