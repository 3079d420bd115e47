//! `dma-balance`: every DMA a Mosaic kernel starts is waited, and every wait has a DMA to wait for, per semaphore
//! slot, across the kernel's control flow and its grid steps (see [`super::dma_sim`] for the simulation).

use super::dma_sim::{self, Outcome};
use super::kernel;
use super::{At, Hit, Options};
use crate::ir::Layer;
use crate::lint::Compilation;

pub const DOC: &str = "Checks that every DMA a Pallas/Mosaic kernel starts (`tpu.enqueue_dma`, LLO `llo.enqueue_dma`) is \
waited, and that every wait (`tpu.wait_dma2`, `tpu.wait_dma`, `llo.dma_done`) has a DMA of the same size outstanding on \
its semaphore. Accounting is per semaphore slot (the semaphore's kernel argument or `tpu.sem_alloc` plus its concrete \
indices) and follows the kernel as it runs: the body is simulated once per grid step in grid order (so a DMA started \
in step i and waited in step i+1 — software pipelining — is balanced), with concrete values for grid indices, loop \
induction variables, constants and integer arithmetic, through `scf.for`, `scf.if`, `scf.while` and \
`scf.index_switch`. A DMA with a `source_semaphore` owes a wait on both semaphores. An unwaited DMA means the kernel \
can finish (or reuse the buffer) while the copy is still landing: wrong data or a runtime hang/error; a wait with \
nothing to wait for blocks forever or consumes another transfer's completion. Hit kinds: `never-waited` (at the \
start: still outstanding at the end of the whole grid), `wait-without-start` (at the wait: nothing outstanding on its \
semaphore slot), `mismatched-wait` (at the wait: DMAs are outstanding on that semaphore but none of its size). \
Bounds: every grid step when the grid has at most 64 points, else per dimension the first 2 and last indices with a \
multiple of 12 skipped between (slot phases `i % 2/3/4` preserved); `scf.for` loops fully up to 32 iterations, else \
the same sampling; dynamic trip counts and `scf.while` up to 4 iterations; values loaded from memory at run time are \
unknowns whose comparisons fork the simulation (consistently: `i < n` then `i + 1 < n`), at most 48 paths; an op is \
reported only when every explored path that executed it shows the problem. In `post-finalize-llo` dumps semaphores \
are byte addresses and sizes are not compared; a unit whose DMA ops' semaphores cannot be identified is skipped.";

fn label(kind: &str) -> &'static str {
    match kind {
        "never-waited" => "DMA started here is never waited",
        "wait-without-start" => "nothing is outstanding on this semaphore here",
        _ => "no outstanding DMA on this semaphore has this size",
    }
}

pub fn run(c: &Compilation<'_>, unit: usize, _o: &Options) -> Vec<Hit> {
    let Some(u) = c.units.get(unit) else { return Vec::new() };
    if u.layer() != Layer::Mosaic {
        return Vec::new();
    }
    let m = &*u.module;
    let mut hits = Vec::new();
    for k in kernel::kernels(m) {
        if k.dma_starts.is_empty() && k.dma_waits.is_empty() {
            continue;
        }
        let out = dma_sim::simulate(m, &k);
        hits.extend(hits_of(unit, &out));
    }
    hits
}

fn hits_of(unit: usize, out: &Outcome) -> Vec<Hit> {
    if out.unaccountable.is_some() {
        return Vec::new();
    }
    let mut hits = Vec::new();
    for (op, f) in out.must_fail() {
        let mut detail = f.detail.clone();
        if out.data_dependent() {
            detail.push_str(" (on every explored path; the kernel's control flow depends on values read at run time)");
        }
        if out.steps.0 < out.steps.1.max(0) as usize {
            detail.push_str(&format!(" [{} of {} grid steps simulated]", out.steps.0, out.steps.1));
        }
        let mut h = Hit::new(At::Op { unit, op }, label(f.kind), detail)
            .capture("kind", f.kind)
            .capture("semaphore", f.semaphore.clone())
            .capture("slot", f.slot.clone());
        if let Some(r) = f.related {
            h = h.with_label(At::Op { unit, op: r }, "the DMA outstanding on that semaphore");
        }
        hits.push(h);
    }
    hits
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
                let line = text[..u.module.op(op).span.start as usize].matches('\n').count() + 1;
                out.push((h.captures["kind"].clone(), h.captures["detail"].clone(), line));
            }
        }
        out
    }

    fn data(name: &str) -> String {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/rules").join(name);
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    }

    pub fn rule_files(rule: &str, kind: &str) -> Vec<(String, String)> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/rules").join(rule).join(kind);
        let mut v: Vec<(String, String)> = std::fs::read_dir(&dir)
            .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect::<Vec<_>>())
            .unwrap_or_default()
            .into_iter()
            .map(|p| (p.display().to_string(), std::fs::read_to_string(&p).unwrap_or_default()))
            .collect();
        v.sort();
        v
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
        assert!(hits.iter().any(|h| h.0 == "mismatched-wait" && h.1.contains("64x128")), "{hits:?}");
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
