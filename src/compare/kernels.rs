//! Kernels of each column lined up into [`KernelSlot`]s: what one compilation says about each of its kernels
//! ([`KernelView`], facts as labelled cells) becomes rows with one cell per column.

use super::{Cell, KernelSlot, Row};
use crate::perf::timeline::Timeline;

/// One kernel of one compilation, as the table shows it.
#[derive(Clone, Debug, Default)]
pub struct KernelView {
    pub name: String,
    /// `(group, label, cell)` in display order.
    pub facts: Vec<(String, String, Cell)>,
    pub timeline: Option<Timeline>,
}

impl KernelView {
    pub fn fact(&mut self, group: &str, label: &str, cell: Cell) {
        self.facts.push((group.to_string(), label.to_string(), cell));
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
    let mut keys: Vec<(&str, &str)> = Vec::new();
    for v in views.iter().flatten() {
        for (g, l, _) in &v.facts {
            if !keys.contains(&(g.as_str(), l.as_str())) {
                keys.push((g, l));
            }
        }
    }
    let mut rows = vec![Row {
        group: "kernel".into(),
        label: "name".into(),
        cells: views.iter().map(|v| v.map(|v| Cell::text(&v.name)).unwrap_or_else(Cell::absent)).collect(),
    }];
    // facts of one group stay together whatever order columns list them in
    let first_seen = keys.clone();
    keys.sort_by_key(|(g, _)| group_rank(&first_seen, g));
    for (g, l) in &keys {
        let cells = views
            .iter()
            .map(|v| {
                v.and_then(|v| v.facts.iter().find(|(fg, fl, _)| fg == g && fl == l))
                    .map(|f| f.2.clone())
                    .unwrap_or_else(Cell::absent)
            })
            .collect();
        rows.push(Row { group: g.to_string(), label: l.to_string(), cells });
    }
    let timelines = views.iter().map(|v| v.and_then(|v| v.timeline.clone())).collect();
    KernelSlot { title, rows, timelines }
}

/// The position a group was first seen at.
fn group_rank(keys: &[(&str, &str)], group: &str) -> usize {
    keys.iter().position(|(g, _)| *g == group).unwrap_or(usize::MAX)
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
        let slots = align(&cols);
        assert_eq!(slots.len(), 2);
        assert_eq!(slots[0].title, "kernel 1");
        let labels: Vec<&str> = slots[0].rows.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(labels, ["name", "format", "flops", "bundles", "starts"]);
        let starts = &slots[0].rows[4];
        assert_eq!(starts.cells.iter().map(|c| c.text.as_str()).collect::<Vec<_>>(), ["—", "2", "—"]);
        assert_eq!(slots[1].title, "copy");
        assert_eq!(slots[1].rows[0].cells[0].text, "—");
        assert_eq!(slots[0].timelines.len(), 3);
    }
}
