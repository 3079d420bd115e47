"""The `hlolint` Python package (python/hlolint, docs/python-api.md): `check` compiling through the driver and
linting with the binary, `assert_clean`'s message, the errors that need no compile, and `python -m hlolint`.

The package finds the binary through `$HLOLINT_BIN`: here the one scripts/test builds (as test_compare_html.py
finds it). Compiles use libtpu's compile-only topology (no TPU); `check` waits while another process compiles.
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import hlolint
from hlolint._findings import Findings, finding_from_json

REPO = Path(__file__).resolve().parents[2]
PYTHON_SRC = REPO / "python"


@pytest.fixture
def exe(monkeypatch, hlolint_bin):
    path = hlolint_bin
    monkeypatch.setenv("HLOLINT_BIN", str(path))
    return path


def fp8():
    import fp8_matmul_2d

    return fp8_matmul_2d


def test_the_documented_pytest_example_passes(exe, tmp_path):
    """docs/python-api.md's example, copied out of the page and run by pytest as a user would."""
    doc = (REPO / "docs" / "python-api.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", doc, re.S)
    example = next(b for b in blocks if "def test_" in b)
    (tmp_path / "test_my_kernels.py").write_text(example)
    env = dict(os.environ, HLOLINT_BIN=str(exe), PYTHONPATH=str(PYTHON_SRC), JAX_PLATFORMS="cpu")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_my_kernels.py"],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1200)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "2 passed" in r.stdout, r.stdout


def test_check_a_lowered_then_a_traced_into_one_folder(exe, tmp_path):
    import jax

    m = fp8()
    out = tmp_path / "out"
    lowered = jax.jit(m.VERSIONS["bug_unwaited_dma"]).trace(*m.example_args()).lower(lowering_platforms=("tpu",))
    found = hlolint.check(lowered, target="tpu7x", rules="v2-dma", out=out)
    # what the fixture's bug_unwaited_dma@tpu7x gives with its pack (test_wheel.py's EXPECTED)
    assert found.codes() == {"MO010", "MO011"}, found
    assert found.target == "tpu7x" and found.out == str(out)
    for f in found:
        assert f.severity == "error"
        assert f.compilation == "fp8_matmul_bug_unwaited_dma@tpu7x"  # the name from the Lowered's module
        assert f.python.file.endswith("fp8_matmul_2d/kernels.py") and f.python.line > 0, f
        assert (out / f.dump.file).is_file(), f.dump  # the dump location, relative to the kept folder
        assert f.dump.file.startswith("fp8_matmul_bug_unwaited_dma@tpu7x/mosaic/")
        assert str(f).startswith(f"{f.python}: {f.code} [error] ") and f"\n    dump: {f.dump}" in str(f)
    # a Traced (lowered by check for the target), into the same folder: v2 is clean there
    traced = jax.jit(m.VERSIONS["v2"]).trace(*m.example_args())
    assert hlolint.check(traced, target="tpu7x", rules="v2-dma", out=out, name="v2") == []
    manifest = json.loads((out / "manifest.json").read_text())
    assert sorted(manifest["versions"]) == ["fp8_matmul_bug_unwaited_dma", "v2"], manifest["versions"]
    assert not (out / ".hlolint-module").exists()


def test_check_a_function_with_static_arguments_and_a_pytree(exe):
    """Arrays anywhere in the arguments' pytrees are inputs; other values are constants of the computation."""
    m = fp8()
    x_q, w_q, x_scale, w_scale = m.example_args()

    def matmul(pair, scales, upcast):
        fn = m.VERSIONS["bug_upcast" if upcast else "v1"]
        return {"out": fn(pair[0], pair[1], *scales)}

    found = hlolint.check(matmul, (x_q, w_q), [x_scale, w_scale], True, target="tpu7x")
    assert "MO001" in found.codes(), found  # the planted upcast, with the bool as a constant
    assert found.out is None  # a temporary folder, removed
    assert all(f.compilation == "matmul@tpu7x" for f in found)


def test_check_a_function_names_buffers_and_semaphores_as_its_kernel_does(exe, tmp_path):
    """The worker traces no kernel of an exported computation: check records the names while it exports, as the
    driver's worker does while it lowers, and the findings use them."""
    m = fp8()
    out = tmp_path / "out"
    found = hlolint.check(m.VERSIONS["bug_unwaited_dma"], *m.example_args(), target="tpu7x", rules="v2-dma",
                          out=out, name="unwaited")
    manifest = json.loads((out / "manifest.json").read_text())
    [kernel] = manifest["results"][0]["kernels"]
    assert kernel["name"] == "fp8_mm_bug_unwaited_dma"
    assert kernel["operands"] == ["x_hbm", "w_hbm", "xs_ref", "ws_ref", "o_ref", "xbuf", "wbuf", "sem"], kernel
    assert found.codes() == {"MO010", "MO011"}, found
    messages = " ".join(f.message for f in found)
    assert "sem[" in messages and "%arg" not in messages, messages
    # a Lowered was traced before check saw it: its kernels keep their dump names, and nothing breaks
    lowered = jax_lowered(m, "bug_unwaited_dma")
    again = hlolint.check(lowered, target="tpu7x", rules="v2-dma", out=tmp_path / "lowered", name="unwaited")
    assert again.codes() == {"MO010", "MO011"}, again


def jax_lowered(m, version):
    import jax

    return jax.jit(m.VERSIONS[version]).trace(*m.example_args()).lower(lowering_platforms=("tpu",))


def test_check_a_compiled_lints_its_hlo(exe, tmp_path):
    """A Compiled made on a compile-only topology (in a process of its own: libtpu's lock) is linted as it is."""
    script = tmp_path / "compiled.py"
    script.write_text(f"""
import sys
sys.path[:0] = [{str(REPO / 'examples')!r}]
import jax, numpy as np
from jax.experimental import topologies
from jax.sharding import Mesh, NamedSharding, PartitionSpec
import fp8_matmul_2d as m
import hlolint
devices = topologies.get_topology_desc(platform="tpu", topology_name="v6e:2x2").devices
s = NamedSharding(Mesh(np.array(devices[:1]), ("x",)), PartitionSpec())
args = [jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=s) for a in m.example_args()]
with jax.default_device(devices[0]):
    compiled = jax.jit(m.VERSIONS["v1"]).lower(*args).compile()
try:
    hlolint.check(compiled, target="tpu7x")
except hlolint.HlolintError as e:
    print("MISMATCH", e)
print("CODES", sorted(hlolint.check(compiled, target="v6e").codes()))
""")
    env = dict(os.environ, HLOLINT_BIN=str(exe), PYTHONPATH=str(PYTHON_SRC), JAX_PLATFORMS="cpu",
               TPU_SKIP_MDS_QUERY="1")
    for _ in range(60):  # libtpu's lock: another process may be compiling
        r = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=600)
        if "libtpu_lockfile" not in r.stderr:
            break
        import time

        time.sleep(5)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "MISMATCH this Compiled was compiled for v6e, not tpu7x" in r.stdout, r.stdout
    assert "CODES ['XL001']" in r.stdout, r.stdout  # fp8 emulated on v6e, read from the kernel in the HLO


def test_what_check_refuses_before_compiling(exe):
    import jax
    import jax.numpy as jnp

    def f(x):
        return x + 1

    x = jax.ShapeDtypeStruct((8, 128), jnp.float32)
    cpu_lowered = jax.jit(f).lower(x)  # this process's default platform: cpu
    with pytest.raises(hlolint.HlolintError, match=r"lowered for cpu, not tpu.*lowering_platforms=\('tpu',\)"):
        hlolint.check(cpu_lowered, target="tpu7x")
    with pytest.raises(hlolint.HlolintError, match="compiled for cpu, not tpu7x"):
        hlolint.check(cpu_lowered.compile(), target="tpu7x")
    with pytest.raises(TypeError, match="arguments are taken with a function only"):
        hlolint.check(cpu_lowered, x)
    with pytest.raises(TypeError, match="takes a function"):
        hlolint.check(42)


FINDING = {
    "code": "MO010", "rule": "dma-balance", "severity": "error", "kernel": "k",
    "message": "a DMA started here is never waited", "help": "wait on it", "label": "never waited", "notes": [],
    "compilation": "/tmp/o/k@tpu7x", "target": "tpu7x",
    "path": "/tmp/o/k@tpu7x/mosaic/m-post-deserialization.txt", "start": {"line": 3, "column": 5, "offset": 9},
    "python": {"file": "/src/kernels.py", "line": 14, "column": 4},
}


def test_assert_clean_lists_what_fails_and_lets_info_and_allowed_pass(monkeypatch):
    info = dict(FINDING, code="XL001", severity="info", message="fp8 emulated", python=None)
    found = Findings([finding_from_json(FINDING, "/tmp/o"), finding_from_json(info, "/tmp/o")], target="tpu7x")
    monkeypatch.setattr("hlolint._check.check", lambda *a, **k: found)

    def kernel():
        pass

    with pytest.raises(AssertionError) as e:
        hlolint.assert_clean(kernel, target="tpu7x")
    assert str(e.value) == (
        "hlolint: 1 finding(s) in kernel on tpu7x (pass out=... to keep the dumps):\n"
        "  /src/kernels.py:14:4: MO010 [error] a DMA started here is never waited\n"
        "      dump: k@tpu7x/mosaic/m-post-deserialization.txt:3:5\n"
        "    help: wait on it")
    assert hlolint.assert_clean(kernel, allow=["MO010"]) is found
    with pytest.raises(AssertionError, match="2 finding"):
        hlolint.assert_clean(kernel, min_severity="info")
    assert str(found[1]) == "k@tpu7x/mosaic/m-post-deserialization.txt:3:5: XL001 [info] fp8 emulated"


def test_python_dash_m_hlolint_is_the_binary(exe, tmp_path):
    env = dict(os.environ, HLOLINT_BIN=str(exe), PYTHONPATH=str(PYTHON_SRC))
    via = subprocess.run([sys.executable, "-m", "hlolint", "--version"], env=env, capture_output=True, text=True)
    direct = subprocess.run([str(exe), "--version"], capture_output=True, text=True)
    assert via.returncode == 0 and via.stdout == direct.stdout and via.stdout.startswith("hlolint ")
    # the exit code and the diagnostics are the binary's
    bad = subprocess.run([sys.executable, "-m", "hlolint", str(tmp_path / "missing")], env=env, capture_output=True,
                         text=True)
    assert bad.returncode == 2 and "missing" in bad.stderr
    env["HLOLINT_BIN"] = str(tmp_path / "nowhere")
    gone = subprocess.run([sys.executable, "-m", "hlolint", "--version"], env=env, capture_output=True, text=True)
    assert gone.returncode == 2 and "HLOLINT_BIN" in gone.stderr
