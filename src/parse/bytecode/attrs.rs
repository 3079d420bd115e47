//! The attribute and type tables: lazily decoded entries, the builtin dialect's bytecode encodings
//! (`BuiltinDialectBytecode.td`: codes are positions in its attribute and type lists, which MLIR never
//! reorders), and MLIR-syntax text for every decoded attribute and type.
//!
//! Entries of other dialects are stored in their textual assembly form (a NUL-terminated string such as
//! `#tpu.memory_space<vmem>`), which we keep as it is. A dialect-specific *binary* encoding of a non-builtin
//! dialect cannot be read without that dialect's code: it becomes a placeholder text and a note.
//!
//! Hostile input: references between entries are resolved recursively with a depth limit and a cycle check,
//! element counts are bounded by the bytes present, and the total text produced is budgeted (an array of
//! references to a big attribute referencing big attributes would otherwise grow exponentially).

use super::error::BytecodeError;
use super::reader::{Reader, R};
use std::rc::Rc;

const MAX_DEPTH: u32 = 200;

#[derive(Clone, Debug)]
pub(crate) enum Loc {
    Unknown,
    File {
        file: Rc<str>,
        line: u64,
        col: u64,
        end: Option<(u64, u64)>,
    },
    Name {
        name: Rc<str>,
        child: Option<u32>,
    },
    CallSite {
        callee: u32,
        caller: u32,
    },
    Fused {
        locs: Vec<u32>,
        metadata: Option<u32>,
    },
}

#[derive(Clone, Debug)]
pub(crate) enum Attr {
    /// An entry in textual assembly form, as written (`#tpu.memory_space<vmem>`, `affine_map<...>`).
    Text(Rc<str>),
    Array(Vec<u32>),
    Dict(Vec<(Rc<str>, u32)>),
    Str {
        value: Rc<str>,
        ty: Option<u32>,
    },
    SymbolRef {
        root: Rc<str>,
        nested: Vec<Rc<str>>,
    },
    Type(u32),
    Unit,
    /// Integer/float attributes: the printed value and the type.
    Scalar {
        value: String,
        ty: u32,
        is_bool: bool,
    },
    Loc(Loc),
    /// Everything whose text is all we need (dense elements/arrays, affine maps, resources, ...).
    Printed(Rc<str>),
    Distinct(u32),
}

#[derive(Clone, Debug)]
pub(crate) enum Ty {
    Int {
        width: u64,
        signedness: u8,
    },
    Index,
    Float(&'static str),
    Func {
        inputs: Vec<u32>,
        results: Vec<u32>,
    },
    Complex(u32),
    MemRef {
        shape: Vec<i64>,
        elem: u32,
        layout: Option<u32>,
        space: Option<u32>,
    },
    None,
    Tensor {
        shape: Vec<i64>,
        elem: u32,
        encoding: Option<u32>,
    },
    Tuple(Vec<u32>),
    UnrankedMemRef {
        elem: u32,
        space: Option<u32>,
    },
    UnrankedTensor(u32),
    Vector {
        shape: Vec<i64>,
        elem: u32,
        scalable: Vec<bool>,
    },
    Text(Rc<str>),
}

enum Slot<T> {
    Unread,
    Busy,
    Done(T),
}

struct Entry<'b> {
    dialect: usize,
    custom: bool,
    data: &'b [u8],
    at: usize,
}

pub(crate) struct AttrTypes<'b> {
    pub strings: Vec<Rc<str>>,
    pub dialects: Vec<Rc<str>>,
    /// Dialect resource keys in handle order (for `dense_resource`).
    pub resources: Vec<Rc<str>>,
    attr_entries: Vec<Entry<'b>>,
    type_entries: Vec<Entry<'b>>,
    attrs: Vec<Slot<Attr>>,
    types: Vec<Slot<Ty>>,
    attr_text: Vec<Option<Rc<str>>>,
    type_text: Vec<Option<Rc<str>>>,
    depth: u32,
    budget: usize,
    pub notes: Vec<String>,
    section_base: usize,
}

fn float_name(code: u64) -> Option<&'static str> {
    Some(match code {
        3 => "bf16",
        4 => "f16",
        5 => "f32",
        6 => "f64",
        7 => "f80",
        8 => "f128",
        21 => "tf32",
        22 => "f8E5M2",
        23 => "f8E4M3",
        24 => "f8E4M3FN",
        25 => "f8E5M2FNUZ",
        26 => "f8E4M3FNUZ",
        27 => "f8E4M3B11FNUZ",
        28 => "f8E3M4",
        29 => "f4E2M1FN",
        30 => "f6E2M3FN",
        31 => "f6E3M2FN",
        32 => "f8E8M0FNU",
        _ => return None,
    })
}

fn float_bits(name: &str) -> u32 {
    match name {
        "bf16" | "f16" => 16,
        "tf32" => 19,
        "f32" => 32,
        "f64" => 64,
        "f80" => 80,
        "f128" => 128,
        n if n.starts_with("f8") => 8,
        n if n.starts_with("f6") => 6,
        n if n.starts_with("f4") => 4,
        _ => 64,
    }
}

/// The value of an integer/float payload: up to 128 bits as little-endian words.
struct Bits {
    words: Vec<u64>,
    width: u32,
}

impl Bits {
    fn low(&self) -> u64 {
        self.words.first().copied().unwrap_or(0)
    }
}

impl<'b> AttrTypes<'b> {
    /// Reads the offset section, slicing the data section into one entry per attribute and type.
    pub fn new(
        strings: Vec<Rc<str>>,
        dialects: Vec<Rc<str>>,
        resources: Vec<Rc<str>>,
        data: &mut Reader<'b>,
        offsets: &mut Reader<'b>,
        input_len: usize,
    ) -> R<Self> {
        let num_attrs = offsets.count("attribute")?;
        let num_types = offsets.count("type")?;
        let section_base = data.offset();
        let (all, base) = data.bytes(data.remaining() as u64)?;
        let mut cursor = 0usize;
        let mut read_group =
            |offsets: &mut Reader<'b>, out: &mut Vec<Entry<'b>>, total: usize| -> R<()> {
                while out.len() < total {
                    let dialect = offsets.varint()? as usize;
                    if dialect >= dialects.len() {
                        return Err(offsets.err(format!(
                            "dialect index {dialect} out of range ({} dialects)",
                            dialects.len()
                        )));
                    }
                    let n = offsets.count("entry")?;
                    if out.len() + n > total {
                        return Err(offsets.err("more attribute/type entries than declared"));
                    }
                    for _ in 0..n {
                        let (size, custom) = offsets.varint_flag()?;
                        if size > (all.len() - cursor) as u64 {
                            return Err(offsets
                                .err("attribute/type entry points past the end of its section"));
                        }
                        let size = size as usize;
                        out.push(Entry {
                            dialect,
                            custom,
                            data: &all[cursor..cursor + size],
                            at: base + cursor,
                        });
                        cursor += size;
                    }
                }
                Ok(())
            };
        let mut attr_entries = Vec::with_capacity(num_attrs);
        let mut type_entries = Vec::with_capacity(num_types);
        read_group(offsets, &mut attr_entries, num_attrs)?;
        read_group(offsets, &mut type_entries, num_types)?;
        if !offsets.is_empty() {
            return Err(offsets.err("trailing data in the attribute/type offset section"));
        }
        Ok(AttrTypes {
            strings,
            dialects,
            resources,
            attrs: (0..num_attrs).map(|_| Slot::Unread).collect(),
            types: (0..num_types).map(|_| Slot::Unread).collect(),
            attr_text: vec![None; num_attrs],
            type_text: vec![None; num_types],
            attr_entries,
            type_entries,
            depth: 0,
            budget: 16 * 1024 * 1024 + 64 * input_len,
            notes: Vec::new(),
            section_base,
        })
    }

    fn err_at(&self, at: usize, message: impl Into<String>) -> BytecodeError {
        BytecodeError::Malformed {
            offset: at,
            section: "attribute/type section",
            message: message.into(),
        }
    }

    pub fn string(&self, r: &Reader<'_>, idx: u64) -> R<Rc<str>> {
        self.strings.get(idx as usize).cloned().ok_or_else(|| {
            r.err(format!(
                "string index {idx} out of range ({} strings)",
                self.strings.len()
            ))
        })
    }

    // ---- resolution -----------------------------------------------------------------------------------------

    pub fn attr(&mut self, idx: u64) -> R<&Attr> {
        let i = self.load_attr(idx)?;
        match &self.attrs[i] {
            Slot::Done(a) => Ok(a),
            _ => Err(self.err_at(self.section_base, "internal: attribute not loaded")),
        }
    }

    pub fn ty(&mut self, idx: u64) -> R<&Ty> {
        let i = self.load_type(idx)?;
        match &self.types[i] {
            Slot::Done(t) => Ok(t),
            _ => Err(self.err_at(self.section_base, "internal: type not loaded")),
        }
    }

    fn load_attr(&mut self, idx: u64) -> R<usize> {
        let i = idx as usize;
        match self.attrs.get(i) {
            None => {
                return Err(self.err_at(
                    self.section_base,
                    format!(
                        "attribute index {idx} out of range ({} attributes)",
                        self.attrs.len()
                    ),
                ))
            }
            Some(Slot::Done(_)) => return Ok(i),
            Some(Slot::Busy) => {
                return Err(self.err_at(
                    self.attr_entries[i].at,
                    format!("attribute {idx} refers to itself"),
                ))
            }
            Some(Slot::Unread) => {}
        }
        self.enter(self.attr_entries[i].at)?;
        self.attrs[i] = Slot::Busy;
        let res = self.decode_attr(i);
        self.depth -= 1;
        match res {
            Ok(a) => {
                self.attrs[i] = Slot::Done(a);
                Ok(i)
            }
            Err(e) => {
                self.attrs[i] = Slot::Unread;
                Err(e)
            }
        }
    }

    fn load_type(&mut self, idx: u64) -> R<usize> {
        let i = idx as usize;
        match self.types.get(i) {
            None => {
                return Err(self.err_at(
                    self.section_base,
                    format!("type index {idx} out of range ({} types)", self.types.len()),
                ))
            }
            Some(Slot::Done(_)) => return Ok(i),
            Some(Slot::Busy) => {
                return Err(self.err_at(
                    self.type_entries[i].at,
                    format!("type {idx} refers to itself"),
                ))
            }
            Some(Slot::Unread) => {}
        }
        self.enter(self.type_entries[i].at)?;
        self.types[i] = Slot::Busy;
        let res = self.decode_type(i);
        self.depth -= 1;
        match res {
            Ok(t) => {
                self.types[i] = Slot::Done(t);
                Ok(i)
            }
            Err(e) => {
                self.types[i] = Slot::Unread;
                Err(e)
            }
        }
    }

    fn enter(&mut self, at: usize) -> R<()> {
        if self.depth >= MAX_DEPTH {
            return Err(self.err_at(
                at,
                format!("attributes/types nested deeper than {MAX_DEPTH}"),
            ));
        }
        self.depth += 1;
        Ok(())
    }

    fn is_builtin(&self, dialect: usize) -> bool {
        self.dialects
            .get(dialect)
            .map(|d| &**d == "builtin")
            .unwrap_or(false)
    }

    fn asm_text(&self, e: &Entry<'b>, what: &str) -> R<Rc<str>> {
        let mut r = Reader::new(e.data, e.at, "attribute/type section");
        let s = r.cstr()?;
        if !r.is_empty() {
            return Err(r.err(format!("trailing bytes after the {what}'s assembly text")));
        }
        Ok(Rc::from(String::from_utf8_lossy(s).as_ref()))
    }

    fn decode_attr(&mut self, i: usize) -> R<Attr> {
        let e = &self.attr_entries[i];
        let (dialect, custom, data, at) = (e.dialect, e.custom, e.data, e.at);
        if !custom {
            let e = Entry {
                dialect,
                custom,
                data,
                at,
            };
            return Ok(Attr::Text(self.asm_text(&e, "attribute")?));
        }
        if !self.is_builtin(dialect) {
            let d = self.dialects[dialect].clone();
            self.notes.push(format!("attribute {i} uses a binary encoding of dialect `{d}`, which hlolint cannot decode"));
            return Ok(Attr::Text(Rc::from(format!(
                "#{d}<\"undecoded bytecode attribute\">"
            ))));
        }
        let mut r = Reader::new(data, at, "attribute/type section");
        let a = self.builtin_attr(&mut r)?;
        if !r.is_empty() {
            return Err(r.err("trailing bytes after a builtin attribute"));
        }
        Ok(a)
    }

    fn decode_type(&mut self, i: usize) -> R<Ty> {
        let e = &self.type_entries[i];
        let (dialect, custom, data, at) = (e.dialect, e.custom, e.data, e.at);
        if !custom {
            let e = Entry {
                dialect,
                custom,
                data,
                at,
            };
            return Ok(Ty::Text(self.asm_text(&e, "type")?));
        }
        if !self.is_builtin(dialect) {
            let d = self.dialects[dialect].clone();
            self.notes.push(format!(
                "type {i} uses a binary encoding of dialect `{d}`, which hlolint cannot decode"
            ));
            return Ok(Ty::Text(Rc::from(format!(
                "!{d}<\"undecoded bytecode type\">"
            ))));
        }
        let mut r = Reader::new(data, at, "attribute/type section");
        let t = self.builtin_type(&mut r)?;
        if !r.is_empty() {
            return Err(r.err("trailing bytes after a builtin type"));
        }
        Ok(t)
    }

    // ---- builtin encodings ----------------------------------------------------------------------------------

    fn attr_ref(&mut self, r: &mut Reader<'_>) -> R<u32> {
        let idx = r.varint()?;
        self.load_attr(idx)?;
        Ok(idx as u32)
    }

    fn type_ref(&mut self, r: &mut Reader<'_>) -> R<u32> {
        let idx = r.varint()?;
        self.load_type(idx)?;
        Ok(idx as u32)
    }

    /// A reference to a `StringAttr` (dictionary keys, symbol names, file names).
    fn string_attr_ref(&mut self, r: &mut Reader<'_>) -> R<Rc<str>> {
        let at = r.offset();
        let idx = r.varint()?;
        match self.attr(idx)? {
            Attr::Str { value, .. } => Ok(value.clone()),
            _ => Err(BytecodeError::Malformed {
                offset: at,
                section: "attribute/type section",
                message: format!("attribute {idx} should be a string attribute"),
            }),
        }
    }

    fn loc_ref(&mut self, r: &mut Reader<'_>) -> R<u32> {
        let at = r.offset();
        let idx = self.attr_ref(r)?;
        match self.attr(idx as u64)? {
            Attr::Loc(_) => Ok(idx),
            _ => Err(BytecodeError::Malformed {
                offset: at,
                section: "attribute/type section",
                message: format!("attribute {idx} should be a location"),
            }),
        }
    }

    fn list<T>(
        &mut self,
        r: &mut Reader<'_>,
        what: &str,
        mut f: impl FnMut(&mut Self, &mut Reader<'_>) -> R<T>,
    ) -> R<Vec<T>> {
        let n = r.count(what)?;
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            out.push(f(self, r)?);
        }
        Ok(out)
    }

    fn shape(&mut self, r: &mut Reader<'_>) -> R<Vec<i64>> {
        self.list(r, "dimension", |_, r| r.svarint())
    }

    /// `readAPIntWithKnownWidth`: a byte up to 8 bits, a signed varint up to 64, else active words.
    fn apint(&mut self, r: &mut Reader<'_>, width: u32) -> R<Bits> {
        if width <= 8 {
            return Ok(Bits {
                words: vec![r.byte()? as u64],
                width,
            });
        }
        if width <= 64 {
            return Ok(Bits {
                words: vec![r.svarint()? as u64],
                width,
            });
        }
        let n = r.count("APInt word")?;
        let mut words = Vec::with_capacity(n);
        for _ in 0..n {
            words.push(r.svarint()? as u64);
        }
        Ok(Bits { words, width })
    }

    fn int_width(&mut self, ty: u32, at: usize) -> R<(u32, u8)> {
        match self.ty(ty as u64)? {
            Ty::Int { width, signedness } => Ok(((*width).min(1 << 24) as u32, *signedness)),
            Ty::Index => Ok((64, 0)),
            _ => {
                let t = self.type_text(ty)?;
                Err(self.err_at(at, format!("integer attribute with a non-integer type {t}")))
            }
        }
    }

    fn builtin_attr(&mut self, r: &mut Reader<'_>) -> R<Attr> {
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
                Attr::Str {
                    value: self.string(r, i)?,
                    ty: None,
                }
            }
            3 => {
                let i = r.varint()?;
                let value = self.string(r, i)?;
                Attr::Str {
                    value,
                    ty: Some(self.type_ref(r)?),
                }
            }
            4 => Attr::SymbolRef {
                root: self.string_attr_ref(r)?,
                nested: Vec::new(),
            },
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
            6 => Attr::Type(self.type_ref(r)?),
            7 => Attr::Unit,
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
                Attr::Scalar {
                    value: float_text(name, &bits),
                    ty,
                    is_bool: false,
                }
            }
            10 => {
                let callee = self.loc_ref(r)?;
                let caller = self.loc_ref(r)?;
                Attr::Loc(Loc::CallSite { callee, caller })
            }
            11 => {
                let file = self.string_attr_ref(r)?;
                let line = r.varint()?;
                let col = r.varint()?;
                Attr::Loc(Loc::File {
                    file,
                    line,
                    col,
                    end: None,
                })
            }
            12 | 13 => {
                let locs = self.list(r, "fused location", |s, r| s.loc_ref(r))?;
                let metadata = if code == 13 {
                    Some(self.attr_ref(r)?)
                } else {
                    None
                };
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
            16 => {
                let ty = self.type_ref(r)?;
                let h = r.varint()?;
                let key = self.resources.get(h as usize).cloned().ok_or_else(|| {
                    r.err(format!(
                        "resource handle {h} out of range ({} resources)",
                        self.resources.len()
                    ))
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
                let body = if splat {
                    items.join("")
                } else {
                    format!("[{}]", items.join(", "))
                };
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
            21 => Attr::Distinct(self.attr_ref(r)?),
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
                Attr::Loc(Loc::File {
                    file,
                    line,
                    col,
                    end,
                })
            }
            23 => {
                let dims = r.varint()?;
                let syms = r.varint()?;
                let exprs = self.list(r, "affine expression", |_, r| affine_expr(r, 0))?;
                Attr::Printed(Rc::from(affine_map_text(dims, syms, &exprs)))
            }
            _ => {
                return Err(BytecodeError::Malformed {
                    offset: code_at,
                    section: "attribute/type section",
                    message: format!("unknown builtin attribute code {code}"),
                })
            }
        })
    }

    fn builtin_type(&mut self, r: &mut Reader<'_>) -> R<Ty> {
        let code_at = r.offset();
        let code = r.varint()?;
        if let Some(name) = float_name(code) {
            return Ok(Ty::Float(name));
        }
        Ok(match code {
            0 => {
                let v = r.varint()?;
                Ty::Int {
                    width: v >> 2,
                    signedness: (v & 3) as u8,
                }
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
                Ty::MemRef {
                    shape,
                    elem,
                    layout,
                    space: None,
                }
            }
            11 => {
                let space = Some(self.attr_ref(r)?);
                let shape = self.shape(r)?;
                let elem = self.type_ref(r)?;
                let layout = Some(self.attr_ref(r)?);
                Ty::MemRef {
                    shape,
                    elem,
                    layout,
                    space,
                }
            }
            12 => Ty::None,
            13 => {
                let shape = self.shape(r)?;
                Ty::Tensor {
                    shape,
                    elem: self.type_ref(r)?,
                    encoding: None,
                }
            }
            14 => {
                let encoding = Some(self.attr_ref(r)?);
                let shape = self.shape(r)?;
                Ty::Tensor {
                    shape,
                    elem: self.type_ref(r)?,
                    encoding,
                }
            }
            15 => Ty::Tuple(self.list(r, "tuple element", |s, r| s.type_ref(r))?),
            16 => Ty::UnrankedMemRef {
                elem: self.type_ref(r)?,
                space: None,
            },
            17 => {
                let space = Some(self.attr_ref(r)?);
                Ty::UnrankedMemRef {
                    elem: self.type_ref(r)?,
                    space,
                }
            }
            18 => Ty::UnrankedTensor(self.type_ref(r)?),
            19 => {
                let shape = self.shape(r)?;
                Ty::Vector {
                    shape,
                    elem: self.type_ref(r)?,
                    scalable: Vec::new(),
                }
            }
            20 => {
                let scalable = self.list(r, "scalable flag", |_, r| Ok(r.byte()? != 0))?;
                let shape = self.shape(r)?;
                Ty::Vector {
                    shape,
                    elem: self.type_ref(r)?,
                    scalable,
                }
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

    fn num_elements(&mut self, ty: u32) -> R<u64> {
        let shape = match self.ty(ty as u64)? {
            Ty::Tensor { shape, .. } | Ty::Vector { shape, .. } | Ty::MemRef { shape, .. } => {
                shape.clone()
            }
            _ => Vec::new(),
        };
        Ok(shape
            .iter()
            .fold(1u64, |acc, &d| acc.saturating_mul(d.max(0) as u64)))
    }

    /// Element kind of a shaped type: (bits, kind) with kind 'i' signed/signless int, 'u' unsigned, 'b' bool,
    /// 'f' float (name), 'c' complex, '?' unknown.
    fn elem_kind(&mut self, elem: u32) -> R<(u32, char, &'static str)> {
        Ok(match self.ty(elem as u64)? {
            Ty::Int {
                width: 1,
                signedness: 0,
            } => (1, 'b', ""),
            Ty::Int { width, signedness } => (
                (*width).min(1 << 16) as u32,
                if *signedness == 2 { 'u' } else { 'i' },
                "",
            ),
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

    fn element_text(bytes: &[u8], bits: u32, kind: char, fname: &'static str) -> String {
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

    fn dense_array_text(&mut self, elem: u32, size: u64, blob: &[u8], at: usize) -> R<String> {
        let (bits, kind, fname) = self.elem_kind(elem)?;
        let t = self.type_text(elem)?;
        let esize = if kind == 'b' {
            1
        } else {
            bits.div_ceil(8) as usize
        };
        if esize == 0 || (blob.len() as u64) != size.saturating_mul(esize as u64) {
            return Err(self.err_at(
                at,
                format!("dense array of {size} {t} has {} bytes", blob.len()),
            ));
        }
        let items: Vec<String> = blob
            .chunks(esize)
            .map(|c| Self::element_text(c, bits, kind, fname))
            .collect();
        self.spend(items.iter().map(|s| s.len() + 2).sum())?;
        Ok(if items.is_empty() {
            format!("array<{t}>")
        } else {
            format!("array<{t}: {}>", items.join(", "))
        })
    }

    fn dense_elements_text(&mut self, ty: u32, blob: &[u8], at: usize) -> R<String> {
        let (shape, elem) = match self.ty(ty as u64)? {
            Ty::Tensor { shape, elem, .. } | Ty::Vector { shape, elem, .. } => {
                (shape.clone(), *elem)
            }
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
        let esize = if kind == 'b' {
            1
        } else {
            bits.div_ceil(8) as usize * if complex { 2 } else { 1 }
        };
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
        let data: &[u8] = if kind == 'b'
            && blob.len() as u64 != n
            && blob.len() as u64 == n.div_ceil(8)
            && blob.len() != 1
        {
            unpacked = (0..n as usize)
                .map(|i| (blob[i / 8] >> (i % 8)) & 1)
                .collect();
            &unpacked
        } else {
            blob
        };
        if data.len() == esize && n != 1 || n == 1 && data.len() == esize {
            return Ok(format!("dense<{}> : {t}", elem_text(data)));
        }
        if data.len() as u64 != n.saturating_mul(esize as u64) {
            return Err(self.err_at(
                at,
                format!("dense elements of {t} have {} bytes of data", blob.len()),
            ));
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

    // ---- text -----------------------------------------------------------------------------------------------

    fn spend(&mut self, n: usize) -> R<()> {
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

    fn dims(shape: &[i64], scalable: &[bool]) -> String {
        let mut s = String::new();
        for (k, &d) in shape.iter().enumerate() {
            let d = if d == i64::MIN || d < 0 {
                "?".to_string()
            } else {
                d.to_string()
            };
            if scalable.get(k).copied().unwrap_or(false) {
                s.push_str(&format!("[{d}]x"));
            } else {
                s.push_str(&d);
                s.push('x');
            }
        }
        s
    }

    fn make_type_text(&mut self, i: u32) -> R<String> {
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
                let single_plain =
                    results.len() == 1 && !matches!(self.ty(results[0] as u64)?, Ty::Func { .. });
                if single_plain {
                    format!("({ins}) -> {outs}")
                } else {
                    format!("({ins}) -> ({outs})")
                }
            }
            Ty::Complex(e) => format!("complex<{}>", self.type_text(e)?),
            Ty::Tuple(ts) => format!("tuple<{}>", self.type_list(&ts)?),
            Ty::Vector {
                shape,
                elem,
                scalable,
            } => format!(
                "vector<{}{}>",
                Self::dims(&shape, &scalable),
                self.type_text(elem)?
            ),
            Ty::Tensor {
                shape,
                elem,
                encoding,
            } => {
                let mut s = format!(
                    "tensor<{}{}",
                    Self::dims(&shape, &[]),
                    self.type_text(elem)?
                );
                if let Some(e) = encoding {
                    s.push_str(", ");
                    s.push_str(&self.attr_text(e)?);
                }
                s.push('>');
                s
            }
            Ty::UnrankedTensor(e) => format!("tensor<*x{}>", self.type_text(e)?),
            Ty::MemRef {
                shape,
                elem,
                layout,
                space,
            } => {
                let mut s = format!(
                    "memref<{}{}",
                    Self::dims(&shape, &[]),
                    self.type_text(elem)?
                );
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
    fn memory_space_text(&mut self, a: u32) -> R<String> {
        if let Attr::Scalar { value, ty, .. } = self.attr(a as u64)?.clone() {
            if matches!(self.ty(ty as u64)?, Ty::Int { width: 64, .. }) {
                return Ok(value);
            }
        }
        Ok(self.attr_text(a)?.to_string())
    }

    fn type_list(&mut self, ts: &[u32]) -> R<String> {
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

    fn make_attr_text(&mut self, i: u32) -> R<String> {
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
            Attr::Scalar {
                value,
                is_bool: true,
                ..
            } => value,
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
    pub fn loc_text(&mut self, i: u32) -> R<String> {
        let l = match self.attr(i as u64)? {
            Attr::Loc(l) => l.clone(),
            _ => return Ok("unknown".into()),
        };
        self.enter(self.section_base)?;
        let res = (|| -> R<String> {
            Ok(match l {
                Loc::Unknown => "unknown".into(),
                Loc::File {
                    file,
                    line,
                    col,
                    end,
                } => {
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
                Loc::Name {
                    name,
                    child: Some(c),
                } => format!("{}({})", escape_string(&name), self.loc_text(c)?),
                Loc::CallSite { callee, caller } => {
                    format!(
                        "callsite({} at {})",
                        self.loc_text(callee)?,
                        self.loc_text(caller)?
                    )
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

    /// Innermost-first source positions of a location: `(file, line, col)`, and the name locations met on the
    /// way (jax puts the primitive name there, e.g. `get:` / `swap:`).
    pub fn loc_info(
        &mut self,
        i: u32,
        files: &mut Vec<(Rc<str>, u64, u64)>,
        names: &mut Vec<Rc<str>>,
        depth: u32,
    ) -> R<()> {
        if depth > MAX_DEPTH {
            return Ok(());
        }
        let l = match self.attr(i as u64)? {
            Attr::Loc(l) => l.clone(),
            _ => return Ok(()),
        };
        match l {
            Loc::Unknown => {}
            Loc::File {
                file, line, col, ..
            } => files.push((file, line, col)),
            Loc::Name { name, child } => {
                names.push(name);
                if let Some(c) = child {
                    self.loc_info(c, files, names, depth + 1)?;
                }
            }
            Loc::CallSite { callee, caller } => {
                self.loc_info(callee, files, names, depth + 1)?;
                self.loc_info(caller, files, names, depth + 1)?;
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

fn affine_expr(r: &mut Reader<'_>, depth: u32) -> R<String> {
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

fn affine_map_text(dims: u64, syms: u64, exprs: &[String]) -> String {
    let d: Vec<String> = (0..dims.min(1 << 16)).map(|i| format!("d{i}")).collect();
    let s: Vec<String> = (0..syms.min(1 << 16)).map(|i| format!("s{i}")).collect();
    let strip = |e: &String| {
        e.strip_prefix('(')
            .and_then(|e| e.strip_suffix(')'))
            .map(str::to_string)
            .unwrap_or(e.clone())
    };
    let res: Vec<String> = exprs.iter().map(strip).collect();
    let syms = if s.is_empty() {
        String::new()
    } else {
        format!("[{}]", s.join(", "))
    };
    format!(
        "affine_map<({}){syms} -> ({})>",
        d.join(", "),
        res.join(", ")
    )
}

/// `affine_map<(d0, d1) -> (d0, d1)>` (the default memref layout MLIR does not print).
pub(crate) fn is_identity_layout(text: &str) -> bool {
    let Some(inner) = text
        .strip_prefix("affine_map<")
        .and_then(|t| t.strip_suffix('>'))
    else {
        return false;
    };
    let Some((lhs, rhs)) = inner.split_once("->") else {
        return false;
    };
    let norm = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
    norm(lhs) == norm(rhs)
}

/// An integer value as MLIR prints it: signed unless the type is unsigned.
fn int_text(v: &Bits, unsigned: bool) -> String {
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
        return if x & sign != 0 {
            ((x as i128) - (1i128 << w)).to_string()
        } else {
            x.to_string()
        };
    }
    if w <= 128 && v.words.len() <= 2 {
        let lo = v.words.first().copied().unwrap_or(0) as u128;
        let hi_word = v
            .words
            .get(1)
            .copied()
            .unwrap_or(if (lo as u64 as i64) < 0 { u64::MAX } else { 0 });
        let x = lo | ((hi_word as u128) << 64);
        return if unsigned {
            x.to_string()
        } else {
            (x as i128).to_string()
        };
    }
    let hex: String = v.words.iter().rev().map(|w| format!("{w:016X}")).collect();
    format!("0x{hex}")
}

fn float_value(name: &str, bits: u64) -> Option<f64> {
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

fn round_trips(name: &str, text: &str, bits: u64) -> bool {
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
fn float_text(name: &str, v: &Bits) -> String {
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
            let short = if name == "f32" {
                format!("{:?}", x as f32)
            } else {
                format!("{x:?}")
            };
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
    format!(
        "0x{:0digits$X}",
        bits & if v.width >= 64 {
            u64::MAX
        } else {
            (1u64 << v.width) - 1
        }
    )
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

fn is_bare_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$' || c == '.')
}

fn key_text(k: &str) -> String {
    if is_bare_identifier(k) {
        k.to_string()
    } else {
        escape_string(k)
    }
}

pub(crate) fn symbol_text(s: &str) -> String {
    if is_bare_identifier(s)
        || (!s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "_$.-".contains(c)))
    {
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
        let b = |x: f32| Bits {
            words: vec![x.to_bits() as u64],
            width: 32,
        };
        assert_eq!(float_text("f32", &b(0.0)), "0.000000e+00");
        assert_eq!(float_text("f32", &b(1.0)), "1.000000e+00");
        assert_eq!(float_text("f32", &b(-0.25)), "-2.500000e-01");
        assert_eq!(float_text("f32", &b(f32::INFINITY)), "0x7F800000");
        assert_eq!(float_text("f32", &b(f32::NEG_INFINITY)), "0xFF800000");
        let d = Bits {
            words: vec![(1.0f64 / 3.0).to_bits()],
            width: 64,
        };
        assert_eq!(float_text("f64", &d), "0.3333333333333333");
        let bf = Bits {
            words: vec![0x3f80],
            width: 16,
        };
        assert_eq!(float_text("bf16", &bf), "1.000000e+00");
        let h = Bits {
            words: vec![0x3c00],
            width: 16,
        };
        assert_eq!(float_text("f16", &h), "1.000000e+00");
    }

    #[test]
    fn ints_print_signed_unless_unsigned() {
        let v = Bits {
            words: vec![0xff],
            width: 8,
        };
        assert_eq!(int_text(&v, false), "-1");
        assert_eq!(int_text(&v, true), "255");
        let v = Bits {
            words: vec![u64::MAX],
            width: 64,
        };
        assert_eq!(int_text(&v, false), "-1");
        assert_eq!(
            int_text(
                &Bits {
                    words: vec![5],
                    width: 32
                },
                false
            ),
            "5"
        );
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
