"""Tests of src/driver/hlolint_compile.py: kernel names (what the author called each ref) and multi-device
versions (MESH), with real compile-only runs where jax is importable."""

import json
import os

import pytest

import hlolint_compile as hc
from driver_helpers import HAVE_JAX, run_driver, write_module


# ------------------------------------------------------------------------------------------------
# kernel names: what the author called each ref (the dumps say %argN)
# ------------------------------------------------------------------------------------------------
NAMED_MODULE = """\
import functools
from typing import NamedTuple
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def _params(x_ref, o_ref):
    o_ref[...] = x_ref[...] + 1.0


def _unpacked(*refs, swap):
    if swap:
        o_ref, x_ref, buf = refs[1], refs[0], refs[2]
    else:
        x_ref, o_ref, buf = refs
    buf[...] = x_ref[...]
    o_ref[...] = buf[...] * 2.0


def _unnamed(*refs):
    refs[1][...] = refs[0][...]


def _body(x_ref, o_ref):
    o_ref[...] = x_ref[...] * 3.0


class _Pair(NamedTuple):
    weight: object
    bias: object


def _pytree(x_ref, pair_ref, absent_ref, o_ref):
    # a NamedTuple of refs is two kernel arguments; None (an absent optional ref) is none
    o_ref[...] = x_ref[...] * pair_ref.weight[...] + pair_ref.bias[...]


def _forwarding(*args):
    # the refs named by the helper they are handed to (tpu-inference's ragged paged attention does this)
    _body(*args)


def _call(kernel, x, name, scratch=()):
    return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), name=name,
                          scratch_shapes=list(scratch))(x)


VERSIONS = {
    "params": lambda x: _call(_params, x, "by_params"),
    "unpacked": lambda x: _call(functools.partial(_unpacked, swap=False), x, "by_locals",
                                [pltpu.VMEM((8, 128), jnp.float32)]),
    "swapped": lambda x: _call(functools.partial(_unpacked, swap=True), x, "by_other_locals",
                               [pltpu.VMEM((8, 128), jnp.float32)]),
    "unnamed": lambda x: _call(_unnamed, x, "nameless"),
    "forwarded": lambda x: _call(_forwarding, x, "by_helper"),
    "pytree": lambda x: pl.pallas_call(
        _pytree, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), name="by_leaves",
        in_specs=[pl.BlockSpec(x.shape, lambda: (0, 0)), _Pair(pl.BlockSpec(x.shape, lambda: (0, 0)),
                                                               pl.BlockSpec(x.shape, lambda: (0, 0))), None],
    )(x, _Pair(x, x), None),
}


def example_args():
    return (jax.ShapeDtypeStruct((8, 128), jnp.float32),)
"""


@pytest.mark.parametrize("version,kernel,operands", [
    ("params", "by_params", ["x_ref", "o_ref"]),
    ("unpacked", "by_locals", ["x_ref", "o_ref", "buf"]),
    # which local holds which ref is decided when the kernel runs, whatever order the source writes them in
    ("swapped", "by_other_locals", ["x_ref", "o_ref", "buf"]),
    ("unnamed", "nameless", ["refs[0]", "refs[1]"]),
    ("forwarded", "by_helper", ["x_ref", "o_ref"]),
    ("pytree", "by_leaves", ["x_ref", "pair_ref.weight", "pair_ref.bias", "o_ref"]),
])
def test_kernel_names_are_the_locals_the_body_binds_refs_to(tmp_path, version, kernel, operands):
    if not HAVE_JAX:
        print("SKIP: jax is not importable; run scripts/setup-python.sh")
        pytest.skip("jax is not importable (run scripts/setup-python.sh)")
    import jax

    mod = hc.load_module(write_module(tmp_path, f"named_{version}.py", NAMED_MODULE))
    import jax.experimental.pallas as pl

    original = pl.pallas_call
    with hc.KernelNames() as names:
        jax.make_jaxpr(mod.VERSIONS[version])(*mod.example_args())
    assert pl.pallas_call is original, "the wrapper is removed on exit"
    [record] = names.records
    assert (record["name"], record["operands"]) == (kernel, operands)
    assert record["file"].endswith(f"named_{version}.py") and record["line"] > 1


def test_the_names_wrapper_is_never_an_ops_place(tmp_path):
    """Findings give an op's innermost user frame: the `pallas_call` wrapper sits between the author's call and
    jax, and must not be that frame (it lives in the helper's temporary folder, deleted after the run)."""
    if not HAVE_JAX:
        print("SKIP: jax is not importable; run scripts/setup-python.sh")
        pytest.skip("jax is not importable (run scripts/setup-python.sh)")
    import jax
    from jax._src import source_info_util

    path = write_module(tmp_path, "named_places.py", NAMED_MODULE)
    mod = hc.load_module(path)
    with hc.KernelNames():
        jaxpr = jax.make_jaxpr(mod.VERSIONS["params"])(*mod.example_args())
    frames = [source_info_util.user_frame(e.source_info.traceback) for e in jaxpr.jaxpr.eqns]
    assert frames and all(f is not None for f in frames)
    assert {os.path.basename(f.file_name) for f in frames} == {"named_places.py"}, frames


def test_declared_kernel_names_are_checked():
    record = {"name": "k", "operands": ["x_ref", "o_ref"]}

    class Mod:
        KERNEL_NAMES = {"v1": [record]}

    assert hc.module_kernel_names(Mod, "v1") == [record]
    assert hc.module_kernel_names(Mod, "v2") == []
    for bad, match in [(["k"], "must map version names"), ({"v1": [{"name": "k"}]}, "list of kernel records")]:
        Mod.KERNEL_NAMES = bad
        with pytest.raises(TypeError, match=match):
            hc.module_kernel_names(Mod, "v1")


# ------------------------------------------------------------------------------------------------
# multi-device versions: MESH = {version: {"axes": ..., "shape": ..., "in_specs": ...}}
# ------------------------------------------------------------------------------------------------
def test_module_meshes_are_checked_and_normalised():
    class Mod:
        VERSIONS = {"ring": len, "plain": len, "grid": len}
        MESH = {"ring": {"axes": "x", "shape": 4, "in_specs": (("x",), None)}, "grid": {"axes": ("x", "y"),
                                                                                       "shape": (2, 2)}}

    assert hc.module_meshes(Mod, list(Mod.VERSIONS)) == {
        "ring": {"axes": ("x",), "shape": (4,), "in_specs": (("x",), None)},
        "grid": {"axes": ("x", "y"), "shape": (2, 2), "in_specs": None},
    }

    class NoMesh:
        VERSIONS = {"a": len}

    assert hc.module_meshes(NoMesh, ["a"]) == {}
    bad = [
        ({"zz": {"axes": ("x",)}}, "not in VERSIONS.*zz"),
        ({"a": ("x",)}, "must be a dict with 'axes'"),
        ({"a": {"shape": (4,)}}, "must be a dict with 'axes'"),
        ({"a": {"axes": ("x",), "devices": 4}}, "unknown keys.*devices"),
        ({"a": {"axes": ("x", "x"), "shape": (2, 2)}}, "distinct axis names"),
        ({"a": {"axes": ("x", "y")}}, "needs a 'shape' for 2 axes"),
        ({"a": {"axes": ("x",), "shape": (2, 2)}}, "one per axis"),
        ({"a": {"axes": ("x",), "shape": (0,)}}, "positive ints"),
        ({"a": {"axes": ("x",), "in_specs": "x"}}, "one spec per example argument"),
        ([("a", {})], "MESH must map"),
    ]
    for table, message in bad:
        Bad = type("Bad", (), {"VERSIONS": {"a": len}, "MESH": table})
        with pytest.raises(TypeError, match=message):
            hc.module_meshes(Bad, ["a"])


def test_malformed_mesh_fails_the_listing(tmp_path):
    mod = write_module(tmp_path, "bad_mesh.py", """\
        VERSIONS = {"a": len}
        MESH = {"b": {"axes": ("x",)}}
        def example_args():
            return ()
    """)
    rc, events, _ = run_driver("--module", mod, "--target", "cpu", "--out", str(tmp_path / "out"))
    assert rc == 1
    assert events[0]["event"] == "done" and events[0]["error"]["kind"] == "import"
    assert "MESH names versions that are not in VERSIONS" in events[0]["error"]["message"]


MESH_MODULE = """\
import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P


def ring_sum(x, *, mesh):
    # the version builds its own shard_map from the Mesh the driver passes
    return jax.shard_map(lambda b: jax.lax.psum(b, "x"), mesh=mesh, in_specs=P("x"), out_specs=P())(x)


def scaled(x, y):
    # no `mesh` parameter: the arguments arrive sharded and XLA partitions the program
    return x * 2 + y


def single(x):
    return x + 1


VERSIONS = {"ring_sum": ring_sum, "scaled": scaled, "single": single, "too_big": scaled, "spec_count": single}
EXAMPLE_ARGS = {"single": lambda: (jax.ShapeDtypeStruct((8, 128), jnp.float32),),
                "ring_sum": lambda: (jax.ShapeDtypeStruct((16, 128), jnp.float32),),
                "spec_count": lambda: (jax.ShapeDtypeStruct((16, 128), jnp.float32),)}
MESH = {"ring_sum": {"axes": ("x",), "shape": (4,), "in_specs": (P("x"),)},
        "scaled": {"axes": "x", "in_specs": (("x", None), None)},
        "too_big": {"axes": ("x",), "shape": (8,)},
        "spec_count": {"axes": ("x",), "in_specs": (None, None)}}


def example_args():
    return (jax.ShapeDtypeStruct((16, 128), jnp.float32), jax.ShapeDtypeStruct((16, 128), jnp.float32))
"""


def test_mesh_versions_are_lowered_on_several_devices(tmp_path, monkeypatch):
    # XLA:CPU with 4 host devices stands in for a TPU topology (the same code path; no libtpu needed)
    if not HAVE_JAX:
        pytest.skip("jax is not importable (run scripts/setup-python.sh)")
    monkeypatch.setenv("XLA_FLAGS", "--xla_force_host_platform_device_count=4")
    mod = write_module(tmp_path, "meshy.py", MESH_MODULE)
    out = tmp_path / "out"
    rc, events, err = run_driver("--module", mod, "--target", "cpu", "--out", str(out))
    manifest = json.loads((out / "manifest.json").read_text())
    results = {r["version"]: r for r in manifest["results"]}
    assert rc == 1, (events, err)  # too_big and spec_count
    assert {v: r["status"] for v, r in results.items()} == {"ring_sum": "ok", "scaled": "ok", "single": "ok",
                                                            "too_big": "error", "spec_count": "error"}
    assert results["ring_sum"]["mesh"] == {"axes": ["x"], "shape": [4], "device_ids": [0, 1, 2, 3]}
    assert results["scaled"]["mesh"]["shape"] == [4]  # no shape: every device on the one axis
    assert "mesh" not in results["single"]
    shlo = {v: (out / f"{v}@cpu" / "stablehlo.mlir").read_text() for v in ("ring_sum", "scaled", "single")}
    assert "mhlo.num_partitions = 4" in shlo["ring_sum"] and "manual_axes" in shlo["ring_sum"]
    # x sharded on its rows, y replicated
    assert '[{"x"}, {}]' in shlo["scaled"] and "mhlo.num_partitions = 4" in shlo["scaled"]
    assert "mhlo.num_partitions = 1" in shlo["single"]
    err = results["too_big"]["error"]
    assert err["kind"] == "example_args" and "needs 8 devices; the topology has 4" in err["message"]
    err = results["spec_count"]["error"]
    assert err["kind"] == "example_args" and "in_specs has 2 entries for 1 example arguments" in err["message"]
