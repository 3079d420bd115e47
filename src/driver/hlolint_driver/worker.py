"""A worker process: one (version, target) compiled with the dump flags its parent set, or the module's version
list; its result written as JSON for the parent."""

from __future__ import annotations

import contextlib
import functools
import os
import re
import sys
import time
import traceback

# the kernels' ref names (`KernelNames`): one file with hlolint.check's, see its docstring
from hlolint_kernel_names import KernelNames

from .errors import error_record, plain_error
from .kernel_module import (_takes_param, build_mesh, load_module, mesh_shardings, module_kernel_names,
                            module_meshes, module_roots, module_rules, module_versions, place_args,
                            version_example_args)
from .manifest import _write_json


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
