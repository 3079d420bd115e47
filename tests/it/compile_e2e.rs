//! End to end: `hlolint compile` of the project's example kernels for tpu7x with the compile-only client (no TPU),
//! then the lint of what it dumped. Needs the Python side (`scripts/setup-python.sh` makes `.venv`; `scripts/test`
//! runs it first); skipped with a notice without it. Verdicts are asserted, not bytes: dumps carry timestamps.

use std::path::Path;
use std::path::PathBuf;

fn venv_python() -> Option<PathBuf> {
    let py = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python");
    let ok = py.exists()
        && std::process::Command::new(&py)
            .args(["-c", "import jax, libtpu"])
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false);
    if !ok {
        println!(
            "notice: {} with jax[tpu] is absent (run scripts/setup-python.sh); skipping the compile test",
            py.display()
        );
        return None;
    }
    Some(py)
}

#[test]
fn compile_examples_for_tpu7x_and_lint_them() {
    let Some(py) = venv_python() else { return };
    let out = tempfile::tempdir().unwrap();
    let run = crate::common::hlolint()
        .arg("compile")
        .arg("--python")
        .arg(&py)
        .args(["examples/fp8_matmul_2d", "--target", "tpu7x", "--quiet"])
        .args(["--format", "json", "--out"])
        .arg(out.path())
        .timeout(std::time::Duration::from_secs(900))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    // The failing version is reported with the user's source line; the others still compile and lint.
    assert_eq!(run.status.code(), Some(2), "a failed version makes the run fail\n{stderr}");
    assert!(stderr.contains("bug_bad_block@tpu7x: lower failed"), "{stderr}");
    assert!(stderr.contains("kernels.py"), "points at the kernel source\n{stderr}");
    let report: serde_json::Value = serde_json::from_slice(&run.stdout).expect("the lint report is JSON");
    let items: Vec<&serde_json::Value> =
        report["linked"].as_array().unwrap().iter().flat_map(|g| g["items"].as_array().unwrap()).collect();
    let item =
        |name: &str| *items.iter().find(|i| i["name"] == name).unwrap_or_else(|| panic!("no {name}: {report:#}"));
    let v3 = item("fp8_mm_v3.1");
    assert_eq!(v3["mxu"]["f8e4m3fn"], 2, "fp8 is native on tpu7x");
    assert_eq!(v3["dma_routes"]["vmem_to_smem"], 2, "v3's scales go to SMEM");
    assert_eq!(v3["decoded_from_hlo"], true);
    let upcast = item("fp8_mm_bug_upcast.1");
    assert!(upcast["mxu"]["bf16"].as_u64().unwrap() > 0, "the planted upcast runs bf16 on the MXU");
    assert!(upcast["mxu"].get("f8e4m3fn").is_none());
    // Each version is linted with the pack its module names (RULES): every planted bug is reported, the clean
    // versions pass.
    let mut by_version: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for f in report["findings"].as_array().unwrap() {
        if f["severity"] == "info" {
            continue;
        }
        let dir = f["compilation"].as_str().unwrap();
        let version = Path::new(dir).file_name().unwrap().to_string_lossy().split('@').next().unwrap().to_string();
        by_version.entry(version).or_default().push(f["code"].as_str().unwrap().to_string());
    }
    for codes in by_version.values_mut() {
        codes.sort();
        codes.dedup();
    }
    let expect = |v: &str, codes: &[&str]| {
        let got: Vec<&str> = by_version.get(v).map(|c| c.iter().map(String::as_str).collect()).unwrap_or_default();
        assert_eq!(got, codes, "{v}: {report:#}");
    };
    expect("v1", &[]);
    expect("v2", &[]);
    expect("v3", &[]);
    expect("bug_upcast", &["MO001"]);
    // (the unwaited prefetch is still filling slot 0 when the next grid step fills and reads it: races too)
    expect("bug_unwaited_dma", &["MO010", "MO011"]);
    expect("bug_single_slot", &["MO011", "MO021"]);
    expect("bug_scales_vmem", &["MO030"]);
    expect("bug_any_in_vmem", &["XL003"]);
    // The layout the user's guide expects.
    assert!(out.path().join("v3_hlo.txt").exists() || out.path().join("v3@tpu7x_hlo.txt").exists());
    assert!(out.path().join("manifest.json").exists());
}

#[test]
fn unknown_targets_are_usage_errors() {
    let run =
        crate::common::hlolint().args(["compile", "examples/fp8_matmul_2d", "--target", "tpu9"]).output().unwrap();
    assert_eq!(run.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&run.stderr).contains("unknown target `tpu9`"));
}
