"""A failure of the user's code or of the compiler as a record: its kind, its message, and the user's frames (the
line to show), found in the traceback or, for errors raised inside XLA, in the message."""

from __future__ import annotations

import os
import re
import traceback


_PY_LOC = re.compile(r"""(?P<file>(?:[A-Za-z]:)?[^\s:"'()<>\[\]]+\.py)"?(?::|", line |\s+line\s+)(?P<line>\d+)""")


def _under(path: str, roots: list[str]) -> bool:
    try:
        p = os.path.realpath(path)
    except (OSError, ValueError):
        return False
    for root in roots:
        r = os.path.realpath(root)
        if p == r or p.startswith(r.rstrip(os.sep) + os.sep):
            return True
    return False


def _exception_chain(exc: BaseException) -> list[BaseException]:
    chain, seen = [], set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        chain.append(exc)
        exc = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
    return chain


def user_frames(exc: BaseException, roots: list[str]) -> list[dict]:
    """Frames of the user's module in the traceback (outermost first), through chained exceptions."""
    frames, seen = [], set()
    for e in reversed(_exception_chain(exc)):
        for fs in traceback.extract_tb(e.__traceback__):
            # jax appends the MLIR locations of a Mosaic error as synthetic frames: the same lines again, with
            # names like 'dot_general/dot_general"(callsite(callsite("_dot_nt'; keep one frame per file:line
            if not _under(fs.filename, roots) or (fs.filename, fs.lineno) in seen:
                continue
            seen.add((fs.filename, fs.lineno))
            frames.append({"file": fs.filename, "line": fs.lineno, "function": _clean_function(fs.name),
                           "source": (fs.line or "").strip()})
    return frames


def _clean_function(name: str) -> str:
    if re.fullmatch(r"[\w.<>$-]+", name or ""):
        return name
    found = re.findall(r'"([A-Za-z_]\w*)', name or "")
    return found[-1] if found else name


def message_locations(message: str, roots: list[str]) -> list[dict]:
    """file:line mentions of the user's module inside an error message (Pallas/Mosaic put them there)."""
    out = []
    for m in _PY_LOC.finditer(message):
        f, line = m.group("file"), int(m.group("line"))
        if _under(f, roots) and not any(o["file"] == f and o["line"] == line for o in out):
            out.append({"file": f, "line": line})
    return out


def _source_line(path: str, line: int) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for i, text in enumerate(fh, 1):
                if i == line:
                    return text.strip()
    except OSError:
        pass
    return ""


def error_record(exc: BaseException, roots: list[str], stage: str, kind: str | None = None) -> dict:
    """A JSON-able record of a failure: kind, type, stage, message and the user's file:line."""
    message = str(exc) or repr(exc)
    etype = type(exc).__name__
    if kind is None:
        kind = classify_error(exc, stage)
    frames = user_frames(exc, roots)
    locs = message_locations(message, roots)
    rec = {"kind": kind, "type": etype, "stage": stage, "message": message[:20000],
           "file": None, "line": None, "function": None, "source": None,
           "frames": frames, "message_locations": locs}
    # Prefer the innermost user frame of the traceback (the call that failed); when the traceback has none
    # (compile errors raised from inside XLA), the first location the message names (e.g. the kernel line).
    if frames:
        rec.update({k: frames[-1][k] for k in ("file", "line", "function", "source")})
    elif locs:
        rec.update(file=locs[0]["file"], line=locs[0]["line"], source=_source_line(locs[0]["file"], locs[0]["line"]))
    return rec


def classify_error(exc: BaseException, stage: str) -> str:
    chain = _exception_chain(exc)
    names = {type(e).__name__ for e in chain}
    if any(isinstance(e, ModuleNotFoundError) and (e.name or "").split(".")[0] in ("jax", "jaxlib", "libtpu")
           for e in chain):
        return "missing_dependency"
    if stage == "import":
        return "import"
    if "MosaicError" in names or any(re.search(r"MosaicError|Mosaic failed", str(e)[:300]) for e in chain):
        return "mosaic"
    if stage == "lower":
        return "lowering"
    if stage == "compile":
        return "compile"
    return stage


def plain_error(kind: str, stage: str, message: str, etype: str | None = None) -> dict:
    return {"kind": kind, "type": etype, "stage": stage, "message": message, "file": None, "line": None,
            "function": None, "source": None, "frames": [], "message_locations": []}
