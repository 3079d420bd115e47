//! Which compiler stage a unit shows, and so which unit speaks when several show the same program or kernel.
//!
//! A compilation holds each program and kernel several times: HLO before and after optimizations, StableHLO, a
//! kernel as written and after each Mosaic lowering pass, a kernel body decoded from the HLO. A finding comes from
//! the best stage that shows it; [`Stage`]'s order (best first) is that policy, written once.

use crate::ir::Layer;
use crate::source::names;

/// A compiler stage, best first: the order in which stages speak for a program (HLO family) or a kernel (Mosaic).
/// Comparing a program stage with a kernel stage means nothing; both kinds are in one type so that every unit has
/// one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stage {
    /// XLA's optimized, scheduled HLO: the program that runs (and the instruction names the LLO uses).
    OptimizedHlo,
    /// HLO before optimizations (not scheduled).
    HloBeforeOptimizations,
    /// StableHLO, as jax lowered it.
    StableHlo,
    /// A Mosaic kernel as written: libtpu's `original` and `post-deserialization` dumps, a body decoded from a
    /// `tpu_custom_call`, a Mosaic file whose name says no stage.
    KernelAsWritten,
    /// A later Mosaic lowering pass (`post-apply-vector-layout`, ...).
    KernelLowered,
    /// The last Mosaic stage, `post-finalize-llo`.
    KernelFinalized,
    /// LLO bundles (the only LLO stage rules read).
    LloBundles,
}

impl Stage {
    /// Every stage, best first (the order ARCHITECTURE.md states).
    pub const ALL: [Stage; 7] = [
        Stage::OptimizedHlo,
        Stage::HloBeforeOptimizations,
        Stage::StableHlo,
        Stage::KernelAsWritten,
        Stage::KernelLowered,
        Stage::KernelFinalized,
        Stage::LloBundles,
    ];

    /// The stage of a graph of `layer` read from `path`: an HLO module by its `is_scheduled` header (what XLA
    /// prints after optimizations), a Mosaic dump by the stage its file name ends with.
    pub fn of(layer: Layer, path: &str, scheduled: bool) -> Stage {
        match layer {
            Layer::Hlo if scheduled => Stage::OptimizedHlo,
            Layer::Hlo => Stage::HloBeforeOptimizations,
            Layer::StableHlo => Stage::StableHlo,
            Layer::Mosaic => Stage::of_mosaic(crate::source::mosaic_stage(path)),
            Layer::Llo => Stage::LloBundles,
        }
    }

    /// A Mosaic dump's stage from the name libtpu gives it (`post-finalize-llo`); no name: taken as written.
    fn of_mosaic(name: Option<&str>) -> Stage {
        match name {
            None | Some(names::MOSAIC_ORIGINAL | names::MOSAIC_DESERIALIZED) => Stage::KernelAsWritten,
            Some(names::MOSAIC_FINALIZED) => Stage::KernelFinalized,
            Some(_) => Stage::KernelLowered,
        }
    }

    /// How ARCHITECTURE.md and messages name it.
    pub fn describe(self) -> &'static str {
        match self {
            Stage::OptimizedHlo => "optimized HLO",
            Stage::HloBeforeOptimizations => "HLO before optimizations",
            Stage::StableHlo => "StableHLO",
            Stage::KernelAsWritten => "the kernel as written",
            Stage::KernelLowered => "later Mosaic stages",
            Stage::KernelFinalized => "post-finalize-llo",
            Stage::LloBundles => "LLO bundles",
        }
    }
}

/// Is `path` in a dump's LLO folder, or named as libtpu names LLO dumps (its `…-TLP-hlo.txt` is a copy of the
/// optimized HLO)?
pub fn in_llo_folder(path: &str) -> bool {
    let file = path.rsplit(['/', '\\']).next().unwrap_or(path);
    path.contains("/llo/") || path.contains("\\llo\\") || crate::parse::llo::llo_file_name(file).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stages_are_ordered_best_first() {
        let mut sorted = Stage::ALL;
        sorted.sort();
        assert_eq!(sorted, Stage::ALL);
        assert!(
            Stage::OptimizedHlo < Stage::HloBeforeOptimizations && Stage::HloBeforeOptimizations < Stage::StableHlo
        );
        assert!(Stage::KernelAsWritten < Stage::KernelLowered && Stage::KernelLowered < Stage::KernelFinalized);
    }

    /// ARCHITECTURE.md names the stages in the order `Stage` has (in one sentence, which may wrap: Markdown reads a
    /// line break inside a paragraph as a space).
    #[test]
    fn architecture_states_the_same_order() {
        let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/ARCHITECTURE.md")).unwrap();
        let doc = doc.split_whitespace().collect::<Vec<_>>().join(" ");
        let names: Vec<&str> = Stage::ALL.iter().map(|s| s.describe()).collect();
        let line = format!("`lint::Stage`, best first: {}", names.join(", "));
        assert!(doc.contains(&line), "ARCHITECTURE.md should say: {line}");
    }

    #[test]
    fn stages_from_names_and_headers() {
        let mosaic = |p: &str| Stage::of(Layer::Mosaic, p, false);
        assert_eq!(mosaic("d/mosaic/1-mosaic-dump-k-post-deserialization.txt"), Stage::KernelAsWritten);
        assert_eq!(mosaic("d/mosaic/1-mosaic-dump-k-original.txt"), Stage::KernelAsWritten);
        assert_eq!(mosaic("d/mosaic/1-mosaic-dump-k-post-apply-vector-layout.txt"), Stage::KernelLowered);
        assert_eq!(mosaic("d/mosaic/1-mosaic-dump-k-post-finalize-llo.txt"), Stage::KernelFinalized);
        assert_eq!(mosaic("kernel.mlir"), Stage::KernelAsWritten);
        assert_eq!(Stage::of(Layer::Hlo, "x_hlo.txt", true), Stage::OptimizedHlo);
        assert_eq!(Stage::of(Layer::Hlo, "module.before_optimizations.txt", false), Stage::HloBeforeOptimizations);
        assert!(in_llo_folder("d/llo/1-fusion-TLP-hlo.txt") && !in_llo_folder("d/hlo/module.after_optimizations.txt"));
    }
}
