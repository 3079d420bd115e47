//! `hlolint compare` on the driver's fixture dumps: the terminal and Markdown tables as snapshots, JSON and CSV read
//! back, the HTML report written with `-o`, and the errors of its own options.

use crate::common::hlolint;

const FP8: &str = "fixtures/fp8_matmul_2d/tpu7x+v6e";
const WHOLE: &str = "fixtures/whole_program/v5e";

fn run(args: &[&str]) -> (i32, String, String) {
    // The terminal table's snapshot is the table at its own width: no terminal, no COLUMNS to fit.
    let out = hlolint().env_remove("COLUMNS").args(args).output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

#[test]
fn terminal_table_of_the_fp8_versions() {
    let (code, out, err) = run(&["compare", FP8]);
    assert_eq!(code, 0, "{err}");
    // one screen: two tables (one per target) and the rankings, under 60 lines
    assert!(out.lines().count() < 60, "{} lines:\n{out}", out.lines().count());
    insta::assert_snapshot!(out);
}

#[test]
fn markdown_of_the_fp8_versions() {
    let (code, out, err) = run(&["compare", FP8, "--format", "markdown"]);
    assert_eq!(code, 0, "{err}");
    insta::assert_snapshot!(out);
}

#[test]
fn json_has_a_column_per_compilation_and_rows_per_kernel() {
    let (code, out, err) = run(&["compare", FP8, "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let cols = v["columns"].as_array().unwrap();
    assert_eq!(cols.len(), 16, "8 versions × 2 targets");
    // the manifest's order: targets tpu7x then v6e, versions v1, v2, v3, then the planted bugs
    let names: Vec<String> =
        cols.iter().map(|c| format!("{}@{}", c["version"].as_str().unwrap(), c["target"].as_str().unwrap())).collect();
    assert_eq!(&names[..3], ["v1@tpu7x", "v2@tpu7x", "v3@tpu7x"]);
    assert_eq!(names[8], "v1@v6e");
    let kernel = &v["kernels"][0];
    let rows = kernel["rows"].as_array().unwrap();
    for r in rows {
        assert_eq!(r["cells"].as_array().unwrap().len(), 16, "{r}");
    }
    let row = |label: &str| rows.iter().find(|r| r["label"] == label).unwrap_or_else(|| panic!("no row {label}"));
    // fp8 runs natively on tpu7x, widened on v6e; the planted upcast is an upcast everywhere
    assert_eq!(row("MXU")["cells"][0]["text"], "native");
    assert_eq!(row("MXU")["cells"][8]["text"], "widened");
    assert_eq!(row("MXU")["cells"][3]["text"], "upcast");
    // the per-version packs ran: v2's bug_unwaited_dma has errors
    let bug = cols.iter().find(|c| c["version"] == "bug_unwaited_dma").unwrap();
    assert!(bug["verdicts"]["errors"].as_u64().unwrap() > 0, "{bug}");
    // every fixture version has an LLO loop with MXU work, so a timeline
    assert!(kernel["timelines"].as_array().unwrap().iter().all(|t| t["bundles"].as_u64().unwrap_or(0) > 0));
    let ranks = v["rankings"].as_array().unwrap();
    assert_eq!(ranks.len(), 2);
    assert!(ranks.iter().all(|r| r["baseline"] == "v1" && r["entries"].as_array().unwrap().len() == 8), "{ranks:?}");
    // one kernel per version: the compilation rows are the whole program's time, what XLA adds around the
    // kernel (the top-level program at least), and the rules'
    let labels: Vec<&str> = v["compilation"].as_array().unwrap().iter().map(|r| r["label"].as_str().unwrap()).collect();
    assert_eq!(labels[..2], ["predicted", "XLA ops"], "{labels:?}");
    assert!(labels.contains(&"findings"));
    assert!(cols.iter().all(|c| c["time"]["predicted"].as_f64().unwrap() > 0.0));
}

#[test]
fn csv_reads_back_one_line_per_fact_and_compilation() {
    let (code, out, err) = run(&["compare", FP8, "--format", "csv"]);
    assert_eq!(code, 0, "{err}");
    let mut r = csv::Reader::from_reader(out.as_bytes());
    assert_eq!(r.headers().unwrap(), vec!["kernel", "group", "fact", "version", "target", "dir", "text", "value"]);
    let recs: Vec<csv::StringRecord> = r.records().collect::<Result<_, _>>().unwrap();
    assert_eq!(recs.len() % 16, 0);
    let flops: Vec<&csv::StringRecord> = recs.iter().filter(|x| &x[2] == "FLOPs").collect();
    assert_eq!(flops.len(), 16);
    // the same matmul in every version: 512×512×512 × 2
    assert!(flops.iter().all(|x| x[7].parse::<f64>().unwrap() == 2.0 * 512f64.powi(3)), "{flops:?}");
}

#[test]
fn html_report_is_written_to_the_output_file() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("report.html");
    let (code, out, err) = run(&["compare", FP8, "--format", "html", "-o", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.is_empty());
    let html = std::fs::read_to_string(&path).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert_eq!(html.matches("<table class=\"compare\">").count(), 2);
    assert_eq!(html.matches("class=\"chart time-bars\"").count(), 2);
    assert_eq!(html.matches("class=\"chart timeline\"").count(), 16);
    // loops by the names the kernel's author knows: the pallas_call's grid, the fori_loop, at their Python lines
    assert!(html.contains("grid of kernels.py:102: 66\u{a0}*"), "the v1 grid");
    assert!(html.contains("v2: one iteration of the loop at kernels.py:185 · 95 bundles"), "the v2 fori_loop");
    assert!(!html.contains("<script") && !html.contains("href=") && !html.contains("src="));
}

#[test]
fn assumptions_and_hardware_are_checked() {
    let (code, _, err) = run(&["compare", FP8, "--assume", "region95"]);
    assert_eq!(code, 2);
    assert!(err.contains("NAME=VALUE"), "{err}");
    let (code, _, err) = run(&["compare", FP8, "--hardware", "no/such/file.toml"]);
    assert_eq!(code, 2);
    assert!(err.contains("no/such/file.toml"), "{err}");
    let (code, out, err) = run(&["compare", FP8, "--assume", "region95=4", "--format", "markdown"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("assumed region95 = 4"), "{out}");
}

#[test]
fn a_hardware_file_changes_the_prediction_of_its_generation_only() {
    let predicted = |extra: &[&str]| -> Vec<f64> {
        let (code, out, err) = run(&[&["compare", FP8, "--format", "json"], extra].concat());
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        v["columns"].as_array().unwrap().iter().map(|c| c["time"]["predicted"].as_f64().unwrap()).collect()
    };
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("hw.toml");
    std::fs::write(&file, "[tpu7x]\noverhead_us = 0.0\n").unwrap();
    let (before, after) = (predicted(&[]), predicted(&["--hardware", file.to_str().unwrap()]));
    // columns 0..8 are tpu7x: 6 µs of launch overhead less; v6e's columns are untouched
    for i in 0..8 {
        assert!((before[i] - after[i] - 6e-6).abs() < 1e-9, "{i}: {} → {}", before[i], after[i]);
    }
    assert_eq!(before[8..], after[8..]);
}

#[test]
fn a_folder_without_dumps_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("notes.txt"), "nothing here\n").unwrap();
    let (code, _, err) = run(&["compare", tmp.path().to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("no XLA dump"), "{err}");
}

/// A plain XLA program (`jnp.matmul`: no Pallas kernel) gets a predicted time: its schedule's copy and fusion.
#[test]
fn markdown_of_a_plain_xla_program() {
    let (code, out, err) = run(&["compare", &format!("{WHOLE}/xla_matmul@v5e"), "--format", "markdown"]);
    assert_eq!(code, 0, "{err}");
    insta::assert_snapshot!(out);
}

/// The same kernel alone and behind an XLA fusion that makes XLA copy its operand into VMEM: the second version
/// pays for the fusion and the copy's wait (the `XLA ops` row), and the ranking says so.
#[test]
fn markdown_of_a_kernel_with_an_xla_copy_around_it() {
    let (code, out, err) = run(&[
        "compare",
        &format!("{WHOLE}/pallas_grid@v5e"),
        &format!("{WHOLE}/pallas_grid_after_relu@v5e"),
        "--format",
        "markdown",
    ]);
    assert_eq!(code, 0, "{err}");
    insta::assert_snapshot!(out);
}

/// Every version of the whole-program fixtures, XLA's and the kernels', ranked on one target.
#[test]
fn json_ranks_plain_xla_programs_beside_kernels() {
    let (code, out, err) = run(&["compare", WHOLE, "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let cols = v["columns"].as_array().unwrap();
    assert_eq!(cols.len(), 5);
    assert!(cols.iter().all(|c| c["time"]["predicted"].as_f64().unwrap() > 0.0), "{cols:?}");
    let xla = |name: &str| cols.iter().find(|c| c["version"] == name).unwrap()["time"]["xla"].as_f64().unwrap();
    assert!(xla("pallas_grid_after_relu") > xla("pallas_grid"), "the fusion and the copy are XLA's");
    assert_eq!(v["rankings"][0]["entries"].as_array().unwrap().len(), 5);
}
