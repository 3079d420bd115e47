"""examples/tpu_inference (tpu-inference's production kernels): the versions, their arguments, make_inputs, and the
loader that imports the kernels without the package's dependencies.

No TPU compile here: fixtures/tpu_inference is the compiled form (scripts/regen_fixtures.sh tpu_inference)."""

import importlib.util
import sys

import pytest

jax = pytest.importorskip("jax", reason="jax is not installed (run scripts/setup-python.sh)")
if importlib.util.find_spec("tpu_inference") is None:
    pytest.skip("tpu-inference is not installed (run scripts/setup-python.sh)", allow_module_level=True)
import jax.numpy as jnp  # noqa: E402

import hlolint_compile as hc  # noqa: E402

# conftest puts examples/ first on sys.path: `tpu_inference` is the example package, as the driver imports it
import tpu_inference as mod  # noqa: E402

EXPECTED = ["fused_moe_v1", "rpa_v3", "gmm_v2", "quantized_matmul_int8", "quantized_matmul_fp8",
            "quantized_matmul_blockwise_fp8", "mla_v1"]


def test_the_example_package_stands_in_for_tpu_inference():
    assert getattr(mod, "HLOLINT_EXAMPLE", False)
    assert mod._loader.version() == "0.29.0"
    kernel = mod._loader.load("ragged_paged_attention.v3.kernel")
    assert kernel.__name__ == "tpu_inference.kernels.ragged_paged_attention.v3.kernel"
    assert "site-packages" in kernel.__file__ or "dist-packages" in kernel.__file__
    # the package's heavy side is never imported
    for heavy in ("vllm", "torch", "torchax"):
        assert heavy not in sys.modules, heavy


def test_versions_rules_and_args_are_listed():
    assert hc.module_versions(mod) == EXPECTED
    rules = hc.module_rules(mod, EXPECTED)
    assert {v for v, r in rules.items() if r == "v1-auto"} == {v for v in EXPECTED if v.startswith("quantized")}
    assert {r for r in rules.values()} == {"v1-auto", "v2-dma"}
    for version in EXPECTED:
        args = hc.version_example_args(mod, version)
        assert args and all(isinstance(a, jax.ShapeDtypeStruct) for a in args), version


def test_ragged_tables_are_int32():
    i32 = jnp.dtype(jnp.int32)
    args = {v: [(a.shape, a.dtype) for a in hc.version_example_args(mod, v)] for v in EXPECTED}
    assert args["rpa_v3"][4:] == [((8,), i32), ((128,), i32), ((9,), i32), ((3,), i32)]
    assert args["mla_v1"][5:] == [((4,), i32), ((64,), i32), ((5,), i32), ((3,), i32)]
    assert args["gmm_v2"][2] == ((16,), i32) and args["gmm_v2"][4] == ((1,), i32)


def test_fused_moe_is_the_only_mesh_version():
    # one device: the kernel's own shard_map over ("data", "model"), expert parallelism on "model"
    assert hc.module_meshes(mod, EXPECTED) == {"fused_moe_v1": {"axes": ("data", "model"), "shape": (1, 1),
                                                                "in_specs": None}}
    assert hc._takes_param(mod.VERSIONS["fused_moe_v1"], "mesh")


@pytest.mark.parametrize("version", EXPECTED + ["gmm_v2_fp8"])
def test_make_inputs_match_the_example_args(version):
    want = mod.EXAMPLE_ARGS[version]() if version in mod.EXAMPLE_ARGS else mod._gmm_fp8_args()
    got = mod.make_inputs(jax.random.key(0), version)
    assert [(a.shape, a.dtype) for a in got] == [(a.shape, a.dtype) for a in want]


def test_ragged_inputs_are_valid():
    kv_lens, pages, cu_q_lens, distribution = mod.make_inputs(jax.random.key(0), "rpa_v3")[4:]
    n = int(distribution[2])
    q_lens = [int(cu_q_lens[i + 1] - cu_q_lens[i]) for i in range(n)]
    assert n == 3 and all(1 <= q <= int(kv) for q, kv in zip(q_lens, kv_lens[:n]))
    assert int(cu_q_lens[n]) <= mod.RPA["tokens"]
    sizes = mod.make_inputs(jax.random.key(0), "gmm_v2")[2]
    assert int(sizes.sum()) == mod.GMM["m"] and int(sizes.min()) >= 0


def test_generation_checks_fall_back_to_the_kernels_own_on_cpu():
    util = mod._loader.load("ragged_paged_attention.v3.util")
    # no TPU default device: the kernels see what tpu-inference itself gives them (-1 off TPU)
    assert util.get_tpu_version() == -1
    assert mod._loader._generation("TPU v6 lite") == 6 and mod._loader._generation("TPU7x") == 7
