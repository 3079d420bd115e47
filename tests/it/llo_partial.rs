//! A lint run keeps of each LLO dump only the ops its rules read — MXU matmuls and the entry's operands — unless a
//! rule reads whole programs (a matcher on the LLO layer, summaries, the performance model). What it reports does
//! not depend on that: the same findings at the same places with the same fingerprints; and a matcher on the LLO
//! layer still sees every op.

use std::path::Path;

const EVERY_PACK: &str = "core,v1-auto,v2-dma,v3-smem";

/// A pack whose one rule matches LLO ops the partial graphs do not keep: with it, the run keeps whole graphs.
const PROBE: &str = "pack: probe\nrules:\n  - id: llo-probe\n    layer: llo\n    severity: info\n    select: { op: \"dma*\" }\n    message: \"{op.opcode}\"\n";

fn run(pack: Option<&Path>, format: &str, paths: &[String]) -> String {
    let mut cmd = crate::common::hlolint();
    cmd.args(["--isolated", "--format", format, "--rules", EVERY_PACK]);
    if let Some(p) = pack {
        cmd.arg("--rules").arg(p);
    }
    let out = cmd.args(paths).output().unwrap();
    assert!(out.status.code().is_some_and(|c| c < 2), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// The concise findings and the SARIF results' rule, location and fingerprints, without the probe's own.
fn findings(pack: Option<&Path>, path: &[String]) -> (Vec<String>, Vec<String>) {
    let concise: Vec<String> =
        run(pack, "concise", path).lines().filter(|l| !l.contains("llo-probe")).map(String::from).collect();
    let sarif: serde_json::Value = serde_json::from_str(&run(pack, "sarif", path)).unwrap();
    let results = sarif["runs"][0]["results"].as_array().cloned().unwrap_or_default();
    let sarif = results
        .iter()
        .filter(|r| r["ruleId"] != "llo-probe")
        .map(|r| format!("{} {} {} {}", r["ruleId"], r["message"]["text"], r["locations"], r["partialFingerprints"]))
        .collect();
    (concise, sarif)
}

/// The JSON report's file summaries (which read MXU matmuls, DMAs and the entry of each LLO dump), layer links,
/// and findings without the probe's.
fn json_report(pack: Option<&Path>, path: &[String]) -> Vec<String> {
    let j: serde_json::Value = serde_json::from_str(&run(pack, "json", path)).unwrap();
    let findings = j["findings"].as_array().cloned().unwrap_or_default();
    let findings: Vec<String> = findings.iter().filter(|f| f["rule"] != "llo-probe").map(|f| f.to_string()).collect();
    vec![j["files"].to_string(), j["linked"].to_string(), findings.join("\n")]
}

fn same_with_partial_and_whole_graphs(path: &[String]) {
    let tmp = tempfile::tempdir().unwrap();
    let probe = tmp.path().join("probe.yaml");
    std::fs::write(&probe, PROBE).unwrap();
    let partial = findings(None, path);
    let whole = findings(Some(&probe), path);
    assert!(!partial.0.is_empty(), "the run found something in {path:?}");
    assert_eq!(partial.0, whole.0, "concise findings of {path:?}");
    assert_eq!(partial.1, whole.1, "SARIF results of {path:?}");
    let (partial, whole) = (json_report(None, path), json_report(Some(&probe), path));
    assert!(partial[0].contains("\"llo\""), "LLO dumps are summarised in {path:?}");
    assert!(partial == whole, "the JSON report of {path:?} differs between partial and whole LLO graphs");
}

#[test]
fn fixtures_report_the_same_with_partial_and_whole_llo_graphs() {
    same_with_partial_and_whole_graphs(&crate::common::fixture_sets_linted_whole());
}

#[test]
fn the_corpus_reports_the_same_with_partial_and_whole_llo_graphs() {
    let Some(corpus) = crate::common::corpus() else { return };
    same_with_partial_and_whole_graphs(&[corpus.to_string_lossy().into_owned()]);
}

/// The probe sees DMA ops, which partial graphs drop: a matcher on the LLO layer makes the run keep every op.
#[test]
fn a_matcher_on_the_llo_layer_sees_every_op() {
    let tmp = tempfile::tempdir().unwrap();
    let probe = tmp.path().join("probe.yaml");
    std::fs::write(&probe, PROBE).unwrap();
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/llo/42-fp8_mm_v3.1-70-final_bundles.txt");
    let out = crate::common::hlolint()
        .args(["--isolated", "--format", "concise", "--rules"])
        .arg(&probe)
        .arg(&file)
        .output()
        .unwrap();
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.lines().filter(|l| l.contains("llo-probe") && l.contains("dma")).count() >= 2, "{s}");
}
