#!/usr/bin/env python3
"""hlolint compile helper: compile each version of a JAX/Pallas kernel module for a TPU target with no TPU.

Usage (the Rust side embeds this file and runs it from a file path, not with `python -c`):

    python hlolint_compile.py --module PATH_OR_MODULE --target tpu7x --out compilation_output
                              [--versions v1,v2] [--timeout S] [--all-stages] [--clean] [--module-args JSON]

--target takes a comma-separated list: tpu7x, v6e, v5e, v5p, v4, cpu (or FAMILY:TOPOLOGY, e.g. v5p:2x4x1).

Kernel module convention (see docs/driver.md): the module exposes
    VERSIONS = {"v1": fn, ...}    callables to jit
    example_args()                tuple of jax.ShapeDtypeStruct (the driver attaches the target's sharding);
                                  example_args(version) when it has a parameter named `version`
    EXAMPLE_ARGS = {"v1": fn}     optional: per-version callables (or tuples) of arguments, before example_args;
                                  non-array arguments are passed to jax.jit as static (prefer functools.partial)
    RULES = {"v1": "v1-auto"}     optional: the hlolint rule pack each version is written against (recorded in
                                  the manifest; `hlolint` uses it for that version unless --rules is given)
    MESH = {"v1": {"axes": ("x",), "shape": (4,), "in_specs": (("x",),)}}
                                  optional: versions lowered on a Mesh of the topology's first devices, each
                                  argument sharded by its in_specs entry; fn(..., mesh=Mesh) when fn has `mesh`
    KERNEL_NAMES = {"v1": [...]}  optional: the names of the kernels a version runs but does not trace when
                                  lowered (an exported program), as KernelNames records them
and optionally reference(*arrays) and make_inputs(key) (not used by the driver).

Recipe (compile-only TPU, no TPU needed): jax.experimental.topologies.get_topology_desc(platform="tpu",
topology_name=...), NamedSharding on one device, jax.jit(fn).lower(*args).compile(), with TPU_SKIP_MDS_QUERY=1,
XLA_FLAGS=--xla_dump_to=..., LIBTPU_INIT_ARGS=--xla_mosaic_dump_to=... --xla_jf_dump_to=...
--xla_jf_dump_llo_text=true --xla_jf_dump_llo_pass_label_regex=final|memory-space-assignment.

Dump directories are read when the backend initialises, so every (version, target) is compiled in its own
worker subprocess (this same file with --worker), one after another: libtpu's /tmp/libtpu_lockfile forbids two
compiling processes at once. A worker that crashes or times out costs only its own version.

Output:
    OUT/manifest.json                          versions of jax/jaxlib/libtpu, targets, flags, per-unit results;
                                               a run merges its results into it per (version, target)
    OUT/<version>@<target>/stablehlo.mlir      lowered.as_text()
    OUT/<version>@<target>/hlo/                *.before_optimizations.txt, *.after_optimizations.txt,
                                               *.after_optimizations-memory-usage-report.txt
                                               (XLA:CPU: *.cpu_after_optimizations*.txt)
    OUT/<version>@<target>/mosaic/             stages original, post-deserialization, post-apply-vector-layout,
                                               post-finalize-llo (identical repeats dropped)
    OUT/<version>@<target>/llo/                *final_bundles*, *final_hlo-static-per-bundle-utilization*,
                                               *memory-space-assignment*, *TLP-hlo*
    OUT/<version>@<target>/compile.log         the worker's stdout/stderr (libtpu warnings and such)
    OUT/<version>_hlo.txt                      post-optimization HLO of the main module (one target), or
    OUT/<version>@<target>_hlo.txt             the same when several targets were asked for
With --all-stages every dumped file is kept (and LLO is dumped for every pass, which can be gigabytes).

A module that does not import (or has no VERSIONS) leaves OUT untouched: no folder made, no manifest written.

stdout carries JSON lines only (events: plan, start, done, finished, usage_error); everything else goes to
stderr or to the per-unit compile.log. Exit code: 0 all ok, 1 some version failed, 2 usage error.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as _dt
import functools
import hashlib
import inspect
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback

# the kernels' ref names (`KernelNames`): shared with hlolint.check, see its docstring
from hlolint_kernel_names import KernelNames

SCHEMA_VERSION = 2

# target name -> (platform, default topology)
TARGETS = {
    "tpu7x": ("tpu", "tpu7x:2x2x1"),
    "v6e": ("tpu", "v6e:2x2"),
    "v5e": ("tpu", "v5e:2x2"),
    "v5p": ("tpu", "v5p:2x2x1"),
    "v4": ("tpu", "v4:2x2x1"),
    "cpu": ("cpu", None),
}

# The dump names kept, as src/source/names.rs lists them (a Rust test, driver::tests, holds these to it).
LLO_PASS_REGEX = "final|memory-space-assignment"
KEEP_HLO_SUFFIXES = (  # XLA:CPU spells the last two `.cpu_after_optimizations...`
    ".before_optimizations.txt",
    "after_optimizations.txt",
    "after_optimizations-memory-usage-report.txt",
)
KEEP_MOSAIC_STAGES = ("original", "post-deserialization", "post-apply-vector-layout", "post-finalize-llo")
KEEP_LLO_MARKERS = (
    "final_bundles",  # also schedule-analysis_final_bundles
    "final_hlo-static-per-bundle-utilization",
    "memory-space-assignment",
    "TLP-hlo",
)
STAGE_DIR = ".hlolint-stage"
DEFAULT_TIMEOUT_S = 600.0


class UsageError(Exception):
    pass


class UnknownTarget(Exception):
    pass


# ------------------------------------------------------------------------------------------------
# pure helpers (unit-tested without jax)
# ------------------------------------------------------------------------------------------------
def resolve_target(spec: str) -> dict:
    """'tpu7x' or 'tpu7x:2x2x1' -> {"target", "platform", "topology"}; raises UnknownTarget."""
    spec = spec.strip()
    if ":" in spec:
        family, dims = spec.split(":", 1)
        if family not in TARGETS or TARGETS[family][0] != "tpu" or not re.fullmatch(r"\d+(x\d+)+", dims):
            raise UnknownTarget(_unknown_target_message(spec))
        label = family if spec == TARGETS[family][1] else f"{family}-{dims}"
        return {"target": label, "platform": "tpu", "topology": spec}
    if spec not in TARGETS:
        raise UnknownTarget(_unknown_target_message(spec))
    platform, topology = TARGETS[spec]
    return {"target": spec, "platform": platform, "topology": topology}


def _unknown_target_message(spec: str) -> str:
    known = ", ".join(f"{k} ({v[1] or 'XLA:CPU'})" for k, v in TARGETS.items())
    return f"unknown target {spec!r}; known targets: {known}; or FAMILY:TOPOLOGY such as v5p:2x4x1"


def split_list(arg: str | None) -> list[str]:
    if not arg:
        return []
    out = []
    for item in arg.split(","):
        item = item.strip()
        if item and item not in out:
            out.append(item)
    return out


def select_versions(requested: list[str], available: list[str]) -> list[str]:
    """Requested versions in the order given (all available ones, in module order, when none requested)."""
    if not requested:
        return list(available)
    missing = [v for v in requested if v not in available]
    if missing:
        raise UsageError(
            f"unknown version(s) {', '.join(missing)}; the module defines: {', '.join(available) or '(none)'}"
        )
    return requested


def unit_name(version: str, target: str) -> str:
    return f"{version}@{target}"


def hlo_txt_name(version: str, target: str, several_targets: bool) -> str:
    return f"{unit_name(version, target)}_hlo.txt" if several_targets else f"{version}_hlo.txt"


def keep_file(kind: str, name: str) -> bool:
    """Whether a dumped file is one a linter reads. kind: hlo | mosaic | llo."""
    if kind == "hlo":
        return name.endswith(KEEP_HLO_SUFFIXES)
    if kind == "mosaic":
        return "-mosaic-dump-" in name and any(name.endswith(f"-{stage}.txt") for stage in KEEP_MOSAIC_STAGES)
    if kind == "llo":
        # `<late-initialization>` / `<late-finalization>` are libtpu's runtime programs, byte-identical for
        # every program on a target: nothing of the user's kernel is in them.
        if "-<late-" in name:
            return False
        return name.endswith(".txt") and any(marker in name for marker in KEEP_LLO_MARKERS)
    return False


def main_hlo_file(names: list[str], module_name: str | None) -> str | None:
    """The after_optimizations dump of the main module among HLO dump file names."""
    after = sorted(n for n in names if re.search(r"\.(cpu_)?after_optimizations\.txt$", n))
    if module_name:
        pat = re.compile(r"^module_\d+\." + re.escape(module_name) + r"(\.|$)")
        hits = [n for n in after if pat.match(n)]
        if hits:
            return hits[-1]
    return after[-1] if len(after) == 1 else (after[0] if after else None)


def dump_env(platform: str, stage: str, all_stages: bool, base: dict | None = None) -> dict:
    """Environment for a worker compiling into the dump directories under `stage`."""
    env = dict(os.environ if base is None else base)
    env["TPU_SKIP_MDS_QUERY"] = "1"
    # Compile-only: the TPU target comes from the topology description; the default backend stays CPU so
    # no process tries to open a real TPU.
    env["JAX_PLATFORMS"] = "cpu"
    xla_flags = env.get("XLA_FLAGS", "")
    xla_flags = re.sub(r"--xla_dump_to=\S+", "", xla_flags).strip()
    env["XLA_FLAGS"] = (xla_flags + " " if xla_flags else "") + f"--xla_dump_to={os.path.join(stage, 'xla')}"
    if platform == "tpu":
        libtpu = env.get("LIBTPU_INIT_ARGS", "")
        libtpu = re.sub(r"--xla_(mosaic_dump_to|jf_dump_to|jf_dump_llo_text|jf_dump_llo_pass_label_regex)=\S+",
                        "", libtpu).strip()
        args = [
            f"--xla_mosaic_dump_to={os.path.join(stage, 'mosaic')}",
            f"--xla_jf_dump_to={os.path.join(stage, 'llo')}",
            "--xla_jf_dump_llo_text=true",
        ]
        if not all_stages:
            args.append(f"--xla_jf_dump_llo_pass_label_regex={LLO_PASS_REGEX}")
        env["LIBTPU_INIT_ARGS"] = " ".join(([libtpu] if libtpu else []) + args)
    return env


_PY_LOC = re.compile(r"""(?P<file>(?:[A-Za-z]:)?[^\s:"'()<>\[\]]+\.py)"?(?::|", line |\s+line\s+)(?P<line>\d+)""")


def _under(path: str, roots: list[str]) -> bool:
    try:
        p = os.path.realpath(path)
    except (OSError, ValueError):
        return False
    for root in roots:
        r = os.path.realpath(root)
        if p == r or p.startswith(r.rstrip(os.sep) + os.sep):
            return True
    return False


def _exception_chain(exc: BaseException) -> list[BaseException]:
    chain, seen = [], set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        chain.append(exc)
        exc = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
    return chain


def user_frames(exc: BaseException, roots: list[str]) -> list[dict]:
    """Frames of the user's module in the traceback (outermost first), through chained exceptions."""
    frames, seen = [], set()
    for e in reversed(_exception_chain(exc)):
        for fs in traceback.extract_tb(e.__traceback__):
            # jax appends the MLIR locations of a Mosaic error as synthetic frames: the same lines again, with
            # names like 'dot_general/dot_general"(callsite(callsite("_dot_nt'; keep one frame per file:line
            if not _under(fs.filename, roots) or (fs.filename, fs.lineno) in seen:
                continue
            seen.add((fs.filename, fs.lineno))
            frames.append({"file": fs.filename, "line": fs.lineno, "function": _clean_function(fs.name),
                           "source": (fs.line or "").strip()})
    return frames


def _clean_function(name: str) -> str:
    if re.fullmatch(r"[\w.<>$-]+", name or ""):
        return name
    found = re.findall(r'"([A-Za-z_]\w*)', name or "")
    return found[-1] if found else name


def message_locations(message: str, roots: list[str]) -> list[dict]:
    """file:line mentions of the user's module inside an error message (Pallas/Mosaic put them there)."""
    out = []
    for m in _PY_LOC.finditer(message):
        f, line = m.group("file"), int(m.group("line"))
        if _under(f, roots) and not any(o["file"] == f and o["line"] == line for o in out):
            out.append({"file": f, "line": line})
    return out


def _source_line(path: str, line: int) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for i, text in enumerate(fh, 1):
                if i == line:
                    return text.strip()
    except OSError:
        pass
    return ""


def error_record(exc: BaseException, roots: list[str], stage: str, kind: str | None = None) -> dict:
    """A JSON-able record of a failure: kind, type, stage, message and the user's file:line."""
    message = str(exc) or repr(exc)
    etype = type(exc).__name__
    if kind is None:
        kind = classify_error(exc, stage)
    frames = user_frames(exc, roots)
    locs = message_locations(message, roots)
    rec = {"kind": kind, "type": etype, "stage": stage, "message": message[:20000],
           "file": None, "line": None, "function": None, "source": None,
           "frames": frames, "message_locations": locs}
    # Prefer the innermost user frame of the traceback (the call that failed); when the traceback has none
    # (compile errors raised from inside XLA), the first location the message names (e.g. the kernel line).
    if frames:
        rec.update({k: frames[-1][k] for k in ("file", "line", "function", "source")})
    elif locs:
        rec.update(file=locs[0]["file"], line=locs[0]["line"], source=_source_line(locs[0]["file"], locs[0]["line"]))
    return rec


def classify_error(exc: BaseException, stage: str) -> str:
    chain = _exception_chain(exc)
    names = {type(e).__name__ for e in chain}
    if any(isinstance(e, ModuleNotFoundError) and (e.name or "").split(".")[0] in ("jax", "jaxlib", "libtpu")
           for e in chain):
        return "missing_dependency"
    if stage == "import":
        return "import"
    if "MosaicError" in names or any(re.search(r"MosaicError|Mosaic failed", str(e)[:300]) for e in chain):
        return "mosaic"
    if stage == "lower":
        return "lowering"
    if stage == "compile":
        return "compile"
    return stage


def plain_error(kind: str, stage: str, message: str, etype: str | None = None) -> dict:
    return {"kind": kind, "type": etype, "stage": stage, "message": message, "file": None, "line": None,
            "function": None, "source": None, "frames": [], "message_locations": []}


# ------------------------------------------------------------------------------------------------
# loading the user's module (worker side)
# ------------------------------------------------------------------------------------------------
def module_roots(spec: str) -> list[str]:
    """Paths whose frames count as the user's: the package dir, the .py file, or the module's location."""
    if os.path.exists(spec):
        return [os.path.abspath(spec)]
    try:
        import importlib.util

        found = importlib.util.find_spec(spec)
    except (ImportError, ValueError):
        found = None
    if found is not None and found.origin:
        if found.submodule_search_locations:
            return [os.path.dirname(os.path.abspath(found.origin))]
        return [os.path.abspath(found.origin)]
    return []


def load_module(spec: str):
    import importlib
    import importlib.util

    if os.path.isdir(spec):
        path = os.path.abspath(spec)
        if not os.path.exists(os.path.join(path, "__init__.py")):
            raise ImportError(f"{spec} is a directory without __init__.py; pass the package or a .py file")
        parent, name = os.path.split(path.rstrip(os.sep))
        sys.path.insert(0, parent)
        return importlib.import_module(name)
    if spec.endswith(".py") or os.path.isfile(spec):
        path = os.path.abspath(spec)
        if not os.path.isfile(path):
            raise ImportError(f"no such file: {spec}")
        sys.path.insert(0, os.path.dirname(path))
        name = os.path.splitext(os.path.basename(path))[0]
        mspec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(mspec)
        sys.modules[name] = mod
        mspec.loader.exec_module(mod)
        return mod
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    return importlib.import_module(spec)


def module_versions(mod) -> list[str]:
    versions = getattr(mod, "VERSIONS", None)
    if not isinstance(versions, dict) or not versions:
        raise TypeError("the module must define VERSIONS = {'name': callable, ...} (a non-empty dict)")
    bad = [k for k, v in versions.items() if not isinstance(k, str) or not callable(v)]
    if bad:
        raise TypeError(f"VERSIONS entries must map names to callables: {bad!r}")
    invalid = [k for k in versions if not re.fullmatch(r"[A-Za-z0-9_.-]+", k)]
    if invalid:
        raise TypeError(f"version names must match [A-Za-z0-9_.-]+ (they name directories): {invalid!r}")
    table = getattr(mod, "EXAMPLE_ARGS", None)
    if table is not None:
        if not isinstance(table, dict) or not all(isinstance(k, str) for k in table):
            raise TypeError("EXAMPLE_ARGS must map version names to callables returning the version's arguments")
        unknown = [k for k in table if k not in versions]
        if unknown:
            raise TypeError(f"EXAMPLE_ARGS names versions that are not in VERSIONS: {unknown!r}")
    if not callable(getattr(mod, "example_args", None)):
        missing = [k for k in versions if table is None or k not in table]
        if missing:
            raise TypeError("the module must define example_args() (or example_args(version)) returning a tuple of "
                            f"jax.ShapeDtypeStruct, or EXAMPLE_ARGS entries for every version; missing: {missing!r}")
    return list(versions)


def _takes_param(fn, name: str) -> bool:
    """True when `fn` has a parameter called `name` (example_args(version), a mesh version's fn(..., mesh))."""
    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def _takes_version(fn) -> bool:
    """True when `fn` has a parameter named `version`: the per-version form example_args(version).

    Only the name counts, so an older example_args(m=512, ...) with defaulted size parameters is still
    called with no arguments."""
    return _takes_param(fn, "version")


MESH_KEYS = ("axes", "shape", "in_specs")


def module_meshes(mod, versions: list[str]) -> dict:
    """The optional MESH = {version: {"axes": ("x",), "shape": (4,), "in_specs": (("x",),)}}, checked and
    normalised without jax or devices: {version: {"axes": tuple, "shape": tuple | None, "in_specs": tuple |
    None}}. `shape` None means every device of the topology on the single axis."""
    table = getattr(mod, "MESH", None)
    if table is None:
        return {}
    if not isinstance(table, dict) or not all(isinstance(k, str) for k in table):
        raise TypeError("MESH must map version names to {'axes': ('x',), 'shape': (4,), 'in_specs': (...)}")
    unknown = [k for k in table if k not in versions]
    if unknown:
        raise TypeError(f"MESH names versions that are not in VERSIONS: {unknown!r}")
    out = {}
    for version, entry in table.items():
        where = f"MESH[{version!r}]"
        if not isinstance(entry, dict) or "axes" not in entry:
            raise TypeError(f"{where} must be a dict with 'axes' (and optionally 'shape', 'in_specs')")
        extra = [k for k in entry if k not in MESH_KEYS]
        if extra:
            raise TypeError(f"{where} has unknown keys {extra!r}; known: {', '.join(MESH_KEYS)}")
        axes = entry["axes"]
        axes = (axes,) if isinstance(axes, str) else axes
        if not isinstance(axes, (tuple, list)) or not axes or not all(isinstance(a, str) and a for a in axes) \
                or len(set(axes)) != len(axes):
            raise TypeError(f"{where}['axes'] must be a non-empty tuple of distinct axis names, got {axes!r}")
        shape = entry.get("shape")
        if shape is None:
            if len(axes) != 1:
                raise TypeError(f"{where} needs a 'shape' for {len(axes)} axes (only one axis defaults to every device)")
        else:
            shape = (shape,) if isinstance(shape, int) else shape
            if not isinstance(shape, (tuple, list)) or len(shape) != len(axes) \
                    or not all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in shape):
                raise TypeError(f"{where}['shape'] must be positive ints, one per axis {tuple(axes)!r}, got {shape!r}")
            shape = tuple(shape)
        in_specs = entry.get("in_specs")
        if in_specs is not None and not isinstance(in_specs, (tuple, list)):
            raise TypeError(f"{where}['in_specs'] must be a tuple with one spec per example argument")
        out[version] = {"axes": tuple(axes), "shape": shape, "in_specs": None if in_specs is None else tuple(in_specs)}
    return out


def build_mesh(devices: list, entry: dict):
    """A jax.sharding.Mesh of the first prod(shape) devices of the topology, in the topology's order."""
    import numpy as np
    from jax.sharding import Mesh

    shape = entry["shape"] or (len(devices),)
    n = math.prod(shape)
    if n > len(devices):
        raise ValueError(f"the mesh {dict(zip(entry['axes'], shape))} needs {n} devices; the topology has "
                         f"{len(devices)}")
    return Mesh(np.array(devices[:n], dtype=object).reshape(shape), entry["axes"])


def mesh_shardings(mesh, in_specs, n_args: int) -> list:
    """One NamedSharding per example argument: in_specs[i] is a PartitionSpec, a tuple of axis names (None
    for an unsharded dimension), one axis name, or None (replicated); no in_specs replicates everything."""
    from jax.sharding import NamedSharding, PartitionSpec

    if in_specs is None:
        in_specs = (None,) * n_args
    if len(in_specs) != n_args:
        raise ValueError(f"MESH in_specs has {len(in_specs)} entries for {n_args} example arguments")

    def spec(s):
        if s is None:
            return PartitionSpec()
        if isinstance(s, PartitionSpec):
            return s
        if isinstance(s, str):
            return PartitionSpec(s)
        return PartitionSpec(*s)

    return [NamedSharding(mesh, spec(s)) for s in in_specs]


def version_example_args(mod, version: str) -> tuple:
    """The arguments `version` is lowered with: EXAMPLE_ARGS[version] (a callable or a tuple), else
    example_args(version) when it takes `version`, else example_args()."""
    table = getattr(mod, "EXAMPLE_ARGS", None) or {}
    if version in table:
        entry = table[version]
        example = entry() if callable(entry) else entry
    elif _takes_version(mod.example_args):
        example = mod.example_args(version=version)
    else:
        example = mod.example_args()
    if not isinstance(example, (tuple, list)):
        example = (example,)
    return tuple(example)


def _is_array_like(a) -> bool:
    return hasattr(a, "shape") and hasattr(a, "dtype")


def place_args(example: tuple, sharding) -> tuple[list, tuple[int, ...]]:
    """Re-make every array leaf as a ShapeDtypeStruct on `sharding` (or on sharding[i] for argument i when it
    is a list, one per argument); return the args and the positions of non-array arguments, which are passed
    to jax.jit as static (they must be hashable).

    An argument is an array (ShapeDtypeStruct or anything with shape and dtype), a pytree whose leaves are all
    arrays (a NamedTuple of weights and scales), or a static value (int, str, None, a tuple of ints, ...)."""
    import jax

    per_arg = sharding if isinstance(sharding, list) else [sharding] * len(example)
    args, static = [], []
    for i, a in enumerate(example):

        def place(leaf, s=per_arg[i]):
            return jax.ShapeDtypeStruct(leaf.shape, leaf.dtype, sharding=s)

        leaves = jax.tree_util.tree_leaves(a)
        if _is_array_like(a):
            args.append(place(a))
        elif leaves and all(_is_array_like(x) for x in leaves):
            args.append(jax.tree_util.tree_map(place, a))
        else:
            static.append(i)
            args.append(a)
    return args, tuple(static)


def module_kernel_names(mod, version: str) -> list:
    """The optional KERNEL_NAMES = {version: [record, ...]} of the module: the records `KernelNames` makes, for
    versions whose kernels are traced before the worker runs them (hlolint.check's exported computations)."""
    table = getattr(mod, "KERNEL_NAMES", None) or {}
    if not isinstance(table, dict):
        raise TypeError("KERNEL_NAMES must map version names to kernel records: {'v1': [{'name': ..., ...}]}")
    records = table.get(version) or []
    if not isinstance(records, list) or not all(isinstance(r, dict) and "operands" in r for r in records):
        raise TypeError(f"KERNEL_NAMES[{version!r}] must be a list of kernel records (name, operands, ...)")
    return records


def module_rules(mod, versions: list[str]) -> dict:
    """The optional RULES = {version: "pack[,pack]"} of the module, checked against VERSIONS."""
    rules = getattr(mod, "RULES", None)
    if rules is None:
        return {}
    if not isinstance(rules, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in rules.items()):
        raise TypeError("RULES must map version names to rule pack names: {'v1': 'v1-auto', ...}")
    unknown = [k for k in rules if k not in versions]
    if unknown:
        raise TypeError(f"RULES names versions that are not in VERSIONS: {unknown!r}")
    return dict(rules)


# ------------------------------------------------------------------------------------------------
# worker: one (version, target) per process, or the version list
# ------------------------------------------------------------------------------------------------
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


def worker_list(module_spec: str, result_path: str) -> int:
    roots = module_roots(module_spec)
    try:
        mod = load_module(module_spec)
        roots = module_roots(module_spec) or roots
        versions = module_versions(mod)
        rules = module_rules(mod, versions)
        module_meshes(mod, versions)  # a malformed MESH fails the listing, before any unit runs
        _write_json(result_path, {"status": "ok", "versions": versions, "rules": rules,
                                  "module_file": getattr(mod, "__file__", None)})
    except BaseException as exc:  # noqa: BLE001 - the user's import may raise anything
        traceback.print_exc()
        _write_json(result_path, {"status": "error", "error": error_record(exc, roots, "import")})
    return 0


def _pkg_versions() -> dict:
    from importlib import metadata

    out = {}
    for name in ("jax", "jaxlib", "libtpu", "libtpu-nightly"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            if name != "libtpu-nightly":
                out[name] = None
    return out


def worker_compile(module_spec: str, version: str, platform: str, topology: str | None, stage: str,
                   result_path: str) -> int:
    result = {"status": "error", "device_kind": None, "module_name": None, "lower_s": None, "compile_s": None}
    roots = module_roots(module_spec)
    step = "setup"
    try:
        step = "setup"
        try:
            import jax
            import numpy as np
            from jax.sharding import Mesh, NamedSharding, PartitionSpec
        except ImportError as exc:
            result["error"] = error_record(exc, roots, "setup", kind="missing_dependency")
            return 0
        if platform == "tpu":
            import importlib.util

            if importlib.util.find_spec("libtpu") is None:
                result["error"] = plain_error(
                    "missing_dependency", "setup",
                    "libtpu is not importable: install jax[tpu] (scripts/setup-python.sh) to compile for TPU targets",
                    "ModuleNotFoundError")
                return 0
            from jax.experimental import topologies

            devices = topologies.get_topology_desc(platform="tpu", topology_name=topology).devices
        else:
            devices = jax.devices("cpu")
        result["device_kind"] = devices[0].device_kind
        sharding = NamedSharding(Mesh(np.array(devices[:1]), ("x",)), PartitionSpec())

        step = "import"
        mod = load_module(module_spec)
        roots = module_roots(module_spec) or roots
        versions = module_versions(mod)
        if version not in versions:
            raise KeyError(f"version {version!r} is not in VERSIONS ({', '.join(versions)})")
        fn = mod.VERSIONS[version]
        step = "example_args"
        example = version_example_args(mod, version)
        mesh_entry = module_meshes(mod, versions).get(version)
        if mesh_entry is not None:
            # a multi-device version: its arguments are placed on a mesh of the topology's devices, and a
            # callable with a `mesh` parameter gets the Mesh (for its own shard_map)
            mesh = build_mesh(list(devices), mesh_entry)
            sharding = mesh_shardings(mesh, mesh_entry["in_specs"], len(example))
            if _takes_param(fn, "mesh"):
                fn = functools.partial(fn, mesh=mesh)
            result["mesh"] = {"axes": list(mesh.axis_names), "shape": [int(n) for n in mesh.devices.shape],
                              "device_ids": [int(d.id) for d in mesh.devices.flat]}
        args, static = place_args(example, sharding)

        step = "lower"
        t0 = time.perf_counter()
        # Pallas lowering asks the default device for the chip (tpu_info.get_device_kind, the sign rule, ...);
        # in this CPU-only worker that is the CPU ("Unsupported TPU device kind: cpu"), so make it the target's.
        names = KernelNames()
        with jax.default_device(devices[0]) if platform == "tpu" else contextlib.nullcontext(), names:
            lowered = jax.jit(fn, static_argnums=static).lower(*args)
        # a version that traces no kernel here (an exported program: hlolint.check) may declare their names
        result["kernels"] = names.records or module_kernel_names(mod, version)
        result["lower_s"] = round(time.perf_counter() - t0, 3)
        text = lowered.as_text()
        with open(os.path.join(stage, "stablehlo.mlir"), "w", encoding="utf-8") as fh:
            fh.write(text)
        m = re.search(r"^module @([\w.$-]+)", text, re.M)
        result["module_name"] = m.group(1) if m else None

        step = "compile"
        t0 = time.perf_counter()
        lowered.compile()
        result["compile_s"] = round(time.perf_counter() - t0, 3)
        result["status"] = "ok"
    except BaseException as exc:  # noqa: BLE001 - record anything the user's code or the compiler raises
        traceback.print_exc()
        result["error"] = error_record(exc, roots, step)
    finally:
        result["packages"] = _pkg_versions() if "jax" in sys.modules else None
        _write_json(result_path, result)
        sys.stdout.flush()
        sys.stderr.flush()
    return 0


# ------------------------------------------------------------------------------------------------
# parent: plan, run workers one after another, organise the dumps, write the manifest
# ------------------------------------------------------------------------------------------------
def emit(event: dict) -> None:
    sys.stdout.write(json.dumps(event, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def _script_path() -> str:
    path = globals().get("__file__")
    if not path or not os.path.isfile(path):
        raise UsageError("hlolint_compile.py must be run from a file (it starts itself as a worker)")
    return os.path.abspath(path)


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


def _iso_now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


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
        elif os.path.isfile(path) and (name.endswith("_hlo.txt") or name == "manifest.json"):
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


# ------------------------------------------------------------------------------------------------
# the manifest: one per output folder, merged into by every run (pure helpers, unit-tested without jax)
# ------------------------------------------------------------------------------------------------
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


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        args = parse_args(argv)
        if args.worker:
            # the user's module may read its own command line (sizes, flags) when imported
            sys.argv = [args.module] + module_args(args)
        if args.worker == "list":
            return worker_list(args.module, args.result)
        if args.worker == "compile":
            return worker_compile(args.module, args.worker_version, args.platform, args.topology, args.stage,
                                  args.result)
        return run(args)
    except UsageError as exc:
        emit({"event": "usage_error", "message": str(exc)})
        print(f"hlolint_compile: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
