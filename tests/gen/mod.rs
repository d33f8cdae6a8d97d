//! A generator of well-formed programs, as text, for property tests: Tier-1
//! programs that link and run, and ([`serving_program`]) the same with a
//! serving engine (spill, server/request, traces, caching, every step and
//! pool option) that link and run.
//!
//! Every program it makes links: names are declared before they are read,
//! constant indices are in range, a multi-stage run holds `ps` stages of a
//! constant capacity and comes with `share`, `share` comes only with one,
//! `release` and `lease` name the pool as their hold writes it, a `loop`
//! holds a `run`, branch guards are 0 or 1. Every program also runs without a
//! run-time error: amounts are finite and ≥ 0 (expressions are built from
//! non-negative leaves with `+`, `*`, `min`, `max`), computed indices come
//! from a `choose` over the family's size, and a session's first statement
//! is a run of positive constant work, so a `closed` session cannot end
//! without time passing.
//!
//! The model is generated first ([`Program`]) and rendered with `Display`,
//! so a failing case shrinks to a small program and prints as source.

use proptest::prelude::*;
use std::fmt::{self, Display, Formatter, Write};
use std::sync::Arc;

/// How a stage serves its jobs.
#[derive(Clone, Debug)]
pub enum Kind {
    Delay,
    Fifo(u32),
    /// `ps(c)` of a constant capacity above 0 (may be shared by flows).
    Ps(f64),
    /// `ps(min(present, c))`: not constant, so never shared.
    PsPresent(f64),
}

/// A stage family `stK[size] : kind;`.
#[derive(Clone, Debug)]
pub struct StageFamily {
    pub size: usize,
    pub kind: Kind,
    /// Whether the size is written through a `let` (`stage st0[n_st0]`).
    pub size_by_let: bool,
}

/// A pool family `plK[size] { cap c; }` (`None`: no `cap`, so `inf`).
#[derive(Clone, Debug)]
pub struct PoolFamily {
    pub size: usize,
    pub cap: Option<f64>,
}

/// How sessions arrive.
#[derive(Clone, Debug)]
pub enum Arrival {
    Batch(u32),
    Poisson(f64),
    Closed(u32),
}

/// The declarations a session's statements are generated against.
#[derive(Clone, Debug)]
pub struct Decls {
    pub stages: Vec<StageFamily>,
    pub pools: Vec<PoolFamily>,
    /// `share maxmin` (true) or `bottleneck`, used when the program has a flow.
    pub maxmin: bool,
}

impl Decls {
    /// Stage families that may be held together by one run.
    fn shareable(&self) -> Vec<usize> {
        (0..self.stages.len())
            .filter(|&i| matches!(self.stages[i].kind, Kind::Ps(_)))
            .collect()
    }
}

/// An expression: non-negative and finite whatever the attributes hold.
#[derive(Clone, Debug)]
pub enum Expr {
    Num(f64),
    /// One of the attributes `a0`…`a2` (set in `init`, so never unknown).
    Attr(usize),
    Now,
    Exp(f64),
    Uniform(f64, f64),
    Add(Box<Expr>, Box<Expr>),
    Mul(Box<Expr>, Box<Expr>),
    Min(Box<Expr>, Box<Expr>),
    Max(Box<Expr>, Box<Expr>),
    /// `(x < y)`: 0 or 1.
    Less(Box<Expr>, Box<Expr>),
    /// An observable of a stage member or a pool member.
    QueueOf(usize, usize),
    UsedOf(usize, usize),
}

/// A reference to a family member, written `name` for a family of one and
/// `name[k]` otherwise.
#[derive(Clone, Debug)]
pub struct Member {
    pub prefix: &'static str,
    pub family: usize,
    pub size: usize,
    pub index: usize,
}

impl Display for Member {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if self.size == 1 {
            write!(f, "{}{}", self.prefix, self.family)
        } else {
            write!(f, "{}{}[{}]", self.prefix, self.family, self.index)
        }
    }
}

/// A statement of the session.
#[derive(Clone, Debug)]
pub enum Stmt {
    Set(usize, Expr),
    Observe(usize, Expr),
    /// A run over one stage, or over several (a flow).
    Run(Vec<Member>, Expr),
    Hold {
        pools: Vec<(Member, f64)>,
        body: Vec<Stmt>,
        /// `release` the first pool at the end of the body.
        release: bool,
        /// `lease` the first pool for this long after the body.
        lease: Option<f64>,
    },
    /// `branch (a < b) {…} else {…}` or `branch with (p) {…} else {…}`.
    Branch {
        with: Option<f64>,
        guard: Expr,
        then: Vec<Stmt>,
        otherwise: Option<Vec<Stmt>>,
    },
    /// `loop { run …; body; branch with (p) { end; } }`.
    Loop {
        run: Box<Stmt>,
        body: Vec<Stmt>,
        leave: f64,
    },
    /// `choose jK in n by (queue(st[jK]), jK); run st[jK] (w);`
    Choose {
        var: usize,
        family: usize,
        size: usize,
        work: Expr,
    },
    Turn,
}

/// A whole program.
#[derive(Clone, Debug)]
pub struct Program {
    pub decls: Decls,
    pub arrival: Arrival,
    /// The session's first statement: a run of positive constant work.
    pub first: Stmt,
    pub session: Vec<Stmt>,
    pub with_turn_block: bool,
    pub horizon: f64,
    pub warmup: f64,
    pub seed: u64,
    /// A serving engine and a session's last statement that uses it
    /// ([`serving_program`] only).
    pub engine: Option<Engine>,
}

/// A step stage `eng` with its memory pool `kv_e`, every option drawn, and
/// the hold the session ends with: reuse, at admission, growing runs in both
/// modes through the serving vocabulary, cache, and a hidden attribute.
#[derive(Clone, Debug)]
pub struct Engine {
    pub budget: f64,
    pub chunk: f64,
    pub block: f64,
    pub cap: f64,
    /// 0 `admission`, 1 `decode first`, 2 `exclusive prefill`, 3 `by (remaining, -admission)`.
    pub serve: u8,
    pub evict_by: bool,
    pub preempt_lifo: bool,
    pub queue_by: bool,
    pub admit_via: bool,
    pub prefill: f64,
    pub decode: f64,
    pub reuse: bool,
    pub cache: f64,
    /// `spill host_e via link_e (…) when (…)` on the KV pool.
    pub spill: bool,
    /// The hold is a server's, spliced where the workload's session says
    /// `request;`.
    pub server: bool,
    /// 0 no trace, 1 `trace "…good.csv";`, 2 the same `ordered`.
    pub trace: u8,
}

impl Program {
    /// Whether some run holds several stages (so `share` is declared).
    pub fn has_flow(&self) -> bool {
        fn any(stmts: &[Stmt]) -> bool {
            stmts.iter().any(|s| match s {
                Stmt::Run(stages, _) => stages.len() > 1,
                Stmt::Hold { body, .. } => any(body),
                Stmt::Branch {
                    then, otherwise, ..
                } => any(then) || otherwise.as_deref().is_some_and(any),
                Stmt::Loop { run, body, .. } => any(std::slice::from_ref(run)) || any(body),
                _ => false,
            })
        }
        any(std::slice::from_ref(&self.first)) || any(&self.session)
    }
}

// ----- rendering -------------------------------------------------------------

fn num(x: f64) -> String {
    if x.is_infinite() {
        "inf".to_string()
    } else {
        format!("{x}")
    }
}

impl Display for Expr {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Num(x) => f.write_str(&num(*x)),
            Expr::Attr(i) => write!(f, "a{i}"),
            Expr::Now => f.write_str("now"),
            Expr::Exp(m) => write!(f, "~exp({})", num(*m)),
            Expr::Uniform(a, b) => write!(f, "~uniform({}, {})", num(*a), num(*b)),
            Expr::Add(a, b) => write!(f, "({a} + {b})"),
            Expr::Mul(a, b) => write!(f, "({a} * {b})"),
            Expr::Min(a, b) => write!(f, "min({a}, {b})"),
            Expr::Max(a, b) => write!(f, "max({a}, {b})"),
            Expr::Less(a, b) => write!(f, "({a} < {b})"),
            Expr::QueueOf(fam, k) => write!(f, "queue(st{fam}[{k}])"),
            Expr::UsedOf(fam, k) => write!(f, "used(pl{fam}[{k}])"),
        }
    }
}

fn block(out: &mut String, stmts: &[Stmt], indent: usize) -> fmt::Result {
    block_then(out, stmts, "", indent)
}

/// A block whose last line is `last` (when not empty).
fn block_then(out: &mut String, stmts: &[Stmt], last: &str, indent: usize) -> fmt::Result {
    out.push_str("{\n");
    for s in stmts {
        stmt(out, s, indent + 1)?;
    }
    if !last.is_empty() {
        writeln!(out, "{}{last}", "  ".repeat(indent + 1))?;
    }
    write!(out, "{}}}", "  ".repeat(indent))
}

fn stmt(out: &mut String, s: &Stmt, indent: usize) -> fmt::Result {
    let pad = "  ".repeat(indent);
    match s {
        Stmt::Set(a, e) => writeln!(out, "{pad}set a{a} = {e};"),
        Stmt::Observe(o, e) => writeln!(out, "{pad}observe o{o} = {e};"),
        Stmt::Run(stages, w) => {
            let names: Vec<String> = stages.iter().map(Member::to_string).collect();
            writeln!(out, "{pad}run {} ({w});", names.join(", "))
        }
        Stmt::Hold {
            pools,
            body,
            release,
            lease,
        } => {
            let held: Vec<String> = pools
                .iter()
                .map(|(m, u)| format!("{m} ({})", num(*u)))
                .collect();
            write!(out, "{pad}hold {} ", held.join(", "))?;
            let last = if *release {
                format!("release {};", pools[0].0)
            } else {
                String::new()
            };
            block_then(out, body, &last, indent)?;
            if let Some(t) = lease {
                write!(out, " lease {} ({})", pools[0].0, num(*t))?;
            }
            writeln!(out)
        }
        Stmt::Branch {
            with,
            guard,
            then,
            otherwise,
        } => {
            match with {
                Some(p) => write!(out, "{pad}branch with ({}) ", num(*p))?,
                None => write!(out, "{pad}branch {guard} ")?,
            }
            block(out, then, indent)?;
            if let Some(b) = otherwise {
                out.push_str(" else ");
                block(out, b, indent)?;
            }
            writeln!(out)
        }
        Stmt::Loop { run, body, leave } => {
            writeln!(out, "{pad}loop {{")?;
            stmt(out, run, indent + 1)?;
            for s in body {
                stmt(out, s, indent + 1)?;
            }
            writeln!(out, "{pad}  branch with ({}) {{ end; }}", num(*leave))?;
            writeln!(out, "{pad}}}")
        }
        Stmt::Choose {
            var,
            family,
            size,
            work,
        } => {
            writeln!(
                out,
                "{pad}choose j{var} in {size} by (queue(st{family}[j{var}]), j{var});"
            )?;
            writeln!(out, "{pad}run st{family}[j{var}] ({work});")
        }
        Stmt::Turn => writeln!(out, "{pad}turn;"),
    }
}

impl Display for Program {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        for (i, s) in self.decls.stages.iter().enumerate() {
            let size = match (s.size, s.size_by_let) {
                (1, false) => String::new(),
                (n, false) => format!("[{n}]"),
                (n, true) => {
                    writeln!(out, "let n_st{i} = {n};")?;
                    format!("[n_st{i}]")
                }
            };
            let kind = match s.kind {
                Kind::Delay => "delay".to_string(),
                Kind::Fifo(1) => "fifo".to_string(),
                Kind::Fifo(c) => format!("fifo({c})"),
                Kind::Ps(c) => format!("ps({})", num(c)),
                Kind::PsPresent(c) => format!("ps(min(present, {}))", num(c)),
            };
            writeln!(out, "stage st{i}{size} : {kind};")?;
        }
        if let Some(e) = &self.engine {
            let serve = [
                "admission",
                "decode first",
                "exclusive prefill",
                "by (remaining, -admission)",
            ][e.serve as usize % 4];
            if e.spill {
                writeln!(out, "pool host_e {{ cap {}; }}", num(e.cap))?;
                writeln!(out, "stage link_e : fifo;")?;
            }
            write!(
                out,
                "pool kv_e {{ cap {}; block {};",
                num(e.cap),
                num(e.block)
            )?;
            if e.spill {
                out.push_str(" spill host_e via link_e (size / 100) when (size > 1);");
            }
            if e.evict_by {
                out.push_str(" evict by (age, -size, waiting);");
            }
            if e.preempt_lifo {
                out.push_str(" preempt lifo;");
            }
            if e.queue_by {
                out.push_str(" queue by (waited, a0);");
            }
            if e.admit_via {
                out.push_str(" admit via eng;");
            }
            writeln!(out, " }}")?;
            writeln!(
                out,
                "stage eng : step {{ budget {}; cost 0.01 + 0.001 * tokens + 0.0001 * kv_decode + 0.00001 * attention; chunk {}; serve {serve}; memory kv_e; }}",
                num(e.budget),
                num(e.chunk)
            )?;
        }
        for (i, p) in self.decls.pools.iter().enumerate() {
            let size = if p.size == 1 {
                String::new()
            } else {
                format!("[{}]", p.size)
            };
            match p.cap {
                Some(c) => writeln!(out, "pool pl{i}{size} {{ cap {}; }}", num(c))?,
                None => writeln!(out, "pool pl{i}{size} {{ }}")?,
            }
        }
        if self.has_flow() {
            let policy = if self.decls.maxmin {
                "maxmin"
            } else {
                "bottleneck"
            };
            writeln!(out, "share {policy};")?;
        }
        let arrive = match &self.arrival {
            Arrival::Batch(n) => format!("batch({n})"),
            Arrival::Poisson(r) => format!("poisson({})", num(*r)),
            Arrival::Closed(n) => format!("closed({n})"),
        };
        writeln!(out, "workload {{\n  arrive {arrive};")?;
        match self.engine.as_ref().map_or(0, |e| e.trace) {
            1 => writeln!(out, "  trace \"tests/fixtures/traces/good.csv\";")?,
            2 => writeln!(out, "  trace \"tests/fixtures/traces/good.csv\" ordered;")?,
            _ => {}
        }
        let secret = if self.engine.is_some() {
            out.push_str("  hidden secret;\n");
            " set secret = 2;"
        } else {
            ""
        };
        writeln!(
            out,
            "  init {{ set a0 = 1; set a1 = ~uniform(0, 2); set a2 = serial;{secret} }}"
        )?;
        if self.with_turn_block {
            writeln!(out, "  turn {{ set a0 = a0 + 1; observe o2 = turn_no; }}")?;
        }
        let mut all = vec![self.first.clone()];
        all.extend(self.session.iter().cloned());
        match &self.engine {
            None => {
                writeln!(out, "}}")?;
                out.push_str("session ");
                block(&mut out, &all, 0)?;
            }
            Some(e) => {
                let reuse = if e.reuse { " reuse (hit)" } else { "" };
                // With a trace, the decode length reads the row's `out`.
                let out_len = if e.trace > 0 { " + out" } else { "" };
                let hold = format!(
                    "hold kv_e (need) reserve (need){reuse} at admission (hit = min(cachedin(kv_e), {}), need = {} - hit) {{\n    prefill {} growing kv_e;\n    run eng decode ({}{out_len}) growing kv_e;\n    observe o_cached = cached + secret;\n  }} cache ({})",
                    num(e.prefill),
                    num(e.prefill),
                    num(e.prefill),
                    num(e.decode),
                    num(e.cache)
                );
                if e.server {
                    out.push_str("  session ");
                    block_then(&mut out, &all, "request;", 1)?;
                    writeln!(out, "\n}}")?;
                    out.push_str("server { ");
                    out.push_str(&hold);
                    out.push_str(" }");
                } else {
                    writeln!(out, "}}")?;
                    out.push_str("session ");
                    block_then(&mut out, &all, &hold, 0)?;
                }
            }
        }
        writeln!(out)?;
        writeln!(
            out,
            "run {{ horizon {}; warmup {}; seed {}; }}",
            num(self.horizon),
            num(self.warmup),
            self.seed
        )?;
        f.write_str(&out)
    }
}

// ----- strategies ------------------------------------------------------------

fn small() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(0.0),
        Just(0.5),
        Just(1.0),
        Just(2.0),
        Just(3.5),
        0.0..4.0f64
    ]
}

fn positive() -> impl Strategy<Value = f64> {
    prop_oneof![Just(0.25), Just(1.0), Just(2.0), 0.1..3.0f64]
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        Just(Kind::Delay),
        (1u32..4).prop_map(Kind::Fifo),
        positive().prop_map(Kind::Ps),
        positive().prop_map(Kind::Ps),
        positive().prop_map(Kind::PsPresent),
    ]
}

/// Stage and pool families; the first two stages are `ps` of a constant, so
/// a flow always has two families to hold.
pub fn decls() -> impl Strategy<Value = Decls> {
    let stage =
        (1usize..4, kind(), any::<bool>()).prop_map(|(size, kind, size_by_let)| StageFamily {
            size,
            kind,
            size_by_let,
        });
    let shared = (1usize..4, positive()).prop_map(|(size, c)| StageFamily {
        size,
        kind: Kind::Ps(c),
        size_by_let: false,
    });
    let pool = (
        1usize..4,
        prop::option::of(prop_oneof![Just(0.0), 1.0..20.0f64]),
    )
        .prop_map(|(size, cap)| PoolFamily { size, cap });
    (
        prop::collection::vec(shared, 2),
        prop::collection::vec(stage, 0..4),
        prop::collection::vec(pool, 1..4),
        any::<bool>(),
    )
        .prop_map(|(mut stages, more, pools, maxmin)| {
            stages.extend(more);
            Decls {
                stages,
                pools,
                maxmin,
            }
        })
}

fn expr(d: &Arc<Decls>) -> impl Strategy<Value = Expr> + use<> {
    let (ds, dp) = (d.clone(), d.clone());
    let leaf = prop_oneof![
        small().prop_map(Expr::Num),
        (0usize..3).prop_map(Expr::Attr),
        Just(Expr::Now),
        positive().prop_map(Expr::Exp),
        (0.0..1.0f64, 1.0..2.0f64).prop_map(|(a, b)| Expr::Uniform(a, b)),
        (0..ds.stages.len()).prop_flat_map(move |fam| {
            (Just(fam), 0..ds.stages[fam].size).prop_map(|(f, k)| Expr::QueueOf(f, k))
        }),
        (0..dp.pools.len()).prop_flat_map(move |fam| {
            (Just(fam), 0..dp.pools[fam].size).prop_map(|(f, k)| Expr::UsedOf(f, k))
        }),
    ];
    leaf.prop_recursive(3, 12, 2, |inner| {
        let pair = || (inner.clone(), inner.clone());
        prop_oneof![
            pair().prop_map(|(a, b)| Expr::Add(Box::new(a), Box::new(b))),
            pair().prop_map(|(a, b)| Expr::Mul(Box::new(a), Box::new(b))),
            pair().prop_map(|(a, b)| Expr::Min(Box::new(a), Box::new(b))),
            pair().prop_map(|(a, b)| Expr::Max(Box::new(a), Box::new(b))),
        ]
    })
}

/// Work for a run: positive and finite.
fn work(d: &Arc<Decls>) -> impl Strategy<Value = Expr> + use<> {
    prop_oneof![
        positive().prop_map(Expr::Num),
        positive().prop_map(Expr::Exp),
        expr(d).prop_map(|e| Expr::Min(Box::new(e), Box::new(Expr::Num(3.0)))),
    ]
}

fn member(prefix: &'static str, family: usize, size: usize) -> impl Strategy<Value = Member> {
    (0..size).prop_map(move |index| Member {
        prefix,
        family,
        size,
        index,
    })
}

fn stage_member(d: &Arc<Decls>) -> impl Strategy<Value = Member> + use<> {
    let d = d.clone();
    (0..d.stages.len()).prop_flat_map(move |fam| member("st", fam, d.stages[fam].size))
}

/// A run over one stage or, among the shareable families, over two or three.
fn run(d: &Arc<Decls>) -> impl Strategy<Value = Stmt> + use<> {
    let shareable = d.shareable();
    let dd = d.clone();
    let flow = prop::sample::subsequence(shareable, 2..=2.max(d.shareable().len().min(3)))
        .prop_flat_map(move |fams| {
            fams.into_iter()
                .map(|f| member("st", f, dd.stages[f].size))
                .collect::<Vec<_>>()
        });
    prop_oneof![
        3 => (stage_member(d), work(d)).prop_map(|(m, w)| Stmt::Run(vec![m], w)),
        1 => (flow, work(d)).prop_map(|(ms, w)| Stmt::Run(ms, w)),
    ]
}

fn simple(d: &Arc<Decls>) -> impl Strategy<Value = Stmt> + use<> {
    let dc = d.clone();
    let choose = (0..d.stages.len(), 0usize..3).prop_flat_map(move |(fam, var)| {
        let size = dc.stages[fam].size;
        work(&dc).prop_map(move |work| Stmt::Choose {
            var,
            family: fam,
            size,
            work,
        })
    });
    prop_oneof![
        2 => ((0usize..3), expr(d)).prop_map(|(a, e)| Stmt::Set(a, e)),
        2 => ((0usize..2), expr(d)).prop_map(|(o, e)| Stmt::Observe(o, e)),
        3 => run(d),
        1 => choose,
        1 => Just(Stmt::Turn),
    ]
}

/// A hold on one or two distinct pool families, units within the capacity.
fn hold(d: &Arc<Decls>, body: BoxedStrategy<Vec<Stmt>>) -> impl Strategy<Value = Stmt> + use<> {
    let d = d.clone();
    let pools = prop::sample::subsequence(
        (0..d.pools.len()).collect::<Vec<_>>(),
        1..=2.min(d.pools.len()),
    )
    .prop_flat_map(move |fams| {
        fams.into_iter()
            .map(|f| {
                let cap = d.pools[f].cap.unwrap_or(10.0).min(10.0);
                (
                    member("pl", f, d.pools[f].size),
                    (0.0..=1.0f64).prop_map(move |x| (x * cap).floor()),
                )
            })
            .collect::<Vec<_>>()
    });
    (
        pools,
        body,
        any::<bool>(),
        prop::option::of(prop_oneof![Just(0.0), small()]),
    )
        .prop_map(|(pools, body, release, lease)| Stmt::Hold {
            pools,
            body,
            release,
            lease,
        })
}

/// Statements nested at most `depth` blocks deep.
fn stmts(d: Arc<Decls>, depth: u32) -> BoxedStrategy<Vec<Stmt>> {
    if depth == 0 {
        return prop::collection::vec(simple(&d), 0..4).boxed();
    }
    let inner = stmts(d.clone(), depth - 1);
    let branch = (
        prop::option::of(prop_oneof![Just(0.0), Just(1.0), 0.0..=1.0f64]),
        expr(&d),
        expr(&d),
        inner.clone(),
        prop::option::of(inner.clone()),
    )
        .prop_map(|(with, a, b, then, otherwise)| Stmt::Branch {
            with,
            guard: Expr::Less(Box::new(a), Box::new(b)),
            then,
            otherwise,
        });
    let looped = (run(&d), inner.clone(), 0.2..=1.0f64).prop_map(|(run, body, leave)| Stmt::Loop {
        run: Box::new(run),
        body,
        leave,
    });
    let one = prop_oneof![
        4 => simple(&d),
        1 => hold(&d, inner.clone()),
        1 => branch,
        1 => looped,
    ];
    prop::collection::vec(one, 0..4).boxed()
}

/// A whole Tier-1 program that links and runs without a run-time error.
pub fn program() -> impl Strategy<Value = Program> {
    decls().prop_flat_map(|decls| {
        let d = Arc::new(decls.clone());
        let arrival = prop_oneof![
            (1u32..5).prop_map(Arrival::Batch),
            (0.1..3.0f64).prop_map(Arrival::Poisson),
            (1u32..4).prop_map(Arrival::Closed),
        ];
        let first =
            (stage_member(&d), positive()).prop_map(|(m, w)| Stmt::Run(vec![m], Expr::Num(w)));
        (
            Just(decls),
            arrival,
            first,
            stmts(d, 2),
            any::<bool>(),
            1.0..20.0f64,
            any::<bool>(),
            0u64..1000,
        )
            .prop_map(
                |(decls, arrival, first, session, with_turn_block, horizon, warm, seed)| Program {
                    decls,
                    arrival,
                    first,
                    session,
                    with_turn_block,
                    horizon: horizon.floor(),
                    warmup: if warm { (horizon / 2.0).floor() } else { 0.0 },
                    seed,
                    engine: None,
                },
            )
    })
}

/// A step stage with every option, and the hold that uses it.
fn engine() -> impl Strategy<Value = Engine> {
    (
        (
            1.0..64.0f64,
            0.0..16.0f64,
            1.0..8.0f64,
            16.0..96.0f64,
            0u8..4,
        ),
        (any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>()),
        (1.0..32.0f64, 0.0..8.0f64, any::<bool>(), 0.0..64.0f64),
        (any::<bool>(), any::<bool>(), 0u8..3),
    )
        .prop_map(
            |(
                (budget, chunk, block, cap, serve),
                (evict_by, preempt_lifo, queue_by, admit_via),
                (prefill, decode, reuse, cache),
                (spill, server, trace),
            )| Engine {
                budget: budget.floor(),
                chunk: chunk.floor(),
                block: block.floor(),
                cap: cap.floor(),
                serve,
                evict_by,
                preempt_lifo,
                queue_by,
                admit_via,
                prefill: prefill.floor(),
                decode: decode.floor(),
                reuse,
                cache: cache.floor(),
                spill,
                server,
                trace,
            },
        )
}

/// A program with a serving engine (every step and pool option, caching,
/// `at admission`, growing runs, the serving vocabulary, `hidden`) that
/// links and runs (tests/generated.rs checks the engine's invariants on it).
pub fn serving_program() -> impl Strategy<Value = Program> {
    // Boxed: the nested strategy types otherwise overflow a test thread's stack.
    (program().boxed(), engine().boxed()).prop_map(|(mut p, e)| {
        p.engine = Some(e);
        p
    })
}
