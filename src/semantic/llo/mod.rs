//! What LLO bundle mnemonics mean: op classes, MXU ops and their data formats, DMAs, sync-flag ops, SMEM
//! accesses, the entry's operand placement, loops.
//!
//! Everything matches *families* of mnemonics, split on `.`, never one spelling: libtpu versions and TPU
//! generations print `vmatmul.mubr.f8e4m3fn.vlgmr.msra.gmra.mrb[0].mxu0` (tpu7x), `vmatmul.f32.gmra.mxu0`,
//! `vmatpush1.bf16.msra.mxu0`, `vmatprep.subr.f8e4m3.mxu0`, `dma.hbm_to_vmem`, `dma.general`, `dma.vmem_to_smem`,
//! `dma.done.wait`, `vsyncadd.remote`, `vwait.ge.trace`. The first segment names the family (trailing digits of
//! `vmatpush1` dropped); a segment that is a dtype (`f8e4m3fn`, `bf16`, `f32`, also the short `e4m3fn`) gives the
//! data format; a segment `mxuN` names the MXU. The op's printed arguments are read with `parse::llo::args`.

mod digest;
mod dma;
mod entry;
pub mod mnemonic;
mod mxu;
mod smem;

pub use digest::summarize;
pub use dma::{dma_op, dma_ops, sync_op, sync_ops, DmaOp, SyncKind, SyncOp};
pub use entry::{entry_info, CallOperand, EntryInfo};
pub use mxu::{conversions, is_native_fp8_mnemonic, matmul_formats, mxu_op, mxu_ops, Conversion, MxuKind, MxuOp};
pub use smem::{smem_accesses, smem_loads, SmemAccess};

use crate::ir::{DType, Module, OpId};
use mnemonic as mn;
use serde::Serialize;

/// The family: the first `.` segment with trailing digits dropped (`vmatpush1` → `vmatpush`).
pub fn family(mnemonic: &str) -> &str {
    let first = mnemonic.split('.').next().unwrap_or(mnemonic);
    let t = first.trim_end_matches(|c: char| c.is_ascii_digit());
    if t.is_empty() {
        first
    } else {
        t
    }
}

/// A mnemonic segment as a dtype: the HLO spelling, or the short fp8 forms (`e4m3fn`, `e5m2`, `f8e4m3b11`).
pub fn segment_dtype(seg: &str) -> Option<DType> {
    if let Some(d) = DType::from_hlo(seg) {
        return Some(d);
    }
    match seg {
        "f8e4m3b11" | "e4m3b11" => Some(DType::F8E4M3B11FNUZ),
        _ => seg.strip_prefix('e').filter(|s| s.as_bytes().first().is_some_and(u8::is_ascii_digit)).and_then(|s| {
            let long = format!("f8e{s}");
            DType::from_hlo(&long)
        }),
    }
}

/// The first dtype segment after the family, with its spelling.
pub fn mnemonic_dtype(mnemonic: &str) -> Option<(DType, &str)> {
    mnemonic.split('.').skip(1).find_map(|s| segment_dtype(s).map(|d| (d, s)))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum OpClass {
    Mxu,
    DmaStart,
    DmaWait,
    Sync,
    ScalarLoad,
    ScalarStore,
    VectorLoad,
    VectorStore,
    Branch,
    Phi,
    CallOperand,
    Loop,
    Other,
}

pub fn classify(mnemonic: &str) -> OpClass {
    let fam = family(mnemonic);
    let segs = || mnemonic.split('.');
    if mnemonic == mn::LOOP {
        return OpClass::Loop;
    }
    if fam == mn::DMA {
        return if segs().any(|s| s == mn::WAIT || s == "done") { OpClass::DmaWait } else { OpClass::DmaStart };
    }
    if is_mxu(mnemonic) {
        return OpClass::Mxu;
    }
    if [mn::VSYNC, mn::VWAIT, mn::SWAIT, mn::SSYNC].iter().any(|p| fam.starts_with(p)) {
        return OpClass::Sync;
    }
    match fam {
        mn::SLD => OpClass::ScalarLoad,
        mn::SST => OpClass::ScalarStore,
        mn::VLD => OpClass::VectorLoad,
        mn::VST => OpClass::VectorStore,
        mn::SBR | mn::BR | mn::SJMP | mn::SHALT => OpClass::Branch,
        f if f.ends_with(mn::PHI_SUFFIX) => OpClass::Phi,
        mn::INLINED_CALL_OPERAND => OpClass::CallOperand,
        _ => OpClass::Other,
    }
}

/// The LLO ops a lint reads when it does not read a whole LLO program: MXU matmuls (`vmatmul*`: their formats
/// decide whether fp8 or int8 is native, and prove the target) and the entry's `inlined_call_operand.*` ops (where
/// XLA placed each operand). A run whose rules read nothing else keeps only these of each LLO dump
/// (`parse::llo::Keep`); an analysis that reads more says so (`analysis::Analysis::llo`).
pub fn read_across_layers(mnemonic: &str) -> bool {
    // `family(m) == "vmatmul"` without splitting: this runs on every op of every LLO dump read.
    let vmatmul = mnemonic.strip_prefix(mn::VMATMUL).is_some_and(|r| {
        let first = r.split_once('.').map_or(r, |x| x.0);
        first.bytes().all(|b| b.is_ascii_digit())
    });
    vmatmul || mnemonic.strip_prefix(mn::INLINED_CALL_OPERAND).is_some_and(|r| r.starts_with('.'))
}

fn is_mxu(mnemonic: &str) -> bool {
    let fam = family(mnemonic);
    fam.starts_with(mn::VMAT) || fam == mn::VLLMR || mnemonic.split('.').any(|s| s.starts_with(mn::MXU_UNIT))
}

/// The loops enclosing `op`, innermost first.
pub fn enclosing_loops(m: &Module<'_>, op: OpId) -> Vec<OpId> {
    m.ancestors(op).filter(|&a| m.op(a).opcode == mn::LOOP).collect()
}

pub fn in_loop(m: &Module<'_>, op: OpId) -> bool {
    m.ancestors(op).any(|a| m.op(a).opcode == mn::LOOP)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_across_layers_is_the_vmatmul_family_and_the_entry_operands() {
        for m in
            ["vmatmul.mubr.f8e4m3fn.vlgmr.msra.gmra.mrb[0].mxu0", "vmatmul.f32.gmra.mxu0", "vmatmul2.bf16", "vmatmul"]
        {
            assert!(read_across_layers(m) && family(m) == "vmatmul", "{m}");
        }
        for m in ["inlined_call_operand.vmem", "inlined_call_operand.<no memory space>"] {
            assert!(read_across_layers(m), "{m}");
        }
        for m in ["vmatpush1.bf16.msra.mxu0", "vmatmulx.f32", "vpop.f32.mrf.mxu0", "dma.general", "sst", "vmatres.f32"]
        {
            assert!(!read_across_layers(m) && family(m) != "vmatmul", "{m}");
        }
    }
}
