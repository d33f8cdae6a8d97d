//! One diagnostic type for the whole front end: a rule, a message, a place
//! and a way out. Rendering (codespan-reporting) happens in one place,
//! [`super::Sources::render`].

use super::ast::Span;

/// An error found in a program's text, by the parser, the linker or the validator.
#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
    /// The rule broken, a short stable identifier (`syntax`, `unknown-name`, `shared-stage-kind`, …).
    pub rule: &'static str,
    /// What is wrong, naming the construct and the rule.
    pub message: String,
    /// Where: the caret goes under this span.
    pub span: Span,
    /// A label printed at the caret (may be empty).
    pub label: String,
    /// Further places ("first declared here").
    pub secondary: Vec<(Span, String)>,
    /// How to mend it, when there is a way.
    pub help: Option<String>,
    /// An error (the program is refused) or a warning (a lint: it runs).
    pub severity: Severity,
}

/// Whether a diagnostic refuses the program.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Severity {
    /// The program is refused.
    #[default]
    Error,
    /// A lint: the program links and runs as written; the exit status and
    /// the reports do not change.
    Warning,
}

impl Diagnostic {
    /// A diagnostic with a rule, a message and a place.
    pub fn new(rule: &'static str, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            rule,
            message: message.into(),
            span,
            label: String::new(),
            secondary: Vec::new(),
            help: None,
            severity: Severity::Error,
        }
    }

    /// A warning (a lint) with a rule, a message and a place.
    pub fn warning(rule: &'static str, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::new(rule, span, message)
        }
    }

    /// Adds the label printed at the caret.
    pub fn with_label(mut self, label: impl Into<String>) -> Diagnostic {
        self.label = label.into();
        self
    }

    /// Adds a secondary place.
    pub fn with_secondary(mut self, span: Span, label: impl Into<String>) -> Diagnostic {
        self.secondary.push((span, label.into()));
        self
    }

    /// Adds a `help:` line.
    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }
}

/// The 1-based line and column (in characters) of a byte offset.
pub fn line_col(source: &str, offset: u32) -> (u32, u32) {
    let offset = (offset as usize).min(source.len());
    let before = &source[..floor_char_boundary(source, offset)];
    let line = before.matches('\n').count() as u32 + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let col = before[line_start..].chars().count() as u32 + 1;
    (line, col)
}

/// The byte offset of a 1-based line and character column: the inverse of
/// [`line_col`], for positions that come back from the IR's side table.
pub fn byte_offset(text: &str, line: u32, col: u32) -> u32 {
    let line_start: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1) as usize)
        .map(str::len)
        .sum();
    let rest = &text[line_start.min(text.len())..];
    let within: usize = rest
        .chars()
        .take(col.saturating_sub(1) as usize)
        .map(char::len_utf8)
        .sum();
    (line_start + within) as u32
}

/// The largest char boundary of `s` at or below `i`.
pub(super) fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Renders diagnostics as text: `error[rule]: message`, then `--> file:line:col`,
/// the source line with a caret, secondary labels and `= help:` lines. For a
/// program read from several files, [`super::Sources::render`].
pub fn render(diagnostics: &[Diagnostic], file_name: &str, source: &str) -> String {
    super::Sources::new(file_name, source).render(diagnostics)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_characters_from_one() {
        let src = "ab\nçd e";
        assert_eq!(line_col(src, 0), (1, 1));
        // "çd e": ç is two bytes, so byte 7 is the 'e' at column 4 of line 2.
        assert_eq!(line_col(src, 7), (2, 4));
    }

    #[test]
    fn byte_offset_inverts_line_col() {
        let src = "ab\nçd e";
        for offset in [0, 1, 3, 5, 7] {
            let (line, col) = line_col(src, offset);
            assert_eq!(byte_offset(src, line, col), offset);
        }
    }

    #[test]
    fn render_shows_file_line_col_source_and_caret() {
        let src = "stage A : ps(1);\nsession { run C (1); }\n";
        let d = Diagnostic::new(
            "unknown-stage",
            Span { start: 31, end: 32 },
            "unknown stage `C`",
        )
        .with_help("declare it with `stage C : ps(1);`");
        let text = render(&[d], "x.sq", src);
        assert!(text.contains("x.sq:2:15"), "{text}");
        assert!(text.contains("session { run C (1); }"), "{text}");
        assert!(text.contains('^'), "{text}");
        assert!(text.contains("help: declare it"), "{text}");
    }
}
