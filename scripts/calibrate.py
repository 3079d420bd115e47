#!/usr/bin/env python3
"""The performance model against published TPU measurements: predicted ÷ measured per calibration point.

  .venv/bin/python scripts/calibrate.py [--dumps DIR] [--recompile] [--points FILE] [--json]

Reads bench/calibration/points.toml (the published measured times, where they come from and what they include),
compiles every point's program with the driver (`src/driver/hlolint_compile.py --module <module> --target
<generation>` into DIR/<module's folder name>, one driver output folder per module; only the versions missing
there, so a second run only predicts), runs the release hlolint over the dumps (`--summary --format json`, the
performance model's facts) and prints per point: measured, the source's host dispatch removed, predicted,
predicted ÷ measured, and the model's terms. A source whose harness calls the program again and again with the
same arrays (`same_arguments = true`) is compared with the model's time for such a repeated launch
(`perf.program.repeated_us`: cross-program prefetches find their operand on chip), else with `predicted_us`.
Then, per source, whether the predicted order of each program's block-size variants is the measured one.

A benchmark, not a test: it asserts nothing. Dumps go to DIR (default $HLOLINT_CALIBRATION_DUMPS or
/tmp/hlolint-calibration; several MB per point, so they are not kept in the repository). libtpu allows one compile
at a time on the machine (/tmp/libtpu_lockfile): when the driver fails on the lockfile, rerun.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tomllib
from collections import defaultdict
from pathlib import Path

from repo_paths import ROOT, target_dir

POINTS = ROOT / "bench" / "calibration" / "points.toml"


def load(path: Path):
    with open(path, "rb") as f:
        doc = tomllib.load(f)
    return doc["sources"], doc["points"]


def folder(p, sources) -> str:
    """A point's dump folder under DIR: the driver's output folder of its module, then `<version>@<generation>`
    (the driver keeps one module's results per output folder)."""
    return f"{Path(p['module']).name}/{p['version']}@{sources[p['source']]['generation']}"


def compile_missing(points, sources, dumps: Path, recompile: bool):
    """One driver run per (module, generation), for the versions without a dump folder yet."""
    todo = defaultdict(list)
    for p in points:
        gen = sources[p["source"]]["generation"]
        # a failed compile leaves the folder with its compile.log only
        if recompile or not (dumps / folder(p, sources) / "llo").is_dir():
            todo[(p["module"], gen)].append(p["version"])
    for (module, gen), versions in todo.items():
        print(f"calibrate: compiling {len(versions)} version(s) of {module} for {gen}", file=sys.stderr)
        env = dict(os.environ, TPU_SKIP_MDS_QUERY="1")
        cmd = [sys.executable, str(ROOT / "src" / "driver" / "hlolint_compile.py"), "--module", str(ROOT / module),
               "--target", gen, "--out", str(dumps / Path(module).name), "--versions", ",".join(versions)]
        r = subprocess.run(cmd, env=env, capture_output=True, text=True)
        for line in r.stdout.splitlines():
            if '"status":"error"' in line.replace(" ", ""):
                print(f"calibrate: {line}", file=sys.stderr)


def hlolint_exe() -> Path:
    subprocess.run(["cargo", "build", "-j1", "--release", "--quiet"], cwd=ROOT, check=True)
    return target_dir() / "release" / "hlolint"


def predictions(exe: Path, dumps: Path, dirs: list[str]) -> dict[str, dict]:
    """The performance model's facts of each compilation folder, by folder name."""
    args = [str(exe), "--summary", "--format", "json", "--rules", "none", *(str(dumps / d) for d in dirs)]
    r = subprocess.run(args, capture_output=True, text=True)
    if not r.stdout.strip():
        sys.exit(f"calibrate: hlolint gave no report (exit {r.returncode}): {r.stderr[-2000:]}")
    out = {}
    for c in json.loads(r.stdout)["compilations"]:
        d = Path(c["dir"])
        out[f"{d.parent.name}/{d.name}"] = c.get("perf") or {}
    return out


def mid(iv):
    return None if iv is None else (iv["min"] + iv["max"]) / 2


def fmt_us(v):
    return "—" if v is None else (f"{v:,.1f}" if v < 1e4 else f"{v:,.0f}")


def terms(perf: dict) -> str:
    """The model's terms: summed over the kernels, bundles issued / MXU / memory / DMA transfers / exposed; then
    what the whole program adds around them (XLA's own programs, waits for its async copies, the top-level
    program's bundles)."""
    ks = perf.get("kernels") or []
    parts = []
    for name in ("compute_us", "mxu_us", "memory_us", "transfer_us", "exposed_us"):
        vals = [mid(k["time"].get(name)) if isinstance(k["time"].get(name), dict) else k["time"].get(name)
                for k in ks]
        vals = [v for v in vals if v is not None]
        parts.append(fmt_us(sum(vals)) if vals else "—")
    prog = perf.get("program") or {}
    xla = [mid(prog.get(k)) for k in ("xla_us", "copy_waits_us", "orchestration_us") if prog.get(k)]
    parts.append(fmt_us(sum(xla)) if xla else "—")
    return " / ".join(parts)


def untimed(perf: dict) -> str | None:
    """Why the model gave a compilation no time: the whole program's first reason, else a kernel's."""
    prog = perf.get("program") or {}
    reasons = list(prog.get("unknown") or [])
    for k in perf.get("kernels") or []:
        reasons += [f"kernel `{k['name']}`: {u}" for u in (k.get("time") or {}).get("unknown") or []]
    return reasons[0] if reasons else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dumps", default=os.environ.get("HLOLINT_CALIBRATION_DUMPS", "/tmp/hlolint-calibration"))
    ap.add_argument("--points", default=str(POINTS))
    ap.add_argument("--recompile", action="store_true", help="compile every point again")
    ap.add_argument("--no-compile", action="store_true", help="predict from the dumps already in --dumps")
    ap.add_argument("--json", action="store_true", help="one JSON object per point instead of the table")
    ap.add_argument("--hlolint", help="predict with this hlolint binary (another version of the model) instead of "
                    "building this checkout's")
    args = ap.parse_args()
    sources, points = load(Path(args.points))
    dumps = Path(args.dumps)
    dumps.mkdir(parents=True, exist_ok=True)
    if not args.no_compile:
        compile_missing(points, sources, dumps, args.recompile)
    dirs = [folder(p, sources) for p in points]
    present = [d for d in dirs if (dumps / d / "llo").is_dir()]
    facts = predictions(Path(args.hlolint) if args.hlolint else hlolint_exe(), dumps, present)

    rows = []
    for p, d in zip(points, dirs):
        src = sources[p["source"]]
        device = p["measured_us"] - (src["dispatch_us"] if "host-dispatch" in p.get("includes", []) else 0.0)
        perf = facts.get(d, {})
        repeated = (perf.get("program") or {}).get("repeated_us") if src.get("same_arguments") else None
        pred = mid(repeated or perf.get("predicted_us"))
        ratio = pred / device if pred is not None and device > 0 else None
        rows.append({"id": p["id"], "source": p["source"], "generation": src["generation"],
                     "measured_us": p["measured_us"], "device_us": device, "predicted_us": pred, "ratio": ratio,
                     "includes": p.get("includes", []), "data_dependent": p.get("data_dependent", False),
                     "terms": terms(perf) if perf else "—", "program": p["version"],
                     "untimed": None if pred is not None else untimed(perf)})
    if args.json:
        for r in rows:
            print(json.dumps(r))
        return
    head = f"{'point':<20} {'gen':<5} {'measured':>10} {'− dispatch':>11} {'predicted':>10} {'pred÷meas':>9}  " \
           f"kernels: bundles / MXU / memory / transfers / exposed; XLA around them (µs)"
    print(head)
    print("-" * len(head))
    for r in rows:
        flag = " data-dependent" if r["data_dependent"] else ""
        flag += " +xla-copy" if "xla-copy" in r["includes"] else ""
        ratio = "—" if r["ratio"] is None else f"{r['ratio']:.2f}"
        print(f"{r['id']:<20} {r['generation']:<5} {fmt_us(r['measured_us']):>10} {fmt_us(r['device_us']):>11} "
              f"{fmt_us(r['predicted_us']):>10} {ratio:>9}  {r['terms']}{flag}")
    judged = [r for r in rows if r["ratio"] is not None and not r["data_dependent"]]
    inside = [r for r in judged if 0.8 <= r["ratio"] <= 1.25]
    missing = [r for r in rows if r["ratio"] is None]
    print(f"\n{len(inside)} of {len(judged)} data-independent points with a prediction within 0.8–1.25"
          + (f"; no prediction: {', '.join(r['id'] for r in missing)}" if missing else ""))
    for r in missing:
        print(f"  {r['id']}: {r['untimed'] or 'no dumps'}")
    ranking(rows)


def ranking(rows):
    """Per program and size, the block-size variants in measured and in predicted order."""
    groups = defaultdict(list)
    for r in rows:
        parts = r["program"].rsplit("_b", 1)
        if len(parts) == 2 and r["predicted_us"] is not None:
            groups[parts[0]].append(r)
    agree = 0
    for key, rs in sorted(groups.items()):
        if len(rs) < 2:
            continue
        by_meas = [r["id"] for r in sorted(rs, key=lambda r: r["device_us"])]
        by_pred = [r["id"] for r in sorted(rs, key=lambda r: r["predicted_us"])]
        same = by_meas == by_pred
        agree += same
        if not same:
            print(f"ranking differs for {key}: measured {by_meas}, predicted {by_pred}")
    n = sum(1 for rs in groups.values() if len(rs) >= 2)
    print(f"block-size ranking: predicted = measured for {agree} of {n} program × size groups")


if __name__ == "__main__":
    main()
