"""The names a Pallas kernel's author gave its refs, recorded while jax traces the kernel (docs/driver.md, "Kernel
names"). One file for both sides that record them: `hlolint compile`'s helper (src/driver/hlolint_compile.py, which
imports it as `hlolint_kernel_names`: the binary writes it beside the helper, the source tree links it there) and
`hlolint.check` (python/hlolint/_check.py), which exports the computation in the user's process, where the kernels
are traced. Standard library only: the helper runs it with the user's interpreter, without the hlolint package.
"""

from __future__ import annotations

import functools
import inspect
import os
import sys


def _not_a_user_frame(path):
    """Tells jax that frames of this file are not the author's: the wrapper below sits between the author's
    `pallas_call` and jax, and jax gives an op the innermost frame outside its own tree as its place (in HLO
    metadata, and so in every finding); without this, that would be this file (in `hlolint compile`, a temporary
    copy deleted after the run). jax keeps the exclusion for the process: it holds only for this file."""
    try:
        from jax._src import source_info_util
    except ImportError:
        return
    register = getattr(source_info_util, "register_exclusion", None)
    path = os.path.abspath(path)
    # (a jax without it: places may name the wrapper; the names are recorded all the same)
    if register is not None and path not in getattr(source_info_util, "_exclude_paths", ()):
        register(path)


class KernelNames:
    """The names a kernel's author gave its refs, per Pallas kernel: the Mosaic dumps number a kernel's arguments
    (`%arg9`) and carry no names for them, so findings could not say `sem[1, 0]` without this record.

    While installed, `pallas_call` is wrapped so that tracing a kernel runs under a profile hook that sees the
    kernel function's frame: its refs are its positional arguments (Pallas passes scalar-prefetch, input, output
    and scratch refs in that order, the order of the Mosaic arguments after the grid indices); at return, each
    ref is named by the first local the body bound to it (a parameter, or a name unpacked from `*refs`),
    else `refs[i]`. Nothing about the kernel or its lowering changes: the kernel object passed to Pallas is the
    user's own.
    """

    def __init__(self):
        self.records = []
        self._patched = []

    def __enter__(self):
        import jax._src.pallas.pallas_call as impl
        import jax.experimental.pallas as pl

        _not_a_user_frame(__file__)

        original = impl.pallas_call
        wrapper = functools.wraps(original)(functools.partial(self._pallas_call, original))
        for mod in (impl, pl):
            if getattr(mod, "pallas_call", None) is original:
                self._patched.append((mod, original))
                mod.pallas_call = wrapper
        return self

    def __exit__(self, *exc):
        for mod, original in self._patched:
            mod.pallas_call = original
        self._patched = []
        return False

    def _pallas_call(self, original, kernel, *args, **kwargs):
        call = original(kernel, *args, **kwargs)
        fn = kernel
        while isinstance(fn, functools.partial):
            fn = fn.func
        fn = inspect.unwrap(fn)
        code = getattr(fn, "__code__", None)
        if code is None:
            return call
        name = kwargs.get("name") or getattr(fn, "__name__", None)

        @functools.wraps(call)
        def traced(*a, **kw):
            open_frames = {}
            helpers = []

            def hook(frame, event, _arg):
                if frame.f_code is not code:
                    # a function of the kernel's own file called while it runs: a helper it may hand its refs
                    # (`def kernel(*args): body(*args)`, tpu-inference's ragged paged attention), whose parameters
                    # name them; jax's own calls are in other files and are not looked at
                    if event == "call" and open_frames and frame.f_code.co_filename == code.co_filename:
                        helpers.append(_frame_refs(frame))
                    return
                if event == "call":
                    open_frames[id(frame)] = _frame_refs(frame)
                elif event == "return" and id(frame) in open_frames:
                    refs, names = open_frames.pop(id(frame))
                    self._record(name, fn, code, refs, names, frame.f_locals, helpers)

            previous = sys.getprofile()
            sys.setprofile(hook)
            try:
                return call(*a, **kw)
            finally:
                sys.setprofile(previous)

        return traced

    def _record(self, name, fn, code, refs, names, local_vars, helpers=()):
        names = list(names)
        for i, ref in enumerate(refs):
            if names[i] is not None and "[" not in names[i]:
                continue  # a parameter's own name
            for local, value in local_vars.items():
                if value is ref:
                    names[i] = local
                    break
            else:
                # not bound in the kernel's body: the first helper parameter it was passed as
                bound = (n for h_refs, h_names in helpers for r, n in zip(h_refs, h_names) if r is ref and "[" not in n)
                names[i] = next(bound, names[i])
        names = [n for name_, ref in zip(names, refs) for n in _leaf_names(name_, ref)]
        record = {"name": name, "function": getattr(fn, "__qualname__", None), "file": code.co_filename,
                  "line": code.co_firstlineno, "operands": names}
        # a kernel traced again (jvp, vmap, a second call) says the same: the last tracing stands
        self.records = [r for r in self.records if r["name"] != name] + [record]


def _leaf_names(name, value):
    """The names of the kernel arguments one positional argument is: itself when it is a ref, else one per leaf of
    the pytree of refs it is, in jax's flattening order (`rhs_ref.weight`, `rhs_ref.bias`: tpu-inference's gmm takes
    a NamedTuple of a weight, its scale and its bias), none for None (an absent optional ref Pallas passes as None).
    """
    try:
        import jax
    except ImportError:  # pragma: no cover - the recorder only runs while jax traces
        return [name]
    leaves = jax.tree_util.tree_flatten_with_path(value)[0]
    if len(leaves) == 1 and not leaves[0][0]:
        return [name]
    return [f"{name}{jax.tree_util.keystr(path)}" for path, _ in leaves]


def _frame_refs(frame):
    """A kernel frame's positional arguments at its call, in order, with the names the signature gives them."""
    code = frame.f_code
    local_vars = frame.f_locals
    params = code.co_varnames[:code.co_argcount]
    refs = [local_vars.get(p) for p in params]
    names = list(params)
    if code.co_flags & inspect.CO_VARARGS:
        star = code.co_varnames[code.co_argcount + code.co_kwonlyargcount]
        extra = tuple(local_vars.get(star) or ())
        refs += list(extra)
        names += [f"{star}[{i}]" for i in range(len(extra))]
    return refs, names
