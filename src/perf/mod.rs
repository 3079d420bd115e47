//! A static performance model of Pallas TPU kernels: per kernel and per compilation, the facts a version comparison
//! needs (docs/performance-model.md has the formulas and where each number comes from).
//!
//! **API** (stable: fields are added, never renamed): [`compilation_facts`] takes a linted [`Compilation`], its
//! parsed files (the LLO utilization tables have no graph, so they are read from there), the [`Hardware`] table
//! and the user's [`Assume`] map, and returns [`CompilationFacts`]: the target's [`Chip`], the HLO entry's operand
//! and result bytes, and one [`KernelFacts`] per Mosaic kernel — matmuls ([`MatmulFacts`]: operand types, shape,
//! FLOPs) and the MXU format ([`MxuFacts`]: native / widened / upcast), HBM bytes (pipelined windows and whole
//! operands as [`BufferFacts`], DMAs as [`DmaFacts`]), VMEM and SMEM [`Footprint`]s against capacity, DMA starts
//! and waits per grid step, `scf.for` trip counts ([`ForFacts`]), the LLO program ([`LloFacts`]: loops with trip
//! counts, static and dynamic bundles, per-slot utilization), the LLO loops checked against the Mosaic grid and
//! loops ([`CrossCheck`]), and the predicted time ([`TimeFacts`]). Everything is `serde::Serialize`.
//!
//! Numbers the dumps do not decide are an [`Estimate`]: exact, a range, or unknown with the reason; `--assume`
//! fixes a loop's trip count by the name the facts show.

pub mod estimate;
mod mosaic;
pub mod program;
pub mod time;
pub mod timeline;
pub mod trips;

pub use estimate::{Assume, AssumeError, Estimate};
pub use mosaic::{loop_names, BufferFacts, DmaFacts, ForFacts, MatmulFacts};
pub use time::{Bound, Interval, TimeFacts};
pub use trips::{LoopFacts, TripSource};

use crate::analysis::crosslink;
use crate::ir::{DType, Layer, Module};
use crate::lint::compilation::{Compilation, Parsed};
use crate::lint::target::Narrow;
use crate::parse::llo::tables::Utilization;
use crate::semantic::kernel::kernels;
use crate::semantic::tpu::{Chip, Hardware};
use serde::Serialize;

/// Why a SparseCore program has no time (docs/performance-model.md, "SparseCore programs"): the TensorCore's
/// terms would describe the wrong core, and nothing public times a SparseCore instead.
pub const SPARSECORE_UNTIMED: &str = "runs on a SparseCore: libtpu dumps no SparseCore LLO program, and no public \
     SparseCore clock, HBM bandwidth or per-row cost exists to time it";

/// Is a Mosaic kernel of this `tpu.core_type` a SparseCore program (`sc_vector_subcore`, `sc_scalar_subcore`)?
pub fn is_sparsecore_core(core_type: Option<&str>) -> bool {
    core_type.is_some_and(|t| t.starts_with("sc_"))
}

/// What the model needs besides the compilation.
#[derive(Clone, Copy, Debug)]
pub struct Context<'h> {
    pub hardware: &'h Hardware,
    pub assume: &'h Assume,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CompilationFacts {
    /// The dump directory (`…/v3@tpu7x`).
    pub dir: String,
    pub target: Option<String>,
    /// The hardware table's row for the target.
    pub chip: Option<Chip>,
    /// Bytes of the HLO entry computation's parameters and result: what the program reads and writes in HBM at
    /// least once.
    pub hlo_io_bytes: Estimate,
    pub kernels: Vec<KernelFacts>,
    /// Sums over the kernels (they run one after the other).
    pub flops: Estimate,
    pub hbm_bytes: Estimate,
    /// The whole program as scheduled: every computation the LLO dumps hold, in the HLO schedule's order
    /// (`program::program_facts`); `None` without a scheduled HLO dump and LLO programs.
    pub program: Option<program::ProgramFacts>,
    /// The whole program's time when the model has it, else the kernels' sum (each with its launch overhead).
    pub predicted_us: Option<Interval>,
}

/// How the MXU multiplies a kernel's matmuls.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MxuMode {
    /// Narrow operands (fp8, int8, int4) multiplied in their own format.
    Native,
    /// Narrow operands the compiler widened on the way into the MXU (fp8 → bf16 on v5e/v6e).
    Widened,
    /// Narrow data the kernel itself converted to a wider type before the matmul.
    Upcast,
    /// bf16/f32 matmuls: nothing narrow asked for.
    Wide,
    /// No matmul.
    None,
    /// Narrow operands, and neither the LLO nor the hardware table says how the MXU takes them.
    Unknown,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MxuFormat {
    /// The dtype segments of the `vmatmul` mnemonic: `f8e4m3fn`, `f8e4m3b11.bf16`, `bf16`.
    pub format: String,
    /// Static `vmatmul` ops with it.
    pub count: usize,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MxuFacts {
    pub mode: MxuMode,
    /// The narrow family the matmuls ask for (`fp8`, `int8`, `int4`), if any.
    pub requested: Option<Narrow>,
    /// From the LLO; empty without an LLO dump.
    pub formats: Vec<MxuFormat>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Footprint {
    pub bytes: Estimate,
    /// Per TensorCore, from the hardware table.
    pub capacity: Option<u64>,
    /// `bytes / capacity` (upper bound).
    pub fraction: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SlotFacts {
    /// `MXU`, `XLU`, `VALU`, `VLOAD`, `VSTORE`, ... as libtpu's utilization table names them.
    pub unit: String,
    /// Slots per bundle.
    pub capacity: u32,
    /// Slots used over the program's bundles, each once.
    pub static_busy: u64,
    /// Slots used over a launch: each bundle's use times the times it runs.
    pub dynamic_busy: Estimate,
    /// `dynamic_busy / (dynamic_bundles × capacity)`, from the upper bounds.
    pub utilization: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LloFacts {
    /// The computation the LLO program was compiled for (`fp8_mm_v3.1`).
    pub computation: String,
    pub path: String,
    pub static_bundles: u64,
    /// Bundles issued per launch: each bundle times the trip counts of the loops around it.
    pub dynamic_bundles: Estimate,
    pub loops: Vec<LoopFacts>,
    /// Empty without the `final_hlo-static-per-bundle-utilization` table.
    pub slots: Vec<SlotFacts>,
    /// Conditional branches inside loop bodies other than the back edges: code they skip is still counted each
    /// iteration, so with any of them `dynamic_bundles` is an upper bound.
    pub branches_in_loops: u64,
}

/// An LLO loop's trip count beside what the Mosaic kernel says it should be.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CrossCheck {
    pub llo_loop: String,
    pub llo_trips: Estimate,
    /// `grid 4×4 = 16`, `fp8_mm_v2/arg10: 0..4 step 1 = 4`.
    pub mosaic: String,
    pub mosaic_trips: Estimate,
    /// LLO trips − Mosaic trips: 0, or the extra iterations of libtpu's software pipelining of the grid loop
    /// (its prologue and epilogue stages run as predicated iterations).
    pub extra: Option<i64>,
    /// Both counts known and consistent (false when either is unknown: `extra` is then none).
    pub agrees: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KernelFacts {
    /// The kernel function (`fp8_mm_v3`).
    pub name: String,
    /// The Mosaic dump (or decoded body) read.
    pub mosaic: String,
    pub grid: Vec<i64>,
    pub dimension_semantics: Vec<String>,
    pub grid_steps: Estimate,
    pub matmuls: Vec<MatmulFacts>,
    pub mxu: MxuFacts,
    pub flops: Estimate,
    /// Windows and whole operands moved by the pipeline, plus DMAs to or from HBM.
    pub hbm_bytes: Estimate,
    pub buffers: Vec<BufferFacts>,
    pub dmas: Vec<DmaFacts>,
    pub dma_starts_per_step: Estimate,
    pub dma_waits_per_step: Estimate,
    pub vmem: Footprint,
    pub smem: Footprint,
    pub for_loops: Vec<ForFacts>,
    pub llo: Option<LloFacts>,
    pub cross_checks: Vec<CrossCheck>,
    pub time: TimeFacts,
    /// The MXU's peak for the format the matmuls run in (fp8 or int8 when native, else bf16), per TensorCore.
    pub peak_tflops: Option<f64>,
    /// Achieved TFLOPS over that peak: the MXU's share of the predicted time.
    pub peak_fraction: Option<Interval>,
}

/// The facts of every Mosaic kernel of `c` (`files`: the parsed files `c` was built from).
pub fn compilation_facts(c: &Compilation<'_>, files: &[Parsed<'_>], ctx: Context<'_>) -> CompilationFacts {
    let chip = c.target.as_ref().and_then(|t| ctx.hardware.chip(t.name())).cloned();
    let mut names: Vec<&str> = Vec::new();
    for (_, u) in c.units_of(Layer::Mosaic) {
        for k in kernels(&u.module) {
            if !names.contains(&k.name) {
                names.push(k.name);
            }
        }
    }
    let kernels: Vec<KernelFacts> =
        names.iter().filter_map(|n| kernel_facts(c, files, n, chip.as_ref(), ctx.assume)).collect();
    let flops = Estimate::sum(kernels.iter().map(|k| &k.flops));
    let hbm_bytes = Estimate::sum(kernels.iter().map(|k| &k.hbm_bytes));
    let kernels_sum = kernels.iter().try_fold(Interval::point(0.0), |a, k| Some(a.plus(k.time.predicted_us?)));
    let program = program::program_facts(c, files, chip.as_ref(), ctx.assume, &kernels);
    // A program with an instruction the model cannot time (its LLO program not dumped) falls back to its kernels:
    // the program's facts say which instruction.
    let predicted_us = program.as_ref().and_then(|p| p.predicted_us).or(kernels_sum.filter(|_| !names.is_empty()));
    CompilationFacts {
        dir: c.dir.clone(),
        target: c.target.as_ref().map(|t| t.name().to_string()),
        chip,
        hlo_io_bytes: hlo_io_bytes(c),
        kernels,
        flops,
        hbm_bytes,
        program,
        predicted_us,
    }
}

/// Bytes of the entry computation's parameters and root in the best HLO dump (after optimizations).
fn hlo_io_bytes(c: &Compilation<'_>) -> Estimate {
    let Some(u) = program::best_hlo(c) else { return Estimate::unknown("no HLO dump") };
    let m = &u.module;
    let Some(f) = m.entry else { return Estimate::unknown("the HLO dump has no entry computation") };
    let ops =
        m.body_ops(f).iter().copied().filter(|&o| crate::semantic::op::is_parameter(m.op(o).opcode)).chain(m.root(f));
    let mut total = 0u64;
    for o in ops {
        let Some(s) = m.op(o).shape() else { return Estimate::unknown("an entry shape is missing") };
        for a in s.leaves() {
            let dims: Option<Vec<i64>> =
                a.dims.iter().map(|d| if let crate::ir::Dim::Static(n) = d { Some(*n) } else { None }).collect();
            let bits = dims.and_then(mosaic::checked_product).and_then(|e| e.checked_mul(u64::from(a.dtype.bits())));
            let Some(b) = bits else { return Estimate::unknown("an entry shape is dynamic") };
            total = total.saturating_add(b.div_ceil(8));
        }
    }
    Estimate::Exact(total)
}

fn kernel_facts(
    c: &Compilation<'_>,
    files: &[Parsed<'_>],
    name: &str,
    chip: Option<&Chip>,
    assume: &Assume,
) -> Option<KernelFacts> {
    let unit = &c.units[c.canonical_kernel_unit(name)?];
    let k = crate::semantic::kernel::named(&unit.module, name)?;
    let mut mf = mosaic::facts(&unit.module, &k, assume);
    let llo_unit = llo_unit_of(c, name).map(|i| &c.units[i]);
    if let Some(u) = llo_unit {
        mark_placed(&mut mf, &k, &u.module);
    }
    let llo = llo_unit.map(|u| llo_facts(u.path, &u.module, files, assume));
    let mxu = mxu_facts(&mf.matmuls, llo_unit.map(|u| &*u.module), chip);
    let flops = Estimate::sum(mf.matmuls.iter().map(|m| &m.flops));
    let sparsecore = is_sparsecore_core(k.core_type);
    // A SparseCore kernel's DMAs are per subcore and its gathers indexed by data (`x_hbm.at[idx_vmem]`): the
    // TensorCore pipeline's byte count reads them as whole-window copies per grid step (128 GiB for the
    // SparseCore guide's 2 GiB gather), a number about the wrong core.
    let hbm_bytes = if sparsecore {
        Estimate::unknown("a SparseCore kernel: its DMAs are not counted")
    } else {
        Estimate::sum(
            mf.buffers
                .iter()
                .filter(|b| !b.placed_on_chip)
                .map(|b| &b.hbm_bytes)
                .chain(mf.dmas.iter().map(|d| &d.hbm_bytes)),
        )
    };
    let footprint = |space: &str, cap: Option<u64>| {
        let parts: Vec<Estimate> = mf
            .buffers
            .iter()
            .filter(|b| b.memory_space.as_deref() == Some(space))
            .map(|b| {
                b.bytes.map_or_else(
                    || Estimate::unknown(format!("{}: size unknown", b.arg)),
                    |x| Estimate::Exact(x.saturating_mul(b.buffers)),
                )
            })
            .collect();
        let bytes = Estimate::sum(&parts);
        let fraction = bytes.max().zip(cap).map(|(b, c)| b as f64 / c as f64);
        Footprint { bytes, capacity: cap, fraction }
    };
    let cross_checks = llo.as_ref().map(|l| cross_checks(l, &mf)).unwrap_or_default();
    let peak = chip.and_then(|c| {
        let fmt = match (mxu.mode, mxu.requested) {
            (MxuMode::Native, Some(Narrow::Fp8)) => "fp8",
            (MxuMode::Native, Some(Narrow::Int8 | Narrow::Int4)) => "int8",
            _ => "bf16",
        };
        c.peak_tflops_per_core(fmt)
    });
    let transfers = transfers(&mf);
    let issued = llo.as_ref().map(|l| issued_bundles(l, &cross_checks));
    let mxu_us = mxu_time(&flops, peak, &mxu);
    let time = if sparsecore {
        TimeFacts::untimed(SPARSECORE_UNTIMED.to_string())
    } else {
        time::predict(chip, issued.as_ref(), &hbm_bytes, &flops, &transfers, mxu_us)
    };
    Some(KernelFacts {
        name: name.to_string(),
        mosaic: unit.describe(),
        grid: k.iteration_bounds.clone(),
        dimension_semantics: k.dimension_semantics.iter().map(|s| s.to_string()).collect(),
        grid_steps: mf.grid_steps.clone(),
        mxu,
        flops,
        hbm_bytes,
        dma_starts_per_step: Estimate::sum(mf.dmas.iter().map(|d| &d.per_step)),
        dma_waits_per_step: mf.waits_per_step.clone(),
        vmem: footprint("vmem", chip.and_then(Chip::vmem_bytes)),
        smem: footprint("smem", chip.and_then(Chip::smem_bytes)),
        matmuls: mf.matmuls,
        buffers: mf.buffers,
        dmas: mf.dmas,
        for_loops: mf.loops,
        llo,
        cross_checks,
        peak_tflops: peak,
        peak_fraction: time.achieved_tflops.zip(peak).map(|(a, p)| Interval { min: a.min / p, max: a.max / p }),
        time,
    })
}

/// Marks the windows and whole operands XLA placed in VMEM or SMEM before the call (the LLO entry's
/// `inlined_call_operand.vmem`, by the custom call's operand index: scalar-prefetch operands first, then the
/// kernel's operands): the kernel moves no HBM bytes for them, and the copy that put them there is XLA's, in the
/// compilation's schedule (`program`). An operand the LLO shows in HBM the kernel copies itself, whatever its
/// Mosaic memory space.
fn mark_placed(mf: &mut mosaic::MosaicFacts, k: &crate::semantic::kernel::Kernel<'_>, llo: &Module<'_>) {
    use crate::semantic::kernel::ArgRole;
    let entry = crate::semantic::llo::entry_info(llo);
    let on_chip: Vec<i64> =
        entry.operands.iter().filter(|o| matches!(o.space, "vmem" | "smem")).filter_map(|o| o.index).collect();
    let prefetch = k.args.iter().filter(|a| matches!(a.role, ArgRole::ScalarPrefetch(_))).count() as i64;
    for b in &mut mf.buffers {
        let Some(a) = k.args.iter().find(|a| a.name == b.arg) else { continue };
        let index = match a.role {
            ArgRole::Window(i) | ArgRole::Operand(i) => i64::from(i) + prefetch,
            _ => continue,
        };
        b.placed_on_chip = on_chip.contains(&index);
    }
}

/// The bundles a launch issues, for the compute term: the LLO's dynamic bundles less the grid loop's body on the
/// iterations libtpu adds to software-pipeline the grid (the cross-check's `extra`). Those iterations run the
/// pipeline's first and last stages, its DMA issues and waits, and branch over the body's compute (the forward
/// branch `branches_in_loops` counts in the grid loop): charging them the whole body counted a 2-step grid's
/// compute twice (jax's matmul guide at 1024³ with 512 × 1024 × 1024 blocks: 4 LLO iterations for 2 steps).
fn issued_bundles(l: &LloFacts, checks: &[CrossCheck]) -> Estimate {
    let grid = checks.first().filter(|c| c.mosaic == "the grid");
    let stage = grid.and_then(|g| {
        let extra = u64::try_from(g.extra?).ok().filter(|&e| e > 0)?;
        let trips = g.llo_trips.exact().filter(|&t| t > extra)?;
        let lp = l.loops.iter().find(|x| x.name == g.llo_loop)?;
        let runs = trips::bundle_runs(l.static_bundles, &l.loops);
        let body = runs.get(lp.start as usize..=(lp.end as usize).min(runs.len().checked_sub(1)?))?;
        let (lo, hi) = Estimate::sum(body).bounds()?;
        Some((lo / trips * extra, hi / trips * extra))
    });
    match (stage, l.dynamic_bundles.bounds()) {
        (Some((s0, s1)), Some((d0, d1))) => {
            let (a, b) = (d0.saturating_sub(s0), d1.saturating_sub(s1));
            Estimate::range(a.min(b), a.max(b))
        }
        _ => l.dynamic_bundles.clone(),
    }
}

/// The MXU's own time: FLOPs at the peak rate of the format it runs, with f32 operands at half the rate. The LLO
/// shows why: an f32 `vmatmul` streams 8 rows of the LHS where a bf16 one streams 16 (an f32 vreg holds 8 × 128
/// values), so a matmul with f32 operands issues twice the `vmatmul` ops (docs/performance-model.md, "MXU
/// formats"); the model takes each op to hold the MXU as long. Weighted by the share of f32 ops in the program.
fn mxu_time(flops: &Estimate, peak_tflops: Option<f64>, mxu: &MxuFacts) -> Option<Interval> {
    let peak = peak_tflops.filter(|p| *p > 0.0)?;
    let (lo, hi) = flops.bounds()?;
    let f32_ops: usize = mxu.formats.iter().filter(|f| f.format == "f32").map(|f| f.count).sum();
    let other: usize = mxu.formats.iter().filter(|f| f.format != "f32").map(|f| f.count).sum();
    // ops issued ÷ the ops the same FLOPs take at bf16 width
    let factor = if f32_ops == 0 { 1.0 } else { (f32_ops + other) as f64 / (f32_ops as f64 / 2.0 + other as f64) };
    let us = |f: u64| f as f64 / (peak * 1e6) * factor;
    Some(Interval { min: us(lo), max: us(hi) })
}

/// The pipeline's rounds and the bytes it cannot overlap (`time::Transfers`). A window fetching a new block on
/// `n` grid steps makes `n` rounds (its block's fetches: HBM bytes / block bytes); a DMA the kernel starts itself
/// makes a round per run. Exposed: one block per window (an input's first, which the prologue fetches before any
/// compute; an output's last, which the epilogue writes back after it), whole operands and scalar prefetch.
fn transfers(mf: &mosaic::MosaicFacts) -> time::Transfers {
    let mut rounds = Estimate::Exact(0);
    let mut exposed = Vec::new();
    let larger = |a: &Estimate, b: &Estimate| match (a.bounds(), b.bounds()) {
        (Some((a0, a1)), Some((b0, b1))) => Estimate::range(a0.max(b0), a1.max(b1)),
        _ => Estimate::unknown("a fetch count is unknown"),
    };
    for b in &mf.buffers {
        match (b.role, b.bytes) {
            // XLA put it on chip before the call: its fetches are copies within VMEM, still one round each
            ("window", Some(block)) if block > 0 && b.placed_on_chip => {
                if let Some((lo, hi)) = b.fetched.bounds() {
                    rounds = larger(&rounds, &Estimate::range(lo, hi));
                }
            }
            _ if b.placed_on_chip => {}
            ("window", Some(block)) if block > 0 => {
                rounds = larger(&rounds, &b.fetched);
                exposed.push(match b.hbm_bytes.bounds() {
                    Some((lo, hi)) => Estimate::range(lo.min(block), hi.min(block)),
                    None => b.hbm_bytes.clone(),
                });
            }
            ("window", _) => exposed.push(b.hbm_bytes.clone()),
            _ => exposed.push(b.hbm_bytes.clone()),
        }
    }
    for d in mf.dmas.iter().filter(|d| d.hbm_bytes.max().is_some_and(|b| b > 0)) {
        rounds = larger(&rounds, &d.runs);
    }
    time::Transfers { rounds, exposed_bytes: Estimate::sum(&exposed) }
}

/// The LLO unit of kernel `name`: a computation named after it (`fp8_mm_v3.1`), else the one named after an HLO
/// custom call running it (jax names calls after the Python function: `flash_attention.1` runs
/// `_flash_attention_kernel`).
fn llo_unit_of(c: &Compilation<'_>, name: &str) -> Option<usize> {
    if let Some(u) = crosslink::llo_units_of_kernel(c, name).into_iter().next() {
        return Some(u);
    }
    for (i, u) in c.units_of(Layer::Hlo).filter(|(i, _)| crosslink::is_canonical(c, *i)) {
        let m = &u.module;
        for id in m.op_ids() {
            if crate::parse::calls::is_tpu_custom_call(m, id)
                && crosslink::call_kernel_name(c, i, id).as_deref() == Some(name)
            {
                if let Some(l) = crosslink::llo_units(c, m.op(id).name).into_iter().next() {
                    return Some(l);
                }
            }
        }
    }
    None
}

/// The LLO program of a kernel: loops, bundles, and slot use weighted by how often each bundle runs.
fn llo_facts(path: &str, m: &Module<'_>, files: &[Parsed<'_>], assume: &Assume) -> LloFacts {
    let computation =
        crate::semantic::llo::entry_info(m).name.map(str::to_string).unwrap_or_else(|| m.name.to_string());
    let loops = trips::llo_loops(m, &computation, assume);
    let static_bundles = trips::static_bundles(m);
    let runs = trips::bundle_runs(static_bundles, &loops);
    let dynamic_bundles = if static_bundles > trips::MAX_BUNDLES {
        Estimate::unknown(format!("{static_bundles} bundles: more than the model follows"))
    } else {
        Estimate::sum(&runs)
    };
    let slots = utilization_of(path, files).map(|u| slot_facts(&u, &runs, &dynamic_bundles)).unwrap_or_default();
    let branches_in_loops = trips::branches_in_loops(m, &loops);
    LloFacts { computation, path: path.to_string(), static_bundles, dynamic_bundles, loops, slots, branches_in_loops }
}

/// The utilization table libtpu wrote beside a final_bundles file (same timestamp and computation).
fn utilization_of<'f>(bundles: &str, files: &'f [Parsed<'_>]) -> Option<Utilization<'f>> {
    use crate::parse::llo::llo_file_name;
    let me = llo_file_name(bundles)?;
    let dir = std::path::Path::new(bundles).parent();
    let f = files.iter().find(|p| {
        let n = llo_file_name(&p.file.path);
        std::path::Path::new(&p.file.path).parent() == dir
            && n.is_some_and(|n| n.ts == me.ts && n.computation == me.computation && n.stage.contains("utilization"))
    })?;
    crate::parse::llo::tables::utilization(&f.file.text).ok().map(|r| r.1)
}

fn slot_facts(u: &Utilization<'_>, runs: &[Estimate], dynamic: &Estimate) -> Vec<SlotFacts> {
    if u.bundle_count() != runs.len() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (i, unit) in u.units.iter().enumerate() {
        let cap = u.capacity.get(i).copied().unwrap_or(0);
        let mut stat = 0u64;
        let mut dynb = Estimate::Exact(0);
        for (b, row) in u.rows().enumerate() {
            let used = u64::from(row.get(i).copied().unwrap_or(0));
            if used > 0 {
                stat += used;
                dynb = dynb.add(&runs[b].scale(used));
            }
        }
        let utilization = match (dynb.max(), dynamic.max()) {
            (Some(b), Some(d)) if d > 0 && cap > 0 => Some(b as f64 / (d as f64 * f64::from(cap))),
            _ => None,
        };
        out.push(SlotFacts {
            unit: unit.to_string(),
            capacity: cap,
            static_busy: stat,
            dynamic_busy: dynb,
            utilization,
        });
    }
    out
}

/// The MXU mode: the matmuls' operand types at the Mosaic op, the LLO's `vmatmul` formats, then the table.
fn mxu_facts(mm: &[MatmulFacts], llo: Option<&Module<'_>>, chip: Option<&Chip>) -> MxuFacts {
    let lf = llo.map(crate::analysis::data_format::llo_formats).unwrap_or_default();
    let formats = lf.iter().map(|f| MxuFormat { format: f.format.clone(), count: f.count }).collect();
    let narrow = |d: Option<DType>| d.and_then(Narrow::of);
    let requested = mm.iter().find_map(|m| match (narrow(m.lhs), narrow(m.rhs)) {
        (Some(a), Some(b)) if a == b => Some(a),
        _ => None,
    });
    let mode = if mm.is_empty() {
        MxuMode::None
    } else if mm.iter().any(|m| m.upcast_from.is_some()) {
        MxuMode::Upcast
    } else if let Some(n) = requested {
        let table = chip.and_then(|c| match n {
            Narrow::Fp8 => c.native.fp8,
            Narrow::Int8 => c.native.int8,
            Narrow::Int4 => c.native.int4,
        });
        // Integer matmuls widened by the compiler print as ordinary bf16 `vmatmul`s; fp8 ones keep an fp8 segment.
        match (lf.is_empty(), lf.iter().all(|f| f.native_for(n)), table) {
            (false, true, _) => MxuMode::Native,
            (false, false, _) => MxuMode::Widened,
            (true, _, Some(true)) => MxuMode::Native,
            (true, _, Some(false)) => MxuMode::Widened,
            (true, _, None) => MxuMode::Unknown,
        }
    } else {
        MxuMode::Wide
    };
    MxuFacts { mode, requested, formats }
}

/// The outermost LLO loop against the grid, and inner LLO loops against the `scf.for` loops (level 2 ↔ the
/// outermost `scf.for`s), matched in order.
fn cross_checks(l: &LloFacts, mf: &mosaic::MosaicFacts) -> Vec<CrossCheck> {
    let mut out = Vec::new();
    let check = |lp: &LoopFacts, mosaic: String, want: &Estimate| {
        let extra = match (lp.trips.exact(), want.exact()) {
            (Some(a), Some(b)) => Some(a as i64 - b as i64),
            _ => None,
        };
        CrossCheck {
            llo_loop: lp.name.clone(),
            llo_trips: lp.trips.clone(),
            mosaic,
            mosaic_trips: want.clone(),
            extra,
            agrees: extra.is_some_and(|e| (0..=2).contains(&e)),
        }
    };
    let outer: Vec<&LoopFacts> = l.loops.iter().filter(|x| x.level == 1).collect();
    let grid_loop = outer.iter().copied().max_by_key(|x| x.static_bundles);
    if let (Some(g), true) = (grid_loop, mf.grid_steps.exact().is_some_and(|s| s > 1)) {
        out.push(check(g, "the grid".to_string(), &mf.grid_steps));
        let inner: Vec<&LoopFacts> =
            l.loops.iter().filter(|x| x.level == 2 && x.start >= g.start && x.end <= g.end).collect();
        let fors: Vec<&ForFacts> = mf.loops.iter().filter(|f| f.within.is_empty()).collect();
        if inner.len() == fors.len() {
            for (lp, f) in inner.iter().zip(fors) {
                out.push(check(lp, f.name.clone(), &f.trips));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparsecore_core_types_are_told_apart_from_the_tensorcore() {
        // `tpu.core_type` as jax 0.10.2's Mosaic prints it: the SparseCore guide's gather body and its launcher
        // (tests/data/perf/sparsecore), and a TensorCore kernel (`#tpu.core_type<tc>`)
        assert!(is_sparsecore_core(Some("sc_vector_subcore")));
        assert!(is_sparsecore_core(Some("sc_scalar_subcore")));
        assert!(!is_sparsecore_core(Some("tc")));
        assert!(!is_sparsecore_core(None));
    }
}
