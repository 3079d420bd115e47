#!/usr/bin/env python3
"""Record the Python names of each version's Pallas kernels into an existing `hlolint compile` manifest, without
compiling: each version is traced on CPU (`jax.make_jaxpr`) under the driver's own recorder
(`hlolint_compile.KernelNames`, what `hlolint compile` runs while it lowers), and `results[].kernels` is written
as the driver writes it. For output folders (and the fixtures) compiled before the driver recorded names.

Usage: .venv/bin/python scripts/record_kernel_names.py path/to/manifest.json ...
The module a manifest names (`module`) is resolved from the current directory. Versions lowered on a mesh
(`MESH`) or whose tracing fails keep no record (findings then name their arguments `%argN`).
"""

import json
import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src", "driver"))

import hlolint_compile as hc  # noqa: E402


def names_of(mod, version: str, meshes: dict):
    import jax

    if version in meshes or version not in getattr(mod, "VERSIONS", {}):
        return None
    fn = mod.VERSIONS[version]
    example = hc.version_example_args(mod, version)
    static = tuple(i for i, a in enumerate(example) if not hc._is_array_like(a))
    # jax caches traced kernels across calls: a kernel traced for an earlier manifest would not be traced again
    jax.clear_caches()
    try:
        with hc.KernelNames() as names:
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
        cache = {}
        for rec in manifest["results"]:
            if rec.get("status") != "ok":
                continue
            v = rec["version"]
            if v not in cache:
                cache[v] = names_of(mod, v, meshes)
            if cache[v]:
                rec["kernels"] = cache[v]
        # as the driver writes it (not `write_manifest`: nothing was compiled, `updated` stays)
        hc._write_json(path, manifest)
        print(f"{path}: {sum(1 for v in cache.values() if v)} of {len(cache)} versions named", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
