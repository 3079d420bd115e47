#!/usr/bin/env python3
"""Trim a driver output folder (hlolint_compile.py --out) to what the rules and the parser tests read.

    trim_fixtures.py OUT [--full-target tpu7x] [--finalize-everywhere v1,v2] [--deser-everywhere v1,v2]
                     [--merge-into DEST]

Used by scripts/regen_fixtures.sh for fixtures/jax_pallas_ops/, whose kernels dump ~19 MB per target with the
driver's default set. Policy (every unit):
  keep   hlo/*after_optimizations*.txt (+ memory-usage report; the kernels are decoded from its
         tpu_custom_call bytecode), llo/ final_bundles of the Pallas kernel computations (the tpu_custom_call
         names of the optimized HLO), llo/ memory-space-assignment-* (small)
  drop   OUT/<unit>_hlo.txt (a byte copy of the unit's after_optimizations HLO; the manifest's hlo_txt becomes
         null), mosaic original when byte-identical to post-deserialization (it always was with jax 0.10.2),
         mosaic post-apply-vector-layout (the biggest stage; no rule reads it), llo/ *TLP-hlo*, llo/ files of
         non-kernel computations (XLA fusions, copies, the TLP program), compile.log, list.log
On the --full-target units (default tpu7x) also keep stablehlo.mlir, hlo before_optimizations, the mosaic
post-deserialization and post-finalize-llo text dumps and the kernels' llo/ schedule-analysis_final_bundles and
final_hlo-static-per-bundle-utilization (parser tests). On the other targets the --finalize-everywhere versions
(the matmuls: the MXU data format on every generation) keep stablehlo.mlir and both Mosaic stages too; the
--deser-everywhere versions keep the Mosaic post-deserialization dump on every target (the kernel as written,
which the DMA analyses read: fixtures/tpu_inference). The
manifest's per-unit "files" lists are rewritten to what is left, and the manifest records the policy under
"trimmed".

--merge-into DEST (scripts/regen_fixtures.sh with VERSIONS=...): after trimming, move OUT's units into DEST, put
their results into DEST's manifest (replacing the same version and target; the run is listed under "merged") and
append the run's events to DEST/events.jsonl, so one version is added without recompiling the others.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import re
import shutil
import sys


def kernel_names(hlo_dir: str) -> set[str]:
    """Names of the tpu_custom_call instructions in the optimized HLO: the LLO files of the kernels carry them."""
    names = set()
    for f in os.listdir(hlo_dir):
        if "after_optimizations.txt" not in f:
            continue
        with open(os.path.join(hlo_dir, f), encoding="utf-8") as fh:
            for line in fh:
                if 'custom_call_target="tpu_custom_call"' in line:
                    m = re.match(r"\s*(?:ROOT\s+)?%?([\w.-]+)\s*=", line)
                    if m:
                        names.add(m.group(1))
    return names


def llo_computation(name: str) -> str | None:
    """`<ts>-<computation>-NN-<stage>.txt` → computation (which may contain '-' and '<…>')."""
    m = re.match(r"\d+-(.+?)-\d\d-[\w.-]+\.txt$", name)
    return m.group(1) if m else None


def trim_unit(unit: str, version: str, full: bool, finalize: bool, deser: bool = False) -> list[str]:
    dropped = []

    def drop(path):
        os.remove(path)
        dropped.append(os.path.relpath(path, unit))

    keep_text = full or finalize
    shlo = os.path.join(unit, "stablehlo.mlir")
    if os.path.exists(shlo) and not keep_text:
        drop(shlo)
    hlo = os.path.join(unit, "hlo")
    kernels = kernel_names(hlo) if os.path.isdir(hlo) else set()
    if os.path.isdir(hlo):
        for f in sorted(os.listdir(hlo)):
            if "before_optimizations" in f and not full:
                drop(os.path.join(hlo, f))
    mosaic = os.path.join(unit, "mosaic")
    if os.path.isdir(mosaic):
        files = sorted(os.listdir(mosaic))
        deser = [os.path.join(mosaic, f) for f in files if f.endswith("-post-deserialization.txt")]
        # compared before anything is deleted: the post-deserialization dump sorts first
        repeats = {f for f in files
                   if f.endswith("-original.txt")
                   and any(filecmp.cmp(os.path.join(mosaic, f), d, shallow=False) for d in deser)}
        for f in files:
            path = os.path.join(mosaic, f)
            if "sparsecore" in f:
                continue  # XLA's own SparseCore modules (sc_tpu dialect, v6e/v5e): a few KB, other MLIR to parse
            if f in repeats:
                drop(path)
            elif "-post-apply-vector-layout" in f:
                drop(path)
            elif not keep_text and not (deser and f.endswith("-post-deserialization.txt")):
                drop(path)
        if not os.listdir(mosaic):
            os.rmdir(mosaic)
    llo = os.path.join(unit, "llo")
    if os.path.isdir(llo):
        for f in sorted(os.listdir(llo)):
            path = os.path.join(llo, f)
            if "memory-space-assignment" in f:
                # a header and a line or two: nothing to parse, and the same bytes for every small program
                if os.path.getsize(path) < 64:
                    drop(path)
                continue
            if "TLP-hlo" in f or llo_computation(f) not in kernels:
                drop(path)
            elif ("schedule-analysis" in f or "per-bundle-utilization" in f) and not full:
                drop(path)
    for f in ("compile.log",):
        if os.path.exists(os.path.join(unit, f)):
            drop(os.path.join(unit, f))
    return dropped


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--full-target", default="tpu7x", help="comma-separated targets that keep more (parser tests)")
    ap.add_argument("--finalize-everywhere", default="", help="versions whose post-finalize-llo is kept on all targets")
    ap.add_argument("--deser-everywhere", default="",
                    help="comma-separated versions whose Mosaic post-deserialization dump is kept on all targets")
    ap.add_argument("--merge-into", metavar="DEST",
                    help="then move OUT's units into the fixture folder DEST and merge the manifest and events")
    args = ap.parse_args(argv)
    full_targets = {t for t in args.full_target.split(",") if t}
    finalize = {v for v in args.finalize_everywhere.split(",") if v}
    deser = {v for v in args.deser_everywhere.split(",") if v}
    manifest_path = os.path.join(args.out, "manifest.json")
    with open(manifest_path, encoding="utf-8") as fh:
        manifest = json.load(fh)
    total = 0
    for r in manifest["results"]:
        if not r.get("dir"):
            continue
        unit = os.path.join(args.out, r["dir"])
        if not os.path.isdir(unit):
            continue
        total += len(trim_unit(unit, r["version"], r["target"] in full_targets, r["version"] in finalize,
                               r["version"] in deser))
        if r.get("hlo_txt") and os.path.exists(os.path.join(args.out, r["hlo_txt"])):
            os.remove(os.path.join(args.out, r["hlo_txt"]))
            total += 1
        r["hlo_txt"] = None
        r["files"] = {sub: sorted(os.listdir(os.path.join(unit, sub)))
                      for sub in ("hlo", "mosaic", "llo") if os.path.isdir(os.path.join(unit, sub))}
    list_log = os.path.join(args.out, "list.log")
    if os.path.exists(list_log):
        os.remove(list_log)
    manifest["trimmed"] = {"by": "scripts/trim_fixtures.py", "full_targets": sorted(full_targets),
                           "finalize_everywhere": sorted(finalize), "deser_everywhere": sorted(deser)}
    with open(manifest_path, "w", encoding="utf-8") as fh:
        json.dump(manifest, fh, indent=2)
        fh.write("\n")
    print(f"trim_fixtures: {args.out}: dropped {total} file(s)")
    if args.merge_into:
        merge_into(args.out, args.merge_into)
    return 0


def merge_into(out: str, dest: str) -> None:
    """Move the (trimmed) units of the run in `out` into the fixture folder `dest`, whose manifest gets their
    results (replacing those of the same version and target) and whose events.jsonl gets the run's events.

    For adding a version to a fixture set without recompiling (and renaming the files of) every other unit."""
    with open(os.path.join(out, "manifest.json"), encoding="utf-8") as fh:
        new = json.load(fh)
    dest_manifest = os.path.join(dest, "manifest.json")
    with open(dest_manifest, encoding="utf-8") as fh:
        old = json.load(fh)
    if new["module"] != old["module"] or new.get("packages") != old.get("packages"):
        raise SystemExit(f"trim_fixtures: {out} ({new['module']}, {new.get('packages')}) does not match "
                         f"{dest} ({old['module']}, {old.get('packages')})")
    known = {t["target"] for t in old["targets"]}
    unknown = [t["target"] for t in new["targets"] if t["target"] not in known]
    if unknown:
        raise SystemExit(f"trim_fixtures: targets {unknown} are not in {dest_manifest}")
    for r in new["results"]:
        if r.get("dir"):
            target_dir = os.path.join(dest, r["dir"])
            if os.path.isdir(target_dir):
                shutil.rmtree(target_dir)
            shutil.move(os.path.join(out, r["dir"]), target_dir)
    replaced = {(r["version"], r["target"]) for r in new["results"]}
    results = [r for r in old["results"] if (r["version"], r["target"]) not in replaced] + new["results"]
    versions = old["versions"] + [v for v in new["versions"] if v not in old["versions"]]
    # the driver's order: target by target, versions in module order
    t_order = [t["target"] for t in old["targets"]]
    results.sort(key=lambda r: (t_order.index(r["target"]), versions.index(r["version"])))
    old["versions"] = versions
    old["results"] = results
    old["status"] = "ok" if all(r["status"] == "ok" for r in results) else "error"
    old.setdefault("merged", []).append({"created": new["created"], "versions": new["versions"],
                                         "targets": [t["target"] for t in new["targets"]],
                                         "elapsed_s": new["elapsed_s"], "status": new["status"]})
    with open(dest_manifest, "w", encoding="utf-8") as fh:
        json.dump(old, fh, indent=2)
        fh.write("\n")
    events = os.path.join(out, "events.jsonl")
    if os.path.exists(events):
        with open(events, encoding="utf-8") as src, open(os.path.join(dest, "events.jsonl"), "a", encoding="utf-8") as dst:
            dst.write(src.read())
    print(f"trim_fixtures: merged {len(new['results'])} unit(s) of {', '.join(new['versions'])} into {dest}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
