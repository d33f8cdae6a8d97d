//! The linker: turns an `ast::Program` into an `ir::Program`.
//!
//! Architecture invariant: nothing here runs a program or knows the engine;
//! every rule the IR must obey is checked again by `ir::Program::validate`,
//! so a program that arrives as JSON meets it too.

use crate::ir;
use crate::syntax::{Diagnostic, ast};

/// Values given on the command line (or by the library's caller) that
/// replace the `run` block's options before the program is checked.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Overrides {
    /// Replaces (or supplies) `horizon`.
    pub horizon: Option<f64>,
    /// Replaces `warmup`.
    pub warmup: Option<f64>,
    /// Replaces `seed`.
    pub seed: Option<u64>,
    /// Replaces `arrivals`.
    pub arrivals: Option<u64>,
}

/// Links a parsed program. `source` is the text it was parsed from (for
/// the positions side table). Returns every link error found.
pub fn link(
    program: &ast::Program,
    source: &str,
    overrides: &Overrides,
) -> Result<ir::Program, Vec<Diagnostic>> {
    let _ = (program, source, overrides);
    todo!("linker")
}
