"""tpu-inference 0.29.0 experimental/deepseek_v4/core_attention/sparse_mla.py sparse_ragged_paged_attention
(DeepSeek V4's CSA sparse MLA over top-k gathered tokens), as shipped.

As its caller (layers/vllm/custom_ops/experimental/deepseek_v4/deepseek_v4_attention.py, CSA branch) passes it:
64 tokens -> gather_and_attention_chunk_size 64, attention_kernel_batch_size 16. q bf16 [64, 16 heads, 512];
DSv4 fp8 cache as uint8: nope [64 pages, 64, 4, 128] (448 fp8 + 7 scales per token), rope [64, 16, 4, 128];
top-k 512 indices per token; 8 sequences x 8 pages; SWA partials bf16/f32."""
import jax
import jax.numpy as jnp

import _unseen

m = _unseen.load("experimental.deepseek_v4.core_attention.sparse_mla")
S = jax.ShapeDtypeStruct
T, H, D = 64, 16, 512


def sparse_mla(q, nope, rope, topk, page_indices, cu_q_lens, distribution, sinks, acc, l, mx):
    return m.sparse_ragged_paged_attention(q, nope, rope, topk, page_indices, cu_q_lens, distribution, sinks,
                                           acc, l, mx, sm_scale=D ** -0.5, gather_and_attention_chunk_size=64,
                                           attention_kernel_batch_size=16)


VERSIONS = {"sparse_mla": sparse_mla}
EXAMPLE_ARGS = {
    "sparse_mla": lambda: (
        S((T, H, D), jnp.bfloat16), S((64, 64, 4, 128), jnp.uint8), S((64, 16, 4, 128), jnp.uint8),
        S((T, 512), jnp.int32), S((8 * 8,), jnp.int32), S((9,), jnp.int32), S((3,), jnp.int32),
        S((H,), jnp.float32), S((T, H, D), jnp.bfloat16), S((T, H), jnp.float32), S((T, H), jnp.float32),
    )
}
