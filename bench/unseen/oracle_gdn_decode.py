"""tpu-inference 0.29.0's gdn v2 decode kernel (bench/unseen/gdn_decode.py) under jax's TPU interpreter: the race
between a block's state stores and the refill of their slot two blocks later (docs/unseen-kernels.md).

    JAX_PLATFORMS=cpu .venv/bin/python bench/unseen/oracle_gdn_decode.py [T]

T decode tokens (default 64, the compiled batch: blocks of 8), each its own request, states scattered in the cache.
Prints the race detector's sites (hlolint_oracle, both DMA execution modes) and, per mode, how many updated state
rows differ from a plain-numpy recurrence written from the kernel's own formulas."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import _unseen  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.experimental.pallas import tpu as pltpu  # noqa: E402
from hlolint_oracle import patches, runner  # noqa: E402

m = _unseen.load("gdn.v2.gdn_decode_kernel")
T = int(sys.argv[1]) if len(sys.argv) > 1 else 64
# q/k heads, v heads, head dim: the smallest the kernel takes (q/k heads a multiple of bf16's packing, 2)
NKQ, NV, D = 2, 4, 128
ks = jax.random.split(jax.random.PRNGKey(0), 4)
SIDX = np.random.default_rng(0).permutation(T + 3)[:T].astype(np.int32)


def args():
    return (jax.random.normal(ks[0], (T, 2 * NKQ * D + NV * D), jnp.float32).astype(jnp.bfloat16) / 4,
            jax.random.normal(ks[1], (T, NV), jnp.float32).astype(jnp.bfloat16),
            jax.random.normal(ks[2], (T, NV), jnp.float32).astype(jnp.bfloat16),
            jax.random.normal(ks[3], (T + 3, NV, D, D), jnp.float32) / 10,
            jnp.zeros((NV,), jnp.float32), jnp.zeros((NV,), jnp.float32),
            jnp.arange(T + 1, dtype=jnp.int32), jnp.array(SIDX), jnp.array([T, T, T], jnp.int32))


def kernel(*a):
    return m.ragged_gated_delta_rule_decode_only(*a, n_kq=NKQ, n_v=NV, d_k=D, d_v=D)


def reference():
    """One decode step per token, as gdn_decode_kernel.py's _process_token computes it with
    use_qk_l2norm and use_gate_in_kernel (ragged_gated_delta_rule_decode_only sets both), A_log = dt_bias = 0."""
    mixed, b, a, state0 = (np.asarray(x, np.float32) for x in args()[:4])
    ref = state0.copy()
    rep = NV // NKQ
    for t in range(T):
        q = mixed[t, :NKQ * D].reshape(NKQ, D)
        k = mixed[t, NKQ * D:2 * NKQ * D].reshape(NKQ, D)
        v = mixed[t, 2 * NKQ * D:].reshape(NV, D)
        q = q / np.sqrt((q * q).sum(-1, keepdims=True) + 1e-6) * D ** -0.5
        k = k / np.sqrt((k * k).sum(-1, keepdims=True) + 1e-6)
        k = np.repeat(k, rep, 0)
        gk = -np.log1p(np.exp(np.broadcast_to(a[t][:, None], (NV, D))))
        beta = 1 / (1 + np.exp(-b[t][:, None]))
        h0 = state0[SIDX[t]]
        bv = beta * (v - np.einsum("hk,hkv->hv", k * np.exp(gk), h0))
        ref[SIDX[t]] = h0 * np.exp(gk)[:, :, None] + k[:, :, None] * bv[:, None, :]
    return ref


for mode in ("on_wait", "eager"):
    r = runner.run("gdn_decode", kernel, args(), mode=mode)
    print(f"{mode}: {r.dmas} DMAs, non-zero semaphores {r.nonzero_semaphores}, {len(r.races)} races")
    for site, n in r.race_sites().items():
        print(f"  {n} × {site}")
ref = reference()
for mode in ("eager", "on_wait"):
    jax.clear_caches()
    with pltpu.force_tpu_interpret_mode(pltpu.InterpretParams(dma_execution_mode=mode)), \
            patches.simulated_chip("TPU v6 lite"):
        state = np.asarray(kernel(*args())[0])
    off = sum(not np.allclose(state[r], ref[r], atol=2e-2) for r in SIDX)
    print(f"{mode}: {off} of {T} updated state rows differ from the reference")
