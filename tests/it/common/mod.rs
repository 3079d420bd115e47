//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The `hlolint` binary as the CLI tests run it: no colour, 100 columns (diagnostics, help and tables fit the
/// width, so snapshots do not depend on the terminal), in the crate's folder (relative paths are the
/// repository's). A test that needs another width or folder sets it on the command it gets.
pub fn hlolint() -> assert_cmd::Command {
    assert_cmd::Command::from_std(hlolint_process())
}

/// [`hlolint`] run in `dir` (configuration files are found from there).
pub fn hlolint_in(dir: &Path) -> assert_cmd::Command {
    let mut c = hlolint();
    c.current_dir(dir);
    c
}

/// [`hlolint`] as a plain [`std::process::Command`] (the same environment and folder), for a test that drives
/// the process itself (a pipe, a time limit, a FIFO).
pub fn hlolint_process() -> std::process::Command {
    let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("hlolint"));
    c.env("NO_COLOR", "1").env("COLUMNS", "100").current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

/// The corpus, the generator and the byte mutator are the library's (`hlolint-ir`'s `testing`), so that its unit
/// tests, benchmarks and examples share them.
pub use hlolint::testing::{corpus, Lcg, Mutator, Repeat};

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
