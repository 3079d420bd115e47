"""hlolint example: production Pallas TPU kernels from tpu-inference (vLLM's TPU backend), kernels we did not write.

The kernels are the installed `tpu-inference` wheel's (python/requirements-kernels.txt), imported through
`_loader.load` without the package's heavy dependencies (see `_loader.py`). Each version calls one kernel entry
point at a small but realistic inference shape, with the static parameters (block sizes, top-k, ...) baked in.
Follows the kernel-module convention of `hlolint compile` (examples/README.md): `VERSIONS`, per-version
`EXAMPLE_ARGS` (ragged tables as int32 ShapeDtypeStructs), `MESH` for the fused MoE's own shard_map, `RULES`, and
`make_inputs(key, version)` — concrete valid inputs built the way tpu-inference's own tests build them, for running
the kernels under jax's TPU interpreter.

Kernel modules are imported inside the version functions: importing this module touches no device and needs no
tpu-inference; a kernel that moves in a later release fails only its own version.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

# examples/tpu_inference is imported as `tpu_inference` by the driver: _loader makes this package reach the
# installed tpu_inference's kernels (see _loader.py)
HLOLINT_EXAMPLE = True

try:
    from . import _loader
except ImportError:  # loaded as a plain directory by path
    import _loader  # type: ignore[no-redef]

BF16 = jnp.bfloat16
I32 = jnp.int32
F32 = jnp.float32
FP8 = jnp.float8_e4m3fn


def _sds(shape, dtype=BF16):
    return jax.ShapeDtypeStruct(tuple(shape), dtype)


def cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b


def align_to(x: int, a: int) -> int:
    return cdiv(x, a) * a


# ---- fused MoE v1 (fused_moe/v1/kernel.py fused_ep_moe): 16 experts, top-2, hidden 512, intermediate 512,
#      64 tokens, on a (data=1, model=1) mesh — the kernel's own shard_map over the expert-parallel axis "model".
#      Block sizes as in its tests' test_basic, scaled to these sizes. ----------------------------------------------
MOE = dict(experts=16, top_k=2, hidden=512, inter=512, tokens=64,
           blocks=dict(bt=32, bf=512, bd1=512, bd2=512, btc=32, bfc=256, bd1c=256, bd2c=256))


def fused_moe_v1(tokens, w1, w2, gating_output, *, mesh):
    k = _loader.load("fused_moe.v1.kernel")
    return k.fused_ep_moe(mesh, tokens, w1, w2, gating_output, MOE["top_k"], ep_axis_name="model",
                          **MOE["blocks"])


def _moe_args():
    m = MOE
    return (_sds((m["tokens"], m["hidden"])), _sds((m["experts"], 2, m["hidden"], m["inter"])),
            _sds((m["experts"], m["inter"], m["hidden"])), _sds((m["tokens"], m["experts"])))


def _moe_inputs(key):
    # tests/kernels/fused_moe_v1_test.py gen_moe_inputs: normal/10 activations and weights, gating logits with a
    # +30 one-hot on top_k random experts per token (unique top-k)
    m = MOE
    k0, k1, k2, k5, k6 = jax.random.split(key, 5)
    a = jax.random.normal(k0, (m["tokens"], m["hidden"]), BF16) / 10
    w1 = jax.random.normal(k1, (m["experts"], 2, m["hidden"], m["inter"]), BF16) / 10
    w2 = jax.random.normal(k2, (m["experts"], m["inter"], m["hidden"]), BF16) / 10
    gating = (jax.random.normal(k5, (m["tokens"], m["experts"]), BF16)
              + jnp.arange(m["tokens"] * m["experts"], dtype=BF16).reshape(m["tokens"], m["experts"]) / 100)
    top = jax.random.randint(k6, (m["tokens"], m["top_k"]), 0, m["experts"] - 1, dtype=I32)
    one_hot = jnp.sum(jax.nn.one_hot(top, m["experts"], dtype=BF16), axis=1) * 30
    return (a, w1, w2, (gating + one_hot).astype(BF16))


# ---- ragged paged attention v3 (ragged_paged_attention/v3/kernel.py): mixed prefill/decode, 8 q heads over 2 kv
#      heads, head_dim 128, pages of 16 tokens, up to 8 sequences × 16 pages, 128 batched tokens, bf16 KV cache
#      [pages, page_size, kv_heads*2 / packing, packing, head_dim]. Mixed-case block sizes explicit (bq, bkv, bq_c,
#      bkv_c) as its tests pass them; the decode and prefill cases use the kernel's own defaults. -------------------
RPA = dict(q_heads=8, kv_heads=2, head_dim=128, page_size=16, max_seqs=8, pages_per_seq=16, tokens=128,
           pages=128, m_blocks=(32, 128, 16, 64), seq_lens=((48, 100), (1, 37), (64, 200)))


def rpa_v3(q, k, v, kv_cache, kv_lens, page_indices, cu_q_lens, distribution):
    r = RPA
    kern = _loader.load("ragged_paged_attention.v3.kernel")
    return kern.ragged_paged_attention(q, k, v, kv_cache, kv_lens, page_indices, cu_q_lens, distribution,
                                       sm_scale=1 / math.sqrt(r["head_dim"]), m_block_sizes=r["m_blocks"])


def _rpa_kv_shape(dtype=BF16):
    r = RPA
    packing = 4 // jnp.dtype(dtype).itemsize  # values per 32-bit word
    return (r["pages"], r["page_size"], align_to(2 * r["kv_heads"], packing) // packing, packing, r["head_dim"])


def _rpa_args():
    r = RPA
    return (_sds((r["tokens"], r["q_heads"], r["head_dim"])), _sds((r["tokens"], r["kv_heads"], r["head_dim"])),
            _sds((r["tokens"], r["kv_heads"], r["head_dim"])), _sds(_rpa_kv_shape()),
            _sds((r["max_seqs"],), I32), _sds((r["max_seqs"] * r["pages_per_seq"],), I32),
            _sds((r["max_seqs"] + 1,), I32), _sds((3,), I32))


def _ragged_tables(seq_lens, page_size, pages_per_seq, max_seqs, pad_page=0):
    """kv_lens, flattened page_indices, cu_q_lens, distribution as the tests build them: each sequence's pages
    numbered consecutively, unused entries padded, every sequence in the `mixed` group (distribution [0, 0, n])."""
    cu, kv_lens, pages, count = [0], [], [], 0
    for q_len, kv_len in seq_lens:
        assert q_len <= kv_len
        cu.append(cu[-1] + q_len)
        kv_lens.append(kv_len)
        n = cdiv(kv_len, page_size)
        pages.append(list(range(count, count + n)) + [pad_page] * (pages_per_seq - n))
        count += n
    pages += [[pad_page] * pages_per_seq] * (max_seqs - len(seq_lens))
    cu += [0] * (max_seqs + 1 - len(cu))  # the tests pad cu_q_lens with zeros
    kv_lens += [0] * (max_seqs - len(kv_lens))
    return (jnp.array(kv_lens, I32), jnp.array(pages, I32).reshape(-1), jnp.array(cu, I32),
            jnp.array([0, 0, len(seq_lens)], I32))


def _rpa_inputs(key):
    # tests/kernels/ragged_paged_attention_kernel_v3_test.py: uniform [0, 1) q/k/v, the KV cache filled per
    # sequence (pages past each kv_len NaN-padded there; zeros here, the kernel masks them), page indices padded
    r = RPA
    kq, kk, kv, kc = jax.random.split(key, 4)
    q = jax.random.uniform(kq, (r["tokens"], r["q_heads"], r["head_dim"]), F32).astype(BF16)
    k = jax.random.uniform(kk, (r["tokens"], r["kv_heads"], r["head_dim"]), F32).astype(BF16)
    v = jax.random.uniform(kv, (r["tokens"], r["kv_heads"], r["head_dim"]), F32).astype(BF16)
    cache = jax.random.uniform(kc, _rpa_kv_shape(), F32).astype(BF16)
    tables = _ragged_tables(r["seq_lens"], r["page_size"], r["pages_per_seq"], r["max_seqs"])
    return (q, k, v, cache, *tables)


# ---- megablox gmm_v2 (megablox/gmm_v2.py, emit_pipeline with manual DMAs sized by the valid rows): 16 groups,
#      128 tokens, k = n = 512, bf16 with a bias, as its tests' test_gmm_basic. `gmm_v2_fp8` (fp8 weights with
#      per-256-row block scales, test_gmm_weight_quantized) lowers but libtpu 0.0.42.1's Mosaic refuses it on tpu7x
#      and v6e ("The last dim size is not 128 in original base memref": a stride-0 `tpu.strided_load` of the
#      (2, 1, 512) scale block), so it is kept here, callable, but not in VERSIONS. -----------------------------------
GMM = dict(m=128, k=512, n=512, groups=16, block=256)


def gmm_v2(lhs, rhs, group_sizes, rhs_bias, group_offset):
    g = _loader.load("megablox.gmm_v2")
    return g.gmm_v2(lhs, rhs, group_sizes, rhs_bias=rhs_bias, group_offset=group_offset)


def gmm_v2_fp8(lhs, rhs_q, group_sizes, rhs_scale, group_offset):
    g = _loader.load("megablox.gmm_v2")
    return g.gmm_v2(lhs, rhs_q, group_sizes, rhs_scale=rhs_scale, group_offset=group_offset,
                    maybe_quantize_lhs=False)


def _gmm_args():
    g = GMM
    return (_sds((g["m"], g["k"])), _sds((g["groups"], g["k"], g["n"])), _sds((g["groups"],), I32),
            _sds((g["groups"], 1, g["n"])), _sds((1,), I32))


def _gmm_fp8_args():
    g = GMM
    return (_sds((g["m"], g["k"])), _sds((g["groups"], g["k"], g["n"]), FP8), _sds((g["groups"],), I32),
            _sds((g["groups"], g["k"] // g["block"], 1, g["n"]), F32), _sds((1,), I32))


def _group_sizes(batch: int, groups: int):
    # tests/kernels/gmm_v2_test.py get_group_sizes: a uniform random split of the batch over the groups
    d = jax.random.uniform(jax.random.key(0), (groups - 1,), F32)
    d = d / jnp.sum(d)
    sizes = jnp.floor(d * batch).astype(I32)
    return jnp.append(sizes, batch - jnp.sum(sizes))


def _gmm_inputs(key, fp8: bool):
    g = GMM
    lhs = jax.random.normal(key, (g["m"], g["k"]), BF16)
    rhs = jax.random.normal(key, (g["groups"], g["k"], g["n"]), BF16)
    sizes = _group_sizes(g["m"], g["groups"])
    offset = jnp.array([0], I32)
    if not fp8:
        return (lhs, rhs, sizes, jax.random.normal(key, (g["groups"], 1, g["n"]), BF16), offset)
    # test_gmm_weight_quantized's quantize_tensor(rhs, fp8, axis=1, block_size): per-block abs max over k
    blocked = rhs.reshape(g["groups"], g["k"] // g["block"], g["block"], g["n"]).astype(F32)
    scale = jnp.max(jnp.abs(blocked), axis=2, keepdims=True) / float(jnp.finfo(FP8).max)
    rhs_q = jnp.clip(blocked / scale, float(jnp.finfo(FP8).min), float(jnp.finfo(FP8).max)).astype(FP8)
    return (lhs, rhs_q.reshape(g["groups"], g["k"], g["n"]), sizes, scale.astype(F32), offset)


# ---- quantized matmuls (quantized_matmul/kernel.py, blockwise_kernel.py): auto-pipelined grids, per-channel
#      int8 / fp8 weights with the activation quantized in the kernel (128 blocks as in its tests), and 2D
#      blockwise fp8 with 128-wide blocks. x (128, 512) bf16, w (512, 512). -----------------------------------------
QMM = dict(bs=128, n_in=512, n_out=512, block=128)


def _tuned(qmm):
    return qmm.TunedValue(QMM["block"], QMM["block"], QMM["block"])


def quantized_matmul_int8(x, w_q, w_scale):
    tb = _loader.load("quantized_matmul.tuned_block_sizes")
    k = _loader.load("quantized_matmul.kernel")
    return k.quantized_matmul_kernel(x, w_q, w_scale, x_q_dtype=jnp.int8, tuned_value=_tuned(tb))


def quantized_matmul_fp8(x, w_q, w_scale):
    tb = _loader.load("quantized_matmul.tuned_block_sizes")
    k = _loader.load("quantized_matmul.kernel")
    return k.quantized_matmul_kernel(x, w_q, w_scale, x_q_dtype=FP8, tuned_value=_tuned(tb))


def quantized_matmul_blockwise_fp8(x, w_q, w_scale):
    tb = _loader.load("quantized_matmul.tuned_block_sizes")
    k = _loader.load("quantized_matmul.blockwise_kernel")
    return k.quantized_matmul_kernel(x, w_q, w_scale, block_size=QMM["block"], x_q_dtype=FP8,
                                     tuned_value=_tuned(tb))


def _qmm_args(w_dtype, blockwise=False):
    q = QMM
    scale = (q["n_in"] // q["block"], 1, q["n_out"]) if blockwise else (q["n_out"],)
    return (_sds((q["bs"], q["n_in"])), _sds((q["n_out"], q["n_in"]), w_dtype), _sds(scale, F32))


def _qmm_inputs(key, w_dtype, blockwise=False):
    # tests/kernels/quantized_matmul_kernel_test.py: x uniform [0, 1), w uniform [-1, 1), quantized by the kernel
    # package's own util.quantize_tensor (per output channel, or per block along n_in)
    q = QMM
    util = _loader.load("quantized_matmul.util")
    k0, k1 = jax.random.split(key)
    x = jax.random.uniform(k0, (q["bs"], q["n_in"]), BF16, 0, 1)
    w = jax.random.uniform(k1, (q["n_out"], q["n_in"]), BF16, -1, 1)
    if blockwise:
        w_q, w_scale = util.quantize_tensor(w, w_dtype, block_size=q["block"])
    else:
        w_q, w_scale = util.quantize_tensor(w, w_dtype)
        w_scale = jnp.squeeze(w_scale)
    return (x, w_q, w_scale)


# ---- MLA v1 (mla/v1/kernel.py mla_ragged_paged_attention): DeepSeek-style latent attention over a paged latent
#      cache, 16 heads, lkv 512, rope 64, pages of 16, up to 4 sequences × 16 pages, 64 batched tokens; 8 pages and
#      8 queries per block as in its tests. ---------------------------------------------------------------------------
MLA = dict(heads=16, lkv=512, r=64, page_size=16, max_seqs=4, pages_per_seq=16, tokens=64, pages=64,
           kv_pages_per_block=8, queries_per_block=8, seq_lens=((24, 90), (1, 130), (32, 60)))


def mla_v1(ql_nope, q_pe, new_kv_c, new_k_pe, cache_kv, kv_lens, page_indices, cu_q_lens, distribution):
    m = MLA
    k = _loader.load("mla.v1.kernel")
    return k.mla_ragged_paged_attention(ql_nope, q_pe, new_kv_c, new_k_pe, cache_kv, kv_lens, page_indices,
                                        cu_q_lens, distribution, sm_scale=1 / math.sqrt(m["lkv"] + m["r"]),
                                        num_kv_pages_per_block=m["kv_pages_per_block"],
                                        num_queries_per_block=m["queries_per_block"])


def _mla_cache_shape():
    m = MLA
    packing = 2  # bf16
    return (m["pages"], m["page_size"] // packing, packing, align_to(m["lkv"], 128) + align_to(m["r"], 128))


def _mla_args():
    m = MLA
    return (_sds((m["tokens"], m["heads"], m["lkv"])), _sds((m["tokens"], m["heads"], m["r"])),
            _sds((m["tokens"], m["lkv"])), _sds((m["tokens"], m["r"])), _sds(_mla_cache_shape()),
            _sds((m["max_seqs"],), I32), _sds((m["max_seqs"] * m["pages_per_seq"],), I32),
            _sds((m["max_seqs"] + 1,), I32), _sds((3,), I32))


def _mla_inputs(key):
    # tests/kernels/mla_v1_test.py: uniform [0, 1) inputs, pages numbered per sequence, unused entries -1
    m = MLA
    ks = jax.random.split(key, 5)
    u = lambda k, shape: jax.random.uniform(k, shape, F32).astype(BF16)  # noqa: E731
    tables = _ragged_tables(m["seq_lens"], m["page_size"], m["pages_per_seq"], m["max_seqs"], pad_page=-1)
    return (u(ks[0], (m["tokens"], m["heads"], m["lkv"])), u(ks[1], (m["tokens"], m["heads"], m["r"])),
            u(ks[2], (m["tokens"], m["lkv"])), u(ks[3], (m["tokens"], m["r"])), u(ks[4], _mla_cache_shape()),
            *tables)


# Versions that build with jax 0.10.2 / libtpu 0.0.42.1 (gmm_v2_fp8 does not: see above).
VERSIONS = {
    "fused_moe_v1": fused_moe_v1,
    "rpa_v3": rpa_v3,
    "gmm_v2": gmm_v2,
    "quantized_matmul_int8": quantized_matmul_int8,
    "quantized_matmul_fp8": quantized_matmul_fp8,
    "quantized_matmul_blockwise_fp8": quantized_matmul_blockwise_fp8,
    "mla_v1": mla_v1,
}

EXAMPLE_ARGS = {
    "fused_moe_v1": _moe_args,
    "rpa_v3": _rpa_args,
    "gmm_v2": _gmm_args,
    "quantized_matmul_int8": lambda: _qmm_args(jnp.int8),
    "quantized_matmul_fp8": lambda: _qmm_args(FP8),
    "quantized_matmul_blockwise_fp8": lambda: _qmm_args(FP8, blockwise=True),
    "mla_v1": _mla_args,
}

_INPUTS = {
    "fused_moe_v1": _moe_inputs,
    "rpa_v3": _rpa_inputs,
    "gmm_v2": lambda key: _gmm_inputs(key, fp8=False),
    "quantized_matmul_int8": lambda key: _qmm_inputs(key, jnp.int8),
    "quantized_matmul_fp8": lambda key: _qmm_inputs(key, FP8),
    "quantized_matmul_blockwise_fp8": lambda key: _qmm_inputs(key, FP8, blockwise=True),
    "mla_v1": _mla_inputs,
}


def make_inputs(key, version: str):
    """Concrete valid inputs for `version`, matching `EXAMPLE_ARGS[version]()` in shape and dtype."""
    if version == "gmm_v2_fp8":
        return tuple(_gmm_inputs(key, fp8=True))
    return tuple(_INPUTS[version](key))


# The fused MoE builds its own shard_map over a 2D ("data", "model") mesh (expert parallelism on "model"); one
# device keeps the all-to-all local. The driver passes the Mesh as `mesh=`.
MESH = {"fused_moe_v1": {"axes": ("data", "model"), "shape": (1, 1)}}

# Kernels that move their own data with manual, double-buffered DMAs are judged against v2-dma; the quantized
# matmuls are auto-pipelined grids (BlockSpecs), v1-auto.
RULES = {
    "fused_moe_v1": "v2-dma",
    "rpa_v3": "v2-dma",
    "gmm_v2": "v2-dma",
    "quantized_matmul_int8": "v1-auto",
    "quantized_matmul_fp8": "v1-auto",
    "quantized_matmul_blockwise_fp8": "v1-auto",
    "mla_v1": "v2-dma",
}
