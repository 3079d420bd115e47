//! The command line as a user meets it: exit codes, per-file errors that do not stop other files, directories,
//! globs, JSON.

use crate::common::hlolint;
use std::path::Path;

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

/// `hlolint DIR | head -3`: the reader goes away; hlolint stops writing quietly with the run's exit status.
#[test]
fn a_closed_pipe_ends_quietly() {
    for format in ["human", "json", "sarif", "github", "concise", "gitlab", "junit"] {
        let mut child = crate::common::hlolint_process()
            .args(["--format", format, &fixture("fp8_matmul_2d/tpu7x+v6e")])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked") && !stderr.contains("Broken pipe"), "{format}: {stderr}");
        assert_eq!(out.status.code(), Some(1), "{format}: findings still exit 1");
    }
}

/// Dumps whose lines are kilobytes of base64: every excerpt line is a window, cut on character boundaries.
#[test]
fn excerpt_lines_are_windows_cut_on_character_boundaries() {
    let tmp = tempfile::tempdir().unwrap();
    // A finding on a line that, like its neighbours, is kilobytes long and full of multi-byte characters.
    let pad = "é".repeat(3000);
    let src = std::fs::read_to_string(data(&UPCAST.replace("tests/data/", ""))).unwrap();
    let mut text = String::new();
    for line in src.lines() {
        let meta = if line.contains(" = ") && !line.trim_start().starts_with("ROOT") {
            format!(", metadata={{op_name=\"{pad}\"}}")
        } else {
            String::new()
        };
        text.push_str(&format!("{line}{meta}\n"));
    }
    std::fs::write(tmp.path().join("wide.hlo"), &text).unwrap();
    for dump in [tmp.path().join("wide.hlo").display().to_string(), fixture("fp8_matmul_2d/tpu7x+v6e")] {
        let out = hlolint().arg(&dump).output().unwrap();
        assert_eq!(out.status.code(), Some(1));
        let stdout = String::from_utf8(out.stdout).expect("UTF-8");
        assert!(!stdout.contains('\u{FFFD}'), "a character cut in two:\n{stdout}");
        let widest = stdout.lines().map(|l| l.chars().count()).max().unwrap();
        assert!(widest < 360, "a line of {widest} characters");
        assert!(stdout.contains("…"), "long lines are marked as cut");
    }
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

/// `compilation_output/v1_hlo.txt` and `v2_hlo.txt` without their dump folders are two versions, each with its own
/// findings (not one compilation where v2's finding is "also seen" on v1's).
#[test]
fn seed_hlo_files_side_by_side_are_separate_versions() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("compilation_output")).unwrap();
    for v in ["v1", "v2"] {
        std::fs::copy(UPCAST, tmp.path().join(format!("compilation_output/{v}_hlo.txt"))).unwrap();
    }
    let out = hlolint().args(["--format", "json", "compilation_output"]).current_dir(tmp.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let dirs: Vec<&str> = v["compilations"].as_array().unwrap().iter().map(|c| c["dir"].as_str().unwrap()).collect();
    assert_eq!(dirs, ["compilation_output/v1", "compilation_output/v2"]);
    let findings = v["findings"].as_array().unwrap();
    let paths: Vec<&str> = findings.iter().map(|f| f["path"].as_str().unwrap()).collect();
    assert_eq!(paths, ["compilation_output/v1_hlo.txt", "compilation_output/v2_hlo.txt"]);
    assert!(findings.iter().all(|f| !f["notes"].to_string().contains("also seen")), "{findings:?}");
    let out = hlolint().arg("compilation_output").current_dir(tmp.path()).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("2 errors in 2 of 2 compilation(s)"));
}

#[cfg(unix)]
#[test]
fn a_fifo_is_refused_not_waited_on() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("dump.txt");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().map(|s| s.success()).unwrap_or(false);
    if !made {
        println!("skipped: mkfifo is not available");
        return;
    }
    let mut child = crate::common::hlolint_process()
        .arg(&fifo)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // nobody ever writes to the FIFO: a reader would block forever
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("hlolint blocked on a FIFO");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let out = child.wait_with_output().unwrap();
    assert_eq!(status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not a regular file"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_byte_order_mark_is_not_part_of_the_dump() {
    let dir = tempfile::tempdir().unwrap();
    let plain = "HloModule m\n\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n";
    let path = dir.path().join("bom_hlo.txt");
    std::fs::write(&path, format!("\u{feff}{plain}")).unwrap();
    let out = hlolint().arg(&path).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_folder_without_dumps_beside_good_ones_is_said() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("README.md"), "notes\n").unwrap();
    let good = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/jax_pallas_ops/gmm@v6e");
    let out = hlolint().arg(dir.path()).arg(&good).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no XLA dump in this folder"), "{err}");
    assert!(err.contains(&dir.path().display().to_string()), "{err}");
}

#[test]
fn a_file_cut_inside_a_json_object_or_string_is_reported_at_its_end() {
    let dir = tempfile::tempdir().unwrap();
    let head = "HloModule m\n\nENTRY e {\n  ROOT p = f32[] parameter(0), ";
    for (name, tail, opened) in [
        ("json_hlo.txt", "backend_config={\"a\":{\"b\":1,", "JSON object opened as `{\"a\":{\"b\":1,`"),
        ("string_hlo.txt", "metadata={op_name=\"abc", "string opened as `\"abc`"),
    ] {
        let path = dir.path().join(name);
        let text = format!("{head}{tail}");
        std::fs::write(&path, &text).unwrap();
        let out = hlolint().args(["--format", "json"]).arg(&path).output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let err = &json["errors"][0];
        let message = err["message"].as_str().unwrap_or_default();
        assert!(message.contains("found end of file") && message.contains(opened), "{err}");
        // the end of the file (its last character, where a terminal can show it)
        assert!(err["offset"].as_u64().is_some_and(|o| o + 1 >= text.len() as u64), "points at the end: {err}");
    }
}

// Non-dumps (issue 22, point 8).

#[test]
fn a_named_file_that_is_no_dump_says_so_at_its_first_word() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("notes.txt"), "\n  hello world, my notes\n").unwrap();
    let out = hlolint().arg("notes.txt").current_dir(tmp.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("notes.txt: not an XLA dump (no HLO, MLIR or LLO header)"), "{err}");
    assert!(err.contains("[notes.txt:2:3]"), "the label is on the first word: {err}");
    assert!(!err.contains("syntax error"), "{err}");
    // a run whose every input failed prints no tally that would read as a pass
    assert!(out.stdout.is_empty(), "{}", String::from_utf8_lossy(&out.stdout));
}

#[test]
fn a_folder_without_dumps_lists_what_it_skipped() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("dumps");
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("notes.txt"), "my notes\n").unwrap();
    std::fs::write(d.join("empty.txt"), "").unwrap();
    std::fs::write(d.join("blob.bin"), b"\0\x01").unwrap();
    std::fs::copy(data("hlo/features.hlo"), d.join("module_0001.jit_f.0007.cse.after_pipeline-start.txt")).unwrap();
    let out = hlolint().arg("dumps").current_dir(tmp.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty(), "no `no findings in 0 compilation(s)`");
    insta::assert_snapshot!(String::from_utf8_lossy(&out.stderr), @r"
    error: no XLA dump found in the given directories
      skipped dumps/blob.bin: binary
      skipped dumps/empty.txt: empty
      skipped dumps/module_0001.jit_f.0007.cse.after_pipeline-start.txt: an intermediate compiler stage (--all-stages reads it)
      skipped dumps/notes.txt: no HLO, MLIR or LLO header
    ");
}

#[test]
fn stdins_compilation_is_named_dash() {
    let out = hlolint().arg("-").pipe_stdin(UPCAST).unwrap().output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with("✗ - · "), "{stdout}");
    assert!(stdout.contains("[-:12:"), "{stdout}");
}

// Paths (issue 22, point 5): the fixtures record the Python file as `/work/wt-driver/examples/...`, the compiling
// machine's worktree; every format names the file found here.

const UNWAITED: &str = "fixtures/fp8_matmul_2d/tpu7x+v6e/bug_unwaited_dma@tpu7x";
const KERNELS: &str = "examples/fp8_matmul_2d/kernels.py";

fn in_crate(args: &[&str]) -> (Option<i32>, String, String) {
    let out = hlolint().args(args).current_dir(env!("CARGO_MANIFEST_DIR")).output().unwrap();
    let s = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code(), s(&out.stdout), s(&out.stderr))
}

#[test]
fn every_format_names_the_python_file_found_here() {
    for format in ["human", "concise", "json", "sarif", "github", "gitlab", "junit"] {
        let (code, out, err) = in_crate(&["--output-format", format, UNWAITED]);
        assert_eq!(code, Some(1), "{format}: {err}");
        assert!(!out.contains("/work/wt-driver"), "{format} prints the recorded path:\n{out}");
        assert!(out.contains(KERNELS), "{format}:\n{out}");
    }
    let (_, concise, _) = in_crate(&["--output-format", "concise", UNWAITED]);
    let first = concise.lines().next().unwrap();
    assert!(first.starts_with(&format!("{KERNELS}:")), "concise leads with Python: {first}");
    assert!(first.contains(&format!("[dump: {UNWAITED}/")), "then the dump: {first}");
    let (_, github, _) = in_crate(&["--output-format", "github", UNWAITED]);
    let first = github.lines().next().unwrap();
    assert!(first.starts_with(&format!("::error file={KERNELS},line=")), "{first}");
    assert!(first.contains(&format!("%0Adump: {UNWAITED}/")), "{first}");
}

// ruff's conventions (issue 22, point 7).

#[test]
fn output_format_is_an_alias_and_an_environment_variable() {
    let (_, concise, _) = in_crate(&["--format", "concise", UNWAITED]);
    assert_eq!(in_crate(&["--output-format", "concise", UNWAITED]).1, concise);
    let out = hlolint().env("HLOLINT_OUTPUT_FORMAT", "concise").arg(UNWAITED).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), concise);
    // the command line beats the variable, and the last format given wins (the pre-commit hook's `args:`)
    let out = hlolint().env("HLOLINT_OUTPUT_FORMAT", "json").args(["--output-format", "concise", UNWAITED]).output();
    assert_eq!(String::from_utf8_lossy(&out.unwrap().stdout), concise);
    assert_eq!(in_crate(&["--output-format", "json", "--output-format", "concise", UNWAITED]).1, concise);
    let out = hlolint().env("HLOLINT_OUTPUT_FORMAT", "fancy").arg(UNWAITED).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn the_pre_commit_hook_prints_concise_lines() {
    let hooks = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(".pre-commit-hooks.yaml")).unwrap();
    let entry = hooks.lines().find_map(|l| l.trim().strip_prefix("entry: ")).unwrap();
    let args: Vec<&str> = entry.split_whitespace().skip(1).collect();
    assert!(args.contains(&"--output-format") && args.contains(&"concise"), "{entry}");
    let (code, out, _) = in_crate(&[&args[..], &[UNWAITED]].concat());
    assert_eq!(code, Some(1));
    assert!(out.lines().all(|l| l.starts_with(KERNELS) && l.contains("[dump: ")), "{out}");
    assert!(out.contains(" MO010 "), "{out}");
    // a project's `args:` come after the entry's and replace its format
    let (_, out, _) = in_crate(&[&args[..], &["--output-format", "json", UNWAITED]].concat());
    assert!(serde_json::from_str::<serde_json::Value>(&out).is_ok(), "{out}");
}

#[test]
fn extend_select_adds_rules_of_other_built_in_packs() {
    let single = "fixtures/fp8_matmul_2d/tpu7x+v6e/bug_single_slot@tpu7x";
    let codes = |args: &[&str]| -> Vec<String> {
        let (_, out, err) = in_crate(&[&["--output-format", "json", "--rules", "core"], args, &[single]].concat());
        let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|_| panic!("{err}"));
        v["findings"].as_array().unwrap().iter().filter_map(|f| f["code"].as_str().map(String::from)).collect()
    };
    assert!(!codes(&[]).contains(&"MO021".to_string()), "core has no MO021");
    assert!(codes(&["--extend-select", "MO021"]).contains(&"MO021".to_string()));
    // with --select, it widens the selection
    let both = codes(&["--select", "XL001", "--extend-select", "MO021"]);
    assert!(both.iter().all(|c| c == "XL001" || c == "MO021") && both.contains(&"MO021".to_string()), "{both:?}");
    let (code, _, err) = in_crate(&["--extend-select", "MO0212", single]);
    assert_eq!(code, Some(2));
    assert!(err.contains("did you mean `MO021`?"), "{err}");
}

#[test]
fn show_files_lists_what_would_be_read() {
    let (code, out, _) = in_crate(&["--show-files", UNWAITED]);
    assert_eq!(code, Some(0));
    let mut lines = out.lines();
    assert_eq!(lines.next(), Some(UNWAITED));
    let files: Vec<&str> = lines.collect();
    assert!(files.iter().all(|f| f.starts_with(&format!("  {UNWAITED}/"))), "{out}");
    assert!(files.iter().any(|f| f.ends_with("final_bundles.txt")), "{out}");
    assert!(!files.iter().any(|f| f.contains("post-apply-vector-layout")), "intermediate stages are not read: {out}");
}

/// A copy of the unwaited-DMA compilation and of the kernel module, in a folder of its own.
fn unwaited_copy() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for e in walkdir::WalkDir::new(root.join(UNWAITED)).into_iter().flatten().filter(|e| e.file_type().is_file()) {
        let to = tmp.path().join("out").join(e.path().strip_prefix(root.join(UNWAITED).parent().unwrap()).unwrap());
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(e.path(), to).unwrap();
    }
    std::fs::create_dir_all(tmp.path().join("examples/fp8_matmul_2d")).unwrap();
    std::fs::copy(root.join(KERNELS), tmp.path().join(KERNELS)).unwrap();
    tmp
}

#[test]
fn add_noqa_writes_ignores_and_unused_ones_are_warned_about() {
    // the recorded path must not exist here, or the comments would go there
    if Path::new("/work/wt-driver").join(KERNELS).exists() {
        return;
    }
    let tmp = unwaited_copy();
    let run = |args: &[&str]| {
        let out = hlolint().args(args).current_dir(tmp.path()).output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let dir = "out/bug_unwaited_dma@tpu7x";
    let (code, before, _) = run(&["--rules", "v2-dma", "--output-format", "concise", dir]);
    assert_eq!(code, Some(1));
    let lines: std::collections::BTreeSet<&str> = before.lines().map(|l| l.split(':').nth(1).unwrap()).collect();
    let (code, _, err) = run(&["--rules", "v2-dma", "--add-noqa", dir]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains(&format!("added {} ignore comment(s) in 1 file(s)", lines.len())), "{err}");
    let text = std::fs::read_to_string(tmp.path().join(KERNELS)).unwrap();
    for l in &lines {
        let n: usize = l.parse().unwrap();
        let line = text.lines().nth(n - 1).unwrap();
        assert!(line.contains("  # hlolint: ignore[MO0") && line.ends_with(']'), "line {n}: {line}");
    }
    // now every finding is silenced, and no comment is unused
    let (code, out, err) = run(&["--rules", "v2-dma", dir]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("suppressed"), "{out}");
    assert!(!err.contains("unused_ignore"), "{err}");
    // a second --add-noqa adds nothing
    assert!(run(&["--rules", "v2-dma", "--add-noqa", dir]).2.contains("added 0 ignore comment(s)"));

    // a comment on a line without findings, and an unknown code
    let stray = text.lines().position(|l| l.starts_with("import ")).unwrap();
    let edited: Vec<String> = text
        .lines()
        .enumerate()
        .map(|(i, l)| if i == stray { format!("{l}  # hlolint: ignore[MO010, MO0100]") } else { l.to_string() })
        .collect();
    std::fs::write(tmp.path().join(KERNELS), edited.join("\n") + "\n").unwrap();
    let (code, _, err) = run(&["--rules", "v2-dma", dir]);
    assert_eq!(code, Some(0), "a warning does not fail the run: {err}");
    assert!(err.contains("hlolint::unused_ignore"), "{err}");
    assert!(err.contains(&format!("{KERNELS}:{}: no rule has the code `MO0100`", stray + 1)), "{err}");
    assert!(err.contains("did you mean `MO010`?"), "{err}");
    // without the unknown code: the known one silences nothing there
    std::fs::write(tmp.path().join(KERNELS), edited.join("\n").replace(", MO0100]", "]") + "\n").unwrap();
    let (_, _, err) = run(&["--rules", "v2-dma", dir]);
    assert!(err.contains(&format!("{KERNELS}:{}: `MO010` in this ignore comment", stray + 1)), "{err}");
    // a rule that did not run (MO021 is not in `core`) says nothing about a comment
    let text = edited.join("\n").replace(", MO0100]", "]");
    let stray_line = text.lines().nth(stray).unwrap().replace("[MO010]", "[MO021]");
    let lines: Vec<&str> =
        text.lines().enumerate().map(|(i, l)| if i == stray { stray_line.as_str() } else { l }).collect();
    std::fs::write(tmp.path().join(KERNELS), lines.join("\n") + "\n").unwrap();
    let (_, _, err) = run(&["--rules", "core", dir]);
    assert!(!err.contains("unused_ignore"), "{err}");
}

/// A pack reporting every DMA start of a kernel: bug_unwaited_dma's kernel starts its DMAs through one helper
/// line from two call sites, the prologue and the loop's prefetch.
const EVERY_START: &str = r#"pack: starts
rules:
  - id: every-dma-start
    code: TS001
    layer: mosaic
    severity: error
    summary: every DMA start
    select: { op: dma-start }
    message: "a DMA starts here"
    doc: "Reports DMA starts."
"#;

#[test]
fn ignore_comments_go_by_the_frame_that_tells_a_call_site_apart() {
    if Path::new("/work/wt-driver").join(KERNELS).exists() {
        return;
    }
    // The kernel's DMA starts, as jax recorded them: the prologue's at kernels.py:158, the loop's prefetch at
    // 158 ← 167 ← 179 (line 158 is innermost in both). The prefetch is told apart at 167, the prologue at 158.
    let tmp = unwaited_copy();
    std::fs::write(tmp.path().join("starts.yaml"), EVERY_START).unwrap();
    let run = |args: &[&str]| {
        let out = hlolint()
            .args(["--rules", "starts.yaml", "--output-format", "concise"])
            .args(args)
            .arg("out/bug_unwaited_dma@tpu7x")
            .current_dir(tmp.path())
            .output()
            .unwrap();
        let lines: Vec<u32> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| l.contains(": TS001 "))
            .map(|l| l.split(':').nth(1).unwrap().parse().unwrap())
            .collect();
        (lines, String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let original = std::fs::read_to_string(tmp.path().join(KERNELS)).unwrap();
    let with_comment = |line: usize| {
        let text: Vec<String> = original
            .lines()
            .enumerate()
            .map(|(i, l)| if i + 1 == line { format!("{l}  # hlolint: ignore[TS001]") } else { l.to_string() })
            .collect();
        std::fs::write(tmp.path().join(KERNELS), text.join("\n") + "\n").unwrap();
    };
    // each finding's Python location is its blamed frame (the concise line leads with it)
    assert_eq!(run(&[]).0, [158, 158, 167, 167]);
    // the helper line silences the prologue's starts only; the prefetch's stay
    with_comment(158);
    assert_eq!(run(&[]).0, [167, 167]);
    // the prefetch's own frame silences exactly the prefetch's
    with_comment(167);
    assert_eq!(run(&[]).0, [158, 158]);
    // an outer frame of the chain is not where the finding is: nothing silenced, and the comment is unused
    with_comment(179);
    let (lines, err) = run(&[]);
    assert_eq!(lines, [158, 158, 167, 167]);
    assert!(err.contains(&format!("{KERNELS}:179: `TS001` in this ignore comment")), "{err}");
    // --add-noqa writes on the blamed lines, and the comments silence what they were written for
    std::fs::write(tmp.path().join(KERNELS), &original).unwrap();
    let (_, err) = run(&["--add-noqa"]);
    assert!(err.contains("added 2 ignore comment(s) in 1 file(s)"), "{err}");
    let text = std::fs::read_to_string(tmp.path().join(KERNELS)).unwrap();
    let commented: Vec<usize> =
        text.lines().enumerate().filter(|(_, l)| l.contains("# hlolint: ignore[TS001]")).map(|(i, _)| i + 1).collect();
    assert_eq!(commented, [158, 167]);
    let (lines, err) = run(&[]);
    assert!(lines.is_empty() && !err.contains("unused_ignore"), "{lines:?} {err}");
}

#[test]
fn config_key_value_settings_beat_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("hlolint.toml"), "target = \"tpu7x\"\nselect = [\"MO010\"]\n").unwrap();
    let run = |args: &[&str]| {
        let out = hlolint().args(args).current_dir(tmp.path()).output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (_, out, _) = run(&["--show-settings", "--config", "target = 'v6e'", "--config", "select = ['XL001']"]);
    assert!(out.contains("target = \"v6e\"") && out.contains("select = [\"XL001\"]"), "{out}");
    assert!(out.contains("hlolint.toml"), "the file still applies: {out}");
    let (_, out, _) = run(&["--show-settings", "--config", "per-kernel-ignores = {'paged*' = ['MO010']}"]);
    assert!(out.contains("paged*"), "{out}");
    // errors point into the argument
    let (code, _, err) = run(&["--show-settings", "--config", "select = ['MO0212']"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("no rule matches `MO0212`") && err.contains("[--config:1:"), "{err}");
    assert!(err.contains("did you mean `MO021`?"), "{err}");
    let (code, _, err) = run(&["--show-settings", "--config", "selct = ['MO021']"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("did you mean `select`?"), "{err}");
}

#[test]
fn config_errors_about_rule_codes_point_into_the_toml() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("hlolint.toml"),
        "ignore = [\"XL001\"]\n[per-kernel-ignores]\n\"k*\" = [\"M0010\"]\n",
    )
    .unwrap();
    let out = hlolint().arg("--show-settings").current_dir(tmp.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = scrub(&out.stderr, tmp.path());
    assert!(err.contains("no rule matches `M0010`") && err.contains("hlolint.toml:3:9]"), "{err}");
    assert!(err.contains("did you mean `MO010`?"), "{err}");
}

#[test]
fn rule_is_explain_and_names_are_suggested() {
    let (code, explain, _) = in_crate(&["explain", "MO010"]);
    assert_eq!(code, Some(0));
    assert_eq!(in_crate(&["rule", "MO010"]).1, explain);
    let (code, _, err) = in_crate(&["rule", "MO0100"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("did you mean `MO010`?"), "{err}");
    // a word close to a subcommand that names no file is a mistyped subcommand
    let (code, out, err) = in_crate(&["rulez"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("unrecognized subcommand `rulez`") && err.contains("did you mean `rules`?"), "{err}");
    assert!(out.is_empty());
    let (_, _, err) = in_crate(&["explian", "MO010"]);
    assert!(err.contains("did you mean `explain`?"), "{err}");
    // a path stays a path
    let (code, _, err) = in_crate(&["rules.txt"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("rules.txt: no such file or directory"), "{err}");
    let (code, _, err) = in_crate(&["--rules", "v2dma", UNWAITED]);
    assert_eq!(code, Some(2));
    assert!(err.contains("did you mean `v2-dma`?"), "{err}");
    let (_, _, err) = in_crate(&["--select", "MO0212", UNWAITED]);
    assert!(err.contains("did you mean `MO021`?"), "{err}");
}

#[test]
fn the_compare_table_fits_the_terminal() {
    let narrow = |args: &[&str], cols: &str| {
        let out = hlolint().env("COLUMNS", cols).args(args).current_dir(env!("CARGO_MANIFEST_DIR")).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let table = narrow(&["compare", "fixtures/fp8_matmul_2d/tpu7x+v6e"], "100");
    let widest = table.lines().map(|l| l.chars().count()).max().unwrap();
    assert!(widest <= 100, "{widest} columns:\n{table}");
    assert!(table.contains("note: split to fit 100 columns (tpu7x: 8 versions in tables of"), "{table}");
    // every version is still there, once per target
    for v in ["v1", "v2", "v3", "bug_upcast", "bug_any_"] {
        assert!(
            table.lines().any(|l| l.contains(&format!(" {v} ")) || l.ends_with(&format!(" {v} │"))),
            "{v}:\n{table}"
        );
    }
    // a wide terminal (or a file) gets the one table per target
    let wide = narrow(&["compare", "fixtures/fp8_matmul_2d/tpu7x+v6e"], "400");
    assert!(!wide.contains("split to fit"), "{wide}");
}
