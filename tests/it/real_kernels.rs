//! Kernels we did not write: jax's own Pallas TPU kernels (examples/jax_pallas_ops), compiled by our driver for
//! tpu7x, v6e and v5e into fixtures/jax_pallas_ops, and tpu-inference's production kernels (examples/tpu_inference),
//! compiled for tpu7x and v6e into fixtures/tpu_inference. Every compilation folder parses with no rule run, each
//! kernel's Mosaic function is found (decoded from the HLO's tpu_custom_call) and linked to its LLO bundles.

use hlolint::lint::manifest::{Manifest, UnitResult, UnitStatus};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/jax_pallas_ops")
}

/// version → (Mosaic func name, HLO custom call / LLO computation name)
const KERNELS: &[(&str, &str, &str)] = &[
    ("flash_fwd", "_flash_attention_kernel", "flash_attention.1"),
    ("paged", "paged_flash_attention_kernel_inline_seq_dim", "paged_attention.1"),
    ("paged_int8", "paged_flash_attention_kernel_inline_seq_dim", "paged_attention.1"),
    ("gmm", "kernel", "gmm.1"),
    ("tgmm", "kernel", "tgmm.1"),
    ("splash_mha_causal", "splash_mha_fwd_no_residuals", "splash_mha_fwd_no_residuals.1"),
    ("ragged_paged", "ragged_paged_attention_kernel", "ragged_paged_attention_kernel.1"),
    ("matmul_bf16", "matmul_kernel", "matmul.1"),
    ("matmul_int8", "matmul_kernel", "matmul.1"),
    ("threefry_bits", "kernel", "threefry_bits.1"),
    // lowered on a 4-device mesh: the custom call is named after the shard_map the kernel runs in
    ("all_gather", "ag_kernel", "shard_map.15"),
];
const TARGETS: &[&str] = &["tpu7x", "v6e", "v5e"];

fn run_none(dir: &Path) -> (i32, Value) {
    let out =
        crate::common::hlolint().args(["--rules", "none", "--format", "json", "--isolated"]).arg(dir).output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{}: {e}: {}", dir.display(), String::from_utf8_lossy(&out.stderr)));
    (out.status.code().unwrap_or(-1), v)
}

/// A fixture folder's driver manifest, after checking that it lists exactly `versions` × `targets`, each `ok`.
fn manifest_with_every_version_ok<'v>(
    dir: &std::path::Path,
    versions: impl Iterator<Item = &'v str>,
    targets: &[&str],
) -> Manifest {
    let m = Manifest::read(dir).unwrap().unwrap_or_else(|| panic!("{}: no manifest", dir.display()));
    let got: BTreeSet<(&str, &str, UnitStatus)> =
        m.results.iter().map(|r| (r.version.as_str(), r.target.as_str(), r.status)).collect();
    let want: BTreeSet<(&str, &str, UnitStatus)> =
        versions.flat_map(|v| targets.iter().map(move |t| (v, *t, UnitStatus::Ok))).collect();
    assert_eq!(got, want, "{}", dir.display());
    m
}

/// The mesh a result records (`MESH` in the module): its axes and shape; `None` for a single-device version.
fn mesh(r: &UnitResult) -> Option<(Value, Value)> {
    r.mesh.as_ref().map(|m| (m["axes"].clone(), m["shape"].clone()))
}

#[test]
fn manifest_has_every_version_on_every_target() {
    let m = manifest_with_every_version_ok(&fixtures(), KERNELS.iter().map(|(v, _, _)| *v), TARGETS);
    assert_eq!(m.trimmed.as_ref().map(|t| &t["by"]), Some(&json!("scripts/trim_fixtures.py")));
    // the multi-device version records its mesh (examples/jax_pallas_ops MESH); the others have none
    for r in &m.results {
        let want = (r.version == "all_gather").then(|| (json!(["x"]), json!([4])));
        assert_eq!(mesh(r), want, "{r:?}");
    }
}

/// The ring all-gather: remote DMAs, the barrier semaphore and semaphore signal/wait, all balanced when every
/// device runs the same code (the dma-balance analysis reports only that it explored the kernel).
#[test]
fn all_gather_remote_dmas_and_barrier_balance() {
    let dir = fixtures().join("all_gather@tpu7x");
    let out = crate::common::hlolint()
        .args(["--rules", "core", "-v", "--format", "json", "--isolated"])
        .arg(&dir)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{v}");
    assert!(v["errors"].as_array().unwrap().is_empty(), "{v}");
    let findings = v["findings"].as_array().unwrap();
    assert!(findings.iter().all(|f| f["severity"] == "info"), "{findings:?}");
    assert!(
        findings.iter().any(|f| f["rule"] == "dma-balance" && f["kernel"] == "ag_kernel" && f["verdict"] == "explored"),
        "{findings:?}"
    );
    let deser = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"].as_str().is_some_and(|p| p.ends_with("-post-deserialization.txt")))
        .expect("the Mosaic post-deserialization dump");
    let ops = &deser["opcodes"];
    // 1 local + 6 remote copies (3 ring steps x 2 directions); a remote wait is two waits (send and receive)
    for (op, n) in [
        ("tpu.enqueue_dma", 7),
        ("tpu.wait_dma2", 13),
        ("tpu.sem_barrier", 1),
        ("tpu.sem_signal", 2),
        ("tpu.sem_wait", 1),
    ] {
        assert_eq!(ops[op], n, "{op}: {ops}");
    }
}

#[test]
fn a_sparsecore_gather_waits_its_indirect_dmas() {
    // jax's SparseCore guide's gather (TPU 7x): each step gathers 128 rows by `tpu.enqueue_indirect_dma` (its
    // semaphore is `semaphore`, its size the on-chip end's 64 KiB, not the 2 MiB table the offsets index) and
    // waits by `tpu.wait_indirect_dma`. Read as a plain DMA, the start had no semaphore and the wait took the
    // table's size: a false "this wait has no DMA outstanding" error.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/perf/sparsecore/sc_gather@tpu7x");
    let out = crate::common::hlolint()
        .args(["--select", "MO010", "--format", "json", "--isolated"])
        .arg(&dir)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let findings = v["findings"].as_array().unwrap();
    assert!(findings.iter().all(|f| f["severity"] != "error" && f["severity"] != "warning"), "{findings:?}");
    let text = std::fs::read_to_string(
        std::fs::read_dir(dir.join("mosaic"))
            .unwrap()
            .filter_map(Result::ok)
            .map(|e| e.path())
            .max_by_key(|p| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0))
            .unwrap(),
    )
    .unwrap();
    assert!(text.contains("tpu.enqueue_indirect_dma") && text.contains("tpu.wait_indirect_dma"));
}

#[test]
fn every_folder_parses_and_finds_its_kernel() {
    let mut failures = Vec::new();
    for (version, func, call) in KERNELS {
        for target in TARGETS {
            let name = format!("{version}@{target}");
            let (code, v) = run_none(&fixtures().join(&name));
            let errors = v["errors"].as_array().unwrap();
            // every dump parses, the LLO schedule analyses whose records span lines (splash's kernel metadata) too
            if code != 0 || !errors.is_empty() {
                failures.push(format!("{name}: exit {code}, errors {errors:?}"));
            }
            let kernels: BTreeSet<&str> = v["files"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|f| f["kernels"].as_array().into_iter().flatten())
                .filter_map(|k| k["name"].as_str())
                .collect();
            if !kernels.contains(func) {
                failures.push(format!("{name}: Mosaic func @{func} not found (found {kernels:?})"));
            }
            let linked =
                v["linked"].as_array().unwrap().iter().flat_map(|l| l["items"].as_array().into_iter().flatten()).any(
                    |i| {
                        i["kind"] == "kernel" && i["name"] == *call && i["kernel"] == *func && i["llo_file"].is_string()
                    },
                );
            if !linked {
                failures.push(format!("{name}: {call} (@{func}) not linked to its LLO final_bundles"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Every built-in pack on every real kernel: what remains is true, and the DMA analyses say `inconclusive` where
/// they cannot decide, never a silent pass. The reasons are in fixtures/jax_pallas_ops/README.md ("Verdicts").
#[test]
fn every_pack_on_every_real_kernel_gives_its_explained_verdicts() {
    // folder → the (code:severity-or-verdict) set with core, v1-auto and v3-smem (v3-smem extends v2-dma)
    let expected: &[(&str, &str)] = &[
        // XLA overlaps nothing with these small copies of the kernel's operands (info, true on tpu7x)
        ("gmm@tpu7x", "HL011:info"),
        // int8 × int8 on tpu7x runs on a bf16 MXU (no int8 mode on that generation): true, info
        ("matmul_int8@tpu7x", "XL004:info"),
        // the KV cache declared memory_space=ANY is placed in VMEM by XLA at these sizes (LLO:
        // inlined_call_operand.vmem): true; double buffering not decided within the budget
        // ... and its matmuls take an f32 query (and f32 probabilities) against bf16 K/V: Mosaic widens K/V and
        // the MXU runs f32 (`vmatmul.f32` on v5e): true, info
        // MO010: paged attention's prefetch goes to the next non-empty sequence, found by a search loop over the
        // lengths table, so a DMA may stay outstanding across any number of empty steps: not proven (the engine
        // does not derive the search loop's postcondition), never called clean; MO011 and MO021 read the same
        // run, so they are not proven either
        ("paged@tpu7x", "HL011:info MO010:inconclusive MO011:inconclusive MO021:inconclusive XL003:warning XL006:info"),
        ("paged@v5e", "MO010:inconclusive MO011:inconclusive MO021:inconclusive XL006:info"),
        ("paged@v6e", "MO010:inconclusive MO011:inconclusive MO021:inconclusive XL006:info"),
        ("paged_int8@tpu7x", "MO010:inconclusive MO011:inconclusive MO021:inconclusive XL003:warning"),
        ("paged_int8@v5e", "MO010:inconclusive MO011:inconclusive MO021:inconclusive XL003:warning"),
        ("paged_int8@v6e", "MO010:inconclusive MO011:inconclusive MO021:inconclusive XL003:warning"),
        // ragged paged attention: its while loops over sequences and blocks keep both DMA analyses from a proof
        // (XL006: its second matmul multiplies the f32 softmax probabilities by bf16 V: true, info). The engine's
        // witness replays to a true failure: with `kv_lens = [257, 0]`, `num_seqs = 2` (a sequence with
        // no KV tokens after one with some, which its callers never pass) the prefetch of the next sequence's
        // first block is never waited — jax's TPU interpreter shows the same (docs/dma-semantics.md)
        (
            "ragged_paged@tpu7x",
            "HL011:info MO010:error MO010:inconclusive MO011:inconclusive MO021:inconclusive XL003:warning XL006:info",
        ),
        ("ragged_paged@v5e", "MO010:error MO010:inconclusive MO011:inconclusive MO021:inconclusive XL006:info"),
        ("ragged_paged@v6e", "MO010:error MO010:inconclusive MO011:inconclusive MO021:inconclusive XL006:info"),
    ];
    let mut failures = Vec::new();
    let mut folders: Vec<String> = std::fs::read_dir(fixtures())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    folders.sort();
    assert!(folders.len() >= 33, "{folders:?}");
    for name in &folders {
        let out = crate::common::hlolint()
            .args(["--rules", "core,v1-auto,v3-smem", "--format", "json", "--isolated"])
            .arg(fixtures().join(name))
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let got: BTreeSet<String> = v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                let what = f["verdict"].as_str().or(f["severity"].as_str()).unwrap_or("?");
                format!("{}:{what}", f["code"].as_str().unwrap_or("?"))
            })
            .collect();
        let got = got.into_iter().collect::<Vec<_>>().join(" ");
        let want = expected.iter().find(|(d, _)| d == name).map(|(_, w)| *w).unwrap_or("");
        if got != want {
            failures.push(format!("{name}: got `{got}`, want `{want}`"));
        }
        assert!(v["errors"].as_array().unwrap().is_empty(), "{name}: {}", v["errors"]);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// ---- tpu-inference's kernels (fixtures/tpu_inference) ------------------------------------------------------------

fn tpu_inference() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/tpu_inference")
}

/// version → its kernels: (Mosaic func name, HLO custom call / LLO computation name). tpu-inference names its
/// kernels after their block sizes; ragged paged attention v3 compiles a decode and a mixed kernel.
const TPU_INFERENCE: &[(&str, &[(&str, &str)])] = &[
    (
        "fused_moe_v1",
        &[(
            "fused-moe-k_2-bt_32_32-bf_512_256-bd1_512_256-bd2_512_256",
            "fused-moe-k_2-bt_32_32-bf_512_256-bd1_512_256-bd2_512_256.1",
        )],
    ),
    (
        "rpa_v3",
        &[
            ("RPAd-p_16-bq_1_1-bkv_256_256", "RPAd-p_16-bq_1_1-bkv_256_256.1"),
            ("RPAm-p_16-bq_32_16-bkv_128_64", "RPAm-p_16-bq_32_16-bkv_128_64.1"),
        ],
    ),
    (
        "gmm_v2",
        &[(
            "gmm_v2-g_16-m_128-k_512-act_None-n_512-tm_128-tk_512-tn_512",
            "gmm_v2-g_16-m_128-k_512-act_None-n_512-tm_128-tk_512-tn_512.1",
        )],
    ),
    ("quantized_matmul_int8", &[("matmul_kernel", "quantized_matmul_kernel_128_128_128.1")]),
    ("quantized_matmul_fp8", &[("matmul_kernel", "quantized_matmul_kernel_128_128_128.1")]),
    ("quantized_matmul_blockwise_fp8", &[("kernel", "quantized_matmul_kernel_128_128_128.1")]),
    ("mla_v1", &[("MLA-RPA-bq_8-bkvp_8-p_16", "MLA-RPA-bq_8-bkvp_8-p_16.1")]),
];
const TPU_INFERENCE_TARGETS: &[&str] = &["tpu7x", "v6e"];

#[test]
fn tpu_inference_manifest_has_every_version_on_every_target() {
    let m =
        manifest_with_every_version_ok(&tpu_inference(), TPU_INFERENCE.iter().map(|(v, _)| *v), TPU_INFERENCE_TARGETS);
    assert_eq!(m.trimmed.as_ref().map(|t| &t["by"]), Some(&json!("scripts/trim_fixtures.py")));
    // the fused MoE builds its own shard_map over a (data, model) mesh (examples/tpu_inference MESH)
    for r in &m.results {
        let want = (r.version == "fused_moe_v1").then(|| (json!(["data", "model"]), json!([1, 1])));
        assert_eq!(mesh(r), want, "{r:?}");
    }
}

/// Every folder parses; each kernel is found in the HLO (decoded) and in its own Mosaic post-deserialization dump
/// (kept on both targets: the DMA analyses read the kernel as written), and linked to its LLO final bundles.
#[test]
fn tpu_inference_every_folder_parses_and_finds_its_kernels() {
    let mut failures = Vec::new();
    for (version, kernels) in TPU_INFERENCE {
        for target in TPU_INFERENCE_TARGETS {
            let name = format!("{version}@{target}");
            let (code, v) = run_none(&tpu_inference().join(&name));
            let errors = v["errors"].as_array().unwrap();
            if code != 0 || !errors.is_empty() {
                failures.push(format!("{name}: exit {code}, errors {errors:?}"));
            }
            let files = v["files"].as_array().unwrap();
            let in_files = |pred: &dyn Fn(&str) -> bool| -> BTreeSet<String> {
                files
                    .iter()
                    .filter(|f| f["path"].as_str().is_some_and(pred))
                    .flat_map(|f| f["kernels"].as_array().into_iter().flatten())
                    .filter_map(|k| k["name"].as_str().map(String::from))
                    .collect()
            };
            let decoded = in_files(&|p| p.ends_with("after_optimizations.txt"));
            let dumped = in_files(&|p| p.ends_with("-post-deserialization.txt"));
            let linked: Vec<&Value> = v["linked"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|l| l["items"].as_array().into_iter().flatten())
                .collect();
            for (func, call) in *kernels {
                if !decoded.contains(*func) {
                    failures.push(format!("{name}: @{func} not decoded from the HLO (found {decoded:?})"));
                }
                if !dumped.contains(*func) {
                    failures
                        .push(format!("{name}: @{func} has no Mosaic post-deserialization dump (found {dumped:?})"));
                }
                let ok = linked.iter().any(|i| {
                    i["kind"] == "kernel" && i["name"] == *call && i["kernel"] == *func && i["llo_file"].is_string()
                });
                if !ok {
                    failures.push(format!("{name}: {call} (@{func}) not linked to its LLO final_bundles"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
