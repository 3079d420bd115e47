//! `auto-pipelining`: a Pallas kernel with a grid and windowed operands (`window_params` with `window_bounds`,
//! `iteration_bounds`) is pipelined by Pallas: the next block of every window is fetched while the current one is
//! computed. This checks that there is something to pipeline: more than one grid step, windows smaller than their
//! arrays, and two buffers per window.
//!
//! The full array of a windowed operand is the HLO custom call's operand (inputs) or result (outputs): for a
//! kernel decoded from a `tpu_custom_call` body, the host call; for a Mosaic dump, the call of the same compilation
//! whose body decodes to the same kernel name. Operands without `window_bounds` (`{}`: `memory_space=ANY`/HBM
//! operands the kernel copies itself) are not windows.

use super::kernel::{self, ArgRole, Kernel};
use super::{At, Hit, Options};
use crate::ir::{Def, Layer, Module, OpId, Span};
use crate::lint::Compilation;

/// The array shapes of a custom call: operands then results (dims only).
/// A custom call's operand and result array dims.
type CallArrays = (Vec<Option<Vec<i64>>>, Vec<Option<Vec<i64>>>);

fn call_arrays(m: &Module<'_>, call: OpId) -> CallArrays {
    let op = m.op(call);
    let hlo_dims = |s: &crate::ir::shape::Shape| -> Option<Vec<i64>> {
        s.array()?.dims.iter().map(|d| if let crate::ir::shape::Dim::Static(n) = d { Some(*n) } else { None }).collect()
    };
    let mlir_dims = |t: &crate::ir::mlir_type::MlirType<'_>| t.shaped().and_then(|s| s.static_dims());
    let operands = op
        .operands
        .iter()
        .map(|o| {
            if let Some(s) = o.ty.as_ref().and_then(|t| t.shape()) {
                return hlo_dims(s);
            }
            if let Some(t) = o.ty.as_ref().and_then(|t| t.mlir()) {
                return mlir_dims(t);
            }
            match o.def {
                Def::Op { op: d, index } => {
                    let dop = m.op(d);
                    match dop.shape() {
                        Some(s) => hlo_dims(s),
                        None => dop.ty.mlir().and_then(|t| t.result(index as usize)).and_then(mlir_dims),
                    }
                }
                _ => None,
            }
        })
        .collect();
    let results = match (op.shape(), op.ty.mlir()) {
        (Some(s), _) => {
            let el = s.tuple_elements();
            if el.is_empty() {
                vec![hlo_dims(s)]
            } else {
                el.iter().map(hlo_dims).collect()
            }
        }
        (None, Some(crate::ir::mlir_type::MlirType::Results(v))) => v.iter().map(mlir_dims).collect(),
        (None, Some(crate::ir::mlir_type::MlirType::Tuple(v))) => v.iter().map(mlir_dims).collect(),
        (None, Some(t)) => vec![mlir_dims(t)],
        _ => Vec::new(),
    };
    (operands, results)
}

/// The host custom call of a kernel: the unit's own host, or a decoded unit of the compilation defining the
/// same kernel.
fn host_call(c: &Compilation<'_>, unit: usize, kernel: &str) -> Option<(usize, OpId)> {
    if let Some(h) = c.units.get(unit).and_then(|u| u.host.as_ref()) {
        return Some((h.unit, h.call));
    }
    let mut best: Option<(usize, OpId)> = None;
    for (_, u) in c.kernel_units(kernel) {
        if let Some(h) = &u.host {
            // prefer an HLO host (after optimizations) to a StableHLO one: the same shapes, the final program
            let hlo = c.units.get(h.unit).is_some_and(|x| x.layer() == Layer::Hlo);
            if best.is_none() || hlo {
                best = Some((h.unit, h.call));
            }
            if hlo {
                break;
            }
        }
    }
    best
}

/// The full array of window `k`: inputs are the call's operands after the scalar-prefetch ones, outputs its results.
fn full_array(arrays: &CallArrays, k: &Kernel<'_>, w: usize) -> Option<Vec<i64>> {
    let (operands, results) = arrays;
    let inputs = operands.len().checked_sub(k.scalar_prefetch)?;
    if w < inputs {
        operands.get(k.scalar_prefetch + w).cloned().flatten()
    } else {
        results.get(w - inputs).cloned().flatten()
    }
}

/// Whether the transform of a window returns only constants (the block index never changes).
fn constant_index_map(m: &Module<'_>, transform: Option<&str>) -> bool {
    let Some(f) = transform.and_then(|t| m.func_by_name(t.trim_start_matches('@'))) else { return false };
    let Some(ret) = m.root(f) else { return false };
    let o = m.op(ret);
    !o.operands.is_empty()
        && o.operands.iter().all(|x| matches!(x.def, Def::Op { op, .. } if kernel::const_int(m, op).is_some()))
}

fn dims(v: &[i64]) -> String {
    v.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("x")
}

/// `host_span`: for a kernel decoded from a custom call, where its findings point (the call's backend_config).
pub fn check_kernel(
    c: Option<&Compilation<'_>>,
    m: &Module<'_>,
    unit: usize,
    host_span: Option<Span>,
    k: &Kernel<'_>,
) -> Vec<Hit> {
    let mut hits = Vec::new();
    let func = m.func(k.func);
    let windows: Vec<(usize, &kernel::WindowParam<'_>)> =
        k.window_params.iter().enumerate().filter(|(_, w)| w.window_bounds.is_some()).collect();
    if windows.is_empty() {
        return hits;
    }
    let arg_of = |w: usize| k.args.iter().find(|a| a.role == ArgRole::Window(w as u32));
    // Where a finding about the kernel or one operand points: the argument in a dump, the host call for a body.
    let at_arg = |w: Option<usize>| -> At {
        let p = w.and_then(arg_of).and_then(|a| func.params.get(a.index));
        match (host_span, p) {
            (Some(span), _) => At::Span { unit, span },
            (None, Some(p)) => At::Span { unit, span: p.span },
            (None, None) => At::Span { unit, span: func.name_span },
        }
    };
    let arrays = c.and_then(|c| {
        let (hu, call) = host_call(c, unit, k.name)?;
        Some(call_arrays(&c.units.get(hu)?.module, call))
    });
    // a negative bound is Mosaic's spelling of a dynamic one (`?`): the number of steps is not known here
    let dynamic = k.iteration_bounds.iter().any(|&b| b < 0);
    let steps: i64 = if dynamic {
        i64::MAX
    } else {
        k.iteration_bounds.iter().try_fold(1i64, |a, &b| a.checked_mul(b)).unwrap_or(i64::MAX)
    };
    if steps <= 1 {
        let names: Vec<String> =
            windows.iter().filter_map(|(w, _)| arg_of(*w)).map(|a| format!("`%{}`", a.name)).collect();
        let grid = if k.iteration_bounds.is_empty() {
            "no grid".to_string()
        } else {
            format!("grid ({})", k.iteration_bounds.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(", "))
        };
        let detail = format!(
            "kernel `@{}` has {grid}: one step, so its {} windowed operand(s) ({}) are fetched, computed and written \
             back in sequence with nothing to overlap",
            k.name,
            windows.len(),
            names.join(", ")
        );
        hits.push(
            Hit::new(at_arg(None), "single grid step", detail)
                .capture("kind", "no-grid-steps")
                .capture("operand", names.join(", "))
                .capture("window", "")
                .capture("array", ""),
        );
    }
    for &(w, wp) in &windows {
        let Some(bounds) = wp.window_bounds.as_ref() else { continue };
        let a = arg_of(w);
        let name = a.map(|a| format!("%{}", a.name)).unwrap_or_else(|| format!("window {w}"));
        let array = arrays.as_ref().and_then(|ar| full_array(ar, k, w));
        let full = array.as_ref().is_some_and(|ar| ar == bounds);
        let synchronous = wp.pipeline_mode.is_some_and(|p| p == "synchronous");
        if full && steps > 1 {
            let forced =
                if synchronous { " (Pallas made it single-buffered: `#tpu.pipeline_mode<synchronous>`)" } else { "" };
            let detail = format!(
                "windowed operand `{name}` of `@{}` has a window of {} that is its whole array {}: it is fetched once{forced} \
                 and never pipelined with the {steps} grid steps",
                k.name,
                dims(bounds),
                dims(array.as_deref().unwrap_or(&[])),
            );
            hits.push(
                Hit::new(at_arg(Some(w)), "window = whole array", detail)
                    .capture("kind", "full-array-window")
                    .capture("operand", name.clone())
                    .capture("window", dims(bounds))
                    .capture("array", dims(array.as_deref().unwrap_or(&[]))),
            );
        } else if synchronous && steps > 1 {
            if array.is_none() && constant_index_map(m, wp.transform) {
                // most likely Pallas' own single-buffering of a whole-array VMEM operand; without the array shape
                // this cannot be told from a user's `pl.Buffered(1)`
                continue;
            }
            let detail = format!(
                "windowed operand `{name}` of `@{}` (window {}) has one buffer (`#tpu.pipeline_mode<synchronous>`, \
                 `pl.Buffered(1)`): the next block is not prefetched while the current one is computed, so each of \
                 the {steps} grid steps waits for its copy",
                k.name,
                dims(bounds)
            );
            hits.push(
                Hit::new(at_arg(Some(w)), "single-buffered window", detail)
                    .capture("kind", "single-buffered")
                    .capture("operand", name)
                    .capture("window", dims(bounds))
                    .capture("array", array.as_deref().map(dims).unwrap_or_default()),
            );
        }
    }
    hits
}

pub fn check_module(c: Option<&Compilation<'_>>, m: &Module<'_>, unit: usize, host_span: Option<Span>) -> Vec<Hit> {
    if m.layer != Layer::Mosaic {
        return Vec::new();
    }
    kernel::kernels(m).iter().flat_map(|k| check_kernel(c, m, unit, host_span, k)).collect()
}

pub fn run(c: &Compilation<'_>, unit: usize, _opts: &Options) -> Vec<Hit> {
    match c.units.get(unit) {
        Some(u) => check_module(Some(c), &u.module, unit, u.host.as_ref().map(|h| h.span)),
        None => Vec::new(),
    }
}

pub const DOC: &str = "A Pallas kernel with a grid and windowed operands (`window_params` with `window_bounds`, \
`iteration_bounds`) is pipelined by Pallas: the next block of each window is fetched while the current one is \
computed. kind `no-grid-steps`: the grid has one step (the product of `iteration_bounds` is 1) while operands are \
windowed, so there is nothing to overlap; `full-array-window`: a windowed operand's window is its whole array (the \
array is the HLO custom call's operand or result; skipped when the call is not in the compilation), so it is fetched \
once and never pipelined (Pallas also single-buffers such VMEM operands); `single-buffered`: a window with one \
buffer (`#tpu.pipeline_mode<synchronous>`, which jax prints for `pipeline_mode=pl.Buffered(1)`), so its copies are \
not overlapped with compute. Operands without window bounds (`memory_space=ANY`/HBM, copied by the kernel itself) \
are not windows.";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lint::compilation::{parse_texts, source_file, Parsed};

    fn case_files(rel: &str) -> Vec<crate::source::SourceFile> {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/rules/auto-pipelining").join(rel);
        let mut paths: Vec<std::path::PathBuf> = if p.is_dir() {
            walkdir::WalkDir::new(&p)
                .sort_by_file_name()
                .into_iter()
                .filter_map(Result::ok)
                .filter(|e| e.file_type().is_file())
                .map(|e| e.into_path())
                .collect()
        } else {
            vec![p]
        };
        paths.retain(|p| p.extension().and_then(|x| x.to_str()) != Some("md"));
        paths.iter().map(|p| source_file(&p.display().to_string(), &std::fs::read_to_string(p).unwrap())).collect()
    }

    fn hits_of(files: &[crate::source::SourceFile]) -> Vec<Hit> {
        let parsed: Vec<Parsed> = parse_texts(files).into_iter().map(|r| r.expect("parses")).collect();
        let c = Compilation::new("case".into(), &parsed, None);
        (0..c.units.len()).flat_map(|u| run(&c, u, &Options::new())).collect()
    }

    fn kinds(rel: &str) -> Vec<String> {
        hits_of(&case_files(rel)).iter().map(|h| h.captures["kind"].clone()).collect()
    }

    #[test]
    fn a_pipelined_grid_is_fine() {
        assert!(kinds("valid/pipelined_grid.mlir").is_empty());
    }

    #[test]
    fn a_single_step_grid_has_nothing_to_overlap() {
        let h = hits_of(&case_files("invalid/single_step_grid.mlir"));
        assert_eq!(h.len(), 1, "{h:?}");
        assert_eq!(h[0].captures["kind"], "no-grid-steps");
        assert!(h[0].captures["detail"].contains("grid (1, 1)"), "{}", h[0].captures["detail"]);
    }

    #[test]
    fn a_buffered_1_window_is_single_buffered() {
        let h = hits_of(&case_files("invalid/buffered_1.mlir"));
        assert_eq!(h.len(), 1, "{h:?}");
        assert_eq!(h[0].captures["kind"], "single-buffered");
        assert_eq!(h[0].captures["operand"], "%arg4");
        assert_eq!(h[0].captures["window"], "256x512");
    }

    #[test]
    fn manual_dma_operands_are_not_windows() {
        assert!(kinds("valid/manual_dma_operands.mlir").is_empty());
    }

    #[test]
    fn a_window_equal_to_its_array_is_found_through_the_hlo_call() {
        let h = hits_of(&case_files("invalid/full_array_window"));
        let full: Vec<&Hit> = h.iter().filter(|h| h.captures["kind"] == "full-array-window").collect();
        // the Mosaic dump and the body decoded from the HLO call both show it
        assert!(!full.is_empty(), "{h:?}");
        assert!(full.iter().all(|h| h.captures["window"] == "4x4x1x1" && h.captures["array"] == "4x4x1x1"));
        assert!(h.iter().all(|h| h.captures["kind"] == "full-array-window"), "{h:?}");
    }

    #[test]
    fn hand_written_cases_under_tests_data() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/rules/auto-pipelining");
        for (sub, want) in [("valid", false), ("invalid", true)] {
            let mut n = 0;
            for e in std::fs::read_dir(root.join(sub)).expect("fixture folder") {
                let p = e.unwrap().path();
                if p.extension().and_then(|x| x.to_str()) == Some("md") {
                    continue;
                }
                n += 1;
                let rel = format!("{sub}/{}", p.file_name().unwrap().to_str().unwrap());
                let h = hits_of(&case_files(&rel));
                assert_eq!(!h.is_empty(), want, "{rel}: {h:?}");
            }
            assert!(n >= 2);
        }
    }
}

/// Tests over the project's fixtures and the corpus: each version directory is one compilation.
#[cfg(test)]
pub(crate) mod real {
    use super::super::{analysis, Hit, Options};
    use crate::lint::compilation::{parse_texts, source_file, Parsed};
    use crate::lint::Compilation;
    use std::path::Path;

    /// Runs analysis `name` over every unit of the compilation in `dir` (files of `dir` and its sibling
    /// `<dir>_hlo.txt`); returns (unit description, stage, hit) for each hit.
    pub(crate) fn run_dir(dir: &Path, name: &str) -> Vec<(String, String, Hit)> {
        let mut files = Vec::new();
        for e in walkdir::WalkDir::new(dir).sort_by_file_name().into_iter().filter_map(Result::ok) {
            let p = e.path().display().to_string();
            if e.file_type().is_file() && !p.contains("memory-usage-report") && !p.ends_with(".json") {
                if let Ok(text) = std::fs::read_to_string(e.path()) {
                    files.push(source_file(&p, &text));
                }
            }
        }
        let parsed: Vec<Parsed> = parse_texts(&files).into_iter().filter_map(Result::ok).collect();
        let c = Compilation::new(dir.display().to_string(), &parsed, None);
        let a = analysis(name).expect("registered");
        let mut out = Vec::new();
        for u in 0..c.units.len() {
            if !a.layers.contains(&c.units[u].layer()) {
                continue;
            }
            for h in (a.run)(&c, u, &Options::new()) {
                out.push((c.units[u].describe(), c.units[u].stage.unwrap_or("").to_string(), h));
            }
        }
        out
    }

    /// Version directories of the fixtures: (version, dir).
    pub(crate) fn fixture_dirs() -> Vec<(String, std::path::PathBuf)> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/fp8_matmul_2d");
        let mut out = Vec::new();
        for e in walkdir::WalkDir::new(&root)
            .min_depth(2)
            .max_depth(2)
            .sort_by_file_name()
            .into_iter()
            .filter_map(Result::ok)
        {
            if e.file_type().is_dir() {
                let n = e.file_name().to_string_lossy().to_string();
                let version = n.split('@').next().unwrap_or("").to_string();
                out.push((version, e.into_path()));
            }
        }
        out
    }

    pub(crate) fn corpus_dir(case: &str) -> Option<std::path::PathBuf> {
        let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus").join(case);
        if p.is_dir() {
            Some(p)
        } else {
            eprintln!("notice: {} absent; corpus check skipped", p.display());
            None
        }
    }

    type KindsOf = Vec<(String, String, Vec<(String, String, Hit)>)>;

    fn kinds_by_version(name: &str) -> KindsOf {
        fixture_dirs()
            .into_iter()
            .map(|(v, d)| {
                let h = run_dir(&d, name);
                (v, d.file_name().unwrap().to_string_lossy().to_string(), h)
            })
            .collect()
    }

    #[test]
    fn fixture_versions() {
        for (v, dir, h) in kinds_by_version("auto-pipelining") {
            match v.as_str() {
                // v1 pipelines 4x4x4 steps with blocks smaller than the arrays; v2/v3 windows are the output
                // block and (v2) the per-row scale blocks; their x/w operands have no window (`{}`)
                "bug_scales_vmem" => {
                    assert!(!h.is_empty(), "{dir}: the whole-array scale tables");
                    for (unit, _, h) in &h {
                        assert_eq!(h.captures["kind"], "full-array-window", "{dir} {unit}");
                        assert!(["%arg4", "%arg5"].contains(&h.captures["operand"].as_str()), "{dir}: {h:?}");
                        assert_eq!(
                            (h.captures["window"].as_str(), h.captures["array"].as_str()),
                            ("4x4x1x1", "4x4x1x1")
                        );
                        assert!(h.captures["detail"].contains("synchronous"), "{}", h.captures["detail"]);
                    }
                    // every stage and the decoded body see it
                    let stages: std::collections::BTreeSet<&str> = h.iter().map(|x| x.1.as_str()).collect();
                    assert!(
                        stages.contains("post-deserialization") && stages.contains("tpu_custom_call body"),
                        "{stages:?}"
                    );
                    assert!(stages.contains("post-finalize-llo"), "{stages:?}");
                }
                _ => {
                    assert!(h.is_empty(), "{dir}: {:?}", h.iter().map(|x| &x.2.captures["detail"]).collect::<Vec<_>>())
                }
            }
        }
    }

    #[test]
    fn corpus_pallas_matmul_is_pipelined() {
        for t in ["pallas_matmul@tpu7x", "pallas_matmul@v5e", "pallas_matmul@v6e"] {
            let Some(d) = corpus_dir(t) else { continue };
            let h = run_dir(&d, "auto-pipelining");
            assert!(h.is_empty(), "{t}: {:?}", h.iter().map(|x| &x.2.captures["detail"]).collect::<Vec<_>>());
        }
    }
}
