//! HLO shapes and layouts (XLA `ParseShape`, `ParseLayout`, `ParseTiles`).

use super::lex::{self, cut, expect, sp};
use crate::ir::shape::{ArrayShape, Dim, Layout, Shape};
use crate::ir::DType;
use crate::parse::error::{PErr, PResult};

/// Tuple nesting XLA's parser takes (it runs out of stack somewhere past 2,000).
const MAX_DEPTH: usize = 2_000;

/// Does a shape start here? (A primitive type name followed by `[`, a `(` tuple, or `b(`.)
pub fn starts_shape(i: &str) -> bool {
    if i.starts_with('(') || i.starts_with("b(") {
        return true;
    }
    let n = lex::ident_len(i);
    n > 0 && DType::from_hlo(&i[..n]).is_some() && i[n..].starts_with('[')
}

pub fn shape(i: &str) -> PResult<'_, Shape> {
    shape_at(i, 0)
}

fn shape_at(i: &str, depth: usize) -> PResult<'_, Shape> {
    crate::parse::with_stack_at(depth, || nested_shape(i, depth))
}

fn nested_shape(i: &str, depth: usize) -> PResult<'_, Shape> {
    if depth > MAX_DEPTH {
        return PErr::cut(i, "a less deeply nested tuple shape");
    }
    if let Some(rest) = i.strip_prefix('(') {
        let mut elements = Vec::new();
        let mut rest = sp(rest)?;
        if let Some(r) = rest.strip_prefix(')') {
            return Ok((r, Shape::Tuple { elements }));
        }
        loop {
            let (r, s) = cut(shape_at(sp(rest)?, depth + 1))?;
            elements.push(s);
            let r = sp(r)?;
            if let Some(r) = r.strip_prefix(',') {
                rest = r;
            } else {
                let (r, _) = expect(r, ")")?;
                return Ok((r, Shape::Tuple { elements }));
            }
        }
    }
    if let Some(rest) = i.strip_prefix("b(") {
        let (r, inner) = cut(shape_at(sp(rest)?, depth + 1))?;
        let (r, _) = expect(r, ")")?;
        return Ok((r, Shape::Buffer { inner: Box::new(inner) }));
    }
    let n = lex::ident_len(i);
    let Some(dtype) = (n > 0).then(|| DType::from_hlo(&i[..n])).flatten() else {
        return PErr::fail(i, "a shape (element type such as `f32[...]`, or a `(` tuple)");
    };
    let rest = &i[n..];
    let Some(rest) = rest.strip_prefix('[') else { return PErr::cut(rest, "`[` after the element type") };
    let (rest, dims) = dims(rest)?;
    let (rest, layout) = match layout_start(rest) {
        Some(r) => {
            let (r, l) = layout(r)?;
            (r, Some(Box::new(l)))
        }
        None => (rest, None),
    };
    Ok((rest, Shape::Array(ArrayShape { dtype, dims, layout })))
}

/// The length of the shape text starting at `i`, found without parsing it, so that a shape seen before is found by
/// its text (`None` when unsure: a comment inside, brackets that do not close; the parser decides then). It ends where
/// the parser ends: at the `)` closing a tuple, the `}` closing a layout, or the `]` of an array not followed by one
/// (the parser's own `layout_start` decides), so a text the parser once read whole is read whole again.
pub fn extent(i: &str) -> Option<usize> {
    let b = i.as_bytes();
    if b.first() == Some(&b'(') {
        return closing(b, 0, b'(', b')');
    }
    if i.starts_with("b(") {
        return closing(b, 1, b'(', b')');
    }
    let n = lex::ident_len(i);
    if n == 0 || b.get(n) != Some(&b'[') {
        return None;
    }
    let end = n + b[n..].iter().position(|&c| c == b']' || c == b'/')?;
    if b[end] != b']' {
        return None;
    }
    match layout_start(&i[end + 1..]) {
        Some(_) => closing(b, end + 1, b'{', b'}'),
        None => Some(end + 1),
    }
}

/// Just past the bracket closing the one at `b[at]`, skipping `/* ... */` comments (XLA prints `/*index=5*/` in
/// long tuples); `None` at a `//` comment or the end of the input.
fn closing(b: &[u8], at: usize, open: u8, close: u8) -> Option<usize> {
    let mut depth = 0usize;
    let mut k = at;
    while k < b.len() {
        let c = b[k];
        if c == open {
            depth += 1;
        } else if c == close {
            depth -= 1;
            if depth == 0 {
                return Some(k + 1);
            }
        } else if c == b'/' {
            if b.get(k + 1) != Some(&b'*') {
                return None;
            }
            k += 2 + b[k + 2..].windows(2).position(|w| w == b"*/")? + 1;
        }
        k += 1;
    }
    None
}

fn dims(mut i: &str) -> PResult<'_, Vec<Dim>> {
    let mut out = Vec::new();
    i = sp(i)?;
    if let Some(r) = i.strip_prefix(']') {
        return Ok((r, out));
    }
    loop {
        i = sp(i)?;
        let (r, d) = if let Some(r) = i.strip_prefix("<=") {
            let (r, n) = cut(lex::int(sp(r)?, "a dimension bound"))?;
            (r, Dim::Bounded(n))
        } else if let Some(r) = i.strip_prefix('?') {
            (r, Dim::Unbounded)
        } else {
            let (r, n) = cut(lex::int(i, "a dimension size, `<=N` or `?`"))?;
            (r, Dim::Static(n))
        };
        out.push(d);
        let r = sp(r)?;
        if let Some(r) = r.strip_prefix(',') {
            i = r;
        } else if let Some(r) = r.strip_prefix(']') {
            return Ok((r, out));
        } else {
            return PErr::cut(r, "`,` or `]` in the dimensions");
        }
    }
}

/// A `{` after an array shape starts a layout only if an int or `:` follows (else it is a computation body).
fn layout_start(i: &str) -> Option<&str> {
    let r = i.strip_prefix('{')?;
    let t = sp(r).ok()?;
    (t.starts_with(|c: char| c.is_ascii_digit() || c == ':' || c == '}')).then_some(r)
}

fn layout(i: &str) -> PResult<'_, Layout> {
    let mut l = Layout::default();
    let mut rest = sp(i)?;
    // minor_to_major
    while rest.starts_with(|c: char| c.is_ascii_digit()) {
        let (r, n) = lex::int(rest, "a dimension number")?;
        l.minor_to_major.push(n);
        rest = sp(r)?;
        if let Some(r) = rest.strip_prefix(',') {
            rest = sp(r)?;
        }
    }
    if let Some(r) = rest.strip_prefix(':') {
        rest = layout_attrs(sp(r)?, &mut l)?;
    }
    let (rest, _) = expect(rest, "}")?;
    Ok((rest, l))
}

/// The letters after `:` — `D(...)`, `T(..)(..)`, `L(n)`, `#(type)`, `*(type)`, `E(n)`, `S(n)`, `SC(..)`, `P(shape)`,
/// `M(n)`. XLA prints them in a fixed order; we accept any order, and skip unknown letters' parentheses so a
/// future layout field does not break the parse.
fn layout_attrs<'a>(mut i: &'a str, l: &mut Layout) -> Result<&'a str, nom::Err<PErr<'a>>> {
    loop {
        i = sp(i)?;
        if i.starts_with('}') {
            return Ok(i);
        }
        let n = i.bytes().take_while(|c| c.is_ascii_alphabetic() || *c == b'#' || *c == b'*').count();
        if n == 0 {
            return Err(PErr::failure(i, "a layout attribute such as `T(8,128)` or `S(1)`"));
        }
        let letter = &i[..n];
        let mut rest = &i[n..];
        if !rest.starts_with('(') {
            return Err(PErr::failure(rest, "`(` after the layout attribute letter"));
        }
        match letter {
            "T" => {
                while let Some(r) = rest.strip_prefix('(') {
                    let (r, tile) = int_list(r, true)?;
                    l.tiles.push(tile);
                    rest = r;
                }
            }
            "SC" => {
                while let Some(r) = rest.strip_prefix('(') {
                    // `(dim:idx,idx)`: flatten to [dim, idx...]
                    let (r, mut v) = int_list(r, false)?;
                    if v.is_empty() {
                        return Err(PErr::failure(r, "a split config"));
                    }
                    l.split_configs.push(v.drain(..).flatten().collect());
                    rest = r;
                }
            }
            "D" => {
                let (r, body) = paren_body(rest)?;
                l.dim_level_types = body.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect();
                rest = r;
            }
            "#" | "*" => {
                let (r, body) = paren_body(rest)?;
                let Some(t) = DType::from_hlo(body.trim()) else {
                    return Err(PErr::failure(&rest[1..], "a primitive type"));
                };
                if letter == "#" {
                    l.index_type = Some(t);
                } else {
                    l.pointer_type = Some(t);
                }
                rest = r;
            }
            "P" => {
                let (r, s) = cut(shape(sp(&rest[1..])?))?;
                let (r, _) = expect(r, ")")?;
                l.physical_shape = Some(Box::new(s));
                rest = r;
            }
            "L" | "E" | "S" | "M" => {
                let (r, _) = expect(rest, "(")?;
                let (r, v) = cut(lex::int(sp(r)?, "an integer"))?;
                let (r, _) = expect(r, ")")?;
                let slot = match letter {
                    "L" => &mut l.tail_padding_alignment,
                    "E" => &mut l.element_bits,
                    "S" => &mut l.memory_space,
                    _ => &mut l.dynamic_shape_metadata_prefix_bytes,
                };
                *slot = Some(v);
                rest = r;
            }
            _ => {
                let (r, _) = paren_body(rest)?;
                rest = r;
            }
        }
        i = rest;
    }
}

/// `(a,b,*)`→ ints (`*` → None when allowed), `(0:1,2)` → ints with `:` as a separator. Input starts after `(`.
fn int_list(mut i: &str, allow_star: bool) -> PResult<'_, Vec<Option<i64>>> {
    let mut out = Vec::new();
    loop {
        i = sp(i)?;
        if let Some(r) = i.strip_prefix(')') {
            return Ok((r, out));
        }
        if let Some(r) = i.strip_prefix(',').or_else(|| i.strip_prefix(':')) {
            i = r;
            continue;
        }
        if allow_star {
            if let Some(r) = i.strip_prefix('*') {
                out.push(None);
                i = r;
                continue;
            }
        }
        let (r, v) = cut(lex::int(i, "an integer or `)`"))?;
        out.push(Some(v));
        i = r;
    }
}

/// `( ... )` with balanced parentheses; returns the inside.
fn paren_body(i: &str) -> PResult<'_, &str> {
    let mut depth = 0usize;
    for (k, c) in i.bytes().enumerate() {
        match c {
            b'(' => depth += 1,
            b')' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Ok((&i[k + 1..], &i[1..k]));
                }
            }
            b'{' | b'}' | b'\n' => break,
            _ => {}
        }
    }
    PErr::cut(i, "a balanced `(...)`")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Shape {
        let (rest, sh) = shape(s).unwrap();
        assert_eq!(rest, "", "rest of {s}");
        sh
    }

    #[test]
    fn arrays_tuples_layouts() {
        let s = p("bf16[2048,2048]{1,0:T(8,128)(2,1)S(1)}");
        let a = s.array().unwrap();
        assert_eq!(a.dtype, DType::BF16);
        let l = a.layout.as_ref().unwrap();
        assert_eq!(l.tiles, vec![vec![Some(8), Some(128)], vec![Some(2), Some(1)]]);
        assert_eq!(l.memory_space, Some(1));
        assert_eq!(p("u32[]{:S(2)}").memory_space(), Some(2));
        let t = p("(f32[8]{0:S(1)}, f32[8]{0}, /*index=2*/u32[])");
        assert_eq!(t.tuple_elements().len(), 3);
        assert_eq!(p("()").tuple_elements().len(), 0);
        assert_eq!(p("s4[16]{0:E(4)}").array().unwrap().layout.as_ref().unwrap().element_bits, Some(4));
        assert_eq!(p("f32[<=4,?,3]").array().unwrap().dims, vec![Dim::Bounded(4), Dim::Unbounded, Dim::Static(3)]);
        p("b(f32[4])");
        p("f32[4,4]{0,1:D(D,C+~)T(2,*)L(4)#(u16)*(u32)E(32)S(3)SC(0:1,2)P(f32[8])M(8)}");
        p("token[]");
        p("f8e4m3fn[128,128]{1,0:T(8,128)(4,1)}");
    }

    #[test]
    fn extent_ends_where_the_parser_ends() {
        for s in [
            "bf16[2048,2048]{1,0:T(8,128)(2,1)S(1)} rest",
            "(f32[8]{0:S(1)}, (s32[], u32[2]), f32[8]{0}) x",
            "f32[4,4]{0,1:D(D,C+~)T(2,*)L(4)#(u16)*(u32)E(32)S(3)SC(0:1,2)P(f32[8]{0})M(8)})",
            "b(f32[4]) y",
            "f32[2] {\n %x = f32[] parameter(0)",
            "f32[2]{ 0 }, z",
            "pred[] ,",
            "f32[<=4,?,3]",
            "(f32[8], /*index=1) }*/f32[2]{0}) z",
        ] {
            let (rest, _) = shape(s).unwrap();
            assert_eq!(extent(s), Some(s.len() - rest.len()), "{s}");
        }
        // line comments and unclosed brackets are left to the parser
        assert_eq!(extent("(f32[8], // x\n f32[2])"), None);
        assert_eq!(extent("(f32[8], /* x)"), None);
        assert_eq!(extent("f32[2"), None);
        assert_eq!(extent("(f32[2]"), None);
    }

    #[test]
    fn body_brace_is_not_a_layout() {
        let (rest, _) = shape("f32[2] {\n %x = f32[] parameter(0)").unwrap();
        assert!(rest.trim_start().starts_with('{'));
    }

    #[test]
    fn errors_point_inside() {
        assert!(shape("f32[2,").is_err());
        assert!(shape("f32[2]{1,0:Q}").is_err());
        assert!(shape("((((").is_err());
    }
}
