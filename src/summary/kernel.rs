//! A Pallas kernel in a few facts (grid, arguments with roles and memory spaces, DMAs, matmul dtypes), from a
//! Mosaic dump or from the bytecode body of a `tpu_custom_call`: the same view either way.

use crate::semantic::kernel::{ArgRole, Kernel};
use serde::Serialize;
use std::fmt::Write;

#[derive(Debug, Serialize)]
pub struct KernelSummary {
    pub name: String,
    /// Where the facts come from: `mosaic dump` or `tpu_custom_call body (bytecode v0)`.
    pub source: String,
    pub grid: Vec<i64>,
    pub dimension_semantics: Vec<String>,
    pub args: Vec<ArgSummary>,
    pub dma_starts: usize,
    pub dma_waits: usize,
    pub matmuls: Vec<String>,
    pub loops: usize,
    pub conditionals: usize,
}

#[derive(Debug, Serialize)]
pub struct ArgSummary {
    pub index: usize,
    pub role: String,
    #[serde(rename = "type")]
    pub ty: String,
    pub memory_space: Option<String>,
}

pub fn kernel_summary(k: &Kernel<'_>, source: String) -> KernelSummary {
    let role = |r: ArgRole| match r {
        ArgRole::GridIndex(i) => format!("grid index {i}"),
        ArgRole::ScalarPrefetch(i) => format!("scalar prefetch {i}"),
        ArgRole::Window(i) => format!("window {i}"),
        ArgRole::Operand(i) => format!("operand {i}"),
        ArgRole::Scratch(i) => format!("scratch {i}"),
    };
    KernelSummary {
        name: k.name.to_string(),
        source,
        grid: k.iteration_bounds.clone(),
        dimension_semantics: k.dimension_semantics.iter().map(|s| s.to_string()).collect(),
        args: k
            .args
            .iter()
            .map(|a| ArgSummary {
                index: a.index,
                role: role(a.role),
                ty: a.ty.as_ref().map(|t| t.to_string()).unwrap_or_else(|| "?".into()),
                memory_space: a.memory_space.map(|s| short_space(s).to_string()),
            })
            .collect(),
        dma_starts: k.dma_starts.len(),
        dma_waits: k.dma_waits.len(),
        matmuls: k
            .matmuls
            .iter()
            .map(|mm| {
                let d = |x: Option<crate::ir::DType>| x.map(|d| d.name()).unwrap_or("?");
                let mut s = format!("{} {}×{}", mm.opcode, d(mm.lhs), d(mm.rhs));
                if mm.acc.is_some() || mm.result.is_some() {
                    let _ = write!(s, "→{}", d(mm.acc.or(mm.result)));
                }
                if let Some(f) = mm.data_format {
                    let _ = write!(s, " [{f}]");
                }
                s
            })
            .collect(),
        loops: k.loops.len(),
        conditionals: k.conditionals.len(),
    }
}

/// `#tpu.memory_space<vmem>` → `vmem`.
fn short_space(s: &str) -> &str {
    s.rsplit_once('<').map(|(_, r)| r.trim_end_matches('>')).unwrap_or(s)
}

pub fn render(k: &KernelSummary, indent: &str, out: &mut String) {
    let grid = if k.grid.is_empty() {
        "no grid".to_string()
    } else {
        let dims: Vec<String> = k.grid.iter().map(|g| g.to_string()).collect();
        format!("grid [{}] ({})", dims.join(", "), k.dimension_semantics.join(", "))
    };
    let _ = writeln!(out, "{indent}kernel `{}` from the {}: {grid}", k.name, k.source);
    for a in &k.args {
        let space = a.memory_space.as_deref().map(|s| format!(" in {s}")).unwrap_or_default();
        let _ = writeln!(out, "{indent}  arg {}: {} {}{space}", a.index, a.role, a.ty);
    }
    let mm = if k.matmuls.is_empty() { "none".into() } else { k.matmuls.join(", ") };
    let _ = writeln!(
        out,
        "{indent}  DMA starts {}, waits {}; loops {}, conditionals {}; matmuls: {mm}",
        k.dma_starts, k.dma_waits, k.loops, k.conditionals
    );
}
