//! The program every session runs (spec §8.8): the top-level `session`,
//! or the workload's `session` with the `server`'s statements spliced at
//! each `request;`; and the attributes `hidden` names (§8.5).
//!
//! Architecture invariant: splicing happens on the expanded AST, so a
//! `request;` inside a statement `def` is spliced where the `def` is used,
//! and the IR never holds a `request`.

use super::defs::inner_blocks;
use super::{Linker, Parts};
use crate::syntax::Diagnostic;
use crate::syntax::ast::{Block, Ident, Span, Stmt, StmtKind};

/// Every statement of a list, its inner blocks' included, depth first.
fn each_stmt<'s>(stmts: &'s [Stmt], out: &mut Vec<&'s Stmt>) {
    for s in stmts {
        out.push(s);
        for b in inner_blocks(s) {
            each_stmt(&b.stmts, out);
        }
    }
}

/// `stmts` with every `request;` (at any depth) replaced by `server`.
fn splice(stmts: &[Stmt], server: &[Stmt]) -> Vec<Stmt> {
    let mut out = Vec::with_capacity(stmts.len());
    for s in stmts {
        if matches!(s.kind, StmtKind::Request) {
            out.extend(server.iter().cloned());
            continue;
        }
        let mut s = s.clone();
        let inner = |b: &mut Block| b.stmts = splice(&b.stmts, server);
        match &mut s.kind {
            StmtKind::Hold { body, .. } | StmtKind::Loop { body } => inner(body),
            StmtKind::Branch {
                then, otherwise, ..
            } => {
                inner(then);
                if let Some(o) = otherwise {
                    inner(o);
                }
            }
            _ => {}
        }
        out.push(s);
    }
    out
}

impl Linker<'_> {
    /// The session program, `def`s expanded and the server spliced in,
    /// after the rules of §8.8.
    pub(super) fn session_program(&mut self, parts: &Parts) -> Vec<Stmt> {
        let top = parts
            .session
            .as_ref()
            .map(|(s, span)| (self.expand(s), *span));
        let client = parts
            .client
            .as_ref()
            .map(|(s, span)| (self.expand(s), *span));
        let server = parts
            .server
            .as_ref()
            .map(|(s, span)| (self.expand(s), *span));
        if let (Some((_, top)), Some((_, client))) = (&top, &client) {
            self.err(
                Diagnostic::new(
                    "server",
                    *top,
                    "a program has either a top-level `session` or a `session` inside `workload` with a `server`, not both",
                )
                .with_secondary(*client, "the workload's session")
                .with_help("move the top-level session's statements into the workload's session"),
            );
        }
        if let Some((stmts, _)) = &top {
            self.refuse_requests(stmts, "the top-level `session`");
        }
        if let Some((stmts, _)) = &server {
            let mut all = Vec::new();
            each_stmt(stmts, &mut all);
            for s in all {
                if matches!(s.kind, StmtKind::Turn | StmtKind::End | StmtKind::Request) {
                    let word = super::stmts::word(&s.kind);
                    self.err(
                        Diagnostic::new(
                            "server",
                            s.span,
                            format!("a `server` may not contain `{word}`: it runs inside the client's session, which turns, ends and requests"),
                        )
                        .with_help("move it into the workload's `session`"),
                    );
                }
            }
        }
        match (client, server) {
            (Some((stmts, span)), Some((server, server_span))) => {
                let mut all = Vec::new();
                each_stmt(&stmts, &mut all);
                if !all.iter().any(|s| matches!(s.kind, StmtKind::Request)) {
                    self.err(
                        Diagnostic::new(
                            "server",
                            server_span,
                            "a `server` block needs a `session` inside `workload` that says `request;`, and the workload's session never does",
                        )
                        .with_secondary(span, "the workload's session")
                        .with_help("write `request;` where the client calls the server"),
                    );
                }
                splice(&stmts, &server)
            }
            (Some((stmts, span)), None) => {
                self.err(
                    Diagnostic::new(
                        "server",
                        span,
                        "a `session` inside `workload` is written against a `server` block; without one, write `session` at top level",
                    )
                    .with_label("this session requests a server"),
                );
                stmts
            }
            (None, Some((_, span))) => {
                self.err(
                    Diagnostic::new(
                        "server",
                        span,
                        "a `server` block needs a `session` inside `workload` that says `request;`, and this program has none",
                    )
                    .with_help("write `workload { session { …; request; … } }`"),
                );
                top.map(|(s, _)| s).unwrap_or_default()
            }
            (None, None) => top.map(|(s, _)| s).unwrap_or_default(),
        }
    }

    /// Refuses every `request;` in `stmts` (which are not the workload's session).
    fn refuse_requests(&mut self, stmts: &[Stmt], place: &str) {
        let mut all = Vec::new();
        each_stmt(stmts, &mut all);
        for s in all {
            if matches!(s.kind, StmtKind::Request) {
                self.err(
                    Diagnostic::new(
                        "server",
                        s.span,
                        format!(
                            "`request` is only allowed in the workload's `session`, not in {place}"
                        ),
                    )
                    .with_help("write `workload { session { …; request; … } } server { … }`"),
                );
            }
        }
    }

    /// The slots of the attributes `hidden` names (spec §8.5): each must be
    /// an attribute something sets or chooses (or a built-in other than
    /// `cached` and `computed`, which the scheduler sets), named once.
    pub(super) fn hidden(&mut self, names: &[&Ident]) -> Vec<usize> {
        let mut slots = Vec::new();
        let mut seen: Vec<(&str, Span)> = Vec::new();
        for n in names {
            let name = n.name.as_str();
            if let Some((_, first)) = seen.iter().find(|(w, _)| *w == name) {
                self.err(
                    Diagnostic::new("twice", n.span, format!("hidden `{name}` is hidden twice"))
                        .with_secondary(*first, "first hidden here"),
                );
                continue;
            }
            seen.push((name, n.span));
            if name == "cached" || name == "computed" {
                self.err(
                    Diagnostic::new(
                        "hidden",
                        n.span,
                        format!("hidden `{name}`: the scheduler sets it, so it cannot be hidden from the scheduler"),
                    )
                    .with_help("hide an attribute the session sets"),
                );
                continue;
            }
            match self.attr_slot.get(name) {
                Some(&slot) => slots.push(slot),
                None => self.err(
                    Diagnostic::new(
                        "hidden",
                        n.span,
                        format!("hidden `{name}`: nothing sets or chooses it, so there is nothing to hide"),
                    )
                    .with_help(format!("set it (`set {name} = …;`) or remove it from `hidden`")),
                ),
            }
        }
        slots
    }
}
