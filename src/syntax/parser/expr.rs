//! Expressions (spec §1 and §5.1): `?:` < `||` < `&&` < comparison (not
//! chainable) < `+ -` < `* /` < prefix `- !` < `^` (right-associative, its
//! exponent a `unary`).

use super::{PResult, Parser};
use crate::syntax::ast::{BinOp, Expr, ExprKind, Ident, Span, UnOp};
use crate::syntax::lexer::TokenKind;

/// Binding power of the binary operators handled by precedence climbing.
fn binary_op(kind: &TokenKind) -> Option<(BinOp, u8)> {
    use TokenKind::*;
    Some(match kind {
        OrOr => (BinOp::Or, 1),
        AndAnd => (BinOp::And, 2),
        Lt => (BinOp::Lt, 3),
        Le => (BinOp::Le, 3),
        Gt => (BinOp::Gt, 3),
        Ge => (BinOp::Ge, 3),
        EqEq => (BinOp::Eq, 3),
        Ne => (BinOp::Ne, 3),
        Plus => (BinOp::Add, 4),
        Minus => (BinOp::Sub, 4),
        Star => (BinOp::Mul, 5),
        Slash => (BinOp::Div, 5),
        _ => return None,
    })
}

/// The precedence of the comparisons, which do not chain.
const COMPARISON: u8 = 3;

/// What stands in for an expression skipped for nesting too deeply (the
/// diagnostic is reported; nobody links a program with diagnostics).
fn placeholder(span: Span) -> Expr {
    Expr {
        kind: ExprKind::Num(0.0),
        span,
    }
}

fn binary(op: BinOp, lhs: Expr, rhs: Expr) -> Expr {
    let span = Span::join(lhs.span, rhs.span);
    Expr {
        kind: ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)),
        span,
    }
}

impl Parser<'_> {
    /// `expr = orx [ "?" expr ":" expr ]`
    pub(super) fn expr(&mut self) -> PResult<Expr> {
        let start = self.span();
        if !self.enter() {
            return Ok(placeholder(self.since(start)));
        }
        let result = self.conditional();
        self.leave();
        result
    }

    fn conditional(&mut self) -> PResult<Expr> {
        let cond = self.binary(1)?;
        if !self.eat(&TokenKind::Question) {
            return Ok(cond);
        }
        let then = self.expr()?;
        self.expect(TokenKind::Colon, "between the branches of `?:`")?;
        let otherwise = self.expr()?;
        let span = Span::join(cond.span, otherwise.span);
        Ok(Expr {
            kind: ExprKind::Cond(Box::new(cond), Box::new(then), Box::new(otherwise)),
            span,
        })
    }

    /// Precedence climbing over the binary operators of power `min` and up.
    ///
    /// Each operator of a chain (`a + b + c …`) nests the tree one level
    /// deeper, so it counts as one level of nesting: a chain of 100 000 `+`
    /// would otherwise build a tree too deep to walk or drop recursively.
    fn binary(&mut self, min: u8) -> PResult<Expr> {
        let mut chained = 0;
        let result = self.binary_chain(min, &mut chained);
        for _ in 0..chained {
            self.leave();
        }
        result
    }

    fn binary_chain(&mut self, min: u8, chained: &mut u32) -> PResult<Expr> {
        let mut lhs = self.unary()?;
        let mut compared: Option<Span> = None;
        while let Some((op, power)) = binary_op(self.peek()) {
            if power < min {
                break;
            }
            if power == COMPARISON
                && let Some(first) = compared
            {
                let found = self.found();
                let d = crate::syntax::Diagnostic::new(
                    "syntax",
                    self.span(),
                    format!("expected the end of the comparison, found {found}: comparisons do not chain"),
                )
                .with_label("a second comparison")
                .with_secondary(first, "the first comparison")
                .with_help("parenthesise one comparison: `(a < b) == c`");
                self.report(d);
                return Err(super::Fail);
            }
            self.bump();
            if !self.enter() {
                return Ok(lhs);
            }
            *chained += 1;
            let rhs = self.binary(power + 1)?;
            lhs = binary(op, lhs, rhs);
            if power == COMPARISON {
                compared = Some(lhs.span);
            }
        }
        Ok(lhs)
    }

    /// `unary = ( "-" | "!" ) unary | pow`, read iteratively; each prefix
    /// operator counts as one level of nesting.
    fn unary(&mut self) -> PResult<Expr> {
        let start = self.span();
        let mut ops = Vec::new();
        let mut deep = false;
        loop {
            let op = match self.peek() {
                TokenKind::Minus => UnOp::Neg,
                TokenKind::Bang => UnOp::Not,
                _ => break,
            };
            ops.push((op, self.bump().span));
            if !self.enter() {
                deep = true;
                break;
            }
        }
        let operand = if deep {
            Ok(placeholder(self.since(start)))
        } else {
            self.pow()
        };
        let entered = ops.len() - usize::from(deep);
        for _ in 0..entered {
            self.leave();
        }
        let mut e = operand?;
        while let Some((op, at)) = ops.pop() {
            let span = Span::join(at, e.span);
            e = Expr {
                kind: ExprKind::Unary(op, Box::new(e)),
                span,
            };
        }
        Ok(e)
    }

    /// `pow = primary [ "^" unary ]`: right-associative, tighter than prefix `-`.
    fn pow(&mut self) -> PResult<Expr> {
        let base = self.primary()?;
        if !self.eat(&TokenKind::Caret) {
            return Ok(base);
        }
        let start = self.span();
        if !self.enter() {
            return Ok(binary(BinOp::Pow, base, placeholder(self.since(start))));
        }
        let exponent = self.unary();
        self.leave();
        Ok(binary(BinOp::Pow, base, exponent?))
    }

    /// A number, a name, a call, a member `x[e]`, a draw `~d(…)` or `( expr )`.
    fn primary(&mut self) -> PResult<Expr> {
        let start = self.span();
        match self.peek().clone() {
            TokenKind::Num(value) => {
                self.bump();
                Ok(Expr {
                    kind: ExprKind::Num(value),
                    span: start,
                })
            }
            TokenKind::Ident(_) => {
                let name = self.name()?;
                if self.at(&TokenKind::LParen) {
                    let args = self.args()?;
                    return Ok(Expr {
                        kind: ExprKind::Call(name, args),
                        span: self.since(start),
                    });
                }
                if let Some(index) = self.index()? {
                    return Ok(Expr {
                        kind: ExprKind::Index(name, Box::new(index)),
                        span: self.since(start),
                    });
                }
                Ok(Expr {
                    kind: ExprKind::Name(name.name),
                    span: start,
                })
            }
            TokenKind::Tilde => {
                self.bump();
                if !matches!(self.peek(), TokenKind::Ident(_)) {
                    return Err(self.error_expected("a distribution name after `~`"));
                }
                let dist = self.name()?;
                if !self.at(&TokenKind::LParen) {
                    return Err(self.error_expected(&format!("`(` after `~{}`", dist.name)));
                }
                let args = self.args()?;
                Ok(Expr {
                    kind: ExprKind::Sample(dist, args),
                    span: self.since(start),
                })
            }
            TokenKind::LParen => {
                let open = self.bump().span;
                let inner = self.expr()?;
                self.expect_close(TokenKind::RParen, open)?;
                // The parentheses are part of the text: the span covers them.
                Ok(Expr {
                    kind: inner.kind,
                    span: self.since(start),
                })
            }
            _ => Err(self.error_expected("an expression")),
        }
    }

    /// `( [ expr { , expr } ] )`, at `(`.
    pub(super) fn args(&mut self) -> PResult<Vec<Expr>> {
        let open = self.expect(TokenKind::LParen, "")?;
        let mut args = Vec::new();
        if self.eat(&TokenKind::RParen) {
            return Ok(args);
        }
        loop {
            args.push(self.expr()?);
            if !self.eat(&TokenKind::Comma) {
                break;
            }
        }
        self.expect_close(TokenKind::RParen, open)?;
        Ok(args)
    }

    /// An optional `[ expr ]` member index.
    pub(super) fn index(&mut self) -> PResult<Option<Expr>> {
        if !self.at(&TokenKind::LBracket) {
            return Ok(None);
        }
        let open = self.bump().span;
        let index = self.expr()?;
        self.expect_close(TokenKind::RBracket, open)?;
        Ok(Some(index))
    }

    /// A name: any word but a retired one.
    pub(super) fn name(&mut self) -> PResult<Ident> {
        let TokenKind::Ident(name) = self.peek().clone() else {
            return Err(self.error_expected("a name"));
        };
        let span = self.bump().span;
        if self.check_retired(&name, span) {
            return Err(super::Fail);
        }
        Ok(Ident { name, span })
    }

    /// `( expr )`, the parenthesised amount of many statements.
    pub(super) fn paren_expr(&mut self, context: &str) -> PResult<Expr> {
        let open = self.expect(TokenKind::LParen, context)?;
        let e = self.expr()?;
        self.expect_close(TokenKind::RParen, open)?;
        Ok(e)
    }
}
