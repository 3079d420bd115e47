"""Numerical checks of the example kernels in Pallas TPU interpret mode on CPU (no TPU needed)."""

import pytest

jax = pytest.importorskip("jax", reason="jax is not installed (run scripts/setup-python.sh)")
import numpy as np  # noqa: E402

import fp8_matmul_2d as mod  # noqa: E402

# versions whose result must equal the reference
CORRECT = ["v1", "v2", "v3", "bug_upcast", "bug_unwaited_dma", "bug_scales_vmem", "bug_any_in_vmem"]
# runnable but wrong by design (a race: the prefetch overwrites the buffer being read)
RUNS_ONLY = ["bug_single_slot"]
# must fail in Pallas TPU lowering; interpret mode does not check TPU block rules
LOWERING_FAILS = ["bug_bad_block"]


@pytest.fixture(scope="module", autouse=True)
def interpret_mode():
    mod.set_interpret(True)
    yield
    mod.set_interpret(False)


@pytest.fixture(scope="module")
def inputs():
    # small problem: 256 x 256 x 384 with 128 blocks -> grid 2 x 2 x 3, scales 2 x 3
    return mod.make_inputs(jax.random.key(0), m=256, n=256, k=384, block=128)


@pytest.fixture(scope="module")
def expected(inputs):
    return np.asarray(mod.reference(*inputs))


def test_versions_cover_convention():
    assert set(mod.VERSIONS) == set(CORRECT + RUNS_ONLY + LOWERING_FAILS)
    args = mod.example_args()
    assert [a.dtype.name for a in args] == ["float8_e4m3fn", "float8_e4m3fn", "float32", "float32"]
    assert args[2].shape == (mod.M // mod.BLOCK, mod.K // mod.BLOCK)


def test_reference_matches_unquantized():
    key = jax.random.key(1)
    kx, kw = jax.random.split(key)
    x = jax.random.normal(kx, (256, 256))
    w = jax.random.normal(kw, (128, 256))
    q = mod.quantize_2d(x, 128), mod.quantize_2d(w, 128)
    out = np.asarray(mod.reference(q[0][0], q[1][0], q[0][1], q[1][1]))
    exact = np.asarray(x @ w.T)
    # fp8 e4m3 has a 3-bit mantissa: a few percent of the output scale
    assert np.max(np.abs(out - exact)) / np.max(np.abs(exact)) < 0.05


@pytest.mark.parametrize("version", CORRECT)
def test_version_matches_reference(version, inputs, expected):
    out = np.asarray(jax.jit(mod.VERSIONS[version])(*inputs))
    assert out.shape == expected.shape and out.dtype == np.float32
    np.testing.assert_allclose(out, expected, rtol=2e-5, atol=2e-5 * np.max(np.abs(expected)))


@pytest.mark.parametrize("version", RUNS_ONLY)
def test_buggy_version_runs(version, inputs):
    out = np.asarray(jax.jit(mod.VERSIONS[version])(*inputs))
    assert out.shape == (256, 256)


@pytest.mark.parametrize("version", LOWERING_FAILS)
def test_bad_block_fails_tpu_lowering(version):
    """Lowering for TPU (no compile, no libtpu needed) rejects the (122, 128) block."""
    mod.set_interpret(False)
    try:
        with pytest.raises(Exception, match="divisible by 8 and 128"):
            jax.jit(mod.VERSIONS[version]).trace(*mod.example_args()).lower(lowering_platforms=("tpu",))
    finally:
        mod.set_interpret(True)


def test_every_version_names_its_rule_pack():
    assert set(mod.RULES) == set(mod.VERSIONS)
    assert set(mod.RULES.values()) <= {"core", "v1-auto", "v2-dma", "v3-smem"}
