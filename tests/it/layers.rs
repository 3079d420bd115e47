//! The direction of dependencies between the top-level modules (ARCHITECTURE.md, "Layers"): a module may use the
//! modules below it, never one above. An edge that had to go the wrong way would be listed here with the reason it
//! remains; a new one fails this test, and one that disappears must leave the list.
//!
//! The bottom layer — the graph (`ir`) and the parsers (`parse`) — is a crate of its own, `hlolint-ir`
//! (crates/hlolint-ir): the compiler, not this test, keeps it from using the linter above it, as long as that crate
//! does not depend on `hlolint` (checked here: a dev-dependency would be allowed by cargo and let its tests lean on
//! the layers above). Inside each crate, the modules' order is still this test's.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The `hlolint` crate, lowest first: `ir ← parse ← semantic ← source ← lint ← analysis ← perf ← summary ← rules ←
/// report ← suppress ← settings ← run ← compare ← cli`, the driver beside the command line, `suggest` beside `ir`.
/// `ir`, `parse` and `testing` are `hlolint-ir`'s, re-exported (src/lib.rs): the modules here name them `crate::ir`,
/// `crate::parse`, `crate::testing`, and those edges point down.
const LAYERS: &[&[&str]] = &[
    &["ir", "suggest", "testing"],
    &["parse"],
    &["semantic"],
    &["source"],
    &["lint"],
    &["analysis"],
    &["perf"],
    &["summary"],
    &["rules"],
    &["report"],
    &["suppress"],
    &["settings"],
    &["run"],
    &["compare"],
    &["cli", "driver"],
];

/// The `hlolint-ir` crate: `ir ← parse`, and `testing` (no dependency on the crate) beside `ir`.
const IR_LAYERS: &[&[&str]] = &[&["ir", "testing"], &["parse"]];

/// Known upward edges (from, to, why they remain): none left; an edge listed here must come with its reason.
const KNOWN: &[(&str, &str, &str)] = &[];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn level(layers: &[&[&str]], m: &str) -> Option<(usize, usize)> {
    layers.iter().enumerate().find_map(|(i, l)| l.iter().position(|x| *x == m).map(|j| (i, j)))
}

/// Top-level module of `src` → the top-level modules of `layers` its files name as `crate::<module>`.
fn edges(src: &Path, layers: &[&[&str]]) -> BTreeMap<String, BTreeSet<String>> {
    let re = regex::Regex::new(r"crate::([a-z_]+)").unwrap();
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for e in walkdir::WalkDir::new(src).into_iter().flatten() {
        let p = e.path();
        if p.extension().is_none_or(|x| x != "rs") {
            continue;
        }
        let rel = p.strip_prefix(src).unwrap();
        let top = rel.components().next().unwrap().as_os_str().to_string_lossy().trim_end_matches(".rs").to_string();
        if top == "lib" || top == "main" {
            continue;
        }
        let text = std::fs::read_to_string(p).unwrap();
        for c in re.captures_iter(&text) {
            let to = c[1].to_string();
            if to != top && level(layers, &to).is_some() {
                out.entry(top.clone()).or_default().insert(to);
            }
        }
    }
    out
}

/// The edges of `src` that go up `layers` (or sideways against the order of a layer's members).
fn upward(src: &Path, layers: &[&[&str]]) -> BTreeSet<(String, String)> {
    let mut up = BTreeSet::new();
    for (from, tos) in edges(src, layers) {
        let Some((lf, cf)) = level(layers, &from) else { continue };
        for to in tos {
            let Some((lt, ct)) = level(layers, &to) else { continue };
            // the same layer's members (cli, driver) are beside each other: one direction only, cli → driver
            if lt > lf || (lt == lf && ct < cf) {
                up.insert((from.clone(), to));
            }
        }
    }
    up
}

/// Every top-level module of `src` has a layer.
fn every_module_of(src: &Path, layers: &[&[&str]], test: &str) {
    for e in std::fs::read_dir(src).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().trim_end_matches(".rs").to_string();
        if name == "lib" || name == "main" {
            continue;
        }
        assert!(level(layers, &name).is_some(), "{}: give it a layer in {test} and ARCHITECTURE.md", name);
    }
}

#[test]
fn every_module_has_a_layer() {
    every_module_of(&root().join("src"), LAYERS, "tests/it/layers.rs (LAYERS)");
    every_module_of(&root().join("crates/hlolint-ir/src"), IR_LAYERS, "tests/it/layers.rs (IR_LAYERS)");
}

#[test]
fn dependencies_point_down() {
    let known: BTreeSet<(String, String)> = KNOWN.iter().map(|(a, b, _)| (a.to_string(), b.to_string())).collect();
    let found = upward(&root().join("src"), LAYERS);
    let new: Vec<_> = found.difference(&known).collect();
    let gone: Vec<_> = known.difference(&found).collect();
    assert!(new.is_empty(), "modules using a layer above them (crate::…): {new:?}");
    assert!(gone.is_empty(), "no longer upward, remove from KNOWN: {gone:?}");
    let ir = upward(&root().join("crates/hlolint-ir/src"), IR_LAYERS);
    assert!(ir.is_empty(), "hlolint-ir: modules using a layer above them (crate::…): {ir:?}");
}

/// The graph and the parsers stand alone: `hlolint-ir` names `hlolint` in none of its dependency tables (normal,
/// dev, build, per target), so neither its code nor its tests can reach the linter above.
#[test]
fn the_ir_crate_does_not_depend_on_the_linter() {
    let manifest = root().join("crates/hlolint-ir/Cargo.toml");
    let doc: toml::Table = std::fs::read_to_string(&manifest).unwrap().parse().unwrap();
    let mut tables = vec![&doc];
    if let Some(toml::Value::Table(targets)) = doc.get("target") {
        tables.extend(targets.values().filter_map(toml::Value::as_table));
    }
    let mut deps = BTreeSet::new();
    for t in tables {
        for kind in ["dependencies", "dev-dependencies", "build-dependencies"] {
            if let Some(toml::Value::Table(d)) = t.get(kind) {
                // a renamed dependency (`x = { package = "hlolint" }`) counts by its package
                deps.extend(
                    d.iter().map(|(name, spec)| {
                        spec.get("package").and_then(toml::Value::as_str).unwrap_or(name).to_string()
                    }),
                );
            }
        }
    }
    assert!(deps.contains("nom"), "{}: the parsers' dependencies were not read", manifest.display());
    assert!(!deps.contains("hlolint"), "{}: depends on the linter above it", manifest.display());
}
