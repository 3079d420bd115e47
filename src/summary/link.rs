//! Links the layers of one compilation by name, for the summary, through `semantic::link`'s relations (the analyses
//! link a compilation's units with `analysis::crosslink`, through the same ones; the summary has only the files'
//! summaries, the compilations are gone when it is written): the HLO custom call `%fp8_mm_v3.1` ↔ its Mosaic
//! function `@fp8_mm_v3` (a dump, or the body decoded from the call) ↔ the LLO dump of computation
//! `fp8_mm_v3.1`; an XLA fusion ↔ the LLO dump of the same name. Files are grouped per dump directory (the folder
//! holding `hlo/`, `mosaic/`, `llo/`, or the folder of the files themselves).

use super::FileSummary;
use crate::semantic::link::{base_name, is_runtime_computation};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;

#[derive(Debug, Serialize)]
pub struct Group {
    pub dir: String,
    pub modules: Vec<String>,
    pub items: Vec<Item>,
}

/// One compiled computation seen across layers.
#[derive(Debug, Serialize)]
pub struct Item {
    /// The HLO instruction: the custom call or fusion name (`fp8_mm_v3.1`, `fusion`).
    pub name: String,
    /// `kernel` for a Pallas custom call, else `computation`.
    pub kind: &'static str,
    /// The kernel function (`fp8_mm_v3`) and where it was seen: `tpu_custom_call body`, Mosaic dump stages.
    pub kernel: Option<String>,
    pub mosaic_stages: Vec<String>,
    pub decoded_from_hlo: bool,
    /// From the LLO final bundles of the computation.
    pub llo_file: Option<String>,
    pub mxu: BTreeMap<String, usize>,
    pub dma_routes: BTreeMap<String, usize>,
    pub dma_waits: usize,
}

pub fn link(files: &[(String, FileSummary)]) -> Vec<Group> {
    let mut by_dir: BTreeMap<String, Vec<&(String, FileSummary)>> = BTreeMap::new();
    for f in files {
        by_dir.entry(crate::lint::compilation::group_dir(&f.0)).or_default().push(f);
    }
    let mut out = Vec::new();
    for (dir, files) in by_dir {
        let mut items: BTreeMap<String, Item> = BTreeMap::new();
        let mut modules = Vec::new();
        let new_item = |name: &str, kind| Item {
            name: name.to_string(),
            kind,
            kernel: None,
            mosaic_stages: Vec::new(),
            decoded_from_hlo: false,
            llo_file: None,
            mxu: BTreeMap::new(),
            dma_routes: BTreeMap::new(),
            dma_waits: 0,
        };
        // HLO: kernels by custom call (scheduled modules are after optimizations: their names are the LLO's).
        for (_, s) in &files {
            if let FileSummary::Hlo(h) = s {
                if !modules.contains(&h.module) {
                    modules.push(h.module.clone());
                }
                if !h.scheduled {
                    continue;
                }
                for k in &h.kernels {
                    let it = items.entry(k.call.clone()).or_insert_with(|| new_item(&k.call, "kernel"));
                    it.kernel = Some(k.kernel.name.clone());
                    it.decoded_from_hlo = true;
                }
            }
        }
        // LLO: final bundles per computation (the top-level program and the runtime's own are not ops of the model).
        for (path, s) in &files {
            let FileSummary::Llo(l) = s else { continue };
            let Some(comp) = l.computation.as_deref() else { continue };
            if l.kind != crate::parse::llo::LloKind::Bundles || is_runtime_computation(comp) {
                continue;
            }
            let it = items.entry(comp.to_string()).or_insert_with(|| new_item(comp, "computation"));
            it.llo_file = Some(path.clone());
            it.mxu = l.matmul_formats.clone();
            it.dma_routes = l.dma_routes.clone();
            it.dma_waits = l.dma_waits;
        }
        // Mosaic: kernels by function name.
        for (path, s) in &files {
            let FileSummary::Mlir(m) = s else { continue };
            for k in &m.kernels {
                let stage = crate::source::mosaic_stage(path).unwrap_or("mosaic").to_string();
                let found = items
                    .values_mut()
                    .find(|it| it.kernel.as_deref() == Some(&k.name) || base_name(&it.name) == k.name);
                let it = match found {
                    Some(it) => it,
                    None => items.entry(k.name.clone()).or_insert_with(|| new_item(&k.name, "kernel")),
                };
                it.kind = "kernel";
                it.kernel = Some(k.name.clone());
                if !it.mosaic_stages.contains(&stage) {
                    it.mosaic_stages.push(stage);
                }
            }
        }
        // Computations without a kernel or MXU work (copies, the runtime's own programs) are not worth a line.
        let items: Vec<Item> = items.into_values().filter(|it| it.kind == "kernel" || !it.mxu.is_empty()).collect();
        if !items.is_empty() {
            out.push(Group { dir, modules, items });
        }
    }
    out
}

pub fn render(groups: &[Group]) -> String {
    let mut out = String::new();
    for g in groups {
        let modules = if g.modules.is_empty() { String::new() } else { format!(" (module {})", g.modules.join(", ")) };
        let _ = writeln!(out, "linked across layers in {}{modules}:", if g.dir.is_empty() { "." } else { &g.dir });
        for it in &g.items {
            let mut parts = Vec::new();
            if let Some(k) = &it.kernel {
                let mut seen = Vec::new();
                if it.decoded_from_hlo {
                    seen.push("tpu_custom_call body".to_string());
                }
                seen.extend(it.mosaic_stages.iter().map(|s| format!("mosaic {s}")));
                parts.push(format!("kernel @{k} ({})", seen.join(", ")));
            }
            if it.llo_file.is_some() {
                let mxu: Vec<String> = it.mxu.iter().map(|(k, v)| format!("{k} ×{v}")).collect();
                let mut llo = format!("LLO MXU {}", if mxu.is_empty() { "none".into() } else { mxu.join(", ") });
                if !it.dma_routes.is_empty() || it.dma_waits > 0 {
                    let routes: Vec<String> = it.dma_routes.iter().map(|(k, v)| format!("{k} ×{v}")).collect();
                    let _ = write!(llo, "; DMA {} (waits {})", routes.join(", "), it.dma_waits);
                }
                parts.push(llo);
            } else {
                parts.push("no LLO dump".into());
            }
            let _ = writeln!(out, "  {} `{}`: {}", it.kind, it.name, parts.join(" · "));
        }
    }
    out
}
