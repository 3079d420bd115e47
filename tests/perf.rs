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
    let out = assert_cmd::Command::cargo_bin("hlolint")
        .unwrap()
        .args(["--summary", "--format", "json", "--rules", "none"])
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let got = &doc["compilations"][0]["perf"];
    let want = serde_json::to_value(&facts_with(&dir, &Assume::default())[0]).unwrap();
    assert_eq!(got, &want);
    assert_eq!(got["kernels"][0]["name"], "fp8_mm_v3");
    // without --summary, or in another format, the model does not run
    let plain = assert_cmd::Command::cargo_bin("hlolint")
        .unwrap()
        .args(["--format", "json", "--rules", "none"])
        .arg(&dir)
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&plain.stdout).unwrap();
    assert!(doc["compilations"][0].get("perf").is_none());
}

#[test]
#[ignore]
fn survey() {
    let dirs: Vec<PathBuf> = std::env::var("SURVEY").unwrap().split(':').map(PathBuf::from).collect();
    for d in dirs {
        for c in facts_with(&d, &Assume::default()) {
            for k in &c.kernels {
                let llo = k.llo.as_ref();
                let loops: Vec<String> = llo
                    .map(|l| {
                        l.loops
                            .iter()
                            .map(|x| format!("L{}:{}:{:?}", x.level, x.name.rsplit('/').next().unwrap(), x.trips))
                            .collect()
                    })
                    .unwrap_or_default();
                let fors: Vec<String> = k.for_loops.iter().map(|f| format!("{}={:?}", f.name, f.trips)).collect();
                let xc: Vec<String> =
                    k.cross_checks.iter().map(|x| format!("{}:{:?}/{}", x.mosaic, x.extra, x.agrees)).collect();
                println!(
                    "{} | {} | grid {:?} | mxu {:?} | flops {:?} | hbm {:?} | dyn {:?} | {:?} | fors {:?} | xc {:?} | t {:?}",
                    c.dir.rsplit('/').next().unwrap(), k.name, k.grid, k.mxu.mode, k.flops, k.hbm_bytes,
                    llo.map(|l| &l.dynamic_bundles), loops, fors, xc, k.time.predicted_us.map(|p| p.max)
                );
            }
        }
    }
}
