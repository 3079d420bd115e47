//! Kernels of each column lined up into [`KernelSlot`]s: what one compilation says about each of its kernels
//! ([`KernelView`], facts as labelled cells) becomes rows with one cell per column.

use super::{Cell, KernelSlot, Row};
use crate::perf::timeline::Timeline;

/// One kernel of one compilation, as the table shows it.
#[derive(Clone, Debug, Default)]
pub struct KernelView {
    pub name: String,
    /// `(group, label, cell, detail)` in display order (`detail`: not in the terminal table).
    pub facts: Vec<(String, String, Cell, bool)>,
    pub timeline: Option<Timeline>,
    /// The LLO program's loops, named as the kernel's author knows them where they can be.
    pub loops: Vec<LoopName>,
}

/// An LLO loop as its kernel's author knows it: the grid of the `pallas_call`, or a loop of the kernel at its
/// Python line (matched by the performance model's cross-check of trip counts); none for a loop of the compiler's
/// own (a copy or an initialisation the kernel does not write as a loop).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LoopName {
    /// The LLO loop (`region95`) and its nesting (1: outermost).
    pub region: String,
    pub level: u32,
    /// Times the body runs per entry, as the LLO's exit test says (`18`, `1–4`, `?`).
    pub trips: String,
    /// `grid`, `loop at kernels.py:163`, `scf.for fp8_mm_v2/arg10`; None for the compiler's own loops.
    pub name: Option<String>,
    /// The Python `file:line` the name points at, as the dumps record it (a tooltip: the path is long).
    pub python: Option<String>,
    /// What the count is made of when it is not the kernel's own number: `16 grid steps + 2 pipeline stages`.
    pub note: Option<String>,
}

impl KernelView {
    pub fn fact(&mut self, group: &str, label: &str, cell: Cell) {
        self.facts.push((group.to_string(), label.to_string(), cell, false));
    }

    pub fn detail(&mut self, group: &str, label: &str, cell: Cell) {
        self.facts.push((group.to_string(), label.to_string(), cell, true));
    }
}

/// Slots by position: the i-th kernel of every column in slot i. Rows are the union of the facts' labels in the
/// order first seen; a column without the kernel or the fact shows `—`.
pub fn align(columns: &[Vec<KernelView>]) -> Vec<KernelSlot> {
    let n = columns.iter().map(Vec::len).max().unwrap_or(0);
    (0..n).map(|i| slot(i, columns)).collect()
}

fn slot(i: usize, columns: &[Vec<KernelView>]) -> KernelSlot {
    let views: Vec<Option<&KernelView>> = columns.iter().map(|c| c.get(i)).collect();
    let names: Vec<&str> = views.iter().flatten().map(|v| v.name.as_str()).collect();
    let title = match names.first() {
        Some(first) if names.iter().all(|n| n == first) => first.to_string(),
        _ => format!("kernel {}", i + 1),
    };
    // (group, label, detail) in the order first seen, then facts of one group brought together whatever order
    // the columns list them in
    let mut keys: Vec<(&str, &str, bool)> = Vec::new();
    for v in views.iter().flatten() {
        for (g, l, _, d) in &v.facts {
            if !keys.iter().any(|(kg, kl, _)| kg == g && kl == l) {
                keys.push((g, l, *d));
            }
        }
    }
    let groups: Vec<&str> = keys.iter().map(|k| k.0).collect();
    keys.sort_by_key(|(g, _, _)| groups.iter().position(|x| x == g));
    let mut rows = vec![Row {
        group: "kernel".into(),
        label: "name".into(),
        cells: views.iter().map(|v| v.map(|v| Cell::text(&v.name)).unwrap_or_else(Cell::absent)).collect(),
        detail: false,
    }];
    for &(g, l, detail) in &keys {
        let cells = views
            .iter()
            .map(|v| {
                v.and_then(|v| v.facts.iter().find(|(fg, fl, _, _)| fg == g && fl == l))
                    .map(|f| f.2.clone())
                    .unwrap_or_else(Cell::absent)
            })
            .collect();
        rows.push(Row { group: g.to_string(), label: l.to_string(), cells, detail });
    }
    let timelines = views.iter().map(|v| v.and_then(|v| v.timeline.clone())).collect();
    let loops = views.iter().map(|v| v.map(|v| v.loops.clone()).unwrap_or_default()).collect();
    KernelSlot { title, rows, timelines, loops }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(name: &str, facts: &[(&str, &str, &str)]) -> KernelView {
        let mut v = KernelView { name: name.into(), ..KernelView::default() };
        for (g, l, t) in facts {
            v.fact(g, l, Cell::text(*t));
        }
        v
    }

    #[test]
    fn kernels_line_up_by_position_with_the_union_of_facts() {
        let cols = vec![
            vec![view("mm_v1", &[("matmul", "format", "native"), ("time", "bundles", "40")])],
            vec![
                view("mm_v2", &[("matmul", "format", "upcast"), ("dma", "starts", "2"), ("matmul", "flops", "1")]),
                view("copy", &[]),
            ],
            vec![],
        ];
        let mut cols = cols;
        cols[0][0].detail("matmul", "operands", Cell::text("f8·f8→f32"));
        let slots = align(&cols);
        assert_eq!(slots.len(), 2);
        assert_eq!(slots[0].title, "kernel 1");
        let labels: Vec<&str> = slots[0].rows.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(labels, ["name", "format", "operands", "flops", "bundles", "starts"]);
        let detail: Vec<bool> = slots[0].rows.iter().map(|r| r.detail).collect();
        assert_eq!(detail, [false, false, true, false, false, false]);
        let starts = &slots[0].rows[5];
        assert_eq!(starts.cells.iter().map(|c| c.text.as_str()).collect::<Vec<_>>(), ["—", "2", "—"]);
        assert_eq!(slots[1].title, "copy");
        assert_eq!(slots[1].rows[0].cells[0].text, "—");
        assert_eq!(slots[0].timelines.len(), 3);
    }
}
