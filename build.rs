//! Embeds the built-in packs' test cases (`tests/data/rules/**`, the files `rules/*.yaml` name under `tests:`) into
//! the binary, so that an installed hlolint (a wheel, `cargo install`) runs `hlolint test` on `core` and on packs
//! that extend it without the source tree. The packs themselves are `include_str!`ed in `src/rules/load.rs`.
//!
//! Writes `$OUT_DIR/builtin_cases.rs`: `CASES: &[(&str, &[u8])]`, each file's path relative to the crate root
//! (with `/`) and its bytes through `include_bytes!` of `CARGO_MANIFEST_DIR` + that path (so rustc's dep-info tracks every file, and cargo rebuilds when
//! a case changes; `rerun-if-changed` on the folder notices added and removed files).

use std::fs;
use std::path::{Path, PathBuf};

const CASES: &str = "tests/data/rules";

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()));
    for e in entries {
        let path = e.expect("directory entry").path();
        if path.is_dir() {
            walk(&path, out);
        } else {
            out.push(path);
        }
    }
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed={CASES}");
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let cases = root.join(CASES);
    assert!(
        cases.is_dir(),
        "{} is missing: the built-in rule packs' test cases are embedded from it (a source distribution must \
         include it)",
        cases.display()
    );
    let mut files = Vec::new();
    walk(&cases, &mut files);
    files.sort();
    let mut src = String::from("/// The built-in packs' test cases: (path relative to the crate root, bytes).\n");
    src.push_str("pub static CASES: &[(&str, &[u8])] = &[\n");
    for f in &files {
        let rel = f.strip_prefix(&root).expect("under the crate root");
        let rel: Vec<String> = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
        // the path through `CARGO_MANIFEST_DIR` of the crate being compiled, not this run's absolute path: a build
        // of another checkout (pre-commit's clone, a wheel build) sharing the target folder leaves this file behind,
        // and cargo need not rerun this script for the next checkout
        let rel = rel.join("/");
        let tail = format!("/{rel}");
        src.push_str(&format!("    ({rel:?}, include_bytes!(concat!(env!(\"CARGO_MANIFEST_DIR\"), {tail:?}))),\n"));
    }
    src.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("builtin_cases.rs");
    fs::write(&out, src).unwrap_or_else(|e| panic!("cannot write {}: {e}", out.display()));
}
