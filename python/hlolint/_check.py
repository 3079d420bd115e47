"""`hlolint.check`: a JAX computation compiled for a TPU target through `hlolint compile`, linted by the bundled
binary, its findings as Python objects (docs/python-api.md).

How a computation reaches the driver: the driver compiles a *kernel module* in a worker process of its own (one
process per compile: libtpu reads its dump flags once, and holds /tmp/libtpu_lockfile). So the computation is turned
into a `jax.export.Exported` here — jax's own serialisable form of a lowered program, Mosaic kernels included as
their `tpu_custom_call`s, with the source locations the findings name — pickled beside a generated module whose one
version calls it. The worker compiles that module like any other, for the target's compile-only topology.

The Exported's argument and result trees are flattened first: a pytree node class of the user's (a NamedTuple of
weights) is unpickled by reference, and the worker could not import it.

The worker traces no kernel (an Exported is already lowered), so the names the kernels' authors gave their refs
are recorded here, while a function is exported, by the recorder the driver's worker runs (`_kernel_names`), and
handed to the worker as the module's `KERNEL_NAMES`: findings then say `sem[1, 0]`, not `%arg9[1, 0]`. A Traced,
Lowered or Compiled was traced before `check` saw it: its kernels keep their dump names.
"""

from __future__ import annotations

import dataclasses
import json
import os
import pickle
import re
import shutil
import subprocess
import sys
import tempfile
import time

from ._binary import find_hlolint_bin
from ._findings import Findings, finding_from_json
from ._kernel_names import KernelNames

# The driver's targets (`hlolint compile --help`), and the device kind jax reports for each.
DEVICE_KINDS = {
    "TPU7x": "tpu7x",
    "TPU v6 lite": "v6e",
    "TPU v5 lite": "v5e",
    "TPU v5": "v5p",
    "TPU v5p": "v5p",
    "TPU v4": "v4",
    "cpu": "cpu",
}

MODULE = '''"""Written by hlolint.check: the computation it was given, as a kernel module of `hlolint compile`."""
import os
import pickle

import jax

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "exported.pkl"), "rb") as _fh:
    _EXPORTED = pickle.load(_fh)

VERSIONS = {@NAME@: _EXPORTED.call}

# what the kernels called their refs, recorded while hlolint.check exported the computation
KERNEL_NAMES = {@NAME@: @KERNELS@}


def example_args():
    return tuple(jax.ShapeDtypeStruct(a.shape, a.dtype) for a in _EXPORTED.in_avals)
'''


class HlolintError(RuntimeError):
    """The computation could not be compiled or linted: what the binary or jax said, and what to do."""


def _jax():
    try:
        import jax
    except ImportError as exc:
        raise ImportError(
            "hlolint.check compiles a JAX computation and needs jax in this environment "
            "(pip install 'jax[tpu]'; the hlolint executable itself works without it)") from exc
    return jax


def _platform(target: str) -> str:
    return "cpu" if target == "cpu" else "tpu"


def _name(obj, name: str | None) -> str:
    """A version name for the dump folder: the given one, else the function's (a Lowered's module is named
    `jit_<function>`), in the driver's alphabet."""
    if name is None and hasattr(obj, "as_text") and hasattr(obj, "compile"):
        try:
            m = re.search(r"^(?:module @\"?|HloModule )jit_([\w.$-]+)", obj.as_text() or "", re.M)
        except Exception:  # noqa: BLE001 - a Lowered jax cannot print
            m = None
        name = m.group(1) if m else None
    if name is None:
        fn = obj
        while hasattr(fn, "func"):  # functools.partial
            fn = fn.func
        name = getattr(fn, "__name__", None) or getattr(getattr(fn, "_fun", None), "__name__", None) or "computation"
    clean = re.sub(r"[^A-Za-z0-9_.-]", "_", name).strip(".") or "computation"
    return clean[:100]


def _flat_exported(exported):
    """`exported` with flat argument and result trees (its module takes and returns flat arrays anyway)."""
    jax = _jax()
    n_in, n_out = len(exported.in_avals), len(exported.out_avals)
    in_tree = jax.tree_util.tree_structure((tuple(range(n_in)), {}))
    out_tree = jax.tree_util.tree_structure(list(range(n_out)))
    # `_get_vjp` is a closure over the original function; the compile needs no derivative
    return dataclasses.replace(exported, in_tree=in_tree, out_tree=out_tree, _get_vjp=None)


def _is_array_like(x) -> bool:
    return hasattr(x, "shape") and hasattr(x, "dtype")


def _export_callable(fn, args: tuple, platform: str):
    """`fn(*args)` exported for `platform`: array leaves of the arguments (arrays or ShapeDtypeStructs) are the
    computation's inputs, any other value is a constant of it (as jax.jit's static arguments are). With the
    records of the kernels traced meanwhile (`_kernel_names.KernelNames`)."""
    jax = _jax()
    leaves, treedef = jax.tree_util.tree_flatten(args)
    dynamic = [i for i, leaf in enumerate(leaves) if _is_array_like(leaf)]

    def flat(*arrays):
        full = list(leaves)
        for i, a in zip(dynamic, arrays):
            full[i] = a
        return jax.tree_util.tree_leaves(fn(*jax.tree_util.tree_unflatten(treedef, full)))

    flat.__name__ = getattr(fn, "__name__", "computation")
    specs = [jax.ShapeDtypeStruct(leaves[i].shape, leaves[i].dtype) for i in dynamic]
    try:
        with KernelNames() as names:
            return jax.export.export(jax.jit(flat), platforms=[platform])(*specs), names.records
    except Exception as exc:
        if "Unsupported TPU device kind" in str(exc):
            raise HlolintError(
                f"lowering for {platform} asked this process's default device which TPU it is ({exc}); the kernel "
                "picks sizes from the device: give them explicitly, or use `hlolint compile` on a kernel module") from exc
        raise


def _export_lowered(lowered, name: str, platform: str):
    """A `jax.stages.Lowered` as an Exported. jax has no public call for it: `jax.export` builds its Exported from a
    Lowered with `_export._export_lowered`, whose jaxpr argument only serves derivatives (None is documented there
    as a Lowered made outside jax)."""
    try:
        from jax._src.export import _export
    except ImportError as exc:  # pragma: no cover - a jax without it
        raise HlolintError("this jax has no jax._src.export._export; pass the function and its arguments") from exc
    exported = _export._export_lowered(lowered, None, name)
    if platform not in exported.platforms:
        raise HlolintError(
            f"this Lowered was lowered for {', '.join(exported.platforms)}, not {platform}: lower it with "
            f"`jax.jit(f).trace(*args).lower(lowering_platforms=({platform!r},))`, or pass the function and its "
            "arguments to hlolint.check")
    return exported


# libtpu lets one process at a time compile on a machine (/tmp/libtpu_lockfile); a compile started meanwhile fails
# at setup with this message. Another test process (pytest-xdist) or user compiling is the usual cause: wait.
LOCKED = "libtpu_lockfile"
LOCK_RETRY_S = 5.0


def _run(cmd: list[str], timeout: float | None, lock_wait: float = 0.0) -> subprocess.CompletedProcess:
    env = dict(os.environ, NO_COLOR="1")
    deadline = time.monotonic() + lock_wait
    while True:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
        if LOCKED not in (proc.stderr or "") or time.monotonic() + LOCK_RETRY_S > deadline:
            return proc
        time.sleep(LOCK_RETRY_S)


def _findings(proc: subprocess.CompletedProcess, out: str, target: str, keep: bool) -> Findings:
    """The JSON report of a run, or an HlolintError with what the binary said when there is none."""
    try:
        doc = json.loads(proc.stdout) if proc.stdout.strip() else None
    except ValueError:
        doc = None
    if doc is None or proc.returncode not in (0, 1) or doc.get("errors"):
        detail = (proc.stderr or "").strip()
        if doc and doc.get("errors"):
            detail += "\n" + "\n".join(json.dumps(e) for e in doc["errors"])
        raise HlolintError(f"hlolint exited with code {proc.returncode}:\n{detail}")
    warnings = tuple(w if isinstance(w, str) else w.get("message", json.dumps(w)) for w in doc.get("warnings", []))
    return Findings((finding_from_json(f, out) for f in doc.get("findings", [])), target=target,
                    out=out if keep else None, warnings=warnings)


def _lint_args(rules, select, ignore, extra_args) -> list[str]:
    args = []
    for flag, values in (("--rules", rules), ("--select", select), ("--ignore", ignore)):
        if isinstance(values, str):
            values = [values]
        for v in values or ():
            args += [flag, v]
    return args + list(extra_args or ())


def check(obj, *args, target: str = "tpu7x", name: str | None = None, rules=(), select=(), ignore=(),
          out: str | os.PathLike | None = None, timeout: float | None = 600, lock_wait: float = 300,
          extra_args=()) -> Findings:
    """Compile a JAX computation for `target` and lint it; the findings as `Finding` objects.

    `obj` is a function (called with `args`: arrays or `jax.ShapeDtypeStruct`s, any other argument a constant),
    a `jax.stages.Traced` or `Lowered` lowered for the target's platform (TPU), or a `jax.stages.Compiled` (its
    optimized HLO is linted as it is, for the TPU it was compiled for). `rules`, `select`, `ignore` are the
    command line's `--rules`, `--select`, `--ignore`; `extra_args` any other lint option. The dumps go to `out`
    (kept) or a temporary folder (removed). While another process holds libtpu's compile lock the compile is
    retried for up to `lock_wait` seconds. Raises HlolintError when the compile or the lint fails."""
    jax = _jax()
    platform = _platform(target)
    exe = find_hlolint_bin()
    stages = jax.stages
    name = _name(obj, name)
    keep = out is not None
    if args and isinstance(obj, (stages.Compiled, stages.Lowered, stages.Traced)):
        raise TypeError("arguments are taken with a function only: a Traced, Lowered or Compiled has its own")
    folder = os.path.abspath(os.fspath(out)) if keep else tempfile.mkdtemp(prefix="hlolint-check-")
    # The generated module lives at one path per output folder: the driver merges a run into the folder's
    # manifest only when it names the same module, so successive checks into one `out` add up.
    work = os.path.join(folder, ".hlolint-module")
    try:
        lint = _lint_args(rules, select, ignore, extra_args)
        if isinstance(obj, stages.Compiled):
            return _check_compiled(obj, exe, name, target, folder, keep, lint, timeout)
        if isinstance(obj, stages.Traced):
            obj = obj.lower(lowering_platforms=(platform,))
        kernels = []
        if isinstance(obj, stages.Lowered):
            exported = _export_lowered(obj, name, platform)
        elif callable(obj):
            exported, kernels = _export_callable(obj, args, platform)
        else:
            raise TypeError(f"hlolint.check takes a function, or jax's Traced, Lowered or Compiled; got {type(obj)}")
        os.makedirs(work, exist_ok=True)
        with open(os.path.join(work, "exported.pkl"), "wb") as fh:
            pickle.dump(_flat_exported(exported), fh)
        module = os.path.join(work, "hlolint_check_module.py")
        with open(module, "w", encoding="utf-8") as fh:
            fh.write(MODULE.replace("@NAME@", repr(name)).replace("@KERNELS@", repr(kernels)))
        cmd = [exe, "compile", module, "--target", target, "--out", folder, "--python", sys.executable,
               "--versions", name, "--format", "json", "--quiet", *lint]
        proc = _run(cmd, timeout, lock_wait)
        return _findings(proc, folder, target, keep)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)


def _device_target(compiled) -> str | None:
    """The driver's target name of the device a Compiled was compiled for (None when jax does not say)."""
    try:
        shardings = compiled.input_shardings[0] or compiled.output_shardings
        leaves = shardings if isinstance(shardings, (list, tuple)) else [shardings]
        device = next(iter(leaves[0].device_set))
    except Exception:  # noqa: BLE001 - jax versions differ in what a Compiled exposes
        return None
    kind = getattr(device, "device_kind", None) or getattr(device, "platform", None)
    return DEVICE_KINDS.get(kind, kind)


def _check_compiled(compiled, exe: str, name: str, target: str, folder: str, keep: bool, lint: list[str],
                    timeout: float | None) -> Findings:
    """A Compiled's optimized HLO linted as it is: the kernels are decoded from its custom calls; there are no
    Mosaic or LLO dumps (pass the function or a Lowered for those)."""
    compiled_for = _device_target(compiled)
    if compiled_for is not None and compiled_for != target:
        raise HlolintError(
            f"this Compiled was compiled for {compiled_for}, not {target}: pass target={compiled_for!r}, or the "
            "function (or its Lowered) to compile it for the target")
    text = compiled.as_text()
    if not text:
        raise HlolintError("this Compiled has no HLO text (jax returned none)")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"{name}@{target}.after_optimizations.txt")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    proc = _run([exe, "check", path, "--target", target, "--format", "json", *lint], timeout)
    return _findings(proc, folder, target, keep)


def assert_clean(obj, *args, min_severity: str = "warning", allow=(), **options) -> Findings:
    """`check(obj, *args, **options)`, failing the test with a readable list of the findings of `min_severity` or
    worse whose code is not in `allow`. Returns every finding (info ones included) when it passes."""
    __tracebackhide__ = True  # pytest shows the caller's line, not this one
    found = check(obj, *args, **options)
    allowed = {allow} if isinstance(allow, str) else set(allow)
    bad = [f for f in found.at_least(min_severity) if f.code not in allowed]
    if bad:
        where = f" (dumps in {found.out})" if found.out else " (pass out=... to keep the dumps)"
        lines = [f"hlolint: {len(bad)} finding(s) in {_name(obj, options.get('name'))} on {found.target}{where}:"]
        for f in bad:
            lines += ["  " + line for line in str(f).splitlines()]
            if f.help:
                lines.append("    help: " + f.help)
        raise AssertionError("\n".join(lines))
    return found
