//! What the rules say about real compiler output: each kernel version of the project's fixtures with the pack the
//! user's guide pairs it with (every planted bug reported, the clean versions passing, fp8 native on tpu7x and
//! emulated on v6e/v5e), the same verdicts from a kernel decoded out of the HLO as from libtpu's Mosaic dump, and
//! every corpus dump under every pack (no crash; DESIGN.md §3's fp8 verdicts; no false positive on jax's
//! pallas_matmul).

use crate::common;

use serde_json::Value;
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `(exit code, ["CODE:severity", ...] sorted)` of linting `paths`.
fn lint(args: &[&str], paths: &[PathBuf]) -> (i32, Vec<String>, Value) {
    let out =
        crate::common::hlolint().args(["--format", "json", "--isolated"]).args(args).args(paths).output().unwrap();
    let code = out.status.code().unwrap_or(-1);
    let v: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    let mut codes: Vec<String> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| format!("{}:{}", f["code"].as_str().unwrap_or("-"), f["severity"].as_str().unwrap()))
        .collect();
    codes.sort();
    (code, codes, v)
}

/// The pack each version is written against (DESIGN.md §4), and what must be reported.
const VERSIONS: &[(&str, &str)] = &[
    ("v1", "v1-auto"),
    ("v2", "v2-dma"),
    ("v3", "v3-smem"),
    ("bug_upcast", "v1-auto"),
    ("bug_unwaited_dma", "v2-dma"),
    ("bug_single_slot", "v2-dma"),
    ("bug_scales_vmem", "v3-smem"),
    ("bug_any_in_vmem", "v2-dma"),
];

/// Findings at warning or error (what fails a build), and infos, per version and target.
fn expected(version: &str, target: &str) -> (Vec<&'static str>, Vec<&'static str>) {
    let emulated = target != "tpu7x" && version != "bug_upcast";
    let info: Vec<&str> = if emulated { vec!["XL001"] } else { vec![] };
    let failing = match (version, target) {
        ("bug_upcast", _) => vec!["MO001"],
        // the prefetch nothing waits for still fills slot 0 when the next grid step fills and reads it: races
        ("bug_unwaited_dma", _) => vec!["MO010", "MO011"],
        ("bug_single_slot", _) => vec!["MO011", "MO021"],
        ("bug_scales_vmem", _) => vec!["MO030"],
        // XLA places ANY operands that fit in VMEM on tpu7x only; v6e leaves them in HBM
        ("bug_any_in_vmem", "tpu7x") => vec!["XL003"],
        _ => vec![],
    };
    (failing, info)
}

#[test]
fn every_planted_bug_is_reported_and_the_clean_versions_pass() {
    let mut table = String::new();
    for target in ["tpu7x", "v6e"] {
        for (version, pack) in VERSIONS {
            let hlo = root().join(format!("fixtures/fp8_matmul_2d/tpu7x+v6e/{version}@{target}_hlo.txt"));
            let (code, codes, _) = lint(&["--rules", pack], &[hlo]);
            let (failing, info) = expected(version, target);
            let got_failing: Vec<&str> =
                codes.iter().filter(|c| !c.ends_with(":info")).map(|c| c.split(':').next().unwrap()).collect();
            let got_info: Vec<&str> = codes
                .iter()
                .filter(|c| c.ends_with(":info") && !c.starts_with("HL011"))
                .map(|c| c.split(':').next().unwrap())
                .collect();
            let mut dedup = got_failing.clone();
            dedup.dedup();
            assert_eq!(dedup, failing, "{version}@{target} with {pack}: {codes:?}");
            let mut dedup_info = got_info.clone();
            dedup_info.dedup();
            assert_eq!(dedup_info, info, "{version}@{target} with {pack}: {codes:?}");
            assert_eq!(code, if failing.is_empty() { 0 } else { 1 }, "{version}@{target}: exit code");
            table.push_str(&format!("{version}@{target} [{pack}]: {}\n", codes.join(" ")));
        }
    }
    insta::assert_snapshot!(table);
}

#[test]
fn v5e_runs_fp8_emulated_and_the_upcast_is_still_the_users() {
    let dir = root().join("fixtures/fp8_matmul_2d/v5e");
    let (_, codes, v) = lint(&["--rules", "v3-smem"], &[dir.join("v3_hlo.txt")]);
    assert_eq!(codes, vec!["XL001:info"]);
    let msg = v["findings"][0]["message"].as_str().unwrap();
    assert!(msg.contains("emulated on v5e") && msg.contains("tpu7x"), "{msg}");
    let (code, codes, _) = lint(&["--rules", "v1-auto"], &[dir.join("bug_upcast_hlo.txt")]);
    assert_eq!((code, codes), (1, vec!["MO001:error".to_string()]));
}

/// The rules that read kernel bodies, run once on the HLO alone (kernels decoded from `tpu_custom_call`) and once
/// on libtpu's post-deserialization Mosaic dump alone, agree.
#[test]
fn decoded_kernels_give_the_same_verdicts_as_the_mosaic_dump() {
    // (auto-pipelining's whole-array check also needs the call's operand shapes, which a dump alone lacks)
    let kernel_rules = "MO001,MO010,MO021,MO030";
    let all = "core,v1-auto,v2-dma,v3-smem";
    let mut compared = 0;
    for target in ["tpu7x", "v6e"] {
        for (version, _) in VERSIONS {
            let base = root().join(format!("fixtures/fp8_matmul_2d/tpu7x+v6e/{version}@{target}"));
            // the HLO alone: copied where it has no sibling dump folder
            let tmp = tempfile::tempdir().unwrap();
            let hlo_only = tmp.path().join("after_optimizations.txt");
            let hlo = std::fs::read_dir(base.join("hlo"))
                .unwrap()
                .filter_map(Result::ok)
                .map(|e| e.path())
                .find(|p| p.to_string_lossy().ends_with(".after_optimizations.txt"))
                .unwrap();
            std::fs::copy(&hlo, &hlo_only).unwrap();
            let dump = std::fs::read_dir(base.join("mosaic"))
                .unwrap()
                .filter_map(Result::ok)
                .map(|e| e.path())
                .find(|p| p.to_string_lossy().contains("post-deserialization"))
                .unwrap();
            let (_, from_hlo, hv) = lint(&["--rules", all, "--select", kernel_rules, "--target", target], &[hlo_only]);
            let (_, from_dump, dv) = lint(&["--rules", all, "--select", kernel_rules, "--target", target], &[dump]);
            assert_eq!(from_hlo, from_dump, "{version}@{target}");
            // and they say where they come from
            for f in hv["findings"].as_array().unwrap() {
                assert!(f["source"].as_str().unwrap().contains("decoded from"), "{f}");
            }
            for f in dv["findings"].as_array().unwrap() {
                assert!(f["source"].as_str().unwrap().contains("post-deserialization"), "{f}");
            }
            compared += from_hlo.len();
        }
    }
    assert!(compared >= 8, "the comparison covers the planted kernel bugs ({compared} findings)");
}

#[test]
fn the_corpus_under_every_pack() {
    let Some(corpus) = common::corpus() else { return };
    let dirs: Vec<PathBuf> = {
        let mut v: Vec<PathBuf> = std::fs::read_dir(&corpus)
            .unwrap()
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        v.sort();
        v
    };
    let mut table = String::new();
    for d in &dirs {
        let name = d.file_name().unwrap().to_string_lossy().to_string();
        // every pack's rules at once (each pack is a subset of this union)
        {
            let pack = "core,v1-auto,v2-dma,v3-smem";
            let (code, codes, _) = lint(&["--rules", pack], std::slice::from_ref(d));
            assert!(code == 0 || code == 1, "{name} [{pack}] exits {code}");
            table.push_str(&format!("{name}: {}\n", codes.join(" ")));
            let failing: Vec<&String> = codes.iter().filter(|c| !c.ends_with(":info")).collect();
            match name.as_str() {
                n if n.starts_with("fp8_dot_upcast@") => {
                    assert_eq!(failing, vec!["HL001:error"], "{n}: the user's upcast")
                }
                n if n.starts_with("pallas_matmul@") => assert!(codes.is_empty(), "{n}: no false positive: {codes:?}"),
                n => assert!(failing.is_empty(), "{n} [{pack}]: {codes:?}"),
            }
            let emulated = codes.contains(&"XL001:info".to_string());
            assert_eq!(
                emulated,
                name == "fp8_dot@v6e" || name == "fp8_dot@v5e",
                "{name}: fp8 emulated only on v6e/v5e"
            );
        }
    }
    insta::assert_snapshot!(table);
}

/// The human report on real fixtures, as a user reads it.
#[test]
fn diagnostics_on_the_fixtures() {
    for (version, target, pack) in [
        ("bug_upcast", "tpu7x", "v1-auto"),
        ("bug_unwaited_dma", "tpu7x", "v2-dma"),
        ("bug_single_slot", "v6e", "v2-dma"),
        ("bug_scales_vmem", "tpu7x", "v3-smem"),
        ("bug_any_in_vmem", "tpu7x", "v2-dma"),
        ("v3", "v6e", "v3-smem"),
    ] {
        let out = crate::common::hlolint()
            .env("COLUMNS", "120")
            .current_dir(root())
            .args([
                "--isolated",
                "--rules",
                pack,
                &format!("fixtures/fp8_matmul_2d/tpu7x+v6e/{version}@{target}_hlo.txt"),
            ])
            .output()
            .unwrap();
        insta::assert_snapshot!(format!("{version}@{target}"), String::from_utf8_lossy(&out.stdout));
    }
}

/// A failure that only a read past the end of an SMEM table reaches is no witness (the read is undefined): the
/// verdict is inconclusive and says why, where it used to be an error naming `%arg2[4]` of a 4-entry table.
#[test]
fn a_witness_may_not_read_past_a_table() {
    let case = root().join("tests/data/rules/dma-balance/invalid/witness_out_of_bounds.mlir");
    let (code, codes, v) = lint(&["--rules", "core"], &[case]);
    assert_eq!(code, 0, "{codes:?}");
    let f = v["findings"].as_array().unwrap().iter().find(|f| f["code"] == "MO010").expect("an MO010 finding");
    assert_eq!(f["verdict"], "inconclusive", "{f}");
    let msg = f["message"].as_str().unwrap();
    assert!(msg.contains("table read past its end"), "{msg}");
    assert!(!msg.contains("%arg2[4]"), "{msg}");
}

/// tpu-inference's MLA v1 runs a grid of `distribution[2]` steps (a size known only at run time, passed by the host
/// as the first operand of the call: `bitcast(slice(distribution, [2:3]))`). Its true MO010 error (a sequence of no
/// query tokens: the next query block is never prefetched) names a grid of that many steps, not a grid of its own
/// size beside `distribution[2] = 0`, which the wrapper never passes. jax's interpreter hangs on this witness.
#[test]
fn a_run_time_grid_is_the_table_element_the_host_passes() {
    let case = root().join("fixtures/tpu_inference/mla_v1@tpu7x");
    let (code, codes, v) = lint(&["--rules", "core"], &[case]);
    assert_eq!(code, 1, "{codes:?}");
    let errors: Vec<&serde_json::Value> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "MO010" && f["verdict"] != "inconclusive")
        .collect();
    assert!(!errors.is_empty(), "{v}");
    for f in errors {
        let msg = f["message"].as_str().unwrap();
        assert!(msg.contains("distribution_ref[2] = 2"), "{msg}");
        assert!(!msg.contains("a grid of"), "{msg}");
    }
}

/// RPA v3's true MO010 error (a sequence with a query and no KV: the query block's wait sits in the KV loop, which
/// runs zero times) is a DMA whose wait is not reached, not a prefetch of a block that does not exist: its replay
/// leaves it in an iteration of the sequence loop that is not the last.
#[test]
fn a_first_fetch_whose_wait_is_skipped_is_not_called_a_prefetch() {
    let (_, _, v) = lint(&["--rules", "core"], &[root().join("fixtures/tpu_inference/rpa_v3@tpu7x")]);
    let errors: Vec<&Value> =
        v["findings"].as_array().unwrap().iter().filter(|f| f["code"] == "MO010" && f["severity"] == "error").collect();
    assert!(!errors.is_empty(), "{v}");
    for f in errors {
        let help = f["help"].as_str().unwrap_or_default();
        assert!(help.starts_with("No wait takes this DMA on these inputs"), "{help}");
    }
}

/// A witness names each table entry once (a table the kernel stores into is read at several versions: MLA v1's
/// had `sem_ids_ref[2] = 1, sem_ids_ref[2] = 0`), and never an entry outside its table (DeepSeek-V4 MLA's possible
/// race named `kv_lens_ref[-1]`).
#[test]
fn witnesses_name_each_entry_once_and_inside_its_table() {
    let cases = [
        "tests/data/host/dsv4_mla@tpu7x",
        "fixtures/tpu_inference/mla_v1@tpu7x",
        "fixtures/tpu_inference/rpa_v3@tpu7x",
    ];
    let mut seen = 0;
    for case in cases {
        let (_, _, v) = lint(&["--rules", "core"], &[root().join(case)]);
        for f in v["findings"].as_array().unwrap() {
            let msg = f["message"].as_str().unwrap();
            for example in msg.split("for example with ").skip(1) {
                let example = example.split(" (").next().unwrap().split(';').next().unwrap();
                let names: Vec<&str> = example.split(", ").filter_map(|p| p.split(" = ").next()).collect();
                let unique: std::collections::BTreeSet<&str> = names.iter().copied().collect();
                assert_eq!(unique.len(), names.len(), "{case}: {msg}");
                assert!(!example.contains("[-"), "{case}: {msg}");
                seen += 1;
            }
        }
    }
    assert!(seen >= 3, "the cases show witnesses ({seen})");
}

/// DeepSeek-V4's MLA (tpu-inference 0.32.0, tests/data/host/README.md): the host passes the mixed kernel a grid of
/// `distribution[2] - distribution[1]` and `start_end = distribution[1:3]`, the decode kernel a grid of
/// `distribution[0]` and `start_end = [0, distribution[0]]`. A witness with `start_end = [1, 0]` and a grid of 1 is
/// no call the host makes: the grid is the tables' difference, so neither kernel has a proven failure.
#[test]
fn a_run_time_grid_is_what_the_host_computes_from_the_tables() {
    let case = root().join("tests/data/host/dsv4_mla@tpu7x");
    let (_, codes, v) = lint(&["--rules", "core"], &[case]);
    let balance: Vec<&Value> = v["findings"].as_array().unwrap().iter().filter(|f| f["code"] == "MO010").collect();
    // both kernels are still checked (and neither proven balanced: their wait sizes are read back from SMEM)
    assert_eq!(balance.len(), 2, "{codes:?}");
    for f in balance {
        assert_eq!(f["verdict"], "inconclusive", "{}", f["message"]);
    }
}
