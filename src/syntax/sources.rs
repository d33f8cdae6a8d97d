//! The texts a program is read from: its file and the libraries it
//! `use`s, laid end to end in one space of byte offsets, so a [`Span`]
//! names its file by where it lies and a diagnostic in a library shows the
//! library's own line.
//!
//! Architecture invariant: files are only appended, each at an offset past
//! every earlier one, so a span once made always names the same file.

use super::ast::Span;
use super::diagnostic::{Diagnostic, floor_char_boundary, line_col};
use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label};
use codespan_reporting::files::SimpleFiles;
use codespan_reporting::term::{self, Config, termcolor::NoColor};

/// One text: its name as messages show it, the text, and its first offset.
#[derive(Clone, Debug, PartialEq)]
pub struct SourceFile {
    /// The file's name as messages show it.
    pub name: String,
    /// Its text.
    pub text: String,
    /// The offset of its first byte in the map.
    pub base: u32,
}

/// Every text of a program, the program's own file first.
#[derive(Clone, Debug, PartialEq)]
pub struct Sources {
    files: Vec<SourceFile>,
}

impl Sources {
    /// A map holding one file at offset 0.
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Sources {
        Sources {
            files: vec![SourceFile {
                name: name.into(),
                text: text.into(),
                base: 0,
            }],
        }
    }

    /// Appends a file past every earlier one; returns its base offset.
    pub fn add(&mut self, name: impl Into<String>, text: impl Into<String>) -> u32 {
        let last = self.files.last().expect("a map holds its program's file");
        // One byte of gap, so a span at the end of a file is not the next's start.
        let base = last
            .base
            .saturating_add(u32::try_from(last.text.len()).unwrap_or(u32::MAX))
            .saturating_add(1);
        self.files.push(SourceFile {
            name: name.into(),
            text: text.into(),
            base,
        });
        base
    }

    /// The program's own file.
    pub fn main(&self) -> &SourceFile {
        &self.files[0]
    }

    /// Every file, the program's first.
    pub fn files(&self) -> &[SourceFile] {
        &self.files
    }

    /// The index of the file an offset lies in.
    pub fn file_of(&self, offset: u32) -> usize {
        self.files
            .iter()
            .rposition(|f| f.base <= offset)
            .unwrap_or(0)
    }

    /// The text a span covers, when it lies within one file on char
    /// boundaries.
    pub fn text_at(&self, span: Span) -> Option<&str> {
        let f = &self.files[self.file_of(span.start)];
        let start = span.start.checked_sub(f.base)? as usize;
        let end = span.end.checked_sub(f.base)? as usize;
        f.text.get(start..end)
    }

    /// The file, 1-based line and column of an offset.
    pub fn line_col(&self, offset: u32) -> (&SourceFile, u32, u32) {
        let f = &self.files[self.file_of(offset)];
        let (line, col) = line_col(&f.text, offset - f.base);
        (f, line, col)
    }

    /// Renders diagnostics as [`super::render`] does, each label in the
    /// file its span lies in.
    pub fn render(&self, diagnostics: &[Diagnostic]) -> String {
        let mut files = SimpleFiles::new();
        for f in &self.files {
            files.add(f.name.as_str(), f.text.as_str());
        }
        let config = Config {
            display_style: term::DisplayStyle::Rich,
            chars: term::Chars::ascii(),
            ..Config::default()
        };
        let mut out = NoColor::new(Vec::new());
        let place = |s: Span| {
            let id = self.file_of(s.start);
            let f = &self.files[id];
            let clamp = |x: u32| {
                let local = (x.saturating_sub(f.base) as usize).min(f.text.len());
                floor_char_boundary(&f.text, local)
            };
            let start = clamp(s.start);
            (id, start..clamp(s.end).max(start))
        };
        for d in diagnostics {
            let (id, range) = place(d.span);
            let mut labels = vec![Label::primary(id, range).with_message(d.label.clone())];
            for (span, message) in &d.secondary {
                let (id, range) = place(*span);
                labels.push(Label::secondary(id, range).with_message(message.clone()));
            }
            let cs = match d.severity {
                super::Severity::Error => CsDiagnostic::error(),
                super::Severity::Warning => CsDiagnostic::warning(),
            };
            let mut cs = cs
                .with_message(&d.message)
                .with_code(d.rule)
                .with_labels(labels);
            if let Some(help) = &d.help {
                cs = cs.with_notes(vec![format!("help: {help}")]);
            }
            // Writing into a Vec cannot fail, and the ranges are clamped to their file.
            let _ = term::emit(&mut out, &config, &files, &cs);
        }
        String::from_utf8_lossy(&out.into_inner()).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_span_in_a_library_renders_with_the_librarys_name_and_line() {
        let mut sources = Sources::new("main.sq", "use \"lib.sq\";\n");
        let base = sources.add("lib.sq", "def f(x) = x;\ndef g() = y;\n");
        // `y` is byte 24 of the library: line 2, column 11.
        let d = Diagnostic::new(
            "unknown-name",
            Span {
                start: base + 24,
                end: base + 25,
            },
            "unknown name `y`",
        );
        let text = sources.render(&[d]);
        assert!(text.contains("lib.sq:2:11"), "{text}");
        assert!(text.contains("def g() = y;"), "{text}");
        let (f, line, col) = sources.line_col(base + 24);
        assert_eq!((f.name.as_str(), line, col), ("lib.sq", 2, 11));
    }
}
