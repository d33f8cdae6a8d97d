//! The engine's files are layered (docs/architecture.md, "Layers"): the
//! interface types, the solvers (`flows`, `serving`), the data, evaluation,
//! the systems and the run loop, each importing only its own layer or the
//! ones below, with no import cycle between files. This reads every
//! `src/engine/**/*.rs`, takes each `crate::engine::…` and `super::…` path
//! (and a `mod.rs`'s children) outside test modules and comments, and
//! fails on a cycle or an upward import, naming it. It also holds the
//! engine's structs to at most 16 fields.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module's path from the engine, as `["flows", "fill"]`; `[]` is the engine.
type Module = Vec<String>;

/// The layers, bottom up: a module's layer is its first path component's.
const LAYERS: &[&[&str]] = &[
    &["interface"],
    &["flows", "serving"],
    &["data"],
    &["eval"],
    &["systems"],
    &["run"],
];

fn layer_of(m: &Module) -> usize {
    match m.first() {
        None => LAYERS.len(),
        Some(top) => LAYERS
            .iter()
            .position(|l| l.contains(&top.as_str()))
            .unwrap_or_else(|| panic!("engine::{top} is in no layer: add it to LAYERS")),
    }
}

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

fn engine_files() -> (PathBuf, Vec<PathBuf>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/engine");
    let mut all = Vec::new();
    files(&root, &mut all);
    (root, all)
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
    // An inline test module (`mod tests {`), not a file one (`mod tests;`).
    let inline = text.match_indices("#[cfg(test)]\nmod ").find(|(i, m)| {
        let rest = &text[i + m.len()..];
        let name_end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        rest[name_end..].starts_with(" {")
    });
    let text = match inline {
        Some((i, _)) => &text[..i],
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

/// Every path a text names after `prefix`, as identifier lists, groups
/// expanded: `crate::engine::{a::b, c::{d, e}}` gives `[a, b]`, `[c, d]`
/// and `[c, e]`.
fn paths_after(code: &str, prefix: &str) -> Vec<Vec<String>> {
    fn path(s: &str, at: &mut usize, base: &[String], out: &mut Vec<Vec<String>>) {
        let b = s.as_bytes();
        let mut parts = base.to_vec();
        loop {
            while *at < b.len() && b[*at].is_ascii_whitespace() {
                *at += 1;
            }
            if *at < b.len() && b[*at] == b'{' {
                *at += 1;
                loop {
                    path(s, at, &parts, out);
                    while *at < b.len() && b[*at].is_ascii_whitespace() {
                        *at += 1;
                    }
                    match b.get(*at) {
                        Some(b',') => *at += 1,
                        Some(b'}') => {
                            *at += 1;
                            return;
                        }
                        _ => return,
                    }
                    while *at < b.len() && b[*at].is_ascii_whitespace() {
                        *at += 1;
                    }
                    if b.get(*at) == Some(&b'}') {
                        *at += 1;
                        return;
                    }
                }
            }
            let start = *at;
            while *at < b.len() && (b[*at].is_ascii_alphanumeric() || b[*at] == b'_') {
                *at += 1;
            }
            if start == *at {
                out.push(parts);
                return;
            }
            parts.push(s[start..*at].to_string());
            if s[*at..].starts_with("::") {
                *at += 2;
            } else {
                out.push(parts);
                return;
            }
        }
    }
    let mut out = Vec::new();
    for (i, _) in code.match_indices(prefix) {
        if code[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let mut at = i + prefix.len();
        path(code, &mut at, &[], &mut out);
    }
    out
}

/// Each module's imports of other engine modules.
fn import_edges() -> (BTreeSet<Module>, BTreeMap<Module, BTreeSet<Module>>) {
    let (root, all) = engine_files();
    let modules: BTreeSet<Module> = all.iter().map(|f| module_of(&root, f)).collect();
    // The longest prefix of `path` that is a module.
    let resolve = |path: Vec<String>| -> Module {
        let mut p = path;
        while !p.is_empty() && !modules.contains(&p) {
            p.pop();
        }
        p
    };
    let mut edges: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for file in &all {
        let me = module_of(&root, file);
        let is_mod_rs = file.file_name().is_some_and(|n| n == "mod.rs");
        let text = std::fs::read_to_string(file).expect("an engine file is readable");
        let code = code_of(&text);
        let mut targets: Vec<Module> = paths_after(&code, "crate::engine::")
            .into_iter()
            .map(&resolve)
            .collect();
        // `super::` from a.rs is a's parent; from x/mod.rs it is x's parent.
        let parent: Module = me[..me.len().saturating_sub(1)].to_vec();
        for p in paths_after(&code, "super::") {
            let mut full = parent.clone();
            full.extend(p);
            targets.push(resolve(full));
        }
        if is_mod_rs || me.is_empty() {
            // A `mod.rs` names its children (`mod x;`, `use x::…`, `x::f`).
            for m in &modules {
                if m.len() == me.len() + 1 && m.starts_with(&me) {
                    let child = &m[me.len()];
                    let named = code.match_indices(&format!("{child}::")).any(|(i, _)| {
                        !code[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':')
                    });
                    if named {
                        targets.push(m.clone());
                    }
                }
            }
        }
        for to in targets {
            // A child reads its parent's items, as Rust's privacy lets it:
            // that is nesting, not an import.
            if !to.is_empty() && !me.starts_with(&to) {
                edges.entry(me.clone()).or_default().insert(to);
            }
        }
    }
    (modules, edges)
}

fn name(m: &Module) -> String {
    format!("engine::{}", m.join("::"))
}

#[test]
fn no_engine_file_imports_a_file_that_imports_it() {
    let (modules, edges) = import_edges();
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
            let names: Vec<String> = cycle.iter().map(name).collect();
            panic!("an import cycle: {}", names.join(" -> "));
        }
    }
    // The check sees the engine's imports at all: the event loop settles.
    let event_loop = vec!["run".to_string(), "event_loop".to_string()];
    let settle = vec!["systems".to_string(), "settle".to_string()];
    assert!(edges[&event_loop].contains(&settle), "{edges:?}");
}

#[test]
fn no_engine_file_imports_a_layer_above_its_own() {
    let (_, edges) = import_edges();
    let mut upward = Vec::new();
    for (from, tos) in &edges {
        if from.is_empty() {
            continue;
        }
        for to in tos {
            if layer_of(to) > layer_of(from) {
                upward.push(format!("{} -> {}", name(from), name(to)));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "imports of a higher layer:\n{}",
        upward.join("\n")
    );
    // The check sees the layers at all: a system reads the data layer.
    let hold = vec!["systems".to_string(), "hold".to_string()];
    assert!(edges[&hold].iter().any(|m| layer_of(m) < layer_of(&hold)));
}
/// The fields of each braced struct in `code`, by name.
fn struct_fields(code: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    for (i, _) in code.match_indices("struct ") {
        if code[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &code[i + "struct ".len()..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let Some(open) = rest.find(['{', ';', '(']) else {
            continue;
        };
        if rest.as_bytes()[open] != b'{' {
            continue;
        }
        // Count the fields at depth 1: `name: Type,` at the body's top level.
        let (mut depth, mut fields, mut line_start) = (0i32, 0, true);
        let body = &rest[open..];
        for (j, c) in body.char_indices() {
            match c {
                '{' | '(' | '[' | '<' => depth += 1,
                '}' | ')' | ']' | '>' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                '\n' => line_start = true,
                c if c.is_whitespace() => {}
                _ => {
                    if line_start && depth == 1 {
                        let line = body[j..].lines().next().unwrap_or("");
                        let line = line
                            .trim_start_matches("pub(crate) ")
                            .trim_start_matches("pub ");
                        let ident: String = line
                            .chars()
                            .take_while(|c| c.is_alphanumeric() || *c == '_')
                            .collect();
                        if !ident.is_empty() && line[ident.len()..].trim_start().starts_with(':') {
                            fields += 1;
                        }
                    }
                    line_start = false;
                }
            }
        }
        out.push((name, fields));
    }
    out
}

#[test]
fn no_engine_struct_has_more_than_sixteen_fields() {
    let (root, all) = engine_files();
    let mut large = Vec::new();
    let mut counted = 0;
    for file in &all {
        let text = std::fs::read_to_string(file).expect("an engine file is readable");
        for (name, fields) in struct_fields(&code_of(&text)) {
            counted += 1;
            if fields > 16 {
                let rel = file.strip_prefix(&root).expect("under src/engine");
                large.push(format!("{}: {name} has {fields} fields", rel.display()));
            }
        }
    }
    assert!(
        large.is_empty(),
        "structs past 16 fields:\n{}",
        large.join("\n")
    );
    assert!(counted > 50, "the check found only {counted} structs");
}

#[test]
fn the_field_count_reads_a_struct_as_a_reader_would() {
    let code = "pub struct A {\n    pub a: Vec<(u32, f64)>,\n    b: Option<B>,\n    c: [u8; 4],\n}\nstruct T(u32);\nstruct U;";
    assert_eq!(struct_fields(code), vec![("A".to_string(), 3)]);
}
