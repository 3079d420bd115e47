//! Typed views over an LLO `ir::Module`: what rules ask of the bundles.
//!
//! Everything matches *families* of mnemonics, split on `.`, never one spelling: libtpu versions and TPU
//! generations print `vmatmul.mubr.f8e4m3fn.vlgmr.msra.gmra.mrb[0].mxu0` (tpu7x), `vmatmul.f32.gmra.mxu0`,
//! `vmatpush1.bf16.msra.mxu0`, `vmatprep.subr.f8e4m3.mxu0`, `dma.hbm_to_vmem`, `dma.general`, `dma.vmem_to_smem`,
//! `dma.done.wait`, `vsyncadd.remote`, `vwait.ge.trace`. The first segment names the family (trailing digits of
//! `vmatpush1` dropped); a segment that is a dtype (`f8e4m3fn`, `bf16`, `f32`, also the short `e4m3fn`) gives the
//! data format; a segment `mxuN` names the MXU.

use super::build::LloProgram;
use crate::ir::{DType, Module, Op, OpId, Value, ValueKind};
use serde::Serialize;
use std::fmt::Write;

// ---- op-level helpers -------------------------------------------------------------------------------------------

/// The op's operands and attributes in printed order (the `args` attribute).
pub fn args<'m, 'a>(op: &'m Op<'a>) -> &'m [Value<'a>] {
    op.attr("args").map(Value::items).unwrap_or(&[])
}

/// A named operand (`/*hbm=*/%s1` → `hbm`) or `key = value` attribute (`target`).
pub fn named<'m, 'a>(op: &'m Op<'a>, key: &str) -> Option<&'m Value<'a>> {
    args(op).iter().find_map(|a| match &a.kind {
        ValueKind::KeyVal { key: k, value } if *k == key => Some(&**value),
        _ => None,
    })
}

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

/// The op's predicate: `(!%p57_p0)` → `("p57_p0", negated)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Predicate<'a> {
    pub reg: &'a str,
    pub negated: bool,
}

pub fn predicate<'a>(op: &Op<'a>) -> Option<Predicate<'a>> {
    let first = op.attr("pred")?.items().first()?;
    match &first.kind {
        ValueKind::Name(n) => Some(Predicate { reg: n, negated: false }),
        ValueKind::Seq(xs) => match xs.as_slice() {
            [Value { kind: ValueKind::Punct("!"), .. }, Value { kind: ValueKind::Name(n), .. }] => {
                Some(Predicate { reg: n, negated: true })
            }
            _ => None,
        },
        _ => None,
    }
}

/// Memory references among the args: `[smem:[#allocation3]]` → `("smem", address group)`.
pub fn memrefs<'m, 'a>(op: &'m Op<'a>) -> impl Iterator<Item = (&'a str, &'m Value<'a>)> + 'm {
    args(op).iter().filter_map(|a| match &a.kind {
        ValueKind::Group { open: '[', items } => items.first().and_then(|f| match &f.kind {
            ValueKind::KeyVal { key, value } if is_space(key) => Some((*key, &**value)),
            _ => None,
        }),
        _ => None,
    })
}

fn is_space(k: &str) -> bool {
    matches!(k, "smem" | "vmem" | "hbm" | "cmem" | "sflag" | "imem" | "spmem" | "tilespmem") || k.ends_with("mem")
}

/// The bundle address and slot of an op.
pub fn position(op: &Op<'_>) -> Option<(u64, u32)> {
    let issue = op.issue?;
    Some((super::lex::parse_uint(issue.bundle)?, issue.slot))
}

// ---- classes ----------------------------------------------------------------------------------------------------

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
    if mnemonic == "loop" {
        return OpClass::Loop;
    }
    if fam == "dma" {
        return if segs().any(|s| s == "wait" || s == "done") { OpClass::DmaWait } else { OpClass::DmaStart };
    }
    if is_mxu(mnemonic) {
        return OpClass::Mxu;
    }
    if fam.starts_with("vsync") || fam.starts_with("vwait") || fam.starts_with("swait") || fam.starts_with("ssync") {
        return OpClass::Sync;
    }
    match fam {
        "sld" => OpClass::ScalarLoad,
        "sst" => OpClass::ScalarStore,
        "vld" => OpClass::VectorLoad,
        "vst" => OpClass::VectorStore,
        "sbr" | "br" | "sjmp" | "shalt" => OpClass::Branch,
        f if f.ends_with("phi") => OpClass::Phi,
        "inlined_call_operand" => OpClass::CallOperand,
        _ => OpClass::Other,
    }
}

fn is_mxu(mnemonic: &str) -> bool {
    let fam = family(mnemonic);
    fam.starts_with("vmat") || fam == "vllmr" || mnemonic.split('.').any(|s| s.starts_with("mxu"))
}

// ---- MXU --------------------------------------------------------------------------------------------------------

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
        "vmatmul" => MxuKind::Matmul,
        "vmatpush" => MxuKind::Push,
        "vmatprep" => MxuKind::Prep,
        f if f == "vpop" || f.starts_with("vmatres") => MxuKind::Result,
        _ => MxuKind::Other,
    };
    let dt = mnemonic_dtype(op.opcode);
    Some(MxuOp {
        op: id,
        mnemonic: op.opcode,
        kind,
        format: dt.map(|d| d.1),
        dtype: dt.map(|d| d.0),
        unit: op.opcode.split('.').find(|s| s.starts_with("mxu")),
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
        if !(fam == "vpack" || fam == "vunpack" || fam == "vcvt" || fam == "scvt") {
            continue;
        }
        // vcvt.s32.f32 names source and destination; the first dtype is the source.
        if let Some((dtype, format)) = mnemonic_dtype(op.opcode) {
            out.push(Conversion { op: id, mnemonic: op.opcode, family: fam, format, dtype });
        }
    }
    out
}

// ---- DMA --------------------------------------------------------------------------------------------------------

#[derive(Clone, Debug, Serialize)]
pub struct DmaOp<'a> {
    pub op: OpId,
    pub mnemonic: &'a str,
    pub is_wait: bool,
    /// `hbm_to_vmem` of `dma.hbm_to_vmem`; `general` for `dma.general`.
    pub route: Option<&'a str>,
    /// Source and destination memory spaces from the route (`hbm`, `vmem`), or from a `/* vmem-to-vmem */` note.
    pub src: Option<&'a str>,
    pub dst: Option<&'a str>,
    pub size_in_granules: Option<&'a str>,
    /// The sync flag the transfer signals (`dst_syncflagno`) or, for a wait, the one it waits on: an allocation
    /// (`#allocation3`, `#allocation6 + $0x1`) or a register.
    pub flag: Option<String>,
    pub predicate: Option<Predicate<'a>>,
}

pub fn dma_op<'a>(m: &Module<'a>, id: OpId) -> Option<DmaOp<'a>> {
    let op = m.op(id);
    let class = classify(op.opcode);
    if class != OpClass::DmaStart && class != OpClass::DmaWait {
        return None;
    }
    let is_wait = class == OpClass::DmaWait;
    let route = op.opcode.split('.').nth(1).filter(|_| !is_wait);
    let (mut src, mut dst) = match route.and_then(|r| r.split_once("_to_")) {
        Some((s, d)) => (Some(s), Some(d)),
        None => (None, None),
    };
    if src.is_none() {
        // dma.general /* vmem-to-vmem */
        for c in op.attrs.iter().filter(|a| a.key == "comment").filter_map(|a| match a.value.kind {
            ValueKind::Str(s) => Some(s),
            _ => None,
        }) {
            if let Some((s, d)) = c.split_once("-to-") {
                if !s.contains(' ') && !d.contains(' ') {
                    (src, dst) = (Some(s), Some(d));
                }
            }
        }
    }
    let flag = if is_wait {
        args(op).iter().find(|a| !matches!(a.kind, ValueKind::Group { open: '(', .. })).map(flag_text)
    } else {
        named(op, "dst_syncflagno").map(flag_text)
    };
    Some(DmaOp {
        op: id,
        mnemonic: op.opcode,
        is_wait,
        route,
        src,
        dst,
        size_in_granules: if is_wait {
            args(op)
                .iter()
                .filter(|a| !matches!(a.kind, ValueKind::Group { open: '(', .. }))
                .nth(1)
                .and_then(|v| v.word())
        } else {
            named(op, "size_in_granules").and_then(|v| v.word())
        },
        flag,
        predicate: predicate(op),
    })
}

pub fn dma_ops<'a>(m: &Module<'a>) -> Vec<DmaOp<'a>> {
    m.op_ids().filter_map(|id| dma_op(m, id)).collect()
}

/// A value as compact text: `[#allocation6 + $0x1]` → `#allocation6+$0x1`, `%s4_s0` → `%s4_s0`.
pub fn flag_text(v: &Value<'_>) -> String {
    let mut s = String::new();
    match &v.kind {
        ValueKind::Group { open: '[', items } => {
            for (k, it) in items.iter().enumerate() {
                if k > 0 {
                    s.push(' ');
                }
                write_value(&mut s, it);
            }
        }
        _ => write_value(&mut s, v),
    }
    s
}

fn write_value(s: &mut String, v: &Value<'_>) {
    match &v.kind {
        ValueKind::Word(w) | ValueKind::Punct(w) | ValueKind::Raw(w) => s.push_str(w),
        ValueKind::Str(w) => {
            let _ = write!(s, "\"{w}\"");
        }
        ValueKind::Name(n) => {
            s.push('%');
            s.push_str(n);
        }
        ValueKind::Typed { value, ty } => {
            write_value(s, value);
            let _ = write!(s, " : {ty}");
        }
        ValueKind::Group { open: '[', items } if items.len() == 1 => write_value(s, &items[0]),
        ValueKind::Group { open, items } => {
            let close = match open {
                '(' => ')',
                '[' => ']',
                _ => '}',
            };
            s.push(*open);
            for (k, it) in items.iter().enumerate() {
                if k > 0 {
                    s.push(' ');
                }
                write_value(s, it);
            }
            s.push(close);
        }
        ValueKind::KeyVal { key, value } => {
            s.push_str(key);
            s.push(':');
            write_value(s, value);
        }
        ValueKind::Seq(xs) => xs.iter().for_each(|x| write_value(s, x)),
    }
}

// ---- sync -------------------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SyncKind {
    /// `vsyncadd`, `vsyncadd.remote`: adds to a sync flag (semaphore signal / reset after a wait).
    Add,
    /// `vsyncpa`: sets a flag.
    Set,
    /// `vwait.ge`, `vwait.ne`, `dma.done.wait`: blocks until the flag meets the condition.
    Wait,
    /// `vsyncmov` and other `vsync*`.
    Other,
}

#[derive(Clone, Debug, Serialize)]
pub struct SyncOp<'a> {
    pub op: OpId,
    pub mnemonic: &'a str,
    pub kind: SyncKind,
    pub remote: bool,
    pub flag: Option<String>,
    /// The amount added / compared / waited for, as printed (`4294901760` is −65536 as u32).
    pub amount: Option<&'a str>,
    pub predicate: Option<Predicate<'a>>,
}

pub fn sync_op<'a>(m: &Module<'a>, id: OpId) -> Option<SyncOp<'a>> {
    let op = m.op(id);
    let class = classify(op.opcode);
    if class != OpClass::Sync && class != OpClass::DmaWait {
        return None;
    }
    let fam = family(op.opcode);
    let kind = if class == OpClass::DmaWait || fam.contains("wait") {
        SyncKind::Wait
    } else if fam == "vsyncadd" {
        SyncKind::Add
    } else if fam == "vsyncpa" {
        SyncKind::Set
    } else {
        SyncKind::Other
    };
    let plain: Vec<&Value<'a>> =
        args(op).iter().filter(|a| !matches!(a.kind, ValueKind::Group { open: '(', .. })).collect();
    Some(SyncOp {
        op: id,
        mnemonic: op.opcode,
        kind,
        remote: op.opcode.split('.').any(|s| s == "remote"),
        flag: plain.first().map(|v| flag_text(v)),
        amount: plain.get(1).and_then(|v| v.word()),
        predicate: predicate(op),
    })
}

pub fn sync_ops<'a>(m: &Module<'a>) -> Vec<SyncOp<'a>> {
    m.op_ids().filter_map(|id| sync_op(m, id)).collect()
}

// ---- SMEM -------------------------------------------------------------------------------------------------------

#[derive(Clone, Debug, Serialize)]
pub struct SmemAccess<'a> {
    pub op: OpId,
    pub mnemonic: &'a str,
    pub is_load: bool,
    /// The address inside `[smem:[...]]`, compact (`#allocation3`, `%s33_s15`, `#allocation8_spill`).
    pub address: String,
    /// Spill slots (`#allocationN_spill`) are the register allocator's, not the kernel's data.
    pub is_spill: bool,
}

/// Loads and stores through `[smem:...]` (`sld`, `sst`, and any other op with an SMEM memory reference).
pub fn smem_accesses<'a>(m: &Module<'a>) -> Vec<SmemAccess<'a>> {
    let mut out = Vec::new();
    for id in m.op_ids() {
        let op = m.op(id);
        for (space, addr) in memrefs(op) {
            if space != "smem" {
                continue;
            }
            let address = flag_text(addr);
            let fam = family(op.opcode);
            out.push(SmemAccess {
                op: id,
                mnemonic: op.opcode,
                is_load: fam.contains("ld") || fam.contains("load"),
                is_spill: address.contains("_spill"),
                address,
            });
        }
    }
    out
}

/// `sld [smem:...]` that are not spill reloads: scalars the kernel reads from SMEM (scales, prefetched indices).
pub fn smem_loads<'a>(m: &Module<'a>) -> Vec<SmemAccess<'a>> {
    smem_accesses(m).into_iter().filter(|a| a.is_load && !a.is_spill).collect()
}

// ---- entry bundle -----------------------------------------------------------------------------------------------

#[derive(Clone, Debug, Serialize)]
pub struct CallOperand<'a> {
    pub op: OpId,
    /// The register holding the operand's address (`s39334_s0`).
    pub value: &'a str,
    /// `vmem`, `hbm`, `smem`, `sflag`, `<no memory space>`: where XLA placed the operand.
    pub space: &'a str,
    pub index: Option<i64>,
    /// `input` / `output`.
    pub kind: Option<&'a str>,
    /// Element type and dims of `shape: f8e4m3fn[1024,1024]`.
    pub element: Option<&'a str>,
    pub dtype: Option<DType>,
    pub dims: Vec<i64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct EntryInfo<'a> {
    /// `%fusion = fusion(%copy-done, %x.1)` / `%matmul.1 = custom-call(%x.1, %y.1)`.
    pub hlo: Option<&'a str>,
    /// The HLO instruction name (`matmul.1`): links to the HLO dump and the LLO file name.
    pub name: Option<&'a str>,
    /// `custom-call`, `fusion`, `all-reduce`, ...
    pub opcode: Option<&'a str>,
    pub operands: Vec<CallOperand<'a>>,
}

impl<'a> EntryInfo<'a> {
    /// The custom call's name when the computation is one (a Pallas kernel: `matmul.1`).
    pub fn custom_call(&self) -> Option<&'a str> {
        (self.opcode == Some("custom-call")).then_some(self.name).flatten()
    }
    pub fn operands_in(&self, space: &str) -> impl Iterator<Item = &CallOperand<'a>> {
        let space = space.to_string();
        self.operands.iter().filter(move |o| o.space == space)
    }
}

pub fn entry_info<'a>(m: &Module<'a>) -> EntryInfo<'a> {
    let hlo =
        m.entry.and_then(|f| m.func(f).attrs.iter().find(|a| a.key == "entry")).and_then(|a| match a.value.kind {
            ValueKind::Str(s) => Some(s),
            _ => None,
        });
    let name = hlo.and_then(|h| h.strip_prefix('%')).and_then(|h| h.split(" = ").next()).map(str::trim);
    let opcode = hlo.and_then(|h| h.split_once(" = ")).map(|(_, r)| r.split('(').next().unwrap_or(r).trim());
    let mut operands = Vec::new();
    for id in m.op_ids() {
        let op = m.op(id);
        let Some(space) = op.opcode.strip_prefix("inlined_call_operand.") else { continue };
        let desc = args(op).iter().find(|a| matches!(a.kind, ValueKind::Group { open: '[', .. }));
        let shape = desc.and_then(|d| d.get("shape"));
        let (element, dims) = match shape.map(|s| &s.kind) {
            Some(ValueKind::Seq(xs)) => {
                (xs.first().and_then(Value::word), xs.get(1).and_then(Value::as_int_list).unwrap_or_default())
            }
            Some(ValueKind::Word(w)) => (Some(*w), Vec::new()),
            _ => (None, Vec::new()),
        };
        operands.push(CallOperand {
            op: id,
            value: op.name,
            space,
            index: desc.and_then(|d| d.get("index")).and_then(Value::as_int),
            kind: desc.and_then(|d| d.get("kind")).and_then(Value::word),
            element,
            dtype: element.and_then(DType::from_hlo),
            dims,
        });
    }
    EntryInfo { hlo, name, opcode, operands }
}

// ---- loops ------------------------------------------------------------------------------------------------------

/// The loops enclosing `op`, innermost first.
pub fn enclosing_loops(m: &Module<'_>, op: OpId) -> Vec<OpId> {
    m.ancestors(op).filter(|&a| m.op(a).opcode == "loop").collect()
}

pub fn in_loop(m: &Module<'_>, op: OpId) -> bool {
    m.ancestors(op).any(|a| m.op(a).opcode == "loop")
}

// ---- summary ----------------------------------------------------------------------------------------------------

/// A readable digest of a program: what the views see. Used by snapshot tests and `hlolint` debugging output.
pub fn summarize(p: &LloProgram<'_>) -> String {
    let m = &p.module;
    let mut s = String::new();
    let f = m.entry.map(|f| m.func(f).name).unwrap_or("?");
    let nops = m.ops.iter().filter(|o| o.opcode != "loop").count();
    let _ = writeln!(s, "func {f}: {} bundles, {} ops, {} loops", p.bundles.len(), nops, p.loops.len());
    let e = entry_info(m);
    if let Some(h) = e.hlo {
        let _ = writeln!(s, "entry: {h}");
    }
    for o in &e.operands {
        let _ = writeln!(
            s,
            "  operand {} {} {}{:?} in {}",
            o.index.map(|i| i.to_string()).unwrap_or_default(),
            o.kind.unwrap_or("?"),
            o.element.unwrap_or("?"),
            o.dims,
            o.space
        );
    }
    let mut classes: Vec<(OpClass, usize)> = Vec::new();
    for o in &m.ops {
        let c = classify(o.opcode);
        match classes.iter_mut().find(|x| x.0 == c) {
            Some(x) => x.1 += 1,
            None => classes.push((c, 1)),
        }
    }
    classes.sort();
    let _ = writeln!(s, "classes: {}", classes.iter().map(|(c, n)| format!("{c:?}={n}")).collect::<Vec<_>>().join(" "));
    let mut mxu: Vec<(MxuKind, String, usize)> = Vec::new();
    for x in mxu_ops(m) {
        let key = (x.kind, x.format.unwrap_or("-").to_string());
        match mxu.iter_mut().find(|y| y.0 == key.0 && y.1 == key.1) {
            Some(y) => y.2 += 1,
            None => mxu.push((key.0, key.1, 1)),
        }
    }
    mxu.sort();
    for (k, fmt, n) in mxu {
        let _ = writeln!(s, "mxu {k:?} {fmt}: {n}");
    }
    let mut conv: Vec<(&str, &str, usize)> = Vec::new();
    for c in conversions(m) {
        match conv.iter_mut().find(|x| x.0 == c.family && x.1 == c.format) {
            Some(x) => x.2 += 1,
            None => conv.push((c.family, c.format, 1)),
        }
    }
    conv.sort();
    for (f, fmt, n) in conv {
        let _ = writeln!(s, "convert {f} {fmt}: {n}");
    }
    for d in dma_ops(m) {
        let op = m.op(d.op);
        let _ = writeln!(
            s,
            "dma {} {} {}->{} flag={} size={}{}{}",
            op.issue.map_or("?", |i| i.bundle),
            d.mnemonic,
            d.src.unwrap_or("?"),
            d.dst.unwrap_or("?"),
            d.flag.as_deref().unwrap_or("?"),
            d.size_in_granules.unwrap_or("?"),
            d.predicate.map(|p| format!(" if {}{}", if p.negated { "!" } else { "" }, p.reg)).unwrap_or_default(),
            if in_loop(m, d.op) { " [loop]" } else { "" },
        );
    }
    for y in sync_ops(m).into_iter().filter(|y| y.kind != SyncKind::Wait || !y.mnemonic.starts_with("dma")) {
        let _ = writeln!(
            s,
            "sync {:?} {} flag={} amount={}",
            y.kind,
            y.mnemonic,
            y.flag.as_deref().unwrap_or("?"),
            y.amount.unwrap_or("?")
        );
    }
    for a in smem_accesses(m) {
        let _ = writeln!(
            s,
            "smem {} {} {}{}",
            if a.is_load { "load" } else { "store" },
            a.mnemonic,
            a.address,
            if a.is_spill { " (spill)" } else { "" }
        );
    }
    let mut per_loop = vec![0usize; m.ops.len()];
    for id in m.op_ids() {
        for a in m.ancestors(id) {
            per_loop[a.idx()] += 1;
        }
    }
    for l in &p.loops {
        let b = |i: usize| p.bundles.get(i).map(|b| b.addr_text).unwrap_or("?");
        let _ = writeln!(
            s,
            "loop $region{} level {}: bundles {}..{} (back edge {}), {} ops",
            l.region,
            l.level,
            b(l.start),
            b(l.end),
            b(l.backedge),
            per_loop.get(l.op.idx()).copied().unwrap_or(0)
        );
    }
    s
}

/// Does a MXU format say fp8 operands are native (`f8e4m3fn`), as opposed to widened in the MXU path
/// (`f8e4m3b11.bf16`) or not fp8 at all?
pub fn is_native_fp8_mnemonic(mnemonic: &str) -> bool {
    let dts: Vec<DType> = mnemonic.split('.').skip(1).filter_map(segment_dtype).collect();
    !dts.is_empty() && dts.iter().all(|d| d.is_f8())
}
