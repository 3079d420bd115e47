//! MLIR attribute values as `ir::Value` token trees.
//!
//! Dialects invent attribute syntax freely (`#tpu.dot_dimension_numbers<[1], [0], ...>`, `#tpu.vpad<"32,{0,0},(8,128)">`,
//! `#stablehlo.gather<offset_dims = [2], ...>`), so values are not parsed against a closed grammar: they are tokens
//! (words, strings, names, punctuation) and bracketed groups, `(`, `[`, `{`, `<`, with a span on every node.
//! Conventions:
//! - `#tpu.memory_space<vmem>` → `Seq[Word("#tpu.memory_space"), Group('<', [Word("vmem")])]`; `dense<..>`,
//!   `array<i64: 4, 4>`, `affine_map<..>` likewise;
//! - a type in attribute position (`memref<...>`, `!tpu.dma_semaphore`, `vector<8x128xf32>`) is one `Word` holding
//!   its whole text (parse it with `parse::mlir::types`);
//! - `1 : i64`, `dense<0.0> : vector<8x128xf32>` → `Typed { value, ty }`; `key = value` → `KeyVal`;
//! - `@sym` → `Word("@sym")`; a dictionary is `Group('{', [KeyVal.., Word(unit_attr)..])`.

use super::lex::*;
use super::types::{mlir_type, starts_type};
use crate::ir::span::Span;
use crate::ir::value::{Value, ValueKind};
use crate::ir::Attr;
use crate::parse::error::{PErr, PResult};

/// Where an item stops.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Ctx {
    /// Inside a bracket group: items end at `,` or the closing bracket; newlines are whitespace.
    Group(u8),
    /// In an op's custom syntax (`contracting_dims = [1] x [0], ...`): also ends at `:`, `{`, `%`, `->`, end of line.
    Op,
    /// The rest of the line (alias definitions `#loc1 = loc(...)`).
    Line,
}

/// Computes spans as offsets into the whole file.
#[derive(Clone, Copy)]
pub struct Src<'a>(pub &'a str);

impl<'a> Src<'a> {
    pub fn span(self, from: &str, rest: &str) -> Span {
        Span::between(self.0, from, rest)
    }
}

/// One token or several glued tokens (`#tpu.memory_space<vmem>`, `(8,128)(2,1)`).
pub fn atom<'a>(src: Src<'a>, i: &'a str, depth: u32) -> PResult<'a, Value<'a>> {
    let (mut r, first) = token(src, i, depth)?;
    let glueable = |v: &Value<'_>| !matches!(v.kind, ValueKind::Punct(_));
    if !glueable(&first) || !matches!(peek(r), Some(b'(') | Some(b'[') | Some(b'<') | Some(b'{')) {
        return Ok((r, first));
    }
    let mut parts = vec![first];
    while matches!(peek(r), Some(b'(') | Some(b'[') | Some(b'<') | Some(b'{')) {
        let (rest, v) = token(src, r, depth)?;
        parts.push(v);
        r = rest;
    }
    Ok((r, Value { kind: ValueKind::Seq(parts), span: src.span(i, r) }))
}

pub fn token<'a>(src: Src<'a>, i: &'a str, depth: u32) -> PResult<'a, Value<'a>> {
    if let Some(e) = too_deep(i, depth) {
        return e;
    }
    let word = |rest: &'a str| {
        let n = i.len() - rest.len();
        Ok((rest, Value { kind: ValueKind::Word(split(i, n).1), span: src.span(i, rest) }))
    };
    let Some(c) = peek(i) else { return PErr::fail(i, "attribute value") };
    match c {
        b'"' => {
            let (r, s) = string_lit(i)?;
            Ok((r, Value { kind: ValueKind::Str(s), span: src.span(i, r) }))
        }
        b'(' | b'[' | b'{' | b'<' => group(src, i, depth + 1),
        b'-' if peek2(i) == Some(b'>') => {
            let (r, p) = split(i, 2);
            Ok((r, Value { kind: ValueKind::Punct(p), span: src.span(i, r) }))
        }
        b'-' if peek2(i).is_some_and(|b| b.is_ascii_digit()) => word(number(i)?.0),
        b'0'..=b'9' => word(number(i)?.0),
        b'#' | b'^' => match suffix_id(split(i, 1).0) {
            Ok((r, _)) => word(r),
            Err(_) => punct(src, i),
        },
        b'!' => match mlir_type(i, depth + 1) {
            Ok((r, _)) => word(r),
            Err(nom::Err::Failure(e)) => Err(nom::Err::Failure(e)),
            Err(_) => punct(src, i),
        },
        b'@' => {
            let mut r = split(i, 1).0;
            r = if peek(r) == Some(b'"') { string_lit(r)?.0 } else { suffix_id(r).map(|x| x.0).unwrap_or(r) };
            while let Some(x) = r.strip_prefix("::@") {
                r = if peek(x) == Some(b'"') { string_lit(x)?.0 } else { suffix_id(x).map(|x| x.0).unwrap_or(x) };
            }
            word(r)
        }
        b'%' => match suffix_id(split(i, 1).0) {
            Ok((r, name)) => Ok((r, Value { kind: ValueKind::Name(name), span: src.span(i, r) })),
            Err(_) => punct(src, i),
        },
        _ if is_id_start(c) => {
            let (r, id) = bare_id(i)?;
            if peek(r) == Some(b'<') && matches!(id, "memref" | "tensor" | "vector" | "tuple" | "complex") {
                let (r2, _) = mlir_type(i, depth + 1)?;
                return word(r2);
            }
            word(r)
        }
        _ => punct(src, i),
    }
}

fn punct<'a>(src: Src<'a>, i: &'a str) -> PResult<'a, Value<'a>> {
    let n = if i.starts_with("::") { 2 } else { i.chars().next().map(char::len_utf8).unwrap_or(1) };
    let (r, p) = split(i, n);
    if p.is_empty() {
        return PErr::fail(i, "attribute value");
    }
    Ok((r, Value { kind: ValueKind::Punct(p), span: src.span(i, r) }))
}

fn close_of(open: u8) -> u8 {
    match open {
        b'(' => b')',
        b'[' => b']',
        b'{' => b'}',
        _ => b'>',
    }
}

/// `(...)`, `[...]`, `{...}`, `<...>`: comma-separated items.
pub fn group<'a>(src: Src<'a>, i: &'a str, depth: u32) -> PResult<'a, Value<'a>> {
    if let Some(e) = too_deep(i, depth) {
        return e;
    }
    let Some(open) = peek(i) else { return PErr::fail(i, "`(`, `[`, `{` or `<`") };
    let close = close_of(open);
    let mut r = ws(split(i, 1).0);
    let mut items = Vec::new();
    loop {
        match peek(r) {
            Some(c) if c == close => {
                r = split(r, 1).0;
                break;
            }
            Some(b',') => r = ws(split(r, 1).0),
            None => return PErr::cut(r, closing_name(close)),
            Some(_) => {
                let (rest, v) = item(src, r, Ctx::Group(close), depth)?;
                if rest.len() == r.len() {
                    return PErr::cut(r, closing_name(close));
                }
                items.push(v);
                r = ws(rest);
                match peek(r) {
                    Some(b',') => r = ws(split(r, 1).0),
                    Some(c) if c == close => {}
                    _ => return PErr::cut(r, closing_name_or_comma(close)),
                }
            }
        }
    }
    Ok((r, Value { kind: ValueKind::Group { open: open as char, items }, span: src.span(i, r) }))
}

fn closing_name(c: u8) -> &'static str {
    match c {
        b')' => "`)`",
        b']' => "`]`",
        b'}' => "`}`",
        _ => "`>`",
    }
}

fn closing_name_or_comma(c: u8) -> &'static str {
    match c {
        b')' => "`,` or `)`",
        b']' => "`,` or `]`",
        b'}' => "`,` or `}`",
        _ => "`,` or `>`",
    }
}

/// One item: atoms separated by whitespace, then `key = value` and `value : type` are recognised.
pub fn item<'a>(src: Src<'a>, i: &'a str, ctx: Ctx, depth: u32) -> PResult<'a, Value<'a>> {
    let mut atoms: Vec<(&'a str, Value<'a>)> = Vec::new();
    let mut r = i;
    let mut end = i;
    loop {
        let s = match ctx {
            Ctx::Group(_) => ws(r),
            Ctx::Op | Ctx::Line => hws(r),
        };
        let stop = match (peek(s), ctx) {
            (None, _) => true,
            (Some(b','), c) => c != Ctx::Line,
            (Some(c), Ctx::Group(close)) => c == close,
            (Some(c), Ctx::Op) => {
                matches!(c, b'\n' | b'\r' | b':' | b'}' | b')' | b']' | b'%')
                    // a following `{region}`/`{attrs}`, `(operands)`, or `key=value` ends this value
                    || (c == b'{' || c == b'(') && !atoms.is_empty()
                    || !atoms.is_empty() && starts_key(s)
                    || s.starts_with("->") && starts_type(hws(split(s, 2).0))
                    || s.starts_with("//")
                    || s.starts_with("loc(")
            }
            (Some(c), Ctx::Line) => matches!(c, b'\n' | b'\r') || s.starts_with("//"),
        };
        if stop {
            break;
        }
        let (rest, v) = atom(src, s, depth)?;
        atoms.push((s, v));
        r = rest;
        end = rest;
    }
    if atoms.is_empty() {
        return PErr::fail(i, "attribute value");
    }
    Ok((end, finish(src, i, end, atoms)))
}

/// `name =` / `name=` (not `==`): the start of the next attribute in an op's custom syntax.
fn starts_key(s: &str) -> bool {
    match bare_id(s) {
        Ok((rest, _)) => {
            let a = hws(rest);
            a.starts_with('=') && !a.starts_with("==")
        }
        Err(_) => false,
    }
}

fn finish<'a>(src: Src<'a>, start: &'a str, end: &'a str, mut atoms: Vec<(&'a str, Value<'a>)>) -> Value<'a> {
    let span = src.span(start, end);
    // key = value
    if atoms.len() >= 3 && matches!(atoms[1].1.kind, ValueKind::Punct("=")) {
        let key = match atoms[0].1.kind {
            ValueKind::Word(w) => Some(w),
            ValueKind::Str(s) => Some(s),
            _ => None,
        };
        if let Some(key) = key {
            let rest: Vec<_> = atoms.drain(2..).collect();
            let vstart = rest[0].0;
            let value = finish(src, vstart, end, rest);
            return Value { kind: ValueKind::KeyVal { key, value: Box::new(value) }, span };
        }
    }
    // value : type
    if let Some(k) = atoms.iter().position(|(_, v)| matches!(v.kind, ValueKind::Punct(":"))) {
        if k >= 1 && k + 1 < atoms.len() && starts_type(atoms[k + 1].0) {
            let ty_start = atoms[k + 1].0;
            let n = ty_start.len() - end.len();
            let ty = ty_start.get(..n).unwrap_or("").trim_end();
            atoms.truncate(k);
            let value = finish(src, start, atoms_end(&atoms, end), atoms);
            return Value { kind: ValueKind::Typed { value: Box::new(value), ty }, span };
        }
    }
    if atoms.len() == 1 {
        let (_, v) = atoms.pop().expect("one atom");
        return v;
    }
    Value { kind: ValueKind::Seq(atoms.into_iter().map(|(_, v)| v).collect()), span }
}

fn atoms_end<'a>(atoms: &[(&'a str, Value<'a>)], fallback: &'a str) -> &'a str {
    // The end of the last atom: its start advanced by its span length.
    match atoms.last() {
        Some((s, v)) => split(s, (v.span.len()).min(s.len())).0,
        None => fallback,
    }
}

/// Turns a parsed `{...}` dictionary into attributes (`unit` entries get the value `unit`).
pub fn dict_to_attrs<'a>(dict: Value<'a>, out: &mut Vec<Attr<'a>>) {
    let ValueKind::Group { items, .. } = dict.kind else { return };
    for it in items {
        let span = it.span;
        match it.kind {
            ValueKind::KeyVal { key, value } => out.push(Attr::new(key, *value, span)),
            ValueKind::Word(w) | ValueKind::Str(w) => {
                out.push(Attr::new(w, Value { kind: ValueKind::Word("unit"), span }, span))
            }
            other => out.push(Attr::new("", Value { kind: other, span }, span)),
        }
    }
}

// ---- views over MLIR attribute values ---------------------------------------------------------------------

/// `#tpu.memory_space<vmem>` → `("tpu.memory_space", [vmem])`; a bare `#alias` → `("alias", [])`.
fn dialect_attr<'v, 'a>(v: &'v Value<'a>) -> Option<(&'a str, &'v [Value<'a>])> {
    match &v.kind {
        ValueKind::Word(w) => w.strip_prefix('#').map(|n| (n, &[][..])),
        ValueKind::Seq(parts) => match parts.as_slice() {
            [Value { kind: ValueKind::Word(w), .. }, Value { kind: ValueKind::Group { open: '<', items }, .. }] => {
                Some((w.strip_prefix('#').unwrap_or(w), items.as_slice()))
            }
            _ => None,
        },
        ValueKind::Typed { value, .. } => dialect_attr(value),
        _ => None,
    }
}

/// The single word inside `#dialect.attr<word>` (`#llo.matmul_data_format<e4m3b>` → `e4m3b`).
pub fn dialect_attr_word<'a>(v: &Value<'a>) -> Option<&'a str> {
    match dialect_attr(v)?.1 {
        [one] => one.word(),
        _ => None,
    }
}

/// `array<i64: 4, 4, 8>`, `[1, 2]`, `dense<[1, 2]>` → integers.
pub fn int_array(v: &Value<'_>) -> Option<Vec<i64>> {
    match &v.kind {
        ValueKind::Seq(parts) => match parts.as_slice() {
            [kw, Value { kind: ValueKind::Group { open: '<', items }, .. }] if kw.word() == Some("array") => {
                let mut out = Vec::new();
                for (k, it) in items.iter().enumerate() {
                    let w = if k == 0 {
                        // `i64: 4` → Seq[i64, :, 4]; `i64` alone when the array is empty
                        match &it.kind {
                            ValueKind::Seq(p) => p.last().and_then(Value::word),
                            _ => None,
                        }
                    } else {
                        it.word()
                    };
                    if let Some(w) = w {
                        out.push(crate::ir::value::parse_int(w)?);
                    }
                }
                Some(out)
            }
            [kw, Value { kind: ValueKind::Group { open: '<', items }, .. }] if kw.word() == Some("dense") => {
                items.first().and_then(int_array)
            }
            _ => None,
        },
        ValueKind::Group { open: '[', items } => items.iter().map(Value::as_int).collect(),
        ValueKind::Typed { value, .. } => int_array(value),
        _ => v.as_int().map(|n| vec![n]),
    }
}

/// `@name` → `name` (quotes of `@"name"` removed).
pub fn symbol<'a>(v: &Value<'a>) -> Option<&'a str> {
    let w = v.word()?.strip_prefix('@')?;
    Some(w.strip_prefix('"').and_then(|x| x.strip_suffix('"')).unwrap_or(w))
}

/// A string attribute, MLIR escapes (`\22`) decoded. (`Value::string` decodes HLO's C escapes instead.)
pub fn string<'a>(v: &Value<'a>) -> Option<std::borrow::Cow<'a, str>> {
    match &v.kind {
        ValueKind::Str(s) => Some(unescape_mlir(s)),
        ValueKind::Typed { value, .. } => string(value),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Value<'_> {
        let (rest, v) = group(Src(s), s, 0).unwrap();
        assert_eq!(rest, "", "{s}");
        v
    }

    #[test]
    fn dictionary() {
        let s = r#"{a = 1 : i64, b = [#tpu.dimension_semantics<parallel>], c = array<i64: 4, 4>, d = dense<0.0> : vector<8x128xf32>, e = #llo.matmul_data_format<e4m3b>, f = "str", g, h = memref<2x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>}"#;
        let v = parse(s);
        assert_eq!(v.get("a").and_then(Value::as_int), Some(1));
        let b = v.get("b").unwrap();
        assert_eq!(dialect_attr_word(&b.items()[0]), Some("parallel"));
        assert_eq!(int_array(v.get("c").unwrap()), Some(vec![4, 4]));
        assert!(matches!(v.get("d").unwrap().kind, ValueKind::Typed { ty: "vector<8x128xf32>", .. }));
        assert_eq!(dialect_attr(v.get("e").unwrap()).map(|x| x.0), Some("llo.matmul_data_format"));
        assert_eq!(dialect_attr_word(v.get("e").unwrap()), Some("e4m3b"));
        assert_eq!(string(v.get("f").unwrap()).as_deref(), Some("str"));
        assert_eq!(v.items()[6].word(), Some("g"));
        assert_eq!(v.get("h").unwrap().word(), Some("memref<2x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>"));
        assert_eq!(v.span.text(s), s);
        assert_eq!(v.get("c").unwrap().span.text(s), "array<i64: 4, 4>");
    }

    #[test]
    fn odd_syntaxes() {
        for s in [
            r#"<["x"=1]>"#,
            r#"{stablehlo.mesh = {axes = [{name = "x", size = 1 : i64}]}}"#,
            r#"[#tpu.vpad<"32,{0,0},(8,128)">]"#,
            "{dimension_numbers = #tpu.dot_dimension_numbers<[1], [0], [0], [1], [0, 0, 1, 1], [], []>}",
            "{m = affine_map<(d0, d1) -> (d0 + d1 floordiv 4, 0)>, t = #tpu.tiled<(8,128)(2,1),[2,1]>}",
            "{g = #stablehlo.gather<offset_dims = [2], index_vector_dim = 2>, s = strided<[?, 1], offset: ?>}",
            "{x = @a::@b, y = -1.5e+03 : f32, z = 0x7FC00000 : f32, w = #sdy.sharding<@mesh, [{}, {}]>}",
            "{f = (i32) -> (), l = loc(\"a.py\":1:2), d = dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>}",
        ] {
            parse(s);
        }
        let v = parse("{t = #tpu.tiled<(8,128)(2,1),[2,1]>}");
        let (name, items) = dialect_attr(v.get("t").unwrap()).unwrap();
        assert_eq!((name, items.len()), ("tpu.tiled", 2));
    }

    #[test]
    fn errors_do_not_panic() {
        for s in ["{a = ", "{a = [1, 2}", "<<<", "{a = \"x}", "[,,]", "{a = #}", "(-"] {
            let _ = group(Src(s), s, 0);
        }
        assert!(group(Src("{a = [1, 2}"), "{a = [1, 2}", 0).is_err());
    }
}
