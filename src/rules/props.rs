//! What rules read of an op: its result's element type, memory space, rank and size, an attribute's text, a
//! metadata field, a custom call's target — for matchers (`matcher/`) and message templates (`engine.rs`) alike.

use crate::ir::mlir_type::{space_name, MlirType};
use crate::ir::{DType, Layer, Module, OpId, Type};

/// The element type of an op's (first) result.
pub fn result_dtype(m: &Module<'_>, id: OpId) -> Option<DType> {
    let op = m.op(id);
    match &op.ty {
        Type::Shape(s) => s.dtype(),
        Type::Mlir(t) => t.result(0).and_then(MlirType::dtype).or_else(|| t.dtype()),
        _ if m.layer == Layer::Llo => crate::semantic::llo::mnemonic_dtype(op.opcode).map(|d| d.0),
        _ => None,
    }
}

/// The result's memory space: HLO `S(n)` as `S(n)`, Mosaic `#tpu.memory_space<vmem>` as `vmem`.
pub fn memory_space(m: &Module<'_>, id: OpId) -> Option<String> {
    match &m.op(id).ty {
        Type::Shape(s) => s.memory_space().map(|n| format!("S({n})")),
        Type::Mlir(t) => t.result(0).unwrap_or(t).memory_space().map(|s| space_name(s).to_string()),
        _ => None,
    }
}

/// The result's rank and number of elements (static shapes only).
pub fn rank_elements(m: &Module<'_>, id: OpId) -> (Option<usize>, Option<i64>) {
    match &m.op(id).ty {
        Type::Shape(s) => match s.array() {
            Some(a) => (Some(a.rank()), a.elements()),
            None => (None, None),
        },
        Type::Mlir(t) => match t.result(0).unwrap_or(t).shaped() {
            Some(st) => (st.rank(), st.num_elements()),
            None => (None, None),
        },
        _ => (None, None),
    }
}

/// An attribute's text as written (decoded kernels have no text: their value's rendering). An LLO op's `bundle` and
/// `slot` are its issue position, kept beside the attributes rather than among them.
pub fn attr_text(m: &Module<'_>, id: OpId, key: &str) -> Option<String> {
    let op = m.op(id);
    match (key, op.issue) {
        ("bundle", Some(i)) => return Some(i.bundle.to_string()),
        ("slot", Some(i)) => return Some(i.slot.to_string()),
        _ => {}
    }
    let a = op.attr_entry(key)?;
    let t = a.value_span().text(m.text);
    if t.is_empty() {
        Some(format!("{:?}", a.value().kind))
    } else {
        Some(t.to_string())
    }
}

pub fn metadata_field(m: &Module<'_>, id: OpId, key: &str) -> Option<String> {
    if key == "source" {
        return m.source_stack(id).first().map(|l| format!("{}:{}", l.file, l.line));
    }
    let md = m.op(id).attr("metadata")?;
    let v = md.get(key)?;
    v.string().map(|s| s.into_owned()).or_else(|| v.as_int().map(|i| i.to_string()))
}

pub fn custom_call_target(m: &Module<'_>, id: OpId) -> Option<String> {
    if m.layer == Layer::Hlo {
        return m.custom_call_target(id);
    }
    let v = m.op(id).attr("call_target_name")?;
    v.string().map(|s| s.trim_start_matches('@').to_string())
}
