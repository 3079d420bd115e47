#!/usr/bin/env python3
"""Record the Python names of each version's Pallas kernels into an existing `hlolint compile` manifest, without
compiling: each version is traced (`jax.make_jaxpr`) under the driver's own recorder (`hlolint_compile.KernelNames`,
what `hlolint compile` runs while it lowers), and `results[].kernels` is written as the driver writes it. For
output folders (and the fixtures) compiled before the driver recorded names.

A TPU target's version is traced with its compile-only topology's device as the default device, as the driver's
worker lowers it: kernels that pick block sizes by the chip (tpu-inference's ragged paged attention, gmm) ask the
default device, which would otherwise be the CPU ("Unsupported TPU device kind: cpu"). That needs libtpu, and
libtpu's lock (/tmp/libtpu_lockfile): run it while nothing else compiles.

Usage: .venv/bin/python scripts/record_kernel_names.py path/to/manifest.json ...
The module a manifest names (`module`) is resolved from the current directory. Versions lowered on a mesh
(`MESH`) or whose tracing fails keep no record (findings then name their arguments `%argN`).
"""

import functools
import json
import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src", "driver"))

import hlolint_compile as hc  # noqa: E402


def target_devices(manifest: dict, target: str):
    """The devices the driver's worker lowers `target`'s versions on (None for a CPU target or an unknown one)."""
    t = next((t for t in manifest.get("targets", []) if t.get("target") == target), None)
    if not t or t.get("platform") != "tpu":
        return None
    from jax.experimental import topologies

    return list(topologies.get_topology_desc(platform="tpu", topology_name=t["topology"]).devices)


def names_of(mod, version: str, meshes: dict, devices):
    import contextlib

    import jax

    if version not in getattr(mod, "VERSIONS", {}) or (version in meshes and not devices):
        return None
    fn = mod.VERSIONS[version]
    example = hc.version_example_args(mod, version)
    static = tuple(i for i, a in enumerate(example) if not hc._is_array_like(a))
    # jax caches traced kernels across calls: a kernel traced for an earlier manifest would not be traced again
    jax.clear_caches()
    try:
        if version in meshes:
            # a multi-device version, as the worker lowers it: its arguments on a mesh of the topology's devices
            mesh = hc.build_mesh(devices, meshes[version])
            example, static = hc.place_args(example, hc.mesh_shardings(mesh, meshes[version]["in_specs"], len(example)))
            if hc._takes_param(fn, "mesh"):
                fn = functools.partial(fn, mesh=mesh)
        on = jax.default_device(devices[0]) if devices else contextlib.nullcontext()
        with on, hc.KernelNames() as names:
            jax.make_jaxpr(fn, static_argnums=static)(*example)
    except Exception as exc:  # noqa: BLE001 - a version that does not trace here keeps no record
        print(f"  {version}: not traced ({type(exc).__name__}: {exc})".splitlines()[0], file=sys.stderr)
        return None
    return names.records


def main(paths):
    for path in paths:
        with open(path, encoding="utf-8") as fh:
            manifest = json.load(fh)
        mod = hc.load_module(manifest["module"])
        versions = hc.module_versions(mod)
        meshes = hc.module_meshes(mod, versions)
        cache, devices = {}, {}
        for rec in manifest["results"]:
            if rec.get("status") != "ok":
                continue
            v, t = rec["version"], rec.get("target")
            if t not in devices:
                devices[t] = target_devices(manifest, t)
            # per target: a kernel may be traced differently for another chip (its block sizes, its grid)
            if (v, t) not in cache:
                cache[v, t] = names_of(mod, v, meshes, devices[t])
            if cache[v, t]:
                rec["kernels"] = cache[v, t]
        # as the driver writes it (not `write_manifest`: nothing was compiled, `updated` stays)
        hc._write_json(path, manifest)
        print(f"{path}: {sum(1 for v in cache.values() if v)} of {len(cache)} versions × targets named", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
