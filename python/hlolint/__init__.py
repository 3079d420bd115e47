"""hlolint from Python: lint a JAX computation's compiled TPU program in a test (docs/python-api.md).

    import hlolint
    findings = hlolint.check(my_kernel, x, w, target="tpu7x")   # compile for tpu7x, lint, findings as objects
    hlolint.assert_clean(my_kernel, x, w, target="v6e")           # the same, failing a pytest test on findings

`python -m hlolint ...` runs the bundled `hlolint` executable. jax is needed only by `check`/`assert_clean`
(it is imported when they are called): the package installs no dependency.
"""

from __future__ import annotations

from ._binary import BinaryNotFound, find_hlolint_bin
from ._check import HlolintError, assert_clean, check
from ._findings import Finding, Findings, Location

__all__ = [
    "BinaryNotFound",
    "Finding",
    "Findings",
    "HlolintError",
    "Location",
    "assert_clean",
    "check",
    "find_hlolint_bin",
]
