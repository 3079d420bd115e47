"""hlolint example: fp8 2D block-quantized matmul, v1/v2/v3 plus planted bugs.

Follows the kernel-module convention of `hlolint compile` (see examples/README.md):
  VERSIONS        name -> callable to jit
  example_args()  tuple of jax.ShapeDtypeStruct (the driver attaches the target's sharding)
  reference()     pure-JAX reference (optional)
  make_inputs()   concrete inputs from a PRNG key (optional)
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from . import kernels
from ._compat import set_interpret
from .kernels import quantize_2d, reference

# Default problem: M = N = K = 512, 2D quantization block 128 (scales are 4 x 4; grid 4 x 4 x 4).
# 128 x 128 is the usual fp8 block quantization (DeepSeek-V3 style); 128-row tiles also keep the dumps small.
M = N = K = 512
BLOCK = 128

VERSIONS = {
    "v1": kernels.fp8_matmul_v1,
    "v2": kernels.fp8_matmul_v2,
    "v3": kernels.fp8_matmul_v3,
    "bug_upcast": kernels.fp8_matmul_bug_upcast,
    "bug_unwaited_dma": kernels.fp8_matmul_bug_unwaited_dma,
    "bug_single_slot": kernels.fp8_matmul_bug_single_slot,
    "bug_scales_vmem": kernels.fp8_matmul_bug_scales_vmem,
    "bug_any_in_vmem": kernels.fp8_matmul_bug_any_in_vmem,
    "bug_bad_block": kernels.fp8_matmul_bug_bad_block,
}


# The hlolint rule pack each version is written against (the user's guide's checklist per version); the driver
# records it in the manifest and `hlolint` lints each version with its own pack.
RULES = {
    "v1": "v1-auto",
    "v2": "v2-dma",
    "v3": "v3-smem",
    "bug_upcast": "v1-auto",
    "bug_unwaited_dma": "v2-dma",
    "bug_single_slot": "v2-dma",
    "bug_scales_vmem": "v3-smem",
    "bug_any_in_vmem": "v2-dma",
    "bug_bad_block": "v1-auto",
}


def example_args(m: int = M, n: int = N, k: int = K, block: int = BLOCK):
    return (
        jax.ShapeDtypeStruct((m, k), jnp.float8_e4m3fn),
        jax.ShapeDtypeStruct((n, k), jnp.float8_e4m3fn),
        jax.ShapeDtypeStruct((m // block, k // block), jnp.float32),
        jax.ShapeDtypeStruct((n // block, k // block), jnp.float32),
    )


def make_inputs(key, m: int = M, n: int = N, k: int = K, block: int = BLOCK):
    kx, kw = jax.random.split(key)
    x = jax.random.normal(kx, (m, k), jnp.float32)
    w = jax.random.normal(kw, (n, k), jnp.float32)
    x_q, x_scale = quantize_2d(x, block)
    w_q, w_scale = quantize_2d(w, block)
    return x_q, w_q, x_scale, w_scale


__all__ = ["VERSIONS", "example_args", "make_inputs", "reference", "set_interpret", "BLOCK", "M", "N", "K"]
