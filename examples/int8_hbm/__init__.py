"""hlolint example: where a manual-DMA kernel's "HBM" operands really live.

An int8 matmul whose kernel streams x and w from HBM itself (two-slot VMEM buffers, DMA semaphores), in three
versions that differ only in how the two streamed operands are declared:

  hbm_pinned    `memory_space=pltpu.HBM` and `pltpu.with_memory_space_constraint(x, pltpu.HBM)` on the
                pallas_call's arguments: the operands stay in HBM (clean).
  hbm_unpinned  `memory_space=pltpu.HBM` alone. The BlockSpec only types the kernel's ref; XLA may still place
                an operand that fits in VMEM there (on tpu7x it does: a `copy-start` to S(1) before the kernel),
                and then the kernel's "HBM" DMAs copy VMEM to VMEM.
  any           `memory_space=pl.ANY`: XLA decides, with the same result as hbm_unpinned on tpu7x.

Follows the kernel-module convention of `hlolint compile` (see examples/README.md).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

# M = N = K = 512 int8 (256 KiB per operand: small enough for XLA to place in VMEM), 128 x 128 tiles.
M = N = K = 512
TILE = 128

HBM = pltpu.HBM
ANY = pl.ANY


def _kernel(x_hbm, w_hbm, o_ref, xbuf, wbuf, sem, *, t, nk):
    """o[i, j] = sum_k x[i, k] @ w[j, k].T, streaming the k tiles of x and w through two VMEM slots."""
    i = pl.program_id(0)
    j = pl.program_id(1)

    def copies(k, slot):
        return (
            pltpu.make_async_copy(x_hbm.at[pl.ds(i * t, t), pl.ds(k * t, t)], xbuf.at[slot], sem.at[slot, 0]),
            pltpu.make_async_copy(w_hbm.at[pl.ds(j * t, t), pl.ds(k * t, t)], wbuf.at[slot], sem.at[slot, 1]),
        )

    for c in copies(0, 0):
        c.start()
    o_ref[...] = jnp.zeros_like(o_ref)

    def body(k, carry):
        slot = lax.rem(k, 2)

        @pl.when(k + 1 < nk)
        def _prefetch():
            for c in copies(k + 1, lax.rem(k + 1, 2)):
                c.start()

        for c in copies(k, slot):
            c.wait()
        o_ref[...] += lax.dot_general(
            xbuf[slot], wbuf[slot], (((1,), (1,)), ((), ())), preferred_element_type=jnp.int32
        )
        return carry

    lax.fori_loop(0, nk, body, 0)


def _call(x, w, *, name, space, pin):
    m, kdim = x.shape
    n = w.shape[0]
    t = TILE
    if pin:
        # what keeps the operands in HBM: the BlockSpec's memory space only types the kernel's ref
        x = pltpu.with_memory_space_constraint(x, space)
        w = pltpu.with_memory_space_constraint(w, space)
    return pl.pallas_call(
        functools.partial(_kernel, t=t, nk=kdim // t),
        out_shape=jax.ShapeDtypeStruct((m, n), jnp.int32),
        grid=(m // t, n // t),
        in_specs=[pl.BlockSpec(memory_space=space), pl.BlockSpec(memory_space=space)],
        out_specs=pl.BlockSpec((t, t), lambda i, j: (i, j)),
        scratch_shapes=[
            pltpu.VMEM((2, t, t), x.dtype),
            pltpu.VMEM((2, t, t), w.dtype),
            pltpu.SemaphoreType.DMA((2, 2)),
        ],
        compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "parallel")),
        name=name,
    )(x, w)


def int8_mm_hbm_pinned(x, w):
    return _call(x, w, name="int8_mm_hbm_pinned", space=HBM, pin=True)


def int8_mm_hbm_unpinned(x, w):
    return _call(x, w, name="int8_mm_hbm_unpinned", space=HBM, pin=False)


def int8_mm_any(x, w):
    return _call(x, w, name="int8_mm_any", space=ANY, pin=False)


VERSIONS = {
    "hbm_pinned": int8_mm_hbm_pinned,
    "hbm_unpinned": int8_mm_hbm_unpinned,
    "any": int8_mm_any,
}

RULES = {"hbm_pinned": "v2-dma", "hbm_unpinned": "v2-dma", "any": "v2-dma"}


def example_args():
    return (jax.ShapeDtypeStruct((M, K), jnp.int8), jax.ShapeDtypeStruct((N, K), jnp.int8))


def reference(x, w):
    return lax.dot_general(x, w, (((1,), (1,)), ((), ())), preferred_element_type=jnp.int32)


def make_inputs(key):
    kx, kw = jax.random.split(key)
    x = jax.random.randint(kx, (M, K), -128, 128, jnp.int32).astype(jnp.int8)
    w = jax.random.randint(kw, (N, K), -128, 128, jnp.int32).astype(jnp.int8)
    return x, w
