"""hlolint example: the programs of jax's SparseCore guide whose measured TPU 7x times are published.

`docs/pallas/tpu/sparsecore.md` ("SparseCore Kernel Writing", jax-ml/jax) was run on a TPU 7x (its output prints
`SparseCore info for TPU 7x: SparseCoreInfo(num_cores=2, num_subcores=16, num_lanes=16, ...)`) and times, with
`%timeit ... .block_until_ready()`, programs on the TensorCore and on the SparseCores. This module writes each timed
program as the guide wrote it, so that `hlolint compile --target tpu7x` gives the dumps the performance model
predicts from; bench/calibration/points.toml holds the measured times and scripts/calibrate.py sets them beside
the predictions.

- `tc_add_one`: `x + 1` on the TensorCore, x a (4096, 128) int32 array — 2 MiB in, 2 MiB out: a program with
  almost no device time, so its measured time is mostly the harness's host dispatch (the source's estimate).
- `gather_tc`: `jnp.take(x, indices, axis=0)` on the TensorCore, x (4096, 128) int32, 4,194,304 random indices:
  a 2 GiB result.
- `sc_add_one`, `sc_gather`, `two_add_ones`: the same work as Pallas SparseCore kernels (vector-subcore mesh,
  `emit_pipeline` over the subcores) and the SparseCore and TensorCore add-ones in one program.

The SparseCore counts are the guide's printed ones (2 SparseCores of 16 subcores, 16 lanes), written as constants:
importing needs no device. jax 0.10.2 spells `pl.kernel`'s `out_shape=` as `out_type=` (and has no `scratch_shapes`:
the guide passes none). Follows the kernel-module convention (examples/README.md).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import tpu_sc as plsc

SC_CORES, SC_SUBCORES, SC_LANES = 2, 16, 16
ADD_SHAPE = (4096, 128)
BATCH, VALUE_DIM, WINDOW, STEPS = 4096, 128, 128, 1024
NUM_INDICES = WINDOW * SC_CORES * SC_SUBCORES * STEPS


def tc_add_one(x):
    return x + 1


def gather_tc(x, indices):
    return jnp.take(x, indices, axis=0)


def _vector_mesh():
    return plsc.VectorSubcoreMesh(
        core_axis_name="core", subcore_axis_name="subcore", num_cores=SC_CORES, num_subcores=SC_SUBCORES
    )


def sc_add_one(x):
    """The guide's pipelined SparseCore add-one: (8, 128) blocks split over every subcore."""
    op = (1, SC_LANES)
    block = (8, 128)

    @pl.kernel(out_type=x, mesh=_vector_mesh())
    def sc_add_one_kernel(x_hbm_ref, o_hbm_ref):
        def body(in_vmem, out_vmem):
            @pl.loop(0, in_vmem.shape[0], step=op[0])
            def _(c0):
                @pl.loop(0, in_vmem.shape[1], step=op[1])
                def _(c1):
                    slc = (pl.ds(c0, op[0]), pl.ds(c1, op[1]))
                    out_vmem.at[*slc][...] = in_vmem.at[*slc][...] + 1

        pltpu.emit_pipeline(
            body,
            grid=(x_hbm_ref.shape[0] // block[0], x_hbm_ref.shape[1] // block[1]),
            in_specs=[pl.BlockSpec(block_shape=block, index_map=lambda i, j: (i, j))],
            out_specs=[pl.BlockSpec(block_shape=block, index_map=lambda i, j: (i, j))],
            core_axis_name=("core", "subcore"),
            dimension_semantics=(pltpu.PARALLEL, pltpu.PARALLEL),
        )(x_hbm_ref, o_hbm_ref)

    return sc_add_one_kernel(x)


def two_add_ones(x):
    return sc_add_one(x), tc_add_one(x)


def sc_gather(x, indices):
    """The guide's SparseCore gather: index windows pipelined into each subcore, one gather DMA per window."""
    indices = indices.reshape((1, NUM_INDICES))

    @pl.kernel(out_type=jax.ShapeDtypeStruct((NUM_INDICES, VALUE_DIM), x.dtype), mesh=_vector_mesh())
    def kernel(x_hbm, i_hbm, o_hbm):
        def body(i_vmem, o_vmem):
            pltpu.sync_copy(x_hbm.at[i_vmem.at[0]], o_vmem)

        pltpu.emit_pipeline(
            body,
            grid=(NUM_INDICES // WINDOW,),
            in_specs=[pl.BlockSpec((1, WINDOW), index_map=lambda i: (0, i))],
            out_specs=[pl.BlockSpec((WINDOW, VALUE_DIM), index_map=lambda i: (i, 0))],
            core_axis_name="subcore",
            dimension_semantics=(pltpu.PARALLEL,),
        )(i_hbm, o_hbm)

    return kernel(x, indices)


def _i32(*shape):
    return jax.ShapeDtypeStruct(shape, jnp.int32)


VERSIONS: dict = {
    "tc_add_one": tc_add_one,
    "gather_tc": gather_tc,
    "sc_add_one": sc_add_one,
    "two_add_ones": two_add_ones,
    "sc_gather": sc_gather,
}
EXAMPLE_ARGS: dict = {
    "tc_add_one": (_i32(*ADD_SHAPE),),
    "sc_add_one": (_i32(*ADD_SHAPE),),
    "two_add_ones": (_i32(*ADD_SHAPE),),
    "gather_tc": (_i32(BATCH, VALUE_DIM), _i32(NUM_INDICES)),
    "sc_gather": (_i32(BATCH, VALUE_DIM), _i32(NUM_INDICES)),
}
