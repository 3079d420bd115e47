//! Parse-speed harness: `cargo bench --bench parse [-- FILE...]`.
//!
//! For each file (default: the HLO files of ../shared/corpus, largest first), parses it repeatedly and prints the
//! median time, MB/s and instructions/s as one JSON line, so scripts/bench.py can compare against XLA's parser and
//! ripgrep. No timing is asserted anywhere: speed is measured, not tested.

use std::path::PathBuf;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
use std::time::Instant;

/// `mi_option_purge_delay` (mimalloc.h): as the binary does (src/main.rs), memory freed by one parse is kept for
/// the next instead of being returned to the OS and faulted in again.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

fn main() {
    // SAFETY: sets one integer option of the allocator, before any other thread exists.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1) };
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    let mut files: Vec<PathBuf> = args.iter().map(PathBuf::from).collect();
    if files.is_empty() {
        let Some(corpus) = hlolint::testing::corpus() else { return };
        files = walkdir::WalkDir::new(&corpus)
            .into_iter()
            .flatten()
            .filter(|e| e.path().to_string_lossy().ends_with("after_optimizations.txt"))
            .map(|e| e.into_path())
            .collect();
        files.sort_by_key(|p| std::cmp::Reverse(std::fs::metadata(p).map(|m| m.len()).unwrap_or(0)));
        files.truncate(3);
    }
    for f in files {
        let text = std::fs::read_to_string(&f).expect("readable file");
        let mb = text.len() as f64 / 1e6;
        // Enough repetitions for ~2 s of work, at least 3.
        let t = Instant::now();
        let m = hlolint::parse::hlo::parse_hlo("bench", &text).expect("parses");
        let ops = m.ops.len();
        drop(m);
        let once = t.elapsed().as_secs_f64();
        let reps = ((2.0 / once) as usize).clamp(3, 50);
        let mut times: Vec<f64> = (0..reps)
            .map(|_| {
                let t = Instant::now();
                let m = hlolint::parse::hlo::parse_hlo("bench", &text).unwrap();
                std::hint::black_box(&m);
                drop(m);
                t.elapsed().as_secs_f64()
            })
            .collect();
        times.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let median = times[times.len() / 2];
        println!(
            "{{\"file\":{:?},\"bytes\":{},\"instructions\":{},\"reps\":{},\"median_s\":{:.6},\"min_s\":{:.6},\"mb_per_s\":{:.1},\"instructions_per_s\":{:.0}}}",
            f.display().to_string(),
            text.len(),
            ops,
            reps,
            median,
            times[0],
            mb / median,
            ops as f64 / median
        );
    }
}
