//! The TPU generation a compilation was built for, and what it can do natively.
//!
//! Rules about narrow types depend on it: the same Pallas kernel runs fp8 on the MXU of tpu7x and is emulated
//! through bf16 on v6e/v5e, while int8 is native on v6e/v5e and widened to bf16 on tpu7x (`GENERATIONS`, with the
//! compiled evidence in docs/tpu-generations.md). The target is taken from, in order: the user's `--target`; the driver's
//! `manifest.json` (the device kind of the version's result); the dump directory's `@target` suffix
//! (`v3@tpu7x/`, `fp8_dot@v6e/`); the LLO dumps themselves (a native fp8 MXU format proves an fp8 generation).

use super::compilation::Compilation;
use crate::ir::{DType, Layer};
use serde::Serialize;
use std::path::Path;

/// A known compile target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Generation {
    /// `tpu7x`, `v6e`, `v5e`, `v5p`, `v4`, `cpu`.
    pub name: &'static str,
    /// jax's `device_kind` for it.
    pub device_kind: &'static str,
    /// The MXU takes fp8 operands (`vmatmul.*.f8e4m3fn`, `f8e5m2`); `None` for CPU (no MXU).
    pub native_fp8: Option<bool>,
    /// The MXU takes int8 operands (`vmatmul.*.s8`).
    pub native_int8: Option<bool>,
    /// The MXU takes int4 operands (`vmatmul.*.s4`).
    pub native_int4: Option<bool>,
}

/// What each generation's MXU multiplies natively, from the hardware table (`semantic::tpu`, the `native` key of
/// each generation) followed by `cpu`. Measured with libtpu 0.0.42.1 compile-only targets, XLA dots and Pallas
/// kernels alike (docs/tpu-generations.md, `examples/narrow_types`): tpu7x has fp8 and no integer mode (int8 →
/// bf16, int4 → f8e4m3fn in Pallas, f32 in XLA); v6e, v5e and v5p run s8 and s4 (XLA dots widen int4 to s8; Pallas
/// kernels get s4) and widen fp8; v4 has neither (XLA: f32; Mosaic refuses i8, i4 and fp8).
pub static GENERATIONS: std::sync::LazyLock<Vec<Generation>> = std::sync::LazyLock::new(|| {
    let mut out: Vec<Generation> = TABLE
        .chips
        .iter()
        .map(|c| Generation {
            name: c.name.as_str(),
            device_kind: c.device_kind.as_deref().unwrap_or(c.name.as_str()),
            native_fp8: c.native.fp8,
            native_int8: c.native.int8,
            native_int4: c.native.int4,
        })
        .collect();
    out.push(Generation { name: "cpu", device_kind: "cpu", native_fp8: None, native_int8: None, native_int4: None });
    out
});

/// The built-in hardware table the generations are read from (the names borrow from it).
static TABLE: std::sync::LazyLock<crate::semantic::tpu::Hardware> =
    std::sync::LazyLock::new(crate::semantic::tpu::Hardware::builtin);

/// A narrow element type family a matmul can ask the MXU for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Narrow {
    Fp8,
    Int8,
    Int4,
}

impl Narrow {
    pub const ALL: [Narrow; 3] = [Narrow::Fp8, Narrow::Int8, Narrow::Int4];

    /// The family of an element type: every f8 variant, s8/u8, s4/u4.
    pub fn of(d: DType) -> Option<Narrow> {
        match d {
            _ if d.is_f8() => Some(Narrow::Fp8),
            DType::S8 | DType::U8 => Some(Narrow::Int8),
            DType::S4 | DType::U4 => Some(Narrow::Int4),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Narrow::Fp8 => "fp8",
            Narrow::Int8 => "int8",
            Narrow::Int4 => "int4",
        }
    }
}

impl Generation {
    /// Does this generation's MXU take `n` operands natively? `None`: no MXU.
    pub fn native(&self, n: Narrow) -> Option<bool> {
        match n {
            Narrow::Fp8 => self.native_fp8,
            Narrow::Int8 => self.native_int8,
            Narrow::Int4 => self.native_int4,
        }
    }
}

/// The generations whose MXU runs `n` natively, for messages: "v6e, v5e, v5p, v4".
pub fn native_generations(n: Narrow) -> String {
    GENERATIONS.iter().filter(|g| g.native(n) == Some(true)).map(|g| g.name).collect::<Vec<_>>().join(", ")
}

/// The generations whose MXU runs fp8 natively, for messages: "tpu7x".
pub fn native_fp8_generations() -> String {
    native_generations(Narrow::Fp8)
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
    r.device_kind.as_deref().and_then(Target::lookup).or_else(|| Target::lookup(&r.target))
}

/// The driver's record of the version compiled into `dir` (`…/v3@tpu7x` or `…/v3`), from the `manifest.json`
/// beside it: target, device kind, the rule pack the kernel module names for the version (`rules`), ...
pub fn manifest_result(dir: &Path) -> Option<super::manifest::UnitResult> {
    let name = dir.file_name()?.to_str()?;
    super::Manifest::beside(dir)?.result_for_dir(name).cloned()
}

/// A native fp8 MXU matmul in an LLO dump (`vmatmul.mubr.f8e4m3fn`: every dtype in the mnemonic is fp8) proves an
/// fp8 generation (tpu7x today). `vmatmul.mubr.msk.f8e4m3b11.bf16` does not: v5e/v6e widen fp8 to bf16 on the way
/// into the MXU. Absence proves nothing.
fn from_llo(c: &Compilation<'_>) -> Option<Generation> {
    use crate::semantic::llo::{is_native_fp8_mnemonic, mxu_ops, MxuKind};
    for (_, u) in c.units_of(Layer::Llo) {
        for mx in mxu_ops(&u.module) {
            if mx.kind == MxuKind::Matmul && is_native_fp8_mnemonic(mx.mnemonic) {
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

    /// The generations are the hardware table's, in its order, then `cpu`; the table's `native` keys give the same
    /// matrix the rules were written against.
    #[test]
    fn generations_come_from_the_hardware_table() {
        let names: Vec<&str> = GENERATIONS.iter().map(|g| g.name).collect();
        assert_eq!(names, ["tpu7x", "v6e", "v5e", "v5p", "v4", "cpu"]);
        let kinds: Vec<&str> = GENERATIONS.iter().map(|g| g.device_kind).collect();
        assert_eq!(kinds, ["TPU7x", "TPU v6 lite", "TPU v5 lite", "TPU v5", "TPU v4", "cpu"]);
        let v4 = Target::lookup("v4").unwrap();
        assert_eq!((v4.native_fp8, v4.native_int8, v4.native_int4), (Some(false), Some(false), Some(false)));
    }

    #[test]
    fn the_narrow_table() {
        assert_eq!(native_generations(Narrow::Fp8), "tpu7x");
        assert_eq!(native_generations(Narrow::Int8), "v6e, v5e, v5p");
        assert_eq!(native_generations(Narrow::Int4), "v6e, v5e, v5p");
        assert_eq!(Narrow::of(DType::F8E5M2), Some(Narrow::Fp8));
        assert_eq!(Narrow::of(DType::U8), Some(Narrow::Int8));
        assert_eq!(Narrow::of(DType::S4), Some(Narrow::Int4));
        assert_eq!(Narrow::of(DType::BF16), None);
        let cpu = Target::lookup("cpu").unwrap();
        assert_eq!(cpu.native(Narrow::Int8), None);
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
