//! Source text to tokens (spec §2).
//!
//! Architecture invariant: the lexer knows no keyword. Every word is an
//! [`TokenKind::Ident`]; the parser decides by position what a word means.
//! It never stops at a bad character: it reports it, skips it and goes on,
//! and the token list always ends with one [`TokenKind::Eof`].

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
            Num(_) | Str(_) | Ident(_) | Eof => return None,
        })
    }
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
        if c.is_alphabetic() {
            self.word(start);
        } else {
            self.unexpected(start, c.len_utf8());
        }
    }

    fn word(&mut self, start: usize) {
        let rest = &self.src[start..];
        let len = rest
            .char_indices()
            .find(|&(_, c)| !(c == '_' || c.is_alphanumeric()))
            .map_or(rest.len(), |(i, _)| i);
        self.pos = start + len;
        self.push(TokenKind::Ident(rest[..len].to_string()), start);
    }

    fn unexpected(&mut self, start: usize, len: usize) {
        self.pos = start + len;
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

    fn kinds(src: &str) -> Vec<TokenKind> {
        let (tokens, diags) = lex(src);
        assert!(diags.is_empty(), "{diags:?}");
        tokens.into_iter().map(|t| t.kind).collect()
    }

    #[test]
    fn words_are_identifiers_and_the_list_ends_with_eof() {
        use TokenKind::*;
        assert_eq!(
            kinds("let é_1"),
            vec![Ident("let".into()), Ident("é_1".into()), Eof]
        );
    }

    #[test]
    fn exponent_needs_a_digit() {
        use TokenKind::*;
        assert_eq!(kinds("2e"), vec![Num(2.0), Ident("e".into()), Eof]);
        assert_eq!(
            kinds("2e+x"),
            vec![Num(2.0), Ident("e".into()), Plus, Ident("x".into()), Eof]
        );
        assert_eq!(kinds("1e5_"), vec![Num(1e5), Ident("_".into()), Eof]);
    }
}
