//! Conformance on the real dumps in `../shared/corpus` (skipped with a notice when the folder is absent): every
//! `stablehlo.mlir` and every Mosaic stage parses, and the facts rules depend on are there.

use crate::common;
use common::corpus;
use hlolint::ir::{DType, Def, Layer, Module};
use hlolint::parse::mlir::{looks_like_mlir, parse_mlir};
use hlolint::semantic::kernel::{self, ArgRole};
use std::path::{Path, PathBuf};

/// Every MLIR file of the corpus: `*/stablehlo.mlir` and `*/mosaic/*.txt`.
fn files(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for case in std::fs::read_dir(root).into_iter().flatten().flatten() {
        let c = case.path();
        let s = c.join("stablehlo.mlir");
        if s.is_file() {
            out.push(s);
        }
        for f in std::fs::read_dir(c.join("mosaic")).into_iter().flatten().flatten() {
            if f.path().extension().is_some_and(|e| e == "txt") {
                out.push(f.path());
            }
        }
    }
    out.sort();
    out
}

fn parse<'a>(path: &Path, text: &'a str) -> Module<'a> {
    match parse_mlir(&path.display().to_string(), text) {
        Ok(m) => m,
        Err(e) => panic!("{}: {:?}", path.display(), miette::Report::new(e)),
    }
}

#[test]
fn every_mlir_file_parses() {
    let Some(root) = corpus() else { return };
    let files = files(&root);
    assert!(!files.is_empty(), "no MLIR files under {}", root.display());
    let mut bytes = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        assert!(looks_like_mlir(&text), "{} not sniffed as MLIR", f.display());
        let m = parse(f, &text);
        bytes += text.len();
        let want = if f.to_string_lossy().contains("/mosaic/") { Layer::Mosaic } else { Layer::StableHlo };
        assert_eq!(m.layer, want, "{}", f.display());
        // every use resolves
        for op in &m.ops {
            for o in &op.operands {
                assert_ne!(o.def, Def::Unresolved, "{}: unresolved %{} in {}", f.display(), o.name, op.opcode);
            }
        }
        assert!(m.entry.is_some(), "{}", f.display());
        // every op with results has a type, except where the text states none (`llo.seq.s32 %a, %b`)
        for op in &m.ops {
            if op.result_count > 0 && text[op.span.range()].contains(" : ") {
                assert!(op.ty.mlir().is_some(), "{}: untyped result of {}", f.display(), op.opcode);
            }
        }
    }
    eprintln!("parsed {} MLIR files, {} bytes", files.len(), bytes);
}

#[test]
fn pallas_matmul_stablehlo_has_the_custom_call() {
    let Some(root) = corpus() else { return };
    let p = root.join("pallas_matmul@tpu7x/stablehlo.mlir");
    let text = std::fs::read_to_string(&p).unwrap();
    let m = parse(&p, &text);
    let cc: Vec<_> = m.ops.iter().filter(|o| o.opcode == "stablehlo.custom_call").collect();
    assert_eq!(cc.len(), 1);
    assert_eq!(cc[0].attr("call_target_name").and_then(|v| v.word()), Some("@tpu_custom_call"));
    let cfg = cc[0].attr("backend_config").and_then(hlolint::parse::mlir::attr::string).unwrap();
    assert!(cfg.contains("\"custom_call_config\""), "backend_config JSON decoded");
    // `call @matmul` links to the private function
    let main = m.func_by_name("main").unwrap();
    let callee = m.func_by_name("matmul").unwrap();
    assert!(m.func(main).is_entry);
    assert_eq!(m.func(callee).callers.len(), 1);
}

#[test]
fn fp8_dot_stablehlo_dot_general_reads_f8() {
    let Some(root) = corpus() else { return };
    let p = root.join("fp8_dot@tpu7x/stablehlo.mlir");
    let text = std::fs::read_to_string(&p).unwrap();
    let m = parse(&p, &text);
    let mm = kernel::matmuls(&m, m.entry.unwrap());
    assert_eq!(mm.len(), 1);
    assert_eq!((mm[0].lhs, mm[0].rhs, mm[0].result), (Some(DType::F8E4M3FN), Some(DType::F8E4M3FN), Some(DType::F32)));
    let dot = m.op(mm[0].op);
    assert!(dot.attr("contracting_dims").is_some());
}

#[test]
fn pallas_matmul_mosaic_kernel_view() {
    let Some(root) = corpus() else { return };
    for target in ["tpu7x", "v6e", "v5e"] {
        let dir = root.join(format!("pallas_matmul@{target}/mosaic"));
        let Ok(rd) = std::fs::read_dir(&dir) else { continue };
        let mut stages: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
        stages.sort();
        for p in stages {
            let text = std::fs::read_to_string(&p).unwrap();
            let m = parse(&p, &text);
            let ks = kernel::kernels(&m);
            assert_eq!(ks.len(), 1, "{}", p.display());
            let k = &ks[0];
            assert_eq!(k.name, "matmul_kernel");
            assert_eq!(k.iteration_bounds, vec![4, 4, 8]);
            assert_eq!(k.dimension_semantics, vec!["parallel", "parallel", "arbitrary"]);
            assert_eq!(k.window_params.len(), 3);
            assert_eq!(k.window_params[0].window_bounds, Some(vec![512, 256]));
            assert_eq!(k.window_params[0].transform, Some("transform_0"));
            assert_eq!(k.scratch_operands, 1);
            let roles: Vec<ArgRole> = k.args.iter().map(|a| a.role).collect();
            assert_eq!(
                roles,
                vec![
                    ArgRole::GridIndex(0),
                    ArgRole::GridIndex(1),
                    ArgRole::GridIndex(2),
                    ArgRole::Window(0),
                    ArgRole::Window(1),
                    ArgRole::Window(2),
                    ArgRole::Scratch(0)
                ]
            );
            for a in &k.args[3..] {
                assert_eq!(a.memory_space, Some("vmem"), "{}: {}", p.display(), a.name);
                assert!(a.ty.as_ref().is_some_and(|t| t.is_memref()));
            }
            assert_eq!(k.args[3].ty.as_ref().and_then(|t| t.dtype()), Some(DType::BF16));
            assert_eq!(k.args[6].ty.as_ref().and_then(|t| t.dtype()), Some(DType::F32));
            let stage = p.file_name().unwrap().to_string_lossy().to_string();
            if stage.contains("finalize-llo") {
                // the LLO dialect: vmatmul with a data format
                assert!(
                    k.matmuls.iter().any(|mm| mm.opcode.starts_with("llo.vmatmul") && mm.data_format == Some("bf16")),
                    "{stage}"
                );
            } else {
                let tm: Vec<_> = k.matmuls.iter().filter(|mm| mm.opcode == "tpu.matmul").collect();
                assert!(!tm.is_empty(), "{stage}");
                for mm in tm {
                    assert_eq!(
                        (mm.lhs, mm.rhs, mm.acc),
                        (Some(DType::BF16), Some(DType::BF16), Some(DType::F32)),
                        "{stage}"
                    );
                }
                // the output window is written, the inputs read
                assert!(k.args[5].written, "{stage}: out written");
                assert!(k.args[3].read && !k.args[3].written, "{stage}: x read, not written");
                assert!(k.args[6].read && k.args[6].written, "{stage}: the accumulator scratch is read and written");
            }
            assert!(k.conditionals.iter().any(|c| c.opcode == "scf.if"), "{stage}");
            assert!(k.dma_starts.is_empty() && k.dma_waits.is_empty());
        }
    }
}
