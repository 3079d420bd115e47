//! `fp8-emulated` and `narrow-emulated`, the analyses behind the rules `fp8-emulated`, `fp8-not-native`,
//! `int-widened` and `int-not-native`: what they check, from which evidence, and what each kind means is [`DOC`]
//! and [`NARROW_DOC`]; why a hit matters is each rule's `doc` (rules/core.yaml).
//!
//! How the facts of [`DOC`] are read: at `post-finalize-llo` a Mosaic matmul is an `llo.vmatmul` whose data format
//! reads f8; an operand the user widened (`convert`/`arith.extf` from f8 before the dot) arrives as bf16/f32, so
//! it requests nothing narrow. "The highest layer" is a canonical HLO unit (see `crosslink`), else StableHLO, else
//! the kernel's Mosaic dump, else LLO.
//!
//! Along the data flow: `requests` finds the narrow matmuls each layer asks for, `evidence` gathers what the
//! lowest layers show the MXU gets (read with the vocabulary of [`super::data_format`]), and `decision` turns a
//! request and its evidence into a hit.

mod decision;
mod evidence;
mod requests;
#[cfg(test)]
mod tests;

use super::{Hit, Options};
use crate::ir::Layer;
use crate::lint::target::Narrow;
use crate::lint::Compilation;
use requests::{hlo_unit, llo_unit, mosaic_unit, stablehlo_unit};

pub const NAME: &str = "fp8-emulated";

/// What the analysis checks, how, and what a hit says: shown by `hlolint explain fp8-emulated` and on its rules'
/// pages.
pub const DOC: &str = "Finds fp8 matmuls (both operands f8 at the op: an HLO dot or convolution, also inside a \
fusion; a StableHLO dot_general; a Mosaic tpu.matmul; a Pallas custom call whose kernel multiplies f8 operands) \
that the target does not run natively. The lowest layer at hand decides: the LLO MXU ops of the linked \
computation (`vmatmul.mubr.f8e4m3fn` is native; `vmatmul.mubr.msk.f8e4m3b11.bf16`, `f32` or `bf16` formats are \
emulated), then Mosaic's `#llo.matmul_data_format` (`e4m3b` native, `e4m3b_to_bf16` emulated), then the target \
generation (`--target`, the driver's manifest, the folder name; fp8 is native on tpu7x only). A hit is reported \
once per matmul per compilation, at the highest-level op the user wrote, with the same fact in the other layers as \
related lines. A matmul whose operands the user widened to bf16 before the dot requested no fp8 and is not \
reported here. kind: `emulated` (the target has no fp8 MXU), `native-format-missing` (the target has one, but the \
MXU got another format), `unknown-target` (only with require_target: no target and no lower-layer proof).";

pub const CAPTURES: &[&str] = &["target", "mxu_format", "native_on", "kind"];

pub const NARROW_NAME: &str = "narrow-emulated";

/// narrow-emulated's [`DOC`]: what differs from fp8-emulated's, which it points to for the rest.
pub const NARROW_DOC: &str = "The analysis of fp8-emulated (`hlolint explain fp8-emulated`) for every narrow \
operand type: fp8 (any f8 variant), int8 (s8/u8) and int4 (s4/u4), both operands of one family at the op. The \
lowest layer decides: LLO MXU ops (vmatmul.*.s8, .s4, .f8e4m3fn, .f8e5m2 native; bf16, f32, or another family \
such as s8 for an int4 request, widened), then Mosaic's matmul_data_format (s8, s4, e4m3b, f8e5m2 native; \
e4m3b_to_bf16 or, for an integer request, bf16 or e4m3b widened), then the per-generation table (fp8 native on \
tpu7x; int8 and int4 on v6e, v5e, v5p; neither on v4). An integer matmul is proved only from a graph above the \
MXU ops (an HLO dot, a Mosaic tpu.matmul): its widened LLO form is an ordinary bf16/f32 matmul. narrow: `fp8`, \
`int8`, `int4`. kind: as fp8-emulated, plus `widened-to-int8` (int4 requested on a generation with an s4 mode, \
and the MXU got s8: what XLA dots do on every generation; Pallas kernels get s4).";

pub const NARROW_CAPTURES: &[&str] = &["target", "mxu_format", "native_on", "kind", "narrow"];

pub const OPTIONS: &[(&str, &str)] = &[(
    "require_target",
    "true: report a matmul as kind `unknown-target` when the target is unknown and no LLO or Mosaic stage shows the MXU format",
)];

/// Kinds of fp8-emulated's hits: what the MXU got instead of fp8.
pub const KINDS: &[&str] = &["emulated", "native-format-missing", "unknown-target"];

/// narrow-emulated's: the same, and int4 widened to the generation's int8 mode.
pub const NARROW_KINDS: &[&str] = &["emulated", "widened-to-int8", "native-format-missing", "unknown-target"];

/// How rule packs call the fp8 analysis (`analysis: fp8-emulated`).
pub static ANALYSIS: super::Analysis = super::Analysis {
    name: NAME,
    layers: &[Layer::Hlo, Layer::StableHlo, Layer::Mosaic, Layer::Llo],
    doc: DOC,
    captures: CAPTURES,
    kinds: KINDS,
    options: OPTIONS,
    run,
    // reads MXU formats only
    llo: super::LloReads::CrossLayerOps,
    shares: None,
};

/// The same for every narrow type (`analysis: narrow-emulated`).
pub static NARROW_ANALYSIS: super::Analysis = super::Analysis {
    name: NARROW_NAME,
    layers: &[Layer::Hlo, Layer::StableHlo, Layer::Mosaic, Layer::Llo],
    doc: NARROW_DOC,
    captures: NARROW_CAPTURES,
    kinds: NARROW_KINDS,
    options: OPTIONS,
    run: run_narrow,
    // reads MXU formats only
    llo: super::LloReads::CrossLayerOps,
    shares: None,
};

fn run_families(c: &Compilation<'_>, unit: usize, opts: &Options, ns: &[Narrow]) -> Vec<Hit> {
    let Some(u) = c.units.get(unit) else { return Vec::new() };
    match u.layer() {
        Layer::Hlo => hlo_unit(c, unit, opts, ns),
        Layer::StableHlo => stablehlo_unit(c, unit, opts, ns),
        Layer::Mosaic => mosaic_unit(c, unit, opts, ns),
        Layer::Llo => llo_unit(c, unit, opts, ns),
    }
}

/// The `fp8-emulated` entry point: fp8 matmuls only.
pub fn run(c: &Compilation<'_>, unit: usize, opts: &Options) -> Vec<Hit> {
    run_families(c, unit, opts, &[Narrow::Fp8])
}

/// The `narrow-emulated` entry point: every narrow family, each hit saying which (`narrow`).
fn run_narrow(c: &Compilation<'_>, unit: usize, opts: &Options) -> Vec<Hit> {
    let mut out = Vec::new();
    for n in Narrow::ALL {
        out.extend(run_families(c, unit, opts, &[n]).into_iter().map(|h| h.capture("narrow", n.name())));
    }
    out
}
