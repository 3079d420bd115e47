//! Corpus conformance: every LLO file under `../shared/corpus/*/llo/` parses, its content-sniffed kind agrees with
//! its file name, and the facts DESIGN.md §3 states hold. Skips (with a notice) when the corpus is absent.
//! `HLOLINT_LLO_SMALL=1` skips files over 1 MB (the transformer cases) for a quick run.

use crate::common;
use common::corpus;
use hlolint::parse::llo::args;
use hlolint::parse::llo::{llo_file_name, parse_llo, sniff_llo, LloFile, LloKind};
use hlolint::semantic::llo;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The files of one case's `llo/` folder, sorted.
fn llo_files(case: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(case.join("llo"))
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    v.sort();
    v
}

fn kind_from_name(stage: &str) -> Option<LloKind> {
    Some(match stage {
        "final_bundles" => LloKind::Bundles,
        "schedule-analysis_final_bundles" => LloKind::ScheduleAnalysis,
        "final_hlo-static-per-bundle-utilization" => LloKind::Utilization,
        "memory-space-assignment-bufferinfo" => LloKind::MsaBufferInfo,
        "memory-space-assignment-allocinfo" => LloKind::MsaAllocInfo,
        "memory-space-assignment-scheduleinfo" => LloKind::MsaScheduleInfo,
        _ => return None,
    })
}

#[test]
fn every_llo_file_parses() {
    let Some(root) = corpus() else { return };
    let small = std::env::var_os("HLOLINT_LLO_SMALL").is_some();
    let mut counts: BTreeMap<&'static str, (usize, usize)> = BTreeMap::new();
    let mut failures = Vec::new();
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&root).unwrap().filter_map(|e| e.ok().map(|e| e.path())).collect();
    cases.sort();
    let (mut ops, mut loops, mut unresolved, mut operands, mut depth_mismatch) =
        (0usize, 0usize, 0usize, 0usize, 0usize);
    for case in cases {
        for path in llo_files(&case) {
            let p = path.to_string_lossy().to_string();
            let Some(name) = llo_file_name(&p) else { continue };
            let expected = kind_from_name(name.stage);
            let meta = std::fs::metadata(&path).unwrap();
            if small && meta.len() > 1 << 20 {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let sniffed = sniff_llo(&text);
            if sniffed != expected {
                failures.push(format!("{p}: sniffed {sniffed:?}, name says {expected:?}"));
                continue;
            }
            let Some(kind) = expected else { continue };
            let e = counts.entry(kind.name()).or_default();
            e.0 += 1;
            match parse_llo(&p, &text) {
                Ok(f) => {
                    e.1 += 1;
                    if let LloFile::Bundles(prog) = &f {
                        ops += prog.module.ops.len();
                        loops += prog.loops.len();
                        for op in &prog.module.ops {
                            operands += op.operands.len();
                            unresolved += op.operands.iter().filter(|o| o.def == hlolint::ir::Def::Unresolved).count();
                        }
                        // The printed `>` depth agrees with the loop regions: an op printed at depth d sits in at
                        // least d loops (the converse does not hold: phis and the back-edge print no `>`).
                        for id in prog.module.op_ids() {
                            let op = prog.module.op(id);
                            let printed = op.attr("depth").and_then(|v| v.as_int()).unwrap_or(0) as usize;
                            let inside = llo::enclosing_loops(&prog.module, id).len();
                            if printed > inside {
                                depth_mismatch += 1;
                                if depth_mismatch <= 5 {
                                    eprintln!(
                                        "{p}: {} at {:?} prints depth {printed}, in {inside} loops",
                                        op.opcode,
                                        args::position(op)
                                    );
                                }
                            }
                        }
                        // Every LB bundle opened a loop.
                        let lb =
                            prog.bundles.iter().filter(|b| b.markers.split_whitespace().any(|m| m == "LB")).count();
                        if lb != prog.loops.len() {
                            failures.push(format!("{p}: {lb} LB bundles but {} loops", prog.loops.len()));
                        }
                    }
                    if let LloFile::Utilization(u) = &f {
                        if u.capacity.is_empty() || u.capacity.len() != u.units.len() {
                            failures.push(format!("{p}: no capacity row"));
                        }
                    }
                }
                Err(err) => failures.push(format!("{p}: {err} at {}", err.span.offset())),
            }
        }
    }
    eprintln!("LLO corpus: (files, parsed) per kind: {counts:?}");
    eprintln!("bundles: {ops} ops, {loops} loops, {operands} operands, {unresolved} unresolved, {depth_mismatch} ops printed deeper than their loops");
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
    assert_eq!(depth_mismatch, 0, "ops printed deeper than their enclosing loops");
    assert!(counts.get("llo bundles").is_some_and(|c| c.1 > 0));
}

/// The final_bundles program of the computation `comp` in case `case`.
fn with_program(case: &str, comp: &str, f: impl FnOnce(&hlolint::parse::llo::LloProgram<'_>)) -> bool {
    let Some(root) = corpus() else { return false };
    let dir = root.join(case);
    let path = llo_files(&dir)
        .into_iter()
        .find(|p| {
            let s = p.to_string_lossy();
            llo_file_name(&s).is_some_and(|n| n.computation == comp && n.stage == "final_bundles")
        })
        .unwrap_or_else(|| panic!("{case}: no final_bundles for {comp}"));
    let text = std::fs::read_to_string(&path).unwrap();
    let file = parse_llo(&path.to_string_lossy(), &text).unwrap();
    f(file.program().unwrap());
    true
}

fn formats(p: &hlolint::parse::llo::LloProgram<'_>) -> Vec<String> {
    llo::matmul_formats(&p.module).into_iter().map(|(f, _)| f.to_string()).collect()
}

fn has_matmul(p: &hlolint::parse::llo::LloProgram<'_>, prefix: &str) -> bool {
    llo::mxu_ops(&p.module).iter().any(|x| x.kind == llo::MxuKind::Matmul && x.mnemonic.starts_with(prefix))
}

#[test]
fn fp8_is_native_on_tpu7x_only() {
    with_program("fp8_dot@tpu7x", "fusion", |p| {
        eprintln!(
            "fp8_dot@tpu7x formats {:?}\n{}",
            llo::matmul_formats(&p.module),
            llo::summarize(p).lines().take(12).collect::<Vec<_>>().join("\n")
        );
        assert!(has_matmul(p, "vmatmul.mubr.f8e4m3fn"));
        assert!(llo::mxu_ops(&p.module).iter().any(|x| x.dtype.is_some_and(|d| d.is_f8())));
    });
    with_program("fp8_dot@v6e", "fusion", |p| {
        eprintln!("fp8_dot@v6e formats {:?}", llo::matmul_formats(&p.module));
        assert!(has_matmul(p, "vmatmul.mubr.f32"));
        assert!(!formats(p).iter().any(|f| f.starts_with("f8")));
        // Emulated: fp8 widened on the VPU before the f32 matmul.
        assert!(llo::conversions(&p.module).iter().any(|c| c.family == "vunpack" && c.dtype.is_f8()));
    });
    with_program("fp8_dot@v5e", "fusion", |p| {
        eprintln!("fp8_dot@v5e formats {:?}", llo::matmul_formats(&p.module));
        assert!(!formats(p).iter().any(|f| f.starts_with("f8")));
    });
    with_program("fp8_dot_upcast@tpu7x", "fusion", |p| {
        eprintln!("fp8_dot_upcast@tpu7x formats {:?}", llo::matmul_formats(&p.module));
        assert!(llo::mxu_ops(&p.module).iter().any(|x| x.kind == llo::MxuKind::Matmul && x.format == Some("bf16")));
        assert!(!formats(p).iter().any(|f| f.starts_with("f8")));
    });
}

#[test]
fn entry_bundle_and_dmas() {
    with_program("fp8_dot@tpu7x", "fusion", |p| {
        let e = llo::entry_info(&p.module);
        assert_eq!(e.name, Some("fusion"));
        let spaces: Vec<_> = e.operands.iter().map(|o| (o.index, o.space, o.element)).collect();
        eprintln!("fp8_dot@tpu7x entry operands {spaces:?}");
        assert_eq!(spaces[0], (Some(0), "vmem", Some("f8e4m3fn")));
        assert!(llo::dma_ops(&p.module).iter().any(|d| d.route == Some("hbm_to_vmem")));
        assert!(llo::dma_ops(&p.module).iter().any(|d| d.is_wait));
    });
    for target in ["tpu7x", "v6e", "v5e"] {
        with_program(&format!("pallas_matmul@{target}"), "matmul.1", |p| {
            let m = &p.module;
            let e = llo::entry_info(m);
            assert_eq!(e.custom_call(), Some("matmul.1"));
            let spaces: Vec<_> = e.operands.iter().map(|o| o.space).collect();
            let dmas = llo::dma_ops(m);
            let in_loop = dmas.iter().filter(|d| llo::in_loop(m, d.op)).count();
            eprintln!(
                "pallas_matmul@{target}: operands {spaces:?}, formats {:?}, {} loops, {} DMA ops ({} in loops), {} waits, {} syncs, {} smem loads",
                llo::matmul_formats(m),
                p.loops.len(),
                dmas.len(),
                in_loop,
                dmas.iter().filter(|d| d.is_wait).count(),
                llo::sync_ops(m).len(),
                llo::smem_loads(m).len()
            );
            assert!(!p.loops.is_empty(), "the grid loop");
            let inputs: Vec<_> = e.operands.iter().filter(|o| o.kind == Some("input")).map(|o| o.space).collect();
            assert_eq!(inputs.len(), 2);
            if target == "tpu7x" {
                // copy-start to S(1) before the custom call: the inputs arrive in VMEM (DESIGN.md §3).
                assert!(inputs.iter().all(|s| *s == "vmem"), "XLA placed the inputs in VMEM: {spaces:?}");
            } else {
                assert!(inputs.iter().all(|s| *s == "vmem" || *s == "hbm"), "{spaces:?}");
            }
            assert!(llo::matmul_formats(m).iter().any(|(f, _)| *f == "bf16"));
            assert!(in_loop > 0, "the pipeline's DMAs run inside the grid loop");
        });
    }
}

#[test]
fn utilization_has_capacity() {
    let Some(root) = corpus() else { return };
    let dir = root.join("fp8_dot@tpu7x");
    for path in llo_files(&dir) {
        let s = path.to_string_lossy().to_string();
        if !s.ends_with("final_hlo-static-per-bundle-utilization.txt") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let LloFile::Utilization(u) = parse_llo(&s, &text).unwrap() else { panic!("{s}") };
        assert_eq!(u.units.first(), Some(&"MXU"));
        assert_eq!(u.capacity.len(), u.units.len());
        if s.contains("-fusion-") {
            eprintln!(
                "fp8_dot@tpu7x fusion: capacity {:?}, {} bundles, MXU busy in {:?}",
                u.capacity,
                u.bundle_count(),
                u.busy_bundles("MXU")
            );
            assert!(u.total("MXU").unwrap_or(0) > 0);
        }
    }
}

/// A partial graph (what a lint run keeps when its rules read only MXU matmuls and the entry's operands) holds
/// exactly the whole graph's ops of those kinds, with the same names, spans, bundle positions, operands and
/// nesting in loops, and the same entry; on every bundle dump of the fixtures and, when present, the corpus.
#[test]
fn partial_graphs_keep_exactly_the_ops_they_say() {
    use hlolint::parse::llo::{parse_llo_keeping, Keep};
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let bundle_dumps = |dir: &Path| -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = walkdir::WalkDir::new(dir)
            .into_iter()
            .flatten()
            .map(|e| e.into_path())
            .filter(|p| p.to_string_lossy().ends_with("-final_bundles.txt"))
            .collect();
        v.sort();
        v
    };
    let mut files = bundle_dumps(&fixtures);
    if let Some(root) = corpus() {
        files.extend(bundle_dumps(&root));
    }
    let (mut checked, mut kept, mut whole) = (0usize, 0usize, 0usize);
    for path in files {
        let p = path.to_string_lossy().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        let Ok(LloFile::Bundles(full)) = parse_llo(&p, &text) else { continue };
        let part = match parse_llo_keeping(&p, &text, Keep::Only(llo::read_across_layers)) {
            Ok(LloFile::Bundles(part)) => part,
            _ => panic!("{p}: parses whole but not partially"),
        };
        assert!(part.partial && !full.partial && part.bundles.is_empty(), "{p}");
        let (fm, pm) = (&full.module, &part.module);
        let shown = |m: &hlolint::ir::Module<'_>, id: hlolint::ir::OpId| {
            let op = m.op(id);
            let loops: Vec<_> = llo::enclosing_loops(m, id).into_iter().map(|l| m.op(l).name).collect();
            let operands: Vec<_> = op.operands.iter().map(|o| (o.name, o.span)).collect();
            format!("{} {} {:?} {:?} {:?} {operands:?} {loops:?}", op.name, op.opcode, op.span, op.issue, op.attrs)
        };
        let expect: Vec<String> = fm
            .op_ids()
            .filter(|&id| fm.op(id).opcode != "loop" && llo::read_across_layers(fm.op(id).opcode))
            .map(|id| shown(fm, id))
            .collect();
        let got: Vec<String> = pm.op_ids().filter(|&id| pm.op(id).opcode != "loop").map(|id| shown(pm, id)).collect();
        assert_eq!(got, expect, "{p}");
        assert_eq!(part.loops.len(), full.loops.len(), "{p}");
        let entry = |m: &hlolint::ir::Module<'_>| {
            let e = llo::entry_info(m);
            let operands: Vec<String> = e
                .operands
                .iter()
                .map(|o| {
                    format!(
                        "{:?} {} {} {:?} {:?} {:?} {:?}",
                        m.op(o.op).span,
                        o.value,
                        o.space,
                        o.index,
                        o.kind,
                        o.element,
                        o.dims
                    )
                })
                .collect();
            format!("{:?} {:?} {:?} {operands:?}", e.hlo, e.name, e.opcode)
        };
        assert_eq!(entry(pm), entry(fm), "{p}");
        checked += 1;
        kept += got.len();
        whole += fm.ops.len();
    }
    eprintln!("{checked} bundle dumps: partial graphs keep {kept} of {whole} ops");
    assert!(checked >= 10 && kept > 0 && kept < whole);
}

/// A table dump read for a lint is checked and kept as its kind and row count: the same kind and rows as read whole.
#[test]
fn partial_reads_keep_a_table_as_its_kind_and_rows() {
    use hlolint::parse::llo::{parse_llo_keeping, Keep};
    let Some(root) = corpus() else { return };
    let (mut checked, mut rows) = (0, 0);
    for case in ["fp8_dot@tpu7x", "pallas_matmul@v6e"] {
        for path in llo_files(&root.join(case)) {
            let p = path.to_string_lossy().to_string();
            let text = std::fs::read_to_string(&path).unwrap();
            let Ok(whole) = parse_llo(&p, &text) else { continue };
            if whole.kind() == LloKind::Bundles {
                continue;
            }
            let part = parse_llo_keeping(&p, &text, Keep::Only(llo::read_across_layers)).unwrap();
            assert!(matches!(part, LloFile::Checked { .. }), "{p}");
            assert_eq!((part.kind(), part.rows()), (whole.kind(), whole.rows()), "{p}");
            checked += 1;
            rows += whole.rows();
        }
    }
    assert!(checked >= 4 && rows > 0, "{checked} tables, {rows} rows");
}
