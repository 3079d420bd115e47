//! What the table says about each kernel of a compilation.

use super::kernels::KernelView;
use super::Cell;
use crate::ir::Layer;
use crate::lint::Compilation;
use crate::parse::llo::view;
use crate::perf::timeline;

/// The compilation's kernels: its LLO programs that feed the MXU (copies and the host program do not), in file
/// order.
pub fn kernels(c: &Compilation<'_>) -> Vec<KernelView> {
    let mut out = Vec::new();
    for (_, u) in c.units_of(Layer::Llo) {
        let m = &*u.module;
        let formats = view::matmul_formats(m);
        if view::mxu_ops(m).is_empty() {
            continue;
        }
        let mut k = KernelView { name: m.name.to_string(), ..KernelView::default() };
        let text = if formats.is_empty() {
            "none".to_string()
        } else {
            formats.iter().map(|(f, n)| format!("{f}×{n}")).collect::<Vec<_>>().join(" ")
        };
        k.fact("matmul", "MXU formats", Cell::text(text));
        k.timeline = timeline::steady_state(m);
        match &k.timeline {
            Some(t) => k.fact("bundles", "loop body", Cell::number(t.bundles.to_string(), t.bundles as f64)),
            None => k.fact("bundles", "loop body", Cell::text("no loop")),
        }
        out.push(k);
    }
    out
}
