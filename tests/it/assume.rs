//! `per-kernel-assume`: input assumptions per kernel in the configuration, as a user meets them — errors pointing
//! into the TOML, the settings shown, and `dma-balance`'s verdicts on jax's ragged paged attention under them.

use crate::common::hlolint_in;
use serde_json::Value;
use std::path::Path;

fn ragged(target: &str) -> String {
    format!("{}/fixtures/jax_pallas_ops/ragged_paged@{target}", env!("CARGO_MANIFEST_DIR"))
}

/// Runs `check --select MO010` on `path` in `dir` (where a `hlolint.toml` may be) with `args`: exit code, the
/// JSON report's MO010 findings, stderr.
fn check(dir: &Path, args: &[&str], path: &str) -> (Option<i32>, Vec<Value>, String) {
    let out = hlolint_in(dir)
        .args(["check", "--select", "MO010", "--output-format", "json"])
        .args(args)
        .arg(path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    let findings = v["findings"].as_array().cloned().unwrap_or_default();
    (out.status.code(), findings, stderr)
}

fn severities(fs: &[Value]) -> Vec<(String, String)> {
    let s = |f: &Value, k: &str| f[k].as_str().unwrap_or("finding").to_string();
    fs.iter().map(|f| (s(f, "severity"), s(f, "verdict"))).collect()
}

#[test]
fn a_malformed_assumption_is_a_config_error_pointing_into_it() {
    let tmp = tempfile::tempdir().unwrap();
    let out = hlolint_in(tmp.path())
        .args(["check", "--config", "per-kernel-assume = {'ragged*' = ['kv_lens[*] = 1']}", "."])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    insta::assert_snapshot!(String::from_utf8_lossy(&out.stderr));
    // in a file: the position of what is wrong inside the string
    for (config, says, at) in [
        ("[per-kernel-assume]\n\"ragged*\" = [\"kv_lens[j] >= 1\"]\n", "`j` in an index", "hlolint.toml:2:23"),
        ("[per-kernel-assume]\n\"r*\" = [\"a * b > 0\"]\n", "not linear", "hlolint.toml:2:10"),
        ("[per-kernel-assume]\n\"{r\" = [\"a > 0\"]\n", "bad glob `{r`", "hlolint.toml:2:1"),
        ("[per-kernel-asume]\n\"r*\" = [\"a > 0\"]\n", "did you mean `per-kernel-assume`?", "hlolint.toml:1:2"),
    ] {
        std::fs::write(tmp.path().join("hlolint.toml"), config).unwrap();
        let out = hlolint_in(tmp.path()).args(["check", "."]).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{config}: {err}");
        assert!(err.contains("invalid configuration") && err.contains(says) && err.contains(at), "{config}: {err}");
    }
}

#[test]
fn show_settings_lists_the_assumptions_of_the_file_and_of_the_command_line() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("hlolint.toml"), "[per-kernel-assume]\n\"ragged*\" = [\"kv_lens[*] >= 1\"]\n")
        .unwrap();
    let out = hlolint_in(tmp.path())
        .args(["--show-settings", "--config", "per-kernel-assume = {'gmm*' = ['group_sizes[*] >= 0']}"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("[per-kernel-assume]"), "{text}");
    assert!(text.contains("\"ragged*\" = [\"kv_lens[*] >= 1\"]"), "{text}");
    assert!(text.contains("\"gmm*\" = [\"group_sizes[*] >= 0\"]"), "{text}");
}

#[test]
fn ragged_paged_attentions_empty_sequence_is_a_warning_under_kv_lens_assumed_positive() {
    let tmp = tempfile::tempdir().unwrap();
    // without assumptions: the proven error on an empty trailing sequence
    let (code, plain, _) = check(tmp.path(), &["--isolated"], &ragged("tpu7x"));
    assert_eq!(code, Some(1));
    let error = plain.iter().find(|f| f["severity"] == "error").expect("the error").clone();
    // assuming every sequence has KV tokens: the same finding, a warning saying which assumption excludes its input
    std::fs::write(tmp.path().join("hlolint.toml"), "[per-kernel-assume]\n\"ragged_paged*\" = [\"kv_lens[*] >= 1\"]\n")
        .unwrap();
    let (code, under, err) = check(tmp.path(), &[], &ragged("tpu7x"));
    assert_eq!(code, Some(1), "a warning fails the run as any warning does: {err}");
    assert!(!err.contains("applies to no kernel"), "{err}");
    assert_eq!(
        severities(&under),
        vec![("info".to_string(), "inconclusive".to_string()), ("warning".to_string(), "assumed".to_string())]
    );
    let warning = &under[1];
    let message = warning["message"].as_str().unwrap();
    assert!(message.contains("never waited") && message.contains("for example with num_seqs_ref[0] = 2"), "{message}");
    assert!(message.contains("`per-kernel-assume` excludes (`kv_lens[*] >= 1`, broken by `kv_lens_ref[1] = 0`)"));
    // the same finding: the same place, rule and identity (a baseline or an ignore keeps applying)
    for k in ["code", "span", "kernel", "compilation"] {
        assert_eq!(warning[k], error[k], "{k}");
    }
    let sarif = |args: &[&str]| -> Value {
        let out = hlolint_in(tmp.path())
            .args(["check", "--select", "MO010", "--output-format", "sarif"])
            .args(args)
            .arg(ragged("tpu7x"))
            .output()
            .unwrap();
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let results = |v: &Value| v["runs"][0]["results"].as_array().cloned().unwrap_or_default();
    let (before, after) = (results(&sarif(&["--isolated"])), results(&sarif(&[])));
    let finding = |rs: &[Value]| rs.iter().find(|r| r["level"] != "note").cloned().unwrap();
    let (before, after) = (finding(&before), finding(&after));
    assert_eq!((before["level"].as_str(), after["level"].as_str()), (Some("error"), Some("warning")));
    assert_eq!(before["partialFingerprints"], after["partialFingerprints"]);
    assert_eq!(after["properties"]["verdict"], "assumed");
}

#[test]
fn a_failure_an_allowed_input_reaches_stays_an_error_with_that_input() {
    // at most one sequence: with none at all, the first block's prefetch is never waited (jax's interpreter agrees:
    // tests/python/test_oracle.py) — an input the assumption allows, so an error, and its witness satisfies it
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("hlolint.toml"), "[per-kernel-assume]\n\"ragged_paged*\" = [\"num_seqs <= 1\"]\n")
        .unwrap();
    let (code, fs, _) = check(tmp.path(), &[], &ragged("tpu7x"));
    assert_eq!(code, Some(1));
    let error = fs.iter().find(|f| f["severity"] == "error").expect("an error");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("never waited") && message.contains("num_seqs_ref[0] = 0"), "{message}");
}

#[test]
fn an_assumption_naming_what_no_kernel_has_is_a_warning_with_the_closest_name() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("hlolint.toml"), "[per-kernel-assume]\n\"ragged*\" = [\"kv_len[*] >= 1\"]\n")
        .unwrap();
    let (code, fs, _) = check(tmp.path(), &[], &ragged("v5e"));
    // the assumption is not applied: the error stays
    assert_eq!(code, Some(1));
    assert!(fs.iter().any(|f| f["severity"] == "error"), "{fs:?}");
    // the typo is said once, pointing at the name, with the kernel's names and the closest one
    let out =
        hlolint_in(tmp.path()).args(["check", "--select", "MO010"]).arg(ragged("v5e")).arg(ragged("v6e")).output();
    let err = String::from_utf8_lossy(&out.unwrap().stderr).into_owned();
    assert_eq!(err.matches("applies to no kernel").count(), 1, "{err}");
    assert!(err.contains("hlolint::config::assume") && err.contains("hlolint.toml:2:15"), "{err}");
    assert!(err.contains("did you mean `kv_lens`?") && err.contains("kv_lens_ref, page_indices_ref"), "{err}");
    // and in JSON, among the run's warnings
    let out = hlolint_in(tmp.path()).args(["check", "--output-format", "json"]).arg(ragged("v5e")).output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let warned = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w["message"].as_str().unwrap().contains("`kv_len` is no integer table or scalar of the kernel"));
    assert!(warned, "{}", v["warnings"]);
    // a glob that matches no kernel of the run says nothing (it may be for other dumps)
    std::fs::write(tmp.path().join("hlolint.toml"), "[per-kernel-assume]\n\"flash*\" = [\"kv_len[*] >= 1\"]\n")
        .unwrap();
    let (_, _, err) = check(tmp.path(), &[], &ragged("v5e"));
    assert!(!err.contains("applies to no kernel"), "{err}");
}

#[test]
fn a_race_only_excluded_inputs_reach_is_a_warning_and_an_allowed_one_stays_an_error() {
    // two DMAs in flight write the rows a table names: a race where it names one row twice
    let case = format!("{}/tests/data/rules/dma-race/invalid/scatter_same_row.mlir", env!("CARGO_MANIFEST_DIR"));
    let race = |config: Option<&str>| {
        let tmp = tempfile::tempdir().unwrap();
        let mut args = vec!["check", "--select", "MO011", "--output-format", "json"];
        match config {
            Some(c) => std::fs::write(tmp.path().join("hlolint.toml"), c).unwrap(),
            None => args.push("--isolated"),
        }
        let out = hlolint_in(tmp.path()).args(&args).arg(&case).output().unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let fs = v["findings"].as_array().cloned().unwrap_or_default();
        let f = fs.iter().find(|f| f["code"] == "MO011").cloned().expect("the race");
        (severities(&fs), f["message"].as_str().unwrap().to_string())
    };
    let (plain, message) = race(None);
    assert_eq!(plain, [("error".to_string(), "finding".to_string())]);
    assert!(message.contains("%arg1[0] = 0, %arg1[1] = 0"), "{message}");
    // distinct rows in increasing order: only inputs the assumption excludes reach it
    let (under, message) = race(Some("[per-kernel-assume]\n\"scatter*\" = [\"arg1[0] < arg1[1]\"]\n"));
    assert_eq!(under, [("warning".to_string(), "assumed".to_string())]);
    assert!(message.contains("only inputs that `per-kernel-assume` excludes (`arg1[0] < arg1[1]`)"), "{message}");
    // rows at least 0: the same row twice is still allowed, so still an error, its witness one the assumption allows
    let (allowed, message) = race(Some("[per-kernel-assume]\n\"scatter*\" = [\"arg1[*] >= 1\"]\n"));
    assert_eq!(allowed, [("error".to_string(), "finding".to_string())]);
    assert!(message.contains("%arg1[0] = 1, %arg1[1] = 1"), "{message}");
}
