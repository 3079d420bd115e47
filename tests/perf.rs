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
