//! MLIR attribute text → `ir::Value` token tree.
//!
//! Every attribute of a decoded op reaches the graph as MLIR text (printed from its bytecode encoding, or kept as
//! written when its dialect has no bytecode encoding, e.g. `#tpu.memory_space<vmem>`), and that text goes through
//! ONE function, [`parse_textual_attr`]: the MLIR text parser's attribute grammar (`parse::mlir::attr`), so that an
//! attribute looks the same whether it came from a `.mlir` dump or from a kernel body.
//!
//! Text that grammar does not take whole falls back to a small tokenizer into the shared token tree: words
//! (identifiers, numbers, `i32`, `512x256xbf16`, `#tpu.memory_space`, `!tpu.dma_semaphore`), strings (still
//! escaped), `@symbol` as `ValueKind::Name` (without the `@`), punctuation (`:`, `->`, `?`, ...), bracketed groups
//! for `[...]`, `{...}`, `(...)` and `<...>` with comma-separated items, `key = value` inside groups as `KeyVal`,
//! and runs of tokens without commas as `Seq`. It never fails: text it cannot balance becomes one `Word`.
//!
//! Spans are empty: a decoded kernel has no source text of its own.

use crate::ir::{Span, Value, ValueKind};

pub fn parse_textual_attr(text: &str) -> Value<'_> {
    // The MLIR text parser's attribute grammar first, so a decoded attribute looks exactly like the same attribute
    // in a `.mlir` dump; this file's tokenizer is the fallback for text it does not take whole.
    use crate::parse::mlir::attr::{item, Ctx, Src};
    if let Ok((rest, mut value)) = item(Src(text), text, Ctx::Line, 1) {
        if rest.trim().is_empty() {
            clear_spans(&mut value);
            return value;
        }
    }
    let mut t = Tok { s: text, i: 0 };
    match t.items(None) {
        Some(mut items) if t.i >= text.len() && items.len() == 1 => items.pop().unwrap_or_else(|| word(text)),
        _ => word(text),
    }
}

/// Spans from the attribute's own text would not index into any file: a decoded kernel has no source text.
fn clear_spans(v: &mut Value<'_>) {
    v.span = Span::default();
    match &mut v.kind {
        ValueKind::Group { items, .. } | ValueKind::Seq(items) => items.iter_mut().for_each(clear_spans),
        ValueKind::KeyVal { value, .. } | ValueKind::Typed { value, .. } => clear_spans(value),
        _ => {}
    }
}

/// A type printed from bytecode, parsed with the MLIR type grammar (kept as text when it does not parse whole).
pub fn parse_textual_type(text: &str) -> crate::ir::Type<'_> {
    match crate::parse::mlir::types::mlir_type(text, 0) {
        Ok((rest, t)) if rest.trim().is_empty() => crate::ir::Type::Mlir(std::sync::Arc::new(t)),
        _ => crate::ir::Type::Text(text),
    }
}

fn word(s: &str) -> Value<'_> {
    v(ValueKind::Word(s))
}

fn v(kind: ValueKind<'_>) -> Value<'_> {
    Value { kind, span: Span::default() }
}

struct Tok<'a> {
    s: &'a str,
    i: usize,
}

fn is_word_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'$' | b'-' | b'#' | b'!' | b'^')
}

impl<'a> Tok<'a> {
    fn peek(&self) -> Option<u8> {
        self.s.as_bytes().get(self.i).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(c) if c.is_ascii_whitespace()) {
            self.i += 1;
        }
    }

    /// Comma-separated items up to `close` (or the end of input when `close` is None).
    fn items(&mut self, close: Option<u8>) -> Option<Vec<Value<'a>>> {
        let mut items = Vec::new();
        loop {
            self.skip_ws();
            match self.peek() {
                None if close.is_none() => return Some(items),
                None => return None,
                Some(c) if Some(c) == close => {
                    self.i += 1;
                    return Some(items);
                }
                Some(b',') => {
                    self.i += 1;
                    continue;
                }
                _ => {}
            }
            let item = self.item(close)?;
            items.push(item);
        }
    }

    /// One item: tokens up to a comma or the closing bracket; `key = value` becomes `KeyVal`.
    fn item(&mut self, close: Option<u8>) -> Option<Value<'a>> {
        let mut toks: Vec<Value<'a>> = Vec::new();
        loop {
            self.skip_ws();
            match self.peek() {
                None => break,
                Some(b',') => break,
                Some(c) if Some(c) == close => break,
                _ => {}
            }
            // `key = value`: a single word followed by `=` (not `==`).
            if self.peek() == Some(b'=') && toks.len() == 1 {
                if let ValueKind::Word(key) | ValueKind::Str(key) = toks[0].kind {
                    self.i += 1;
                    let value = self.item(close)?;
                    return Some(v(ValueKind::KeyVal { key, value: Box::new(value) }));
                }
            }
            toks.push(self.token()?);
        }
        match toks.len() {
            0 => Some(v(ValueKind::Seq(Vec::new()))),
            1 => toks.pop(),
            _ => Some(v(ValueKind::Seq(toks))),
        }
    }

    fn token(&mut self) -> Option<Value<'a>> {
        let b = self.s.as_bytes();
        let start = self.i;
        let c = self.peek()?;
        match c {
            b'"' => {
                let mut j = self.i + 1;
                while j < b.len() && b[j] != b'"' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                if j >= b.len() {
                    return None;
                }
                self.i = j + 1;
                Some(v(ValueKind::Str(&self.s[start + 1..j])))
            }
            b'[' | b'{' | b'(' | b'<' => {
                let close = match c {
                    b'[' => b']',
                    b'{' => b'}',
                    b'(' => b')',
                    _ => b'>',
                };
                self.i += 1;
                let items = self.items(Some(close))?;
                Some(v(ValueKind::Group { open: c as char, items }))
            }
            b'@' => {
                self.i += 1;
                if self.peek() == Some(b'"') {
                    let s = self.token()?;
                    let name = match s.kind {
                        ValueKind::Str(n) => n,
                        _ => return None,
                    };
                    return Some(v(ValueKind::Name(name)));
                }
                let from = self.i;
                while matches!(self.peek(), Some(c) if is_word_char(c) && c != b'-') {
                    self.i += 1;
                }
                Some(v(ValueKind::Name(&self.s[from..self.i])))
            }
            b':' if b.get(self.i + 1) == Some(&b':') => {
                self.i += 2;
                Some(v(ValueKind::Punct(&self.s[start..self.i])))
            }
            b'-' if b.get(self.i + 1) == Some(&b'>') => {
                self.i += 2;
                Some(v(ValueKind::Punct(&self.s[start..self.i])))
            }
            _ if is_word_char(c) => {
                while let Some(c) = self.peek() {
                    // `-` belongs to a word only as a sign or an exponent sign, never as `->`.
                    if c == b'-' && b.get(self.i + 1) == Some(&b'>') {
                        break;
                    }
                    if is_word_char(c) || (c == b'+' && matches!(b.get(self.i.wrapping_sub(1)), Some(b'e' | b'E'))) {
                        self.i += 1;
                    } else {
                        break;
                    }
                }
                Some(word(&self.s[start..self.i]))
            }
            b']' | b'}' | b')' | b'>' => None,
            _ => {
                // One punctuation character (`:`, `?`, `*`, `=`, `+`, ...), whole UTF-8 character.
                let len = self.s[start..].chars().next().map(char::len_utf8).unwrap_or(1);
                self.i += len;
                Some(v(ValueKind::Punct(&self.s[start..self.i])))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(v: &Value<'_>) -> String {
        match &v.kind {
            ValueKind::Word(w) => w.to_string(),
            ValueKind::Str(s) => format!("{s:?}"),
            ValueKind::Name(n) => format!("@{n}"),
            ValueKind::Punct(p) => format!("'{p}'"),
            ValueKind::Raw(r) => format!("raw({r})"),
            ValueKind::Typed { value, ty } => format!("typed({} : {ty})", show(value)),
            ValueKind::Group { open, items } => {
                format!("{open}{}", items.iter().map(show).collect::<Vec<_>>().join(" | "))
            }
            ValueKind::KeyVal { key, value } => format!("{key}={}", show(value)),
            ValueKind::Seq(items) => format!("seq({})", items.iter().map(show).collect::<Vec<_>>().join(" ")),
        }
    }

    #[test]
    fn tokenizes_mlir_attributes() {
        // Through the MLIR text parser's attribute grammar: the same tree a `.mlir` dump gives.
        for (text, expected) in [
            ("0 : i32", "typed(0 : i32)"),
            ("#tpu.memory_space<vmem>", "seq(#tpu.memory_space <vmem)"),
            ("\"matmul_kernel\"", "\"matmul_kernel\""),
            ("-1.500000e+00 : f32", "typed(-1.500000e+00 : f32)"),
        ] {
            assert_eq!(show(&parse_textual_attr(text)), expected, "{text}");
        }
        let v = parse_textual_attr("array<i64: 4, 4, 8>");
        assert_eq!(crate::parse::mlir::attr::int_array(&v), Some(vec![4, 4, 8]));
        let w = parse_textual_attr("[{transform_indices = @transform_0, window_bounds = array<i64: 512, 256>}]");
        let dict = &w.items()[0];
        assert_eq!(crate::parse::mlir::attr::int_array(dict.get("window_bounds").unwrap()), Some(vec![512, 256]));
        assert!(parse_textual_attr("x").span.is_empty(), "decoded attributes have no source span");
    }

    #[test]
    fn text_the_grammar_does_not_take_is_kept() {
        assert_eq!(show(&parse_textual_attr("foo<bar")), "foo<bar");
        assert!(!show(&parse_textual_attr("a]")).is_empty());
    }
}
