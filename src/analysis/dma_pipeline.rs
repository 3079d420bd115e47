//! `dma-double-buffering`: the explicit (manual DMA) double-buffering pattern of Pallas TPU kernels: buffers that
//! DMAs refill in a loop or across grid steps have a second slot, the next slot's DMA runs while the current slot
//! is computed on, and a slot is read only after its DMA was waited. Judged on the simulated trace of
//! [`super::dma_sim`] (starts, waits, reads of memref regions, matmuls and stores, in program order), not on names.

use super::dma_kind::DmaFailure;
use super::dma_sim::{self, overlaps, slot_text, Base, Dma, Event, SimOutcome, State};
use super::{At, Hit, Options};
use crate::ir::{Layer, Module, OpId};
use crate::lint::Compilation;
use std::collections::{BTreeMap, BTreeSet};

pub const DOC: &str = "Checks explicit double buffering in Pallas TPU kernels that copy with manual DMAs \
(`pltpu.make_async_copy` → `tpu.enqueue_dma` / `tpu.wait_dma2`). For every buffer that DMAs refill more than once (in a \
loop or across grid steps), the kernel is simulated (as in `dma-balance`: per grid step, with concrete loop indices) \
and its trace of starts, waits, loads of buffer regions and compute (matmuls, stores) is checked. `single-slot`: \
every refill of the buffer lands in the same region (one slot, or a slot index that never changes), so the next \
block's copy either overwrites the data being computed on (a race: wrong results on hardware) or must wait before \
the compute (no overlap). `wait-after-use`: a slot of a multi-slot buffer is read while a DMA into it is still \
outstanding (its wait comes later, or a wait consumed a different transfer). `no-overlap`: the buffer has several \
slots but every DMA into it is waited with no compute between its start and its wait, so nothing hides the \
transfer: the copy costs its full latency each time. Each finding also names its cause for the author \
(`failure`: `single-slot`, `read-before-wait`, `never-waited` — a slot read while a DMA into it is in flight that \
nothing ever waits for —, `no-overlap`) and the help that fixes it (`help`). A hit matters because manual double buffering is done for \
speed, and the two failure modes are silent races or silently serial copies. Bounds are those of `dma-balance` \
(grid and loop sampling, path and op budgets; a finding is reported only if every explored path that ran the op shows \
it; when the exploration is inconclusive, the sampled runs of `dma-balance` are judged the same way: an op is reported \
when every sampled run that could judge it — that read the buffer, or ran the DMA at least twice — shows it). `post-finalize-llo` dumps (byte addresses) are skipped: the earlier stages of the same kernel are judged.";

/// How rule packs call this analysis (`analysis: dma-double-buffering`).
pub static ANALYSIS: super::Analysis = super::Analysis {
    name: "dma-double-buffering",
    layers: &[Layer::Mosaic],
    doc: DOC,
    captures: &["kind", "buffer", "slots", "failure", "help"],
    kinds: &["single-slot", "wait-after-use", "no-overlap", "inconclusive", "explored"],
    options: &[],
    run,
    // reads no LLO op
    llo: super::LloReads::CrossLayerOps,
};

#[derive(Clone, Debug)]
struct PipelineIssue {
    kind: &'static str,
    failure: Option<DmaFailure>,
    detail: String,
    buffer: String,
    slots: usize,
    related: Vec<(OpId, String)>,
}

pub fn run(c: &Compilation<'_>, unit: usize, _o: &Options) -> Vec<Hit> {
    let Some(u) = c.units.get(unit) else { return Vec::new() };
    if u.layer() != Layer::Mosaic {
        return Vec::new();
    }
    let m = &*u.module;
    let mut hits = Vec::new();
    for k in c.named_kernels(unit, m) {
        if k.dma_starts.is_empty() {
            continue;
        }
        let name = m.func(k.func).name;
        if c.canonical_kernel_unit(name).is_some_and(|best| best != unit) {
            continue;
        }
        let seed = dma_sim::seed_from_host(c, unit, &k);
        let out = dma_sim::simulate_seeded(m, &k, dma_sim::Mode::Trace, &seed);
        if out.unaccountable.is_some()
            || out.states.iter().any(|s| s.dmas.iter().any(|d| d.target.as_ref().is_some_and(|t| t.bytes)))
        {
            continue;
        }
        hits.extend(judge(m, unit, &k, &out));
        if let Some(at) = super::dma_balance::kernel_at(unit, &k) {
            if let Some(why) = out.inconclusive() {
                let detail = format!("double buffering not decided for the whole kernel: {why} ({})", out.explored());
                hits.push(Hit::inconclusive(at.clone(), detail).capture("kind", "inconclusive"));
            }
            hits.push(Hit::explored(at, out.explored()).capture("kind", "explored"));
        }
    }
    hits
}

/// Where an op is: in the author's Python where known (`kernels.py:182 (dump: line 90)`), else its dump line, else
/// (a decoded kernel has no text, its ops empty spans) its opcode.
fn line(m: &Module<'_>, places: &BTreeMap<OpId, String>, op: OpId) -> String {
    if let Some(p) = places.get(&op) {
        return p.clone();
    }
    crate::lint::names::place(m, op, &[])
}

/// Findings of one path, by the op they point at; and the ops the path ran that findings could point at.
fn per_state(m: &Module<'_>, out: &SimOutcome, s: &State) -> (BTreeMap<OpId, PipelineIssue>, BTreeSet<OpId>) {
    let mut found: BTreeMap<OpId, PipelineIssue> = BTreeMap::new();
    for (base, idx) in &dmas_by_buffer(s) {
        if idx.len() < 2 {
            continue; // refilled once: nothing to double-buffer
        }
        let b = Refills::of(m, out, s, *base, idx);
        if let Some((op, f)) = single_slot(m, s, &b) {
            found.insert(op, f);
            continue;
        }
        for (op, f) in waits_after_use(m, s, &b) {
            found.entry(op).or_insert(f);
        }
        if b.races.is_empty() && b.regions.len() >= 2 && !idx.iter().any(|&i| busy(s, &s.dmas[i])) {
            let d = &s.dmas[idx[0]];
            found.entry(d.op).or_insert(PipelineIssue {
                kind: "no-overlap",
                failure: Some(DmaFailure::NoOverlap),
                detail: format!(
                    "{} has {} slots but every DMA into it is waited with no compute between its start and its wait (first: started {}), so no transfer overlaps compute; start the next slot's DMA before computing on the current one",
                    b.buffer,
                    b.regions.len(),
                    d.when
                ),
                buffer: b.ssa.clone(),
                slots: b.regions.len(),
                related: Vec::new(),
            });
        }
    }
    (found, ops_ran(s))
}

/// The reads and DMA starts a path ran.
fn ops_ran(s: &State) -> BTreeSet<OpId> {
    let mut ran: BTreeSet<OpId> = BTreeSet::new();
    for e in &s.trace {
        match e {
            Event::Read { op, .. } => {
                ran.insert(*op);
            }
            Event::Start { dma } => {
                if let Some(d) = s.dmas.get(*dma) {
                    ran.insert(d.op);
                }
            }
            _ => {}
        }
    }
    ran
}

/// The path's DMAs per target buffer.
fn dmas_by_buffer(s: &State) -> BTreeMap<Base, Vec<usize>> {
    let mut by_buf: BTreeMap<Base, Vec<usize>> = BTreeMap::new();
    for (i, d) in s.dmas.iter().enumerate() {
        if let Some(t) = &d.target {
            by_buf.entry(t.base).or_default().push(i);
        }
    }
    by_buf
}

/// Does compute, or a read of another region, run while DMA `d` is in flight?
fn busy(s: &State, d: &Dma) -> bool {
    let end = s.trace.len();
    let stop = d.waited.unwrap_or(end).min(end);
    s.trace.get(d.started..stop).unwrap_or(&[]).iter().any(|e| match e {
        Event::Compute { .. } => true,
        Event::Read { region, .. } => d.target.as_ref().is_none_or(|t| !overlaps(t, region)),
        _ => false,
    })
}

/// The DMAs refilling one buffer on a path, and what the path did with them.
struct Refills<'i> {
    /// The buffer as messages name it (`xbuf`, else `%arg7`).
    buffer: String,
    /// As the dump names it (`%arg7`): the `buffer` capture, part of a finding's identity.
    ssa: String,
    /// Indices into the path's DMAs.
    idx: &'i [usize],
    /// Regions (concrete offsets) per start op.
    per_op: BTreeMap<OpId, BTreeSet<Vec<i64>>>,
    regions: BTreeSet<Vec<i64>>,
    /// Some refill's region has an unknown offset (it proves nothing).
    unknown: bool,
    /// Reads of a region while a DMA into it is outstanding: (trace index, read op, DMA).
    races: Vec<(usize, OpId, usize)>,
    /// Where the author's Python wrote each op (messages name ops so).
    places: std::sync::Arc<BTreeMap<OpId, String>>,
}

impl<'i> Refills<'i> {
    fn of(m: &Module<'_>, out: &SimOutcome, s: &State, base: Base, idx: &'i [usize]) -> Self {
        let mut per_op: BTreeMap<OpId, BTreeSet<Vec<i64>>> = BTreeMap::new();
        let mut unknown = false;
        let mut regions: BTreeSet<Vec<i64>> = BTreeSet::new();
        for &i in idx {
            let d = &s.dmas[i];
            let Some(t) = &d.target else { continue };
            match t.offs.iter().copied().collect::<Option<Vec<i64>>>() {
                Some(o) => {
                    per_op.entry(d.op).or_default().insert(o.clone());
                    regions.insert(o);
                }
                None => unknown = true,
            }
        }
        let mut races: Vec<(usize, OpId, usize)> = Vec::new();
        for (t, e) in s.trace.iter().enumerate() {
            let Event::Read { op, region } = e else { continue };
            if region.base != base {
                continue;
            }
            let outstanding = idx.iter().find(|&&i| {
                let d = &s.dmas[i];
                d.started < t
                    && d.waited.is_none_or(|w| w > t)
                    && d.target.as_ref().is_some_and(|x| overlaps(x, region))
            });
            if let Some(&i) = outstanding {
                races.push((t, *op, i));
            }
        }
        let buffer = dma_sim::base_shown(m, out, base);
        let ssa = dma_sim::base_label(m, out.func, base);
        Refills { buffer, ssa, idx, per_op, regions, unknown, races, places: out.places.clone() }
    }
}

/// Every repeated DMA op refills its one region, and the refills never overlap compute safely: one slot where two
/// are needed.
fn single_slot(m: &Module<'_>, s: &State, b: &Refills<'_>) -> Option<(OpId, PipelineIssue)> {
    let repeated: Vec<OpId> =
        b.per_op.keys().copied().filter(|op| b.idx.iter().filter(|&&i| s.dmas[i].op == *op).count() >= 2).collect();
    let single = !b.unknown
        && !repeated.is_empty()
        && repeated.iter().all(|op| b.per_op.get(op).is_some_and(|r| r.len() == 1))
        && (!b.races.is_empty() || !b.idx.iter().any(|&i| busy(s, &s.dmas[i])));
    if !single {
        return None;
    }
    let first = repeated[0];
    let slot = b
        .per_op
        .get(&first)
        .and_then(|r| r.iter().next())
        .map(|o| o.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", "))
        .unwrap_or_default();
    let why = match b.races.first() {
        Some(&(_, rop, _)) => {
            format!(
                "the DMA of the next block overwrites it while {} reads the current one (a race)",
                line(m, &b.places, rop)
            )
        }
        None => "each refill is waited before the compute, so no transfer overlaps compute".to_string(),
    };
    let mut related = Vec::new();
    if let Some(&(_, rop, _)) = b.races.first() {
        related.push((rop, "reads the slot being refilled".to_string()));
    }
    for op in repeated.iter().skip(1) {
        related.push((*op, "also refills the same slot".to_string()));
    }
    let finding = PipelineIssue {
        kind: "single-slot",
        failure: Some(DmaFailure::SingleSlot),
        detail: format!(
            "every DMA refilling {} targets the same slot [{slot}] ({} transfers into {} slot(s)): {why}; give it a leading dimension of 2 and alternate the slot (`k % 2`)",
            b.buffer,
            b.idx.len(),
            b.regions.len()
        ),
        buffer: b.ssa.clone(),
        slots: b.regions.len(),
        related,
    };
    Some((first, finding))
}

/// A finding per race: the read, the DMA still in flight, and why its wait did not cover the read.
fn waits_after_use(m: &Module<'_>, s: &State, b: &Refills<'_>) -> Vec<(OpId, PipelineIssue)> {
    let mut out = Vec::new();
    for &(t, rop, i) in &b.races {
        let d = &s.dmas[i];
        let slot = d.target.as_ref().map(slot_text).unwrap_or_default();
        let after = match d.waited {
            Some(w) => match s.trace.get(w) {
                Some(Event::Wait { op, .. }) => format!("its wait ({}) comes after this read", line(m, &b.places, *op)),
                _ => "its wait comes after this read".to_string(),
            },
            None => "it is never waited".to_string(),
        };
        // the last wait before the read on a DMA into this region, if it consumed another transfer
        let mut note = String::new();
        for e in s.trace[..t].iter().rev() {
            if let Event::Wait { op, dma: Some(j) } = e {
                let o = &s.dmas[*j];
                if *j != i && o.target.as_ref().zip(d.target.as_ref()).is_some_and(|(a, b)| overlaps(a, b)) {
                    note = format!(
                        "; the wait at {} consumed the DMA started {} instead",
                        line(m, &b.places, *op),
                        o.when
                    );
                    break;
                }
            }
        }
        out.push((
            rop,
            PipelineIssue {
                kind: "wait-after-use",
                failure: DmaFailure::of_pipeline("wait-after-use", d.waited.is_some()),
                detail: format!(
                    "slot [{slot}] of {} is read at {} while the DMA into it from {}, started {}, is still outstanding: {after}{note}",
                    b.buffer,
                    line(m, &b.places, rop),
                    line(m, &b.places, d.op),
                    d.when
                ),
                buffer: b.ssa.clone(),
                slots: b.regions.len(),
                related: vec![(d.op, "the DMA still in flight".to_string())],
            },
        ));
    }
    out
}

/// The ops a path can speak for: its buffer reads, and the DMA ops it ran more than once (a refill).
fn judgeable(s: &State) -> BTreeSet<OpId> {
    let mut runs: BTreeMap<OpId, usize> = BTreeMap::new();
    for d in s.dmas.iter().filter(|d| d.target.is_some()) {
        *runs.entry(d.op).or_default() += 1;
    }
    let mut ops: BTreeSet<OpId> = runs.into_iter().filter(|&(_, n)| n >= 2).map(|(op, _)| op).collect();
    ops.extend(s.trace.iter().filter_map(|e| match e {
        Event::Read { op, .. } => Some(*op),
        _ => None,
    }));
    ops
}

/// Ops whose finding every run that could judge them shows, on at least `min` runs: (op, the first run's finding).
/// A run is its findings by op and the ops it can speak for.
fn on_every_run(runs: &[(BTreeMap<OpId, PipelineIssue>, BTreeSet<OpId>)], min: usize) -> Vec<(OpId, PipelineIssue)> {
    let ops: BTreeSet<OpId> = runs.iter().flat_map(|(f, _)| f.keys().copied()).collect();
    let mut out = Vec::new();
    for op in ops {
        let ran: Vec<&BTreeMap<OpId, PipelineIssue>> =
            runs.iter().filter(|(_, r)| r.contains(&op)).map(|(f, _)| f).collect();
        if ran.len() < min.max(1) || !ran.iter().all(|f| f.contains_key(&op)) {
            continue;
        }
        if let Some(f) = ran[0].get(&op) {
            out.push((op, f.clone()));
        }
    }
    out
}

fn judge(m: &Module<'_>, unit: usize, k: &crate::semantic::kernel::Kernel<'_>, out: &SimOutcome) -> Vec<Hit> {
    let explored: Vec<(BTreeMap<OpId, PipelineIssue>, BTreeSet<OpId>)> =
        out.states.iter().map(|s| per_state(m, out, s)).collect();
    let mut found = on_every_run(&explored, 1);
    if out.data_dependent() {
        for (_, f) in found.iter_mut() {
            f.detail
                .push_str(" (on every explored path; the kernel's control flow depends on values read at run time)");
        }
    }
    // from the sampled runs (witnesses: runs some input values produce), by the same rule over them; a run counts
    // against an op only when it could judge it: the op read a buffer, or ran at least twice (a run that fetched one
    // block says nothing about double buffering)
    let sampled: Vec<(BTreeMap<OpId, PipelineIssue>, BTreeSet<OpId>)> =
        out.witnesses.iter().map(|s| (per_state(m, out, s).0, judgeable(s))).collect();
    for (op, mut f) in on_every_run(&sampled, dma_sim::MIN_WITNESSES) {
        if found.iter().any(|(o, _)| *o == op) {
            continue;
        }
        let runs = sampled.iter().filter(|(_, r)| r.contains(&op)).count();
        f.detail.push_str(&dma_sim::witness_note(runs, out.sampled));
        found.push((op, f));
    }
    let mut hits = Vec::new();
    for (op, f) in found {
        let label = match f.kind {
            "single-slot" => "DMA refilling a single slot",
            "wait-after-use" => "slot read before its DMA is waited",
            _ => "DMA waited with nothing overlapping it",
        };
        let mut h = Hit::new(At::Op { unit, op }, label, f.detail)
            .capture("kind", f.kind)
            .capture("buffer", f.buffer.clone())
            .capture("slots", f.slots.to_string());
        for (r, t) in &f.related {
            h = h.with_label(At::Op { unit, op: *r }, t.clone());
        }
        if let Some(failure) = f.failure {
            h = failure.tag(h);
        }
        h.related.extend(crate::lint::names::chain_note(k, op));
        hits.push(h);
    }
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
    fn single_slot_races() {
        let hits = run_text(&data("invalid/single_slot.mlir"), run);
        assert!(hits.iter().any(|h| h.0 == "single-slot" && h.1.contains("race")), "{hits:?}");
    }

    #[test]
    fn read_before_wait() {
        let hits = run_text(&data("invalid/wait_after_use.mlir"), run);
        assert!(hits.iter().any(|h| h.0 == "wait-after-use"), "{hits:?}");
        assert!(hits.iter().all(|h| h.0 == "wait-after-use"), "{hits:?}");
    }

    #[test]
    fn wait_right_after_start() {
        let hits = run_text(&data("invalid/no_overlap.mlir"), run);
        assert!(hits.iter().any(|h| h.0 == "no-overlap"), "{hits:?}");
    }

    #[test]
    fn every_rule_file_gives_its_verdict() {
        assert_case_verdicts("dma-double-buffering", run, 3);
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
            if std::env::var("DMA_VERBOSE").is_ok() {
                println!("== {} ({units} Mosaic units)", dir.display());
                for h in bal.iter().chain(&dbuf) {
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
                    // the stale prefetch is still in flight when the next grid step reads slot 0: a race
                    assert!(!dbuf.is_empty(), "{dbuf:?}");
                    assert!(dbuf.iter().all(|h| h.1 == "wait-after-use" && h.2.contains("never waited")), "{dbuf:?}");
                }
                "bug_single_slot" => {
                    assert!(bal.is_empty(), "balanced (racy, not unbalanced): {bal:?}");
                    assert!(dbuf.iter().any(|h| h.1 == "single-slot"), "{}: {dbuf:?}", dir.display());
                    assert!(dbuf.iter().all(|h| h.1 == "single-slot"), "{dbuf:?}");
                }
                _ => {
                    assert!(bal.is_empty(), "{}: {bal:?}", dir.display());
                    assert!(dbuf.is_empty(), "{}: {dbuf:?}", dir.display());
                }
            }
        }
    }
}
