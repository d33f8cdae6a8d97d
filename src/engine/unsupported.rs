//! The serving-engine constructs the IR can express but this engine does
//! not run yet: a program using one is refused when its run starts, so
//! `serq check` and `serq ir` accept it while the engine is being built.
//!
//! Architecture invariant: this is the only place that knows which
//! constructs are missing; each goes from here when the engine runs it.

use crate::ir::{Ctx, Evict, Expr, Fun, Preempt, Program, RunMode, StageKind, Stmt};

/// The first construct of `program` the engine cannot run yet, as a
/// message that says so.
pub fn unsupported(program: &Program) -> Option<String> {
    let missing = |what: &str| Some(format!("{what} is not supported yet by the engine"));
    if let Some(s) = program
        .stages
        .iter()
        .find(|s| matches!(s.kind, StageKind::Step(_)))
    {
        return missing(&format!("the step stage `{}`", s.name));
    }
    for pool in &program.pools {
        let option = if pool.block.is_some() {
            "block"
        } else if pool.evict != Evict::Lru {
            "evict"
        } else if pool.preempt != Preempt::None {
            "preempt"
        } else if pool.queue.is_some() {
            "queue"
        } else if pool.spill.is_some() {
            "spill"
        } else if pool.admit_via.is_some() {
            "admit via"
        } else {
            continue;
        };
        return missing(&format!("the option `{option}` of pool `{}`", pool.name));
    }
    if !program.hidden.is_empty() {
        return missing("`hidden`");
    }
    if program.trace.is_some() {
        return missing("a `trace` workload");
    }
    for stmt in program.blocks.iter().flatten() {
        let what = match stmt {
            Stmt::Hold { reuse: Some(_), .. } => "`reuse` on a hold",
            Stmt::Hold { cache: Some(_), .. } => "`cache` on a hold",
            Stmt::Drop(_) => "`drop`",
            Stmt::Run { mode, growing, .. } if *mode != RunMode::Plain || growing.is_some() => {
                "a run mode or `growing`"
            }
            _ => continue,
        };
        return missing(what);
    }
    let mut tier2 = None;
    let mut look = |e: &Expr| {
        e.visit(&mut |e| match e {
            Expr::Ctx(c) if tier2.is_none() && !matches!(c, Ctx::Now | Ctx::N) => {
                tier2 = Some(format!("the context variable `{}`", c.word()));
            }
            Expr::Call(f, _)
                if tier2.is_none()
                    && matches!(
                        f,
                        Fun::CachedIn
                            | Fun::BudgetLeft
                            | Fun::EstLambda
                            | Fun::EstRho
                            | Fun::EstWait
                            | Fun::Price
                    ) =>
            {
                tier2 = Some(format!("`{}`", f.name()));
            }
            _ => {}
        })
    };
    for stmt in program.blocks.iter().flatten() {
        stmt.exprs().into_iter().for_each(&mut look);
    }
    for s in &program.stages {
        if let StageKind::Ps(e) = &s.kind {
            look(e);
        }
    }
    tier2.and_then(|w| missing(&w))
}
