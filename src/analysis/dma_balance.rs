//! `dma-balance`: every DMA a Mosaic kernel starts is waited, and every wait has a DMA to wait for, per semaphore
//! slot, across the kernel's control flow and its grid steps (see [`super::dma_sim`] for the simulation, and
//! docs/dma-semantics.md for the hardware semantics it counts with and the jax sources that establish them).

use super::dma_kind::DmaFailure;
use super::dma_sim::{self, Mode, SimOutcome};
use super::{At, Hit, Options};
use crate::ir::{Layer, Module};
use crate::lint::Compilation;
use crate::semantic::kernel;
use std::collections::BTreeMap;

pub const DOC: &str = "Checks that every DMA a Pallas/Mosaic kernel starts (`tpu.enqueue_dma`, LLO `llo.enqueue_dma`) is \
waited, that every wait (`tpu.wait_dma2`, `tpu.wait_dma`, `llo.dma_done`) has something to take, and that semaphore \
signals (`tpu.sem_signal`) are consumed by waits (`tpu.sem_wait`), per semaphore slot (the semaphore's kernel argument, \
`tpu.sem_alloc` or `tpu.sem_barrier`, plus its concrete indices, through slices, squeezes and `scf.for` iter_args). \
Semaphores count as the hardware does (jax's TPU interpreter models it the same way): a DMA adds its byte size to its \
target semaphore when it lands (and to its `source_semaphore` when sent), a DMA wait takes the byte size of its own \
descriptor, so one wait for a whole buffer after two half-size DMAs is balanced; when a size is unknown (LLO stages) \
one wait takes one DMA. Remote DMAs (`device_id`) are accounted as if local, assuming every device runs the same path \
(SPMD): the peer's copy to this device signals this device's semaphore. The body is simulated once per grid step in \
grid order (a DMA started in step i and waited in step i+1 — software pipelining — is balanced), with concrete values \
for grid indices, loop induction variables, constants and integer arithmetic, through `scf.for`, `scf.if`, \
`scf.while` and `scf.index_switch`. Hit kinds: `never-waited` (at the start or signal: still outstanding at the end of \
the grid — the semaphore is not zero at kernel exit), `wait-without-start` (at the wait: nothing outstanding on its \
semaphore slot), `wait-exceeds-signals` (at the wait: it takes more bytes or units than are outstanding — it blocks \
forever). Each finding also names its cause for the author (`failure`: `unguarded-prefetch` — a start that leaves \
one transfer per grid step while its other iterations are waited, or only the last grid step's —, `missing-wait`, \
`wait-without-dma`, `wait-exceeds-signals`) and the help that fixes it (`help`). Only the kernel as written is judged (its later stages and a decoded copy say the same). Bounds: every grid \
step when the grid has at most 64 points, else per dimension the first 2 and last indices with a multiple of 12 \
skipped between (slot phases `i % 2/3/4` preserved); `scf.for` loops fully up to 32 iterations, else the same \
sampling; dynamic trip counts and `scf.while` up to 4 iterations; values read from memory at run time are unknowns \
followed through monotone arithmetic (`(len + 255) / 256`), so that comparisons on them narrow consistently and fork \
the simulation only where they decide something; a region with no DMA or semaphore op inside (index computations, \
searches over lengths) is joined into one path per branch; paths that agree on everything that matters merge at \
region exits and grid-step boundaries (paths that differ only in how many transfers of one kind are in flight merge \
into the one with fewer); a transfer still outstanding 3 grid steps after it started is counted as never waited (no \
kernel seen waits further ahead); at most 256 paths and 1,000,000 op evaluations per kernel. An op is reported only when every explored path \
that executed it shows the problem. When the budget or the path bound ends the exploration, 24 single runs are \
sampled through the whole grid instead: each value read at run time is chosen (not forked on) one decision at a time, \
consistently with the earlier ones, so a run that took no vague decision is one some input values produce; inputs \
are sampled under a prior of non-degenerate data (1-D integer arrays positive and strictly increasing: no empty \
sequence or group, offsets in order — kernels such as ragged paged attention leave a prefetch unwaited on empty \
sequences their callers never pass). An op is then reported when it failed on every sampled run that reached it, at \
least 2 (the message says so). When a bound is hit, a semaphore or amount cannot be known, or the grid is dynamic, \
the kernel also gets an `inconclusive` result (note level) saying why — never a silent pass; `-v` shows what was \
explored and sampled.";

/// How rule packs call this analysis (`analysis: dma-balance`).
pub static ANALYSIS: super::Analysis = super::Analysis {
    name: "dma-balance",
    layers: &[Layer::Mosaic],
    doc: DOC,
    captures: &["kind", "semaphore", "slot", "failure", "help"],
    kinds: &["never-waited", "wait-without-start", "wait-exceeds-signals", "inconclusive", "explored"],
    options: &[],
    run,
    // reads no LLO op
    llo: super::LloReads::CrossLayerOps,
};

pub(crate) fn label(kind: &str) -> &'static str {
    match kind {
        "never-waited" => "DMA started here is never waited",
        "wait-without-start" => "nothing is outstanding on this semaphore here",
        _ => "this wait takes more than is outstanding on its semaphore",
    }
}

pub fn run(c: &Compilation<'_>, unit: usize, _o: &Options) -> Vec<Hit> {
    let mut hits = Vec::new();
    for (m, k) in balanced_kernels(c, unit) {
        let seed = dma_sim::seed_from_host(c, unit, &k);
        let out = dma_sim::simulate_seeded(m, &k, Mode::Balance, &seed);
        hits.extend(hits_of(m, unit, &k, &out));
    }
    hits
}

/// The kernels of a Mosaic unit whose DMA balance is judged there: those with DMAs or semaphore ops, and only in
/// the unit that speaks for them (the kernel as written; its later stages and other copies would say the same,
/// slower).
pub(crate) fn balanced_kernels<'c, 'a>(
    c: &'c Compilation<'a>,
    unit: usize,
) -> Vec<(&'c Module<'a>, kernel::Kernel<'a>)> {
    let Some(u) = c.units.get(unit).filter(|u| u.layer() == Layer::Mosaic) else { return Vec::new() };
    let m: &'c Module<'a> = &u.module;
    c.named_kernels(unit, m)
        .into_iter()
        .filter(|k| !k.dma_starts.is_empty() || !k.dma_waits.is_empty() || kernel::has_semaphore_ops(m, k.func))
        .filter(|k| c.canonical_kernel_unit(m.func(k.func).name).is_none_or(|best| best == unit))
        .map(|k| (m, k))
        .collect()
}

/// Where a kernel-level verdict points: its first DMA op.
pub fn kernel_at(unit: usize, k: &kernel::Kernel<'_>) -> Option<At> {
    let op = k.dma_starts.first().map(|d| d.op).or_else(|| k.dma_waits.first().map(|w| w.op))?;
    Some(At::Op { unit, op })
}

fn hits_of(m: &Module<'_>, unit: usize, k: &kernel::Kernel<'_>, out: &SimOutcome) -> Vec<Hit> {
    let mut hits = Vec::new();
    let reason = out.inconclusive();
    let failed = out.must_fail();
    let witnessed = out.witnessed(&failed);
    for (op, f, seen) in
        failed.into_iter().map(|(o, f)| (o, f, false)).chain(witnessed.into_iter().map(|(o, f)| (o, f, true)))
    {
        let mut detail = f.detail.clone();
        if out.data_dependent() && !seen {
            detail.push_str(" (on every explored path; the kernel's control flow depends on values read at run time)");
        }
        if out.steps.1.is_some_and(|t| (out.steps.0 as i64) < t) {
            detail.push_str(&format!(" [{} of {} grid steps simulated]", out.steps.0, out.steps.1.unwrap_or_default()));
        }
        let mut h = Hit::new(At::Op { unit, op }, label(f.kind), detail)
            .capture("kind", f.kind)
            .capture("semaphore", dump_name(k, &f.semaphore))
            .capture("slot", f.slot.clone());
        if let Some(r) = f.related {
            h = h.with_label(At::Op { unit, op: r }, "the DMA outstanding on that semaphore");
        }
        if let Some(failure) = failure_of(m, k, out, op, f.kind, seen) {
            h = failure.tag(h);
        }
        h.related.extend(crate::lint::names::chain_note(k, op));
        hits.push(h);
    }
    if let Some(at) = kernel_at(unit, k) {
        if let Some(why) = reason {
            hits.push(
                Hit::inconclusive(
                    at.clone(),
                    format!("DMA balance not decided for the whole kernel: {why} ({})", out.explored()),
                )
                .capture("kind", "inconclusive"),
            );
        }
        hits.push(Hit::explored(at, out.explored()).capture("kind", "explored"));
    }
    hits
}

/// A semaphore as the dump names it (`%arg9`) when the message names it as its author did (`sem`): the
/// `semaphore` capture is part of a finding's identity, which must not depend on whether the author's names are
/// known (the driver's manifest at hand).
fn dump_name(k: &kernel::Kernel<'_>, shown: &str) -> String {
    k.args
        .iter()
        .find(|a| a.python.as_deref() == Some(shown))
        .map(|a| format!("%{}", a.name))
        .unwrap_or_else(|| shown.to_string())
}

/// The cause of a failed op ([`DmaFailure::of_balance`]): its transfers still outstanding at the end, per grid
/// step, on the paths (explored, or sampled when `seen`) that show the failure.
fn failure_of(
    m: &Module<'_>,
    k: &kernel::Kernel<'_>,
    out: &SimOutcome,
    op: crate::ir::OpId,
    kind: &str,
    seen: bool,
) -> Option<DmaFailure> {
    let states = if seen { &out.witnesses } else { &out.states };
    let mut left: BTreeMap<usize, usize> = BTreeMap::new();
    // one path speaks: the first that failed here (paths that merged agree on what is left)
    if let Some(s) = states.iter().find(|s| s.fails.contains_key(&op)) {
        for d in s.dmas.iter().filter(|d| d.op == op && d.left.iter().any(|&l| l > 0)) {
            *left.entry(d.step).or_default() += 1;
        }
    }
    let in_loop = m.ancestors(op).any(|a| crate::semantic::op::is_loop(m.op(a).opcode));
    let steps = k.iteration_bounds.iter().try_fold(1usize, |n, &b| n.checked_mul(usize::try_from(b).ok()?));
    let left: Vec<usize> = left.into_values().collect();
    DmaFailure::of_balance(kind, &left, in_loop, steps.unwrap_or(usize::MAX))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::lint::compilation::{parse_texts, source_file, Compilation, Parsed};

    /// Runs an analysis over every Mosaic unit of a text: (kind, detail, line) per hit.
    pub fn run_text(text: &str, f: fn(&Compilation<'_>, usize, &Options) -> Vec<Hit>) -> Vec<(String, String, usize)> {
        let files = vec![source_file("k.mlir", text)];
        let parsed: Vec<Parsed> = parse_texts(&files).into_iter().map(|r| r.expect("parses")).collect();
        let c = Compilation::new(".".into(), &parsed, None);
        let mut out = Vec::new();
        for (i, u) in c.units.iter().enumerate() {
            for h in f(&c, i, &Options::new()) {
                let At::Op { op, .. } = h.at else { continue };
                if h.verdict == crate::analysis::Verdict::Explored {
                    continue;
                }
                let line = u.module.line(u.module.op(op).span.start);
                out.push((h.captures["kind"].clone(), h.captures["detail"].clone(), line));
            }
        }
        out
    }

    fn data(name: &str) -> String {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/rules").join(name);
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    }

    fn rule_files(rule: &str, kind: &str) -> Vec<(String, String)> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/rules").join(rule).join(kind);
        crate::source::cases_in(&dir)
            .into_iter()
            .map(|p| (p.display().to_string(), std::fs::read_to_string(&p).unwrap_or_default()))
            .collect()
    }

    #[test]
    fn paged_attention_pattern_is_balanced() {
        let hits = run_text(&data("dma-balance/valid/paged_attention.mlir"), run);
        assert!(hits.is_empty(), "{hits:?}");
    }

    #[test]
    fn paged_attention_with_dynamic_lengths_is_balanced() {
        let hits = run_text(&data("dma-balance/valid/paged_attention_dynamic.mlir"), run);
        assert!(hits.is_empty(), "{hits:?}");
    }

    #[test]
    fn unguarded_prefetch_is_never_waited() {
        let hits = run_text(&data("dma-balance/invalid/paged_prefetch_unguarded.mlir"), run);
        assert!(!hits.is_empty());
        assert!(hits.iter().all(|h| h.0 == "never-waited"), "{hits:?}");
        assert!(hits[0].1.contains("never waited"), "{}", hits[0].1);
    }

    #[test]
    fn wait_on_the_wrong_slot() {
        let hits = run_text(&data("dma-balance/invalid/paged_wrong_slot.mlir"), run);
        assert!(hits.iter().any(|h| h.0 == "wait-without-start"), "{hits:?}");
        assert!(hits.iter().any(|h| h.1.contains("[1]")), "the slot is named: {hits:?}");
    }

    #[test]
    fn wait_before_start() {
        let hits = run_text(&data("dma-balance/invalid/wait_before_start.mlir"), run);
        assert!(hits.iter().any(|h| h.0 == "wait-without-start"), "{hits:?}");
    }

    #[test]
    fn wait_of_another_size() {
        let hits = run_text(&data("dma-balance/invalid/mismatched_size.mlir"), run);
        // bytes: each wait takes half of what landed; the rest is still outstanding at the end
        assert!(hits.iter().any(|h| h.0 == "never-waited"), "{hits:?}");
    }

    #[test]
    fn dynamic_or_empty_grids_are_said_not_passed() {
        let text = data("dma-balance/valid/cross_step_pipeline.mlir");
        let bounds = regex::Regex::new(r"iteration_bounds = array<i64: [^>]*>").unwrap();
        // a dynamic bound (Mosaic prints `?` as i64::MIN): inconclusive, never a silent pass
        let dynamic = bounds.replace(&text, "iteration_bounds = array<i64: -9223372036854775808>");
        let hits = run_text(&dynamic, run);
        assert!(
            hits.len() == 1 && hits[0].0 == "inconclusive" && hits[0].1.contains("only known at run time"),
            "{hits:?}"
        );
        // huge bounds: sampled, no overflow, no allocation by the bound
        let huge = bounds.replace(&text, "iteration_bounds = array<i64: 9223372036854775807>");
        assert!(run_text(&huge, run).iter().all(|h| h.0 != "never-waited"));
        // zero steps: the kernel never runs
        let zero = bounds.replace(&text, "iteration_bounds = array<i64: 0>");
        assert!(run_text(&zero, run).is_empty());
    }

    #[test]
    fn semaphores_count_bytes() {
        let hits = run_text(&data("dma-balance/valid/halves_one_wait.mlir"), run);
        assert!(hits.is_empty(), "{hits:?}");
        let hits = run_text(&data("dma-balance/invalid/wait_exceeds_signals.mlir"), run);
        assert!(
            hits.iter()
                .any(|h| h.0 == "wait-exceeds-signals" && h.1.contains("takes 32768 bytes but only 16384 bytes")),
            "{hits:?}"
        );
    }

    #[test]
    fn cross_grid_step_pipelining_is_balanced_and_its_leftover_is_not() {
        assert!(run_text(&data("dma-balance/valid/cross_step_pipeline.mlir"), run).is_empty());
        let hits = run_text(&data("dma-balance/invalid/cross_step_leftover.mlir"), run);
        assert_eq!(hits.len(), 1, "{hits:?}");
        assert!(hits[0].1.contains("grid step (7)"), "{}", hits[0].1);
    }

    /// Every case in `tests/data/rules/<rule>/valid` gives no hit, every one in `invalid/` (at least
    /// `min_invalid` of them) some.
    pub fn assert_case_verdicts(rule: &str, f: fn(&Compilation<'_>, usize, &Options) -> Vec<Hit>, min_invalid: usize) {
        for (p, t) in rule_files(rule, "valid") {
            let hits = run_text(&t, f);
            assert!(hits.is_empty(), "{p}: {hits:?}");
        }
        let inv = rule_files(rule, "invalid");
        assert!(inv.len() >= min_invalid);
        for (p, t) in inv {
            assert!(!run_text(&t, f).is_empty(), "{p}");
        }
    }

    #[test]
    fn every_rule_file_gives_its_verdict() {
        assert_case_verdicts("dma-balance", run, 4);
    }

    #[test]
    fn sampling_keeps_phase() {
        let s = dma_sim::sample(100, 32);
        assert_eq!(&s[..2], &[0, 1]);
        assert_eq!(*s.last().unwrap(), 99);
        // the index after the first kept ones has the phase mod 12 it would have had
        assert_eq!(s[2] % 12, 2);
        assert_eq!(dma_sim::sample(5, 32), vec![0, 1, 2, 3, 4]);
    }
}
