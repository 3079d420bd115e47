"""hlolint example: whole programs, the same 256 × 256 × 256 bf16 matmul as XLA computes it and as two Pallas
kernels, so that `hlolint compare` times every computation a compilation runs (docs/performance-model.md, "Whole
programs").

- `xla_matmul`: `jnp.matmul`, no Pallas kernel: XLA's own matmul fusion, with an async copy of one operand into
  VMEM before it.
- `xla_mlp`: `relu(x @ y) @ y`: XLA fuses both matmuls and the ReLU into one program (FLOPs of both).
- `pallas_whole`: a kernel without a grid: its operands are whole VMEM arrays, so XLA copies them into VMEM
  (`copy-start`/`copy-done`) before the call; that version pays the copies.
- `pallas_grid`: the same matmul pipelined over a 2 × 2 × 2 grid of 128³ blocks: the kernel fetches its blocks
  itself while it computes.
- `pallas_grid_after_relu`: `pallas_grid(x, relu(y))`: XLA's ReLU fusion runs first, and XLA prefetches `x` into
  VMEM while it does (`copy-start`/`copy-done` before the call): the kernel reads `x` from VMEM.

Follows the kernel-module convention of `hlolint compile` (examples/README.md).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

N = 256
B = 128


def xla_matmul(x, y):
    return jnp.matmul(x, y)


def xla_mlp(x, y):
    return jnp.matmul(jax.nn.relu(jnp.matmul(x, y)), y)


def _whole_kernel(x_ref, y_ref, o_ref):
    o_ref[...] = jnp.dot(x_ref[...], y_ref[...], preferred_element_type=jnp.float32).astype(o_ref.dtype)


def pallas_whole(x, y):
    return pl.pallas_call(_whole_kernel, out_shape=jax.ShapeDtypeStruct((N, N), jnp.bfloat16), name="mm_whole")(x, y)


def _grid_kernel(x_ref, y_ref, o_ref, acc_ref, *, nsteps):
    @pl.when(pl.program_id(2) == 0)
    def _():
        acc_ref[...] = jnp.zeros_like(acc_ref)

    acc_ref[...] += jnp.dot(x_ref[...], y_ref[...], preferred_element_type=jnp.float32)

    @pl.when(pl.program_id(2) == nsteps - 1)
    def _():
        o_ref[...] = acc_ref[...].astype(o_ref.dtype)


def pallas_grid(x, y):
    from jax.experimental.pallas import tpu as pltpu

    return pl.pallas_call(
        functools.partial(_grid_kernel, nsteps=N // B),
        grid=(N // B, N // B, N // B),
        in_specs=[pl.BlockSpec((B, B), lambda i, j, k: (i, k)), pl.BlockSpec((B, B), lambda i, j, k: (k, j))],
        out_specs=pl.BlockSpec((B, B), lambda i, j, k: (i, j)),
        out_shape=jax.ShapeDtypeStruct((N, N), jnp.bfloat16),
        scratch_shapes=[pltpu.VMEM((B, B), jnp.float32)],
        name="mm_grid",
    )(x, y)


def pallas_grid_after_relu(x, y):
    return pallas_grid(x, jax.nn.relu(y))


VERSIONS = {
    "xla_matmul": xla_matmul,
    "xla_mlp": xla_mlp,
    "pallas_whole": pallas_whole,
    "pallas_grid": pallas_grid,
    "pallas_grid_after_relu": pallas_grid_after_relu,
}


def example_args():
    s = jax.ShapeDtypeStruct((N, N), jnp.bfloat16)
    return (s, s)
