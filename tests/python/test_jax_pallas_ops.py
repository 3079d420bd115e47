"""examples/jax_pallas_ops (jax's own Pallas TPU kernels): the versions and their per-version arguments.

No TPU compile here: the fixtures in fixtures/jax_pallas_ops are the compiled form (scripts/regen_fixtures.sh)."""

import pytest

jax = pytest.importorskip("jax", reason="jax is not installed (run scripts/setup-python.sh)")
import jax.numpy as jnp  # noqa: E402

import hlolint_compile as hc  # noqa: E402
import jax_pallas_ops as mod  # noqa: E402

EXPECTED = ["flash_fwd", "paged", "paged_int8", "gmm", "tgmm", "splash_mha_causal", "ragged_paged",
            "matmul_bf16", "matmul_int8", "threefry_bits", "all_gather"]


def test_versions_rules_and_args_are_listed():
    assert hc.module_versions(mod) == EXPECTED
    assert hc.module_rules(mod, EXPECTED) == {v: "core" for v in EXPECTED}
    assert set(mod.EXAMPLE_ARGS) == set(EXPECTED)
    for version in EXPECTED:
        args = hc.version_example_args(mod, version)
        assert args and all(isinstance(a, jax.ShapeDtypeStruct) for a in args), version


def test_args_are_the_documented_shapes():
    args = {v: [(a.shape, a.dtype) for a in hc.version_example_args(mod, v)] for v in EXPECTED}
    bf16, i32 = jnp.dtype(jnp.bfloat16), jnp.dtype(jnp.int32)
    assert args["flash_fwd"] == [((1, 4, 2048, 128), bf16)] * 3
    assert args["paged"] == [((8, 8, 128), bf16), ((2, 256, 32, 128), bf16), ((2, 256, 32, 128), bf16),
                             ((8,), i32), ((8, 32), i32)]
    assert [s for s, _ in args["paged_int8"]] == [(8, 8, 128), (2, 256, 32, 128), (2, 256, 32, 1),
                                                  (2, 256, 32, 128), (2, 256, 32, 1), (8,), (8, 32)]
    assert args["paged_int8"][1][1] == jnp.dtype(jnp.int8) and args["paged_int8"][2][1] == jnp.dtype(jnp.float32)
    assert args["gmm"] == [((2048, 512), bf16), ((8, 512, 1024), bf16), ((8,), i32)]
    assert args["tgmm"] == [((512, 2048), bf16), ((2048, 1024), bf16), ((8,), i32)]
    assert args["ragged_paged"] == [((256, 8, 128), bf16), ((256, 32, 4, 128), bf16), ((8,), i32), ((8, 32), i32),
                                    ((9,), i32), ((1,), i32)]
    assert args["matmul_int8"] == [((1024, 1024), jnp.dtype(jnp.int8))] * 2
    assert args["all_gather"] == [((4 * 1024, 512), bf16)]


def test_all_gather_is_the_only_mesh_version():
    # 4 devices on axis "x", x sharded on its rows: each device holds a (1024, 512) shard
    assert hc.module_meshes(mod, EXPECTED) == {"all_gather": {"axes": ("x",), "shape": (4,), "in_specs": (("x",),)}}
    assert hc._takes_param(mod.VERSIONS["all_gather"], "mesh")
    assert len(mod.MESH["all_gather"]["in_specs"]) == len(hc.version_example_args(mod, "all_gather"))


@pytest.mark.parametrize("version,out_shape", [
    ("flash_fwd", (1, 4, 2048, 128)), ("paged", (8, 8, 128)), ("paged_int8", (8, 8, 128)), ("gmm", (2048, 1024)),
    ("tgmm", (8, 512, 1024)), ("splash_mha_causal", (4, 2048, 128)), ("matmul_int8", (1024, 1024)),
])
def test_versions_trace_with_their_args(version, out_shape):
    # abstract evaluation only (no lowering, no device): the arguments fit the kernel's signature
    out = jax.eval_shape(mod.VERSIONS[version], *hc.version_example_args(mod, version))
    assert out.shape == out_shape
