//! What rule packs may name, per layer: op families (one name for what each layer spells differently), the
//! HLO opcodes and attributes XLA has, LLO mnemonic families. A name a layer does not have is a rule error, not a
//! silent no-match.

use crate::ir::Layer;

pub use crate::semantic::families::{family, Family, FAMILIES};

/// Every opcode XLA's HLO has (xla/hlo/ir/hlo_opcode.h).
pub static HLO_OPCODES: &[&str] = &[
    "abs",
    "add",
    "add-dependency",
    "after-all",
    "all-gather",
    "all-gather-done",
    "all-gather-start",
    "all-reduce",
    "all-reduce-done",
    "all-reduce-start",
    "all-to-all",
    "and",
    "async-done",
    "async-start",
    "async-update",
    "atan2",
    "batch-norm-grad",
    "batch-norm-inference",
    "batch-norm-training",
    "bitcast",
    "bitcast-convert",
    "broadcast",
    "call",
    "cbrt",
    "ceil",
    "cholesky",
    "clamp",
    "clz",
    "collective-broadcast",
    "collective-permute",
    "collective-permute-done",
    "collective-permute-start",
    "compare",
    "complex",
    "concatenate",
    "conditional",
    "constant",
    "convert",
    "convolution",
    "copy",
    "copy-done",
    "copy-start",
    "cos",
    "custom-call",
    "divide",
    "domain",
    "dot",
    "dynamic-reshape",
    "dynamic-slice",
    "dynamic-update-slice",
    "erf",
    "exponential",
    "exponential-minus-one",
    "fft",
    "floor",
    "fusion",
    "gather",
    "get-dimension-size",
    "get-tuple-element",
    "imag",
    "infeed",
    "iota",
    "is-finite",
    "log",
    "log-plus-one",
    "logistic",
    "map",
    "maximum",
    "minimum",
    "multiply",
    "negate",
    "not",
    "opt-barrier",
    "optimization-barrier",
    "or",
    "outfeed",
    "pad",
    "parameter",
    "partition-id",
    "popcnt",
    "power",
    "ragged-all-to-all",
    "ragged-dot",
    "real",
    "recv",
    "recv-done",
    "reduce",
    "reduce-precision",
    "reduce-scatter",
    "reduce-window",
    "remainder",
    "replica-id",
    "reshape",
    "reverse",
    "rng",
    "rng-bit-generator",
    "rng-get-and-update-state",
    "round-nearest-afz",
    "round-nearest-even",
    "rsqrt",
    "scaled-dot",
    "scatter",
    "select",
    "select-and-scatter",
    "send",
    "send-done",
    "set-dimension-size",
    "shift-left",
    "shift-right-arithmetic",
    "shift-right-logical",
    "sign",
    "sin",
    "slice",
    "sort",
    "sqrt",
    "stochastic-convert",
    "subtract",
    "tan",
    "tanh",
    "topk",
    "transpose",
    "triangular-solve",
    "tuple",
    "while",
    "xor",
];

/// Attribute names XLA's HLO parser accepts (plus the sugar this parser keeps).
pub static HLO_ATTRIBUTES: &[&str] = &[
    "algorithm",
    "api_version",
    "backend_config",
    "batch_group_count",
    "body",
    "branch_computations",
    "called_computations",
    "calls",
    "channel_id",
    "comparison_type",
    "condition",
    "constrain_layout",
    "control-predecessors",
    "cross_program_prefetch_index",
    "custom_call_has_side_effect",
    "custom_call_schedule",
    "custom_call_target",
    "dim_labels",
    "dimensions",
    "direction",
    "distribution",
    "dynamic_slice_sizes",
    "exponent_bits",
    "false_computation",
    "feature_group_count",
    "fft_length",
    "fft_type",
    "frontend_attributes",
    "index_vector_dim",
    "indices_are_sorted",
    "inserted_window_dims",
    "is_cross_program_prefetch",
    "is_host_transfer",
    "is_stable",
    "k",
    "kind",
    "largest",
    "lhs_batch_dims",
    "lhs_contracting_dims",
    "mantissa_bits",
    "metadata",
    "offset_dims",
    "operand_batching_dims",
    "operand_layout_constraints",
    "operand_precision",
    "origin",
    "output_to_operand_aliasing",
    "padding",
    "padding_type",
    "replica_groups",
    "result_accuracy",
    "rhs_batch_dims",
    "rhs_contracting_dims",
    "rng_algorithm",
    "scatter_dims_to_operand_dims",
    "scatter_indices_batching_dims",
    "schedule",
    "sharding",
    "slice",
    "slice_sizes",
    "source_target_pairs",
    "sparsity",
    "split_count",
    "split_dimension",
    "start_index_map",
    "start_indices_batching_dims",
    "statistics",
    "to_apply",
    "triangular_solve_options",
    "true_computation",
    "type",
    "unique_indices",
    "update_window_dims",
    "use_global_device_ids",
    "window",
    "collapsed_slice_dims",
    "literal",
    "async_execution_thread",
    "execution_thread",
    "dot_dimension_numbers",
    "lhs_ratio",
    "rhs_ratio",
    "cholesky_options",
    "ragged_dot_dimension_numbers",
];

/// LLO mnemonic families (first segment of `vmatmul.mubr.f8e4m3fn`): the table of `semantic::llo`, whose
/// meaning the linter reads by the same names.
pub use crate::semantic::llo::mnemonic::FAMILIES as LLO_FAMILIES;

/// Memory-space names in Mosaic (`#tpu.memory_space<vmem>`).
pub static MOSAIC_SPACES: &[&str] = &["vmem", "smem", "hbm", "any", "cmem", "semaphore_mem", "vmem_shared", "host"];

/// Is `name` something the layer has: a family with patterns there, a glob, or an opcode of the layer?
pub fn check_op_name(name: &str, layer: Layer) -> Result<(), String> {
    if let Some(f) = family(name) {
        return if f.patterns(layer).is_empty() {
            let has: Vec<&str> = [Layer::Hlo, Layer::StableHlo, Layer::Mosaic, Layer::Llo]
                .into_iter()
                .filter(|l| !f.patterns(*l).is_empty())
                .map(|l| l.name())
                .collect();
            Err(format!(
                "op family `{name}` does not exist in layer {} (it exists in: {})",
                layer.name(),
                has.join(", ")
            ))
        } else {
            Ok(())
        };
    }
    if name.contains(['*', '?', '[']) {
        return Ok(());
    }
    let ok = match layer {
        Layer::Hlo => HLO_OPCODES.contains(&name),
        Layer::StableHlo | Layer::Mosaic => name.contains('.'),
        Layer::Llo => LLO_FAMILIES.contains(&crate::semantic::llo::family(name)),
    };
    if ok {
        Ok(())
    } else {
        let what = match layer {
            Layer::Hlo => "an HLO opcode",
            Layer::StableHlo | Layer::Mosaic => "an MLIR op name (`dialect.op`)",
            Layer::Llo => "an LLO mnemonic family",
        };
        let families: Vec<&str> = FAMILIES.iter().filter(|f| !f.patterns(layer).is_empty()).map(|f| f.name).collect();
        Err(format!(
            "`{name}` is neither an op family nor {what} in layer {}; families there: {}",
            layer.name(),
            families.join(", ")
        ))
    }
}
