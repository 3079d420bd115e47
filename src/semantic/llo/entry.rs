//! The LLO entry: the HLO instruction the program computes and where XLA placed each of its operands
//! (`inlined_call_operand.vmem [shape: f8e4m3fn[1024,1024], index: 0, kind: input, ...]`).

use crate::ir::{DType, Module, Op, OpId, Value, ValueKind};
use crate::parse::llo::args::args;
use serde::Serialize;

#[derive(Clone, Debug, Serialize)]
pub struct CallOperand<'a> {
    pub op: OpId,
    /// The register holding the operand's address (`s39334_s0`).
    pub value: &'a str,
    /// `vmem`, `hbm`, `smem`, `sflag`, `<no memory space>`: where XLA placed the operand.
    pub space: &'a str,
    pub index: Option<i64>,
    /// `input` / `output`.
    pub kind: Option<&'a str>,
    /// Element type and dims of `shape: f8e4m3fn[1024,1024]`.
    pub element: Option<&'a str>,
    pub dtype: Option<DType>,
    pub dims: Vec<i64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct EntryInfo<'a> {
    /// `%fusion = fusion(%copy-done, %x.1)` / `%matmul.1 = custom-call(%x.1, %y.1)`.
    pub hlo: Option<&'a str>,
    /// The HLO instruction name (`matmul.1`): links to the HLO dump and the LLO file name.
    pub name: Option<&'a str>,
    /// `custom-call`, `fusion`, `all-reduce`, ...
    pub opcode: Option<&'a str>,
    pub operands: Vec<CallOperand<'a>>,
}

impl<'a> EntryInfo<'a> {
    /// The custom call's name when the computation is one (a Pallas kernel: `matmul.1`).
    pub fn custom_call(&self) -> Option<&'a str> {
        self.opcode.is_some_and(crate::semantic::op::is_custom_call).then_some(self.name).flatten()
    }
    pub fn operands_in(&self, space: &str) -> impl Iterator<Item = &CallOperand<'a>> {
        let space = space.to_string();
        self.operands.iter().filter(move |o| o.space == space)
    }
}

pub fn entry_info<'a>(m: &Module<'a>) -> EntryInfo<'a> {
    let hlo =
        m.entry.and_then(|f| m.func(f).attrs.iter().find(|a| a.key == "entry")).and_then(|a| match a.value().kind {
            ValueKind::Str(s) => Some(s),
            _ => None,
        });
    let name = hlo.and_then(|h| h.strip_prefix('%')).and_then(|h| h.split(" = ").next()).map(str::trim);
    let opcode = hlo.and_then(|h| h.split_once(" = ")).map(|(_, r)| r.split('(').next().unwrap_or(r).trim());
    let operands = m
        .op_ids()
        .filter_map(|id| {
            let op = m.op(id);
            let space = op.opcode.strip_prefix(super::mnemonic::INLINED_CALL_OPERAND)?.strip_prefix('.')?;
            Some(call_operand(id, op, space))
        })
        .collect();
    EntryInfo { hlo, name, opcode, operands }
}

/// One `inlined_call_operand.<space>` op: its descriptor `[shape: ..., index: N, kind: input]`.
fn call_operand<'a>(id: OpId, op: &Op<'a>, space: &'a str) -> CallOperand<'a> {
    let desc = args(op).iter().find(|a| matches!(a.kind, ValueKind::Group { open: '[', .. }));
    let shape = desc.and_then(|d| d.get("shape"));
    let (element, dims) = match shape.map(|s| &s.kind) {
        Some(ValueKind::Seq(xs)) => {
            (xs.first().and_then(Value::word), xs.get(1).and_then(Value::as_int_list).unwrap_or_default())
        }
        Some(ValueKind::Word(w)) => (Some(*w), Vec::new()),
        _ => (None, Vec::new()),
    };
    CallOperand {
        op: id,
        value: op.name,
        space,
        index: desc.and_then(|d| d.get("index")).and_then(Value::as_int),
        kind: desc.and_then(|d| d.get("kind")).and_then(Value::word),
        element,
        dtype: element.and_then(DType::from_hlo),
        dims,
    }
}
