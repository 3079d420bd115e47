//! `fp8-emulated`: the user asked for an fp8 matmul (both operands f8 at the op) and the target does not run it
//! natively, or the lowest layer at hand proves it does not.
//!
//! A request is a matmul whose two operands are f8 *at the op*: HLO `dot`/`convolution` (also inside fusions),
//! StableHLO `dot_general`/`convolution`, Mosaic `tpu.matmul` (or, at `post-finalize-llo`, an `llo.vmatmul` whose
//! data format reads f8), or a Pallas custom call whose kernel does such a matmul. An operand widened by the user
//! (`convert`/`arith.extf` from f8 before the dot) arrives as bf16/f32: that matmul requests nothing in fp8 (the
//! upcast is another rule's finding).
//!
//! Evidence, strongest first: the LLO MXU ops of the computation (`vmatmul.mubr.f8e4m3fn` native;
//! `vmatmul.mubr.msk.f8e4m3b11.bf16`, `vmatmul.mubr.f32`, `vmatmul.bf16` emulated), Mosaic's
//! `#llo.matmul_data_format<e4m3b>` (native) vs `<e4m3b_to_bf16>` (emulated), then the target generation
//! (`Generation::native_fp8`). The finding is reported once per matmul per compilation, from the highest layer
//! present: a canonical HLO unit (see `crosslink`), else StableHLO, else the kernel's Mosaic dump, else LLO.

use super::crosslink as link;
use super::{At, Hit, Options};
use crate::ir::{DType, Layer, Module, OpId};
use crate::lint::target::{native_generations, Narrow, Target, TargetSource};
use crate::lint::Compilation;
use crate::semantic::kernel::{self, Matmul};
use crate::semantic::link::base_name;
use crate::semantic::llo::{self, MxuKind};

pub const NAME: &str = "fp8-emulated";

pub const DOC: &str = "An fp8 matmul (both operands f8 at the op: an HLO dot or convolution, also inside a fusion; \
a StableHLO dot_general; a Mosaic tpu.matmul; a Pallas custom call whose kernel multiplies f8 operands) that the \
target does not run natively. The lowest layer decides: LLO MXU ops of the computation (vmatmul.*.f8e4m3fn is \
native; f8e4m3b11.bf16, f32 or bf16 formats are emulated), then Mosaic's matmul_data_format (e4m3b native, \
e4m3b_to_bf16 emulated), then the target generation (fp8 is native on tpu7x only). A hit is reported once per \
matmul per compilation, at the highest-level op the user wrote, with the same fact in the other layers as related \
lines. A matmul whose operands the user widened to bf16 before the dot requested no fp8 and is not reported here. \
kind: `emulated` (the target has no fp8 MXU), `native-format-missing` (the target has one, but the MXU got \
another format), `unknown-target` (only with require_target: no target and no lower-layer proof).";

pub const CAPTURES: &[&str] = &["target", "mxu_format", "native_on", "kind"];

pub const NARROW_NAME: &str = "narrow-emulated";

pub const NARROW_DOC: &str = "The same analysis as fp8-emulated for every narrow operand type: fp8 (any f8 variant), \
int8 (s8/u8) and int4 (s4/u4), both operands of one family at the op. The lowest layer decides: LLO MXU ops \
(vmatmul.*.s8, .s4, .f8e4m3fn, .f8e5m2 native; bf16, f32, or another family such as s8 for an int4 request, \
widened), then Mosaic's matmul_data_format (s8, s4, e4m3b, f8e5m2 native; e4m3b_to_bf16 or, for an integer request, \
bf16 or e4m3b widened), then the per-generation table (fp8 native on tpu7x; int8 and int4 on v6e, v5e, v5p). \
An integer matmul is proved only from a graph above the MXU ops (an HLO dot, a Mosaic tpu.matmul): its widened \
LLO form is an ordinary bf16/f32 matmul. narrow: `fp8`, `int8`, `int4`. kind: as fp8-emulated, plus \
`widened-to-int8` (int4 requested on a generation with an s4 mode, and the MXU got s8: what XLA dots do).";

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
};

// ---- evidence ---------------------------------------------------------------------------------------------------

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
    fn wide_for(&self, n: Narrow) -> Option<&'static str> {
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
fn is_f8_data_format(f: &str) -> bool {
    let b = f.as_bytes();
    f.starts_with("f8") || (b.first() == Some(&b'e') && b.get(1).is_some_and(u8::is_ascii_digit))
}

/// Does a Mosaic matmul data format read family `n` on its way in (`s8`, `s4`; any fp8 format for fp8)?
fn data_format_reads(f: &str, n: Narrow) -> bool {
    match n {
        Narrow::Fp8 => is_f8_data_format(f),
        _ => llo::segment_dtype(f.split_once("_to_").map_or(f, |x| x.0)).and_then(Narrow::of) == Some(n),
    }
}

/// The element type a format widens to: `e4m3b_to_bf16` → `bf16`.
fn data_format_wide(f: &str) -> Option<&str> {
    f.split_once("_to_").map(|x| x.1)
}

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
struct Evidence {
    /// LLO computation name and its MXU formats.
    llo: Vec<(usize, String, Vec<LloFormat>)>,
    /// Mosaic unit, kernel, stage and its data formats with counts.
    mosaic: Vec<MosaicFormats>,
    /// Related lines about the request itself (Mosaic matmuls of the kernel).
    requested: Vec<String>,
}

/// What the lowest layer proves.
enum Proof {
    Native,
    Emulated { shown: String, format: String, wide: String },
    None,
}

impl Evidence {
    fn add_llo(&mut self, c: &Compilation<'_>, units: &[usize]) {
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
    fn add_mosaic_formats(&mut self, c: &Compilation<'_>, kernel_name: &str, n: Narrow) {
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

    fn proof(&self, n: Narrow) -> Proof {
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

    fn related(&self) -> Vec<String> {
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

// ---- the decision -----------------------------------------------------------------------------------------------

fn source_text(s: TargetSource) -> &'static str {
    match s {
        TargetSource::Flag => "--target",
        TargetSource::Manifest => "the driver's manifest.json",
        TargetSource::DirName => "the dump folder's name",
        TargetSource::LloEvidence => "the LLO dumps",
    }
}

/// Is every type the MXU gets instead of `n` an integer one of the next-wider family (int4 → s8)? XLA dots do that
/// on generations with an s4 mode.
fn widened_to_int8(n: Narrow, wide: &str) -> bool {
    n == Narrow::Int4 && wide.split('/').all(|w| llo::segment_dtype(w).and_then(Narrow::of) == Some(Narrow::Int8))
}

/// What a hit about a narrow request says: its kind, the MXU format seen, the detail and the label.
struct Wording {
    kind: &'static str,
    mxu_format: String,
    detail: String,
    label: String,
}

/// Turns a request of family `n` (`what`: the op in words) and its evidence into a hit, or nothing when the MXU
/// runs `n` natively (or nothing can be said). fp8 says "emulated", the integer families "widened".
fn decide(c: &Compilation<'_>, at: At, what: &str, ev: &Evidence, opts: &Options, n: Narrow) -> Option<Hit> {
    let target = c.target.as_ref();
    let said = match ev.proof(n) {
        Proof::Native => return None,
        Proof::Emulated { shown, format, wide } => emulated(what, n, target, &shown, format, &wide),
        Proof::None => unproven(what, n, target, opts)?,
    };
    let mut h = Hit::new(at, said.label, said.detail)
        .capture("target", target.map(|t| t.name()).unwrap_or("unknown"))
        .capture("mxu_format", said.mxu_format)
        .capture("native_on", native_generations(n))
        .capture("kind", said.kind);
    h.related = ev.related();
    if let Some(t) = target {
        h.related.push(format!("target {} (from {})", t.name(), source_text(t.source)));
    }
    Some(h)
}

/// The MXU gets a wider format than requested (`wide`, seen as `shown`): on a target that runs `n` natively the
/// native format is missing (or the compiler widened int4 to int8), elsewhere the request is emulated.
fn emulated(what: &str, n: Narrow, target: Option<&Target>, shown: &str, format: String, wide: &str) -> Wording {
    let (ty, native_on) = (n.name(), native_generations(n));
    let tname = target.map(|t| t.name()).unwrap_or("unknown");
    let verb = if n == Narrow::Fp8 { "emulated" } else { "widened" };
    let tnative = target.and_then(|t| t.generation.native(n));
    let (kind, detail, label) = if tnative == Some(true) && widened_to_int8(n, wide) {
        (
            "widened-to-int8",
            format!(
                "{what}: {ty} requested and {tname} runs {ty} natively, but the MXU gets {wide} here ({shown}): \
                 the compiler widened {ty} to int8 (a Pallas kernel's matmul gets the {ty} mode)"
            ),
            format!("{ty} matmul, but the MXU gets {wide}"),
        )
    } else if tnative == Some(true) {
        (
            "native-format-missing",
            format!(
                "{what}: {ty} requested and {tname} runs {ty} natively, but the MXU gets {wide} here ({shown}): \
                 the native {ty} format is missing"
            ),
            format!("{ty} matmul, but the MXU gets {wide}"),
        )
    } else if target.is_some() {
        (
            "emulated",
            format!("{what}: {ty} requested but {verb} on {tname}: the MXU gets {wide} ({shown}); {ty} runs natively on {native_on}"),
            format!("{ty} matmul {verb} on {tname}"),
        )
    } else {
        (
            "emulated",
            format!(
                "{what}: {ty} requested but {verb}: the MXU gets {wide} ({shown}); {ty} runs natively on {native_on}"
            ),
            format!("{ty} matmul {verb}"),
        )
    };
    Wording { kind, mxu_format: format, detail, label }
}

/// No stage shows the MXU format: a target without an MXU mode for `n` is a finding; an unknown target is one
/// only when the rule requires a target (`require_target`).
fn unproven(what: &str, n: Narrow, target: Option<&Target>, opts: &Options) -> Option<Wording> {
    let (ty, native_on) = (n.name(), native_generations(n));
    let through = if n == Narrow::Fp8 { "emulated through bf16/f32" } else { "widened to bf16/f32" };
    let Some(t) = target else {
        if opts.get("require_target").and_then(|v| v.as_bool()) != Some(true) {
            return None;
        }
        return Some(Wording {
            kind: "unknown-target",
            mxu_format: String::new(),
            detail: format!(
                "{what}: {ty} requested, but the target generation is unknown and no LLO or Mosaic stage shows the \
                 MXU format; {ty} runs natively only on {native_on} (give --target)"
            ),
            label: format!("{ty} matmul on an unknown target"),
        });
    };
    if t.generation.native(n) != Some(false) {
        return None;
    }
    let tname = t.name();
    Some(Wording {
        kind: "emulated",
        mxu_format: String::new(),
        detail: format!(
            "{what}: {ty} requested but {tname} (from {}) has no {ty} MXU, so the matmul cannot run in {ty} there \
             ({through}, or refused by Mosaic); {ty} runs natively on {native_on}",
            source_text(t.source)
        ),
        label: format!("{ty} matmul, no {ty} MXU on {tname}"),
    })
}

// ---- requests per layer -----------------------------------------------------------------------------------------

fn dt(d: Option<DType>) -> &'static str {
    d.map(DType::name).unwrap_or("?")
}

/// The family both operands belong to (f8 × f8 of any variants, s8 × u8, ...), if they share one.
fn family(l: Option<DType>, r: Option<DType>) -> Option<Narrow> {
    let (l, r) = (Narrow::of(l?)?, Narrow::of(r?)?);
    (l == r).then_some(l)
}

fn is_hlo_matmul(opcode: &str) -> bool {
    matches!(opcode, "dot" | "convolution" | "ragged-dot" | "scaled-dot")
}

/// The fusion that runs `op` as one LLO computation: the outermost `fusion` whose called computations hold it
/// (nested fusions included), or `op` itself.
fn enclosing_fusion(m: &Module<'_>, op: OpId) -> OpId {
    let mut cur = op;
    for _ in 0..32 {
        let f = m.func_of(cur);
        if Some(f) == m.entry {
            break;
        }
        match m.func(f).callers.first() {
            Some(&caller) if m.op(caller).opcode == "fusion" => cur = caller,
            _ => break,
        }
    }
    cur
}

/// The f8 × f8 matmuls of a kernel's units (the first unit that has any): related lines and whether any exists.
fn kernel_requests(c: &Compilation<'_>, units: &[usize], kernel_name: &str, n: Narrow) -> (bool, Vec<String>) {
    for &i in units {
        let Some(u) = c.units.get(i) else { continue };
        let ks = kernel::kernels(&u.module);
        let mut found: Vec<&Matmul<'_>> = Vec::new();
        let mut all: Vec<Matmul<'_>> = Vec::new();
        for k in ks.iter().filter(|k| k.name == kernel_name) {
            all.extend(k.matmuls.iter().cloned());
        }
        for mm in &all {
            if is_request(mm, n) {
                found.push(mm);
            }
        }
        if !found.is_empty() {
            let first = found[0];
            let line = format!(
                "Mosaic `@{kernel_name}` ({}): {} {} × {} ×{}",
                link::stage_of(u),
                first.opcode,
                dt(first.lhs),
                dt(first.rhs),
                found.len()
            );
            return (true, vec![line]);
        }
        if !all.is_empty() {
            // The kernel's matmuls are known and none is of the family: no request (e.g. the user widened an
            // operand).
            return (false, Vec::new());
        }
    }
    (false, Vec::new())
}

/// A Mosaic matmul that requests family `n`: both operands of it (`tpu.matmul`), or, at `post-finalize-llo`, an
/// `llo.vmatmul` whose data format reads it (an int8 matmul widened to `bf16` there no longer shows the request).
fn is_request(mm: &Matmul<'_>, n: Narrow) -> bool {
    if mm.opcode.starts_with("llo.") {
        return mm.data_format.is_some_and(|f| data_format_reads(f, n));
    }
    family(mm.lhs, mm.rhs) == Some(n)
}

fn hlo_unit(c: &Compilation<'_>, ui: usize, opts: &Options, ns: &[Narrow]) -> Vec<Hit> {
    let mut out = Vec::new();
    if !link::is_canonical(c, ui) {
        return out;
    }
    let m = &c.units[ui].module;
    for id in m.op_ids() {
        let op = m.op(id);
        if crate::parse::calls::is_tpu_custom_call(m, id) {
            out.extend(custom_call(c, ui, id, opts, ns));
            continue;
        }
        if !is_hlo_matmul(op.opcode) {
            continue;
        }
        let (l, r) = (m.operand_dtype(id, 0), m.operand_dtype(id, 1));
        let Some(n) = family(l, r).filter(|n| ns.contains(n)) else { continue };
        let top = enclosing_fusion(m, id);
        let comp = m.op(top).name;
        let what = if top == id {
            format!("`{}` ({}) multiplies {} × {}", op.name, op.opcode, dt(l), dt(r))
        } else {
            format!("`{}` ({} in fusion `{comp}`) multiplies {} × {}", op.name, op.opcode, dt(l), dt(r))
        };
        let mut ev = Evidence::default();
        ev.add_llo(c, &link::llo_units(c, comp));
        if let Some(mut h) = decide(c, At::Op { unit: ui, op: id }, &what, &ev, opts, n) {
            if top != id {
                h = h.with_label(At::Op { unit: ui, op: top }, format!("runs as LLO computation `{comp}`"));
            }
            out.push(h);
        }
    }
    out
}

/// A Pallas custom call (HLO or StableHLO) whose kernel multiplies narrow operands: one hit per family.
fn custom_call(c: &Compilation<'_>, ui: usize, id: OpId, opts: &Options, ns: &[Narrow]) -> Vec<Hit> {
    let m = &c.units[ui].module;
    let Some(kernel_name) = link::call_kernel_name(c, ui, id) else { return Vec::new() };
    let mut units: Vec<usize> = link::decoded_unit(c, ui, id).into_iter().collect();
    units.extend(link::mosaic_dumps_of(c, &kernel_name));
    let call = m.op(id).name;
    let llo = if c.units[ui].layer() == Layer::Hlo {
        link::llo_units(c, call)
    } else {
        link::llo_units_of_kernel(c, &kernel_name)
    };
    let mut out = Vec::new();
    for &n in ns {
        let (requested, lines) = kernel_requests(c, &units, &kernel_name, n);
        if !requested {
            continue;
        }
        let mut ev = Evidence { requested: lines, ..Default::default() };
        ev.add_mosaic_formats(c, &kernel_name, n);
        ev.add_llo(c, &llo);
        let operands = if n == Narrow::Fp8 { "f8".to_string() } else { n.name().to_string() };
        let what = format!("Pallas kernel `{call}` (@{kernel_name}) multiplies {operands} operands");
        out.extend(decide(c, At::Op { unit: ui, op: id }, &what, &ev, opts, n));
    }
    out
}

fn stablehlo_unit(c: &Compilation<'_>, ui: usize, opts: &Options, ns: &[Narrow]) -> Vec<Hit> {
    let mut out = Vec::new();
    if link::has_layer(c, Layer::Hlo) || !link::is_canonical(c, ui) {
        return out;
    }
    let m = &c.units[ui].module;
    for id in m.op_ids() {
        if crate::parse::calls::is_tpu_custom_call(m, id) {
            out.extend(custom_call(c, ui, id, opts, ns));
            continue;
        }
        if !crate::semantic::op::is_matmul(m.op(id).opcode) {
            continue;
        }
        let mm = kernel::matmul(m, id);
        let Some(n) = family(mm.lhs, mm.rhs).filter(|n| ns.contains(n)) else { continue };
        let what = format!("`{}` multiplies {} × {}", mm.opcode, dt(mm.lhs), dt(mm.rhs));
        out.extend(decide(c, At::Op { unit: ui, op: id }, &what, &Evidence::default(), opts, n));
    }
    out
}

fn mosaic_unit(c: &Compilation<'_>, ui: usize, opts: &Options, ns: &[Narrow]) -> Vec<Hit> {
    let mut out = Vec::new();
    let u = &c.units[ui];
    if u.host.is_some() {
        return out; // a decoded body: its custom call reports
    }
    for k in kernel::kernels(&u.module) {
        if link::kernel_called_from_graph(c, k.name) {
            continue;
        }
        // One dump reports: the earliest stage (the ops the user wrote), first in the compilation.
        let dumps = link::mosaic_dumps_of(c, k.name);
        let best = c.best(dumps);
        if best != Some(ui) {
            continue;
        }
        for &n in ns {
            let mut ev = Evidence::default();
            ev.add_mosaic_formats(c, k.name, n);
            ev.add_llo(c, &link::llo_units_of_kernel(c, k.name));
            let requests: Vec<&Matmul<'_>> = k.matmuls.iter().filter(|mm| is_request(mm, n)).collect();
            // At post-finalize-llo one tpu.matmul is many llo.vmatmul ops: one hit for the kernel then.
            let late = requests.first().is_some_and(|mm| mm.opcode.starts_with("llo."));
            let operands = if n == Narrow::Fp8 { "f8" } else { n.name() };
            for mm in requests.iter().take(if late { 1 } else { usize::MAX }) {
                let what = if late {
                    format!(
                        "kernel @{} multiplies {operands} operands ({} data_format<{}>)",
                        k.name,
                        mm.opcode,
                        mm.data_format.unwrap_or("?")
                    )
                } else {
                    format!("{} in @{} multiplies {} × {}", mm.opcode, k.name, dt(mm.lhs), dt(mm.rhs))
                };
                out.extend(decide(c, At::Op { unit: ui, op: mm.op }, &what, &ev, opts, n));
            }
        }
    }
    out
}

/// Only fp8 is proved from an LLO dump alone: its widened formats still name it (`f8e4m3b11.bf16`), while a
/// widened int8 matmul is an ordinary `bf16` or `f32` one.
fn llo_unit(c: &Compilation<'_>, ui: usize, opts: &Options, ns: &[Narrow]) -> Vec<Hit> {
    let u = &c.units[ui];
    if !ns.contains(&Narrow::Fp8) {
        return Vec::new();
    }
    let Some(comp) = link::llo_computation(u) else { return Vec::new() };
    if crate::semantic::link::is_runtime_computation(&comp)
        || link::has_layer(c, Layer::Hlo)
        || link::has_layer(c, Layer::StableHlo)
        || !link::mosaic_dumps_of(c, base_name(&comp)).is_empty()
        || link::llo_units(c, &comp).first() != Some(&ui)
    {
        return Vec::new();
    }
    // Without a graph above, only a format that reads f8 on its way into the MXU proves an fp8 request.
    let formats = llo_formats(&u.module);
    let widened: Vec<&LloFormat> = formats
        .iter()
        .filter(|f| !f.native && f.format.split('.').any(|s| llo::segment_dtype(s).is_some_and(DType::is_f8)))
        .collect();
    if widened.is_empty() || formats.iter().any(|f| f.native) {
        return Vec::new();
    }
    let first = llo::mxu_ops(&u.module)
        .into_iter()
        .find(|x| x.kind == MxuKind::Matmul && widened.iter().any(|f| x.mnemonic.starts_with(f.shown.as_str())));
    let Some(first) = first else { return Vec::new() };
    let mut ev = Evidence::default();
    ev.add_llo(c, &[ui]);
    let what = format!("LLO computation `{comp}` feeds f8 data to the MXU");
    decide(c, At::Op { unit: ui, op: first.op }, &what, &ev, opts, Narrow::Fp8).into_iter().collect()
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::crosslink::sweep::{self, Found};
    use crate::analysis::At;

    fn hits(path: &std::path::Path) -> Vec<Found> {
        sweep::run(path, run, &Options::new())
    }

    fn kind(f: &Found) -> &str {
        f.hit.captures.get("kind").map(String::as_str).unwrap_or("")
    }

    #[test]
    fn no_panic_on_any_test_input() {
        assert!(sweep::all_test_data(run) > 0, "the invalid cases among the inputs hit");
    }

    #[test]
    fn invalid_cases_hit_and_valid_cases_do_not() {
        sweep::assert_case_verdicts(NAME, run, CAPTURES);
    }

    #[test]
    fn a_fusion_dot_on_v6e_is_reported_at_the_dot_with_the_llo_format() {
        let h = hits(&sweep::case(NAME, "invalid", "fusion_dot@v6e"));
        assert_eq!(h.len(), 1, "once per matmul, not again from the LLO unit");
        let f = &h[0];
        assert_eq!(f.layer, "hlo");
        assert_eq!(kind(f), "emulated");
        assert_eq!(f.hit.captures["target"], "v6e");
        assert_eq!(f.hit.captures["mxu_format"], "f32");
        assert_eq!(f.hit.captures["native_on"], "tpu7x");
        let d = &f.hit.captures["detail"];
        assert!(
            d.contains("`convolution.1`") && d.contains("fusion `fusion`") && d.contains("f8e4m3fn × f8e4m3fn"),
            "{d}"
        );
        assert!(
            d.contains("emulated on v6e: the MXU gets f32 (vmatmul.mubr.f32 ×2)") && d.contains("natively on tpu7x"),
            "{d}"
        );
        assert!(f.hit.related.iter().any(|r| r == "LLO `fusion`: vmatmul.mubr.f32 ×2"), "{:?}", f.hit.related);
        assert_eq!(f.hit.labels.len(), 1, "a label on the fusion that runs as the LLO computation");
        assert!(f.hit.labels[0].text.contains("LLO computation `fusion`"));
    }

    #[test]
    fn the_lowest_layer_decides_over_the_target() {
        // The fusion's LLO shows an f32 MXU: on a target said to be tpu7x, the native format is missing.
        let p = sweep::case(NAME, "invalid", "fusion_dot@v6e");
        let h = sweep::run_with(&p, run, &Options::new(), Some("tpu7x"));
        assert_eq!(h.len(), 1);
        assert_eq!(kind(&h[0]), "native-format-missing");
        assert!(h[0].hit.captures["detail"].contains("tpu7x runs fp8 natively, but the MXU gets f32"));
        // Native f8e4m3fn in the LLO: nothing to say even when told the target is v6e.
        let p = sweep::case(NAME, "valid", "fusion_dot@tpu7x");
        assert!(sweep::run_with(&p, run, &Options::new(), Some("v6e")).is_empty());
    }

    #[test]
    fn without_lower_layers_the_target_decides() {
        let h = hits(&sweep::case(NAME, "invalid", "pallas_call@v5e"));
        assert_eq!(h.len(), 1);
        let d = &h[0].hit.captures["detail"];
        assert!(
            d.contains("Pallas kernel `fp8_mm.1` (@fp8_mm)") && d.contains("v5e") && d.contains("no fp8 MXU"),
            "{d}"
        );
        assert!(
            h[0].hit.related.iter().any(|r| r.contains("tpu.matmul f8e4m3fn × f8e4m3fn")),
            "{:?}",
            h[0].hit.related
        );
        // The same kernel on tpu7x: native, nothing to say.
        let p = sweep::case(NAME, "invalid", "pallas_call@v5e");
        assert!(sweep::run_with(&p, run, &Options::new(), Some("tpu7x")).is_empty());
        // StableHLO alone.
        let h = hits(&sweep::case(NAME, "invalid", "stablehlo_dot@v6e"));
        assert_eq!((h.len(), h[0].layer), (1, "stablehlo"));
    }

    #[test]
    fn an_unknown_target_is_silent_unless_required() {
        let p = sweep::case(NAME, "valid", "fp8_dot_unknown_target.hlo.txt");
        assert!(hits(&p).is_empty());
        let mut opts = Options::new();
        opts.insert("require_target".into(), serde_json::Value::Bool(true));
        let h = sweep::run(&p, run, &opts);
        assert_eq!(h.len(), 1);
        assert_eq!(kind(&h[0]), "unknown-target");
        assert_eq!(h[0].hit.captures["target"], "unknown");
    }

    #[test]
    fn lower_layers_alone_report_when_they_prove_an_fp8_request() {
        let h = hits(&sweep::case(NAME, "invalid", "1795-fp8_llo.1-03-final_bundles.txt"));
        assert_eq!((h.len(), h[0].layer), (1, "llo"));
        assert_eq!(h[0].hit.captures["mxu_format"], "f8e4m3b11.bf16");
        assert!(h[0].hit.captures["detail"].contains("the MXU gets bf16 (vmatmul.mubr.msk.f8e4m3b11.bf16 ×2)"));
        let h = hits(&sweep::case(NAME, "invalid", "1795-0018-mosaic-dump-fp8_mm-post-finalize-llo.txt"));
        assert_eq!((h.len(), h[0].layer), (1, "mosaic"));
        assert_eq!(h[0].hit.captures["mxu_format"], "e4m3b_to_bf16");
        // An f32 MXU op alone proves no fp8 request.
        assert!(hits(&sweep::case(NAME, "valid", "1795-matmul.1-03-final_bundles.txt")).is_empty());
    }

    #[test]
    fn the_same_module_twice_reports_once() {
        use crate::analysis::crosslink::testutil;
        use crate::lint::compilation::source_file;
        let dir = sweep::case(NAME, "invalid", "fusion_dot@v6e");
        let mut files = testutil::dir_files(&dir);
        let hlo = files
            .iter()
            .find(|f| f.path.ends_with("after_optimizations.txt"))
            .map(|f| f.text.clone())
            .unwrap_or_default();
        files.push(source_file(&format!("{}/llo/1-TLP-hlo.txt", dir.display()), &hlo));
        files.push(source_file(&format!("{}_hlo.txt", dir.display()), &hlo));
        let parsed = testutil::parse(&files);
        let c = Compilation::new(dir.display().to_string(), &parsed, None);
        let all: Vec<(usize, Hit)> =
            (0..c.units.len()).flat_map(|i| run(&c, i, &Options::new()).into_iter().map(move |h| (i, h))).collect();
        assert_eq!(all.len(), 1);
        let At::Op { unit, .. } = all[0].1.at else { panic!("an op") };
        assert!(
            c.units[unit].path.ends_with("module.after_optimizations.txt"),
            "the HLO dump, not the LLO folder's copy"
        );
    }

    #[test]
    fn mxu_formats() {
        assert!(llo::is_native_fp8_mnemonic("vmatmul.mubr.f8e4m3fn.vlgmr.msra.gmra.mrb[0].mxu0"));
        assert!(!llo::is_native_fp8_mnemonic("vmatmul.mubr.msk.f8e4m3b11.bf16.gmra.mxu0"));
        assert!(
            !llo::is_native_fp8_mnemonic("vmatmul.mubr.f32.gmra.mxu0") && !llo::is_native_fp8_mnemonic("vmatmul.bf16")
        );
        assert!(is_f8_data_format("e4m3b") && is_f8_data_format("e4m3b_to_bf16") && !is_f8_data_format("bf16"));
        assert_eq!(data_format_wide("e4m3b_to_bf16"), Some("bf16"));
    }

    fn narrow_hits(path: &std::path::Path) -> Vec<Found> {
        sweep::run(path, run_narrow, &Options::new())
    }

    #[test]
    fn integer_families_from_the_lowest_layer() {
        let case = |rule: &str, kind: &str, name: &str| {
            let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/rules").join(rule).join(kind);
            narrow_hits(&p.join(name))
        };
        // tpu7x: int8 widened to bf16 (Pallas) or f32 (XLA), int4 carried as fp8
        for (name, narrow, wide) in [
            ("pallas_int8@tpu7x", "int8", "the MXU gets bf16 (vmatmul.mubr.bf16 ×16)"),
            ("dot_int8@tpu7x", "int8", "the MXU gets f32 (vmatmul.mubr.f32"),
            ("pallas_int4@tpu7x", "int4", "the MXU gets f8e4m3fn (vmatmul.mubr.f8e4m3fn"),
        ] {
            let h = case("int-widened", "invalid", name);
            assert_eq!(h.len(), 1, "{name}");
            let c = &h[0].hit.captures;
            assert_eq!((c["narrow"].as_str(), c["kind"].as_str()), (narrow, "emulated"), "{name}");
            assert!(c["detail"].contains(&format!("{narrow} requested but widened on tpu7x")), "{}", c["detail"]);
            assert!(
                c["detail"].contains(wide) && c["detail"].ends_with("natively on v6e, v5e, v5p"),
                "{}",
                c["detail"]
            );
        }
        // v6e has s4, but the XLA dot gets s8
        let h = case("int-widened", "invalid", "dot_int4@v6e");
        assert_eq!(h[0].hit.captures["kind"], "widened-to-int8");
        assert_eq!(h[0].hit.captures["mxu_format"], "s8");
        // the Mosaic dump alone: the table
        let h = case("int-widened", "invalid", "kernel_int8@tpu7x");
        assert_eq!((h.len(), h[0].layer), (1, "mosaic"));
        assert!(h[0].hit.captures["detail"].contains("tpu7x (from the dump folder's name) has no int8 MXU"));
        // native s8/s4, an upcast in the kernel, an fp8 kernel through the narrow analysis gives fp8 only
        for name in ["pallas_int8@v6e", "dot_int8@v5e", "pallas_int4@v6e", "pallas_int8_upcast@tpu7x"] {
            assert!(case("int-widened", "valid", name).is_empty(), "{name}");
        }
        let h = case("int-widened", "valid", "pallas_fp8@v6e");
        assert_eq!((h.len(), h[0].hit.captures["narrow"].as_str()), (1, "fp8"));
        // a generation with int8 whose MXU got f32
        let h = case("int-not-native", "invalid", "dot_int8_f32_mxu@v6e");
        assert_eq!(h[0].hit.captures["kind"], "native-format-missing");
        // the fp8 entry point ignores integer matmuls
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/rules/int-widened/invalid/pallas_int8@tpu7x");
        assert!(hits(&p).is_empty());
    }

    #[test]
    fn formats_per_family() {
        let f = |dtypes: Vec<DType>| LloFormat {
            shown: String::new(),
            format: String::new(),
            count: 1,
            native: false,
            wide: None,
            dtypes,
        };
        assert!(f(vec![DType::S8]).native_for(Narrow::Int8));
        assert!(!f(vec![DType::S8]).native_for(Narrow::Int4));
        assert_eq!(f(vec![DType::S8]).wide_for(Narrow::Int4), Some("s8"));
        assert!(f(vec![DType::F8E5M2]).native_for(Narrow::Fp8));
        assert_eq!(f(vec![DType::F8E5M2, DType::BF16]).wide_for(Narrow::Fp8), Some("bf16"));
        assert!(data_format_reads("s8", Narrow::Int8) && data_format_reads("s4", Narrow::Int4));
        assert!(!data_format_reads("bf16", Narrow::Int8) && !data_format_reads("e4m3b", Narrow::Int4));
        assert!(data_format_reads("f8e5m2_to_bf16", Narrow::Fp8) && data_format_reads("e4m3b", Narrow::Fp8));
        assert!(widened_to_int8(Narrow::Int4, "s8") && !widened_to_int8(Narrow::Int4, "f32"));
        assert!(!widened_to_int8(Narrow::Int8, "s8"));
        assert_eq!(family(Some(DType::S8), Some(DType::U8)), Some(Narrow::Int8));
        assert_eq!(family(Some(DType::S8), Some(DType::S4)), None);
        assert_eq!(family(Some(DType::F8E4M3FN), Some(DType::F8E5M2)), Some(Narrow::Fp8));
    }

    /// Project fixtures: tpu7x runs every version natively; on v6e and v5e every fp8 version is emulated, and
    /// bug_upcast (bf16 at the matmul) is not this analysis' finding.
    #[test]
    fn fixture_verdicts() {
        let dirs = sweep::fixture_dirs();
        assert!(dirs.len() >= 20);
        for (name, dir) in dirs {
            let (version, target) = name.split_once('@').unwrap_or((&name, ""));
            let h = hits(&dir);
            let expect = match (version, target) {
                ("bug_upcast", _) | (_, "tpu7x") => 0,
                _ => 1,
            };
            assert_eq!(
                h.len(),
                expect,
                "{name}: {:?}",
                h.iter().map(|f| &f.hit.captures["detail"]).collect::<Vec<_>>()
            );
            for f in &h {
                assert_eq!(f.layer, "hlo", "{name}: reported at the custom call");
                assert_eq!(kind(f), "emulated");
                assert_eq!(f.hit.captures["target"], target);
                let d = &f.hit.captures["detail"];
                assert!(d.contains(&format!("`fp8_mm_{version}.1`")), "{name}: {d}");
                if target != "v4" {
                    assert!(
                        d.contains(&format!("emulated on {target}: the MXU gets bf16")) && d.contains("f8e4m3b11.bf16"),
                        "{name}: {d}"
                    );
                    assert!(
                        f.hit.related.iter().any(|r| r.starts_with(&format!("LLO `fp8_mm_{version}.1`: vmatmul."))),
                        "{name}"
                    );
                    assert!(f.hit.related.iter().any(|r| r.contains("matmul_data_format<e4m3b_to_bf16>")), "{name}");
                }
            }
        }
    }

    #[test]
    fn corpus_verdicts() {
        for (name, dir) in sweep::corpus_dirs() {
            let h = hits(&dir);
            let expect = usize::from(name == "fp8_dot@v6e" || name == "fp8_dot@v5e");
            assert_eq!(
                h.len(),
                expect,
                "{name}: {:?}",
                h.iter().map(|f| &f.hit.captures["detail"]).collect::<Vec<_>>()
            );
            for f in &h {
                assert_eq!(f.hit.captures["mxu_format"], "f32", "{name}");
                assert!(
                    f.hit.captures["detail"].contains("`convolution.1` (convolution in fusion `fusion`)"),
                    "{name}"
                );
            }
        }
    }
}
