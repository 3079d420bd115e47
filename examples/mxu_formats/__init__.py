"""hlolint example: the MXU formats of f32 and bf16 matmuls, in Pallas kernels and in XLA dots.

The evidence behind the `mxu-f32` rule (rules/core.yaml) and its cases (tests/data/rules/mxu-f32): a Pallas
kernel whose `jnp.dot` reads an f32 activation runs the MXU in f32 (`vmatmul.f32` on v5e, `vmatmul.mubr.f32` on
tpu7x) with twice the `vmatmul` ops of the bf16 kernel; an XLA dot of f32 operands runs bf16 at the default
precision and f32 with `precision=HIGHEST` (12× the `vmatmul` ops on tpu7x). 128 × 128 operands.

Follows the kernel-module convention of `hlolint compile` (examples/README.md).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

N = 128


def _kernel(x_ref, w_ref, o_ref):
    o_ref[...] = jnp.dot(x_ref[...], w_ref[...], preferred_element_type=jnp.float32)


def _call(x, w, name):
    return pl.pallas_call(_kernel, out_shape=jax.ShapeDtypeStruct((x.shape[0], w.shape[1]), jnp.float32), name=name)(
        x, w
    )


def f32_bf16(x, w):
    """An f32 activation times bf16 weights in a kernel: Mosaic widens the weights, the MXU runs f32."""
    return _call(x, w, "mm_f32_bf16")


def bf16(x, w):
    return _call(x, w, "mm_bf16")


def f32(x, w):
    return _call(x, w, "mm_f32")


def xla_f32(x, w):
    """XLA at the default precision: f32 operands rounded to bf16 for the MXU."""
    return jnp.dot(x, w, preferred_element_type=jnp.float32)


def xla_f32_highest(x, w):
    """XLA with precision=HIGHEST: the MXU runs f32 (in several passes)."""
    return jnp.dot(x, w, preferred_element_type=jnp.float32, precision=jax.lax.Precision.HIGHEST)


VERSIONS = {"f32_bf16": f32_bf16, "bf16": bf16, "f32": f32, "xla_f32": xla_f32, "xla_f32_highest": xla_f32_highest}

_S = jax.ShapeDtypeStruct
EXAMPLE_ARGS = {
    "f32_bf16": (_S((N, N), jnp.float32), _S((N, N), jnp.bfloat16)),
    "bf16": (_S((N, N), jnp.bfloat16), _S((N, N), jnp.bfloat16)),
    "f32": (_S((N, N), jnp.float32), _S((N, N), jnp.float32)),
    "xla_f32": (_S((N, N), jnp.float32), _S((N, N), jnp.bfloat16)),
    "xla_f32_highest": (_S((N, N), jnp.float32), _S((N, N), jnp.float32)),
}
