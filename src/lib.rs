//! serq: a language and simulator for LLM serving deployments.
//!
//! The pipeline is one way through: text -> [`syntax`] (AST) -> [`link`]
//! (IR, [`ir::Program`]) -> [`engine`] -> [`report::Report`].

pub mod engine;
pub mod ir;
pub mod link;
pub mod report;
pub mod syntax;
