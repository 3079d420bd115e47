#!/usr/bin/env python3
"""hlolint compile helper: compile each version of a JAX/Pallas kernel module for a TPU target with no TPU.

Usage (the Rust side embeds this file and runs it from a file path, not with `python -c`):

    python hlolint_compile.py --module PATH_OR_MODULE --target tpu7x --out compilation_output
                              [--versions v1,v2] [--timeout S] [--all-stages] [--clean] [--module-args JSON]

--target takes a comma-separated list: tpu7x, v6e, v5e, v5p, v4, cpu (or FAMILY:TOPOLOGY, e.g. v5p:2x4x1).

Kernel module convention (see docs/driver.md; read by hlolint_driver/kernel_module.py): the module exposes
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

This file is the entry point (the binary writes it and the `hlolint_driver` package beside it into a folder of its
own and runs it); the work is in the package's modules. What tests and scripts use is re-exported here.
"""

from __future__ import annotations

import json  # noqa: F401 - re-exported: tests replace json.dump to cut a manifest write short
import sys

from hlolint_driver.errors import classify_error, error_record, plain_error  # noqa: F401
from hlolint_driver.kernel_module import (  # noqa: F401
    _is_array_like, _takes_param, build_mesh, load_module, mesh_shardings, module_kernel_names, module_meshes,
    module_roots, module_rules, module_versions, place_args, version_example_args)
from hlolint_driver.layout import (  # noqa: F401
    DEFAULT_TIMEOUT_S, KEEP_HLO_SUFFIXES, KEEP_LLO_MARKERS, KEEP_MOSAIC_STAGES, LLO_PASS_REGEX, SCHEMA_VERSION,
    STAGE_DIR, TARGETS, UnknownTarget, UsageError, dump_env, hlo_txt_name, keep_file, main_hlo_file, resolve_target,
    select_versions, split_list, unit_name)
from hlolint_driver.manifest import (  # noqa: F401
    _read_json, _write_json, check_same_module, merge_base, merge_result, new_manifest, read_manifest,
    rename_bare_hlo_txt, write_manifest)
from hlolint_driver.parent import emit, module_args, organise, parse_args, run, run_worker  # noqa: F401
from hlolint_driver.worker import worker_compile, worker_list
from hlolint_kernel_names import KernelNames  # noqa: F401


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
        if "--events-only" not in argv:
            print(f"hlolint_compile: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
