//! The driver's `manifest.json` (docs/driver.md): what `hlolint compile` compiled into an output folder — the
//! kernel module, the targets and versions in the module's order, and one result per (version, target) with its
//! dump folder, `_hlo.txt`, device kind and the rule pack the module names for it.
//!
//! One type for every reader (target detection, each version's pack, `compare`'s column order, the driver's list
//! of files to lint, the warning about folders the manifest does not list). The writer is the Python helper: the
//! `hlolint_driver` package's `manifest` module (`src/driver/hlolint_driver/manifest.py`: merged per version and
//! target, written atomically), which its `parent` module calls after each unit; a test holds its schema, as
//! docs/driver.md writes it, to this type. Reading is lenient where the helper may grow (unknown keys are
//! ignored), strict where a reader relies on a value (a result without `version` or `target` is not a manifest).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The file name, beside the version folders.
pub const FILE: &str = "manifest.json";

/// The newest schema the helper writes; older ones are read too (schema 1: one run, no `runs`, `module_error`).
pub const SCHEMA: u32 = 2;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub schema: u32,
    pub tool: String,
    /// When the first run wrote it (ISO 8601, UTC).
    pub created: String,
    /// When a run last merged its results into it (schema 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated: Option<String>,
    /// As given: a package directory, a `.py` file or a dotted module name.
    pub module: String,
    pub module_path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub module_file: Option<String>,
    /// The interpreter of the last run.
    pub python: String,
    pub python_executable: String,
    pub packages: Option<BTreeMap<String, Option<String>>>,
    /// In the order they were first compiled.
    pub targets: Vec<TargetEntry>,
    /// The versions with results, in the module's `VERSIONS` order.
    pub versions: Vec<String>,
    pub flags: BTreeMap<String, Option<String>>,
    pub all_stages: bool,
    pub timeout_s: Option<f64>,
    pub layout: Layout,
    pub status: Status,
    /// Schema 1 only: the import error of a run whose module could not be imported (schema 2 writes nothing then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub module_error: Option<serde_json::Value>,
    /// One per (version, target): a run's results replace those of the same version and target, the others stay.
    pub results: Vec<UnitResult>,
    /// Seconds the last run took.
    pub elapsed_s: Option<f64>,
    /// Every run that wrote into the manifest, oldest first (schema 2).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runs: Vec<Run>,
    /// Written by `scripts/trim_fixtures.py` on the fixtures: what it cut and which runs it merged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trimmed: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged: Option<serde_json::Value>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TargetEntry {
    pub target: String,
    pub platform: Option<String>,
    pub topology: Option<String>,
    pub device_kind: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Layout {
    pub unit_dir: String,
    pub hlo_txt: String,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Error,
    /// A run is writing it (or was killed while it did).
    #[default]
    Running,
}

/// One (version, target) of the module.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct UnitResult {
    pub version: String,
    pub target: String,
    pub topology: Option<String>,
    pub platform: Option<String>,
    pub status: UnitStatus,
    /// `<version>@<target>`, relative to the manifest's folder; none when nothing was compiled.
    pub dir: Option<String>,
    /// `<version>_hlo.txt` or `<version>@<target>_hlo.txt`, relative to the manifest's folder.
    pub hlo_txt: Option<String>,
    pub device_kind: Option<String>,
    pub module_name: Option<String>,
    pub elapsed_s: Option<f64>,
    pub lower_s: Option<f64>,
    pub compile_s: Option<f64>,
    /// The kept dump file names per sub-folder (`hlo`, `mosaic`, `llo`).
    pub files: BTreeMap<String, Vec<String>>,
    /// The rule pack(s) the module's `RULES` names for the version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rules: Option<String>,
    /// Multi-device versions (`MESH`): axes, shape, device ids.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mesh: Option<serde_json::Value>,
    /// The helper's error record (docs/driver.md, "Error records").
    pub error: Option<serde_json::Value>,
    /// When the run that compiled this unit started (schema 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
    /// The Pallas kernels the version traced, with the names their author gave their refs (the dumps number
    /// them only: `%arg9`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kernels: Vec<KernelRecord>,
}

/// One Pallas kernel as its author wrote it: the `pallas_call`'s name (the Mosaic function's), the kernel
/// function, and a name per ref in the order Pallas passes them (scalar prefetch, inputs, outputs, scratch — the
/// Mosaic arguments after the grid indices).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct KernelRecord {
    pub name: Option<String>,
    pub function: Option<String>,
    pub file: Option<String>,
    pub line: Option<u32>,
    /// A local the kernel bound the ref to (`sem`), its parameter's name, or `refs[3]` for an element of `*refs`
    /// nothing named.
    pub operands: Vec<Option<String>>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UnitStatus {
    Ok,
    #[default]
    Error,
}

/// One run of the driver that wrote into the manifest.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Run {
    pub created: String,
    pub versions: Vec<String>,
    pub targets: Vec<String>,
    pub status: Status,
    pub elapsed_s: Option<f64>,
}

/// A manifest that is there but cannot be read.
#[derive(Debug, thiserror::Error)]
#[error("cannot read {}: {reason}", path.display())]
pub struct ManifestError {
    pub path: PathBuf,
    pub reason: String,
}

impl Manifest {
    /// The manifest of an output folder: `Ok(None)` when it has none.
    pub fn read(folder: &Path) -> Result<Option<Manifest>, ManifestError> {
        let path = folder.join(FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(ManifestError { path, reason: e.to_string() }),
        };
        Manifest::parse(&text).map(Some).map_err(|reason| ManifestError { path, reason })
    }

    pub fn parse(text: &str) -> Result<Manifest, String> {
        let m: Manifest = serde_json::from_str(text).map_err(|e| e.to_string())?;
        if m.tool != "hlolint_compile" {
            return Err(format!("written by `{}`, not hlolint_compile", m.tool));
        }
        Ok(m)
    }

    /// The manifest beside a dump folder (`…/out/manifest.json` for `…/out/v3@tpu7x`), when it reads.
    pub fn beside(dir: &Path) -> Option<Manifest> {
        Manifest::read(dir.parent()?).ok().flatten()
    }

    /// The result compiled into the folder named `name` (`v3@tpu7x`, or `v3` for a version of one target).
    pub fn result_for_dir(&self, name: &str) -> Option<&UnitResult> {
        let (version, target) = match name.rsplit_once('@') {
            Some((v, t)) => (v, Some(t)),
            None => (name, None),
        };
        self.results.iter().find(|r| r.version == version && target.is_none_or(|t| r.target == t))
    }

    /// The result whose `_hlo.txt` is `file_name`.
    pub fn result_for_hlo_txt(&self, file_name: &str) -> Option<&UnitResult> {
        self.results.iter().find(|r| r.hlo_txt.as_deref() == Some(file_name))
    }

    pub fn result(&self, version: &str, target: &str) -> Option<&UnitResult> {
        self.results.iter().find(|r| r.version == version && r.target == target)
    }

    /// The target names, in the manifest's order.
    pub fn target_names(&self) -> impl Iterator<Item = &str> {
        self.targets.iter().map(|t| t.target.as_str())
    }
}

/// A compilation beside a manifest that has no result for it: compiled by no run that wrote the manifest (copied
/// in, or left by a run whose manifest was replaced), so its version's own pack is unknown.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
#[error("{what} {has} no entry in {manifest}: linted with {pack}, not with a pack its module's RULES names")]
#[diagnostic(
    code(hlolint::manifest::unlisted),
    severity(Warning),
    help(
        "recompile it into this folder (`hlolint compile MODULE --versions {version} --target {target} --out {folder}` \
         merges it into the manifest), lint it with `--rules PACK`, or remove it"
    )
)]
pub struct Unlisted {
    /// `folder v2@v6e` / `v2_hlo.txt` / `folder v2@v6e and v2_hlo.txt`
    pub what: String,
    pub has: &'static str,
    pub manifest: String,
    pub pack: String,
    pub version: String,
    pub target: String,
    pub folder: String,
}

/// A manifest that is there but does not read: every version beside it is linted without its module's pack.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
#[error("{error}; the versions beside it are linted with {pack}, not with the packs their module's RULES names")]
#[diagnostic(code(hlolint::manifest::unreadable), severity(Warning), help("recompile with `hlolint compile --clean`"))]
pub struct Unreadable {
    pub error: ManifestError,
    pub pack: String,
}

/// What the manifest beside a compilation does not list: its folder (`dir` when it is a `<version>@<target>`
/// folder) and the driver-made `_hlo.txt` files among `files` that sit beside the manifest. `None` when there is no
/// manifest or it lists them all; `pack` is what the compilation is linted with.
pub fn unlisted(m: &Manifest, folder: &Path, dir: &Path, files: &[&Path], pack: &str) -> Option<Unlisted> {
    let mut what = Vec::new();
    let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if dir.is_dir() && name.contains('@') && m.result_for_dir(name).is_none() {
        what.push(format!("folder {name}"));
    }
    for f in files {
        let Some(file) = f.file_name().and_then(|n| n.to_str()) else { continue };
        if f.parent() == Some(folder) && file.ends_with("_hlo.txt") && m.result_for_hlo_txt(file).is_none() {
            what.push(file.to_string());
        }
    }
    if what.is_empty() {
        return None;
    }
    let stem = name.strip_suffix("_hlo.txt").unwrap_or(name);
    let (version, target) = stem.rsplit_once('@').unwrap_or((stem, "TARGET"));
    Some(Unlisted {
        has: if what.len() > 1 { "have" } else { "has" },
        what: what.join(" and "),
        manifest: folder.join(FILE).display().to_string(),
        pack: pack.to_string(),
        version: version.to_string(),
        target: target.to_string(),
        folder: folder.display().to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> &'static Path {
        Path::new(env!("CARGO_MANIFEST_DIR"))
    }

    /// Every manifest the helper wrote into the fixtures reads, and writes back to the same JSON: no key the type
    /// lacks, none it would add.
    #[test]
    fn the_fixtures_manifests_round_trip() {
        let mut seen = 0;
        for e in walkdir::WalkDir::new(root().join("fixtures")).into_iter().flatten() {
            if e.file_name() != FILE {
                continue;
            }
            let text = std::fs::read_to_string(e.path()).unwrap();
            let m = Manifest::parse(&text).unwrap_or_else(|err| panic!("{}: {err}", e.path().display()));
            let back = serde_json::to_value(&m).unwrap();
            let mut original: serde_json::Value = serde_json::from_str(&text).unwrap();
            // schema 1 wrote `"module_error": null` on every run; the type leaves an absent error out
            if original.get("module_error").is_some_and(|v| v.is_null()) {
                original.as_object_mut().unwrap().remove("module_error");
            }
            assert_eq!(first_difference(&back, &original, "$"), None, "{}", e.path().display());
            seen += 1;
        }
        assert!(seen >= 4, "{seen} manifests");
    }

    /// Where two JSON values first differ (a path), for a readable failure.
    fn first_difference(a: &serde_json::Value, b: &serde_json::Value, at: &str) -> Option<String> {
        use serde_json::Value::{Array, Object};
        match (a, b) {
            (Object(x), Object(y)) => {
                for k in x.keys().chain(y.keys()) {
                    match (x.get(k), y.get(k)) {
                        (Some(p), Some(q)) => {
                            if let Some(d) = first_difference(p, q, &format!("{at}.{k}")) {
                                return Some(d);
                            }
                        }
                        (p, q) => return Some(format!("{at}.{k}: {p:?} vs {q:?}")),
                    }
                }
                None
            }
            (Array(x), Array(y)) if x.len() == y.len() => {
                x.iter().zip(y).enumerate().find_map(|(i, (p, q))| first_difference(p, q, &format!("{at}[{i}]")))
            }
            _ => (a != b).then(|| format!("{at}: {a} vs {b}")),
        }
    }

    /// docs/driver.md's manifest block names exactly the keys this type reads and writes.
    #[test]
    fn the_documented_schema_is_this_type() {
        let doc = std::fs::read_to_string(root().join("docs/driver.md")).unwrap();
        let block = doc
            .split("## manifest.json")
            .nth(1)
            .and_then(|b| b.split("```jsonc").nth(1))
            .and_then(|b| b.split("```").next())
            .expect("docs/driver.md has the manifest block");
        let documented = json_keys(block);
        let full = Manifest {
            updated: Some(String::new()),
            module_file: Some(String::new()),
            module_error: Some(serde_json::Value::Null),
            packages: Some(BTreeMap::new()),
            targets: vec![TargetEntry::default()],
            results: vec![UnitResult {
                rules: Some(String::new()),
                mesh: Some(serde_json::Value::Null),
                run: Some(String::new()),
                kernels: vec![KernelRecord::default()],
                ..UnitResult::default()
            }],
            runs: vec![Run::default()],
            trimmed: Some(serde_json::Value::Null),
            merged: Some(serde_json::Value::Null),
            ..Manifest::default()
        };
        let mut typed = std::collections::BTreeSet::new();
        collect_keys(&serde_json::to_value(&full).unwrap(), &mut typed);
        // the values of `flags`, `packages` and `files` are maps whose keys are data, not schema
        let documented: std::collections::BTreeSet<String> = documented
            .into_iter()
            .filter(|k| !k.chars().next().is_some_and(|c| c.is_ascii_uppercase()) && !k.starts_with("inherited_"))
            .filter(|k| {
                !["jax", "jaxlib", "libtpu", "hlo", "mosaic", "llo", "axes", "shape", "device_ids"]
                    .contains(&k.as_str())
            })
            .collect();
        assert_eq!(documented, typed);
    }

    /// The `"key":` names of a JSON-with-comments text.
    fn json_keys(text: &str) -> std::collections::BTreeSet<String> {
        let re = regex::Regex::new(r#""([A-Za-z_]+)"\s*:"#).unwrap();
        let code: String = text.lines().map(|l| l.split(" //").next().unwrap_or("")).collect::<Vec<_>>().join("\n");
        re.captures_iter(&code).map(|c| c[1].to_string()).collect()
    }

    fn collect_keys(v: &serde_json::Value, out: &mut std::collections::BTreeSet<String>) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, x) in m {
                    out.insert(k.clone());
                    collect_keys(x, out);
                }
            }
            serde_json::Value::Array(a) => a.iter().for_each(|x| collect_keys(x, out)),
            _ => {}
        }
    }

    #[test]
    fn results_by_folder_and_file() {
        let dir = root().join("fixtures/fp8_matmul_2d/tpu7x+v6e");
        let m = Manifest::read(&dir).unwrap().unwrap();
        assert_eq!(m.result_for_dir("v3@v6e").map(|r| r.device_kind.as_deref()), Some(Some("TPU v6 lite")));
        assert_eq!(m.result_for_dir("v3@v6e").and_then(|r| r.rules.as_deref()), Some("v3-smem"));
        assert!(m.result_for_dir("v3@v5e").is_none());
        assert_eq!(m.result_for_hlo_txt("v2@tpu7x_hlo.txt").map(|r| r.version.as_str()), Some("v2"));
        assert_eq!(m.target_names().collect::<Vec<_>>(), ["tpu7x", "v6e"]);
        assert!(Manifest::read(&root().join("fixtures")).unwrap().is_none(), "no manifest there");
        let e = Manifest::parse(r#"{"schema": 2}"#).unwrap_err();
        assert!(e.contains("missing field"), "{e}");
    }
}
