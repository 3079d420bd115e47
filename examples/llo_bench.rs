//! Parse throughput of the LLO parser: `cargo run --release --example llo_bench -- FILE...` (default: the largest
//! final_bundles file of the corpus). Reports MB/s for the bundle grammar alone, for the whole `parse_llo`
//! (grammar + graph + loops + operand resolution), and for the partial graph a lint run keeps (MXU matmuls and the
//! entry's operands).

use hlolint::parse::llo::{bundles, parse_llo, parse_llo_keeping, Keep};
use std::time::Instant;

fn main() {
    let mut files: Vec<String> = std::env::args().skip(1).collect();
    if files.is_empty() {
        let Some(root) = hlolint::testing::corpus() else { return };
        let mut best = (0u64, String::new());
        for e in walkdir::WalkDir::new(root).into_iter().filter_map(Result::ok) {
            let p = e.path().to_string_lossy().to_string();
            if p.ends_with("-final_bundles.txt") && !p.contains("schedule-analysis") {
                let n = e.metadata().map(|m| m.len()).unwrap_or(0);
                if n > best.0 {
                    best = (n, p);
                }
            }
        }
        files.push(best.1);
    }
    for f in files {
        let text = std::fs::read_to_string(&f).expect("read");
        let mb = text.len() as f64 / 1e6;
        let reps = 5;
        let mut best_grammar = f64::MAX;
        let mut best_full = f64::MAX;
        let mut best_partial = f64::MAX;
        let mut ops = 0;
        for _ in 0..reps {
            let t = Instant::now();
            let (_, b) = bundles::bundle_file(&text, Keep::All).expect("parse");
            best_grammar = best_grammar.min(t.elapsed().as_secs_f64());
            drop(b);
            let t = Instant::now();
            let p = parse_llo(&f, &text).expect("parse");
            best_full = best_full.min(t.elapsed().as_secs_f64());
            ops = p.program().map(|p| p.module.ops.len()).unwrap_or(0);
            drop(p);
            let t = Instant::now();
            let p = parse_llo_keeping(&f, &text, Keep::Only(hlolint::semantic::llo::read_across_layers));
            best_partial = best_partial.min(t.elapsed().as_secs_f64());
            drop(p);
        }
        println!(
            "{f}: {mb:.2} MB, {ops} ops; grammar {:.1} ms = {:.0} MB/s; parse_llo {:.1} ms = {:.0} MB/s; partial {:.1} ms = {:.0} MB/s",
            best_grammar * 1e3,
            mb / best_grammar,
            best_full * 1e3,
            mb / best_full,
            best_partial * 1e3,
            mb / best_partial
        );
    }
}
