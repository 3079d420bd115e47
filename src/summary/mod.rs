//! What `hlolint` prints about each file: one summary type per format, made from the parsed file (its graph and
//! the kernels parsing decoded); nothing here parses.

pub mod hlo;
pub mod kernel;
pub mod link;
pub mod llo;
pub mod mlir;

pub use hlo::{render, summarize, Summary};

use crate::lint::compilation::{Content, Parsed};
use serde::Serialize;

#[derive(Debug, Serialize)]
#[serde(tag = "format", rename_all = "lowercase")]
pub enum FileSummary {
    Hlo(hlo::Summary),
    Mlir(mlir::MlirSummary),
    Llo(llo::LloSummary),
}

/// What a parsed file holds.
pub fn of(p: &Parsed<'_>) -> FileSummary {
    match &p.content {
        Content::Hlo(m) => FileSummary::Hlo(summarize(m, &p.decoded)),
        Content::Mlir(m) => {
            FileSummary::Mlir(mlir::summarize(m, crate::source::mosaic_stage(&p.file.path), &p.decoded))
        }
        Content::Llo(f) => FileSummary::Llo(llo::summarize(f)),
    }
}

/// The human-readable form, a few lines per file.
pub fn render_file(path: &str, s: &FileSummary) -> String {
    match s {
        FileSummary::Hlo(h) => render(path, h),
        FileSummary::Mlir(m) => mlir::render(path, m),
        FileSummary::Llo(l) => llo::render(path, l),
    }
}

/// The most frequent entries of a histogram, largest first: `copy-start 2, fusion 1, … 3 more`.
pub fn top_counts(counts: &std::collections::BTreeMap<String, usize>, shown: usize) -> String {
    let mut all: Vec<_> = counts.iter().collect();
    all.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let mut text: Vec<String> = all.iter().take(shown).map(|(k, v)| format!("{k} {v}")).collect();
    if all.len() > shown {
        text.push(format!("… {} more", all.len() - shown));
    }
    text.join(", ")
}
