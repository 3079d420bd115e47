//! hlolint: a linter for XLA compiler output.
//!
//! Data flow: `source` reads files and sniffs their format → `parse::*` turns text into the shared graph
//! (`ir`) → `analysis` and `summary` look at the graph → `cli` prints results. See ARCHITECTURE.md.

pub mod analysis;
pub mod cli;
pub mod compare;
pub mod driver;
pub mod ir;
pub mod lint;
pub mod parse;
pub mod perf;
pub mod report;
pub mod rules;
pub mod run;
pub mod semantic;
pub mod settings;
pub mod source;
pub mod suggest;
pub mod summary;
pub mod suppress;
#[doc(hidden)]
pub mod testing;

pub use report::RunOutcome;
pub use settings::{Selection, Settings};

/// Lints `paths` (files, folders, globs, `-` for stdin) with `settings`: each compilation's findings after
/// suppressions, the errors in the inputs, and the exit code the command line would give ([`RunOutcome`]). The
/// `Err` is what stops a run before any work or in the middle: a broken configuration, pack or baseline, an
/// unknown target.
pub fn lint(settings: &Settings, paths: &[std::path::PathBuf]) -> Result<RunOutcome, miette::Report> {
    run::lint(settings, paths)
}
