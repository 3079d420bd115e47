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
pub mod semantic;
pub mod source;
pub mod suggest;
pub mod summary;
pub mod suppress;
#[doc(hidden)]
pub mod testing;
