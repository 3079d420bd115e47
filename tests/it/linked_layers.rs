//! Linking the layers of one compilation by name: HLO custom call / fusion ↔ Mosaic kernel ↔ LLO computation.
//! On the corpus, DESIGN.md §3's ground truth: the same fp8 dot is native on tpu7x, f32 on v6e and v5e, and the
//! user's upcast runs bf16 even on tpu7x; jax's Pallas matmul kernel is found in all three layers.

use crate::common;

use serde_json::Value;

fn linked(path: &str) -> Value {
    let out = crate::common::hlolint().args(["--format", "json", "--rules", "none", path]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["linked"].clone()
}

fn item<'v>(groups: &'v Value, name: &str) -> &'v Value {
    groups
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["items"].as_array().unwrap())
        .find(|i| i["name"] == name)
        .unwrap_or_else(|| panic!("no linked item {name} in {groups:#}"))
}

#[test]
fn fp8_dot_mxu_format_per_generation() {
    let Some(dir) = common::corpus() else { return };
    for (case, format) in [
        ("fp8_dot@tpu7x", "f8e4m3fn"),
        ("fp8_dot@v6e", "f32"),
        ("fp8_dot@v5e", "f32"),
        ("fp8_dot_upcast@tpu7x", "bf16"),
    ] {
        let g = linked(&dir.join(case).to_string_lossy());
        let fusion = item(&g, "fusion");
        let mxu = fusion["mxu"].as_object().unwrap();
        assert_eq!(mxu.keys().collect::<Vec<_>>(), vec![format], "{case}");
    }
}

#[test]
fn pallas_matmul_kernel_in_every_layer() {
    let Some(dir) = common::corpus() else { return };
    for target in ["tpu7x", "v6e", "v5e"] {
        let g = linked(&dir.join(format!("pallas_matmul@{target}")).to_string_lossy());
        let k = item(&g, "matmul.1");
        assert_eq!(k["kind"], "kernel");
        assert_eq!(k["kernel"], "matmul_kernel");
        assert_eq!(k["decoded_from_hlo"], true);
        assert_eq!(k["mosaic_stages"], serde_json::json!(["post-deserialization", "post-finalize-llo"]));
        assert_eq!(k["mxu"].as_object().unwrap().keys().collect::<Vec<_>>(), vec!["bf16"], "{target}");
    }
}

/// The user's guide workflow: `hlolint compilation_output/*_hlo.txt` reads each version's sibling dumps.
#[test]
fn version_hlo_files_bring_their_sibling_dumps() {
    let root = env!("CARGO_MANIFEST_DIR");
    let g = linked(&format!("{root}/fixtures/fp8_matmul_2d/tpu7x+v6e/v3@tpu7x_hlo.txt"));
    let k = item(&g, "fp8_mm_v3.1");
    assert_eq!(k["kernel"], "fp8_mm_v3");
    assert!(k["llo_file"].as_str().unwrap().ends_with("fp8_mm_v3.1-03-final_bundles.txt"));
    assert_eq!(k["mxu"]["f8e4m3fn"], 2, "native fp8 on tpu7x");
    assert_eq!(k["dma_routes"]["vmem_to_smem"], 2, "the scales are copied into SMEM");
    let g = linked(&format!("{root}/fixtures/fp8_matmul_2d/tpu7x+v6e/v3@v6e_hlo.txt"));
    assert_eq!(item(&g, "fp8_mm_v3.1")["mxu"]["f8e4m3b11.bf16"], 2, "v6e widens fp8 to bf16");
}

/// From the StableHLO alone (what `jax.jit(f).lower(...).as_text()` writes), the kernel inside the custom call.
#[test]
fn stablehlo_alone_shows_the_kernel() {
    let root = env!("CARGO_MANIFEST_DIR");
    let out = crate::common::hlolint()
        .args(["--format", "json", &format!("{root}/fixtures/fp8_matmul_2d/tpu7x+v6e/v3@tpu7x/stablehlo.mlir")])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let k = &v["files"][0]["call_kernels"][0];
    assert_eq!(k["name"], "fp8_mm_v3");
    assert_eq!(k["grid"], serde_json::json!([4, 4]));
    let smem: Vec<&Value> = k["args"].as_array().unwrap().iter().filter(|a| a["memory_space"] == "smem").collect();
    assert_eq!(smem.len(), 2, "the two scale operands are scalar-prefetched into SMEM");
    assert_eq!(k["matmuls"][0], "tpu.matmul f8e4m3fn×f8e4m3fn→f32");
    assert_eq!(k["dma_starts"], 4);
    if let Some(dir) = common::corpus() {
        let out = crate::common::hlolint()
            .args(["--format", "json", &dir.join("pallas_matmul@tpu7x/stablehlo.mlir").to_string_lossy()])
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let k = &v["files"][0]["call_kernels"][0];
        assert_eq!(k["grid"], serde_json::json!([4, 4, 8]));
        assert_eq!(k["matmuls"][0], "tpu.matmul bf16×bf16→f32");
    }
}
