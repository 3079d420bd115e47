//! `auto-pipelining`, the analysis behind the rule of the same name: what it checks and what each kind means is
//! [`DOC`]; why a hit matters is the rule's `doc` (rules/v1-auto.yaml). The code: `check_kernel` reads a kernel's
//! grid (`grid_steps`) and windows (`window_facts`: a window's full array, whether it is grid-invariant by its
//! `transform_indices` function, `index_map_dims`, and the bytes it moves over the grid) and words each kind's hit; the full array of a window is the
//! HLO custom call's operand or result (`call_arrays`): for a kernel decoded from a `tpu_custom_call` body, the
//! host call; for a Mosaic dump, the call of the same compilation whose body decodes to the same kernel name.

use super::{At, Hit, Options};
use crate::ir::{Def, Layer, Module, OpId, Span};
use crate::lint::Compilation;
use crate::semantic::kernel::{self, ArgRole, Kernel};

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
pub(crate) fn host_call(c: &Compilation<'_>, unit: usize, kernel: &str) -> Option<(usize, OpId)> {
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
    let first = k.host_operand(k.scalar_prefetch);
    let inputs = operands.len().checked_sub(first)?;
    if w < inputs {
        operands.get(first + w).cloned().flatten()
    } else {
        results.get(w - inputs).cloned().flatten()
    }
}

/// The grid dimensions a window's block index depends on (through the transform's ops and the scalar-prefetch
/// loads it makes); `None` when the transform is not in the module. An index that reaches a value this walk does
/// not follow (a region's block argument, an op with regions) depends on every dimension.
fn index_map_dims(m: &Module<'_>, transform: Option<&str>, rank: usize) -> Option<Vec<bool>> {
    let f = m.func_by_name(transform?.trim_start_matches('@'))?;
    let ret = m.root(f)?;
    let entry = m.regions.get(m.func(f).body.idx()).and_then(|r| r.blocks.first().copied());
    let mut dep = vec![false; rank];
    let mut seen = std::collections::HashSet::new();
    let mut stack: Vec<Def> = m.op(ret).operands.iter().map(|o| o.def).collect();
    while let Some(d) = stack.pop() {
        match d {
            Def::BlockArg { block, index } if Some(block) == entry => {
                if let Some(x) = dep.get_mut(index as usize) {
                    *x = true;
                }
            }
            Def::Op { op, .. } => {
                if !seen.insert(op) {
                    continue;
                }
                let o = m.op(op);
                if !o.regions.is_empty() {
                    return Some(vec![true; rank]);
                }
                stack.extend(o.operands.iter().map(|x| x.def));
            }
            _ => return Some(vec![true; rank]),
        }
    }
    Some(dep)
}

/// How many times a window's block is copied over the grid: the pipeline copies a block when its index changes
/// between consecutive steps, so an index depending on grid dimensions up to `d` (row-major, the last one the
/// fastest) changes `bounds[0] * ... * bounds[d]` times. `None` when the bounds are dynamic.
fn fetches(bounds: &[i64], dep: &[bool]) -> Option<i64> {
    let Some(last) = dep.iter().rposition(|&d| d) else { return Some(1) };
    bounds[..=last].iter().try_fold(1i64, |a, &b| if b < 0 { None } else { a.checked_mul(b) })
}

/// A whole-array window is reported when its one copy, made before the first step and overlapped with nothing,
/// is at least this share of the bytes all the kernel's windows move over the grid: then a large part of the
/// kernel's traffic is exposed, and blocking it along a grid dimension would hide it. Below that it is a key, a
/// table or a per-head tensor every step reuses, which Pallas fetches once by design.
const EXPOSED_SHARE: f64 = 0.25;

fn human_bytes(b: f64) -> String {
    match b {
        b if b >= 1024.0 * 1024.0 => format!("{:.1} MiB", b / (1024.0 * 1024.0)),
        b if b >= 1024.0 => format!("{:.0} KiB", b / 1024.0),
        b => format!("{b:.0} B"),
    }
}

fn dims(v: &[i64]) -> String {
    v.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("x")
}

/// Per window: its array, whether the block is the whole array, whether its block index is grid-invariant, and the
/// bytes it moves over the grid.
type WindowFacts = (Option<Vec<i64>>, bool, bool, Option<f64>);

/// Where findings about one kernel point, and how its windows map to its arguments.
struct KernelSite<'a, 'k> {
    func: &'a crate::ir::Func<'k>,
    unit: usize,
    host_span: Option<Span>,
    k: &'a Kernel<'k>,
}

impl<'k> KernelSite<'_, 'k> {
    fn arg_of(&self, w: usize) -> Option<&kernel::KernelArg<'k>> {
        self.k.args.iter().find(|a| a.role == ArgRole::Window(w as u32))
    }

    /// Where a finding about the kernel or one operand points: the argument in a dump, the host call for a body.
    fn at_arg(&self, w: Option<usize>) -> At {
        let unit = self.unit;
        let p = w.and_then(|w| self.arg_of(w)).and_then(|a| self.func.params.get(a.index));
        match (self.host_span, p) {
            (Some(span), _) => At::Span { unit, span },
            (None, Some(p)) => At::Span { unit, span: p.span },
            (None, None) => At::Span { unit, span: self.func.name_span },
        }
    }
}

/// The number of grid steps (`i64::MAX` when unknown or overflowing) and whether a bound is dynamic: a negative
/// bound is Mosaic's spelling of a dynamic one (`?`), so the number of steps is not known here.
fn grid_steps(k: &Kernel<'_>) -> (i64, bool) {
    let dynamic = k.iteration_bounds.iter().any(|&b| b < 0);
    let steps: i64 = if dynamic {
        i64::MAX
    } else {
        k.iteration_bounds.iter().try_fold(1i64, |a, &b| a.checked_mul(b)).unwrap_or(i64::MAX)
    };
    (steps, dynamic)
}

/// The `no-grid-steps` finding: windowed operands but one grid step, so nothing to overlap.
fn single_step_hit(site: &KernelSite<'_, '_>, windows: &[(usize, &kernel::WindowParam<'_>)]) -> Hit {
    let k = site.k;
    let args: Vec<&kernel::KernelArg<'_>> = windows.iter().filter_map(|(w, _)| site.arg_of(*w)).collect();
    let names: Vec<String> = args.iter().map(|a| format!("`%{}`", a.name)).collect();
    let shown: Vec<String> = args.iter().map(|a| crate::lint::names::arg_text(a)).collect();
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
        shown.join(", ")
    );
    Hit::new(site.at_arg(None), "single grid step", detail)
        .capture("kind", "no-grid-steps")
        .capture("operand", names.join(", "))
        .capture("window", "")
        .capture("array", "")
}

/// The facts of window `w` (see [`WindowFacts`]) over a grid of `steps` steps.
fn window_facts(
    m: &Module<'_>,
    site: &KernelSite<'_, '_>,
    arrays: Option<&CallArrays>,
    (w, wp): (usize, &kernel::WindowParam<'_>),
    (steps, dynamic): (i64, bool),
) -> WindowFacts {
    let k = site.k;
    let bounds = wp.window_bounds.as_deref().unwrap_or(&[]);
    let array = arrays.and_then(|ar| full_array(ar, k, w));
    let full = array.as_deref() == Some(bounds);
    let dep = index_map_dims(m, wp.transform, k.iteration_bounds.len());
    // a whole-array block has one in-bounds index, 0: it is copied once whatever the map says
    let invariant = full || dep.as_ref().is_some_and(|d| d.iter().all(|x| !x));
    let bits = site.arg_of(w).and_then(|a| a.ty.as_ref()).and_then(|t| t.dtype()).map(|d| d.bits());
    let block: Option<f64> =
        bits.filter(|&b| b > 0).map(|b| bounds.iter().map(|&d| d.max(0) as f64).product::<f64>() * b as f64 / 8.0);
    let n = if invariant {
        Some(1)
    } else {
        dep.as_deref().map_or(if dynamic { None } else { Some(steps) }, |d| fetches(&k.iteration_bounds, d))
    };
    let bytes = block.zip(n).map(|(b, n)| b * n as f64);
    (array, full, invariant, bytes)
}

/// One window of a kernel, as the per-window findings see it.
struct WindowCase<'a> {
    w: usize,
    /// As the finding's identity names it: the dump's name (`%arg4`).
    name: String,
    /// As its message does: the author's name first (`` `w_ref` (%arg4) ``).
    shown: String,
    bounds: &'a [i64],
    synchronous: bool,
    steps: i64,
}

/// The `full-array-window` finding, when the whole-array window's one exposed copy is at least [`EXPOSED_SHARE`]
/// of the bytes the kernel's windows move (`total`).
fn whole_array_hit(
    site: &KernelSite<'_, '_>,
    arrays: Option<&CallArrays>,
    win: WindowCase<'_>,
    facts: &WindowFacts,
    total: Option<f64>,
) -> Option<Hit> {
    let (k, w, steps, name, bounds) = (site.k, win.w, win.steps, win.name, win.bounds);
    let shown = win.shown;
    let (array, _, _, bytes) = facts;
    let share = bytes.zip(total).filter(|&(_, t)| t > 0.0).map(|(b, t)| b / t);
    let share = share.filter(|&s| s >= EXPOSED_SHARE)?;
    let forced =
        if win.synchronous { " (Pallas made it single-buffered: `#tpu.pipeline_mode<synchronous>`)" } else { "" };
    let output = arrays.is_some_and(|(ops, _)| k.host_operand(k.scalar_prefetch + w) >= ops.len());
    let when = if output {
        format!("written back once{forced}, after the last of the {steps} grid steps")
    } else {
        format!("copied in once{forced}, before the first of the {steps} grid steps")
    };
    let detail = format!(
        "windowed operand {shown} of `@{}` has a window of {} that is its whole array {}: it is {when}, and \
         that copy ({}, {:.0}% of the bytes the kernel's windows move) overlaps with no compute; a block along \
         a grid dimension would be pipelined",
        k.name,
        dims(bounds),
        dims(array.as_deref().unwrap_or(&[])),
        human_bytes(bytes.unwrap_or(0.0)),
        share * 100.0,
    );
    Some(
        Hit::new(site.at_arg(Some(w)), "window = whole array", detail)
            .capture("kind", "full-array-window")
            .capture("operand", name.clone())
            .capture("window", dims(bounds))
            .capture("array", dims(array.as_deref().unwrap_or(&[]))),
    )
}

/// The `single-buffered` finding for a window whose block index varies over the grid.
fn single_buffered_hit(site: &KernelSite<'_, '_>, win: WindowCase<'_>, array: Option<&[i64]>) -> Hit {
    let (k, w, steps, name, bounds) = (site.k, win.w, win.steps, win.name, win.bounds);
    let shown = win.shown;
    let detail = format!(
        "windowed operand {shown} of `@{}` (window {}) has one buffer (`#tpu.pipeline_mode<synchronous>`, \
         `pl.Buffered(1)`): the next block is not prefetched while the current one is computed, so each of \
         the {steps} grid steps waits for its copy",
        k.name,
        dims(bounds)
    );
    Hit::new(site.at_arg(Some(w)), "single-buffered window", detail)
        .capture("kind", "single-buffered")
        .capture("operand", name)
        .capture("window", dims(bounds))
        .capture("array", array.map(dims).unwrap_or_default())
}

/// `host_span`: for a kernel decoded from a custom call, where its findings point (the call's backend_config).
fn check_kernel(
    c: Option<&Compilation<'_>>,
    m: &Module<'_>,
    unit: usize,
    host_span: Option<Span>,
    k: &Kernel<'_>,
) -> Vec<Hit> {
    let mut hits = Vec::new();
    let site = KernelSite { func: m.func(k.func), unit, host_span, k };
    let windows: Vec<(usize, &kernel::WindowParam<'_>)> =
        k.window_params.iter().enumerate().filter(|(_, w)| w.window_bounds.is_some()).collect();
    if windows.is_empty() {
        return hits;
    }
    let arrays = c.and_then(|c| {
        let (hu, call) = host_call(c, unit, k.name)?;
        Some(call_arrays(&c.units.get(hu)?.module, call))
    });
    let grid = grid_steps(k);
    let steps = grid.0;
    if steps <= 1 {
        hits.push(single_step_hit(&site, &windows));
    }
    let info: Vec<WindowFacts> =
        windows.iter().map(|&win| window_facts(m, &site, arrays.as_ref(), win, grid)).collect();
    let total: Option<f64> = info.iter().map(|x| x.3).sum();
    for (i, &(w, wp)) in windows.iter().enumerate() {
        let Some(bounds) = wp.window_bounds.as_ref() else { continue };
        let facts = &info[i];
        let (array, full, invariant, _) = facts;
        let arg = site.arg_of(w);
        let name = arg.map(|a| format!("%{}", a.name)).unwrap_or_else(|| format!("window {w}"));
        let shown = arg.map(crate::lint::names::arg_text).unwrap_or_else(|| format!("window {w}"));
        let synchronous = wp.pipeline_mode.is_some_and(|p| p == "synchronous");
        let win = WindowCase { w, name, shown, bounds, synchronous, steps };
        if *full && steps > 1 {
            hits.extend(whole_array_hit(&site, arrays.as_ref(), win, facts, total));
        } else if synchronous && steps > 1 && !*full {
            // an invariant block is copied once for the whole grid: a second buffer would have nothing to prefetch
            if !*invariant {
                hits.push(single_buffered_hit(&site, win, array.as_deref()));
            }
        }
    }
    hits
}

pub fn check_module(c: Option<&Compilation<'_>>, m: &Module<'_>, unit: usize, host_span: Option<Span>) -> Vec<Hit> {
    if m.layer != Layer::Mosaic {
        return Vec::new();
    }
    // the kernels named by their authors when the compilation knows the names
    let ks = match c {
        Some(c) => c.named_kernels(unit, m),
        None => kernel::kernels(m),
    };
    ks.iter().flat_map(|k| check_kernel(c, m, unit, host_span, k)).collect()
}

pub fn run(c: &Compilation<'_>, unit: usize, _opts: &Options) -> Vec<Hit> {
    match c.units.get(unit) {
        Some(u) => check_module(Some(c), &u.module, unit, u.host.as_ref().map(|h| h.span)),
        None => Vec::new(),
    }
}

/// What the analysis checks, how, and what a hit says: shown by `hlolint explain auto-pipelining` and on the
/// rule's page.
pub const DOC: &str = "Checks that a Pallas kernel with a grid and windowed operands (`window_params` with \
`window_bounds`, `iteration_bounds`) has something for Pallas to pipeline. Pallas fetches the next block of each \
window while the current one is computed, and copies a block only when its index (the window's \
`transform_indices` function of the grid indices) changes between steps. kind `no-grid-steps`: the grid has one \
step (the product of `iteration_bounds` is 1) while operands are windowed, so there is nothing to overlap; \
`full-array-window`: a window is its whole array (the array is the HLO custom call's operand or result; skipped \
when the call is not in the compilation), so it is copied once, outside the pipeline, and that copy is at least a \
quarter of the bytes all the kernel's windows move over the grid (block bytes times index changes). Smaller \
whole-array windows (a key, a scale table, a per-head tensor every step reuses) are fetched once by design: Pallas \
single-buffers such grid-invariant VMEM operands itself; `single-buffered`: a window whose block index varies with \
the grid has one buffer (`#tpu.pipeline_mode<synchronous>`, which jax prints for `pipeline_mode=pl.Buffered(1)`), \
so its copies are not overlapped with compute (a grid-invariant window is copied once: one buffer costs nothing). \
Operands without window bounds (`{}`: `memory_space=ANY`/HBM, copied by the kernel itself) are not windows.";

/// How rule packs call this analysis (`analysis: auto-pipelining`).
pub static ANALYSIS: super::Analysis = super::Analysis {
    name: "auto-pipelining",
    layers: &[Layer::Mosaic],
    doc: DOC,
    captures: &["kind", "operand", "window", "array"],
    kinds: &["no-grid-steps", "full-array-window", "single-buffered"],
    options: &[],
    run,
    // reads no LLO op
    llo: super::LloReads::CrossLayerOps,
    shares: None,
};

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

    /// With the names the driver recorded, the message names the window as its author did; the finding's identity
    /// (the `operand` capture) stays the dump's name.
    #[test]
    fn a_window_is_named_by_its_author() {
        let files = case_files("invalid/buffered_1.mlir");
        let parsed: Vec<Parsed> = parse_texts(&files).into_iter().map(|r| r.expect("parses")).collect();
        let c = Compilation::new("case".into(), &parsed, None);
        let record = crate::lint::manifest::KernelRecord {
            name: Some("mm_buffered_1".into()),
            operands: ["x_ref", "y_ref", "o_ref"].iter().map(|s| Some(s.to_string())).collect(),
            ..Default::default()
        };
        c.names.set(crate::lint::names::KernelNames::from_records(vec![record])).expect("names not read yet");
        let h: Vec<Hit> = (0..c.units.len()).flat_map(|u| run(&c, u, &Options::new())).collect();
        assert_eq!(h.len(), 1, "{h:?}");
        assert!(h[0].captures["detail"].starts_with("windowed operand `y_ref` (%arg4) of `@mm_buffered_1`"));
        assert_eq!(h[0].captures["operand"], "%arg4");
    }

    #[test]
    fn manual_dma_operands_are_not_windows() {
        assert!(kinds("valid/manual_dma_operands.mlir").is_empty());
    }

    #[test]
    fn a_whole_array_window_carrying_the_bulk_of_the_traffic_is_reported() {
        let h = hits_of(&case_files("invalid/whole_array_bulk_operand.after_optimizations.txt"));
        assert_eq!(h.len(), 1, "{h:?}");
        assert_eq!(h[0].captures["kind"], "full-array-window");
        assert_eq!(h[0].captures["operand"], "%arg1");
        assert_eq!((h[0].captures["window"].as_str(), h[0].captures["array"].as_str()), ("1024x1024", "1024x1024"));
        // x: 2 MiB once; w: 8 blocks of 256 KiB; out: 8 blocks of 256 KiB
        assert!(h[0].captures["detail"].contains("2.0 MiB, 33%"), "{}", h[0].captures["detail"]);
    }

    #[test]
    fn grid_invariant_whole_array_tables_are_fetched_once_by_design() {
        // the fp8 scale tables (64 B each), splash attention's three 256 KiB f32 outputs written once, the
        // threefry key: each a small share of what the windows move
        for case in [
            "valid/whole_array_scale_tables",
            "valid/splash_mha_fwd.after_optimizations.txt",
            "valid/threefry_bits.after_optimizations.txt",
        ] {
            assert!(kinds(case).is_empty(), "{case}");
        }
    }

    #[test]
    fn fetch_counts_follow_the_index_map() {
        // an index on the middle of three grid dims changes bounds[0] * bounds[1] times
        assert_eq!(fetches(&[2, 3, 4], &[false, true, false]), Some(6));
        assert_eq!(fetches(&[2, 3, 4], &[false, false, false]), Some(1));
        assert_eq!(fetches(&[2, 3, 4], &[true, false, true]), Some(24));
        assert_eq!(fetches(&[2, -1, 4], &[false, true, false]), None);
    }

    #[test]
    fn hand_written_cases_under_tests_data() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/rules/auto-pipelining");
        for (sub, want) in [("valid", false), ("invalid", true)] {
            let mut n = 0;
            for p in crate::source::cases_in(&root.join(sub)) {
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
                out.push((c.units[u].describe(), c.units[u].stage_name.unwrap_or("").to_string(), h));
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
        let p = crate::testing::corpus()?.join(case);
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
        for (_, dir, h) in kinds_by_version("auto-pipelining") {
            // v1 pipelines 4x4x4 steps with blocks smaller than the arrays; v2/v3 windows are the output block
            // and (v2) the per-row scale blocks; their x/w operands have no window (`{}`); bug_scales_vmem's
            // whole-array scale tables (64 B each) are fetched once by design
            assert!(h.is_empty(), "{dir}: {:?}", h.iter().map(|x| &x.2.captures["detail"]).collect::<Vec<_>>());
        }
    }

    #[test]
    fn jax_pallas_ops_are_pipelined_as_designed() {
        // jax's own kernels: grid-invariant whole-array windows (splash's outputs, the threefry key) are small
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/jax_pallas_ops");
        let mut n = 0;
        for e in std::fs::read_dir(&root).expect("fixtures/jax_pallas_ops").filter_map(Result::ok) {
            if !e.path().is_dir() {
                continue;
            }
            n += 1;
            let h = run_dir(&e.path(), "auto-pipelining");
            let details: Vec<&String> = h.iter().map(|x| &x.2.captures["detail"]).collect();
            assert!(h.is_empty(), "{}: {details:?}", e.path().display());
        }
        assert!(n >= 30, "{n} folders");
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
