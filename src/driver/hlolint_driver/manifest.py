"""The output folder's manifest: one per folder, merged into by every run per (version, target), written atomically
(pure helpers, unit-tested without jax)."""

from __future__ import annotations

import argparse
import contextlib
import datetime as _dt
import json
import os
import sys
import tempfile

from .layout import LLO_PASS_REGEX, SCHEMA_VERSION, UsageError, hlo_txt_name


def _write_json(path: str, obj) -> None:
    """Written whole or not at all: a temporary file in the same folder (same file system, unique per writer),
    then renamed over `path`; a reader sees the old file or the new one, never a part."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            # mkstemp makes the file private (0600); the manifest is as readable as any file the run writes
            umask = os.umask(0)
            os.umask(umask)
            os.fchmod(fh.fileno(), 0o666 & ~umask)
            json.dump(obj, fh, indent=2)
            fh.write("\n")
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise


def _iso_now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def new_manifest(args: argparse.Namespace, module_spec: str, timeout: float | None, started: str) -> dict:
    """The manifest of this run alone, every key of schema 2 present (docs/driver.md)."""
    return {
        "schema": SCHEMA_VERSION,
        "tool": "hlolint_compile",
        "created": started,
        "updated": started,
        "module": args.module,
        "module_path": module_spec if os.path.exists(module_spec) else None,
        "module_file": None,
        "python": sys.version.split()[0],
        "python_executable": sys.executable,
        "packages": _installed_versions(),
        "targets": [],
        "versions": [],
        "flags": {
            "TPU_SKIP_MDS_QUERY": "1",
            "JAX_PLATFORMS": "cpu",
            "XLA_FLAGS": "--xla_dump_to=<stage>/xla",
            "LIBTPU_INIT_ARGS": "--xla_mosaic_dump_to=<stage>/mosaic --xla_jf_dump_to=<stage>/llo "
                                "--xla_jf_dump_llo_text=true"
                                + ("" if args.all_stages else f" --xla_jf_dump_llo_pass_label_regex={LLO_PASS_REGEX}"),
            "inherited_XLA_FLAGS": os.environ.get("XLA_FLAGS"),
            "inherited_LIBTPU_INIT_ARGS": os.environ.get("LIBTPU_INIT_ARGS"),
        },
        "all_stages": bool(args.all_stages),
        "timeout_s": timeout,
        "layout": {
            "unit_dir": "<version>@<target>/{stablehlo.mlir,hlo/,mosaic/,llo/,compile.log}",
            "hlo_txt": "<version>_hlo.txt",
        },
        "status": "running",
        "results": [],
        "elapsed_s": None,
        "runs": [],
    }


def _installed_versions() -> dict | None:
    try:
        from importlib import metadata
    except ImportError:  # pragma: no cover
        return None
    pk = {}
    for name in ("jax", "jaxlib", "libtpu"):
        try:
            pk[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pk[name] = None
    return pk


def read_manifest(path: str) -> dict | None:
    """The manifest an earlier run left, or None when there is none. One that cannot be merged into stops the
    run before anything is written (a usage error): replacing it would lose what it records."""
    if not os.path.exists(path):
        return None
    fix = "pass --clean to replace it, or another --out"
    try:
        with open(path, encoding="utf-8") as fh:
            m = json.load(fh)
    except (OSError, ValueError) as exc:
        raise UsageError(f"{path} cannot be read ({exc}); {fix}") from exc
    if not isinstance(m, dict) or m.get("tool") != "hlolint_compile" or not isinstance(m.get("results"), list):
        raise UsageError(f"{path} is not a manifest of hlolint compile; {fix}")
    if m.get("schema") not in (1, SCHEMA_VERSION):
        raise UsageError(f"{path} has schema {m.get('schema')!r}, this driver writes {SCHEMA_VERSION}; {fix}")
    return m


def check_same_module(previous: dict, module: str, module_spec: str, path: str) -> None:
    """Results of two kernel modules in one folder would mix their versions: refuse before compiling."""
    here = module_spec if os.path.exists(module_spec) else None
    there = previous.get("module_path")
    same = previous.get("module") == module or bool(here and there and os.path.realpath(here) == os.path.realpath(there))
    if not same:
        raise UsageError(f"{path} records the results of module {previous.get('module')!r}, not {module!r}; "
                         "pass --clean to replace them, or another --out")


def merge_base(previous: dict | None, fresh: dict) -> dict:
    """This run's manifest carrying what an earlier one recorded: its first creation time, targets, versions,
    results and runs (this run's settings — interpreter, packages, flags — are the newest)."""
    if previous is None:
        return fresh
    merged = dict(fresh)
    merged["created"] = previous.get("created") or fresh["created"]
    merged["targets"] = [dict(t) for t in previous.get("targets", [])]
    merged["versions"] = list(previous.get("versions", []))
    merged["results"] = [dict(r) for r in previous.get("results", [])]
    merged["runs"] = list(previous.get("runs", []))
    for key in ("trimmed", "merged"):  # scripts/trim_fixtures.py's records
        if key in previous:
            merged[key] = previous[key]
    return merged


def merge_result(manifest: dict, rec: dict, module_order: list[str]) -> None:
    """Puts `rec` in place of the result of the same (version, target), keeping results in target then module
    order and `versions` the versions with results, in the module's order (versions the module no longer has
    keep their results, after the others)."""
    results = [r for r in manifest["results"] if (r["version"], r["target"]) != (rec["version"], rec["target"])]
    results.append(rec)
    target_order = [t["target"] for t in manifest["targets"]]
    have = {r["version"] for r in results}
    versions = [v for v in module_order if v in have]
    versions += [v for v in manifest["versions"] if v in have and v not in versions]
    versions += sorted(v for v in have if v not in versions)

    def key(r):
        t = target_order.index(r["target"]) if r["target"] in target_order else len(target_order)
        return t, versions.index(r["version"])

    manifest["results"] = sorted(results, key=key)
    manifest["versions"] = versions
    for mt in manifest["targets"]:
        kinds = [r["device_kind"] for r in results if r["target"] == mt["target"] and r.get("device_kind")]
        if kinds:
            mt["device_kind"] = kinds[-1]


def rename_bare_hlo_txt(out: str, manifest: dict) -> None:
    """`<version>_hlo.txt` of a one-target manifest → `<version>@<target>_hlo.txt` now that it holds several."""
    for r in manifest["results"]:
        bare, full = r.get("hlo_txt"), hlo_txt_name(r["version"], r["target"], True)
        if bare and bare != full:
            if os.path.exists(os.path.join(out, bare)):
                os.replace(os.path.join(out, bare), os.path.join(out, full))
            r["hlo_txt"] = full


def write_manifest(path: str, manifest: dict) -> None:
    manifest["updated"] = _iso_now()
    _write_json(path, manifest)


def _event_error(err: dict) -> dict:
    """The error as a progress event carries it: the record without the frame lists (those are in the manifest)."""
    return {k: err.get(k) for k in ("kind", "type", "stage", "message", "file", "line", "function", "source")}


def _read_json(path: str):
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return None
