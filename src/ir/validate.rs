//! `Program::validate`: every rule a linked program obeys, checked on IR
//! however it was made (by the linker or read from JSON).
//!
//! Architecture invariant: the validator reads only the IR (no source text,
//! no spans); its messages name constructs by the IR's own tables, so a
//! fault reads the same whether the IR came from source or from JSON. The
//! linker maps `IrError::at` back to a source span.

mod exprs;

use exprs::{num, ref_text};

use super::{
    Arg, Arrival, BUILTIN_ATTRS, CRef, Ctx, Dist, Evict, Expr, Fun, FunKind, HoldPool, IR_VERSION,
    MAX_CHOOSE_COUNT, MAX_SESSIONS_AT_ZERO, Moment, Program, RunMode, Serve, StageKind, Stmt,
    Thinned, ValidProgram,
};

/// A rule the IR breaks.
#[derive(Clone, Debug, PartialEq)]
pub struct IrError {
    /// The statement at fault as (block, index in block), when there is one.
    pub at: Option<(usize, usize)>,
    /// The rule broken, a short stable identifier (`shared-stage-kind`, `index`, …);
    /// a diagnostic made from this error carries it.
    pub rule: &'static str,
    /// What is wrong, naming the construct and the rule.
    pub message: String,
    /// How to mend it, when there is a way.
    pub help: Option<&'static str>,
}

impl IrError {
    /// A fault of the program as a whole (no statement), without help.
    pub fn new(rule: &'static str, message: impl Into<String>) -> IrError {
        IrError {
            at: None,
            rule,
            message: message.into(),
            help: None,
        }
    }
}

impl std::fmt::Display for IrError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.at {
            Some((b, i)) => write!(f, "block {b}, statement {i}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

/// Whether `x` is a whole number ≥ `min`.
fn is_whole_at_least(x: f64, min: f64) -> bool {
    x.is_finite() && x.fract() == 0.0 && x >= min
}

/// How deep blocks may nest (IR from JSON could otherwise exhaust the stack).
const MAX_DEPTH: usize = 200;

/// How deep an expression may nest (a leaf is one level). The linker nests
/// at most 100 deep; IR from JSON is refused past this before anything
/// walks its expressions.
pub const MAX_EXPR_DEPTH: usize = 200;

struct Validator<'a> {
    p: &'a Program,
    errors: Vec<IrError>,
    /// The block and statement being checked.
    at: Option<(usize, usize)>,
    /// The pool references some hold leases, as written (0.1.0 matches a
    /// `release` outside a hold to one of them by its text, index included).
    leased: Vec<&'a CRef>,
    /// Stage members that are shared.
    shared: Vec<bool>,
    /// How deep the block being checked is nested.
    depth: usize,
    /// Whether each attribute slot is hidden from the scheduler.
    hidden: Vec<bool>,
}

impl Program {
    /// Checks every rule of a linked program and returns it as a
    /// [`ValidProgram`], the form the engine runs, or every fault found.
    pub fn validate(self) -> Result<ValidProgram, Vec<IrError>> {
        self.check()?;
        Ok(ValidProgram::checked(self))
    }

    /// Checks every rule of a linked program; returns every fault found.
    pub fn check(&self) -> Result<(), Vec<IrError>> {
        let mut v = Validator {
            p: self,
            errors: Vec::new(),
            at: None,
            leased: Vec::new(),
            shared: self.shared_stages(),
            depth: 0,
            hidden: vec![false; self.attrs.len()],
        };
        v.program();
        if v.errors.is_empty() {
            Ok(())
        } else {
            Err(v.errors)
        }
    }
}

impl Validator<'_> {
    /// Records a fault of `rule` at the statement being checked.
    fn err(&mut self, rule: &'static str, message: impl Into<String>) {
        self.errors.push(IrError {
            at: self.at,
            rule,
            message: message.into(),
            help: None,
        });
    }

    /// Records a fault with a way to mend it.
    fn err_help(&mut self, rule: &'static str, help: &'static str, message: impl Into<String>) {
        self.err(rule, message);
        if let Some(e) = self.errors.last_mut() {
            e.help = Some(help);
        }
    }

    fn program(&mut self) {
        let p = self.p;
        if p.version != IR_VERSION {
            self.err(
                "ir-version",
                format!("IR version {} (serq reads {IR_VERSION})", p.version),
            );
            return;
        }
        if p.attrs.len() < BUILTIN_ATTRS.len()
            || p.attrs.iter().zip(BUILTIN_ATTRS).any(|(a, b)| a != b)
        {
            self.err(
                "ir-structure",
                format!(
                    "the attribute table must start with the built-ins {}",
                    BUILTIN_ATTRS.join(", ")
                ),
            );
        }
        for pool in &p.pools {
            if pool.cap.is_nan() {
                self.err("constant", format!("pool `{}`: cap is NaN", pool.name));
            } else if pool.cap < 0.0 {
                self.err(
                    "constant",
                    format!(
                        "pool `{}`: cap {} is negative; a capacity is 0 or more",
                        pool.name,
                        num(pool.cap)
                    ),
                );
            }
        }
        if self.too_deep() {
            return;
        }
        self.hidden_slots();
        self.pools();
        self.spill_cycles();
        self.stages();
        self.arrival();
        self.run_options();
        if !self.blocks() {
            return;
        }
        for stmt in p.blocks.iter().flatten() {
            if let Stmt::Hold {
                lease: Some((r, _)),
                ..
            } = stmt
            {
                self.leased.push(r);
            }
        }
        for root in [p.init, p.turn, p.session] {
            self.block(root, &[]);
        }
        self.at = None;
        if p.share.is_some() && !p.has_flows() {
            self.err("share", "`share` is declared without a run over several stages (`share` applies only to flows); remove it");
        }
    }

    /// Reports the first expression nested deeper than [`MAX_EXPR_DEPTH`];
    /// true when there is one (nothing else is checked then).
    fn too_deep(&mut self) -> bool {
        let p = self.p;
        let deep = |e: &Expr| e.deeper_than(MAX_EXPR_DEPTH);
        let mut found = None;
        let machine = p
            .stages
            .iter()
            .flat_map(stage_exprs)
            .chain(p.pools.iter().flat_map(pool_exprs));
        for e in machine {
            if deep(e) {
                found = Some(None);
            }
        }
        if let Arrival::Renewal(e) | Arrival::Thinned(Thinned { rate: e, .. }) = &p.arrival
            && deep(e)
        {
            found = Some(None);
        }
        'blocks: for (b, stmts) in p.blocks.iter().enumerate() {
            for (i, s) in stmts.iter().enumerate() {
                if stmt_exprs(s).into_iter().any(deep) {
                    found = Some(Some((b, i)));
                    break 'blocks;
                }
            }
        }
        let Some(at) = found else {
            return false;
        };
        self.at = at;
        self.err(
            "limits",
            format!("an expression is nested more than {MAX_EXPR_DEPTH} deep"),
        );
        self.at = None;
        true
    }

    fn stages(&mut self) {
        let p = self.p;
        for (i, stage) in p.stages.iter().enumerate() {
            match &stage.kind {
                StageKind::Delay => {}
                StageKind::Fifo(c) => {
                    if *c == 0 {
                        self.err(
                            "fifo-servers",
                            format!(
                                "stage `{}`: fifo servers must be a positive integer, found 0",
                                stage.name
                            ),
                        );
                    }
                }
                StageKind::Step(step) => {
                    let name = &stage.name;
                    self.scheduler_expr(
                        &step.budget,
                        Moment::Budget,
                        &format!("stage `{name}`: the budget"),
                    );
                    self.scheduler_expr(
                        &step.chunk,
                        Moment::Budget,
                        &format!("stage `{name}`: the chunk"),
                    );
                    self.scheduler_expr(
                        &step.cost,
                        Moment::Step,
                        &format!("stage `{name}`: the cost"),
                    );
                    if let Some(b) = step.budget.constant_value() {
                        if b.is_nan() {
                            self.err("constant", format!("stage `{name}`: the budget is NaN"));
                        } else if b <= 0.0 {
                            self.err_help("budget", "give the engine a budget above 0 (tokens an iteration may schedule)", format!(
                                "stage `{name}`: budget {} must be above 0 (no iteration could schedule a token)",
                                num(b)
                            ));
                        }
                    }
                    if let Serve::By(keys) = &step.serve {
                        for k in keys {
                            self.scheduler_expr(
                                k,
                                Moment::Serve,
                                &format!("stage `{name}`: a serve key"),
                            );
                        }
                        if keys.iter().any(Expr::draws) {
                            self.err_help("may-not-draw", "sample into an attribute first", format!(
                                "stage `{name}`: a serve key may not draw (`~`): it is read for every resident at every iteration, and the order would change under the scheduler's feet"
                            ));
                        }
                    }
                    if let Some(m) = step.memory
                        && m >= p.pools.len()
                    {
                        self.err(
                            "ir-structure",
                            format!(
                                "stage `{name}`: memory pool {m} out of range ({} pools)",
                                p.pools.len()
                            ),
                        );
                    }
                }
                StageKind::Ps(phi) => {
                    self.scheduler_expr(
                        phi,
                        Moment::PsCapacity,
                        &format!("stage `{}`: the ps capacity", stage.name),
                    );
                    if let Some(x) = phi.constant_value() {
                        if !matches!(phi, Expr::Num(_)) {
                            self.err("stage-kind", format!(
                                "stage `{}`: the ps capacity is a constant expression that is not folded to a number",
                                stage.name
                            ));
                        } else if self.shared.get(i).copied().unwrap_or(false) {
                            // The shared-stage rule speaks for this stage.
                        } else if x.is_nan() {
                            self.err(
                                "constant",
                                format!("stage `{}`: ps capacity is NaN", stage.name),
                            );
                        } else if x <= 0.0 {
                            self.err("stage-kind", format!(
                                "stage `{}`: ps capacity {} must be above 0 (jobs would never finish)",
                                stage.name,
                                num(x)
                            ));
                        }
                    }
                }
            }
        }
    }

    /// The attribute slots `hidden` names: in range, and neither `cached`
    /// nor `computed`, which the scheduler itself sets.
    fn hidden_slots(&mut self) {
        let p = self.p;
        for &slot in &p.hidden {
            match p.attrs.get(slot) {
                None => self.err(
                    "ir-structure",
                    format!("hidden: attribute slot {slot} out of range"),
                ),
                Some(name) if name == "cached" || name == "computed" => self.err(
                    "hidden",
                    format!("hidden `{name}`: the scheduler sets it, so it cannot be hidden from the scheduler"),
                ),
                Some(_) => self.hidden[slot] = true,
            }
        }
    }

    /// Pool options: block, keys, spill and `admit via`.
    fn pools(&mut self) {
        let p = self.p;
        for pool in &p.pools {
            let name = &pool.name;
            if let Some(b) = pool.block
                && (b.is_nan() || b <= 0.0)
            {
                self.err(
                    "block",
                    format!("pool `{name}`: block must be positive, found {}", num(b)),
                );
            }
            if let Evict::By(keys) = &pool.evict {
                if keys.is_empty() {
                    self.err(
                        "ir-structure",
                        format!("pool `{name}`: `evict by` needs at least one key"),
                    );
                }
                for k in keys {
                    self.scheduler_expr(
                        k,
                        Moment::Evict,
                        &format!("pool `{name}`: an eviction key"),
                    );
                }
            }
            if let Some(keys) = &pool.queue {
                if keys.is_empty() {
                    self.err(
                        "ir-structure",
                        format!("pool `{name}`: `queue by` needs at least one key"),
                    );
                }
                for k in keys {
                    self.scheduler_expr(k, Moment::Queue, &format!("pool `{name}`: a queue key"));
                }
                if keys.iter().any(Expr::draws) {
                    self.err_help("may-not-draw", "sample into an attribute first", format!(
                        "pool `{name}`: a queue key may not draw (keys are read at every admission attempt)"
                    ));
                }
            }
            if let Some(spill) = &pool.spill {
                if spill.to >= p.pools.len() || spill.via >= p.stages.len() {
                    self.err(
                        "ir-structure",
                        format!(
                            "pool `{name}`: spill pool {} or stage {} out of range",
                            spill.to, spill.via
                        ),
                    );
                }
                if let Some(stage) = p.stages.get(spill.via)
                    && matches!(stage.kind, StageKind::Step(_))
                {
                    // 0.1.0 panics when such a spill happens.
                    self.err_help(
                        "spill-via",
                        "name a delay, fifo or ps stage (the link the pieces travel)",
                        format!(
                            "pool `{name}`: `spill … via {}` names a step stage, which runs no job without a session",
                            stage.name
                        ),
                    );
                }
                self.scheduler_expr(
                    &spill.work,
                    Moment::Evict,
                    &format!("pool `{name}`: the spill's work"),
                );
                self.scheduler_expr(
                    &spill.when,
                    Moment::Evict,
                    &format!("pool `{name}`: the spill's condition"),
                );
            }
            if let Some(e) = pool.admit_via {
                match p.stages.get(e) {
                    None => self.err("ir-structure", format!(
                        "pool `{name}`: `admit via` stage {e} out of range ({} stages)",
                        p.stages.len()
                    )),
                    Some(stage) if !matches!(stage.kind, StageKind::Step(_)) => self.err_help(
                        "admit-via",
                        "name a step stage, whose iterations admit the queue",
                        format!(
                            "pool `{name}`: `admit via {}` names a stage that is not a step stage, so its queue would never be admitted",
                            stage.name
                        ),
                    ),
                    Some(_) => {}
                }
            }
        }
    }

    /// Refuses a chain of spills that comes back to a pool (`spill kv`
    /// in kv, or a → b → a): a piece evicted from a tier would return to
    /// it, and 0.1.0 loops for ever once it spills. A `when (0)` clause
    /// never spills, so it closes no cycle.
    fn spill_cycles(&mut self) {
        let p = self.p;
        let next = |i: usize| {
            p.pools[i]
                .spill
                .as_ref()
                .filter(|s| !matches!(s.when, Expr::Num(x) if x == 0.0))
                .map(|s| s.to)
                .filter(|&t| t < p.pools.len())
        };
        for start in 0..p.pools.len() {
            let mut path = vec![start];
            let mut at = start;
            while let Some(t) = next(at) {
                // A cycle is reported once, from its first pool.
                if t < start || path.len() > p.pools.len() {
                    break;
                }
                path.push(t);
                if t == start {
                    let chain: Vec<String> = path
                        .iter()
                        .map(|&i| format!("`{}`", p.pools[i].name))
                        .collect();
                    let name = &p.pools[start].name;
                    let message = if path.len() == 2 {
                        format!("pool `{name}` spills into itself")
                    } else {
                        format!("pool `{name}` spills in a cycle: {}", chain.join(" -> "))
                    };
                    self.err_help(
                        "spill-cycle",
                        "spills go down a chain of tiers (GPU -> host -> disk) that ends at a pool without `spill`",
                        message,
                    );
                    break;
                }
                at = t;
            }
        }
    }

    /// Checks an expression the machine (not a session statement) reads
    /// at `moment`: its moment, and that it reads no hidden attribute.
    fn scheduler_expr(&mut self, e: &Expr, moment: Moment, what: &str) {
        self.expr(e, moment);
        self.hidden_reads(e, what);
    }

    /// Refuses a read of a hidden attribute in `e` (what the scheduler reads).
    fn hidden_reads(&mut self, e: &Expr, what: &str) {
        let mut found: Option<usize> = None;
        e.visit(&mut |x| {
            if let Expr::Attr(slot) = x
                && found.is_none()
                && self.hidden.get(*slot).copied().unwrap_or(false)
            {
                found = Some(*slot);
            }
        });
        if let Some(slot) = found {
            let name = &self.p.attrs[slot];
            self.err_help(
                "hidden",
                "read it in the session's statements, or do not hide it",
                format!("`{name}` is hidden from the scheduler, but {what} reads it"),
            );
        }
    }

    fn arrival(&mut self) {
        #[rustfmt::skip]
        const RATE_READS: &str = "a poisson rate with a peak may use only constants, pure functions and `now` (no attribute, draw or observable)";
        match &self.p.arrival {
            Arrival::Poisson(rate) => {
                if !(rate.is_finite() && *rate >= 0.0) {
                    self.err("arrival", format!(
                        "poisson rate {} must be a finite number ≥ 0 (a negative, infinite or NaN rate never advances)",
                        num(*rate)
                    ));
                }
            }
            Arrival::Renewal(gap) => {
                let mut bad = false;
                gap.visit(&mut |e| {
                    bad |= matches!(e, Expr::Attr(_) | Expr::Ctx(_))
                        || matches!(e, Expr::Call(f, _) if !matches!(f.signature(), FunKind::Pure(_)))
                });
                if bad {
                    self.err("arrival", "renewal arrival may use only constants and sampled distributions (no attribute, `now` or observable)");
                } else {
                    self.expr(gap, Moment::Renewal);
                    if let Some(g) = gap.constant_value()
                        && !(g.is_finite() && g > 0.0)
                    {
                        self.err(
                            "arrival",
                            format!("renewal gap {} must be positive and finite", num(g)),
                        );
                    }
                }
            }
            Arrival::Batch(0) => self.err("arrival", "batch(n) needs a whole n ≥ 1, found 0"),
            Arrival::Batch(n) | Arrival::Closed(n) if *n > MAX_SESSIONS_AT_ZERO => {
                let law = if matches!(self.p.arrival, Arrival::Batch(_)) {
                    "batch"
                } else {
                    "closed"
                };
                self.err("limits", format!(
                    "{law}(n) creates n sessions at time 0; n is at most {MAX_SESSIONS_AT_ZERO}, found {n}"
                ));
            }
            Arrival::Batch(_) | Arrival::Closed(_) | Arrival::None => {}
            Arrival::Trace(t) => {
                if !(t.speed.is_finite() && t.speed > 0.0) {
                    self.err(
                        "arrival",
                        format!(
                            "arrive trace: speed {} must be above 0 and finite",
                            num(t.speed)
                        ),
                    );
                }
                if !(t.start.is_finite() && t.start >= 0.0 && t.end > t.start) {
                    self.err(
                        "arrival",
                        format!(
                            "arrive trace: window ({}, {}) needs 0 ≤ start < end, start finite",
                            num(t.start),
                            num(t.end)
                        ),
                    );
                }
                if t.path.is_empty() {
                    self.err("arrival", "arrive trace: the file name is empty");
                }
            }
            Arrival::Thinned(t) => {
                if !(t.peak.is_finite() && t.peak > 0.0) {
                    self.err(
                        "arrival",
                        format!(
                            "arrive poisson: peak {} must be above 0 and finite",
                            num(t.peak)
                        ),
                    );
                }
                let mut bad = false;
                t.rate.visit(&mut |e| {
                    bad |= matches!(e, Expr::Attr(_) | Expr::Sample(..))
                        || matches!(e, Expr::Ctx(c) if *c != Ctx::Now)
                        || matches!(e, Expr::Call(f, _) if !matches!(f.signature(), FunKind::Pure(_)))
                });
                if bad {
                    self.err("arrival", RATE_READS);
                } else {
                    self.expr(&t.rate, Moment::Rate);
                    if let Some(r) = t.rate.constant_value()
                        && !(r.is_finite() && r >= 0.0 && r <= t.peak)
                    {
                        self.err(
                            "arrival",
                            format!(
                                "arrive poisson: rate {} must be a finite number between 0 and its peak {}",
                                num(r),
                                num(t.peak)
                            ),
                        );
                    }
                }
            }
        }
    }

    fn run_options(&mut self) {
        let p = self.p;
        let (h, w) = (p.horizon, p.warmup);
        if h.is_nan() || h.is_infinite() {
            self.err(
                "run-options",
                format!("horizon {}: the horizon must be finite", num(h)),
            );
        } else if h <= 0.0 {
            self.err(
                "run-options",
                format!("horizon {}: the horizon must be above 0", num(h)),
            );
        } else if w.is_nan() || w < 0.0 {
            self.err(
                "run-options",
                format!("run: need 0 <= warmup < horizon, but warmup is {}", num(w)),
            );
        } else if w >= h {
            self.err(
                "run-options",
                format!("warmup {} must be below the horizon {}", num(w), num(h)),
            );
        }
        if let Arrival::Poisson(rate) = p.arrival
            && h.is_finite()
            && rate * h > super::MAX_EXPECTED_ARRIVALS
        {
            self.err(
                "limits",
                format!(
                    "horizon {} with poisson({}): at that horizon the clock's spacing (about \
                     horizon·2^-52) leaves fewer than 2^10 steps in a mean gap of {}; \
                     rate × horizon is at most 2^42",
                    num(h),
                    num(rate),
                    num(1.0 / rate)
                ),
            );
        }
        if let Arrival::Thinned(t) = &p.arrival
            && h.is_finite()
            && t.peak * h > super::MAX_EXPECTED_ARRIVALS
        {
            self.err(
                "limits",
                format!(
                    "horizon {} with a poisson peak of {}: peak × horizon is at most 2^42",
                    num(h),
                    num(t.peak)
                ),
            );
        }
        if let Some(n) = p.arrivals {
            if !matches!(
                p.arrival,
                Arrival::Poisson(_) | Arrival::Renewal(_) | Arrival::Trace(_) | Arrival::Thinned(_)
            ) {
                self.err(
                    "run-options",
                    "run: arrivals applies only to poisson, renewal or trace workloads",
                );
            } else if n == 0 {
                self.err("run-options", "run: arrivals must be at least 1");
            }
        }
    }

    /// Checks the block arena's shape; false when the statements cannot be
    /// walked safely.
    fn blocks(&mut self) -> bool {
        let p = self.p;
        let n = p.blocks.len();
        if p.init != 0 || p.turn != 1 || p.session != 2 || n < 3 {
            self.err(
                "ir-structure",
                "blocks: init, turn and session must be blocks 0, 1 and 2",
            );
            return false;
        }
        if let Some(pos) = &p.positions
            && (pos.len() != n || pos.iter().zip(&p.blocks).any(|(a, b)| a.len() != b.len()))
        {
            self.err(
                "ir-structure",
                "positions: the table must have one position per statement of every block",
            );
        }
        let mut refs = vec![0usize; n];
        let mut ok = true;
        for (b, stmts) in p.blocks.iter().enumerate() {
            for (i, s) in stmts.iter().enumerate() {
                for child in children(s) {
                    if child >= n {
                        self.at = Some((b, i));
                        self.err(
                            "ir-structure",
                            format!("block {child} is out of range ({n} blocks)"),
                        );
                        ok = false;
                    } else {
                        refs[child] += 1;
                    }
                }
            }
        }
        self.at = None;
        for (b, r) in refs.iter().enumerate() {
            let want = usize::from(b >= 3);
            if *r != want {
                self.err("ir-structure", format!(
                    "block {b} is referenced {r} times; every block but init, turn and session is referenced exactly once"
                ));
                ok = false;
            }
        }
        if !ok {
            return false;
        }
        let mut seen = vec![false; n];
        let mut stack = vec![0, 1, 2];
        while let Some(b) = stack.pop() {
            if std::mem::replace(&mut seen[b], true) {
                continue;
            }
            stack.extend(p.blocks[b].iter().flat_map(children));
        }
        if let Some(b) = seen.iter().position(|s| !s) {
            self.err(
                "ir-structure",
                format!("block {b} is part of a cycle of blocks"),
            );
            return false;
        }
        true
    }

    fn block(&mut self, b: usize, holds: &[CRef]) {
        if holds.len() > MAX_DEPTH || self.depth > MAX_DEPTH {
            self.err(
                "ir-structure",
                format!("blocks are nested more than {MAX_DEPTH} deep"),
            );
            return;
        }
        self.depth += 1;
        let at = self.at;
        for (i, stmt) in self.p.blocks[b].iter().enumerate() {
            self.at = Some((b, i));
            self.stmt(stmt, holds);
        }
        self.at = at;
        self.depth -= 1;
    }

    fn stmt(&mut self, stmt: &Stmt, holds: &[CRef]) {
        let p = self.p;
        match stmt {
            Stmt::Set(slot, e) => {
                if *slot >= p.attrs.len() {
                    self.err(
                        "ir-structure",
                        format!("`set`: attribute slot {slot} out of range"),
                    );
                }
                self.expr(e, Moment::Session);
            }
            Stmt::Observe(i, e) => {
                if *i >= p.observes.len() {
                    self.err(
                        "ir-structure",
                        format!("`observe`: observation {i} out of range"),
                    );
                }
                self.expr(e, Moment::Session);
            }
            Stmt::Turn | Stmt::End => {}
            Stmt::Hold {
                pools,
                reuse,
                body,
                cache,
                lease,
            } => {
                if let Some(r) = reuse {
                    if r.draws() {
                        self.err("may-not-draw", "a hold's `reuse` may not draw (it is evaluated again at every attempt); sample into an attribute first");
                    }
                    self.amount(r, "hold `reuse`");
                    self.hidden_reads(r, "a hold's header (its `reuse`), read at admission,");
                }
                if let Some(c) = cache {
                    self.expr(c, Moment::Session);
                }
                self.hold(pools, *body, lease.as_ref(), holds)
            }
            Stmt::Drop(r) => {
                self.cref(r, false, Moment::Session);
            }
            Stmt::Grow(r, e) | Stmt::Load(r, e) => {
                let word = if matches!(stmt, Stmt::Grow(..)) {
                    "grow"
                } else {
                    "load"
                };
                if self.cref(r, false, Moment::Session) {
                    if !holds.contains(r) {
                        let text = ref_text(self.p, r, false);
                        self.err("hold-scope", format!(
                            "`{word} {text}` outside a hold of `{text}` (write the pool as the hold does, index included)"
                        ));
                    }
                    self.amount(e, &format!("`{word}` amount"));
                }
            }
            Stmt::Release(r) => {
                if self.cref(r, false, Moment::Session)
                    && !holds.contains(r)
                    && !self.leased.contains(&r)
                {
                    let text = ref_text(self.p, r, false);
                    self.err("hold-scope", format!(
                        "`release {text}` outside a hold of `{text}`, and no hold leases it (write the pool as the hold does, index included)"
                    ));
                }
            }
            Stmt::Run {
                stage,
                mode,
                work,
                growing,
                also,
            } => self.run(stage, *mode, work, growing.as_ref(), also, holds),
            Stmt::Branch(g, then, otherwise) => {
                self.expr(g, Moment::Session);
                if let Some(x) = g.constant_value()
                    && x != 0.0
                    && x != 1.0
                {
                    self.err("guard", format!(
                        "`branch ({})` is not a test: a guard is 0 or 1; write `branch with ({})` to take the branch with a probability",
                        num(x),
                        num(x)
                    ));
                }
                self.block(*then, holds);
                self.block(*otherwise, holds);
            }
            Stmt::Loop(body) => {
                if !self.lets_time_pass(*body) {
                    self.err("livelock", "a `loop` whose body has no `run`, `hold`, `transfer` or `end` never lets time pass (a livelock); leave it with `end`");
                }
                self.block(*body, holds);
            }
            Stmt::Choose { var, count, key } => {
                if *var >= p.attrs.len() {
                    self.err(
                        "choose",
                        format!("`choose`: attribute slot {var} out of range"),
                    );
                }
                if key.is_empty() {
                    self.err("choose", "`choose` needs at least one key");
                }
                self.expr(count, Moment::Session);
                if let Some(n) = count.constant_value()
                    && !is_whole_at_least(n, 1.0)
                {
                    self.err(
                        "choose",
                        format!("`choose` count {} must be a whole number ≥ 1", num(n)),
                    );
                } else if let Some(n) = count.constant_value()
                    && n > MAX_CHOOSE_COUNT as f64
                {
                    self.err(
                        "choose",
                        format!(
                            "`choose` count {} is above the limit of {MAX_CHOOSE_COUNT} candidates",
                            num(n)
                        ),
                    );
                }
                key.iter().for_each(|k| self.expr(k, Moment::Session));
            }
        }
    }

    fn hold(
        &mut self,
        pools: &[HoldPool],
        body: usize,
        lease: Option<&(CRef, Expr)>,
        holds: &[CRef],
    ) {
        if pools.is_empty() {
            self.err("ir-structure", "`hold` takes at least one pool");
        }
        for (k, HoldPool(r, units, reserve)) in pools.iter().enumerate() {
            if !self.cref(r, false, Moment::Session) {
                continue;
            }
            let name = ref_text(self.p, r, false);
            if pools[..k].iter().any(|HoldPool(o, _, _)| same_member(o, r)) {
                self.err("twice", format!("`hold` names pool `{name}` twice"));
            }
            for (what, e) in
                std::iter::once(("units", units)).chain(reserve.iter().map(|e| ("reserve", e)))
            {
                if e.draws() {
                    self.err("may-not-draw", format!(
                        "hold {what} on `{name}` may not draw (they are evaluated again at every attempt); sample into an attribute first"
                    ));
                }
                self.amount(e, &format!("hold {what} on `{name}`"));
                self.hidden_reads(
                    e,
                    &format!("a hold's header (its {what} on `{name}`), read at admission,"),
                );
            }
        }
        if let Some((r, t)) = lease {
            if self.cref(r, false, Moment::Session) && !pools.iter().any(|HoldPool(o, _, _)| o == r)
            {
                let text = ref_text(self.p, r, false);
                self.err("hold-scope", format!(
                    "`lease {text}`: the hold does not take that pool (write the pool as the hold does, index included)"
                ));
            }
            self.expr(t, Moment::Session);
        }
        let mut inner = holds.to_vec();
        inner.extend(pools.iter().map(|HoldPool(r, _, _)| r.clone()));
        self.block(body, &inner);
    }

    fn run(
        &mut self,
        stage: &CRef,
        mode: RunMode,
        work: &Expr,
        growing: Option<&CRef>,
        also: &[CRef],
        holds: &[CRef],
    ) {
        let all: Vec<&CRef> = std::iter::once(stage).chain(also).collect();
        let mut ok = true;
        for r in &all {
            ok &= self.cref(r, true, Moment::Session);
        }
        self.amount(work, "run work");
        if !ok {
            return;
        }
        if !also.is_empty() {
            if self.p.share.is_none() {
                self.err("share", "a run over several stages needs the program's `share` policy (declare `share maxmin;` or `share bottleneck;`)");
            }
            for (k, r) in all.iter().enumerate() {
                let name = &self.p.stages[r.base].name;
                if all[..k].iter().any(|o| o.base == r.base) {
                    self.err_help("shared-stage-twice", "run over different stage families, or make the run one stage", format!(
                        "stage `{name}` is named twice in one run (an index is known only when the run starts, so the two could be one stage)"
                    ));
                    continue;
                }
                let bad = self.p.stages[r.base..r.base + r.count]
                    .iter()
                    .find_map(|s| match &s.kind {
                        StageKind::Ps(Expr::Num(x)) if *x > 0.0 => None,
                        StageKind::Ps(Expr::Num(x)) => Some(format!("`ps({})`", num(*x))),
                        StageKind::Ps(_) => {
                            Some("`ps` of an expression that is not a constant".to_string())
                        }
                        StageKind::Fifo(_) => Some("`fifo`".to_string()),
                        StageKind::Delay => Some("`delay`".to_string()),
                        StageKind::Step(_) => Some("`step`".to_string()),
                    });
                if let Some(kind) = bad {
                    self.err_help("shared-stage-kind", "declare the stage `ps(φ)` with a constant φ above 0, or run it on its own", format!(
                        "stage `{name}` is {kind}, but every stage of a run over several stages must be `ps` of a constant above 0"
                    ));
                }
            }
        }
        let shared = all
            .iter()
            .find(|r| self.shared[r.base..r.base + r.count].iter().any(|s| *s))
            .map(|r| self.p.stages[r.base].name.clone());
        let step = matches!(self.p.stages[stage.base].kind, StageKind::Step(_));
        if let Some(name) = shared {
            if mode != RunMode::Plain || growing.is_some() {
                self.err_help("shared-stage-mode", "run a step stage on its own (`run E prefill (T);`) and a transfer over shared stages as a plain run of its own", format!(
                    "a run on the shared stage `{name}` must be plain: no `prefill`/`decode` mode and no `growing`"
                ));
            }
        } else if step != (mode != RunMode::Plain) {
            let name = &self.p.stages[stage.base].name;
            let found = if step {
                format!("`{name}` is a step stage and the run has no mode")
            } else {
                format!("`{name}` is not a step stage and the run has a mode")
            };
            self.err_help(
                "mode",
                "write `run E prefill (T)` or `run E decode (T)` on a step stage, and a plain `run S (w)` elsewhere",
                format!("`prefill`/`decode` are required on a step stage and not allowed elsewhere: {found}"),
            );
        } else if growing.is_some() && !step {
            self.err(
                "growing",
                "`growing` needs a step stage: the hold grows as the engine computes tokens",
            );
        }
        if let Some(g) = growing
            && self.cref(g, false, Moment::Session)
            && !holds.contains(g)
        {
            let text = ref_text(self.p, g, false);
            self.err("hold-scope", format!(
                "`growing {text}` outside a hold of `{text}` (write the pool as the hold does, index included)"
            ));
        }
    }

    /// Whether a loop body contains a `run`, `hold` or `end` at any depth.
    fn lets_time_pass(&self, body: usize) -> bool {
        let mut stack = vec![body];
        while let Some(b) = stack.pop() {
            for s in &self.p.blocks[b] {
                if matches!(s, Stmt::Run { .. } | Stmt::Hold { .. } | Stmt::End) {
                    return true;
                }
                stack.extend(children(s));
            }
        }
        false
    }

    /// Checks an amount (run work, hold units and reserve, grow, load).
    fn amount(&mut self, e: &Expr, what: &str) {
        self.expr(e, Moment::Session);
        if let Some(x) = e.constant_value() {
            if x.is_nan() {
                self.err("amount", format!("{what} is NaN"));
            } else if x < 0.0 {
                self.err(
                    "amount",
                    format!("{what} is negative ({}); an amount is 0 or more", num(x)),
                );
            }
        }
    }

    /// Checks a reference; false when it does not name a family.
    fn cref(&mut self, r: &CRef, is_stage: bool, moment: Moment) -> bool {
        let (word, len) = if is_stage {
            ("stage", self.p.stages.len())
        } else {
            ("pool", self.p.pools.len())
        };
        if r.count == 0 || r.base.checked_add(r.count).is_none_or(|end| end > len) {
            self.err(
                "ir-structure",
                format!(
                    "{word} reference {}..{} out of range ({len} {word}s)",
                    r.base,
                    r.base.saturating_add(r.count)
                ),
            );
            return false;
        }
        let name = ref_text(self.p, r, is_stage);
        let family = if is_stage {
            self.p.stage_name(r.base)
        } else {
            self.p.pool_name(r.base)
        }
        .to_string();
        match &r.index {
            None if r.count > 1 => {
                self.err("index", format!("{word} `{name}` is an array; index it"));
            }
            None => {}
            Some(i) => {
                self.expr(i, moment);
                if let Some(x) = i.constant_value() {
                    if !is_whole_at_least(x, 0.0) {
                        self.err(
                            "index",
                            format!(
                                "{word} `{family}`: index {} is not a whole number ≥ 0",
                                num(x)
                            ),
                        );
                    } else if x >= r.count as f64 {
                        self.err(
                            "index",
                            format!(
                                "{word} `{family}`: index {} out of range (count {})",
                                num(x),
                                r.count
                            ),
                        );
                    }
                }
            }
        }
        true
    }

    fn expr(&mut self, e: &Expr, moment: Moment) {
        match e {
            Expr::Num(x) => {
                if x.is_nan() {
                    self.err("constant", "a number in the IR is NaN");
                }
            }
            Expr::Attr(slot) => {
                if *slot >= self.p.attrs.len() {
                    self.err(
                        "ir-structure",
                        format!("attribute slot {slot} out of range"),
                    );
                } else if !moment.reads_attributes() {
                    self.err(
                        "moment",
                        format!(
                            "{} cannot read the session attribute `{}`",
                            moment.place(),
                            self.p.attrs[*slot]
                        ),
                    );
                }
            }
            Expr::Ctx(c) => {
                if !c.exists_in(moment) {
                    self.err("moment", c.misplaced(moment));
                }
            }
            Expr::Sample(d, args) => {
                if args.len() != d.arity() {
                    self.err(
                        "arity",
                        format!(
                            "`~{}` takes {} argument(s), got {}",
                            d.name(),
                            d.arity(),
                            args.len()
                        ),
                    );
                    return;
                }
                args.iter().for_each(|a| self.expr(a, moment));
                self.dist_parameters(*d, args);
            }
            Expr::Call(f, args) => self.call(*f, args, moment),
            Expr::Unary(_, a) => self.expr(a, moment),
            Expr::Binary(_, a, b) => {
                self.expr(a, moment);
                self.expr(b, moment);
            }
            Expr::Cond(c, a, b) => {
                self.expr(c, moment);
                self.expr(a, moment);
                self.expr(b, moment);
            }
        }
    }

    fn call(&mut self, f: Fun, args: &[Arg], moment: Moment) {
        let name = f.name();
        match f.signature() {
            FunKind::Pure(n) => {
                if args.len() != n {
                    self.err(
                        "arity",
                        format!("`{name}` takes {n} argument(s), got {}", args.len()),
                    );
                }
                for a in args {
                    match a {
                        Arg::Expr(e) => self.expr(e, moment),
                        _ => self.err(
                            "arity",
                            format!("`{name}` takes numbers, not a pool or stage"),
                        ),
                    }
                }
            }
            FunKind::OfStageAnd(n) => match args {
                [Arg::Stage(r), rest @ ..] if rest.len() == n => {
                    self.cref(r, true, moment);
                    for a in rest {
                        match a {
                            Arg::Expr(e) => self.expr(e, moment),
                            _ => self.err("arity", format!("`{name}` takes a stage, then numbers")),
                        }
                    }
                }
                _ => self.err(
                    "arity",
                    format!(
                        "`{name}` takes {} argument(s): a stage, then {n} numbers",
                        n + 1
                    ),
                ),
            },
            kind => {
                let is_stage = kind == FunKind::OfStage;
                match args {
                    [Arg::Stage(r)] if is_stage => {
                        self.cref(r, true, moment);
                    }
                    [Arg::Pool(r)] if !is_stage => {
                        self.cref(r, false, moment);
                    }
                    _ => {
                        let word = if is_stage { "stage" } else { "pool" };
                        self.err("arity", format!("`{name}` takes 1 argument(s), one {word}"));
                    }
                }
            }
        }
    }

    /// Q18: constant distribution parameters out of range.
    fn dist_parameters(&mut self, d: Dist, args: &[Expr]) {
        let c = |i: usize| args.get(i).and_then(Expr::constant_value);
        let name = d.name();
        let bad = |this: &mut Self, what: String| {
            this.err("distribution", format!("`~{name}` parameter {what}"));
        };
        for (i, x) in args
            .iter()
            .enumerate()
            .filter_map(|(i, a)| Some((i, a.constant_value()?)))
        {
            if x.is_nan() {
                bad(self, format!("{} is NaN", i + 1));
            }
        }
        match d {
            Dist::Det => {}
            Dist::Exp => {
                if let Some(m) = c(0).filter(|m| *m < 0.0) {
                    bad(self, format!("mean {} is negative", num(m)));
                }
            }
            Dist::Uniform => {
                if let (Some(a), Some(b)) = (c(0), c(1))
                    && b < a
                {
                    bad(self, format!("b = {} is below a = {}", num(b), num(a)));
                }
            }
            Dist::Erlang => {
                if let Some(k) = c(0).filter(|k| !k.is_nan() && !is_whole_at_least(*k, 1.0)) {
                    bad(self, format!("k = {} is not a whole number ≥ 1", num(k)));
                } else if let Some(k) = c(0).filter(|k| *k > super::MAX_ERLANG_K) {
                    bad(
                        self,
                        format!(
                            "k = {} is above {}: a draw sums k exponentials",
                            num(k),
                            num(super::MAX_ERLANG_K)
                        ),
                    );
                }
                if let Some(m) = c(1).filter(|m| *m < 0.0) {
                    bad(self, format!("mean {} is negative", num(m)));
                }
            }
            Dist::H2 => {
                if let Some(m) = c(0).filter(|m| *m < 0.0) {
                    bad(self, format!("mean {} is negative", num(m)));
                }
                if let Some(c2) = c(1).filter(|c2| *c2 < 1.0) {
                    bad(self, format!("c2 = {} is below 1", num(c2)));
                }
            }
            Dist::Bernoulli => {
                if let Some(p) = c(0).filter(|p| *p < 0.0 || *p > 1.0) {
                    bad(self, format!("p = {} is outside [0, 1]", num(p)));
                }
            }
        }
    }
}

/// Whether two references surely name the same member (equal as written, or
/// one family with equal constant indices).
fn same_member(a: &CRef, b: &CRef) -> bool {
    if a == b {
        return true;
    }
    if a.base != b.base {
        return false;
    }
    let member = |r: &CRef| match &r.index {
        None => Some(0.0),
        Some(i) => i.constant_value(),
    };
    matches!((member(a), member(b)), (Some(x), Some(y)) if x == y)
}

/// Every expression of a stage's kind (a ps capacity, a step stage's options).
fn stage_exprs(stage: &super::Stage) -> Vec<&Expr> {
    match &stage.kind {
        StageKind::Delay | StageKind::Fifo(_) => Vec::new(),
        StageKind::Ps(e) => vec![e],
        StageKind::Step(step) => {
            let mut out = vec![&step.budget, &step.cost, &step.chunk];
            if let Serve::By(keys) = &step.serve {
                out.extend(keys);
            }
            out
        }
    }
}

/// Every expression of a pool's options (keys and spill clauses).
fn pool_exprs(pool: &super::Pool) -> Vec<&Expr> {
    let mut out = Vec::new();
    if let Evict::By(keys) = &pool.evict {
        out.extend(keys);
    }
    out.extend(pool.queue.iter().flatten());
    if let Some(s) = &pool.spill {
        out.push(&s.work);
        out.push(&s.when);
    }
    out
}

/// The blocks a statement refers to.
fn children(s: &Stmt) -> Vec<usize> {
    match s {
        Stmt::Hold { body, .. } => vec![*body],
        Stmt::Branch(_, t, e) => vec![*t, *e],
        Stmt::Loop(b) => vec![*b],
        _ => Vec::new(),
    }
}

impl Program {
    /// Every expression of the program: its stages' and pools' options,
    /// the renewal gap, and every statement's (references' indices
    /// included).
    pub fn exprs(&self) -> Vec<&Expr> {
        let mut out: Vec<&Expr> = self
            .stages
            .iter()
            .flat_map(stage_exprs)
            .chain(self.pools.iter().flat_map(pool_exprs))
            .collect();
        if let Arrival::Renewal(e) | Arrival::Thinned(Thinned { rate: e, .. }) = &self.arrival {
            out.push(e);
        }
        out.extend(self.blocks.iter().flatten().flat_map(stmt_exprs));
        out
    }
}

impl Stmt {
    /// Every expression of this statement, references' indices included
    /// (not the expressions of its inner blocks).
    pub fn exprs(&self) -> Vec<&Expr> {
        stmt_exprs(self)
    }
}

/// Every expression of a statement, references' indices included (not the
/// expressions of its inner blocks).
fn stmt_exprs(s: &Stmt) -> Vec<&Expr> {
    fn index(r: &CRef) -> Option<&Expr> {
        r.index.as_ref()
    }
    let mut out = Vec::new();
    match s {
        Stmt::Set(_, e) | Stmt::Observe(_, e) | Stmt::Branch(e, ..) => out.push(e),
        Stmt::Turn | Stmt::End | Stmt::Loop(_) => {}
        Stmt::Hold {
            pools,
            reuse,
            cache,
            lease,
            ..
        } => {
            for HoldPool(r, u, reserve) in pools {
                out.extend(index(r));
                out.push(u);
                out.extend(reserve);
            }
            out.extend(reuse);
            out.extend(cache);
            if let Some((r, t)) = lease {
                out.extend(index(r));
                out.push(t);
            }
        }
        Stmt::Grow(r, e) | Stmt::Load(r, e) => {
            out.extend(index(r));
            out.push(e);
        }
        Stmt::Release(r) | Stmt::Drop(r) => out.extend(index(r)),
        Stmt::Run {
            stage,
            work,
            growing,
            also,
            ..
        } => {
            out.extend(index(stage));
            out.push(work);
            out.extend(growing.as_ref().and_then(index));
            out.extend(also.iter().filter_map(index));
        }
        Stmt::Choose { count, key, .. } => {
            out.push(count);
            out.extend(key);
        }
    }
    out
}
