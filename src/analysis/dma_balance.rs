//! `dma-balance`, the analysis behind the rule of the same name: what it proves, how, and what each kind means
//! is [`DOC`]; why a hit matters is the rule's `doc` (rules/core.yaml); what the engine counts and why is
//! docs/dma-semantics.md. The engine is [`super::dma`]; this module runs it once per kernel that copies
//! (`copying_kernels`, whose run `dma-race` and `dma-double-buffering` read too), with the kernel's assumptions
//! from the configuration, and words its problems as hits (`hits_of`, `describe`).

use super::dma;
use super::dma_kind::DmaFailure;
use super::{At, Hit, Options};
use crate::ir::{Layer, Module, OpId};
use crate::lint::Compilation;
use crate::semantic::kernel;

/// What the analysis proves, how, and what a hit says: shown by `hlolint explain dma-balance` and on the rule's
/// page.
pub const DOC: &str =
    "Proves that every DMA a Pallas/Mosaic kernel starts (`tpu.enqueue_dma`) is waited and that every \
wait (`tpu.wait_dma2`, `tpu.wait_dma`) and semaphore wait (`tpu.sem_wait`) has something to take, per semaphore slot, \
for every input — or shows an input for which it fails. Semaphores count as the hardware does (jax's TPU interpreter \
models it the same way): a DMA adds its byte size to its target semaphore (and to its `source_semaphore`), a wait \
takes the byte size of its own descriptor, and a zero-byte DMA or wait is nothing. Values read at run time (SMEM \
tables, scalar prefetch, dynamic slice sizes, loop bounds) are symbols; sizes, slots and conditions are terms over \
them; a branch adds its condition to the guard of what it starts and waits for instead of forking; loops and the \
grid are checked by induction (the DMAs outstanding at the head of iteration i + 1 are what iteration i left, or, for \
rings and pipelines several blocks deep, the iterations before it), so no trip count or grid size is enumerated. \
Each question is decided by a small integer decision procedure (linear arithmetic with min, max, select, division \
and remainder by constants). Hit kinds: `never-waited` (at the start or signal: still outstanding when the kernel \
ends — the semaphore is not zero at exit), `wait-without-start` (at the wait: nothing outstanding on its slot gives \
what it takes), `wait-exceeds-signals` (at the wait: it takes more than is outstanding — it blocks forever). Every \
finding names an input that reaches it (grid and loop indices, values of the kernel's tables: `for example with \
kv_lens[1] = 0, num_seqs[0] = 2`): proven symbolically, or by replaying the kernel on that input (tables at the \
witness's values, zero elsewhere, every loop and grid step run with numbers), which also shows where a DMA was \
started and which start is to blame. Input assumptions are the configuration's (`per-kernel-assume = {\"ragged*\" = \
[\"kv_lens[*] >= 1\"]}`, docs/configuration.md): each question about a failure is asked again with them \
instantiated over the table elements it reads; a failure only inputs they exclude reach (an empty sequence its \
callers never pass) is a warning (`assumed`) showing that input and the assumption it breaks, a failure an allowed \
input reaches is an error whose witness (and replayed inputs, completed to values the assumptions allow) satisfies \
them, and one shown for neither leaves the kernel inconclusive; without assumptions every input counts. When the \
engine cannot follow something (a semaphore slot that may or may not be a DMA's, a DMA outstanding across \
iterations it cannot follow, a failure that needs values it cannot tie to inputs and no replay shows, an undecided \
question, its budget), the kernel gets an `inconclusive` result (note level) saying why and the op where it \
stopped — never a silent pass. Remote DMAs (`device_id`) are accounted as if local, assuming every device runs the \
same path (SPMD). Only the kernel as written is judged (its later stages and a decoded copy say the same). \
docs/dma-semantics.md has the details.";

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
    shares: Some(super::dma::SHARED_RUN),
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
        let out = dma::check_shared(m, &k, &assumptions(c, m, &k));
        hits.extend(hits_of(m, unit, &k, &out));
    }
    hits
}

/// The input assumptions `per-kernel-assume` states for kernel `k`, bound to its arguments. One that does not parse
/// or names what the kernel does not have is left out here: the run warns about it, pointing into the
/// configuration (`dma::assume::unmatched`).
pub(crate) fn assumptions(c: &Compilation<'_>, m: &Module<'_>, k: &kernel::Kernel<'_>) -> Vec<dma::assume::Bound> {
    let texts = c.assume.of(m.func(k.func).name);
    texts.into_iter().filter_map(|t| dma::assume::bind(&dma::assume::parse(t).ok()?, &k.args).ok()).collect()
}

/// One sentence per problem, in the kernel author's terms: the semaphore slot, the amounts, and the values that
/// make it happen.
fn describe(out: &dma::Outcome, p: &dma::Problem) -> String {
    let (sem, slot) = out.slot(&p.sem);
    let at = if slot.is_empty() { sem.clone() } else { format!("{sem}[{slot}]") };
    let w = out.witness(p);
    let with = if w.is_empty() { String::new() } else { format!(", for example with {w}") };
    // where a replay reached a wait (a start says where it was started)
    let with = match out.started_at(p) {
        at if p.kind != "never-waited" && !at.is_empty() => format!("{with} (in {at})"),
        _ => with,
    };
    match p.kind {
        "never-waited" if p.signal => format!(
            "a semaphore signal here adds {} to {at} and no wait takes it: the semaphore is not zero at kernel exit{with}",
            out.amount_at(p, &p.amounts.0)
        ),
        "never-waited" => {
            let when = out.started_at(p);
            let when = if when.is_empty() { String::new() } else { format!(" in {when}") };
            format!(
                "a DMA started here{when} signals {at} with {} bytes and is never waited: the semaphore is not zero at kernel exit{with}",
                out.amount_at(p, &p.amounts.0)
            )
        }
        "wait-exceeds-signals" => match (p.amounts.0.as_int(), p.amounts.1.as_int()) {
            (Some(t), Some(m)) => format!(
                "this wait takes {t} bytes but only {} bytes are outstanding on {at}: it blocks forever{with}",
                t - m
            ),
            _ => format!(
                "this wait takes {} bytes from {at} but {} bytes of them were never signalled: it blocks forever{with}",
                out.amount_at(p, &p.amounts.0),
                out.amount_at(p, &p.amounts.1)
            ),
        },
        _ => format!(
            "this wait takes {} bytes from {at} and no DMA outstanding on it gives them: it blocks forever{with}",
            out.amount_at(p, &p.amounts.0)
        ),
    }
}

fn hits_of(m: &Module<'_>, unit: usize, k: &kernel::Kernel<'_>, out: &dma::Outcome) -> Vec<Hit> {
    let mut hits = Vec::new();
    let mut possible = Vec::new();
    let balance = |p: &&dma::Problem| !dma::race::is_race(p.kind);
    let excluded = out.excluded.iter().filter(|x| balance(&&x.problem)).map(|x| (&x.problem, Some(x)));
    for (p, by) in out.problems.iter().filter(balance).map(|p| (p, None)).chain(excluded) {
        let mut detail = describe(out, p);
        // a finding is a proof only when everything before it was decided
        if !out.proven(p) {
            possible.push(detail);
            continue;
        }
        if let Some(x) = by {
            detail = excluded_by(detail, x);
        }
        // the dump's name: a finding's identity must not depend on whether the author's names are known
        let (sem, slot) = out.dump_slot(&p.sem);
        let mut h = Hit::new(At::Op { unit, op: p.op }, label(p.kind), detail)
            .capture("kind", p.kind)
            .capture("semaphore", sem)
            .capture("slot", slot);
        if let Some(r) = p.related {
            h = h.with_label(At::Op { unit, op: r }, "the DMA outstanding on that semaphore");
        }
        let failure = match &p.left_per_step {
            // a replay counted what each grid step left: the path simulation's classification
            Some(left) => {
                let in_loop = m.ancestors(p.op).any(|a| crate::semantic::op::is_loop(m.op(a).opcode));
                let steps = k.iteration_bounds.iter().try_fold(1usize, |n, &b| n.checked_mul(usize::try_from(b).ok()?));
                DmaFailure::of_balance(p.kind, left, in_loop, steps.unwrap_or(usize::MAX), p.started_last)
            }
            None => failure_of(p.kind, !p.at.is_empty()),
        };
        if let Some(f) = failure {
            h = f.tag(h);
        }
        h.related.extend(crate::lint::names::chain_note(k, p.op));
        if by.is_some() {
            h = h.assumed();
        }
        if !hits.iter().any(|x: &Hit| x.at == h.at && x.captures.get("kind") == h.captures.get("kind")) {
            hits.push(h);
        }
    }
    if let Some(at) = kernel_at(unit, k) {
        let mut why: Vec<String> = Vec::new();
        if let Some((_, r)) = &out.unknown {
            why.push(r.clone());
        }
        if let Some(p) = possible.first() {
            why.push(format!("a possible failure needs values the engine could not tie to inputs: {p}"));
        }
        if !why.is_empty() {
            let mut h = Hit::inconclusive(
                at.clone(),
                format!("DMA balance not proven for the whole kernel: {}", why.join("; ")),
            )
            .capture("kind", "inconclusive");
            // where the engine stopped, when that is an op of the kernel and not the kernel's first DMA
            let stop = out.unknown.as_ref().filter(|(op, _)| *op != OpId(0) && At::Op { unit, op: *op } != at);
            if let Some(&(op, _)) = stop {
                h = h.with_label(At::Op { unit, op }, "the analysis could not decide past this op");
            }
            hits.push(h);
        }
        let under = match out.assumed.is_empty() {
            true => String::new(),
            false => format!(
                ", under the input assumptions {}",
                out.assumed.iter().map(|a| format!("`{a}`")).collect::<Vec<_>>().join(", ")
            ),
        };
        hits.push(
            Hit::explored(at, format!("{} ops evaluated symbolically{under}", out.steps)).capture("kind", "explored"),
        );
    }
    hits
}

/// A failure's sentence, with the assumptions that exclude the input shown (a warning, `Hit::assumed`).
pub(crate) fn excluded_by(detail: String, x: &dma::Excluded) -> String {
    let by: Vec<String> = x.by.iter().map(|a| format!("`{a}`")).collect();
    let by = by.join(", ");
    match x.only {
        true => format!("{detail}; only inputs that `per-kernel-assume` excludes ({by}) reach it"),
        false => format!(
            "{detail}; that input is one `per-kernel-assume` excludes ({by}), and no input it allows was shown to reach it"
        ),
    }
}

/// The failure a problem stands for. A DMA never waited that a loop's (or the grid's) last iteration left is a
/// prefetch of an iteration that does not exist (the other iterations' copies were waited, or the induction would
/// not have closed); one left by straight-line code lacks its wait.
fn failure_of(kind: &str, left_by_last_iteration: bool) -> Option<DmaFailure> {
    Some(match kind {
        "wait-without-start" => DmaFailure::WaitWithoutDma,
        "wait-exceeds-signals" => DmaFailure::WaitExceedsSignals,
        "never-waited" if left_by_last_iteration => DmaFailure::UnguardedPrefetch,
        "never-waited" => DmaFailure::MissingWait,
        _ => return None,
    })
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
        .map(|mut k| {
            k.host = dma::host_facts(c, unit, &k);
            (m, k)
        })
        .collect()
}

/// Each kernel of a Mosaic unit that copies with DMAs, with its one symbolic run (shared by `dma-race` and
/// `dma-double-buffering`, whose findings all speak of DMA starts).
pub(crate) fn copying_kernels<'c, 'a>(
    c: &'c Compilation<'a>,
    unit: usize,
) -> Vec<(&'c Module<'a>, kernel::Kernel<'a>, std::rc::Rc<dma::Outcome>)> {
    balanced_kernels(c, unit)
        .into_iter()
        .filter(|(_, k)| !k.dma_starts.is_empty())
        .map(|(m, k)| {
            let out = dma::check_shared(m, &k, &assumptions(c, m, &k));
            (m, k, out)
        })
        .collect()
}

/// Where an op is, as its author wrote it where known (`kernels.py:182 (dump: line 90)`).
pub(crate) fn place(m: &Module<'_>, k: &kernel::Kernel<'_>, op: OpId) -> String {
    k.places.get(&op).cloned().unwrap_or_else(|| crate::lint::names::place(m, op, &[]))
}

/// Where a kernel-level verdict points: its first DMA op.
pub fn kernel_at(unit: usize, k: &kernel::Kernel<'_>) -> Option<At> {
    let op = k.dma_starts.first().map(|d| d.op).or_else(|| k.dma_waits.first().map(|w| w.op))?;
    Some(At::Op { unit, op })
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

    fn rule_files(rule: &str, kind: &str) -> Vec<(String, String)> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/rules").join(rule).join(kind);
        crate::source::cases_in(&dir)
            .into_iter()
            .map(|p| (p.display().to_string(), std::fs::read_to_string(&p).unwrap_or_default()))
            .collect()
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

    fn read(dir: &str, name: &str) -> String {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(dir).join(name);
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    }

    /// A rule case (tests/data/rules).
    fn data(name: &str) -> String {
        read("tests/data/rules", name)
    }

    /// The hits of `text` with the first `find` replaced by `with`; `find` must be there (an edit that changes
    /// nothing tests nothing).
    fn run_edited(text: &str, find: &str, with: &str) -> Vec<(String, String, usize)> {
        assert!(text.contains(find), "`{find}` is not in the case");
        run_text(&text.replacen(find, with, 1), run)
    }

    /// A case of the engine's own (tests/data/mlir/dma-engine).
    fn engine_case(name: &str) -> String {
        read("tests/data/mlir/dma-engine", name)
    }

    #[test]
    fn the_balance_cases_get_their_verdicts() {
        // the same valid/invalid cases as the path simulation
        assert_case_verdicts("dma-balance", run, 4);
    }

    #[test]
    fn each_problem_gets_the_help_of_its_failure() {
        assert_eq!(failure_of("never-waited", true), Some(DmaFailure::UnguardedPrefetch));
        assert_eq!(failure_of("never-waited", false), Some(DmaFailure::MissingWait));
        assert_eq!(failure_of("wait-without-start", false), Some(DmaFailure::WaitWithoutDma));
        assert_eq!(failure_of("wait-exceeds-signals", true), Some(DmaFailure::WaitExceedsSignals));
        assert_eq!(failure_of("inconclusive", false), None);
    }

    #[test]
    fn a_removed_receive_wait_blames_its_own_hop() {
        // jax's all_gather: three hops signal one receive semaphore; without the first hop's wait, the copy left
        // unwaited is the first hop's (the later waits name their own hops' copies), not the last one's
        let text = fixture_dump("jax_pallas_ops/all_gather@tpu7x");
        assert!(run_text(&text, run).is_empty());
        let wait = "    tpu.wait_dma2 semaphore(%arg5 : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>) src(%49 : memref<512x512xbf16, #tpu.memory_space<vmem>>) dst(%47 : memref<512x512xbf16, #tpu.memory_space<vmem>>) device_id(%45)\n";
        let first_hop = crate::ir::LineIndex::new(&text).line(text.find("tpu.enqueue_dma source(%27 :").unwrap());
        let hits = run_edited(&text, wait, "");
        assert!(hits.iter().any(|h| h.0 == "never-waited" && h.2 == first_hop), "{first_hop}: {hits:?}");
    }

    #[test]
    fn paged_attention_is_proven_balanced() {
        assert!(run_text(&data("dma-balance/valid/paged_attention.mlir"), run).is_empty());
        assert!(run_text(&data("dma-balance/valid/paged_attention_dynamic.mlir"), run).is_empty());
    }

    #[test]
    fn a_loop_whose_passes_do_not_settle_is_not_proven() {
        // without the guess, each pass of the paged loop hands one iteration more to the next: no invariant
        super::super::dma::induct::NO_GUESS.with(|g| g.set(true));
        let hits = run_text(&data("dma-balance/valid/paged_attention_dynamic.mlir"), run);
        super::super::dma::induct::NO_GUESS.with(|g| g.set(false));
        assert!(hits.len() == 1 && hits[0].0 == "inconclusive" && hits[0].1.contains("do not settle"), "{hits:?}");
    }

    #[test]
    fn one_page_of_a_block_left_unwaited_is_not_balanced() {
        // the block's page DMAs are one amount to the semaphore (one fact); a missing per-page wait leaves a page
        // outstanding into the next iteration, which the induction does not follow yet: not a proof, and blamed
        // on the block's DMAs (line 37 starts them)
        let text = data("dma-balance/valid/paged_attention.mlir");
        let wait = text.lines().find(|l| l.trim_start().starts_with("tpu.wait_dma2")).unwrap();
        let hits = run_edited(&text, wait, "");
        assert!(hits.iter().any(|h| ["never-waited", "inconclusive"].contains(&h.0.as_str()) && h.2 == 37), "{hits:?}");
    }

    #[test]
    fn dmas_a_loop_sums_are_what_the_wait_after_it_takes() {
        let engine = |name: &str| run_text(&engine_case(name), run);
        let hits = engine("summed_fill.mlir");
        assert!(hits.is_empty(), "{hits:?}");
        // one row short: the leftover needs the loop's sum, which is not an input: not proven, not clean
        let hits = engine("summed_fill_short.mlir");
        assert!(hits.len() == 1 && hits[0].0 == "inconclusive" && hits[0].1.contains("never waited"), "{hits:?}");
    }

    #[test]
    fn a_wait_of_two_run_time_sizes_takes_both_dmas() {
        // DMAs of `n` and `m` rows, one wait of `n + m`: larger than either, exactly both, for every table
        let text = engine_case("wait_of_two_sizes.mlir");
        assert!(run_text(&text, run).is_empty(), "{:?}", run_text(&text, run));
        // one row more than both: the wait takes them and still needs a row — for every table, so any is a witness
        let more = "%nm0 = arith.addi %n, %m : i32\n    %c1_i32 = arith.constant 1 : i32\n    %nm = arith.addi %nm0, %c1_i32 : i32";
        let hits = run_edited(&text, "%nm = arith.addi %n, %m : i32", more);
        // (with every entry zero no DMA moves a byte: then the wait has nothing outstanding at all)
        let kinds = ["wait-exceeds-signals", "wait-without-start"];
        assert!(hits.iter().any(|h| h.0 == kinds[0]), "{hits:?}");
        assert!(hits.iter().all(|h| kinds.contains(&h.0.as_str()) && h.2 == 28), "{hits:?}");
        // the second DMA as large as the first: the wait's rest (`m`) is not the second's size (`n`) — not proven
        let same = text.replace("<%m>", "<%n>");
        let hits = run_text(&same, run);
        assert!(!hits.is_empty() && hits.iter().all(|h| h.0 == "inconclusive"), "{hits:?}");
    }

    #[test]
    fn a_block_started_and_waited_page_by_page_in_loops_is_proven() {
        let text = engine_case("paged_loops.mlir");
        // the prefetch loop of step i and the wait loop of step i + 1 are one sum each, equal for every table
        assert!(run_text(&text, run).is_empty(), "{:?}", run_text(&text, run));
        // the prefetch onto the step's own slot instead of the other: the next step's wait loop finds no sum of its
        // shape on its slot — not proven (the sums' values are not inputs, so no exact witness yet)
        let hits = run_edited(&text, "%arg4[%other]", "%arg4[%slot]");
        assert!(hits.len() == 1 && hits[0].0 == "inconclusive", "{hits:?}");
        // a wait loop one page longer than the prefetch loop: its sum is not the prefetch's
        let longer = "%n1_c = arith.addi %n_c, %c1_i32 : i32\n    scf.for %p_c = %c0_i32 to %n1_c";
        let hits = run_edited(&text, "scf.for %p_c = %c0_i32 to %n_c", longer);
        assert!(hits.len() == 1 && hits[0].0 == "inconclusive", "{hits:?}");
    }

    #[test]
    fn a_loop_keeps_the_smem_places_it_never_stores() {
        let text = engine_case("smem_slot_kept.mlir");
        // the loop stores place 1 only: the slot at place 0 is the one the step started with, proven
        assert!(run_text(&text, run).is_empty(), "{:?}", run_text(&text, run));
        // the loop overwrites the slot too (with 0): a step after a prefetch into slot 1 waits on slot 0
        let hits = run_edited(&text, "memref.store %i, %arg4[%c1]", "memref.store %c0_i32, %arg4[%c0]");
        assert!(hits.iter().any(|h| h.0 == "wait-without-start"), "{hits:?}");
    }

    #[test]
    fn a_slot_kept_in_smem_across_grid_steps_is_followed() {
        let text = engine_case("smem_slot.mlir");
        // the wait reads the slot the previous step stored after its prefetch: proven for every step
        assert!(run_text(&text, run).is_empty(), "{:?}", run_text(&text, run));
        // without that store every prefetch goes to slot 1 while step 1 waits on slot 0
        let store = "      memref.store %other, %arg4[%c0] : memref<1xi32, #tpu.memory_space<smem>>\n";
        let hits = run_edited(&text, store, "");
        // found at step 1 by the induction, not proven there (step 0's prefetch outlives step 1); proven by a
        // replay of its witness
        assert!(
            hits.iter().any(|h| h.0 == "wait-without-start"
                && h.1.contains("no DMA outstanding on it gives them")
                && h.1.contains("(in grid step (1))")),
            "{hits:?}"
        );
    }

    #[test]
    fn a_pipeline_two_deep_is_proven_and_its_broken_variants_are_not_clean() {
        // each DMA is outstanding across two iterations: followed by a deep invariant, proven for every trip count
        let text = engine_case("two_ahead.mlir");
        assert!(run_text(&text, run).is_empty(), "{:?}", run_text(&text, run));
        // prefetching three ahead: block 2 is never started and the last one is never waited
        let hits = run_edited(&text, "%j = arith.addi %i, %c2_i32 : i32", "%j = arith.addi %i, %c1_i32 : i32");
        assert!(!hits.is_empty(), "one ahead while the prologue starts two: {hits:?}");
        let three = text.replace("%c2_i32 = arith.constant 2 : i32", "%c2_i32 = arith.constant 3 : i32");
        assert!(!run_text(&three, run).is_empty());
        // the in-loop wait removed
        let wait = text.lines().find(|l| l.contains("tpu.wait_dma2")).unwrap().to_string() + "\n";
        assert!(!run_edited(&text, &wait, "").is_empty());
    }

    #[test]
    fn a_ring_whose_first_blocks_are_started_before_the_loop_is_proven() {
        // the first two iterations take the blocks started before the loop, the later ones the prefetch of two
        // iterations earlier (the shape of tokamax's six-slot fused MoE decode)
        let text = engine_case("ring_prologue.mlir");
        assert!(run_text(&text, run).is_empty(), "{:?}", run_text(&text, run));
        // block 1 never started: iteration 1 has nothing to wait for
        let one = text.find("    %two = arith.cmpi").unwrap();
        let end = one + text[one..].find("    scf.for").unwrap();
        let hits = run_text(&format!("{}{}", &text[..one], &text[end..]), run);
        assert!(!hits.is_empty(), "{hits:?}");
        // prefetching three ahead: block 2 is never started
        let three = text.replace("%c2_i32 = arith.constant 2 : i32", "%c2_i32 = arith.constant 3 : i32");
        assert!(!run_text(&three, run).is_empty());
        // the in-loop wait removed
        let wait = text.lines().find(|l| l.contains("tpu.wait_dma2")).unwrap().to_string() + "\n";
        assert!(!run_edited(&text, &wait, "").is_empty());
    }

    /// The failures (kind, line) a replay of the dump's kernel shows on concrete tables (argument → elements),
    /// or `None` when it could not run to the end.
    fn replayed(text: &str, tables: &[(usize, Vec<i64>)]) -> Option<Vec<(String, usize)>> {
        let files = vec![source_file("k.mlir", text)];
        let parsed: Vec<Parsed> = parse_texts(&files).into_iter().map(|r| r.expect("parses")).collect();
        let c = Compilation::new(".".into(), &parsed, None);
        let (m, k) = balanced_kernels(&c, 0).into_iter().next()?;
        let inputs = dma::Inputs { tables: tables.iter().cloned().collect(), ..Default::default() };
        let found = dma::replay(m, &k, &inputs)?;
        Some(found.iter().map(|p| (p.kind.to_string(), m.line(m.op(p.op).span.start))).collect())
    }

    fn fixture_dump(folder: &str) -> String {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(folder).join("mosaic");
        let path = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(Result::ok)
            .map(|e| e.path())
            .find(|p| p.to_string_lossy().ends_with("post-deserialization.txt"))
            .unwrap();
        std::fs::read_to_string(path).unwrap()
    }

    #[test]
    fn a_replay_runs_the_kernel_on_concrete_tables() {
        // jax's ragged paged attention: kv_lens (%arg2), page_indices (%arg3), cu_q_lens (%arg4), seq_buf_idx
        // (%arg5), num_seqs (%arg6); 32 query tokens, KV blocks of 8 pages of 32 tokens
        let text = fixture_dump("jax_pallas_ops/ragged_paged@tpu7x");
        let tables = |kv: [i64; 2], cu: [i64; 2]| {
            let mut kv_lens = vec![0; 8];
            kv_lens[..2].copy_from_slice(&kv);
            let mut cu_q_lens = vec![cu[1]; 9];
            (cu_q_lens[0], cu_q_lens[1]) = (0, cu[0]);
            let pages: Vec<i64> = (0..256).collect();
            vec![(2, kv_lens), (3, pages), (4, cu_q_lens), (5, vec![0, 0]), (6, vec![2])]
        };
        // two sequences of 3 and 5 queries over 40 and 300 KV tokens (two KV blocks): every DMA waited
        assert_eq!(replayed(&text, &tables([40, 300], [3, 8])), Some(vec![]));
        // a first sequence with no query and a second with no KV token (inputs its callers never pass): the
        // prefetch of a block for the second sequence is never waited
        let found = replayed(&text, &tables([257, 0], [0, 65])).expect("runs to the end");
        assert!(found.iter().any(|(k, _)| k == "never-waited"), "{found:?}");
    }

    #[test]
    fn a_failure_the_induction_cannot_prove_is_proven_by_its_replay() {
        // jax's paged attention with the wait for K page 0 removed: the symbolic run cannot follow the page DMA
        // outstanding into the next iteration, a replay on its witness shows it never waited
        let text = fixture_dump("jax_pallas_ops/paged@tpu7x");
        let wait = "        tpu.wait_dma2 semaphore(%106 : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>) src(%114 : memref<32x128xbf16, #tpu.memory_space<any>>) dst(%110 : memref<32x128xbf16, #tpu.memory_space<vmem>>)\n";
        assert_eq!(text.matches(wait).count(), 2);
        let hits = run_text(&text.replace(wait, ""), run);
        let start = crate::ir::LineIndex::new(&text)
            .line(text.find("tpu.enqueue_dma source(%389 : memref<32x128xbf16").unwrap());
        assert!(
            hits.iter().any(|h| h.0 == "never-waited" && h.2 == start && h.1.contains("for example with")),
            "{start}: {hits:?}"
        );
    }

    #[test]
    fn unguarded_prefetch_is_never_waited_with_where() {
        let hits = run_text(&data("dma-balance/invalid/cross_step_leftover.mlir"), run);
        assert_eq!(hits.len(), 1, "{hits:?}");
        assert!(hits[0].1.contains("grid step (7)"), "{}", hits[0].1);
    }

    #[test]
    fn bytes_are_counted_and_wrong_slots_found() {
        assert!(run_text(&data("dma-balance/valid/halves_one_wait.mlir"), run).is_empty());
        let hits = run_text(&data("dma-balance/invalid/wait_exceeds_signals.mlir"), run);
        assert!(
            hits.iter()
                .any(|h| h.0 == "wait-exceeds-signals" && h.1.contains("takes 32768 bytes but only 16384 bytes")),
            "{hits:?}"
        );
        let hits = run_text(&data("dma-balance/invalid/mismatched_size.mlir"), run);
        assert!(hits.iter().any(|h| h.0 == "never-waited"), "{hits:?}");
    }

    #[test]
    fn a_dynamic_grid_gets_the_failure_a_grid_size_shows() {
        // the pipeline stops prefetching after step 7 (its guard names the compiled grid of 8): on a grid made
        // dynamic, a replay with 9 steps shows step 8 waiting for a prefetch nobody started
        let text = data("dma-balance/valid/cross_step_pipeline.mlir");
        let bounds = regex::Regex::new(r"iteration_bounds = array<i64: [^>]*>").unwrap();
        let dynamic = bounds.replace(&text, "iteration_bounds = array<i64: -9223372036854775808>");
        let hits = run_text(&dynamic, run);
        assert!(
            hits.iter().any(|h| h.0 == "wait-without-start"
                && h.1.contains("a grid of 9 along dimension 0")
                && h.1.contains("(in grid step (8))")),
            "{hits:?}"
        );
        let zero = bounds.replace(&text, "iteration_bounds = array<i64: 0>");
        assert!(run_text(&zero, run).is_empty());
    }
}
