//! The names compilers give their dump files, and which of them hlolint reads: the one list behind a directory
//! walk (`is_intermediate_stage`), the stage order's reading of Mosaic names (`lint::Stage`), the pre-commit hook's
//! `files:` pattern (`.pre-commit-hooks.yaml`) and the driver's keep-lists and file names (the `KEEP_*` tuples
//! and name constants of the `hlolint_driver` package's `layout` module, `src/driver/hlolint_driver/layout.py`) —
//! the last two are checked against these constants by tests (`tests/it/hook.rs`, `driver`'s tests), since YAML
//! and Python cannot import them.
//!
//! One small program leaves thousands of pass dumps (libtpu prints ~70 LLO stages per computation, Mosaic ~20
//! passes per kernel, XLA one file per HLO pass with `--xla_dump_hlo_pass_re`). Rules read the final ones: HLO
//! before/after optimizations, the Mosaic kernel as deserialized and after finalize-llo, LLO final bundles and
//! their tables. The names are libtpu's and XLA's own; an explicitly named file is always read.

use std::path::Path;

/// What marks a libtpu Mosaic dump: `<ts>-NNNN-mosaic-dump-<kernel>-<stage>.txt`.
pub const MOSAIC_MARK: &str = "-mosaic-dump-";

/// The Mosaic stages named by libtpu that the stage order tells apart, as written first (`original`,
/// `post-deserialization`: the kernel as Pallas wrote it) and last (`post-finalize-llo`); any other `post-…` pass
/// is a lowering in between.
pub const MOSAIC_ORIGINAL: &str = "original";
pub const MOSAIC_DESERIALIZED: &str = "post-deserialization";
pub const MOSAIC_FINALIZED: &str = "post-finalize-llo";

/// The Mosaic stages a directory walk reads.
pub const MOSAIC_READ: [&str; 2] = [MOSAIC_DESERIALIZED, MOSAIC_FINALIZED];

/// The Mosaic stages the driver keeps: those read, `original` (the same text as deserialized, its own stage) and
/// `post-apply-vector-layout` (the layouts a person debugging a kernel looks at first).
pub const MOSAIC_KEPT: [&str; 4] = [MOSAIC_ORIGINAL, MOSAIC_DESERIALIZED, "post-apply-vector-layout", MOSAIC_FINALIZED];

/// An LLO dump's stage a walk reads holds one of these (`final_bundles`, `schedule-analysis_final_bundles`,
/// `final_hlo-static-per-bundle-utilization`, `memory-space-assignment-…`); `hlo` is libtpu's copy of the
/// optimized HLO beside them (`…-TLP-hlo.txt`).
pub const LLO_READ_MARKS: [&str; 2] = ["final", "memory-space-assignment"];
pub const LLO_HLO_STAGE: &str = "hlo";

/// The pass label regex the driver gives libtpu (`--xla_jf_dump_llo_pass_label_regex`): the LLO stages read.
pub const LLO_PASS_REGEX: &str = "final|memory-space-assignment";

/// The LLO files the driver keeps (substrings of the name): the final bundles and their tables, the HLO copy.
pub const LLO_KEPT_MARKS: [&str; 4] =
    ["final_bundles", "final_hlo-static-per-bundle-utilization", "memory-space-assignment", "TLP-hlo"];

/// XLA's `--xla_dump_to` names: `module_NNNN.<name>.<stage>.txt`; the stages a walk reads hold one of these.
pub const HLO_MODULE_PREFIX: &str = "module_";
pub const HLO_READ_MARKS: [&str; 2] = ["after_optimizations", "before_optimizations"];

/// The HLO files the driver keeps (name endings; XLA:CPU spells the last two `.cpu_after_optimizations…`).
pub const HLO_KEPT_SUFFIXES: [&str; 3] =
    [".before_optimizations.txt", "after_optimizations.txt", "after_optimizations-memory-usage-report.txt"];

/// How the driver picks the main module's optimized HLO among XLA's dumps (a Python regex, in the syntax Rust's
/// `regex` shares): `module_NNNN.<name>.after_optimizations.txt`, XLA:CPU's `….cpu_after_optimizations.txt`.
pub const DRIVER_MAIN_HLO_REGEX: &str = r"\.(cpu_)?after_optimizations\.txt$";

/// The driver's copy of that HLO beside each version's dump folder: `<version>[@<target>]_hlo.txt`
/// (`v3@tpu7x_hlo.txt` beside `v3@tpu7x/`).
pub const DRIVER_HLO_SUFFIX: &str = "_hlo.txt";

/// Is this a dump file of an intermediate compiler stage, which a directory walk skips by default?
pub fn is_intermediate_stage(path: &Path) -> bool {
    let Some(name) = path.file_name().map(|n| n.to_string_lossy()) else { return false };
    if name.contains(MOSAIC_MARK) {
        return mosaic_stage(&name).is_none_or(|s| !MOSAIC_READ.contains(&s));
    }
    if let Some(f) = crate::parse::llo::llo_file_name(&name) {
        return !(LLO_READ_MARKS.iter().any(|m| f.stage.contains(m)) || f.stage == LLO_HLO_STAGE);
    }
    if name.starts_with(HLO_MODULE_PREFIX) && name.ends_with(".txt") {
        return !HLO_READ_MARKS.iter().any(|m| name.contains(m));
    }
    false
}

/// The stage of a Mosaic dump from its name: `…-mosaic-dump-<kernel>-<stage>.txt` → `post-finalize-llo`.
pub fn mosaic_stage(path: &str) -> Option<&str> {
    let name = path.rsplit(['/', '\\']).next()?;
    let rest = name.split_once(MOSAIC_MARK)?.1.strip_suffix(".txt")?;
    [MOSAIC_ORIGINAL, MOSAIC_DESERIALIZED, MOSAIC_FINALIZED]
        .into_iter()
        .find(|s| rest.ends_with(s))
        .or_else(|| rest.find("-post-").map(|k| &rest[k + 1..]))
}
