//! Prints the outline of a parsed MLIR file and the kernel view (`cargo run --example mlir_outline FILE`), and the
//! parse throughput.
fn main() {
    let path = std::env::args().nth(1).expect("usage: mlir_outline FILE [--quiet]");
    let quiet = std::env::args().any(|a| a == "--quiet");
    let text = std::fs::read_to_string(&path).expect("read");
    // best of N: the machine is shared, the minimum is the parser's own speed
    let t = std::time::Instant::now();
    let mut n = 0;
    let mut reps = 0;
    let mut best = f64::MAX;
    while t.elapsed().as_millis() < 2000 || reps < 3 {
        let t1 = std::time::Instant::now();
        let m = hlolint::parse::mlir::parse_mlir(&path, &text).map_err(miette::Report::new);
        best = best.min(t1.elapsed().as_secs_f64());
        match m {
            Ok(m) => n = m.ops.len(),
            Err(e) => {
                eprintln!("{e:?}");
                std::process::exit(1);
            }
        }
        reps += 1;
    }
    let secs = best;
    let m = hlolint::parse::mlir::parse_mlir(&path, &text).unwrap();
    if std::env::args().any(|a| a == "--phases") {
        phases(&text);
    }
    if !quiet {
        print!("{}", hlolint::ir::print::outline(&m, &text));
        for k in hlolint::semantic::kernel::kernels(&m) {
            println!("{}", serde_json::to_string_pretty(&k).unwrap());
        }
    }
    eprintln!("{} bytes, {} ops, {:.2} ms, {:.1} MB/s", text.len(), n, secs * 1e3, text.len() as f64 / secs / 1e6);
}

#[allow(dead_code)]
fn phases(text: &str) {
    let t = std::time::Instant::now();
    let mut best = f64::MAX;
    while t.elapsed().as_millis() < 1000 {
        let t1 = std::time::Instant::now();
        let f = hlolint::parse::mlir::file(text).unwrap().1;
        drop(f);
        best = best.min(t1.elapsed().as_secs_f64());
    }
    eprintln!("syntax tree only: {:.2} ms", best * 1e3);
}
