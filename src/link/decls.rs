//! Top-level declarations: `let` folding, pool and stage families (arrays
//! flattened), pool options, stage kinds, `share`, the arrival law and the
//! `run` block's options (with the caller's overrides).
//!
//! Architecture invariant: every constant position is folded here into the
//! number the IR holds; a value the IR cannot hold (a fractional count, NaN)
//! is refused here, every other range rule is left to `Program::validate`.

use super::exprs::Moment;
use super::{ArriveItem, Family, Linker, Overrides, RunOptions, names};
use crate::ir;
use crate::syntax::Diagnostic;
use crate::syntax::ast::{self, Ident, Span};
use std::collections::BTreeMap;

/// The largest array a program may declare (a guard against typos that
/// would allocate without bound), and the most pool and stage members it
/// may declare in all (many arrays of a million would allocate as much).
const MAX_ARRAY: f64 = 1_000_000.0;

impl Linker<'_> {
    /// Folds every `let` in order; an initializer sees only earlier `let`s.
    /// A constant named in `sets` takes the set value instead of its
    /// initializer's (the last value when a name is set twice).
    pub(super) fn fold_lets(&mut self, sets: &[(String, f64)]) {
        for item in self.items {
            if let ast::Item::Let { name, .. } = item {
                self.all_lets.entry(name.name.clone()).or_insert(name.span);
            }
        }
        let sets = self.check_sets(sets);
        for item in self.items {
            let ast::Item::Let { name, value, .. } = item else {
                continue;
            };
            names::check_bound(&name.name, "let", name.span, &mut self.diags);
            if let Some((_, first)) = self.lets.get(&name.name) {
                let first = first.span;
                self.err(
                    Diagnostic::new(
                        "twice",
                        name.span,
                        format!("`let {}` is defined twice", name.name),
                    )
                    .with_secondary(first, "first defined here"),
                );
                continue;
            }
            // The name itself is not yet visible: `let a = a;` reads a later let.
            let folded = self
                .constant(value, &format!("`let {}`", name.name))
                .unwrap_or(0.0);
            let x = sets.get(name.name.as_str()).copied().unwrap_or(folded);
            self.lets.insert(name.name.clone(), (x, name.clone()));
        }
    }

    /// The overrides of `let` constants by name (the last value of a name
    /// given twice), after refusing a name no `let` declares and a NaN.
    /// These diagnostics have no place in the text: they sit at offset 0.
    fn check_sets<'s>(&mut self, sets: &'s [(String, f64)]) -> BTreeMap<&'s str, f64> {
        let mut values = BTreeMap::new();
        for (name, x) in sets {
            if !self.all_lets.contains_key(name) {
                let declared = if self.all_lets.is_empty() {
                    "the program declares no `let` constants".to_string()
                } else {
                    let mut declared: Vec<(&String, &Span)> = self.all_lets.iter().collect();
                    declared.sort_by_key(|(_, span)| span.start);
                    let names: Vec<String> =
                        declared.iter().map(|(n, _)| format!("`{n}`")).collect();
                    format!("the declared constants are {}", names.join(", "))
                };
                let d = Diagnostic::new(
                    "set-unknown",
                    Span::default(),
                    format!(
                        "an override sets `{name}`, but no `let {name}` is declared; {declared}"
                    ),
                )
                .with_label("from an override (`--set`), not from this file")
                .with_help("set a declared `let` constant, or declare it");
                let d = names::did_you_mean(d, name, self.all_lets.keys().map(String::as_str));
                self.err(d);
            } else if x.is_nan() {
                self.err(
                    Diagnostic::new(
                        "nan",
                        Span::default(),
                        format!("an override sets `{name}` to NaN; a constant may not be NaN"),
                    )
                    .with_label("from an override (`--set`), not from this file"),
                );
            } else {
                values.insert(name.as_str(), *x);
            }
        }
        values
    }

    /// A `let` may not share its name with a session attribute.
    pub(super) fn check_lets_against_attributes(&mut self) {
        let clashes: Vec<Ident> = self
            .lets
            .values()
            .filter(|(_, n)| self.attr_slot.contains_key(&n.name))
            .map(|(_, n)| n.clone())
            .collect();
        for n in clashes {
            self.err(Diagnostic::new(
                "let-attribute",
                n.span,
                format!(
                    "`{}` is both a `let` constant and a session attribute; rename one",
                    n.name
                ),
            ));
        }
    }

    /// Declares pool and stage families (sizes folded), with placeholder
    /// options filled by [`Linker::stage_kinds_and_caps`].
    pub(super) fn declare_families(&mut self) {
        for item in self.items {
            let (name, size, span, is_stage) = match item {
                ast::Item::Pool {
                    name, size, span, ..
                } => (name, size, *span, false),
                ast::Item::Stage {
                    name, size, span, ..
                } => (name, size, *span, true),
                _ => continue,
            };
            let word = if is_stage { "stage" } else { "pool" };
            if let Some(d) = names::retired(&name.name, name.span) {
                self.err(d);
            }
            let fams = if is_stage { &self.stages } else { &self.pools };
            if let Some(first) = self.find(fams, &name.name) {
                let first = first.span;
                self.err(
                    Diagnostic::new(
                        "twice",
                        name.span,
                        format!("duplicate {word} `{}`: declared twice", name.name),
                    )
                    .with_secondary(first, "first declared here"),
                );
                continue;
            }
            let count = match size {
                None => 1,
                Some(e) => match self.constant(e, &format!("{word} `{}`: array size", name.name)) {
                    Some(n) if n.fract() == 0.0 && (1.0..=MAX_ARRAY).contains(&n) => n as usize,
                    Some(n) => {
                        self.err(Diagnostic::new(
                            "array-size",
                            e.span,
                            format!(
                                "{word} `{}`: array size must be a positive integer (at most {MAX_ARRAY}), found {n}",
                                name.name
                            ),
                        ));
                        1
                    }
                    None => 1,
                },
            };
            let declared = self.ir_stages.len() + self.ir_pools.len();
            let count = if declared + count > MAX_ARRAY as usize {
                self.err(
                    Diagnostic::new(
                        "array-size",
                        size.as_ref().map_or(name.span, |e| e.span),
                        format!(
                            "{word} `{}`: the program would declare more than {MAX_ARRAY} pool and stage members in all ({declared} before this one, which adds {count})",
                            name.name
                        ),
                    )
                    .with_help("a program declares at most a million members, pools and stages together"),
                );
                1
            } else {
                count
            };
            let fam_name = name.name.clone();
            if is_stage {
                let base = self.ir_stages.len();
                self.stages.push(Family {
                    name: fam_name.clone(),
                    base,
                    count,
                    span,
                });
                self.ir_stages.extend((0..count).map(|_| ir::Stage {
                    name: fam_name.clone(),
                    kind: ir::StageKind::Delay,
                }));
            } else {
                let base = self.ir_pools.len();
                self.pools.push(Family {
                    name: fam_name.clone(),
                    base,
                    count,
                    span,
                });
                self.ir_pools.extend(
                    (0..count).map(|_| ir::Pool::with_cap(fam_name.clone(), f64::INFINITY)),
                );
            }
        }
    }

    /// Folds pool options, then stage kinds (a step stage's options may
    /// read `blocksize` of any pool), into the families' entries.
    pub(super) fn stage_kinds_and_caps(&mut self) {
        for item in self.items {
            if let ast::Item::Pool { name, options, .. } = item
                && let Some(fam) = self.find(&self.pools, &name.name).cloned()
                // A duplicate is already refused.
                && fam.span == item.span()
            {
                self.pool_options(&fam, options);
            }
        }
        for item in self.items {
            let ast::Item::Stage { name, kind, .. } = item else {
                continue;
            };
            let Some(fam) = self.find(&self.stages, &name.name).cloned() else {
                continue;
            };
            if fam.span != item.span() {
                continue;
            }
            let kind = match kind {
                ast::StageKind::Step(options, span) => {
                    let kinds = self.step_stage(&fam, options, *span);
                    for (s, k) in self.ir_stages[fam.base..fam.base + fam.count]
                        .iter_mut()
                        .zip(kinds)
                    {
                        s.kind = k;
                    }
                    continue;
                }
                ast::StageKind::Delay(_) => ir::StageKind::Delay,
                ast::StageKind::Fifo(None, _) => ir::StageKind::Fifo(1),
                ast::StageKind::Fifo(Some(e), _) => {
                    match self.constant(e, &format!("stage `{}`: fifo servers", name.name)) {
                        Some(c) if c.fract() == 0.0 && c >= 0.0 && c <= f64::from(u32::MAX) => {
                            ir::StageKind::Fifo(c as u32)
                        }
                        Some(c) => {
                            self.err(Diagnostic::new(
                                "fifo-servers",
                                e.span,
                                format!(
                                    "stage `{}`: fifo servers must be a positive integer, found {c}",
                                    name.name
                                ),
                            ));
                            ir::StageKind::Fifo(1)
                        }
                        None => ir::StageKind::Fifo(1),
                    }
                }
                ast::StageKind::Ps(e, _) => {
                    let phi = self.lower_expr(e, Moment::PS);
                    match phi.constant_value() {
                        Some(x) if x.is_nan() => {
                            self.err(Diagnostic::new(
                                "nan",
                                e.span,
                                format!("stage `{}`: ps capacity is NaN", name.name),
                            ));
                            ir::StageKind::Ps(ir::Expr::Num(1.0))
                        }
                        Some(x) => ir::StageKind::Ps(ir::Expr::Num(x)),
                        None => ir::StageKind::Ps(phi),
                    }
                }
            };
            for s in &mut self.ir_stages[fam.base..fam.base + fam.count] {
                s.kind = kind.clone();
            }
        }
    }

    /// `share maxmin;` / `share bottleneck;`, at most once.
    pub(super) fn declare_share(&mut self) {
        for item in self.items {
            let ast::Item::Share { policy, span } = item else {
                continue;
            };
            if let Some((_, first)) = self.share {
                self.twice("`share`", *span, first);
                continue;
            }
            let share = match policy.name.as_str() {
                "maxmin" => ir::Share::MaxMin,
                "bottleneck" => ir::Share::Bottleneck,
                other => {
                    self.err(Diagnostic::new(
                        "share-policy",
                        policy.span,
                        format!("`share` takes `maxmin` or `bottleneck`, found `{other}`"),
                    ));
                    ir::Share::MaxMin
                }
            };
            self.share = Some((share, *span));
        }
    }

    /// The arrival law (`arrive none` when absent).
    pub(super) fn arrival(&mut self, arrive: Option<ArriveItem<'_>>) -> ir::Arrival {
        let Some(item) = arrive else {
            return ir::Arrival::None;
        };
        let (law, arg, span) = (item.law, item.arg, &item.span);
        let law_name = law.name.as_str();
        let clauses = self.arrive_clauses(law_name, item.clauses);
        if let Some(path) = item.path {
            return self.arrival_trace(path, &clauses);
        }
        let Some(arg) = arg else {
            if law_name != "none" {
                self.err(Diagnostic::new(
                    "arrival",
                    *span,
                    format!("`{law_name}` needs an argument: `{law_name}(n)`"),
                ));
            }
            return ir::Arrival::None;
        };
        match law_name {
            "poisson" if clauses.peak.is_some() => self.thinned(arg, &clauses),
            "poisson" => {
                if self.reads_now(arg) {
                    self.err(
                        Diagnostic::new(
                            "arrival",
                            arg.span,
                            "a poisson rate that reads `now` needs a declared peak",
                        )
                        .with_label("reads `now`")
                        .with_help("declare the most the rate ever is: `arrive poisson(r(now)) peak (R);` (a serq extension)"),
                    );
                    return ir::Arrival::None;
                }
                self.constant(arg, "poisson rate")
                    .map_or(ir::Arrival::None, ir::Arrival::Poisson)
            }
            "renewal" => {
                let gap = self.lower_expr(arg, Moment::RENEWAL);
                match gap.constant_value() {
                    Some(x) if x.is_nan() => {
                        self.err(Diagnostic::new("nan", arg.span, "renewal gap is NaN"));
                        ir::Arrival::None
                    }
                    Some(x) => ir::Arrival::Renewal(ir::Expr::Num(x)),
                    None => ir::Arrival::Renewal(gap),
                }
            }
            "closed" | "batch" => {
                let min = if law_name == "batch" { 1.0 } else { 0.0 };
                let Some(n) = self.constant(arg, &format!("{law_name}(n)")) else {
                    return ir::Arrival::None;
                };
                if !(n.is_finite() && n.fract() == 0.0 && n >= min) {
                    self.err(Diagnostic::new(
                        "arrival",
                        arg.span,
                        format!("{law_name}(n) needs a whole n ≥ {min}, found {n}"),
                    ));
                    return ir::Arrival::None;
                }
                if n > ir::MAX_SESSIONS_AT_ZERO as f64 {
                    self.err(
                        Diagnostic::new(
                            "arrival",
                            arg.span,
                            format!(
                                "{law_name}(n) creates n sessions at time 0; n is at most {}, found {n}",
                                ir::MAX_SESSIONS_AT_ZERO
                            ),
                        )
                        .with_help("use `arrive poisson(rate)` for a long stream of sessions"),
                    );
                    return ir::Arrival::None;
                }
                if law_name == "batch" {
                    ir::Arrival::Batch(n as u64)
                } else {
                    ir::Arrival::Closed(n as u64)
                }
            }
            "none" => {
                self.err(Diagnostic::new(
                    "arrival",
                    arg.span,
                    "`arrive none` takes no argument",
                ));
                ir::Arrival::None
            }
            other => {
                let d = Diagnostic::new("unknown-arrival", law.span, format!("unknown arrival law `{other}`"))
                    .with_help("write `arrive poisson(rate)`, `renewal(gap)`, `closed(n)`, `batch(n)` or `none`");
                self.err(names::did_you_mean(
                    d,
                    other,
                    ["poisson", "renewal", "closed", "batch", "none"],
                ));
                ir::Arrival::None
            }
        }
    }

    /// The clauses after the law (extensions), each folded to constants,
    /// at most once, and only on the law it belongs to.
    fn arrive_clauses(&mut self, law: &str, written: &[ast::ArriveClause]) -> ArriveClauses {
        let mut out = ArriveClauses::default();
        let mut seen: Vec<(&str, Span)> = Vec::new();
        for c in written {
            let word = c.word.name.as_str();
            if let Some((_, first)) = seen.iter().find(|(w, _)| *w == word) {
                self.twice(&format!("`{word}`"), c.span, *first);
                continue;
            }
            seen.push((word, c.span));
            let (owner, arity) = match word {
                "peak" => ("poisson", 1),
                "speed" => ("trace", 1),
                _ => ("trace", 2),
            };
            if law != owner {
                self.err(
                    Diagnostic::new(
                        "arrival",
                        c.word.span,
                        format!("`{word}` applies only to `arrive {owner}`"),
                    )
                    .with_help("`arrive poisson(rate) peak (r);`, `arrive trace \"FILE\" window (start, end) speed (x);`"),
                );
                continue;
            }
            if c.args.len() != arity {
                let shape = if arity == 1 { "(x)" } else { "(start, end)" };
                self.err(Diagnostic::new(
                    "arity",
                    c.span,
                    format!(
                        "`{word}` takes {arity} argument(s): `{word} {shape}`, got {}",
                        c.args.len()
                    ),
                ));
                continue;
            }
            let values: Vec<Option<f64>> = c
                .args
                .iter()
                .map(|a| self.constant(a, &format!("`{word}`")))
                .collect();
            let [first, ..] = values[..] else { continue };
            match word {
                "peak" => {
                    if let Some(r) = first
                        && !(r.is_finite() && r > 0.0)
                    {
                        self.err(Diagnostic::new(
                            "arrival",
                            c.args[0].span,
                            format!("a poisson peak must be above 0 and finite, found {r}"),
                        ));
                    } else {
                        out.peak = first.map(|r| (r, c.span));
                    }
                }
                "speed" => {
                    if let Some(x) = first
                        && !(x.is_finite() && x > 0.0)
                    {
                        self.err(Diagnostic::new(
                            "arrival",
                            c.args[0].span,
                            format!("a trace's speed must be above 0 and finite, found {x}"),
                        ));
                    } else {
                        out.speed = first;
                    }
                }
                _ => {
                    if let (Some(a), Some(b)) = (first, values[1]) {
                        if !(a.is_finite() && a >= 0.0 && b > a) {
                            self.err(
                                Diagnostic::new(
                                    "arrival",
                                    c.span,
                                    format!("window ({a}, {b}) is empty or reversed: it needs 0 ≤ start < end, start finite"),
                                )
                                .with_help("the window's start and end are seconds after the trace's first row"),
                            );
                        } else {
                            out.window = Some((a, b));
                        }
                    }
                }
            }
        }
        out
    }

    /// `arrive trace "FILE" [window (a, b)] [speed (x)];`.
    fn arrival_trace(&mut self, path: &str, clauses: &ArriveClauses) -> ir::Arrival {
        let (start, end) = clauses.window.unwrap_or((0.0, f64::INFINITY));
        ir::Arrival::Trace(ir::ArrivalTrace {
            path: path.to_string(),
            speed: clauses.speed.unwrap_or(1.0),
            start,
            end,
        })
    }

    /// `arrive poisson(rate) peak (r);`: the rate may read `now`.
    fn thinned(&mut self, arg: &ast::Expr, clauses: &ArriveClauses) -> ir::Arrival {
        let Some((peak, _)) = clauses.peak else {
            return ir::Arrival::None;
        };
        let before = self.diags.len();
        let rate = self.lower_expr(arg, Moment::RATE);
        if self.diags.len() > before {
            return ir::Arrival::None;
        }
        let mut bad = false;
        rate.visit(&mut |e| {
            bad |= matches!(e, ir::Expr::Sample(..))
                || matches!(e, ir::Expr::Call(f, _) if !matches!(f.signature(), ir::FunKind::Pure(_)))
        });
        if bad {
            self.err(Diagnostic::new(
                "arrival",
                arg.span,
                "a poisson rate with a peak may use only constants, pure functions and `now` (no attribute, draw or observable)",
            ));
            return ir::Arrival::None;
        }
        match rate.constant_value() {
            Some(r) if !(r.is_finite() && r >= 0.0 && r <= peak) => {
                self.err(Diagnostic::new(
                    "arrival",
                    arg.span,
                    format!(
                        "the poisson rate {r} must be a finite number between 0 and its peak {peak}"
                    ),
                ));
                ir::Arrival::None
            }
            Some(r) => ir::Arrival::Thinned(ir::Thinned {
                rate: ir::Expr::Num(r),
                peak,
            }),
            None => ir::Arrival::Thinned(ir::Thinned { rate, peak }),
        }
    }

    /// Whether `e` reads `now` (its diagnostics as a rate are not kept).
    fn reads_now(&mut self, e: &ast::Expr) -> bool {
        let before = self.diags.len();
        let lowered = self.lower_expr(e, Moment::RATE);
        self.diags.truncate(before);
        let mut now = false;
        lowered.visit(&mut |x| now |= matches!(x, ir::Expr::Ctx(ir::Ctx::Now)));
        now
    }

    /// The `run` block's options with the overrides applied.
    pub(super) fn run_options(&mut self, ov: &Overrides) -> RunOptions {
        let mut seen: Vec<(String, Span)> = Vec::new();
        let mut out = RunOptions {
            horizon: f64::NAN,
            warmup: 0.0,
            seed: 1,
            arrivals: None,
        };
        let mut has_horizon = false;
        for item in self.items {
            let ast::Item::Run { options, span } = item else {
                continue;
            };
            if let Some(first) = self.run_span {
                self.twice("the `run` block", *span, first);
                continue;
            }
            self.run_span = Some(*span);
            for o in options {
                let word = o.name.name.as_str();
                if !["horizon", "warmup", "seed", "arrivals"].contains(&word) {
                    let d = Diagnostic::new(
                        "unknown-option",
                        o.name.span,
                        format!("unknown run option `{word}`"),
                    );
                    self.err(names::did_you_mean(
                        d,
                        word,
                        ["horizon", "warmup", "seed", "arrivals"],
                    ));
                    continue;
                }
                if let Some((_, first)) = seen.iter().find(|(w, _)| w == word) {
                    let first = *first;
                    self.twice(&format!("the run option `{word}`"), o.span, first);
                    continue;
                }
                seen.push((word.to_string(), o.span));
                let overridden = match word {
                    "horizon" => ov.horizon.is_some(),
                    "warmup" => ov.warmup.is_some(),
                    "seed" => ov.seed.is_some(),
                    _ => ov.arrivals.is_some(),
                };
                has_horizon |= word == "horizon";
                if overridden {
                    continue;
                }
                let Some(x) = self.constant(&o.value, &format!("run option `{word}`")) else {
                    continue;
                };
                match word {
                    "horizon" => out.horizon = x,
                    "warmup" => out.warmup = x,
                    // Truncation with saturation, as the reference converts.
                    "seed" => out.seed = x as u64,
                    _ => {
                        let n = x.trunc();
                        if !(n.is_finite() && n >= 1.0) {
                            self.err(Diagnostic::new(
                                "arrivals",
                                o.value.span,
                                format!("run: arrivals must be a finite number ≥ 1, found {x}"),
                            ));
                        } else {
                            out.arrivals = Some(n as u64);
                        }
                    }
                }
            }
        }
        if let Some(h) = ov.horizon {
            out.horizon = h;
        } else if !has_horizon {
            self.err(Diagnostic::new(
                "no-horizon",
                self.run_span.unwrap_or_default(),
                "no horizon (run { horizon T; })",
            ));
        }
        if let Some(w) = ov.warmup {
            out.warmup = w;
        }
        if let Some(s) = ov.seed {
            out.seed = s;
        }
        if let Some(a) = ov.arrivals {
            out.arrivals = Some(a);
        }
        out
    }
}

/// The clauses after an arrival law, folded.
#[derive(Default)]
struct ArriveClauses {
    /// `peak (r)` and where it was written.
    peak: Option<(f64, Span)>,
    /// `speed (x)`.
    speed: Option<f64>,
    /// `window (start, end)`.
    window: Option<(f64, f64)>,
}
