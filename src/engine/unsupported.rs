//! The serving-engine constructs the IR can express but this engine does
//! not run yet: a program using one is refused when its run starts, so
//! `serq check` and `serq ir` accept it while the engine is being built.
//!
//! Architecture invariant: this is the only place that knows which
//! constructs are missing; each goes from here when the engine runs it.

use crate::ir::Program;

/// The first construct of `program` the engine cannot run yet, as a
/// message that says so.
pub fn unsupported(program: &Program) -> Option<String> {
    let _ = program;
    None
}
