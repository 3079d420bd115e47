//! DMAs (`dma.hbm_to_vmem`, `dma.general /* vmem-to-vmem */`, `dma.done.wait`) and sync-flag ops (`vsyncadd`,
//! `vsyncpa`, `vwait.ge`): the flags they signal and wait on, and the amounts.

use super::mnemonic as mn;
use super::{classify, family, OpClass};
use crate::ir::{Module, Op, OpId, ValueKind};
use crate::parse::llo::args::{flag_text, named, plain_args, predicate, Predicate};
use serde::Serialize;

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
    let (src, dst) = match route.and_then(|r| r.split_once("_to_")) {
        Some((s, d)) => (Some(s), Some(d)),
        None => spaces_from_comment(op),
    };
    let (flag, size_in_granules) = if is_wait {
        let mut plain = plain_args(op);
        (plain.next().map(flag_text), plain.next().and_then(|v| v.word()))
    } else {
        (named(op, "dst_syncflagno").map(flag_text), named(op, "size_in_granules").and_then(|v| v.word()))
    };
    Some(DmaOp {
        op: id,
        mnemonic: op.opcode,
        is_wait,
        route,
        src,
        dst,
        size_in_granules,
        flag,
        predicate: predicate(op),
    })
}

/// `dma.general /* vmem-to-vmem */`: the spaces a route-less DMA names in its comment (the last such comment).
fn spaces_from_comment<'a>(op: &Op<'a>) -> (Option<&'a str>, Option<&'a str>) {
    let mut spaces = (None, None);
    for c in op.attrs.iter().filter(|a| a.key == "comment").filter_map(|a| match a.value().kind {
        ValueKind::Str(s) => Some(s),
        _ => None,
    }) {
        if let Some((s, d)) = c.split_once("-to-") {
            if !s.contains(' ') && !d.contains(' ') {
                spaces = (Some(s), Some(d));
            }
        }
    }
    spaces
}

pub fn dma_ops<'a>(m: &Module<'a>) -> Vec<DmaOp<'a>> {
    m.op_ids().filter_map(|id| dma_op(m, id)).collect()
}

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
    let kind = if class == OpClass::DmaWait || fam.contains(mn::WAIT) {
        SyncKind::Wait
    } else if fam == mn::VSYNCADD {
        SyncKind::Add
    } else if fam == mn::VSYNCPA {
        SyncKind::Set
    } else {
        SyncKind::Other
    };
    let mut plain = plain_args(op);
    Some(SyncOp {
        op: id,
        mnemonic: op.opcode,
        kind,
        remote: op.opcode.split('.').any(|s| s == "remote"),
        flag: plain.next().map(flag_text),
        amount: plain.next().and_then(|v| v.word()),
        predicate: predicate(op),
    })
}

pub fn sync_ops<'a>(m: &Module<'a>) -> Vec<SyncOp<'a>> {
    m.op_ids().filter_map(|id| sync_op(m, id)).collect()
}
