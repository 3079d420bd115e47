//! Hand-written LLO samples (tests/data/llo): snapshot of what the parser and the typed views see, plus the
//! diagnostics bad input gets.

use hlolint::ir::Def;
use hlolint::parse::llo::args;
use hlolint::parse::llo::{parse_llo, sniff_llo, LloFile, LloKind};
use hlolint::semantic::llo;
use std::fmt::Write;

fn sample(name: &str) -> (String, String) {
    let path = format!("{}/tests/data/llo/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    (path, text)
}

#[test]
fn kernel_bundles_summary() {
    let (path, text) = sample("42-fp8_mm_v3.1-70-final_bundles.txt");
    let f = parse_llo(&path, &text).unwrap();
    let p = f.program().unwrap();
    insta::assert_snapshot!(llo::summarize(p));
}

#[test]
fn kernel_bundles_graph() {
    let (path, text) = sample("42-fp8_mm_v3.1-70-final_bundles.txt");
    let f = parse_llo(&path, &text).unwrap();
    let p = f.program().unwrap();
    let m = &p.module;
    assert_eq!(p.computation.as_deref(), Some("fp8_mm_v3.1"));
    let mut s = String::new();
    for id in m.op_ids() {
        let op = m.op(id);
        let depth = m.ancestors(id).count();
        let operands: Vec<String> = op
            .operands
            .iter()
            .map(|o| match o.def {
                Def::Op { op, .. } => format!("{}<-{}", o.name, m.op(op).opcode),
                _ => format!("{}?", o.name),
            })
            .collect();
        let pos = args::position(op).map(|(b, s)| format!("{b:#x}.{s}")).unwrap_or_else(|| "-".into());
        writeln!(
            s,
            "{}{pos} {} = {} [{}] users={}",
            "  ".repeat(depth),
            if op.name.is_empty() { "_" } else { op.name },
            op.opcode,
            operands.join(", "),
            op.users.len()
        )
        .unwrap();
    }
    insta::assert_snapshot!(s);
}

#[test]
fn kernel_views() {
    let (path, text) = sample("42-fp8_mm_v3.1-70-final_bundles.txt");
    let f = parse_llo(&path, &text).unwrap();
    let m = &f.program().unwrap().module;
    let e = llo::entry_info(m);
    assert_eq!(e.custom_call(), Some("fp8_mm_v3.1"));
    assert_eq!(e.operands_in("smem").count(), 1);
    assert_eq!(e.operands_in("vmem").map(|o| o.index).collect::<Vec<_>>(), [Some(0)]);
    assert_eq!(llo::matmul_formats(m), [("f8e4m3fn", 1)]);
    let dmas = llo::dma_ops(m);
    assert!(dmas.iter().any(|d| d.dst == Some("smem") && !d.is_wait));
    let start = dmas.iter().find(|d| d.route == Some("hbm_to_vmem")).unwrap();
    assert!(llo::in_loop(m, start.op));
    assert_eq!(start.flag.as_deref(), Some("#allocation3 + $0x1"));
    let loads = llo::smem_loads(m);
    assert_eq!(loads.len(), 1);
    assert!(llo::in_loop(m, loads[0].op));
    // The predicate of the DMA start.
    let p = args::predicate(m.op(start.op)).unwrap();
    assert_eq!((p.reg, p.negated), ("p9_p0", false));
    // Every op carries its bundle address and slot.
    assert!(m.ops.iter().filter(|o| o.opcode != "loop").all(|o| args::position(o).is_some()));
}

#[test]
fn tables() {
    let (path, text) = sample("42-fp8_mm_v3.1-69-schedule-analysis_final_bundles.txt");
    let LloFile::ScheduleAnalysis(s) = parse_llo(&path, &text).unwrap() else { panic!() };
    assert_eq!(s.total_bundles(), Some(19));
    assert_eq!(s.bundles_for("fp8_mm_v3.1"), Some(17.0));

    let (path, text) = sample("42-fp8_mm_v3.1-68-final_hlo-static-per-bundle-utilization.txt");
    let LloFile::Utilization(u) = parse_llo(&path, &text).unwrap() else { panic!() };
    assert_eq!(u.capacity.len(), u.units.len());
    assert_eq!(u.total("MXU"), Some(3));
    assert_eq!(u.busy_bundles("MXU"), Some(2));

    let (path, text) = sample("41-TLP-00-memory-space-assignment-bufferinfo.txt");
    let LloFile::MsaBufferInfo(b) = parse_llo(&path, &text).unwrap() else { panic!() };
    assert!(b[0].is_scoped);
    assert_eq!(b[2].uses().count(), 2);

    for (name, kind) in [
        ("41-TLP-01-memory-space-assignment-allocinfo.txt", LloKind::MsaAllocInfo),
        ("41-TLP-02-memory-space-assignment-scheduleinfo.txt", LloKind::MsaScheduleInfo),
    ] {
        let (path, text) = sample(name);
        assert_eq!(sniff_llo(&text), Some(kind));
        assert_eq!(parse_llo(&path, &text).unwrap().kind(), kind);
    }
}

/// jax's splash attention kernel compiled for tpu7x (trimmed: the kernel body shortened, fewer entries): XLA prints
/// the custom call's `kernel_metadata` frontend attribute as JSON over three lines.
#[test]
fn schedule_analysis_with_a_multi_line_entry() {
    let (path, text) = sample("43-TLP-02-schedule-analysis_final_bundles.txt");
    let LloFile::ScheduleAnalysis(s) = parse_llo(&path, &text).unwrap() else { panic!() };
    assert_eq!(s.total_bundles(), Some(260));
    let names: Vec<_> = s.entries.iter().map(|e| e.name).collect();
    assert_eq!(
        names,
        [None, Some("copy-start.4"), Some("splash_mha_fwd_no_residuals.1"), Some("copy-done.4"), Some("copy-done.3")]
    );
    let splash = &s.entries[2];
    assert_eq!(splash.bundles, 4.5);
    let hlo = splash.hlo.unwrap();
    assert_eq!(hlo.lines().count(), 3);
    assert!(hlo.ends_with(r#""aliasing_operands":{"lists":[]}}"#));
    // The entry's span covers its three lines.
    assert_eq!(splash.span.text(&text).lines().count(), 3);
    let opcodes: Vec<_> = s.by_opcode.iter().map(|o| (o.opcode, o.instances)).collect();
    assert_eq!(opcodes, [("copy-start", 5), ("copy-done", 5), ("custom-call", 1)]);

    // Cut inside the pretty-printed attribute: an error at the `{` still open, with its span; not a misread line.
    let cut = &text[..text.find("\"xprof_metadata").unwrap()];
    let open = cut.find("{kernel_metadata").unwrap();
    let e = parse_llo(&path, cut).unwrap_err();
    assert_eq!(e.span.offset(), open);
    assert!(e.to_string().contains("`}` closing this `{`"), "{e}");
}

fn err(text: &str) -> String {
    let e = parse_llo("x.txt", text).unwrap_err();
    format!("{e} @{}+{}", e.span.offset(), e.span.len())
}

#[test]
fn errors_point_at_the_problem() {
    let head = "= control target key start\n= control target key end\n";
    insta::assert_snapshot!(err(&format!("{head}  0x1   :  {{ %1 = sfence ")), @"llo syntax error: expected `}` closing the bundle, found end of file @75+1");
    insta::assert_snapshot!(err(&format!("{head}  0x1   :  {{ %1 = sfence /* open }}\n")), @"llo syntax error: expected `*/` closing the comment, found `/*` @77+2");
    insta::assert_snapshot!(err(&format!("{head}  0x1   :  {{ %1 sfence }}\n")), @"llo syntax error: expected `=` after the result name, found `sfence` @68+6");
    insta::assert_snapshot!(err(&format!("{head}  0x1   :  {{ %1 = sld [smem:[#a] }}\n")), @"llo syntax error: expected `]`, found `}` @85+1");
    insta::assert_snapshot!(err(&format!("{head}  zz   :  {{ }}\n")), @"llo syntax error: expected a bundle address (`0x1f`), found `zz` @54+2");
    insta::assert_snapshot!(err("== CAPACTIY:\nMXU, XLU\n2 2\n== UTILIZATION:\n0 0 7\n"), @"llo syntax error: expected end of row after 2 numbers (one per unit), found `7` @46+1");
    insta::assert_snapshot!(err("Schedule analysis:\n\t 1.00 scheduled bundles (100.00%): %a = f32[] custom-call(), backend_config=\"{\\\"x\\\"\n"), @r#"llo syntax error: expected `"` closing this string before the end of the file, found `"` @96+1"#);
    insta::assert_snapshot!(err("time,instruction_name\n0,\"a\n1,b\n"), @r#"llo syntax error: expected `"` closing this field before the end of the file, found `"a` @24+2"#);
    insta::assert_snapshot!(err("HloModule m\n"), @"llo syntax error: expected an LLO dump (final_bundles, schedule analysis, utilization or a memory-space-assignment table), found `HloModule` @0+9");
}
