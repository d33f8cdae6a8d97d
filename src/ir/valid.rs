//! `ValidProgram`: a program that passed [`Program::validate`], the only
//! form the engine, [`crate::run`] and the study layer accept.
//!
//! Architecture invariant: a `ValidProgram` is made only by
//! `Program::validate` (or from another `ValidProgram` by a change that
//! keeps every rule, such as a new seed), and its program cannot be changed
//! in place, so the engine may rely on every rule the validator checks
//! (slots, arity, argument kinds, references in range) without checking
//! them again. Run inputs read from files before a run (a workload trace)
//! are to be loaded and checked with it and carried here beside the
//! program.

use super::Program;

/// A validated program, ready to run.
///
/// It reads as its [`Program`] (`Deref`); to change it, take the program
/// out ([`ValidProgram::into_program`]) and validate it again.
#[derive(Clone, Debug, PartialEq)]
pub struct ValidProgram {
    program: Program,
}

impl ValidProgram {
    /// Wraps a program that `Program::validate` has just checked.
    pub(super) fn checked(program: Program) -> ValidProgram {
        ValidProgram { program }
    }

    /// The program.
    pub fn program(&self) -> &Program {
        &self.program
    }

    /// The program, to change and validate again.
    pub fn into_program(self) -> Program {
        self.program
    }

    /// The same program under another seed (no rule reads the seed).
    ///
    /// ```
    /// let source = "stage s : delay; workload { arrive batch(1); }
    ///               session { run s (1); } run { horizon 2; seed 1; }";
    /// let program = serq::compile_source(source, &Default::default()).unwrap();
    /// assert_eq!(program.with_seed(9).seed, 9);
    /// ```
    pub fn with_seed(&self, seed: u64) -> ValidProgram {
        let mut program = self.program.clone();
        program.seed = seed;
        ValidProgram { program }
    }
}

impl ValidProgram {
    /// The same program with its trace's path resolved (no rule reads the
    /// path; the file was read and checked by the caller).
    pub fn with_trace_path(mut self, path: String) -> ValidProgram {
        if let Some(spec) = &mut self.program.trace {
            spec.path = path;
        }
        self
    }
}

impl ValidProgram {
    /// The same program with its arrival trace's path resolved (`arrive
    /// trace`, an extension; the file was read and checked by the caller).
    pub fn with_arrival_trace_path(mut self, path: String) -> ValidProgram {
        if let super::Arrival::Trace(spec) = &mut self.program.arrival {
            spec.path = path;
        }
        self
    }
}

impl std::ops::Deref for ValidProgram {
    type Target = Program;

    fn deref(&self) -> &Program {
        &self.program
    }
}
