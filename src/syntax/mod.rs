//! Source text to syntax tree: the lexer, the parser, the AST and diagnostics.
//!
//! Architecture invariant: nothing here knows the IR or the engine; the
//! parser never stops at the first error, it reports every one it finds.

pub mod ast;
pub mod diagnostic;
pub mod lexer;
pub mod parser;

pub use diagnostic::{Diagnostic, render};
pub use lexer::KEYWORDS;
pub use parser::parse;
