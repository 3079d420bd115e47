"""fp8 2D block-quantized matmul as Pallas TPU kernels, in several versions.

    out[M, N] = (x_q @ w_q.T) * x_scale * w_scale        (f32 result)

x_q: (M, K) float8_e4m3fn, w_q: (N, K) float8_e4m3fn, x_scale: (M/B, K/B) f32, w_scale: (N/B, K/B) f32,
where B is the 2D quantization block (128, 256 or 512). Scale (i, k) applies to the B x B block (i, k), so

    out[i-block, j-block] = sum_k (x_q[i, k] @ w_q[j, k].T) * x_scale[i, k] * w_scale[j, k]

Every kernel tiles by the quantization block (tm = tn = tk = B), so each tile needs exactly one scale pair.
B is derived from the scale shapes. All versions take and return the same arrays.

Clean versions:
  v1  auto double buffering: PrefetchScalarGridSpec, grid (M/B, N/B, K/B), BlockSpecs for everything
      (scales as (1, 1) VMEM blocks); Pallas/Mosaic pipelines the block copies.
  v2  manual async DMA: x and w stay in HBM, the kernel loops over K with 2-slot VMEM scratch buffers,
      DMA semaphores DMA((2, 2)) (slot x operand), starts block k+1 before computing block k. Scales are
      pipelined VMEM blocks.
  v3  v2 with the scales in SMEM (scalar prefetch: PrefetchScalarGridSpec(num_scalar_prefetch=2)).

Planted bugs (each a separate version, for the linter's tests):
  bug_upcast        v1 with w widened to bf16 before the dot: the MXU never sees fp8.
  bug_unwaited_dma  v2 whose prefetch is not guarded by `k + 1 < nk`: the last iteration starts a DMA
                    (of a clamped, valid block) that nobody waits for. Numerically still correct.
  bug_single_slot   v2 with one buffer per operand: the prefetch of block k+1 lands in the buffer the
                    compute of block k reads. A race (wrong results on hardware and in eager interpret mode).
  bug_scales_vmem   v3 with the scale tables in VMEM (whole-array VMEM operands) instead of SMEM.
  bug_any_in_vmem   v2 with x and w declared `memory_space=ANY` instead of HBM: XLA is free to place
                    operands that fit in VMEM, and then the "HBM" DMAs copy VMEM to VMEM.
  bug_bad_block     v1 with an x block of (B - 6, B) rows: not divisible by 8, so Pallas TPU lowering fails.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

from . import _compat as C

F8 = jnp.float8_e4m3fn
F8_MAX = 448.0

# Block dimension that is squeezed away in the kernel's ref (jax 0.10: `pl.squeezed`, older: None).
SQ = getattr(pl, "squeezed", None)


def _block_of(x_q, x_scale) -> int:
    return x_q.shape[0] // x_scale.shape[0]


def _dot_nt(x, w):
    """x (B, B) @ w (B, B).T with f32 accumulation, operands kept in their own dtype."""
    return lax.dot_general(x, w, (((1,), (1,)), ((), ())), preferred_element_type=jnp.float32)


def _scale4(s):
    """(R, C) scales -> (R, C, 1, 1): a (1, 1) trailing tile is a legal VMEM block for any (r, c)."""
    return s.reshape(s.shape + (1, 1))


# ----------------------------------------------------------------------------------------------
# v1: auto double buffering (and its planted bugs bug_upcast, bug_bad_block)
# ----------------------------------------------------------------------------------------------
def _v1_kernel(x_ref, w_ref, xs_ref, ws_ref, o_ref, *, upcast_w: bool):
    k = pl.program_id(2)

    @pl.when(k == 0)
    def _init():
        o_ref[...] = jnp.zeros_like(o_ref)

    x = x_ref[...]
    w = w_ref[...]
    if upcast_w:
        # planted bug: the weights are widened before the dot, so the MXU runs bf16, not fp8
        w = w.astype(jnp.bfloat16)
        x = x.astype(jnp.bfloat16)
    o_ref[...] += _dot_nt(x, w) * (xs_ref[...] * ws_ref[...])


def _v1_call(x_q, w_q, x_scale, w_scale, *, name, upcast_w=False, x_rows=None):
    m, kdim = x_q.shape
    n = w_q.shape[0]
    b = _block_of(x_q, x_scale)
    bm = b if x_rows is None else x_rows
    grid = (pl.cdiv(m, bm), n // b, kdim // b)
    grid_spec = pltpu.PrefetchScalarGridSpec(
        num_scalar_prefetch=0,
        grid=grid,
        in_specs=[
            pl.BlockSpec((bm, b), lambda i, j, k: (i, k)),
            pl.BlockSpec((b, b), lambda i, j, k: (j, k)),
            pl.BlockSpec((SQ, SQ, 1, 1), lambda i, j, k: (i, k, 0, 0)),
            pl.BlockSpec((SQ, SQ, 1, 1), lambda i, j, k: (j, k, 0, 0)),
        ],
        out_specs=pl.BlockSpec((bm, b), lambda i, j, k: (i, j)),
    )
    return pl.pallas_call(
        functools.partial(_v1_kernel, upcast_w=upcast_w),
        out_shape=jax.ShapeDtypeStruct((m, n), jnp.float32),
        grid_spec=grid_spec,
        compiler_params=C.compiler_params(dimension_semantics=("parallel", "parallel", "arbitrary")),
        interpret=C.interpret_arg(),
        name=name,
    )(x_q, w_q, _scale4(x_scale), _scale4(w_scale))


def fp8_matmul_v1(x_q, w_q, x_scale, w_scale):
    return _v1_call(x_q, w_q, x_scale, w_scale, name="fp8_mm_v1")


def fp8_matmul_bug_upcast(x_q, w_q, x_scale, w_scale):
    return _v1_call(x_q, w_q, x_scale, w_scale, name="fp8_mm_bug_upcast", upcast_w=True)


def fp8_matmul_bug_bad_block(x_q, w_q, x_scale, w_scale):
    b = _block_of(x_q, x_scale)
    return _v1_call(x_q, w_q, x_scale, w_scale, name="fp8_mm_bug_bad_block", x_rows=b - 6)


# ----------------------------------------------------------------------------------------------
# v2 / v3: manual async DMA with 2-slot VMEM buffers (and their planted bugs)
# ----------------------------------------------------------------------------------------------
def _dma_kernel(*refs, b, nk, scales, slots, guard_prefetch):
    """Shared body of v2, v3 and their bugs.

    scales: "vmem_rows" (v2: refs (nk, 1, 1) for this i / j), "smem" (v3: scalar-prefetched (Mb, Kb)
            tables), "vmem_table" (bug_scales_vmem: whole (Mb, Kb, 1, 1) tables in VMEM).
    slots:  2 (double buffering) or 1 (bug_single_slot).
    """
    if scales == "smem":
        xs_ref, ws_ref, x_hbm, w_hbm, o_ref, xbuf, wbuf, sem = refs
    else:
        x_hbm, w_hbm, xs_ref, ws_ref, o_ref, xbuf, wbuf, sem = refs
    i = pl.program_id(0)
    j = pl.program_id(1)

    def copies(k, slot):
        k = jnp.minimum(k, nk - 1)  # clamp: only matters for the unguarded (buggy) prefetch
        return (
            pltpu.make_async_copy(x_hbm.at[pl.ds(i * b, b), pl.ds(k * b, b)], xbuf.at[slot], sem.at[slot, 0]),
            pltpu.make_async_copy(w_hbm.at[pl.ds(j * b, b), pl.ds(k * b, b)], wbuf.at[slot], sem.at[slot, 1]),
        )

    def scale(k):
        if scales == "smem":
            return xs_ref[i, k] * ws_ref[j, k]  # scalar loads from SMEM
        if scales == "vmem_table":
            return xs_ref[i, k] * ws_ref[j, k]  # (1, 1) vector loads from VMEM
        return xs_ref[k] * ws_ref[k]  # (1, 1) vector loads from VMEM

    # prologue: the first block into slot 0
    for c in copies(0, 0):
        c.start()
    o_ref[...] = jnp.zeros_like(o_ref)

    def body(k, carry):
        slot = lax.rem(k, slots)
        nxt = lax.rem(k + 1, slots)

        def prefetch():
            for c in copies(k + 1, nxt):
                c.start()

        if slots == 1:
            # planted bug (single slot): wait for block k, then immediately DMA block k+1 into the
            # same buffer while the dot below reads it
            for c in copies(k, slot):
                c.wait()
            pl.when(k + 1 < nk)(prefetch)
        else:
            if guard_prefetch:
                pl.when(k + 1 < nk)(prefetch)
            else:
                prefetch()  # planted bug: also on the last iteration; that DMA is never waited
            for c in copies(k, slot):
                c.wait()
        o_ref[...] += _dot_nt(xbuf[slot], wbuf[slot]) * scale(k)
        return carry

    lax.fori_loop(0, nk, body, 0)


def _dma_call(x_q, w_q, x_scale, w_scale, *, name, space=None, scales="vmem_rows", slots=2, guard_prefetch=True):
    m, kdim = x_q.shape
    n = w_q.shape[0]
    b = _block_of(x_q, x_scale)
    nk = kdim // b
    space = C.HBM if space is None else space
    kernel = functools.partial(_dma_kernel, b=b, nk=nk, scales=scales, slots=slots, guard_prefetch=guard_prefetch)
    hbm_specs = [pl.BlockSpec(memory_space=space), pl.BlockSpec(memory_space=space)]
    scratch = [
        pltpu.VMEM((slots, b, b), x_q.dtype),
        pltpu.VMEM((slots, b, b), w_q.dtype),
        C.semaphore_dma((slots, 2)),
    ]
    if scales == "smem":
        grid_spec = pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=2,
            grid=(m // b, n // b),
            in_specs=hbm_specs,
            out_specs=pl.BlockSpec((b, b), lambda i, j, xs, ws: (i, j)),
            scratch_shapes=scratch,
        )
        args = (x_scale, w_scale, C.pin(x_q, space), C.pin(w_q, space))
    else:
        if scales == "vmem_table":
            scale_specs = [pl.BlockSpec(memory_space=C.VMEM), pl.BlockSpec(memory_space=C.VMEM)]
        else:
            scale_specs = [
                pl.BlockSpec((SQ, nk, 1, 1), lambda i, j: (i, 0, 0, 0)),
                pl.BlockSpec((SQ, nk, 1, 1), lambda i, j: (j, 0, 0, 0)),
            ]
        grid_spec = pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=0,
            grid=(m // b, n // b),
            in_specs=hbm_specs + scale_specs,
            out_specs=pl.BlockSpec((b, b), lambda i, j: (i, j)),
            scratch_shapes=scratch,
        )
        args = (C.pin(x_q, space), C.pin(w_q, space), _scale4(x_scale), _scale4(w_scale))
    return pl.pallas_call(
        kernel,
        out_shape=jax.ShapeDtypeStruct((m, n), jnp.float32),
        grid_spec=grid_spec,
        compiler_params=C.compiler_params(dimension_semantics=("parallel", "parallel")),
        interpret=C.interpret_arg(),
        name=name,
    )(*args)


def fp8_matmul_v2(x_q, w_q, x_scale, w_scale):
    return _dma_call(x_q, w_q, x_scale, w_scale, name="fp8_mm_v2")


def fp8_matmul_v3(x_q, w_q, x_scale, w_scale):
    return _dma_call(x_q, w_q, x_scale, w_scale, name="fp8_mm_v3", scales="smem")


def fp8_matmul_bug_unwaited_dma(x_q, w_q, x_scale, w_scale):
    return _dma_call(x_q, w_q, x_scale, w_scale, name="fp8_mm_bug_unwaited_dma", guard_prefetch=False)


def fp8_matmul_bug_single_slot(x_q, w_q, x_scale, w_scale):
    return _dma_call(x_q, w_q, x_scale, w_scale, name="fp8_mm_bug_single_slot", slots=1)


def fp8_matmul_bug_scales_vmem(x_q, w_q, x_scale, w_scale):
    return _dma_call(x_q, w_q, x_scale, w_scale, name="fp8_mm_bug_scales_vmem", scales="vmem_table")


def fp8_matmul_bug_any_in_vmem(x_q, w_q, x_scale, w_scale):
    return _dma_call(x_q, w_q, x_scale, w_scale, name="fp8_mm_bug_any_in_vmem", space=C.ANY)


# ----------------------------------------------------------------------------------------------
# reference and inputs
# ----------------------------------------------------------------------------------------------
def _expand(s, b):
    return jnp.repeat(jnp.repeat(s, b, axis=0), b, axis=1)


def reference(x_q, w_q, x_scale, w_scale):
    """Pure-JAX reference: dequantize to f32 and multiply."""
    b = _block_of(x_q, x_scale)
    x = x_q.astype(jnp.float32) * _expand(x_scale, b)
    w = w_q.astype(jnp.float32) * _expand(w_scale, b)
    return jnp.dot(x, w.T, precision=lax.Precision.HIGHEST)


def quantize_2d(a, block):
    """f32 (R, C) -> (float8_e4m3fn (R, C), f32 scales (R/block, C/block)), per 2D block amax scaling."""
    r, c = a.shape
    blocks = a.reshape(r // block, block, c // block, block)
    amax = jnp.max(jnp.abs(blocks), axis=(1, 3))
    scale = jnp.maximum(amax, 1e-12) / F8_MAX
    q = (blocks / scale[:, None, :, None]).reshape(r, c).astype(F8)
    return q, scale.astype(jnp.float32)
