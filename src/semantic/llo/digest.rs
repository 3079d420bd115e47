//! A readable digest of an LLO program: what the views see. Used by snapshot tests and debugging output.

use super::{classify, conversions, dma_ops, entry_info, family, in_loop, mxu_ops, smem_accesses, sync_ops};
use super::{MxuKind, OpClass, SyncKind};
use crate::ir::Module;
use crate::parse::llo::LloProgram;
use std::fmt::Write;

pub fn summarize(p: &LloProgram<'_>) -> String {
    let m = &p.module;
    let mut s = String::new();
    let f = m.entry.map(|f| m.func(f).name).unwrap_or("?");
    let nops = m.ops.iter().filter(|o| o.opcode != super::mnemonic::LOOP).count();
    let _ = writeln!(s, "func {f}: {} bundles, {} ops, {} loops", p.bundles.len(), nops, p.loops.len());
    entry_lines(m, &mut s);
    class_line(m, &mut s);
    mxu_lines(m, &mut s);
    conversion_lines(m, &mut s);
    dma_lines(m, &mut s);
    sync_lines(m, &mut s);
    smem_lines(m, &mut s);
    loop_lines(p, &mut s);
    s
}

/// Adds one to the count of `key`, keeping first-seen order (sorted afterwards by the callers).
fn count<K: PartialEq>(counts: &mut Vec<(K, usize)>, key: K) {
    match counts.iter_mut().find(|x| x.0 == key) {
        Some(x) => x.1 += 1,
        None => counts.push((key, 1)),
    }
}

fn entry_lines(m: &Module<'_>, s: &mut String) {
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
}

fn class_line(m: &Module<'_>, s: &mut String) {
    let mut classes: Vec<(OpClass, usize)> = Vec::new();
    for o in &m.ops {
        count(&mut classes, classify(o.opcode));
    }
    classes.sort();
    let _ = writeln!(s, "classes: {}", classes.iter().map(|(c, n)| format!("{c:?}={n}")).collect::<Vec<_>>().join(" "));
}

fn mxu_lines(m: &Module<'_>, s: &mut String) {
    let mut mxu: Vec<((MxuKind, String), usize)> = Vec::new();
    for x in mxu_ops(m) {
        count(&mut mxu, (x.kind, x.format.unwrap_or("-").to_string()));
    }
    mxu.sort();
    for ((k, fmt), n) in mxu {
        let _ = writeln!(s, "mxu {k:?} {fmt}: {n}");
    }
}

fn conversion_lines(m: &Module<'_>, s: &mut String) {
    let mut conv: Vec<((&str, &str), usize)> = Vec::new();
    for c in conversions(m) {
        count(&mut conv, (c.family, c.format));
    }
    conv.sort();
    for ((f, fmt), n) in conv {
        let _ = writeln!(s, "convert {f} {fmt}: {n}");
    }
}

fn dma_lines(m: &Module<'_>, s: &mut String) {
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
}

/// Sync ops other than the DMA waits (listed with the DMAs).
fn sync_lines(m: &Module<'_>, s: &mut String) {
    for y in sync_ops(m).into_iter().filter(|y| y.kind != SyncKind::Wait || family(y.mnemonic) != super::mnemonic::DMA)
    {
        let _ = writeln!(
            s,
            "sync {:?} {} flag={} amount={}",
            y.kind,
            y.mnemonic,
            y.flag.as_deref().unwrap_or("?"),
            y.amount.unwrap_or("?")
        );
    }
}

fn smem_lines(m: &Module<'_>, s: &mut String) {
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
}

fn loop_lines(p: &LloProgram<'_>, s: &mut String) {
    let m = &p.module;
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
}
