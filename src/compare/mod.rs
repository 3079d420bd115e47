//! `hlolint compare`: compilations side by side. The command line gathers the facts (the performance model's per
//! kernel, the rules' verdicts per compilation) into a [`Comparison`] — one [`Column`] per compilation
//! (`<version>@<target>`), rows per kernel — and the renderers here print it: a terminal table and Markdown
//! ([`text`]), JSON and CSV ([`machine`]), a self-contained HTML page with inline SVG charts ([`html`], [`svg`]).
//!
//! The structure is deliberately plain (text cells with an optional number) so that every format shows the same
//! table and a new fact is one more row, not a change to five renderers.

pub mod facts;
pub mod html;
pub mod inputs;
pub mod kernels;
pub mod machine;
pub mod rank;
pub mod svg;
pub mod text;

use crate::perf::timeline::Timeline;
use serde::Serialize;

/// Everything one `hlolint compare` run shows.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Comparison {
    pub columns: Vec<Column>,
    /// Kernels aligned across columns (see [`KernelSlot`]).
    pub kernels: Vec<KernelSlot>,
    /// Per target, versions from fastest to slowest predicted.
    pub rankings: Vec<rank::Ranking>,
    /// What the numbers assume (hardware table, `--assume` values), said once under the table.
    pub notes: Vec<String>,
}

impl Comparison {
    /// The rows about whole compilations, shown after the kernels: predicted time and its parts, the bound, the
    /// rules' verdicts. With one kernel the time rows are left out when XLA adds nothing around it (they would
    /// repeat its rows), and the bound is a detail (the kernel's row says it).
    pub fn compilation_rows(&self) -> Vec<Row> {
        let mut rows = self.time_rows();
        let xla = self.columns.iter().any(|c| c.time.is_some_and(|t| t.xla > 0.0));
        if self.kernels.len() == 1 && !xla {
            rows.clear();
        }
        if self.kernels.len() == 1 {
            rows.iter_mut().filter(|r| r.label == "bound").for_each(|r| r.detail = true);
        }
        rows.extend(self.rule_rows());
        rows
    }

    fn time_rows(&self) -> Vec<Row> {
        let time = |f: &dyn Fn(&TimeSplit) -> f64| -> Vec<Cell> {
            self.columns
                .iter()
                .map(|c| match &c.time {
                    Some(t) => Cell::number(seconds(f(t)), f(t)),
                    None => Cell::text("unknown").note_opt(c.untimed.clone()),
                })
                .collect()
        };
        let row =
            |label: &str, group: &str, cells| Row { group: group.into(), label: label.into(), cells, detail: false };
        let detail = |label: &str, cells| Row { detail: true, ..row(label, "time", cells) };
        vec![
            row("predicted", "time", time(&|t| t.total())),
            row("XLA ops", "time", time(&|t| t.xla)),
            detail("compute", time(&|t| t.compute)),
            detail("memory", time(&|t| t.memory)),
            detail("overhead", time(&|t| t.overhead)),
            row(
                "bound",
                "time",
                self.columns.iter().map(|c| Cell::text(c.time.map(|t| t.bound()).unwrap_or("unknown"))).collect(),
            ),
        ]
    }

    fn rule_rows(&self) -> Vec<Row> {
        let row = |label: &str, cells| Row { group: "rules".into(), label: label.into(), cells, detail: false };
        vec![
            row("findings", self.columns.iter().map(|c| verdict_cell(&c.verdicts)).collect()),
            row(
                "fired",
                self.columns
                    .iter()
                    .map(|c| {
                        if c.verdicts.rules.is_empty() {
                            Cell::text("—")
                        } else {
                            Cell::text(c.verdicts.rules.join(" "))
                        }
                    })
                    .collect(),
            ),
        ]
    }

    /// Indices of the columns of each target, targets in the order they first appear.
    pub fn by_target(&self) -> Vec<(&str, Vec<usize>)> {
        let mut out: Vec<(&str, Vec<usize>)> = Vec::new();
        for (i, c) in self.columns.iter().enumerate() {
            match out.iter_mut().find(|(t, _)| *t == c.target) {
                Some((_, v)) => v.push(i),
                None => out.push((&c.target, vec![i])),
            }
        }
        out
    }
}

fn verdict_cell(v: &Verdicts) -> Cell {
    let tone = if v.errors > 0 {
        Tone::Bad
    } else if v.warnings > 0 || v.inconclusive > 0 {
        Tone::Warn
    } else {
        Tone::Good
    };
    Cell::text(v.short()).tone(tone)
}

/// One compilation: a dump folder `<version>@<target>`.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Column {
    pub dir: String,
    pub version: String,
    pub target: String,
    pub verdicts: Verdicts,
    /// The compilation's predicted time (its kernels' sum), when the model could predict every kernel.
    pub time: Option<TimeSplit>,
    /// Why `time` is missing, in one line (`facts::why_untimed`): shown beside the unknown time and in the
    /// target's `why`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub untimed: Option<String>,
}

/// The rules' findings on one compilation, by severity.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Verdicts {
    pub errors: usize,
    pub warnings: usize,
    pub infos: usize,
    pub inconclusive: usize,
    /// The codes (or ids) of the rules that fired, sorted, each once.
    pub rules: Vec<String>,
    /// The packs that ran (`v2-dma (the kernel module's RULES)`).
    pub packs: Option<String>,
}

impl Verdicts {
    /// `2 err 1 warn`, `clean`: short enough for a table cell.
    pub fn short(&self) -> String {
        let mut parts = Vec::new();
        for (n, what) in [(self.errors, "err"), (self.warnings, "warn"), (self.infos, "info"), (self.inconclusive, "?")]
        {
            if n > 0 {
                parts.push(format!("{n} {what}"));
            }
        }
        if parts.is_empty() {
            "clean".into()
        } else {
            parts.join(" ")
        }
    }
}

/// A predicted time in seconds: per kernel `overhead + exposed + max(compute, transfer)` (docs/performance-model.md),
/// summed over the kernels (so `predicted` is kept, not recomputed from the summed terms). `transfer`, `latency`
/// and `exposed` are 0 where the model had no pipeline terms (`predicted` is then `overhead + max(compute,
/// memory)`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct TimeSplit {
    pub overhead: f64,
    pub compute: f64,
    /// HBM bytes at bandwidth.
    pub memory: f64,
    /// The pipelined copies: DMA latency per round plus the bytes streamed.
    pub transfer: f64,
    /// The latency part of `transfer`.
    pub latency: f64,
    /// Copies before the first and after the last grid step.
    pub exposed: f64,
    /// What XLA runs around the kernels, in a whole program: its own programs (fusions, copies, collectives), the
    /// waits for its async copies and the top-level program's bundles. All of a plain XLA program's time.
    pub xla: f64,
    pub predicted: f64,
}

impl TimeSplit {
    /// One kernel's split, without pipeline terms (the tests' columns).
    #[cfg(test)]
    pub fn of(overhead: f64, compute: f64, memory: f64) -> TimeSplit {
        TimeSplit { overhead, compute, memory, predicted: overhead + compute.max(memory), ..TimeSplit::default() }
    }

    pub fn total(&self) -> f64 {
        self.predicted
    }

    /// `compute`, `memory` or `DMA latency`: what the larger of compute and the copies is made of.
    pub fn bound(&self) -> &'static str {
        let copies = self.copies();
        if self.xla > self.compute.max(copies) {
            "XLA ops"
        } else if self.compute >= copies {
            "compute"
        } else if 2.0 * self.latency > copies {
            "DMA latency"
        } else {
            "memory"
        }
    }

    /// The copies the compute overlaps: the pipelined DMA transfers where the model had pipeline terms (a kernel
    /// whose copies are all exposed streams nothing), else HBM bytes at bandwidth.
    pub fn copies(&self) -> f64 {
        if self.transfer > 0.0 || self.exposed > 0.0 {
            self.transfer
        } else {
            self.memory
        }
    }

    pub fn add(&self, o: &TimeSplit) -> TimeSplit {
        TimeSplit {
            overhead: self.overhead + o.overhead,
            compute: self.compute + o.compute,
            memory: self.memory + o.memory,
            transfer: self.transfer + o.transfer,
            latency: self.latency + o.latency,
            exposed: self.exposed + o.exposed,
            xla: self.xla + o.xla,
            predicted: self.predicted + o.predicted,
        }
    }
}

/// One kernel across the columns. Kernels are aligned by position in their compilation (the first kernel of each
/// version in one slot): versions of a kernel usually carry the version in their name (`fp8_mm_v1`, `fp8_mm_v2`),
/// so names would not line up.
#[derive(Clone, Debug, Default, Serialize)]
pub struct KernelSlot {
    /// `kernel 1`, or the kernel's name when every column names it the same.
    pub title: String,
    pub rows: Vec<Row>,
    /// Per column: one steady-state loop iteration, when the column has this kernel and a loop with MXU work.
    pub timelines: Vec<Option<Timeline>>,
    /// Per column: the kernel's LLO loops by the names its author knows (the HTML page's labels; not serialised,
    /// the machine formats keep the facts' own rows).
    #[serde(skip)]
    pub loops: Vec<Vec<kernels::LoopName>>,
}

/// One fact across the columns.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Row {
    /// The block of the table it belongs to (`matmul`, `memory`, `DMA`, `bundles`, `time`, `rules`).
    pub group: String,
    pub label: String,
    /// One per column, in column order.
    pub cells: Vec<Cell>,
    /// Left out of the terminal table, which must fit a screen.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub detail: bool,
}

/// A table cell: the text every format shows, the number behind it for JSON and CSV, and how it reads.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Cell {
    pub text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    #[serde(skip_serializing_if = "Tone::is_plain")]
    pub tone: Tone,
    /// What the text leaves out (why a number is unknown, what a percentage is of): a tooltip in HTML.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Cell {
    pub fn text(s: impl Into<String>) -> Cell {
        Cell { text: s.into(), ..Cell::default() }
    }

    pub fn number(text: impl Into<String>, value: f64) -> Cell {
        Cell { text: text.into(), value: Some(value), ..Cell::default() }
    }

    /// No such kernel or fact in this column.
    pub fn absent() -> Cell {
        Cell::text("—")
    }

    pub fn tone(mut self, t: Tone) -> Cell {
        self.tone = t;
        self
    }

    pub fn note(mut self, n: impl Into<String>) -> Cell {
        self.note = Some(n.into());
        self
    }

    pub fn note_opt(mut self, n: Option<String>) -> Cell {
        self.note = n;
        self
    }

    pub fn with_value(mut self, v: f64) -> Cell {
        self.value = Some(v);
        self
    }
}

/// Whether a cell is good or bad news (colored in HTML, marked in text).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Tone {
    #[default]
    Plain,
    Good,
    Warn,
    Bad,
}

impl Tone {
    fn is_plain(&self) -> bool {
        *self == Tone::Plain
    }
}

/// Seconds in the unit that reads best: `812 ns`, `14.2 µs`, `3.1 ms`, `1.20 s`.
pub fn seconds(s: f64) -> String {
    let (v, unit) = if s < 1e-6 {
        (s * 1e9, "ns")
    } else if s < 1e-3 {
        (s * 1e6, "µs")
    } else if s < 1.0 {
        (s * 1e3, "ms")
    } else {
        (s, "s")
    };
    if v >= 100.0 {
        format!("{v:.0} {unit}")
    } else if v >= 10.0 {
        format!("{v:.1} {unit}")
    } else {
        format!("{v:.2} {unit}")
    }
}

#[cfg(test)]
pub(crate) mod sample;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_pick_their_unit() {
        assert_eq!(seconds(8.12e-7), "812 ns");
        assert_eq!(seconds(1.42e-5), "14.2 µs");
        assert_eq!(seconds(3.1e-3), "3.10 ms");
        assert_eq!(seconds(1.2), "1.20 s");
    }

    #[test]
    fn time_is_overhead_plus_the_larger_side() {
        let t = TimeSplit::of(1.0, 2.0, 5.0);
        assert_eq!(t.total(), 6.0);
        assert_eq!(t.bound(), "memory");
        assert_eq!(t.add(&t).total(), 12.0);
    }

    #[test]
    fn verdicts_in_short() {
        assert_eq!(Verdicts::default().short(), "clean");
        let v = Verdicts { errors: 2, inconclusive: 1, ..Verdicts::default() };
        assert_eq!(v.short(), "2 err 1 ?");
    }
}
