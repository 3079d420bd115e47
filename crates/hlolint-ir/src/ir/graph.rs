//! The instruction graph shared by every layer.
//!
//! Module → functions (HLO computations, MLIR `func.func`, LLO computations) → regions → blocks → ops. HLO is the
//! simple case (one region, one block per computation); MLIR nests regions inside ops (`scf.for`, `scf.if`).
//! Everything lives in flat arenas indexed by small ids, so edges (operands, users, calls, parents) are cheap and
//! the graph borrows every name from the source text (`'a`).

pub use super::attr::{Attr, BuildValue};
use super::line_index::LineIndex;
use super::mlir_type::MlirType;
use super::shape::Shape;
use super::span::Span;
use super::value::Value;
use serde::Serialize;
use std::sync::Arc;
pub use thin_vec::ThinVec;

macro_rules! id {
    ($name:ident) => {
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
        #[serde(transparent)]
        pub struct $name(pub u32);
        impl $name {
            pub fn idx(self) -> usize {
                self.0 as usize
            }
        }
    };
}
id!(OpId);
id!(FuncId);
id!(RegionId);
id!(BlockId);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Layer {
    Hlo,
    StableHlo,
    Mosaic,
    Llo,
}

impl Layer {
    pub fn name(self) -> &'static str {
        match self {
            Layer::Hlo => "hlo",
            Layer::StableHlo => "stablehlo",
            Layer::Mosaic => "mosaic",
            Layer::Llo => "llo",
        }
    }
}

/// A value's type. HLO has shapes; MLIR has structured types (`Mlir`); anything without structure stays text.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Type<'a> {
    /// Shared: a large module repeats the same few hundred shapes tens of thousands of times, so the HLO parser
    /// interns them (one allocation per distinct shape text).
    Shape(Arc<Shape>),
    Text(&'a str),
    /// An MLIR type (StableHLO, Mosaic). Several results of one op are `MlirType::Results`. Shared: an operand
    /// carries its definition's type, and an inline one would triple the size of every op and operand of every
    /// layer (LLO's million ops have no type at all).
    Mlir(Arc<MlirType<'a>>),
    None,
}

impl<'a> Type<'a> {
    pub fn shape(&self) -> Option<&Shape> {
        match self {
            Type::Shape(s) => Some(s),
            _ => None,
        }
    }

    pub fn mlir(&self) -> Option<&MlirType<'a>> {
        match self {
            Type::Mlir(t) => Some(t),
            _ => None,
        }
    }

    /// The MLIR type as shared (cloning it is a reference count).
    pub fn mlir_shared(&self) -> Option<&Arc<MlirType<'a>>> {
        match self {
            Type::Mlir(t) => Some(t),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Module<'a> {
    pub layer: Layer,
    /// The whole source text the module was parsed from (every span indexes into it).
    #[serde(skip)]
    pub text: &'a str,
    pub name: &'a str,
    #[serde(skip)]
    pub span: Span,
    pub attrs: Vec<Attr<'a>>,
    pub funcs: Vec<Func<'a>>,
    #[serde(skip)]
    pub regions: Vec<Region>,
    #[serde(skip)]
    pub blocks: Vec<Block<'a>>,
    #[serde(skip)]
    pub ops: Vec<Op<'a>>,
    pub entry: Option<FuncId>,
    /// HLO `is_scheduled=true`: the order of ops in a block is their execution order.
    pub scheduled: bool,
    /// HLO `FileNames`/`FunctionNames`/`FileLocations`/`StackFrames` tables.
    #[serde(skip)]
    pub stack_frames: StackFrames<'a>,
    /// Each op's index in its block, filled by `link` (schedule relations ask it for pairs of ops of a
    /// 50,000-instruction entry; a scan per question was quadratic).
    #[serde(skip)]
    pub positions: Vec<u32>,
    /// Line starts of `text`, built on the first question (most modules are never asked for a line).
    #[serde(skip)]
    pub lines: std::sync::OnceLock<LineIndex>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Func<'a> {
    pub name: &'a str,
    #[serde(skip)]
    pub span: Span,
    #[serde(skip)]
    pub name_span: Span,
    pub is_entry: bool,
    pub params: Vec<Param<'a>>,
    pub results: Vec<Type<'a>>,
    #[serde(skip)]
    pub attrs: Vec<Attr<'a>>,
    #[serde(skip)]
    pub body: RegionId,
    /// Ops that call this function (fusions, while bodies, async wrappers, `func.call`).
    #[serde(skip)]
    pub callers: Vec<OpId>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Param<'a> {
    pub name: &'a str,
    pub ty: Type<'a>,
    #[serde(skip)]
    pub attrs: Vec<Attr<'a>>,
    #[serde(skip)]
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegionParent {
    Func(FuncId),
    Op(OpId),
}

#[derive(Clone, Debug)]
pub struct Region {
    pub parent: RegionParent,
    pub blocks: Vec<BlockId>,
}

#[derive(Clone, Debug)]
pub struct Block<'a> {
    pub region: RegionId,
    pub label: Option<&'a str>,
    pub args: Vec<Param<'a>>,
    /// In textual order; for a scheduled HLO module this is the schedule.
    pub ops: Vec<OpId>,
}

/// What an operand refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Def {
    /// Result `index` of an op (HLO ops have one result: index 0).
    Op {
        op: OpId,
        index: u32,
    },
    BlockArg {
        block: BlockId,
        index: u32,
    },
    /// A name with no definition in scope (bad input or a forward reference into another file).
    Unresolved,
}

#[derive(Clone, Debug, Serialize)]
pub struct Operand<'a> {
    /// The name as written, without `%`.
    pub name: &'a str,
    /// The operand's type when the text states it (HLO long form). The MLIR parser also fills it from the
    /// defining op's result or block argument when the custom syntax leaves it implicit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ty: Option<Type<'a>>,
    pub def: Def,
    /// The keyword an MLIR custom syntax puts the operand under (`source`, `target`, `target_semaphore`, `init`,
    /// `iter_args`, `indices` for `%ref[%i, %j]`, `to`, `step`); `None` for plain positional operands.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<&'a str>,
    #[serde(skip)]
    pub span: Span,
}

/// A called function with the attribute that names it (`calls`, `to_apply`, `body`, `condition`,
/// `branch_computations`, ...).
#[derive(Clone, Debug, Serialize)]
pub struct Call<'a> {
    pub role: &'a str,
    pub func: FuncId,
}

#[derive(Clone, Debug, Serialize)]
pub struct Op<'a> {
    /// The instruction / first result name without `%` (`fusion.1`, `0`); empty for ops with no result.
    pub name: &'a str,
    /// `fusion`, `custom-call`, `tpu.enqueue_dma`, `vmatmul.mubr.f8e4m3fn.gmra.mrb`.
    pub opcode: &'a str,
    /// Result type (a tuple shape or several MLIR results when there is more than one).
    pub ty: Type<'a>,
    /// Further MLIR results beyond the first (`%0:2 = ...` or `(%a, %b)`), rarely used.
    #[serde(skip)]
    pub result_count: u32,
    pub operands: Vec<Operand<'a>>,
    /// What the parentheses hold instead of operands: `parameter(N)`'s number, `constant(...)`'s literal. Boxed:
    /// few ops have one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub payload: Option<Box<Value<'a>>>,
    pub attrs: Vec<Attr<'a>>,
    /// Thin vectors (8 bytes when empty, as most are): LLO dumps hold a million ops. Not for `calls`: a
    /// `ThinVec` of borrowed values must outlive its text when dropped (it has no `may_dangle`), which a `Vec`
    /// need not.
    #[serde(skip)]
    pub regions: ThinVec<RegionId>,
    #[serde(skip)]
    pub calls: Vec<Call<'a>>,
    #[serde(skip)]
    pub block: BlockId,
    #[serde(skip)]
    pub users: ThinVec<OpId>,
    /// HLO `ROOT` (or the last instruction when none is marked).
    pub is_root: bool,
    /// Where an LLO op issues (its bundle and slot); `None` in the other layers. A field rather than two
    /// attributes: LLO dumps hold a million ops, and an attribute costs 64 bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub issue: Option<Issue<'a>>,
    #[serde(skip)]
    pub span: Span,
    #[serde(skip)]
    pub name_span: Span,
    #[serde(skip)]
    pub opcode_span: Span,
}

impl<'a> Op<'a> {
    /// An op with no operands, attributes, regions or edges yet; parsers fill in what their syntax has.
    pub fn new(name: &'a str, opcode: &'a str, ty: Type<'a>, span: Span) -> Self {
        Op {
            name,
            opcode,
            ty,
            result_count: 1,
            operands: Vec::new(),
            payload: None,
            attrs: Vec::new(),
            regions: ThinVec::new(),
            calls: Vec::new(),
            block: BlockId(0),
            users: ThinVec::new(),
            is_root: false,
            issue: None,
            span,
            name_span: Span::default(),
            opcode_span: Span::default(),
        }
    }

    pub fn attr(&self, key: &str) -> Option<&Value<'a>> {
        self.attrs.iter().find(|a| a.key == key).map(Attr::value)
    }

    pub fn attr_entry(&self, key: &str) -> Option<&Attr<'a>> {
        self.attrs.iter().find(|a| a.key == key)
    }

    pub fn shape(&self) -> Option<&Shape> {
        self.ty.shape()
    }
}

/// An LLO op's place in the program: its bundle's address as printed (`0`, `0x1d`) and its slot in the bundle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Issue<'a> {
    pub bundle: &'a str,
    pub slot: u32,
}

/// The stack-frame tables of newer HLO dumps, resolved so that `metadata={stack_frame_id=N}` gives file:line.
#[derive(Clone, Debug, Default)]
pub struct StackFrames<'a> {
    pub file_names: Vec<&'a str>,
    pub function_names: Vec<&'a str>,
    pub file_locations: Vec<FileLocation>,
    /// `(file_location_id, parent_frame_id)`, 1-based ids, 0 = none. XLA prints the parent id plus one; the
    /// parser stores the real id.
    pub frames: Vec<(u32, u32)>,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct FileLocation {
    pub file_name_id: u32,
    pub function_name_id: u32,
    pub line: u32,
    pub end_line: u32,
    pub column: u32,
    pub end_column: u32,
}

/// One resolved source location (innermost first when walking a stack).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SourceLoc {
    pub file: String,
    pub function: String,
    pub line: u32,
    pub column: u32,
}

impl<'a> StackFrames<'a> {
    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// The stack for frame id `id` (1-based), innermost frame first. Stops on cycles and bad ids.
    pub fn stack(&self, id: u32) -> Vec<SourceLoc> {
        let mut out = Vec::new();
        let mut cur = id;
        while cur != 0 && out.len() <= self.frames.len() {
            let Some(&(loc_id, parent)) = self.frames.get(cur as usize - 1) else { break };
            if let Some(loc) = self.file_locations.get((loc_id as usize).wrapping_sub(1)) {
                let name = |v: &Vec<&str>, i: u32| {
                    v.get((i as usize).wrapping_sub(1))
                        .map(|s| super::value::unescape(s).into_owned())
                        .unwrap_or_default()
                };
                out.push(SourceLoc {
                    file: name(&self.file_names, loc.file_name_id),
                    function: name(&self.function_names, loc.function_name_id),
                    line: loc.line,
                    column: loc.column,
                });
            }
            cur = parent;
        }
        out
    }
}
