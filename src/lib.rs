//! hlolint: a linter for XLA compiler output — HLO, StableHLO, Mosaic MLIR and TPU LLO dumps.
//!
//! # The library
//!
//! One call lints what the command line lints: [`lint`](fn@lint) takes [`Settings`] (what `hlolint check`'s
//! options say, built without the command line: `Default` and fields) and paths (files, dump folders, globs), reads
//! the configuration file that applies to each path, and returns a [`RunOutcome`]: each compilation's findings
//! after suppressions, the errors met in the inputs (as miette diagnostics), notices, and the exit code the command
//! line would give. [`report::write`](fn@report::write) renders an outcome in any of the command line's formats.
//!
//! ```
//! use std::path::PathBuf;
//!
//! // the `core` pack, whatever configuration file lies above the fixtures
//! let settings = hlolint::Settings {
//!     selection: hlolint::Selection { rules: vec!["core".into()], ..Default::default() },
//!     isolated: true,
//!     ..Default::default()
//! };
//! let dump = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/fp8_matmul_2d/tpu7x+v6e/bug_upcast@tpu7x");
//! let outcome = hlolint::lint(&settings, &[dump]).expect("the settings are valid");
//! assert!(outcome.errors.is_empty());
//! // the kernel widens its fp8 operands to bf16 before the matmul: one MO001 finding
//! let upcasts = outcome.findings().filter(|f| f.code.as_deref() == Some("MO001")).count();
//! assert_eq!(upcasts, 1);
//! assert_eq!(outcome.exit_code(), 1);
//! ```
//!
//! # What else is public, and why
//!
//! - [`ir`] and [`parse`]: the graph every layer is read into and the parsers that build it (HLO, MLIR text, LLO,
//!   MLIR bytecode), re-exported from the crate `hlolint-ir` (crates/hlolint-ir), which needs nothing above it;
//!   the fuzz targets, benchmarks and examples call them.
//! - [`semantic`], [`summary`], [`source`], [`lint`](mod@lint), [`perf`]: reached by the integration tests, the
//!   fuzz targets and the examples (kernels as Pallas wrote them, LLO op classes, file sniffing and stage names, a
//!   parsed compilation, the performance model's facts); not a stable API.
//! - [`analysis`]: the named analyses rules call; the symbolic DMA engine (`analysis::dma`) behind `dma-balance`
//!   is also called by its tests directly (replays on concrete tables).
//! - [`report`]: [`RunOutcome`], the report writer and its formats; [`settings`]: [`Settings`], [`Selection`] and
//!   the errors settings can raise.
//! - `testing` (hidden, from `hlolint-ir` too): the corpus of real dumps, one seeded generator and one byte
//!   mutator, shared by every kind of test.
//!
//! Everything else (the command line, rule packs and their engine, suppressions, the lint run's internals,
//! `hlolint compare`, the driver) is private.
//!
//! Data flow: `source` reads files and sniffs their format → `parse::*` turns text into the shared graph (`ir`) →
//! `lint` groups files into compilations → `rules` run matchers and `analysis` over them → `suppress` →
//! `report`. `run` is that run, `settings` what it is told; `cli` maps the command line onto both. See
//! ARCHITECTURE.md.

pub mod analysis;
mod cli;
mod compare;
mod driver;
pub mod lint;
pub mod perf;
pub mod report;
mod rules;
mod run;
pub mod semantic;
pub mod settings;
pub mod source;
mod suggest;
pub mod summary;
mod suppress;

// The bottom layer is a crate of its own (crates/hlolint-ir), so that the compiler holds what a test used to: the
// graph and the parsers need nothing above them. Re-exported under their old names, the rest of the code and the
// library's users name them `crate::ir`, `hlolint::parse`, ... as before.
#[doc(hidden)]
pub use hlolint_ir::testing;
pub use hlolint_ir::{ir, parse};

pub use analysis::Verdict;
pub use report::{CompilationReport, RunOutcome};
pub use rules::engine::Finding;
pub use rules::Severity;
pub use settings::{Selection, Settings};

/// Lints `paths` (files, folders, globs, `-` for stdin) with `settings`: each compilation's findings after
/// suppressions, the errors in the inputs, and the exit code the command line would give ([`RunOutcome`]). The
/// `Err` is what stops a run before any work or in the middle: a broken configuration, pack or baseline, an
/// unknown target.
pub fn lint(settings: &Settings, paths: &[std::path::PathBuf]) -> Result<RunOutcome, miette::Report> {
    run::lint(settings, paths)
}

/// The command line (`src/main.rs`): parses the process's arguments, runs, and returns the exit code.
#[doc(hidden)]
pub fn main() -> i32 {
    cli::run()
}
