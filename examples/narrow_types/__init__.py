"""hlolint example: narrow-type matmuls (int8, int4, fp8 e4m3fn / e5m2) as XLA dots and as Pallas kernels.

The evidence behind the per-generation table of narrow MXU modes (docs/tpu-generations.md): compile every
version for tpu7x, v6e and v5e and read the LLO `vmatmul` formats and Mosaic `matmul_data_format`.

The operand dtype is the module's argument (`--module-args '["int8"]'`; default int8): one of int8, int4,
float8_e4m3fn, float8_e5m2. Kernel-module convention: see examples/README.md.
"""

from __future__ import annotations

import sys

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl

M = N = K = 256

DTYPES = {
    "int8": jnp.int8,
    "int4": jnp.int4,
    "float8_e4m3fn": jnp.float8_e4m3fn,
    "float8_e5m2": jnp.float8_e5m2,
}
_ARGS = [a for a in sys.argv[1:] if a in DTYPES]
DTYPE_NAME = _ARGS[0] if _ARGS else "int8"
DTYPE = DTYPES[DTYPE_NAME]
# Integer matmuls accumulate in int32, float ones in f32 (what quantized kernels ask for).
ACC = jnp.int32 if jnp.issubdtype(DTYPE, jnp.integer) else jnp.float32


def _dot(x, y, acc=ACC):
    return lax.dot_general(x, y, (((1,), (0,)), ((), ())), preferred_element_type=acc)


def dot(x, y):
    """XLA dot of two narrow operands, accumulated wide."""
    return _dot(x, y)


def dot_upcast(x, y):
    """The upcast in the code: both operands widened to bf16 before the dot."""
    return _dot(x.astype(jnp.bfloat16), y.astype(jnp.bfloat16), jnp.float32)


def _kernel(x_ref, y_ref, o_ref, *, upcast):
    x, y = x_ref[...], y_ref[...]
    if upcast:
        o_ref[...] = _dot(x.astype(jnp.bfloat16), y.astype(jnp.bfloat16), jnp.float32)
    else:
        o_ref[...] = _dot(x, y)


def _call(x, y, *, upcast, name):
    import functools

    out = jnp.float32 if upcast else ACC
    return pl.pallas_call(
        functools.partial(_kernel, upcast=upcast),
        out_shape=jax.ShapeDtypeStruct((x.shape[0], y.shape[1]), out),
        name=name,
    )(x, y)


def pallas(x, y):
    """A single-block Pallas kernel: `jnp.dot` of the narrow blocks with a wide accumulator."""
    return _call(x, y, upcast=False, name="narrow_mm")


def pallas_upcast(x, y):
    """The same kernel with the blocks widened to bf16 in the kernel."""
    return _call(x, y, upcast=True, name="narrow_mm_upcast")


VERSIONS = {"dot": dot, "dot_upcast": dot_upcast, "pallas": pallas, "pallas_upcast": pallas_upcast}


def example_args(m: int = M, n: int = N, k: int = K):
    return (jax.ShapeDtypeStruct((m, k), DTYPE), jax.ShapeDtypeStruct((k, n), DTYPE))
