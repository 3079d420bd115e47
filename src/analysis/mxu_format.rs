//! `mxu-f32`, the analysis behind the rule of the same name: what it checks and how is [`DOC`]; why a hit matters,
//! with the measured cost, is the rule's `doc` (rules/core.yaml). The code: [`run`] reads each LLO program's MXU
//! ops (`semantic::llo::mxu_ops`), counts its `vmatmul`s and the f32 ones (`is_f32_format`), and skips a
//! program whose entry takes a narrow operand.

use super::{At, Hit, Options};
use crate::ir::Layer;
use crate::lint::Compilation;
use crate::semantic::llo::{self, MxuKind};

pub const NAME: &str = "mxu-f32";

/// What the analysis checks, how, and what a hit says: shown by `hlolint explain mxu-f32` and on the rule's page.
pub const DOC: &str = "Finds the LLO programs (a Pallas kernel's or an XLA computation's final bundles) whose MXU \
multiplies take f32 operands. It reads each program's MXU ops: a `vmatmul` is f32 when its every dtype segment is \
f32 (`vmatmul.f32.gmra.mxu0` on v5e, `vmatmul.mubr.f32...` on tpu7x and v6e). One hit per program, at its first such \
op, with the count of f32 `vmatmul` ops against all of the program's `vmatmul` ops (captures `f32_ops`, \
`matmul_ops`). Formats that mix f32 with another type (`f8e4m3b11.bf16`) are not f32 here, nor is a program that \
takes an fp8 or integer operand (the entry's `inlined_call_operand`s): a narrow matmul widened to f32 is \
the finding of `fp8-emulated` and `narrow-emulated`.";

const CAPTURES: &[&str] = &["computation", "f32_ops", "matmul_ops"];

pub static ANALYSIS: super::Analysis = super::Analysis {
    name: NAME,
    layers: &[Layer::Llo],
    doc: DOC,
    captures: CAPTURES,
    kinds: &[],
    options: &[],
    run,
    // reads MXU ops only
    llo: super::LloReads::CrossLayerOps,
    shares: None,
};

/// Every dtype segment of the mnemonic is f32 (`vmatmul.mubr.msk.f32.vlgmr…`); at least one.
fn is_f32_format(mnemonic: &str) -> bool {
    let dts: Vec<_> = mnemonic.split('.').skip(1).filter_map(llo::segment_dtype).collect();
    !dts.is_empty() && dts.iter().all(|d| d.name() == "f32")
}

/// The mnemonic up to its dtype segment: `vmatmul.mubr.f32` of `vmatmul.mubr.f32.vlgmr.msra.gmra.mrb[0].mxu0`.
fn shown(mnemonic: &str) -> String {
    let segs: Vec<&str> = mnemonic.split('.').collect();
    let last = segs.iter().rposition(|s| llo::segment_dtype(s).is_some()).unwrap_or(0);
    segs[..=last].join(".")
}

pub fn run(c: &Compilation<'_>, unit: usize, _opts: &Options) -> Vec<Hit> {
    let Some(u) = c.units.get(unit) else { return Vec::new() };
    if u.layer() != Layer::Llo {
        return Vec::new();
    }
    let m = &u.module;
    let entry = llo::entry_info(m);
    // A narrow request widened on the way in (XLA's fp8 dot on v5e: `vunpack` to f32, then `vmatmul.f32`) is
    // fp8-emulated's and int-widened's finding, with the right advice; f32 is the symptom there.
    if entry.operands.iter().any(|o| o.dtype.is_some_and(|d| crate::lint::target::Narrow::of(d).is_some())) {
        return Vec::new();
    }
    let matmuls: Vec<_> = llo::mxu_ops(m).into_iter().filter(|x| x.kind == MxuKind::Matmul).collect();
    let f32s: Vec<_> = matmuls.iter().filter(|x| is_f32_format(x.mnemonic)).collect();
    let Some(first) = f32s.first() else { return Vec::new() };
    let computation = entry.name.map(str::to_string).unwrap_or_else(|| m.name.to_string());
    let detail = format!(
        "`{computation}` multiplies f32 on the MXU: {} of its {} `vmatmul` ops take f32 operands (`{}`); an f32 op \
         carries half the rows of a bf16 one, so these matmuls issue at least twice the MXU ops bf16 operands \
         would (the performance model charges them at half the bf16 peak)",
        f32s.len(),
        matmuls.len(),
        shown(first.mnemonic),
    );
    vec![Hit::new(At::Op { unit, op: first.op }, "f32 operands on the MXU", detail)
        .capture("computation", computation)
        .capture("f32_ops", f32s.len().to_string())
        .capture("matmul_ops", matmuls.len().to_string())]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::crosslink::sweep;

    #[test]
    fn f32_formats_only() {
        assert!(is_f32_format("vmatmul.f32.gmra.mxu0"));
        assert!(is_f32_format("vmatmul.mubr.f32.vlgmr.msra.gmra.mrb"));
        assert!(!is_f32_format("vmatmul.bf16.gmra.mxu0"));
        assert!(!is_f32_format("vmatmul.mubr.msk.f8e4m3b11.bf16.gmra"));
        assert!(!is_f32_format("vmatmul.mubr.f8e4m3fn.gmra"));
        assert_eq!(shown("vmatmul.mubr.f32.vlgmr.msra.gmra.mrb[0].mxu0"), "vmatmul.mubr.f32");
        assert_eq!(shown("vmatmul.f32.gmra.mxu3"), "vmatmul.f32");
    }

    #[test]
    fn no_panic_on_any_test_input() {
        assert!(sweep::all_test_data(run) > 0, "the invalid cases among the inputs hit");
    }

    #[test]
    fn invalid_cases_hit_and_valid_cases_do_not() {
        sweep::assert_case_verdicts(NAME, run, CAPTURES);
    }
}
