//! Bad input through the binary, one test per case of the robustness checklist: a clear diagnostic that says
//! where (line:col), exit 2 (0/1 where the input is valid), never a panic (101), bounded time and memory, and the
//! good file named in the same run still linted. Large inputs are generated in a temporary folder.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A good file given beside the bad ones: its summary must still be printed.
const GOOD_SUMMARY: &str = "features.hlo: HLO module `features_test`";

fn good() -> String {
    format!("{}/tests/data/hlo/features.hlo", env!("CARGO_MANIFEST_DIR"))
}

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    secs: f64,
    /// Peak resident memory in MB, where `/proc` tells it (sampled while the process runs).
    peak_mb: Option<u64>,
}

/// Runs hlolint in `dir`, output to files (huge output cannot block it), killed and failed after `limit` seconds.
fn run(dir: &Path, args: &[&str], limit: u64) -> Run {
    let (out_path, err_path) = (dir.join(".stdout"), dir.join(".stderr"));
    let start = Instant::now();
    let mut child = crate::common::hlolint_process()
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .unwrap();
    let mut peak_kb: Option<u64> = None;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if let Some(kb) = high_water_kb(child.id()) {
            peak_kb = Some(peak_kb.unwrap_or(0).max(kb));
        }
        if start.elapsed() > Duration::from_secs(limit) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("hlolint {args:?} ran longer than {limit} s");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let read = |p: &PathBuf| String::from_utf8_lossy(&std::fs::read(p).unwrap()).into_owned();
    let r = Run {
        code: status.code(),
        stdout: read(&out_path),
        stderr: read(&err_path),
        secs: start.elapsed().as_secs_f64(),
        peak_mb: peak_kb.map(|k| k / 1024),
    };
    assert_ne!(r.code, Some(101), "hlolint panicked on {args:?}:\n{}", r.stderr);
    assert!(!r.stderr.contains("panicked at"), "{}", r.stderr);
    r
}

fn high_water_kb(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Exit 2, the good file still summarized, and each of `expect` in stderr.
fn rejected_beside_good(r: &Run, expect: &[&str]) {
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(r.stdout.contains(GOOD_SUMMARY), "the good file is still linted:\n{}", r.stdout);
    for e in expect {
        assert!(r.stderr.contains(e), "expected {e:?} in:\n{}", r.stderr);
    }
}

/// A StableHLO module whose line 3 holds a `dense<"0x…">` constant of `bytes` bytes followed by `tail`.
fn wide_constant(bytes: usize, tail: &str) -> (String, usize) {
    let head = "    %0 = stablehlo.constant dense<\"0x";
    let line = format!("{head}{}\"> : tensor<8xi8>{tail}", "AB".repeat(bytes));
    let text =
        format!("module {{\n  func.func @main() -> tensor<8xi8> {{\n{line}\n    return %0 : tensor<8xi8>\n  }}\n}}\n");
    (text, line.len())
}

#[test]
fn syntax_error_past_column_65535() {
    let tmp = tempfile::tempdir().unwrap();
    let (text, len) = wide_constant(80_000, " )");
    assert!(len > 160_000);
    std::fs::write(tmp.path().join("wide.mlir"), text).unwrap();
    let r = run(tmp.path(), &["--summary", "wide.mlir", &good()], 60);
    rejected_beside_good(&r, &["MLIR syntax error", &format!("wide.mlir:3:{len}")]);
    assert!(r.stderr.len() < 4_000, "the excerpt is windowed: {} bytes", r.stderr.len());
}

#[test]
fn megabyte_and_hundred_megabyte_lines_cost_nothing_to_show() {
    let tmp = tempfile::tempdir().unwrap();
    for (name, bytes, limit) in [("l1.mlir", 1 << 19, 20), ("l100.mlir", 50 << 20, 60)] {
        let (text, len) = wide_constant(bytes, " )");
        std::fs::write(tmp.path().join(name), text).unwrap();
        let r = run(tmp.path(), &["--summary", name, &good()], limit);
        rejected_beside_good(&r, &["MLIR syntax error", &format!("{name}:3:{len}")]);
        assert!(r.stderr.len() < 4_000, "{name}: the excerpt is windowed, {} bytes", r.stderr.len());
        if let Some(mb) = r.peak_mb {
            assert!(mb < 8 * (len as u64 >> 20) + 200, "{name}: {mb} MB peak for a {len}-byte line");
        }
        println!("{name}: {:.2} s, peak {:?} MB", r.secs, r.peak_mb);
    }
}

#[test]
fn huge_iteration_bounds_neither_panic_nor_allocate() {
    let dir = format!("{}/fixtures/fp8_matmul_2d/v5e/v3@v5e/mosaic", env!("CARGO_MANIFEST_DIR"));
    let kernel =
        std::fs::read_to_string(format!("{dir}/1795340992561702144-0001-mosaic-dump-anonymous-original.txt")).unwrap();
    let from = "iteration_bounds = array<i64: 4, 4>";
    assert!(kernel.contains(from));
    let tmp = tempfile::tempdir().unwrap();
    let max = i64::MAX.to_string();
    for bounds in [format!("{max}, 4"), format!("0, {max}"), format!("{0}, {0}", 1u64 << 32)] {
        let text = kernel.replace(from, &format!("iteration_bounds = array<i64: {bounds}>"));
        std::fs::write(tmp.path().join("kernel.mlir"), text).unwrap();
        for args in [&["--summary", "kernel.mlir"][..], &["-r", "core,v1-auto,v2-dma,v3-smem", "kernel.mlir"]] {
            let r = run(tmp.path(), args, 30);
            assert!(matches!(r.code, Some(0 | 1)), "[{bounds}] {args:?}: {:?}\n{}", r.code, r.stderr);
            if let Some(mb) = r.peak_mb {
                assert!(mb < 500, "[{bounds}]: {mb} MB peak");
            }
        }
        let r = run(tmp.path(), &["--summary", "kernel.mlir"], 30);
        assert!(r.stdout.contains(&format!("grid [{}", bounds.split(',').next().unwrap())), "{}", r.stdout);
    }
}

#[cfg(unix)]
#[test]
fn a_fifo_named_as_a_path() {
    let tmp = tempfile::tempdir().unwrap();
    let made = Command::new("mkfifo").arg(tmp.path().join("dump.txt")).status().is_ok_and(|s| s.success());
    if !made {
        println!("skipped: mkfifo is not available");
        return;
    }
    let r = run(tmp.path(), &["--summary", "dump.txt", &good()], 20);
    rejected_beside_good(&r, &["dump.txt", "not a regular file"]);
}

#[test]
fn a_file_cut_inside_a_json_object_or_string_points_at_the_end() {
    let tmp = tempfile::tempdir().unwrap();
    let head = "HloModule m\n\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT n = f32[2] custom-call(p), \
                custom_call_target=\"foo\", backend_config=";
    let cases = [
        ("object.hlo", format!("{head}{{\"a\": {{\"b\": 1,"), "closing the JSON object"),
        ("string.hlo", format!("{head}\"{{\\\"a\\\": 1"), "closing quote for the string"),
    ];
    for (name, text, what) in &cases {
        std::fs::write(tmp.path().join(name), text).unwrap();
        // the file's last character, where the excerpt marks the end of file (not the opening `{`/`"`)
        let end = text.lines().last().unwrap().len();
        let r = run(tmp.path(), &["--summary", name, &good()], 20);
        rejected_beside_good(&r, &[what, "found end of file", &format!("{name}:5:{end}")]);
    }
}

#[test]
fn non_utf8_bytes_say_line_and_column() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("latin.hlo"), b"HloModule m\n\nENTRY %e {\n  %a = f32[4]{0} para\xffmeter(0)\n}\n")
        .unwrap();
    let r = run(tmp.path(), &["--summary", "latin.hlo", &good()], 20);
    rejected_beside_good(&r, &["latin.hlo:4:22: not UTF-8 text"]);
    let r = run(tmp.path(), &["--format", "json", "latin.hlo", &good()], 20);
    assert_eq!(r.code, Some(2));
    let json: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let errors = json["errors"].as_array().unwrap();
    assert!(errors.iter().any(|e| e["message"].as_str().unwrap().contains("latin.hlo:4:22")), "{errors:?}");
    assert!(json["files"].to_string().contains("features.hlo"), "the good file is in the report");
}

#[test]
fn a_byte_order_mark_is_dropped() {
    let tmp = tempfile::tempdir().unwrap();
    let mut text = b"\xef\xbb\xbf".to_vec();
    text.extend(std::fs::read(good()).unwrap());
    std::fs::write(tmp.path().join("bom.hlo"), text).unwrap();
    let r = run(tmp.path(), &["--summary", "bom.hlo"], 20);
    assert!(matches!(r.code, Some(0 | 1)), "{}", r.stderr);
    assert!(r.stdout.contains("bom.hlo: HLO module `features_test`"), "{}", r.stdout);
}

#[test]
fn a_folder_without_dumps_beside_good_input_warns() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join("notes")).unwrap();
    std::fs::write(tmp.path().join("notes/readme.md"), "nothing to lint\n").unwrap();
    let r = run(tmp.path(), &["--summary", "--exit-zero", "notes", &good()], 20);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.stdout.contains(GOOD_SUMMARY));
    assert!(r.stderr.contains("warning: notes: no XLA dump in this folder"), "{}", r.stderr);
}

#[test]
fn grammar_xla_accepts_through_the_binary() {
    let tmp = tempfile::tempdir().unwrap();
    let colon = "HloModule m:\n\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT n = f32[2] negate(p)\n}\n";
    let inline = "HloModule inl\n\nENTRY main {\n  p = f32[4] parameter(0)\n  z = f32[] constant(0)\n  \
                  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply={\n    a = f32[] parameter(0)\n    \
                  b = f32[] parameter(1)\n    ROOT s = f32[] add(a, b)\n  }\n}\n";
    // CR-only endings on a real file, `//` comments included (a comment ends at a CR too)
    let cr = std::fs::read_to_string(good()).unwrap().replace('\n', "\r");
    let tuple = |n: usize| format!("{}f32[]{}", "(".repeat(n), ")".repeat(n));
    let operands = |n: usize| (0..n).fold("p".to_string(), |e, _| format!("f32[] negate({e})"));
    // the same for a Mosaic dump (MLIR text) opening with a `//` comment
    let kernel = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/mlir/manual_dma.mlir");
    let mlir_cr = format!("// a kernel\n{}", std::fs::read_to_string(kernel).unwrap()).replace('\n', "\r");
    let cases = [
        ("colon.hlo", colon.to_string(), "HLO module `m`"),
        ("cr.hlo", cr, "HLO module `features_test`"),
        ("inline.hlo", inline.to_string(), "HLO module `inl`"),
        ("cr.mlir", mlir_cr, "Mosaic MLIR module"),
        (
            "tuple.hlo",
            format!("HloModule t\nENTRY e {{\n  ROOT p = {} parameter(0)\n}}\n", tuple(2_000)),
            "HLO module `t`",
        ),
        (
            "operands.hlo",
            format!(
                "HloModule o\nENTRY e {{\n  p = f32[] parameter(0)\n  ROOT r = f32[] negate({})\n}}\n",
                operands(1_000)
            ),
            "HLO module `o`",
        ),
    ];
    for (name, text, summary) in &cases {
        std::fs::write(tmp.path().join(name), text).unwrap();
        let r = run(tmp.path(), &["--summary", name], 30);
        assert!(matches!(r.code, Some(0 | 1)), "{name}: {:?}\n{}", r.code, r.stderr);
        assert!(r.stdout.contains(&format!("{name}: {summary}")), "{name}:\n{}", r.stdout);
    }
}

#[test]
fn nesting_deeper_than_xla_takes_is_a_syntax_error() {
    let tmp = tempfile::tempdir().unwrap();
    let tuple = format!(
        "HloModule t\nENTRY e {{\n  ROOT p = {}f32[]{} parameter(0)\n}}\n",
        "(".repeat(2_100),
        ")".repeat(2_100)
    );
    let operands = (0..1_100).fold("p".to_string(), |e, _| format!("f32[] negate({e})"));
    let operands =
        format!("HloModule o\nENTRY e {{\n  p = f32[] parameter(0)\n  ROOT r = f32[] negate({operands})\n}}\n");
    std::fs::write(tmp.path().join("tuple.hlo"), tuple).unwrap();
    std::fs::write(tmp.path().join("operands.hlo"), operands).unwrap();
    let r = run(tmp.path(), &["--summary", "tuple.hlo", "operands.hlo", &good()], 30);
    rejected_beside_good(
        &r,
        &["less deeply nested tuple shape", "tuple.hlo:3:", "less deeply nested operands", "operands.hlo:4:"],
    );
}

#[test]
fn headers_and_attributes_xla_rejects_are_rejected() {
    let tmp = tempfile::tempdir().unwrap();
    let one = |root: &str| format!("HloModule m\nENTRY e {{\n  p = f32[] parameter(0)\n  {root}\n}}\n");
    let cases = [
        (
            "dup.hlo",
            "HloModule m\nc {\n  ROOT a = f32[] parameter(0)\n}\nc {\n  ROOT a = f32[] parameter(0)\n}\nENTRY e {\n  \
             p = f32[] parameter(0)\n  ROOT r = f32[] call(p), to_apply=c\n}\n"
                .to_string(),
            "dup.hlo:5:1",
        ),
        ("ctrl.hlo", one("ROOT r = f32[] negate(p), control-predecessors={nope}"), "ctrl.hlo:4:"),
        (
            "window.hlo",
            "HloModule m\nENTRY e {\n  p = f32[1,4,4,1] parameter(0)\n  k = f32[1,1,1,1] parameter(1)\n  \
             ROOT c = f32[1,4,4,1] convolution(p, k), window={size=1x1 pad=1_1_0}, dim_labels=b01f_01io->b01f\n}\n"
                .to_string(),
            "window.hlo:5:",
        ),
        (
            "alias.hlo",
            "HloModule m, input_output_alias={ {0}: (0, {}, maybe) }\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n"
                .to_string(),
            "alias.hlo:1:",
        ),
        (
            "donor.hlo",
            "HloModule m, buffer_donor={ (0) }\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n".to_string(),
            "donor.hlo:1:",
        ),
    ];
    let mut args = vec!["--summary".to_string()];
    for (name, text, _) in &cases {
        std::fs::write(tmp.path().join(name), text).unwrap();
        args.push(name.to_string());
    }
    args.push(good());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let r = run(tmp.path(), &args, 30);
    let places: Vec<&str> = cases.iter().map(|c| c.2).collect();
    rejected_beside_good(&r, &places);
    assert_eq!(r.stderr.matches("HLO syntax error").count(), cases.len(), "{}", r.stderr);
}

/// A pack of `n` trivial rules.
fn pack(n: usize) -> String {
    let mut s = String::from("pack: big\nrules:\n");
    for i in 0..n {
        s += &format!("  - id: r{i}\n    severity: warning\n    layer: [hlo]\n    summary: s\n    select:\n      op: dot\n    message: m\n");
    }
    s
}

#[test]
fn a_pack_of_50k_rules_loads_in_linear_time() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("m.hlo"), "HloModule m\nENTRY e {\n  ROOT p = f32[2] parameter(0)\n}\n").unwrap();
    std::fs::write(tmp.path().join("5k.yaml"), pack(5_000)).unwrap();
    std::fs::write(tmp.path().join("50k.yaml"), pack(50_000)).unwrap();
    // interleaved, best of three: both sizes see the same load of the machine
    let mut secs = [f64::INFINITY; 2];
    for _ in 0..3 {
        for (k, p) in ["./5k.yaml", "./50k.yaml"].into_iter().enumerate() {
            let r = run(tmp.path(), &["-r", p, "m.hlo"], 60);
            assert_eq!(r.code, Some(0), "{}", r.stderr);
            secs[k] = secs[k].min(r.secs);
        }
    }
    let ratio = secs[1] / secs[0];
    println!("5k rules: {:.2} s, 50k rules: {:.2} s, ratio {ratio:.1}", secs[0], secs[1]);
    // linear is 10 plus fixed costs, quadratic 100 (a duplicate check scanning every earlier rule gave 33)
    assert!(ratio < 60.0, "10× the rules took {ratio:.1}× the time");
}

#[test]
fn deep_yaml_flow_nesting_is_an_error_not_a_hang() {
    let tmp = tempfile::tempdir().unwrap();
    let deep = format!(
        "pack: deep\nrules:\n  - id: x\n    severity: warning\n    layer: [hlo]\n    summary: {}{}\n    select: {{op: dot}}\n    message: m\n",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    std::fs::write(tmp.path().join("deep.yaml"), deep).unwrap();
    let r = run(tmp.path(), &["-r", "./deep.yaml", &good()], 20);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(r.stderr.contains("invalid rule pack: brackets nested deeper than 256"), "{}", r.stderr);
    assert!(r.stderr.contains("deep.yaml:6:"), "{}", r.stderr);
}
