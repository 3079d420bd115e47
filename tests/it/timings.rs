//! `HLOLINT_TIMINGS`, the measurement hook `scripts/bench.py --real-kernels` reads (docs/performance.md): one
//! line per (rule, file) task on stderr, and nothing of it without the variable.

use super::common::hlolint;

const FIXTURE: &str = "fixtures/jax_pallas_ops/paged@tpu7x";

#[test]
fn each_task_of_a_run_prints_its_rule_file_and_seconds() {
    let out = hlolint().args(["-q", "--rules", "core", FIXTURE]).env("HLOLINT_TIMINGS", "1").output().unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    let tasks: Vec<Vec<&str>> =
        stderr.lines().filter(|l| l.starts_with("HLOLINT_TIMINGS\t")).map(|l| l.split('\t').collect()).collect();
    assert!(!tasks.is_empty(), "no timing lines in {stderr}");
    for t in &tasks {
        assert_eq!(t.len(), 5, "{t:?}");
        assert_eq!(t[1], FIXTURE);
        assert!(t[3].starts_with(FIXTURE), "{t:?}");
        assert!(t[4].parse::<f64>().is_ok_and(|s| s >= 0.0), "{t:?}");
    }
    // the DMA analyses of the kernel are among the tasks, on its Mosaic dump
    assert!(tasks.iter().any(|t| t[2] == "MO010" && t[3].contains("/mosaic/")), "{tasks:?}");
}

#[test]
fn without_the_variable_a_run_prints_no_timings() {
    let out = hlolint().args(["-q", "--rules", "core", FIXTURE]).env_remove("HLOLINT_TIMINGS").output().unwrap();
    assert!(!String::from_utf8_lossy(&out.stderr).contains("HLOLINT_TIMINGS"));
}
