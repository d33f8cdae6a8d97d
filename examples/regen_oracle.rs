//! Regenerates `tools/oracle/`: the IR (what `serq ir` prints) of every
//! example program under `examples/`, one file per program, named for its
//! path (`examples/single-turn/mm1.sq` -> `single-turn__mm1.ir.json`).
//! Oracle files whose example is gone are removed.
//!
//! ```sh
//! cargo run --example regen_oracle
//! ```
//!
//! `tests/oracle.rs` fails when a checked-in file differs from what the
//! library prints now, or when an example has no file. A change to the
//! linker or the IR that moves these files is reviewed in the diff.
//!
//! Architecture invariant: the text written is exactly `serq ir`'s stdout
//! (`Program::to_json` and a newline), from the default overrides.

use std::path::{Path, PathBuf};

/// The repository's `examples/` directory.
pub fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples")
}

/// The repository's `tools/oracle/` directory.
pub fn oracle_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/oracle")
}

/// Every example program (`examples/**/*.sq`), sorted, with the name of
/// its oracle file.
pub fn example_programs() -> Vec<(PathBuf, String)> {
    let root = examples_dir();
    let mut found = Vec::new();
    collect_sq(&root, &mut found);
    found.sort();
    found
        .into_iter()
        .map(|path| {
            let name = oracle_name(&root, &path);
            (path, name)
        })
        .collect()
}

/// `examples/a/b.sq` -> `a__b.ir.json`.
pub fn oracle_name(root: &Path, program: &Path) -> String {
    let relative = program
        .strip_prefix(root)
        .expect("every program is found under the examples directory")
        .with_extension("");
    let parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    format!("{}.ir.json", parts.join("__"))
}

fn collect_sq(dir: &Path, found: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read the directory {}: {e}", dir.display()));
    for entry in entries {
        let path = entry
            .unwrap_or_else(|e| panic!("cannot read an entry of {}: {e}", dir.display()))
            .path();
        if path.is_dir() {
            collect_sq(&path, found);
        } else if path.extension().is_some_and(|e| e == "sq") {
            found.push(path);
        }
    }
}

/// What `serq ir` prints for a program file, or its diagnostics' messages.
pub fn ir_text(program: &Path) -> Result<String, String> {
    let source = std::fs::read_to_string(program)
        .map_err(|e| format!("cannot read {}: {e}", program.display()))?;
    let linked = serq::compile_source(&source, &serq::Overrides::default()).map_err(|d| {
        let messages: Vec<&str> = d.iter().map(|d| d.message.as_str()).collect();
        format!(
            "{} does not link: {}",
            program.display(),
            messages.join("; ")
        )
    })?;
    Ok(format!("{}\n", linked.to_json()))
}

fn main() {
    let dir = oracle_dir();
    if let Err(e) = std::fs::create_dir_all(&dir) {
        eprintln!("error: cannot create {}: {e}", dir.display());
        std::process::exit(1);
    }
    let programs = example_programs();
    let mut failed = false;
    for (program, name) in &programs {
        match ir_text(program) {
            Ok(text) => {
                if let Err(e) = std::fs::write(dir.join(name), text) {
                    eprintln!("error: cannot write {name}: {e}");
                    failed = true;
                } else {
                    println!("wrote tools/oracle/{name}");
                }
            }
            Err(message) => {
                eprintln!("error: {message}");
                failed = true;
            }
        }
    }
    let wanted: Vec<&str> = programs.iter().map(|(_, n)| n.as_str()).collect();
    let stale = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".ir.json") && !wanted.contains(&n.as_str()));
    for name in stale {
        match std::fs::remove_file(dir.join(&name)) {
            Ok(()) => println!("removed tools/oracle/{name} (its example is gone)"),
            Err(e) => {
                eprintln!("error: cannot remove {name}: {e}");
                failed = true;
            }
        }
    }
    if failed {
        std::process::exit(1);
    }
}
