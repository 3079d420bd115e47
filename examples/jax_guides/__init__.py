"""hlolint example: the programs of jax's two Pallas TPU guides whose measured TPU v5e times are published.

The calibration table bench/calibration/points.toml holds the guides' measured times (cell outputs); this module
is each timed program written as the guide wrote it, so that `hlolint compile --target v5e` gives the dumps the
performance model predicts from and scripts/calibrate.py can set prediction beside measurement.

- `docs/pallas/tpu/matmul.ipynb` ("Matrix Multiplication"): the bf16 matmul kernel with an f32 VMEM accumulator
  (`mm_*`), the same with a fused transposed right-hand side (`mm_t_*`: the caller's `y` is `(n, k)` and the
  guide's wrapper swaps it back to logical `(k, n)` before the kernel swaps it again) and with a fused ReLU
  (`mm_relu_*`), each at 1024³, 4096³ and 8192³ with blocks (128, 128, 128) and (512, 1024, 1024); and
  `jnp.matmul` itself (`xla_*`).
- `docs/pallas/tpu/sparse.ipynb` ("Scalar Prefetch and Block-Sparse Computation"): the block-sparse × dense
  kernel (`sparse_dsd`, 16384³, 512 blocks, p = 0.1), the dense matmul with a block-sparse (lower-triangular)
  output mask (`masked_mm`, blocks 512 × 512 × 1024), and the XLA programs the guide compares them with
  (`sparse_dsd_ref`, `masked_mm_ref`).

Version names: `<program>_<size>_b<bm>x<bk>x<bn>`. Follows the kernel-module convention (examples/README.md).
Importing needs no device: the sparse guide's block count is a constant here (see `DSD_BLOCKS`).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

SIZES = (1024, 4096, 8192)
BLOCKS = ((128, 128, 128), (512, 1024, 1024))


# ------------------------------------------------------------------ the matmul guide


def _mm_kernel(x_ref, y_ref, z_ref, acc_ref, *, nsteps, transpose_rhs, activation):
    @pl.when(pl.program_id(2) == 0)
    def _():
        acc_ref[...] = jnp.zeros_like(acc_ref)

    dims = (((1,), (1,)), ((), ())) if transpose_rhs else (((1,), (0,)), ((), ()))
    acc_ref[...] += jax.lax.dot_general(x_ref[...], y_ref[...], dims, preferred_element_type=jnp.float32)

    @pl.when(pl.program_id(2) == nsteps - 1)
    def _():
        z_ref[...] = activation(acc_ref[...]).astype(z_ref.dtype)


def _identity(x):
    return x


def _matmul(x, y, *, bm, bk, bn, transpose_rhs=False, activation=_identity, name="matmul"):
    """The guide's templated `matmul` (its last form; the plain kernel is this with the defaults)."""
    if transpose_rhs:
        y = y.swapaxes(0, 1)
        y_spec = pl.BlockSpec((bn, bk), lambda i, j, k: (j, k))
    else:
        y_spec = pl.BlockSpec((bk, bn), lambda i, j, k: (k, j))
    m, k = x.shape
    _, n = y.shape
    return pl.pallas_call(
        functools.partial(_mm_kernel, nsteps=k // bk, transpose_rhs=transpose_rhs, activation=activation),
        grid_spec=pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=0,
            in_specs=[pl.BlockSpec((bm, bk), lambda i, j, k: (i, k)), y_spec],
            out_specs=pl.BlockSpec((bm, bn), lambda i, j, k: (i, j)),
            scratch_shapes=[pltpu.VMEM((bm, bn), jnp.float32)],
            grid=(m // bm, n // bn, k // bk),
        ),
        out_shape=jax.ShapeDtypeStruct((m, n), x.dtype),
        compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "parallel", "arbitrary")),
        name=name,
    )(x, y)


def _transposed(x, y_nk, **kw):
    # The guide's benchmark wrapper: y arrives physically (n, k) and is swapped back to logical (k, n).
    return _matmul(x, y_nk.swapaxes(0, 1), transpose_rhs=True, **kw)


VERSIONS: dict = {}
EXAMPLE_ARGS: dict = {}


def _bf16(*shape):
    return jax.ShapeDtypeStruct(shape, jnp.bfloat16)


for _size in SIZES:
    for _bm, _bk, _bn in BLOCKS:
        _tag = f"{_size}_b{_bm}x{_bk}x{_bn}"
        _blocks = dict(bm=_bm, bk=_bk, bn=_bn)
        VERSIONS[f"mm_{_tag}"] = functools.partial(_matmul, **_blocks, name="mm")
        VERSIONS[f"mm_t_{_tag}"] = functools.partial(_transposed, **_blocks, name="mm_t")
        VERSIONS[f"mm_relu_{_tag}"] = functools.partial(_matmul, **_blocks, activation=jax.nn.relu, name="mm_relu")
        _sq = (_bf16(_size, _size), _bf16(_size, _size))
        for _v in ("mm", "mm_t", "mm_relu"):
            EXAMPLE_ARGS[f"{_v}_{_tag}"] = _sq
    VERSIONS[f"xla_{_size}"] = jnp.matmul
    EXAMPLE_ARGS[f"xla_{_size}"] = (_bf16(_size, _size), _bf16(_size, _size))


# ------------------------------------------------------------------ the block-sparse guide

SPARSE = 16384
SPARSE_BLOCK = 512
# The guide samples its block mask with `jax.random.bernoulli(split(key(0))[0], p=0.1, shape=(32, 32))`: 107
# non-zero blocks with jax 0.10.2 on CPU (threefry is platform-independent). The block count sets the grid and the
# shapes of the scalar-prefetch tables; which blocks they are changes only the fetches, which the model reads as a
# range from the run-time index map anyway.
DSD_BLOCKS = 107


def _dsd_kernel(idxs_i_ref, idxs_k_ref, x_ref, y_ref, _, o_ref, accum_scratch, *, num_blocks):
    del idxs_k_ref
    blk_idx = pl.program_id(1)
    is_start = blk_idx == 0
    changed_blocks = idxs_i_ref[blk_idx] != idxs_i_ref[jnp.maximum(blk_idx - 1, 0)]

    @pl.when(is_start | changed_blocks)
    def _():
        accum_scratch[...] = jnp.zeros_like(accum_scratch)

    accum_scratch[...] += jnp.dot(x_ref[0, :, :], y_ref[...], preferred_element_type=jnp.float32)
    next_block_change = idxs_i_ref[blk_idx] != idxs_i_ref[jnp.minimum(blk_idx + 1, num_blocks)]
    is_end = blk_idx == (num_blocks - 1)

    @pl.when(is_end | next_block_change)
    def _():
        o_ref[...] = accum_scratch[...].astype(o_ref.dtype)


def sparse_dsd(indices_i, indices_k, x_blocks, y, zeros):
    """Dense = block-sparse @ dense: grid (N / 512, non-zero blocks), the RHS block chosen by scalar prefetch."""
    b = SPARSE_BLOCK
    num_blocks = x_blocks.shape[0]
    grid_spec = pltpu.PrefetchScalarGridSpec(
        num_scalar_prefetch=2,
        grid=(SPARSE // b, num_blocks),
        in_specs=[
            pl.BlockSpec((1, b, b), lambda j, blk, bi, bk: (blk, 0, 0)),
            pl.BlockSpec((b, b), lambda j, blk, bi, bk: (bk[blk], j)),
            pl.BlockSpec((b, b), lambda j, blk, bi, bk: (bi[blk], j)),
        ],
        out_specs=pl.BlockSpec((b, b), lambda j, blk, bi, bk: (bi[blk], j)),
        scratch_shapes=[pltpu.VMEM((b, b), dtype=jnp.float32)],
    )
    return pl.pallas_call(
        functools.partial(_dsd_kernel, num_blocks=num_blocks),
        grid_spec=grid_spec,
        out_shape=jax.ShapeDtypeStruct((SPARSE, SPARSE), jnp.bfloat16),
        # The guide aliases a zeros array to the output so unvisited blocks are zero; it does not donate it, so
        # XLA copies it first (inside the guide's measurement).
        input_output_aliases={4: 0},
        name="dsd",
    )(indices_i, indices_k, x_blocks, y, zeros)


def sparse_dsd_ref(x, y):
    return x @ y


MASK_BM = MASK_BN = 512
MASK_BK = 1024


def _masked_kernel(block_mask_ref, prefetch_mask, prefetch_i, prefetch_j, x_ref, y_ref, mask_ref, o_ref, acc):
    del prefetch_mask, prefetch_i, prefetch_j
    i, j, k = pl.program_id(0), pl.program_id(1), pl.program_id(2)
    should_compute = block_mask_ref[i, j] != 0

    @pl.when(k == 0)
    def _():
        o_ref[...] = jnp.zeros_like(o_ref)
        acc[...] = jnp.zeros_like(acc[...])

    @pl.when(should_compute)
    def _():
        acc[...] += jnp.dot(x_ref[...], y_ref[...], preferred_element_type=jnp.float32)

        @pl.when(k == pl.num_programs(2) - 1)
        def _():
            o_ref[...] = (mask_ref[0, ...] * acc[...]).astype(o_ref.dtype)


def masked_mm(block_mask, prefetch_mask, prefetch_i, prefetch_j, x, y, mask_data):
    """Dense @ dense with a block-sparse output mask: masked-out output blocks skip their matmuls."""

    def x_map(i, j, k, bmask, pmask, pi, pj):
        return (pi[i, j], (bmask[i, j] != 0) * k)

    def y_map(i, j, k, bmask, pmask, pi, pj):
        return ((bmask[i, j] != 0) * k, pj[i, j])

    def mask_map(i, j, k, bmask, pmask, *_):
        return (pmask[i, j], 0, 0)

    def o_map(i, j, k, *_):
        return (i, j)

    grid_spec = pltpu.PrefetchScalarGridSpec(
        num_scalar_prefetch=4,
        grid=(SPARSE // MASK_BM, SPARSE // MASK_BN, SPARSE // MASK_BK),
        in_specs=[
            pl.BlockSpec((MASK_BM, MASK_BK), x_map),
            pl.BlockSpec((MASK_BK, MASK_BN), y_map),
            pl.BlockSpec((1, MASK_BM, MASK_BN), mask_map),
        ],
        out_specs=pl.BlockSpec((MASK_BM, MASK_BN), o_map),
        scratch_shapes=[pltpu.VMEM((MASK_BM, MASK_BN), dtype=jnp.float32)],
    )
    return pl.pallas_call(
        _masked_kernel,
        grid_spec=grid_spec,
        out_shape=jax.ShapeDtypeStruct((SPARSE, SPARSE), jnp.bfloat16),
        name="masked_mm",
    )(block_mask, prefetch_mask, prefetch_i, prefetch_j, x, y, mask_data)


def masked_mm_ref(mask, x, y):
    return mask * (x @ y)


def _i32(*shape):
    return jax.ShapeDtypeStruct(shape, jnp.int32)


_S, _nb = SPARSE, SPARSE // SPARSE_BLOCK
VERSIONS["sparse_dsd"] = sparse_dsd
EXAMPLE_ARGS["sparse_dsd"] = (
    _i32(DSD_BLOCKS),
    _i32(DSD_BLOCKS),
    _bf16(DSD_BLOCKS, SPARSE_BLOCK, SPARSE_BLOCK),
    _bf16(_S, _S),
    _bf16(_S, _S),
)
VERSIONS["sparse_dsd_ref"] = sparse_dsd_ref
EXAMPLE_ARGS["sparse_dsd_ref"] = (_bf16(_S, _S), _bf16(_S, _S))
# A lower-triangular mask has two distinct non-zero 512 × 512 blocks (all ones, the diagonal's triangle).
VERSIONS["masked_mm"] = masked_mm
EXAMPLE_ARGS["masked_mm"] = (
    *(_i32(_S // MASK_BM, _S // MASK_BN) for _ in range(4)),
    _bf16(_S, _S),
    _bf16(_S, _S),
    _i32(2, MASK_BM, MASK_BN),
)
VERSIONS["masked_mm_ref"] = masked_mm_ref
EXAMPLE_ARGS["masked_mm_ref"] = (_i32(_S, _S), _bf16(_S, _S), _bf16(_S, _S))
