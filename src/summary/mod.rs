//! What `hlolint` prints about each file: one summary type per format, and the dispatch from a source file to its
//! parser and summary.

pub mod hlo;
pub mod kernel;
pub mod link;
pub mod llo;
pub mod mlir;

pub use hlo::{graph_dump, render, summarize, GraphDump, Summary};

use crate::source::SourceFile;
use miette::{Diagnostic, NamedSource, SourceSpan};
use serde::Serialize;

#[derive(Debug, Serialize)]
#[serde(tag = "format", rename_all = "lowercase")]
pub enum FileSummary {
    Hlo(hlo::Summary),
    Mlir(mlir::MlirSummary),
    Llo(llo::LloSummary),
}

/// A kernel body inside a custom call that could not be decoded: reported on the custom call's span, while the
/// rest of the file is summarized (and linted) as usual.
#[derive(Debug, thiserror::Error, Diagnostic)]
#[error("cannot decode the Pallas kernel of `{call}`: {message}")]
#[diagnostic(
    code(hlolint::kernel::decode),
    help("the rest of the file is still checked; kernel-level facts of this call are missing")
)]
pub struct KernelDecodeError {
    pub call: String,
    pub message: String,
    #[source_code]
    pub src: NamedSource<String>,
    #[label("this backend_config holds the kernel body")]
    pub span: SourceSpan,
}

/// Kernel bodies the summary could not decode, as diagnostics on their custom call.
pub fn decode_problems(file: &SourceFile, s: &FileSummary) -> Vec<miette::Report> {
    let errors = match s {
        FileSummary::Hlo(h) => &h.kernel_errors,
        FileSummary::Mlir(m) => &m.kernel_errors,
        FileSummary::Llo(_) => return Vec::new(),
    };
    errors
        .iter()
        .map(|e| {
            miette::Report::new(KernelDecodeError {
                call: e.call.clone(),
                message: e.message.clone(),
                src: NamedSource::new(&file.path, file.text.clone()),
                span: e.span.into(),
            })
        })
        .collect()
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
