//! The text the drawing prints: stage kinds, arrivals and the expressions in
//! them, written back in the language's surface syntax.
//!
//! Architecture invariant: reads only the IR; numbers print by `f64`'s
//! `Display` (shortest round-trip, so the same program gives the same bytes).

use crate::ir::{Arg, Arrival, BinOp, CRef, Expr, Program, StageKind, UnOp};

/// A stage's kind as the language writes it: `delay`, `fifo(c)` or
/// `ps(φ)`; an engine (a step stage) with its budget and memory pool,
/// `step budget 8 · kv`.
pub fn kind(program: &Program, kind: &StageKind) -> String {
    match kind {
        StageKind::Delay => "delay".to_string(),
        StageKind::Fifo(c) => format!("fifo({c})"),
        StageKind::Ps(phi) => format!("ps({})", expr(program, phi)),
        StageKind::Step(step) => {
            let mut text = format!("step budget {}", expr(program, &step.budget));
            if let Some(m) = step.memory {
                text.push_str(" · ");
                text.push_str(program.pool_name(m));
            }
            text
        }
    }
}

/// How sessions arrive, as the workload writes it: `poisson(0.8)`, `batch(2)`.
pub fn arrival(program: &Program) -> String {
    match &program.arrival {
        Arrival::Poisson(rate) => format!("poisson({})", number(*rate)),
        Arrival::Renewal(gap) => format!("renewal({})", expr(program, gap)),
        Arrival::Closed(n) => format!("closed({n})"),
        Arrival::Batch(n) => format!("batch({n})"),
        Arrival::None => "none".to_string(),
        Arrival::Trace(t) => {
            let file = std::path::Path::new(&t.path)
                .file_name()
                .map_or(t.path.clone(), |f| f.to_string_lossy().into_owned());
            let mut text = format!("trace \"{file}\"");
            if t.start > 0.0 || t.end < f64::INFINITY {
                text += &format!(" window ({}, {})", number(t.start), number(t.end));
            }
            if t.speed != 1.0 {
                text += &format!(" speed ({})", number(t.speed));
            }
            text
        }
        Arrival::Thinned(t) => format!(
            "poisson({}) peak ({})",
            expr(program, &t.rate),
            number(t.peak)
        ),
    }
}

/// A number: `inf`, `-inf`, `NaN`, or `f64`'s shortest round-trip form.
pub fn number(x: f64) -> String {
    if x == f64::INFINITY {
        "inf".to_string()
    } else if x == f64::NEG_INFINITY {
        "-inf".to_string()
    } else {
        x.to_string()
    }
}

/// An expression in surface syntax, with the parentheses precedence needs.
pub fn expr(program: &Program, e: &Expr) -> String {
    let mut out = String::new();
    write_expr(program, e, 0, &mut out);
    out
}

/// Binding strength of a binary operator (higher binds tighter).
fn precedence(op: BinOp) -> u8 {
    match op {
        BinOp::Or => 1,
        BinOp::And => 2,
        BinOp::Eq | BinOp::Ne => 3,
        BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => 4,
        BinOp::Add | BinOp::Sub => 5,
        BinOp::Mul | BinOp::Div => 6,
        BinOp::Pow => 7,
    }
}

/// Writes `e`, parenthesised when it binds looser than `outer` requires.
fn write_expr(program: &Program, e: &Expr, outer: u8, out: &mut String) {
    match e {
        Expr::Num(x) => out.push_str(&number(*x)),
        Expr::Attr(slot) => out.push_str(program.attrs.get(*slot).map_or("?", String::as_str)),
        Expr::Ctx(c) => out.push_str(c.word()),
        Expr::Sample(dist, args) => {
            out.push('~');
            out.push_str(dist.name());
            out.push('(');
            for (i, a) in args.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_expr(program, a, 0, out);
            }
            out.push(')');
        }
        Expr::Call(fun, args) => {
            out.push_str(fun.name());
            write_args(program, args, out);
        }
        Expr::Unary(op, a) => {
            out.push(if *op == UnOp::Neg { '-' } else { '!' });
            write_expr(program, a, 8, out);
        }
        Expr::Binary(op, a, b) => {
            let p = precedence(*op);
            let open = p < outer;
            if open {
                out.push('(');
            }
            // `^` groups to the right, every other operator to the left.
            let (left, right) = if *op == BinOp::Pow {
                (p + 1, p)
            } else {
                (p, p + 1)
            };
            write_expr(program, a, left, out);
            out.push(' ');
            out.push_str(op.symbol());
            out.push(' ');
            write_expr(program, b, right, out);
            if open {
                out.push(')');
            }
        }
        Expr::Cond(c, a, b) => {
            if outer > 0 {
                out.push('(');
            }
            write_expr(program, c, 1, out);
            out.push_str(" ? ");
            write_expr(program, a, 1, out);
            out.push_str(" : ");
            write_expr(program, b, 0, out);
            if outer > 0 {
                out.push(')');
            }
        }
    }
}

/// `(a, b, …)` for a call's arguments.
fn write_args(program: &Program, args: &[Arg], out: &mut String) {
    out.push('(');
    for (i, arg) in args.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        match arg {
            Arg::Expr(e) => write_expr(program, e, 0, out),
            Arg::Pool(r) => reference(program, program.pool_name(r.base), r, out),
            Arg::Stage(r) => reference(program, program.stage_name(r.base), r, out),
        }
    }
    out.push(')');
}

/// `name` or `name[index]` for a pool or stage reference.
fn reference(program: &Program, name: &str, r: &CRef, out: &mut String) {
    out.push_str(name);
    if let Some(index) = &r.index {
        out.push('[');
        write_expr(program, index, 0, out);
        out.push(']');
    }
}
