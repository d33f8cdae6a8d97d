//! `tools/oracle/*.ir.json` holds the IR of every example program. A change
//! to the front end or the IR that moves any of them fails here until
//! `cargo run --example regen_oracle` is rerun and the diff reviewed.

#[allow(dead_code)] // `main` is the example's; the helpers are shared
#[path = "../examples/regen_oracle.rs"]
mod regen_oracle;

use regen_oracle::{example_programs, ir_text, oracle_dir};
use std::process::Command;

const REGEN: &str = "run `cargo run --example regen_oracle` and review the diff";

#[test]
fn every_example_program_has_an_oracle_file() {
    let programs = example_programs();
    // examples/single-turn holds 5 programs, examples/pd-disaggregation 4.
    assert!(programs.len() >= 9, "found only {programs:?}");
    let missing: Vec<&str> = programs
        .iter()
        .filter(|(_, name)| !oracle_dir().join(name).is_file())
        .map(|(_, name)| name.as_str())
        .collect();
    assert!(
        missing.is_empty(),
        "missing oracle files {missing:?}: {REGEN}"
    );
}

#[test]
fn every_oracle_file_equals_the_ir_the_library_prints_now() {
    let mut stale = Vec::new();
    for (program, name) in example_programs() {
        let now = ir_text(&program).unwrap_or_else(|e| panic!("{e}"));
        match std::fs::read_to_string(oracle_dir().join(&name)) {
            Ok(checked_in) if checked_in == now => {}
            Ok(_) => stale.push(name),
            Err(e) => stale.push(format!("{name} ({e})")),
        }
    }
    assert!(stale.is_empty(), "stale oracle files {stale:?}: {REGEN}");
}

#[test]
fn every_oracle_file_belongs_to_an_example_program() {
    let wanted: Vec<String> = example_programs().into_iter().map(|(_, n)| n).collect();
    let mut orphans: Vec<String> = std::fs::read_dir(oracle_dir())
        .expect("tools/oracle exists")
        .map(|e| {
            e.expect("readable entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|n| n.ends_with(".ir.json") && !wanted.contains(n))
        .collect();
    orphans.sort();
    assert!(
        orphans.is_empty(),
        "oracle files without an example {orphans:?}: {REGEN}"
    );
}

#[test]
fn every_oracle_file_reads_back_as_the_program_it_was_written_from() {
    for (program, name) in example_programs() {
        let text = std::fs::read_to_string(oracle_dir().join(&name)).expect("oracle file");
        let read = serq::compile_ir(&text, &serq::Overrides::default())
            .unwrap_or_else(|e| panic!("{name} is not valid IR: {e:?}"));
        let source = std::fs::read_to_string(&program).expect("example program");
        let linked = serq::compile_source(&source, &serq::Overrides::default())
            .unwrap_or_else(|d| panic!("{} does not link: {d:?}", program.display()));
        assert_eq!(read, linked, "{name}");
    }
}

#[test]
fn serq_ir_prints_exactly_the_oracle_file() {
    let (program, name) = example_programs()
        .into_iter()
        .find(|(_, n)| n == "single-turn__mm1.ir.json")
        .expect("examples/single-turn/mm1.sq exists");
    let out = Command::new(env!("CARGO_BIN_EXE_serq"))
        .arg("ir")
        .arg(&program)
        .output()
        .expect("the serq binary runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let checked_in = std::fs::read(oracle_dir().join(name)).expect("oracle file");
    assert_eq!(out.stdout, checked_in);
}
