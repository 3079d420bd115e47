"""The kernels the oracle runs: each with small valid inputs built the way its own project's tests build them,
run-time scalars a caller may override (the replay of a static witness), and planted bugs.

Scalars: `make(scalars)` takes a dict naming a kernel's scalar inputs (`Case.scalars` lists them with their
defaults); a list shorter than the input fills its first entries (e.g. `{"kv_lens": [0, 16]}` sets the first two
sequences' lengths), the rest keep the default. Inputs derived from a scalar (page tables, offsets) follow it.

tpu-inference: its package `__init__` imports vLLM (`tpu_inference.logger` too), which its kernels do not need;
`tpu_inference_module` imports a kernel module with the package's `__init__` skipped and the logger given the
standard library's, so the pinned wheel installs with `--no-deps` (docs/oracle.md).
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import importlib.util
import logging
import math
import os
import sys
import types
from typing import Any, Callable

import numpy as np

from .mutate import Mutation, load

TPU_INFERENCE_VERSION = "0.29.0"


@dataclasses.dataclass
class Case:
    name: str
    origin: str  # where the kernel comes from
    module: str  # the module whose source mutations edit
    build: Callable[[types.ModuleType, dict], tuple[Callable, tuple]]
    scalars: dict[str, Any]
    mutations: dict[str, Mutation]
    slow: bool = False
    vector_clock_size: int = 64
    num_devices: int = 1
    # true races of the unmutated kernel (docs/oracle.md), each as the two frames' function names a race site
    # names: not planted, so a planted bug must show something else
    known_races: tuple[tuple[str, str], ...] = ()
    known_races_modes: tuple[str, ...] = ("on_wait", "eager")

    def unexplained_race_sites(self, result) -> list[str]:
        known = self.known_races if result.mode in self.known_races_modes else ()
        return [site for site in result.race_sites() if not any(a in site and b in site for a, b in known)]

    def make(self, scalars: dict | None = None, mutation: str | None = None):
        """(fn, args) for the kernel (its `mutation` if named) on inputs with `scalars` applied."""
        unknown = set(scalars or {}) - set(self.scalars)
        if unknown:
            raise KeyError(f"{self.name} has no scalar input {sorted(unknown)}; it has {sorted(self.scalars)}")
        values = {k: list(v) if isinstance(v, (list, tuple)) else v for k, v in self.scalars.items()}
        given = dict(self.mutations[mutation].scalars or {}) if mutation else {}
        given.update(scalars or {})
        for k, v in given.items():
            values[k] = _fill(values[k], v)
        module = _import(self.module)  # the original first: a mutant resolves its imports in its package
        if mutation:
            module = load(self.mutations[mutation])
        return self.build(module, values)


def _fill(default, given):
    if not isinstance(default, list):
        return int(given) if not isinstance(given, (list, tuple)) else int(given[0])
    given = list(given) if isinstance(given, (list, tuple)) else [given]
    if len(given) > len(default):
        raise ValueError(f"{len(given)} values for an input of {len(default)}")
    return [int(x) for x in given] + default[len(given):]


def _import(name: str) -> types.ModuleType:
    if name.startswith("tpu_inference."):
        return tpu_inference_module(name)
    return importlib.import_module(name)


def tpu_inference_module(name: str) -> types.ModuleType:
    if "tpu_inference" not in sys.modules:
        # (the installed package, the one with the kernels: `examples/tpu_inference`, the corpus's example
        # module, has the same name and may come first on the path)
        found = [os.path.join(p or ".", "tpu_inference") for p in sys.path]
        found = [d for d in found if os.path.isdir(os.path.join(d, "kernels"))]
        if not found:
            raise ModuleNotFoundError(f"tpu-inference is not installed (pip install --no-deps "
                                      f"tpu-inference=={TPU_INFERENCE_VERSION}; docs/oracle.md)")
        pkg = types.ModuleType("tpu_inference")
        pkg.__path__ = [found[0]]
        sys.modules["tpu_inference"] = pkg
        logger = types.ModuleType("tpu_inference.logger")
        logger.init_logger = logging.getLogger
        sys.modules["tpu_inference.logger"] = logger
    return importlib.import_module(name)


def _cdiv(a, b):
    return -(-a // b)


def _align(a, b):
    return _cdiv(a, b) * b


# ---- jax: paged attention (jax.experimental.pallas.ops.tpu.paged_attention) -------------------------------------
# Inputs as jax's paged attention test makes them: random pages, a random permutation of pages per sequence,
# lengths up to pages_per_seq * page_size.
PAGED = dict(batch=2, q_heads=2, kv_heads=1, head_dim=128, page_size=16, pages_per_seq=4, pages_per_block=2,
             dtype="float32")


def _build_paged(mod, s, shape=PAGED):
    import jax
    import jax.numpy as jnp

    p = shape
    dt = jnp.dtype(p["dtype"])
    total = p["batch"] * p["pages_per_seq"]
    k1, k2, k3 = jax.random.split(jax.random.PRNGKey(0), 3)
    q = jax.random.normal(k1, (p["batch"], p["q_heads"], p["head_dim"]), dt)
    k = jax.random.normal(k2, (p["kv_heads"], total, p["page_size"], p["head_dim"]), dt)
    v = jax.random.normal(k3, (p["kv_heads"], total, p["page_size"], p["head_dim"]), dt)
    lengths = jnp.array(s["lengths"], jnp.int32)
    pages = jnp.array(np.random.RandomState(0).permutation(total).reshape(p["batch"], p["pages_per_seq"]),
                      jnp.int32)

    def fn(*a):
        return mod.paged_attention(*a, pages_per_compute_block=p["pages_per_block"])

    return fn, (q, k, v, lengths, pages)


_PAGED_MOD = "jax.experimental.pallas.ops.tpu.paged_attention.paged_attention_kernel"
PAGED_MUTATIONS = [
    Mutation(
        "paged_last_page_unwaited", _PAGED_MOD,
        (("    for async_copy in self._async_copies:\n      async_copy.wait()",
          "    for async_copy in self._async_copies[:-1]:\n      async_copy.wait()"),),
        "the wait of the last page of every block removed: its DMA is read before it lands and its bytes stay on "
        "the semaphore"),
    Mutation(
        "paged_prefetch_unguarded", _PAGED_MOD,
        (("    @pl.when(next_b < batch_size)\n    def prefetch_next_block():",
          "    @pl.when(next_b < batch_size + 1)\n    def prefetch_next_block():"),),
        "the prefetch of the next block made unconditional: after the last block it fetches a block of a "
        "sequence that does not exist",
        expect=("semaphore", "never_executed", "race", "out_of_bounds")),
]


# ---- jax: ragged paged attention (jax.experimental.pallas.ops.tpu.ragged_paged_attention) ------------------------
# Inputs as jax's ragged paged attention test makes them: sequences of (q_len, kv_len), cu_q_lens their prefix sums,
# pages given out in order, the rest of the tables zero.
RAGGED = dict(tokens=16, q_heads=2, kv_heads=1, head_dim=128, page_size=16, pages_per_seq=4, max_seqs=4,
              kv_pages_per_block=2, queries_per_block=8, dtype="float32")


def _build_ragged(mod, s, shape=RAGGED):
    import jax
    import jax.numpy as jnp

    r = shape
    dt = jnp.dtype(r["dtype"])
    q_lens, kv_lens, num_seqs = s["q_lens"], s["kv_lens"], s["num_seqs"]
    cu = [0]
    for i in range(r["max_seqs"]):
        cu.append(cu[-1] + (q_lens[i] if i < num_seqs else 0))
    total = r["max_seqs"] * r["pages_per_seq"]
    k1, k2 = jax.random.split(jax.random.PRNGKey(1))
    q = jax.random.normal(k1, (r["tokens"], r["q_heads"], r["head_dim"]), dt)
    kv = jax.random.normal(k2, (total, r["page_size"], 2 * r["kv_heads"], r["head_dim"]), dt)
    pages = jnp.arange(total, dtype=jnp.int32).reshape(r["max_seqs"], r["pages_per_seq"])

    def fn(*a):
        return mod.ragged_paged_attention(*a, sm_scale=1 / math.sqrt(r["head_dim"]),
                                          num_kv_pages_per_block=r["kv_pages_per_block"],
                                          num_queries_per_block=r["queries_per_block"],
                                          vmem_limit_bytes=32 * 1024 * 1024)

    return fn, (q, kv, jnp.array(kv_lens, jnp.int32), pages, jnp.array(cu, jnp.int32),
                jnp.array([num_seqs], jnp.int32))


_RAGGED_MOD = "jax.experimental.pallas.ops.tpu.ragged_paged_attention.kernel"
RAGGED_MUTATIONS = [
    Mutation(
        "ragged_wait_removed", _RAGGED_MOD,
        (("    for async_copy in self._async_copies:\n      async_copy.wait()\n    return self._vmem_buf",
          "    for async_copy in self._async_copies[1:]:\n      async_copy.wait()\n    return self._vmem_buf"),),
        "the wait of the first page of every KV block removed"),
    Mutation(
        "ragged_prefetch_unguarded", _RAGGED_MOD,
        (("      @pl.when(next_heads_blk_idx < num_heads_blks)\n      def prefetch_next_kv_blk():",
          "      @pl.when(next_heads_blk_idx < num_heads_blks + 1)\n      def prefetch_next_kv_blk():"),),
        "the prefetch of the next KV block made unconditional: after the last block nobody waits for it",
        expect=("semaphore", "never_executed", "race", "out_of_bounds")),
]


# ---- jax: ring all-gather (jax.experimental.pallas.ops.tpu.all_gather) over 4 devices -----------------------------
# Remote DMAs between the devices of a mesh, the barrier semaphore. The interpreter runs one thread per device of a
# shard_map: the process needs 4 jax devices, which on CPU means XLA_FLAGS=--xla_force_host_platform_device_count=4
# before jax starts (`python -m hlolint_oracle` sets it; a process that started jax with fewer cannot run this).
ALL_GATHER = dict(devices=4, rows=16, cols=128, dtype="float32")


def _build_all_gather(mod, s, shape=ALL_GATHER):
    import jax
    import jax.numpy as jnp
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    a = shape
    if len(jax.devices()) < a["devices"]:
        raise RuntimeError(f"all_gather needs {a['devices']} jax devices, this process has {len(jax.devices())}: "
                           f"start it with XLA_FLAGS=--xla_force_host_platform_device_count={a['devices']}")
    mesh = Mesh(np.array(jax.devices()[:a["devices"]]), ("x",))
    x = jnp.arange(a["devices"] * a["rows"] * a["cols"], dtype=jnp.float32).reshape(-1, a["cols"])
    x = x.astype(jnp.dtype(a["dtype"]))
    x = jax.device_put(x, NamedSharding(mesh, PartitionSpec("x")))
    return (lambda x: mod.all_gather(x, mesh=mesh, axis_name="x")), (x,)


_AG_MOD = "jax.experimental.pallas.ops.tpu.all_gather"
AG_MUTATIONS = [
    Mutation(
        "ag_final_wait_removed", _AG_MOD,
        (("    right_dma.wait()\n    left_dma.wait()\n", "    right_dma.wait()\n    pass\n"),),
        "the final wait of the last leftward DMA removed: the kernel ends with it outstanding"),
    Mutation(
        "ag_step_wait_removed", _AG_MOD,
        (("      with jax.named_scope(\"wait_left_dma\"):\n        left_dma.wait()",
          "      with jax.named_scope(\"wait_left_dma\"):\n        pass"),),
        "the wait of the previous leftward DMA removed before the next is started"),
]


CASES: dict[str, Case] = {}


def _register(case: Case):
    CASES[case.name] = case


_register(Case("jax_paged_attention", "jax " + "0.10.2", _PAGED_MOD, _build_paged,
               {"lengths": [40, 64]}, {m.name: m for m in PAGED_MUTATIONS}))
_register(Case("jax_all_gather", "jax 0.10.2", _AG_MOD, _build_all_gather, {},
               {m.name: m for m in AG_MUTATIONS}, num_devices=ALL_GATHER["devices"],
               # on_wait completes two DMAs on one semaphore in reverse order (docs/oracle.md): the ring forwards a
               # slot before it arrived, a race of the forwarding DMAs with themselves
               known_races=(("all_gather.py:91", "all_gather.py:91"), ("all_gather.py:105", "all_gather.py:105")),
               known_races_modes=("on_wait",)))
_register(Case("jax_ragged_paged_attention", "jax 0.10.2", _RAGGED_MOD, _build_ragged,
               {"q_lens": [3, 1, 8, 0], "kv_lens": [20, 33, 8, 0], "num_seqs": 3},
               {m.name: m for m in RAGGED_MUTATIONS}))


# ---- tpu-inference: ragged paged attention v3 (tpu_inference.kernels.ragged_paged_attention.v3.kernel) ------------
# Inputs as its kernel test builds them: sequences of (q_len, kv_len) with q_len <= kv_len; each sequence's pages
# given out in order from page 0, its page table padded with zeros; cu_q_lens the prefix sums of the q_lens;
# distribution (0, 0, num_seqs): every sequence in the mixed case. Shapes cut down to a few KB.
RPA3 = dict(tokens=16, q_heads=2, kv_heads=1, head_dim=128, page_size=16, pages_per_seq=4, max_seqs=4,
            block_sizes=(8, 32, 8, 32))


def _build_rpa3(mod, s):
    import jax
    import jax.numpy as jnp

    r = RPA3
    q_lens, kv_lens, num_seqs = s["q_lens"], s["kv_lens"], s["num_seqs"]
    cu = [0]
    for i in range(r["max_seqs"]):
        cu.append(cu[-1] + (q_lens[i] if i < num_seqs else 0))
    pages, next_page = [], 0
    for i in range(r["max_seqs"]):
        n = _cdiv(kv_lens[i], r["page_size"]) if i < num_seqs else 0
        row = list(range(next_page, next_page + n))
        next_page += n
        pages.extend(row + [0] * (r["pages_per_seq"] - len(row)))
    total = r["max_seqs"] * r["pages_per_seq"]
    k1, k2, k3, k4 = jax.random.split(jax.random.PRNGKey(2), 4)
    q = jax.random.uniform(k1, (r["tokens"], r["q_heads"], r["head_dim"]), jnp.float32)
    k = jax.random.uniform(k2, (r["tokens"], r["kv_heads"], r["head_dim"]), jnp.float32)
    v = jax.random.uniform(k3, (r["tokens"], r["kv_heads"], r["head_dim"]), jnp.float32)
    cache = jax.random.uniform(k4, (total, r["page_size"], 2 * r["kv_heads"], 1, r["head_dim"]), jnp.float32)
    i32 = jnp.int32

    def fn(*a):
        return mod.ragged_paged_attention(*a, sm_scale=1 / math.sqrt(r["head_dim"]),
                                          d_block_sizes=r["block_sizes"], p_block_sizes=r["block_sizes"],
                                          m_block_sizes=r["block_sizes"], vmem_limit_bytes=32 * 1024 * 1024)

    return fn, (q, k, v, cache, jnp.array(kv_lens, i32), jnp.array(pages, i32), jnp.array(cu, i32),
                jnp.array([0, 0, num_seqs], i32))


_RPA3_MOD = "tpu_inference.kernels.ragged_paged_attention.v3.kernel"
RPA3_MUTATIONS = [
    Mutation(
        "rpa3_bq_wait_removed", _RPA3_MOD,
        (("                def wait_cur_bq():\n                    wait_fetch_bq(seq_idx, bq_idx, bq_sem_idx)",
          "                def wait_cur_bq():\n                    pass"),),
        "the wait for the current query block removed: the block is read before its DMA lands"),
    Mutation(
        "rpa3_bo_wait_removed", _RPA3_MOD,
        (("        def _():\n            _send_bo(old_seq_idx, old_bo_idx, bo_sem_idx, wait=True)",
          "        def _():\n            pass"),),
        "the wait for an output block's DMA to HBM removed: its buffer is reused while the DMA may still read it"),
    Mutation(
        "rpa3_bkv_slot_constant", _RPA3_MOD,
        (("                    sem_ids_ref[1] = next_bkv_sem_idx\n                    start_fetch_bkv(next_seq_idx, "
          "next_bkv_idx,\n                                    next_bkv_sem_idx)",
          "                    sem_ids_ref[1] = bkv_sem_idx\n                    start_fetch_bkv(next_seq_idx, "
          "next_bkv_idx,\n                                    bkv_sem_idx)"),),
        "the KV prefetch's buffer slot made constant: the next block is fetched into the slot being computed on"),
    Mutation(
        "rpa3_bkv_prefetch_unguarded", _RPA3_MOD,
        (("                @pl.when(next_seq_idx < end_seq_idx)\n                def prefetch_next_bkv():",
          "                @pl.when(next_seq_idx <= end_seq_idx)\n                def prefetch_next_bkv():"),),
        "the KV prefetch's guard widened by one sequence: after the last sequence it prefetches the first block of "
        "the next table entry, never waited. Harmless while the entries past num_seqs have kv_len 0 (a zero-byte "
        "DMA: the default inputs run clean); shows once such an entry is not 0",
        scalars={"kv_lens": [20, 33, 8, 16]}),
]

_register(Case("tpuinf_ragged_paged_attention_v3", f"tpu-inference {TPU_INFERENCE_VERSION}", _RPA3_MOD,
               _build_rpa3, {"q_lens": [3, 1, 8, 0], "kv_lens": [20, 33, 8, 0], "num_seqs": 3},
               {m.name: m for m in RPA3_MUTATIONS}))


# ---- tpu-inference: megablox gmm_v2 (tpu_inference.kernels.megablox.gmm_v2) ----------------------------------------
# Inputs as its kernel test builds them: bf16 lhs and rhs from one key, group sizes summing to the batch, and a
# group offset: the rows of groups outside [offset, offset + local groups) are not computed and the kernel
# zero-fills them by DMA (`zero_out_start`/`zero_out_end`), sizes known only at run time.
GMM2 = dict(batch=64, in_size=256, out_size=256, groups=4)


def _build_gmm2(mod, s):
    import jax
    import jax.numpy as jnp

    g = GMM2
    if sum(s["group_sizes"]) != g["batch"]:
        raise ValueError(f"gmm_v2's group sizes must sum to the batch ({g['batch']}), not {sum(s['group_sizes'])}")
    local = g["groups"] - s["group_offset"]
    key = jax.random.key(0)
    lhs = jax.random.normal(key, (g["batch"], g["in_size"]), dtype=jnp.bfloat16)
    rhs = jax.random.normal(key, (local, g["in_size"], g["out_size"]), dtype=jnp.bfloat16)

    def fn(lhs, rhs, sizes, offset):
        return mod.gmm_v2(lhs, rhs, sizes, group_offset=offset)

    return fn, (lhs, rhs, jnp.array(s["group_sizes"], jnp.int32), jnp.array(s["group_offset"], jnp.int32))


_GMM2_MOD = "tpu_inference.kernels.megablox.gmm_v2"
GMM2_MUTATIONS = [
    Mutation(
        "gmm2_zero_wait_removed", _GMM2_MOD,
        (("    if cfgs.zero_init:\n        zero_out_end(out_ref, semaphore_ref, zero_size, dims=cfgs.dims)",
          "    if cfgs.zero_init:\n        pass"),),
        "the wait for the zero-fill DMAs removed: they may still write the output when the kernel ends"),
    Mutation(
        "gmm2_zero_wait_halved", _GMM2_MOD,
        (("        src_ref=out_dma.at[pl.ds(0, zero_size)],\n        dst_ref=out_dma.at[pl.ds(0, zero_size)],",
          "        src_ref=out_dma.at[pl.ds(0, zero_size // 2)],\n"
          "        dst_ref=out_dma.at[pl.ds(0, zero_size // 2)],"),),
        "the zero-fill wait's size halved: half of the zero-fill bytes are never waited for"),
]

_register(Case("tpuinf_gmm_v2", f"tpu-inference {TPU_INFERENCE_VERSION}", _GMM2_MOD, _build_gmm2,
               {"group_sizes": [10, 20, 14, 20], "group_offset": 1}, {m.name: m for m in GMM2_MUTATIONS}))


# ---- tpu-inference: fused MoE v1 (tpu_inference.kernels.fused_moe.v1.kernel) ----------------------------------------
# Inputs as its kernel test builds them (`gen_moe_inputs` there): bf16 tokens and weights scaled by 1/10, gating
# logits with a ramp plus +30 on top_k random experts per token (unique top-k), a (1, devices) ("data", "model")
# mesh. One device here: the interpreter runs the kernel's remote DMAs to itself.
MOE = dict(tokens=32, hidden=256, intermediate=256, experts=8, top_k=2,
           blocks=dict(bt=16, bf=256, bd1=256, bd2=256, btc=16, bfc=256, bd1c=256, bd2c=256))


def _build_moe(mod, s):
    import jax
    import jax.numpy as jnp
    from jax.sharding import Mesh

    m = MOE
    k0, k1, k2, k5, k6 = jax.random.split(jax.random.key(s["seed"]), 5)
    tokens = jax.random.normal(k0, (m["tokens"], m["hidden"]), dtype=jnp.bfloat16) / 10
    w1 = jax.random.normal(k1, (m["experts"], 2, m["hidden"], m["intermediate"]), dtype=jnp.bfloat16) / 10
    w2 = jax.random.normal(k2, (m["experts"], m["intermediate"], m["hidden"]), dtype=jnp.bfloat16) / 10
    ramp = jnp.arange(m["tokens"] * m["experts"], dtype=jnp.bfloat16).reshape(m["tokens"], m["experts"]) / 100
    gating = jax.random.normal(k5, (m["tokens"], m["experts"]), dtype=jnp.bfloat16) + ramp
    chosen = jax.random.randint(k6, (m["tokens"], m["top_k"]), 0, m["experts"] - 1, dtype=jnp.int32)
    gating = (gating + jnp.sum(jax.nn.one_hot(chosen, m["experts"], dtype=jnp.bfloat16), axis=1) * 30)
    mesh = Mesh(np.array(jax.devices()[:1]).reshape(1, 1), axis_names=("data", "model"))

    def fn(tokens, w1, w2, gating):
        return mod.fused_ep_moe(mesh, tokens, w1, w2, gating, m["top_k"], **m["blocks"])

    return fn, (tokens, w1, w2, gating.astype(jnp.bfloat16))


_MOE_MOD = "tpu_inference.kernels.fused_moe.v1.kernel"
MOE_MUTATIONS = [
    Mutation(
        "moe_gating_wait_removed", _MOE_MOD,
        (("    def wait_fetch_b_gating(bt_id):\n        bt_sem_id = bt_id % 2\n",
          "    def wait_fetch_b_gating(bt_id):\n        return\n"),),
        "the wait for a token block's gating logits removed: they are read before their DMA lands"),
    Mutation(
        "moe_gating_prefetch_unguarded", _MOE_MOD,
        (("        is_valid = jnp.logical_and(0 <= bt_id, bt_id < num_bt)\n"
          "        sz = pl.multiple_of(lax.select(is_valid, bt, 0), bt)\n"
          "        bt_sem_id = (bt_id + 2) % 2\n        b_gating_sem",
          "        is_valid = True\n"
          "        sz = pl.multiple_of(lax.select(is_valid, bt, 0), bt)\n"
          "        bt_sem_id = (bt_id + 2) % 2\n        b_gating_sem"),),
        "the gating prefetch's size guard removed: after the last token block it fetches a block that does not "
        "exist (a whole block, where the kernel moved zero bytes)",
        expect=("semaphore", "never_executed", "race", "out_of_bounds")),
]

_register(Case("tpuinf_fused_moe_v1", f"tpu-inference {TPU_INFERENCE_VERSION}", _MOE_MOD, _build_moe,
               {"seed": 1234}, {m.name: m for m in MOE_MUTATIONS}, slow=True, vector_clock_size=1024,
               known_races=(("start_a2a_gather", "dynamic_ffn2"),)))


# ---- the corpus's shapes: examples/jax_pallas_ops ------------------------------------------------------------------
# A static witness names run-time values of the kernel as the corpus compiled it (examples/jax_pallas_ops, 8
# sequences of up to 32 pages of 32 tokens, bf16, ...). These cases run the same kernels on inputs of exactly
# those shapes, named `<example module>/<version>` as the driver names the compilation: the lead's witness replay
# is `replay("jax_pallas_ops/paged", {"lengths": [...]})`. Slower than the small cases (larger grids).
REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def _example(name: str) -> types.ModuleType:
    path = os.path.join(REPO, "examples")
    if path not in sys.path:
        sys.path.insert(0, path)
    return importlib.import_module(name)


def _register_examples():
    try:
        ex = _example("jax_pallas_ops")
    except ImportError:  # an installed copy without the repository's examples: the small cases still run
        return
    P, R = ex.PAGED, ex.RAGGED
    paged = dict(batch=P["batch"], q_heads=P["q_heads"], kv_heads=P["kv_heads"], head_dim=ex.HEAD_DIM,
                 page_size=P["page_size"], pages_per_seq=P["pages_per_seq"], pages_per_block=P["pages_per_block"],
                 dtype="bfloat16")
    ragged = dict(tokens=R["tokens"], q_heads=R["q_heads"], kv_heads=R["combined_kv_heads"] // 2,
                  head_dim=ex.HEAD_DIM, page_size=R["page_size"], pages_per_seq=R["pages_per_seq"],
                  max_seqs=R["max_seqs"], kv_pages_per_block=R["kv_pages_per_block"],
                  queries_per_block=R["queries_per_block"], dtype="bfloat16")
    full = P["pages_per_seq"] * P["page_size"]
    _register(Case("jax_pallas_ops/paged", "jax 0.10.2, examples/jax_pallas_ops's shapes", _PAGED_MOD,
                   functools.partial(_build_paged, shape=paged),
                   {"lengths": [full, 1, full // 2, 33, full, 0, 7, full - 1]},
                   {m.name: m for m in PAGED_MUTATIONS}, slow=True))
    seqs = R["max_seqs"]
    _register(Case("jax_pallas_ops/ragged_paged", "jax 0.10.2, examples/jax_pallas_ops's shapes", _RAGGED_MOD,
                   functools.partial(_build_ragged, shape=ragged),
                   {"q_lens": [40, 1, 64, 1] + [0] * (seqs - 4), "kv_lens": [100, 300, 64, 1] + [0] * (seqs - 4),
                    "num_seqs": 4},
                   {m.name: m for m in RAGGED_MUTATIONS}, slow=True))
    # all_gather at the corpus's shape ((4096, 512) bf16 over 4 devices) is not registered: the interpreter
    # deadlocks before the kernel starts (docs/oracle.md, "Multiple devices")


_register_examples()
