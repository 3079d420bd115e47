//! `any-placed-in-vmem`, the analysis behind the rule of the same name: what it checks and where it reports is
//! [`DOC`]; why a hit matters and how to pin an operand is the rule's `doc` and `help` (rules/core.yaml, and
//! docs/memory-spaces.md). How each fact of [`DOC`] is read, stage by stage:
//!
//! Declared ANY: in the kernel (a body decoded from the custom call, or a Mosaic dump) the argument's memref has
//! `#tpu.memory_space<any>`, or no memory space on an operand without a pipelined window; at `post-finalize-llo`,
//! where arguments are retyped with the placed memref in `llo.type`, libtpu marks it `llo.unspecified_memory_space`.
//! Declared HBM: `#tpu.memory_space<hbm>`, at every stage (libtpu keeps `hbm` in `llo.type` even when XLA placed
//! the operand in VMEM, so only the HLO and the LLO entry say where it is).
//! Placed in VMEM: the `copy-start` to `S(1)` reaches the custom call through `copy-done` and maybe
//! `bitcast`/`get-tuple-element`; the LLO entry is that of the computation holding the kernel. Operands declared VMEM (BlockSpec windows, whole-array VMEM)
//! placed in VMEM are what the user asked for; ANY operands left in HBM are fine.

use super::crosslink as link;
use super::{At, Hit, Options};
use crate::ir::{Def, Layer, Module, OpId};
use crate::lint::Compilation;
use crate::semantic::kernel::ArgRole;
use crate::semantic::llo;

pub const NAME: &str = "any-placed-in-vmem";

/// What the analysis checks, how, and what a hit says: shown by `hlolint explain any-placed-in-vmem` and on the
/// rule's page.
pub const DOC: &str = "Finds the Pallas kernel operands the kernel's own DMAs read that XLA placed in VMEM. Such an \
operand is declared memory_space=pl.ANY or pltpu.HBM (Mosaic memory space `any` or `hbm`); it is placed in VMEM \
when the HLO after optimizations copies it into S(1) (copy-start to S(1) feeding the tpu_custom_call operand) or \
the kernel's LLO entry shows inlined_call_operand.vmem for it. Reported once per operand per compilation, at the HLO producer with a label on \
the custom call (from LLO when no HLO shows the call).";

/// How rule packs call this analysis (`analysis: …`).
pub static ANALYSIS: super::Analysis = super::Analysis {
    name: NAME,
    layers: &[Layer::Hlo, Layer::Llo],
    doc: DOC,
    captures: CAPTURES,
    kinds: &[],
    options: OPTIONS,
    run,
    // reads the entry's operands only
    llo: super::LloReads::CrossLayerOps,
    shares: None,
};

pub const CAPTURES: &[&str] = &["operand", "call", "kernel_arg", "declared"];

pub const OPTIONS: &[(&str, &str)] = &[];

/// A kernel input the kernel streams itself: declared ANY or HBM.
#[derive(Clone, Debug)]
struct AnyArg {
    /// `%arg2`
    name: String,
    /// How the kernel declares it: `ANY` or `HBM`.
    declared: &'static str,
    ty: String,
    /// The custom call's operand index (scalar-prefetch operands first, then the kernel's inputs).
    operand: usize,
    /// DMAs the kernel starts from it.
    dma_reads: usize,
    kernel: String,
    /// How messages name it: the author's name with the argument's (`` `x_hbm` (%arg2) ``), else the argument's.
    shown: String,
    /// At a late stage: the memory space libtpu placed it in (`vmem`).
    placed: Option<(String, String)>,
}

/// The ANY and HBM inputs of kernel `kernel_name`, read from its units (decoded or early dumps first). Also notes where a
/// late stage placed them.
fn any_args(c: &Compilation<'_>, units: &[usize], kernel_name: &str) -> Vec<AnyArg> {
    let mut units = units.to_vec();
    units.sort_by_key(|&i| (c.units[i].preference(), i));
    units.dedup();
    let mut out: Vec<AnyArg> = Vec::new();
    let mut decided = false;
    for &i in &units {
        let m = &c.units[i].module;
        if let Some(k) = c.named_kernel(i, m, kernel_name) {
            let params = &m.func(k.func).params;
            for a in &k.args {
                let n = match a.role {
                    ArgRole::Window(n) | ArgRole::Operand(n) => n as usize,
                    _ => continue,
                };
                let Some(p) = params.get(a.index) else { continue };
                let late = p.attrs.iter().any(|x| x.key == "llo.type");
                let unspecified = p.attrs.iter().any(|x| x.key == "llo.unspecified_memory_space");
                let windowed =
                    k.window_params.get(n).is_some_and(|w| w.transform.is_some() || w.window_bounds.is_some());
                let is_memref = a.ty.as_ref().is_some_and(|t| t.is_memref());
                let declared = if late && unspecified {
                    "ANY"
                } else if a.memory_space == Some("hbm") {
                    // `hbm` in `llo.type` at a late stage is the declaration: libtpu keeps it when XLA placed the
                    // operand in VMEM
                    "HBM"
                } else if !late
                    && (a.memory_space == Some("any") || (a.memory_space.is_none() && is_memref && !windowed))
                {
                    "ANY"
                } else {
                    continue;
                };
                let operand = k.host_operand(k.scalar_prefetch + n);
                let placed = if late && unspecified {
                    a.memory_space.map(|s| (s.to_string(), link::stage_of(&c.units[i])))
                } else {
                    None
                };
                match out.iter_mut().find(|x| x.operand == operand) {
                    Some(x) if x.placed.is_none() => x.placed = placed,
                    Some(_) => {}
                    None if !decided => out.push(AnyArg {
                        name: format!("%{}", a.name),
                        shown: crate::lint::names::arg_text(a),
                        declared,
                        ty: a.ty.as_ref().map(|t| t.to_string()).unwrap_or_default(),
                        operand,
                        dma_reads: k
                            .dma_starts
                            .iter()
                            .filter(|d| d.source.as_ref().and_then(|s| s.base_arg) == Some(a.index))
                            .count(),
                        kernel: kernel_name.to_string(),
                        placed,
                    }),
                    None => {}
                }
            }
            decided = true;
        }
    }
    out
}

/// The memory space of an HLO operand's layout (`S(1)` → 1), as written inline or on its definition.
fn operand_space(m: &Module<'_>, op: OpId, k: usize) -> Option<i64> {
    let o = m.op(op).operands.get(k)?;
    if let Some(s) = o.ty.as_ref().and_then(|t| t.shape()) {
        return s.memory_space();
    }
    let Def::Op { op: d, index } = o.def else { return None };
    let s = m.op(d).shape()?;
    match s.tuple_elements() {
        [] => s.memory_space(),
        els => els.get(index as usize).and_then(|e| e.memory_space()),
    }
}

/// The op that moved operand `k` of `call` into its memory space: a `copy-start` reached back through
/// `copy-done`, `bitcast` and `get-tuple-element`, else the operand's own producer.
fn producer(m: &Module<'_>, call: OpId, k: usize) -> Option<OpId> {
    let first = m.operand_def(call, k)?;
    let mut cur = first;
    for _ in 0..16 {
        let o = m.op(cur);
        match o.opcode {
            "copy-start" => return Some(cur),
            "copy-done" | "bitcast" | "get-tuple-element" => match m.operand_def(cur, 0) {
                Some(d) => cur = d,
                None => break,
            },
            _ => break,
        }
    }
    Some(first)
}

fn llo_vmem_operand(c: &Compilation<'_>, units: &[usize], operand: usize) -> Option<(usize, OpId, String)> {
    for &i in units {
        let u = c.units.get(i)?;
        let e = llo::entry_info(&u.module);
        for o in e.operands_in("vmem") {
            if o.index == Some(operand as i64) && o.kind != Some("output") {
                let shape = match (o.element, o.dims.is_empty()) {
                    (Some(el), false) => {
                        format!(" ({el}[{}])", o.dims.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(","))
                    }
                    (Some(el), true) => format!(" ({el})"),
                    _ => String::new(),
                };
                return Some((i, o.op, format!("inlined_call_operand.vmem index {operand}{shape}")));
            }
        }
    }
    None
}

fn what_happens(a: &AnyArg) -> &'static str {
    if a.dma_reads > 0 {
        "the kernel's manual DMAs then copy VMEM→VMEM"
    } else {
        "the kernel then reads it from VMEM"
    }
}

fn related(a: &AnyArg, llo: Option<(&str, &str)>) -> Vec<String> {
    let mut out = Vec::new();
    out.push(format!(
        "Mosaic `@{}`: {} : {} declared memory_space={}, read by {} DMA start(s)",
        a.kernel, a.name, a.ty, a.declared, a.dma_reads
    ));
    if let Some((space, stage)) = &a.placed {
        out.push(format!(
            "Mosaic `@{}` ({stage}): {} placed in {space} (llo.unspecified_memory_space)",
            a.kernel, a.name
        ));
    }
    if let Some((comp, line)) = llo {
        out.push(format!("LLO `{comp}`: {line}"));
    }
    out
}

fn hlo_unit(c: &Compilation<'_>, ui: usize) -> Vec<Hit> {
    let mut out = Vec::new();
    if !link::is_canonical(c, ui) {
        return out;
    }
    let m = &c.units[ui].module;
    for id in m.op_ids() {
        if !crate::parse::calls::is_tpu_custom_call(m, id) {
            continue;
        }
        let Some(kernel_name) = link::call_kernel_name(c, ui, id) else { continue };
        let mut units: Vec<usize> = link::decoded_unit(c, ui, id).into_iter().collect();
        units.extend(link::mosaic_dumps_of(c, &kernel_name));
        let call = m.op(id).name;
        let llo = link::llo_units(c, call);
        for a in any_args(c, &units, &kernel_name) {
            if a.operand >= m.op(id).operands.len() {
                continue;
            }
            let in_s1 = operand_space(m, id, a.operand) == Some(1);
            let llo_line = llo_vmem_operand(c, &llo, a.operand);
            if !in_s1 && llo_line.is_none() {
                continue;
            }
            let prod = producer(m, id, a.operand);
            let how = match prod.map(|p| m.op(p)) {
                Some(p) if in_s1 && crate::semantic::op::is_copy_start(p.opcode) => {
                    format!("`{}` copies `{}` to S(1)", p.name, p.operands.first().map(|o| o.name).unwrap_or("?"))
                }
                Some(p) if in_s1 => format!("its producer `{}` is in S(1)", p.name),
                _ => "LLO inlined_call_operand.vmem".to_string(),
            };
            let detail = format!(
                "operand {} of `{call}` ({} of @{kernel_name}, declared memory_space={}) was placed in VMEM by XLA ({how}); {}",
                a.operand,
                a.shown,
                a.declared,
                what_happens(&a)
            );
            let at = match prod {
                Some(p) if in_s1 => At::Op { unit: ui, op: p },
                _ => At::Op { unit: ui, op: id },
            };
            let label = if matches!(at, At::Op { op, .. } if op == id) {
                format!("operand {} (memory_space={}) placed in VMEM", a.operand, a.declared)
            } else {
                format!("moves a memory_space={} operand into VMEM (S(1))", a.declared)
            };
            let comp_line = llo_line.as_ref().map(|(_, _, l)| l.clone());
            let mut h = Hit::new(at.clone(), label, detail)
                .capture("operand", a.operand.to_string())
                .capture("call", call)
                .capture("kernel_arg", a.name.clone())
                .capture("declared", a.declared);
            if at != (At::Op { unit: ui, op: id }) {
                h = h.with_label(
                    At::Op { unit: ui, op: id },
                    format!(
                        "operand {} is {} of @{kernel_name}, declared memory_space={}",
                        a.operand, a.shown, a.declared
                    ),
                );
            }
            h.related = related(&a, comp_line.as_deref().map(|l| (call, l)));
            out.push(h);
        }
    }
    out
}

fn llo_unit(c: &Compilation<'_>, ui: usize) -> Vec<Hit> {
    let u = &c.units[ui];
    let Some(comp) = link::llo_computation(u) else { return Vec::new() };
    if crate::semantic::link::is_runtime_computation(&comp)
        || link::hlo_defines(c, &comp)
        || link::llo_units(c, &comp).first() != Some(&ui)
    {
        return Vec::new();
    }
    let e = llo::entry_info(&u.module);
    if e.opcode.is_some_and(|o| o != "custom-call") {
        return Vec::new();
    }
    let kernel_name = crate::semantic::link::base_name(&comp).to_string();
    let units: Vec<usize> = c.kernel_units(&kernel_name).map(|(i, _)| i).collect();
    let mut out = Vec::new();
    for a in any_args(c, &units, &kernel_name) {
        let Some((_, op, line)) = llo_vmem_operand(c, &[ui], a.operand) else { continue };
        let detail = format!(
            "operand {} of `{comp}` ({} of @{kernel_name}, declared memory_space={}) was placed in VMEM by XLA ({line}); {}",
            a.operand,
            a.shown,
            a.declared,
            what_happens(&a)
        );
        let label = format!("memory_space={} operand placed in VMEM", a.declared);
        let mut h = Hit::new(At::Op { unit: ui, op }, label, detail)
            .capture("operand", a.operand.to_string())
            .capture("call", comp.clone())
            .capture("kernel_arg", a.name.clone())
            .capture("declared", a.declared);
        h.related = related(&a, None);
        out.push(h);
    }
    out
}

/// The analysis entry point.
pub fn run(c: &Compilation<'_>, unit: usize, _opts: &Options) -> Vec<Hit> {
    let Some(u) = c.units.get(unit) else { return Vec::new() };
    match u.layer() {
        Layer::Hlo => hlo_unit(c, unit),
        Layer::Llo => llo_unit(c, unit),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::crosslink::sweep::{self, Found};

    fn hits(path: &std::path::Path) -> Vec<Found> {
        sweep::run(path, run, &Options::new())
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
    fn reported_at_the_copy_start_with_a_label_on_the_call() {
        let p = sweep::case(NAME, "invalid", "any_in_vmem@tpu7x");
        let files = crate::analysis::crosslink::testutil::dir_files(&p);
        let parsed = crate::analysis::crosslink::testutil::parse(&files);
        let c = Compilation::new(p.display().to_string(), &parsed, None);
        let all: Vec<Hit> = (0..c.units.len()).flat_map(|i| run(&c, i, &Options::new())).collect();
        assert_eq!(all.len(), 1, "once per operand: the LLO unit does not repeat the HLO's finding");
        let h = &all[0];
        let At::Op { unit, op } = h.at else { panic!("an op") };
        assert_eq!(c.units[unit].module.op(op).opcode, "copy-start");
        assert_eq!(h.labels.len(), 1);
        let At::Op { op: call, .. } = h.labels[0].at else { panic!("an op") };
        assert_eq!(c.units[unit].module.op(call).name, "k.1");
        assert_eq!(h.captures["operand"], "0");
        assert_eq!(h.captures["call"], "k.1");
        assert_eq!(h.captures["kernel_arg"], "%arg1");
        let d = &h.captures["detail"];
        assert!(d.contains("operand 0 of `k.1` (`%arg1` of @k, declared memory_space=ANY) was placed in VMEM"), "{d}");
        assert!(d.contains("`copy-start` copies `x` to S(1)") && d.contains("copy VMEM→VMEM"), "{d}");
        assert!(
            h.related.iter().any(|r| r.starts_with("LLO `k.1`: inlined_call_operand.vmem index 0")),
            "{:?}",
            h.related
        );
    }

    #[test]
    fn from_llo_when_no_hlo_shows_the_call() {
        let h = hits(&sweep::case(NAME, "invalid", "llo_only"));
        assert_eq!(h.len(), 1);
        assert_eq!(h[0].layer, "llo");
        assert_eq!(h[0].hit.captures["operand"], "0");
        assert!(h[0].hit.captures["detail"].contains("inlined_call_operand.vmem index 0 (f8e4m3fn[512,512])"));
    }

    /// Only bug_any_in_vmem on tpu7x has ANY operands placed in VMEM (on v6e XLA leaves them in HBM).
    #[test]
    fn fixture_verdicts() {
        for (name, dir) in sweep::fixture_dirs() {
            let h = hits(&dir);
            if name == "bug_any_in_vmem@tpu7x" {
                let ops: Vec<&str> = h.iter().map(|f| f.hit.captures["operand"].as_str()).collect();
                assert_eq!(ops, ["0", "1"], "x and w");
                for f in &h {
                    assert_eq!(f.layer, "hlo");
                    assert_eq!(f.hit.captures["call"], "fp8_mm_bug_any_in_vmem.1");
                    assert!(f.hit.captures["detail"]
                        .contains("declared memory_space=ANY) was placed in VMEM by XLA (`copy-start"));
                    assert!(f.hit.related.iter().any(|r| r.contains("inlined_call_operand.vmem")));
                    assert!(f.hit.related.iter().any(|r| r.contains("llo.unspecified_memory_space")));
                }
            } else {
                assert!(h.is_empty(), "{name}: {:?}", h.iter().map(|f| &f.hit.captures["detail"]).collect::<Vec<_>>());
            }
        }
    }

    /// examples/int8_hbm: an operand declared `pltpu.HBM` but not pinned is placed in VMEM on tpu7x exactly as a
    /// `pl.ANY` one is, and is reported the same way; pinned, or on v6e, it stays in HBM.
    #[test]
    fn declared_hbm_is_not_pinned_hbm() {
        let root = crate::analysis::crosslink::testutil::root().join("fixtures/int8_hbm/tpu7x+v6e");
        let mut seen = Vec::new();
        for e in std::fs::read_dir(&root).unwrap().flatten().filter(|e| e.path().is_dir()) {
            let name = e.file_name().to_string_lossy().to_string();
            let h = hits(&e.path());
            let got: Vec<(&str, &str)> =
                h.iter().map(|f| (f.hit.captures["operand"].as_str(), f.hit.captures["declared"].as_str())).collect();
            let expect: &[(&str, &str)] = match name.as_str() {
                "hbm_unpinned@tpu7x" => &[("0", "HBM"), ("1", "HBM")],
                "any@tpu7x" => &[("0", "ANY"), ("1", "ANY")],
                _ => &[],
            };
            assert_eq!(got, expect, "{name}");
            for f in &h {
                assert_eq!(f.layer, "hlo");
                assert!(f.hit.captures["detail"].contains("was placed in VMEM by XLA (`copy-start"), "{name}");
                assert!(f.hit.related.iter().any(|r| r.contains("inlined_call_operand.vmem")), "{name}");
            }
            seen.push(name);
        }
        seen.sort();
        assert_eq!(seen.len(), 6, "{seen:?}");
    }

    #[test]
    fn corpus_verdicts() {
        for (name, dir) in sweep::corpus_dirs() {
            let h = hits(&dir);
            assert!(h.is_empty(), "{name}: {:?}", h.iter().map(|f| &f.hit.captures["detail"]).collect::<Vec<_>>());
        }
    }
}
