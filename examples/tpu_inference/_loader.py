"""Import tpu-inference's Pallas kernel modules without the package's own dependencies.

`tpu_inference` (python/requirements-kernels.txt, installed with `--no-deps` by scripts/setup-python.sh) is vLLM's
TPU backend. Its `tpu_inference/__init__.py` imports vLLM, torch, torchax, tpu-info and the cloud clients, none of
which a kernel needs: the kernel modules themselves import only jax, and three small helpers of the package. So:

- The installed package's directory is found on `sys.path` without running its `__init__`. `hlolint compile`
  imports this example package under its folder's name, `tpu_inference`, so this package stands in for the real
  one: its `__path__` gains the installed directory, and the kernel submodules (`tpu_inference.kernels...`)
  import from the installed files, unchanged. Imported under another name, a bare `tpu_inference` package with
  that `__path__` is registered instead.
- `tpu_inference.logger` (vLLM's logger) is replaced by the standard library's `logging`, with the one method the
  kernels call that `logging.Logger` lacks (`warning_once`).
- `tpu_inference.utils` (torch, torchax, vLLM) is not needed by the kernels we load: only
  `ragged_paged_attention/v3/tuned_block_sizes.py` imports it, for `get_device_name`, which is stubbed with the
  same device-kind parsing.
- The kernels ask `jax.devices()[0].device_kind` for the TPU generation (`get_tpu_version` in
  `ragged_paged_attention/v3/util.py` and `quantized_matmul/tuned_block_sizes.py`). `hlolint compile` lowers in
  a CPU-only worker under `jax.default_device(<the target's topology device>)`, where `jax.devices()` is the CPU:
  those two functions are wrapped to read the default device when it is a TPU, and otherwise behave as shipped
  (so on CPU, e.g. under the TPU interpreter, the kernels see what tpu-inference itself gives them).

Nothing of tpu-inference is copied or edited: `load(name)` returns the installed module.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import logging
import os
import re
import sys
import types

PACKAGE = "tpu_inference"


class MissingPackage(ImportError):
    """tpu-inference is not installed in this interpreter."""


def _default_tpu_kind() -> str | None:
    """The device kind of `jax.default_device(...)` when it is a TPU (the driver's target), else None."""
    import jax

    dev = jax.config.jax_default_device
    if dev is not None and not isinstance(dev, str) and getattr(dev, "platform", None) == "tpu":
        return dev.device_kind
    return None


def _generation(kind: str) -> int:
    # "TPU v6 lite" -> 6, "TPU v5" -> 5, "TPU7x" -> 7: the number after "TPU", as tpu-inference's own
    # quantized_matmul get_tpu_version parses it
    m = re.match(r"^TPU\D*(\d+)", kind)
    return int(m.group(1)) if m else -1


def _logger_module() -> types.ModuleType:
    class Logger(logging.Logger):
        _once: set = set()

        def warning_once(self, msg, *args, **kwargs):
            key = (msg, args)
            if key not in Logger._once:
                Logger._once.add(key)
                self.warning(msg, *args, **kwargs)

        def info_once(self, msg, *args, **kwargs):
            key = (msg, args)
            if key not in Logger._once:
                Logger._once.add(key)
                self.info(msg, *args, **kwargs)

    def init_logger(name: str) -> logging.Logger:
        prev = logging.getLoggerClass()
        logging.setLoggerClass(Logger)
        try:
            return logging.getLogger(name)
        finally:
            logging.setLoggerClass(prev)

    mod = types.ModuleType(f"{PACKAGE}.logger")
    mod.init_logger = init_logger
    return mod


def _utils_module() -> types.ModuleType:
    def get_device_name(num_devices: int | None = None) -> str:
        # tpu_inference.utils.get_device_name's naming ("TPU v6e", "TPU v7"), from the target's device kind
        import jax

        kind = _default_tpu_kind() or jax.devices()[0].device_kind
        if "TPU" not in kind:
            raise RuntimeError("Expected TPU devices")
        gen = _generation(kind)
        suffix = "e" if kind.endswith(" lite") or kind.endswith("e") else "p" if kind.endswith("p") else ""
        name = f"TPU v{gen}{suffix}"
        return name if num_devices is None else f"{name}-{num_devices}"

    mod = types.ModuleType(f"{PACKAGE}.utils")
    mod.get_device_name = get_device_name
    return mod


def _wrap_tpu_version(module: types.ModuleType) -> None:
    original = module.get_tpu_version
    if getattr(original, "_hlolint_wrapped", False):
        return

    def get_tpu_version() -> int:
        kind = _default_tpu_kind()
        return _generation(kind) if kind is not None else original()

    get_tpu_version._hlolint_wrapped = True
    module.get_tpu_version = get_tpu_version


def _installed_package_dirs() -> list[str]:
    """The installed tpu_inference package's directories, skipping this example package (which the driver imports
    under the same name, `tpu_inference`, from examples/)."""
    here = os.path.dirname(os.path.abspath(__file__))
    for entry in sys.path:
        spec = importlib.machinery.PathFinder.find_spec(PACKAGE, [entry or os.getcwd()])
        if spec is None or not spec.submodule_search_locations:
            continue
        dirs = [d for d in spec.submodule_search_locations if os.path.abspath(d) != here]
        if any(os.path.isdir(os.path.join(d, "kernels")) for d in dirs):
            return dirs
    raise MissingPackage(
        "tpu_inference is not installed: scripts/setup-python.sh installs python/requirements-kernels.txt")


def _bootstrap() -> None:
    pkg = sys.modules.get(PACKAGE)
    if pkg is not None and getattr(pkg, "_hlolint_ready", False):
        return
    if pkg is not None and not getattr(pkg, "HLOLINT_EXAMPLE", False):
        return  # the real package, imported by someone else with its dependencies: use it as it is
    dirs = _installed_package_dirs()
    if pkg is None:
        # this module was imported under another name: a bare package stands in for tpu_inference
        pkg = types.ModuleType(PACKAGE)
        pkg.__path__ = []
        sys.modules[PACKAGE] = pkg
    # `tpu_inference.kernels...` resolves through the package's __path__: when `pkg` is this example package
    # (the driver imports examples/tpu_inference as `tpu_inference`), its path gains the installed directory, so
    # the kernels' own `from tpu_inference.kernels... import` lines find the installed files
    pkg.__path__ = list(pkg.__path__) + [d for d in dirs if d not in pkg.__path__]
    for sub, make in (("logger", _logger_module), ("utils", _utils_module)):
        sys.modules[f"{PACKAGE}.{sub}"] = make()
        setattr(pkg, sub, sys.modules[f"{PACKAGE}.{sub}"])
    pkg._hlolint_ready = True
    # the generation helpers are patched before any kernel module binds them with `from ... import`
    _wrap_tpu_version(importlib.import_module(f"{PACKAGE}.kernels.ragged_paged_attention.v3.util"))
    _wrap_tpu_version(importlib.import_module(f"{PACKAGE}.kernels.quantized_matmul.tuned_block_sizes"))


def load(name: str) -> types.ModuleType:
    """`tpu_inference.kernels.<name>`, e.g. `load("fused_moe.v1.kernel")`."""
    _bootstrap()
    return importlib.import_module(f"{PACKAGE}.kernels.{name}")


def version() -> str | None:
    """The installed tpu-inference version (from its distribution metadata)."""
    from importlib import metadata

    try:
        return metadata.version("tpu-inference")
    except metadata.PackageNotFoundError:
        return None
