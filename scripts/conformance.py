#!/usr/bin/env python3
"""Compare hlolint's HLO parser with XLA's own parser, file by file.

For every HLO text file given (default: every HLO file under ../shared/corpus, or $HLOLINT_CORPUS, plus
tests/data/hlo/features.hlo), it parses the file with XLA (`jax._src.lib.xla_client.hlo.hlo_module_from_text`) and
with `hlolint graph`, and compares computation names, instruction counts, instruction names and opcodes, operand
edges (in order) and called computations. Prints one line per file and a total; exits 1 on any disagreement.

One documented normalization: XLA desugars an async op written as `X-start`/`X-done` (no `calls=`) into
`async-start`/`async-done` calling a computation `async_wrapped.N` that it synthesizes; hlolint keeps the op as
written (opcode `X-start`). Such pairs count as agreeing when XLA's wrapped root is `X`, and the synthesized
computations (which are not in the text) are not required of hlolint.

Usage: scripts/conformance.py [--hlolint PATH] [FILE_OR_DIR ...]
Needs jaxlib (installed by scripts/setup-python.sh into .venv; run with .venv/bin/python).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from repo_paths import ROOT, corpus as corpus_dir, target_dir

# XLA's HloOpcode enum names whose text spelling is not the kebab-case of the name.
OPCODE_EXCEPTIONS = {
    "kExpm1": "exponential-minus-one",
    "kExp": "exponential",
    "kLog1p": "log-plus-one",
    "kSin": "sine",
    "kCos": "cosine",
    "kClz": "count-leading-zeros",
    "kPopulationCount": "popcnt",
    "kOptimizationBarrier": "opt-barrier",
    "kTopK": "topk",
    "kAtan2": "atan2",
    "kCbrt": "cbrt",
    "kRsqrt": "rsqrt",
    "kSqrt": "sqrt",
    "kMulhi": "mulhi",
    "kErf": "erf",
}


def opcode_text(op) -> str:
    name = str(op).split(".")[-1]
    if name in OPCODE_EXCEPTIONS:
        return OPCODE_EXCEPTIONS[name]
    core = name[1:] if name.startswith("k") else name
    return re.sub(r"(?<!^)(?=[A-Z])", "-", core).lower()


class XlaRejects(Exception):
    pass


def xla_graph(text: str):
    from jax._src.lib import xla_client as xc

    try:
        module = xc.hlo.hlo_module_from_text(text)
    except Exception as e:
        raise XlaRejects(str(e)) from e
    comps = {}
    for comp in module.computations():
        instrs = {}
        for ins in comp.instructions():
            opcode = opcode_text(ins.opcode)
            if opcode in ("async-start", "async-update", "async-done"):
                # Sugar `X-start(...)` is desugared by XLA into `async-start` calling a synthesized computation whose
                # root is `X`; hlolint keeps `X-start` as written. Record X so the two can be compared.
                root = ins.async_wrapped_root
                root = root() if callable(root) else root
                if root is not None:
                    opcode = (opcode, opcode_text(root.opcode))
            instrs[ins.name] = (opcode, [o.name for o in ins.operands()])
        comps[comp.name] = instrs
    return comps


def hlolint_graph(exe: str, path: Path):
    out = subprocess.run([exe, "graph", str(path)], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip()[-2000:])
    dump = json.loads(out.stdout.splitlines()[0])
    comps = {}
    for comp in dump["computations"]:
        comps[comp["name"]] = {i["name"]: (i["opcode"], i["operands"]) for i in comp["instructions"]}
    return comps


def same_opcode(ours: str, theirs) -> bool:
    if isinstance(theirs, tuple):  # (async-start, wrapped root opcode)
        generic, wrapped = theirs
        suffix = generic.split("-", 1)[1]
        return ours == generic or ours == f"{wrapped}-{suffix}"
    return ours == theirs


def compare(ours, theirs):
    problems = []
    # Computations XLA synthesized for async sugar (`slice-start` without `calls=`) do not exist in the text.
    sugared = sum(1 for c in ours.values() for op, _ in c.values() if op.endswith("-start") and op != "async-start")
    synthesized = [n for n in set(theirs) - set(ours) if n.startswith("async_wrapped")]
    if len(synthesized) <= sugared:
        theirs = {k: v for k, v in theirs.items() if k not in synthesized}
    if set(ours) != set(theirs):
        only_ours = sorted(set(ours) - set(theirs))[:5]
        only_xla = sorted(set(theirs) - set(ours))[:5]
        problems.append(f"computations differ: only hlolint {only_ours}, only XLA {only_xla}")
    for name in sorted(set(ours) & set(theirs)):
        a, b = ours[name], theirs[name]
        if len(a) != len(b):
            problems.append(f"{name}: {len(a)} instructions vs XLA {len(b)}")
        for iname in sorted(set(a) & set(b)):
            if not same_opcode(a[iname][0], b[iname][0]):
                problems.append(f"{name}/{iname}: opcode {a[iname][0]} vs XLA {b[iname][0]}")
            if a[iname][1] != b[iname][1]:
                problems.append(f"{name}/{iname}: operands {a[iname][1]} vs XLA {b[iname][1]}")
        missing = sorted(set(b) - set(a))[:3]
        if missing:
            problems.append(f"{name}: hlolint lacks {missing}")
    return problems


def is_hlo(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(64).lstrip().startswith(b"HloModule")
    except OSError:
        return False


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    # the release binary where cargo put it (scripts/test builds it just before), as bench.py and calibrate.py find it
    target = target_dir()
    ap.add_argument("--hlolint", default=os.environ.get("HLOLINT", str(target / "release" / "hlolint")))
    ap.add_argument("paths", nargs="*")
    args = ap.parse_args()
    paths = [Path(p) for p in args.paths]
    if not paths:
        # ../shared/corpus, or wherever HLOLINT_CORPUS says (as in bench.py)
        corpus = corpus_dir()
        if corpus.is_dir():
            paths.append(corpus)
        else:
            print(f"conformance: {corpus} is absent; checking the project's own HLO test files only")
        paths.append(ROOT / "tests/data/hlo/features.hlo")
    files = []
    for p in paths:
        files.extend(sorted(f for f in p.rglob("*") if f.is_file() and is_hlo(f)) if p.is_dir() else [p])

    agree = disagree = 0
    for f in files:
        text = f.read_text()
        t0 = time.perf_counter()
        try:
            theirs = xla_graph(text)
        except XlaRejects as e:  # XLA's parser rejects the file: nothing to compare against.
            print(f"FAIL {f}: XLA's parser rejects it: {str(e).splitlines()[0][:200]}")
            disagree += 1
            continue
        t_xla = time.perf_counter() - t0
        try:
            ours = hlolint_graph(args.hlolint, f)
        except Exception as e:
            print(f"FAIL {f}: hlolint rejects it: {e}")
            disagree += 1
            continue
        problems = compare(ours, theirs)
        n = sum(len(c) for c in theirs.values())
        if problems:
            disagree += 1
            print(f"FAIL {f}: {len(problems)} difference(s)")
            for p in problems[:10]:
                print(f"     {p}")
        else:
            agree += 1
            print(f"ok   {f}: {len(theirs)} computations, {n} instructions (XLA parse {t_xla * 1000:.0f} ms)")
    total = agree + disagree
    pct = 100.0 * agree / total if total else 0.0
    print(f"conformance: {agree}/{total} files agree with XLA's parser ({pct:.1f}%)")
    print(f"{agree} passed, {disagree} failed")
    sys.exit(0 if disagree == 0 and total > 0 else 1)


if __name__ == "__main__":
    main()
