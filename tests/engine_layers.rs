//! The engine's files are layered: no file imports a file that imports it,
//! directly or through others (docs/architecture.md gives the layers).
//! This reads every `src/engine/**/*.rs`, takes each `super::…` and
//! `crate::engine::…` path (and a `mod.rs`'s `use child::…`) outside test
//! modules and comments, and fails on a cycle, naming it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module's path from the engine, as `["flows", "fill"]`; `[]` is the engine.
type Module = Vec<String>;

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("src/engine is readable")
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn module_of(root: &Path, file: &Path) -> Module {
    let rel = file.strip_prefix(root).expect("under src/engine");
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

/// The text without comments and without the `#[cfg(test)]` items.
fn code_of(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    };
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every path a text names, as the identifiers after `prefix` (`super::a::b`
/// and `super::{a, b::c}` give `a`, `b`).
fn named_after(code: &str, prefix: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find(prefix) {
        rest = &rest[i + prefix.len()..];
        let group = if let Some(inner) = rest.strip_prefix('{') {
            let end = inner.find('}').unwrap_or(inner.len());
            inner[..end].to_string()
        } else {
            rest.chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect()
        };
        for item in group.split(',') {
            let name: String = item
                .trim()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.push(name);
            }
        }
    }
    out
}

#[test]
fn no_engine_file_imports_a_file_that_imports_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/engine");
    let mut all = Vec::new();
    files(&root, &mut all);
    let modules: BTreeSet<Module> = all.iter().map(|f| module_of(&root, f)).collect();
    let mut edges: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for file in &all {
        let me = module_of(&root, file);
        let is_mod_rs = file.file_name().is_some_and(|n| n == "mod.rs");
        let text = std::fs::read_to_string(file).expect("an engine file is readable");
        let code = code_of(&text);
        // `super::` from a.rs is a's parent; from x/mod.rs it is x's parent.
        let parent: Module = me[..me.len().saturating_sub(1)].to_vec();
        let mut targets = Vec::new();
        for name in named_after(&code, "super::") {
            targets.push((parent.clone(), name));
        }
        for name in named_after(&code, "crate::engine::") {
            targets.push((Vec::new(), name));
        }
        if is_mod_rs || me.is_empty() {
            for line in code.lines() {
                if let Some(rest) = line.trim().strip_prefix("use ") {
                    let name: String = rest
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    targets.push((me.clone(), name));
                }
            }
        }
        if is_mod_rs || me.is_empty() {
            // A `mod.rs` may name a child by its path without a `use`.
            for m in &modules {
                if m.len() == me.len() + 1 && m.starts_with(&me) {
                    let needle = format!("{}::", m[me.len()]);
                    let named = code.match_indices(&needle).any(|(i, _)| {
                        !code[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':')
                    });
                    if named {
                        edges.entry(me.clone()).or_default().insert(m.clone());
                    }
                }
            }
        }
        for (base, name) in targets {
            let mut child = base.clone();
            child.push(name);
            let to = if modules.contains(&child) {
                child
            } else {
                base
            };
            if to != me {
                edges.entry(me.clone()).or_default().insert(to);
            }
        }
    }
    // Depth-first search for a back edge.
    fn visit(
        m: &Module,
        edges: &BTreeMap<Module, BTreeSet<Module>>,
        state: &mut BTreeMap<Module, u8>,
        path: &mut Vec<Module>,
    ) -> Option<Vec<Module>> {
        match state.get(m) {
            Some(2) => return None,
            Some(1) => {
                let start = path.iter().position(|p| p == m).unwrap_or(0);
                let mut cycle = path[start..].to_vec();
                cycle.push(m.clone());
                return Some(cycle);
            }
            _ => {}
        }
        state.insert(m.clone(), 1);
        path.push(m.clone());
        for to in edges.get(m).into_iter().flatten() {
            if let Some(c) = visit(to, edges, state, path) {
                return Some(c);
            }
        }
        path.pop();
        state.insert(m.clone(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for m in &modules {
        let mut path = Vec::new();
        if let Some(cycle) = visit(m, &edges, &mut state, &mut path) {
            let names: Vec<String> = cycle
                .iter()
                .map(|m| format!("engine::{}", m.join("::")))
                .collect();
            panic!("an import cycle: {}", names.join(" -> "));
        }
    }
    // The check sees the engine's layers at all: run.rs imports settle.rs.
    assert!(edges[&vec!["run".to_string()]].contains(&vec!["settle".to_string()]));
}
