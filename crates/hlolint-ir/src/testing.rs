//! What the tests share with the library's own unit tests, the benchmarks and the examples: where the corpus of
//! real dumps is, and one seeded generator. Not part of the linter (hidden from its documentation); it names
//! nothing else of the crate.

use std::path::PathBuf;

/// The repository's root (the workspace's: this crate lives in `crates/hlolint-ir`), where the fixtures and the
/// test data are, whichever crate's test asks.
pub fn repository() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// The corpus of real dumps: `$HLOLINT_CORPUS` (a worktree outside the usual layout points there), else
/// `../shared/corpus` beside the checkout; `None`, with a printed notice, on a clone that does not have it (the
/// tests that need it pass on what the repository holds).
pub fn corpus() -> Option<PathBuf> {
    let dir =
        std::env::var_os("HLOLINT_CORPUS").map(PathBuf::from).unwrap_or_else(|| repository().join("../shared/corpus"));
    if dir.is_dir() {
        Some(dir)
    } else {
        println!("notice: {} is absent; skipping the corpus part", dir.display());
        None
    }
}

/// A small deterministic generator for mutation tests: a reproducible stream with no dependency (a linear
/// congruential generator, its high bits).
pub struct Lcg(pub u64);

impl Lcg {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
}
