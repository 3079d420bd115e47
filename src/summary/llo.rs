//! The summary of an LLO dump: for bundles, the MXU ops per data format (the proof of native fp8), DMAs by
//! route, waits, loops, and where XLA placed the operands of the kernel's entry; for tables, what they hold.

use crate::parse::llo::{LloFile, LloKind};
use crate::semantic::llo::{dma_ops, entry_info, mxu_ops, MxuKind};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;

#[derive(Debug, Serialize)]
pub struct LloSummary {
    pub kind: LloKind,
    /// The computation (HLO instruction) the dump is of: `fusion`, `fp8_mm_v3.1`.
    pub computation: Option<String>,
    /// The HLO instruction of the entry bundle: `%fp8_mm_v3.1 = custom-call(...)`.
    pub entry: Option<String>,
    pub bundles: usize,
    pub ops: usize,
    pub loops: usize,
    /// `vmatmul` count per data format (`f8e4m3fn`, `bf16`, `f32`, `f8e4m3b11.bf16`...).
    pub matmul_formats: BTreeMap<String, usize>,
    /// DMA starts by route (`hbm_to_vmem`, `vmem_to_smem`, ...) and the number of waits.
    pub dma_routes: BTreeMap<String, usize>,
    pub dma_waits: usize,
    /// Entry operands by the memory space XLA placed them in: `vmem` → [`0 f8e4m3fn[1024,1024] input`].
    pub operand_spaces: BTreeMap<String, Vec<String>>,
    /// Rows of a table file.
    pub rows: usize,
}

/// The LLO ops a summary reads: MXU matmuls, DMA starts and waits, the entry's operands. A run that summarises its
/// files but reads no more of LLO programs keeps only these (`parse::llo::Keep`).
pub fn reads(mnemonic: &str) -> bool {
    use crate::semantic::llo::{classify, read_across_layers, OpClass};
    read_across_layers(mnemonic) || matches!(classify(mnemonic), OpClass::DmaStart | OpClass::DmaWait)
}

pub fn summarize(file: &LloFile<'_>) -> LloSummary {
    let mut s = LloSummary {
        kind: file.kind(),
        computation: None,
        entry: None,
        bundles: 0,
        ops: 0,
        loops: 0,
        matmul_formats: BTreeMap::new(),
        dma_routes: BTreeMap::new(),
        dma_waits: 0,
        operand_spaces: BTreeMap::new(),
        rows: 0,
    };
    match file {
        LloFile::Bundles(p) => {
            let m = &p.module;
            s.computation = crate::semantic::link::llo_computation(m, p.computation.as_deref());
            s.bundles = p.bundle_count;
            s.ops = p.op_count;
            s.loops = p.loops.len();
            for x in mxu_ops(m).into_iter().filter(|x| x.kind == MxuKind::Matmul) {
                *s.matmul_formats.entry(matmul_format(x.mnemonic, x.format)).or_insert(0) += 1;
            }
            for d in dma_ops(m) {
                if d.is_wait {
                    s.dma_waits += 1;
                } else {
                    *s.dma_routes.entry(d.route.unwrap_or("?").to_string()).or_insert(0) += 1;
                }
            }
            let e = entry_info(m);
            s.entry = e.hlo.map(str::to_string);
            for o in &e.operands {
                let shape = match (o.element, o.dims.is_empty()) {
                    (Some(el), false) => {
                        let dims: Vec<String> = o.dims.iter().map(|d| d.to_string()).collect();
                        format!("{el}[{}]", dims.join(","))
                    }
                    (Some(el), true) => el.to_string(),
                    _ => "?".into(),
                };
                let desc =
                    format!("{} {shape} {}", o.index.map(|i| i.to_string()).unwrap_or_default(), o.kind.unwrap_or(""));
                s.operand_spaces.entry(o.space.to_string()).or_default().push(desc.trim().to_string());
            }
        }
        table => s.rows = table.rows(),
    }
    s
}

/// The data format of a `vmatmul`: its dtype modifiers, kept together (`f8e4m3b11.bf16` on v6e says fp8 widened
/// to bf16, which neither part alone says).
fn matmul_format(mnemonic: &str, format: Option<&str>) -> String {
    let dtypes: Vec<&str> = mnemonic
        .split('.')
        .filter(|p| crate::ir::DType::from_hlo(p).is_some() || p.starts_with("f8") || p.starts_with("f4"))
        .collect();
    if dtypes.is_empty() {
        format.unwrap_or("?").to_string()
    } else {
        dtypes.join(".")
    }
}

pub fn render(path: &str, s: &LloSummary) -> String {
    let mut out = String::new();
    let comp = s.computation.as_deref().map(|c| format!(" of `{c}`")).unwrap_or_default();
    if s.kind != LloKind::Bundles {
        let _ = writeln!(out, "{path}: {}{comp}, {} rows", s.kind.name().to_uppercase(), s.rows);
        return out;
    }
    let _ = writeln!(out, "{path}: LLO bundles{comp}");
    if let Some(e) = &s.entry {
        let _ = writeln!(out, "  entry: {e}");
    }
    let _ = writeln!(out, "  bundles: {}, ops: {}, loops: {}", s.bundles, s.ops, s.loops);
    let mm: Vec<String> = s.matmul_formats.iter().map(|(k, v)| format!("{k} ×{v}")).collect();
    let _ = writeln!(out, "  MXU matmuls: {}", if mm.is_empty() { "none".into() } else { mm.join(", ") });
    if !s.dma_routes.is_empty() || s.dma_waits > 0 {
        let routes: Vec<String> = s.dma_routes.iter().map(|(k, v)| format!("{k} ×{v}")).collect();
        let _ = writeln!(
            out,
            "  DMA starts: {}; waits: {}",
            if routes.is_empty() { "none".into() } else { routes.join(", ") },
            s.dma_waits
        );
    }
    for (space, ops) in &s.operand_spaces {
        let _ = writeln!(out, "  operands in {space}: {}", ops.join("; "));
    }
    out
}
