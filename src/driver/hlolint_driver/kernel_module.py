"""The kernel module's convention, read in a worker: VERSIONS, example arguments, RULES, MESH, KERNEL_NAMES
(docs/driver.md, examples/README.md)."""

from __future__ import annotations

import inspect
import math
import os
import re
import sys


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
