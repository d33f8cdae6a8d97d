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

pub mod engine;
pub mod ir;
pub mod link;
pub mod report;
pub mod syntax;
pub mod view;

pub use engine::RunError;
pub use ir::Program;
pub use link::Overrides;
pub use report::Report;
pub use syntax::Diagnostic;

/// Parses and links program text into validated IR, or returns every
/// diagnostic found (syntax errors first; linking needs a clean parse).
pub fn compile_source(source: &str, overrides: &Overrides) -> Result<Program, Vec<Diagnostic>> {
    let (ast, diagnostics) = syntax::parse(source);
    if !diagnostics.is_empty() {
        return Err(diagnostics);
    }
    link::link(&ast, source, overrides)
}

/// Reads IR JSON, applies the overrides and validates the result.
///
/// IR has no `let` constants (they are folded into numbers), so
/// [`Overrides::sets`] must be empty: a set is refused, naming each.
pub fn compile_ir(json: &str, overrides: &Overrides) -> Result<Program, Vec<ir::IrError>> {
    if !overrides.sets.is_empty() {
        return Err(overrides
            .sets
            .iter()
            .map(|(name, _)| ir::IrError {
                at: None,
                message: format!(
                    "an override sets `{name}`, but IR has no `let` constants to set \
                     (they were folded when it was linked); set it on the source program"
                ),
            })
            .collect());
    }
    let mut program = Program::read_json(json).map_err(|e| vec![e])?;
    apply_overrides(overrides, &mut program);
    program.validate()?;
    Ok(program)
}

/// Simulates a validated program and returns its report.
pub fn run(program: &Program) -> Result<Report, RunError> {
    engine::run(program)
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
