"""tpu-inference 0.29.0 experimental/deepseek_v4/indexer/streamindex_topk.py streamindex_topk (DeepSeek V4's
indexer top-k), as shipped: three pallas_calls (decode batched by 4, decode single, mixed).

Block sizes as its caller (layers/vllm/custom_ops/experimental/deepseek_v4/deepseek_v4_indexer.py) passes them:
num_kv_pages_per_block=(3, 2, 2), num_queries_per_block=(1, 128, 128). q fp8 [128 tokens, 64 heads, 128];
fp8 cache [64 pages, 32, 4, 256] (128 values + the packed scale, lane padded; page of 128 tokens, which makes
3 pages a multiple of 128 as the kernel requires); 8 sequences x 8 pages; k=512, compression_ratio=4.
Scalar-prefetch inputs: seq_lens, page_indices, cu_q_lens, [start, end] seq idx, sem ids, bo sizes."""
import jax
import jax.numpy as jnp

import _unseen

m = _unseen.load("experimental.deepseek_v4.indexer.streamindex_topk")
S = jax.ShapeDtypeStruct


def streamindex_topk(q, w, cache, seq_lens, page_indices, cu_q_lens, distribution):
    return m.streamindex_topk(q, w, cache, seq_lens, page_indices, cu_q_lens, distribution, k=512,
                              compression_ratio=4, num_kv_pages_per_block=(3, 2, 2),
                              num_queries_per_block=(1, 128, 128))


VERSIONS = {"streamindex_topk": streamindex_topk}
EXAMPLE_ARGS = {
    "streamindex_topk": lambda: (
        S((128, 64, 128), jnp.float8_e4m3fn), S((128, 64), jnp.float32),
        S((64, 32, 4, 256), jnp.float8_e4m3fn),
        S((8,), jnp.int32), S((8 * 8,), jnp.int32), S((9,), jnp.int32), S((3,), jnp.int32),
    )
}
