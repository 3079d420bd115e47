//! The narrow matmuls each layer requests (both operands of a family at the op) and where the hit is reported:
//! HLO dots and fusions, Pallas custom calls, StableHLO, a kernel's Mosaic dump, LLO computations.

use super::super::crosslink as link;
use super::super::data_format::{data_format_reads, llo_formats, LloFormat};
use super::decision::decide;
use super::evidence::Evidence;
use crate::analysis::{At, Hit, Options};
use crate::ir::{DType, Layer, Module, OpId};
use crate::lint::target::Narrow;
use crate::lint::Compilation;
use crate::semantic::kernel::{self, Matmul};
use crate::semantic::link::base_name;
use crate::semantic::llo::{self, MxuKind};
use crate::semantic::op::{is_fusion, is_matmul};

fn dt(d: Option<DType>) -> &'static str {
    d.map(DType::name).unwrap_or("?")
}

/// The family both operands belong to (f8 × f8 of any variants, s8 × u8, ...), if they share one.
pub(super) fn family(l: Option<DType>, r: Option<DType>) -> Option<Narrow> {
    let (l, r) = (Narrow::of(l?)?, Narrow::of(r?)?);
    (l == r).then_some(l)
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
            Some(&caller) if is_fusion(m.op(caller).opcode) => cur = caller,
            _ => break,
        }
    }
    cur
}

/// The f8 × f8 matmuls of a kernel's units (the first unit that has any): related lines and whether any exists.
fn kernel_requests(c: &Compilation<'_>, units: &[usize], kernel_name: &str, n: Narrow) -> (bool, Vec<String>) {
    for &i in units {
        let Some(u) = c.units.get(i) else { continue };
        let mut found: Vec<&Matmul<'_>> = Vec::new();
        let all: Vec<Matmul<'_>> = kernel::named(&u.module, kernel_name).map(|k| k.matmuls).unwrap_or_default();
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

pub(super) fn hlo_unit(c: &Compilation<'_>, ui: usize, opts: &Options, ns: &[Narrow]) -> Vec<Hit> {
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
        if !is_matmul(op.opcode) {
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

pub(super) fn stablehlo_unit(c: &Compilation<'_>, ui: usize, opts: &Options, ns: &[Narrow]) -> Vec<Hit> {
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
        if !is_matmul(m.op(id).opcode) {
            continue;
        }
        let mm = kernel::matmul(m, id);
        let Some(n) = family(mm.lhs, mm.rhs).filter(|n| ns.contains(n)) else { continue };
        let what = format!("`{}` multiplies {} × {}", mm.opcode, dt(mm.lhs), dt(mm.rhs));
        out.extend(decide(c, At::Op { unit: ui, op: id }, &what, &Evidence::default(), opts, n));
    }
    out
}

pub(super) fn mosaic_unit(c: &Compilation<'_>, ui: usize, opts: &Options, ns: &[Narrow]) -> Vec<Hit> {
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
pub(super) fn llo_unit(c: &Compilation<'_>, ui: usize, opts: &Options, ns: &[Narrow]) -> Vec<Hit> {
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
