//! hlolint: a linter for XLA compiler output.
//!
//! Data flow: `source` reads files and sniffs their format → `parse::*` turns text into the shared graph
//! (`ir`) → `summary` / rules look at the graph → `report` prints diagnostics.

pub mod analysis;
pub mod ir;
pub mod parse;
