//! Lints: warnings on a program that links, in rustc's unused-variable
//! style. They never refuse a program, change its IR, its exit status or
//! its reports; a name with a leading underscore (`_k`) silences both.
//!
//! - `unused-attribute`: an attribute a `set` or `choose` assigns that no
//!   expression of the program reads (`set k = …` where `K` was meant).
//! - `unset-attribute`: an attribute read where no `set` of it can have
//!   run yet on any path from the session's start, so the read always sees
//!   its initial 0 (`init` runs first, then the session block, each
//!   `turn;` running the `turn` block; a loop's body sees what its later
//!   passes set, a hold's body what it set before a preemption ran it
//!   again). Built-ins (`serial`, `turn_no`, a trace's `new`, `out`,
//!   `think`, …) and `at admission` bindings count as set. A read that
//!   sees 0 only on its first pass (`branch (first == 0) { …; set first =
//!   1; }` in a loop) is the idiom of a first time, not a fault: no warning.
//!
//! Architecture invariant: reads the linked IR and the linker's name
//! tables only; each lint reports a name once, at its first place.

use std::collections::{BTreeMap, BTreeSet};

use super::names;
use crate::ir::{BUILTIN_ATTRS, Expr, Program, Stmt};
use crate::syntax::ast::Span;
use crate::syntax::{Diagnostic, Sources};

/// What the lints read besides the IR.
pub(super) struct Names<'a> {
    /// Attribute names by slot.
    pub attrs: &'a [String],
    /// Where each attribute a `set` or `choose` assigns is first assigned.
    pub written: &'a BTreeMap<String, Span>,
    /// The `at admission` bindings (set by their hold, not by a `set`).
    pub bound: &'a BTreeMap<String, Span>,
    /// The span of every statement, parallel to the program's blocks.
    pub spans: &'a [Vec<Span>],
    /// The program's texts (to put a caret under a name in its statement).
    pub sources: &'a Sources,
}

/// Every lint's warnings on a linked program.
pub(super) fn lints(program: &Program, n: &Names) -> Vec<Diagnostic> {
    let mut out = unused(program, n);
    out.extend(unset(program, n));
    out
}

/// Whether the lints pass over this attribute: a built-in, a binding, or
/// silenced by a leading underscore.
fn exempt(n: &Names, slot: usize) -> bool {
    let name = &n.attrs[slot];
    slot < BUILTIN_ATTRS.len() || name.starts_with('_') || n.bound.contains_key(name)
}

/// The slots an expression reads.
fn reads(e: &Expr, out: &mut BTreeSet<usize>) {
    e.visit(&mut |x| {
        if let Expr::Attr(slot) = x {
            out.insert(*slot);
        }
    });
}

/// `unused-attribute`: set, never read.
fn unused(program: &Program, n: &Names) -> Vec<Diagnostic> {
    let mut read = BTreeSet::new();
    for e in program.exprs() {
        reads(e, &mut read);
    }
    let read_names: Vec<&str> = read.iter().map(|&s| n.attrs[s].as_str()).collect();
    let mut out = Vec::new();
    for (slot, name) in n.attrs.iter().enumerate() {
        if exempt(n, slot) || read.contains(&slot) {
            continue;
        }
        let Some(&span) = n.written.get(name) else {
            continue;
        };
        let d = Diagnostic::warning(
            "unused-attribute",
            span,
            format!("the attribute `{name}` is set but never read"),
        )
        .with_label("set here; nothing reads it");
        let silence = format!("if it is meant to be unread, name it `_{name}`");
        out.push(
            match names::closest(name, read_names.iter().copied().filter(|c| c != name)) {
                Some(c) => d.with_help(format!("did you mean `{c}`? ({silence})")),
                None => d.with_help(silence),
            },
        );
    }
    out
}

/// The walk of `unset-attribute`: which slots may have been set so far.
struct Walk<'a, 'n> {
    program: &'a Program,
    names: &'a Names<'n>,
    /// The slots the `turn` block may set.
    turn_sets: BTreeSet<usize>,
    /// The first read of each slot that nothing can have set: (block, statement).
    found: BTreeMap<usize, (usize, usize)>,
}

impl Walk<'_, '_> {
    /// Every slot a `set` or `choose` in block `b` (or a block inside it) assigns.
    fn sets_in(&self, b: usize, out: &mut BTreeSet<usize>) {
        for s in &self.program.blocks[b] {
            match s {
                Stmt::Set(slot, _) | Stmt::Choose { var: slot, .. } => {
                    out.insert(*slot);
                }
                Stmt::Turn => out.extend(self.turn_sets.iter().copied()),
                Stmt::Hold { body, .. } | Stmt::Loop(body) => self.sets_in(*body, out),
                Stmt::Branch(_, then, otherwise) => {
                    self.sets_in(*then, out);
                    self.sets_in(*otherwise, out);
                }
                _ => {}
            }
        }
    }

    /// Walks block `b` from `set` (the slots that may be set on entry);
    /// returns those that may be set at its end.
    fn block(&mut self, b: usize, mut set: BTreeSet<usize>) -> BTreeSet<usize> {
        for (i, s) in self.program.blocks[b].iter().enumerate() {
            let mut read = BTreeSet::new();
            match s {
                // `choose j … by (keys)`: the keys read `j` as each candidate.
                Stmt::Choose { var, count, key } => {
                    reads(count, &mut read);
                    set.insert(*var);
                    key.iter().for_each(|k| reads(k, &mut read));
                }
                _ => s.exprs().into_iter().for_each(|e| reads(e, &mut read)),
            }
            for slot in read {
                if !set.contains(&slot) && !exempt(self.names, slot) {
                    self.found.entry(slot).or_insert((b, i));
                }
            }
            match s {
                Stmt::Set(slot, _) => {
                    set.insert(*slot);
                }
                Stmt::Turn => set.extend(self.turn_sets.iter().copied()),
                // A preempted session runs its hold's body again on
                // readmission (vllm.sq's `first_token`): like a loop's.
                Stmt::Hold { body, .. } => {
                    self.sets_in(*body, &mut set);
                    set = self.block(*body, set);
                }
                Stmt::Branch(_, then, otherwise) => {
                    let a = self.block(*then, set.clone());
                    let b = self.block(*otherwise, set.clone());
                    set = a.union(&b).copied().collect();
                }
                // A later pass of the body sees what any pass set.
                Stmt::Loop(body) => {
                    self.sets_in(*body, &mut set);
                    set = self.block(*body, set);
                }
                _ => {}
            }
        }
        set
    }
}

/// `unset-attribute`: read where nothing can have set it yet.
fn unset(program: &Program, n: &Names) -> Vec<Diagnostic> {
    let mut walk = Walk {
        program,
        names: n,
        turn_sets: BTreeSet::new(),
        found: BTreeMap::new(),
    };
    let mut turn_sets = BTreeSet::new();
    walk.sets_in(program.turn, &mut turn_sets);
    walk.turn_sets = turn_sets;
    let builtins: BTreeSet<usize> = (0..BUILTIN_ATTRS.len()).collect();
    let after_init = walk.block(program.init, builtins);
    // The `turn` block runs at every `turn;`: it may see whatever init,
    // the session or an earlier turn set.
    let mut anywhere = after_init.clone();
    walk.sets_in(program.session, &mut anywhere);
    anywhere.extend(walk.turn_sets.iter().copied());
    walk.block(program.turn, anywhere);
    walk.block(program.session, after_init);
    let written: Vec<&str> = n.written.keys().map(String::as_str).collect();
    let mut out = Vec::new();
    for (slot, (b, i)) in walk.found {
        let name = &n.attrs[slot];
        let Some(&statement) = n.spans.get(b).and_then(|s| s.get(i)) else {
            continue;
        };
        let span = name_in(n.sources, statement, name);
        let mut d = Diagnostic::warning(
            "unset-attribute",
            span,
            format!(
                "the attribute `{name}` is read before anything can have set it: it is always 0 here"
            ),
        )
        .with_label("read here, before any `set` of it has run");
        if let Some(&first) = n.written.get(name) {
            d = d.with_secondary(first, "set only here, later");
        }
        let silence = format!("if the initial 0 is meant, name it `_{name}`");
        d = match names::closest(name, written.iter().copied().filter(|c| c != name)) {
            Some(c) => d.with_help(format!("did you mean `{c}`? ({silence})")),
            None => d.with_help(format!("set it before, in `init`, or {silence}")),
        };
        out.push(d);
    }
    out
}

/// The span of the first whole-word `name` inside a statement's span (the
/// statement's when it cannot be found there).
fn name_in(sources: &Sources, statement: Span, name: &str) -> Span {
    let Some(text) = sources.text_at(statement) else {
        return statement;
    };
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    let mut from = 0;
    while let Some(at) = text[from..].find(name) {
        let start = from + at;
        let end = start + name.len();
        let before = text[..start].chars().next_back();
        let after = text[end..].chars().next();
        if !before.is_some_and(is_word) && !after.is_some_and(is_word) {
            return Span {
                start: statement.start + start as u32,
                end: statement.start + end as u32,
            };
        }
        from = end;
    }
    statement
}
