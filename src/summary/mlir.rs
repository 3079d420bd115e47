//! The summary of an MLIR file: StableHLO (ops, custom calls, Pallas kernels decoded from `tpu_custom_call`
//! bodies) or a Mosaic dump (its kernels through the kernel view).

use super::hlo::{call_kernels, CallKernel};
use super::kernel::{self, KernelSummary};
use crate::ir::{Layer, Module};
use crate::parse::calls::DecodedCall;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;

#[derive(Debug, Serialize)]
pub struct MlirSummary {
    pub layer: Layer,
    pub module: String,
    pub functions: usize,
    pub ops: usize,
    pub opcodes: BTreeMap<String, usize>,
    /// `stablehlo.custom_call` targets → the calls (their `kernel_name` when they have one).
    pub custom_calls: BTreeMap<String, Vec<String>>,
    /// Mosaic dumps: the kernels of the file.
    pub kernels: Vec<KernelSummary>,
    /// StableHLO: kernels decoded from `tpu_custom_call` bodies.
    pub call_kernels: Vec<CallKernel>,
}

/// What an MLIR module holds; `stage`: a Mosaic dump's stage; `decoded`: the kernel bodies parsing decoded from its
/// custom calls.
pub fn summarize(m: &Module<'_>, stage: Option<&str>, decoded: &[DecodedCall]) -> MlirSummary {
    let mut opcodes = BTreeMap::new();
    let mut custom_calls: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for id in m.op_ids() {
        let op = m.op(id);
        *opcodes.entry(op.opcode.to_string()).or_insert(0) += 1;
        if op.opcode.ends_with("custom_call") {
            let target = op.attr("call_target_name").and_then(|v| v.word()).unwrap_or("?").trim_start_matches('@');
            let name = op.attr("kernel_name").and_then(|v| v.string()).map(|s| s.into_owned());
            custom_calls.entry(target.to_string()).or_default().push(name.unwrap_or_else(|| format!("%{}", op.name)));
        }
    }
    let mut call_kernels = call_kernels(decoded);
    // A StableHLO custom call has no instruction name: call it by its kernel_name.
    for ck in &mut call_kernels {
        if ck.call.chars().all(|c| c.is_ascii_digit()) {
            ck.call = ck.kernel.name.clone();
        }
    }
    let source = match stage {
        Some(s) => format!("mosaic dump ({s})"),
        None => "mosaic dump".to_string(),
    };
    let kernels =
        crate::semantic::kernel::kernels(m).iter().map(|k| kernel::kernel_summary(k, source.clone())).collect();
    MlirSummary {
        layer: m.layer,
        module: m.name.to_string(),
        functions: m.funcs.len(),
        ops: m.ops.len(),
        opcodes,
        custom_calls,
        kernels,
        call_kernels,
    }
}

pub fn render(path: &str, s: &MlirSummary) -> String {
    let mut out = String::new();
    let name = if s.module.is_empty() { String::new() } else { format!(" `{}`", s.module) };
    let layer = match s.layer {
        Layer::Mosaic => "Mosaic MLIR",
        _ => "StableHLO MLIR",
    };
    let _ = writeln!(out, "{path}: {layer} module{name}");
    let _ = writeln!(out, "  functions: {}, ops: {}", s.functions, s.ops);
    let _ = writeln!(out, "  ops: {}", super::top_counts(&s.opcodes, 10));
    for (target, calls) in &s.custom_calls {
        let _ = writeln!(out, "  custom_call @{target} ×{}: {}", calls.len(), calls.join(", "));
    }
    for k in &s.kernels {
        kernel::render(k, "  ", &mut out);
    }
    for k in &s.call_kernels {
        let _ = writeln!(out, "  custom_call `{}`:", k.call);
        kernel::render(&k.kernel, "    ", &mut out);
    }
    out
}
