//! Top level and IR section: header, section table, strings, dialects and op names, resources, properties,
//! then regions → blocks → ops with MLIR's value numbering (values are numbered per isolated-from-above scope;
//! each region reserves `numValues` slots after its parent's; operands are indices into that table, possibly
//! forward references that a later definition fills).
//!
//! The result is an owned graph ([`DecodedModule`]) whose text lives in one arena; `DecodedModule::module`
//! turns it into the shared `ir::Module`.

use super::attrs::{symbol_text, Attr, AttrTypes, Ty};
use super::error::BytecodeError;
use super::reader::{Reader, R};
use super::DecodedModule;
use std::collections::HashMap;
use std::rc::Rc;

/// Newest bytecode version this reader knows (MLIR `bytecode::kVersion`).
pub const MAX_VERSION: u64 = 6;
const K_DIALECT_VERSIONING: u64 = 1;
const K_LAZY_LOADING: u64 = 2;
const K_USE_LIST_ORDERING: u64 = 3;
const K_ELIDE_UNKNOWN_BLOCK_ARG_LOCATION: u64 = 4;
const K_NATIVE_PROPERTIES: u64 = 5;

const HAS_ATTRS: u8 = 0x01;
const HAS_RESULTS: u8 = 0x02;
const HAS_OPERANDS: u8 = 0x04;
const HAS_SUCCESSORS: u8 = 0x08;
const HAS_INLINE_REGIONS: u8 = 0x10;
const HAS_USE_LIST_ORDERS: u8 = 0x20;
const HAS_PROPERTIES: u8 = 0x40;

const MAX_REGION_DEPTH: u32 = 100;

/// Index into `DecodedModule::arena`.
pub(crate) type Str = u32;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DDef {
    Op { op: u32, index: u32 },
    Arg { block: u32, index: u32 },
}

#[derive(Clone, Debug)]
pub(crate) struct DOperand {
    pub def: Option<DDef>,
    pub name: Str,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct DLoc {
    pub op_name: Option<Str>,
    pub file: Option<Str>,
    pub line: Str,
    pub col: Str,
    /// The innermost frame of its call chain in [`DecodedModule::frames`] (its id as text, HLO's
    /// `stack_frame_id`), when it has a file position.
    pub frame: Option<Str>,
}

/// The call chains of a body's op locations as HLO's stack-frame tables hold them (1-based ids, parent 0 = none),
/// so that `Module::source_stack` reads a decoded kernel's chains as it reads an HLO module's.
#[derive(Clone, Debug, Default)]
pub(crate) struct FrameTable {
    /// (file, function, line, column).
    pub locations: Vec<(Str, Option<Str>, u32, u32)>,
    /// (location id, parent frame id).
    pub frames: Vec<(u32, u32)>,
}

#[derive(Clone, Debug)]
pub(crate) struct DFuncInfo {
    pub name: Str,
    pub arg_attrs: Vec<Vec<(Str, Str)>>,
    pub results: Vec<Str>,
}

#[derive(Clone, Debug)]
pub(crate) struct DOp {
    /// Full name as written (`stable_mosaic.arith.constant`).
    pub full_name: Str,
    /// The name rules see (`arith.constant`: a Mosaic-serialized body's `stable_mosaic.` prefix dropped).
    pub opcode: Str,
    pub name: Str,
    pub result_types: Vec<Str>,
    pub ty: Option<Str>,
    pub operands: Vec<DOperand>,
    pub attrs: Vec<(Str, Str)>,
    pub regions: Vec<u32>,
    pub successors: Vec<u32>,
    pub isolated: bool,
    pub loc: Option<DLoc>,
    pub func: Option<DFuncInfo>,
    pub callee: Option<Str>,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct DBlock {
    pub args: Vec<(Str, Str)>,
    pub ops: Vec<u32>,
    pub label: Option<Str>,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct DRegion {
    pub blocks: Vec<u32>,
}

struct OpName {
    dialect: usize,
    name: Rc<str>,
    registered: Option<bool>,
    /// Arena strings for the full name and the opcode, made on first use.
    interned: Option<(Str, Str)>,
}

/// Values of one isolated-from-above scope: slots reserved per region (`next` per open region), and operands
/// that referred to a slot before it was defined.
#[derive(Default)]
struct Scope {
    values: Vec<Option<DDef>>,
    next: Vec<usize>,
    /// slot → operands (op, operand index) waiting for it.
    pending: std::collections::BTreeMap<usize, Vec<(u32, usize)>>,
}

struct Decoder<'b> {
    version: u64,
    at: AttrTypes<'b>,
    op_names: Vec<OpName>,
    properties: Vec<(&'b [u8], usize)>,
    scopes: Vec<Scope>,
    /// `numValues` of each open region, innermost last (an op defines its results only when its region
    /// declared values, as in MLIR's reader).
    region_values: Vec<usize>,
    live_values: usize,
    value_budget: usize,
    out: DecodedModule,
    interned: HashMap<Rc<str>, Str>,
    type_str: HashMap<u32, Str>,
    attr_str: HashMap<u32, Str>,
    undecoded_props: Vec<String>,
    /// Ids of [`FrameTable`] entries, so that ops sharing a chain share its frames.
    location_ids: HashMap<(Str, Option<Str>, u32, u32), u32>,
    frame_ids: HashMap<(u32, u32), u32>,
}

pub(crate) fn decode(bytes: &[u8]) -> R<DecodedModule> {
    check_magic(bytes)?;
    let mut r = Reader::new(&bytes[4..], 4, "header");
    let version = r.varint()?;
    let producer = String::from_utf8_lossy(r.cstr()?).into_owned();
    if version > MAX_VERSION {
        return Err(BytecodeError::UnsupportedVersion { version, max: MAX_VERSION, producer });
    }
    let mut s = Sections::read(&mut r, version)?;
    let strings = read_strings(&mut s.strings)?;
    let (dialects, dialect_versions, op_names) = read_dialects(&mut s.dialects, version, &strings)?;
    let resources = match (s.resources, s.resource_offsets) {
        (None, None) => Vec::new(),
        (Some(data), Some(offsets)) => read_resources(data, offsets, &strings, &dialects)?,
        (_, _) => return Err(header_error(s.end, "resource and resource offset sections must come together".into())),
    };
    let properties = match s.properties {
        Some(p) => read_properties(p)?,
        None => Vec::new(),
    };
    let at = AttrTypes::new(strings, dialects.clone(), resources, &mut s.attrs, &mut s.attr_offsets, bytes.len())?;
    let out = DecodedModule {
        version,
        producer,
        dialects: dialects.iter().map(|d| d.to_string()).zip(dialect_versions).collect(),
        mosaic_serialized: dialects.iter().any(|d| &**d == "stable_mosaic"),
        notes: Vec::new(),
        arena: vec![String::new()],
        ops: Vec::new(),
        blocks: Vec::new(),
        regions: Vec::new(),
        top_block: 0,
        frames: FrameTable::default(),
    };
    let mut d = Decoder {
        version,
        at,
        op_names,
        properties,
        scopes: Vec::new(),
        region_values: Vec::new(),
        live_values: 0,
        value_budget: bytes.len() + 16,
        out,
        interned: HashMap::new(),
        type_str: HashMap::new(),
        attr_str: HashMap::new(),
        undecoded_props: Vec::new(),
        location_ids: HashMap::new(),
        frame_ids: HashMap::new(),
    };
    d.read_ir(&mut s.ir)?;
    d.name_values();
    Ok(d.finish())
}

/// MLIR bytecode opens with `ML\xefR`.
fn check_magic(bytes: &[u8]) -> R<()> {
    if bytes.len() >= 4 && &bytes[..4] == b"ML\xefR" {
        return Ok(());
    }
    let found =
        if bytes.is_empty() { "an empty body".to_string() } else { format!("{:02X?}", &bytes[..bytes.len().min(4)]) };
    Err(BytecodeError::BadMagic { found })
}

fn header_error(offset: usize, message: String) -> BytecodeError {
    BytecodeError::Malformed { offset, section: "header", message }
}

/// The sections of a bytecode file by id: the five every file has, the optional resources (both or neither) and
/// properties (required from version [`K_NATIVE_PROPERTIES`]).
struct Sections<'b> {
    strings: Reader<'b>,
    dialects: Reader<'b>,
    attrs: Reader<'b>,
    attr_offsets: Reader<'b>,
    ir: Reader<'b>,
    resources: Option<Reader<'b>>,
    resource_offsets: Option<Reader<'b>>,
    properties: Option<Reader<'b>>,
    /// The offset after the last section (where a missing one is reported).
    end: usize,
}

impl<'b> Sections<'b> {
    fn read(r: &mut Reader<'b>, version: u64) -> R<Sections<'b>> {
        let mut sections: [Option<Reader<'b>>; 9] = Default::default();
        while !r.is_empty() {
            let at = r.offset();
            let (id, data) = r.section()?;
            let slot = sections
                .get_mut(id as usize)
                .ok_or_else(|| header_error(at, format!("unknown section id {id} (known: 0 to 8)")))?;
            if slot.is_some() {
                return Err(header_error(at, format!("duplicate {}", super::reader::section_name(id))));
            }
            *slot = Some(data);
        }
        let end = r.offset();
        let mut take = |id: usize| -> R<Reader<'b>> {
            sections[id]
                .take()
                .ok_or_else(|| header_error(end, format!("missing {}", super::reader::section_name(id as u8))))
        };
        let (strings, dialects, attrs, attr_offsets, ir) = (take(0)?, take(1)?, take(2)?, take(3)?, take(4)?);
        let properties = sections[8].take();
        if version >= K_NATIVE_PROPERTIES && properties.is_none() {
            return Err(header_error(
                end,
                format!("missing properties section (required from version {K_NATIVE_PROPERTIES})"),
            ));
        }
        Ok(Sections {
            strings,
            dialects,
            attrs,
            attr_offsets,
            ir,
            resources: sections[5].take(),
            resource_offsets: sections[6].take(),
            properties,
            end,
        })
    }
}

fn read_strings(r: &mut Reader<'_>) -> R<Vec<Rc<str>>> {
    let n = r.count("string")?;
    let mut sizes = Vec::with_capacity(n);
    for _ in 0..n {
        sizes.push(r.varint()?);
    }
    // Sizes are stored in reverse order; string data (each with its NUL) fills the end of the section.
    let (data, _) = r.bytes(r.remaining() as u64)?;
    let total: u64 = sizes.iter().fold(0u64, |a, &s| a.saturating_add(s));
    if total != data.len() as u64 {
        return Err(r.err(format!("string sizes add up to {total} bytes but the section holds {}", data.len())));
    }
    let mut out: Vec<Rc<str>> = Vec::with_capacity(n);
    let mut pos = 0usize;
    for &size in sizes.iter().rev() {
        let s = &data[pos..pos + size as usize];
        pos += size as usize;
        let s = s.strip_suffix(&[0]).unwrap_or(s);
        out.push(Rc::from(String::from_utf8_lossy(s).as_ref()));
    }
    Ok(out)
}

type Dialects = (Vec<Rc<str>>, Vec<Option<Vec<u8>>>, Vec<OpName>);

fn read_dialects(r: &mut Reader<'_>, version: u64, strings: &[Rc<str>]) -> R<Dialects> {
    let string = |r: &Reader<'_>, i: u64| -> R<Rc<str>> {
        strings
            .get(i as usize)
            .cloned()
            .ok_or_else(|| r.err(format!("string index {i} out of range ({} strings)", strings.len())))
    };
    let n = r.count("dialect")?;
    let mut names = Vec::with_capacity(n);
    let mut versions = Vec::with_capacity(n);
    for _ in 0..n {
        if version < K_DIALECT_VERSIONING {
            let i = r.varint()?;
            names.push(string(r, i)?);
            versions.push(None);
            continue;
        }
        let (i, has_version) = r.varint_flag()?;
        names.push(string(r, i)?);
        if has_version {
            let at = r.offset();
            let (id, mut v) = r.section()?;
            if id != 7 {
                return Err(BytecodeError::Malformed {
                    offset: at,
                    section: "dialect section",
                    message: format!("expected a dialect version section (id 7), found id {id}"),
                });
            }
            let (bytes, _) = v.bytes(v.remaining() as u64)?;
            versions.push(Some(bytes.to_vec()));
        } else {
            versions.push(None);
        }
    }
    if version >= K_ELIDE_UNKNOWN_BLOCK_ARG_LOCATION {
        let _num_ops = r.varint()?;
    }
    let mut ops = Vec::new();
    while !r.is_empty() {
        let dialect = r.varint()? as usize;
        if dialect >= names.len() {
            return Err(r.err(format!("dialect index {dialect} out of range ({} dialects)", names.len())));
        }
        let count = r.count("operation name")?;
        for _ in 0..count {
            let (name, registered) = if version < K_NATIVE_PROPERTIES {
                let i = r.varint()?;
                (string(r, i)?, None)
            } else {
                let (i, reg) = r.varint_flag()?;
                (string(r, i)?, Some(reg))
            };
            ops.push(OpName { dialect, name, registered, interned: None });
        }
    }
    Ok((names, versions, ops))
}

/// Validates the resource sections and returns the dialect resource keys in handle order.
fn read_resources(
    mut data: Reader<'_>,
    mut offsets: Reader<'_>,
    strings: &[Rc<str>],
    dialects: &[Rc<str>],
) -> R<Vec<Rc<str>>> {
    let string = |r: &Reader<'_>, i: u64| -> R<Rc<str>> {
        strings
            .get(i as usize)
            .cloned()
            .ok_or_else(|| r.err(format!("string index {i} out of range ({} strings)", strings.len())))
    };
    let mut keys = Vec::new();
    let group = |offsets: &mut Reader<'_>, data: &mut Reader<'_>, keep: bool, keys: &mut Vec<Rc<str>>| -> R<()> {
        let n = offsets.count("resource")?;
        for _ in 0..n {
            let k = offsets.varint()?;
            let key = string(offsets, k)?;
            let size = offsets.varint()?;
            let _kind = offsets.byte()?;
            data.bytes(size)?;
            if keep {
                keys.push(key);
            }
        }
        Ok(())
    };
    let external = offsets.count("external resource group")?;
    for _ in 0..external {
        let k = offsets.varint()?;
        string(&offsets, k)?;
        group(&mut offsets, &mut data, false, &mut keys)?;
    }
    while !offsets.is_empty() {
        let d = offsets.varint()?;
        if d as usize >= dialects.len() {
            return Err(offsets.err(format!("dialect index {d} out of range ({} dialects)", dialects.len())));
        }
        group(&mut offsets, &mut data, true, &mut keys)?;
    }
    Ok(keys)
}

fn read_properties(mut r: Reader<'_>) -> R<Vec<(&[u8], usize)>> {
    if r.is_empty() {
        return Ok(Vec::new());
    }
    let n = r.count("properties entry")?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let size = r.varint()?;
        out.push(r.bytes(size)?);
    }
    if !r.is_empty() {
        return Err(r.err("trailing data in the properties section"));
    }
    Ok(out)
}

impl<'b> Decoder<'b> {
    /// The decoded module with its notes: the attribute sections', top-level ops that are not functions (not in
    /// the graph), ops whose native properties were not decoded.
    fn finish(self) -> DecodedModule {
        let mut out = self.out;
        out.notes.extend(self.at.notes);
        let (_, body) = out.body_ops();
        let skipped: Vec<String> = body
            .iter()
            .map(|&o| &out.ops[o as usize])
            .filter(|o| o.func.is_none())
            .map(|o| {
                format!("top-level op `{}` is not a function and is not in the graph", out.arena[o.opcode as usize])
            })
            .collect();
        out.notes.extend(skipped);
        for name in self.undecoded_props {
            out.notes.push(format!(
                "`{name}`: inherent attributes are encoded as native properties (bytecode version {}) and are not decoded",
                self.version
            ));
        }
        out
    }

    fn intern(&mut self, s: &str) -> Str {
        if let Some(&i) = self.interned.get(s) {
            return i;
        }
        let i = self.push_str(s.to_string());
        self.interned.insert(Rc::from(s), i);
        i
    }

    fn push_str(&mut self, s: String) -> Str {
        self.out.arena.push(s);
        (self.out.arena.len() - 1) as Str
    }

    fn type_str(&mut self, t: u32) -> R<Str> {
        if let Some(&s) = self.type_str.get(&t) {
            return Ok(s);
        }
        let text = self.at.type_text(t)?;
        let s = self.push_str(text.to_string());
        self.type_str.insert(t, s);
        Ok(s)
    }

    fn attr_str(&mut self, a: u32) -> R<Str> {
        if let Some(&s) = self.attr_str.get(&a) {
            return Ok(s);
        }
        let text = self.at.attr_text(a)?;
        let s = self.push_str(text.to_string());
        self.attr_str.insert(a, s);
        Ok(s)
    }

    fn read_ir(&mut self, r: &mut Reader<'b>) -> R<()> {
        let region = self.new_region();
        let block = self.new_block(region);
        self.out.top_block = block;
        self.scopes.push(Scope::default());
        self.open_region(r, 0)?;
        self.read_block(r, block, region, 0)?;
        self.close_region(r)?;
        let scope = self.scopes.pop().unwrap_or_default();
        if let Some((&slot, _)) = scope.pending.iter().next() {
            return Err(r.err(format!("operand refers to value {slot}, which is never defined")));
        }
        if !r.is_empty() {
            return Err(r.err("trailing data after the top-level block"));
        }
        Ok(())
    }

    fn new_region(&mut self) -> u32 {
        self.out.regions.push(DRegion::default());
        (self.out.regions.len() - 1) as u32
    }

    fn new_block(&mut self, region: u32) -> u32 {
        self.out.blocks.push(DBlock::default());
        let b = (self.out.blocks.len() - 1) as u32;
        self.out.regions[region as usize].blocks.push(b);
        b
    }

    /// Reserves `num_values` slots for a region in the current scope.
    fn open_region(&mut self, r: &Reader<'_>, num_values: usize) -> R<()> {
        self.live_values += num_values;
        if self.live_values > self.value_budget {
            return Err(r.err("regions declare more values than the input can hold"));
        }
        let scope = self.scopes.last_mut().ok_or_else(|| r.err("internal: no value scope"))?;
        scope.next.push(scope.values.len());
        scope.values.resize(scope.values.len() + num_values, None);
        self.region_values.push(num_values);
        Ok(())
    }

    fn close_region(&mut self, r: &Reader<'_>) -> R<()> {
        let scope = self.scopes.last_mut().ok_or_else(|| r.err("internal: no value scope"))?;
        let n = self.region_values.pop().unwrap_or(0);
        scope.next.pop();
        // Nested regions are closed first, so this region's slots are the last `n`.
        let start = scope.values.len().saturating_sub(n);
        if let Some((&slot, _)) = scope.pending.range(start..).next() {
            return Err(r.err(format!("operand refers to value {slot}, which its region never defines")));
        }
        scope.values.truncate(start);
        self.live_values -= n;
        Ok(())
    }

    /// Assigns the next slots of the current region to `defs`, resolving forward references.
    fn define(&mut self, r: &Reader<'_>, defs: impl Iterator<Item = DDef>) -> R<()> {
        let Decoder { scopes, out, .. } = self;
        let scope = scopes.last_mut().ok_or_else(|| r.err("internal: no value scope"))?;
        for def in defs {
            let next = scope.next.last_mut().ok_or_else(|| r.err("internal: no open region"))?;
            let slot = *next;
            if slot >= scope.values.len() {
                return Err(
                    r.err(format!("more values defined than the region declared ({} slots)", scope.values.len()))
                );
            }
            scope.values[slot] = Some(def);
            *next += 1;
            if let Some(waiting) = scope.pending.remove(&slot) {
                for (op, idx) in waiting {
                    out.ops[op as usize].operands[idx].def = Some(def);
                }
            }
        }
        Ok(())
    }

    fn read_region(&mut self, r: &mut Reader<'b>, region: u32, depth: u32) -> R<()> {
        let num_blocks = r.count("block")?;
        if num_blocks == 0 {
            return Ok(());
        }
        let num_values = r.count("value")?;
        let blocks: Vec<u32> = (0..num_blocks).map(|_| self.new_block(region)).collect();
        self.open_region(r, num_values)?;
        for &b in &blocks {
            self.read_block(r, b, region, depth)?;
        }
        self.close_region(r)
    }

    /// The block header and arguments; returns the number of ops. Kept out of the recursion's frames.
    #[inline(never)]
    fn read_block_header(&mut self, r: &mut Reader<'b>, block: u32) -> R<usize> {
        let at = r.offset();
        let (num_ops, has_args) = r.varint_flag()?;
        let num_ops = r.check_count(num_ops, "operation", at)?;
        if has_args {
            let n = r.count("block argument")?;
            let mut args = Vec::with_capacity(n);
            for _ in 0..n {
                let ty = if self.version >= K_ELIDE_UNKNOWN_BLOCK_ARG_LOCATION {
                    let (ty, has_loc) = r.varint_flag()?;
                    if has_loc {
                        let l = r.varint()?;
                        self.at.attr(l)?;
                    }
                    ty
                } else {
                    let ty = r.varint()?;
                    let l = r.varint()?;
                    self.at.attr(l)?;
                    ty
                };
                self.at.ty(ty)?;
                args.push(self.type_str(ty as u32)?);
            }
            let n = args.len() as u32;
            self.out.blocks[block as usize].args = args.into_iter().map(|t| (0, t)).collect();
            self.define(r, (0..n).map(|index| DDef::Arg { block, index }))?;
            if self.version >= K_USE_LIST_ORDERING && r.byte()? != 0 {
                self.use_list_orders(r, n as u64)?;
            }
        }
        Ok(num_ops)
    }

    fn read_block(&mut self, r: &mut Reader<'b>, block: u32, region: u32, depth: u32) -> R<()> {
        let num_ops = self.read_block_header(r, block)?;
        for _ in 0..num_ops {
            self.read_op(r, block, region, depth)?;
        }
        Ok(())
    }

    fn use_list_orders(&mut self, r: &mut Reader<'_>, range: u64) -> R<()> {
        let n = if range > 1 { r.count("use-list order")? } else { 1 };
        for _ in 0..n {
            if range > 1 {
                r.varint()?;
            }
            let at = r.offset();
            let (count, _pairs) = r.varint_flag()?;
            let count = r.check_count(count, "use-list index", at)?;
            for _ in 0..count {
                r.varint()?;
            }
        }
        Ok(())
    }

    fn op_name(&mut self, r: &Reader<'_>, idx: u64) -> R<(Str, Str, Option<bool>)> {
        let n = self.op_names.len();
        let on = self
            .op_names
            .get(idx as usize)
            .ok_or_else(|| r.err(format!("operation name index {idx} out of range ({n} names)")))?;
        if let Some((f, o)) = on.interned {
            return Ok((f, o, on.registered));
        }
        let dialect = self.at.dialects[on.dialect].clone();
        let name = on.name.clone();
        let registered = on.registered;
        let full = if name.is_empty() { dialect.to_string() } else { format!("{dialect}.{name}") };
        let opcode = if &*dialect == "stable_mosaic" && !name.is_empty() { name.to_string() } else { full.clone() };
        let f = self.intern(&full);
        let o = self.intern(&opcode);
        self.op_names[idx as usize].interned = Some((f, o));
        Ok((f, o, registered))
    }

    /// Everything of an op but its regions; returns (op id, region count, isolated, offset). Kept out of the
    /// recursion's frames, which must stay small: region nesting recurses.
    #[inline(never)]
    fn read_op_header(&mut self, r: &mut Reader<'b>, block: u32, region: u32) -> R<(u32, usize, bool, usize)> {
        let op_at = r.offset();
        let name_idx = r.varint()?;
        let (full_name, opcode, registered) = self.op_name(r, name_idx)?;
        let mask = r.byte()?;
        let loc_idx = r.varint()?;
        if !matches!(self.at.attr(loc_idx)?, Attr::Loc(_) | Attr::Text(_)) {
            return Err(r.err(format!("operation location {loc_idx} is not a location attribute")));
        }
        let dict = self.read_attr_dict(r, mask, registered, opcode)?;
        let result_types = self.read_result_types(r, mask)?;
        let op_id = self.out.ops.len() as u32;
        let operands = self.read_operands(r, mask, op_id)?;
        let successors = self.read_successors(r, mask, region)?;
        if self.version >= K_USE_LIST_ORDERING && mask & HAS_USE_LIST_ORDERS != 0 {
            self.use_list_orders(r, result_types.len() as u64)?;
        }
        let (num_regions, isolated) = if mask & HAS_INLINE_REGIONS != 0 {
            let at = r.offset();
            let (n, iso) = r.varint_flag()?;
            (r.check_count(n, "region", at)?, iso)
        } else {
            (0, false)
        };
        let (attrs, func, callee) = self.op_attrs(&dict, opcode, num_regions, op_id)?;
        let loc = self.loc(loc_idx as u32)?;
        let (rtypes, ty) = self.result_type_text(&result_types)?;
        let n_results = result_types.len() as u32;
        self.out.ops.push(DOp {
            full_name,
            opcode,
            name: 0,
            result_types: rtypes,
            ty,
            operands,
            attrs,
            regions: Vec::new(),
            successors,
            isolated,
            loc,
            func,
            callee,
        });
        self.out.blocks[block as usize].ops.push(op_id);
        let reserved = self.region_values.last().copied().unwrap_or(0);
        if n_results > 0 && reserved > 0 {
            self.define(r, (0..n_results).map(|index| DDef::Op { op: op_id, index }))?;
        }
        Ok((op_id, num_regions, isolated, op_at))
    }

    /// An op's attribute dictionary, and its properties when they are one (an unregistered op's); a registered op's
    /// native properties cannot be decoded and are only noted.
    fn read_attr_dict(
        &mut self,
        r: &mut Reader<'b>,
        mask: u8,
        registered: Option<bool>,
        opcode: Str,
    ) -> R<Vec<(Rc<str>, u32)>> {
        let mut dict: Vec<(Rc<str>, u32)> = Vec::new();
        if mask & HAS_ATTRS != 0 {
            let i = r.varint()?;
            match self.at.attr(i)? {
                Attr::Dict(entries) => dict = entries.clone(),
                _ => return Err(r.err(format!("operation attributes {i} are not a dictionary"))),
            }
        }
        if mask & HAS_PROPERTIES == 0 {
            return Ok(dict);
        }
        match registered {
            None => {
                return Err(
                    r.err(format!("operation has properties, which bytecode version {} cannot encode", self.version))
                )
            }
            Some(false) => {
                let i = r.varint()?;
                match self.at.attr(i)? {
                    Attr::Dict(entries) => dict.extend(entries.iter().cloned()),
                    _ => {
                        let text = self.at.attr_text(i as u32)?;
                        self.out.notes.push(format!("properties of an unregistered op are not a dictionary: {text}"));
                    }
                }
            }
            Some(true) => {
                let i = r.varint()?;
                if i as usize >= self.properties.len() {
                    return Err(r.err(format!("properties index {i} out of range ({} entries)", self.properties.len())));
                }
                let name = self.out.arena[opcode as usize].clone();
                if !self.undecoded_props.contains(&name) {
                    self.undecoded_props.push(name);
                }
            }
        }
        Ok(dict)
    }

    fn read_result_types(&mut self, r: &mut Reader<'b>, mask: u8) -> R<Vec<u32>> {
        let mut result_types = Vec::new();
        if mask & HAS_RESULTS != 0 {
            let n = r.count("result")?;
            for _ in 0..n {
                let t = r.varint()?;
                self.at.ty(t)?;
                result_types.push(t as u32);
            }
        }
        Ok(result_types)
    }

    /// The operands of op `op_id`, resolved in the current value scope (a forward reference waits in `pending`).
    fn read_operands(&mut self, r: &mut Reader<'b>, mask: u8, op_id: u32) -> R<Vec<DOperand>> {
        let mut operands = Vec::new();
        if mask & HAS_OPERANDS == 0 {
            return Ok(operands);
        }
        let n = r.count("operand")?;
        for k in 0..n {
            let v = r.varint()? as usize;
            let scope = self.scopes.last_mut().ok_or_else(|| r.err("internal: no value scope"))?;
            let def = match scope.values.get(v) {
                None => {
                    return Err(
                        r.err(format!("operand value {v} out of range ({} values in scope)", scope.values.len()))
                    )
                }
                Some(d) => *d,
            };
            if def.is_none() {
                scope.pending.entry(v).or_default().push((op_id, k));
            }
            operands.push(DOperand { def, name: 0 });
        }
        Ok(operands)
    }

    /// Successor blocks, by index within `region`.
    fn read_successors(&mut self, r: &mut Reader<'b>, mask: u8, region: u32) -> R<Vec<u32>> {
        let mut successors = Vec::new();
        if mask & HAS_SUCCESSORS != 0 {
            let n = r.count("successor")?;
            let nblocks = self.out.regions[region as usize].blocks.len();
            for _ in 0..n {
                let s = r.varint()? as usize;
                if s >= nblocks {
                    return Err(r.err(format!("successor block {s} out of range ({nblocks} blocks in the region)")));
                }
                successors.push(self.out.regions[region as usize].blocks[s]);
            }
        }
        Ok(successors)
    }

    /// Attributes as text per value; a function's `sym_name`, `function_type` and `arg_attrs` also read
    /// structurally (the op is a function when it has them and one region), and a call's `callee`.
    #[allow(clippy::type_complexity)]
    fn op_attrs(
        &mut self,
        dict: &[(Rc<str>, u32)],
        opcode: Str,
        num_regions: usize,
        op_id: u32,
    ) -> R<(Vec<(Str, Str)>, Option<DFuncInfo>, Option<Str>)> {
        let mut attrs = Vec::with_capacity(dict.len());
        let mut sym_name = None;
        let mut callee = None;
        let mut arg_attrs = Vec::new();
        let mut func_results = None;
        for (key, value) in dict {
            let k = self.intern(key);
            let v = self.attr_str(*value)?;
            attrs.push((k, v));
            match (&**key, self.at.attr(*value as u64)?.clone()) {
                ("sym_name", Attr::Str { value: s, .. }) => sym_name = Some(self.intern(&s)),
                ("callee", Attr::SymbolRef { root, .. }) => callee = Some(self.intern(&root)),
                ("function_type", Attr::Type(t)) => func_results = self.function_results(t)?,
                ("arg_attrs", Attr::Array(items)) => arg_attrs = self.arg_attrs(&items)?,
                _ => {}
            }
        }
        // A function: `sym_name` + `function_type` and one region; a `func.func` whose inherent attributes are
        // undecodable native properties (v5+) still counts, with a made-up name.
        let is_func_op = self.out.arena[opcode as usize] == "func.func";
        let func = match (sym_name, func_results) {
            (Some(name), Some(results)) if num_regions == 1 => Some(DFuncInfo { name, arg_attrs, results }),
            (name, results) if is_func_op && num_regions == 1 => {
                let name = match name {
                    Some(n) => n,
                    None => self.push_str(format!("func{op_id}")),
                };
                Some(DFuncInfo { name, arg_attrs, results: results.unwrap_or_default() })
            }
            _ => None,
        };
        Ok((attrs, func, callee))
    }

    /// The result types of a function type, as text.
    fn function_results(&mut self, t: u32) -> R<Option<Vec<Str>>> {
        let Ty::Func { results, .. } = self.at.ty(t as u64)?.clone() else { return Ok(None) };
        let mut rs = Vec::new();
        for t in results {
            rs.push(self.type_str(t)?);
        }
        Ok(Some(rs))
    }

    /// Each argument's attribute dictionary, as text.
    fn arg_attrs(&mut self, items: &[u32]) -> R<Vec<Vec<(Str, Str)>>> {
        let mut out = Vec::new();
        for &it in items {
            let mut one = Vec::new();
            if let Attr::Dict(entries) = self.at.attr(it as u64)?.clone() {
                for (k, v) in entries {
                    let k = self.intern(&k);
                    let v = self.attr_str(v)?;
                    one.push((k, v));
                }
            }
            out.push(one);
        }
        Ok(out)
    }

    /// The result types as text, and the op's type: the one result's, a tuple of several, none.
    fn result_type_text(&mut self, result_types: &[u32]) -> R<(Vec<Str>, Option<Str>)> {
        let mut rtypes = Vec::with_capacity(result_types.len());
        for &t in result_types {
            rtypes.push(self.type_str(t)?);
        }
        let ty = match rtypes.len() {
            0 => None,
            1 => Some(rtypes[0]),
            _ => {
                let joined = rtypes.iter().map(|&t| self.out.arena[t as usize].clone()).collect::<Vec<_>>().join(", ");
                Some(self.push_str(format!("({joined})")))
            }
        };
        Ok((rtypes, ty))
    }

    fn read_op(&mut self, r: &mut Reader<'b>, block: u32, region: u32, depth: u32) -> R<()> {
        let (op_id, num_regions, isolated, op_at) = self.read_op_header(r, block, region)?;
        if num_regions == 0 {
            return Ok(());
        }
        if depth >= MAX_REGION_DEPTH {
            return Err(BytecodeError::Malformed {
                offset: op_at,
                section: "IR section",
                message: format!("regions nested deeper than {MAX_REGION_DEPTH}"),
            });
        }
        let regions: Vec<u32> = (0..num_regions).map(|_| self.new_region()).collect();
        self.out.ops[op_id as usize].regions = regions.clone();
        if isolated {
            self.scopes.push(Scope::default());
        }
        let res = if isolated && self.version >= K_LAZY_LOADING {
            let at = r.offset();
            let (id, mut sub) = r.section()?;
            if id != 4 {
                return Err(BytecodeError::Malformed {
                    offset: at,
                    section: "IR section",
                    message: format!("expected an IR section (id 4) for an isolated region, found id {id}"),
                });
            }
            let mut res = Ok(());
            for &rg in &regions {
                res = self.read_region(&mut sub, rg, depth + 1);
                if res.is_err() {
                    break;
                }
            }
            if res.is_ok() && !sub.is_empty() {
                res = Err(sub.err("trailing data after an isolated region"));
            }
            res
        } else {
            let mut res = Ok(());
            for &rg in &regions {
                res = self.read_region(r, rg, depth + 1);
                if res.is_err() {
                    break;
                }
            }
            res
        };
        res?;
        if isolated {
            let scope = self.scopes.pop().unwrap_or_default();
            if let Some((&slot, _)) = scope.pending.iter().next() {
                return Err(r.err(format!("operand refers to value {slot}, which is never defined")));
            }
        }
        Ok(())
    }

    /// The op's innermost source position and the first name location (jax's primitive name, e.g. `swap:`).
    fn loc(&mut self, l: u32) -> R<Option<DLoc>> {
        let mut files = Vec::new();
        let mut names = Vec::new();
        self.at.loc_info(l, &mut files, &mut names, 0)?;
        if files.is_empty() && names.is_empty() {
            return Ok(None);
        }
        let op_name = names.first().cloned();
        let op_name = op_name.map(|n| self.intern(&n));
        let (file, line, col) = match files.first() {
            Some((f, l, c, _)) => (Some(f.clone()), *l, *c),
            None => (None, 0, 0),
        };
        let file = file.map(|f| self.intern(&f));
        let line = self.intern(&line.to_string());
        let col = self.intern(&col.to_string());
        // jax records a frame called at itself (`callsite(x at x)`) for code not called through a helper
        files.dedup_by(|a, b| a.0 == b.0 && a.1 == b.1 && a.2 == b.2);
        // outermost first, each frame's parent the one before it
        let mut parent = 0u32;
        for (f, l, c, func) in files.iter().rev() {
            let func = func.as_ref().map(|n| self.intern(n));
            let key =
                (self.intern(f), func, u32::try_from(*l).unwrap_or(u32::MAX), u32::try_from(*c).unwrap_or(u32::MAX));
            let table = &mut self.out.frames;
            let loc = *self.location_ids.entry(key).or_insert_with(|| {
                table.locations.push(key);
                table.locations.len() as u32
            });
            parent = *self.frame_ids.entry((loc, parent)).or_insert_with(|| {
                table.frames.push((loc, parent));
                table.frames.len() as u32
            });
        }
        let frame = (parent != 0).then(|| self.intern(&parent.to_string()));
        Ok(Some(DLoc { op_name, file, line, col, frame }))
    }

    /// Names values the way MLIR's printer numbers them when no op suggests a name: per function (or
    /// isolated op), block arguments `argN` and results `N` in order, a block's ops before the regions nested
    /// in them.
    fn name_values(&mut self) {
        self.number_values();
        self.label_blocks();
        self.successor_attrs();
        self.operand_names();
        let _ = symbol_text;
    }

    /// Block arguments `argN` and results `N`, numbered per function or isolated op.
    fn number_values(&mut self) {
        let top = self.out.top_block;
        let mut scopes = vec![vec![top]];
        while let Some(start) = scopes.pop() {
            let (mut next_arg, mut next_res) = (0usize, 0usize);
            let mut queue: std::collections::VecDeque<u32> = start.into_iter().collect();
            while let Some(b) = queue.pop_front() {
                for k in 0..self.out.blocks[b as usize].args.len() {
                    let s = self.intern(&format!("arg{next_arg}"));
                    next_arg += 1;
                    self.out.blocks[b as usize].args[k].0 = s;
                }
                let ops = self.out.blocks[b as usize].ops.clone();
                for op in ops {
                    let o = &self.out.ops[op as usize];
                    if !o.result_types.is_empty() {
                        let s = self.intern(&next_res.to_string());
                        next_res += 1;
                        self.out.ops[op as usize].name = s;
                    }
                    let o = &self.out.ops[op as usize];
                    let inner: Vec<u32> =
                        o.regions.iter().flat_map(|&r| self.out.regions[r as usize].blocks.clone()).collect();
                    if o.isolated || o.func.is_some() {
                        scopes.push(inner);
                    } else {
                        queue.extend(inner);
                    }
                }
            }
        }
    }

    /// Block labels: `bbN` per region position (entry blocks have none).
    fn label_blocks(&mut self) {
        for r in 0..self.out.regions.len() {
            let blocks = self.out.regions[r].blocks.clone();
            for (k, b) in blocks.into_iter().enumerate().skip(1) {
                let s = self.intern(&format!("bb{k}"));
                self.out.blocks[b as usize].label = Some(s);
            }
        }
    }

    /// Successor lists as a `successors` attribute, with the region-local labels.
    fn successor_attrs(&mut self) {
        for i in 0..self.out.ops.len() {
            if self.out.ops[i].successors.is_empty() {
                continue;
            }
            let labels: Vec<String> = self.out.ops[i]
                .successors
                .iter()
                .map(|&b| {
                    format!(
                        "^{}",
                        self.out.blocks[b as usize].label.map(|l| self.out.arena[l as usize].as_str()).unwrap_or("bb0")
                    )
                })
                .collect();
            let k = self.intern("successors");
            let v = self.push_str(format!("[{}]", labels.join(", ")));
            self.out.ops[i].attrs.push((k, v));
        }
    }

    /// Operand names from their definitions (`N#k` for result k of a multi-result op).
    fn operand_names(&mut self) {
        for i in 0..self.out.ops.len() {
            for k in 0..self.out.ops[i].operands.len() {
                let name = match self.out.ops[i].operands[k].def {
                    Some(DDef::Op { op, index }) => {
                        let o = &self.out.ops[op as usize];
                        let base = self.out.arena[o.name as usize].clone();
                        if o.result_types.len() > 1 {
                            self.intern(&format!("{base}#{index}"))
                        } else {
                            o.name
                        }
                    }
                    Some(DDef::Arg { block, index }) => {
                        self.out.blocks[block as usize].args.get(index as usize).map(|a| a.0).unwrap_or(0)
                    }
                    None => 0,
                };
                self.out.ops[i].operands[k].name = name;
            }
        }
    }
}
