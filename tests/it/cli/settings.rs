//! What a run is told: output formats and the Python file they name, rule selection, `--show-files`,
//! suppression comments (`--add-noqa`, ignore comments), configuration, rule explanations, the compare table.

use super::*;

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
