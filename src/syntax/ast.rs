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
        /// `cap e;` and (refused) later-tier options.
        options: Vec<Opt>,
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

/// A stage's kind as written.
#[derive(Clone, Debug, PartialEq)]
pub enum StageKind {
    /// `delay`
    Delay(Span),
    /// `fifo` or `fifo(c)`
    Fifo(Option<Expr>, Span),
    /// `ps(φ)`
    Ps(Expr, Span),
}

/// An item of the `workload` block.
#[derive(Clone, Debug, PartialEq)]
pub enum WorkloadItem {
    /// `arrive poisson(e);` etc.; `law` is the word as written, `arg` absent for `none`.
    Arrive {
        /// The law's word as written (`poisson`, `renewal`, `closed`, `batch`, `none`).
        law: Ident,
        /// Its argument; absent for `none`.
        arg: Option<Expr>,
        /// The whole item.
        span: Span,
    },
    /// `init { … }`
    Init(Block, Span),
    /// `turn { … }`
    Turn(Block, Span),
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

/// How a `transfer` names its stage.
#[derive(Clone, Debug, PartialEq)]
pub enum TransferTarget {
    /// `transfer (X) …`: the unique stage declared above named `link` or `transfer`.
    Role,
    /// `transfer[j] (X) …`: a member of that stage.
    Indexed(Expr),
    /// `transfer on S1, S2 (X) …`
    On(Vec<Ref>),
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
    /// `hold p (u) [reserve (r)], … { body } [lease p (t)] [;]`
    Hold {
        /// The pools in order; the first one's queue is where the hold waits.
        pools: Vec<HoldPool>,
        /// The scope of the allocation.
        body: Block,
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
    /// `run s (w);` or `run s1, s2, … (w);`
    Run {
        /// One stage, or several held at once (a flow).
        stages: Vec<Ref>,
        /// The work.
        work: Expr,
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
