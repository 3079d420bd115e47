"""Tests of src/driver/hlolint_compile.py: argument handling and layout (no jax needed), plus real
compile-only runs (skipped with a reason when jax / libtpu are not importable)."""

import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import pytest

import hlolint_compile as hc

DRIVER = hc.__file__
HAVE_JAX = importlib.util.find_spec("jax") is not None
HAVE_LIBTPU = importlib.util.find_spec("libtpu") is not None


def run_driver(*args, cwd=None, timeout=600):
    proc = subprocess.run([sys.executable, DRIVER, *args], capture_output=True, text=True, cwd=cwd,
                          timeout=timeout)
    events = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    return proc.returncode, events, proc.stderr


def write_module(tmp_path, name, body):
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return str(path)


# ------------------------------------------------------------------------------------------------
# targets, versions, layout
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name,topology,platform", [
    ("tpu7x", "tpu7x:2x2x1", "tpu"), ("v6e", "v6e:2x2", "tpu"), ("v5e", "v5e:2x2", "tpu"),
    ("v5p", "v5p:2x2x1", "tpu"), ("v4", "v4:2x2x1", "tpu"), ("cpu", None, "cpu"),
])
def test_target_mapping(name, topology, platform):
    assert hc.resolve_target(name) == {"target": name, "platform": platform, "topology": topology}


def test_target_topology_forms():
    assert hc.resolve_target("tpu7x:2x2x1")["target"] == "tpu7x"  # the default topology keeps the short name
    assert hc.resolve_target("v5p:2x4x1") == {"target": "v5p-2x4x1", "platform": "tpu", "topology": "v5p:2x4x1"}
    for bad in ("tpu9", "v6e:big", "cpu:1x1", "", "TPU7X"):
        with pytest.raises(hc.UnknownTarget, match="known targets"):
            hc.resolve_target(bad)


def test_version_filtering():
    available = ["v1", "v2", "v3", "bug_x"]
    assert hc.select_versions([], available) == available
    assert hc.select_versions(["v3", "v1"], available) == ["v3", "v1"]
    with pytest.raises(hc.UsageError, match="unknown version.*nope.*defines: v1, v2, v3, bug_x"):
        hc.select_versions(["v1", "nope"], available)
    assert hc.split_list(" v1, v2,,v1 ") == ["v1", "v2"]
    assert hc.split_list(None) == []


def test_layout_names():
    assert hc.unit_name("v1", "tpu7x") == "v1@tpu7x"
    assert hc.hlo_txt_name("v1", "tpu7x", several_targets=False) == "v1_hlo.txt"
    assert hc.hlo_txt_name("v1", "v6e", several_targets=True) == "v1@v6e_hlo.txt"


def test_kept_files():
    keep = [
        ("hlo", "module_0000.jit_f.cl_1.before_optimizations.txt"),
        ("hlo", "module_0000.jit_f.cl_1.after_optimizations.txt"),
        ("hlo", "module_0000.jit_f.cl_1.after_optimizations-memory-usage-report.txt"),
        ("hlo", "module_0000.jit_f.cpu_after_optimizations.txt"),
        ("hlo", "module_0000.jit_f.cpu_after_optimizations-memory-usage-report.txt"),
        ("mosaic", "17-0000-mosaic-dump-anonymous-post-deserialization.txt"),
        ("mosaic", "17-0001-mosaic-dump-anonymous-original.txt"),
        ("mosaic", "17-0012-mosaic-dump-anonymous-post-apply-vector-layout.txt"),
        ("mosaic", "17-0018-mosaic-dump-my_kernel-post-finalize-llo.txt"),
        ("llo", "17-fp8_mm_v1.1-03-final_bundles.txt"),
        ("llo", "17-TLP-01-final_hlo-static-per-bundle-utilization.txt"),
        ("llo", "17-TLP-00-memory-space-assignment-bufferinfo.txt"),
        ("llo", "17-TLP-hlo.txt"),
    ]
    drop = [
        ("hlo", "module_0000.jit_f.cl_1.after_optimizations-buffer-assignment.txt"),
        ("hlo", "module_0000.jit_f.cl_1.after_codegen.txt"),
        ("hlo", "module_0000.jit_f.cl_1.after_optimizations_after_buffer_assignment.txt"),
        ("hlo", "module_0000.jit_f.cpu_after_optimizations-buffer-assignment.txt"),
        ("hlo", "module_0000.jit_f.obj-file.fusion_kernel_module.o"),
        ("hlo", "module_0000.jit_f.cl_1.debug_options"),
        ("mosaic", "17-0013-mosaic-dump-anonymous-post-apply-vector-layout-simplify.txt"),
        ("mosaic", "17-0002-mosaic-dump-anonymous-post-infer-memref-layout.txt"),
        ("llo", "17-TLP-05-vmem_report.html"),
        ("llo", "17-TLP-04-final-top-level-llo.txt"),
        ("llo", "17-copy-00-pre-finalize-registers-and-allocations.txt"),
        # libtpu's runtime programs, identical for every program on a target
        ("llo", "17-<late-finalization>-66-schedule-analysis_final_bundles.txt"),
        ("llo", "17-<late-initialization>-71-final_bundles.txt"),
    ]
    for kind, name in keep:
        assert hc.keep_file(kind, name), (kind, name)
    for kind, name in drop:
        assert not hc.keep_file(kind, name), (kind, name)


def test_main_hlo_file():
    names = ["module_0000.jit_other.cl_1.after_optimizations.txt",
             "module_0003.jit_fp8_matmul_v1.cl_1.after_optimizations.txt",
             "module_0003.jit_fp8_matmul_v1.cl_1.before_optimizations.txt"]
    assert hc.main_hlo_file(names, "jit_fp8_matmul_v1") == names[1]
    assert hc.main_hlo_file(names[1:], None) == names[1]
    assert hc.main_hlo_file([], "jit_x") is None
    cpu = ["module_0000.jit_plain.before_optimizations.txt", "module_0000.jit_plain.cpu_after_optimizations.txt"]
    assert hc.main_hlo_file(cpu, "jit_plain") == cpu[1]


def test_dump_env():
    env = hc.dump_env("tpu", "/s", all_stages=False,
                      base={"XLA_FLAGS": "--xla_dump_to=/old --foo", "LIBTPU_INIT_ARGS": "--bar=1"})
    assert env["TPU_SKIP_MDS_QUERY"] == "1" and env["JAX_PLATFORMS"] == "cpu"
    assert env["XLA_FLAGS"] == "--foo --xla_dump_to=/s/xla"
    assert env["LIBTPU_INIT_ARGS"].split() == [
        "--bar=1", "--xla_mosaic_dump_to=/s/mosaic", "--xla_jf_dump_to=/s/llo", "--xla_jf_dump_llo_text=true",
        "--xla_jf_dump_llo_pass_label_regex=final|memory-space-assignment"]
    env = hc.dump_env("tpu", "/s", all_stages=True, base={})
    assert "pass_label_regex" not in env["LIBTPU_INIT_ARGS"]
    assert "LIBTPU_INIT_ARGS" not in hc.dump_env("cpu", "/s", all_stages=False, base={})


# ------------------------------------------------------------------------------------------------
# traceback -> the user's file:line
# ------------------------------------------------------------------------------------------------
def test_user_frame_from_traceback(tmp_path):
    path = write_module(tmp_path, "userkern.py", """\
        def inner(n):
            return [1][n]          # line 2: IndexError

        def outer():
            return inner(5)        # line 5
        """)
    spec = importlib.util.spec_from_file_location("userkern", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    try:
        mod.outer()
    except IndexError as exc:
        rec = hc.error_record(exc, [path], "lower")
    assert rec["kind"] == "lowering" and rec["type"] == "IndexError" and rec["stage"] == "lower"
    assert (rec["file"], rec["line"], rec["function"]) == (path, 2, "inner")
    assert rec["source"].startswith("return [1][n]")
    assert [f["line"] for f in rec["frames"]] == [5, 2]  # outermost first, only the user's frames


def test_user_frame_from_message_when_traceback_has_none(tmp_path):
    path = write_module(tmp_path, "k.py", "a = 1\nb = jnp.dot(x, w)\n")
    exc = RuntimeError(f'INTERNAL: Mosaic failed ... loc("{path}":2:8) and again at {path}:2, '
                       f"not /elsewhere/other.py:7")
    rec = hc.error_record(exc, [str(tmp_path)], "compile")
    assert rec["kind"] == "mosaic"
    assert (rec["file"], rec["line"], rec["source"]) == (path, 2, "b = jnp.dot(x, w)")
    assert rec["message_locations"] == [{"file": path, "line": 2}]


def test_missing_dependency_classification():
    exc = ModuleNotFoundError("No module named 'jax'", name="jax")
    assert hc.classify_error(exc, "import") == "missing_dependency"
    assert hc.classify_error(ImportError("x"), "import") == "import"


# ------------------------------------------------------------------------------------------------
# the command line (no compile: these modules never import jax)
# ------------------------------------------------------------------------------------------------
NOJAX_MODULE = """\
VERSIONS = {"a": lambda x: x, "b": lambda x: x}

def example_args():
    return ()
"""


def test_usage_errors(tmp_path):
    rc, events, err = run_driver()
    assert rc == 2 and events[-1]["event"] == "usage_error" and "--module" in events[-1]["message"]
    rc, events, _ = run_driver("--module", "x", "--bogus")
    assert rc == 2 and events[-1]["event"] == "usage_error"
    mod = write_module(tmp_path, "nojax.py", NOJAX_MODULE)
    rc, events, _ = run_driver("--module", mod, "--target", "cpu", "--versions", "a,zzz",
                               "--out", str(tmp_path / "out"))
    assert rc == 2 and "zzz" in events[-1]["message"], events


def test_unknown_target_is_recorded_per_version(tmp_path):
    mod = write_module(tmp_path, "nojax.py", NOJAX_MODULE)
    out = tmp_path / "out"
    rc, events, _ = run_driver("--module", mod, "--target", "tpu9", "--out", str(out))
    assert rc == 1
    done = [e for e in events if e["event"] == "done"]
    assert [(e["version"], e["target"], e["status"], e["error"]["kind"]) for e in done] == [
        ("a", "tpu9", "error", "unknown_target"), ("b", "tpu9", "error", "unknown_target")]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "error" and len(manifest["results"]) == 2
    assert not (out / "a@tpu9").exists()


def test_module_import_error_points_at_user_line(tmp_path):
    mod = write_module(tmp_path, "broken.py", "import os\nraise ValueError('boom')\n")
    out = tmp_path / "out"
    rc, events, _ = run_driver("--module", mod, "--target", "cpu", "--out", str(out))
    assert rc == 1
    assert [e["event"] for e in events] == ["done", "finished"], events
    err = events[0]["error"]
    assert events[0]["version"] is None and events[0]["status"] == "error"
    assert err["kind"] == "import" and err["message"] == "boom" and err["line"] == 2
    assert os.path.realpath(err["file"]) == os.path.realpath(mod)
    assert not out.exists(), "a module that does not import makes no output folder"


# ------------------------------------------------------------------------------------------------
# the manifest: a failed import leaves it alone, runs merge into it, writes are atomic
# ------------------------------------------------------------------------------------------------
def _tree(path):
    """Every file under `path` with its bytes, to compare a folder before and after a run."""
    out = {}
    for root, _, files in os.walk(path):
        for f in files:
            full = os.path.join(root, f)
            with open(full, "rb") as fh:
                out[os.path.relpath(full, path)] = fh.read()
    return out


@pytest.mark.parametrize("broken", [
    'VERSIONS = {"a": lambda x: x, "b": lambda x: x}\ndef example_args(:\n',   # SyntaxError
    'import nosuchmodule_hlolint\nVERSIONS = {}\n',                            # a typo in an import
    'VERSIONS = {"a": lambda x: x}\nraise RuntimeError("half-edited")\n',       # raises while importing
])
def test_failed_import_leaves_the_output_folder_untouched(tmp_path, broken):
    mod = write_module(tmp_path, "kern.py", NOJAX_MODULE)
    out = tmp_path / "out"
    rc, _, _ = run_driver("--module", mod, "--target", "tpu9", "--out", str(out))
    assert rc == 1 and (out / "manifest.json").exists()
    before = _tree(out)
    write_module(tmp_path, "kern.py", broken)
    for extra in ([], ["--versions", "a"], ["--clean"]):
        rc, events, _ = run_driver("--module", mod, "--target", "tpu9", "--out", str(out), *extra)
        assert rc == 1, events
        assert [e["event"] for e in events] == ["done", "finished"], events
        assert _tree(out) == before, f"{extra}: the folder changed"


def test_subset_runs_merge_per_version_and_target(tmp_path):
    mod = write_module(tmp_path, "kern.py", NOJAX_MODULE)
    out = tmp_path / "out"
    assert run_driver("--module", mod, "--target", "tpu9", "--out", str(out))[0] == 1
    first = json.loads((out / "manifest.json").read_text())
    # another target, one version: added beside the others
    assert run_driver("--module", mod, "--target", "tpu8", "--versions", "b", "--out", str(out))[0] == 1
    m = json.loads((out / "manifest.json").read_text())
    assert [(r["version"], r["target"]) for r in m["results"]] == [("a", "tpu9"), ("b", "tpu9"), ("b", "tpu8")]
    assert [t["target"] for t in m["targets"]] == ["tpu9", "tpu8"] and m["versions"] == ["a", "b"]
    assert m["created"] == first["created"] and m["schema"] == hc.SCHEMA_VERSION
    assert [r["targets"] for r in m["runs"]] == [["tpu9"], ["tpu8"]]
    assert [r["versions"] for r in m["runs"]] == [["a", "b"], ["b"]]
    # the same unit again: replaced, not repeated; the versions keep the module's order
    assert run_driver("--module", mod, "--target", "tpu9", "--versions", "b,a", "--out", str(out))[0] == 1
    m2 = json.loads((out / "manifest.json").read_text())
    assert [(r["version"], r["target"]) for r in m2["results"]] == [("a", "tpu9"), ("b", "tpu9"), ("b", "tpu8")]
    assert m2["versions"] == ["a", "b"] and len(m2["runs"]) == 3
    assert m2["results"][2] == m["results"][2], "the other target's result is kept as it was"
    assert not [n for n in os.listdir(out) if n.endswith(".tmp")]
    # --clean starts over
    assert run_driver("--module", mod, "--target", "tpu8", "--versions", "a", "--clean", "--out", str(out))[0] == 1
    m3 = json.loads((out / "manifest.json").read_text())
    assert [(r["version"], r["target"]) for r in m3["results"]] == [("a", "tpu8")] and len(m3["runs"]) == 1


def test_another_module_is_refused_before_anything_runs(tmp_path):
    mod = write_module(tmp_path, "kern.py", NOJAX_MODULE)
    other = write_module(tmp_path, "other.py", NOJAX_MODULE)
    out = tmp_path / "out"
    run_driver("--module", mod, "--target", "tpu9", "--out", str(out))
    before = _tree(out)
    rc, events, _ = run_driver("--module", other, "--target", "tpu9", "--out", str(out))
    assert rc == 2 and "records the results of module" in events[-1]["message"] and "--clean" in events[-1]["message"]
    assert _tree(out) == before
    (out / "manifest.json").write_text("{not json")
    rc, events, _ = run_driver("--module", mod, "--target", "tpu9", "--out", str(out))
    assert rc == 2 and "cannot be read" in events[-1]["message"]
    assert (out / "manifest.json").read_text() == "{not json"


def test_merge_order_and_device_kinds():
    m = {"targets": [{"target": "tpu7x", "device_kind": None}, {"target": "v6e", "device_kind": None}],
         "versions": ["old"], "results": [{"version": "old", "target": "v6e", "device_kind": None, "status": "ok"}]}
    for v, t in (("v2", "v6e"), ("v1", "tpu7x"), ("v1", "v6e")):
        hc.merge_result(m, {"version": v, "target": t, "device_kind": f"K-{t}", "status": "ok"}, ["v1", "v2"])
    assert [(r["version"], r["target"]) for r in m["results"]] == [
        ("v1", "tpu7x"), ("v1", "v6e"), ("v2", "v6e"), ("old", "v6e")]
    assert m["versions"] == ["v1", "v2", "old"], "versions the module dropped keep their results, last"
    assert [t["device_kind"] for t in m["targets"]] == ["K-tpu7x", "K-v6e"]


def test_bare_hlo_txt_names_are_renamed_when_a_second_target_arrives(tmp_path):
    (tmp_path / "a_hlo.txt").write_text("HloModule a")
    m = {"results": [{"version": "a", "target": "cpu", "hlo_txt": "a_hlo.txt"},
                     {"version": "b", "target": "cpu", "hlo_txt": None}]}
    hc.rename_bare_hlo_txt(str(tmp_path), m)
    assert [r["hlo_txt"] for r in m["results"]] == ["a@cpu_hlo.txt", None]
    assert sorted(os.listdir(tmp_path)) == ["a@cpu_hlo.txt"]


def test_manifest_write_is_atomic(tmp_path, monkeypatch):
    path = tmp_path / "manifest.json"
    hc._write_json(str(path), {"results": ["old"]})
    assert (path.stat().st_mode & 0o777) == 0o666 & ~_umask(), "as readable as the run's other files"

    def dump_half(obj, fh, **kw):
        fh.write('{"results": [')
        raise OSError("disk full")

    monkeypatch.setattr(hc.json, "dump", dump_half)
    with pytest.raises(OSError, match="disk full"):
        hc._write_json(str(path), {"results": ["new"]})
    assert json.loads(path.read_text()) == {"results": ["old"]}, "the old manifest is whole"
    assert os.listdir(tmp_path) == ["manifest.json"], "no temporary file left"


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_manifest_keys_are_the_documented_schema():
    """docs/driver.md's manifest block lists the keys the helper writes (a Rust test holds the same block to the
    reader's type, `lint::manifest::Manifest`)."""
    import argparse
    import re

    doc = open(os.path.join(os.path.dirname(DRIVER), "..", "..", "docs", "driver.md"), encoding="utf-8").read()
    block = doc.split("## manifest.json")[1].split("```jsonc")[1].split("```")[0]
    code = "\n".join(line.split(" //")[0] for line in block.splitlines())
    documented = set(re.findall(r'"([A-Za-z_]+)"\s*:', code))
    args = argparse.Namespace(module="m.py", all_stages=False)
    m = hc.new_manifest(args, "m.py", 600.0, "t")
    m["targets"] = [{"target": "cpu", "platform": "cpu", "topology": None, "device_kind": None}]
    written = set(m) | set(m["targets"][0]) | set(m["layout"]) | set(m["flags"]) | set(m["packages"] or {})
    rec_keys = set(inspect_result_keys())
    run_keys = {"created", "versions", "targets", "status", "elapsed_s"}
    optional = {"rules", "mesh", "hlo", "mosaic", "llo", "axes", "shape", "device_ids", "trimmed", "merged",
                "module_error", "kernels", "name", "function", "file", "line", "operands"}
    assert documented - optional == (written | rec_keys | run_keys) - optional


def inspect_result_keys():
    """The keys of a unit's result, as `run` writes them (read from its source: the record is built inline)."""
    import re

    src = open(os.path.join(os.path.dirname(DRIVER), "hlolint_driver", "parent.py"), encoding="utf-8").read()
    body = src.split('rec = {"version": version')[1].split("\n        if ")[0]
    return ["version"] + re.findall(r'"([a-z_]+)":', body)


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
