//! The summary of an HLO file: what the module holds (computations, instructions, opcodes, async pairs, memory
//! spaces, custom calls, and the Pallas kernels decoded from `tpu_custom_call` bodies). The full graph `hlolint
//! graph` prints is `ir::print::graph_dump`.

use super::kernel::{self, KernelSummary};
use crate::ir::{Layer, Module};
use crate::parse::calls::DecodedCall;
use crate::semantic::async_pairs::async_pairs;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;

#[derive(Debug, Serialize)]
pub struct Summary {
    pub layer: Layer,
    pub module: String,
    pub scheduled: bool,
    pub entry: Option<String>,
    pub computations: usize,
    pub instructions: usize,
    pub opcodes: BTreeMap<String, usize>,
    /// Per async family (`copy`, `all-gather`, `async`, `send`...): matched pairs.
    pub async_pairs: BTreeMap<String, usize>,
    pub unmatched_starts: Vec<String>,
    pub orphan_dones: Vec<String>,
    /// Number of array values (instruction results, tuple leaves included) per HLO memory space `S(n)`.
    pub memory_spaces: BTreeMap<i64, usize>,
    /// custom_call_target → instruction names.
    pub custom_calls: BTreeMap<String, Vec<String>>,
    /// Pallas kernels decoded from `tpu_custom_call` bodies, by custom-call instruction.
    pub kernels: Vec<CallKernel>,
}

#[derive(Debug, Serialize)]
pub struct CallKernel {
    /// The custom-call instruction (`fp8_mm_v3.1`): LLO dumps of the kernel carry this name.
    pub call: String,
    #[serde(flatten)]
    pub kernel: KernelSummary,
}

/// The kernel view of every body decoded from a `tpu_custom_call` of the file.
pub fn call_kernels(decoded: &[DecodedCall]) -> Vec<CallKernel> {
    let mut kernels = Vec::new();
    for d in decoded {
        let module = d.kernel.module.module();
        let source = format!("tpu_custom_call body (MLIR bytecode v{})", d.kernel.module.version);
        for view in crate::semantic::kernel::kernels(&module) {
            kernels
                .push(CallKernel { call: d.call_name.clone(), kernel: kernel::kernel_summary(&view, source.clone()) });
        }
    }
    kernels
}

/// What an HLO module holds; `decoded`: the kernel bodies parsing decoded from its custom calls.
pub fn summarize(m: &Module<'_>, decoded: &[DecodedCall]) -> Summary {
    let mut opcodes = BTreeMap::new();
    let mut memory_spaces = BTreeMap::new();
    let mut custom_calls: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for op in &m.ops {
        *opcodes.entry(op.opcode.to_string()).or_insert(0) += 1;
        if let Some(shape) = op.shape() {
            for leaf in shape.leaves() {
                let space = leaf.layout.as_ref().and_then(|l| l.memory_space).unwrap_or(0);
                *memory_spaces.entry(space).or_insert(0) += 1;
            }
        }
        if crate::semantic::op::is_custom_call(op.opcode) {
            let target = op.attr("custom_call_target").and_then(|v| v.string()).unwrap_or_default();
            custom_calls.entry(target.into_owned()).or_default().push(op.name.to_string());
        }
    }
    let pairs = async_pairs(m);
    let mut async_counts = BTreeMap::new();
    for (family, _, _) in &pairs.pairs {
        *async_counts.entry(family.clone()).or_insert(0) += 1;
    }
    let names = |ids: &[crate::ir::OpId]| ids.iter().map(|&i| m.op(i).name.to_string()).collect();
    Summary {
        layer: m.layer,
        module: m.name.to_string(),
        scheduled: m.scheduled,
        entry: m.entry.map(|f| m.func(f).name.to_string()),
        computations: m.funcs.len(),
        instructions: m.ops.len(),
        opcodes,
        async_pairs: async_counts,
        unmatched_starts: names(&pairs.unmatched_starts),
        orphan_dones: names(&pairs.orphan_dones),
        memory_spaces,
        custom_calls,
        kernels: call_kernels(decoded),
    }
}

/// Human-readable form of a summary, a few lines per file.
pub fn render(path: &str, s: &Summary) -> String {
    let mut out = String::new();
    let sched = if s.scheduled { ", scheduled" } else { "" };
    let _ = writeln!(out, "{path}: {} module `{}`{sched}", s.layer.name().to_uppercase(), s.module);
    let entry = s.entry.as_deref().unwrap_or("-");
    let _ = writeln!(out, "  computations: {} (entry `{entry}`), instructions: {}", s.computations, s.instructions);
    let _ = writeln!(out, "  opcodes: {}", super::top_counts(&s.opcodes, 12));
    if !s.async_pairs.is_empty() || !s.unmatched_starts.is_empty() || !s.orphan_dones.is_empty() {
        let pairs: Vec<String> = s.async_pairs.iter().map(|(k, v)| format!("{k} {v}")).collect();
        let _ = write!(out, "  async pairs: {}", if pairs.is_empty() { "none".into() } else { pairs.join(", ") });
        if !s.unmatched_starts.is_empty() {
            let _ = write!(out, "; starts without done: {}", s.unmatched_starts.join(", "));
        }
        if !s.orphan_dones.is_empty() {
            let _ = write!(out, "; dones without start: {}", s.orphan_dones.join(", "));
        }
        out.push('\n');
    }
    let spaces: Vec<String> = s.memory_spaces.iter().map(|(k, v)| format!("S({k}) {v}")).collect();
    let _ = writeln!(out, "  memory spaces (values): {}", spaces.join(", "));
    for (target, names) in &s.custom_calls {
        let list = if names.len() > 4 { format!("{}, …", names[..4].join(", ")) } else { names.join(", ") };
        let _ = writeln!(out, "  custom-call {target:?} ×{}: {list}", names.len());
    }
    for k in &s.kernels {
        let _ = writeln!(out, "  custom-call `{}`:", k.call);
        kernel::render(&k.kernel, "    ", &mut out);
    }
    out
}
