//! The TPU generation a compilation was built for, and what it can do natively.
//!
//! Rules about fp8 depend on it: the same Pallas kernel runs fp8 on the MXU of tpu7x and is emulated through bf16
//! on v6e/v5e (DESIGN.md §3). The target is taken from, in order: the user's `--target`; the driver's
//! `manifest.json` (the device kind of the version's result); the dump directory's `@target` suffix
//! (`v3@tpu7x/`, `fp8_dot@v6e/`); the LLO dumps themselves (a native fp8 MXU format proves an fp8 generation).

use super::compilation::Compilation;
use crate::ir::Layer;
use serde::Serialize;
use std::path::Path;

/// A known compile target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Generation {
    /// `tpu7x`, `v6e`, `v5e`, `v5p`, `v4`, `cpu`.
    pub name: &'static str,
    /// jax's `device_kind` for it.
    pub device_kind: &'static str,
    /// The MXU takes fp8 operands (`vmatmul.*.f8e4m3fn`); `None` for CPU (no MXU).
    pub native_fp8: Option<bool>,
}

pub const GENERATIONS: &[Generation] = &[
    Generation { name: "tpu7x", device_kind: "TPU7x", native_fp8: Some(true) },
    Generation { name: "v6e", device_kind: "TPU v6 lite", native_fp8: Some(false) },
    Generation { name: "v5e", device_kind: "TPU v5 lite", native_fp8: Some(false) },
    Generation { name: "v5p", device_kind: "TPU v5", native_fp8: Some(false) },
    Generation { name: "v4", device_kind: "TPU v4", native_fp8: Some(false) },
    Generation { name: "cpu", device_kind: "cpu", native_fp8: None },
];

/// The generations whose MXU runs fp8 natively, for messages: "tpu7x".
pub fn native_fp8_generations() -> String {
    GENERATIONS.iter().filter(|g| g.native_fp8 == Some(true)).map(|g| g.name).collect::<Vec<_>>().join(", ")
}

/// How the target was learned (said in findings that depend on it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TargetSource {
    Flag,
    Manifest,
    DirName,
    LloEvidence,
}

impl TargetSource {
    pub fn describe(self) -> &'static str {
        match self {
            TargetSource::Flag => "--target",
            TargetSource::Manifest => "the driver's manifest",
            TargetSource::DirName => "the folder name",
            TargetSource::LloEvidence => "the LLO's native fp8 MXU ops",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Target {
    pub generation: Generation,
    pub source: TargetSource,
}

impl Target {
    pub fn name(&self) -> &'static str {
        self.generation.name
    }

    /// A generation by name (`tpu7x`, `v6e`, ...) or device kind (`TPU v6 lite`); case-insensitive.
    pub fn lookup(name: &str) -> Option<Generation> {
        let n = name.trim();
        GENERATIONS.iter().copied().find(|g| g.name.eq_ignore_ascii_case(n) || g.device_kind.eq_ignore_ascii_case(n))
    }

    pub fn detect(flag: Option<&str>, dir: &Path, c: &Compilation<'_>) -> Option<Target> {
        if let Some(g) = flag.and_then(Target::lookup) {
            return Some(Target { generation: g, source: TargetSource::Flag });
        }
        if let Some(g) = from_manifest(dir) {
            return Some(Target { generation: g, source: TargetSource::Manifest });
        }
        if let Some(g) = from_dir_name(dir) {
            return Some(Target { generation: g, source: TargetSource::DirName });
        }
        from_llo(c).map(|g| Target { generation: g, source: TargetSource::LloEvidence })
    }
}

/// `…/v3@tpu7x` → tpu7x (the driver's and the corpus's naming).
fn from_dir_name(dir: &Path) -> Option<Generation> {
    let name = dir.file_name()?.to_str()?;
    Target::lookup(name.rsplit_once('@')?.1)
}

/// The driver writes `manifest.json` next to the version folders; the result for this folder's version and
/// target names its device kind.
fn from_manifest(dir: &Path) -> Option<Generation> {
    let r = manifest_result(dir)?;
    let kind = r.get("device_kind").and_then(|v| v.as_str());
    kind.and_then(Target::lookup).or_else(|| r.get("target").and_then(|v| v.as_str()).and_then(Target::lookup))
}

/// The driver's record of the version compiled into `dir` (`…/v3@tpu7x` or `…/v3`), from the `manifest.json`
/// beside it: target, device kind, the rule pack the kernel module names for the version (`rules`), ...
pub fn manifest_result(dir: &Path) -> Option<serde_json::Value> {
    let name = dir.file_name()?.to_str()?;
    let text = std::fs::read_to_string(dir.parent()?.join("manifest.json")).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    let (version, target) = match name.rsplit_once('@') {
        Some((v, t)) => (v, Some(t)),
        None => (name, None),
    };
    let results = json.get("results")?.as_array()?;
    results
        .iter()
        .find(|r| {
            r.get("version").and_then(|v| v.as_str()) == Some(version)
                && target.is_none_or(|t| r.get("target").and_then(|x| x.as_str()) == Some(t))
        })
        .cloned()
}

/// A native fp8 MXU matmul in an LLO dump (`vmatmul.mubr.f8e4m3fn`: every dtype in the mnemonic is fp8) proves an
/// fp8 generation (tpu7x today). `vmatmul.mubr.msk.f8e4m3b11.bf16` does not: v5e/v6e widen fp8 to bf16 on the way
/// into the MXU. Absence proves nothing.
fn from_llo(c: &Compilation<'_>) -> Option<Generation> {
    use crate::parse::llo::view::{mxu_ops, MxuKind};
    for (_, u) in c.units_of(Layer::Llo) {
        for mx in mxu_ops(&u.module) {
            if mx.kind == MxuKind::Matmul && crate::analysis::fp8::is_native_fp8_mnemonic(mx.mnemonic) {
                return GENERATIONS.iter().copied().find(|g| g.native_fp8 == Some(true));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lint::compilation::{parse_texts, source_file, Parsed};

    fn llo(mnemonic: &str) -> String {
        format!(
            "= control target key start\nLH: loop header\n= control target key end\n\n     0   :  {{ %s1_s0 = inlined_call_operand.vmem [shape: f8e4m3fn[8,128], index: 0, kind: input, shape index: {{}}] }} /* entry bundle: %fusion = fusion(%x) */\n   0x1   :  {{ %2 = {mnemonic}.gmra.mxu0 %s1_s0 }}\n"
        )
    }

    fn target_of(dir: &str, flag: Option<&str>, files: &[(&str, String)]) -> Option<(&'static str, TargetSource)> {
        let files: Vec<_> = files.iter().map(|(p, t)| source_file(p, t)).collect();
        let parsed: Vec<Parsed> = parse_texts(&files).into_iter().filter_map(Result::ok).collect();
        assert_eq!(parsed.len(), files.len());
        let c = Compilation::new(dir.to_string(), &parsed, flag);
        c.target.map(|t| (t.name(), t.source))
    }

    #[test]
    fn flag_then_dir_name_then_llo_evidence() {
        let native = [("d/llo/1-fusion-03-final_bundles.txt", llo("vmatmul.mubr.f8e4m3fn"))];
        assert_eq!(target_of("nowhere/case@v6e", Some("v5e"), &native), Some(("v5e", TargetSource::Flag)));
        assert_eq!(target_of("nowhere/case@v6e", Some("TPU v6 lite"), &[]), Some(("v6e", TargetSource::Flag)));
        assert_eq!(target_of("nowhere/case@v6e", None, &native), Some(("v6e", TargetSource::DirName)));
        assert_eq!(target_of("nowhere/case", None, &native), Some(("tpu7x", TargetSource::LloEvidence)));
    }

    #[test]
    fn the_manifest_names_the_device_kind() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/fp8_matmul_2d/v5e/v1@v5e");
        assert_eq!(target_of(&dir.display().to_string(), None, &[]), Some(("v5e", TargetSource::Manifest)));
    }

    /// v5e/v6e feed fp8 to the MXU widened (`f8e4m3b11.bf16`), or run an f32/bf16 matmul: no proof of a generation.
    #[test]
    fn widened_or_wide_mxu_formats_prove_nothing() {
        for m in ["vmatmul.mubr.msk.f8e4m3b11.bf16", "vmatmul.msk.f8e4m3b11.bf16", "vmatmul.mubr.f32", "vmatmul.bf16"] {
            let f = [("d/llo/1-fusion-03-final_bundles.txt", llo(m))];
            assert_eq!(target_of("nowhere/case", None, &f), None, "{m}");
        }
    }
}
