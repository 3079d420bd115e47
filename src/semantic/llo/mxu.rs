//! MXU ops (`vmatmul`, `vmatpush`, `vmatprep`, result pops) with their data formats, and the vector conversions
//! that widen or narrow narrow types on the VPU.

use super::mnemonic as mn;
use super::{family, is_mxu, mnemonic_dtype, segment_dtype};
use crate::ir::{DType, Module, OpId};
use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MxuKind {
    /// `vmatmul*`: the multiply, streaming LHS rows through the loaded weights.
    Matmul,
    /// `vmatpush*`: pushes weights (RHS) into the MXU.
    Push,
    /// `vmatprep*`: prepares an operand (`subr`, `mubr`).
    Prep,
    /// `vpop ... mxuN`, `vmatres*`: pops results.
    Result,
    Other,
}

#[derive(Clone, Debug, Serialize)]
pub struct MxuOp<'a> {
    pub op: OpId,
    pub mnemonic: &'a str,
    pub kind: MxuKind,
    /// The data format from the mnemonic (`f8e4m3fn` in `vmatmul.mubr.f8e4m3fn...`), as spelled and as a dtype.
    pub format: Option<&'a str>,
    pub dtype: Option<DType>,
    /// `mxu0`, `mxu1`.
    pub unit: Option<&'a str>,
}

pub fn mxu_op<'a>(m: &Module<'a>, id: OpId) -> Option<MxuOp<'a>> {
    let op = m.op(id);
    if !is_mxu(op.opcode) {
        return None;
    }
    let fam = family(op.opcode);
    let kind = match fam {
        mn::VMATMUL => MxuKind::Matmul,
        mn::VMATPUSH => MxuKind::Push,
        mn::VMATPREP => MxuKind::Prep,
        f if f == mn::VPOP || f.starts_with(mn::VMATRES) => MxuKind::Result,
        _ => MxuKind::Other,
    };
    let dt = mnemonic_dtype(op.opcode);
    Some(MxuOp {
        op: id,
        mnemonic: op.opcode,
        kind,
        format: dt.map(|d| d.1),
        dtype: dt.map(|d| d.0),
        unit: op.opcode.split('.').find(|s| s.starts_with(mn::MXU_UNIT)),
    })
}

pub fn mxu_ops<'a>(m: &Module<'a>) -> Vec<MxuOp<'a>> {
    m.op_ids().filter_map(|id| mxu_op(m, id)).collect()
}

/// The matmul data formats used, with counts: `[("f8e4m3fn", 512)]` proves native fp8 on the MXU.
pub fn matmul_formats<'a>(m: &Module<'a>) -> Vec<(&'a str, usize)> {
    let mut out: Vec<(&'a str, usize)> = Vec::new();
    for x in mxu_ops(m).into_iter().filter(|x| x.kind == MxuKind::Matmul) {
        let f = x.format.unwrap_or("?");
        match out.iter_mut().find(|(k, _)| *k == f) {
            Some(e) => e.1 += 1,
            None => out.push((f, 1)),
        }
    }
    out
}

/// Does a MXU format say fp8 operands are native (`f8e4m3fn`), as opposed to widened in the MXU path
/// (`f8e4m3b11.bf16`) or not fp8 at all?
pub fn is_native_fp8_mnemonic(mnemonic: &str) -> bool {
    let dts: Vec<DType> = mnemonic.split('.').skip(1).filter_map(segment_dtype).collect();
    !dts.is_empty() && dts.iter().all(|d| d.is_f8())
}

/// A vector pack / unpack / convert with a dtype in its mnemonic: `vunpack.c.0.f8e4m3b11` (v5e/v6e widen fp8 on
/// the VPU before an f32 matmul), `vunpack.c.1.f8e4m3fn` (a user upcast), `vpack.c.e4m3fn` (narrowing to fp8).
#[derive(Clone, Debug, Serialize)]
pub struct Conversion<'a> {
    pub op: OpId,
    pub mnemonic: &'a str,
    /// `vpack`, `vunpack`, `vcvt`.
    pub family: &'a str,
    pub format: &'a str,
    pub dtype: DType,
}

pub fn conversions<'a>(m: &Module<'a>) -> Vec<Conversion<'a>> {
    let mut out = Vec::new();
    for id in m.op_ids() {
        let op = m.op(id);
        let fam = family(op.opcode);
        if ![mn::VPACK, mn::VUNPACK, mn::VCVT, mn::SCVT].contains(&fam) {
            continue;
        }
        // vcvt.s32.f32 names source and destination; the first dtype is the source.
        if let Some((dtype, format)) = mnemonic_dtype(op.opcode) {
            out.push(Conversion { op: id, mnemonic: op.opcode, family: fam, format, dtype });
        }
    }
    out
}
