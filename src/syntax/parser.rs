//! Tokens to syntax tree: a recursive-descent parser with error recovery.
//!
//! Architecture invariant: the parser never gives up and never panics. Each
//! error is reported once, then the parser skips to a point where it can go
//! on (a `;` or `}` at the depth of the construct, or the next top-level
//! keyword) and keeps what it had built. It checks only the shape of the
//! text: names, arities and every other meaning are the linker's. Nesting
//! is capped at [`MAX_DEPTH`] and the tree's depth at [`MAX_TREE_DEPTH`],
//! so deep input overflows neither this parser's stack nor a later pass's.

mod expr;
mod item;
mod stmt;

use super::ast::{Program, Span};
use super::diagnostic::Diagnostic;
use super::lexer::{Token, TokenKind, lex};

/// The deepest nesting the parser accepts: blocks, parentheses, arguments,
/// indices and operators (each operator of a chain `a + b + …` and each
/// prefix `-`/`!` nests the tree one level) count together. 100 keeps the
/// parser, the linker, the validator and `Drop` of the tree within a
/// 2 MiB thread stack even in a debug build (at 256, nested blocks
/// overflowed it near 140 levels).
pub const MAX_DEPTH: u32 = 100;

/// The deepest syntax tree the parser builds, counting operator chains
/// (`a + b + …` is as deep as it is long): later passes may walk and drop
/// the tree recursively.
pub const MAX_TREE_DEPTH: u32 = 1024;

/// Parses a whole program, returning what could be built and every
/// diagnostic found (lexical and syntactic), sorted by position.
///
/// With diagnostics the program is partial (a construct with an error is
/// left out, or holds a `0` where nesting was too deep) and must not be linked.
pub fn parse(source: &str) -> (Program, Vec<Diagnostic>) {
    parse_at(source, 0)
}

/// Parses a program whose text starts at byte `base` of a
/// [`super::sources::Sources`] map: every span is shifted by `base`, so
/// spans of several files never overlap.
pub fn parse_at(source: &str, base: u32) -> (Program, Vec<Diagnostic>) {
    let (mut tokens, mut diags) = lex(source);
    let shift = |s: &mut Span| {
        s.start = s.start.saturating_add(base);
        s.end = s.end.saturating_add(base);
    };
    tokens.iter_mut().for_each(|t| shift(&mut t.span));
    diags.iter_mut().for_each(|d| shift(&mut d.span));
    let mut parser = Parser::new(source, tokens);
    parser.base = base;
    let program = parser.program();
    diags.append(&mut parser.diags);
    diags.sort_by_key(|d| d.span.start);
    (program, diags)
}

/// Parses one expression, the whole text (a `--def` body). Spans are
/// offsets in `text`.
pub fn parse_expr(text: &str) -> Result<super::ast::Expr, Vec<Diagnostic>> {
    let (tokens, mut diags) = lex(text);
    let mut parser = Parser::new(text, tokens);
    let e = parser.expr();
    if e.is_ok() && !parser.at_eof() {
        let _ = parser.error_expected("the end of the expression");
    }
    diags.append(&mut parser.diags);
    match e {
        Ok(e) if diags.is_empty() => Ok(e),
        _ => Err(diags),
    }
}

/// The error marker: the diagnostic is already reported; the caller recovers.
#[derive(Debug)]
struct Fail;

type PResult<T> = Result<T, Fail>;

/// Words that begin a statement; a recovery stops at one that begins a line.
const STATEMENT_WORDS: &[&str] = &[
    "set", "observe", "turn", "end", "hold", "grow", "load", "release", "run", "branch", "loop",
    "choose", "transfer", "request", "drop", "prefill", "decode", "tool",
];

/// Words that begin a top-level item; a top-level recovery stops at one.
const ITEM_WORDS: &[&str] = &[
    "let", "def", "pool", "stage", "share", "workload", "session", "run", "server", "use",
];

/// Words retired from the language, refused anywhere as a name, with the
/// reference's hint.
const RETIRED: &[(&str, &str)] = &[
    (
        "admit",
        "`admit if … fit where x = e { … } keep (ℓ)` is now `hold … at admission (x = e) { … } cache (ℓ)` (the pool option `admit via` is unchanged)",
    ),
    ("keep", "`keep` is now `cache`"),
    (
        "enter",
        "`enter` is now `hold`: `hold P (u) … at admission (x = e) { … } cache (ℓ);`",
    ),
    (
        "fit",
        "`fit` is gone: the pools of a `hold` are the condition",
    ),
    ("where", "`where x = e` is now `at admission (x = e)`"),
];

struct Parser<'a> {
    src: &'a str,
    tokens: Vec<Token>,
    pos: usize,
    diags: Vec<Diagnostic>,
    /// Current nesting of expressions and blocks.
    depth: u32,
    /// Current depth of the tree being built (nesting and operator chains).
    tree: u32,
    /// Whether nesting past [`MAX_DEPTH`] was reported (it is reported once).
    too_deep: bool,
    /// Where the text starts in the map of sources (spans are shifted by it).
    base: u32,
}

impl<'a> Parser<'a> {
    fn new(src: &'a str, tokens: Vec<Token>) -> Parser<'a> {
        Parser {
            src,
            tokens,
            pos: 0,
            diags: Vec::new(),
            depth: 0,
            tree: 0,
            too_deep: false,
            base: 0,
        }
    }

    /// The text between two offsets of the map of sources.
    fn text(&self, start: u32, end: u32) -> Option<&str> {
        let local = |x: u32| x.saturating_sub(self.base) as usize;
        self.src.get(local(start)..local(end))
    }

    // ----- looking at tokens -------------------------------------------

    fn token(&self) -> &Token {
        // `lex` always ends the list with Eof and `bump` never passes it.
        &self.tokens[self.pos.min(self.tokens.len() - 1)]
    }

    fn peek(&self) -> &TokenKind {
        &self.token().kind
    }

    fn nth(&self, n: usize) -> &TokenKind {
        &self.tokens[(self.pos + n).min(self.tokens.len() - 1)].kind
    }

    fn span(&self) -> Span {
        self.token().span
    }

    /// The end of the last token taken (the start of the text before any).
    fn prev_end(&self) -> u32 {
        if self.pos == 0 {
            self.base
        } else {
            self.tokens[self.pos - 1].span.end
        }
    }

    /// The span from `start` to the end of the last token taken.
    fn since(&self, start: Span) -> Span {
        Span {
            start: start.start,
            end: self.prev_end().max(start.start),
        }
    }

    fn at(&self, kind: &TokenKind) -> bool {
        self.peek() == kind
    }

    fn at_eof(&self) -> bool {
        self.at(&TokenKind::Eof)
    }

    fn word(&self) -> Option<&str> {
        match self.peek() {
            TokenKind::Ident(w) => Some(w),
            _ => None,
        }
    }

    fn at_word(&self, w: &str) -> bool {
        self.word() == Some(w)
    }

    fn nth_is_word(&self, n: usize, w: &str) -> bool {
        matches!(self.nth(n), TokenKind::Ident(x) if x == w)
    }

    /// Whether the current token is the first of its line.
    fn starts_line(&self) -> bool {
        let start = self.span().start;
        let prev = self.prev_end();
        self.pos == 0 || self.text(prev, start).is_some_and(|gap| gap.contains('\n'))
    }

    fn bump(&mut self) -> Token {
        let t = self.token().clone();
        if self.pos < self.tokens.len() - 1 {
            self.pos += 1;
        }
        t
    }

    fn eat(&mut self, kind: &TokenKind) -> bool {
        let found = self.at(kind);
        if found {
            self.bump();
        }
        found
    }

    fn eat_word(&mut self, w: &str) -> bool {
        let found = self.at_word(w);
        if found {
            self.bump();
        }
        found
    }

    // ----- reporting ---------------------------------------------------

    /// The current token as a message names it: `` `;` ``, `` `run` ``, `end of file`.
    fn found(&self) -> String {
        let t = self.token();
        match &t.kind {
            TokenKind::Eof => "end of file".to_string(),
            TokenKind::Str(s) => format!("the string \"{s}\""),
            kind => match kind.punct_text() {
                Some(p) => format!("`{p}`"),
                None => {
                    let text = self.text(t.span.start, t.span.end).unwrap_or("?");
                    format!("`{text}`")
                }
            },
        }
    }

    /// Reports a diagnostic unless one was already reported at the same
    /// place (the second is almost always a consequence of the first), or
    /// at a token the lexer refused.
    fn report(&mut self, d: Diagnostic) {
        // The lexer reported the refused text already.
        if self.at(&TokenKind::Error) && d.span == self.span() {
            return;
        }
        if self
            .diags
            .last()
            .is_some_and(|last| last.span.start == d.span.start)
        {
            return;
        }
        self.diags.push(d);
    }

    /// Reports "expected WHAT, found X" at the current token.
    fn error_expected(&mut self, what: &str) -> Fail {
        let d = Diagnostic::new(
            "syntax",
            self.span(),
            format!("expected {what}, found {}", self.found()),
        )
        .with_label(format!("expected {what}"));
        self.report(d);
        Fail
    }

    /// Takes `kind` or reports "expected `kind` CONTEXT, found X".
    fn expect(&mut self, kind: TokenKind, context: &str) -> PResult<Span> {
        if self.at(&kind) {
            return Ok(self.bump().span);
        }
        let p = kind.punct_text().unwrap_or("?");
        Err(self.error_expected(&format!("`{p}` {context}")))
    }

    /// Takes the closing `kind` of a group opened at `open`.
    fn expect_close(&mut self, kind: TokenKind, open: Span) -> PResult<Span> {
        if self.at(&kind) {
            return Ok(self.bump().span);
        }
        let p = kind.punct_text().unwrap_or("?");
        let opener = self.text(open.start, open.end).unwrap_or("(");
        let d = Diagnostic::new(
            "syntax",
            self.span(),
            format!("expected `{p}` to close `{opener}`, found {}", self.found()),
        )
        .with_label(format!("expected `{p}`"))
        .with_secondary(open, "opened here");
        self.report(d);
        Err(Fail)
    }

    /// Takes the `;` ending a statement or declaration. A missing `;` before
    /// a token that begins a new line (or a `}`) is reported and taken as
    /// written, so the next line parses; otherwise the caller recovers.
    fn expect_semi(&mut self, what: &str) -> PResult<()> {
        if self.eat(&TokenKind::Semi) {
            return Ok(());
        }
        let lenient = self.starts_line() || self.at(&TokenKind::RBrace) || self.at_eof();
        let end = self.prev_end();
        let d = Diagnostic::new(
            "syntax",
            self.span(),
            format!("expected `;` after {what}, found {}", self.found()),
        )
        .with_label("expected `;`")
        .with_secondary(Span { start: end, end }, "add `;` here");
        self.report(d);
        if lenient { Ok(()) } else { Err(Fail) }
    }

    /// Reports a retired word used as a name; returns whether it was one.
    fn check_retired(&mut self, name: &str, span: Span) -> bool {
        let Some((_, hint)) = RETIRED.iter().find(|(w, _)| *w == name) else {
            return false;
        };
        let d = Diagnostic::new(
            "retired-word",
            span,
            format!("`{name}` is a retired word and names nothing: {hint}"),
        )
        .with_label("retired word");
        self.report(d);
        true
    }

    // ----- nesting -----------------------------------------------------

    /// Enters one level of nesting (a parenthesis, an argument list, a
    /// block, an exponent). Past [`MAX_DEPTH`] levels, or a tree deeper than
    /// [`MAX_TREE_DEPTH`], reports it (once per program), skips the rest of
    /// the nested text (an expression also ends at a `;`) and returns false.
    fn enter(&mut self, expression: bool) -> bool {
        if self.depth < MAX_DEPTH && self.tree < MAX_TREE_DEPTH {
            self.depth += 1;
            self.tree += 1;
            return true;
        }
        self.too_deep(expression);
        false
    }

    fn leave(&mut self) {
        self.depth -= 1;
        self.tree -= 1;
    }

    /// Adds one operator of a chain (`a + b + …`, `- - a`), which deepens
    /// the tree but not the parser's recursion; false (reported, rest of the
    /// expression skipped) past [`MAX_TREE_DEPTH`]. The caller gives the
    /// levels back with [`Parser::unchain`].
    fn chain(&mut self) -> bool {
        if self.tree < MAX_TREE_DEPTH {
            self.tree += 1;
            return true;
        }
        self.too_deep(true);
        false
    }

    fn unchain(&mut self, links: u32) {
        self.tree -= links;
    }

    #[cold]
    #[inline(never)]
    fn too_deep(&mut self, expression: bool) {
        if !self.too_deep {
            self.too_deep = true;
            let d = Diagnostic::new(
                "syntax",
                self.span(),
                format!(
                    "expected at most {MAX_DEPTH} levels of nesting and {MAX_TREE_DEPTH} chained operations, found more"
                ),
            )
            .with_label("nested too deeply")
            .with_help("name the inner parts with `let` or `def`");
            self.report(d);
        }
        self.skip_nested(expression);
    }

    /// Skips tokens up to (not including) the first closing bracket that
    /// closes a group opened before this point, or a `;` outside any group
    /// if `to_semi`.
    fn skip_nested(&mut self, to_semi: bool) {
        let mut level = 0usize;
        loop {
            match self.peek() {
                TokenKind::Eof => return,
                TokenKind::Semi if to_semi && level == 0 => return,
                TokenKind::LParen | TokenKind::LBracket | TokenKind::LBrace => level += 1,
                TokenKind::RParen | TokenKind::RBracket | TokenKind::RBrace => {
                    if level == 0 {
                        return;
                    }
                    level -= 1;
                }
                _ => {}
            }
            self.bump();
        }
    }

    // ----- recovery ----------------------------------------------------

    /// Recovers inside a block: skips to just after a `;` at this depth,
    /// to a `}` closing the block (not taken), or to a statement word that
    /// begins a line. Always makes progress unless at `}` or the end.
    fn sync_in_block(&mut self) {
        let start = self.pos;
        let mut level = 0usize;
        loop {
            match self.peek() {
                TokenKind::Eof => return,
                TokenKind::Semi if level == 0 => {
                    self.bump();
                    return;
                }
                TokenKind::RBrace if level == 0 => return,
                TokenKind::LParen | TokenKind::LBracket | TokenKind::LBrace => level += 1,
                TokenKind::RParen | TokenKind::RBracket | TokenKind::RBrace => {
                    level = level.saturating_sub(1)
                }
                TokenKind::Ident(w)
                    if level == 0
                        && self.pos > start
                        && STATEMENT_WORDS.contains(&w.as_str())
                        && self.starts_line() =>
                {
                    return;
                }
                _ => {}
            }
            self.bump();
        }
    }

    /// Recovers at top level: skips to just after a `;` or stray `}` at
    /// this depth, or to an item word at this depth (not taken).
    fn sync_top(&mut self) {
        let start = self.pos;
        let mut level = 0usize;
        loop {
            match self.peek() {
                TokenKind::Eof => return,
                TokenKind::Semi | TokenKind::RBrace if level == 0 => {
                    self.bump();
                    return;
                }
                TokenKind::LParen | TokenKind::LBracket | TokenKind::LBrace => level += 1,
                TokenKind::RParen | TokenKind::RBracket | TokenKind::RBrace => {
                    level = level.saturating_sub(1)
                }
                TokenKind::Ident(w)
                    if level == 0 && self.pos > start && ITEM_WORDS.contains(&w.as_str()) =>
                {
                    return;
                }
                _ => {}
            }
            self.bump();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_error_at_one_place_is_reported_once() {
        let (_, diags) = parse("let x = (((");
        assert_eq!(diags.len(), 1, "{diags:?}");
        assert!(
            diags[0].message.contains("end of file"),
            "{}",
            diags[0].message
        );
    }
}
