//! Top level and IR section: header, section table, strings, dialects and op names, resources, properties,
//! then regions → blocks → ops with MLIR's value numbering (values are numbered per isolated-from-above scope;
//! each region reserves `numValues` slots after its parent's; operands are indices into that table, possibly
//! forward references that a later definition fills).
//!
//! The result is an owned graph ([`DecodedModule`]) whose text lives in one arena; `DecodedModule::module`
//! turns it into the shared `ir::Module`.
//!
//! Along the data flow: `sections` reads the header's tables (strings, dialects and op names, resources,
//! properties), `ir` the IR section into [`DecodedModule`]'s ops, blocks and regions, and `names` gives the
//! values, blocks and operands the names MLIR's printer would.

mod ir;
mod names;
mod sections;

use super::attrs::AttrTypes;
use super::error::BytecodeError;
use super::reader::{Reader, R};
use super::DecodedModule;
use sections::{check_magic, header_error, read_dialects, read_properties, read_resources, read_strings, Sections};
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
}
