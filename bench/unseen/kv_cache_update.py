"""tpu-inference 0.29.0 ragged_paged_attention/v2/ragged_kv_cache_update.py kv_cache_update, as shipped.

Writes new tokens' K/V into a paged cache slice by slice: `slices` [3, S] rows (kv_cache_start, new_kv_start,
slice_len), `num_slices` [1]; both scalar prefetch. Grid = cdiv(num_slices[0], num_slices_per_block) (dynamic).
Shapes: 128 new tokens, 2 KV heads combined K+V = 4 heads, head_dim 128, pages of 16 tokens, 128 pages, up to 64
slices (padded); num_slices_per_block by the kernel's own default (64 for these sizes)."""
import jax
import jax.numpy as jnp

import _unseen

m = _unseen.load("ragged_paged_attention.v2.ragged_kv_cache_update")


def kv_cache_update(new_kv, slices, kv_cache, num_slices):
    return m.kv_cache_update(new_kv, slices, kv_cache, num_slices, page_size=16)


VERSIONS = {"kv_cache_update": kv_cache_update}
EXAMPLE_ARGS = {
    "kv_cache_update": lambda: (
        jax.ShapeDtypeStruct((128, 4, 128), jnp.bfloat16),
        jax.ShapeDtypeStruct((3, 64), jnp.int32),
        jax.ShapeDtypeStruct((128 * 16, 4, 128), jnp.bfloat16),
        jax.ShapeDtypeStruct((1,), jnp.int32),
    )
}
