//! One steady-state iteration of a kernel's main loop, read from its LLO bundles: which bundle issues a DMA, waits
//! on one, feeds the MXU, loads, stores or computes on vectors. The HTML report draws it as a timeline, one lane per
//! kind of work and one column per bundle (a bundle issues in one cycle when nothing stalls).
//!
//! The loop shown is the innermost one that holds MXU work: in a pipelined kernel that is the body one grid step
//! (or one K step) repeats, which is what sets the steady state. Loops are the synthetic `loop` ops the LLO
//! parser builds (one region per loop, nested loops nested); bundle addresses are consecutive, so a bundle's
//! column is its address minus the loop's first — empty bundles (`{}`, a stall slot) keep their column.

use crate::ir::{Module, OpId};
use crate::parse::llo::args::position;
use crate::semantic::llo::{classify, family, mnemonic as mn, OpClass};
use serde::Serialize;
use std::collections::BTreeMap;

/// What a lane of the timeline shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Lane {
    /// `dma.*` starts.
    DmaIssue,
    /// `dma.done.wait`, `vwait*`, `swait*`: the bundle blocks until a transfer or signal arrives.
    DmaWait,
    /// `vsync*`/`ssync*`: semaphore signals and resets.
    Sync,
    /// `vmatmul`, `vmatpush`, `vmatprep`, MXU result pops.
    Mxu,
    VectorLoad,
    VectorStore,
    /// Other vector ops (`v*`): the VPU's ALU slots, cross-lane units, transcendental unit.
    VectorAlu,
    /// Scalar ops: address arithmetic, SMEM loads and stores, compares, branches.
    Scalar,
}

impl Lane {
    pub const ALL: [Lane; 8] = [
        Lane::DmaIssue,
        Lane::DmaWait,
        Lane::Sync,
        Lane::Mxu,
        Lane::VectorLoad,
        Lane::VectorStore,
        Lane::VectorAlu,
        Lane::Scalar,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Lane::DmaIssue => "DMA issue",
            Lane::DmaWait => "DMA wait",
            Lane::Sync => "sync",
            Lane::Mxu => "MXU",
            Lane::VectorLoad => "vector load",
            Lane::VectorStore => "vector store",
            Lane::VectorAlu => "vector ALU",
            Lane::Scalar => "scalar",
        }
    }

    /// The lane of an op's mnemonic; `None` for what takes no slot (phis, the entry's operands, loop markers).
    pub fn of(mnemonic: &str) -> Option<Lane> {
        let fam = family(mnemonic);
        Some(match classify(mnemonic) {
            OpClass::Mxu => Lane::Mxu,
            OpClass::DmaStart => Lane::DmaIssue,
            OpClass::DmaWait => Lane::DmaWait,
            OpClass::Sync if fam.contains(mn::WAIT) => Lane::DmaWait,
            OpClass::Sync => Lane::Sync,
            OpClass::VectorLoad => Lane::VectorLoad,
            OpClass::VectorStore => Lane::VectorStore,
            OpClass::ScalarLoad | OpClass::ScalarStore | OpClass::Branch => Lane::Scalar,
            OpClass::Phi | OpClass::CallOperand | OpClass::Loop => return None,
            OpClass::Other if fam.starts_with('v') => Lane::VectorAlu,
            OpClass::Other => Lane::Scalar,
        })
    }
}

/// The ops of one lane in one bundle.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Mark {
    /// Bundles after the loop's first.
    pub offset: u64,
    /// Their mnemonics, in slot order.
    pub ops: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LaneMarks {
    pub lane: Lane,
    pub marks: Vec<Mark>,
}

/// One iteration of the loop as scheduled.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Timeline {
    /// The loop's region (`region95`), its nesting level (1: outermost) and its bundle addresses.
    pub region: String,
    pub level: u32,
    pub start: u64,
    pub end: u64,
    /// Bundles in one iteration, `end - start + 1`.
    pub bundles: u64,
    /// MXU ops in the loop's body (its inner loops included).
    pub mxu_ops: usize,
    /// Only the lanes that hold something, in `Lane::ALL` order.
    pub lanes: Vec<LaneMarks>,
    /// Loops nested in this one, as bundle offset ranges: drawn once here though they repeat.
    pub inner_loops: Vec<(u64, u64)>,
}

/// The timeline of the innermost loop holding MXU work; `None` when no loop holds any (a kernel without a loop,
/// or without a matmul).
pub fn steady_state(m: &Module<'_>) -> Option<Timeline> {
    let loops: Vec<OpId> = m.op_ids().filter(|&id| m.op(id).opcode == mn::LOOP).collect();
    let mut mxu_in: BTreeMap<OpId, usize> = BTreeMap::new();
    for id in m.op_ids() {
        if classify(m.op(id).opcode) == OpClass::Mxu {
            for a in m.ancestors(id) {
                *mxu_in.entry(a).or_default() += 1;
            }
        }
    }
    let level = |l: OpId| m.ancestors(l).filter(|&a| m.op(a).opcode == mn::LOOP).count();
    let chosen = loops
        .iter()
        .copied()
        .filter(|l| mxu_in.get(l).is_some_and(|&n| n > 0))
        .max_by_key(|&l| (level(l), mxu_in[&l], std::cmp::Reverse(l)))?;
    timeline_of(m, chosen, mxu_in[&chosen], level(chosen) as u32 + 1)
}

fn addr_attr(m: &Module<'_>, op: OpId, key: &str) -> Option<u64> {
    m.op(op).attr(key)?.word().and_then(crate::parse::llo::lex::parse_uint)
}

fn timeline_of(m: &Module<'_>, lp: OpId, mxu_ops: usize, level: u32) -> Option<Timeline> {
    let start = addr_attr(m, lp, "start")?;
    let end = addr_attr(m, lp, "end").or_else(|| addr_attr(m, lp, "backedge"))?.max(start);
    let mut per_lane: BTreeMap<Lane, BTreeMap<u64, Vec<String>>> = BTreeMap::new();
    let mut inner_loops = Vec::new();
    for id in region_ops(m, lp) {
        let op = m.op(id);
        if op.opcode == mn::LOOP {
            if let (Some(s), Some(e)) = (addr_attr(m, id, "start"), addr_attr(m, id, "end")) {
                inner_loops.push((s.saturating_sub(start), e.saturating_sub(start)));
            }
            continue;
        }
        let (Some(lane), Some((bundle, _))) = (Lane::of(op.opcode), position(op)) else { continue };
        if bundle < start || bundle > end {
            continue;
        }
        per_lane.entry(lane).or_default().entry(bundle - start).or_default().push(op.opcode.to_string());
    }
    let lanes = Lane::ALL
        .iter()
        .filter_map(|l| {
            let marks = per_lane.remove(l)?.into_iter().map(|(offset, ops)| Mark { offset, ops }).collect();
            Some(LaneMarks { lane: *l, marks })
        })
        .collect();
    let region = m.op(lp).name.to_string();
    Some(Timeline { region, level, start, end, bundles: end - start + 1, mxu_ops, lanes, inner_loops })
}

/// The ops inside a loop op's regions, nested ones included, in bundle order.
fn region_ops(m: &Module<'_>, lp: OpId) -> Vec<OpId> {
    let mut out = Vec::new();
    let mut stack: Vec<OpId> = vec![lp];
    while let Some(op) = stack.pop() {
        for &r in &m.op(op).regions {
            for &b in &m.regions[r.idx()].blocks {
                for &inner in &m.blocks[b.idx()].ops {
                    out.push(inner);
                    stack.push(inner);
                }
            }
        }
    }
    out.sort_by_key(|&id| position(m.op(id)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::llo::{parse_llo, LloFile};

    const V2: &str =
        "fixtures/fp8_matmul_2d/tpu7x+v6e/v2@tpu7x/llo/1795340885817873301-fp8_mm_v2.1-03-final_bundles.txt";

    fn timeline(path: &str) -> Option<Timeline> {
        let text = std::fs::read_to_string(path).unwrap();
        let Ok(LloFile::Bundles(p)) = parse_llo(path, &text) else { panic!("{path}: not bundles") };
        steady_state(&p.module)
    }

    #[test]
    fn lane_of_mnemonics() {
        assert_eq!(Lane::of("dma.hbm_to_vmem"), Some(Lane::DmaIssue));
        assert_eq!(Lane::of("dma.done.wait"), Some(Lane::DmaWait));
        assert_eq!(Lane::of("vwait.ge"), Some(Lane::DmaWait));
        assert_eq!(Lane::of("vsyncadd"), Some(Lane::Sync));
        assert_eq!(Lane::of("vmatmul.mubr.f8e4m3fn.vlgmr.msra.gmra.mrb[0].mxu0"), Some(Lane::Mxu));
        assert_eq!(Lane::of("vld"), Some(Lane::VectorLoad));
        assert_eq!(Lane::of("vst"), Some(Lane::VectorStore));
        assert_eq!(Lane::of("vadd.f32"), Some(Lane::VectorAlu));
        assert_eq!(Lane::of("sadd.s32"), Some(Lane::Scalar));
        assert_eq!(Lane::of("sphi"), None);
    }

    #[test]
    fn v2_steady_state_is_the_inner_k_loop() {
        let t = timeline(V2).expect("v2 has a loop with matmuls");
        // the grid loop starts at 0xa, the K loop nested in it at 0x59 (`LB: >>`)
        assert_eq!(t.level, 2, "{t:?}");
        assert_eq!(t.start, 0x59);
        assert_eq!(t.bundles, t.end - t.start + 1);
        assert!(t.mxu_ops > 0);
        let lanes: Vec<Lane> = t.lanes.iter().map(|l| l.lane).collect();
        for want in [Lane::DmaIssue, Lane::DmaWait, Lane::Mxu, Lane::Scalar] {
            assert!(lanes.contains(&want), "{want:?} missing from {lanes:?}");
        }
        // every mark lies inside the iteration, one mark per bundle and lane, in order
        for l in &t.lanes {
            assert!(l.marks.windows(2).all(|w| w[0].offset < w[1].offset));
            assert!(l.marks.iter().all(|m| m.offset < t.bundles && !m.ops.is_empty()));
        }
        let mxu = t.lanes.iter().find(|l| l.lane == Lane::Mxu).unwrap();
        assert_eq!(mxu.marks.iter().map(|m| m.ops.len()).sum::<usize>(), t.mxu_ops);
    }

    #[test]
    fn no_loop_no_timeline() {
        let text = "     0   :  { %s1 = smov 0 }\n   0x1   :  { %2 = vmatmul.f32.gmra.mxu0 %v1 }\n";
        let Ok(LloFile::Bundles(p)) = parse_llo("x-final_bundles.txt", text) else { panic!("not bundles") };
        assert_eq!(steady_state(&p.module), None);
    }

    #[test]
    fn every_fixture_kernel_with_matmuls_in_a_loop_has_a_timeline() {
        let root = std::path::Path::new("fixtures");
        let mut seen = 0;
        for e in walkdir::WalkDir::new(root).into_iter().flatten() {
            let p = e.path().to_string_lossy().to_string();
            if !p.ends_with("-final_bundles.txt") || p.contains("schedule-analysis") {
                continue;
            }
            let text = std::fs::read_to_string(&p).unwrap();
            let Ok(LloFile::Bundles(prog)) = parse_llo(&p, &text) else { continue };
            let m = &prog.module;
            let looped_mxu = m.op_ids().any(|id| {
                classify(m.op(id).opcode) == OpClass::Mxu && m.ancestors(id).any(|a| m.op(a).opcode == mn::LOOP)
            });
            let t = steady_state(m);
            assert_eq!(t.is_some(), looped_mxu, "{p}");
            if let Some(t) = t {
                seen += 1;
                assert!(t.start <= t.end && t.lanes.iter().any(|l| l.lane == Lane::Mxu), "{p}: {t:?}");
            }
        }
        assert!(seen > 10, "only {seen} fixture kernels with a looped matmul");
    }
}
