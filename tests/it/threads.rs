//! The report does not depend on the number of threads: files are parsed largest first, one task each, in any
//! order a work-stealing pool picks, and the results are put back in path order. Every byte of stdout and stderr
//! and the exit code are the same with `--threads 1` and `--threads 2`.

/// stdout, stderr and exit code of `hlolint --threads N ARGS...`.
fn run(threads: &str, args: &[&str]) -> (Vec<u8>, Vec<u8>, Option<i32>) {
    let out = crate::common::hlolint()
        .env_remove("RAYON_NUM_THREADS")
        .args(["--threads", threads, "--isolated"])
        .args(args)
        .output()
        .unwrap();
    (out.stdout, out.stderr, out.status.code())
}

fn same_with_one_and_two_threads(args: &[&str]) {
    let one = run("1", args);
    let two = run("2", args);
    assert!(!one.0.is_empty(), "the run reported something: {args:?}");
    assert_eq!(one.2, two.2, "exit code of {args:?}");
    assert!(one.0 == two.0, "stdout of {args:?} differs between 1 and 2 threads");
    assert!(one.1 == two.1, "stderr of {args:?} differs between 1 and 2 threads");
}

const EVERY_PACK: &str = "core,v1-auto,v2-dma,v3-smem";

#[test]
fn fixtures_give_the_same_report_with_one_and_two_threads() {
    let sets = crate::common::fixture_sets_linted_whole();
    let sets: Vec<&str> = sets.iter().map(String::as_str).collect();
    same_with_one_and_two_threads(&[&["--rules", EVERY_PACK][..], &sets].concat());
    same_with_one_and_two_threads(&[&["--rules", EVERY_PACK, "--format", "json", "--summary"][..], &sets].concat());
}

#[test]
fn the_corpus_gives_the_same_report_with_one_and_two_threads() {
    let Some(corpus) = crate::common::corpus() else { return };
    same_with_one_and_two_threads(&["--rules", EVERY_PACK, corpus.to_str().unwrap()]);
}

#[test]
fn zero_threads_is_a_usage_error() {
    let out = crate::common::hlolint().args(["--threads", "0", "--isolated", "."]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--threads"));
}
