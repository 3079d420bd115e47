//! Snapshots of what `hlolint` shows on the project's own driver-made dumps (fixtures/): every layer of one kernel
//! version, linked by name — the HLO custom call with its decoded kernel, the Mosaic kernel, the LLO MXU ops.

fn summary(rel: &str) -> String {
    let out = crate::common::hlolint()
        .args(["--summary", "--rules", "none", rel])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn v3_on_tpu7x_native_fp8_manual_dma_smem_scales() {
    let s = summary("fixtures/fp8_matmul_2d/tpu7x+v6e/v3@tpu7x");
    // The facts the user's checklist asks for, visible in the summary.
    assert!(s.contains("MXU matmuls: f8e4m3fn"), "native fp8 on tpu7x");
    assert!(s.contains("scalar prefetch 0 memref<4x4xf32, #tpu.memory_space<smem>> in smem"), "scales in SMEM");
    assert!(s.contains("scratch 0 memref<2x128x128xf8E4M3FN"), "2-slot buffers");
    insta::assert_snapshot!(s);
}

#[test]
fn v1_on_v6e_fp8_emulated_through_bf16() {
    let s = summary("fixtures/fp8_matmul_2d/tpu7x+v6e/v1@v6e");
    assert!(s.contains("f8e4m3b11.bf16"), "v6e widens fp8 to bf16 for the MXU");
    insta::assert_snapshot!(s);
}

#[test]
fn bug_upcast_on_tpu7x_runs_bf16_on_the_mxu() {
    let s = summary("fixtures/fp8_matmul_2d/tpu7x+v6e/bug_upcast@tpu7x");
    assert!(s.contains("MXU matmuls: bf16"));
    assert!(!s.contains("MXU matmuls: f8e4m3fn"));
    insta::assert_snapshot!(s);
}
