"""The parent process: plans the units, runs a worker per unit one after another (libtpu's lock), organises the
dumps per unit, and writes the manifest after each."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from .errors import plain_error
from .layout import (DEFAULT_TIMEOUT_S, HLO_TXT_SUFFIX, KEEP_MOSAIC_STAGES, STAGE_DIR, TARGETS, UnknownTarget,
                     UsageError, dump_env, hlo_txt_name, keep_file, main_hlo_file, resolve_target, select_versions,
                     split_list, unit_name)
from .manifest import (_event_error, _iso_now, _read_json, check_same_module, merge_base, merge_result, new_manifest,
                       read_manifest, rename_bare_hlo_txt, write_manifest)


def emit(event: dict) -> None:
    sys.stdout.write(json.dumps(event, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def _script_path() -> str:
    """The entry point beside this package, which a worker is started as (`hlolint_compile.py --worker ...`)."""
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "hlolint_compile.py")
    if not os.path.isfile(path):
        raise UsageError("hlolint_compile.py must be run from a file (it starts itself as a worker)")
    return path


def run_worker(argv: list[str], env: dict, log_path: str, timeout: float | None) -> tuple[int | None, bool]:
    """Run a worker subprocess, output to log_path. Returns (returncode, timed_out)."""
    with open(log_path, "ab") as log:
        proc = subprocess.Popen([sys.executable, _script_path(), *argv], env=env, stdout=log, stderr=log,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            return proc.wait(timeout=timeout), False
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            return proc.returncode, True
        except BaseException:
            _kill_group(proc)
            raise


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        pass


def _tail(path: str, lines: int = 30) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return "".join(fh.readlines()[-lines:])
    except OSError:
        return ""


def organise(stage: str, unit_dir: str, all_stages: bool) -> dict:
    """Move the kept dump files from the stage dir into unit_dir/{hlo,mosaic,llo}. Returns kept names per kind."""
    kept = {}
    for src_kind, dst_kind in (("xla", "hlo"), ("mosaic", "mosaic"), ("llo", "llo")):
        src = os.path.join(stage, src_kind)
        names = []
        if os.path.isdir(src):
            seen_hashes = set()
            for name in sorted(os.listdir(src)):
                path = os.path.join(src, name)
                if not os.path.isfile(path):
                    if all_stages and os.path.isdir(path):
                        os.makedirs(os.path.join(unit_dir, dst_kind), exist_ok=True)
                        shutil.move(path, os.path.join(unit_dir, dst_kind, name))
                        names.append(name + "/")
                    continue
                if not all_stages and not keep_file(dst_kind, name):
                    continue
                if dst_kind == "mosaic" and not all_stages:
                    # post-deserialization is dumped once per deserialization, byte-identical: keep one per
                    # (stage, content); `original` has the same text but is its own stage and is kept
                    stage_name = next((s for s in KEEP_MOSAIC_STAGES if name.endswith(f"-{s}.txt")), name)
                    with open(path, "rb") as fh:
                        digest = (stage_name, hashlib.sha256(fh.read()).hexdigest())
                    if digest in seen_hashes:
                        continue
                    seen_hashes.add(digest)
                os.makedirs(os.path.join(unit_dir, dst_kind), exist_ok=True)
                shutil.move(path, os.path.join(unit_dir, dst_kind, name))
                names.append(name)
        if names:
            kept[dst_kind] = names
    shlo = os.path.join(stage, "stablehlo.mlir")
    if os.path.isfile(shlo):
        shutil.move(shlo, os.path.join(unit_dir, "stablehlo.mlir"))
    return kept


def module_args(args: argparse.Namespace) -> list[str]:
    try:
        value = json.loads(args.module_args or "[]")
    except json.JSONDecodeError as exc:
        raise UsageError(f"--module-args must be a JSON list of strings: {exc}") from exc
    if not isinstance(value, list) or not all(isinstance(a, str) for a in value):
        raise UsageError("--module-args must be a JSON list of strings")
    return value


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="hlolint_compile.py",
        description="Compile every version of a JAX/Pallas kernel module for TPU targets (compile-only, no TPU) "
                    "and keep the dumps a linter reads.")
    p.add_argument("--module", help="kernel module: a package directory, a .py file, or a dotted module name")
    p.add_argument("--target", default="tpu7x",
                   help="comma-separated targets: " + ", ".join(TARGETS) + " or FAMILY:TOPOLOGY (default tpu7x)")
    p.add_argument("--out", default="compilation_output", help="output directory (default compilation_output)")
    p.add_argument("--versions", help="comma-separated versions to compile (default: all in VERSIONS)")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S,
                   help=f"seconds per version and target (default {DEFAULT_TIMEOUT_S:g}; 0 = none)")
    p.add_argument("--all-stages", action="store_true",
                   help="keep every dumped file and dump LLO for every pass (large)")
    p.add_argument("--clean", action="store_true",
                   help="first remove earlier results from OUT (*@* dirs, *_hlo.txt, manifest.json)")
    p.add_argument("--module-args", default="[]",
                   help="JSON list of arguments the module sees as sys.argv[1:] when it is imported")
    # internal: worker modes
    # the hlolint binary reads the events and prints a usage error itself: the helper's own line would repeat it
    p.add_argument("--events-only", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--worker", choices=["list", "compile"], help=argparse.SUPPRESS)
    p.add_argument("--version", dest="worker_version", help=argparse.SUPPRESS)
    p.add_argument("--platform", help=argparse.SUPPRESS)
    p.add_argument("--topology", help=argparse.SUPPRESS)
    p.add_argument("--stage", help=argparse.SUPPRESS)
    p.add_argument("--result", help=argparse.SUPPRESS)
    return p


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = build_parser()

    def fail(message):
        raise UsageError(message)

    parser.error = fail  # type: ignore[assignment]
    args = parser.parse_args(argv)
    if args.worker:
        return args
    if not args.module:
        raise UsageError("--module is required")
    if args.timeout is not None and args.timeout < 0:
        raise UsageError("--timeout must be >= 0")
    args.target_list = split_list(args.target)
    if not args.target_list:
        raise UsageError("--target is empty")
    args.version_list = split_list(args.versions)
    if os.path.exists(args.out) and not os.path.isdir(args.out):
        raise UsageError(f"--out {args.out} exists and is not a directory")
    return args


def clean_out(out: str) -> None:
    if not os.path.isdir(out):
        return
    for name in os.listdir(out):
        path = os.path.join(out, name)
        if os.path.isdir(path) and ("@" in name or name == STAGE_DIR):
            shutil.rmtree(path)
        elif os.path.isfile(path) and (name.endswith(HLO_TXT_SUFFIX) or name == "manifest.json"):
            os.remove(path)


def run(args: argparse.Namespace) -> int:
    t_start = time.perf_counter()
    started = _iso_now()
    out = os.path.abspath(args.out)
    timeout = args.timeout or None
    module_spec = args.module
    if os.path.exists(module_spec):
        module_spec = os.path.abspath(module_spec)
    manifest_path = os.path.join(out, "manifest.json")
    # What earlier runs compiled into OUT: this run's results are merged into it, never replace it (unless --clean).
    previous = None if args.clean else read_manifest(manifest_path)
    if previous is not None:
        check_same_module(previous, args.module, module_spec, manifest_path)

    # targets: unknown ones become per-version error records
    targets, target_errors = [], {}
    for spec in args.target_list:
        try:
            t = resolve_target(spec)
        except UnknownTarget as exc:
            t = {"target": re.sub(r"[^A-Za-z0-9_.-]", "-", spec), "platform": None, "topology": None}
            target_errors[t["target"]] = plain_error("unknown_target", "setup", str(exc))
        if all(t["target"] != o["target"] for o in targets):
            targets.append(t)

    # 1. the version list, from a worker (the parent never imports jax or the user's code). It runs in a folder of
    # its own: a module that does not import leaves OUT exactly as it was (no manifest rewritten, no folder made).
    forward = ["--module-args", json.dumps(module_args(args))]
    list_stage = tempfile.mkdtemp(prefix="hlolint-list-")
    try:
        list_result = os.path.join(list_stage, "result.json")
        list_log = os.path.join(list_stage, "list.log")
        rc, timed_out = run_worker(["--worker", "list", "--module", module_spec, "--result", list_result, *forward],
                                   dump_env("cpu", list_stage, False), list_log, timeout)
        listing = _read_json(list_result)
        if timed_out:
            listing = {"status": "error", "error": plain_error("timeout", "import",
                                                                f"importing the module took more than {timeout:g}s")}
        elif listing is None:
            listing = {"status": "error", "error": plain_error(
                "crash", "import", f"the worker exited with code {rc} before reporting:\n{_tail(list_log)}")}
        if listing["status"] != "ok":
            emit({"event": "done", "version": None, "target": None, "status": "error",
                  "error": _event_error(listing["error"])})
            emit({"event": "finished", "ok": 0, "error": 1, "manifest": None,
                  "elapsed_s": round(time.perf_counter() - t_start, 3)})
            return 1
        versions = select_versions(args.version_list, listing["versions"])
        os.makedirs(out, exist_ok=True)
        if args.clean:
            clean_out(out)
        shutil.copyfile(list_log, os.path.join(out, "list.log"))
    finally:
        shutil.rmtree(list_stage, ignore_errors=True)

    stage_root = os.path.join(out, STAGE_DIR)
    os.makedirs(stage_root, exist_ok=True)
    manifest = merge_base(previous, new_manifest(args, module_spec, timeout, started))
    manifest["module_file"] = listing.get("module_file")
    module_order = listing["versions"]
    for t in targets:
        if all(t["target"] != o["target"] for o in manifest["targets"]):
            manifest["targets"].append(dict(t, device_kind=None))
    # One target: `<version>_hlo.txt`; once the manifest holds several, every unit is `<version>@<target>_hlo.txt`
    # (earlier bare names are renamed, so that no name is ambiguous).
    several = len(manifest["targets"]) > 1
    if several:
        rename_bare_hlo_txt(out, manifest)
    manifest["layout"]["hlo_txt"] = "<version>@<target>_hlo.txt" if several else "<version>_hlo.txt"
    this_run = {"created": started, "versions": versions, "targets": [t["target"] for t in targets],
                "status": "running", "elapsed_s": None}
    manifest["runs"].append(this_run)

    units = [(v, t) for t in targets for v in versions]
    emit({"event": "plan", "module": args.module, "out": out, "targets": [t["target"] for t in targets],
          "versions": versions, "total": len(units)})

    # 2. one worker per (version, target), one after another
    mine = []
    for index, (version, t) in enumerate(units):
        target = t["target"]
        name = unit_name(version, target)
        unit_dir = os.path.join(out, name)
        hlo_txt = hlo_txt_name(version, target, several)
        shutil.rmtree(unit_dir, ignore_errors=True)
        old = next((r for r in manifest["results"] if r["version"] == version and r["target"] == target), None)
        for stale in {hlo_txt, (old or {}).get("hlo_txt")} - {None}:
            if os.path.exists(os.path.join(out, stale)):
                os.remove(os.path.join(out, stale))
        emit({"event": "start", "version": version, "target": target, "index": index, "total": len(units)})
        t0 = time.perf_counter()
        rec = {"version": version, "target": target, "topology": t["topology"], "platform": t["platform"],
               "status": "error", "dir": None, "hlo_txt": None, "device_kind": None, "module_name": None,
               "elapsed_s": None, "lower_s": None, "compile_s": None, "files": {}, "error": None, "run": started}
        if listing.get("rules", {}).get(version):
            rec["rules"] = listing["rules"][version]
        if target in target_errors:
            rec["error"] = target_errors[target]
        else:
            os.makedirs(unit_dir)
            rec["dir"] = name
            stage = os.path.join(stage_root, name)
            shutil.rmtree(stage, ignore_errors=True)
            os.makedirs(stage)
            result_path = os.path.join(stage, "result.json")
            log_path = os.path.join(unit_dir, "compile.log")
            argv = ["--worker", "compile", "--module", module_spec, "--version", version,
                    "--platform", t["platform"], "--stage", stage, "--result", result_path, *forward]
            if t["topology"]:
                argv += ["--topology", t["topology"]]
            rc, timed_out = run_worker(argv, dump_env(t["platform"], stage, args.all_stages), log_path, timeout)
            result = _read_json(result_path)
            if timed_out:
                rec["error"] = plain_error("timeout", (result or {}).get("stage", "compile"),
                                           f"compiling {name} took more than {timeout:g}s; the worker was killed")
            elif result is None:
                rec["error"] = plain_error("crash", "compile",
                                           f"the worker exited with code {rc} before reporting "
                                           f"(see {name}/compile.log):\n{_tail(log_path)}")
            else:
                for key in ("device_kind", "module_name", "lower_s", "compile_s"):
                    rec[key] = result.get(key)
                if result.get("mesh"):
                    rec["mesh"] = result["mesh"]
                if result.get("kernels"):
                    rec["kernels"] = result["kernels"]
                if result.get("status") == "ok":
                    rec["status"] = "ok"
                else:
                    rec["error"] = result.get("error")
                if result.get("packages"):
                    manifest["packages"] = result["packages"]
            rec["files"] = organise(stage, unit_dir, args.all_stages)
            shutil.rmtree(stage, ignore_errors=True)
            main = main_hlo_file(rec["files"].get("hlo", []), rec["module_name"])
            if main:
                shutil.copyfile(os.path.join(unit_dir, "hlo", main), os.path.join(out, hlo_txt))
                rec["hlo_txt"] = hlo_txt
        rec["elapsed_s"] = round(time.perf_counter() - t0, 3)
        mine.append(rec)
        merge_result(manifest, rec, module_order)
        write_manifest(manifest_path, manifest)
        event = {"event": "done", "version": version, "target": target, "status": rec["status"],
                 "elapsed_s": rec["elapsed_s"], "dir": rec["dir"]}
        if rec["error"] is not None:
            event["error"] = _event_error(rec["error"])
        emit(event)

    shutil.rmtree(stage_root, ignore_errors=True)
    n_ok = sum(1 for r in mine if r["status"] == "ok")
    n_err = len(mine) - n_ok
    this_run["status"] = "error" if n_err else "ok"
    this_run["elapsed_s"] = manifest["elapsed_s"] = round(time.perf_counter() - t_start, 3)
    manifest["status"] = "error" if any(r["status"] != "ok" for r in manifest["results"]) else "ok"
    write_manifest(manifest_path, manifest)
    emit({"event": "finished", "ok": n_ok, "error": n_err, "manifest": manifest_path,
          "elapsed_s": manifest["elapsed_s"]})
    return 1 if n_err else 0
