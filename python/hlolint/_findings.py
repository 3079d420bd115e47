"""Findings as Python objects, read from the binary's JSON report (`--format json`, docs/python-api.md)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

# Severities in the binary's order; `info` findings do not fail a run (exit code 0), nor `assert_clean`.
SEVERITIES = ("info", "warning", "error")


@dataclass(frozen=True)
class Location:
    """A position in a file: 1-based line and column (column None when the report has none)."""

    file: str
    line: int
    column: int | None = None

    def __str__(self) -> str:
        return f"{self.file}:{self.line}" + (f":{self.column}" if self.column else "")


@dataclass(frozen=True)
class Finding:
    """One finding of a rule.

    `python` is the line of the user's Python source the compiler recorded for the op (None when the dumps carry
    none); `dump` the op in the compiler dump it was found in (relative to the output folder of the compile);
    `compilation` the dump folder (`<name>@<target>`)."""

    code: str
    rule: str
    severity: str
    message: str
    python: Location | None
    dump: Location | None
    kernel: str | None = None
    compilation: str | None = None
    target: str | None = None
    help: str | None = None
    label: str | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)

    def __str__(self) -> str:
        where = self.python or self.dump
        head = f"{where}: " if where else ""
        text = f"{head}{self.code} [{self.severity}] {self.message}"
        if self.python and self.dump:
            text += f"\n    dump: {self.dump}"
        return text


def _relative(path: str, base: str | None) -> str:
    """`path` relative to `base` when it is inside it (the dump folder, the working directory), else as given."""
    if not base:
        return path
    try:
        rel = os.path.relpath(os.path.abspath(path), os.path.abspath(base))
    except ValueError:  # another drive on Windows
        return path
    return path if rel.startswith(os.pardir) else rel


def finding_from_json(obj: dict, out: str | None) -> Finding:
    """A finding of the JSON report; dump paths made relative to `out`, Python paths to the working directory."""
    py = obj.get("python")
    python = Location(_relative(py["file"], os.getcwd()), int(py["line"]), py.get("column")) if py else None
    dump = None
    path, start = obj.get("path"), obj.get("start")
    if path:
        dump = Location(_relative(path, out), int(start["line"]) if start else 0, start.get("column") if start else None)
    compilation = obj.get("compilation")
    return Finding(
        code=obj["code"],
        rule=obj.get("rule", ""),
        severity=obj.get("severity", "error"),
        message=obj.get("message", ""),
        python=python,
        dump=dump,
        kernel=obj.get("kernel"),
        compilation=os.path.basename(compilation.rstrip("/\\")) if compilation else None,
        target=obj.get("target"),
        help=obj.get("help"),
        label=obj.get("label"),
        notes=tuple(n if isinstance(n, str) else str(n) for n in obj.get("notes", [])),
    )


class Findings(list):
    """The findings of one `check`, in the report's order, with what the run was: the target, the output folder
    (None when it was a temporary one, removed), and the run's warnings (a manifest or config the binary flagged)."""

    def __init__(self, findings=(), *, target: str | None = None, out: str | None = None,
                 warnings: tuple[str, ...] = ()):
        super().__init__(findings)
        self.target = target
        self.out = out
        self.warnings = warnings

    def at_least(self, severity: str) -> list[Finding]:
        """The findings of `severity` or worse."""
        floor = SEVERITIES.index(severity)
        return [f for f in self if f.severity in SEVERITIES and SEVERITIES.index(f.severity) >= floor]

    def codes(self) -> set[str]:
        return {f.code for f in self}

    def __repr__(self) -> str:
        return f"Findings({list.__repr__(self)}, target={self.target!r})"
