//! `dma-double-buffering`, the analysis behind the rule of the same name: what it checks and what each kind
//! means is [`DOC`]; why a hit matters is the rule's `doc` (rules/v2-dma.yaml). It reads the symbolic run of
//! [`super::dma`] made for `dma-balance` (`dma_balance::copying_kernels`) and `judge`s each on-chip buffer a DMA
//! refills: whether the refill's target region changes from one iteration to the next, and whether compute ran
//! while each DMA was in flight.

use super::dma::{self, Base};
use super::dma_balance::place;
use super::dma_kind::DmaFailure;
use super::{At, Hit, Options};
use crate::ir::{Layer, Module, OpId};
use crate::lint::Compilation;
use crate::semantic::kernel;
use std::collections::BTreeMap;

/// What the analysis checks, how, and what a hit says: shown by `hlolint explain dma-double-buffering` and on
/// the rule's page.
pub const DOC: &str = "Checks explicit double buffering in Pallas TPU kernels that copy with manual DMAs \
(`pltpu.make_async_copy` → `tpu.enqueue_dma` / `tpu.wait_dma2`): a buffer that DMAs refill in a loop or across grid \
steps has a second slot, and the next slot's DMA runs while the current slot is computed on. Judged on the symbolic \
run `dma-balance` proves its semaphores with (no value is sampled), for every VMEM buffer that a DMA refills — a \
start that runs in two consecutive iterations of a loop or grid steps —: `single-slot`: every refill lands in the \
same region whatever the iteration (one slot, or a slot index that never changes), so the next block's copy either \
overwrites the data being computed on (a race, which `dma-race` reports where it happens) or must be waited before \
the compute (no overlap); `no-overlap`: the refills alternate between slots, but every DMA into the buffer is waited \
with no compute (a vector load or store, a matmul) between its start and its wait, so nothing hides the transfer. \
Each finding names its cause for the author (`failure`: `single-slot`, `no-overlap`) and the help that fixes it \
(`help`). When the run cannot decide the kernel's DMAs (see `dma-balance`) or whether a refill's region changes, \
the kernel is `inconclusive` with the reason, never a silent pass.";

/// How rule packs call this analysis (`analysis: dma-double-buffering`).
pub static ANALYSIS: super::Analysis = super::Analysis {
    name: "dma-double-buffering",
    layers: &[Layer::Mosaic],
    doc: DOC,
    captures: &["kind", "buffer", "slots", "failure", "help"],
    kinds: &["single-slot", "no-overlap", "inconclusive", "explored"],
    options: &[],
    run,
    // reads no LLO op
    llo: super::LloReads::CrossLayerOps,
    shares: Some(super::dma::SHARED_RUN),
};

pub fn run(c: &Compilation<'_>, unit: usize, _o: &Options) -> Vec<Hit> {
    super::dma_balance::copying_kernels(c, unit).iter().flat_map(|(m, k, out)| judge(m, unit, k, out)).collect()
}

/// A buffer's type as the kernel declares it.
fn buffer_type<'a>(m: &Module<'a>, k: &kernel::Kernel<'a>, b: Base) -> Option<crate::ir::mlir_type::MlirType<'a>> {
    match b {
        Base::Arg(i) => k.args.get(i).and_then(|a| a.ty.clone()),
        Base::Alloc(op) => m.op(op).ty.mlir().cloned(),
    }
}

/// A buffer in VMEM: what a DMA refills for the vector units to compute on (an SMEM table refilled in a loop is
/// scalar bookkeeping — a schedule's page table —, not a block to overlap with compute).
fn on_chip(m: &Module<'_>, k: &kernel::Kernel<'_>, b: Base) -> bool {
    buffer_type(m, k, b).and_then(|t| t.memory_space()).is_some_and(|s| s == "vmem")
}

fn judge(m: &Module<'_>, unit: usize, k: &kernel::Kernel<'_>, out: &dma::Outcome) -> Vec<Hit> {
    let Some(at) = super::dma_balance::kernel_at(unit, k) else { return Vec::new() };
    let mut hits = Vec::new();
    let mut by_buf: BTreeMap<Base, Vec<(OpId, Option<bool>)>> = BTreeMap::new();
    for &(op, base) in &out.targets {
        if let Some(&v) = out.refilled.get(&op) {
            if on_chip(m, k, base) {
                by_buf.entry(base).or_default().push((op, v));
            }
        }
    }
    let mut undecided = None;
    for (base, starts) in by_buf {
        if let Some(&(op, _)) = starts.iter().find(|(_, v)| v.is_none()) {
            undecided.get_or_insert(op);
            continue;
        }
        let buffer = out.buffer_name(base);
        // (the refill in a loop, where there is one: a prologue's copy refills only across grid steps)
        let in_loop = |op: OpId| m.ancestors(op).any(|a| crate::semantic::op::is_loop(m.op(a).opcode));
        let first = starts.iter().map(|s| s.0).find(|&op| in_loop(op)).unwrap_or(starts[0].0);
        let (kind, failure, slots, detail) = if starts.iter().all(|(_, v)| *v == Some(false)) {
            let detail = format!(
                "every DMA refilling {buffer} lands in the same region at every iteration (first: {}): the next block's copy either overwrites the block being computed on or is waited before the compute, so no transfer overlaps compute; give it a leading dimension of 2 and alternate the slot (`k % 2`)",
                place(m, k, first)
            );
            ("single-slot", DmaFailure::SingleSlot, "1".to_string(), detail)
        } else {
            // every start into it that a wait took, with no compute while it was in flight (only from a run that
            // followed every DMA: a doubt speaks of waits it did not see)
            if out.unknown.is_some() {
                continue;
            }
            let waited: Vec<bool> = starts.iter().filter_map(|(op, _)| out.overlapped.get(op).copied()).collect();
            if waited.is_empty() || waited.iter().any(|&busy| busy) {
                continue;
            }
            let slots = buffer_type(m, k, base)
                .and_then(|t| t.shaped().and_then(|s| s.static_dims()))
                .and_then(|d| d.first().copied())
                .map_or("several".to_string(), |n| n.to_string());
            let detail = format!(
                "{buffer} has {slots} slots but every DMA into it is waited with no compute between its start and its wait (first: {}), so no transfer overlaps compute; start the next slot's DMA before computing on the current one",
                place(m, k, first)
            );
            ("no-overlap", DmaFailure::NoOverlap, slots, detail)
        };
        let label = match kind {
            "single-slot" => "DMA refilling a single slot",
            _ => "DMA waited with nothing overlapping it",
        };
        let mut h = Hit::new(At::Op { unit, op: first }, label, detail)
            .capture("kind", kind)
            .capture("buffer", out.dump_buffer(base))
            .capture("slots", slots);
        for &(op, _) in starts.iter().filter(|s| s.0 != first) {
            h = h.with_label(At::Op { unit, op }, "also refills it");
        }
        h = failure.tag(h);
        h.related.extend(crate::lint::names::chain_note(k, first));
        hits.push(h);
    }
    // a slot that never changes is shown whatever else the run could not follow; overlap needs every wait
    let why = match (&out.unknown, undecided) {
        (Some((_, why)), _) => Some(why.clone()),
        (None, Some(op)) => Some(format!(
            "whether the DMA at {} refills another region at each iteration is undecided",
            place(m, k, op)
        )),
        (None, None) => None,
    };
    if let Some(why) = why {
        let detail = format!("double buffering not decided for the whole kernel: {why}");
        hits.push(Hit::inconclusive(at.clone(), detail).capture("kind", "inconclusive"));
    }
    hits.push(Hit::explored(at, format!("{} ops evaluated symbolically", out.steps)).capture("kind", "explored"));
    hits
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::dma_balance::tests::{assert_case_verdicts, run_text};

    fn data(name: &str) -> String {
        let p =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/rules/dma-double-buffering").join(name);
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    }

    #[test]
    fn two_slot_pipeline_is_clean() {
        let hits = run_text(&data("valid/two_slot.mlir"), run);
        assert!(hits.is_empty(), "{hits:?}");
    }

    #[test]
    fn single_slot_is_one_slot_refilled() {
        let hits = run_text(&data("invalid/single_slot.mlir"), run);
        assert!(hits.len() == 1 && hits[0].0 == "single-slot", "{hits:?}");
        assert!(hits[0].1.contains("same region at every iteration"), "{hits:?}");
    }

    #[test]
    fn a_read_before_its_wait_is_a_race_not_a_missing_slot() {
        // two slots, alternating: double buffered; the read before the wait is `dma-race`'s
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/rules/dma-race/invalid/read_before_wait.mlir");
        let hits = run_text(&std::fs::read_to_string(p).unwrap(), run);
        assert!(hits.is_empty(), "{hits:?}");
    }

    #[test]
    fn wait_right_after_start() {
        let hits = run_text(&data("invalid/no_overlap.mlir"), run);
        assert!(hits.iter().any(|h| h.0 == "no-overlap"), "{hits:?}");
    }

    #[test]
    fn every_rule_file_gives_its_verdict() {
        assert_case_verdicts("dma-double-buffering", run, 2);
    }

    #[test]
    fn paged_attention_double_buffers() {
        // the balance fixture: two slots alternating through SMEM-held buffer index
        for f in ["valid/paged_attention.mlir", "valid/paged_attention_dynamic.mlir"] {
            let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/rules/dma-balance").join(f);
            let t = std::fs::read_to_string(p).unwrap();
            let hits = run_text(&t, run);
            assert!(hits.is_empty(), "{f}: {hits:?}");
        }
    }
}

#[cfg(test)]
mod fixture_tests {
    use crate::analysis::{analysis, At, Options};
    use crate::lint::compilation::{parse_texts, source_file, Compilation, Parsed};
    use std::path::Path;

    /// (version dir, analysis) → (unit description, kind, detail) per hit, over every Mosaic unit of the dir.
    fn verdicts(dir: &Path, name: &str) -> (usize, Vec<(String, String, String)>) {
        let mut files = Vec::new();
        for e in walkdir::WalkDir::new(dir).sort_by_file_name().into_iter().filter_map(Result::ok) {
            if e.file_type().is_file() {
                if let Ok(text) = std::fs::read_to_string(e.path()) {
                    files.push(source_file(&e.path().display().to_string(), &text));
                }
            }
        }
        let parsed: Vec<Parsed> = parse_texts(&files).into_iter().filter_map(Result::ok).collect();
        let c = Compilation::new(dir.display().to_string(), &parsed, None);
        let a = analysis(name).expect("registered");
        let mut out = Vec::new();
        let mut units = 0;
        for (i, u) in c.units_of(crate::ir::Layer::Mosaic) {
            // the kernel as written speaks for its other stages and copies
            if u.module.funcs.iter().any(|f| c.canonical_kernel_unit(f.name) == Some(i)) {
                units += 1;
            }
            for h in (a.run)(&c, i, &Options::new()) {
                assert!(matches!(h.at, At::Op { .. }));
                if h.verdict == crate::analysis::Verdict::Explored {
                    continue;
                }
                out.push((
                    format!("{} [{}]", u.describe(), u.stage_name.unwrap_or("")),
                    h.captures["kind"].clone(),
                    h.captures["detail"].clone(),
                ));
            }
        }
        (units, out)
    }

    fn version_dirs() -> Vec<std::path::PathBuf> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/fp8_matmul_2d");
        let mut v = Vec::new();
        for t in std::fs::read_dir(&root).into_iter().flatten().filter_map(Result::ok) {
            for d in std::fs::read_dir(t.path()).into_iter().flatten().filter_map(Result::ok) {
                if d.path().is_dir() {
                    v.push(d.path());
                }
            }
        }
        v.sort();
        v
    }

    #[test]
    fn project_fixtures_verdicts() {
        let dirs = version_dirs();
        assert!(dirs.len() >= 20, "fixtures present");
        for dir in dirs {
            let v = dir.file_name().and_then(|n| n.to_str()).unwrap_or("").split('@').next().unwrap_or("").to_string();
            let (units, bal) = verdicts(&dir, "dma-balance");
            let (_, dbuf) = verdicts(&dir, "dma-double-buffering");
            let (_, races) = verdicts(&dir, "dma-race");
            if std::env::var("DMA_VERBOSE").is_ok() {
                println!("== {} ({units} Mosaic units)", dir.display());
                for h in bal.iter().chain(&dbuf).chain(&races) {
                    println!("  {} {}: {}", h.0, h.1, h.2);
                }
            }
            match v.as_str() {
                "bug_unwaited_dma" => {
                    assert!(!bal.is_empty() && bal.iter().all(|h| h.1 == "never-waited"), "{}: {bal:?}", dir.display());
                    assert!(bal.iter().all(|h| h.2.contains("never waited")));
                    assert!(units > 0);
                    // the unit that speaks for the kernel sees it
                    let per_unit: std::collections::BTreeSet<&String> = bal.iter().map(|h| &h.0).collect();
                    assert_eq!(per_unit.len(), units, "{bal:?}");
                    // the stale prefetch is still in flight when the next grid step fills and reads slot 0: races,
                    // and the buffers are double buffered
                    assert!(races.iter().any(|h| h.1 == "write-while-filling"), "{races:?}");
                    assert!(races.iter().any(|h| h.1 == "read-while-filling"), "{races:?}");
                    assert!(dbuf.is_empty(), "{dbuf:?}");
                }
                "bug_single_slot" => {
                    assert!(bal.is_empty(), "balanced (racy, not unbalanced): {bal:?}");
                    assert!(dbuf.iter().any(|h| h.1 == "single-slot"), "{}: {dbuf:?}", dir.display());
                    assert!(dbuf.iter().all(|h| h.1 == "single-slot"), "{dbuf:?}");
                    assert!(races.iter().any(|h| h.1 == "read-while-filling"), "{races:?}");
                }
                _ => {
                    assert!(bal.is_empty(), "{}: {bal:?}", dir.display());
                    assert!(dbuf.is_empty(), "{}: {dbuf:?}", dir.display());
                    assert!(races.is_empty(), "{}: {races:?}", dir.display());
                }
            }
        }
    }
}
