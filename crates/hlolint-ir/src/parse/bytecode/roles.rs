//! Operand roles for decoded ops.
//!
//! Bytecode (like MLIR's generic form) lists an op's operands positionally, grouped by `operandSegmentSizes` when
//! the op has optional or variadic operands. The custom syntax of a text dump names them instead
//! (`tpu.enqueue_dma source(..) target(..) target_semaphore(..)`, `%ref[%i, %j]`), and the MLIR text parser
//! records those names as `Operand::role`. This table gives decoded ops the same roles, from the ops' ODS operand
//! lists (Mosaic's `tpu` dialect as of jax 0.10.x, and the upstream `vector`/`memref`/`scf` ops kernels use), so
//! the kernel view reads a decoded kernel exactly as it reads a dump. Unknown ops keep positional operands.

/// One entry per ODS operand group, in order; `None` where the custom syntax gives no keyword.
fn groups(opcode: &str) -> Option<&'static [Option<&'static str>]> {
    const S: Option<&str> = None;
    Some(match opcode {
        "tpu.enqueue_dma" => &[
            Some("source"),
            Some("source_semaphore"),
            Some("target"),
            Some("target_semaphore"),
            Some("device_id"),
            Some("core_id"),
            Some("subcore_id"),
        ],
        "tpu.wait_dma2" => &[Some("semaphore"), Some("src"), Some("dst"), Some("device_id"), Some("core_id")],
        "tpu.memref_slice" => &[S, Some("indices"), Some("dynamic_sizes")],
        "tpu.vector_load" | "tpu.vector_load_idx" => &[S, Some("indices"), Some("mask")],
        "tpu.vector_store" | "tpu.vector_store_idx" | "tpu.store" => &[S, S, Some("indices"), Some("mask")],
        "tpu.sem_signal" => {
            &[Some("semaphore"), Some("amount"), Some("device_id"), Some("core_id"), Some("subcore_id")]
        }
        // Fixed-arity ops with a variadic tail of indices.
        "vector.load" | "memref.load" | "vector.maskedload" => &[S, Some("indices")],
        "vector.store" | "memref.store" => &[S, S, Some("indices")],
        "scf.for" => &[S, Some("to"), Some("step"), Some("init")],
        _ => return None,
    })
}

/// Roles for `n` operands of `opcode`, given its `operandSegmentSizes` when it has one.
pub fn operand_roles(opcode: &str, n: usize, segments: Option<&[i64]>) -> Vec<Option<&'static str>> {
    let Some(groups) = groups(opcode) else { return vec![None; n] };
    let mut out = Vec::with_capacity(n);
    // Segment sizes come from the input: trusted only when they account for exactly the operands present.
    let fits = |sizes: &[i64]| {
        sizes.len() == groups.len()
            && sizes.iter().all(|&s| s >= 0)
            && sizes.iter().try_fold(0usize, |acc, &s| acc.checked_add(s as usize)) == Some(n)
    };
    match segments {
        Some(sizes) if fits(sizes) => {
            for (g, &size) in groups.iter().zip(sizes) {
                out.extend(std::iter::repeat_n(*g, size.max(0) as usize));
            }
        }
        _ if opcode == "tpu.enqueue_dma" && n == 3 => {
            // No (usable) segments and only the mandatory operands: no source semaphore, local DMA.
            out.extend([Some("source"), Some("target"), Some("target_semaphore")]);
        }
        _ => {
            // No segments: one operand per group, the last group takes the rest.
            for k in 0..n {
                out.push(groups[k.min(groups.len() - 1)]);
            }
        }
    }
    out.resize(n, None);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enqueue_dma_without_segments_has_its_three_mandatory_operands() {
        assert_eq!(
            operand_roles("tpu.enqueue_dma", 3, None),
            vec![Some("source"), Some("target"), Some("target_semaphore")]
        );
        assert_eq!(
            operand_roles("tpu.enqueue_dma", 3, Some(&[1, 1, 1])),
            vec![Some("source"), Some("target"), Some("target_semaphore")]
        );
    }

    #[test]
    fn segments_and_variadic_tails() {
        assert_eq!(
            operand_roles("tpu.enqueue_dma", 3, Some(&[1, 0, 1, 1, 0, 0, 0])),
            vec![Some("source"), Some("target"), Some("target_semaphore")]
        );
        assert_eq!(
            operand_roles("tpu.memref_slice", 3, Some(&[1, 2, 0])),
            vec![None, Some("indices"), Some("indices")]
        );
        assert_eq!(operand_roles("vector.load", 3, None), vec![None, Some("indices"), Some("indices")]);
        assert_eq!(operand_roles("arith.addi", 2, None), vec![None, None]);
        // A segment list that does not fit the table or the operands is ignored rather than trusted.
        assert_eq!(operand_roles("tpu.wait_dma2", 3, Some(&[1, 1])), vec![Some("semaphore"), Some("src"), Some("dst")]);
        assert_eq!(operand_roles("tpu.memref_slice", 2, Some(&[1, i64::MAX, 0])), vec![None, Some("indices")]);
        assert_eq!(operand_roles("tpu.memref_slice", 2, Some(&[1, -5, 6])), vec![None, Some("indices")]);
    }
}
