//! Typed views of HLO instruction attributes that rules and summaries read: backend_config JSON, metadata,
//! control predecessors, fusion kind, custom-call target. These read attribute syntax only (no op's meaning, which is
//! `semantic`'s), and the parser needs them itself (`parse::calls` finds the custom calls whose bodies it decodes by
//! their target), so they live with the graph.

use super::graph::{Module, OpId};
use super::value::{Value, ValueKind};

impl<'a> Module<'a> {
    /// `backend_config` as JSON, whether printed raw (`backend_config={...}`) or as an escaped string.
    pub fn backend_config(&self, op: OpId) -> Option<serde_json::Value> {
        let v = self.op(op).attr("backend_config")?;
        json_of(self.text, v)
    }

    /// `metadata={op_name="..."}`.
    pub fn op_name(&self, op: OpId) -> Option<String> {
        let md = self.op(op).attr("metadata")?;
        md.get("op_name")?.string().map(|s| s.into_owned())
    }

    /// `custom_call_target="..."`.
    pub fn custom_call_target(&self, op: OpId) -> Option<String> {
        self.op(op).attr("custom_call_target")?.string().map(|s| s.into_owned())
    }

    /// `control-predecessors={%a, %b}` resolved to ops of the same computation.
    pub fn control_predecessors(&self, op: OpId) -> Vec<OpId> {
        let Some(v) = self.op(op).attr("control-predecessors") else { return Vec::new() };
        let func = self.func_of(op);
        let ops = self.body_ops(func);
        v.as_name_list().into_iter().filter_map(|n| ops.iter().copied().find(|&o| self.op(o).name == n)).collect()
    }
}

/// Parses a value holding JSON: a raw `{...}` group (its source text) or a string containing JSON.
pub fn json_of(src: &str, v: &Value<'_>) -> Option<serde_json::Value> {
    match &v.kind {
        ValueKind::Str(_) => serde_json::from_str(&v.string()?).ok(),
        ValueKind::Group { open: '{', .. } => serde_json::from_str(v.span.text(src)).ok(),
        ValueKind::Raw(text) => serde_json::from_str(text).ok(),
        _ => None,
    }
}
