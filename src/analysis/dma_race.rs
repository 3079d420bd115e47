//! `dma-race`, the analysis behind the rule of the same name: what it proves, how, and what each kind means is
//! [`DOC`]; why a hit matters is the rule's `doc` (rules/core.yaml). The questions are asked during the symbolic
//! run of [`super::dma`] that `dma-balance` makes ([`super::dma::race`] says how); this module reads that run's
//! race problems per kernel (`dma_balance::copying_kernels`) and words them as hits (`hits_of`, `describe`).

use super::dma::{self, race};
use super::dma_balance::place;
use super::dma_kind::DmaFailure;
use super::{At, Hit, Options};
use crate::ir::{Layer, Module};
use crate::lint::Compilation;
use crate::semantic::kernel;

/// What the analysis proves, how, and what a hit says: shown by `hlolint explain dma-race` and on the rule's page.
pub const DOC: &str = "Proves that a Pallas/Mosaic kernel never touches memory a DMA may still be copying, for every \
input — or shows an input for which it does. A DMA is in flight from its `.start()` (`tpu.enqueue_dma`) until the \
wait that takes it (see `dma-balance`: the same symbolic run, the same semaphore accounting). At every read of a \
buffer region (`vector.load`, `memref.load`, a DMA's source) and every write (a store, a DMA's target), the DMAs \
that may be in flight there are asked whether their target (or, for a write, their source) overlaps the region, \
with the indices, slots and conditions as terms over the kernel's run-time values (no value is sampled); inside \
loops and across grid steps the DMAs of earlier iterations are those the induction carries, and what was in \
flight before a loop is checked against the loop's first and later iterations. Hit kinds: `read-while-filling` \
(a read of a slot whose DMA has not been waited — usually a `.wait()` after the read, a wait on the other slot, or \
a prefetch nothing waits for), `write-while-filling` (a store to, or a second DMA into, a region a DMA is still \
filling), `write-while-sending` (a write to a region an outgoing DMA is still reading — an output slot reused \
before its write-back was waited). Every finding names an input that reaches it, proven symbolically or by replaying the kernel on that \
input. Input assumptions (`per-kernel-assume`) count as for `dma-balance`: a race only inputs they exclude reach (a \
table naming one row twice, where callers pass distinct rows) is a warning (`assumed`) showing that input. A region the \
engine cannot follow (a view that lost its dimensions, a DMA whose target it cannot name) makes \
a race only possible: with the balance engine's own doubts, the kernel is then `inconclusive` with the reason — \
never a silent pass. Only the kernel as written is judged. docs/dma-semantics.md has the details.";

/// How rule packs call this analysis (`analysis: dma-race`).
pub static ANALYSIS: super::Analysis = super::Analysis {
    name: "dma-race",
    layers: &[Layer::Mosaic],
    doc: DOC,
    captures: &["kind", "buffer", "failure", "help"],
    kinds: &[
        race::READ_WHILE_FILLING,
        race::WRITE_WHILE_FILLING,
        race::WRITE_WHILE_SENDING,
        "inconclusive",
        "explored",
    ],
    options: &[],
    run,
    // reads no LLO op
    llo: super::LloReads::CrossLayerOps,
    shares: Some(super::dma::SHARED_RUN),
};

pub fn run(c: &Compilation<'_>, unit: usize, _o: &Options) -> Vec<Hit> {
    super::dma_balance::copying_kernels(c, unit).iter().flat_map(|(m, k, out)| hits_of(m, unit, k, out)).collect()
}

/// One sentence per race: the region, the DMA in flight and where it was started, and the input.
fn describe(m: &Module<'_>, k: &kernel::Kernel<'_>, out: &dma::Outcome, p: &dma::Problem) -> String {
    let buffer = p.region.as_ref().map(|r| out.region(r)).unwrap_or_else(|| "a buffer".to_string());
    let dma = p.related.map(|op| place(m, k, op)).unwrap_or_else(|| "a DMA".to_string());
    let w = out.witness(p);
    let mut with = if w.is_empty() { String::new() } else { format!(", for example with {w}") };
    let at = out.started_at(p);
    if !at.is_empty() {
        with = format!("{with} (in {at})");
    }
    match p.kind {
        race::READ_WHILE_FILLING => format!(
            "{buffer} is read here while the DMA into it started at {dma} may still be in flight: the data may not have landed{with}"
        ),
        race::WRITE_WHILE_FILLING => format!(
            "{buffer} is written here while the DMA into it started at {dma} may still be in flight: one of the two writes is lost{with}"
        ),
        _ => format!(
            "{buffer} is written here while the DMA started at {dma} may still be reading it: the copy may carry the new data{with}"
        ),
    }
}

fn label(kind: &str) -> &'static str {
    match kind {
        race::READ_WHILE_FILLING => "read while a DMA into it may be in flight",
        race::WRITE_WHILE_FILLING => "written while a DMA into it may be in flight",
        _ => "written while a DMA out of it may be in flight",
    }
}

/// The failure a race stands for: a DMA on its semaphore that nothing waits for (a wait then takes the wrong
/// copy, and the one it was written for stays in flight), a read before the wait of its DMA, a write into a
/// region being filled, a source overwritten.
fn failure_of(kind: &str, never_waited: bool) -> DmaFailure {
    match kind {
        race::READ_WHILE_FILLING | race::WRITE_WHILE_FILLING if never_waited => DmaFailure::NeverWaited,
        race::READ_WHILE_FILLING => DmaFailure::ReadBeforeWait,
        race::WRITE_WHILE_FILLING => DmaFailure::WriteBeforeWait,
        _ => DmaFailure::SourceOverwritten,
    }
}

fn hits_of(m: &Module<'_>, unit: usize, k: &kernel::Kernel<'_>, out: &dma::Outcome) -> Vec<Hit> {
    let mut hits = Vec::new();
    let mut possible = Vec::new();
    let excluded = out.excluded.iter().filter(|x| race::is_race(x.problem.kind)).map(|x| (&x.problem, Some(x)));
    for (p, by) in out.problems.iter().filter(|p| race::is_race(p.kind)).map(|p| (p, None)).chain(excluded) {
        let mut detail = describe(m, k, out, p);
        if !out.proven_race(p) {
            possible.push(detail);
            continue;
        }
        if let Some(x) = by {
            detail = super::dma_balance::excluded_by(detail, x);
        }
        let buffer = p.region.as_ref().map(|r| out.dump_buffer(r.base)).unwrap_or_default();
        let mut h = Hit::new(At::Op { unit, op: p.op }, label(p.kind), detail)
            .capture("kind", p.kind)
            .capture("buffer", buffer);
        if let Some(r) = p.related {
            h = h.with_label(At::Op { unit, op: r }, "the DMA that may still be in flight");
        }
        let never_waited = out.problems.iter().any(|q| {
            q.kind == "never-waited" && out.proven(q) && (Some(q.op) == p.related || q.sem.base == p.sem.base)
        });
        h = failure_of(p.kind, never_waited).tag(h);
        h.related.extend(crate::lint::names::chain_note(k, p.op));
        if by.is_some() {
            h = h.assumed();
        }
        if !hits.iter().any(|x: &Hit| x.at == h.at && x.captures.get("kind") == h.captures.get("kind")) {
            hits.push(h);
        }
    }
    if let Some(at) = super::dma_balance::kernel_at(unit, k) {
        let mut why: Vec<String> = Vec::new();
        for (_, r) in out.unknown.iter().chain(&out.race_unknown) {
            why.push(r.clone());
        }
        if let Some(p) = possible.first() {
            why.push(format!("a possible race the engine could not tie to inputs: {p}"));
        }
        if !why.is_empty() {
            let h = Hit::inconclusive(at.clone(), format!("freedom from DMA races not proven: {}", why.join("; ")))
                .capture("kind", "inconclusive");
            hits.push(h);
        }
        hits.push(Hit::explored(at, format!("{} ops evaluated symbolically", out.steps)).capture("kind", "explored"));
    }
    hits
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::dma_balance::tests::{assert_case_verdicts, run_text};

    fn case(name: &str) -> String {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/rules/dma-race").join(name);
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    }

    #[test]
    fn every_case_gets_its_verdict() {
        assert_case_verdicts("dma-race", run, 4);
    }

    #[test]
    fn each_race_is_named_by_its_kind_at_its_access() {
        // (kind, line of the access) per case: the read before its wait, the read of the one slot being refilled,
        // the store into the output block its previous copy still reads, the next step's copy into the slot the
        // unguarded prefetch still fills
        for (name, kind, line) in [
            ("invalid/read_before_wait.mlir", race::READ_WHILE_FILLING, 33),
            ("invalid/single_slot.mlir", race::READ_WHILE_FILLING, 38),
            ("invalid/write_while_sending.mlir", race::WRITE_WHILE_SENDING, 44),
            ("invalid/prefetch_unguarded.mlir", race::WRITE_WHILE_FILLING, 16),
        ] {
            let hits = run_text(&case(name), run);
            assert!(hits.iter().any(|h| h.0 == kind && h.2 == line), "{name}: {hits:?}");
            assert!(hits.iter().all(|h| h.0 != "inconclusive"), "{name}: {hits:?}");
        }
    }

    #[test]
    fn moving_the_wait_before_the_read_removes_the_race() {
        // the invalid case with its wait moved up: the same kernel as the valid two-slot one
        let text = case("invalid/read_before_wait.mlir");
        let wait = text.lines().find(|l| l.trim_start().starts_with("tpu.wait_dma2")).unwrap();
        let load = text.lines().find(|l| l.contains("vector.load %arg3")).unwrap();
        let (w, r) = (text.find(wait).unwrap(), text.find(load).unwrap());
        assert!(r < w, "the case reads before it waits");
        let moved = text.replacen(&format!("{wait}\n"), "", 1).replacen(load, &format!("{wait}\n{load}"), 1);
        let hits = run_text(&moved, run);
        assert!(hits.is_empty(), "{hits:?}");
    }

    #[test]
    fn a_region_shows_its_offsets_and_extents() {
        let hits = run_text(&case("invalid/write_while_sending.mlir"), run);
        assert!(hits.iter().any(|h| h.1.starts_with("%arg2[0:128, 0:128] is written here")), "{hits:?}");
    }

    #[test]
    fn the_balance_cases_race_only_where_a_dma_is_left_in_flight() {
        // balanced kernels of the balance rule's cases: no race (or a doubt), never a finding
        for name in ["cross_step_pipeline.mlir", "halves_one_wait.mlir", "paged_attention.mlir"] {
            let p =
                std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/rules/dma-balance/valid").join(name);
            let hits = run_text(&std::fs::read_to_string(p).unwrap(), run);
            assert!(hits.iter().all(|h| h.0 == "inconclusive"), "{name}: {hits:?}");
        }
    }
}
