//! What an MLIR or HLO opcode means, by family rather than one spelling: jax versions and Mosaic stages print
//! `tpu.wait_dma` and `tpu.wait_dma2`, `tpu.enqueue_dma` and `tpu.enqueue_indirect_dma`, `tpu.matmul` and (after
//! `post-finalize-llo`) `llo.vmatmul.mubr`, `memref.load` and `llo.sld`. Every analysis, the performance model and
//! the summaries ask these predicates rather than spell opcodes, and the predicates spell none either: each is a
//! family of [`super::families`], the table rule packs name, matched on the layer the opcode's spelling belongs to
//! ([`layer_of`]). LLO bundle mnemonics (`vmatmul.f32`, `dma.hbm_to_vmem`) are [`super::llo`]'s.

use super::families::{index, membership};
use crate::ir::Layer;
use std::sync::LazyLock;

/// The op name without its dialect: `tpu.enqueue_dma` → `enqueue_dma`, `llo.vmul.f32` → `vmul.f32`; an HLO
/// opcode (no dialect) is itself.
pub fn op_name(opcode: &str) -> &str {
    opcode.split_once('.').map_or(opcode, |x| x.1)
}

/// The layer whose vocabulary an opcode is spelled in: HLO's opcodes have no dialect (`dot`, `all-gather-start`),
/// StableHLO's are `stablehlo.*` and `chlo.*`, and any other dialect (`tpu.`, `arith.`, `scf.`, `memref.`,
/// `vector.`, `llo.`, `func.`, ...) is Mosaic's: a StableHLO module's `func.call` or `scf.for` is read as Mosaic
/// spells it. LLO bundle mnemonics are not opcodes of this vocabulary ([`super::llo`]).
pub fn layer_of(opcode: &str) -> Layer {
    match opcode.split_once('.') {
        None => Layer::Hlo,
        Some(("stablehlo" | "chlo", _)) => Layer::StableHlo,
        Some(_) => Layer::Mosaic,
    }
}

/// Whether `opcode` is of the family whose [`membership`] bit is `bit`, on the layer its spelling names.
fn is(bit: u64, opcode: &str) -> bool {
    membership(layer_of(opcode), opcode) & bit != 0
}

/// The [`membership`] bit of family `name` (looked up once per predicate).
fn bit(name: &str) -> u64 {
    let i = index(name).unwrap_or_else(|| panic!("no op family `{name}`"));
    assert!(i < 64, "op family `{name}` is number {i}: membership has 64 bits");
    1 << i
}

/// Predicates, each one family of the table.
macro_rules! predicates {
    ($($(#[$doc:meta])* $f:ident = $name:literal;)*) => {$(
        $(#[$doc])*
        #[doc = ""]
        #[doc = concat!("The op family `", $name, "` of [`super::families::FAMILIES`].")]
        pub fn $f(opcode: &str) -> bool {
            static BIT: LazyLock<u64> = LazyLock::new(|| bit($name));
            is(*BIT, opcode)
        }
    )*};
}

predicates! {
    /// `tpu.enqueue_dma`, `tpu.enqueue_indirect_dma`, `*.dma_start`, `*.async_copy_start`.
    is_dma_start = "dma-start";
    /// `tpu.wait_dma`, `tpu.wait_dma2`, `tpu.wait_indirect_dma`, `*.dma_wait`, `llo.dma_done`.
    is_dma_wait = "dma-wait";
    /// `tpu.enqueue_indirect_dma`, `tpu.wait_indirect_dma`: a gather or scatter by row offsets, whose semaphore
    /// operand is `semaphore` and whose size is one end's ([`indirect_dma_rows_role`]).
    is_indirect_dma = "indirect-dma";
    /// `tpu.sem_signal`: adds units to a semaphore, locally or on another device.
    is_semaphore_signal = "semaphore-signal";
    /// `tpu.sem_wait`: blocks until a semaphore holds an amount, and takes it.
    is_semaphore_wait = "semaphore-wait";
    /// Any semaphore op: signals and waits, and `tpu.sem_alloc`, `tpu.sem_barrier`, `tpu.sem_read`.
    is_semaphore_op = "semaphore";
    /// A semaphore the kernel makes itself: scratch (`tpu.sem_alloc`) or a collective's barrier (`tpu.sem_barrier`).
    is_semaphore_alloc = "semaphore-alloc";
    /// A constant: `arith.constant`, `llo.constant`, `stablehlo.constant`, HLO `constant` (and `iota`).
    is_constant = "constant";
    /// A matrix multiply anywhere: `tpu.matmul`, `vector.contract`, `llo.vmatmul*`, `stablehlo.dot_general`, HLO
    /// `dot` and `convolution`.
    is_matmul = "dot";
    /// A matmul by contracting dimensions (`lhs_contracting_dims`): HLO `dot`, `stablehlo.dot_general`.
    is_dot_general = "dot-general";
    /// A matmul written as a convolution (`dim_labels`): HLO `convolution`, `stablehlo.convolution`.
    is_convolution = "convolution";
    /// A matmul whose operand 2 is the accumulator: `tpu.matmul`, `vector.contract`.
    is_accumulating_matmul = "dot-accumulate";
    /// `scf.for`, `scf.while`, `scf.parallel`, `scf.forall`, `stablehlo.while`, HLO `while`.
    is_loop = "loop";
    /// `scf.for`: a loop whose operands 0-2 are its lower bound, upper bound and step.
    is_counted_loop = "counted-loop";
    /// `scf.if`, `scf.index_switch`, `stablehlo.if`, `stablehlo.case`, HLO `conditional`.
    is_conditional = "conditional";
    /// An XLA fusion (HLO `fusion`): its called computations run as one LLO program.
    is_fusion = "fusion";
    /// A custom call: HLO `custom-call`, `stablehlo.custom_call` (a Pallas kernel is one).
    is_custom_call = "custom-call";
    /// A computation's parameter (HLO `parameter`).
    is_parameter = "parameter";
    /// HLO `copy-start`: XLA's asynchronous copy into or out of VMEM, or a cross-program prefetch.
    is_copy_start = "copy-start";
    /// Ops that only view a memref (no data movement): `tpu.memref_slice`, `tpu.memref_squeeze`, `memref.subview`,
    /// ...
    is_view = "view";
    /// A read of memory that is not a DMA: `vector.load`, `tpu.load`, `memref.load`, `tpu.strided_load`, LLO's
    /// `llo.vector_load*` and scalar `llo.sld`, gathers.
    is_load = "load";
    /// A write of memory that is not a DMA: `vector.store`, `tpu.store`, `memref.store`, LLO's `llo.vector_store*`
    /// and scalar `llo.sst`, scatters.
    is_store = "store";
    /// A scalar access to a memref (`memref.load`/`memref.store` of one element: SMEM scalars, not a buffer's data).
    is_scalar_access = "scalar-access";
}

/// Ops that consume matmul operands: a matmul, and LLO's `vmatprep*` and `vmatpush*` that feed the MXU (the op
/// families `dot` and `mxu-feed`).
pub fn is_matmul_input(opcode: &str) -> bool {
    static BITS: LazyLock<u64> = LazyLock::new(|| bit("dot") | bit("mxu-feed"));
    is(*BITS, opcode)
}

/// Ops whose result is a matmul result: a matmul, and LLO's `vmatres` that pops it (the op families `dot` and
/// `mxu-result`).
pub fn is_matmul_output(opcode: &str) -> bool {
    static BITS: LazyLock<u64> = LazyLock::new(|| bit("dot") | bit("mxu-result"));
    is(*BITS, opcode)
}

/// The role of the end whose size is an indirect DMA's (`tpu.enqueue_indirect_dma`, `tpu.wait_indirect_dma`: a
/// gather or scatter by row offsets): the rows moved, on chip (VMEM or SMEM); the other end is the whole table
/// the offsets index, in HBM, and says nothing of the size. `None` for a plain DMA, or when not exactly one end
/// is on chip.
pub fn indirect_dma_rows_role(op: &crate::ir::Op<'_>) -> Option<&'static str> {
    if !is_indirect_dma(op.opcode) {
        return None;
    }
    let on_chip = |role: &str| {
        op.operands.iter().find(|o| o.role == Some(role)).is_some_and(|o| {
            let space = o.ty.as_ref().and_then(|t| t.mlir()).and_then(|t| t.memory_space());
            matches!(space, Some("vmem") | Some("smem"))
        })
    };
    let ends: Vec<&'static str> = ["source", "target", "src", "dst"].into_iter().filter(|r| on_chip(r)).collect();
    match ends.as_slice() {
        [r] => Some(r),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_across_spellings() {
        assert!(is_dma_start("tpu.enqueue_dma"));
        assert!(is_dma_start("tpu.enqueue_indirect_dma") && !is_dma_start("tpu.wait_dma2"));
        assert!(is_dma_wait("tpu.wait_dma2") && is_dma_wait("tpu.wait_dma") && is_dma_wait("llo.dma_done"));
        assert!(is_matmul("llo.vmatmul.mubr") && is_matmul("tpu.matmul") && is_matmul("stablehlo.dot_general"));
        assert!(!is_matmul("llo.vmatprep.mubr") && is_matmul_input("llo.vmatprep.mubr"));
        assert!(is_matmul_output("llo.vmatres.f32") && !is_matmul_output("llo.vmatprep.mubr"));
        assert!(is_loop("scf.for") && is_conditional("scf.if") && is_fusion("fusion") && !is_fusion("call"));
        assert!(is_view("tpu.memref_slice") && is_view("memref.subview") && !is_view("tpu.matmul"));
        assert!(is_semaphore_signal("tpu.sem_signal") && is_semaphore_wait("tpu.sem_wait"));
        assert!(is_semaphore_op("tpu.sem_barrier") && !is_semaphore_signal("tpu.sem_wait"));
        assert!(is_semaphore_alloc("tpu.sem_alloc") && is_semaphore_alloc("tpu.sem_barrier"));
        assert!(is_constant("arith.constant") && is_constant("constant") && !is_constant("tpu.matmul"));
        assert!(is_constant("llo.constant") && is_constant("stablehlo.constant"));
    }

    /// The spellings the compiler prints across jax versions, Mosaic stages and layers.
    #[test]
    fn spellings_that_matter() {
        assert!(is_indirect_dma("tpu.enqueue_indirect_dma") && is_indirect_dma("tpu.wait_indirect_dma"));
        assert!(is_dma_wait("tpu.wait_indirect_dma") && !is_indirect_dma("tpu.enqueue_dma"));
        assert!(is_dma_start("llo.enqueue_dma") && !is_dma_wait("llo.enqueue_dma") && !is_dma_start("llo.dma_done"));
        assert!(is_matmul("llo.vmatmul") && is_matmul("vector.contract") && is_matmul_output("llo.vmatres"));
        assert!(is_matmul_input("llo.vmatprep.subr") && is_matmul_input("tpu.matmul") && !is_matmul("llo.vmatres"));
        // HLO and StableHLO matmuls; an LLO bundle mnemonic is `semantic::llo`'s, not a matmul here
        assert!(is_matmul("dot") && is_matmul("convolution") && is_matmul("ragged-dot") && !is_matmul("multiply"));
        assert!(is_matmul("stablehlo.convolution") && !is_matmul("vmatmul.f32"));
        assert!(is_dot_general("dot") && !is_dot_general("convolution") && !is_dot_general("ragged-dot"));
        assert!(is_convolution("convolution") && !is_convolution("dot") && is_dot_general("stablehlo.dot_general"));
        assert!(is_accumulating_matmul("tpu.matmul") && is_accumulating_matmul("vector.contract"));
        assert!(!is_accumulating_matmul("llo.vmatmul.mubr") && !is_accumulating_matmul("stablehlo.dot_general"));
        assert!(is_load("llo.sld") && is_load("tpu.strided_load") && is_load("memref.load") && is_load("llvm.load"));
        assert!(is_store("llo.vector_store_masked") && is_store("llvm.store") && !is_store("tpu.enqueue_dma"));
        assert!(is_view("tpu.reinterpret_cast") && is_view("tpu.memref_bitcast") && !is_view("memref.load"));
        assert!(is_loop("scf.while") && is_loop("stablehlo.while") && is_loop("while") && !is_loop("scf.if"));
        assert!(is_scalar_access("memref.store") && !is_scalar_access("tpu.load"));
        assert!(!is_semaphore_op("tpu.enqueue_dma") && is_semaphore_op("tpu.sem_wait"));
    }

    #[test]
    fn the_layer_is_the_spelling() {
        assert_eq!(layer_of("all-gather-start"), Layer::Hlo);
        assert_eq!(layer_of("stablehlo.dot_general"), Layer::StableHlo);
        assert_eq!(layer_of("chlo.ragged_dot"), Layer::StableHlo);
        for o in ["tpu.matmul", "arith.constant", "scf.for", "memref.load", "vector.load", "llo.sld", "func.call"] {
            assert_eq!(layer_of(o), Layer::Mosaic, "{o}");
        }
    }

    #[test]
    fn loads_and_stores_are_not_dmas() {
        assert!(is_load("vector.load") && is_load("llo.sld") && is_load("llo.vector_load_unpack"));
        assert!(is_store("tpu.store") && is_store("llo.sst") && is_store("llo.vector_store_masked"));
        assert!(!is_load("tpu.enqueue_dma") && !is_store("llo.dma_store") && !is_load("llo.dma_load"));
        assert!(is_scalar_access("memref.load") && !is_scalar_access("vector.load"));
    }
}
