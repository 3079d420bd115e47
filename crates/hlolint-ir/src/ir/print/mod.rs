//! The one home for printing the graph (`ir::Module`) of any layer; nothing else in either crate prints it.
//!
//! Three printers, each read by its own users, and the words each layer uses for what it prints:
//! - [`outline`](fn@outline) (outline.rs): one line per function, block and op with operand roles, resolved
//!   definitions and attribute text as written — the MLIR parser's snapshots (tests/it/mlir_parse.rs), its fuzz
//!   target and `examples/mlir_outline.rs`;
//! - [`render_module`] and [`value_text`] (generic.rs): MLIR-like generic syntax from the graph alone (no source
//!   text: a decoded bytecode body has none) and attribute trees back to text — the bytecode snapshots and
//!   checks (tests/it/bytecode.rs), its fuzz target and `examples/decode_kernel.rs`;
//! - [`graph_dump`] (json.rs): the graph as plain serde data, names and edges only — `hlolint graph` (src/cli/
//!   check.rs), read by the conformance check against XLA's own parser, and the HLO fuzz target;
//! - [`Words`] (`Layer::words`): what a layer calls a function and an op, for text and docs written in that
//!   layer's terms.
//!
//! Every printer's output is held byte for byte by snapshots or by `hlolint graph`'s readers: a change here is a
//! change of output, and the snapshots say so.

mod generic;
mod json;
mod outline;

pub use generic::{render_module, value_text};
pub use json::{graph_dump, ComputationDump, GraphDump, InstructionDump};
pub use outline::outline;

use super::graph::Layer;

/// What a layer calls the graph's functions and ops, as its own compiler and dumps name them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Words {
    /// An `ir::Func`: HLO's computation, MLIR's `func.func`, the LLO program's computation.
    pub func: &'static str,
    /// An `ir::Op`: HLO's instruction, an MLIR op, an op of an LLO bundle.
    pub op: &'static str,
}

impl Layer {
    /// The layer's own words for a function and an op. The JSON graph keeps HLO's (`computations`,
    /// `instructions`) for every layer: its readers key on those field names.
    pub fn words(self) -> Words {
        match self {
            Layer::Hlo => Words { func: "computation", op: "instruction" },
            Layer::StableHlo | Layer::Mosaic => Words { func: "func", op: "op" },
            // The LLO parser's terms (parse/llo/build.rs): the program's one function is the computation it was
            // compiled for, its ops are the bundles' ops.
            Layer::Llo => Words { func: "computation", op: "op" },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mlir_layers_say_func_and_op() {
        // The outline prints `words().func` before each function; its snapshots are of MLIR modules and say `func`.
        for l in [Layer::StableHlo, Layer::Mosaic] {
            assert_eq!(l.words(), Words { func: "func", op: "op" });
        }
        assert_eq!(Layer::Hlo.words().op, "instruction");
    }
}
