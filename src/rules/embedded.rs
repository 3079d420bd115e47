//! The built-in packs' test cases, embedded in the binary at build time (`build.rs`), so that `hlolint test` runs
//! `core` — and a user's pack that `extends: core` — from an installed binary (a wheel, `cargo install`) without
//! the source tree.
//!
//! A built-in pack names its cases relative to `rules/` (`../tests/data/rules/<rule>/valid`), as in the source tree.
//! Loading a pack only computes those paths under [`root`]; the files are written there by [`materialize`], which
//! `hlolint test` calls when a built-in rule is tested: a fresh folder per process, removed when the guard drops.
//! The cases linted are always the ones this binary was built with, in a checkout too.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

include!(concat!(env!("OUT_DIR"), "/builtin_cases.rs"));

/// Where this process writes the embedded cases: `<tmp>/hlolint-<version>-cases-<pid>`. It holds `rules/` (empty:
/// the packs' own paths start there) and `tests/data/rules/...`.
pub fn root() -> &'static Path {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        std::env::temp_dir().join(format!("hlolint-{}-cases-{}", env!("CARGO_PKG_VERSION"), std::process::id()))
    })
}

/// The folder the built-in packs' `tests:` paths are relative to.
pub fn rules_dir() -> PathBuf {
    root().join("rules")
}

/// The embedded cases written under [`root`]; removed on drop.
pub struct Materialized {
    root: PathBuf,
}

impl Drop for Materialized {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// Writes every embedded case under [`root`] (a folder left by an earlier process with the same id is replaced).
/// The folder is created afresh, private to the user on Unix; if another process creates it in between, this fails.
pub fn materialize() -> std::io::Result<Materialized> {
    let root = root().to_path_buf();
    if root.symlink_metadata().is_ok() {
        std::fs::remove_dir_all(&root)?;
    }
    let mut dir = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut dir, 0o700);
    dir.create(&root)?;
    let guard = Materialized { root: root.clone() };
    std::fs::create_dir(root.join("rules"))?;
    for (rel, bytes) in CASES {
        let path = root.join(rel);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(&path, bytes)?;
    }
    Ok(guard)
}

/// A materialized case's path relative to [`root`], `..` resolved (`tests/data/rules/...`); `None` for a path
/// that is no embedded case.
fn relative(path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root()).ok()?;
    let mut parts: Vec<String> = Vec::new();
    for c in rel.components() {
        match c {
            std::path::Component::ParentDir => {
                parts.pop();
            }
            std::path::Component::CurDir => {}
            other => parts.push(other.as_os_str().to_string_lossy().into_owned()),
        }
    }
    Some(parts.join("/"))
}

/// A case path as the user should read it: a materialized built-in case as `tests/data/rules/...`, relative to the
/// source tree it came from; any other path as it is.
pub fn display(path: &Path) -> String {
    match relative(path) {
        Some(rel) => format!("{rel} (built in)"),
        None => path.display().to_string(),
    }
}

/// Where a materialized built-in case is in the source tree this binary was built from (`hlolint test --update`
/// writes there); `None` for a path that is no embedded case, an error when that source tree is not on this
/// machine (an installed binary).
pub fn source_path(path: &Path) -> Option<Result<PathBuf, String>> {
    let rel = relative(path)?;
    let src = Path::new(env!("CARGO_MANIFEST_DIR"));
    Some(match src.join("tests/data/rules").is_dir() {
        true => Ok(src.join(rel)),
        false => Err(format!(
            "the built-in packs' cases are embedded in this binary; update them from the source tree it was built \
             from ({})",
            src.display()
        )),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generated_list_names_no_checkout() {
        // another checkout's build (pre-commit's clone, a wheel build) may share this target folder and leave the
        // generated file behind without cargo rerunning build.rs here: it must not hold that checkout's paths
        let generated = include_str!(concat!(env!("OUT_DIR"), "/builtin_cases.rs"));
        assert!(!generated.contains(env!("CARGO_MANIFEST_DIR")), "absolute paths in builtin_cases.rs");
        assert!(generated.contains("env!(\"CARGO_MANIFEST_DIR\")"));
    }

    #[test]
    fn every_file_under_tests_data_rules_is_embedded() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut on_disk: Vec<String> = walkdir::WalkDir::new(src.join("tests/data/rules"))
            .into_iter()
            .flatten()
            .filter(|e| e.file_type().is_file())
            .map(|e| e.path().strip_prefix(src).unwrap().to_string_lossy().replace('\\', "/"))
            .collect();
        on_disk.sort();
        // build.rs sorts paths by component (`a/x` before `a.findings`), this list by text
        let mut embedded: Vec<String> = CASES.iter().map(|(p, _)| p.to_string()).collect();
        embedded.sort();
        assert_eq!(embedded, on_disk);
        for (p, bytes) in CASES {
            assert_eq!(*bytes, std::fs::read(src.join(p)).unwrap().as_slice(), "{p}");
        }
    }

    #[test]
    fn every_builtin_case_path_resolves_inside_the_embedded_tree() {
        let set = crate::rules::load::load_all_builtin().unwrap();
        let guard = materialize().unwrap();
        let mut n = 0;
        for r in &set.rules {
            for p in r.valid.iter().chain(&r.invalid) {
                assert!(p.starts_with(root()), "{}: {} is not under the embedded root", r.id, p.display());
                assert!(p.exists(), "{}: {} was not materialized", r.id, display(p));
                n += 1;
            }
        }
        assert!(n > 20, "only {n} case paths");
        assert_eq!(
            display(&rules_dir().join("../tests/data/rules/x/valid/a.hlo")),
            "tests/data/rules/x/valid/a.hlo (built in)"
        );
        drop(guard);
        assert!(!root().exists(), "the guard removes the folder");
    }
}
