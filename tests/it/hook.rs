//! hlolint as the pre-commit hook runs it (`.pre-commit-hooks.yaml`): every file of a commit named on one command
//! line, `--force-exclude`. The files are grouped into compilations (each finding once, as when the folder is
//! named), non-dumps are skipped instead of being errors, and the hook's `files:` pattern picks every dump a
//! directory walk reads. `tests/python/test_pre_commit.py` runs the hook itself through pre-commit.

use crate::common::hlolint;
use std::path::{Path, PathBuf};

const CRATE: &str = env!("CARGO_MANIFEST_DIR");

/// Every file under a folder, relative to the crate (as pre-commit names them), sorted.
fn files_under(rel: &str) -> Vec<String> {
    let mut v: Vec<String> = walkdir::WalkDir::new(Path::new(CRATE).join(rel))
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .map(|e| e.path().strip_prefix(CRATE).unwrap().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// A finding as these tests compare them: `(compilation, code, path, line)`.
type Seen = (String, String, String, u64);

/// Every finding, sorted, and the errors.
fn findings(out: &std::process::Output) -> (Vec<Seen>, Vec<String>) {
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut f: Vec<_> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["compilation"].as_str().unwrap().to_string(),
                f["code"].as_str().unwrap_or("").to_string(),
                f["path"].as_str().unwrap().to_string(),
                f["start"]["line"].as_u64().unwrap(),
            )
        })
        .collect();
    f.sort();
    let errors = doc["errors"].as_array().unwrap().iter().map(|e| e["message"].to_string()).collect();
    (f, errors)
}

const FIXTURE: &str = "fixtures/fp8_matmul_2d/tpu7x+v6e";

#[test]
fn every_file_of_the_compilations_on_one_command_line_gives_each_finding_once() {
    let by_folder = hlolint().args(["--format", "json", FIXTURE]).output().unwrap();
    assert_eq!(by_folder.status.code(), Some(1));
    let (expected, errors) = findings(&by_folder);
    assert!(errors.is_empty(), "{errors:?}");
    assert!(expected.len() > 20, "{expected:?}");

    let files = files_under(FIXTURE);
    // the hook's own view: every file, non-dumps and intermediate stages included
    assert!(files.iter().any(|f| f.ends_with("manifest.json")) && files.iter().any(|f| f.ends_with("-original.txt")));
    let as_hook = hlolint().args(["--format", "json", "--force-exclude"]).args(&files).output().unwrap();
    assert_eq!(as_hook.status.code(), Some(1), "{}", String::from_utf8_lossy(&as_hook.stderr));
    let (got, errors) = findings(&as_hook);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(got, expected);

    // the same files in another order: the same findings, each once. (Which of two identical copies a finding
    // names — the driver's `<version>_hlo.txt` is a copy of the optimized HLO in `hlo/` — follows the order the
    // files come in; pre-commit hands them sorted, as above.)
    let mut reversed = files.clone();
    reversed.reverse();
    let out = hlolint().args(["--format", "json", "--force-exclude"]).args(&reversed).output().unwrap();
    let without_path = |v: Vec<Seen>| -> Vec<(String, String, u64)> {
        let mut v: Vec<_> = v.into_iter().map(|(c, code, _, line)| (c, code, line)).collect();
        v.sort();
        v
    };
    assert_eq!(without_path(findings(&out).0), without_path(expected));
}

#[test]
fn without_force_exclude_a_named_non_dump_is_an_error() {
    let report = files_under(FIXTURE).into_iter().find(|f| f.ends_with("-memory-usage-report.txt")).unwrap();
    let out = hlolint().arg(&report).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = hlolint().arg("--force-exclude").arg(&report).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn force_exclude_skips_non_dumps_and_intermediate_stages_but_not_broken_dumps() {
    let tmp = tempfile::tempdir().unwrap();
    let p = |n: &str| tmp.path().join(n);
    let hlo = "HloModule m\n\nENTRY %e (a: f32[4]) -> f32[4] {\n  ROOT %a = f32[4]{0} parameter(0)\n}\n";
    std::fs::write(p("README.md"), "# dumps of our kernels\n").unwrap();
    std::fs::write(p("manifest.json"), "{\"schema\": 1}\n").unwrap();
    std::fs::write(p("module_0000.jit_f.after_optimizations-memory-usage-report.txt"), "Memory Space: default\n")
        .unwrap();
    std::fs::write(p("empty_hlo.txt"), "").unwrap();
    std::fs::write(p("blob.txt"), b"HloModule m\0\x01").unwrap();
    std::fs::write(p("module_0000.jit_f.after_optimizations.txt"), hlo).unwrap();
    // an intermediate Mosaic pass: a directory walk skips it, so does the hook
    std::fs::write(p("1-0012-mosaic-dump-k-post-apply-vector-layout.txt"), "this would not parse {\n").unwrap();
    let names = [
        "README.md",
        "manifest.json",
        "module_0000.jit_f.after_optimizations-memory-usage-report.txt",
        "empty_hlo.txt",
        "blob.txt",
        "module_0000.jit_f.after_optimizations.txt",
        "1-0012-mosaic-dump-k-post-apply-vector-layout.txt",
    ];
    let run = |extra: &[&str]| {
        let mut c = hlolint();
        c.current_dir(tmp.path()).args(["--format", "json"]).args(extra).args(names);
        c.output().unwrap()
    };
    let out = run(&["--force-exclude"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let read: Vec<&str> = doc["files"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap()).collect();
    assert_eq!(read, ["module_0000.jit_f.after_optimizations.txt"]);
    assert_eq!(doc["errors"].as_array().unwrap().len(), 0);

    // without it, every named file is read: the non-dumps and the broken pass dump are errors
    let out = run(&[]);
    assert_eq!(out.status.code(), Some(2));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["errors"].as_array().unwrap().len(), 6, "{:#}", doc["errors"]);

    // a file that is a dump by content and fails to parse stays an error under --force-exclude
    std::fs::write(p("module_0000.jit_f.after_optimizations.txt"), &hlo[..hlo.len() - 4]).unwrap();
    let out = run(&["--force-exclude"]);
    assert_eq!(out.status.code(), Some(2));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let errors = doc["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert_eq!(errors[0]["path"], "module_0000.jit_f.after_optimizations.txt");
}

#[test]
fn force_exclude_applies_the_configs_exclude_globs_to_named_files() {
    let tmp = tempfile::tempdir().unwrap();
    let dumps = tmp.path().join("compilation_output");
    for v in ["old", "new"] {
        std::fs::create_dir_all(dumps.join(v)).unwrap();
        std::fs::copy(
            Path::new(CRATE).join("tests/data/rules/fp8-upcast-before-dot/invalid/convert_then_dot.hlo"),
            dumps.join(v).join("module_0000.jit_f.after_optimizations.txt"),
        )
        .unwrap();
    }
    std::fs::write(tmp.path().join("hlolint.toml"), "extend-exclude = [\"compilation_output/old\"]\n").unwrap();
    let named = [
        "compilation_output/old/module_0000.jit_f.after_optimizations.txt",
        "compilation_output/new/module_0000.jit_f.after_optimizations.txt",
    ];
    let compilations = |extra: &[&str]| -> Vec<String> {
        let out =
            hlolint().current_dir(tmp.path()).args(["--format", "json"]).args(extra).args(named).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        doc["compilations"].as_array().unwrap().iter().map(|c| c["dir"].as_str().unwrap().to_string()).collect()
    };
    // named files are read even when excluded (as ruff) ...
    assert_eq!(compilations(&[]), ["compilation_output/new", "compilation_output/old"]);
    // ... unless --force-exclude says the globs apply to them too
    assert_eq!(compilations(&["--force-exclude"]), ["compilation_output/new"]);
}

/// The `files:` pattern of `.pre-commit-hooks.yaml` (Python `re.search` semantics; the pattern uses only syntax that
/// Rust's `regex` reads the same way).
fn hook_pattern() -> regex::Regex {
    let text = std::fs::read_to_string(Path::new(CRATE).join(".pre-commit-hooks.yaml")).unwrap();
    let hooks: serde_json::Value = serde_norway::from_str(&text).unwrap();
    let hook = hooks.as_array().unwrap().iter().find(|h| h["id"] == "hlolint").expect("hook `hlolint`");
    assert_eq!(hook["require_serial"], true);
    assert!(hook["entry"].as_str().unwrap().contains("--force-exclude"));
    regex::Regex::new(hook["files"].as_str().unwrap()).unwrap()
}

#[test]
fn the_hook_picks_every_dump_a_directory_walk_reads() {
    let files = hook_pattern();
    let picked = |p: &str| files.is_match(p);
    let (mut dumps, mut intermediates) = (0, 0);
    for root in ["fixtures", "tests/data/rules"] {
        for f in files_under(root) {
            let path = PathBuf::from(CRATE).join(&f);
            let is_dump = std::fs::read_to_string(&path).ok().and_then(|t| hlolint::source::sniff(&t)).is_some();
            let name = path.file_name().unwrap().to_string_lossy();
            let intermediate = hlolint::source::is_intermediate_stage(&path);
            if root == "fixtures" && is_dump && !intermediate {
                assert!(picked(&f), "the hook misses the dump {f}");
                dumps += 1;
            }
            // pass dumps stay out of the file list (pre-commit splits long lists into several runs)
            if intermediate {
                assert!(!picked(&f), "the hook picks the intermediate stage {f}");
                intermediates += 1;
            }
            // the driver's own files are not handed to hlolint; XLA's memory-usage reports are, and skipped by
            // content (`every_file_of_the_compilations_on_one_command_line_gives_each_finding_once`)
            if name.ends_with(".json") || name.ends_with(".jsonl") || name == "README.md" {
                assert!(!picked(&f), "the hook picks {f}");
            }
        }
    }
    assert!(dumps > 300 && intermediates > 40, "{dumps} {intermediates}");
    for (name, want) in [
        ("compilation_output/v1_hlo.txt", true),
        ("dumps/module_0012.jit_step.cl_1.before_optimizations.txt", true),
        ("dumps/jax_ir0_jit_step_compile.mlir", true),
        ("dumps/1795340940838137926-0018-mosaic-dump-anonymous-post-finalize-llo.txt", true),
        ("dumps/1795340940944829210-fp8_mm_v3.1-03-final_bundles.txt", true),
        ("dumps/1795340940944829210-fp8_mm_v3.1-41-post-delay-insertion.txt", false),
        ("dumps/module_0012.jit_step.cl_1.0042.spmd-partitioning.after_pass.txt", false),
        ("dumps/1795340940838137926-0012-mosaic-dump-anonymous-post-apply-vector-layout.txt", false),
        // not a dump: handed to hlolint, which skips it by content (the pre-commit test hands it one)
        ("dumps/module_0000.jit_f.cl_1.after_optimizations-memory-usage-report.txt", true),
        ("kernels.py", false),
        ("notes.txt", false),
        ("requirements.txt", false),
    ] {
        assert_eq!(picked(name), want, "{name}");
    }
}

/// The hook picks a file named after each stage `source::names` lists exactly when a directory walk reads it: the
/// hook's pattern follows the one list of dump names (YAML cannot import it).
#[test]
fn the_hook_follows_the_dump_names_list() {
    use hlolint::source::names;
    let files = hook_pattern();
    let mut names_checked = Vec::new();
    for stage in names::MOSAIC_KEPT.iter().chain(&["post-canonicalize-mosaic"]) {
        names_checked.push(format!("d/mosaic/1795340940838137926-0018{}k-{stage}.txt", names::MOSAIC_MARK));
    }
    for mark in names::LLO_KEPT_MARKS.iter().chain(&["post-delay-insertion", "schedule-analysis_final_bundles"]) {
        // libtpu's HLO copy has no pass index: `<ts>-<computation>-TLP-hlo.txt`
        let index = if mark.ends_with(names::LLO_HLO_STAGE) { "" } else { "07-" };
        names_checked.push(format!("d/llo/1795340940944829210-fusion.3-{index}{mark}.txt"));
    }
    for mark in names::HLO_READ_MARKS.iter().chain(&["0042.spmd-partitioning.after_pass"]) {
        names_checked.push(format!("d/hlo/{}0000.jit_f.cl_1.{mark}.txt", names::HLO_MODULE_PREFIX));
    }
    // the driver's copy of each version's HLO, beside its dump folder
    assert!(files.is_match(&format!("out/v3@tpu7x{}", names::DRIVER_HLO_SUFFIX)));
    for name in &names_checked {
        let read = !names::is_intermediate_stage(Path::new(name));
        assert_eq!(files.is_match(name), read, "{name}: the walk {}", if read { "reads it" } else { "skips it" });
    }
}
