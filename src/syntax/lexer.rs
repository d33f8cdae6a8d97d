//! Source text to tokens (spec §2).
//!
//! Architecture invariant: the lexer knows no keyword. Every word is an
//! [`TokenKind::Ident`]; the parser decides by position what a word means.
//! It never stops at a bad character: it reports it, leaves a
//! [`TokenKind::Error`] token in its place and goes on; the token list
//! always ends with one [`TokenKind::Eof`].

use super::ast::Span;
use super::diagnostic::Diagnostic;

/// Every word of the Tier-1 language that the parser recognises by position.
///
/// Keywords are contextual: each is also a valid name where a name is
/// expected (except as a `def` parameter, a linker rule). Tier-2 words that
/// the parser refuses as "not supported yet" are not listed here.
pub const KEYWORDS: &[&str] = &[
    // items
    "let",
    "def",
    "pool",
    "stage",
    "share",
    "workload",
    "session",
    "run",
    // pool and stage declarations
    "cap",
    "delay",
    "fifo",
    "ps",
    "maxmin",
    "bottleneck",
    // workload
    "arrive",
    "poisson",
    "renewal",
    "closed",
    "batch",
    "none",
    "init",
    "turn",
    // run options
    "horizon",
    "warmup",
    "seed",
    "arrivals",
    // statements
    "set",
    "observe",
    "end",
    "hold",
    "reserve",
    "lease",
    "grow",
    "load",
    "release",
    "branch",
    "with",
    "else",
    "loop",
    "choose",
    "in",
    "by",
    "transfer",
    "on",
    "from",
    "to",
];

/// The clause words after an arrival law (serq extensions: `arrive
/// poisson(r(now)) peak (R);`, `arrive trace "f" window (a, b) speed (x);`).
/// Read as clauses only after the law and before its `;`, when a `(`
/// follows; everywhere else they are names, so programs that use them as
/// names (a `let speed`, a `def f(peak)`) keep working.
pub const ARRIVE_CLAUSES: &[&str] = &["peak", "speed", "window"];

/// What a token is.
#[derive(Clone, Debug, PartialEq)]
pub enum TokenKind {
    /// A number literal; an overflowing one is `inf`.
    Num(f64),
    /// A string literal without its quotes.
    Str(String),
    /// A word: a name or a contextual keyword.
    Ident(String),
    /// `{`
    LBrace,
    /// `}`
    RBrace,
    /// `(`
    LParen,
    /// `)`
    RParen,
    /// `[`
    LBracket,
    /// `]`
    RBracket,
    /// `,`
    Comma,
    /// `;`
    Semi,
    /// `:`
    Colon,
    /// `=`
    Assign,
    /// `~`
    Tilde,
    /// `?`
    Question,
    /// `+`
    Plus,
    /// `-`
    Minus,
    /// `*`
    Star,
    /// `/`
    Slash,
    /// `^`
    Caret,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `==`
    EqEq,
    /// `!=`
    Ne,
    /// `&&`
    AndAnd,
    /// `||`
    OrOr,
    /// `!`
    Bang,
    /// Text the lexer refused and reported (an unexpected character, an
    /// unterminated string); the parser reports nothing more at it.
    Error,
    /// The end of the text.
    Eof,
}

impl TokenKind {
    /// The punctuation as written, for messages (`None` for literals, words and the end).
    pub fn punct_text(&self) -> Option<&'static str> {
        use TokenKind::*;
        Some(match self {
            LBrace => "{",
            RBrace => "}",
            LParen => "(",
            RParen => ")",
            LBracket => "[",
            RBracket => "]",
            Comma => ",",
            Semi => ";",
            Colon => ":",
            Assign => "=",
            Tilde => "~",
            Question => "?",
            Plus => "+",
            Minus => "-",
            Star => "*",
            Slash => "/",
            Caret => "^",
            Lt => "<",
            Le => "<=",
            Gt => ">",
            Ge => ">=",
            EqEq => "==",
            Ne => "!=",
            AndAnd => "&&",
            OrOr => "||",
            Bang => "!",
            Num(_) | Str(_) | Ident(_) | Error | Eof => return None,
        })
    }
}

/// Whether a word may start with `c`: `_` or a letter (any script).
fn starts_word(c: char) -> bool {
    c == '_' || c.is_alphabetic()
}

/// Whether `c` may follow the first character of a word.
fn continues_word(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

/// Whether `text` lexes as exactly one word (a name or a keyword), for
/// names given outside a program, such as `--set NAME=VALUE`.
///
/// ```
/// use serq::syntax::lexer::is_word;
/// assert!(is_word("ND") && is_word("_x1") && is_word("débit"));
/// assert!(!is_word("") && !is_word("1x") && !is_word("a-b"));
/// ```
pub fn is_word(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next().is_some_and(starts_word) && chars.all(continues_word)
}

/// A token and where it is written.
#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    /// What it is.
    pub kind: TokenKind,
    /// Its text.
    pub span: Span,
}

/// Splits `source` into tokens, reporting every lexical error (rule `lexical`).
///
/// The result always ends with an [`TokenKind::Eof`] token whose span is the
/// empty span at the end of the text.
pub fn lex(source: &str) -> (Vec<Token>, Vec<Diagnostic>) {
    let mut lexer = Lexer {
        src: source,
        bytes: source.as_bytes(),
        pos: 0,
        tokens: Vec::new(),
        diags: Vec::new(),
    };
    lexer.run();
    (lexer.tokens, lexer.diags)
}

struct Lexer<'a> {
    src: &'a str,
    bytes: &'a [u8],
    pos: usize,
    tokens: Vec<Token>,
    diags: Vec<Diagnostic>,
}

/// A byte offset as a span coordinate (texts beyond 4 GiB saturate).
fn at(offset: usize) -> u32 {
    u32::try_from(offset).unwrap_or(u32::MAX)
}

fn span(start: usize, end: usize) -> Span {
    Span {
        start: at(start),
        end: at(end),
    }
}

impl Lexer<'_> {
    fn byte(&self, i: usize) -> u8 {
        self.bytes.get(i).copied().unwrap_or(0)
    }

    fn push(&mut self, kind: TokenKind, start: usize) {
        self.tokens.push(Token {
            kind,
            span: span(start, self.pos),
        });
    }

    fn run(&mut self) {
        while self.pos < self.bytes.len() {
            let start = self.pos;
            let b = self.bytes[start];
            match b {
                b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' => self.pos += 1,
                b'/' if self.byte(start + 1) == b'/' => {
                    while self.pos < self.bytes.len() && self.bytes[self.pos] != b'\n' {
                        self.pos += 1;
                    }
                }
                b'/' if self.byte(start + 1) == b'*' => self.block_comment(start),
                b'0'..=b'9' => self.number(start),
                b'.' if self.byte(start + 1).is_ascii_digit() => self.number(start),
                b'"' => self.string(start),
                _ if b.is_ascii() => self.punct(start, b),
                _ => self.unicode(start),
            }
        }
        let end = self.bytes.len();
        self.tokens.push(Token {
            kind: TokenKind::Eof,
            span: span(end, end),
        });
    }

    fn block_comment(&mut self, start: usize) {
        match self.src[start + 2..].find("*/") {
            Some(i) => self.pos = start + 2 + i + 2,
            None => {
                self.pos = self.bytes.len();
                self.diags.push(
                    Diagnostic::new(
                        "lexical",
                        span(start, start + 2),
                        "unterminated block comment",
                    )
                    .with_label("this comment is never closed")
                    .with_help("close this comment with `*/`"),
                );
            }
        }
    }

    /// Digits with `_` ignored, an optional fraction, an optional exponent
    /// (digits only, taken only when a digit follows `e`, `e+` or `e-`).
    fn number(&mut self, start: usize) {
        let mut text = String::new();
        let digits = |lexer: &mut Self, text: &mut String| {
            while let c @ (b'0'..=b'9' | b'_') = lexer.byte(lexer.pos) {
                if c != b'_' {
                    text.push(c as char);
                }
                lexer.pos += 1;
            }
        };
        digits(self, &mut text);
        if text.is_empty() {
            text.push('0');
        }
        if self.byte(self.pos) == b'.' {
            self.pos += 1;
            text.push('.');
            let before = text.len();
            digits(self, &mut text);
            if text.len() == before {
                text.push('0');
            }
            if self.byte(self.pos) == b'.' {
                while let b'0'..=b'9' | b'_' | b'.' = self.byte(self.pos) {
                    self.pos += 1;
                }
                let written = &self.src[start..self.pos];
                self.diags.push(
                    Diagnostic::new(
                        "lexical",
                        span(start, self.pos),
                        format!("bad number `{written}`"),
                    )
                    .with_label("a number has at most one `.`"),
                );
                self.push(TokenKind::Num(0.0), start);
                return;
            }
        }
        if matches!(self.byte(self.pos), b'e' | b'E') {
            let sign = usize::from(matches!(self.byte(self.pos + 1), b'+' | b'-'));
            if self.byte(self.pos + 1 + sign).is_ascii_digit() {
                text.push('e');
                if sign == 1 {
                    text.push(self.bytes[self.pos + 1] as char);
                }
                self.pos += 1 + sign;
                while self.byte(self.pos).is_ascii_digit() {
                    text.push(self.bytes[self.pos] as char);
                    self.pos += 1;
                }
            }
        }
        // `text` is digits, one `.`, digits and an optional well-formed
        // exponent, which f64 parsing accepts (an overflow reads as inf).
        let value = text.parse::<f64>().unwrap_or(f64::INFINITY);
        self.push(TokenKind::Num(value), start);
    }

    fn string(&mut self, start: usize) {
        match self.src[start + 1..].find('"') {
            Some(i) => {
                self.pos = start + 1 + i + 1;
                let text = self.src[start + 1..start + 1 + i].to_string();
                self.push(TokenKind::Str(text), start);
            }
            None => {
                self.pos = self.bytes.len();
                self.push(TokenKind::Error, start);
                self.diags.push(
                    Diagnostic::new("lexical", span(start, start + 1), "unterminated string")
                        .with_label("this string is never closed")
                        .with_help("close the string with `\"`"),
                );
            }
        }
    }

    fn punct(&mut self, start: usize, b: u8) {
        use TokenKind::*;
        let next = self.byte(start + 1);
        let (kind, len) = match (b, next) {
            (b'<', b'=') => (Le, 2),
            (b'>', b'=') => (Ge, 2),
            (b'=', b'=') => (EqEq, 2),
            (b'!', b'=') => (Ne, 2),
            (b'&', b'&') => (AndAnd, 2),
            (b'|', b'|') => (OrOr, 2),
            (b'{', _) => (LBrace, 1),
            (b'}', _) => (RBrace, 1),
            (b'(', _) => (LParen, 1),
            (b')', _) => (RParen, 1),
            (b'[', _) => (LBracket, 1),
            (b']', _) => (RBracket, 1),
            (b',', _) => (Comma, 1),
            (b';', _) => (Semi, 1),
            (b':', _) => (Colon, 1),
            (b'=', _) => (Assign, 1),
            (b'~', _) => (Tilde, 1),
            (b'?', _) => (Question, 1),
            (b'+', _) => (Plus, 1),
            (b'-', _) => (Minus, 1),
            (b'*', _) => (Star, 1),
            (b'/', _) => (Slash, 1),
            (b'^', _) => (Caret, 1),
            (b'<', _) => (Lt, 1),
            (b'>', _) => (Gt, 1),
            (b'!', _) => (Bang, 1),
            _ if b == b'_' || b.is_ascii_alphabetic() => {
                self.word(start);
                return;
            }
            _ => {
                self.unexpected(start, 1);
                return;
            }
        };
        self.pos = start + len;
        self.push(kind, start);
    }

    fn unicode(&mut self, start: usize) {
        // `start` is a char boundary: the lexer only ever advances by whole
        // ASCII bytes or whole chars.
        let c = self.src[start..].chars().next().unwrap_or('\u{fffd}');
        if starts_word(c) {
            self.word(start);
        } else {
            self.unexpected(start, c.len_utf8());
        }
    }

    fn word(&mut self, start: usize) {
        let rest = &self.src[start..];
        let len = rest
            .char_indices()
            .find(|&(_, c)| !continues_word(c))
            .map_or(rest.len(), |(i, _)| i);
        self.pos = start + len;
        self.push(TokenKind::Ident(rest[..len].to_string()), start);
    }

    fn unexpected(&mut self, start: usize, len: usize) {
        self.pos = start + len;
        self.push(TokenKind::Error, start);
        let c = &self.src[start..self.pos];
        let mut d = Diagnostic::new(
            "lexical",
            span(start, self.pos),
            format!("unexpected character `{c}`"),
        )
        .with_label("not part of the language");
        d.help = match c {
            "&" => Some("write `&&` for logical and".into()),
            "|" => Some("write `||` for logical or".into()),
            "#" => Some("comments start with `//`".into()),
            "%" => Some("there is no `%`; write `a - b * floor(a / b)`".into()),
            _ => None,
        };
        self.diags.push(d);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The token kinds of a text that lexes cleanly, without the final Eof.
    fn tokens(src: &str) -> Vec<TokenKind> {
        let (tokens, diags) = lex(src);
        assert!(diags.is_empty(), "{diags:#?}");
        let mut kinds: Vec<_> = tokens.into_iter().map(|t| t.kind).collect();
        assert_eq!(kinds.pop(), Some(TokenKind::Eof));
        kinds
    }

    fn num(v: f64) -> TokenKind {
        TokenKind::Num(v)
    }

    fn ident(w: &str) -> TokenKind {
        TokenKind::Ident(w.to_string())
    }

    /// The one diagnostic of a whole parse (lexer and parser).
    fn one_error(src: &str) -> Diagnostic {
        let mut diags = crate::syntax::parse(src).1;
        assert_eq!(diags.len(), 1, "{diags:#?}");
        diags.remove(0)
    }

    #[test]
    fn numbers_are_read_in_every_written_form() {
        let written = "12 1.5 .5 5. 2e5 2E5 1e-2 1e+5 0.5e1 007 1.e5";
        let want = [12.0, 1.5, 0.5, 5.0, 2e5, 2e5, 1e-2, 1e5, 5.0, 7.0, 1e5];
        assert_eq!(tokens(written), want.map(num).to_vec());
    }

    #[test]
    fn underscores_are_ignored_in_digits_and_fraction_but_not_exponent() {
        assert_eq!(
            tokens("1_000 1__0 1_ 1._5 1_e5"),
            [1000.0, 10.0, 1.0, 1.5, 1e5].map(num).to_vec()
        );
        // `1e5_`: the exponent ends at the underscore, which begins a word.
        assert_eq!(tokens("1e5_"), vec![num(1e5), ident("_")]);
    }

    #[test]
    fn an_exponent_needs_a_digit_after_e() {
        assert_eq!(tokens("2e"), vec![num(2.0), ident("e")]);
        assert_eq!(
            tokens("2e+x"),
            vec![num(2.0), ident("e"), TokenKind::Plus, ident("x")]
        );
        // After an exponent a `.` begins a new number.
        assert_eq!(tokens("1e5.3"), vec![num(1e5), num(0.3)]);
    }

    #[test]
    fn an_overflowing_literal_reads_as_inf() {
        assert_eq!(tokens("1e400"), vec![num(f64::INFINITY)]);
    }

    #[test]
    fn hex_is_not_supported_so_0x10_is_zero_then_a_word() {
        assert_eq!(tokens("0x10"), vec![num(0.0), ident("x10")]);
    }

    #[test]
    fn a_number_with_two_dots_is_a_bad_number() {
        let (_, diags) = lex("let x = 1.2.3;");
        assert_eq!(diags.len(), 1);
        assert_eq!(diags[0].message, "bad number `1.2.3`");
        assert_eq!(diags[0].span, Span { start: 8, end: 13 });
        let d = one_error("let x = 1..2;");
        assert_eq!(d.message, "bad number `1..2`");
    }

    #[test]
    fn an_unterminated_block_comment_is_reported_at_its_opening() {
        let d = one_error("let x = 1; /* never closed");
        assert_eq!(d.message, "unterminated block comment");
        assert_eq!(d.span, Span { start: 11, end: 13 });
        assert!(d.help.unwrap().contains("*/"));
    }

    #[test]
    fn block_comments_do_not_nest_and_line_comments_end_at_the_newline() {
        // The first `*/` closes the comment, so `c */` is left as tokens.
        assert_eq!(
            tokens("/* a /* b */ c */"),
            vec![ident("c"), TokenKind::Star, TokenKind::Slash]
        );
        assert_eq!(tokens("1 // two 2\n3"), vec![num(1.0), num(3.0)]);
        assert_eq!(tokens("1 /* multi\nline */ 2"), vec![num(1.0), num(2.0)]);
    }

    #[test]
    fn identifiers_may_be_unicode_letters_and_have_no_dots() {
        assert_eq!(
            tokens("é_1 _x Ωmega"),
            vec![ident("é_1"), ident("_x"), ident("Ωmega")]
        );
        // A dot is not part of a name and is no token.
        let (tokens, diags) = lex("a.b");
        assert_eq!(diags.len(), 1);
        assert_eq!(diags[0].message, "unexpected character `.`");
        let kinds: Vec<_> = tokens.into_iter().map(|t| t.kind).collect();
        assert_eq!(
            kinds,
            vec![ident("a"), TokenKind::Error, ident("b"), TokenKind::Eof]
        );
    }

    #[test]
    fn every_punctuation_lexes_with_two_character_operators_first() {
        use TokenKind::*;
        let want = vec![
            LBrace, RBrace, LParen, RParen, LBracket, RBracket, Comma, Semi, Colon, Assign, Tilde,
            Question, Plus, Minus, Star, Slash, Caret, Lt, Le, Gt, Ge, EqEq, Ne, AndAnd, OrOr,
            Bang,
        ];
        assert_eq!(
            tokens("{ } ( ) [ ] , ; : = ~ ? + - * / ^ < <= > >= == != && || !"),
            want
        );
        assert_eq!(tokens("a<=b"), vec![ident("a"), Le, ident("b")]);
    }

    #[test]
    fn strings_lex_and_an_unterminated_one_is_reported() {
        assert_eq!(tokens(r#""lib.sq""#), vec![TokenKind::Str("lib.sq".into())]);
        let (_, diags) = lex(r#"use "lib.sq;"#);
        assert_eq!(diags[0].message, "unterminated string");
    }

    #[test]
    fn an_unexpected_character_is_reported_once_and_becomes_an_error_token() {
        let (tokens, diags) = lex("7 % 2 # x");
        let messages: Vec<_> = diags.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(
            messages,
            ["unexpected character `%`", "unexpected character `#`"]
        );
        assert_eq!(diags[0].span, Span { start: 2, end: 3 });
        let kinds: Vec<_> = tokens.into_iter().map(|t| t.kind).collect();
        assert_eq!(
            kinds,
            vec![
                num(7.0),
                TokenKind::Error,
                num(2.0),
                TokenKind::Error,
                ident("x"),
                TokenKind::Eof
            ]
        );
        // A lone `&` is not `&&`; the parser adds nothing at the refused character.
        assert_eq!(
            one_error("let x = 1 & 2;").message,
            "unexpected character `&`"
        );
    }

    #[test]
    fn token_spans_are_byte_ranges() {
        let (tokens, _) = lex("ab  ç1 ;");
        let spans: Vec<_> = tokens.iter().map(|t| (t.span.start, t.span.end)).collect();
        // `ç` is two bytes, so `ç1` covers bytes 4..7.
        assert_eq!(spans, vec![(0, 2), (4, 7), (8, 9), (9, 9)]);
    }
}
