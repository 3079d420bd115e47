//! Odd inputs through the command line: a closed pipe, very long lines, driver-made HLO files side by side, a
//! FIFO, a byte order mark, files cut short or that are no dump, folders without dumps, stdin.

use super::*;

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
