//! The builtin dialect's bytecode encodings (`BuiltinDialectBytecode.td`): integer, float, string, array,
//! dictionary, dense array/elements, type, location attributes, and the builtin types. Codes are positions in
//! MLIR's lists, which it never reorders.

use super::*;

impl<'b> AttrTypes<'b> {
    pub(super) fn builtin_attr(&mut self, r: &mut Reader<'_>) -> R<Attr> {
        let code_at = r.offset();
        let code = r.varint()?;
        Ok(match code {
            0 => Attr::Array(self.list(r, "array element", |s, r| s.attr_ref(r))?),
            1 => Attr::Dict(self.list(r, "dictionary entry", |s, r| {
                let key = s.string_attr_ref(r)?;
                let value = s.attr_ref(r)?;
                Ok((key, value))
            })?),
            2 => {
                let i = r.varint()?;
                Attr::Str { value: self.string(r, i)?, ty: None }
            }
            3 => {
                let i = r.varint()?;
                let value = self.string(r, i)?;
                Attr::Str { value, ty: Some(self.type_ref(r)?) }
            }
            4 => Attr::SymbolRef { root: self.string_attr_ref(r)?, nested: Vec::new() },
            6 => Attr::Type(self.type_ref(r)?),
            7 => Attr::Unit,
            21 => Attr::Distinct(self.attr_ref(r)?),
            23 => {
                let dims = r.varint()?;
                let syms = r.varint()?;
                let exprs = self.list(r, "affine expression", |_, r| affine_expr(r, 0))?;
                Attr::Printed(Rc::from(affine_map_text(dims, syms, &exprs)))
            }
            5 | 8 | 9 => self.symbol_or_number_attr(r, code, code_at)?,
            10..=15 | 22 => self.location_attr(r, code, code_at)?,
            16..=20 => self.dense_attr(r, code, code_at)?,
            _ => {
                return Err(BytecodeError::Malformed {
                    offset: code_at,
                    section: "attribute/type section",
                    message: format!("unknown builtin attribute code {code}"),
                })
            }
        })
    }

    /// Nested symbol references, integers and floats.
    fn symbol_or_number_attr(&mut self, r: &mut Reader<'_>, code: u64, code_at: usize) -> R<Attr> {
        Ok(match code {
            5 => {
                let root = self.string_attr_ref(r)?;
                let nested = self.list(r, "nested symbol", |s, r| {
                    let at = r.offset();
                    let idx = s.attr_ref(r)?;
                    match s.attr(idx as u64)? {
                        Attr::SymbolRef { root, .. } => Ok(root.clone()),
                        _ => Err(BytecodeError::Malformed {
                            offset: at,
                            section: "attribute/type section",
                            message: "nested symbol reference is not a symbol".into(),
                        }),
                    }
                })?;
                Attr::SymbolRef { root, nested }
            }
            8 => {
                let ty = self.type_ref(r)?;
                let (width, signedness) = self.int_width(ty, code_at)?;
                let bits = self.apint(r, width)?;
                let is_bool = width == 1 && signedness == 0;
                let value = if is_bool {
                    (if bits.low() & 1 == 1 { "true" } else { "false" }).to_string()
                } else {
                    int_text(&bits, signedness == 2)
                };
                Attr::Scalar { value, ty, is_bool }
            }
            9 => {
                let ty = self.type_ref(r)?;
                let name = match self.ty(ty as u64)? {
                    Ty::Float(n) => *n,
                    _ => return Err(self.err_at(code_at, "float attribute with a non-float type")),
                };
                let bits = self.apint(r, float_bits(name))?;
                Attr::Scalar { value: float_text(name, &bits), ty, is_bool: false }
            }
            _ => unreachable_code(code, code_at)?,
        })
    }

    /// Locations: call sites, files (and file ranges), fused, named, unknown.
    fn location_attr(&mut self, r: &mut Reader<'_>, code: u64, code_at: usize) -> R<Attr> {
        Ok(match code {
            10 => {
                let callee = self.loc_ref(r)?;
                let caller = self.loc_ref(r)?;
                Attr::Loc(Loc::CallSite { callee, caller })
            }
            11 => {
                let file = self.string_attr_ref(r)?;
                let line = r.varint()?;
                let col = r.varint()?;
                Attr::Loc(Loc::File { file, line, col, end: None })
            }
            12 | 13 => {
                let locs = self.list(r, "fused location", |s, r| s.loc_ref(r))?;
                let metadata = if code == 13 { Some(self.attr_ref(r)?) } else { None };
                Attr::Loc(Loc::Fused { locs, metadata })
            }
            14 => {
                let name = self.string_attr_ref(r)?;
                let child = self.loc_ref(r)?;
                let child = match self.attr(child as u64)? {
                    Attr::Loc(Loc::Unknown) => None,
                    _ => Some(child),
                };
                Attr::Loc(Loc::Name { name, child })
            }
            15 => Attr::Loc(Loc::Unknown),
            22 => {
                let file = self.string_attr_ref(r)?;
                let v = self.list(r, "line/column", |_, r| r.varint())?;
                let (line, col, end) = match v.as_slice() {
                    [] => (0, 0, None),
                    [l] => (*l, 0, None),
                    [l, c] => (*l, *c, None),
                    [l, c, ec] => (*l, *c, Some((*l, *ec))),
                    [l, c, el, ec] => (*l, *c, Some((*el, *ec))),
                    _ => return Err(r.err("file range location with more than 4 numbers")),
                };
                Attr::Loc(Loc::File { file, line, col, end })
            }
            _ => unreachable_code(code, code_at)?,
        })
    }

    /// Dense resources, arrays, elements and strings, and sparse elements, printed as MLIR text.
    fn dense_attr(&mut self, r: &mut Reader<'_>, code: u64, code_at: usize) -> R<Attr> {
        Ok(match code {
            16 => {
                let ty = self.type_ref(r)?;
                let h = r.varint()?;
                let key = self.resources.get(h as usize).cloned().ok_or_else(|| {
                    r.err(format!("resource handle {h} out of range ({} resources)", self.resources.len()))
                })?;
                let t = self.type_text(ty)?;
                Attr::Printed(Rc::from(format!("dense_resource<{key}> : {t}")))
            }
            17 => {
                let elem = self.type_ref(r)?;
                let size = r.varint()?;
                let n = r.count("blob byte")?;
                let (blob, _) = r.bytes(n as u64)?;
                Attr::Printed(Rc::from(self.dense_array_text(elem, size, blob, code_at)?))
            }
            18 => {
                let ty = self.type_ref(r)?;
                let n = r.count("blob byte")?;
                let (blob, _) = r.bytes(n as u64)?;
                Attr::Printed(Rc::from(self.dense_elements_text(ty, blob, code_at)?))
            }
            19 => {
                let ty = self.type_ref(r)?;
                let splat = r.varint()? != 0;
                let n = if splat { 1 } else { self.num_elements(ty)? };
                let at = r.offset();
                let n = r.check_count(n, "dense string element", at)?;
                let mut items = Vec::with_capacity(n);
                for _ in 0..n {
                    let i = r.varint()?;
                    items.push(escape_string(&self.string(r, i)?));
                }
                let t = self.type_text(ty)?;
                let body = if splat { items.join("") } else { format!("[{}]", items.join(", ")) };
                Attr::Printed(Rc::from(format!("dense<{body}> : {t}")))
            }
            20 => {
                let ty = self.type_ref(r)?;
                let indices = self.attr_ref(r)?;
                let values = self.attr_ref(r)?;
                let t = self.type_text(ty)?;
                let (i, v) = (self.attr_text(indices)?, self.attr_text(values)?);
                Attr::Printed(Rc::from(format!("sparse<{i}, {v}> : {t}")))
            }
            _ => unreachable_code(code, code_at)?,
        })
    }

    pub(super) fn builtin_type(&mut self, r: &mut Reader<'_>) -> R<Ty> {
        let code_at = r.offset();
        let code = r.varint()?;
        if let Some(name) = float_name(code) {
            return Ok(Ty::Float(name));
        }
        Ok(match code {
            0 => {
                let v = r.varint()?;
                Ty::Int { width: v >> 2, signedness: (v & 3) as u8 }
            }
            1 => Ty::Index,
            2 => {
                let inputs = self.list(r, "function input", |s, r| s.type_ref(r))?;
                let results = self.list(r, "function result", |s, r| s.type_ref(r))?;
                Ty::Func { inputs, results }
            }
            9 => Ty::Complex(self.type_ref(r)?),
            10 => {
                let shape = self.shape(r)?;
                let elem = self.type_ref(r)?;
                let layout = Some(self.attr_ref(r)?);
                Ty::MemRef { shape, elem, layout, space: None }
            }
            11 => {
                let space = Some(self.attr_ref(r)?);
                let shape = self.shape(r)?;
                let elem = self.type_ref(r)?;
                let layout = Some(self.attr_ref(r)?);
                Ty::MemRef { shape, elem, layout, space }
            }
            12 => Ty::None,
            13 => {
                let shape = self.shape(r)?;
                Ty::Tensor { shape, elem: self.type_ref(r)?, encoding: None }
            }
            14 => {
                let encoding = Some(self.attr_ref(r)?);
                let shape = self.shape(r)?;
                Ty::Tensor { shape, elem: self.type_ref(r)?, encoding }
            }
            15 => Ty::Tuple(self.list(r, "tuple element", |s, r| s.type_ref(r))?),
            16 => Ty::UnrankedMemRef { elem: self.type_ref(r)?, space: None },
            17 => {
                let space = Some(self.attr_ref(r)?);
                Ty::UnrankedMemRef { elem: self.type_ref(r)?, space }
            }
            18 => Ty::UnrankedTensor(self.type_ref(r)?),
            19 => {
                let shape = self.shape(r)?;
                Ty::Vector { shape, elem: self.type_ref(r)?, scalable: Vec::new() }
            }
            20 => {
                let scalable = self.list(r, "scalable flag", |_, r| Ok(r.byte()? != 0))?;
                let shape = self.shape(r)?;
                Ty::Vector { shape, elem: self.type_ref(r)?, scalable }
            }
            _ => {
                return Err(BytecodeError::Malformed {
                    offset: code_at,
                    section: "attribute/type section",
                    message: format!("unknown builtin type code {code}"),
                })
            }
        })
    }

    // ---- dense data -----------------------------------------------------------------------------------------

    pub(super) fn num_elements(&mut self, ty: u32) -> R<u64> {
        let shape = match self.ty(ty as u64)? {
            Ty::Tensor { shape, .. } | Ty::Vector { shape, .. } | Ty::MemRef { shape, .. } => shape.clone(),
            _ => Vec::new(),
        };
        Ok(shape.iter().fold(1u64, |acc, &d| acc.saturating_mul(d.max(0) as u64)))
    }

    /// Element kind of a shaped type: (bits, kind) with kind 'i' signed/signless int, 'u' unsigned, 'b' bool,
    /// 'f' float (name), 'c' complex, '?' unknown.
    pub(super) fn elem_kind(&mut self, elem: u32) -> R<(u32, char, &'static str)> {
        Ok(match self.ty(elem as u64)? {
            Ty::Int { width: 1, signedness: 0 } => (1, 'b', ""),
            Ty::Int { width, signedness } => {
                ((*width).min(1 << 16) as u32, if *signedness == 2 { 'u' } else { 'i' }, "")
            }
            Ty::Index => (64, 'i', ""),
            Ty::Float(n) => (float_bits(n), 'f', n),
            Ty::Complex(inner) => {
                let inner = *inner;
                let (b, k, n) = self.elem_kind(inner)?;
                (b, if k == 'f' { 'c' } else { 'C' }, n)
            }
            _ => (8, '?', ""),
        })
    }

    pub(super) fn element_text(bytes: &[u8], bits: u32, kind: char, fname: &'static str) -> String {
        let mut words = vec![0u64; bytes.len().div_ceil(8).max(1)];
        for (i, b) in bytes.iter().enumerate() {
            words[i / 8] |= (*b as u64) << (8 * (i % 8));
        }
        let v = Bits { words, width: bits };
        match kind {
            'b' => (if v.low() & 1 == 1 { "true" } else { "false" }).to_string(),
            'u' => int_text(&v, true),
            'f' => float_text(fname, &v),
            _ => int_text(&v, false),
        }
    }

    pub(super) fn dense_array_text(&mut self, elem: u32, size: u64, blob: &[u8], at: usize) -> R<String> {
        let (bits, kind, fname) = self.elem_kind(elem)?;
        let t = self.type_text(elem)?;
        let esize = if kind == 'b' { 1 } else { bits.div_ceil(8) as usize };
        if esize == 0 || (blob.len() as u64) != size.saturating_mul(esize as u64) {
            return Err(self.err_at(at, format!("dense array of {size} {t} has {} bytes", blob.len())));
        }
        let items: Vec<String> = blob.chunks(esize).map(|c| Self::element_text(c, bits, kind, fname)).collect();
        self.spend(items.iter().map(|s| s.len() + 2).sum())?;
        Ok(if items.is_empty() { format!("array<{t}>") } else { format!("array<{t}: {}>", items.join(", ")) })
    }

    pub(super) fn dense_elements_text(&mut self, ty: u32, blob: &[u8], at: usize) -> R<String> {
        let (shape, elem) = match self.ty(ty as u64)? {
            Ty::Tensor { shape, elem, .. } | Ty::Vector { shape, elem, .. } => (shape.clone(), *elem),
            _ => return Err(self.err_at(at, "dense elements attribute of a non-shaped type")),
        };
        let t = self.type_text(ty)?;
        let n = self.num_elements(ty)?;
        let (bits, kind, fname) = self.elem_kind(elem)?;
        let complex = matches!(kind, 'c' | 'C');
        let part_kind = match kind {
            'c' => 'f',
            'C' => 'i',
            k => k,
        };
        let esize = if kind == 'b' { 1 } else { bits.div_ceil(8) as usize * if complex { 2 } else { 1 } };
        let elem_text = |c: &[u8]| -> String {
            if complex {
                let h = c.len() / 2;
                format!(
                    "({},{})",
                    Self::element_text(&c[..h], bits, part_kind, fname),
                    Self::element_text(&c[h..], bits, part_kind, fname)
                )
            } else {
                Self::element_text(c, bits, part_kind, fname)
            }
        };
        // Booleans may be bit-packed (one bit per element), or a single 0x00/0xFF splat byte.
        let unpacked: Vec<u8>;
        let data: &[u8] =
            if kind == 'b' && blob.len() as u64 != n && blob.len() as u64 == n.div_ceil(8) && blob.len() != 1 {
                unpacked = (0..n as usize).map(|i| (blob[i / 8] >> (i % 8)) & 1).collect();
                &unpacked
            } else {
                blob
            };
        if data.len() == esize && n != 1 || n == 1 && data.len() == esize {
            return Ok(format!("dense<{}> : {t}", elem_text(data)));
        }
        if data.len() as u64 != n.saturating_mul(esize as u64) {
            return Err(self.err_at(at, format!("dense elements of {t} have {} bytes of data", blob.len())));
        }
        if n > 100 {
            self.spend(2 * blob.len() + 16)?;
            let hex: String = blob.iter().map(|b| format!("{b:02X}")).collect();
            return Ok(format!("dense<\"0x{hex}\"> : {t}"));
        }
        let items: Vec<String> = data.chunks(esize).map(elem_text).collect();
        fn nest(items: &[String], dims: &[i64]) -> String {
            match dims.split_first() {
                None => items.first().cloned().unwrap_or_default(),
                Some((&d, rest)) => {
                    let d = d.max(1) as usize;
                    let step = (items.len() / d).max(1);
                    let parts: Vec<String> = items.chunks(step).map(|c| nest(c, rest)).collect();
                    format!("[{}]", parts.join(", "))
                }
            }
        }
        Ok(format!("dense<{}> : {t}", nest(&items, &shape)))
    }
}

/// A code a group of builtin attributes does not hold (only reached if the dispatch and a group disagree).
fn unreachable_code<T>(code: u64, code_at: usize) -> R<T> {
    Err(BytecodeError::Malformed {
        offset: code_at,
        section: "attribute/type section",
        message: format!("unknown builtin attribute code {code}"),
    })
}
