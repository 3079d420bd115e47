//! No input makes the LLO parsers panic: truncations and byte mutations of the hand-written samples and of small
//! real files (when the corpus is present), parsed as every LLO kind, and the views run on whatever parses.

use crate::common::{Lcg, Mutator, Repeat};
use hlolint::parse::llo::args;
use hlolint::parse::llo::{parse_llo, parse_llo_as, parse_llo_keeping, Keep, LloFile, LloKind};
use hlolint::semantic::llo;
use std::path::Path;

const KINDS: [LloKind; 6] = [
    LloKind::Bundles,
    LloKind::ScheduleAnalysis,
    LloKind::Utilization,
    LloKind::MsaBufferInfo,
    LloKind::MsaAllocInfo,
    LloKind::MsaScheduleInfo,
];

fn exercise(text: &str) {
    if let Ok(f) = parse_llo("fuzz.txt", text) {
        use_file(&f);
    }
    // The lint's partial graphs (MXU ops only) go through the same grammar — without building the dropped ops'
    // arguments — and must accept and refuse exactly the same texts, at the same place.
    let verdict = |r: &Result<LloFile<'_>, hlolint::parse::error::SyntaxError>| {
        r.as_ref().map(|_| ()).map_err(|e| (e.span, e.expected.clone()))
    };
    let whole = parse_llo_keeping("fuzz.txt", text, Keep::All);
    let partial = parse_llo_keeping("fuzz.txt", text, Keep::Only(llo::read_across_layers));
    assert_eq!(verdict(&whole), verdict(&partial), "whole and partial parses disagree on:\n{text}");
    if let Ok(f) = partial {
        use_file(&f);
    }
    for k in KINDS {
        if let Ok(f) = parse_llo_as(k, "fuzz.txt", text, Keep::All) {
            use_file(&f);
        }
    }
}

fn use_file(f: &LloFile<'_>) {
    match f {
        LloFile::Bundles(p) => {
            let _ = llo::summarize(p);
            let _ = llo::entry_info(&p.module);
            for id in p.module.op_ids() {
                let _ = llo::enclosing_loops(&p.module, id);
                let _ = args::position(p.module.op(id));
            }
        }
        LloFile::Utilization(u) => {
            let _ = (u.total("MXU"), u.row(0), u.busy_bundles("SALU"));
        }
        LloFile::ScheduleAnalysis(s) => {
            let _ = (s.total_bundles(), s.bundles_for("x"));
        }
        LloFile::MsaBufferInfo(b) => {
            for r in b {
                let _ = r.uses().count();
            }
        }
        _ => {}
    }
}

const INTERESTING: &[u8] = b"{}[]()/*%;:=,\n >\"<!$#0x.-e ";

fn mutate_and_truncate(text: &str, trunc_stride: usize, mutations: usize, seed: u64) {
    // Truncations.
    let mut k = 0;
    while k <= text.len() {
        if text.is_char_boundary(k) {
            exercise(&text[..k]);
        }
        k += trunc_stride;
    }
    // Byte mutations at ASCII positions: replace, delete, duplicate a span.
    let mutator = Mutator { alphabet: INTERESTING, edits: 3, repeat: Repeat::Run(40) };
    let mut rng = Lcg(seed);
    for _ in 0..mutations {
        exercise(&mutator.mutate(&mut rng, text));
    }
}

#[test]
fn samples_never_panic() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/llo");
    let mut seed = 0x9e37_79b9_7f4a_7c15;
    for e in std::fs::read_dir(dir).unwrap() {
        let text = std::fs::read_to_string(e.unwrap().path()).unwrap();
        seed += 1;
        mutate_and_truncate(&text, 1, 1500, seed);
    }
}

#[test]
fn pathological_inputs_never_panic() {
    for t in [
        "",
        "\n\n",
        "0",
        "0x",
        "0 : {",
        "0 : { %",
        "0 : { %a = ",
        "0 : { %a = x [",
        "0 : { %a = x /*",
        "0 : { %a = x \"",
        "0 : { %a = x.<",
        "0 : { %a = x.mrb[",
        "0 : { %a = x a: }",
        "0 : { %a = x a = }",
        "0 : { %a = x !!!!!! }",
        "= control target key start\n",
        "== CAPACTIY:\n",
        "== CAPACTIY:\nMXU\n",
        "Schedule analysis:\n\t[opcode] x",
        "buffer_id,buffer_name\n\"",
        "time,instruction_name\n1,\"a\"\"",
        "time,instruction_name\n1,x\"\n\"",
        // Schedule-analysis records that stay open: a string ending in `\`, a comment, brackets.
        "Schedule analysis:\n\t 1.00 scheduled bundles (1.00%): %a = f(\"\\",
        "Schedule analysis:\n\t 1.00 scheduled bundles (1.00%): %a = f(/*",
        "Schedule analysis:\n\t 1.00 scheduled bundles (1.00%): %a = f({[\n\n",
        "Schedule analysis:\n\t 1.00 scheduled bundles (1.00%): %a = f())]}\n\ttotal: 1",
    ] {
        exercise(t);
    }
    let deep = format!("0 : {{ %a = x {} }}", "[".repeat(10_000));
    exercise(&deep);
    let deep = format!("0 : {{ %a = x {} }}", "a:".repeat(10_000));
    exercise(&deep);
    let deep = format!("0 : {{ %a = x {} }}", "!".repeat(10_000));
    exercise(&deep);
    let comments = format!("0 : {{ %a = x {} }}", "/*".repeat(10_000));
    exercise(&comments);
    // Deep brackets in a table record: scanned without recursion.
    exercise(&format!("Schedule analysis:\n\t 1.00 scheduled bundles (1.00%): {}", "{".repeat(100_000)));
}

#[test]
fn real_files_never_panic() {
    let Some(root) = crate::common::corpus() else { return };
    let mut seed = 7;
    for case in ["fp8_dot@tpu7x", "pallas_matmul@v5e"] {
        let Ok(rd) = std::fs::read_dir(root.join(case).join("llo")) else { continue };
        let mut paths: Vec<_> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        for p in paths {
            let Ok(text) = std::fs::read_to_string(&p) else { continue };
            // Keep it quick: the first 24 KB (cut at a char boundary).
            let mut end = text.len().min(24 << 10);
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            let text = &text[..end];
            seed += 1;
            mutate_and_truncate(text, 211, 100, seed);
        }
    }
}
