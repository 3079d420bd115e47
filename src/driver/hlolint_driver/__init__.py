"""The Python side of `hlolint compile`, in parts (the entry point is `hlolint_compile.py` beside this package, which
the binary runs and which re-exports what the tests and scripts use; docs/driver.md):

- `layout`: the targets, unit and file names, which dump files are kept, the dump flags (pure, no jax);
- `errors`: a failure as a record that points at the user's line;
- `kernel_module`: the kernel module's convention (VERSIONS, example_args, RULES, MESH, KERNEL_NAMES), read in a
  worker;
- `worker`: one process per (version, target) compile, or the version list;
- `parent`: the plan, the workers one after another, the dumps organised per unit;
- `manifest`: the output folder's manifest, merged into by every run.

The modules are named inside this package so that none shadows a module of the user's (the worker puts the kernel
module's folder on `sys.path` too).
"""
