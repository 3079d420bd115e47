//! MLIR types: `memref<2x512x512xf8E4M3FN, #tpu.memory_space<vmem>>`, `vector<8x128xf32>`, `tensor<?x4xf32>`,
//! scalars, `!dialect.type<...>`, function types. Unknown builtins are kept as text (`MlirType::Other`).

use super::lex::*;
use crate::ir::mlir_type::{MlirType, ShapedKind, ShapedType};
use crate::ir::shape::Dim;
use crate::ir::DType;
use crate::parse::error::{PErr, PResult};

/// Does the input start like a type (used to tell `: type` from other uses of `:`)?
pub fn starts_type(i: &str) -> bool {
    match peek(i) {
        Some(b'!') | Some(b'(') => true,
        Some(b) if is_id_start(b) => {
            let id = bare_id(i).map(|(_, id)| id).unwrap_or("");
            is_shaped_kw(id)
                || matches!(id, "tuple" | "complex" | "none")
                || scalar(id).is_some()
                || id.starts_with('f') && id.len() > 1
                || id == "index"
        }
        _ => false,
    }
}

/// The common scalar spellings without `DType::from_mlir`'s allocation.
fn scalar(id: &str) -> Option<DType> {
    Some(match id {
        "f32" => DType::F32,
        "bf16" => DType::BF16,
        "i32" => DType::S32,
        "index" => DType::Index,
        "i1" => DType::Pred,
        "f16" => DType::F16,
        "i8" => DType::S8,
        "i64" => DType::S64,
        "f64" => DType::F64,
        "i16" => DType::S16,
        "f8E4M3FN" => DType::F8E4M3FN,
        "f8E5M2" => DType::F8E5M2,
        _ => return DType::from_mlir(id),
    })
}

fn is_shaped_kw(id: &str) -> bool {
    matches!(id, "memref" | "tensor" | "vector")
}

pub fn mlir_type(i: &str, depth: u32) -> PResult<'_, MlirType<'_>> {
    if let Some(e) = too_deep(i, depth) {
        return e;
    }
    match peek(i) {
        Some(b'!') => {
            let (rest, name) = suffix_id(split(i, 1).0).map_err(|_| nom::Err::Error(PErr::new(i, "type")))?;
            if peek(rest) == Some(b'<') {
                let (rest2, body) = balanced(rest)?;
                let params = body.get(1..body.len().saturating_sub(1));
                return Ok((rest2, MlirType::Dialect { name, params }));
            }
            Ok((rest, MlirType::Dialect { name, params: None }))
        }
        Some(b'(') => {
            let (rest, inputs) = paren_types(i, depth + 1)?;
            let r = hws(rest);
            let Some(r) = r.strip_prefix("->") else {
                return PErr::fail(i, "function type");
            };
            let r = hws(r);
            let (rest, results) = if peek(r) == Some(b'(') {
                paren_types(r, depth + 1)?
            } else {
                let (rest, t) = mlir_type(r, depth + 1)?;
                (rest, vec![t])
            };
            Ok((rest, MlirType::Function { inputs, results }))
        }
        Some(b) if is_id_start(b) => {
            let (rest, id) = bare_id(i)?;
            if peek(rest) == Some(b'<') {
                if is_shaped_kw(id) {
                    return shaped(rest, id, depth);
                }
                if id == "tuple" {
                    let (rest2, v) = list_until(split(rest, 1).0, b'>', depth + 1)?;
                    return Ok((rest2, MlirType::Tuple(v)));
                }
                let (rest2, _) = balanced(rest)?;
                let n = i.len() - rest2.len();
                return Ok((rest2, MlirType::Other(split(i, n).1)));
            }
            if id == "none" {
                return Ok((rest, MlirType::None));
            }
            match scalar(id) {
                Some(dtype) => Ok((rest, MlirType::Scalar { dtype, text: id })),
                None => Ok((rest, MlirType::Other(id))),
            }
        }
        _ => PErr::fail(i, "type"),
    }
}

/// `(t1, t2)` → the types (empty for `()`); attribute dicts after a type (function results) are skipped.
pub fn paren_types(i: &str, depth: u32) -> PResult<'_, Vec<MlirType<'_>>> {
    let Some(r) = i.strip_prefix('(') else { return PErr::fail(i, "`(`") };
    list_until(r, b')', depth)
}

/// Types separated by commas up to `close` (consumed). Allows newlines and a `{...}` dict after each type.
fn list_until(i: &str, close: u8, depth: u32) -> PResult<'_, Vec<MlirType<'_>>> {
    let mut out = Vec::new();
    let mut r = ws(i);
    if peek(r) == Some(close) {
        return Ok((split(r, 1).0, out));
    }
    loop {
        let (rest, t) = mlir_type(r, depth)?;
        out.push(t);
        r = ws(rest);
        if peek(r) == Some(b'{') {
            r = ws(balanced(r)?.0);
        }
        match peek(r) {
            Some(b',') => r = ws(split(r, 1).0),
            Some(c) if c == close => return Ok((split(r, 1).0, out)),
            _ => return PErr::cut(r, if close == b')' { "`,` or `)`" } else { "`,` or `>`" }),
        }
    }
}

fn shaped<'a>(after_kw: &'a str, kw: &'a str, depth: u32) -> PResult<'a, MlirType<'a>> {
    let kind = match kw {
        "memref" => ShapedKind::Memref,
        "vector" => ShapedKind::Vector,
        _ => ShapedKind::Tensor,
    };
    let (r, (dims, mut scalable)) = shape_dims(split(after_kw, 1).0)?; // after `<`
    if !scalable.contains(&true) {
        scalable.clear();
    }
    let (r, elem) = mlir_type(r, depth + 1).map_err(cut_err)?;
    let (r, extra) = shaped_params(r)?;
    let (mut layout, mut memory_space, mut encoding) = (None, None, None);
    match kind {
        ShapedKind::Memref => match extra.as_slice() {
            [] => {}
            [one] => {
                if looks_like_space(one) {
                    memory_space = Some(*one)
                } else {
                    layout = Some(*one)
                }
            }
            [l, m, ..] => {
                layout = Some(*l);
                memory_space = Some(*m);
            }
        },
        _ => encoding = extra.first().copied(),
    }
    let shaped = ShapedType { kind, dims, scalable, elem: Box::new(elem), layout, memory_space, encoding };
    Ok((r, MlirType::Shaped(Box::new(shaped))))
}

/// The dimensions before the element type (`4x?x[8]x`; `*x` unranked: `None`) and which are scalable (`[8]`).
fn shape_dims(mut r: &str) -> PResult<'_, (Option<Vec<Dim>>, Vec<bool>)> {
    let mut dims = Some(Vec::with_capacity(4));
    let mut scalable = Vec::new();
    if let Some(x) = r.strip_prefix("*x") {
        return Ok((x, (None, scalable)));
    }
    loop {
        let (is_scal, body) = match r.strip_prefix('[') {
            Some(b) => (true, b),
            None => (false, r),
        };
        let d;
        let mut rr;
        if let Some(q) = body.strip_prefix('?') {
            d = Dim::Unbounded;
            rr = q;
        } else if peek(body).is_some_and(|b| b.is_ascii_digit()) {
            let n = body.bytes().take_while(u8::is_ascii_digit).count();
            let (q, digits) = split(body, n);
            let Ok(v) = digits.parse::<i64>() else { return PErr::cut(body, "a dimension size") };
            d = Dim::Static(v);
            rr = q;
        } else {
            return Ok((r, (dims, scalable)));
        }
        if is_scal {
            let Some(q) = rr.strip_prefix(']') else { return PErr::cut(rr, "`]`") };
            rr = q;
        }
        let Some(q) = rr.strip_prefix('x') else { return PErr::cut(rr, "`x` after a dimension") };
        if let Some(v) = dims.as_mut() {
            v.push(d);
        }
        scalable.push(is_scal);
        r = q;
    }
}

/// The parameters after the element type up to the closing `>` (a memref's layout and memory space, a tensor's
/// encoding), as text.
fn shaped_params(mut r: &str) -> PResult<'_, Vec<&str>> {
    let mut extra: Vec<&str> = Vec::new();
    loop {
        r = ws(r);
        match peek(r) {
            Some(b'>') => return Ok((split(r, 1).0, extra)),
            Some(b',') => {
                let (rest, text) = attr_text(ws(split(r, 1).0))?;
                extra.push(text);
                r = rest;
            }
            _ => return PErr::cut(r, "`,` or `>` in a shaped type"),
        }
    }
}

fn cut_err(e: nom::Err<PErr<'_>>) -> nom::Err<PErr<'_>> {
    match e {
        nom::Err::Error(e) => nom::Err::Failure(e),
        e => e,
    }
}

fn looks_like_space(a: &str) -> bool {
    a.contains("memory_space") || a.contains("address_space") || a.bytes().next().is_some_and(|b| b.is_ascii_digit())
}

/// The text of one attribute inside a type's `<...>`: up to a top-level `,` or `>`.
pub fn attr_text(i: &str) -> PResult<'_, &str> {
    let mut r = i;
    loop {
        match peek(r) {
            None => return PErr::cut(r, "`>`"),
            Some(b',') | Some(b'>') => break,
            Some(b'(') | Some(b'[') | Some(b'{') | Some(b'<') => r = balanced(r)?.0,
            Some(b'"') => r = string_lit(r)?.0,
            Some(b'-') if peek2(r) == Some(b'>') => r = split(r, 2).0,
            Some(_) => {
                let n = r.chars().next().map(char::len_utf8).unwrap_or(1);
                r = split(r, n).0;
            }
        }
    }
    let n = i.len() - r.len();
    Ok((r, split(i, n).1.trim_end()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> MlirType<'_> {
        let (rest, t) = mlir_type(s, 0).unwrap();
        assert_eq!(rest, "", "{s}");
        t
    }

    #[test]
    fn memref_with_space() {
        let ty = t("memref<2x512x512xf8E4M3FN, #tpu.memory_space<vmem>>");
        let s = ty.shaped().unwrap();
        assert_eq!(s.static_dims(), Some(vec![2, 512, 512]));
        assert_eq!(ty.dtype(), Some(DType::F8E4M3FN));
        assert_eq!(ty.memory_space(), Some("vmem"));
        assert_eq!(s.layout, None);
        assert_eq!(ty.to_string(), "memref<2x512x512xf8E4M3FN, #tpu.memory_space<vmem>>");
    }

    #[test]
    fn memref_with_layout_and_space() {
        let ty = t("memref<512x256xbf16, #tpu.tiled<(8,128)(2,1),[2,1]>, #tpu.memory_space<vmem>>");
        let s = ty.shaped().unwrap();
        assert_eq!(s.layout, Some("#tpu.tiled<(8,128)(2,1),[2,1]>"));
        assert_eq!(s.space(), Some("vmem"));
    }

    #[test]
    fn semaphores() {
        let ty = t("memref<2x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>");
        assert!(ty.is_semaphore() && ty.is_dma_semaphore());
        assert_eq!(ty.memory_space(), Some("semaphore_mem"));
        let ty = t("!tpu.semaphore");
        assert!(ty.is_semaphore() && !ty.is_dma_semaphore());
        let ty = t("memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>");
        assert_eq!(ty.shaped().unwrap().rank(), Some(0));
    }

    #[test]
    fn others() {
        assert_eq!(t("vector<8x128x2xbf16>").shaped().unwrap().static_dims(), Some(vec![8, 128, 2]));
        assert_eq!(t("vector<f32>").shaped().unwrap().rank(), Some(0));
        assert_eq!(t("vector<4x[8]xf32>").to_string(), "vector<4x[8]xf32>");
        assert_eq!(t("tensor<?x4xf32>").shaped().unwrap().dims.as_ref().unwrap()[0], Dim::Unbounded);
        assert_eq!(t("tensor<*xf32>").shaped().unwrap().dims, None);
        assert_eq!(t("index").dtype(), Some(DType::Index));
        assert_eq!(t("i1").dtype(), Some(DType::Pred));
        assert!(matches!(t("complex<f32>"), MlirType::Other("complex<f32>")));
        let f = t("(tensor<4xf32>, i32) -> (f32, i1)");
        assert!(matches!(&f, MlirType::Function { inputs, results } if inputs.len() == 2 && results.len() == 2));
        let f = t("() -> vector<8x128xf32>");
        assert!(matches!(&f, MlirType::Function { inputs, results } if inputs.is_empty() && results.len() == 1));
        assert!(matches!(t("tuple<i32, f32>"), MlirType::Tuple(v) if v.len() == 2));
        assert!(mlir_type("memref<2x", 0).is_err());
        assert!(mlir_type("memref<", 0).is_err());
        assert!(mlir_type("vector<99999999999999999999xf32>", 0).is_err());
    }
}
