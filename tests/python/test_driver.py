"""Tests of src/driver/hlolint_compile.py without a compile (no jax needed): targets, versions and layout,
tracebacks, the command line, the manifest. Real compile-only runs are in test_driver_compile.py and
test_driver_kernels.py (skipped with a reason when jax / libtpu are not importable)."""

import importlib.util
import json
import os

import pytest

import hlolint_compile as hc
from driver_helpers import DRIVER, run_driver, write_module


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
