//! What the lowest layers show the MXU gets for a request: the LLO computations' matmul formats and the kernel's
//! Mosaic data formats, and what they prove (native, emulated, or nothing).

use super::super::crosslink as link;
use super::super::data_format::{data_format_reads, data_format_wide, llo_formats, LloFormat};
use crate::lint::target::Narrow;
use crate::lint::Compilation;
use crate::semantic::kernel;

/// Data formats with how many matmuls use each.
type Counts = Vec<(String, usize)>;

fn bump(list: &mut Counts, f: &str) {
    match list.iter_mut().find(|x| x.0 == f) {
        Some(x) => x.1 += 1,
        None => list.push((f.to_string(), 1)),
    }
}

/// A Mosaic unit, kernel, stage and its data formats with counts.
type MosaicFormats = (usize, String, String, Counts);

#[derive(Default, Debug)]
pub(super) struct Evidence {
    /// LLO computation name and its MXU formats.
    pub(super) llo: Vec<(usize, String, Vec<LloFormat>)>,
    /// Mosaic unit, kernel, stage and its data formats with counts.
    pub(super) mosaic: Vec<MosaicFormats>,
    /// Related lines about the request itself (Mosaic matmuls of the kernel).
    pub(super) requested: Vec<String>,
}

/// What the lowest layer proves.
pub(super) enum Proof {
    Native,
    Emulated { shown: String, format: String, wide: String },
    None,
}

impl Evidence {
    pub(super) fn add_llo(&mut self, c: &Compilation<'_>, units: &[usize]) {
        for &i in units {
            let Some(u) = c.units.get(i) else { continue };
            let comp = link::llo_computation(u).unwrap_or_else(|| u.module.name.to_string());
            let f = llo_formats(&u.module);
            if !f.is_empty() {
                self.llo.push((i, comp, f));
            }
        }
    }

    /// The fp8 data formats of the kernel's late Mosaic stages (one unit: each stage repeats the same ops).
    /// For an integer family the formats that do not read it are kept too when none does: tpu7x's `bf16` for an
    /// int8 request is the proof of widening (fp8 widening always shows as `e4m3b_to_bf16`, read as fp8).
    pub(super) fn add_mosaic_formats(&mut self, c: &Compilation<'_>, kernel_name: &str, n: Narrow) {
        for (i, u) in c.kernel_units(kernel_name) {
            let m = &u.module;
            let mut all: Vec<(String, usize)> = Vec::new();
            let mut formats: Vec<(String, usize)> = Vec::new();
            for k in kernel::kernels(m).into_iter().filter(|k| k.name == kernel_name) {
                for mm in &k.matmuls {
                    let Some(f) = mm.data_format else { continue };
                    bump(&mut all, f);
                    if data_format_reads(f, n) {
                        bump(&mut formats, f);
                    }
                }
            }
            if formats.is_empty() && n != Narrow::Fp8 {
                formats = all;
            }
            if !formats.is_empty() {
                self.mosaic.push((i, kernel_name.to_string(), link::stage_of(u), formats));
                break;
            }
        }
    }

    pub(super) fn proof(&self, n: Narrow) -> Proof {
        let llo: Vec<&LloFormat> = self.llo.iter().flat_map(|x| x.2.iter()).collect();
        if !llo.is_empty() {
            if llo.iter().any(|f| f.native_for(n)) {
                return Proof::Native;
            }
            let shown = llo.iter().map(|f| format!("{} ×{}", f.shown, f.count)).collect::<Vec<_>>().join(", ");
            let format = llo.iter().map(|f| f.format.clone()).filter(|f| !f.is_empty()).collect::<Vec<_>>().join(", ");
            let mut wide: Vec<&str> = llo.iter().filter_map(|f| f.wide_for(n)).collect();
            wide.dedup();
            return Proof::Emulated {
                shown,
                format,
                wide: if wide.is_empty() { "a wider type".into() } else { wide.join("/") },
            };
        }
        let mos: Vec<&(String, usize)> = self.mosaic.iter().flat_map(|x| x.3.iter()).collect();
        if !mos.is_empty() {
            if mos.iter().any(|(f, _)| data_format_wide(f).is_none() && data_format_reads(f, n)) {
                return Proof::Native;
            }
            let shown = mos.iter().map(|(f, k)| format!("matmul_data_format<{f}> ×{k}")).collect::<Vec<_>>().join(", ");
            let format = mos.iter().map(|(f, _)| f.clone()).collect::<Vec<_>>().join(", ");
            // `e4m3b_to_bf16` widens to bf16; a format that does not read the family at all (`bf16` for int8) is
            // what the MXU gets
            let mut wide: Vec<&str> = mos.iter().map(|(f, _)| data_format_wide(f).unwrap_or(f.as_str())).collect();
            wide.dedup();
            return Proof::Emulated { shown, format, wide: wide.join("/") };
        }
        Proof::None
    }

    pub(super) fn related(&self) -> Vec<String> {
        let mut out = self.requested.clone();
        for (_, kernel, stage, formats) in &self.mosaic {
            let f: Vec<String> = formats.iter().map(|(f, n)| format!("matmul_data_format<{f}> ×{n}")).collect();
            out.push(format!("Mosaic `@{kernel}` ({stage}): {}", f.join(", ")));
        }
        for (_, comp, formats) in &self.llo {
            let f: Vec<String> = formats.iter().map(|f| format!("{} ×{}", f.shown, f.count)).collect();
            out.push(format!("LLO `{comp}`: {}", f.join(", ")));
        }
        out
    }
}
