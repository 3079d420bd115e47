//! The command line as a user meets it: exit codes, per-file errors that do not stop other files, directories,
//! globs, JSON.
//!
//! By area: odd inputs — a closed pipe, a FIFO, a BOM, cut files, long lines, folders without dumps, stdin
//! (`inputs`); what a run is told — output formats, rule selection, suppression comments, configuration,
//! rule explanations (`settings`).

use crate::common::hlolint;
use std::path::Path;

mod inputs;
mod settings;

fn data(rel: &str) -> String {
    format!("{}/tests/data/{rel}", env!("CARGO_MANIFEST_DIR"))
}

/// Replaces the temp dir and the crate dir in output, so snapshots are stable.
fn scrub(s: &[u8], tmp: &Path) -> String {
    String::from_utf8_lossy(s)
        .replace(&tmp.display().to_string(), "[TMP]")
        .replace(env!("CARGO_MANIFEST_DIR"), "[CRATE]")
}

#[test]
fn clean_file_exits_zero_with_a_summary() {
    let out = hlolint().args(["--summary", "--exit-zero", &data("hlo/features.hlo")]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    insta::assert_snapshot!(scrub(&out.stdout, Path::new("/nonexistent")));
}

#[test]
fn bad_inputs_exit_two_and_the_rest_is_still_processed() {
    let tmp = tempfile::tempdir().unwrap();
    let p = |n: &str| tmp.path().join(n);
    std::fs::write(p("empty.hlo"), "").unwrap();
    std::fs::write(p("binary.hlo"), b"HloModule m\0\x01\x02").unwrap();
    std::fs::write(p("latin1.hlo"), b"HloModule caf\xe9\n").unwrap();
    std::fs::write(p("notes.txt"), "these are my notes about the model\n").unwrap();
    std::fs::write(p("truncated.hlo"), "HloModule m\n\nENTRY %e (a: f32[4]) -> f32[4] {\n  %a = f32[4]{0} parameter(0)\n  ROOT %n = f32[4]{0} negate(%a").unwrap();
    let out = hlolint()
        .args([
            "--summary",
            "--exit-zero",
            "empty.hlo",
            "binary.hlo",
            "latin1.hlo",
            "notes.txt",
            "truncated.hlo",
            "missing.hlo",
        ])
        .arg(data("hlo/features.hlo"))
        .current_dir(tmp.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stdout = scrub(&out.stdout, tmp.path());
    assert!(stdout.contains("features.hlo: HLO module `features_test`"), "the good file is still summarized");
    insta::assert_snapshot!(scrub(&out.stderr, tmp.path()));
}

#[test]
fn directories_are_walked_and_non_dumps_skipped() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("dump/sub")).unwrap();
    std::fs::copy(data("hlo/features.hlo"), tmp.path().join("dump/sub/module_0001.jit_f.after_optimizations.txt"))
        .unwrap();
    // An intermediate pass dump (--xla_dump_hlo_pass_re): skipped unless --all-stages.
    std::fs::copy(
        data("hlo/features.hlo"),
        tmp.path().join("dump/sub/module_0001.jit_f.0007.cse.after_pipeline-start.txt"),
    )
    .unwrap();
    std::fs::write(tmp.path().join("dump/vmem_report.html"), "<html></html>").unwrap();
    std::fs::write(tmp.path().join("dump/empty.txt"), "").unwrap();
    let out = hlolint().args(["--summary", "--exit-zero", "dump"]).current_dir(tmp.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("module_0001.jit_f.after_optimizations.txt: HLO module"));
    assert!(!stdout.contains("after_pipeline-start"), "intermediate stages are skipped by default");
    let out =
        hlolint().args(["--summary", "--exit-zero", "--all-stages", "dump"]).current_dir(tmp.path()).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("after_pipeline-start.txt: HLO module"));
    // A directory with no dump at all is an input error.
    std::fs::create_dir_all(tmp.path().join("nothing")).unwrap();
    let out = hlolint().arg("nothing").current_dir(tmp.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn quoted_globs_are_expanded() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("out")).unwrap();
    for n in ["v1_hlo.txt", "v2_hlo.txt", "other.txt"] {
        std::fs::copy(data("hlo/features.hlo"), tmp.path().join("out").join(n)).unwrap();
    }
    let out = hlolint().args(["--summary", "--exit-zero", "out/*_hlo.txt"]).current_dir(tmp.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("v1_hlo.txt") && stdout.contains("v2_hlo.txt") && !stdout.contains("other.txt"));
    let out = hlolint().arg("out/*.nothing").current_dir(tmp.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn json_output_is_machine_readable() {
    let out = hlolint().args(["--format", "json", &data("hlo/features.hlo"), "/no/such/file"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let f = &v["files"][0];
    assert_eq!(f["module"], "features_test");
    assert_eq!(f["instructions"], 67);
    assert_eq!(f["async_pairs"]["copy"], 1);
    assert_eq!(f["memory_spaces"]["1"], 2);
    assert_eq!(f["custom_calls"]["tpu_custom_call"][0], "custom");
    assert!(v["errors"][0]["message"].as_str().unwrap().contains("no such file"));
}

#[test]
fn syntax_errors_in_json_carry_offset_and_expectation() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("bad.hlo"), "HloModule m\nENTRY e {\n  a = f32[4,x] parameter(0)\n}\n").unwrap();
    let out = hlolint().args(["--format", "json", "bad.hlo"]).current_dir(tmp.path()).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["errors"][0]["offset"], 34);
    assert_eq!(v["errors"][0]["expected"], "a dimension size, `<=N` or `?`");
}

#[test]
fn undecodable_kernel_bodies_are_reported_on_their_call_and_the_rest_is_summarized() {
    let out = hlolint().args(["--summary", "--exit-zero", &data("hlo/bad_kernel.hlo")]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stdout).contains("custom-call \"tpu_custom_call\" ×2: truncated, not_base64"));
    insta::assert_snapshot!(scrub(&out.stderr, Path::new("/nonexistent")));
}

#[test]
fn usage_errors_exit_two() {
    let empty = tempfile::tempdir().unwrap();
    let out = hlolint().current_dir(empty.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "no path: `.`, which holds no dump");
    assert!(String::from_utf8_lossy(&out.stderr).contains("no XLA dump found"));
    assert_eq!(hlolint().arg("--no-such-flag").output().unwrap().status.code(), Some(2));
    assert_eq!(hlolint().arg("--help").output().unwrap().status.code(), Some(0));
}

#[test]
fn graph_dump_lists_edges() {
    let out = hlolint().args(["graph", &data("hlo/features.hlo")]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let main = v["computations"].as_array().unwrap().iter().find(|c| c["name"] == "main.7").unwrap();
    let w = main["instructions"].as_array().unwrap().iter().find(|i| i["name"] == "while").unwrap();
    assert_eq!(w["calls"], serde_json::json!(["cond", "body"]));
    assert_eq!(w["operands"], serde_json::json!(["init"]));
}

/// A compilation whose secondary LLO dumps (schedule analysis, a memory-space-assignment table) do not parse still
/// gets its verdicts: the HLO is linted and its findings reported in every format, next to the parse errors, which
/// keep their spans and make the exit code 2.
#[test]
fn a_broken_secondary_dump_does_not_hide_the_compilations_findings() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("v@tpu7x");
    std::fs::create_dir_all(dir.join("hlo")).unwrap();
    std::fs::create_dir_all(dir.join("llo")).unwrap();
    let fixture = format!(
        "{}/fixtures/fp8_matmul_2d/tpu7x+v6e/bug_upcast@tpu7x/hlo/module_0000.jit_fp8_matmul_bug_upcast.cl_933746096.after_optimizations.txt",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::copy(fixture, dir.join("hlo/module_0000.jit_f.after_optimizations.txt")).unwrap();
    // Cut inside a custom call's pretty-printed frontend attribute.
    let sample = std::fs::read_to_string(data("llo/43-TLP-02-schedule-analysis_final_bundles.txt")).unwrap();
    let cut = &sample[..sample.find("\"xprof_metadata").unwrap()];
    std::fs::write(dir.join("llo/1-TLP-02-schedule-analysis_final_bundles.txt"), cut).unwrap();
    std::fs::write(dir.join("llo/1-TLP-02-memory-space-assignment-scheduleinfo.txt"), "time,instruction_name\n0,\"a\n")
        .unwrap();
    let run = |format: &str| {
        let out = hlolint().args(["--format", format, "v@tpu7x"]).current_dir(tmp.path()).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{format}: an input error exits 2");
        (scrub(&out.stdout, tmp.path()), scrub(&out.stderr, tmp.path()))
    };

    let (stdout, stderr) = run("human");
    assert!(stdout.contains("HL011 async-no-overlap"), "{stdout}");
    assert!(stderr.contains("schedule-analysis_final_bundles.txt:7:496]"), "the error keeps its location: {stderr}");
    assert!(stderr.contains("memory-space-assignment-scheduleinfo.txt:2:3]"), "{stderr}");
    assert!(stderr.contains("2 error(s)"), "{stderr}");

    let (stdout, _) = run("json");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let rules: Vec<&str> = v["findings"].as_array().unwrap().iter().filter_map(|f| f["rule"].as_str()).collect();
    assert!(rules.contains(&"async-no-overlap"), "{rules:?}");
    let errors = v["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 2);
    let sched = errors.iter().find(|e| e["path"].as_str().unwrap().ends_with("schedule-analysis_final_bundles.txt"));
    assert_eq!(sched.unwrap()["offset"], cut.find("{kernel_metadata").unwrap());
    assert_eq!(sched.unwrap()["expected"], "`}` closing this `{` before the end of the file");

    let (stdout, stderr) = run("sarif");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert!(!v["runs"][0]["results"].as_array().unwrap().is_empty());
    assert!(stderr.contains("llo syntax error"));

    let (stdout, stderr) = run("github");
    assert!(stdout.contains("title=HL011 async-no-overlap"), "{stdout}");
    assert!(stderr.contains("llo syntax error"));
}

const UPCAST: &str = "tests/data/rules/fp8-upcast-before-dot/invalid/upcast_in_loop_fusion.hlo";

fn fixture(rel: &str) -> String {
    format!("{}/fixtures/{rel}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn statistics_in_every_format() {
    let stats = |format: &str| {
        let out = hlolint().args(["--statistics", "--format", format, UPCAST]).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{format}");
        (String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
    };
    let row = "    1  HL001  fp8-upcast-before-dot\n";
    for format in ["human", "github", "concise"] {
        assert!(stats(format).0.contains(row), "{format}: {}", stats(format).0);
    }
    for format in ["gitlab", "junit"] {
        assert!(stats(format).1.contains(row), "{format}: on stderr");
    }
    let v: serde_json::Value = serde_json::from_str(&stats("json").0).unwrap();
    assert_eq!(v["statistics"], serde_json::json!([{"code": "HL001", "rule": "fp8-upcast-before-dot", "count": 1}]));
    let v: serde_json::Value = serde_json::from_str(&stats("sarif").0).unwrap();
    assert_eq!(v["runs"][0]["properties"]["statistics"][0]["count"], 1);
}

#[test]
fn quiet_prints_only_the_findings() {
    let out =
        hlolint().args(["-q", UPCAST, &data("rules/fp8-upcast-before-dot/valid/native_fp8_dot.hlo")]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains("HL001 fp8-upcast-before-dot"), "{stdout}");
    for noise in ["✓", "✗", "compilation(s)", "clean"] {
        assert!(!stdout.contains(noise), "`{noise}` in\n{stdout}");
    }
    let out = hlolint().args(["-q", &data("rules/fp8-upcast-before-dot/valid/native_fp8_dot.hlo")]).output().unwrap();
    assert_eq!((out.status.code(), out.stdout.is_empty()), (Some(0), true), "clean and quiet: nothing");
}

#[test]
fn the_default_path_is_the_current_directory() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("out")).unwrap();
    std::fs::copy(UPCAST, tmp.path().join("out/upcast.hlo")).unwrap();
    let out = hlolint().args(["--format", "github"]).current_dir(tmp.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.starts_with("::error file=out/upcast.hlo,line=12,"),
        "paths relative to `.`, without `./`: {stdout}"
    );
}

#[test]
fn output_file_and_stdin() {
    let tmp = tempfile::tempdir().unwrap();
    let report = tmp.path().join("report.json");
    let out = hlolint().args(["--format", "json", "--output-file"]).arg(&report).arg(UPCAST).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(v["findings"][0]["code"], "HL001");
    // An unwritable report file is an error.
    let out = hlolint().args(["-o"]).arg(tmp.path().join("no/such/dir/r.txt")).arg(UPCAST).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot write the report"));

    let out = hlolint().args(["--format", "github", "-"]).pipe_stdin(UPCAST).unwrap().output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with("::error file=-,line=12,"), "{stdout}");
}

#[test]
fn color_is_chosen_with_color() {
    let run = |color: &str| {
        let out = hlolint().args(["--color", color, UPCAST]).output().unwrap();
        String::from_utf8(out.stdout).unwrap().contains("\x1b[")
    };
    assert!(run("always"), "always colors, even a pipe with NO_COLOR set");
    assert!(!run("never"));
    assert!(!run("auto"), "a pipe is not a terminal");
    assert_eq!(hlolint().args(["--color", "sometimes", UPCAST]).output().unwrap().status.code(), Some(2));
}

#[test]
fn shell_completions() {
    for shell in ["bash", "zsh", "fish"] {
        let out = hlolint().args(["completions", shell]).output().unwrap();
        assert_eq!(out.status.code(), Some(0));
        let script = String::from_utf8(out.stdout).unwrap();
        assert!(script.contains("hlolint") && script.contains("output-file"), "{shell}");
    }
    assert_eq!(hlolint().args(["completions", "tcsh"]).output().unwrap().status.code(), Some(2));
}

/// `hlolint check PATH...` is the explicit form; bare paths work too, and a path that exists is never taken for a
/// subcommand (a folder named `test`).
#[test]
fn check_subcommand_and_paths_named_like_subcommands() {
    let tmp = tempfile::tempdir().unwrap();
    for dir in ["test", "rules"] {
        std::fs::create_dir_all(tmp.path().join(dir)).unwrap();
        std::fs::copy(UPCAST, tmp.path().join(dir).join("upcast.hlo")).unwrap();
    }
    let run = |args: &[&str]| {
        let out = hlolint().args(args).current_dir(tmp.path()).output().unwrap();
        (out.status.code(), String::from_utf8(out.stdout).unwrap())
    };
    for args in [&["test"][..], &["check", "test"], &["--format", "github", "test"], &["test", "--format", "github"]] {
        let (code, stdout) = run(args);
        assert_eq!(code, Some(1), "{args:?}: {stdout}");
        assert!(stdout.contains("test/upcast.hlo"), "{args:?}: {stdout}");
    }
    let (code, stdout) = run(&["rules", "test"]);
    assert_eq!(code, Some(1));
    assert!(stdout.contains("rules/upcast.hlo") && stdout.contains("test/upcast.hlo"), "{stdout}");
    // Options only the subcommand has make it the subcommand.
    let out = hlolint().args(["rules", "--json"]).current_dir(tmp.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(serde_json::from_slice::<serde_json::Value>(&out.stdout).is_ok());
    // A subcommand-named folder without dumps says why it was linted.
    std::fs::create_dir_all(tmp.path().join("empty/graph")).unwrap();
    let out = hlolint().arg("graph").current_dir(tmp.path().join("empty")).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("`graph` names a folder here"));
    // Where no such folder exists, the subcommands are subcommands.
    let out = hlolint().args(["explain", "HL001"]).current_dir(tmp.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let (code, stdout) = run(&["check", UPCAST_ABS]);
    assert_eq!(code, Some(1), "{stdout}");
}

const UPCAST_ABS: &str =
    concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/rules/fp8-upcast-before-dot/invalid/upcast_in_loop_fusion.hlo");
