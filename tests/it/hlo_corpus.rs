//! Conformance over the real dumps in ../shared/corpus: every HLO file parses, and the facts DESIGN.md states about
//! them hold in the graph. Skipped with a notice when the corpus is absent.

use crate::common;

use hlolint::ir::{DType, Module};
use hlolint::parse::hlo::{looks_like_hlo, parse_hlo};

fn load(rel: &str) -> Option<String> {
    let dir = common::corpus()?;
    let path = common::files_where(&dir.join(rel), |h| h.starts_with("HloModule"))
        .into_iter()
        .find(|p| p.to_string_lossy().ends_with("after_optimizations.txt"))?;
    std::fs::read_to_string(path).ok()
}

#[test]
fn every_corpus_hlo_file_parses() {
    let Some(dir) = common::corpus() else { return };
    let files = common::files_where(&dir, looks_like_hlo);
    assert!(files.len() >= 30, "expected the corpus HLO files, found {}", files.len());
    let mut instructions = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let m = parse_hlo(&f.to_string_lossy(), &text).unwrap_or_else(|e| panic!("{:?}", miette::Report::new(e)));
        assert!(m.entry.is_some());
        instructions += m.ops.len();
    }
    println!("{} corpus HLO files, {instructions} instructions", files.len());
}

#[test]
fn transformer24_has_the_size_users_have() {
    let Some(text) = load("transformer24@v5e/hlo") else { return };
    let m = parse_hlo("t24", &text).unwrap();
    assert_eq!(m.ops.len(), 48629);
    assert!(m.scheduled);
    let s = hlolint::summary::summarize(&m, &[]);
    assert!(
        s.unmatched_starts.is_empty() && s.orphan_dones.is_empty(),
        "{:?} {:?}",
        s.unmatched_starts,
        s.orphan_dones
    );
    assert!(s.async_pairs.values().sum::<usize>() > 100);
}

#[test]
fn pallas_kernel_is_one_custom_call_fed_by_vmem_copies() {
    let Some(text) = load("pallas_matmul@tpu7x/hlo") else { return };
    let m = parse_hlo("pm", &text).unwrap();
    let kernel = m.op_ids().find(|&i| m.custom_call_target(i).as_deref() == Some("tpu_custom_call")).unwrap();
    let bc = m.backend_config(kernel).unwrap();
    assert!(bc["custom_call_config"]["body"].as_str().unwrap().starts_with("TUzvUg"), "base64 of ML\\xefR");
    for src in m.operand_ops(kernel) {
        assert_eq!(m.op(src).opcode, "copy-done");
        assert_eq!(m.op(src).shape().unwrap().memory_space(), Some(1), "operands were placed in VMEM");
    }
    let stack = m.source_stack(kernel);
    assert!(stack[0].file.ends_with("pallas/ops/tpu/matmul.py"), "{stack:?}");
}

/// DESIGN.md §3: the user's upcast hides a level down — the convolution (inside the kOutput fusion) reads
/// `%fusion.1`, a kLoop fusion whose called computation's ROOT is a convert from f8e4m3fn to bf16.
#[test]
fn fp8_upcast_is_visible_through_the_fusion_root() {
    let Some(text) = load("fp8_dot_upcast@tpu7x/hlo") else { return };
    let m: Module = parse_hlo("up", &text).unwrap();
    let conv = m.op_ids().find(|&i| m.op(i).opcode == "convolution").expect("a convolution");
    let upcasts: Vec<String> = m
        .operand_ops(conv)
        .flat_map(|src| m.op(src).calls.iter().filter_map(|c| m.root(c.func)).collect::<Vec<_>>())
        .filter(|&root| m.op(root).opcode == "convert")
        .map(|root| {
            let from = m.operand_ops(root).next().and_then(|o| m.op(o).shape()?.dtype()).unwrap();
            format!("{} {}->{}", m.op(root).name, from, m.op(root).shape().unwrap().dtype().unwrap())
        })
        .collect();
    assert_eq!(upcasts, vec!["convert.2 f8e4m3fn->bf16"]);
    let _ = DType::F8E4M3FN;
}
