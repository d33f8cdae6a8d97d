//! The linker: turns an `ast::Program` into an `ir::Program`.
//!
//! Architecture invariant: nothing here runs a program or knows the engine;
//! every rule the IR must obey is checked again by `ir::Program::validate`,
//! so a program that arrives as JSON meets it too. The linker itself checks
//! what the IR cannot express (names, `def`s, `let`s, duplicates, sugar,
//! values a number field cannot hold), then runs the validator on its output
//! and reports the validator's faults at the source span of the statement.
//!
//! Passes, in order: declarations (`decls`), `let` folding, `def`
//! expansion (`defs`), attribute and observation slots, statements
//! (`stmts`, with expressions in `exprs`), the workload and the `run`
//! block, then validation. (The pass modules are private, so these are
//! plain names rather than links: `cargo doc` would warn on a link.)

mod admission;
mod decls;
mod defs;
mod exprs;
mod lints;
mod names;
mod options;
mod stmts;
mod workload;

pub use names::closest;

use std::collections::{BTreeMap, HashMap};

use crate::ir;
use crate::syntax::ast::{self, Ident, Span};
use crate::syntax::{Diagnostic, Sources};

/// Values given on the command line (or by the library's caller) that
/// replace `let` constants and the `run` block's options before the program
/// is checked.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Overrides {
    /// Replace `let` constants by name, in the order given (spec §3.1,
    /// `compile(sets=…)`): each value takes the place of the constant's
    /// initializer before any later `let`, array size, stage rate or other
    /// constant position is folded, so `let b = a*3+1;` sees the new `a`.
    /// The initializer is still checked (an error in the text stays an
    /// error). A name no `let` declares is refused, listing the declared
    /// constants; a NaN value is refused; a name given twice takes the last
    /// value. Program IR read from JSON has no `let`s, so
    /// [`crate::compile_ir`] refuses any.
    pub sets: Vec<(String, f64)>,
    /// Replaces (or supplies) `horizon`.
    pub horizon: Option<f64>,
    /// Replaces `warmup`.
    pub warmup: Option<f64>,
    /// Replaces `seed`.
    pub seed: Option<u64>,
    /// Replaces `arrivals`.
    pub arrivals: Option<u64>,
    /// Replace the body of an expression `def` by name (spec §3.2,
    /// `compile(defs=…)`): the text is parsed as an expression and read
    /// where the `def` is used, its parameters bound as before. A name no
    /// `def` declares, a statement `def` and text that is not an
    /// expression are refused.
    pub defs: Vec<(String, String)>,
    /// Replaces the file of the workload's `trace` (`--trace FILE`,
    /// `compile(trace=…)`): a relative path is read from the caller's
    /// working directory, not the program's. Read by
    /// [`crate::compile_text_at`] (and so [`crate::compile_file`]), which
    /// then never reads the program's own trace file, and written into IR
    /// by [`crate::compile_ir`]; a program without a `trace` workload
    /// refuses it. [`crate::compile_source`] does not read traces.
    pub trace: Option<std::path::PathBuf>,
    /// Replaces the file of `arrive trace "FILE"` (an extension;
    /// `--arrival-trace FILE`, `compile(arrival_trace=…)`), as
    /// [`Overrides::trace`] replaces a turn trace's: a relative path is read
    /// from the caller's working directory; a program that does not arrive
    /// by a trace refuses it.
    pub arrival_trace: Option<std::path::PathBuf>,
}

/// A declared pool or stage family: its flattened entries `base..base+count`.
#[derive(Clone, Debug)]
struct Family {
    name: String,
    base: usize,
    count: usize,
    /// The declaration.
    span: Span,
}

/// The state of one link.
struct Linker<'a> {
    items: &'a [ast::Item],
    diags: Vec<Diagnostic>,
    /// `let` constants folded so far: value and name as declared.
    lets: BTreeMap<String, (f64, Ident)>,
    /// Every `let` name, for "declared after it" messages.
    all_lets: BTreeMap<String, Span>,
    defs: defs::Defs,
    pools: Vec<Family>,
    stages: Vec<Family>,
    ir_pools: Vec<ir::Pool>,
    ir_stages: Vec<ir::Stage>,
    attrs: Vec<String>,
    /// Attribute name -> slot (lookup only).
    attr_slot: HashMap<String, usize>,
    /// The attributes a `set` or `choose` assigns, and where first.
    written: BTreeMap<String, Span>,
    /// The `at admission` bindings their hold's body reads, by name, and
    /// where first bound: such a name is an attribute only inside those
    /// bodies (spec §8.4).
    bound: BTreeMap<String, Span>,
    /// The bindings of the hold bodies being lowered.
    in_binding: Vec<String>,
    observes: Vec<String>,
    observe_index: HashMap<String, usize>,
    blocks: Vec<Vec<ir::Stmt>>,
    /// The source span of every statement, parallel to `blocks`.
    spans: Vec<Vec<Span>>,
    /// Where each statement was spliced from a `def` (else its span),
    /// parallel to `blocks`: a statement written in a library takes its
    /// use site's position, in the program's file.
    sites: Vec<Vec<Span>>,
    share: Option<(ir::Share, Span)>,
    workload_span: Option<Span>,
    run_span: Option<Span>,
    /// The spans of the `def` items: an error inside one is an error of
    /// each use, reported once with the uses as notes.
    def_spans: Vec<Span>,
    /// The use site (in the session's text) of the statement being lowered.
    lowering: Option<Span>,
}

/// Links a parsed program. `source` is the text it was parsed from (for
/// the positions side table). Returns every link error found.
pub fn link(
    program: &ast::Program,
    source: &str,
    overrides: &Overrides,
) -> Result<ir::ValidProgram, Vec<Diagnostic>> {
    link_sources(program, &Sources::new("", source), overrides)
}

/// Links a program parsed from several texts (its file and the libraries
/// spliced into it by [`crate::syntax::libraries::resolve`]); a statement's
/// position is its line and column in the program's file (for one written
/// in a library, that of the use it was spliced at).
pub fn link_sources(
    program: &ast::Program,
    sources: &Sources,
    overrides: &Overrides,
) -> Result<ir::ValidProgram, Vec<Diagnostic>> {
    link_with_lints(program, sources, overrides).map(|(program, _)| program)
}

/// Links as [`link_sources`] does and, for a program that links, also
/// returns the lints' warnings (an attribute set and never read, one read
/// before anything sets it), in the order of the program's text. The
/// warnings never change the program.
pub fn link_with_lints(
    program: &ast::Program,
    sources: &Sources,
    overrides: &Overrides,
) -> Result<(ir::ValidProgram, Vec<Diagnostic>), Vec<Diagnostic>> {
    let mut l = Linker {
        items: &program.items,
        diags: Vec::new(),
        lets: BTreeMap::new(),
        all_lets: BTreeMap::new(),
        defs: defs::Defs::default(),
        pools: Vec::new(),
        stages: Vec::new(),
        ir_pools: Vec::new(),
        ir_stages: Vec::new(),
        attrs: ir::BUILTIN_ATTRS.iter().map(|s| s.to_string()).collect(),
        attr_slot: ir::BUILTIN_ATTRS
            .iter()
            .enumerate()
            .map(|(i, s)| (s.to_string(), i))
            .collect(),
        written: BTreeMap::new(),
        bound: BTreeMap::new(),
        in_binding: Vec::new(),
        observes: Vec::new(),
        observe_index: HashMap::new(),
        blocks: Vec::new(),
        spans: Vec::new(),
        sites: Vec::new(),
        share: None,
        workload_span: None,
        run_span: None,
        def_spans: program
            .items
            .iter()
            .filter_map(|i| match i {
                ast::Item::Def { span, .. } => Some(*span),
                _ => None,
            })
            .collect(),
        lowering: None,
    };
    l.fold_lets(&overrides.sets);
    let mut def_diags = Vec::new();
    l.defs = defs::Defs::build(l.items, &l.lets, &overrides.defs, &mut def_diags);
    l.diags.extend(def_diags);
    l.declare_families();
    l.declare_share();
    let parts = l.gather_blocks();
    let init = l.expand(&parts.init);
    let turn = l.expand(&parts.turn);
    let session = l.session_program(&parts);
    for (stmts, what) in [(&init, "init"), (&turn, "turn")] {
        l.check_workload_block(stmts, what);
    }
    for stmts in [&init, &turn, &session] {
        l.collect_slots(stmts);
    }
    l.check_lets_against_attributes();
    l.check_binding_names();
    let hidden = l.hidden(&parts.hidden);
    l.set_then_header(&session);
    l.stage_kinds_and_caps();
    // The three ids first: a block nested in one (a `branch` in `init`,
    // which `check_workload_block` refused) must not take the next one's.
    let ids = [l.new_block(), l.new_block(), l.new_block()];
    debug_assert_eq!(ids, [0, 1, 2], "init, turn and session are blocks 0, 1, 2");
    for (stmts, id) in [&init, &turn, &session].into_iter().zip(ids) {
        l.lower_block(stmts, id);
    }
    let arrival = l.arrival(parts.arrive);
    let options = l.run_options(overrides);
    if !l.diags.is_empty() {
        return Err(merge_repeats(l.diags));
    }
    // Run-time errors show a position in the program's file: a statement
    // written in a library is placed at the use that spliced it.
    let positions = l
        .spans
        .iter()
        .zip(&l.sites)
        .map(|(spans, sites)| {
            spans
                .iter()
                .zip(sites)
                .map(|(span, site)| {
                    let at = if sources.file_of(span.start) == 0 {
                        span
                    } else {
                        site
                    };
                    let (_, line, col) = sources.line_col(at.start);
                    ir::Position { line, col }
                })
                .collect()
        })
        .collect();
    let program = ir::Program {
        version: ir::IR_VERSION,
        attrs: l.attrs.clone(),
        observes: l.observes.clone(),
        pools: std::mem::take(&mut l.ir_pools),
        stages: std::mem::take(&mut l.ir_stages),
        arrival,
        init: 0,
        turn: 1,
        session: 2,
        blocks: std::mem::take(&mut l.blocks),
        horizon: options.horizon,
        warmup: options.warmup,
        seed: options.seed,
        arrivals: options.arrivals,
        share: l.share.map(|(s, _)| s),
        hidden,
        trace: parts
            .trace
            .map(|(path, ordered, _)| ir::TraceSpec { path, ordered }),
        positions: Some(positions),
    };
    match program.validate() {
        Ok(valid) => {
            let names = lints::Names {
                attrs: &valid.attrs,
                written: &l.written,
                bound: &l.bound,
                spans: &l.spans,
                sources,
            };
            let mut warnings = lints::lints(&valid, &names);
            warnings.sort_by_key(|d| (d.span.start, d.rule));
            Ok((valid, warnings))
        }
        Err(errors) => Err(errors
            .into_iter()
            .map(|e| blame_flags(l.diagnostic_of(&e), overrides))
            .collect()),
    }
}

/// Merges the diagnostics that say the same thing at the same place (a
/// fault inside a `def`, met once per use) into the first, which gathers
/// the others' notes (their use sites): one error, every use named.
fn merge_repeats(diagnostics: Vec<Diagnostic>) -> Vec<Diagnostic> {
    let mut out: Vec<Diagnostic> = Vec::new();
    for d in diagnostics {
        let same = out
            .iter_mut()
            .find(|o| o.rule == d.rule && o.span == d.span && o.message == d.message);
        match same {
            Some(first) => {
                for note in d.secondary {
                    if !first.secondary.contains(&note) {
                        first.secondary.push(note);
                    }
                }
            }
            None => out.push(d),
        }
    }
    out
}

/// Whether `d` is a fault of the run options that a flag took part in
/// (`--horizon`, `--warmup`, `--arrivals`): the flag's fault, not the
/// program's, so the CLI makes it a usage error.
pub fn blames_flags(d: &Diagnostic, overrides: &Overrides) -> bool {
    let horizon_limit = d.rule == "limits" && d.message.starts_with("horizon");
    (d.rule == "run-options" || horizon_limit)
        && (overrides.horizon.is_some()
            || overrides.warmup.is_some()
            || overrides.arrivals.is_some())
}

/// A fault of the run options that an override took part in names it: the
/// run block the caret points at no longer holds the values at fault.
fn blame_flags(d: Diagnostic, overrides: &Overrides) -> Diagnostic {
    if !blames_flags(&d, overrides) {
        return d;
    }
    let mut flags = Vec::new();
    if let Some(h) = overrides.horizon {
        flags.push(format!("`--horizon {}`", ir::shown(h)));
    }
    if let Some(w) = overrides.warmup {
        flags.push(format!("`--warmup {}`", ir::shown(w)));
    }
    if let Some(n) = overrides.arrivals {
        flags.push(format!("`--arrivals {n}`"));
    }
    let flags = flags.join(" and ");
    let message = format!("{} (with {flags})", d.message);
    Diagnostic { message, ..d }
        .with_label(format!("these run options, with {flags} in their place"))
        .with_help(format!("change {flags}, or the run block"))
}

/// The blocks and the arrival of the program, gathered from its items.
#[derive(Default)]
struct Parts<'a> {
    init: Vec<ast::Stmt>,
    turn: Vec<ast::Stmt>,
    /// The top-level `session`, if not empty.
    session: Option<(Vec<ast::Stmt>, Span)>,
    /// The workload's `session` (the client of `server`), if not empty.
    client: Option<(Vec<ast::Stmt>, Span)>,
    /// The `server` block.
    server: Option<(Vec<ast::Stmt>, Span)>,
    arrive: Option<ArriveItem<'a>>,
    /// The names of every `hidden` line, in order.
    hidden: Vec<&'a Ident>,
    /// `trace "path" [ordered]`.
    trace: Option<(String, bool, Span)>,
}

/// The workload's `arrive` line as written.
#[derive(Clone, Copy)]
struct ArriveItem<'a> {
    law: &'a Ident,
    arg: Option<&'a ast::Expr>,
    /// `arrive trace "FILE"`'s file.
    path: Option<&'a str>,
    clauses: &'a [ast::ArriveClause],
    span: Span,
}

/// The folded `run` options.
struct RunOptions {
    horizon: f64,
    warmup: f64,
    seed: u64,
    arrivals: Option<u64>,
}

impl<'a> Linker<'a> {
    fn err(&mut self, mut d: Diagnostic) {
        // A fault inside a `def`, met while lowering one of its uses: name
        // the use (the same fault at each use is merged into one).
        let within =
            |outer: Span, inner: Span| outer.start <= inner.start && inner.end <= outer.end;
        if let Some(site) = self.lowering
            && let Some(&def) = self.def_spans.iter().find(|&&def| within(def, d.span))
            && !within(def, site)
        {
            d = d.with_secondary(site, "in this use of the definition");
        }
        self.diags.push(d);
    }

    /// A "given twice" refusal with the first place as a secondary label.
    fn twice(&mut self, what: &str, span: Span, first: Span) {
        self.err(
            Diagnostic::new("twice", span, format!("{what} is given twice"))
                .with_label("given again here")
                .with_secondary(first, "first given here"),
        );
    }

    /// Expands the `def` uses of a block.
    fn expand(&mut self, stmts: &[ast::Stmt]) -> Vec<ast::Stmt> {
        let mut diags = Vec::new();
        let out = self.defs.expand_stmts(stmts, &mut diags);
        self.diags.extend(diags);
        out
    }

    /// Gathers the workload's blocks and arrival, the session and the
    /// duplicates among them.
    fn gather_blocks(&mut self) -> Parts<'a> {
        let mut parts = Parts::default();
        let (mut init_span, mut turn_span): (Option<Span>, Option<Span>) = (None, None);
        for item in self.items {
            match item {
                ast::Item::Workload { items, span } => {
                    if let Some(first) = self.workload_span {
                        self.err(
                            Diagnostic::new(
                                "twice",
                                *span,
                                "duplicate workload: `workload` is given twice",
                            )
                            .with_secondary(first, "first given here"),
                        );
                        continue;
                    }
                    self.workload_span = Some(*span);
                    for w in items {
                        match w {
                            ast::WorkloadItem::Arrive {
                                law,
                                arg,
                                path,
                                clauses,
                                span,
                            } => {
                                if let Some(first) = parts.arrive {
                                    self.twice("`arrive`", *span, first.span);
                                } else {
                                    parts.arrive = Some(ArriveItem {
                                        law,
                                        arg: arg.as_ref(),
                                        path: path.as_deref(),
                                        clauses,
                                        span: *span,
                                    });
                                }
                            }
                            ast::WorkloadItem::Init(b, span) => {
                                if let Some(first) = init_span {
                                    self.twice("the workload's `init` block", *span, first);
                                } else {
                                    init_span = Some(*span);
                                    parts.init = b.stmts.clone();
                                }
                            }
                            ast::WorkloadItem::Turn(b, span) => {
                                if let Some(first) = turn_span {
                                    self.twice("the workload's `turn` block", *span, first);
                                } else {
                                    turn_span = Some(*span);
                                    parts.turn = b.stmts.clone();
                                }
                            }
                            ast::WorkloadItem::Hidden(names, _) => parts.hidden.extend(names),
                            ast::WorkloadItem::Trace {
                                path,
                                ordered,
                                span,
                            } => {
                                if let Some((_, _, first)) = parts.trace {
                                    self.twice("the workload's `trace`", *span, first);
                                } else {
                                    parts.trace = Some((path.clone(), *ordered, *span));
                                }
                            }
                            ast::WorkloadItem::Session(b, span) => {
                                if let Some((_, first)) = parts.client {
                                    self.twice("the workload's `session`", *span, first);
                                } else if !b.stmts.is_empty() {
                                    parts.client = Some((b.stmts.clone(), *span));
                                }
                            }
                        }
                    }
                }
                ast::Item::Use { path, span } => self.err(
                    Diagnostic::new(
                        "use",
                        *span,
                        format!("`use \"{path}\"` reads a file next to the program, and this program was given as text"),
                    )
                    .with_help("compile the program from its file (`serq check FILE`), so the library's path resolves"),
                ),
                // `compile_source` and `compile_text_at` splice shipped
                // libraries before linking; an AST linked directly has not.
                ast::Item::UseShipped { name, span } => self.err(
                    Diagnostic::new(
                        "use",
                        *span,
                        format!("`use <{name}>` was not spliced before linking"),
                    )
                    .with_help("compile with `serq::compile_source` or `serq::compile_text_at`, which read the libraries serq ships"),
                ),
                ast::Item::Server { body, span } => {
                    if let Some((_, first)) = parts.server {
                        self.err(
                            Diagnostic::new(
                                "twice",
                                *span,
                                "duplicate server: `server` is given twice",
                            )
                            .with_secondary(first, "first given here"),
                        );
                        continue;
                    }
                    parts.server = Some((body.stmts.clone(), *span));
                }
                ast::Item::Session { body, span } => {
                    if body.stmts.is_empty() {
                        continue;
                    }
                    if let Some((_, first)) = parts.session {
                        self.err(
                            Diagnostic::new(
                                "twice",
                                *span,
                                "duplicate session: `session` is given twice",
                            )
                            .with_secondary(first, "first given here"),
                        );
                        continue;
                    }
                    parts.session = Some((body.stmts.clone(), *span));
                }
                _ => {}
            }
        }
        parts
    }

    /// `init` and `turn` may only `set` and `observe`.
    fn check_workload_block(&mut self, stmts: &[ast::Stmt], what: &str) {
        for s in stmts {
            if !matches!(
                s.kind,
                ast::StmtKind::Set { .. } | ast::StmtKind::Observe { .. }
            ) {
                self.err(Diagnostic::new(
                    "workload-block",
                    s.span,
                    format!(
                        "workload blocks may only `set` and `observe`; the `{what}` block has a `{}`",
                        stmts::word(&s.kind)
                    ),
                ));
            }
        }
    }

    /// A diagnostic for a validator fault, at the statement's span (or the
    /// declaration the message names).
    fn diagnostic_of(&self, e: &ir::IrError) -> Diagnostic {
        let span = match e.at {
            Some((b, i)) => self.spans.get(b).and_then(|s| s.get(i)).copied(),
            None => self.span_named_by(&e.message),
        };
        let d = Diagnostic::new(e.rule, span.unwrap_or_default(), e.message.as_str());
        match e.help {
            Some(h) => d.with_help(h),
            None => d,
        }
    }

    /// The declaration a program-level message names.
    fn span_named_by(&self, message: &str) -> Option<Span> {
        let named = |word: &str, fams: &[Family]| {
            fams.iter().find_map(|f| {
                message
                    .contains(&format!("{word} `{}`", f.name))
                    .then_some(f.span)
            })
        };
        named("stage", &self.stages)
            .or_else(|| named("pool", &self.pools))
            .or_else(|| {
                message
                    .contains("share")
                    .then_some(self.share.map(|s| s.1))
                    .flatten()
            })
            .or_else(|| {
                ["horizon", "warmup", "arrivals", "seed"]
                    .iter()
                    .any(|w| message.contains(w))
                    .then_some(self.run_span)
                    .flatten()
            })
            .or(self.workload_span)
    }
}
