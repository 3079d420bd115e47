//! What rule packs may name, per layer: op families (one name for what each layer spells differently), the
//! HLO opcodes and attributes XLA has, LLO mnemonic families. A name a layer does not have is a rule error, not a
//! silent no-match.

use crate::ir::Layer;

/// An op family: opcode globs per layer (empty: the layer has no such op).
pub struct Family {
    pub name: &'static str,
    pub doc: &'static str,
    pub hlo: &'static [&'static str],
    pub stablehlo: &'static [&'static str],
    pub mosaic: &'static [&'static str],
    pub llo: &'static [&'static str],
}

impl Family {
    pub fn patterns(&self, layer: Layer) -> &'static [&'static str] {
        match layer {
            Layer::Hlo => self.hlo,
            Layer::StableHlo => self.stablehlo,
            Layer::Mosaic => self.mosaic,
            Layer::Llo => self.llo,
        }
    }
}

macro_rules! fam {
    ($name:literal, $doc:literal, hlo: [$($h:literal),*], stablehlo: [$($s:literal),*], mosaic: [$($m:literal),*], llo: [$($l:literal),*]) => {
        Family { name: $name, doc: $doc, hlo: &[$($h),*], stablehlo: &[$($s),*], mosaic: &[$($m),*], llo: &[$($l),*] }
    };
}

pub static FAMILIES: &[Family] = &[
    fam!("dot", "matrix multiplies: HLO dot/convolution (TPU dots often print as convolution), StableHLO dot_general, Mosaic tpu.matmul, LLO vmatmul",
        hlo: ["dot", "convolution", "ragged-dot", "scaled-dot"],
        stablehlo: ["stablehlo.dot", "stablehlo.dot_general", "stablehlo.convolution", "chlo.ragged_dot"],
        mosaic: ["tpu.matmul", "vector.contract", "llo.vmatmul*"],
        llo: ["vmatmul*"]),
    fam!("convert", "element type conversions: HLO convert, StableHLO convert, arith ext/trunc/int-float casts",
        hlo: ["convert", "stochastic-convert"],
        stablehlo: ["stablehlo.convert"],
        mosaic: ["arith.extf", "arith.truncf", "arith.sitofp", "arith.uitofp", "arith.fptosi", "arith.fptoui", "tpu.extf", "tpu.truncf", "tpu.fptosi", "tpu.sitofp"],
        llo: ["vcvt*", "vpack*", "vunpack*"]),
    fam!("async-start", "the start of an asynchronous HLO op: copy-start, all-gather-start, collective-permute-start, send, recv, async-start, ...",
        hlo: ["*-start", "send", "recv"], stablehlo: ["stablehlo.async_start", "stablehlo.send", "stablehlo.recv"], mosaic: [], llo: []),
    fam!("async-update", "async-update",
        hlo: ["*-update"], stablehlo: ["stablehlo.async_update"], mosaic: [], llo: []),
    fam!("async-done", "the done of an asynchronous HLO op: copy-done, all-gather-done, send-done, recv-done, async-done, ...",
        hlo: ["*-done"], stablehlo: ["stablehlo.async_done"], mosaic: [], llo: []),
    fam!("collective", "cross-device communication",
        hlo: ["all-gather*", "all-reduce*", "reduce-scatter", "collective-permute*", "collective-broadcast", "all-to-all", "ragged-all-to-all", "send", "send-done", "recv", "recv-done"],
        stablehlo: ["stablehlo.all_gather", "stablehlo.all_reduce", "stablehlo.reduce_scatter", "stablehlo.collective_permute", "stablehlo.collective_broadcast", "stablehlo.all_to_all", "stablehlo.send", "stablehlo.recv"],
        mosaic: ["tpu.sem_signal"], llo: []),
    fam!("dma-start", "the start of a DMA in a kernel: tpu.enqueue_dma (and indirect, and future spellings); LLO dma.*",
        hlo: [], stablehlo: [],
        mosaic: ["*.enqueue_dma*", "*.enqueue_indirect_dma*", "*.dma_start*", "*.async_copy_start*"],
        llo: ["dma.*"]),
    fam!("dma-wait", "the wait for a DMA: tpu.wait_dma, tpu.wait_dma2, tpu.wait_indirect_dma; LLO sync-flag waits",
        hlo: [], stablehlo: [],
        mosaic: ["*.wait_dma*", "*.wait_indirect_dma*", "*.dma_wait*", "*.dma_done*"],
        llo: ["vwait*", "swait*", "dma.done*", "dma.wait*"]),
    fam!("loop", "loops: HLO while, StableHLO while, scf.for/while, LLO loops",
        hlo: ["while"], stablehlo: ["stablehlo.while"], mosaic: ["scf.for", "scf.while", "scf.parallel", "scf.forall"], llo: ["loop"]),
    fam!("conditional", "branches: HLO conditional, StableHLO if/case, scf.if/index_switch",
        hlo: ["conditional"], stablehlo: ["stablehlo.if", "stablehlo.case"], mosaic: ["scf.if", "scf.index_switch"], llo: []),
    fam!("custom-call", "custom calls (a Pallas kernel is one: target tpu_custom_call)",
        hlo: ["custom-call"], stablehlo: ["stablehlo.custom_call"], mosaic: [], llo: []),
    fam!("fusion", "XLA fusions", hlo: ["fusion"], stablehlo: [], mosaic: [], llo: []),
    fam!("call", "calls", hlo: ["call"], stablehlo: ["func.call"], mosaic: ["func.call"], llo: []),
    fam!("parameter", "computation parameters", hlo: ["parameter"], stablehlo: [], mosaic: [], llo: []),
    fam!("constant", "constants", hlo: ["constant", "iota"], stablehlo: ["stablehlo.constant", "stablehlo.iota"], mosaic: ["arith.constant"], llo: []),
    fam!("copy", "copies", hlo: ["copy"], stablehlo: [], mosaic: ["memref.copy"], llo: []),
    fam!("bitcast", "bit casts and layout-only changes",
        hlo: ["bitcast", "bitcast-convert"], stablehlo: ["stablehlo.bitcast_convert"],
        mosaic: ["arith.bitcast", "tpu.bitcast", "vector.bitcast", "tpu.memref_bitcast"], llo: []),
    fam!("reshape", "reshapes", hlo: ["reshape", "dynamic-reshape"], stablehlo: ["stablehlo.reshape"],
        mosaic: ["vector.shape_cast", "tpu.reshape", "tpu.memref_reshape"], llo: []),
    fam!("transpose", "transposes", hlo: ["transpose"], stablehlo: ["stablehlo.transpose"], mosaic: ["tpu.transpose", "vector.transpose"], llo: []),
    fam!("broadcast", "broadcasts", hlo: ["broadcast"], stablehlo: ["stablehlo.broadcast_in_dim", "stablehlo.broadcast"],
        mosaic: ["vector.broadcast", "tpu.broadcast*"], llo: []),
    fam!("slice", "slices and views", hlo: ["slice", "dynamic-slice"], stablehlo: ["stablehlo.slice", "stablehlo.dynamic_slice"],
        mosaic: ["tpu.memref_slice", "tpu.memref_squeeze", "memref.subview", "vector.extract_strided_slice"], llo: []),
    fam!("tuple", "tuples and their elements", hlo: ["tuple", "get-tuple-element"], stablehlo: [], mosaic: [], llo: []),
    fam!("load", "loads from memory", hlo: [], stablehlo: [],
        mosaic: ["vector.load", "memref.load", "tpu.load", "tpu.strided_load", "tpu.vector_load", "llo.*load*"], llo: ["vld*", "sld*"]),
    fam!("store", "stores to memory", hlo: [], stablehlo: [],
        mosaic: ["vector.store", "memref.store", "tpu.store", "tpu.strided_store", "tpu.vector_store", "llo.*store*"], llo: ["vst*", "sst*"]),
    fam!("mxu", "every MXU instruction (push weights, prepare, multiply, pop results)", hlo: [], stablehlo: [], mosaic: [],
        llo: ["vmat*", "vllmr*"]),
    fam!("elementwise-multiply", "elementwise multiplies", hlo: ["multiply"], stablehlo: ["stablehlo.multiply"],
        mosaic: ["arith.mulf", "arith.muli"], llo: ["vmul*"]),
];

pub fn family(name: &str) -> Option<&'static Family> {
    FAMILIES.iter().find(|f| f.name == name)
}

/// Every opcode XLA's HLO has (xla/hlo/ir/hlo_opcode.h).
pub static HLO_OPCODES: &[&str] = &[
    "abs", "add", "add-dependency", "after-all", "all-gather", "all-gather-done", "all-gather-start", "all-reduce",
    "all-reduce-done", "all-reduce-start", "all-to-all", "and", "async-done", "async-start", "async-update", "atan2",
    "batch-norm-grad", "batch-norm-inference", "batch-norm-training", "bitcast", "bitcast-convert", "broadcast", "call",
    "cbrt", "ceil", "cholesky", "clamp", "clz", "collective-broadcast", "collective-permute", "collective-permute-done",
    "collective-permute-start", "compare", "complex", "concatenate", "conditional", "constant", "convert", "convolution",
    "copy", "copy-done", "copy-start", "cos", "custom-call", "divide", "domain", "dot", "dynamic-reshape",
    "dynamic-slice", "dynamic-update-slice", "erf", "exponential", "exponential-minus-one", "fft", "floor", "fusion",
    "gather", "get-dimension-size", "get-tuple-element", "imag", "infeed", "iota", "is-finite", "log", "log-plus-one",
    "logistic", "map", "maximum", "minimum", "multiply", "negate", "not", "opt-barrier", "optimization-barrier", "or",
    "outfeed", "pad", "parameter", "partition-id", "popcnt", "power", "ragged-all-to-all", "ragged-dot", "real", "recv",
    "recv-done", "reduce", "reduce-precision", "reduce-scatter", "reduce-window", "remainder", "replica-id", "reshape",
    "reverse", "rng", "rng-bit-generator", "rng-get-and-update-state", "round-nearest-afz", "round-nearest-even",
    "rsqrt", "scaled-dot", "scatter", "select", "select-and-scatter", "send", "send-done", "set-dimension-size",
    "shift-left", "shift-right-arithmetic", "shift-right-logical", "sign", "sin", "slice", "sort", "sqrt",
    "stochastic-convert", "subtract", "tan", "tanh", "topk", "transpose", "triangular-solve", "tuple", "while", "xor",
];

/// Attribute names XLA's HLO parser accepts (plus the sugar this parser keeps).
pub static HLO_ATTRIBUTES: &[&str] = &[
    "algorithm", "api_version", "backend_config", "batch_group_count", "body", "branch_computations", "called_computations",
    "calls", "channel_id", "comparison_type", "condition", "constrain_layout", "control-predecessors",
    "cross_program_prefetch_index", "custom_call_has_side_effect", "custom_call_schedule", "custom_call_target",
    "dim_labels", "dimensions", "direction", "distribution", "dynamic_slice_sizes", "exponent_bits", "false_computation",
    "feature_group_count", "fft_length", "fft_type", "frontend_attributes", "index_vector_dim", "indices_are_sorted",
    "inserted_window_dims", "is_cross_program_prefetch", "is_host_transfer", "is_stable", "k", "kind", "largest",
    "lhs_batch_dims", "lhs_contracting_dims", "mantissa_bits", "metadata", "offset_dims", "operand_batching_dims",
    "operand_layout_constraints", "operand_precision", "origin", "output_to_operand_aliasing", "padding",
    "padding_type", "replica_groups", "result_accuracy", "rhs_batch_dims", "rhs_contracting_dims", "rng_algorithm",
    "scatter_dims_to_operand_dims", "scatter_indices_batching_dims", "schedule", "sharding", "slice", "slice_sizes",
    "source_target_pairs", "sparsity", "split_count", "split_dimension", "start_index_map", "start_indices_batching_dims",
    "statistics", "to_apply", "triangular_solve_options", "true_computation", "type", "unique_indices",
    "update_window_dims", "use_global_device_ids", "window", "collapsed_slice_dims", "literal", "async_execution_thread",
    "execution_thread", "dot_dimension_numbers", "lhs_ratio", "rhs_ratio", "cholesky_options", "ragged_dot_dimension_numbers",
];

/// LLO mnemonic families (first segment of `vmatmul.mubr.f8e4m3fn`).
pub static LLO_FAMILIES: &[&str] = &[
    "vmatmul", "vmatpush", "vmatprep", "vmatres", "vpop", "vllmr", "dma", "sld", "sst", "vld", "vst", "vsync", "vwait",
    "swait", "ssync", "sbr", "br", "sjmp", "shalt", "loop", "inlined_call_operand", "vadd", "vmul", "vsub", "vmax",
    "vmin", "vcvt", "vpack", "vunpack", "vsel", "vcmp", "sadd", "smul", "ssub", "smov", "vmov", "vbcast", "vrot",
    "vxpose", "vdelay", "vnop", "snop",
];

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
            Err(format!("op family `{name}` does not exist in layer {} (it exists in: {})", layer.name(), has.join(", ")))
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
        Layer::Llo => LLO_FAMILIES.contains(&name.split('.').next().unwrap_or(name)),
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
