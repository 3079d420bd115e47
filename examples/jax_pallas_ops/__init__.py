"""hlolint example: jax's own Pallas TPU kernels (jax.experimental.pallas.ops.tpu), kernels we did not write.

Each version calls a kernel shipped in the jax wheel at a realistic inference shape, so hlolint's verdicts can
be checked on real code. Follows the kernel-module convention of `hlolint compile` (examples/README.md) with
per-version arguments: EXAMPLE_ARGS = {version: callable returning a tuple of jax.ShapeDtypeStruct}. Static
kernel parameters (block sizes, causal, ...) are baked into each version's function.

The jax kernel modules are imported inside the version functions: importing this module touches no device and
a kernel that moves in a later jax release fails only its own version.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

BF16 = jnp.bfloat16
I32 = jnp.int32
HEAD_DIM = 128


def _sds(shape, dtype=BF16):
    return jax.ShapeDtypeStruct(shape, dtype)


# ---- flash attention (flash_attention.py): batch 1, 4 heads, 2048 tokens, causal, 512 blocks ----------------
FLASH = dict(batch=1, heads=4, seq=2048)


def flash_fwd(q, k, v):
    from jax.experimental.pallas.ops.tpu import flash_attention as fa

    blocks = fa.BlockSizes(block_q=512, block_k_major=512, block_k=512, block_b=1)
    return fa.flash_attention(q, k, v, causal=True, sm_scale=1 / math.sqrt(HEAD_DIM), block_sizes=blocks)


def _flash_args():
    shape = (FLASH["batch"], FLASH["heads"], FLASH["seq"], HEAD_DIM)
    return (_sds(shape), _sds(shape), _sds(shape))


# ---- paged attention (paged_attention/): decode, 8 sequences, 8 q heads over 2 kv heads (GQA),
#      pages of 32 tokens, 32 pages per sequence (1024 tokens), 8 pages per compute block -----------------------
PAGED = dict(batch=8, q_heads=8, kv_heads=2, page_size=32, pages_per_seq=32, pages_per_block=8)
PAGED["total_pages"] = PAGED["batch"] * PAGED["pages_per_seq"]


def paged(q, k_pages, v_pages, lengths, page_indices):
    from jax.experimental.pallas.ops.tpu.paged_attention import paged_attention

    return paged_attention(q, k_pages, v_pages, lengths, page_indices,
                           pages_per_compute_block=PAGED["pages_per_block"])


def paged_int8(q, k_w, k_scales, v_w, v_scales, lengths, page_indices):
    """The same kernel with int8 K/V pages and f32 per-token scales (paged_attention's QuantizedTensor path)."""
    from jax.experimental.pallas.ops.tpu.paged_attention import paged_attention
    from jax.experimental.pallas.ops.tpu.paged_attention.quantization_utils import QuantizedTensor

    return paged_attention(q, QuantizedTensor(k_w, k_scales), QuantizedTensor(v_w, v_scales), lengths,
                           page_indices, pages_per_compute_block=PAGED["pages_per_block"])


def _paged_args(int8: bool = False):
    p = PAGED
    pages = (p["kv_heads"], p["total_pages"], p["page_size"], HEAD_DIM)
    scales = (p["kv_heads"], p["total_pages"], p["page_size"], 1)
    q = _sds((p["batch"], p["q_heads"], HEAD_DIM))
    tables = (_sds((p["batch"],), I32), _sds((p["batch"], p["pages_per_seq"]), I32))
    if int8:
        kv = (_sds(pages, jnp.int8), _sds(scales, jnp.float32), _sds(pages, jnp.int8), _sds(scales, jnp.float32))
    else:
        kv = (_sds(pages), _sds(pages))
    return (q, *kv, *tables)


# ---- megablox grouped matmul (megablox/gmm.py): 8 experts, m = 2048 tokens, k = 512, n = 1024 -----------------
GMM = dict(groups=8, m=2048, k=512, n=1024, tiling=(256, 512, 512))


def gmm(lhs, rhs, group_sizes):
    from jax.experimental.pallas.ops.tpu.megablox import gmm as gmm_fn

    return gmm_fn(lhs, rhs, group_sizes, preferred_element_type=BF16, tiling=GMM["tiling"])


def tgmm(lhs_t, grad, group_sizes):
    """The transposed grouped matmul of the weight gradient: per group lhs[:, rows].T-side (k, m) @ (m, n)."""
    from jax.experimental.pallas.ops.tpu.megablox.gmm import tgmm as tgmm_fn

    return tgmm_fn(lhs_t, grad, group_sizes, preferred_element_type=jnp.float32, tiling=GMM["tiling"])


def _gmm_args():
    g = GMM
    return (_sds((g["m"], g["k"])), _sds((g["groups"], g["k"], g["n"])), _sds((g["groups"],), I32))


def _tgmm_args():
    g = GMM
    return (_sds((g["k"], g["m"])), _sds((g["m"], g["n"])), _sds((g["groups"],), I32))


# ---- splash attention (splash_attention/): MHA forward, 4 heads, 2048 tokens, causal, 512 blocks --------------
SPLASH = dict(heads=4, seq=2048, block=512)


def splash_mha_causal(q, k, v):
    from jax.experimental.pallas.ops.tpu.splash_attention import splash_attention_kernel as sk
    from jax.experimental.pallas.ops.tpu.splash_attention import splash_attention_mask as sm

    s = SPLASH
    mask = sm.MultiHeadMask([sm.CausalMask((s["seq"], s["seq"])) for _ in range(s["heads"])])
    blocks = sk.BlockSizes(block_q=s["block"], block_kv=s["block"], block_kv_compute=s["block"])
    kernel = sk.make_splash_mha_single_device(mask, block_sizes=blocks)
    return kernel(q / math.sqrt(HEAD_DIM), k, v)


def _splash_args():
    shape = (SPLASH["heads"], SPLASH["seq"], HEAD_DIM)
    return (_sds(shape), _sds(shape), _sds(shape))


# ---- ragged paged attention (ragged_paged_attention/): mixed prefill/decode, up to 8 sequences, 256 batched
#      tokens, 8 q heads over 2 kv heads (4 combined K/V heads), pages of 32 tokens, 32 pages per sequence --------
RAGGED = dict(tokens=256, q_heads=8, combined_kv_heads=4, page_size=32, pages_per_seq=32, max_seqs=8,
              kv_pages_per_block=8, queries_per_block=32)
RAGGED["total_pages"] = RAGGED["max_seqs"] * RAGGED["pages_per_seq"]


def ragged_paged(q, kv_pages, kv_lens, page_indices, cu_q_lens, num_seqs):
    from jax.experimental.pallas.ops.tpu.ragged_paged_attention import ragged_paged_attention

    # explicit block sizes: the default looks them up from jax.devices()[0], the compile worker's CPU
    r = RAGGED
    return ragged_paged_attention(q, kv_pages, kv_lens, page_indices, cu_q_lens, num_seqs,
                                  sm_scale=1 / math.sqrt(HEAD_DIM), num_kv_pages_per_block=r["kv_pages_per_block"],
                                  num_queries_per_block=r["queries_per_block"], vmem_limit_bytes=32 * 1024 * 1024)


def _ragged_args():
    r = RAGGED
    return (_sds((r["tokens"], r["q_heads"], HEAD_DIM)),
            _sds((r["total_pages"], r["page_size"], r["combined_kv_heads"], HEAD_DIM)),
            _sds((r["max_seqs"],), I32), _sds((r["max_seqs"], r["pages_per_seq"]), I32),
            _sds((r["max_seqs"] + 1,), I32), _sds((1,), I32))


# ---- the example matmul (matmul.py): bf16 1024 x 1024 x 1024 with 256 blocks, and int8 with int32 output -------
MATMUL = dict(m=1024, k=1024, n=1024, block=256)


def matmul_bf16(x, y):
    from jax.experimental.pallas.ops.tpu.matmul import matmul

    b = MATMUL["block"]
    return matmul(x, y, block_shape=(b, b), block_k=b)


def matmul_int8(x, y):
    from jax.experimental.pallas.ops.tpu.matmul import matmul

    b = MATMUL["block"]
    return matmul(x, y, block_shape=(b, b), block_k=b, out_dtype=jnp.int32)


def _matmul_args(dtype=BF16):
    m = MATMUL
    return (_sds((m["m"], m["k"]), dtype), _sds((m["k"], m["n"]), dtype))


# ---- the Pallas threefry PRNG (random/threefry.py): 32-bit random bits for a 1024 x 1024 tensor ---------------
def threefry_bits(key):
    from jax.experimental.pallas.ops.tpu.random import threefry

    return threefry.plthreefry_random_bits(key, 32, (1024, 1024))


# ---- ring all-gather (all_gather.py) over 4 devices: remote DMAs, the barrier semaphore, semaphore signal/wait.
#      Each device holds a (1024, 512) bf16 shard of x (4096, 512), sharded on the first axis; every device ends
#      with all of it. The only version lowered on several devices (MESH below). -----------------------------------
ALL_GATHER = dict(devices=4, rows=1024, cols=512)


def all_gather(x, *, mesh):
    from jax.experimental.pallas.ops.tpu import all_gather as ag

    # the kernel's own shard_map over `mesh` (the driver builds it from MESH); VMEM operands, as shipped
    return ag.all_gather(x, mesh=mesh, axis_name="x")


def _all_gather_args():
    a = ALL_GATHER
    return (_sds((a["devices"] * a["rows"], a["cols"])),)


VERSIONS = {
    "flash_fwd": flash_fwd,
    "paged": paged,
    "paged_int8": paged_int8,
    "gmm": gmm,
    "tgmm": tgmm,
    "splash_mha_causal": splash_mha_causal,
    "ragged_paged": ragged_paged,
    "matmul_bf16": matmul_bf16,
    "matmul_int8": matmul_int8,
    "threefry_bits": threefry_bits,
    "all_gather": all_gather,
}

EXAMPLE_ARGS = {
    "flash_fwd": _flash_args,
    "paged": _paged_args,
    "paged_int8": lambda: _paged_args(int8=True),
    "gmm": _gmm_args,
    "tgmm": _tgmm_args,
    "splash_mha_causal": _splash_args,
    "ragged_paged": _ragged_args,
    "matmul_bf16": _matmul_args,
    "matmul_int8": lambda: _matmul_args(jnp.int8),
    "threefry_bits": lambda: (_sds((2,), jnp.uint32),),
    "all_gather": _all_gather_args,
}

# Multi-device versions (examples/README.md): the driver lowers them on a Mesh of the topology's first devices,
# places each argument by its in_specs entry and passes the Mesh as `mesh=`.
MESH = {"all_gather": {"axes": ("x",), "shape": (ALL_GATHER["devices"],), "in_specs": (("x",),)}}

# None of these follows the fp8 guide's v1/v2/v3 structure; the tests lint them with every pack anyway.
RULES = {name: "core" for name in VERSIONS}
