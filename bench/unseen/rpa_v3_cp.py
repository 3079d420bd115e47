"""tpu-inference 0.29.0 experimental/rpa_v3_cp/kernel.py ragged_paged_attention (the context-parallel variant of
ragged paged attention v3), called without context parallelism (one device, no ring).

Shapes as examples/tpu_inference's rpa_v3: 8 q heads over 2 kv heads, head_dim 128, pages of 16, up to 8
sequences x 16 pages, 128 batched tokens, bf16 cache [128, 16, 2, 2, 128]; mixed-case blocks (32, 128, 16, 64).
Scalar-prefetch inputs: kv_lens, page_indices, cu_q_lens, distribution."""
import math

import jax
import jax.numpy as jnp

import _unseen

m = _unseen.load("experimental.rpa_v3_cp.kernel")
S = jax.ShapeDtypeStruct


def rpa_v3_cp(q, k, v, kv_cache, kv_lens, page_indices, cu_q_lens, distribution):
    return m.ragged_paged_attention(q, k, v, kv_cache, kv_lens, page_indices, cu_q_lens, distribution,
                                    sm_scale=1 / math.sqrt(128), m_block_sizes=(32, 128, 16, 64))


VERSIONS = {"rpa_v3_cp": rpa_v3_cp}
EXAMPLE_ARGS = {
    "rpa_v3_cp": lambda: (
        S((128, 8, 128), jnp.bfloat16), S((128, 2, 128), jnp.bfloat16), S((128, 2, 128), jnp.bfloat16),
        S((128, 16, 2, 2, 128), jnp.bfloat16),
        S((8,), jnp.int32), S((8 * 16,), jnp.int32), S((9,), jnp.int32), S((3,), jnp.int32),
    )
}
