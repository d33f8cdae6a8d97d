//! Source text to syntax tree: the lexer, the parser, the AST, the
//! libraries a program `use`s, the map of its texts and diagnostics.
//!
//! Architecture invariant: nothing here knows the IR or the engine; the
//! parser never stops at the first error, it reports every one it finds.

pub mod ast;
pub mod diagnostic;
pub mod lexer;
pub mod libraries;
pub mod parser;
pub mod shipped;
pub mod sources;
pub mod spelling;

pub use diagnostic::{Diagnostic, Severity, render};
pub use lexer::{ARRIVE_CLAUSES, KEYWORDS};
pub use parser::{parse, parse_at, parse_expr};
pub use sources::Sources;
