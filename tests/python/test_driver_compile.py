"""Tests of src/driver/hlolint_compile.py: real compile-only runs (skipped with a reason when jax / libtpu are
not importable) and per-version example arguments."""

import json
import os

import pytest

import hlolint_compile as hc
from driver_helpers import HAVE_JAX, HAVE_LIBTPU, run_driver, write_module


# ------------------------------------------------------------------------------------------------
# real compiles
# ------------------------------------------------------------------------------------------------
TINY_MODULE = """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def _add_one(x_ref, o_ref):
    o_ref[...] = x_ref[...] + 1.0


def _call(x, rows):
    return pl.pallas_call(
        _add_one,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid=(x.shape[0] // rows,),
        in_specs=[pl.BlockSpec((rows, 128), lambda i: (i, 0))],
        out_specs=pl.BlockSpec((rows, 128), lambda i: (i, 0)),
        name="tiny_add",
    )(x)


def ok(x):
    return _call(x, 8)


def plain(x):
    return jnp.tanh(x) * 2


def bad_block(x):
    return _call(x, 4)   # 4 rows: not divisible by 8 -> Pallas TPU lowering error


def slow(x):
    import time
    time.sleep(60)
    return x


VERSIONS = {"ok": ok, "plain": plain, "bad_block": bad_block}


def example_args():
    return (jax.ShapeDtypeStruct((64, 128), jnp.float32),)
"""


@pytest.fixture
def tiny(tmp_path):
    return write_module(tmp_path, "tiny_kernels.py", TINY_MODULE)


def test_compile_tpu7x_layout_manifest_and_failure(tmp_path, tiny):
    if not HAVE_JAX or not HAVE_LIBTPU:
        reason = "jax" if not HAVE_JAX else "libtpu"
        print(f"SKIP: {reason} is not importable; run scripts/setup-python.sh")
        pytest.skip(f"{reason} is not importable (run scripts/setup-python.sh)")
    out = tmp_path / "out"
    rc, events, stderr = run_driver("--module", tiny, "--target", "tpu7x", "--out", str(out))
    assert rc == 1, stderr
    kinds = [e["event"] for e in events]
    assert kinds[0] == "plan" and kinds[-1] == "finished"
    assert kinds.count("start") == 3 and kinds.count("done") == 3
    done = {e["version"]: e for e in events if e["event"] == "done"}
    assert done["ok"]["status"] == "ok" and done["plain"]["status"] == "ok"
    bad = done["bad_block"]
    assert bad["status"] == "error" and bad["error"]["kind"] == "lowering"
    assert "divisible by 8 and 128" in bad["error"]["message"]
    assert os.path.realpath(bad["error"]["file"]) == os.path.realpath(tiny)
    assert bad["error"]["function"] == "_call" or bad["error"]["line"] in (11, 27)

    # layout
    unit = out / "ok@tpu7x"
    assert (unit / "stablehlo.mlir").read_text().startswith("module @jit_ok")
    assert "tpu_custom_call" in (unit / "stablehlo.mlir").read_text()
    hlo = sorted(os.listdir(unit / "hlo"))
    assert any(n.endswith(".after_optimizations.txt") for n in hlo)
    assert any(n.endswith(".before_optimizations.txt") for n in hlo)
    assert all(hc.keep_file("hlo", n) for n in hlo)
    mosaic = os.listdir(unit / "mosaic")
    for stage in hc.KEEP_MOSAIC_STAGES:
        assert any(n.endswith(f"-{stage}.txt") for n in mosaic), (stage, mosaic)
    llo = os.listdir(unit / "llo")
    assert any("tiny_add" in n and n.endswith("-final_bundles.txt") for n in llo)
    assert any("memory-space-assignment" in n for n in llo)
    assert not any(n.endswith(".html") for n in llo)
    assert (out / "ok_hlo.txt").read_text().startswith("HloModule jit_ok")
    assert (out / "plain_hlo.txt").exists() and not (out / "plain@tpu7x" / "mosaic").exists()
    assert not (out / "bad_block_hlo.txt").exists()
    assert not (out / hc.STAGE_DIR).exists()

    # manifest
    m = json.loads((out / "manifest.json").read_text())
    assert m["packages"]["jax"] and m["packages"]["libtpu"]
    assert m["targets"] == [{"target": "tpu7x", "platform": "tpu", "topology": "tpu7x:2x2x1",
                             "device_kind": "TPU7x"}]
    assert m["versions"] == ["ok", "plain", "bad_block"] and m["status"] == "error"
    res = {r["version"]: r for r in m["results"]}
    assert res["ok"]["status"] == "ok" and res["ok"]["hlo_txt"] == "ok_hlo.txt" and res["ok"]["error"] is None
    assert res["ok"]["dir"] == "ok@tpu7x" and res["ok"]["compile_s"] > 0
    assert res["bad_block"]["error"]["stage"] == "lower"
    assert res["bad_block"]["error"]["frames"][-1]["source"].startswith("return pl.pallas_call(")


def test_timeout_kills_only_that_version(tmp_path, tiny):
    if not HAVE_JAX:
        print("SKIP: jax is not importable; run scripts/setup-python.sh")
        pytest.skip("jax is not importable (run scripts/setup-python.sh)")
    src = open(tiny).read().replace('VERSIONS = {"ok": ok, ', 'VERSIONS = {"slow": slow, ')
    mod = write_module(tmp_path, "slow_kernels.py", src)
    out = tmp_path / "out"
    rc, events, _ = run_driver("--module", mod, "--target", "cpu", "--versions", "slow,plain",
                               "--timeout", "8", "--out", str(out))
    assert rc == 1
    done = {e["version"]: e for e in events if e["event"] == "done"}
    assert done["slow"]["error"]["kind"] == "timeout"
    assert done["plain"]["status"] == "ok"
    assert (out / "plain_hlo.txt").read_text().startswith("HloModule jit_plain")
    assert not (out / "slow@cpu" / "hlo").exists()


def test_module_rules_are_checked_against_versions():
    class M:
        RULES = {"v1": "v1-auto", "v2": "v2-dma"}

    assert hc.module_rules(M, ["v1", "v2", "v3"]) == {"v1": "v1-auto", "v2": "v2-dma"}

    class NoRules:
        pass

    assert hc.module_rules(NoRules, ["v1"]) == {}

    class Unknown:
        RULES = {"v9": "core"}

    with pytest.raises(TypeError, match="not in VERSIONS"):
        hc.module_rules(Unknown, ["v1"])

    class BadType:
        RULES = {"v1": ["core"]}

    with pytest.raises(TypeError, match="RULES must map"):
        hc.module_rules(BadType, ["v1"])


def test_module_args_reach_the_module_as_sys_argv(tmp_path):
    path = write_module(tmp_path, "argkern.py", """\
        import sys
        SIZES = [int(a) for a in sys.argv[1:] if a.isdigit()]
        VERSIONS = {f"v{n}": (lambda x: x) for n in SIZES}
        def example_args():
            return ()
        """)
    result = tmp_path / "list.json"
    rc, _, err = run_driver("--worker", "list", "--module", path, "--result", str(result),
                            "--module-args", json.dumps(["64", "--flag", "128"]))
    assert rc == 0, err
    listed = json.loads(result.read_text())
    assert listed["status"] == "ok", listed
    assert listed["versions"] == ["v64", "v128"]
    rc, events, _ = run_driver("--module", path, "--module-args", "not json", "--out", str(tmp_path / "o"))
    assert rc != 0 and any(e.get("event") == "usage_error" and "JSON list" in e["message"] for e in events)


# ------------------------------------------------------------------------------------------------
# per-version example arguments: example_args(), example_args(version), EXAMPLE_ARGS = {version: ...}
# ------------------------------------------------------------------------------------------------
def test_example_args_old_form_is_shared_by_every_version():
    class Old:
        VERSIONS = {"a": len, "b": len}

        @staticmethod
        def example_args():
            return ("shared",)

    class Sized:  # fp8_matmul_2d's form: defaulted size parameters, called with none
        VERSIONS = {"a": len}

        @staticmethod
        def example_args(m=512, k=256):
            return (m, k)

    assert hc.module_versions(Old) == ["a", "b"]
    assert hc.version_example_args(Old, "a") == hc.version_example_args(Old, "b") == ("shared",)
    assert hc.version_example_args(Sized, "a") == (512, 256)


def test_example_args_per_version_forms():
    class ByParam:
        VERSIONS = {"a": len, "b": len}

        @staticmethod
        def example_args(version):
            return (f"args-of-{version}",)

    class ByTable:
        VERSIONS = {"a": len, "b": len, "c": len}
        EXAMPLE_ARGS = {"a": lambda: ("from-table",), "b": ("a-tuple",)}

        @staticmethod
        def example_args():
            return ("fallback",)

    class TableOnly:
        VERSIONS = {"a": len}
        EXAMPLE_ARGS = {"a": lambda: "single"}

    assert hc.version_example_args(ByParam, "b") == ("args-of-b",)
    assert hc.module_versions(ByTable) == ["a", "b", "c"]
    assert [hc.version_example_args(ByTable, v) for v in "abc"] == [("from-table",), ("a-tuple",), ("fallback",)]
    assert hc.module_versions(TableOnly) == ["a"]
    assert hc.version_example_args(TableOnly, "a") == ("single",)


def test_example_args_table_is_checked_against_versions():
    class Unknown:
        VERSIONS = {"a": len}
        EXAMPLE_ARGS = {"a": tuple, "zz": tuple}

    class Missing:
        VERSIONS = {"a": len, "b": len}
        EXAMPLE_ARGS = {"a": tuple}

    class NotADict:
        VERSIONS = {"a": len}
        EXAMPLE_ARGS = [tuple]

    with pytest.raises(TypeError, match="not in VERSIONS.*zz"):
        hc.module_versions(Unknown)
    with pytest.raises(TypeError, match=r"missing: \['b'\]"):
        hc.module_versions(Missing)
    with pytest.raises(TypeError, match="EXAMPLE_ARGS must map"):
        hc.module_versions(NotADict)


def test_place_args_shards_arrays_and_pytrees_and_keeps_static_values():
    jax = pytest.importorskip("jax", reason="jax is not installed (run scripts/setup-python.sh)")
    import collections

    import numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    sharding = NamedSharding(Mesh(np.array(jax.devices("cpu")[:1]), ("x",)), PartitionSpec())
    Pair = collections.namedtuple("Pair", "weight scales")
    sds = jax.ShapeDtypeStruct
    example = (sds((8, 128), np.int8), Pair(sds((8, 128), np.int8), sds((8, 1), np.float32)), 4, "causal", None)
    args, static = hc.place_args(example, sharding)
    assert static == (2, 3, 4)
    assert args[0].sharding == sharding and args[0].shape == (8, 128)
    assert isinstance(args[1], Pair) and args[1].scales.sharding == sharding and args[1].scales.shape == (8, 1)
    assert args[2:] == [4, "causal", None]


PER_VERSION_MODULE = """\
import functools
import jax
import jax.numpy as jnp


def scaled(x, factor):
    return x * factor


def pair_sum(a, b):
    return a + b.astype(a.dtype)


VERSIONS = {"by_param": jnp.sin, "by_table": pair_sum, "static": scaled,
            "partial": functools.partial(scaled, factor=3)}

EXAMPLE_ARGS = {"by_table": lambda: (jax.ShapeDtypeStruct((4, 128), jnp.float32),
                                      jax.ShapeDtypeStruct((4, 128), jnp.int32)),
                "static": lambda: (jax.ShapeDtypeStruct((2, 128), jnp.float32), 2)}


def example_args(version):
    return (jax.ShapeDtypeStruct((16 if version == "by_param" else 8, 128), jnp.float32),)
"""


def test_compile_with_per_version_args_on_cpu(tmp_path):
    if not HAVE_JAX:
        print("SKIP: jax is not importable; run scripts/setup-python.sh")
        pytest.skip("jax is not importable (run scripts/setup-python.sh)")
    mod = write_module(tmp_path, "per_version.py", PER_VERSION_MODULE)
    out = tmp_path / "out"
    rc, events, err = run_driver("--module", mod, "--target", "cpu", "--out", str(out))
    manifest = json.loads((out / "manifest.json").read_text())
    assert rc == 0, (events, err)
    assert [(r["version"], r["status"]) for r in manifest["results"]] == [
        ("by_param", "ok"), ("by_table", "ok"), ("static", "ok"), ("partial", "ok")]
    shlo = {v: (out / f"{v}@cpu" / "stablehlo.mlir").read_text() for v in ("by_param", "by_table", "static")}
    assert "tensor<16x128xf32>" in shlo["by_param"]
    assert "tensor<4x128xi32>" in shlo["by_table"]
    # the static factor 2 is folded into the program, not an argument
    assert "tensor<2x128xf32>" in shlo["static"] and "%arg1" not in shlo["static"]
