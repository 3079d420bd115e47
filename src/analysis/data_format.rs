//! The MXU data-format vocabulary of the lowest layers: an LLO `vmatmul`'s dtype segments (`LloFormat`,
//! `vmatmul.mubr.msk.f8e4m3b11.bf16` → `f8e4m3b11.bf16`) and Mosaic's `#llo.matmul_data_format<…>` names
//! (`e4m3b` native, `e4m3b_to_bf16` widened). The fp8 and narrow-type analyses read the evidence with it, and the
//! performance model the formats its MXU term charges.

use crate::ir::{DType, Module};
use crate::lint::target::Narrow;
use crate::semantic::llo::{self, MxuKind};

/// One MXU matmul format of an LLO computation, with its count.
#[derive(Clone, Debug, PartialEq)]
pub struct LloFormat {
    /// The mnemonic up to its last dtype segment: `vmatmul.mubr.msk.f8e4m3b11.bf16`, `vmatmul.mubr.f32`.
    pub shown: String,
    /// The dtype segments: `f8e4m3b11.bf16`, `f8e4m3fn`, `f32`.
    pub format: String,
    pub count: usize,
    /// Every dtype segment is an fp8 type: the MXU multiplies fp8.
    pub native: bool,
    /// The widest non-fp8 type the MXU gets (`bf16`, `f32`).
    pub wide: Option<&'static str>,
    /// The dtype segments as types, for other narrow families.
    pub dtypes: Vec<DType>,
}

impl LloFormat {
    /// Every dtype segment is of family `n`: the MXU multiplies `n` (`s8` for int8, `f8e5m2` for fp8).
    pub fn native_for(&self, n: Narrow) -> bool {
        !self.dtypes.is_empty() && self.dtypes.iter().all(|d| Narrow::of(*d) == Some(n))
    }

    /// The type the MXU gets instead of `n`: the last segment of another family (`bf16`, `f32`, `s8`).
    pub fn wide_for(&self, n: Narrow) -> Option<&'static str> {
        self.dtypes.iter().rev().find(|d| Narrow::of(**d) != Some(n)).map(|d| d.name())
    }
}

/// The MXU matmul formats of an LLO module (vmatmul ops only: pushes and pops follow them).
pub fn llo_formats(m: &Module<'_>) -> Vec<LloFormat> {
    let mut out: Vec<LloFormat> = Vec::new();

    for x in llo::mxu_ops(m).into_iter().filter(|x| x.kind == MxuKind::Matmul) {
        let segs: Vec<&str> = x.mnemonic.split('.').collect();
        let dts: Vec<(usize, DType)> =
            segs.iter().enumerate().skip(1).filter_map(|(i, s)| llo::segment_dtype(s).map(|d| (i, d))).collect();
        let last = dts.last().map(|d| d.0).unwrap_or(0);
        let shown = segs[..=last.min(segs.len().saturating_sub(1))].join(".");
        let format = dts.iter().map(|(i, _)| segs[*i]).collect::<Vec<_>>().join(".");
        let native = !dts.is_empty() && dts.iter().all(|(_, d)| d.is_f8());
        let wide = dts.iter().rev().find(|(_, d)| !d.is_f8()).map(|(_, d)| d.name());
        match out.iter_mut().find(|f| f.shown == shown) {
            Some(f) => f.count += 1,
            None => {
                let dtypes = dts.iter().map(|d| d.1).collect();
                out.push(LloFormat { shown, format, count: 1, native, wide, dtypes })
            }
        }
    }
    out
}

/// `e4m3b`, `e5m2`, `f8e4m3fn`, `e4m3b_to_bf16`: a Mosaic matmul data format with fp8 input.
pub fn is_f8_data_format(f: &str) -> bool {
    let b = f.as_bytes();
    f.starts_with("f8") || (b.first() == Some(&b'e') && b.get(1).is_some_and(u8::is_ascii_digit))
}

/// Does a Mosaic matmul data format read family `n` on its way in (`s8`, `s4`; any fp8 format for fp8)?
pub fn data_format_reads(f: &str, n: Narrow) -> bool {
    match n {
        Narrow::Fp8 => is_f8_data_format(f),
        _ => llo::segment_dtype(f.split_once("_to_").map_or(f, |x| x.0)).and_then(Narrow::of) == Some(n),
    }
}

/// The element type a format widens to: `e4m3b_to_bf16` → `bf16`.
pub fn data_format_wide(f: &str) -> Option<&str> {
    f.split_once("_to_").map(|x| x.1)
}
