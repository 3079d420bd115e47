//! Configuration files found per linted path, and suppressions (inline comments in the Python source, per-path and
//! per-kernel ignores, baselines), as a user meets them on the command line.

use crate::common::hlolint_in;
use serde_json::Value;
use std::path::Path;

fn fixture(rel: &str) -> String {
    format!("{}/fixtures/fp8_matmul_2d/{rel}", env!("CARGO_MANIFEST_DIR"))
}

/// A program with two dots: `%d1` from line 3 of `PY` (as recorded), `%d2` without a Python location.
fn program(py: &str) -> String {
    format!(
        r#"HloModule m

ENTRY %main (x: bf16[8,8]) -> f32[8,8] {{
  %x = bf16[8,8]{{1,0}} parameter(0)
  %d1 = f32[8,8]{{1,0}} dot(%x, %x), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}, metadata={{op_name="jit(f)/dot" source_file="{py}" source_line=3}}
  %d2 = f32[8,8]{{1,0}} dot(%x, %x), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
  ROOT %s = f32[8,8]{{1,0}} add(%d1, %d2)
}}
"#
    )
}

/// A pack with one rule, TT001, on every dot; its invalid case is `cases/p.hlo` beside it.
const PACK: &str = r#"pack: team
description: a team's pack
rules:
  - id: any-dot
    code: TT001
    layer: hlo
    severity: error
    summary: every dot
    select: { op: dot }
    message: "{op.name} is a dot"
    doc: "Reports dots."
    tests:
      invalid: [cases/p.hlo]
"#;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A project: `hlolint.toml` (with `config`) choosing `packs/team.yaml`, and `out/p.hlo` recording `py`.
fn project(dir: &Path, config: &str, py: &str) {
    write(&dir.join("packs/team.yaml"), PACK);
    write(&dir.join("packs/cases/p.hlo"), &program("x.py"));
    write(&dir.join("hlolint.toml"), &format!("rules = [\"packs/team.yaml\"]\n{config}"));
    write(&dir.join("out/p.hlo"), &program(py));
}

fn json(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)))
}

/// `(code, op message)` of each finding.
fn findings(v: &Value) -> Vec<(String, String)> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["code"].as_str().unwrap_or("").to_string(), f["message"].as_str().unwrap().to_string()))
        .collect()
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn each_linted_path_gets_the_closest_config_and_its_paths_are_relative_to_it() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    project(&a, "", "model.py");
    // b: a pyproject.toml without packs of its own (so `core`)
    write(&b.join("pyproject.toml"), "[project]\nname = \"b\"\n\n[tool.hlolint]\ntarget = \"v6e\"\n");
    write(&b.join("out/p.hlo"), &program("model.py"));
    // Run from the folder above both: a's pack is found relative to a's config, not the current directory.
    let out = hlolint_in(tmp.path()).args(["--format", "json", "a/out", "b/out"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let v = json(&out);
    let paths: Vec<&str> = v["findings"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap()).collect();
    assert_eq!(paths, ["a/out/p.hlo", "a/out/p.hlo"], "b's config runs core: no finding");
    assert!(v["compilations"][1]["target"].as_str().unwrap().starts_with("v6e "), "b's target");
    // The command line wins: --rules for both.
    let out =
        hlolint_in(tmp.path()).args(["--format", "json", "--rules", "a/packs/team.yaml", "b/out"]).output().unwrap();
    assert_eq!(findings(&json(&out)).len(), 2);
    // --config names one file for every path; --isolated none.
    let out =
        hlolint_in(tmp.path()).args(["--format", "json", "--config", "b/pyproject.toml", "a/out"]).output().unwrap();
    assert_eq!((out.status.code(), findings(&json(&out)).len()), (Some(0), 0));
    let out = hlolint_in(tmp.path()).args(["--format", "json", "--isolated", "a/out"]).output().unwrap();
    assert_eq!((out.status.code(), findings(&json(&out)).len()), (Some(0), 0));
    // The same from inside a project, and with the default path.
    let out = hlolint_in(&a).args(["--format", "json"]).output().unwrap();
    assert_eq!(findings(&json(&out)).len(), 4, "out/ and the pack's case: {}", stderr(&out));

    // --show-settings: per path, which file and what it resolved to.
    let out = hlolint_in(tmp.path()).args(["--show-settings", "--format", "json", "a/out", "b/out"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v = json(&out);
    assert_eq!(v[0]["config-file"], a.join("hlolint.toml").display().to_string());
    assert_eq!(v[0]["rules"], serde_json::json!([a.join("packs/team.yaml").display().to_string()]));
    assert_eq!(v[1]["config-file"], b.join("pyproject.toml").display().to_string());
    assert_eq!(v[1]["target"], "v6e");
    assert_eq!(v[1]["rules"], serde_json::json!(["core"]));
    let out = hlolint_in(tmp.path()).args(["--show-settings", "--ignore", "XL", "a/out"]).output().unwrap();
    let text = stdout(&out);
    assert!(text.starts_with("# Settings for a/out\n"), "{text}");
    assert!(text.contains("ignore = [\"XL\"]"), "the command line is part of the settings: {text}");
    assert!(text.contains("exclude = [\".git\","), "default excludes: {text}");
}

#[test]
fn a_broken_config_is_an_error_wherever_it_is_found() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("p");
    project(&p, "severity = { TT001 = \"loud\" }\n", "model.py");
    // found from the linted path, not the current directory
    let out = hlolint_in(tmp.path()).args(["p/out"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out).replace(&tmp.path().display().to_string(), "[TMP]");
    insta::assert_snapshot!(err);
    // rules/explain/test read the same config, and fail the same way
    for cmd in [&["rules"][..], &["explain", "TT001"], &["test"]] {
        let out = hlolint_in(&p).args(cmd).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{cmd:?}");
        assert!(stderr(&out).contains("unknown severity `loud`"), "{cmd:?}: {}", stderr(&out));
    }
    // TOML syntax, unknown keys, bad globs, missing packs: each points into the file.
    for (config, says, at) in [
        ("rules = [\"core\"\n", "", "hlolint.toml:1:"),
        ("colour = true\n", "unknown field `colour`", "hlolint.toml:1:1"),
        ("extend-exclude = [\"out/[\"]\n", "bad glob `out/[`", "hlolint.toml:1:19"),
        ("[per-kernel-ignores]\n\"{a\" = [\"TT001\"]\n", "bad glob `{a`", "hlolint.toml:2:1"),
        ("target = \"v99\"\n", "unknown target `v99`", "hlolint.toml:1:10"),
    ] {
        write(&p.join("hlolint.toml"), config);
        let out = hlolint_in(tmp.path()).args(["p/out"]).output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{config}");
        assert!(err.contains("invalid configuration") && err.contains(says) && err.contains(at), "{config}: {err}");
    }
    write(&p.join("hlolint.toml"), "rules = [\"core\", \"packs/nope.yaml\"]\n");
    let out = hlolint_in(tmp.path()).args(["p/out"]).output().unwrap();
    let err = stderr(&out);
    assert!(
        err.contains("rule pack `packs/nope.yaml` is neither built in") && err.contains("hlolint.toml:1:18"),
        "{err}"
    );
}

#[test]
fn rules_explain_and_test_use_the_configs_packs() {
    let tmp = tempfile::tempdir().unwrap();
    project(tmp.path(), "", "model.py");
    let out = hlolint_in(tmp.path()).args(["rules"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).contains("TT001  any-dot"), "{}", stdout(&out));
    assert!(stdout(&out).contains("HL001"), "built-in packs too");
    let out = hlolint_in(tmp.path()).args(["explain", "TT001"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("## any-dot (TT001)"));
    let out = hlolint_in(tmp.path()).args(["test"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(stdout(&out).contains("✓ TT001  any-dot") && stdout(&out).contains("1 rule(s) passed"), "{}", stdout(&out));
    // --isolated: the built-in packs only
    let out = hlolint_in(tmp.path()).args(["explain", "--isolated", "TT001"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = hlolint_in(tmp.path()).args(["rules", "--isolated"]).output().unwrap();
    assert!(!stdout(&out).contains("TT001"));
    // from a subfolder, upward
    let out = hlolint_in(&tmp.path().join("out")).args(["explain", "any-dot"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn exclude_globs_apply_to_walked_folders() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    project(root, "extend-exclude = [\"out/legacy\", \"*.skip.hlo\"]\n", "model.py");
    for f in ["out/legacy/v1/p.hlo", "out/new/p.skip.hlo", ".venv/lib/p.hlo"] {
        write(&root.join(f), &program("model.py"));
    }
    let files = |args: &[&str]| -> Vec<String> {
        let out = hlolint_in(root).args(["--format", "json"]).args(args).output().unwrap();
        let mut v: Vec<String> =
            json(&out)["files"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap().to_string()).collect();
        v.sort();
        v
    };
    assert_eq!(files(&[]), ["out/p.hlo", "packs/cases/p.hlo"]);
    assert_eq!(files(&["out"]), ["out/p.hlo"]);
    // a file named on the command line is read even when excluded
    assert_eq!(files(&["out/new/p.skip.hlo"]), ["out/new/p.skip.hlo"]);
    // `exclude` replaces the defaults (.venv is walked again)
    write(&root.join("hlolint.toml"), "rules = [\"packs/team.yaml\"]\nexclude = [\"packs\"]\n");
    assert_eq!(files(&[]), [".venv/lib/p.hlo", "out/legacy/v1/p.hlo", "out/new/p.skip.hlo", "out/p.hlo"]);
}

#[test]
fn inline_comments_in_the_python_source_suppress_findings_on_their_line() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    project(root, "", "src/model.py");
    let run = |py: Option<&str>| {
        match py {
            Some(text) => write(&root.join("src/model.py"), text),
            None => {
                let _ = std::fs::remove_file(root.join("src/model.py"));
            }
        }
        // from elsewhere: `src/model.py` is found relative to the config's folder
        hlolint_in(&root.join("out")).args(["--format", "json", "--statistics", "."]).output().unwrap()
    };
    let out = run(Some("import jax\n\ny = x @ x  # hlolint: ignore[TT001]\n"));
    let v = json(&out);
    assert_eq!(findings(&v), [("TT001".to_string(), "%d2 is a dot".to_string())], "d1's line has the comment");
    assert_eq!(v["suppressed"], serde_json::json!({"inline": 1, "config": 0, "baseline": 0}));
    for (py, suppressed) in [
        ("\n\ny = x @ x  # hlolint: ignore\n", true),
        ("\n\ny = x @ x  # type: ignore  # HLOLINT: ignore[XL001, tt0]\n", true),
        ("\n\ny = x @ x  # hlolint: ignore[any-dot]\n", true),
        ("\n\ny = x @ x  # hlolint: ignore[XL001]\n", false),
        ("\ny = x @ x  # hlolint: ignore[TT001]\n\n", false),
    ] {
        let v = json(&run(Some(py)));
        assert_eq!(findings(&v).len(), if suppressed { 1 } else { 2 }, "{py:?}");
    }
    // a missing file suppresses nothing and is no error
    let out = run(None);
    assert_eq!((out.status.code(), findings(&json(&out)).len()), (Some(1), 2));
    // the summary and --statistics say how many
    write(&root.join("src/model.py"), "\n\ny = x @ x  # hlolint: ignore\n");
    let out = hlolint_in(root).args(["--statistics", "out"]).output().unwrap();
    let text = stdout(&out);
    assert!(text.contains("    1         suppressed (1 inline)\n"), "{text}");
    assert!(text.ends_with("1 error in 1 of 1 compilation(s) · 1 suppressed (1 inline)\n"), "{text}");
}

/// A copy of one fixture compilation, and of its kernel module with `comment` on line `line`, at the path the dumps
/// recorded (an absolute path from the machine that compiled them) made relative to `root`.
fn fixture_copy(root: &Path, compilation: &str, line: usize, comment: &str) {
    let src = Path::new(&fixture("tpu7x+v6e")).join(compilation);
    for e in walkdir::WalkDir::new(&src).into_iter().flatten().filter(|e| e.file_type().is_file()) {
        let to = root.join(compilation).join(e.path().strip_prefix(&src).unwrap());
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(e.path(), to).unwrap();
    }
    let mut lines = vec![String::new(); 300];
    lines[line - 1] = format!("    c.start()  {comment}");
    write(&root.join("examples/fp8_matmul_2d/kernels.py"), &lines.join("\n"));
}

#[test]
fn inline_comments_work_on_real_dumps_made_elsewhere() {
    let tmp = tempfile::tempdir().unwrap();
    // The fixtures record /work/wt-driver/examples/fp8_matmul_2d/kernels.py: here it is examples/fp8_matmul_2d/...
    // (the single slot's finding is at the in-loop refill's own call site, 167 — the chain is 158 ← 167; its races,
    // MO011, are at the reads on line 182: not this comment's)
    fixture_copy(tmp.path(), "bug_single_slot@tpu7x", 167, "# hlolint: ignore[MO021]");
    let args = ["--rules", "v2-dma", "--ignore", "MO011", "bug_single_slot@tpu7x"];
    let out = hlolint_in(tmp.path()).args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(stdout(&out).contains("clean · 2 suppressed (2 inline)"), "{}", stdout(&out));
    fixture_copy(tmp.path(), "bug_single_slot@tpu7x", 166, "# hlolint: ignore[MO021]");
    let out = hlolint_in(tmp.path()).args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "the line above is not the finding's line");
    // The Python location comes first, as the file found here (not the compiling machine's path).
    let text = stdout(&out);
    assert!(
        text.lines().any(|l| l == "examples/fp8_matmul_2d/kernels.py:167:16: MO021 dma-double-buffering"),
        "{text}"
    );
}

#[test]
fn per_path_and_per_kernel_ignores() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = tmp.path().join("conf/hlolint.toml");
    write(
        &cfg,
        "[per-path-ignores]\n\"bug_single_slot@*\" = [\"MO021\"]\n\"*@v6e\" = [\"XL\"]\n\n\
         [per-kernel-ignores]\n\"fp8_mm_bug_unwaited*\" = [\"dma-balance\"]\n",
    );
    let all = json(&hlolint_in(tmp.path()).args(["--format", "json", &fixture("tpu7x+v6e")]).output().unwrap());
    let out = hlolint_in(tmp.path())
        .args(["--format", "json", "--config"])
        .arg(&cfg)
        .arg(fixture("tpu7x+v6e"))
        .output()
        .unwrap();
    let v = json(&out);
    let seen = |v: &Value, code: &str, comp: &str| {
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["code"] == code && f["compilation"].as_str().unwrap().contains(comp))
            .count()
    };
    assert_eq!((seen(&all, "MO021", "bug_single_slot"), seen(&v, "MO021", "bug_single_slot")), (4, 0));
    assert_eq!(
        (seen(&all, "MO011", "bug_unwaited"), seen(&v, "MO011", "bug_unwaited")),
        (8, 8),
        "other folders and rules stay"
    );
    assert_eq!((seen(&all, "MO010", "bug_unwaited"), seen(&v, "MO010", "bug_unwaited")), (4, 0));
    assert_eq!((seen(&all, "XL001", "@v6e"), seen(&v, "XL001", "@v6e")), (7, 0));
    // The fixtures have no config above them: run from the config's folder, they get that one (as in ruff).
    let out = hlolint_in(&tmp.path().join("conf")).args(["--format", "json", &fixture("tpu7x+v6e")]).output().unwrap();
    assert_eq!(json(&out)["findings"], v["findings"]);
    let n = |v: &Value| v["findings"].as_array().unwrap().len() as u64;
    assert_eq!(v["suppressed"]["config"].as_u64().unwrap(), n(&all) - n(&v));
    assert_eq!(n(&all) - n(&v), 15);
}

#[test]
fn baselines_hide_accepted_findings_by_stable_fingerprint() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().join("baseline.json");
    let single = fixture("tpu7x+v6e/bug_single_slot@tpu7x");
    let unwaited = fixture("tpu7x+v6e/bug_unwaited_dma@tpu7x");
    let out = hlolint_in(tmp.path())
        .args(["--rules", "v2-dma", "--write-baseline"])
        .arg(&base)
        .arg(&single)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "written findings are baselined: {}", stdout(&out));
    assert!(stdout(&out).ends_with("no findings in 1 compilation(s) · 4 baselined\n"), "{}", stdout(&out));
    let text = std::fs::read_to_string(&base).unwrap();
    insta::assert_snapshot!(text);

    // The baseline hides those, not the others; the summary counts them.
    let out = hlolint_in(tmp.path())
        .args(["--rules", "v2-dma", "--baseline"])
        .arg(&base)
        .args([&single, &unwaited])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(
        text.contains(
            "bug_single_slot@tpu7x · target tpu7x (from the driver's manifest) · 18 file(s) · clean · 4 baselined"
        ),
        "{text}"
    );
    assert!(text.contains("MO010 dma-balance"), "{text}");
    // (the single slot's two MO021 findings and its two races, MO011, are the baselined ones)
    assert!(text.ends_with("compilation(s) · 4 baselined\n"), "{text}");

    // Dumps regenerated elsewhere (another parent folder, other line numbers) keep matching.
    let moved = tmp.path().join("regen/bug_single_slot@tpu7x");
    for e in walkdir::WalkDir::new(&single).into_iter().flatten().filter(|e| e.file_type().is_file()) {
        let to = moved.join(e.path().strip_prefix(&single).unwrap());
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        let t = std::fs::read_to_string(e.path()).unwrap();
        // one more line at the top of every Mosaic dump: every line number moves
        let t = if t.starts_with("module") { format!("\n{t}") } else { t };
        std::fs::write(to, t).unwrap();
    }
    let out = hlolint_in(tmp.path()).args(["--rules", "v2-dma", "--baseline"]).arg(&base).arg(&moved).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));

    // In the config, relative to it; SARIF and JSON count them.
    write(&tmp.path().join("hlolint.toml"), "rules = [\"v2-dma\"]\nbaseline = \"baseline.json\"\n");
    let out = hlolint_in(tmp.path()).args(["--format", "sarif", "regen"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(json(&out)["runs"][0]["properties"]["suppressed"]["baseline"], 4);
    let out = hlolint_in(tmp.path()).args(["--format", "json", "--statistics", "regen"]).output().unwrap();
    assert_eq!(json(&out)["suppressed"]["baseline"], 4);

    // A broken baseline is an error.
    std::fs::write(&base, "{\"version\": \"hlolint/v1\"}").unwrap();
    let out = hlolint_in(tmp.path()).args(["regen"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("not a baseline"), "{}", stderr(&out));
}

#[test]
fn a_config_may_ignore_a_built_in_code_the_chosen_pack_lacks() {
    // `ignore = ["MO021"]` is meant for the versions linted with v2-dma; where a version's pack is core (no MO021) it
    // is not a mistake. A code no pack has still is.
    let dir = tempfile::tempdir().unwrap();
    let dumps = dir.path().join("dumps");
    std::fs::create_dir_all(&dumps).unwrap();
    std::fs::write(dumps.join("m_hlo.txt"), "HloModule m\n\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n").unwrap();
    std::fs::write(dir.path().join("hlolint.toml"), "ignore = [\"MO021\"]\n").unwrap();
    let out = hlolint_in(dir.path()).arg("dumps").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    std::fs::write(dir.path().join("hlolint.toml"), "ignore = [\"ZZ999\"]\n").unwrap();
    let out = hlolint_in(dir.path()).arg("dumps").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no rule matches `ZZ999`"));
}

#[test]
fn a_selection_of_rules_no_pack_in_use_holds_is_an_error_not_a_clean_run() {
    // `--select MO021` with the default pack (core, no MO021) would run no rule and call the dumps clean
    let dir = tempfile::tempdir().unwrap();
    let dumps = dir.path().join("dumps");
    std::fs::create_dir_all(&dumps).unwrap();
    std::fs::write(dumps.join("m_hlo.txt"), "HloModule m\n\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n").unwrap();
    let out = hlolint_in(dir.path()).args(["--select", "MO021", "dumps"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("leaves no rule to run") && err.contains("`v2-dma`"), "{err}");
    // with the pack, or adding the rule to the run's packs, it runs
    let out = hlolint_in(dir.path()).args(["--rules", "core,v2-dma", "--select", "MO021", "dumps"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let out = hlolint_in(dir.path()).args(["--extend-select", "MO021", "dumps"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    // a selection of the run's own rules that `--ignore` then empties is what was asked for, not this mistake
    let out = hlolint_in(dir.path()).args(["--select", "MO010", "--ignore", "MO010", "dumps"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
}
