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

mod builtin;
mod text;
use text::*;
pub(crate) use text::{escape_string, symbol_text};

const MAX_DEPTH: u32 = 200;

#[derive(Clone, Debug)]
pub(crate) enum Loc {
    Unknown,
    File { file: Rc<str>, line: u64, col: u64, end: Option<(u64, u64)> },
    Name { name: Rc<str>, child: Option<u32> },
    CallSite { callee: u32, caller: u32 },
    Fused { locs: Vec<u32>, metadata: Option<u32> },
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
    Int { width: u64, signedness: u8 },
    Index,
    Float(&'static str),
    Func { inputs: Vec<u32>, results: Vec<u32> },
    Complex(u32),
    MemRef { shape: Vec<i64>, elem: u32, layout: Option<u32>, space: Option<u32> },
    None,
    Tensor { shape: Vec<i64>, elem: u32, encoding: Option<u32> },
    Tuple(Vec<u32>),
    UnrankedMemRef { elem: u32, space: Option<u32> },
    UnrankedTensor(u32),
    Vector { shape: Vec<i64>, elem: u32, scalable: Vec<bool> },
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
        let mut read_group = |offsets: &mut Reader<'b>, out: &mut Vec<Entry<'b>>, total: usize| -> R<()> {
            while out.len() < total {
                let dialect = offsets.varint()? as usize;
                if dialect >= dialects.len() {
                    return Err(
                        offsets.err(format!("dialect index {dialect} out of range ({} dialects)", dialects.len()))
                    );
                }
                let n = offsets.count("entry")?;
                if out.len() + n > total {
                    return Err(offsets.err("more attribute/type entries than declared"));
                }
                for _ in 0..n {
                    let (size, custom) = offsets.varint_flag()?;
                    if size > (all.len() - cursor) as u64 {
                        return Err(offsets.err("attribute/type entry points past the end of its section"));
                    }
                    let size = size as usize;
                    out.push(Entry { dialect, custom, data: &all[cursor..cursor + size], at: base + cursor });
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
        BytecodeError::Malformed { offset: at, section: "attribute/type section", message: message.into() }
    }

    pub fn string(&self, r: &Reader<'_>, idx: u64) -> R<Rc<str>> {
        self.strings
            .get(idx as usize)
            .cloned()
            .ok_or_else(|| r.err(format!("string index {idx} out of range ({} strings)", self.strings.len())))
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
        self.load(idx, "attribute", |t| &mut t.attrs, |t| &t.attr_entries, Self::decode_attr)
    }

    fn load_type(&mut self, idx: u64) -> R<usize> {
        self.load(idx, "type", |t| &mut t.types, |t| &t.type_entries, Self::decode_type)
    }

    /// Decodes table entry `idx` once (attributes and types alike): out-of-range indices and self-references
    /// are errors, and a failed decode leaves the entry unread.
    fn load<T>(
        &mut self,
        idx: u64,
        what: &str,
        slots: fn(&mut Self) -> &mut Vec<Slot<T>>,
        entries: fn(&Self) -> &Vec<Entry<'b>>,
        decode: fn(&mut Self, usize) -> R<T>,
    ) -> R<usize> {
        let i = idx as usize;
        let len = slots(self).len();
        match slots(self).get(i) {
            None => {
                return Err(self.err_at(self.section_base, format!("{what} index {idx} out of range ({len} {what}s)")))
            }
            Some(Slot::Done(_)) => return Ok(i),
            Some(Slot::Busy) => return Err(self.err_at(entries(self)[i].at, format!("{what} {idx} refers to itself"))),
            Some(Slot::Unread) => {}
        }
        self.enter(entries(self)[i].at)?;
        slots(self)[i] = Slot::Busy;
        let res = decode(self, i);
        self.depth -= 1;
        match res {
            Ok(v) => {
                slots(self)[i] = Slot::Done(v);
                Ok(i)
            }
            Err(e) => {
                slots(self)[i] = Slot::Unread;
                Err(e)
            }
        }
    }

    fn enter(&mut self, at: usize) -> R<()> {
        if self.depth >= MAX_DEPTH {
            return Err(self.err_at(at, format!("attributes/types nested deeper than {MAX_DEPTH}")));
        }
        self.depth += 1;
        Ok(())
    }

    fn is_builtin(&self, dialect: usize) -> bool {
        self.dialects.get(dialect).map(|d| &**d == "builtin").unwrap_or(false)
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
            let e = Entry { dialect, custom, data, at };
            return Ok(Attr::Text(self.asm_text(&e, "attribute")?));
        }
        if !self.is_builtin(dialect) {
            let d = self.dialects[dialect].clone();
            self.notes
                .push(format!("attribute {i} uses a binary encoding of dialect `{d}`, which hlolint cannot decode"));
            return Ok(Attr::Text(Rc::from(format!("#{d}<\"undecoded bytecode attribute\">"))));
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
            let e = Entry { dialect, custom, data, at };
            return Ok(Ty::Text(self.asm_text(&e, "type")?));
        }
        if !self.is_builtin(dialect) {
            let d = self.dialects[dialect].clone();
            self.notes.push(format!("type {i} uses a binary encoding of dialect `{d}`, which hlolint cannot decode"));
            return Ok(Ty::Text(Rc::from(format!("!{d}<\"undecoded bytecode type\">"))));
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
            return Ok(Bits { words: vec![r.byte()? as u64], width });
        }
        if width <= 64 {
            return Ok(Bits { words: vec![r.svarint()? as u64], width });
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
}
