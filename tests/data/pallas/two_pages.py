"""A block copied as two pages on one semaphore (rows 0:8 and 8:16 of a scratch), one wait for both: the
second page read before the wait (`bug_second_page`), or rows 16:24, which no DMA fills (`beside_pages`).

A kernel module of the driver's form (VERSIONS, example_args, make_inputs), for tests/python/test_oracle.py:
dma-race's verdict on its compiled kernel against jax's race detector on the same kernel."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def kernel(x_hbm, o_ref, buf, sem, *, read_at):
    c0 = pltpu.make_async_copy(x_hbm.at[pl.ds(0, 8)], buf.at[pl.ds(0, 8)], sem.at[0])
    c1 = pltpu.make_async_copy(x_hbm.at[pl.ds(8, 8)], buf.at[pl.ds(8, 8)], sem.at[0])
    c0.start()
    c1.start()
    o_ref[...] = buf[pl.ds(read_at, 8), :]
    # one wait of both pages' bytes
    pltpu.make_async_copy(x_hbm.at[pl.ds(0, 16)], buf.at[pl.ds(0, 16)], sem.at[0]).wait()


def build(read_at):
    return pl.pallas_call(
        functools.partial(kernel, read_at=read_at),
        out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32),
        in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
        out_specs=pl.BlockSpec(memory_space=pltpu.VMEM),
        scratch_shapes=[pltpu.VMEM((32, 128), jnp.float32), pltpu.SemaphoreType.DMA((1,))],
    )


# (built when traced: the oracle's interpreter replaces pallas_call for the run)
VERSIONS = {"bug_second_page": lambda x: build(8)(x), "beside_pages": lambda x: build(16)(x)}


def make_inputs():
    return (jnp.arange(16 * 128, dtype=jnp.float32).reshape(16, 128),)


def example_args():
    return (jax.ShapeDtypeStruct((16, 128), jnp.float32),)
