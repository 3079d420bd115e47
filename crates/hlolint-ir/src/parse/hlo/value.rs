//! Attribute values → `ir::Value` token trees (see `ir::value` for why values are not typed at parse time).
//!
//! A value is a run of glued items (`b01f_01io->b01f`, `[2,2]<=[4]T(1,0)`); inside brackets, items are separated
//! by commas or spaces, and `word=` starts a key/value pair. JSON (backend_config), shardings, windows, metadata,
//! literals and sdy attributes all fit this shape.

use super::lex::{self, sp};
use crate::ir::{Span, Value, ValueKind};
use crate::parse::error::{PErr, PResult};
use smallvec::SmallVec;

/// Nesting limit: deeper input is rejected rather than risking the stack (the parsers get fuzzed).
const MAX_DEPTH: usize = 2_000;

/// What the value grammar builds: the tree (`Value`), or nothing (`()`: the syntax check of a value kept as text to
/// be built on first read). One grammar for both, so the check accepts and rejects exactly what building does and
/// ends where it ends; `Vec<()>` and `Box<()>` never allocate.
pub trait Build<'a>: Sized {
    /// A word, string, `%name` or punctuation.
    fn leaf(kind: ValueKind<'a>, span: Span) -> Self;
    fn group(open: char, items: Vec<Self>, span: Span) -> Self;
    fn key_val(key: &'a str, value: Self, span: Span) -> Self;
    fn seq(items: Vec<Self>, span: Span) -> Self;
    /// An attribute value continued after a space (`literal=f32[2]{0} {1, 2}`, `mesh['a'=2] {'b'}`).
    fn continued(self, more: Self, literal: bool) -> Self;
}

impl<'a> Build<'a> for Value<'a> {
    fn leaf(kind: ValueKind<'a>, span: Span) -> Self {
        Value { kind, span }
    }

    fn group(open: char, items: Vec<Self>, span: Span) -> Self {
        Value { kind: ValueKind::Group { open, items }, span }
    }

    fn key_val(key: &'a str, value: Self, span: Span) -> Self {
        Value { kind: ValueKind::KeyVal { key, value: Box::new(value) }, span }
    }

    fn seq(items: Vec<Self>, span: Span) -> Self {
        Value { kind: ValueKind::Seq(items), span }
    }

    fn continued(self, more: Self, literal: bool) -> Self {
        let span = self.span.to(more.span);
        match self.kind {
            ValueKind::Seq(mut items) if !literal || items.len() > 1 => {
                items.push(more);
                Value { kind: ValueKind::Seq(items), span }
            }
            kind => Value { kind: ValueKind::Seq(vec![Value { kind, span: self.span }, more]), span },
        }
    }
}

impl<'a> Build<'a> for () {
    fn leaf(_: ValueKind<'a>, _: Span) {}
    fn group(_: char, _: Vec<()>, _: Span) {}
    fn key_val(_: &'a str, _: (), _: Span) {}
    fn seq(_: Vec<()>, _: Span) {}
    fn continued(self, _: (), _: bool) {}
}

/// A group's or sequence's items while they are parsed: up to four on the stack, then one vector of exactly their
/// number (a vector grown from empty holds room for four: 160 bytes for `parameter(0)`'s one item).
type Items<T> = SmallVec<[T; 4]>;

pub struct ValueParser<'a> {
    /// The text spans are measured in, and where it starts in the source (not 0 when a deferred value is built
    /// from its own text).
    pub base: &'a str,
    pub shift: u32,
}

impl<'a> ValueParser<'a> {
    /// A `{...}` JSON object kept as raw text (XLA's `LexJsonDict`): braces balanced, strings skipped.
    pub fn raw_braces(&self, i: &'a str) -> PResult<'a, Value<'a>> {
        let b = i.as_bytes();
        if b.first() != Some(&b'{') {
            return PErr::fail(i, "`{`");
        }
        let mut depth = 0usize;
        let mut k = 0;
        // from one quote or brace to the next
        while let Some(j) = b.get(k..).and_then(|r| memchr::memchr3(b'"', b'{', b'}', r)) {
            k += j;
            match b[k] {
                b'"' => {
                    k += 1;
                    loop {
                        match b.get(k..).and_then(|r| memchr::memchr2(b'"', b'\\', r)) {
                            Some(j) if b[k + j] == b'"' => {
                                k += j;
                                break;
                            }
                            Some(j) => k += j + 2,
                            None => {
                                k = b.len();
                                break;
                            }
                        }
                    }
                }
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        let (text, rest) = i.split_at(k + 1);
                        return Ok((rest, Value { kind: ValueKind::Raw(text), span: self.span(i, rest) }));
                    }
                }
                _ => {}
            }
            k += 1;
        }
        // the object runs to the end of the input: say so there, naming where it opened
        PErr::cut(&i[i.len()..], format!("`}}` closing the JSON object opened as `{}`", opening(i)))
    }

    pub fn span(&self, from: &'a str, rest: &'a str) -> Span {
        let s = Span::between(self.base, from, rest);
        Span { start: s.start + self.shift, end: s.end + self.shift }
    }

    /// One value: glued items until whitespace, a separator or a closing bracket.
    pub fn value(&self, i: &'a str) -> PResult<'a, Value<'a>> {
        self.value_at(i, 0)
    }

    /// One value, built as `T` (a tree, or nothing for a syntax check).
    pub fn build<T: Build<'a>>(&self, i: &'a str) -> PResult<'a, T> {
        self.value_at(i, 0)
    }

    fn value_at<T: Build<'a>>(&self, i: &'a str, depth: usize) -> PResult<'a, T> {
        let start = i;
        let (mut rest, first) = self.item(i, depth)?;
        if !glued(rest) {
            return Ok((rest, first));
        }
        let mut seq: Items<T> = smallvec::smallvec![first];
        while glued(rest) {
            let (r, v) = self.item(rest, depth)?;
            seq.push(v);
            rest = r;
        }
        Ok((rest, T::seq(seq.into_vec(), self.span(start, rest))))
    }

    fn item<T: Build<'a>>(&self, i: &'a str, depth: usize) -> PResult<'a, T> {
        crate::parse::with_stack_at(depth, || self.bracketed_or_atom(i, depth))
    }

    fn bracketed_or_atom<T: Build<'a>>(&self, i: &'a str, depth: usize) -> PResult<'a, T> {
        if depth > MAX_DEPTH {
            return PErr::cut(i, "less deeply nested brackets");
        }
        let b = i.as_bytes();
        let Some(&c) = b.first() else { return PErr::fail(i, "a value") };
        match c {
            b'"' | b'\'' => {
                let (rest, s) = lex::string(i)?;
                Ok((rest, T::leaf(ValueKind::Str(s), self.span(i, rest))))
            }
            b'%' => {
                let (rest, n) = lex::name(i, "a name after `%`")?;
                Ok((rest, T::leaf(ValueKind::Name(n), self.span(i, rest))))
            }
            b'{' | b'[' | b'(' => self.group(i, c as char, depth),
            _ if lex::is_ident_start(c) => {
                let n = lex::ident_len(i);
                let (word, rest) = i.split_at(n);
                // `key=value`, but not `==` and not `=` followed by a separator (`k=,`).
                if let Some(after) = rest.strip_prefix('=') {
                    if !after.starts_with('=') && after.starts_with(|c: char| !c.is_whitespace() && !",)}]".contains(c))
                    {
                        let (rest, v) = self.value_at(after, depth + 1)?;
                        let span = self.span(i, rest);
                        return Ok((rest, T::key_val(word, v, span)));
                    }
                }
                Ok((rest, T::leaf(ValueKind::Word(word), self.span(i, rest))))
            }
            _ if c.is_ascii_digit()
                || ((c == b'-' || c == b'.') && !i.starts_with("...") && lex::number_len(i) > 1) =>
            {
                let n = lex::number_len(i).max(1);
                let rest = &i[n..];
                Ok((rest, T::leaf(ValueKind::Word(&i[..n]), self.span(i, rest))))
            }
            b'}' | b']' | b')' | b',' => PErr::fail(i, "a value"),
            _ => {
                let n = punct_len(i);
                if n == 0 {
                    return PErr::cut(i, "a value");
                }
                let rest = &i[n..];
                Ok((rest, T::leaf(ValueKind::Punct(&i[..n]), self.span(i, rest))))
            }
        }
    }

    fn group<T: Build<'a>>(&self, i: &'a str, open: char, depth: usize) -> PResult<'a, T> {
        let close = match open {
            '{' => '}',
            '[' => ']',
            _ => ')',
        };
        let mut rest = &i[1..];
        let mut items: Items<T> = SmallVec::new();
        loop {
            rest = sp(rest)?;
            match rest.chars().next() {
                None => return PErr::cut(rest, closing(close)),
                Some(c) if c == close => {
                    rest = &rest[1..];
                    break;
                }
                Some(',') => rest = &rest[1..],
                Some('}' | ']' | ')') => return PErr::cut(rest, closing(close)),
                Some(_) => {
                    let (r, v) = self.value_at(rest, depth + 1)?;
                    items.push(v);
                    rest = r;
                }
            }
        }
        Ok((rest, T::group(open, items.into_vec(), self.span(i, rest))))
    }
}

fn closing(c: char) -> &'static str {
    match c {
        '}' => "`}`",
        ']' => "`]`",
        _ => "`)`",
    }
}

/// Does another item follow with no space or separator in between?
fn glued(rest: &str) -> bool {
    match rest.as_bytes().first() {
        None => false,
        Some(c) => !c.is_ascii_whitespace() && !b",)}]".contains(c) && !rest.starts_with("/*"),
    }
}

/// Punctuation tokens: multi-character ones first.
fn punct_len(i: &str) -> usize {
    for p in ["...", "->", "<=", "=="] {
        if i.starts_with(p) {
            return p.len();
        }
    }
    match i.chars().next() {
        Some(c) if !c.is_whitespace() && !c.is_control() => c.len_utf8(),
        _ => 0,
    }
}

/// The first characters of an unclosed string or object, for an error at the end of the input (at most 24 characters,
/// one line).
pub fn opening(i: &str) -> String {
    let line = i.lines().next().unwrap_or("");
    let mut s: String = line.chars().take(24).collect();
    if s.len() < line.len() {
        s.push('…');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Value<'_> {
        let p = ValueParser { base: s, shift: 0 };
        let (rest, v) = p.value(s).unwrap();
        assert_eq!(rest, "", "unparsed rest");
        v
    }

    #[test]
    fn lists_dicts_and_sequences() {
        assert_eq!(parse("{1,0,2}").as_int_list(), Some(vec![1, 0, 2]));
        let md = parse(r#"{op_type="dot" op_name="jit(f)/dot" source_line=12}"#);
        assert_eq!(md.get("source_line").and_then(|v| v.as_int()), Some(12));
        assert_eq!(md.get("op_name").and_then(|v| v.string()).as_deref(), Some("jit(f)/dot"));
        assert!(matches!(parse("b01f_01io->b01f").kind, ValueKind::Seq(ref s) if s.len() == 3));
        assert!(matches!(parse("[2,2]<=[4]T(1,0)").kind, ValueKind::Seq(ref s) if s.len() == 5));
        let w = parse("{size=3x3 stride=2x2 pad=0_1x-1_1}");
        assert_eq!(w.get("pad").and_then(|v| v.word()), Some("0_1x-1_1"));
    }

    #[test]
    fn json_and_sdy_blobs_parse() {
        parse(r#"{"flag_configs":[],"x":{"a":-1.5e-3,"b":null,"c":"q\"uote"}}"#);
        let fa = parse(r#"{xla.sdy.meshes={mesh = #sdy.mesh<["x"=1]>}, k="v"}"#);
        assert!(fa.get("xla.sdy.meshes").is_some());
        assert_eq!(fa.get("k").and_then(|v| v.string()).as_deref(), Some("v"));
    }

    #[test]
    fn literals() {
        parse("{ { 1, 2 }, { 3, 4 } }");
        parse("{(1, 0), (2, 3)}");
        parse("-nan(0x7fc00000)");
        parse("{...}");
        parse("( 1, {2, 3} )");
    }

    #[test]
    fn raw_json_skips_strings_and_escapes() {
        let raw = |s| ValueParser { base: s, shift: 0 }.raw_braces(s).map(|(rest, v)| (rest, v.span.len()));
        assert_eq!(raw(r#"{"a":"}{\"\\","b":{}} x"#).unwrap(), (" x", 21));
        assert!(raw(r#"{"a":"} x"#).is_err());
        assert!(raw(r#"{"a":"\"#).is_err());
        assert!(raw(r#"{"a":{}"#).is_err());
    }

    #[test]
    fn unbalanced_is_an_error() {
        let s = "{1, 2";
        assert!(ValueParser { base: s, shift: 0 }.value(s).is_err());
        let s = "{1, 2)";
        assert!(ValueParser { base: s, shift: 0 }.value(s).is_err());
    }
}
