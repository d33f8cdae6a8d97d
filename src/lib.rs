//! serq: a language and simulator for LLM serving deployments.
//!
//! The pipeline is one way through: text -> [`syntax`] (AST) -> [`link`]
//! (IR, [`ir::Program`]) -> [`engine`] -> [`report::Report`].
//!
//! ```
//! let source = "stage s : ps(1);
//!               workload { arrive batch(2); }
//!               session { run s (1); observe done = now; }
//!               run { horizon 10; }";
//! let program = serq::compile_source(source, &serq::Overrides::default()).unwrap();
//! let report = serq::run(&program).unwrap();
//! // Two equal jobs share ps(1) at rate 1/2 each: both end at 2.
//! assert_eq!(report.observes[0].samples, vec![2.0, 2.0]);
//! ```

#![warn(missing_docs)]

pub mod engine;
pub mod fit;
pub mod ir;
pub mod link;
pub mod report;
pub mod study;
pub mod syntax;
pub mod timeline;
pub mod trace;
pub mod traffic;
pub mod view;

use std::path::{Path, PathBuf};

pub use engine::{RunError, RunOptions, SessionCounts};
pub use ir::{Program, ValidProgram};
pub use link::Overrides;
pub use report::Report;
pub use syntax::Diagnostic;

/// Parses and links program text into validated IR, or returns every
/// diagnostic found (syntax errors first; linking needs a clean parse).
///
/// The overrides replace `let` constants by name (array sizes and every
/// other constant position see the new value) and the `run` block's
/// options; a name no `let` declares is a diagnostic, not a panic.
///
/// ```
/// use serq::{Overrides, compile_source};
/// let source = "let N = 2;
///               stage s[N] : ps(1);
///               workload { arrive batch(1); }
///               session { run s[0] (1); }
///               run { horizon 10; }";
/// let sets = Overrides { sets: vec![("N".into(), 5.0)], ..Overrides::default() };
/// assert_eq!(compile_source(source, &sets).unwrap().stages.len(), 5);
///
/// let unknown = Overrides { sets: vec![("M".into(), 1.0)], ..Overrides::default() };
/// let diagnostics = compile_source(source, &unknown).unwrap_err();
/// assert!(diagnostics[0].message.contains("`M`"));
/// ```
pub fn compile_source(
    source: &str,
    overrides: &Overrides,
) -> Result<ValidProgram, Vec<Diagnostic>> {
    let (ast, diagnostics) = syntax::parse(source);
    if !diagnostics.is_empty() {
        return Err(diagnostics);
    }
    // Only the libraries serq ships (`use <name>;`) resolve without a
    // file; a program naming none links as `link::link` would link it.
    let mut sources = syntax::Sources::new("", source);
    let (ast, diagnostics) = syntax::libraries::resolve_shipped(ast, &mut sources);
    if !diagnostics.is_empty() {
        return Err(diagnostics);
    }
    link::link_sources(&ast, &sources, overrides)
}

/// Reads IR JSON, applies the overrides and validates the result.
///
/// IR has no `let` constants (they are folded into numbers), so
/// [`Overrides::sets`] must be empty: a set is refused, naming each.
/// [`Program::to_json`] writes what this reads.
///
/// ```
/// use serq::{Overrides, compile_ir, compile_source};
/// let source = "stage s : delay;
///               workload { arrive batch(1); }
///               session { run s (1); }
///               run { horizon 10; }";
/// let program = compile_source(source, &Overrides::default()).unwrap();
/// let json = program.to_json();
/// let seven = Overrides { seed: Some(7), ..Overrides::default() };
/// let again = compile_ir(&json, &seven).unwrap();
/// assert_eq!((again.seed, again.stages.len()), (7, 1));
/// ```
pub fn compile_ir(json: &str, overrides: &Overrides) -> Result<ValidProgram, Vec<ir::IrError>> {
    if !overrides.sets.is_empty() {
        return Err(overrides
            .sets
            .iter()
            .map(|(name, _)| {
                ir::IrError::new(
                    "set-unknown",
                    format!(
                        "an override sets `{name}`, but IR has no `let` constants to set \
                         (they were folded when it was linked); set it on the source program"
                    ),
                )
            })
            .collect());
    }
    let mut program = Program::read_json(json).map_err(|e| vec![e])?;
    if let Some(given) = &overrides.trace {
        let Some(spec) = &mut program.trace else {
            return Err(vec![ir::IrError::new(
                "trace-unused",
                format!(
                    "a trace override gives `{}`, but the program has no `trace` workload",
                    given.display()
                ),
            )]);
        };
        spec.path = absolute(given).display().to_string();
    }
    if let Some(given) = &overrides.arrival_trace {
        let ir::Arrival::Trace(spec) = &mut program.arrival else {
            return Err(vec![ir::IrError::new(
                "trace-unused",
                format!(
                    "an arrival trace override gives `{}`, but the program does not `arrive trace`",
                    given.display()
                ),
            )]);
        };
        spec.path = absolute(given).display().to_string();
    }
    apply_overrides(overrides, &mut program);
    program.validate()
}

/// Simulates a validated program and returns its report; a run-time
/// fault (a negative amount, an index out of range) is a [`RunError`].
///
/// ```
/// let source = "stage s : delay;
///               workload { arrive batch(3); }
///               session { set t0 = now; run s (2); observe response = now - t0; }
///               run { horizon 10; }";
/// let program = serq::compile_source(source, &serq::Overrides::default()).unwrap();
/// let report = serq::run(&program).unwrap();
/// // A delay serves every session at once: each response is exactly 2.
/// let response = report.observation("response").unwrap();
/// assert_eq!((response.count(), response.mean()), (3, Some(2.0)));
/// ```
pub fn run(program: &ValidProgram) -> Result<Report, RunError> {
    engine::run(program)
}

/// Simulates a program as [`run`] does, watched and bounded by
/// [`RunOptions`]: a progress callback (called with the clock about every
/// [`engine::PROGRESS_EVERY`] events), a cap on events, and invariant
/// checks after every event.
///
/// ```
/// use serq::{Overrides, RunOptions, compile_source, run_with};
/// let source = "stage s : fifo;
///               workload { arrive poisson(0.5); }
///               session { run s (1); }
///               run { horizon 600000; }";
/// let program = compile_source(source, &Overrides::default()).unwrap();
///
/// // About 600 000 events (an arrival and an end per session): the callback
/// // sees the clock about six times.
/// let mut seen = Vec::new();
/// let mut progress = |now: f64| seen.push(now);
/// let mut options = RunOptions { progress: Some(&mut progress), check_invariants: true,
///                                ..RunOptions::default() };
/// let report = run_with(&program, &mut options).unwrap();
/// assert!(seen.len() >= 5 && seen.windows(2).all(|w| w[0] <= w[1]));
/// assert!(report.events > 500_000);
///
/// // A cap on events stops the run with an error that names it.
/// let mut capped = RunOptions { max_events: Some(1000), ..RunOptions::default() };
/// let error = run_with(&program, &mut capped).unwrap_err();
/// assert!(error.message.contains("1000 events"), "{error}");
/// ```
pub fn run_with(program: &ValidProgram, options: &mut RunOptions<'_>) -> Result<Report, RunError> {
    engine::run_with(program, options)
}

/// Why [`compile_file`] gave no program.
///
/// ```
/// use serq::{CompileError, Overrides, compile_file};
/// let path = std::env::temp_dir().join(format!("serq-doc-bad-{}.sq", std::process::id()));
/// std::fs::write(&path, "stage s : fifo\n").unwrap();
/// match compile_file(&path, &Overrides::default()) {
///     Err(CompileError::Diagnostics { diagnostics, .. }) => assert!(!diagnostics.is_empty()),
///     other => panic!("{other:?}"),
/// }
/// # std::fs::remove_file(&path).unwrap();
/// ```
#[derive(Debug)]
pub enum CompileError {
    /// The file could not be read.
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        error: std::io::Error,
    },
    /// The program text has errors: every diagnostic, with the texts they
    /// point into (the file and the libraries it uses, for
    /// [`syntax::Sources::render`]).
    Diagnostics {
        /// The file.
        path: PathBuf,
        /// The file's text and its libraries'.
        sources: syntax::Sources,
        /// Every diagnostic found.
        diagnostics: Vec<Diagnostic>,
    },
    /// The program's trace cannot be read (a missing file, a malformed row).
    Trace {
        /// The program file.
        path: PathBuf,
        /// What is wrong, naming the trace file, line and column.
        error: trace::TraceError,
    },
    /// The IR JSON file is not valid IR (or an override does not apply to it).
    Ir {
        /// The file.
        path: PathBuf,
        /// Every fault found.
        errors: Vec<ir::IrError>,
    },
}

impl std::fmt::Display for CompileError {
    /// One paragraph: the file and every fault, diagnostics rendered with
    /// their source line and caret.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CompileError::Io { path, error } => {
                write!(f, "cannot read `{}`: {error}", path.display())
            }
            CompileError::Diagnostics {
                path,
                sources,
                diagnostics,
            } => {
                f.write_str(&sources.render(diagnostics))?;
                write!(f, "{} error(s) in {}", diagnostics.len(), path.display())
            }
            CompileError::Trace { path, error } => {
                write!(f, "error: {}: {error}", path.display())
            }
            CompileError::Ir { path, errors } => {
                for (i, e) in errors.iter().enumerate() {
                    if i > 0 {
                        f.write_str("\n")?;
                    }
                    write!(f, "{}: {e}", path.display())?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for CompileError {}

/// Reads a program file and compiles it with the overrides: a file whose
/// name ends in `.json` is IR (as [`compile_ir`] reads it), any other is
/// program text (as [`compile_source`] reads it). Every failure is a
/// [`CompileError`] value.
///
/// ```
/// use serq::{CompileError, Overrides, compile_file};
/// let dir = std::env::temp_dir().join(format!("serq-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let path = dir.join("one.sq");
/// std::fs::write(&path, "let lam = 1;
///                        stage s : fifo;
///                        workload { arrive poisson(lam); }
///                        session { run s (0.5); }
///                        run { horizon 100; }").unwrap();
/// let overrides = Overrides { sets: vec![("lam".into(), 0.5)], seed: Some(3),
///                             ..Overrides::default() };
/// assert_eq!(compile_file(&path, &overrides).unwrap().seed, 3);
///
/// let missing = compile_file(&dir.join("absent.sq"), &Overrides::default());
/// assert!(matches!(missing, Err(CompileError::Io { .. })));
/// std::fs::write(&path, "stage s : fifo").unwrap();
/// assert!(matches!(compile_file(&path, &Overrides::default()),
///                  Err(CompileError::Diagnostics { .. })));
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn compile_file(path: &Path, overrides: &Overrides) -> Result<ValidProgram, CompileError> {
    let source = std::fs::read_to_string(path).map_err(|error| CompileError::Io {
        path: path.to_path_buf(),
        error,
    })?;
    if path.extension().is_some_and(|e| e == "json") {
        compile_ir(&source, overrides).map_err(|errors| CompileError::Ir {
            path: path.to_path_buf(),
            errors,
        })
    } else {
        compile_text_at(&source, path, overrides)
    }
}

/// The lints' warnings on program text read from the file `path` (an
/// attribute set and never read, one read before anything sets it),
/// rendered as `warning[rule]` diagnostics with their places, or an empty
/// string when there are none or the program does not compile (its errors
/// are [`compile_text_at`]'s to report). A warning never changes what the
/// program does.
///
/// ```
/// use serq::{Overrides, lint_text_at};
/// let text = "stage d : delay; workload { arrive batch(1); init { set K = 0; } }
///             session { set k = K + 1; run d (K); } run { horizon 10; }";
/// let warnings = lint_text_at(text, std::path::Path::new("typo.sq"), &Overrides::default());
/// assert!(warnings.contains("warning[unused-attribute]"), "{warnings}");
/// assert!(warnings.contains("did you mean `K`?"), "{warnings}");
/// ```
pub fn lint_text_at(source: &str, path: &Path, overrides: &Overrides) -> String {
    let mut sources = syntax::Sources::new(path.display().to_string(), source);
    let (ast, diagnostics) = syntax::parse(source);
    if !diagnostics.is_empty() {
        return String::new();
    }
    let (ast, diagnostics) = syntax::libraries::resolve(ast, path, &mut sources);
    if !diagnostics.is_empty() {
        return String::new();
    }
    match link::link_with_lints(&ast, &sources, overrides) {
        Ok((_, warnings)) => sources.render(&warnings),
        Err(_) => String::new(),
    }
}

/// Compiles program text read from the file `path`: each `use` reads its
/// library relative to the file that says it (spec §9), and a relative
/// `trace` path is resolved against the program's directory (the IR then
/// holds the resolved path) and the trace is read, so a malformed one is
/// refused before any run.
///
/// ```
/// use serq::{Overrides, compile_text_at};
/// let dir = std::env::temp_dir().join(format!("serq-doc-use-{}", std::process::id()));
/// std::fs::create_dir_all(dir.join("lib")).unwrap();
/// std::fs::write(dir.join("lib/twice.sq"), "def twice(x) = 2 * x;").unwrap();
/// let text = "use \"lib/twice.sq\"; stage d : delay; workload { arrive batch(1); }
///             session { run d (twice(3)); } run { horizon 10; }";
/// let program = compile_text_at(text, &dir.join("main.sq"), &Overrides::default()).unwrap();
/// assert_eq!(program.stages.len(), 1);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn compile_text_at(
    source: &str,
    path: &Path,
    overrides: &Overrides,
) -> Result<ValidProgram, CompileError> {
    let mut sources = syntax::Sources::new(path.display().to_string(), source);
    let refuse = |sources: syntax::Sources, diagnostics| CompileError::Diagnostics {
        path: path.to_path_buf(),
        sources,
        diagnostics,
    };
    let (ast, diagnostics) = syntax::parse(source);
    if !diagnostics.is_empty() {
        return Err(refuse(sources, diagnostics));
    }
    let (ast, diagnostics) = syntax::libraries::resolve(ast, path, &mut sources);
    if !diagnostics.is_empty() {
        return Err(refuse(sources, diagnostics));
    }
    let program = match link::link_sources(&ast, &sources, overrides) {
        Ok(p) => p,
        Err(diagnostics) => return Err(refuse(sources, diagnostics)),
    };
    let program = with_arrival_trace(program, path, overrides)?;
    let Some(spec) = &program.trace else {
        return match &overrides.trace {
            None => Ok(program),
            Some(given) => Err(CompileError::Trace {
                path: path.to_path_buf(),
                error: trace::TraceError {
                    path: given.clone(),
                    line: None,
                    column: None,
                    message: "the program has no `trace` workload for this trace to replace"
                        .to_string(),
                },
            }),
        };
    };
    let resolved = match &overrides.trace {
        // The caller's file, from the caller's directory: made absolute so
        // a run elsewhere (a worker, another directory) reads the same one.
        Some(given) => absolute(given),
        None => path.parent().unwrap_or(Path::new("")).join(&spec.path),
    };
    trace::Trace::read(&resolved).map_err(|error| CompileError::Trace {
        path: path.to_path_buf(),
        error,
    })?;
    Ok(program.with_trace_path(resolved.display().to_string()))
}

/// The program with its arrival trace (`arrive trace "FILE"`, an
/// extension) resolved as a turn trace's is, and checked: every row up to
/// the window's end is read once (one row at a time, never the file), so a
/// malformed row, time going backwards or an empty window is refused
/// before any run, and so is an `arrivals N` above the rows in the window.
fn with_arrival_trace(
    program: ValidProgram,
    path: &Path,
    overrides: &Overrides,
) -> Result<ValidProgram, CompileError> {
    let fault = |given: &Path, message: String| CompileError::Trace {
        path: path.to_path_buf(),
        error: trace::TraceError {
            path: given.to_path_buf(),
            line: None,
            column: None,
            message,
        },
    };
    let ir::Arrival::Trace(spec) = &program.arrival else {
        return match &overrides.arrival_trace {
            None => Ok(program),
            Some(given) => Err(fault(
                given,
                "the program does not `arrive trace`, so there is no arrival trace to replace"
                    .into(),
            )),
        };
    };
    let resolved = match &overrides.arrival_trace {
        Some(given) => absolute(given),
        None => path.parent().unwrap_or(Path::new("")).join(&spec.path),
    };
    let window = (spec.start, spec.end);
    let scan = traffic::scan(&resolved, Some(window)).map_err(|error| CompileError::Trace {
        path: path.to_path_buf(),
        error,
    })?;
    if let Some(n) = program.arrivals
        && n > scan.rows
    {
        return Err(fault(
            &resolved,
            format!(
                "run: arrivals {n}, but the trace has only {} rows in its window",
                scan.rows
            ),
        ));
    }
    Ok(program.with_arrival_trace_path(resolved.display().to_string()))
}

/// A run-time error as a person reads it, the way `serq run` prints it:
/// the session and the clock, and the statement at fault with its source
/// line and a caret when the program came from `source` (program text;
/// `None` for IR, whose statements are named by block and index). `name`
/// is the file's name in the message.
///
/// ```
/// let source = "stage s : delay;\nworkload { arrive batch(1); }\n\
///               session { run s (serial - 1); }\nrun { horizon 2; }";
/// let program = serq::compile_source(source, &serq::Overrides::default()).unwrap();
/// // A computed negative amount is an error under `strict` (--strict).
/// let mut strict = serq::RunOptions { strict: true, ..Default::default() };
/// let error = serq::run_with(&program, &mut strict).unwrap_err();
/// let text = serq::render_run_error(&program, &error, "neg.sq", Some(source));
/// assert!(text.contains("run-time error in session 0 at t = 0"), "{text}");
/// assert!(text.contains("neg.sq:3:11"), "{text}");
/// let ir = serq::render_run_error(&program, &error, "neg.json", None);
/// assert!(ir.starts_with("error[negative]: neg.json: block 2, statement 0: run-time error"), "{ir}");
/// ```
pub fn render_run_error(
    program: &Program,
    error: &RunError,
    name: &str,
    source: Option<&str>,
) -> String {
    let who = match error.session {
        Some(serial) => format!(" in session {serial}"),
        None => String::new(),
    };
    let message = format!(
        "run-time error{who} at t = {}: {}",
        clock_text(error.time),
        error.message
    );
    let position = error.at.and_then(|(b, i)| {
        let positions = program.positions.as_ref()?;
        positions.get(b)?.get(i).copied()
    });
    match (position, source) {
        (Some(pos), Some(text)) => {
            let start = syntax::diagnostic::byte_offset(text, pos.line, pos.col);
            let span = syntax::ast::Span {
                start,
                end: start + 1,
            };
            let d = Diagnostic::new(error.rule(), span, message).with_label("this statement");
            syntax::diagnostic::render(&[d], name, text)
        }
        _ => match error.at {
            Some((b, i)) => format!(
                "error[{}]: {name}: block {b}, statement {i}: {message}\n",
                error.rule()
            ),
            None => format!("error[{}]: {name}: {message}\n", error.rule()),
        },
    }
}

/// The clock as a person reads it: plain decimals, or scientific notation
/// where plain ones would run to hundreds of digits (`t = 1e-300`).
fn clock_text(t: f64) -> String {
    if t != 0.0 && (t.abs() < 1e-6 || t.abs() >= 1e15) {
        format!("{t:e}")
    } else {
        format!("{t}")
    }
}

/// `path` from the current directory (as given if there is none to read).
fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Writes the overrides into IR read from JSON (the linker applies them
/// itself, before it checks the run options).
fn apply_overrides(overrides: &Overrides, program: &mut Program) {
    if let Some(h) = overrides.horizon {
        program.horizon = h;
    }
    if let Some(w) = overrides.warmup {
        program.warmup = w;
    }
    if let Some(s) = overrides.seed {
        program.seed = s;
    }
    if let Some(n) = overrides.arrivals {
        program.arrivals = Some(n);
    }
}
