//! Top-level items (spec §1 `item`, §3): `let`, `def`, `pool`, `stage`,
//! `share`, `workload`, `session`, `run`. Tier-2 and Tier-3 items and
//! options are refused as not supported yet.

use super::{Fail, PResult, Parser};
use crate::syntax::Diagnostic;
use crate::syntax::ast::{DefBody, Item, Opt, Program, Span, StageKind, WorkloadItem};
use crate::syntax::lexer::TokenKind;

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
            "server" => Err(self.unsupported(start, "the `server` block")),
            "use" => {
                let file = match self.nth(1) {
                    TokenKind::Str(s) => format!(" \"{s}\""),
                    _ => String::new(),
                };
                Err(self.unsupported(start, &format!("`use{file}` (reading a library of `def`s)")))
            }
            _ => Err(self.unexpected_at_top()),
        }
    }

    fn unexpected_at_top(&mut self) -> Fail {
        let d = Diagnostic::new(
            "syntax",
            self.span(),
            format!(
                "unexpected {} at top level: expected `let`, `def`, `pool`, `stage`, `share`, `workload`, `session` or `run`",
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

    fn pool_option(&mut self) -> PResult<Opt> {
        let start = self.span();
        match self.word() {
            Some(word @ ("block" | "evict" | "preempt" | "queue" | "spill")) => {
                let what = format!("the pool option `{word}`");
                Err(self.unsupported(start, &what))
            }
            Some("admit") if self.nth_is_word(1, "via") => {
                Err(self.unsupported(start, "the pool option `admit via`"))
            }
            Some(_) => self.option("pool option"),
            None => Err(self.error_expected("a pool option (`cap N;`)")),
        }
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
            Some("step") => return Err(self.unsupported(at, "the stage kind `step`")),
            _ => {
                return Err(
                    self.error_expected("a stage kind (`delay`, `fifo`, `fifo(c)` or `ps(φ)`)")
                );
            }
        };
        self.expect_semi(&format!("the declaration of stage `{}`", name.name))?;
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
                Ok(Some(item)) => items.push(item),
                Ok(None) => {}
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

    /// One item of the workload block; `None` for a refused one already skipped.
    fn workload_item(&mut self) -> PResult<Option<WorkloadItem>> {
        let start = self.span();
        match self.word() {
            Some("arrive") => {
                self.bump();
                let law = self.name()?;
                let arg = match law.name.as_str() {
                    "none" => None,
                    "poisson" | "renewal" | "closed" | "batch" => {
                        Some(self.paren_expr(&format!("around the argument of `{}`", law.name))?)
                    }
                    // An unknown law is the linker's to name; read what follows.
                    _ if self.at(&TokenKind::LParen) => Some(self.paren_expr("")?),
                    _ => None,
                };
                self.expect_semi("the `arrive` line")?;
                Ok(Some(WorkloadItem::Arrive {
                    law,
                    arg,
                    span: self.since(start),
                }))
            }
            Some("init") => {
                self.bump();
                let block = self.block("after `init`")?;
                Ok(Some(WorkloadItem::Init(block, self.since(start))))
            }
            Some("turn") => {
                self.bump();
                let block = self.block("after `turn`")?;
                Ok(Some(WorkloadItem::Turn(block, self.since(start))))
            }
            Some(word @ ("session" | "hidden" | "trace")) => {
                let what = format!("`{word}` in a workload");
                if word == "session" {
                    // Skip the block as a whole, so its statements are not read as workload items.
                    self.unsupported(start, &what);
                    self.bump();
                    if self.eat(&TokenKind::LBrace) {
                        self.skip_nested(false);
                        self.eat(&TokenKind::RBrace);
                    }
                    return Ok(None);
                }
                Err(self.unsupported(start, &what))
            }
            _ => {
                let d = Diagnostic::new(
                    "syntax",
                    start,
                    format!(
                        "unexpected {} in workload: expected `arrive`, `init` or `turn`",
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
