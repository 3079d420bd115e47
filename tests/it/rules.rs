//! The rule language as a pack author and a user meet it: built-in rules against their own valid/invalid cases
//! (with the diagnostics of every invalid case snapshotted), errors in rule packs pointing into the YAML, rule
//! selection and severities, exit codes, the output formats.

use crate::common;
use assert_cmd::Command;
use std::path::Path;

/// The rules' snapshots were taken 110 columns wide (their messages are long).
fn hlolint() -> Command {
    let mut c = common::hlolint();
    c.env("COLUMNS", "110");
    c
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).replace(env!("CARGO_MANIFEST_DIR"), "[CRATE]")
}

fn all_packs() -> &'static str {
    "core,v1-auto,v2-dma,v3-smem"
}

/// `(id, code, valid cases, invalid cases)` of every built-in rule, from `hlolint rules --json` and the YAML.
fn builtin_rules() -> Vec<(String, String)> {
    let out = hlolint().args(["rules", "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["id"].as_str().unwrap().to_string(), r["code"].as_str().unwrap_or("").to_string()))
        .collect()
}

fn cases(dir: &Path) -> Vec<std::path::PathBuf> {
    hlolint::source::cases_in(dir)
}

#[test]
fn every_builtin_rule_passes_its_own_valid_and_invalid_cases() {
    let out = hlolint().arg("test").output().unwrap();
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{}", text(&out.stderr));
    assert!(!stdout.contains("rules without test cases"), "every built-in rule has cases:\n{stdout}");
    for (id, _) in builtin_rules() {
        let line = stdout
            .lines()
            .find(|l| l.contains(&format!(" {id} ")))
            .unwrap_or_else(|| panic!("{id} not tested:\n{stdout}"));
        assert!(line.starts_with('✓'), "{line}");
        assert!(
            !line.contains(" 0 valid") && !line.contains(" 0 invalid"),
            "{id} needs valid and invalid cases: {line}"
        );
    }
}

#[test]
fn diagnostics_of_every_invalid_case() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/rules");
    for (id, code) in builtin_rules() {
        let mut all = String::new();
        for case in cases(&root.join(&id).join("invalid")) {
            let out = hlolint().args(["--rules", all_packs(), "--select", &id, "-q"]).arg(&case).output().unwrap();
            assert!(out.status.code().unwrap_or(-1) <= 1, "{}", text(&out.stderr));
            let s = text(&out.stdout);
            assert!(s.contains(&id), "{id} must report {}:\n{s}{}", case.display(), text(&out.stderr));
            all.push_str(&format!("=== {}\n{s}", case.strip_prefix(&root).unwrap().display()));
        }
        insta::assert_snapshot!(format!("invalid_{}_{id}", if code.is_empty() { "x" } else { &code }), all);
    }
}

fn pack_error(yaml: &str) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("mine.yaml");
    std::fs::write(&p, yaml).unwrap();
    let out = hlolint()
        .args(["--rules"])
        .arg(&p)
        .arg("tests/data/rules/async-no-overlap/invalid/adjacent_copy.hlo")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "a bad pack is a usage error: {}", text(&out.stdout));
    text(&out.stderr).replace(&tmp.path().display().to_string(), "[TMP]")
}

const RULE_HEAD: &str = "pack: mine\nrules:\n  - id: my-rule\n    layer: hlo\n    message: \"{op.name}\"\n";

#[test]
fn errors_in_rule_packs_point_into_the_yaml() {
    let cases = [
        ("unknown_key", format!("{RULE_HEAD}    select: {{ op: dot, operandz: {{ op: convert }} }}\n")),
        ("bad_regex", format!("{RULE_HEAD}    select: {{ op: dot, name: \"(unclosed\" }}\n")),
        ("unknown_family", format!("{RULE_HEAD}    select: {{ op: dotproduct }}\n")),
        ("family_not_in_layer", format!("{RULE_HEAD}    select: {{ op: dma-wait }}\n")),
        ("unknown_attribute", format!("{RULE_HEAD}    select: {{ op: dot, attr: {{ precision_config: \"HIGH\" }} }}\n")),
        ("unknown_dtype", format!("{RULE_HEAD}    select: {{ op: convert, to: fp8 }}\n")),
        ("unknown_placeholder", "pack: mine\nrules:\n  - id: my-rule\n    layer: hlo\n    select: { op: dot }\n    message: \"{upcast.name}\"\n".to_string()),
        ("unknown_analysis", "pack: mine\nrules:\n  - id: my-rule\n    layer: mosaic\n    analysis: dma-balanse\n    message: \"{analysis.detail}\"\n".to_string()),
        ("unknown_pack", "pack: mine\nextends: [core, v9-magic]\nrules: []\n".to_string()),
        ("duplicate_id", "pack: mine\nextends: [core]\nrules:\n  - id: fp8-upcast-before-dot\n    layer: hlo\n    select: { op: dot }\n    message: x\n".to_string()),
        ("relation_key_outside_relation", format!("{RULE_HEAD}    select: {{ op: dot, through: [bitcast] }}\n")),
        ("kind_matching_nothing", "pack: mine\nrules:\n  - id: my-rule\n    layer: mosaic\n    analysis: dma-balance\n    when: { kind: \"never-waitted\" }\n    message: \"{analysis.detail}\"\n".to_string()),
        // a key's value of the wrong type: serde's own error, at the value
        ("bad_type", format!("{RULE_HEAD}    select: {{ op: dot, name: [a, b] }}\n")),
        // an unknown key deep in a relation, in block style
        ("unknown_key_in_relation", format!("{RULE_HEAD}    select:\n      op: dot\n      operand:\n        op: convert\n        form: f8e4m3fn\n")),
        // the second item of a list, not the first place its text appears
        ("unknown_family_in_a_list", format!("{RULE_HEAD}    select: {{ op: [dot, convert], user: {{ op: [convert, dotproduct] }} }}\n")),
        // a placeholder inside a folded block scalar, after the same word elsewhere in the rule
        ("placeholder_in_folded_help", "pack: mine\nrules:\n  - id: my-rule\n    layer: hlo\n    select: { op: dot, capture: dot }\n    message: \"{dot.name}\"\n    help: >\n      a dot reads\n      {dot.nam} here\n".to_string()),
        ("bad_regex_under_attr", format!("{RULE_HEAD}    select: {{ op: custom-call, attr: {{ custom_call_target: \"tpu[\" }} }}\n")),
    ];
    for (name, yaml) in cases {
        insta::assert_snapshot!(format!("pack_error_{name}"), pack_error(&yaml));
    }
}

#[test]
fn the_pack_schema_is_generated_from_the_serde_types() {
    let out = hlolint().args(["rules", "--schema"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let committed =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("rules/schema.json")).unwrap_or_default();
    assert!(
        text(&out.stdout) == committed,
        "rules/schema.json is stale: run `cargo run -- rules --schema > rules/schema.json`"
    );
}

/// Editors validate packs with `rules/schema.json` (the `yaml-language-server` comment of each built-in pack): it
/// accepts every built-in pack and refuses what hlolint refuses as YAML that is no pack.
#[test]
fn every_builtin_pack_validates_against_the_schema() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("rules/schema.json")).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let mut packs = 0;
    for e in std::fs::read_dir(root.join("rules")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "yaml") {
            continue;
        }
        let yaml = std::fs::read_to_string(&p).unwrap();
        assert!(yaml.starts_with("# yaml-language-server: $schema=schema.json\n"), "{}", p.display());
        let pack: serde_json::Value = serde_norway::from_str(&yaml).unwrap();
        let errors: Vec<String> = validator.iter_errors(&pack).map(|e| format!("{e} at {}", e.instance_path)).collect();
        assert!(errors.is_empty(), "{}: {errors:#?}", p.display());
        packs += 1;
    }
    assert!(packs >= 4);
    let pack = |select: &str| -> serde_json::Value {
        serde_norway::from_str(&format!("{RULE_HEAD}    select: {select}\n")).unwrap()
    };
    assert!(validator.is_valid(&pack("{ op: dot, operand: { index: 0, through: [bitcast], count: { min: 1 } } }")));
    assert!(!validator.is_valid(&pack("{ op: dot, operandz: { op: convert } }")), "an unknown key");
    assert!(!validator.is_valid(&pack("{ op: dot, user: { op: convert, form: f8 } }")), "deep in a relation");
    assert!(!validator.is_valid(&pack("{ op: dot, name: [a, b] }")), "a list where a string goes");
    assert!(!validator.is_valid(&pack("{ op: dot, scheduled_between: { and: op } }")), "`count` is required");
}

/// `hlolint test --update` writes where each invalid case's findings land (`CASE.findings`); a later run fails a
/// case whose findings moved, and names the lines that differ.
#[test]
fn hlolint_test_snapshots_where_findings_land() {
    let tmp = tempfile::tempdir().unwrap();
    let pack = tmp.path().join("p.yaml");
    std::fs::write(
        &pack,
        "pack: p\nrules:\n  - id: any-dot\n    code: TM001\n    layer: hlo\n    select: { op: dot, operand: { op: parameter, capture: p } }\n    message: \"{op.name}\"\n    labels: [ { at: p, text: here } ]\n    tests:\n      invalid: [cases]\n",
    )
    .unwrap();
    std::fs::create_dir(tmp.path().join("cases")).unwrap();
    let dot = "HloModule m\n\nENTRY %e (a: f32[8,8]) -> f32[8,8] {\n  %a = f32[8,8]{1,0} parameter(0)\n  ROOT %d = f32[8,8]{1,0} dot(%a, %a), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n";
    std::fs::write(tmp.path().join("cases/dot.hlo"), dot).unwrap();
    let run = |args: &[&str]| hlolint().arg("test").args(args).arg(&pack).output().unwrap();
    let out = run(&["--update"]);
    assert_eq!(out.status.code(), Some(0), "{}{}", text(&out.stdout), text(&out.stderr));
    assert!(text(&out.stdout).contains("wrote the expected findings of 1 invalid case(s)"), "{}", text(&out.stdout));
    let written = std::fs::read_to_string(tmp.path().join("cases/dot.hlo.findings")).unwrap();
    insta::assert_snapshot!("test_update_findings", written);
    // the expected file is no case of its own, and the same findings pass
    let out = run(&[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    assert!(
        text(&out.stdout).contains("✓ TM001  any-dot                      0 valid, 1 invalid"),
        "{}",
        text(&out.stdout)
    );
    // the dot moves down a line: the case fails until updated
    std::fs::write(tmp.path().join("cases/dot.hlo"), dot.replace("ENTRY", "\nENTRY")).unwrap();
    let out = run(&[]);
    assert_eq!(out.status.code(), Some(1));
    let s = text(&out.stdout).replace(&tmp.path().display().to_string(), "[TMP]");
    insta::assert_snapshot!("test_update_moved", s);
    assert_eq!(run(&["--update"]).status.code(), Some(0));
    assert_eq!(run(&[]).status.code(), Some(0));
}

#[test]
fn cycles_in_extends_are_errors() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("a.yaml"), "pack: a\nextends: [b.yaml]\nrules: []\n").unwrap();
    std::fs::write(tmp.path().join("b.yaml"), "pack: b\nextends: [a.yaml]\nrules: []\n").unwrap();
    let out =
        hlolint().args(["rules", "--rules"]).arg(tmp.path().join("a.yaml")).current_dir(tmp.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("cycle in `extends`"), "{err}");
    assert!(err.contains("extends a pack that extends this one"), "{err}");
}

#[test]
fn a_users_own_pack_extends_a_builtin_one_and_adds_a_rule() {
    let tmp = tempfile::tempdir().unwrap();
    let pack = tmp.path().join("team.yaml");
    std::fs::write(
        &pack,
        r#"pack: team
description: our checks
extends: [core]
rules:
  - id: no-f32-dot
    code: TM001
    severity: warning
    layer: hlo
    summary: dots should not compute in f32
    select:
      op: dot
      operand: { index: 0, dtype: f32, capture: lhs }
    message: "{op.name} multiplies {lhs.dtype} operands ({lhs.type})"
    tests:
      invalid: [case.hlo]
"#,
    )
    .unwrap();
    std::fs::write(
        tmp.path().join("case.hlo"),
        "HloModule m\n\nENTRY %e (a: f32[8,8]) -> f32[8,8] {\n  %a = f32[8,8]{1,0} parameter(0)\n  ROOT %d = f32[8,8]{1,0} dot(%a, %a), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n",
    )
    .unwrap();
    let out = hlolint().args(["--rules"]).arg(&pack).arg(tmp.path().join("case.hlo")).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let s = text(&out.stdout);
    assert!(s.contains("TM001 no-f32-dot") && s.contains("%d multiplies f32 operands (f32[8,8])"), "{s}");
    let out = hlolint().args(["test"]).arg(&pack).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    assert!(text(&out.stdout).contains("✓ TM001  no-f32-dot"));
    // rules lists the pack with what it extends
    // (Not from the crate: `rules/` is a folder there, so `hlolint rules --rules PACK` lints it.)
    let out = hlolint().args(["rules", "--rules"]).arg(&pack).current_dir(std::env::temp_dir()).output().unwrap();
    let s = text(&out.stdout);
    assert!(s.contains("team (extends core)") && s.contains("TM001") && s.contains("HL001"), "{s}");
}

/// `hlolint test` on a user's pack that extends `core`, run outside the checkout: core's cases come from the binary
/// (written to a temporary folder for the run, removed after it), the user's own from beside the pack.
#[test]
fn hlolint_test_runs_core_cases_embedded_in_the_binary_from_anywhere() {
    let tmp = tempfile::tempdir().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("team.yaml"),
        "pack: team\nextends: [core]\nrules:\n  - id: any-dot\n    code: TM001\n    layer: hlo\n    select: { op: dot }\n    message: \"{op.name}\"\n    tests:\n      valid: [cases/nodot.hlo]\n      invalid: [cases/dot.hlo]\n",
    )
    .unwrap();
    std::fs::create_dir(tmp.path().join("cases")).unwrap();
    std::fs::write(tmp.path().join("cases/dot.hlo"), "HloModule m\n\nENTRY %e (a: f32[8,8]) -> f32[8,8] {\n  %a = f32[8,8]{1,0} parameter(0)\n  ROOT %d = f32[8,8]{1,0} dot(%a, %a), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n").unwrap();
    std::fs::write(
        tmp.path().join("cases/nodot.hlo"),
        "HloModule m\n\nENTRY %e (a: f32[8,8]) -> f32[8,8] {\n  ROOT %a = f32[8,8]{1,0} parameter(0)\n}\n",
    )
    .unwrap();
    let core = hlolint().args(["rules", "--rules", "core", "--json"]).output().unwrap();
    let n_core = serde_json::from_slice::<serde_json::Value>(&core.stdout).unwrap()["rules"].as_array().unwrap().len();
    let out =
        hlolint().args(["test", "./team.yaml"]).current_dir(tmp.path()).env("TMPDIR", scratch.path()).output().unwrap();
    let s = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{s}{}", text(&out.stderr));
    assert!(s.contains(&format!("{} rule(s) passed, 0 failed", n_core + 1)), "{s}");
    assert!(s.contains("TM001") && s.contains("HL001") && s.contains("MO010"), "{s}");
    assert_eq!(std::fs::read_dir(scratch.path()).unwrap().count(), 0, "the embedded cases' folder is removed");
    // a broken case of the built-in packs would be named as in the source tree, not by the temporary folder
    assert!(!s.contains(&scratch.path().display().to_string()), "{s}");
}

/// A rule without `tests:` is tested on `tests/data/rules/<id>/{valid,invalid}`, found beside the pack or one folder
/// up (the repository's own layout: `rules/` beside `tests/`); a rule with neither is listed as untested.
#[test]
fn rules_without_tests_use_the_conventional_case_folders() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join("rules")).unwrap();
    let rule =
        |id: &str| format!("  - id: {id}\n    layer: hlo\n    select: {{ op: dot }}\n    message: \"{{op.name}}\"\n");
    std::fs::write(
        tmp.path().join("rules/team.yaml"),
        format!("pack: team\nrules:\n{}{}", rule("any-dot"), rule("untested-dot")),
    )
    .unwrap();
    let dot = "HloModule m\n\nENTRY %e (a: f32[8,8]) -> f32[8,8] {\n  %a = f32[8,8]{1,0} parameter(0)\n  ROOT %d = f32[8,8]{1,0} dot(%a, %a), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n";
    let nodot = "HloModule m\n\nENTRY %e (a: f32[8,8]) -> f32[8,8] {\n  ROOT %a = f32[8,8]{1,0} parameter(0)\n}\n";
    let cases = tmp.path().join("tests/data/rules/any-dot");
    std::fs::create_dir_all(cases.join("valid")).unwrap();
    std::fs::create_dir_all(cases.join("invalid")).unwrap();
    std::fs::write(cases.join("valid/nodot.hlo"), nodot).unwrap();
    std::fs::write(cases.join("invalid/dot.hlo"), dot).unwrap();
    let out = hlolint().args(["test", "rules/team.yaml"]).current_dir(tmp.path()).output().unwrap();
    let s = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{s}{}", text(&out.stderr));
    assert!(s.contains("any-dot") && s.contains("1 valid, 1 invalid"), "{s}");
    assert!(s.contains("untested-dot"), "the rule without cases is named as untested: {s}");
    // a case that fails is found there too: the valid folder gets a dot
    std::fs::write(cases.join("valid/dot.hlo"), dot).unwrap();
    let out = hlolint().args(["test", "rules/team.yaml"]).current_dir(tmp.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    assert!(text(&out.stdout).contains("noisy: "), "{}", text(&out.stdout));
}

/// An LLO op's bundle address and slot are matchable like attributes (`attr: { bundle: ..., slot: ... }`).
#[test]
fn llo_rules_match_the_bundle_and_slot_of_an_op() {
    let tmp = tempfile::tempdir().unwrap();
    let pack = tmp.path().join("p.yaml");
    let rule = |attr: &str| {
        format!(
            "pack: p\nrules:\n  - id: mxu-at\n    layer: llo\n    select: {{ op: \"vmatmul*\", attr: {{ {attr} }} }}\n    message: \"{{op.name}}\"\n"
        )
    };
    let file = "tests/data/llo/42-fp8_mm_v3.1-70-final_bundles.txt";
    let run = |attr: &str| {
        std::fs::write(&pack, rule(attr)).unwrap();
        hlolint().args(["--rules"]).arg(&pack).arg(file).output().unwrap()
    };
    let hit = run("bundle: \"^0x8$\", slot: \"^1$\"");
    assert_eq!(hit.status.code(), Some(1), "{}{}", text(&hit.stdout), text(&hit.stderr));
    assert!(text(&hit.stdout).contains("mxu-at"), "{}", text(&hit.stdout));
    let miss = run("bundle: \"^0x8$\", slot: \"^0$\"");
    assert_eq!(miss.status.code(), Some(0), "{}{}", text(&miss.stdout), text(&miss.stderr));
}

#[test]
fn hlolint_test_reports_noisy_and_missing_cases() {
    let tmp = tempfile::tempdir().unwrap();
    let pack = tmp.path().join("p.yaml");
    std::fs::write(
        &pack,
        "pack: p\nrules:\n  - id: any-dot\n    layer: hlo\n    select: { op: dot }\n    message: \"{op.name}\"\n    tests:\n      valid: [dot.hlo]\n      invalid: [nodot.hlo]\n",
    )
    .unwrap();
    std::fs::write(tmp.path().join("dot.hlo"), "HloModule m\n\nENTRY %e (a: f32[8,8]) -> f32[8,8] {\n  %a = f32[8,8]{1,0} parameter(0)\n  ROOT %d = f32[8,8]{1,0} dot(%a, %a), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n").unwrap();
    std::fs::write(
        tmp.path().join("nodot.hlo"),
        "HloModule m\n\nENTRY %e (a: f32[8,8]) -> f32[8,8] {\n  ROOT %a = f32[8,8]{1,0} parameter(0)\n}\n",
    )
    .unwrap();
    let out = hlolint().args(["test"]).arg(&pack).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let s = text(&out.stdout);
    assert!(s.contains("noisy:") && s.contains("dot.hlo is valid but was reported"), "{s}");
    assert!(s.contains("missing:") && s.contains("nodot.hlo is invalid but was not reported"), "{s}");
}

#[test]
fn selection_severity_and_exit_codes() {
    let case = "tests/data/rules/fp8-upcast-before-dot/invalid/convert_then_dot.hlo";
    let code = |args: &[&str]| hlolint().args(args).arg(case).output().unwrap().status.code();
    assert_eq!(code(&[]), Some(1), "an error finding exits 1");
    assert_eq!(code(&["--exit-zero"]), Some(0));
    assert_eq!(code(&["--severity", "HL001=info"]), Some(0), "info findings do not fail");
    assert_eq!(code(&["--ignore", "HL001"]), Some(0));
    assert_eq!(code(&["--select", "HL0"]), Some(1), "code prefixes select");
    assert_eq!(code(&["--select", "async-no-overlap"]), Some(0));
    assert_eq!(code(&["--select", "XX999"]), Some(2), "selecting nothing that exists is a usage error");
    assert_eq!(code(&["--severity", "HL001=loud"]), Some(2));
    assert_eq!(code(&["--rules", "no-such-pack"]), Some(2));
    assert_eq!(code(&["--target", "tpu9"]), Some(2));
}

#[test]
fn machine_formats() {
    let case = "tests/data/rules/fp8-upcast-before-dot/invalid/upcast_in_loop_fusion.hlo";
    let out = hlolint().args(["--format", "json"]).arg(case).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let f = &v["findings"][0];
    assert_eq!(f["rule"], "fp8-upcast-before-dot");
    assert_eq!(f["code"], "HL001");
    assert_eq!(f["severity"], "error");
    assert_eq!(f["start"]["line"], 12);
    assert_eq!(f["labels"][0]["line"], 5, "the convert inside the kLoop fusion");

    let out = hlolint().args(["--format", "sarif"]).arg(case).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["version"], "2.1.0");
    let run = &v["runs"][0];
    assert!(run["tool"]["driver"]["rules"].as_array().unwrap().iter().any(|r| r["id"] == "fp8-upcast-before-dot"));
    assert_eq!(run["results"][0]["level"], "error");
    assert_eq!(run["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"], 12);

    let out = hlolint().args(["--format", "github"]).arg(case).output().unwrap();
    let s = text(&out.stdout);
    assert!(
        s.starts_with(
            "::error file=tests/data/rules/fp8-upcast-before-dot/invalid/upcast_in_loop_fusion.hlo,line=12,col="
        ),
        "{s}"
    );
    assert!(s.contains("title=HL001 fp8-upcast-before-dot::"), "{s}");
}

#[test]
fn explain_and_rules() {
    let out = hlolint().args(["explain", "HL001"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let s = text(&out.stdout);
    assert!(s.starts_with("## fp8-upcast-before-dot (HL001)") && s.contains("### Why is this bad?"), "{s}");
    assert_eq!(hlolint().args(["explain", "fp8-upcast-before-dot"]).output().unwrap().status.code(), Some(0));
    assert_eq!(hlolint().args(["explain", "HL999"]).output().unwrap().status.code(), Some(2));
    let out = hlolint().args(["rules"]).current_dir(std::env::temp_dir()).output().unwrap();
    let s = text(&out.stdout);
    for pack in ["core", "v1-auto", "v2-dma", "v3-smem"] {
        assert!(s.lines().any(|l| l.starts_with(pack)), "{pack} listed:\n{s}");
    }
    let out = hlolint().args(["rules", "--families"]).output().unwrap();
    assert!(text(&out.stdout).contains("dma-wait"));
}

#[test]
fn docs_rules_md_is_generated_from_the_packs() {
    let out = hlolint().args(["rules", "--docs"]).output().unwrap();
    let generated = text(&out.stdout);
    let committed =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/rules.md")).unwrap_or_default();
    assert!(generated == committed, "docs/rules.md is stale: run `cargo run -- rules --docs > docs/rules.md`");
}

#[test]
fn pyproject_config_sets_packs_and_severities_and_the_command_line_wins() {
    let tmp = tempfile::tempdir().unwrap();
    let case = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/rules/fp8-upcast-before-dot/invalid/convert_then_dot.hlo");
    std::fs::write(tmp.path().join("pyproject.toml"), "[project]\nname = \"model\"\n\n[tool.hlolint]\nrules = [\"core\", \"v3-smem\"]\nseverity = { HL001 = \"info\" }\n").unwrap();
    let sub = tmp.path().join("src");
    std::fs::create_dir_all(&sub).unwrap();
    let run = |args: &[&str]| {
        let mut c = crate::common::hlolint();
        c.current_dir(&sub).args(args).arg(&case).output().unwrap()
    };
    assert_eq!(run(&[]).status.code(), Some(0), "the closest pyproject.toml makes HL001 info");
    assert_eq!(run(&["--severity", "HL001=error"]).status.code(), Some(1), "the command line wins");
    assert_eq!(run(&["--isolated"]).status.code(), Some(1), "--isolated ignores the file");
    std::fs::write(tmp.path().join("pyproject.toml"), "[tool.hlolint]\nrulez = [\"core\"]\n").unwrap();
    let out = run(&[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("unknown field `rulez`"), "{}", text(&out.stderr));
}
