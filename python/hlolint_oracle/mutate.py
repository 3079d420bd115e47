"""Planted bugs: a kernel module loaded again from its own source with one edit, under a new module name.

An edit is a (old, new) pair of source text that must occur exactly once in the module, so a kernel release
that moved the line fails loudly instead of running the unmutated kernel. The original module is untouched
(the mutant is a separate module object; its relative imports resolve in the original's package).
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import sys
import types


@dataclasses.dataclass(frozen=True)
class Mutation:
    """A planted bug. `expect`: what the oracle must show for it (any of: "semaphore", "never_executed", "race",
    "out_of_bounds", "hang")."""

    name: str
    module: str
    edits: tuple[tuple[str, str], ...]
    doc: str
    expect: tuple[str, ...] = ("semaphore", "never_executed", "race")
    # scalar inputs the bug needs to show (a caller's own scalars still win); None: the kernel's defaults
    scalars: dict | None = None


class MutationDoesNotApply(ValueError):
    pass


_cache: dict[str, types.ModuleType] = {}


def load(mutation: Mutation) -> types.ModuleType:
    """The module `mutation.module` with its edits applied (cached per mutation)."""
    if mutation.name in _cache:
        return _cache[mutation.name]
    original = importlib.import_module(mutation.module)
    spec = importlib.util.find_spec(mutation.module)
    source = spec.loader.get_source(mutation.module)
    for old, new in mutation.edits:
        count = source.count(old)
        if count != 1:
            raise MutationDoesNotApply(f"{mutation.name}: the edited text occurs {count} times in "
                                       f"{mutation.module} (expected once): {old!r}")
        source = source.replace(old, new)
    name = f"{mutation.module}__mutant_{mutation.name}"
    module = types.ModuleType(name)
    module.__file__ = original.__file__
    module.__package__ = original.__package__
    module.__dict__["__mutation__"] = mutation
    sys.modules[name] = module
    # compiled under the original path: tracebacks and race reports name its lines (edits keep line counts)
    exec(compile(source, original.__file__, "exec"), module.__dict__)
    _cache[mutation.name] = module
    return module
