//! The report formats as tools read them: SARIF valid against the OASIS 2.1.0 schema with a complete rules
//! catalog, stable fingerprints and the user's Python file as the location; concise lines; GitLab code quality;
//! JUnit XML.

use crate::common::hlolint;
use std::path::Path;

const UPCAST: &str = "tests/data/rules/fp8-upcast-before-dot/invalid/upcast_in_loop_fusion.hlo";
const FIXTURES: &str = "fixtures/fp8_matmul_2d/tpu7x+v6e";

fn run(args: &[&str]) -> (Option<i32>, String) {
    let out = hlolint().args(args).output().unwrap();
    (out.status.code(), String::from_utf8(out.stdout).unwrap())
}

fn sarif_of(args: &[&str]) -> serde_json::Value {
    let mut a = vec!["--format", "sarif"];
    a.extend_from_slice(args);
    serde_json::from_str(&run(&a).1).unwrap()
}

fn schema_errors(v: &serde_json::Value) -> Vec<String> {
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sarif/sarif-schema-2.1.0.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let validator = jsonschema::options().should_validate_formats(true).build(&schema).unwrap();
    validator.iter_errors(v).map(|e| format!("{} at {}", e, e.instance_path)).collect()
}

/// The default run on the fixtures: each version linted with its own pack from the manifest; every result's rule
/// is in the catalog.
#[test]
fn sarif_is_valid_against_the_schema_with_every_rule_in_the_catalog() {
    for args in [&[FIXTURES][..], &["--statistics", UPCAST], &["--rules", "v2-dma", FIXTURES]] {
        let v = sarif_of(args);
        let errors = schema_errors(&v);
        assert!(errors.is_empty(), "{args:?}: {errors:#?}");
        let run = &v["runs"][0];
        let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
        let results = run["results"].as_array().unwrap();
        assert!(!results.is_empty());
        for r in results {
            let i = r["ruleIndex"].as_u64().unwrap_or_else(|| panic!("no ruleIndex: {r}")) as usize;
            assert_eq!(rules[i]["id"], r["ruleId"]);
            assert_eq!(r["partialFingerprints"]["hlolint/v1"].as_str().unwrap().len(), 16);
        }
    }
    let mut v = sarif_of(&[FIXTURES]);
    assert_eq!(v["runs"][0]["results"].as_array().unwrap().len(), 41);
    // The validator does catch what the issue found: a result without its rule in the catalog.
    v["runs"][0]["results"][0]["ruleIndex"] = serde_json::Value::Null;
    assert!(!schema_errors(&v).is_empty());
}

/// Code scanning annotates the kernel's Python source; the dump is a related location.
#[test]
fn sarif_locates_findings_in_the_python_source_when_known() {
    let v = sarif_of(&[&format!("{FIXTURES}/v3@v6e_hlo.txt")]);
    let r = &v["runs"][0]["results"][0];
    assert_eq!(r["ruleId"], "fp8-emulated");
    let loc = &r["locations"][0]["physicalLocation"];
    assert!(loc["artifactLocation"]["uri"].as_str().unwrap().ends_with("examples/fp8_matmul_2d/kernels.py"), "{loc}");
    assert_eq!(loc["region"]["startLine"], 226);
    let dump = &r["relatedLocations"][0]["physicalLocation"];
    assert!(dump["artifactLocation"]["uri"].as_str().unwrap().starts_with("fixtures/fp8_matmul_2d/"), "{dump}");
    // Without Python locations (a hand-written dump), the dump is the location.
    let v = sarif_of(&[UPCAST]);
    let loc = &v["runs"][0]["results"][0]["locations"][0]["physicalLocation"];
    assert_eq!(loc["artifactLocation"]["uri"], UPCAST);
    assert_eq!(loc["region"]["startLine"], 12);
}

/// The fingerprint does not move with dump line numbers or the folder the dumps sit in.
#[test]
fn fingerprints_survive_regenerated_dumps() {
    let fp = |path: &str| {
        let v = sarif_of(&[path]);
        let r = &v["runs"][0]["results"][0];
        (r["partialFingerprints"]["hlolint/v1"].as_str().unwrap().to_string(), r["locations"][0].clone())
    };
    let (a, loc_a) = fp(UPCAST);
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("elsewhere/invalid")).unwrap();
    let text = std::fs::read_to_string(UPCAST).unwrap();
    let (head, rest) = text.split_once('\n').unwrap();
    let moved = tmp.path().join("elsewhere/invalid/upcast_in_loop_fusion.hlo");
    std::fs::write(&moved, format!("{head}\n\n\n\n{rest}")).unwrap();
    let (b, loc_b) = fp(moved.to_str().unwrap());
    assert_ne!(loc_a["physicalLocation"]["region"]["startLine"], loc_b["physicalLocation"]["region"]["startLine"]);
    assert_eq!(a, b, "same finding, same fingerprint");
    // A different finding has a different one.
    let v = sarif_of(&[FIXTURES]);
    let fps: std::collections::HashSet<&str> = v["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["partialFingerprints"]["hlolint/v1"].as_str().unwrap())
        .collect();
    assert_eq!(fps.len(), 41, "41 findings, 41 fingerprints");
}

#[test]
fn concise_lines() {
    let (code, out) = run(&["--format", "concise", UPCAST]);
    assert_eq!(code, Some(1));
    assert_eq!(out.lines().count(), 1);
    assert!(out.starts_with(&format!("{UPCAST}:12:")), "{out}");
    assert!(out.contains(": HL001 "), "{out}");
    let (_, out) = run(&["--format", "concise", &format!("{FIXTURES}/v3@v6e_hlo.txt")]);
    // the Python line first (the file found here, not the compiling machine's path), the dump after it
    assert!(out.starts_with("examples/fp8_matmul_2d/kernels.py:226:"), "the Python line first: {out}");
    assert!(out.contains(&format!(" [dump: {FIXTURES}/v3@v6e")), "then the dump: {out}");
}

#[test]
fn gitlab_code_quality() {
    let (code, out) = run(&["--format", "gitlab", FIXTURES]);
    assert_eq!(code, Some(1));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let issues = v.as_array().unwrap();
    assert_eq!(issues.len(), 41);
    for i in issues {
        for key in ["description", "check_name", "fingerprint", "severity"] {
            assert!(i[key].is_string(), "{key}: {i}");
        }
        assert!(["info", "minor", "major", "critical", "blocker"].contains(&i["severity"].as_str().unwrap()));
        assert!(i["location"]["lines"]["begin"].as_u64().unwrap() >= 1);
        assert!(!i["location"]["path"].as_str().unwrap().is_empty());
    }
    let sarif = sarif_of(&[FIXTURES]);
    let same: Vec<&str> = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["partialFingerprints"]["hlolint/v1"].as_str().unwrap())
        .collect();
    assert!(issues.iter().all(|i| same.contains(&i["fingerprint"].as_str().unwrap())), "one fingerprint");
}

#[test]
fn junit_xml() {
    let (code, out) =
        run(&["--format", "junit", UPCAST, "tests/data/rules/fp8-upcast-before-dot/valid/native_fp8_dot.hlo"]);
    assert_eq!(code, Some(1));
    assert!(
        out.starts_with(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"hlolint\" tests=\"2\" failures=\"1\""
        ),
        "{out}"
    );
    assert_eq!(out.matches("<testsuite ").count(), 2);
    assert_eq!(out.matches("</testsuite>").count(), 2);
    assert!(out.contains("<testcase name=\"clean\""), "a clean compilation passes");
    assert!(out.contains("<failure message=\"") && out.contains("type=\"HL001\""), "{out}");
    // Messages are escaped: no raw `<` inside attributes or text (an fp8 message names `f8e4m3fn[...]{1,0}`).
    let (_, out) = run(&["--format", "junit", FIXTURES]);
    for line in out.lines().filter(|l| l.contains("<failure")) {
        let attr = line.split("message=\"").nth(1).unwrap().split('"').next().unwrap();
        assert!(!attr.contains('<') && !attr.contains('>'), "{attr}");
    }
    assert!(out.contains("&lt;"), "memref<…> escaped");
    assert!(out.trim_end().ends_with("</testsuites>"));
}
