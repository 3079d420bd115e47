//! The performance model on real dumps: trip counts against the Mosaic grid and loops, and the facts of a few
//! fixtures (our kernels and jax's own) as snapshots.

use hlolint::lint::compilation::{group_dir, parse_file, Compilation, Parsed};
use hlolint::perf::{compilation_facts, Assume, CompilationFacts, Context};
use hlolint::semantic::tpu::Hardware;
use hlolint::source::{expand, load, SourceFile};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// The files a directory walk reads, grouped per compilation (dump folder).
fn files_of(dir: &Path) -> Vec<(String, Vec<SourceFile>)> {
    let (cands, errs) = expand(&[dir.to_path_buf()], false);
    assert!(errs.is_empty(), "{dir:?}");
    let mut groups: Vec<(String, Vec<SourceFile>)> = Vec::new();
    for c in cands {
        let Ok(Some(f)) = load(&c) else { continue };
        let g = group_dir(&f.path);
        match groups.iter_mut().find(|x| x.0 == g) {
            Some(x) => x.1.push(f),
            None => groups.push((g, vec![f])),
        }
    }
    groups
}

fn facts_with(dir: &Path, assume: &Assume) -> Vec<CompilationFacts> {
    let hw = Hardware::builtin();
    files_of(dir)
        .into_iter()
        .map(|(g, files)| {
            let parsed: Vec<Parsed> = files.iter().filter_map(|f| parse_file(f).ok()).collect();
            let c = Compilation::new(g, &parsed, None);
            compilation_facts(&c, &parsed, Context { hardware: &hw, assume })
        })
        .collect()
}

/// Our v2 (manual DMA, an `scf.for` over K inside a 4×4 grid) read end to end.
#[test]
fn v2_manual_dma_on_tpu7x() {
    let f = facts_with(&root().join("fixtures/fp8_matmul_2d/tpu7x+v6e/v2@tpu7x"), &Assume::default());
    let [c] = f.as_slice() else { panic!("one compilation") };
    let [k] = c.kernels.as_slice() else { panic!("one kernel") };
    assert_eq!(k.grid_steps, hlolint::perf::Estimate::Exact(16));
    assert_eq!(k.flops, hlolint::perf::Estimate::Exact(2 * 512 * 512 * 512), "a 512³ matmul");
    let llo = k.llo.as_ref().expect("an LLO program");
    let trips: Vec<_> = llo.loops.iter().map(|l| (l.level, l.trips.exact())).collect();
    assert_eq!(trips, [(1, Some(18)), (2, Some(4))]);
    assert!(k.cross_checks.iter().all(|x| x.agrees), "{:?}", k.cross_checks);
}

/// `--summary --format json` carries the same facts per compilation.
#[test]
fn summary_json_has_the_facts() {
    let dir = root().join("fixtures/fp8_matmul_2d/tpu7x+v6e/v3@tpu7x");
    let out =
        crate::common::hlolint().args(["--summary", "--format", "json", "--rules", "none"]).arg(&dir).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let got = &doc["compilations"][0]["perf"];
    // through text as the binary's are: serde_json reads some floats back an ulp or two off
    let want: serde_json::Value =
        serde_json::from_str(&serde_json::to_string(&facts_with(&dir, &Assume::default())[0]).unwrap()).unwrap();
    assert_eq!(got, &want);
    assert_eq!(got["kernels"][0]["name"], "fp8_mm_v3");
    // without --summary, or in another format, the model does not run
    let plain = crate::common::hlolint().args(["--format", "json", "--rules", "none"]).arg(&dir).output().unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&plain.stdout).unwrap();
    assert!(doc["compilations"][0].get("perf").is_none());
}

/// Every compilation folder under `dir` (a `name@target` folder, or one with `hlo/`/`llo/` inside).
fn compilation_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_dir() && e.path().join("llo").is_dir())
        .map(|e| e.into_path())
        .collect();
    out.sort();
    out
}

/// Checks the LLO loops of every kernel under `dir` against its Mosaic grid and `scf.for` bounds; returns how many
/// kernels were cross-checked and the names of those whose counts are unknown on both sides.
fn check_trip_counts(dir: &Path) -> (usize, Vec<String>) {
    let (mut checked, mut unknown) = (0, Vec::new());
    for d in compilation_dirs(dir) {
        for c in facts_with(&d, &Assume::default()) {
            for k in &c.kernels {
                let Some(llo) = &k.llo else { continue };
                let at = format!("{}: {}", c.dir, k.name);
                // a count unknown on either side (`extra` none) decides nothing; two known counts must agree
                for x in &k.cross_checks {
                    assert!(x.agrees || x.extra.is_none(), "{at}: {x:?}");
                }
                for l in &llo.loops {
                    assert!(
                        l.trips.bounds().is_none_or(|(lo, _)| lo >= 1),
                        "{at}: a loop body runs at least once: {l:?}"
                    );
                }
                match k.grid_steps.exact() {
                    Some(n) if n > 1 => {
                        assert!(k.cross_checks.iter().any(|x| x.mosaic == "the grid"), "{at}: the grid loop is found");
                        checked += 1;
                    }
                    Some(_) => {}
                    // a grid set at run time: the LLO's grid loop cannot have a count either
                    None => {
                        let outer = llo.loops.iter().filter(|l| l.level == 1).max_by_key(|l| l.static_bundles);
                        assert!(outer.is_none_or(|l| l.trips.exact().is_none()), "{at}: {outer:?}");
                        unknown.push(at);
                    }
                }
            }
        }
    }
    (checked, unknown)
}

/// Trip counts read from the LLO equal the Mosaic grid (plus the pipelined grid loop's extra stages) and the
/// `scf.for` bounds, on every fixture kernel: ours and jax's own, on every target.
#[test]
fn trip_counts_match_the_mosaic_grid_and_loops_on_the_fixtures() {
    let (ours, none) = check_trip_counts(&root().join("fixtures/fp8_matmul_2d"));
    assert!(ours >= 20 && none.is_empty(), "{ours} {none:?}");
    let (jax, unknown) = check_trip_counts(&root().join("fixtures/jax_pallas_ops"));
    assert!(jax >= 20, "{jax}");
    // gmm and tgmm size their grid at run time (group sizes): unknown, never guessed
    assert!(unknown.iter().all(|u| u.contains("gmm@")), "{unknown:?}");
    assert_eq!(unknown.len(), 6, "{unknown:?}");
}

#[test]
fn trip_counts_match_the_mosaic_grid_on_the_corpus() {
    let Some(corpus) = crate::common::corpus() else { return };
    let (checked, _) = check_trip_counts(&corpus);
    assert!(checked >= 3, "{checked}");
}

/// A grid sized at run time and its LLO loop, fixed by `--assume`: the two agree again.
#[test]
fn assumed_counts_fix_a_dynamic_grid() {
    let dir = root().join("fixtures/jax_pallas_ops/gmm@tpu7x");
    let assume = Assume::parse(["kernel/grid1=4", "gmm.1/region102=10"]).unwrap();
    let f = facts_with(&dir, &assume);
    let k = &f[0].kernels[0];
    assert_eq!(k.grid_steps, hlolint::perf::Estimate::Exact(8));
    let llo = k.llo.as_ref().unwrap();
    let outer = llo.loops.iter().find(|l| l.name == "gmm.1/region102").unwrap();
    assert_eq!(outer.source, hlolint::perf::TripSource::Assumed);
    assert!(k.cross_checks.iter().any(|x| x.mosaic == "the grid" && x.agrees), "{:?}", k.cross_checks);
    assert!(k.flops.exact().is_some(), "{:?}", k.flops);
    assert!(llo.dynamic_bundles.exact().is_some());
}

/// The facts of one compilation as JSON, paths relative to the repository.
fn facts_json(rel: &str) -> String {
    let f = facts_with(&root().join(rel), &Assume::default());
    let text = serde_json::to_string_pretty(&f).unwrap();
    text.replace(&format!("{}/", root().display()), "")
}

#[test]
fn snapshot_v1_auto_pipelined_on_tpu7x() {
    insta::assert_snapshot!(facts_json("fixtures/fp8_matmul_2d/tpu7x+v6e/v1@tpu7x"));
}

#[test]
fn snapshot_v3_manual_dma_smem_scales_on_v6e() {
    insta::assert_snapshot!(facts_json("fixtures/fp8_matmul_2d/tpu7x+v6e/v3@v6e"));
}

#[test]
fn snapshot_jax_flash_attention_on_tpu7x() {
    insta::assert_snapshot!(facts_json("fixtures/jax_pallas_ops/flash_fwd@tpu7x"));
}

#[test]
fn snapshot_jax_int8_matmul_on_v5e() {
    insta::assert_snapshot!(facts_json("fixtures/jax_pallas_ops/matmul_int8@v5e"));
}

/// A plain XLA program (`jnp.matmul`, no Pallas kernel): the whole program is timed from its schedule — the
/// cross-program prefetch of one operand into VMEM, the matmul fusion's LLO program — and the compilation has
/// a prediction.
#[test]
fn snapshot_plain_xla_matmul_on_v5e() {
    insta::assert_snapshot!(facts_json("fixtures/whole_program/v5e/xla_matmul@v5e"));
}

/// A kernel behind an XLA fusion: XLA prefetches `x` into VMEM while its ReLU fusion runs, and writes the fusion's
/// result to VMEM. The kernel reads both operands on chip (no HBM bytes for them), and the program charges the
/// copy and the fusion where the schedule runs them: the copy hides behind the fusion only in part.
#[test]
fn a_kernel_pays_for_the_xla_copies_and_fusions_in_front_of_it() {
    let dir = root().join("fixtures/whole_program/v5e");
    let f = facts_with(&dir.join("pallas_grid_after_relu@v5e"), &Assume::default());
    let [c] = f.as_slice() else { panic!("one compilation") };
    let [k] = c.kernels.as_slice() else { panic!("one kernel") };
    let placed: Vec<(&str, bool)> =
        k.buffers.iter().filter(|b| b.role == "window").map(|b| (b.arg.as_str(), b.placed_on_chip)).collect();
    assert_eq!(placed.iter().filter(|p| p.1).count(), 2, "x and relu(y) are in VMEM at the call: {placed:?}");
    let p = c.program.as_ref().expect("a whole program");
    let kinds: Vec<(&str, hlolint::perf::program::OpKind)> =
        p.ops.iter().map(|o| (o.opcode.as_str(), o.kind)).collect();
    use hlolint::perf::program::OpKind::*;
    assert_eq!(kinds, [("copy-start", AsyncCopy), ("fusion", Xla), ("custom-call", Kernel)]);
    let copy = &p.ops[0];
    assert_eq!(copy.hbm_bytes, hlolint::perf::Estimate::Exact(256 * 256 * 2));
    let (us, waited) = (copy.us.unwrap().max, copy.waited_us.unwrap().max);
    let fusion = p.ops[1].us.unwrap().max;
    assert!((waited - (us - fusion).max(0.0)).abs() < 1e-9, "the done waits for what the fusion did not hide");
    let total = p.predicted_us.unwrap().max;
    let parts = p.overhead_us.unwrap()
        + p.orchestration_us.unwrap().max
        + p.kernels_us.unwrap().max
        + p.xla_us.unwrap().max
        + p.copy_waits_us.unwrap().max;
    assert!((total - parts).abs() < 1e-9, "{total} = {parts}");
    assert_eq!(c.predicted_us, p.predicted_us);
    // the same kernel without the fusion in front reads its operands from HBM itself
    let g = facts_with(&dir.join("pallas_grid@v5e"), &Assume::default());
    let kg = &g[0].kernels[0];
    assert!(kg.buffers.iter().all(|b| !b.placed_on_chip));
    assert!(kg.hbm_bytes.max() > k.hbm_bytes.max(), "{:?} {:?}", kg.hbm_bytes, k.hbm_bytes);
}

/// `jnp.matmul`'s program prefetches one operand into VMEM across programs: a single launch may copy it or not
/// (a range), a launch repeating the previous one with the same operands — a timing loop — finds it on chip and
/// waits for nothing. A program without a cross-program prefetch has no separate repeated time.
#[test]
fn a_repeated_launch_finds_the_cross_program_prefetch_on_chip() {
    let dir = root().join("fixtures/whole_program/v5e");
    let f = facts_with(&dir.join("xla_matmul@v5e"), &Assume::default());
    let p = f[0].program.as_ref().expect("a whole program");
    let copy = p.ops.iter().find(|o| o.opcode == "copy-start").expect("the prefetch");
    let (predicted, repeated) = (p.predicted_us.unwrap(), p.repeated_us.expect("a repeated time"));
    assert!(copy.waited_us.unwrap().max > 0.0 && predicted.max > predicted.min, "{predicted:?}");
    assert!((repeated.max - predicted.min).abs() < 1e-9 && repeated.min == repeated.max, "{repeated:?}");
    let g = facts_with(&dir.join("pallas_grid@v5e"), &Assume::default());
    assert_eq!(g[0].program.as_ref().unwrap().repeated_us, None);
}

/// Every compilation of the whole-program fixtures has a whole-program prediction, and each instruction of its
/// schedule that does work has a time.
#[test]
fn every_whole_program_fixture_is_timed() {
    for c in facts_with(&root().join("fixtures/whole_program/v5e"), &Assume::default()) {
        let p = c.program.as_ref().unwrap_or_else(|| panic!("{}: no program", c.dir));
        assert!(p.unknown.is_empty(), "{}: {:?}", c.dir, p.unknown);
        assert!(p.ops.iter().all(|o| o.us.is_some()), "{}", c.dir);
        assert!(c.predicted_us.is_some_and(|t| t.max > p.overhead_us.unwrap()), "{}", c.dir);
    }
}

/// jax's SparseCore guide's gather as a Pallas SparseCore kernel, compiled for tpu7x
/// (tests/data/perf/sparsecore: the optimized HLO, the two Mosaic kernels, the top-level LLO program). libtpu dumps
/// no SparseCore LLO program: the kernels and the `async-start` calling them have no time, each saying why, and
/// the call is not taken for a 2 GiB DMA of the top-level program (its result's size), which it was before.
#[test]
fn a_sparsecore_program_is_not_timed_and_says_why() {
    let f = facts_with(&root().join("tests/data/perf/sparsecore"), &Assume::default());
    assert_eq!(f.len(), 1);
    let c = &f[0];
    assert_eq!(c.target.as_deref(), Some("tpu7x"));
    // the vector-subcore gather and its scalar-subcore launcher
    assert_eq!(c.kernels.len(), 2, "{:?}", c.kernels.iter().map(|k| &k.name).collect::<Vec<_>>());
    for k in &c.kernels {
        assert_eq!(k.time.predicted_us, None, "{}", k.name);
        assert_eq!(k.time.memory_us, None, "{}: no TensorCore term for a SparseCore program", k.name);
        assert_eq!(k.time.unknown, vec![hlolint::perf::SPARSECORE_UNTIMED.to_string()], "{}", k.name);
        // the TensorCore pipeline's byte count read the gather's per-subcore, data-indexed DMAs as 128 GiB
        assert_eq!(k.hbm_bytes.bounds(), None, "{}: {:?}", k.name, k.hbm_bytes);
    }
    let p = c.program.as_ref().expect("a whole program");
    let call = p.ops.iter().find(|o| o.opcode == "async-start").expect("the SparseCore call");
    assert_eq!(call.kind, hlolint::perf::program::OpKind::SparseCore);
    assert_eq!(call.us, None);
    assert!(p.ops.iter().all(|o| o.kind != hlolint::perf::program::OpKind::AsyncCopy), "{:?}", p.ops);
    // the handshake custom calls around it are part of the call, not programs without a dump
    assert_eq!(p.unknown, vec![format!("%sc_gather.3.cloned.1.call-start: {}", hlolint::perf::SPARSECORE_UNTIMED)]);
    assert_eq!((p.predicted_us, c.predicted_us), (None, None));
}
