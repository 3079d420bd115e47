//! The one home for printing the graph (`ir::Module`) of any layer; nothing else in either crate prints it.
//!
//! Two printers, each read by its own users:
//! - [`outline`](fn@outline) (outline.rs): one line per function, block and op with operand roles, resolved
//!   definitions and attribute text as written — the MLIR parser's snapshots (tests/it/mlir_parse.rs), its fuzz
//!   target and `examples/mlir_outline.rs`;
//! - [`render_module`] and [`value_text`] (generic.rs): MLIR-like generic syntax from the graph alone (no source
//!   text: a decoded bytecode body has none) and attribute trees back to text — the bytecode snapshots and
//!   checks (tests/it/bytecode.rs), its fuzz target and `examples/decode_kernel.rs`.
//!
//! Every printer's output is held byte for byte by snapshots: a change here is a change of output, and the
//! snapshots say so.

mod generic;
mod outline;

pub use generic::{render_module, value_text};
pub use outline::outline;
