//! The compiled program: every expression and statement of a
//! [`ValidProgram`], compiled once when the run starts.
//!
//! An expression becomes a constant, an attribute read, the clock, or flat
//! code for a small stack machine ([`Op`]); a statement keeps its shape
//! with its expressions compiled and what the interpreter would otherwise
//! work out at every execution (which pool a lease keeps, whether a hold's
//! units read state) decided here.
//!
//! Architecture invariant: compiling trusts what `Program::validate`
//! guarantees (arities, argument kinds, slots, references in range,
//! constant distribution parameters in range) and checks none of it
//! again; the compiled forms carry no `String`. Nothing here runs.

use bevy_ecs::prelude::*;

use crate::ir::{self, Arg, BinOp, CRef, Dist, Fun, Program, UnOp, ValidProgram};

/// What an observable reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Observable {
    /// `queue(s)`: jobs present.
    Queue,
    /// `busy(s)`: jobs in service.
    Busy,
    /// `work(s)`: remaining work of the jobs present.
    Work,
    /// `used(p)`.
    Used,
    /// `free(p)`.
    Free,
    /// `holders(p)`.
    Holders,
    /// `queued(p)`.
    Queued,
    /// `cachedin(p)`: the session's own live cached units.
    CachedIn,
    /// `budget_left(s)`: a step stage's budget less what its residents
    /// would take.
    BudgetLeft,
    /// `est_lambda(s)`.
    EstLambda,
    /// `est_rho(s)`.
    EstRho,
    /// `est_wait(s)`.
    EstWait,
    /// `price(s, s_hit, ds)`: pops `ds`, then `s_hit`.
    Price,
}

/// One instruction of an expression's flat code.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Op {
    /// Push a number.
    Num(f64),
    /// Push an attribute.
    Attr(u32),
    /// Push `now`.
    Now,
    /// Push `present`.
    Present,
    /// Push a serving context variable (its [`ctx_index`]) from the moment.
    Ctx(u8),
    /// Apply a prefix operator to the top.
    Unary(UnOp),
    /// Pop b, pop a, push `a op b` (never `&&`/`||`).
    Binary(BinOp),
    /// Replace the top x by `x != 0` as 1 or 0.
    Truthy,
    /// Pop a; if it is 0, push 0 and jump (the `&&` short circuit).
    AndJump(u32),
    /// Pop a; if it is not 0, push 1 and jump (the `||` short circuit).
    OrJump(u32),
    /// Pop c; if it is 0, jump.
    JumpIfFalse(u32),
    /// Jump.
    Jump(u32),
    /// A one-argument pure function of the top.
    Pure1(Fun),
    /// Pop b, pop a, push the two-argument pure function of them.
    Pure2(Fun),
    /// Pop the distribution's parameters (its arity), check them, draw.
    Sample(Dist),
    /// A draw with constant parameters (checked by the validator).
    SampleConst(Dist, f64, f64),
    /// An observable of the member `base` (a family of one, or a constant index).
    Observe(Observable, u32),
    /// Pop an index, check it is a member of `base..base + count`, push the
    /// observable of that member.
    ObserveAt(Observable, u32, u32),
}

/// A compiled expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// A number.
    Num(f64),
    /// An attribute by slot.
    Attr(u32),
    /// `now`.
    Now,
    /// A draw with constant parameters (checked by the validator).
    Draw(Dist, f64, f64),
    /// A binary operator (not `&&`, `||`) of two leaves.
    Binary(BinOp, Leaf, Leaf),
    /// An observable of the member `base` (a family of one, or a constant index).
    Observe(Observable, u32),
    /// An observable of the member `base + attrs[slot]` of a family of
    /// `count` (`queue(P[i])`, a `choose` key's usual shape), its index
    /// checked as `ObserveAt` does.
    ObserveAttr(Observable, u32, u32, u32),
    /// Anything else, as flat code.
    Ops(Box<[Op]>),
}

/// An operand that needs no code: a number, an attribute or the clock.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Leaf {
    /// A number.
    Num(f64),
    /// An attribute by slot.
    Attr(u32),
    /// `now`.
    Now,
}

fn leaf(e: &ir::Expr) -> Option<Leaf> {
    match e {
        ir::Expr::Num(x) => Some(Leaf::Num(*x)),
        ir::Expr::Attr(slot) => Some(Leaf::Attr(*slot as u32)),
        ir::Expr::Ctx(ir::Ctx::Now) => Some(Leaf::Now),
        _ => None,
    }
}

/// A reference to a member of a family `base..base + count`.
#[derive(Clone, Debug, PartialEq)]
pub struct Member {
    /// The family's first member.
    pub base: u32,
    /// The family's size.
    pub count: u32,
    /// The member's index, evaluated when used (`None`: `base`).
    pub index: Option<Expr>,
}

/// One pool of a hold.
#[derive(Clone, Debug, PartialEq)]
pub struct HoldPool {
    /// The pool.
    pub pool: Member,
    /// Its units.
    pub units: Expr,
    /// Its reserve.
    pub reserve: Option<Expr>,
}

/// A compiled statement (see [`ir::Stmt`] for what each does).
#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// `set x = e;`
    Set(u32, Expr),
    /// `observe o = e;`
    Observe(u32, Expr),
    /// `turn;`
    Turn,
    /// `end;`
    End,
    /// `hold …`.
    Hold {
        /// Its pools in the hold's order.
        pools: Box<[HoldPool]>,
        /// The body's block.
        body: u32,
        /// The lease: the position of the leased pool in `pools`, and the lease's length.
        lease: Option<(usize, Expr)>,
        /// Whether its units and reserves read no state (neither the clock
        /// nor an observable), so a head that did not fit stays so until
        /// units come back.
        reads_no_state: bool,
        /// `reuse (ρ)`: at most this much of the session's cached entry is
        /// consumed in each pool (`None`: all of it).
        reuse: Option<Expr>,
        /// `cache (ℓ)`: what each pool keeps at release (`None`: nothing).
        cache: Option<Expr>,
    },
    /// `grow p (d);`
    Grow(Member, Expr),
    /// `load p (n);`
    Load(Member, Expr),
    /// `release p;`
    Release(Member),
    /// `drop p;`: the session's live cached entry in p goes.
    Drop(Member),
    /// `run s [, s2 …] (w);`
    Run {
        /// The first stage.
        stage: Member,
        /// The work.
        work: Expr,
        /// The further stages of a flow.
        also: Box<[Member]>,
        /// `prefill`/`decode` on a step stage (`Plain` elsewhere).
        mode: ir::RunMode,
        /// `growing P`: the pool whose hold grows with the tokens.
        growing: Option<Member>,
    },
    /// `branch (g) {then} else {else}`.
    Branch(Expr, u32, u32),
    /// `loop { body }`.
    Loop(u32),
    /// `choose j in n by (k…);`
    Choose {
        /// The attribute slot of `j`.
        var: u32,
        /// The candidate count.
        count: Expr,
        /// The key tuple.
        key: Box<[Expr]>,
    },
}

/// How many context variables there are (the length of a moment).
pub const CTX_COUNT: usize = 17;

/// The place of context variable `c` in a moment ([`Op::Ctx`]).
pub fn ctx_index(c: ir::Ctx) -> usize {
    use ir::Ctx::*;
    match c {
        Now => 0,
        N => 1,
        Size => 2,
        Age => 3,
        Last => 4,
        Waiting => 5,
        Waited => 6,
        Residents => 7,
        Decoders => 8,
        KvDecode => 9,
        KvPrefill => 10,
        Tokens => 11,
        Prefilled => 12,
        Attention => 13,
        Decoding => 14,
        Admission => 15,
        Remaining => 16,
    }
}

/// A step stage's options, compiled.
#[derive(Clone, Debug, PartialEq)]
pub struct StepCode {
    /// `budget` (Budget moment).
    pub budget: Expr,
    /// `cost` (Step moment).
    pub cost: Expr,
    /// `chunk` (Budget moment).
    pub chunk: Expr,
    /// `serve by` keys (Serve moment); empty for `serve admission` and
    /// `serve exclusive prefill`.
    pub keys: Box<[Expr]>,
    /// `serve exclusive prefill`.
    pub exclusive: bool,
    /// The `memory` pool member.
    pub memory: Option<u32>,
}

/// `spill T via L (w) when (c)`, compiled.
#[derive(Clone, Debug, PartialEq)]
pub struct SpillCode {
    /// The pool member that takes the pieces.
    pub to: u32,
    /// The stage member a job runs on per piece.
    pub via: u32,
    /// The job's work (Evict moment).
    pub work: Expr,
    /// Whether a piece spills (Evict moment).
    pub when: Expr,
}

/// A pool member's serving options, compiled.
#[derive(Clone, Debug, PartialEq)]
pub struct PoolCode {
    /// `block b`.
    pub block: Option<f64>,
    /// `evict by (k…)` keys (`None`: `evict lru`).
    pub evict: Option<Box<[Expr]>>,
    /// Whether the eviction keys or spill clause read an attribute or
    /// `waiting`, or the pool spills into one whose do (entries then keep
    /// what their owner was).
    pub evict_reads_owner: bool,
    /// `queue by (k…)` keys (`None`: fifo).
    pub queue: Option<Box<[Expr]>>,
    /// Whether the queue keys read state (`waited`, the clock, an
    /// observable), so the head may change while nobody joins or leaves.
    pub queue_reads_state: bool,
    /// `spill`.
    pub spill: Option<SpillCode>,
    /// `preempt lifo`.
    pub lifo: bool,
    /// `admit via E`: the stage member that admits this queue.
    pub admit_via: Option<u32>,
    /// The step stage members whose `memory` this is.
    pub memory_of: Box<[u32]>,
}

/// The compiled program, a resource of the run.
#[derive(Resource, Clone, Debug)]
pub struct Code {
    /// The program (names, the run options, the arrival).
    pub program: Program,
    /// Every block's statements.
    pub blocks: Vec<Vec<Stmt>>,
    /// Every stage's ps capacity (`None` for other kinds).
    pub capacity: Vec<Option<Expr>>,
    /// The renewal gap, if the workload is a renewal.
    pub renewal: Option<Expr>,
    /// The rate of `poisson(rate) peak (r)`, and its peak (an extension).
    pub thinned: Option<(Expr, f64)>,
    /// Every stage's step options (`None` for other kinds).
    pub steps: Vec<Option<StepCode>>,
    /// Every pool member's serving options.
    pub pools: Vec<PoolCode>,
    /// Whether any pool has a cache to keep (some hold caches or any
    /// pool spills): without one, admissions skip the cache entirely.
    pub caching: bool,
    /// Whether any pool preempts (`preempt lifo`): only then does a
    /// session's latest stage or a hold's end matter to a preemption.
    pub preempts: bool,
    /// For each stage member, the pool members it admits for (`admit
    /// via`), in pool declaration order.
    pub admits: Vec<Vec<u32>>,
    /// Whether any expression reads a stage's estimators (`est_lambda`,
    /// `est_rho`, `est_wait`, `price`): without one, completions need not
    /// update them.
    pub estimates: bool,
    /// Each attribute slot's column in a session's row ([`NO_COLUMN`] for
    /// a slot nothing reads: its writes are dropped). The compiled forms
    /// name columns, not slots.
    pub columns: Vec<u32>,
    /// The columns of a row: the slots something reads.
    pub width: usize,
}

/// The column of a slot that nothing reads (a row's `get` of it is `None`).
pub const NO_COLUMN: u32 = u32::MAX;

/// A step stage's compiled expressions, serve order and memory.
fn step_code(stage: &ir::Stage) -> Option<StepCode> {
    let ir::StageKind::Step(step) = &stage.kind else {
        return None;
    };
    Some(StepCode {
        budget: expr(&step.budget),
        cost: expr(&step.cost),
        chunk: expr(&step.chunk),
        keys: match &step.serve {
            ir::Serve::By(keys) => keys.iter().map(expr).collect(),
            ir::Serve::ExclusivePrefill => Box::default(),
        },
        exclusive: step.serve == ir::Serve::ExclusivePrefill,
        memory: step.memory.map(|m| m as u32),
    })
}

/// Every pool's compiled keys and clauses. A pool that spills into one
/// whose keys read owners keeps its entries' owners too: a spilled piece
/// takes its entry's owner along (chains are acyclic: link refuses a
/// spill cycle).
fn pool_codes(program: &ir::Program) -> Vec<PoolCode> {
    let mut pools: Vec<PoolCode> = program
        .pools
        .iter()
        .enumerate()
        .map(|(p, pool)| pool_code(program, p, pool))
        .collect();
    let mut changed = true;
    while changed {
        changed = false;
        for p in 0..pools.len() {
            let into = pools[p].spill.as_ref().map(|s| s.to as usize);
            if !pools[p].evict_reads_owner && into.is_some_and(|t| pools[t].evict_reads_owner) {
                pools[p].evict_reads_owner = true;
                changed = true;
            }
        }
    }
    pools
}

/// Pool member `p`'s compiled keys and clauses (its own keys' reads of
/// owners; [`pool_codes`] adds its spill chain's).
fn pool_code(program: &ir::Program, p: usize, pool: &ir::Pool) -> PoolCode {
    let evict = match &pool.evict {
        ir::Evict::Lru => None,
        ir::Evict::By(keys) => Some(keys.iter().map(expr).collect()),
    };
    let evict_reads_owner = match &pool.evict {
        ir::Evict::Lru => false,
        ir::Evict::By(keys) => keys.iter().any(reads_owner),
    } || pool
        .spill
        .as_ref()
        .is_some_and(|s| reads_owner(&s.work) || reads_owner(&s.when));
    PoolCode {
        block: pool.block,
        evict,
        evict_reads_owner,
        queue: pool.queue.as_ref().map(|k| k.iter().map(expr).collect()),
        queue_reads_state: pool
            .queue
            .as_ref()
            .is_some_and(|k| k.iter().any(ir::Expr::reads_state)),
        spill: pool.spill.as_ref().map(|s| SpillCode {
            to: s.to as u32,
            via: s.via as u32,
            work: expr(&s.work),
            when: expr(&s.when),
        }),
        lifo: pool.preempt == ir::Preempt::Lifo,
        admit_via: pool.admit_via.map(|s| s as u32),
        memory_of: program
            .stages
            .iter()
            .enumerate()
            .filter(|(_, s)| matches!(&s.kind, ir::StageKind::Step(st) if st.memory == Some(p)))
            .map(|(i, _)| i as u32)
            .collect(),
    }
}

impl Code {
    /// Compiles every expression and statement of `program`.
    pub fn new(program: &ValidProgram) -> Code {
        let program = program.program().clone();
        let blocks = program
            .blocks
            .iter()
            .map(|b| b.iter().map(stmt).collect())
            .collect();
        let capacity = program
            .stages
            .iter()
            .map(|s| match &s.kind {
                ir::StageKind::Ps(e) => Some(expr(e)),
                _ => None,
            })
            .collect();
        let renewal = match &program.arrival {
            ir::Arrival::Renewal(e) => Some(expr(e)),
            _ => None,
        };
        let thinned = match &program.arrival {
            ir::Arrival::Thinned(t) => Some((expr(&t.rate), t.peak)),
            _ => None,
        };
        let steps = program.stages.iter().map(step_code).collect();
        let pools = pool_codes(&program);
        let caching = program.pools.iter().any(|p| p.spill.is_some())
            || program
                .blocks
                .iter()
                .flatten()
                .any(|s| matches!(s, ir::Stmt::Hold { cache: Some(_), .. }));
        let preempts = pools.iter().any(|p| p.lifo);
        let mut admits = vec![Vec::new(); program.stages.len()];
        for (p, pool) in program.pools.iter().enumerate() {
            if let Some(s) = pool.admit_via {
                admits[s].push(p as u32);
            }
        }
        let estimates = program.exprs().into_iter().any(reads_estimates);
        let mut code = Code {
            program,
            blocks,
            capacity,
            renewal,
            thinned,
            steps,
            pools,
            caching,
            preempts,
            admits,
            estimates,
            columns: Vec::new(),
            width: 0,
        };
        code.keep_read_columns();
        code
    }

    /// The column of attribute slot `slot` (beyond the row when nothing
    /// reads it, so a row's `get` of it is `None`).
    #[inline]
    pub fn column(&self, slot: usize) -> usize {
        // NO_COLUMN is beyond every row's width too.
        self.columns.get(slot).map_or(usize::MAX, |&c| c as usize)
    }

    /// Gives a column only to the slots something reads: an expression, a
    /// `choose` (its candidates are set and read by its keys), the `turn`
    /// counter when a `turn;` runs or a `set` writes it (the engine reads
    /// it). A `batch(10^7)` of a program that reads no attribute then
    /// carries no row at all; what is written and never read is dropped.
    fn keep_read_columns(&mut self) {
        let mut read = vec![false; self.program.attrs.len()];
        let mut turn = false;
        self.slots(&mut |slot, access| match access {
            Access::Read => read[*slot as usize] = true,
            Access::Write => turn |= *slot as usize == ir::SLOT_TURN,
        });
        turn |= self
            .blocks
            .iter()
            .flatten()
            .any(|s| matches!(s, Stmt::Turn));
        if let Some(t) = read.get_mut(ir::SLOT_TURN) {
            *t |= turn;
        }
        let mut width = 0;
        let columns: Vec<u32> = read
            .iter()
            .map(|&r| {
                if r {
                    width += 1;
                    width - 1
                } else {
                    NO_COLUMN
                }
            })
            .collect();
        self.slots(&mut |slot, _| *slot = columns[*slot as usize]);
        self.columns = columns;
        self.width = width as usize;
    }

    /// Calls `f` on every attribute slot of the compiled forms.
    fn slots(&mut self, f: &mut dyn FnMut(&mut u32, Access)) {
        for s in self.blocks.iter_mut().flatten() {
            s.slots(f);
        }
        for e in self.capacity.iter_mut().flatten() {
            e.slots(f);
        }
        if let Some(e) = &mut self.renewal {
            e.slots(f);
        }
        if let Some((e, _)) = &mut self.thinned {
            e.slots(f);
        }
        for step in self.steps.iter_mut().flatten() {
            step.budget.slots(f);
            step.cost.slots(f);
            step.chunk.slots(f);
            step.keys.iter_mut().for_each(|k| k.slots(f));
        }
        for pool in &mut self.pools {
            pool.evict.iter_mut().flatten().for_each(|k| k.slots(f));
            pool.queue.iter_mut().flatten().for_each(|k| k.slots(f));
            if let Some(spill) = &mut pool.spill {
                spill.work.slots(f);
                spill.when.slots(f);
            }
        }
    }
}

/// How a compiled form uses an attribute slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Access {
    /// Its value is read.
    Read,
    /// It is only written.
    Write,
}

impl Stmt {
    fn slots(&mut self, f: &mut dyn FnMut(&mut u32, Access)) {
        match self {
            Stmt::Set(target, x) => {
                f(target, Access::Write);
                x.slots(f);
            }
            Stmt::Observe(_, x) | Stmt::Branch(x, ..) => x.slots(f),
            Stmt::Turn | Stmt::End | Stmt::Loop(_) => {}
            Stmt::Hold {
                pools,
                lease,
                reuse,
                cache,
                ..
            } => {
                for p in pools.iter_mut() {
                    p.pool.slots(f);
                    p.units.slots(f);
                    if let Some(r) = &mut p.reserve {
                        r.slots(f);
                    }
                }
                if let Some((_, x)) = lease {
                    x.slots(f);
                }
                for x in [reuse, cache].into_iter().flatten() {
                    x.slots(f);
                }
            }
            Stmt::Grow(m, x) | Stmt::Load(m, x) => {
                m.slots(f);
                x.slots(f);
            }
            Stmt::Release(m) | Stmt::Drop(m) => m.slots(f),
            Stmt::Run {
                stage,
                work,
                also,
                growing,
                ..
            } => {
                stage.slots(f);
                work.slots(f);
                also.iter_mut().for_each(|m| m.slots(f));
                if let Some(m) = growing {
                    m.slots(f);
                }
            }
            Stmt::Choose { var, count, key } => {
                f(var, Access::Read);
                count.slots(f);
                key.iter_mut().for_each(|k| k.slots(f));
            }
        }
    }
}

impl Member {
    fn slots(&mut self, f: &mut dyn FnMut(&mut u32, Access)) {
        if let Some(x) = &mut self.index {
            x.slots(f);
        }
    }
}

impl Expr {
    fn slots(&mut self, f: &mut dyn FnMut(&mut u32, Access)) {
        match self {
            Expr::Num(_) | Expr::Now | Expr::Draw(..) | Expr::Observe(..) => {}
            Expr::Attr(slot) | Expr::ObserveAttr(_, _, _, slot) => f(slot, Access::Read),
            Expr::Binary(_, a, b) => {
                for l in [a, b] {
                    if let Leaf::Attr(slot) = l {
                        f(slot, Access::Read);
                    }
                }
            }
            Expr::Ops(ops) => {
                for op in ops.iter_mut() {
                    if let Op::Attr(slot) = op {
                        f(slot, Access::Read);
                    }
                }
            }
        }
    }
}

/// Whether an expression reads a stage's estimators.
fn reads_estimates(e: &ir::Expr) -> bool {
    let mut reads = false;
    e.visit(&mut |x| {
        reads |= matches!(
            x,
            ir::Expr::Call(
                ir::Fun::EstLambda | ir::Fun::EstRho | ir::Fun::EstWait | ir::Fun::Price,
                _
            )
        );
    });
    reads
}

/// Whether an eviction key or spill clause reads what its entry's owner
/// was: an attribute, or `waiting`.
fn reads_owner(e: &ir::Expr) -> bool {
    let mut reads = false;
    e.visit(&mut |x| {
        reads |= matches!(x, ir::Expr::Attr(_) | ir::Expr::Ctx(ir::Ctx::Waiting));
    });
    reads
}

fn member(r: &CRef) -> Member {
    Member {
        base: r.base as u32,
        count: r.count as u32,
        index: r.index.as_ref().map(expr),
    }
}

fn stmt(s: &ir::Stmt) -> Stmt {
    match s {
        ir::Stmt::Set(t, e) => Stmt::Set(*t as u32, expr(e)),
        ir::Stmt::Observe(t, e) => Stmt::Observe(*t as u32, expr(e)),
        ir::Stmt::Turn => Stmt::Turn,
        ir::Stmt::End => Stmt::End,
        ir::Stmt::Hold {
            pools,
            body,
            lease,
            reuse,
            cache,
        } => Stmt::Hold {
            pools: pools
                .iter()
                .map(|hp| HoldPool {
                    pool: member(&hp.0),
                    units: expr(&hp.1),
                    reserve: hp.2.as_ref().map(expr),
                })
                .collect(),
            body: *body as u32,
            lease: lease.as_ref().and_then(|(r, t)| {
                let i = pools.iter().position(|hp| hp.0 == *r)?;
                Some((i, expr(t)))
            }),
            reads_no_state: pools
                .iter()
                .all(|hp| !hp.1.reads_state() && !hp.2.as_ref().is_some_and(ir::Expr::reads_state)),
            reuse: reuse.as_ref().map(expr),
            cache: cache.as_ref().map(expr),
        },
        ir::Stmt::Grow(r, e) => Stmt::Grow(member(r), expr(e)),
        ir::Stmt::Load(r, e) => Stmt::Load(member(r), expr(e)),
        ir::Stmt::Release(r) => Stmt::Release(member(r)),
        ir::Stmt::Drop(r) => Stmt::Drop(member(r)),
        ir::Stmt::Run {
            stage,
            mode,
            work,
            growing,
            also,
        } => Stmt::Run {
            stage: member(stage),
            work: expr(work),
            also: also.iter().map(member).collect(),
            mode: *mode,
            growing: growing.as_ref().map(member),
        },
        ir::Stmt::Branch(g, t, e) => Stmt::Branch(expr(g), *t as u32, *e as u32),
        ir::Stmt::Loop(b) => Stmt::Loop(*b as u32),
        ir::Stmt::Choose { var, count, key } => Stmt::Choose {
            var: *var as u32,
            count: expr(count),
            key: key.iter().map(expr).collect(),
        },
    }
}

/// Compiles an expression.
pub fn expr(e: &ir::Expr) -> Expr {
    match e {
        ir::Expr::Num(x) => Expr::Num(*x),
        ir::Expr::Attr(slot) => Expr::Attr(*slot as u32),
        ir::Expr::Ctx(ir::Ctx::Now) => Expr::Now,
        // The two most common shapes skip the stack machine.
        ir::Expr::Sample(dist, args) if constant(args, 0).zip(constant(args, 1)).is_some() => {
            let (a, b) = constant(args, 0).zip(constant(args, 1)).unwrap_or_default();
            Expr::Draw(*dist, a, b)
        }
        ir::Expr::Call(fun, args) if observable(*fun).is_some() => {
            let reference = match args.first() {
                Some(Arg::Stage(r) | Arg::Pool(r)) => Some(r),
                _ => None,
            };
            match (observable(*fun), reference) {
                (Some(what), Some(r)) => match &r.index {
                    None => Expr::Observe(what, r.base as u32),
                    Some(ir::Expr::Attr(slot)) => {
                        Expr::ObserveAttr(what, r.base as u32, r.count as u32, *slot as u32)
                    }
                    Some(_) => ops_of(e),
                },
                // The validator gives every observable its one reference.
                _ => Expr::Num(f64::NAN),
            }
        }
        ir::Expr::Binary(op, a, b)
            if !matches!(op, BinOp::And | BinOp::Or) && leaf(a).is_some() && leaf(b).is_some() =>
        {
            match (leaf(a), leaf(b)) {
                (Some(a), Some(b)) => Expr::Binary(*op, a, b),
                _ => Expr::Num(f64::NAN),
            }
        }
        _ => ops_of(e),
    }
}

/// Flat code for the stack machine.
fn ops_of(e: &ir::Expr) -> Expr {
    let mut ops = Vec::new();
    emit(e, &mut ops);
    Expr::Ops(ops.into_boxed_slice())
}

/// What an observable function of one member reads (`None`: a pure
/// function, or `price`, which reads two numbers besides its member).
fn observable(fun: Fun) -> Option<Observable> {
    Some(match fun {
        Fun::Queue => Observable::Queue,
        Fun::Busy => Observable::Busy,
        Fun::Work => Observable::Work,
        Fun::Used => Observable::Used,
        Fun::Free => Observable::Free,
        Fun::Holders => Observable::Holders,
        Fun::Queued => Observable::Queued,
        Fun::CachedIn => Observable::CachedIn,
        Fun::BudgetLeft => Observable::BudgetLeft,
        Fun::EstLambda => Observable::EstLambda,
        Fun::EstRho => Observable::EstRho,
        Fun::EstWait => Observable::EstWait,
        _ => return None,
    })
}

/// The constant value of a distribution's parameter `i`, if it is a number.
fn constant(args: &[ir::Expr], i: usize) -> Option<f64> {
    match args.get(i) {
        Some(ir::Expr::Num(x)) => Some(*x),
        None => Some(f64::NAN),
        _ => None,
    }
}

fn emit(e: &ir::Expr, ops: &mut Vec<Op>) {
    match e {
        ir::Expr::Num(x) => ops.push(Op::Num(*x)),
        ir::Expr::Attr(slot) => ops.push(Op::Attr(*slot as u32)),
        ir::Expr::Ctx(ir::Ctx::Now) => ops.push(Op::Now),
        ir::Expr::Ctx(ir::Ctx::N) => ops.push(Op::Present),
        ir::Expr::Ctx(c) => ops.push(Op::Ctx(ctx_index(*c) as u8)),
        ir::Expr::Sample(dist, args) => {
            if let (Some(a), Some(b)) = (constant(args, 0), constant(args, 1)) {
                ops.push(Op::SampleConst(*dist, a, b));
            } else {
                for a in args {
                    emit(a, ops);
                }
                ops.push(Op::Sample(*dist));
            }
        }
        ir::Expr::Call(fun, args) => call(*fun, args, ops),
        ir::Expr::Unary(op, a) => {
            emit(a, ops);
            ops.push(Op::Unary(*op));
        }
        ir::Expr::Binary(BinOp::And, a, b) | ir::Expr::Binary(BinOp::Or, a, b) => {
            let is_and = matches!(e, ir::Expr::Binary(BinOp::And, ..));
            emit(a, ops);
            let jump = ops.len();
            ops.push(Op::Jump(0));
            emit(b, ops);
            ops.push(Op::Truthy);
            let end = ops.len() as u32;
            ops[jump] = if is_and {
                Op::AndJump(end)
            } else {
                Op::OrJump(end)
            };
        }
        ir::Expr::Binary(op, a, b) => {
            emit(a, ops);
            emit(b, ops);
            ops.push(Op::Binary(*op));
        }
        ir::Expr::Cond(c, a, b) => {
            emit(c, ops);
            let to_else = ops.len();
            ops.push(Op::JumpIfFalse(0));
            emit(a, ops);
            let to_end = ops.len();
            ops.push(Op::Jump(0));
            ops[to_else] = Op::JumpIfFalse(ops.len() as u32);
            emit(b, ops);
            ops[to_end] = Op::Jump(ops.len() as u32);
        }
    }
}

fn call(fun: Fun, args: &[Arg], ops: &mut Vec<Op>) {
    let observable = match observable(fun) {
        Some(what) => what,
        None if fun == Fun::Price => {
            // `price(s, a, b)`: the two numbers first, then the member.
            for a in &args[1..] {
                if let Arg::Expr(e) = a {
                    emit(e, ops);
                }
            }
            Observable::Price
        }
        None => {
            for a in args {
                if let Arg::Expr(e) = a {
                    emit(e, ops);
                }
            }
            ops.push(if args.len() > 1 {
                Op::Pure2(fun)
            } else {
                Op::Pure1(fun)
            });
            return;
        }
    };
    let (Some(Arg::Stage(r)) | Some(Arg::Pool(r))) = args.first() else {
        // The validator gives every observable its one reference.
        ops.push(Op::Num(f64::NAN));
        return;
    };
    match &r.index {
        None => ops.push(Op::Observe(observable, r.base as u32)),
        Some(i) => {
            emit(i, ops);
            ops.push(Op::ObserveAt(observable, r.base as u32, r.count as u32));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compiled(source: &str) -> Code {
        let program = crate::compile_source(source, &crate::Overrides::default()).expect("links");
        Code::new(&program)
    }

    #[test]
    fn a_choose_key_compiles_to_an_array_read_at_an_attribute() {
        let code = compiled(
            "stage P[4] : fifo; workload { arrive batch(1); }
             session { choose i in 4 by (queue(P[i]), ~uniform(0, 1)); run P[i] (1); }
             run { horizon 5; }",
        );
        let Stmt::Choose { key, .. } = &code.blocks[2][0] else {
            panic!("{:?}", code.blocks[2]);
        };
        // `i` is the first user attribute (slot 9, after the nine
        // built-ins) and the only one read: column 0.
        assert_eq!(code.column(9), 0);
        assert_eq!(code.width, 1);
        assert_eq!(key[0], Expr::ObserveAttr(Observable::Queue, 0, 4, 0));
        assert_eq!(key[1], Expr::Draw(Dist::Uniform, 0.0, 1.0));
    }

    #[test]
    fn a_row_has_columns_only_for_the_slots_something_reads() {
        let code = compiled(
            "stage S : delay; workload { arrive batch(1); }
             session { set a = 1; set b = a + serial; choose j in 2 by (~uniform(0, 1));
                       run S (1); }
             run { horizon 5; }",
        );
        // Read: `serial` (slot 1, by `b`'s expression), `a` (slot 9) and the
        // `choose` candidate `j` (slot 11); `b` (slot 10) is only written.
        // In slot order: serial 0, a 1, j 2.
        assert_eq!(code.width, 3);
        assert_eq!(
            [1, 9, 10, 11].map(|s| code.column(s)),
            [0, 1, NO_COLUMN as usize, 2]
        );
        assert_eq!(code.column(ir::SLOT_TURN), NO_COLUMN as usize);
        let Stmt::Set(target, _) = &code.blocks[2][1] else {
            panic!("{:?}", code.blocks[2]);
        };
        assert_eq!(*target, NO_COLUMN);
        // A `turn;` keeps the turn counter: the engine reads it.
        let code = compiled(
            "stage S : delay; workload { arrive batch(1); }
             session { turn; run S (1); }
             run { horizon 5; }",
        );
        assert_eq!((code.width, code.column(ir::SLOT_TURN)), (1, 0));
    }
}
