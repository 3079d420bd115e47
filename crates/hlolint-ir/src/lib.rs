//! hlolint's bottom layer: the graph every layer of XLA's output is read into ([`ir`]) and the parsers that build
//! it ([`parse`]: HLO text, MLIR text — StableHLO and every Mosaic stage —, TPU LLO dumps, MLIR bytecode). It needs
//! nothing of the linter above it, and the compiler holds that: this crate does not depend on `hlolint`, which
//! re-exports both modules (`hlolint::ir`, `hlolint::parse`), so the rest of the code names them as before.
//!
//! Inside the crate `parse` builds `ir`, never the other way (tests/it/layers.rs checks it).

pub mod ir;
pub mod parse;
#[doc(hidden)]
pub mod testing;
