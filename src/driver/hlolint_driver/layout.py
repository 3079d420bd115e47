"""Targets, unit and file names, which dump files a unit keeps, and the dump flags: pure helpers, unit-tested
without jax."""

from __future__ import annotations

import os
import re

SCHEMA_VERSION = 2

# target name -> (platform, default topology)
TARGETS = {
    "tpu7x": ("tpu", "tpu7x:2x2x1"),
    "v6e": ("tpu", "v6e:2x2"),
    "v5e": ("tpu", "v5e:2x2"),
    "v5p": ("tpu", "v5p:2x2x1"),
    "v4": ("tpu", "v4:2x2x1"),
    "cpu": ("cpu", None),
}

# The dump names kept, as src/source/names.rs lists them (a Rust test, driver::tests, holds these to it).
LLO_PASS_REGEX = "final|memory-space-assignment"
MOSAIC_MARK = "-mosaic-dump-"  # libtpu's <ts>-NNNN-mosaic-dump-<kernel>-<stage>.txt
MAIN_HLO_REGEX = r"\.(cpu_)?after_optimizations\.txt$"  # the main module's optimized HLO among XLA's dumps
HLO_TXT_SUFFIX = "_hlo.txt"  # the driver's <version>[@<target>]_hlo.txt
KEEP_HLO_SUFFIXES = (  # XLA:CPU spells the last two `.cpu_after_optimizations...`
    ".before_optimizations.txt",
    "after_optimizations.txt",
    "after_optimizations-memory-usage-report.txt",
)
KEEP_MOSAIC_STAGES = ("original", "post-deserialization", "post-apply-vector-layout", "post-finalize-llo")
KEEP_LLO_MARKERS = (
    "final_bundles",  # also schedule-analysis_final_bundles
    "final_hlo-static-per-bundle-utilization",
    "memory-space-assignment",
    "TLP-hlo",
)
STAGE_DIR = ".hlolint-stage"
DEFAULT_TIMEOUT_S = 600.0


class UsageError(Exception):
    pass


class UnknownTarget(Exception):
    pass


def resolve_target(spec: str) -> dict:
    """'tpu7x' or 'tpu7x:2x2x1' -> {"target", "platform", "topology"}; raises UnknownTarget."""
    spec = spec.strip()
    if ":" in spec:
        family, dims = spec.split(":", 1)
        if family not in TARGETS or TARGETS[family][0] != "tpu" or not re.fullmatch(r"\d+(x\d+)+", dims):
            raise UnknownTarget(_unknown_target_message(spec))
        label = family if spec == TARGETS[family][1] else f"{family}-{dims}"
        return {"target": label, "platform": "tpu", "topology": spec}
    if spec not in TARGETS:
        raise UnknownTarget(_unknown_target_message(spec))
    platform, topology = TARGETS[spec]
    return {"target": spec, "platform": platform, "topology": topology}


def _unknown_target_message(spec: str) -> str:
    known = ", ".join(f"{k} ({v[1] or 'XLA:CPU'})" for k, v in TARGETS.items())
    return f"unknown target {spec!r}; known targets: {known}; or FAMILY:TOPOLOGY such as v5p:2x4x1"


def split_list(arg: str | None) -> list[str]:
    if not arg:
        return []
    out = []
    for item in arg.split(","):
        item = item.strip()
        if item and item not in out:
            out.append(item)
    return out


def select_versions(requested: list[str], available: list[str]) -> list[str]:
    """Requested versions in the order given (all available ones, in module order, when none requested)."""
    if not requested:
        return list(available)
    missing = [v for v in requested if v not in available]
    if missing:
        raise UsageError(
            f"unknown version(s) {', '.join(missing)}; the module defines: {', '.join(available) or '(none)'}"
        )
    return requested


def unit_name(version: str, target: str) -> str:
    return f"{version}@{target}"


def hlo_txt_name(version: str, target: str, several_targets: bool) -> str:
    return (unit_name(version, target) if several_targets else version) + HLO_TXT_SUFFIX


def keep_file(kind: str, name: str) -> bool:
    """Whether a dumped file is one a linter reads. kind: hlo | mosaic | llo."""
    if kind == "hlo":
        return name.endswith(KEEP_HLO_SUFFIXES)
    if kind == "mosaic":
        return MOSAIC_MARK in name and any(name.endswith(f"-{stage}.txt") for stage in KEEP_MOSAIC_STAGES)
    if kind == "llo":
        # `<late-initialization>` / `<late-finalization>` are libtpu's runtime programs, byte-identical for
        # every program on a target: nothing of the user's kernel is in them.
        if "-<late-" in name:
            return False
        return name.endswith(".txt") and any(marker in name for marker in KEEP_LLO_MARKERS)
    return False


def main_hlo_file(names: list[str], module_name: str | None) -> str | None:
    """The after_optimizations dump of the main module among HLO dump file names."""
    after = sorted(n for n in names if re.search(MAIN_HLO_REGEX, n))
    if module_name:
        pat = re.compile(r"^module_\d+\." + re.escape(module_name) + r"(\.|$)")
        hits = [n for n in after if pat.match(n)]
        if hits:
            return hits[-1]
    return after[-1] if len(after) == 1 else (after[0] if after else None)


def dump_env(platform: str, stage: str, all_stages: bool, base: dict | None = None) -> dict:
    """Environment for a worker compiling into the dump directories under `stage`."""
    env = dict(os.environ if base is None else base)
    env["TPU_SKIP_MDS_QUERY"] = "1"
    # Compile-only: the TPU target comes from the topology description; the default backend stays CPU so
    # no process tries to open a real TPU.
    env["JAX_PLATFORMS"] = "cpu"
    xla_flags = env.get("XLA_FLAGS", "")
    xla_flags = re.sub(r"--xla_dump_to=\S+", "", xla_flags).strip()
    env["XLA_FLAGS"] = (xla_flags + " " if xla_flags else "") + f"--xla_dump_to={os.path.join(stage, 'xla')}"
    if platform == "tpu":
        libtpu = env.get("LIBTPU_INIT_ARGS", "")
        libtpu = re.sub(r"--xla_(mosaic_dump_to|jf_dump_to|jf_dump_llo_text|jf_dump_llo_pass_label_regex)=\S+",
                        "", libtpu).strip()
        args = [
            f"--xla_mosaic_dump_to={os.path.join(stage, 'mosaic')}",
            f"--xla_jf_dump_to={os.path.join(stage, 'llo')}",
            "--xla_jf_dump_llo_text=true",
        ]
        if not all_stages:
            args.append(f"--xla_jf_dump_llo_pass_label_regex={LLO_PASS_REGEX}")
        env["LIBTPU_INIT_ARGS"] = " ".join(([libtpu] if libtpu else []) + args)
    return env
