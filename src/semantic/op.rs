//! What an MLIR or HLO opcode means, by family rather than one spelling: jax versions and Mosaic stages print
//! `tpu.wait_dma` and `tpu.wait_dma2`, `tpu.enqueue_dma` and `tpu.enqueue_indirect_dma`, `tpu.matmul` and (after
//! `post-finalize-llo`) `llo.vmatmul.mubr`, `memref.load` and `llo.sld`. Every analysis, the performance model and
//! the summaries ask these predicates; none spells an opcode list of its own. LLO bundle mnemonics (`vmatmul.f32`,
//! `dma.hbm_to_vmem`) are [`super::llo`]'s.

/// The op name without its dialect: `tpu.enqueue_dma` → `enqueue_dma`, `llo.vmul.f32` → `vmul.f32`; an HLO
/// opcode (no dialect) is itself.
pub fn op_name(opcode: &str) -> &str {
    opcode.split_once('.').map_or(opcode, |x| x.1)
}

/// `tpu.enqueue_dma`, `tpu.enqueue_indirect_dma`, `*.dma_start`, `*.async_copy_start`.
pub fn is_dma_start(opcode: &str) -> bool {
    let b = op_name(opcode);
    let dma = b.contains("dma") || b.contains("async_copy");
    dma && (b.starts_with("enqueue") || b.contains("start")) && !b.contains("wait") && !b.contains("done")
}

/// `tpu.wait_dma`, `tpu.wait_dma2`, `tpu.wait_indirect_dma`, `*.dma_wait`, `llo.dma_done`.
pub fn is_dma_wait(opcode: &str) -> bool {
    let b = op_name(opcode);
    (b.contains("dma") || b.contains("async_copy")) && (b.contains("wait") || b.contains("done"))
}

/// `tpu.enqueue_indirect_dma`, `tpu.wait_indirect_dma`: a gather or scatter by row offsets, whose semaphore
/// operand is `semaphore` and whose size is one end's ([`indirect_dma_rows_role`]).
pub fn is_indirect_dma(opcode: &str) -> bool {
    op_name(opcode).contains("indirect") && (is_dma_start(opcode) || is_dma_wait(opcode))
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

/// `tpu.sem_signal`: adds units to a semaphore, locally or on another device.
pub fn is_semaphore_signal(opcode: &str) -> bool {
    op_name(opcode).starts_with("sem_signal")
}

/// `tpu.sem_wait`: blocks until a semaphore holds an amount, and takes it.
pub fn is_semaphore_wait(opcode: &str) -> bool {
    op_name(opcode).starts_with("sem_wait")
}

/// Any semaphore op: signals and waits, and `tpu.sem_alloc`, `tpu.sem_barrier`, `tpu.sem_read`.
pub fn is_semaphore_op(opcode: &str) -> bool {
    op_name(opcode).starts_with("sem_")
}

/// A semaphore the kernel makes itself: scratch (`tpu.sem_alloc`) or a collective's barrier (`tpu.sem_barrier`).
pub fn is_semaphore_alloc(opcode: &str) -> bool {
    let b = op_name(opcode);
    b.starts_with("sem_alloc") || b.starts_with("sem_barrier")
}

/// A constant: `arith.constant`, `llo.constant`, `stablehlo.constant`, HLO `constant`.
pub fn is_constant(opcode: &str) -> bool {
    op_name(opcode).starts_with("constant")
}

/// A matrix multiply anywhere: `tpu.matmul`, `vector.contract`, `stablehlo.dot_general`, HLO `dot` and
/// `convolution`, `llo.vmatmul*`.
pub fn is_matmul(opcode: &str) -> bool {
    let b = op_name(opcode);
    matches!(b, "matmul" | "dot_general" | "dot" | "convolution" | "contract")
        || opcode.starts_with("llo.vmatmul")
        || b.starts_with("vmatmul")
}

/// Ops that consume matmul operands: a matmul, and LLO's `vmatprep*` and `vmatpush*` that feed the MXU.
pub fn is_matmul_input(opcode: &str) -> bool {
    let b = op_name(opcode);
    is_matmul(opcode) || b.starts_with("vmatprep") || b.starts_with("vmatpush") || b.starts_with("vmatmul")
}

/// Ops whose result is a matmul result: a matmul, and LLO's `vmatres` that pops it.
pub fn is_matmul_output(opcode: &str) -> bool {
    let b = op_name(opcode);
    is_matmul(opcode) || b.starts_with("vmatres") || b.starts_with("matres")
}

/// `scf.for`, `scf.while`, `scf.parallel`, `scf.forall`, `stablehlo.while`.
pub fn is_loop(opcode: &str) -> bool {
    matches!(op_name(opcode), "for" | "while" | "parallel" | "forall") || opcode == "stablehlo.while"
}

/// `scf.if`, `scf.index_switch`, `stablehlo.case`.
pub fn is_conditional(opcode: &str) -> bool {
    matches!(op_name(opcode), "if" | "case" | "index_switch")
}

/// Ops that only view a memref (no data movement): `tpu.memref_slice`, `tpu.memref_squeeze`, `memref.subview`, ...
pub fn is_view(opcode: &str) -> bool {
    let b = op_name(opcode);
    b.starts_with("memref_slice")
        || b.starts_with("memref_squeeze")
        || b.starts_with("memref_reshape")
        || b.starts_with("memref_bitcast")
        || b.starts_with("reinterpret_cast")
        || matches!(b, "subview" | "reshape" | "collapse_shape" | "expand_shape" | "cast" | "view" | "bitcast")
            && opcode.starts_with("memref.")
        || b == "memref_cast"
}

/// A read of memory that is not a DMA: `vector.load`, `tpu.load`, `memref.load`, `tpu.strided_load`, LLO's
/// `llo.vector_load*` and scalar `llo.sld`, gathers.
pub fn is_load(opcode: &str) -> bool {
    let b = op_name(opcode);
    (b.contains("load") || b == "sld" || b.starts_with("gather")) && !b.contains("dma")
}

/// A write of memory that is not a DMA: `vector.store`, `tpu.store`, `memref.store`, LLO's `llo.vector_store*`
/// and scalar `llo.sst`, scatters.
pub fn is_store(opcode: &str) -> bool {
    let b = op_name(opcode);
    (b.contains("store") || b == "sst" || b.starts_with("scatter")) && !b.contains("dma")
}

/// A scalar access to a memref (`memref.load`/`memref.store` of one element: SMEM scalars, not a buffer's data).
pub fn is_scalar_access(opcode: &str) -> bool {
    matches!(opcode, "memref.load" | "memref.store")
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
        assert!(is_loop("scf.for") && is_conditional("scf.if"));
        assert!(is_view("tpu.memref_slice") && is_view("memref.subview") && !is_view("tpu.matmul"));
        assert!(is_semaphore_signal("tpu.sem_signal") && is_semaphore_wait("tpu.sem_wait"));
        assert!(is_semaphore_op("tpu.sem_barrier") && !is_semaphore_signal("tpu.sem_wait"));
        assert!(is_semaphore_alloc("tpu.sem_alloc") && is_semaphore_alloc("tpu.sem_barrier"));
        assert!(is_constant("arith.constant") && is_constant("constant") && !is_constant("tpu.matmul"));
    }

    #[test]
    fn loads_and_stores_are_not_dmas() {
        assert!(is_load("vector.load") && is_load("llo.sld") && is_load("llo.vector_load_unpack"));
        assert!(is_store("tpu.store") && is_store("llo.sst") && is_store("llo.vector_store_masked"));
        assert!(!is_load("tpu.enqueue_dma") && !is_store("llo.dma_store") && !is_load("llo.dma_load"));
        assert!(is_scalar_access("memref.load") && !is_scalar_access("vector.load"));
    }
}
