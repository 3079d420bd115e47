//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

/// `../shared/corpus`, or `None` (with a printed notice) on a fresh clone that does not have it.
pub fn corpus() -> Option<PathBuf> {
    // A worktree outside the usual layout points at the corpus with HLOLINT_CORPUS.
    let dir = std::env::var_os("HLOLINT_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus"));
    if dir.is_dir() {
        Some(dir)
    } else {
        println!("notice: {} is absent; skipping the corpus test", dir.display());
        None
    }
}

/// The fixture sets (folders of fixtures/) that tests lint whole with every pack: all but fixtures/tpu_inference,
/// whose production kernels take today's DMA engine up to a minute and a half per compilation in a release build
/// (fixtures/tpu_inference/README.md); they are linted by their own tests (real_kernels, and the ignored
/// real_mutants table) until the symbolic DMA engine of issue 21 makes them fast.
pub fn fixture_sets_linted_whole() -> Vec<String> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut sets: Vec<String> = std::fs::read_dir(&root)
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir() && e.file_name() != "tpu_inference")
        .map(|e| e.path().to_string_lossy().into_owned())
        .collect();
    sets.sort();
    sets
}

/// Every file under `dir` whose first bytes satisfy `pred`, sorted.
pub fn files_where(dir: &std::path::Path, pred: impl Fn(&str) -> bool) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .map(|e| e.into_path())
        .filter(|p| {
            let head = std::fs::read(p).map(|b| String::from_utf8_lossy(&b[..b.len().min(256)]).into_owned());
            head.map(|h| pred(&h)).unwrap_or(false)
        })
        .collect();
    out.sort();
    out
}

/// A small deterministic generator for mutation tests (no dependency needed for a reproducible stream).
pub struct Lcg(pub u64);

impl Lcg {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}
