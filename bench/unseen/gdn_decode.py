"""tpu-inference 0.29.0 gdn/v2/gdn_decode_kernel.py ragged_gated_delta_rule_decode_only -> fused_decoding_gdn
(Qwen3-Next gated delta rule, single-step decode), as shipped.

Shapes: 64 decode tokens, 4 q/k heads, 8 v heads, d_k = d_v = 128 (Qwen3-Next's 16/32 heads over TP 4),
recurrent state f32 [65 states, 8, 128, 128]; state_indices [64] and distribution [3] (scalar inputs)."""
import jax
import jax.numpy as jnp

import _unseen

m = _unseen.load("gdn.v2.gdn_decode_kernel")
S = jax.ShapeDtypeStruct
T, NKQ, NV, D = 64, 4, 8, 128


def gdn_decode(mixed_qkv, b, a, state, A_log, dt_bias, qsl, state_indices, distribution):
    return m.ragged_gated_delta_rule_decode_only(mixed_qkv, b, a, state, A_log, dt_bias, qsl, state_indices,
                                                 distribution, n_kq=NKQ, n_v=NV, d_k=D, d_v=D)


VERSIONS = {"gdn_decode": gdn_decode}
EXAMPLE_ARGS = {
    "gdn_decode": lambda: (
        S((T, 2 * NKQ * D + NV * D), jnp.bfloat16), S((T, NV), jnp.bfloat16), S((T, NV), jnp.bfloat16),
        S((T + 1, NV, D, D), jnp.float32), S((NV,), jnp.float32), S((NV,), jnp.float32),
        S((T + 1,), jnp.int32), S((T,), jnp.int32), S((3,), jnp.int32),
    )
}
