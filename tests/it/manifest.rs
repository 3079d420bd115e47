//! The driver's manifest across runs (docs/driver.md, "manifest.json"): a module that does not import leaves the
//! output folder as it was, runs merge into the manifest per (version, target), no temporary file is left, and the
//! linter warns about a compilation beside a manifest that does not list it. The driver cases need only Python 3
//! (the version list and unknown targets need no jax); they are skipped with a notice without it.

use hlolint::lint::Manifest;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// An interpreter for the helper without jax: every unit then fails at once with `missing_dependency` (a record in
/// the manifest, no compile, no libtpu lock), which is all these cases need.
fn python() -> Option<PathBuf> {
    let py = PathBuf::from("python3");
    let ok = std::process::Command::new(&py)
        .args(["-c", "import sys, importlib.util as u; assert sys.version_info >= (3, 9) and not u.find_spec('jax')"])
        .output();
    if ok.map(|o| o.status.success()).unwrap_or(false) {
        Some(py)
    } else {
        println!("notice: no python3 without jax on PATH; skipping the driver's manifest tests");
        None
    }
}

const MODULE: &str = "VERSIONS = {\"a\": lambda x: x, \"b\": lambda x: x}\nRULES = {\"a\": \"v2-dma\"}\n\ndef example_args():\n    return ()\n";

/// `hlolint compile` of `module` into `out`.
fn compile(py: &Path, module: &Path, out: &Path, extra: &[&str]) -> (i32, String) {
    let run = crate::common::hlolint()
        .arg("compile")
        .arg("--python")
        .arg(py)
        .arg(module)
        .arg("--out")
        .arg(out)
        .args(extra)
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    (run.status.code().unwrap_or(-1), String::from_utf8_lossy(&run.stderr).into_owned())
}

/// Every file under `dir` with its bytes.
fn tree(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .map(|e| (e.path().strip_prefix(dir).unwrap().to_path_buf(), std::fs::read(e.path()).unwrap()))
        .collect()
}

#[test]
fn a_module_that_does_not_import_changes_nothing() {
    let Some(py) = python() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let module = tmp.path().join("kern.py");
    let out = tmp.path().join("out");
    std::fs::write(&module, MODULE).unwrap();
    let (code, _) = compile(&py, &module, &out, &["--target", "cpu"]);
    assert_eq!(code, 2, "without jax every unit fails");
    let before = tree(&out);
    assert!(before.contains_key(Path::new("manifest.json")));
    for broken in ["VERSIONS = {\"a\": lambda x: x\n", "import nosuchmodule_hlolint\n"] {
        std::fs::write(&module, broken).unwrap();
        for extra in [&["--target", "cpu"][..], &["--target", "cpu", "--versions", "a,b"], &["--clean"]] {
            let (code, stderr) = compile(&py, &module, &out, extra);
            assert_eq!(code, 2, "{stderr}");
            assert_eq!(stderr.matches("× ").count(), 1, "one error, not one per version:\n{stderr}");
            assert!(stderr.contains("the kernel module: import failed"), "{stderr}");
            assert!(stderr.contains("nothing compiled;") && stderr.contains("left as it was"), "{stderr}");
            assert!(!stderr.contains("compiled 0 of"), "{stderr}");
            assert!(stderr.contains(&format!("using {}", py.display())), "says which interpreter\n{stderr}");
            assert_eq!(tree(&out), before, "{broken:?} {extra:?} changed the output folder");
        }
    }
    // A new folder is not even made.
    let fresh = tmp.path().join("fresh");
    let (code, _) = compile(&py, &module, &fresh, &["--target", "cpu"]);
    assert_eq!(code, 2);
    assert!(!fresh.exists(), "a failed import makes no output folder");
}

#[test]
fn subsets_merge_per_version_and_target() {
    let Some(py) = python() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let module = tmp.path().join("kern.py");
    let out = tmp.path().join("out");
    std::fs::write(&module, MODULE).unwrap();
    compile(&py, &module, &out, &["--target", "cpu"]);
    let (_, stderr) = compile(&py, &module, &out, &["--target", "v5e", "--versions", "b"]);
    assert!(stderr.contains("compiled 0 of 1 version × target(s)"), "counts this run's units\n{stderr}");
    compile(&py, &module, &out, &["--target", "cpu", "--versions", "a"]);
    let m = Manifest::read(&out).unwrap().expect("a manifest");
    let units: Vec<(&str, &str)> = m.results.iter().map(|r| (r.version.as_str(), r.target.as_str())).collect();
    assert_eq!(units, [("a", "cpu"), ("b", "cpu"), ("b", "v5e")]);
    assert_eq!(m.target_names().collect::<Vec<_>>(), ["cpu", "v5e"]);
    assert_eq!(m.versions, ["a", "b"]);
    assert_eq!(m.runs.len(), 3);
    assert_eq!(m.schema, hlolint::lint::manifest::SCHEMA);
    assert_eq!(m.result("a", "cpu").and_then(|r| r.rules.as_deref()), Some("v2-dma"));
    // another module into the same folder is a usage error, said once (not by the helper and again by hlolint)
    let other = tmp.path().join("other.py");
    std::fs::write(&other, MODULE).unwrap();
    let (code, stderr) = compile(&py, &other, &out, &["--target", "cpu"]);
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(stderr.matches("records the results of module").count(), 1, "{stderr}");
    assert!(stderr.contains("pass --clean to replace them"), "{stderr}");
    // written through a temporary file renamed over it: none is left, and the helper is not left in OUT either
    let names: Vec<String> =
        std::fs::read_dir(&out).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    assert!(!names.iter().any(|n| n.ends_with(".tmp") || n == ".hlolint" || n == ".hlolint-stage"), "{names:?}");
}

/// A copy of the int8_hbm fixtures with a stray version folder and a stray `_hlo.txt` that its manifest does not
/// list (what an older driver's partial run left).
fn with_strays() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/int8_hbm/tpu7x+v6e");
    for e in walkdir::WalkDir::new(&src).into_iter().flatten() {
        let rel = e.path().strip_prefix(&src).unwrap();
        let to = tmp.path().join(rel);
        if e.file_type().is_dir() {
            std::fs::create_dir_all(&to).unwrap();
        } else {
            std::fs::copy(e.path(), &to).unwrap();
        }
    }
    std::fs::rename(tmp.path().join("any@v6e"), tmp.path().join("stray@v6e")).unwrap();
    std::fs::rename(tmp.path().join("any@v6e_hlo.txt"), tmp.path().join("stray_hlo.txt")).unwrap();
    // a one-target name beside a two-target manifest (the issue's `pinned_hlo.txt`): a compilation of its own
    std::fs::copy(tmp.path().join("hbm_pinned@v6e_hlo.txt"), tmp.path().join("hbm_pinned_hlo.txt")).unwrap();
    tmp
}

/// Diagnostics as one line of words: miette wraps them to the terminal's width.
fn flat(text: &str) -> String {
    text.split_whitespace().filter(|w| *w != "│").collect::<Vec<_>>().join(" ")
}

fn check(dir: &Path, format: &str) -> (i32, String, String) {
    let run = crate::common::hlolint().args(["check", "--format", format]).arg(dir).output().unwrap();
    (
        run.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&run.stdout).into_owned(),
        String::from_utf8_lossy(&run.stderr).into_owned(),
    )
}

#[test]
fn a_folder_the_manifest_does_not_list_is_a_warning() {
    let listed = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/int8_hbm/tpu7x+v6e");
    let (clean_code, _, clean_err) = check(&listed, "concise");
    assert!(!clean_err.contains("no entry"), "every folder of the fixtures is listed:\n{clean_err}");
    let tmp = with_strays();
    let (code, _, stderr) = check(tmp.path(), "concise");
    let stderr = flat(&stderr);
    assert_eq!(code, clean_code, "a warning, not an error exit\n{stderr}");
    assert!(stderr.contains("folder stray@v6e and stray_hlo.txt have no entry in"), "{stderr}");
    assert!(stderr.contains("hbm_pinned_hlo.txt has no entry in"), "{stderr}");
    assert!(stderr.contains("linted with core, not with a pack its module's RULES names"), "{stderr}");
    assert!(stderr.contains("--versions stray --target v6e --out"), "the help says how to recompile it\n{stderr}");
    assert_eq!(stderr.matches("hlolint::manifest::unlisted").count(), 2, "{stderr}");
    // JSON lists them beside the errors
    let (_, stdout, _) = check(tmp.path(), "json");
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let warnings: Vec<&str> =
        doc["warnings"].as_array().unwrap().iter().map(|w| w["message"].as_str().unwrap()).collect();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    // an unreadable manifest: one warning, the versions still linted
    std::fs::write(tmp.path().join("manifest.json"), "{").unwrap();
    let (code, _, stderr) = check(tmp.path(), "concise");
    assert_eq!(code, clean_code);
    assert_eq!(stderr.matches("hlolint::manifest::unreadable").count(), 1, "{stderr}");
}

/// An interpreter without jax: one error that names the interpreter, why it was chosen, and the fix.
#[test]
fn missing_jax_is_one_error_with_the_fix() {
    let py = PathBuf::from("python3");
    let has_jax = std::process::Command::new(&py).args(["-c", "import jax"]).output().map(|o| o.status.success());
    if has_jax.unwrap_or(true) {
        println!("notice: python3 on PATH has jax (or is absent); skipping the missing-jax test");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let module = tmp.path().join("kern.py");
    std::fs::write(&module, format!("import jax\n{MODULE}")).unwrap();
    let out = tmp.path().join("out");
    let (code, stderr) = compile(&py, &module, &out, &["--target", "tpu7x", "--versions", "a,b"]);
    assert_eq!(code, 2);
    assert_eq!(stderr.matches("No module named 'jax'").count(), 1, "once, not once per version\n{stderr}");
    assert!(stderr.contains("using python3 (--python)"), "{stderr}");
    assert!(
        stderr.contains("python3 (--python) cannot import jax") && stderr.contains("scripts/setup-python.sh"),
        "{stderr}"
    );
    assert!(!out.exists());
}
