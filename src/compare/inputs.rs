//! Which compilation is which column: the version and target a dump folder's name gives (`v2@tpu7x`, as the
//! driver names them), and the order columns take — targets and versions in the order the driver's manifest lists
//! them (the module's `VERSIONS`, so the ratios are against the version the author put first), else in the order
//! the paths were named, then by name.

use std::collections::BTreeMap;
use std::path::Path;

/// `…/v2@tpu7x` → `("v2", Some("tpu7x"))`; a folder without `@` is a version of an unknown target.
pub fn identity(dir: &str) -> (String, Option<String>) {
    let name = Path::new(dir).file_name().and_then(|n| n.to_str()).unwrap_or(dir);
    match name.rsplit_once('@') {
        Some((v, t)) if !v.is_empty() && !t.is_empty() => (v.to_string(), Some(t.to_string())),
        _ => (name.to_string(), None),
    }
}

/// The lists a driver manifest beside the compilation gives: versions and targets in the module's order.
#[derive(Debug, Default, Clone)]
pub struct ManifestOrder {
    pub versions: Vec<String>,
    pub targets: Vec<String>,
}

/// The manifest of the folder holding `dir` (`…/tpu7x+v6e/manifest.json` for `…/tpu7x+v6e/v2@tpu7x`).
fn manifest_order(dir: &str) -> ManifestOrder {
    let Some(m) = crate::lint::Manifest::beside(Path::new(dir)) else { return ManifestOrder::default() };
    ManifestOrder { versions: m.versions.clone(), targets: m.target_names().map(str::to_string).collect() }
}

/// The sort key of each `(dir, path index, target)`: target (manifest order, else first seen), then version
/// (manifest order, else the named path's index, then the name).
pub fn order(dirs: &[(String, usize, String)]) -> Vec<usize> {
    let mut manifests: BTreeMap<String, ManifestOrder> = BTreeMap::new();
    let mut first_seen: Vec<&str> = Vec::new();
    for (dir, _, target) in dirs {
        let parent = Path::new(dir).parent().map(|p| p.display().to_string()).unwrap_or_default();
        manifests.entry(parent).or_insert_with(|| manifest_order(dir));
        if !first_seen.contains(&target.as_str()) {
            first_seen.push(target);
        }
    }
    let key = |i: usize| {
        let (dir, arg, target) = &dirs[i];
        let parent = Path::new(dir).parent().map(|p| p.display().to_string()).unwrap_or_default();
        let m = &manifests[&parent];
        let t = m.targets.iter().position(|x| x == target).unwrap_or(usize::MAX);
        let (version, _) = identity(dir);
        let v = m.versions.iter().position(|x| *x == version).unwrap_or(usize::MAX);
        let seen = first_seen.iter().position(|x| x == target).unwrap_or(usize::MAX);
        (t, seen, *arg, v, version, dir.clone())
    };
    let mut idx: Vec<usize> = (0..dirs.len()).collect();
    idx.sort_by_cached_key(|&i| key(i));
    idx
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_and_target_from_the_folder_name() {
        assert_eq!(identity("out/v2@tpu7x"), ("v2".into(), Some("tpu7x".into())));
        assert_eq!(identity("out/a@b@v6e"), ("a@b".into(), Some("v6e".into())));
        assert_eq!(identity("out/v1"), ("v1".into(), None));
        assert_eq!(identity("out/v1@"), ("v1@".into(), None));
    }

    #[test]
    fn the_manifest_orders_targets_and_versions() {
        let root = "fixtures/fp8_matmul_2d/tpu7x+v6e";
        let names = ["bug_upcast@v6e", "v2@tpu7x", "v1@v6e", "bug_upcast@tpu7x", "v1@tpu7x"];
        let dirs: Vec<(String, usize, String)> =
            names.iter().map(|n| (format!("{root}/{n}"), 0, identity(n).1.unwrap())).collect();
        let got: Vec<&str> = order(&dirs).into_iter().map(|i| names[i]).collect();
        assert_eq!(got, ["v1@tpu7x", "v2@tpu7x", "bug_upcast@tpu7x", "v1@v6e", "bug_upcast@v6e"]);
    }

    #[test]
    fn without_a_manifest_paths_order_then_names() {
        let dirs = vec![
            ("x/b@v5e".to_string(), 1, "v5e".to_string()),
            ("y/a@v5e".to_string(), 1, "v5e".to_string()),
            ("z/c@v5e".to_string(), 0, "v5e".to_string()),
        ];
        assert_eq!(order(&dirs), [2, 1, 0]);
    }
}
