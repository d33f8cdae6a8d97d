//! The options of pools (spec §3.3, §8.3) and of step stages (§8.1):
//! constants folded, keys lowered at their moments, and the families that
//! `admit via`, `memory` and `spill` name turned into member indices.
//!
//! Architecture invariant: an option given twice, an unknown option and a
//! family-size mismatch are refused here, where the text is; every range
//! rule on the values (a block above 0, a budget above 0, `admit via` a
//! step stage, no draws in queue and serve keys) is `Program::validate`'s.

use super::exprs::Moment;
use super::{Family, Linker};
use crate::ir;
use crate::syntax::Diagnostic;
use crate::syntax::ast::{Ident, PoolOption, ServeOrder, Span, StepOption};

/// The options a pool takes, as messages list them.
const POOL_OPTIONS: [&str; 7] = [
    "cap",
    "block",
    "evict",
    "preempt",
    "queue",
    "admit via",
    "spill",
];

/// The options a step stage takes.
const STEP_OPTIONS: [&str; 5] = ["budget", "cost", "chunk", "serve", "memory"];

/// Options already given, to refuse a second one.
#[derive(Default)]
struct Given(Vec<(String, Span)>);

impl Linker<'_> {
    /// Refuses an option given twice (0.1.0 keeps the last, §10 Q3);
    /// true when this is the first.
    fn first_time(&mut self, given: &mut Given, owner: &str, word: &str, span: Span) -> bool {
        if let Some((_, first)) = given.0.iter().find(|(w, _)| w == word) {
            let first = *first;
            self.twice(&format!("{owner}: `{word}`"), span, first);
            return false;
        }
        given.0.push((word.to_string(), span));
        true
    }

    /// Folds one pool family's options into its members.
    pub(super) fn pool_options(&mut self, fam: &Family, options: &[PoolOption]) {
        let owner = format!("pool `{}`", fam.name);
        let mut given = Given::default();
        for o in options {
            let word = o.word().to_string();
            if !POOL_OPTIONS.contains(&word.as_str()) {
                let at = match o {
                    PoolOption::Value(v) => v.name.span,
                    other => other.span(),
                };
                let d = Diagnostic::new(
                    "unknown-option",
                    at,
                    format!("unknown pool option `{word}`"),
                )
                .with_help(
                    "a pool takes `cap`, `block`, `evict`, `preempt`, `queue`, `admit via` and `spill`",
                );
                self.err(super::names::did_you_mean(d, &word, POOL_OPTIONS));
                continue;
            }
            if !self.first_time(&mut given, &owner, &word, o.span()) {
                continue;
            }
            let members = fam.base..fam.base + fam.count;
            match o {
                PoolOption::Value(v) => {
                    let Some(x) = self.constant(&v.value, &format!("{owner}: {word}")) else {
                        continue;
                    };
                    for p in &mut self.ir_pools[members] {
                        if word == "cap" {
                            p.cap = x;
                        } else {
                            p.block = Some(x);
                        }
                    }
                }
                PoolOption::Evict { by, .. } => {
                    let evict = match by {
                        None => ir::Evict::Lru,
                        Some(keys) => ir::Evict::By(self.keys(keys, ir::Moment::Evict)),
                    };
                    for p in &mut self.ir_pools[members] {
                        p.evict = evict.clone();
                    }
                }
                PoolOption::Preempt { lifo, .. } => {
                    let preempt = if *lifo {
                        ir::Preempt::Lifo
                    } else {
                        ir::Preempt::None
                    };
                    for p in &mut self.ir_pools[members] {
                        p.preempt = preempt;
                    }
                }
                PoolOption::Queue { by, .. } => {
                    let queue = by.as_ref().map(|k| self.keys(k, ir::Moment::Queue));
                    for p in &mut self.ir_pools[members] {
                        p.queue = queue.clone();
                    }
                }
                PoolOption::AdmitVia { stage, span } => {
                    let Some(engine) = self.family_named(stage, true) else {
                        continue;
                    };
                    let Some(via) = self.pair(fam, &engine, "admit via", *span) else {
                        continue;
                    };
                    for (p, e) in self.ir_pools[members].iter_mut().zip(via) {
                        p.admit_via = Some(e);
                    }
                }
                PoolOption::Spill {
                    to,
                    via,
                    work,
                    when,
                    ..
                } => {
                    let target = self.family_named(to, false);
                    let link = self.family_named(via, true);
                    let work = self.lower_expr(work, Moment::At(ir::Moment::Evict));
                    let when = self.lower_expr(when, Moment::At(ir::Moment::Evict));
                    let (Some(target), Some(link)) = (target, link) else {
                        continue;
                    };
                    // 0.1.0 spills every member to the first member of each
                    // family named (what its IR holds); serq keeps that.
                    let spill = ir::Spill {
                        to: target.base,
                        via: link.base,
                        work,
                        when,
                    };
                    for p in &mut self.ir_pools[members] {
                        p.spill = Some(spill.clone());
                    }
                }
            }
        }
    }

    /// A step stage family's kind, one per member (their `memory` differs
    /// when a pool family is paired with it member for member).
    pub(super) fn step_stage(
        &mut self,
        fam: &Family,
        options: &[StepOption],
        span: Span,
    ) -> Vec<ir::StageKind> {
        let owner = format!("stage `{}`", fam.name);
        let mut given = Given::default();
        let mut step = ir::Step {
            budget: ir::Expr::Num(f64::INFINITY),
            cost: ir::Expr::Num(0.0),
            chunk: ir::Expr::Num(0.0),
            serve: ir::Serve::By(Vec::new()),
            memory: None,
        };
        let mut has_cost = false;
        let mut memory: Option<Vec<usize>> = None;
        for o in options {
            let word = o.word().to_string();
            if !STEP_OPTIONS.contains(&word.as_str()) {
                let at = match o {
                    StepOption::Value(v) => v.name.span,
                    other => other.span(),
                };
                let d = Diagnostic::new(
                    "unknown-option",
                    at,
                    format!("unknown step option `{word}`"),
                )
                .with_help("a step stage takes `budget`, `cost`, `chunk`, `serve` and `memory`");
                self.err(super::names::did_you_mean(d, &word, STEP_OPTIONS));
                continue;
            }
            if !self.first_time(&mut given, &owner, &word, o.span()) {
                continue;
            }
            match o {
                StepOption::Value(v) => {
                    let moment = if word == "cost" {
                        ir::Moment::Step
                    } else {
                        ir::Moment::Budget
                    };
                    let e = self.lower_expr(&v.value, Moment::At(moment));
                    // A constant is folded, so the validator checks a number.
                    // NaN stays an expression: the IR holds no NaN, the
                    // validator refuses a NaN budget, a NaN cost is a run-time error.
                    let e = match e.constant_value() {
                        Some(x) if !x.is_nan() => ir::Expr::Num(x),
                        _ => e,
                    };
                    match word.as_str() {
                        "budget" => step.budget = e,
                        "chunk" => step.chunk = e,
                        _ => {
                            has_cost = true;
                            step.cost = e;
                        }
                    }
                }
                StepOption::Serve { order, .. } => {
                    step.serve = match order {
                        ServeOrder::Admission => ir::Serve::By(Vec::new()),
                        ServeOrder::DecodeFirst => ir::Serve::By(vec![ir::Expr::Cond(
                            Box::new(ir::Expr::Ctx(ir::Ctx::Decoding)),
                            Box::new(ir::Expr::Num(0.0)),
                            Box::new(ir::Expr::Num(1.0)),
                        )]),
                        ServeOrder::ExclusivePrefill => ir::Serve::ExclusivePrefill,
                        ServeOrder::By(keys) => ir::Serve::By(self.keys(keys, ir::Moment::Serve)),
                    };
                }
                StepOption::Memory { pool, span } => {
                    if let Some(kv) = self.family_named(pool, false) {
                        memory = self.pair(fam, &kv, "memory", *span);
                    }
                }
            }
        }
        if !has_cost {
            self.err(
                Diagnostic::new(
                    "step-cost",
                    span,
                    format!("{owner}: a step stage needs `cost` (how long an iteration lasts)"),
                )
                .with_help("add `cost C;`, e.g. `cost 0.01 + 0.0001 * tokens;`"),
            );
        }
        (0..fam.count)
            .map(|i| {
                let mut s = step.clone();
                s.memory = memory.as_ref().map(|m| m[i]);
                ir::StageKind::Step(s)
            })
            .collect()
    }

    /// Keys lowered at `moment`.
    fn keys(&mut self, keys: &[crate::syntax::ast::Expr], moment: ir::Moment) -> Vec<ir::Expr> {
        keys.iter()
            .map(|k| self.lower_expr(k, Moment::At(moment)))
            .collect()
    }

    /// The pool or stage family a name in an option names, or a refusal.
    fn family_named(&mut self, name: &Ident, is_stage: bool) -> Option<Family> {
        let fams = if is_stage { &self.stages } else { &self.pools };
        if let Some(f) = self.find(fams, &name.name) {
            return Some(f.clone());
        }
        let word = if is_stage { "stage" } else { "pool" };
        let d = Diagnostic::new(
            if is_stage {
                "unknown-stage"
            } else {
                "unknown-pool"
            },
            name.span,
            format!("unknown {word} `{}`", name.name),
        );
        let d = super::names::did_you_mean(d, &name.name, fams.iter().map(|f| f.name.as_str()));
        self.err(d);
        None
    }

    /// The member of `other` each member of `owner` is paired with: member
    /// for member when the families have one size, or the one member of
    /// `other` for all; any other sizes are refused.
    fn pair(
        &mut self,
        owner: &Family,
        other: &Family,
        what: &str,
        span: Span,
    ) -> Option<Vec<usize>> {
        if other.count == owner.count {
            return Some((0..owner.count).map(|i| other.base + i).collect());
        }
        if other.count == 1 {
            return Some(vec![other.base; owner.count]);
        }
        self.err(
            Diagnostic::new(
                "family-size",
                span,
                format!(
                    "`{}`: `{what}` names a family of {}, and `{}` is a family of {}: one for one, or one for all",
                    owner.name, other.count, owner.name, owner.count
                ),
            )
            .with_help(format!(
                "give `{}` {} members, or name a single one",
                other.name, owner.count
            )),
        );
        None
    }
}
