//! `use "path";` (spec §9): reads each library a program names, relative
//! to the file that names it, and splices its `def`s in place of the `use`.
//! `use <name>;` (an extension) splices a library serq ships, from the
//! text built into the binary ([`super::shipped`]), whatever the folder.
//!
//! Architecture invariant: each file is read once however often it is
//! named (libraries that use each other, or a file that uses itself, are
//! read once each); its text joins the [`Sources`], so its spans, and the
//! diagnostics found in it, name it.

use std::path::{Path, PathBuf};

use super::ast::{Item, Program, Span};
use super::diagnostic::Diagnostic;
use super::parser::parse_at;
use super::shipped;
use super::sources::Sources;

/// The most library files one program may read (a guard against a
/// generated chain of `use`s; real programs read a handful).
pub const MAX_LIBRARIES: usize = 1000;

/// What `resolve` keeps while it walks the `use`s.
struct Reader<'s> {
    sources: &'s mut Sources,
    /// Every file read so far (canonical paths), the program's first.
    read: Vec<PathBuf>,
    /// Every shipped library spliced so far, by name.
    shipped: Vec<&'static str>,
    diags: Vec<Diagnostic>,
}

/// Splices into `program` (read from the file `path`) the `def`s of every
/// library it uses, transitively, adding each library's text to `sources`.
/// Returns every diagnostic found: a missing or unreadable file (naming the
/// path tried), a parse error in a library, an item other than `def` or
/// `use` in one.
pub fn resolve(program: Program, path: &Path, sources: &mut Sources) -> (Program, Vec<Diagnostic>) {
    let mut reader = Reader {
        sources,
        read: vec![path.canonicalize().unwrap_or_else(|_| path.to_path_buf())],
        shipped: Vec::new(),
        diags: Vec::new(),
    };
    let dir = path.parent().unwrap_or(Path::new("")).to_path_buf();
    let mut items = Vec::with_capacity(program.items.len());
    reader.splice(program.items, Some(&dir), false, &mut items);
    (Program { items }, reader.diags)
}

/// Splices into `program`, given as text with no file, the `def`s of every
/// shipped library it uses (`use <name>;`), adding each library's text to
/// `sources`. A `use "path";` is left in place for the linker to refuse
/// (there is no folder to read it from); a program that uses no shipped
/// library comes back unchanged.
pub fn resolve_shipped(program: Program, sources: &mut Sources) -> (Program, Vec<Diagnostic>) {
    let mut reader = Reader {
        sources,
        read: Vec::new(),
        shipped: Vec::new(),
        diags: Vec::new(),
    };
    let mut items = Vec::with_capacity(program.items.len());
    reader.splice(program.items, None, false, &mut items);
    (Program { items }, reader.diags)
}

impl Reader<'_> {
    /// Splices `items` into `out`; `dir` is the folder a `use "path"` is
    /// read from (none for a program given as text, or a shipped library).
    fn splice(&mut self, items: Vec<Item>, dir: Option<&Path>, library: bool, out: &mut Vec<Item>) {
        for item in items {
            match item {
                Item::Use { path, span } if dir.is_some() || library => match dir {
                    Some(dir) => self.read_library(&path, span, dir, out),
                    None => self.diags.push(
                        Diagnostic::new(
                            "use",
                            span,
                            format!("a library serq ships cannot read `use \"{path}\"`"),
                        )
                        .with_label("a file from a shipped library"),
                    ),
                },
                Item::UseShipped { name, span } => self.splice_shipped(&name, span, out),
                Item::Def { .. } => out.push(item),
                other if library => {
                    let word = item_word(&other);
                    self.diags.push(
                        Diagnostic::new(
                            "library",
                            first_word(&other),
                            format!("a library holds definitions: found `{word}` where `def` or `use` goes"),
                        )
                        .with_label("not a definition")
                        .with_help("declare pools, stages, the workload and the run in the program that uses the library"),
                    );
                }
                other => out.push(other),
            }
        }
    }

    /// Splices the shipped library `name` (once, however often it is named).
    fn splice_shipped(&mut self, name: &str, span: Span, out: &mut Vec<Item>) {
        let Some((name, text)) = shipped::find(name) else {
            let d = Diagnostic::new("use", span, format!("serq ships no library `<{name}>`"))
                .with_label("no such library");
            let d = match super::spelling::closest(name, shipped::names()) {
                Some(close) => d.with_help(format!("did you mean `<{close}>`?")),
                None => d.with_help(format!(
                    "serq ships {}; `use \"file.sq\";` reads a file beside the program",
                    shipped::names()
                        .map(|n| format!("`<{n}>`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            };
            self.diags.push(d);
            return;
        };
        if self.shipped.contains(&name) {
            return;
        }
        self.shipped.push(name);
        let base = self.sources.add(format!("<{name}>"), text);
        let (library, diags) = parse_at(text, base);
        if !diags.is_empty() {
            self.diags.extend(diags);
            return;
        }
        self.splice(library.items, None, true, out);
    }

    fn read_library(&mut self, written: &str, span: Span, dir: &Path, out: &mut Vec<Item>) {
        let tried = dir.join(written);
        let cannot_read = |e: std::io::Error| {
            Diagnostic::new(
                "use",
                span,
                format!(
                    "cannot read `{}` (`use \"{written}\"`): {e}",
                    tried.display()
                ),
            )
            .with_label("this library")
            .with_help("a library's path is relative to the file that says `use`")
        };
        let canonical = match tried.canonicalize() {
            Ok(c) => c,
            Err(e) => {
                self.diags.push(cannot_read(e));
                return;
            }
        };
        if self.read.contains(&canonical) {
            return;
        }
        if self.read.len() > MAX_LIBRARIES {
            self.diags.push(Diagnostic::new(
                "use",
                span,
                format!("a program reads at most {MAX_LIBRARIES} libraries"),
            ));
            return;
        }
        self.read.push(canonical.clone());
        let text = match std::fs::read_to_string(&canonical) {
            Ok(t) => t,
            Err(e) => {
                self.diags.push(cannot_read(e));
                return;
            }
        };
        let base = self.sources.add(tried.display().to_string(), text);
        let file = &self.sources.files()[self.sources.files().len() - 1];
        let (library, diags) = parse_at(&file.text, base);
        if !diags.is_empty() {
            self.diags.extend(diags);
            return;
        }
        let dir = canonical.parent().unwrap_or(Path::new("")).to_path_buf();
        self.splice(library.items, Some(&dir), true, out);
    }
}

/// The word an item starts with, for messages.
fn item_word(item: &Item) -> &'static str {
    match item {
        Item::Let { .. } => "let",
        Item::Def { .. } => "def",
        Item::Pool { .. } => "pool",
        Item::Stage { .. } => "stage",
        Item::Share { .. } => "share",
        Item::Workload { .. } => "workload",
        Item::Session { .. } => "session",
        Item::Run { .. } => "run",
        Item::Server { .. } => "server",
        Item::Use { .. } | Item::UseShipped { .. } => "use",
    }
}

/// The span of an item's first word.
fn first_word(item: &Item) -> Span {
    let s = item.span();
    Span {
        start: s.start,
        end: s.start + item_word(item).len() as u32,
    }
}
