"""tpu-inference 0.29.0 collectives/all_gather_matmul.py all_gather_matmul, as shipped, on 4 devices.

all_gather(x, rows) @ y with a bidirectional ring of remote DMAs (send/recv semaphores DMA((2, tp-1))), grid
(tp + 2, n/bn, k/bk). x (1024, 1024) bf16 sharded on rows (256 per device), y (1024, 1024) sharded on columns;
bn 256, bk 512 (explicit: the tuned table has no entry for these sizes)."""
import jax
import jax.numpy as jnp

import _unseen

m = _unseen.load("collectives.all_gather_matmul")


def all_gather_matmul(x, y, *, mesh):
    return m.all_gather_matmul(x, y, mesh, "x", bn=256, bk=512)


VERSIONS = {"all_gather_matmul": all_gather_matmul}
EXAMPLE_ARGS = {
    "all_gather_matmul": lambda: (
        jax.ShapeDtypeStruct((1024, 1024), jnp.bfloat16),
        jax.ShapeDtypeStruct((1024, 1024), jnp.bfloat16),
    )
}
MESH = {"all_gather_matmul": {"axes": ("x",), "shape": (4,), "in_specs": (("x", None), (None, "x"))}}
