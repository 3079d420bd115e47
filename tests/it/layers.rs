//! The direction of dependencies between the crate's top-level modules (ARCHITECTURE.md, "Layers"): a module may
//! use the modules below it, never one above. An edge that had to go the wrong way would be listed here with the
//! reason it remains; a new one fails this test, and one that disappears must leave the list.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Lowest first: `ir ← parse ← semantic ← source ← lint ← analysis ← perf ← summary ← rules ← report ← suppress ←
/// settings ← run ← compare ← cli`, the driver beside the command line, `suggest` and `testing` (no dependency on the crate) beside `ir`.
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

/// Known upward edges (from, to, why they remain): none left; an edge listed here must come with its reason.
const KNOWN: &[(&str, &str, &str)] = &[];

fn level(m: &str) -> Option<(usize, usize)> {
    LAYERS.iter().enumerate().find_map(|(i, l)| l.iter().position(|x| *x == m).map(|j| (i, j)))
}

/// Top-level module → the top-level modules its files name as `crate::<module>`.
fn edges() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let re = regex::Regex::new(r"crate::([a-z_]+)").unwrap();
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for e in walkdir::WalkDir::new(&src).into_iter().flatten() {
        let p = e.path();
        if p.extension().is_none_or(|x| x != "rs") {
            continue;
        }
        let rel = p.strip_prefix(&src).unwrap();
        let top = rel.components().next().unwrap().as_os_str().to_string_lossy().trim_end_matches(".rs").to_string();
        if top == "lib" || top == "main" {
            continue;
        }
        let text = std::fs::read_to_string(p).unwrap();
        for c in re.captures_iter(&text) {
            let to = c[1].to_string();
            if to != top && level(&to).is_some() {
                out.entry(top.clone()).or_default().insert(to);
            }
        }
    }
    out
}

#[test]
fn every_module_has_a_layer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for e in std::fs::read_dir(&src).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().trim_end_matches(".rs").to_string();
        if name == "lib" || name == "main" {
            continue;
        }
        assert!(level(&name).is_some(), "src/{name}: give it a layer in tests/it/layers.rs and ARCHITECTURE.md");
    }
}

#[test]
fn dependencies_point_down() {
    let mut upward = Vec::new();
    for (from, tos) in edges() {
        let Some((lf, cf)) = level(&from) else { continue };
        for to in tos {
            let Some((lt, ct)) = level(&to) else { continue };
            // the same layer's members (cli, driver) are beside each other: one direction only, cli → driver
            let up = lt > lf || (lt == lf && ct < cf);
            if up {
                upward.push((from.clone(), to));
            }
        }
    }
    let known: BTreeSet<(String, String)> = KNOWN.iter().map(|(a, b, _)| (a.to_string(), b.to_string())).collect();
    let found: BTreeSet<(String, String)> = upward.into_iter().collect();
    let new: Vec<_> = found.difference(&known).collect();
    let gone: Vec<_> = known.difference(&found).collect();
    assert!(new.is_empty(), "modules using a layer above them (crate::…): {new:?}");
    assert!(gone.is_empty(), "no longer upward, remove from KNOWN: {gone:?}");
}
