//! MLIR-syntax text for decoded attributes, types and locations, as MLIR's printer writes it (floats that
//! round-trip, signless integers, dense literals, affine maps, escaped strings), with a size budget so hostile
//! input cannot make the text grow without bound.

use super::*;

impl<'b> AttrTypes<'b> {
    // ---- text -----------------------------------------------------------------------------------------------

    pub(super) fn spend(&mut self, n: usize) -> R<()> {
        if n > self.budget {
            return Err(self.err_at(
                self.section_base,
                "attribute/type text grows beyond the size budget (corrupt or hostile input)",
            ));
        }
        self.budget -= n;
        Ok(())
    }

    pub fn type_text(&mut self, i: u32) -> R<Rc<str>> {
        if let Some(Some(t)) = self.type_text.get(i as usize) {
            return Ok(t.clone());
        }
        self.load_type(i as u64)?;
        self.enter(self.section_base)?;
        let res = self.make_type_text(i);
        self.depth -= 1;
        let t: Rc<str> = Rc::from(res?);
        self.spend(t.len())?;
        self.type_text[i as usize] = Some(t.clone());
        Ok(t)
    }

    pub(super) fn dims(shape: &[i64], scalable: &[bool]) -> String {
        let mut s = String::new();
        for (k, &d) in shape.iter().enumerate() {
            let d = if d == i64::MIN || d < 0 { "?".to_string() } else { d.to_string() };
            if scalable.get(k).copied().unwrap_or(false) {
                s.push_str(&format!("[{d}]x"));
            } else {
                s.push_str(&d);
                s.push('x');
            }
        }
        s
    }

    pub(super) fn make_type_text(&mut self, i: u32) -> R<String> {
        let t = match &self.types[i as usize] {
            Slot::Done(t) => t.clone(),
            _ => return Err(self.err_at(self.section_base, "internal: type not loaded")),
        };
        Ok(match t {
            Ty::Int { width, signedness } => {
                format!("{}{width}", ["i", "si", "ui", "i"][signedness as usize & 3])
            }
            Ty::Index => "index".into(),
            Ty::Float(n) => n.into(),
            Ty::None => "none".into(),
            Ty::Text(s) => s.to_string(),
            Ty::Func { inputs, results } => {
                let ins = self.type_list(&inputs)?;
                let outs = self.type_list(&results)?;
                let single_plain = results.len() == 1 && !matches!(self.ty(results[0] as u64)?, Ty::Func { .. });
                if single_plain {
                    format!("({ins}) -> {outs}")
                } else {
                    format!("({ins}) -> ({outs})")
                }
            }
            Ty::Complex(e) => format!("complex<{}>", self.type_text(e)?),
            Ty::Tuple(ts) => format!("tuple<{}>", self.type_list(&ts)?),
            Ty::Vector { shape, elem, scalable } => {
                format!("vector<{}{}>", Self::dims(&shape, &scalable), self.type_text(elem)?)
            }
            Ty::Tensor { shape, elem, encoding } => {
                let mut s = format!("tensor<{}{}", Self::dims(&shape, &[]), self.type_text(elem)?);
                if let Some(e) = encoding {
                    s.push_str(", ");
                    s.push_str(&self.attr_text(e)?);
                }
                s.push('>');
                s
            }
            Ty::UnrankedTensor(e) => format!("tensor<*x{}>", self.type_text(e)?),
            Ty::MemRef { shape, elem, layout, space } => {
                let mut s = format!("memref<{}{}", Self::dims(&shape, &[]), self.type_text(elem)?);
                if let Some(l) = layout {
                    let lt = self.attr_text(l)?;
                    if !is_identity_layout(&lt) {
                        s.push_str(", ");
                        s.push_str(&lt);
                    }
                }
                if let Some(sp) = space {
                    s.push_str(", ");
                    s.push_str(&self.memory_space_text(sp)?);
                }
                s.push('>');
                s
            }
            Ty::UnrankedMemRef { elem, space } => {
                let mut s = format!("memref<*x{}", self.type_text(elem)?);
                if let Some(sp) = space {
                    s.push_str(", ");
                    s.push_str(&self.memory_space_text(sp)?);
                }
                s.push('>');
                s
            }
        })
    }

    /// Integer memory spaces print without their `: i64`.
    pub(super) fn memory_space_text(&mut self, a: u32) -> R<String> {
        if let Attr::Scalar { value, ty, .. } = self.attr(a as u64)?.clone() {
            if matches!(self.ty(ty as u64)?, Ty::Int { width: 64, .. }) {
                return Ok(value);
            }
        }
        Ok(self.attr_text(a)?.to_string())
    }

    pub(super) fn type_list(&mut self, ts: &[u32]) -> R<String> {
        let mut parts = Vec::with_capacity(ts.len());
        for &t in ts {
            parts.push(self.type_text(t)?.to_string());
        }
        Ok(parts.join(", "))
    }

    pub fn attr_text(&mut self, i: u32) -> R<Rc<str>> {
        if let Some(Some(t)) = self.attr_text.get(i as usize) {
            return Ok(t.clone());
        }
        self.load_attr(i as u64)?;
        self.enter(self.section_base)?;
        let res = self.make_attr_text(i);
        self.depth -= 1;
        let t: Rc<str> = Rc::from(res?);
        self.spend(t.len())?;
        self.attr_text[i as usize] = Some(t.clone());
        Ok(t)
    }

    pub(super) fn make_attr_text(&mut self, i: u32) -> R<String> {
        let a = match &self.attrs[i as usize] {
            Slot::Done(a) => a.clone(),
            _ => return Err(self.err_at(self.section_base, "internal: attribute not loaded")),
        };
        Ok(match a {
            Attr::Text(s) | Attr::Printed(s) => s.to_string(),
            Attr::Unit => "unit".into(),
            Attr::Type(t) => self.type_text(t)?.to_string(),
            Attr::Str { value, ty: None } => escape_string(&value),
            Attr::Str { value, ty: Some(t) } => {
                format!("{} : {}", escape_string(&value), self.type_text(t)?)
            }
            Attr::SymbolRef { root, nested } => {
                let mut s = symbol_text(&root);
                for n in nested.iter() {
                    s.push_str("::");
                    s.push_str(&symbol_text(n));
                }
                s
            }
            Attr::Scalar { value, is_bool: true, .. } => value,
            Attr::Scalar { value, ty, .. } => format!("{value} : {}", self.type_text(ty)?),
            Attr::Array(items) => {
                let mut parts = Vec::with_capacity(items.len());
                for it in items {
                    parts.push(self.attr_text(it)?.to_string());
                }
                format!("[{}]", parts.join(", "))
            }
            Attr::Dict(entries) => {
                let mut parts = Vec::with_capacity(entries.len());
                for (k, v) in entries {
                    let key = key_text(&k);
                    if matches!(self.attr(v as u64)?, Attr::Unit) {
                        parts.push(key);
                    } else {
                        parts.push(format!("{key} = {}", self.attr_text(v)?));
                    }
                }
                format!("{{{}}}", parts.join(", "))
            }
            Attr::Loc(_) => format!("loc({})", self.loc_text(i)?),
            Attr::Distinct(inner) => format!("distinct[{i}]<{}>", self.attr_text(inner)?),
        })
    }

    /// The inside of `loc(...)`.
    fn loc_text(&mut self, i: u32) -> R<String> {
        let l = match self.attr(i as u64)? {
            Attr::Loc(l) => l.clone(),
            _ => return Ok("unknown".into()),
        };
        self.enter(self.section_base)?;
        let res = (|| -> R<String> {
            Ok(match l {
                Loc::Unknown => "unknown".into(),
                Loc::File { file, line, col, end } => {
                    let mut s = format!("{}:{line}:{col}", escape_string(&file));
                    if let Some((el, ec)) = end {
                        if el == line {
                            s.push_str(&format!(" to :{ec}"));
                        } else {
                            s.push_str(&format!(" to {el}:{ec}"));
                        }
                    }
                    s
                }
                Loc::Name { name, child: None } => escape_string(&name),
                Loc::Name { name, child: Some(c) } => format!("{}({})", escape_string(&name), self.loc_text(c)?),
                Loc::CallSite { callee, caller } => {
                    format!("callsite({} at {})", self.loc_text(callee)?, self.loc_text(caller)?)
                }
                Loc::Fused { locs, metadata } => {
                    let mut parts = Vec::new();
                    for l in locs {
                        parts.push(self.loc_text(l)?);
                    }
                    let meta = match metadata {
                        Some(m) => format!("<{}>", self.attr_text(m)?),
                        None => String::new(),
                    };
                    format!("fused{meta}[{}]", parts.join(", "))
                }
            })
        })();
        self.depth -= 1;
        let s = res?;
        self.spend(s.len())?;
        Ok(s)
    }

    /// Innermost-first source positions of a location: `(file, line, col, function)` — a call site's callee
    /// before its caller, so a `callsite(158 at callsite(167 at 179))` chain reads 158, 167, 179; the function is
    /// the name location wrapping a file position (jax names each frame's function so) —, and the name locations
    /// met on the way (jax puts the primitive name there, e.g. `get:` / `swap:`).
    pub fn loc_info(&mut self, i: u32, files: &mut Vec<LocFrame>, names: &mut Vec<Rc<str>>, depth: u32) -> R<()> {
        if depth > MAX_DEPTH {
            return Ok(());
        }
        let l = match self.attr(i as u64)? {
            Attr::Loc(l) => l.clone(),
            _ => return Ok(()),
        };
        match l {
            Loc::Unknown => {}
            Loc::File { file, line, col, .. } => files.push((file, line, col, None)),
            Loc::Name { name, child } => {
                names.push(name.clone());
                if let Some(c) = child {
                    let before = files.len();
                    self.loc_info(c, files, names, depth + 1)?;
                    // a name wrapping one file position is that frame's function
                    if files.len() == before + 1 && matches!(self.attr(c as u64)?, Attr::Loc(Loc::File { .. })) {
                        if let Some(f) = files.last_mut() {
                            f.3 = Some(name);
                        }
                    }
                }
            }
            Loc::CallSite { callee, caller } => {
                let before = files.len();
                self.loc_info(callee, files, names, depth + 1)?;
                let mut outer = Vec::new();
                self.loc_info(caller, &mut outer, names, depth + 1)?;
                // a caller's innermost frame is the line that calls into the callee: where it is the callee's own
                // innermost frame, the "caller" is the op's call chain again, not its caller. jax writes code
                // called through no helper as `callsite(x at x)`, and a primitive lowered to several ops as
                // callsite(its chain at a chain): the same one (`callsite(callsite(115 at 148) at callsite(115
                // at 148))`), or another call of the same helper that jax traced it at first (DeepSeek-V4's MLA:
                // the prologue's copy `181 ← 279 ← 334 ← 508` at the loop's `181 ← 279 ← 334 ← 428`)
                let same = |a: &LocFrame, b: &LocFrame| (&a.0, a.1, a.2) == (&b.0, b.1, b.2);
                let again = matches!((files.get(before), outer.first()), (Some(a), Some(b)) if same(a, b));
                if !again {
                    files.extend(outer);
                }
            }
            Loc::Fused { locs, .. } => {
                for l in locs {
                    self.loc_info(l, files, names, depth + 1)?;
                }
            }
        }
        Ok(())
    }
}

/// One frame of a location's call chain: file, line, column, and the function jax named it by.
pub(crate) type LocFrame = (Rc<str>, u64, u64, Option<Rc<str>>);

pub(super) fn affine_expr(r: &mut Reader<'_>, depth: u32) -> R<String> {
    if depth > MAX_DEPTH {
        return Err(r.err("affine expression nested too deeply"));
    }
    let kind = r.varint()?;
    Ok(match kind {
        0 => format!("d{}", r.varint()?),
        1 => format!("s{}", r.varint()?),
        2 => r.svarint()?.to_string(),
        3..=7 => {
            let lhs = affine_expr(r, depth + 1)?;
            let rhs = affine_expr(r, depth + 1)?;
            let op = ["+", "*", "mod", "floordiv", "ceildiv"][kind as usize - 3];
            format!("({lhs} {op} {rhs})")
        }
        _ => return Err(r.err(format!("unknown affine expression kind {kind}"))),
    })
}

pub(super) fn affine_map_text(dims: u64, syms: u64, exprs: &[String]) -> String {
    let d: Vec<String> = (0..dims.min(1 << 16)).map(|i| format!("d{i}")).collect();
    let s: Vec<String> = (0..syms.min(1 << 16)).map(|i| format!("s{i}")).collect();
    let strip =
        |e: &String| e.strip_prefix('(').and_then(|e| e.strip_suffix(')')).map(str::to_string).unwrap_or(e.clone());
    let res: Vec<String> = exprs.iter().map(strip).collect();
    let syms = if s.is_empty() { String::new() } else { format!("[{}]", s.join(", ")) };
    format!("affine_map<({}){syms} -> ({})>", d.join(", "), res.join(", "))
}

/// `affine_map<(d0, d1) -> (d0, d1)>` (the default memref layout MLIR does not print).
pub(crate) fn is_identity_layout(text: &str) -> bool {
    let Some(inner) = text.strip_prefix("affine_map<").and_then(|t| t.strip_suffix('>')) else {
        return false;
    };
    let Some((lhs, rhs)) = inner.split_once("->") else {
        return false;
    };
    let norm = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
    norm(lhs) == norm(rhs)
}

/// An integer value as MLIR prints it: signed unless the type is unsigned.
pub(super) fn int_text(v: &Bits, unsigned: bool) -> String {
    let w = v.width;
    if w == 0 {
        return "0".into();
    }
    if w <= 64 {
        let mask = if w == 64 { u64::MAX } else { (1u64 << w) - 1 };
        let x = v.low() & mask;
        if unsigned {
            return x.to_string();
        }
        let sign = 1u64 << (w - 1);
        return if x & sign != 0 { ((x as i128) - (1i128 << w)).to_string() } else { x.to_string() };
    }
    if w <= 128 && v.words.len() <= 2 {
        let lo = v.words.first().copied().unwrap_or(0) as u128;
        let hi_word = v.words.get(1).copied().unwrap_or(if (lo as u64 as i64) < 0 { u64::MAX } else { 0 });
        let x = lo | ((hi_word as u128) << 64);
        return if unsigned { x.to_string() } else { (x as i128).to_string() };
    }
    let hex: String = v.words.iter().rev().map(|w| format!("{w:016X}")).collect();
    format!("0x{hex}")
}

pub(super) fn float_value(name: &str, bits: u64) -> Option<f64> {
    match name {
        "f64" => Some(f64::from_bits(bits)),
        "f32" => Some(f32::from_bits(bits as u32) as f64),
        "bf16" => Some(f32::from_bits((bits as u32 & 0xffff) << 16) as f64),
        "f16" => {
            let h = bits as u16;
            let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
            let exp = ((h >> 10) & 0x1f) as i32;
            let man = (h & 0x3ff) as f64;
            Some(match exp {
                0 => sign * man * 2f64.powi(-24),
                31 => {
                    if man == 0.0 {
                        sign * f64::INFINITY
                    } else {
                        f64::NAN
                    }
                }
                e => sign * (1.0 + man / 1024.0) * 2f64.powi(e - 15),
            })
        }
        _ => None,
    }
}

pub(super) fn round_trips(name: &str, text: &str, bits: u64) -> bool {
    let Ok(x) = text.parse::<f64>() else {
        return false;
    };
    match name {
        "f64" => x.to_bits() == bits,
        "f32" => (x as f32).to_bits() == bits as u32,
        "bf16" | "f16" => float_value(name, bits) == Some(x),
        _ => false,
    }
}

/// A float value as MLIR prints it: `%.6e` when that reads back exactly, else the shortest exact decimal,
/// else (inf, nan, formats we do not model) the bit pattern in hex.
pub(super) fn float_text(name: &str, v: &Bits) -> String {
    let bits = v.low();
    if let Some(x) = float_value(name, bits) {
        if x.is_finite() {
            let sci = format!("{x:.6e}");
            let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
            let exp: i32 = exp.parse().unwrap_or(0);
            let text = format!("{mant}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs());
            if round_trips(name, &text, bits) {
                return text;
            }
            let short = if name == "f32" { format!("{:?}", x as f32) } else { format!("{x:?}") };
            if short.contains('.') {
                return short;
            }
        }
    }
    let digits = (v.width as usize).div_ceil(4).max(1);
    if v.words.len() > 1 {
        let hex: String = v.words.iter().rev().map(|w| format!("{w:016X}")).collect();
        return format!("0x{}", &hex[hex.len().saturating_sub(digits)..]);
    }
    format!("0x{:0digits$X}", bits & if v.width >= 64 { u64::MAX } else { (1u64 << v.width) - 1 })
}

/// A quoted MLIR string: printable ASCII except `"` and `\` as is, everything else as `\XX`.
pub(crate) fn escape_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for b in s.bytes() {
        match b {
            b'\\' => out.push_str("\\\\"),
            b'"' => out.push_str("\\22"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\{b:02X}")),
        }
    }
    out.push('"');
    out
}

pub(super) fn is_bare_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$' || c == '.')
}

pub(super) fn key_text(k: &str) -> String {
    if is_bare_identifier(k) {
        k.to_string()
    } else {
        escape_string(k)
    }
}

pub(crate) fn symbol_text(s: &str) -> String {
    if is_bare_identifier(s) || (!s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "_$.-".contains(c))) {
        format!("@{s}")
    } else {
        format!("@{}", escape_string(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_like_mlir() {
        let b = |x: f32| Bits { words: vec![x.to_bits() as u64], width: 32 };
        assert_eq!(float_text("f32", &b(0.0)), "0.000000e+00");
        assert_eq!(float_text("f32", &b(1.0)), "1.000000e+00");
        assert_eq!(float_text("f32", &b(-0.25)), "-2.500000e-01");
        assert_eq!(float_text("f32", &b(f32::INFINITY)), "0x7F800000");
        assert_eq!(float_text("f32", &b(f32::NEG_INFINITY)), "0xFF800000");
        let d = Bits { words: vec![(1.0f64 / 3.0).to_bits()], width: 64 };
        assert_eq!(float_text("f64", &d), "0.3333333333333333");
        let bf = Bits { words: vec![0x3f80], width: 16 };
        assert_eq!(float_text("bf16", &bf), "1.000000e+00");
        let h = Bits { words: vec![0x3c00], width: 16 };
        assert_eq!(float_text("f16", &h), "1.000000e+00");
    }

    #[test]
    fn ints_print_signed_unless_unsigned() {
        let v = Bits { words: vec![0xff], width: 8 };
        assert_eq!(int_text(&v, false), "-1");
        assert_eq!(int_text(&v, true), "255");
        let v = Bits { words: vec![u64::MAX], width: 64 };
        assert_eq!(int_text(&v, false), "-1");
        assert_eq!(int_text(&Bits { words: vec![5], width: 32 }, false), "5");
    }

    #[test]
    fn identity_layouts() {
        assert!(is_identity_layout("affine_map<(d0, d1) -> (d0, d1)>"));
        assert!(!is_identity_layout("affine_map<(d0, d1) -> (d1, d0)>"));
        assert!(!is_identity_layout("strided<[1]>"));
    }

    #[test]
    fn strings_escape_like_mlir() {
        assert_eq!(escape_string("a\"b\n\\"), "\"a\\22b\\0A\\\\\"");
        assert_eq!(symbol_text("transform_0"), "@transform_0");
        assert_eq!(symbol_text("a b"), "@\"a b\"");
    }
}
