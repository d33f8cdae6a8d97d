//! The syntax tree: what the parser builds and the linker reads.
//!
//! Architecture invariant: the AST is the program as written (sugar
//! included, names unresolved); every node keeps the span of its text.

/// A byte range in the source text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Span {
    /// First byte.
    pub start: u32,
    /// One past the last byte.
    pub end: u32,
}

impl Span {
    /// The span from `a`'s start to `b`'s end.
    pub fn join(a: Span, b: Span) -> Span {
        Span {
            start: a.start.min(b.start),
            end: a.end.max(b.end),
        }
    }
}

/// A name as written.
#[derive(Clone, Debug, PartialEq)]
pub struct Ident {
    /// The name.
    pub name: String,
    /// Where it is written.
    pub span: Span,
}

/// A whole program: its items in source order.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Program {
    /// Top-level declarations.
    pub items: Vec<Item>,
}

/// A top-level declaration.
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    /// `let NAME = expr;`
    Let {
        /// The constant's name.
        name: Ident,
        /// Its initializer.
        value: Expr,
        /// The whole item.
        span: Span,
    },
    /// `def NAME(params) = expr;` or `def NAME(params) { stmts }`
    Def {
        /// The definition's name.
        name: Ident,
        /// Its parameters in order.
        params: Vec<Ident>,
        /// An expression or a block of statements.
        body: DefBody,
        /// The whole item.
        span: Span,
    },
    /// `pool NAME [N] { options }`
    Pool {
        /// The pool's (family's) name.
        name: Ident,
        /// The member count of an array, if written.
        size: Option<Expr>,
        /// The options in order (repeats kept for the linker to refuse).
        options: Vec<PoolOption>,
        /// The whole item.
        span: Span,
    },
    /// `stage NAME [N] : kind;`
    Stage {
        /// The stage's (family's) name.
        name: Ident,
        /// The member count of an array, if written.
        size: Option<Expr>,
        /// How it serves jobs.
        kind: StageKind,
        /// The whole item.
        span: Span,
    },
    /// `share maxmin;` (the policy word as written, checked by the linker)
    Share {
        /// `maxmin`, `bottleneck`, or a word the linker refuses.
        policy: Ident,
        /// The whole item.
        span: Span,
    },
    /// `workload { … }`
    Workload {
        /// `arrive`, `init` and `turn` in order.
        items: Vec<WorkloadItem>,
        /// The whole item.
        span: Span,
    },
    /// `session { … }`
    Session {
        /// The program every session runs.
        body: Block,
        /// The whole item.
        span: Span,
    },
    /// `run { horizon H; … }`
    Run {
        /// The options in order (unknown words kept for the linker to refuse).
        options: Vec<Opt>,
        /// The whole item.
        span: Span,
    },
    /// `server { … }`: the statements every `request;` splices (spec §8.8).
    Server {
        /// The server's statements.
        body: Block,
        /// The whole item.
        span: Span,
    },
    /// `use "path";`: a library of `def`s (spec §9), spliced in its place
    /// before linking.
    Use {
        /// The path as written.
        path: String,
        /// The whole item.
        span: Span,
    },
    /// `use <name>;`: a library shipped inside serq (an extension, see
    /// [`crate::syntax::shipped`]), spliced in its place before linking.
    UseShipped {
        /// The library's name, without the angle brackets.
        name: String,
        /// The whole item.
        span: Span,
    },
}

impl Item {
    /// The item's whole text.
    pub fn span(&self) -> Span {
        match self {
            Item::Let { span, .. }
            | Item::Def { span, .. }
            | Item::Pool { span, .. }
            | Item::Stage { span, .. }
            | Item::Share { span, .. }
            | Item::Workload { span, .. }
            | Item::Session { span, .. }
            | Item::Run { span, .. }
            | Item::Server { span, .. }
            | Item::Use { span, .. }
            | Item::UseShipped { span, .. } => *span,
        }
    }
}

/// The body of a `def`.
#[derive(Clone, Debug, PartialEq)]
pub enum DefBody {
    /// An expression definition.
    Expr(Expr),
    /// A statement definition.
    Block(Block),
}

/// A named option with a value: a pool's `cap e;`, a run block's `horizon e;`.
#[derive(Clone, Debug, PartialEq)]
pub struct Opt {
    /// The option's word as written (`cap`, `horizon`, …; checked by the linker).
    pub name: Ident,
    /// Its value.
    pub value: Expr,
    /// The whole option.
    pub span: Span,
}

/// An option of a pool (spec §3.3, §8.3).
#[derive(Clone, Debug, PartialEq)]
pub enum PoolOption {
    /// `cap e;`, `block e;`, or an unknown `WORD e;` (the linker refuses it).
    Value(Opt),
    /// `evict lru;` (no keys) or `evict by (k…);`
    Evict {
        /// The keys of `evict by`; `None` for `lru`.
        by: Option<Vec<Expr>>,
        /// The whole option.
        span: Span,
    },
    /// `preempt none;` or `preempt lifo;`
    Preempt {
        /// Whether it is `lifo`.
        lifo: bool,
        /// The whole option.
        span: Span,
    },
    /// `queue fifo;` (no keys) or `queue by (k…);`
    Queue {
        /// The keys of `queue by`; `None` for `fifo`.
        by: Option<Vec<Expr>>,
        /// The whole option.
        span: Span,
    },
    /// `admit via E;`
    AdmitVia {
        /// The step stage (family) that admits this pool's queue.
        stage: Ident,
        /// The whole option.
        span: Span,
    },
    /// `spill T via L (w) when (c);`
    Spill {
        /// The pool (family) that receives evicted pieces.
        to: Ident,
        /// The stage (family) a job per piece runs on.
        via: Ident,
        /// That job's work.
        work: Expr,
        /// Whether a piece spills.
        when: Expr,
        /// The whole option.
        span: Span,
    },
}

impl PoolOption {
    /// The option's word (`cap`, `evict`, `admit via`, …), for messages.
    pub fn word(&self) -> &str {
        match self {
            PoolOption::Value(o) => &o.name.name,
            PoolOption::Evict { .. } => "evict",
            PoolOption::Preempt { .. } => "preempt",
            PoolOption::Queue { .. } => "queue",
            PoolOption::AdmitVia { .. } => "admit via",
            PoolOption::Spill { .. } => "spill",
        }
    }

    /// The whole option.
    pub fn span(&self) -> Span {
        match self {
            PoolOption::Value(o) => o.span,
            PoolOption::Evict { span, .. }
            | PoolOption::Preempt { span, .. }
            | PoolOption::Queue { span, .. }
            | PoolOption::AdmitVia { span, .. }
            | PoolOption::Spill { span, .. } => *span,
        }
    }
}

/// A stage's kind as written.
#[derive(Clone, Debug, PartialEq)]
pub enum StageKind {
    /// `delay`
    Delay(Span),
    /// `fifo` or `fifo(c)`
    Fifo(Option<Expr>, Span),
    /// `ps(φ)`
    Ps(Expr, Span),
    /// `step { options }` (spec §8.1)
    Step(Vec<StepOption>, Span),
}

/// An option of a step stage (spec §8.1).
#[derive(Clone, Debug, PartialEq)]
pub enum StepOption {
    /// `budget e;`, `cost e;`, `chunk e;`, or an unknown `WORD e;` (the
    /// linker refuses it).
    Value(Opt),
    /// `memory P;`
    Memory {
        /// The pool (family) whose units the engine's totals count.
        pool: Ident,
        /// The whole option.
        span: Span,
    },
    /// `serve …;`
    Serve {
        /// The order.
        order: ServeOrder,
        /// The whole option.
        span: Span,
    },
}

impl StepOption {
    /// The option's word (`budget`, `memory`, `serve`, …), for messages.
    pub fn word(&self) -> &str {
        match self {
            StepOption::Value(o) => &o.name.name,
            StepOption::Memory { .. } => "memory",
            StepOption::Serve { .. } => "serve",
        }
    }

    /// The whole option.
    pub fn span(&self) -> Span {
        match self {
            StepOption::Value(o) => o.span,
            StepOption::Memory { span, .. } | StepOption::Serve { span, .. } => *span,
        }
    }
}

/// The order a step stage serves its residents in, as written.
#[derive(Clone, Debug, PartialEq)]
pub enum ServeOrder {
    /// `serve admission;`
    Admission,
    /// `serve decode first;`
    DecodeFirst,
    /// `serve exclusive prefill;`
    ExclusivePrefill,
    /// `serve by (k…);`
    By(Vec<Expr>),
}

/// An item of the `workload` block.
#[derive(Clone, Debug, PartialEq)]
pub enum WorkloadItem {
    /// `arrive poisson(e);` etc.; `law` is the word as written, `arg` absent for `none`.
    Arrive {
        /// The law's word as written (`poisson`, `renewal`, `closed`, `batch`, `none`, `trace`).
        law: Ident,
        /// Its argument; absent for `none` and `trace`.
        arg: Option<Expr>,
        /// `arrive trace "FILE"` (an extension): the file as written.
        path: Option<String>,
        /// The clauses after the law (extensions): `peak (r)`, `speed (x)`,
        /// `window (a, b)`, as written.
        clauses: Vec<ArriveClause>,
        /// The whole item.
        span: Span,
    },
    /// `init { … }`
    Init(Block, Span),
    /// `turn { … }`
    Turn(Block, Span),
    /// `hidden a, b;` (spec §8.5)
    Hidden(Vec<Ident>, Span),
    /// `trace "file.csv" [ordered];` (spec §8.7)
    Trace {
        /// The file as written.
        path: String,
        /// Whether session i replays corpus session i mod n.
        ordered: bool,
        /// The whole item.
        span: Span,
    },
    /// `session { … }` in a workload: the client side of `server`/`request` (spec §8.8).
    Session(Block, Span),
}

/// A clause after an arrival law (a serq extension): `peak (r)`, `speed
/// (x)`, `window (a, b)`. The words are contextual: only here, before the
/// `;`, are they read as clauses.
#[derive(Clone, Debug, PartialEq)]
pub struct ArriveClause {
    /// The clause's word.
    pub word: Ident,
    /// Its arguments in parentheses.
    pub args: Vec<Expr>,
    /// From the word to `)`.
    pub span: Span,
}

/// `{ stmts }`
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    /// The statements in order.
    pub stmts: Vec<Stmt>,
    /// From `{` to `}`.
    pub span: Span,
}

/// A statement with its span.
#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    /// What it is.
    pub kind: StmtKind,
    /// Its text, from the first token to the last.
    pub span: Span,
    /// For a statement spliced from a statement `def`, the outermost use
    /// it was spliced at: where a serving form looks for the stages
    /// "declared above" it (spec §8.6). `None` as parsed.
    pub site: Option<Span>,
}

/// A reference to a pool or stage: `name` or `name[index]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Ref {
    /// The pool's or stage's name.
    pub name: Ident,
    /// The member, if written.
    pub index: Option<Expr>,
    /// The whole reference.
    pub span: Span,
}

/// One pool of a hold: `p (u) [reserve (r)]`.
#[derive(Clone, Debug, PartialEq)]
pub struct HoldPool {
    /// The pool.
    pub pool: Ref,
    /// The units held.
    pub units: Expr,
    /// The reserve that gates admission.
    pub reserve: Option<Expr>,
}

/// How a serving form (`transfer`, `prefill`, `decode`, `tool`) names its stage.
#[derive(Clone, Debug, PartialEq)]
pub enum TransferTarget {
    /// `transfer (X) …`: the unique stage declared above that plays the role.
    Role,
    /// `transfer[j] (X) …`: a member of that stage.
    Indexed(Expr),
    /// `transfer on S1, S2 (X) …` (the other forms name one stage).
    On(Vec<Ref>),
}

/// The mode of a run on a step stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunMode {
    /// `prefill`: tokens taken in chunks.
    Prefill,
    /// `decode`: one token per iteration.
    Decode,
}

/// The role a serving statement plays (spec §8.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// `prefill W;`
    Prefill,
    /// `decode W;`
    Decode,
    /// `tool W;`
    Tool,
}

impl Role {
    /// The role's word.
    pub fn word(self) -> &'static str {
        match self {
            Role::Prefill => "prefill",
            Role::Decode => "decode",
            Role::Tool => "tool",
        }
    }
}

/// One binding of `at admission (x = e, …)`.
#[derive(Clone, Debug, PartialEq)]
pub struct Binding {
    /// The name bound.
    pub name: Ident,
    /// Its value, read at admission.
    pub value: Expr,
}

/// A statement.
#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    /// `set x = e;`
    Set {
        /// The attribute assigned.
        name: Ident,
        /// Its new value.
        value: Expr,
    },
    /// `observe o = e;`
    Observe {
        /// The observation's name.
        name: Ident,
        /// The value recorded.
        value: Expr,
    },
    /// `turn;`
    Turn,
    /// `end;`
    End,
    /// `hold p (u) [reserve (r)], … [reuse (ρ)] [at admission (x = e, …)]
    /// { body } [cache (ℓ)] [lease p (t)] [;]`
    Hold {
        /// The pools in order; the first one's queue is where the hold waits.
        pools: Vec<HoldPool>,
        /// At most this many cached units are consumed at admission.
        reuse: Option<Expr>,
        /// The `at admission` bindings, in order.
        bindings: Vec<Binding>,
        /// The scope of the allocation.
        body: Block,
        /// Units kept as the session's cached entry at release.
        cache: Option<Expr>,
        /// The pool kept as a lease after the body, and the lease's length.
        lease: Option<(Ref, Expr)>,
    },
    /// `grow p (d);`
    Grow {
        /// The pool, written as its hold writes it.
        pool: Ref,
        /// The units added.
        amount: Expr,
    },
    /// `load p (n);`
    Load {
        /// The pool, written as its hold writes it.
        pool: Ref,
        /// How far the computed position advances.
        amount: Expr,
    },
    /// `release p;`
    Release {
        /// The pool given back (a hold's, else a lease's).
        pool: Ref,
    },
    /// `drop p;`: discards the session's live cached entry in p.
    Drop {
        /// The pool.
        pool: Ref,
    },
    /// `request;`: the server's statements, spliced (spec §8.8).
    Request,
    /// `run s [prefill|decode] (w) [growing p];` or `run s1, s2, … (w);`
    Run {
        /// One stage, or several held at once (a flow).
        stages: Vec<Ref>,
        /// The mode (a run on a step stage needs one), with its word's span.
        mode: Option<(RunMode, Span)>,
        /// The work.
        work: Expr,
        /// The pool whose hold grows as the tokens are computed.
        growing: Option<Ref>,
    },
    /// `prefill W;`, `decode[j] W;`, `tool on S (W);` … (spec §8.6)
    Serving {
        /// Which role's stage runs it.
        role: Role,
        /// How the stage is named.
        target: TransferTarget,
        /// The tokens (or work).
        work: Expr,
        /// The pool whose hold grows as the tokens are computed.
        growing: Option<Ref>,
    },
    /// `branch (g) {…} [else {…}]`, or `branch with (p) …` when `with` is set.
    Branch {
        /// The test (0 or 1), or the probability under `with`.
        guard: Expr,
        /// Whether it is `branch with (p)`.
        with: bool,
        /// Taken when the guard is 1.
        then: Block,
        /// The `else` block, if written.
        otherwise: Option<Block>,
    },
    /// `loop { … }`
    Loop {
        /// Repeated until the session ends.
        body: Block,
    },
    /// `choose j in n by (k1, …);`
    Choose {
        /// The attribute set to the chosen index.
        var: Ident,
        /// How many candidates.
        count: Expr,
        /// The key tuple; the smallest wins.
        keys: Vec<Expr>,
    },
    /// `name(args);`: a use of a statement definition.
    Call {
        /// The statement definition used.
        name: Ident,
        /// Its arguments.
        args: Vec<Expr>,
    },
    /// `transfer … (X) from P to Q (n);`
    Transfer {
        /// How the stage is named.
        target: TransferTarget,
        /// The bytes moved, in the stages' unit.
        work: Expr,
        /// The pool released at the end.
        from: Ref,
        /// The pool loaded at the end.
        to: Ref,
        /// How far `to`'s computed position advances.
        amount: Expr,
    },
}

/// An expression with its span.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    /// What it is.
    pub kind: ExprKind,
    /// Its text.
    pub span: Span,
}

/// A prefix operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    /// `-`
    Neg,
    /// `!`
    Not,
}

/// A binary operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `^`
    Pow,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `&&`
    And,
    /// `||`
    Or,
}

/// An expression.
#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// A number literal (f64; an overflowing literal is `inf`).
    Num(f64),
    /// A bare name: a `let`, an attribute, a `def` parameter, `now`, `inf`,
    /// `present`, or (as a call argument) a pool or stage.
    Name(String),
    /// `name[index]`: only meaningful as an observable's argument.
    Index(Ident, Box<Expr>),
    /// `name(args)`: a function, an observable or a `def` use.
    Call(Ident, Vec<Expr>),
    /// `~dist(args)`
    Sample(Ident, Vec<Expr>),
    /// `-a`, `!a`
    Unary(UnOp, Box<Expr>),
    /// `a op b`
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `c ? a : b`
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
}
