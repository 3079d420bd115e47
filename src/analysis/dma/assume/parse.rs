//! Reading an assumption: a small hand-written lexer and recursive-descent parser to a linear comparison with
//! zero, errors with a span into the assumption's text (the configuration points into the TOML with it).

use super::{Assumption, Index, ParseError, Ref};
use crate::analysis::dma::term::Rel;
use std::ops::Range;

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Int(i64),
    Name(String),
    Cmp(&'static str),
    Punct(char),
}

fn lex(text: &str) -> Result<Vec<(Tok, Range<usize>)>, ParseError> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let start = i;
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c.is_ascii_digit() {
            while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
                i += 1;
            }
            let digits: String = text[start..i].chars().filter(|&c| c != '_').collect();
            let v = digits.parse().map_err(|_| err(format!("`{}` does not fit 64 bits", &text[start..i]), start..i))?;
            out.push((Tok::Int(v), start..i));
        } else if c.is_ascii_alphabetic() || c == b'_' || c == b'%' {
            i += 1;
            // (a ref inside a pytree is named by its path: `metadata_ref.records`, `pair_ref.weight`)
            let field = |i: usize| b[i] == b'.' && b.get(i + 1).is_some_and(|&n| n.is_ascii_alphabetic() || n == b'_');
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || field(i)) {
                i += 1;
            }
            out.push((Tok::Name(text[start..i].to_string()), start..i));
        } else if let Some(op) = ["<=", ">=", "==", "!=", "<", ">"].into_iter().find(|op| text[i..].starts_with(op)) {
            i += op.len();
            out.push((Tok::Cmp(op), start..i));
        } else if "+-*[](),".contains(c as char) {
            i += 1;
            out.push((Tok::Punct(c as char), start..i));
        } else {
            let ch = text[i..].chars().next().unwrap_or('?');
            let end = i + ch.len_utf8();
            let hint = if ch == '=' { " (equality is `==`)" } else { "" };
            return Err(err(format!("unexpected `{ch}`{hint}"), i..end));
        }
    }
    Ok(out)
}

fn err(message: impl Into<String>, span: Range<usize>) -> ParseError {
    ParseError { message: message.into(), span }
}

/// A linear expression being parsed: `Σ k·ref + c`.
#[derive(Clone, Debug, Default)]
struct Linear {
    terms: Vec<(Ref, i64)>,
    c: i64,
    /// `i`'s coefficient (indices only).
    i: i64,
}

impl Linear {
    fn scaled(mut self, k: i64, at: &Range<usize>) -> Result<Linear, ParseError> {
        let overflow = || err("a constant overflows 64 bits", at.clone());
        self.c = self.c.checked_mul(k).ok_or_else(overflow)?;
        self.i = self.i.checked_mul(k).ok_or_else(overflow)?;
        for t in &mut self.terms {
            t.1 = t.1.checked_mul(k).ok_or_else(overflow)?;
        }
        Ok(self)
    }

    fn plus(mut self, o: Linear, at: &Range<usize>) -> Result<Linear, ParseError> {
        let overflow = || err("a constant overflows 64 bits", at.clone());
        self.c = self.c.checked_add(o.c).ok_or_else(overflow)?;
        self.i = self.i.checked_add(o.i).ok_or_else(overflow)?;
        self.terms.extend(o.terms);
        Ok(self)
    }

    fn constant(&self) -> Option<i64> {
        (self.terms.is_empty() && self.i == 0).then_some(self.c)
    }
}

struct Parser<'t> {
    toks: Vec<(Tok, Range<usize>)>,
    pos: usize,
    end: usize,
    text: &'t str,
    /// Inside `[...]`: `i` is the index variable and `*` alone means every element.
    in_index: bool,
    /// Nesting of parentheses and signs so far: bounded, so that no input exhausts the stack.
    depth: usize,
}

/// Nesting an assumption may have (real ones have two or three levels).
const MAX_DEPTH: usize = 64;

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.0)
    }

    fn span(&self) -> Range<usize> {
        self.toks.get(self.pos).map(|t| t.1.clone()).unwrap_or(self.end..self.end)
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(&Tok::Punct(c)) {
            self.pos += 1;
            return true;
        }
        false
    }

    fn expected(&self, what: &str) -> ParseError {
        match self.toks.get(self.pos) {
            Some((_, r)) => err(format!("expected {what}, found `{}`", &self.text[r.clone()]), r.clone()),
            None => err(format!("expected {what} at the end"), self.end..self.end),
        }
    }

    fn expr(&mut self) -> Result<Linear, ParseError> {
        let start = self.span().start;
        let mut acc = self.term()?;
        loop {
            let sign = if self.eat('+') {
                1
            } else if self.eat('-') {
                -1
            } else {
                return Ok(acc);
            };
            let at = start..self.span().end;
            let rhs = self.term()?.scaled(sign, &at)?;
            acc = acc.plus(rhs, &at)?;
        }
    }

    fn term(&mut self) -> Result<Linear, ParseError> {
        let start = self.span().start;
        let mut acc = self.unary()?;
        while self.eat('*') {
            let rhs = self.unary()?;
            let at = start..self.toks.get(self.pos.saturating_sub(1)).map_or(self.end, |t| t.1.end);
            acc = match (acc.constant(), rhs.constant()) {
                (Some(k), _) => rhs.scaled(k, &at)?,
                (None, Some(k)) => acc.scaled(k, &at)?,
                (None, None) => {
                    return Err(err("a product of two unknowns is not linear: multiply by a constant only", at))
                }
            };
        }
        Ok(acc)
    }

    fn unary(&mut self) -> Result<Linear, ParseError> {
        let at = self.span();
        if self.depth > MAX_DEPTH {
            return Err(err("nested too deeply", at));
        }
        self.depth += 1;
        let v = if self.eat('-') {
            self.unary().and_then(|v| v.scaled(-1, &at))
        } else if self.eat('+') {
            self.unary()
        } else {
            self.atom()
        };
        self.depth -= 1;
        v
    }

    fn atom(&mut self) -> Result<Linear, ParseError> {
        let Some((tok, span)) = self.toks.get(self.pos).cloned() else { return Err(self.expected("a value")) };
        match tok {
            Tok::Int(v) => {
                self.pos += 1;
                Ok(Linear { c: v, ..Default::default() })
            }
            Tok::Punct('(') => {
                self.pos += 1;
                let e = self.expr()?;
                if !self.eat(')') {
                    return Err(self.expected("`)`"));
                }
                Ok(e)
            }
            Tok::Name(n) if self.in_index => {
                self.pos += 1;
                if n != "i" {
                    return Err(err(
                        format!("`{n}` in an index: an index is a constant, `*` or `i` plus or minus a constant"),
                        span,
                    ));
                }
                Ok(Linear { i: 1, ..Default::default() })
            }
            Tok::Name(n) => {
                self.pos += 1;
                if n == "i" {
                    return Err(err("`i` stands for an index: write it inside `[...]`", span));
                }
                let idx = if self.eat('[') { Some(self.indices()?) } else { None };
                Ok(Linear { terms: vec![(Ref { name: n, span, idx }, 1)], ..Default::default() })
            }
            _ => Err(self.expected("a value")),
        }
    }

    fn indices(&mut self) -> Result<Vec<Index>, ParseError> {
        let mut out = Vec::new();
        loop {
            let at = self.span();
            let next = self.toks.get(self.pos + 1).map(|t| &t.0);
            if self.peek() == Some(&Tok::Punct('*')) && matches!(next, Some(Tok::Punct(']' | ','))) {
                self.pos += 1;
                out.push(Index::Star);
            } else {
                self.in_index = true;
                let e = self.expr();
                self.in_index = false;
                let e = e?;
                let at = at.start..self.toks.get(self.pos.saturating_sub(1)).map_or(self.end, |t| t.1.end);
                out.push(match e.i {
                    0 => Index::At(e.c),
                    1 => Index::I(e.c),
                    _ => return Err(err("an index is a constant, `*` or `i` plus or minus a constant", at)),
                });
            }
            if self.eat(']') {
                return Ok(out);
            }
            if !self.eat(',') {
                return Err(self.expected("`,` or `]`"));
            }
        }
    }
}

/// Reads one assumption: `EXPR (< | <= | == | != | >= | >) EXPR`.
pub fn parse(text: &str) -> Result<Assumption, ParseError> {
    let toks = lex(text)?;
    let mut p = Parser { toks, pos: 0, end: text.len(), text, in_index: false, depth: 0 };
    if p.toks.is_empty() {
        return Err(err("an empty assumption", 0..0));
    }
    let lhs = p.expr()?;
    let Some((Tok::Cmp(op), op_at)) = p.toks.get(p.pos).cloned() else {
        return Err(p.expected("a comparison (`<`, `<=`, `==`, `!=`, `>=`, `>`)"));
    };
    p.pos += 1;
    let rhs = p.expr()?;
    if p.pos < p.toks.len() {
        return Err(p.expected("the end of the assumption"));
    }
    // lhs − rhs compared with zero, as the engine's conditions are
    let whole = 0..text.len();
    let d = lhs.plus(rhs.scaled(-1, &whole)?, &whole)?;
    if d.terms.is_empty() {
        return Err(err("the assumption names no table or scalar", whole));
    }
    let (sign, shift, rel) = match op {
        ">=" => (1, 0, Rel::Ge0),
        ">" => (1, -1, Rel::Ge0),
        "<=" => (-1, 0, Rel::Ge0),
        "<" => (-1, -1, Rel::Ge0),
        "==" => (1, 0, Rel::Eq0),
        _ => (1, 0, Rel::Ne0),
    };
    let d = d.scaled(sign, &op_at)?;
    let c = d.c.checked_add(shift).ok_or_else(|| err("a constant overflows 64 bits", op_at.clone()))?;
    Ok(Assumption { text: text.trim().to_string(), terms: d.terms, c, rel })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assumptions_parse_into_a_comparison_with_zero() {
        let a = parse("kv_lens[*] >= 1").unwrap();
        assert_eq!((a.terms.len(), a.c, a.rel), (1, -1, Rel::Ge0));
        assert_eq!(a.terms[0].0.idx, Some(vec![Index::Star]));
        let a = parse("cu_q_lens[i] <= cu_q_lens[i + 1]").unwrap();
        assert_eq!(
            a.terms.iter().map(|t| (t.0.idx.clone().unwrap(), t.1)).collect::<Vec<_>>(),
            vec![(vec![Index::I(0)], -1), (vec![Index::I(1)], 1)]
        );
        let a = parse("2 * (x - 3) + y*4 < num_seqs - -1").unwrap();
        // 2x − 6 + 4y − n − 1 < 0  ⇔  −2x − 4y + n + 7 − 1 ≥ 0
        assert_eq!(
            a.terms.iter().map(|t| (t.0.name.as_str(), t.1)).collect::<Vec<_>>(),
            vec![("x", -2), ("y", -4), ("num_seqs", 1)]
        );
        assert_eq!(a.c, 6);
        assert_eq!(parse("page_indices[*, 0] != 7").unwrap().terms[0].0.idx, Some(vec![Index::Star, Index::At(0)]));
        assert_eq!(parse("t[i - 1] == 0").unwrap().terms[0].0.idx, Some(vec![Index::I(-1)]));
        // a ref inside a pytree, by its path (as findings name it)
        let a = parse("metadata_ref.records[1] < metadata_ref.records[3]").unwrap();
        assert_eq!(a.terms[0].0.name, "metadata_ref.records");
        assert!(parse("x. >= 1").is_err() && parse("x.1 >= 1").is_err());
    }

    #[test]
    fn malformed_assumptions_say_what_and_where() {
        let e = |t: &str| parse(t).unwrap_err();
        assert_eq!(e("kv_lens[*] = 1").span, 11..12);
        assert!(e("kv_lens[*] = 1").message.contains("`==`"));
        assert!(e("kv_lens[*]").message.contains("expected a comparison"));
        assert!(e("a * b > 0").message.contains("not linear"));
        assert_eq!(e("kv_lens[j] >= 1").span, 8..9);
        assert!(e("kv_lens[2 * i] >= 1").message.contains("an index is"));
        assert!(e("i >= 1").message.contains("inside `[...]`"));
        assert!(e("1 >= 0").message.contains("names no table"));
        assert!(e("x >= 99999999999999999999").message.contains("64 bits"));
        assert!(e("x >= 1 1").message.contains("end of the assumption"));
        assert!(e("").message.contains("empty"));
        assert!(e("x[1 >= 0").message.contains("`,` or `]`"));
        assert!(e("x >= 1 # c").message.contains("unexpected `#`"));
        assert!(e(&format!("{}x{} > 0", "(".repeat(100_000), ")".repeat(100_000))).message.contains("too deeply"));
        assert!(e(&format!("{}x > 0", "-".repeat(100_000))).message.contains("too deeply"));
        assert!(parse("x[((i + 1))] > -(-(2 * 3))").is_ok());
        assert!(e("kv_lens[*] >= é").message.contains("unexpected `é`"));
    }
}
