use super::decision::widened_to_int8;
use super::requests::family;
use super::*;
use crate::analysis::crosslink::sweep::{self, Found};
use crate::analysis::data_format::{data_format_reads, data_format_wide, is_f8_data_format, LloFormat};
use crate::analysis::At;
use crate::ir::DType;
use crate::semantic::llo;

fn hits(path: &std::path::Path) -> Vec<Found> {
    sweep::run(path, run, &Options::new())
}

fn kind(f: &Found) -> &str {
    f.hit.captures.get("kind").map(String::as_str).unwrap_or("")
}

#[test]
fn no_panic_on_any_test_input() {
    assert!(sweep::all_test_data(run) > 0, "the invalid cases among the inputs hit");
}

#[test]
fn invalid_cases_hit_and_valid_cases_do_not() {
    sweep::assert_case_verdicts(NAME, run, CAPTURES);
}

#[test]
fn a_fusion_dot_on_v6e_is_reported_at_the_dot_with_the_llo_format() {
    let h = hits(&sweep::case(NAME, "invalid", "fusion_dot@v6e"));
    assert_eq!(h.len(), 1, "once per matmul, not again from the LLO unit");
    let f = &h[0];
    assert_eq!(f.layer, "hlo");
    assert_eq!(kind(f), "emulated");
    assert_eq!(f.hit.captures["target"], "v6e");
    assert_eq!(f.hit.captures["mxu_format"], "f32");
    assert_eq!(f.hit.captures["native_on"], "tpu7x");
    let d = &f.hit.captures["detail"];
    assert!(d.contains("`convolution.1`") && d.contains("fusion `fusion`") && d.contains("f8e4m3fn × f8e4m3fn"), "{d}");
    assert!(
        d.contains("emulated on v6e: the MXU gets f32 (vmatmul.mubr.f32 ×2)") && d.contains("natively on tpu7x"),
        "{d}"
    );
    assert!(f.hit.related.iter().any(|r| r == "LLO `fusion`: vmatmul.mubr.f32 ×2"), "{:?}", f.hit.related);
    assert_eq!(f.hit.labels.len(), 1, "a label on the fusion that runs as the LLO computation");
    assert!(f.hit.labels[0].text.contains("LLO computation `fusion`"));
}

#[test]
fn the_lowest_layer_decides_over_the_target() {
    // The fusion's LLO shows an f32 MXU: on a target said to be tpu7x, the native format is missing.
    let p = sweep::case(NAME, "invalid", "fusion_dot@v6e");
    let h = sweep::run_with(&p, run, &Options::new(), Some("tpu7x"));
    assert_eq!(h.len(), 1);
    assert_eq!(kind(&h[0]), "native-format-missing");
    assert!(h[0].hit.captures["detail"].contains("tpu7x runs fp8 natively, but the MXU gets f32"));
    // Native f8e4m3fn in the LLO: nothing to say even when told the target is v6e.
    let p = sweep::case(NAME, "valid", "fusion_dot@tpu7x");
    assert!(sweep::run_with(&p, run, &Options::new(), Some("v6e")).is_empty());
}

#[test]
fn without_lower_layers_the_target_decides() {
    let h = hits(&sweep::case(NAME, "invalid", "pallas_call@v5e"));
    assert_eq!(h.len(), 1);
    let d = &h[0].hit.captures["detail"];
    assert!(d.contains("Pallas kernel `fp8_mm.1` (@fp8_mm)") && d.contains("v5e") && d.contains("no fp8 MXU"), "{d}");
    assert!(h[0].hit.related.iter().any(|r| r.contains("tpu.matmul f8e4m3fn × f8e4m3fn")), "{:?}", h[0].hit.related);
    // The same kernel on tpu7x: native, nothing to say.
    let p = sweep::case(NAME, "invalid", "pallas_call@v5e");
    assert!(sweep::run_with(&p, run, &Options::new(), Some("tpu7x")).is_empty());
    // StableHLO alone.
    let h = hits(&sweep::case(NAME, "invalid", "stablehlo_dot@v6e"));
    assert_eq!((h.len(), h[0].layer), (1, "stablehlo"));
}

#[test]
fn an_unknown_target_is_silent_unless_required() {
    let p = sweep::case(NAME, "valid", "fp8_dot_unknown_target.hlo.txt");
    assert!(hits(&p).is_empty());
    let mut opts = Options::new();
    opts.insert("require_target".into(), serde_json::Value::Bool(true));
    let h = sweep::run(&p, run, &opts);
    assert_eq!(h.len(), 1);
    assert_eq!(kind(&h[0]), "unknown-target");
    assert_eq!(h[0].hit.captures["target"], "unknown");
}

#[test]
fn lower_layers_alone_report_when_they_prove_an_fp8_request() {
    let h = hits(&sweep::case(NAME, "invalid", "1795-fp8_llo.1-03-final_bundles.txt"));
    assert_eq!((h.len(), h[0].layer), (1, "llo"));
    assert_eq!(h[0].hit.captures["mxu_format"], "f8e4m3b11.bf16");
    assert!(h[0].hit.captures["detail"].contains("the MXU gets bf16 (vmatmul.mubr.msk.f8e4m3b11.bf16 ×2)"));
    let h = hits(&sweep::case(NAME, "invalid", "1795-0018-mosaic-dump-fp8_mm-post-finalize-llo.txt"));
    assert_eq!((h.len(), h[0].layer), (1, "mosaic"));
    assert_eq!(h[0].hit.captures["mxu_format"], "e4m3b_to_bf16");
    // An f32 MXU op alone proves no fp8 request.
    assert!(hits(&sweep::case(NAME, "valid", "1795-matmul.1-03-final_bundles.txt")).is_empty());
}

#[test]
fn the_same_module_twice_reports_once() {
    use crate::analysis::crosslink::testutil;
    use crate::lint::compilation::source_file;
    let dir = sweep::case(NAME, "invalid", "fusion_dot@v6e");
    let mut files = testutil::dir_files(&dir);
    let hlo =
        files.iter().find(|f| f.path.ends_with("after_optimizations.txt")).map(|f| f.text.clone()).unwrap_or_default();
    files.push(source_file(&format!("{}/llo/1-TLP-hlo.txt", dir.display()), &hlo));
    files.push(source_file(&format!("{}_hlo.txt", dir.display()), &hlo));
    let parsed = testutil::parse(&files);
    let c = Compilation::new(dir.display().to_string(), &parsed, None);
    let all: Vec<(usize, Hit)> =
        (0..c.units.len()).flat_map(|i| run(&c, i, &Options::new()).into_iter().map(move |h| (i, h))).collect();
    assert_eq!(all.len(), 1);
    let At::Op { unit, .. } = all[0].1.at else { panic!("an op") };
    assert!(c.units[unit].path.ends_with("module.after_optimizations.txt"), "the HLO dump, not the LLO folder's copy");
}

#[test]
fn mxu_formats() {
    assert!(llo::is_native_fp8_mnemonic("vmatmul.mubr.f8e4m3fn.vlgmr.msra.gmra.mrb[0].mxu0"));
    assert!(!llo::is_native_fp8_mnemonic("vmatmul.mubr.msk.f8e4m3b11.bf16.gmra.mxu0"));
    assert!(!llo::is_native_fp8_mnemonic("vmatmul.mubr.f32.gmra.mxu0") && !llo::is_native_fp8_mnemonic("vmatmul.bf16"));
    assert!(is_f8_data_format("e4m3b") && is_f8_data_format("e4m3b_to_bf16") && !is_f8_data_format("bf16"));
    assert_eq!(data_format_wide("e4m3b_to_bf16"), Some("bf16"));
}

fn narrow_hits(path: &std::path::Path) -> Vec<Found> {
    sweep::run(path, run_narrow, &Options::new())
}

#[test]
fn integer_families_from_the_lowest_layer() {
    let case = |rule: &str, kind: &str, name: &str| {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/rules").join(rule).join(kind);
        narrow_hits(&p.join(name))
    };
    // tpu7x: int8 widened to bf16 (Pallas) or f32 (XLA), int4 carried as fp8
    for (name, narrow, wide) in [
        ("pallas_int8@tpu7x", "int8", "the MXU gets bf16 (vmatmul.mubr.bf16 ×16)"),
        ("dot_int8@tpu7x", "int8", "the MXU gets f32 (vmatmul.mubr.f32"),
        ("pallas_int4@tpu7x", "int4", "the MXU gets f8e4m3fn (vmatmul.mubr.f8e4m3fn"),
    ] {
        let h = case("int-widened", "invalid", name);
        assert_eq!(h.len(), 1, "{name}");
        let c = &h[0].hit.captures;
        assert_eq!((c["narrow"].as_str(), c["kind"].as_str()), (narrow, "emulated"), "{name}");
        assert!(c["detail"].contains(&format!("{narrow} requested but widened on tpu7x")), "{}", c["detail"]);
        assert!(c["detail"].contains(wide) && c["detail"].ends_with("natively on v6e, v5e, v5p"), "{}", c["detail"]);
    }
    // v6e has s4, but the XLA dot gets s8
    let h = case("int-widened", "invalid", "dot_int4@v6e");
    assert_eq!(h[0].hit.captures["kind"], "widened-to-int8");
    assert_eq!(h[0].hit.captures["mxu_format"], "s8");
    // the Mosaic dump alone: the table
    let h = case("int-widened", "invalid", "kernel_int8@tpu7x");
    assert_eq!((h.len(), h[0].layer), (1, "mosaic"));
    assert!(h[0].hit.captures["detail"].contains("tpu7x (from the dump folder's name) has no int8 MXU"));
    // native s8/s4, an upcast in the kernel, an fp8 kernel through the narrow analysis gives fp8 only
    for name in ["pallas_int8@v6e", "dot_int8@v5e", "pallas_int4@v6e", "pallas_int8_upcast@tpu7x"] {
        assert!(case("int-widened", "valid", name).is_empty(), "{name}");
    }
    let h = case("int-widened", "valid", "pallas_fp8@v6e");
    assert_eq!((h.len(), h[0].hit.captures["narrow"].as_str()), (1, "fp8"));
    // a generation with int8 whose MXU got f32
    let h = case("int-not-native", "invalid", "dot_int8_f32_mxu@v6e");
    assert_eq!(h[0].hit.captures["kind"], "native-format-missing");
    // the fp8 entry point ignores integer matmuls
    let p =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/rules/int-widened/invalid/pallas_int8@tpu7x");
    assert!(hits(&p).is_empty());
}

#[test]
fn formats_per_family() {
    let f = |dtypes: Vec<DType>| LloFormat {
        shown: String::new(),
        format: String::new(),
        count: 1,
        native: false,
        wide: None,
        dtypes,
    };
    assert!(f(vec![DType::S8]).native_for(Narrow::Int8));
    assert!(!f(vec![DType::S8]).native_for(Narrow::Int4));
    assert_eq!(f(vec![DType::S8]).wide_for(Narrow::Int4), Some("s8"));
    assert!(f(vec![DType::F8E5M2]).native_for(Narrow::Fp8));
    assert_eq!(f(vec![DType::F8E5M2, DType::BF16]).wide_for(Narrow::Fp8), Some("bf16"));
    assert!(data_format_reads("s8", Narrow::Int8) && data_format_reads("s4", Narrow::Int4));
    assert!(!data_format_reads("bf16", Narrow::Int8) && !data_format_reads("e4m3b", Narrow::Int4));
    assert!(data_format_reads("f8e5m2_to_bf16", Narrow::Fp8) && data_format_reads("e4m3b", Narrow::Fp8));
    assert!(widened_to_int8(Narrow::Int4, "s8") && !widened_to_int8(Narrow::Int4, "f32"));
    assert!(!widened_to_int8(Narrow::Int8, "s8"));
    assert_eq!(family(Some(DType::S8), Some(DType::U8)), Some(Narrow::Int8));
    assert_eq!(family(Some(DType::S8), Some(DType::S4)), None);
    assert_eq!(family(Some(DType::F8E4M3FN), Some(DType::F8E5M2)), Some(Narrow::Fp8));
}

/// Project fixtures: tpu7x runs every version natively; on v6e and v5e every fp8 version is emulated, and
/// bug_upcast (bf16 at the matmul) is not this analysis' finding.
#[test]
fn fixture_verdicts() {
    let dirs = sweep::fixture_dirs();
    assert!(dirs.len() >= 20);
    for (name, dir) in dirs {
        let (version, target) = name.split_once('@').unwrap_or((&name, ""));
        let h = hits(&dir);
        let expect = match (version, target) {
            ("bug_upcast", _) | (_, "tpu7x") => 0,
            _ => 1,
        };
        assert_eq!(h.len(), expect, "{name}: {:?}", h.iter().map(|f| &f.hit.captures["detail"]).collect::<Vec<_>>());
        for f in &h {
            assert_eq!(f.layer, "hlo", "{name}: reported at the custom call");
            assert_eq!(kind(f), "emulated");
            assert_eq!(f.hit.captures["target"], target);
            let d = &f.hit.captures["detail"];
            assert!(d.contains(&format!("`fp8_mm_{version}.1`")), "{name}: {d}");
            if target != "v4" {
                assert!(
                    d.contains(&format!("emulated on {target}: the MXU gets bf16")) && d.contains("f8e4m3b11.bf16"),
                    "{name}: {d}"
                );
                assert!(
                    f.hit.related.iter().any(|r| r.starts_with(&format!("LLO `fp8_mm_{version}.1`: vmatmul."))),
                    "{name}"
                );
                assert!(f.hit.related.iter().any(|r| r.contains("matmul_data_format<e4m3b_to_bf16>")), "{name}");
            }
        }
    }
}

#[test]
fn corpus_verdicts() {
    for (name, dir) in sweep::corpus_dirs() {
        let h = hits(&dir);
        let expect = usize::from(name == "fp8_dot@v6e" || name == "fp8_dot@v5e");
        assert_eq!(h.len(), expect, "{name}: {:?}", h.iter().map(|f| &f.hit.captures["detail"]).collect::<Vec<_>>());
        for f in &h {
            assert_eq!(f.hit.captures["mxu_format"], "f32", "{name}");
            assert!(f.hit.captures["detail"].contains("`convolution.1` (convolution in fusion `fusion`)"), "{name}");
        }
    }
}
