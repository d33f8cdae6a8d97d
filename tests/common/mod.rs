//! Shared by the engine's integration tests: link and run a program from
//! source, and read an observation's samples.

#![allow(dead_code)]

use serq::report::Report;

/// Parses and links a program's source text (panics with the diagnostics
/// if it does not link: the engine's tests only run valid programs).
pub fn compile(source: &str) -> serq::ValidProgram {
    match serq::compile_source(source, &serq::Overrides::default()) {
        Ok(program) => program,
        Err(diags) => panic!("does not compile: {diags:?}"),
    }
}

/// Compiles and runs a program given as text.
pub fn run(source: &str) -> Result<Report, serq::engine::RunError> {
    serq::engine::run(&compile(source))
}

/// Runs a program that must run, and returns its samples of `name` in recording order.
pub fn samples(report: &Report, name: &str) -> Vec<f64> {
    report
        .observes
        .iter()
        .find(|o| o.name == name)
        .unwrap_or_else(|| panic!("no observation `{name}`"))
        .samples
        .clone()
}
