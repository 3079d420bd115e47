//! What a Mosaic kernel says about the work it does, before the LLO: the grid, `scf.for` trip counts, matmul
//! shapes (FLOPs), the bytes its windows and DMAs move, and what it keeps in VMEM and SMEM.
//!
//! Counting rules: an op runs once per grid step times the trip counts of the `scf.for` loops around it; inside an
//! `scf.if` the model cannot decide, it runs anywhere from never to that many times (a range). A pipelined window
//! (`window_params[i].window_bounds`) moves its block each time the block index its `transform_i` computes changes
//! from one grid step to the next (the grid runs in row-major order, the last dimension fastest), as Pallas'
//! pipeline skips a fetch whose block is already resident; a transform that reads scalar-prefetch values or ops
//! the model does not evaluate gives the range from one fetch to one per step.

use super::estimate::{Assume, Estimate};
use crate::ir::{DType, Def, MlirType, Module, OpId};
use crate::semantic::kernel::{const_int, ArgRole, Kernel, KernelArg, RefTrace};
use crate::semantic::op::{is_conditional, op_name};
use serde::Serialize;
use std::collections::HashMap;

/// One `scf.for` of a kernel.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ForFacts {
    /// `<kernel>/<induction variable>` (`fp8_mm_v2/arg10`): the name `--assume` takes.
    pub name: String,
    pub lower: Option<i64>,
    pub upper: Option<i64>,
    pub step: Option<i64>,
    pub trips: Estimate,
    /// Loops around it, outermost first (their names).
    pub within: Vec<String>,
}

/// One matmul of a kernel.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MatmulFacts {
    pub opcode: String,
    pub lhs: Option<DType>,
    pub rhs: Option<DType>,
    pub acc: Option<DType>,
    /// `[m, k, n]` (batch dimensions folded into `m`).
    pub mkn: Option<[u64; 3]>,
    /// An operand widened from a narrow type in the kernel (`arith.extf` of f8 to bf16) before the matmul.
    pub upcast_from: Option<DType>,
    /// FLOPs of one execution (2·m·k·n).
    pub flops_each: Option<u64>,
    /// Executions per launch.
    pub runs: Estimate,
    pub flops: Estimate,
}

/// One kernel operand or scratch buffer as the model sees it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BufferFacts {
    pub arg: String,
    /// `window`, `operand`, `scratch`, `scalar-prefetch`.
    pub role: &'static str,
    pub memory_space: Option<String>,
    /// Bytes of one block (a window) or of the whole buffer.
    pub bytes: Option<u64>,
    /// Copies kept on chip: 2 for a double-buffered window, the leading dimension of a scratch buffer DMAs fill
    /// slot by slot, else 1.
    pub buffers: u64,
    /// Bytes moved between HBM and the chip for it by the pipeline (windows, whole operands), per launch.
    pub hbm_bytes: Estimate,
    /// A window's block fetches per launch (0 for other buffers).
    pub fetched: Estimate,
    /// XLA placed the operand in VMEM or SMEM before the call (the LLO entry says so): the kernel's fetches of it
    /// stay on chip and its `hbm_bytes` are not the kernel's HBM traffic; the copy is in the compilation's schedule.
    pub placed_on_chip: bool,
}

/// One DMA start of a kernel.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DmaFacts {
    pub source: Option<String>,
    pub target: Option<String>,
    /// `hbm→vmem` etc.
    pub route: String,
    pub bytes_each: Option<u64>,
    /// Starts per grid step and per launch.
    pub per_step: Estimate,
    pub runs: Estimate,
    /// Bytes to or from HBM per launch (0 for a copy between on-chip memories).
    pub hbm_bytes: Estimate,
}

pub(super) struct MosaicFacts {
    pub grid_steps: Estimate,
    pub loops: Vec<ForFacts>,
    pub matmuls: Vec<MatmulFacts>,
    pub buffers: Vec<BufferFacts>,
    pub dmas: Vec<DmaFacts>,
    pub waits_per_step: Estimate,
}

/// The product of non-negative sizes; `None` on a negative (dynamic) size or overflow.
pub(super) fn checked_product(xs: impl IntoIterator<Item = i64>) -> Option<u64> {
    xs.into_iter().try_fold(1u64, |a, x| a.checked_mul(u64::try_from(x).ok()?))
}

/// The integer a value holds when its definition folds to a constant (`arith.addi %c0, %c4`).
pub(super) fn fold(m: &Module<'_>, def: Def, env: &HashMap<(u32, u32), i64>, depth: u32) -> Option<i64> {
    if depth > 32 {
        return None;
    }
    let op = match def {
        Def::Op { op, .. } => op,
        Def::BlockArg { block, index } => return env.get(&(block.0, index)).copied(),
        Def::Unresolved => return None,
    };
    if let Some(c) = const_int(m, op) {
        return Some(c);
    }
    let o = m.op(op);
    let arg = |k: usize| o.operands.get(k).and_then(|x| fold(m, x.def, env, depth + 1));
    Some(match op_name(o.opcode) {
        "addi" => arg(0)?.checked_add(arg(1)?)?,
        "subi" => arg(0)?.checked_sub(arg(1)?)?,
        "muli" => arg(0)?.checked_mul(arg(1)?)?,
        "divsi" | "divui" => arg(0)?.checked_div(arg(1)?)?,
        "floordivsi" => arg(0)?.checked_div_euclid(arg(1)?)?,
        "ceildivsi" => {
            let (a, b) = (arg(0)?, arg(1)?);
            a.checked_add(b.checked_sub(1)?)?.checked_div(b)?
        }
        "remsi" | "remui" => arg(0)?.checked_rem(arg(1)?)?,
        "minsi" | "minui" => arg(0)?.min(arg(1)?),
        "maxsi" | "maxui" => arg(0)?.max(arg(1)?),
        "index_cast" | "index_castui" | "extsi" | "extui" | "trunci" => arg(0)?,
        "andi" => arg(0)? & arg(1)?,
        "ori" => arg(0)? | arg(1)?,
        "xori" => arg(0)? ^ arg(1)?,
        "select" => {
            if arg(0)? != 0 {
                arg(1)?
            } else {
                arg(2)?
            }
        }
        "cmpi" => i64::from(compare(cmpi_predicate(o)?, arg(0)?, arg(1)?)?),
        _ => return None,
    })
}

/// `arith.cmpi slt, …` as written (the custom syntax's keyword) or as its enum number.
fn cmpi_predicate<'o>(o: &'o crate::ir::Op<'_>) -> Option<&'o str> {
    let w = o.payload.as_deref().or_else(|| o.attr("predicate")).and_then(|v| v.word())?;
    const NAMES: [&str; 10] = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"];
    match w.parse::<usize>() {
        Ok(n) => NAMES.get(n).copied(),
        Err(_) => NAMES.into_iter().find(|n| w.trim_start_matches("#arith<cmpi").trim_end_matches('>').trim() == *n),
    }
}

fn compare(pred: &str, a: i64, b: i64) -> Option<bool> {
    let (ua, ub) = (a as u64, b as u64);
    Some(match pred {
        "eq" => a == b,
        "ne" => a != b,
        "slt" => a < b,
        "sle" => a <= b,
        "sgt" => a > b,
        "sge" => a >= b,
        "ult" => ua < ub,
        "ule" => ua <= ub,
        "ugt" => ua > ub,
        "uge" => ua >= ub,
        _ => return None,
    })
}

/// Bytes of a shaped type with static dimensions.
pub(super) fn type_bytes(t: &MlirType<'_>) -> Option<u64> {
    let s = t.shaped()?;
    let bits = u64::from(t.dtype()?.bits());
    Some(checked_product(s.static_dims()?)?.checked_mul(bits)?.div_ceil(8))
}

/// Grid dimension `i` of bound `b`: as compiled, or the user's `<kernel>/grid<i>` for a dynamic one.
fn grid_dim(k: &Kernel<'_>, i: usize, b: i64, assume: &Assume) -> i64 {
    match assume.get(&format!("{}/grid{i}", k.name)) {
        Some(v) if b <= 0 => i64::try_from(v).unwrap_or(i64::MAX),
        _ => b,
    }
}

/// The product of the grid, when every bound is a positive constant (or assumed).
fn grid_steps(k: &Kernel<'_>, assume: &Assume) -> Estimate {
    let dims: Vec<i64> = k.iteration_bounds.iter().enumerate().map(|(i, &b)| grid_dim(k, i, b, assume)).collect();
    if let Some(i) = dims.iter().position(|&b| b <= 0) {
        return Estimate::unknown(format!(
            "the grid is dynamic: dimension {i} is set at run time (--assume {}/grid{i}=N)",
            k.name
        ));
    }
    match checked_product(dims) {
        Some(n) => Estimate::Exact(n),
        None => Estimate::unknown("the grid's size overflows"),
    }
}

/// The name of each of the kernel's loops (`k.loops`' order): `<kernel>/<induction variable>`, a later loop with
/// the same variable name numbered `#2`, `#3`, ... — what `--assume` and the performance model's facts call it.
pub fn loop_names(m: &Module<'_>, k: &Kernel<'_>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in &k.loops {
        let op = m.op(c.op);
        let iv = op
            .regions
            .first()
            .and_then(|r| m.regions[r.idx()].blocks.first())
            .and_then(|b| m.blocks[b.idx()].args.first())
            .map_or("?", |p| p.name);
        let name = format!("{}/{}", k.name, iv.trim_start_matches('%'));
        // the same induction variable name in sibling regions: number the later ones
        let same = out.iter().filter(|n| **n == name || n.starts_with(&format!("{name}#"))).count();
        out.push(if same > 0 { format!("{name}#{}", same + 1) } else { name });
    }
    out
}

/// `scf.for` loops with their trip counts, by op.
fn for_loops(m: &Module<'_>, k: &Kernel<'_>, assume: &Assume) -> Vec<(OpId, ForFacts)> {
    let env = HashMap::new();
    let mut out: Vec<(OpId, ForFacts)> = Vec::new();
    for (c, name) in k.loops.iter().zip(loop_names(m, k)) {
        let op = m.op(c.op);
        let bound = |i: usize| op.operands.get(i).and_then(|o| fold(m, o.def, &env, 0));
        let (lower, upper, step) =
            if op_name(op.opcode) == "for" { (bound(0), bound(1), bound(2)) } else { (None, None, None) };
        let trips = match (assume.get(&name), lower, upper, step) {
            (Some(v), ..) => Estimate::Exact(v),
            (None, Some(l), Some(u), Some(s)) if s > 0 => Estimate::Exact(((u - l).max(0) as u64).div_ceil(s as u64)),
            (None, ..) if op_name(op.opcode) != "for" => {
                Estimate::unknown(format!("`{}` {name}: a loop without bounds", op.opcode))
            }
            (None, ..) => Estimate::unknown(format!("{name}: a bound is read at run time")),
        };
        let within = m
            .ancestors(c.op)
            .filter_map(|a| out.iter().find(|(id, _)| *id == a).map(|(_, f)| f.name.clone()))
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        out.push((c.op, ForFacts { name, lower, upper, step, trips, within }));
    }
    out
}

/// How many times an op runs per grid step and per launch: the loops around it multiplied; under a conditional,
/// the grid and the loops are walked point by point when every condition folds there (`k + 1 < 4` on a loop index,
/// `program_id(2) == 0`), else it runs anywhere from never to every time.
struct Counter<'c, 'a> {
    m: &'c Module<'a>,
    loops: &'c [(OpId, ForFacts)],
    grid: &'c [i64],
    /// The kernel's entry block: its first arguments are the grid indices.
    entry: Option<crate::ir::BlockId>,
    steps: &'c Estimate,
}

/// The most points (grid steps × loop iterations) walked to decide conditionals.
const MAX_POINTS: u64 = 1 << 18;

impl Counter<'_, '_> {
    fn runs(&self, op: OpId) -> (Estimate, Estimate) {
        let mut per = Estimate::Exact(1);
        let mut conditional = false;
        for a in self.m.ancestors(op) {
            if let Some((_, f)) = self.loops.iter().find(|(id, _)| *id == a) {
                per = per.mul(&f.trips);
            } else if is_conditional(self.m.op(a).opcode) {
                conditional = true;
            }
        }
        if !conditional {
            return (per.clone(), per.mul(self.steps));
        }
        match self.walk(op) {
            Some((lo, hi, total)) => (Estimate::range(lo, hi), Estimate::Exact(total)),
            None => (per.up_to(), per.mul(self.steps).up_to()),
        }
    }

    /// Walks every grid step and every iteration of the loops around `op`: (fewest and most runs in a step, runs
    /// per launch). `None` when a condition does not fold or there are too many points.
    fn walk(&self, op: OpId) -> Option<(u64, u64, u64)> {
        let m = self.m;
        // (enclosing op, the region index `op` sits in), outermost first
        let mut chain = Vec::new();
        let mut cur = op;
        while let Some(p) = m.parent_op(cur) {
            let region = m.blocks[m.op(cur).block.idx()].region;
            chain.push((p, m.op(p).regions.iter().position(|r| *r == region)?));
            cur = p;
        }
        chain.reverse();
        let mut dims: Vec<((u32, u32), i64, i64, u64)> = Vec::new(); // (block arg, lower, step, trips)
        let entry = self.entry?;
        for (i, &g) in self.grid.iter().enumerate() {
            dims.push(((entry.0, i as u32), 0, 1, u64::try_from(g).ok()?));
        }
        let grid_dims = dims.len();
        for (p, _) in &chain {
            if let Some((_, f)) = self.loops.iter().find(|(id, _)| id == p) {
                let block = *m.regions[m.op(*p).regions.first()?.idx()].blocks.first()?;
                dims.push(((block.0, 0), f.lower?, f.step?, f.trips.exact()?));
            }
        }
        let points = dims.iter().try_fold(1u64, |a, d| a.checked_mul(d.3))?;
        if points > MAX_POINTS || points == 0 {
            return None;
        }
        let conds: Vec<(Def, bool)> = chain
            .iter()
            .filter(|(p, _)| op_name(m.op(*p).opcode) == "if")
            .map(|(p, r)| Some((m.op(*p).operands.first()?.def, *r == 0)))
            .collect::<Option<_>>()?;
        if conds.len() + dims.len() - grid_dims < chain.len() {
            return None; // another kind of region (`scf.while`, `scf.index_switch`) around the op
        }
        let (mut lo, mut hi, mut total, mut in_step, mut step_left) = (u64::MAX, 0u64, 0u64, 0u64, 0u64);
        let inner: u64 = dims[grid_dims..].iter().map(|d| d.3).product();
        let mut idx = vec![0u64; dims.len()];
        for _ in 0..points {
            let env: HashMap<(u32, u32), i64> =
                dims.iter().zip(&idx).map(|(d, &i)| (d.0, d.1 + d.2 * i as i64)).collect();
            let mut holds = true;
            for (def, then) in &conds {
                if (fold(m, *def, &env, 0)? != 0) != *then {
                    holds = false;
                }
            }
            in_step += u64::from(holds);
            step_left += 1;
            if step_left == inner {
                (lo, hi, total) = (lo.min(in_step), hi.max(in_step), total + in_step);
                (in_step, step_left) = (0, 0);
            }
            for d in (0..idx.len()).rev() {
                idx[d] += 1;
                if idx[d] < dims[d].3 {
                    break;
                }
                idx[d] = 0;
            }
        }
        Some((lo, hi, total))
    }
}

/// The value behind a matmul operand, through shape casts and broadcasts, when an `extf`/`sitofp` widened it from
/// a narrow type.
fn upcast_source(m: &Module<'_>, def: Def) -> Option<DType> {
    let mut d = def;
    for _ in 0..8 {
        let Def::Op { op, .. } = d else { return None };
        let o = m.op(op);
        let src = o.operands.first()?;
        match op_name(o.opcode) {
            "extf" | "sitofp" | "uitofp" | "convert" | "convert_element_type" => {
                let t = m.operand_dtype(op, 0)?;
                return (t.bits() <= 8).then_some(t);
            }
            "shape_cast" | "broadcast" | "transpose" | "bitcast" => d = src.def,
            _ => return None,
        }
    }
    None
}

fn operand_type<'a>(m: &Module<'a>, o: &crate::ir::Operand<'a>) -> Option<MlirType<'a>> {
    if let Some(t) = o.ty.as_ref().and_then(|t| t.mlir()) {
        return Some(t.clone());
    }
    match o.def {
        Def::Op { op, index } => m.op(op).ty.mlir()?.result(index as usize).cloned(),
        Def::BlockArg { block, index } => m.blocks[block.idx()].args.get(index as usize)?.ty.mlir().cloned(),
        Def::Unresolved => None,
    }
}

/// `[m, k, n]` of a matmul: the result's elements over its last dimension give m (batch folded in), the last
/// result dimension n, the LHS's contracting dimensions k (`dimension_numbers`' first list; else the LHS's last).
fn mkn(m: &Module<'_>, op: OpId) -> Option<[u64; 3]> {
    let o = m.op(op);
    let res = o.ty.mlir()?.result(0)?.shaped()?.static_dims()?;
    let lhs = operand_type(m, o.operands.first()?)?.shaped()?.static_dims()?;
    let contracting: Vec<usize> = o
        .attr("dimension_numbers")
        .and_then(|v| {
            v.word().or(match &v.kind {
                crate::ir::ValueKind::Str(s) => Some(*s),
                _ => None,
            })
        })
        .and_then(|w| w.split_once('[').and_then(|(_, r)| r.split_once(']')).map(|(l, _)| l.to_string()))
        .map(|l| l.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![lhs.len().saturating_sub(1)]);
    let k = checked_product(contracting.iter().map(|&i| lhs.get(i).copied()).collect::<Option<Vec<_>>>()?)?;
    let n = u64::try_from(*res.last()?).ok()?;
    let rows = checked_product(res.iter().copied())? / n.max(1);
    Some([rows, k, n])
}

fn matmuls(m: &Module<'_>, k: &Kernel<'_>, count: &Counter<'_, '_>) -> Vec<MatmulFacts> {
    let mut out = Vec::new();
    for mm in &k.matmuls {
        let op = m.op(mm.op);
        let upcast = op.operands.iter().take(2).find_map(|o| upcast_source(m, o.def));
        let dims = mkn(m, mm.op);
        let each = dims.and_then(|[a, b, c]| a.checked_mul(b)?.checked_mul(c)?.checked_mul(2));
        let runs = count.runs(mm.op).1;
        let flops = match each {
            Some(f) => runs.scale(f),
            None => Estimate::unknown(format!("`{}`: operand shapes not static", mm.opcode)),
        };
        out.push(MatmulFacts {
            opcode: mm.opcode.to_string(),
            lhs: mm.lhs,
            rhs: mm.rhs,
            acc: mm.acc,
            mkn: dims,
            upcast_from: upcast,
            flops_each: each,
            runs,
            flops,
        });
    }
    out
}

/// The block indices transform `name` gives at every grid step, in order: how many times the block changes
/// (the first fetch counts). `None` when it cannot be evaluated.
fn block_fetches(m: &Module<'_>, transform: &str, grid: &[i64]) -> Option<u64> {
    const MAX_STEPS: i64 = 1 << 18;
    let f = m.func_by_name(transform)?;
    let func = m.func(f);
    let entry = *m.regions[func.body.idx()].blocks.first()?;
    let ret = m.func_ops(f).into_iter().find(|&o| op_name(m.op(o).opcode) == "return")?;
    let total = i64::try_from(checked_product(grid.iter().copied())?).ok()?;
    if total > MAX_STEPS || grid.len() > func.params.len() {
        return None;
    }
    let mut idx = vec![0i64; grid.len()];
    let (mut prev, mut fetches): (Option<Vec<i64>>, u64) = (None, 0);
    for _ in 0..total {
        let env: HashMap<(u32, u32), i64> = idx.iter().enumerate().map(|(i, &v)| ((entry.0, i as u32), v)).collect();
        let cur: Vec<i64> = m.op(ret).operands.iter().map(|o| fold(m, o.def, &env, 0)).collect::<Option<_>>()?;
        if prev.as_ref() != Some(&cur) {
            fetches += 1;
        }
        prev = Some(cur);
        for d in (0..idx.len()).rev() {
            idx[d] += 1;
            if idx[d] < grid[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    Some(fetches)
}

fn space_of(a: &KernelArg<'_>) -> Option<String> {
    a.memory_space.map(str::to_string)
}

fn is_hbm(space: Option<&str>) -> bool {
    matches!(space, Some("hbm" | "any") | None)
}

/// The leading dimension of a scratch buffer that DMAs fill through a run-time slot index (`%arg7[%slot]`).
fn dma_slots(k: &Kernel<'_>, arg: usize) -> u64 {
    let dynamic_slot = k.dma_starts.iter().filter_map(|d| d.target.as_ref()).any(|t: &RefTrace<'_>| {
        t.base_arg == Some(arg)
            && t.slices
                .first()
                .and_then(|s| s.first())
                .is_some_and(|i| matches!(i, crate::semantic::kernel::Index::Value { .. }))
    });
    let lead = k.args.get(arg).and_then(|a| a.ty.as_ref()).and_then(|t| t.shaped()?.static_dims()?.first().copied());
    match (dynamic_slot, lead) {
        (true, Some(n)) if n > 1 => n as u64,
        _ => 1,
    }
}

fn buffers(m: &Module<'_>, k: &Kernel<'_>, grid: &[i64], steps: &Estimate) -> Vec<BufferFacts> {
    let mut out = Vec::new();
    for a in &k.args {
        if a.semaphore {
            continue;
        }
        let full = a.ty.as_ref().and_then(type_bytes);
        let space = space_of(a);
        let mut fetched = Estimate::Exact(0);
        let (role, bytes, buffers, hbm) = match a.role {
            ArgRole::GridIndex(_) => continue,
            // copied into SMEM once, before the first grid step
            ArgRole::ScalarPrefetch(_) => {
                let hbm = full.map_or_else(|| Estimate::unknown(format!("{}: size unknown", a.name)), Estimate::Exact);
                ("scalar-prefetch", full, 1, hbm)
            }
            ArgRole::Scratch(_) => ("scratch", full, dma_slots(k, a.index), Estimate::Exact(0)),
            ArgRole::Operand(_) | ArgRole::Window(_) => {
                let w = match a.role {
                    ArgRole::Window(i) => k.window_params.get(i as usize),
                    _ => None,
                };
                match w.and_then(|w| w.window_bounds.as_ref().map(|b| (w, b))) {
                    Some((w, bounds)) => {
                        let elems = checked_product(bounds.iter().copied());
                        let bits = a.ty.as_ref().and_then(MlirType::dtype).map(|d| u64::from(d.bits()));
                        let block = elems.zip(bits).and_then(|(e, b)| e.checked_mul(b)).map(|x| x.div_ceil(8));
                        let single = w.pipeline_mode.is_some_and(|p| p.contains("synchronous"));
                        let fetches = match w.transform.and_then(|t| block_fetches(m, t, grid)) {
                            Some(n) => Estimate::Exact(n),
                            None => match steps.bounds() {
                                Some((_, max)) => Estimate::range(1, max.max(1)),
                                None => steps.clone(),
                            },
                        };
                        let hbm = match block {
                            Some(b) => fetches.scale(b),
                            None => Estimate::unknown(format!("{}: block element type unknown", a.name)),
                        };
                        fetched = fetches;
                        ("window", block, if single { 1 } else { 2 }, hbm)
                    }
                    // A whole operand in VMEM/SMEM is copied in (or out) once; one in HBM/ANY moves by DMA.
                    None if !is_hbm(space.as_deref()) => {
                        let hbm = full
                            .map_or_else(|| Estimate::unknown(format!("{}: size unknown", a.name)), Estimate::Exact);
                        ("operand", full, 1, hbm)
                    }
                    None => ("operand", full, 0, Estimate::Exact(0)),
                }
            }
        };
        out.push(BufferFacts {
            arg: a.name.to_string(),
            role,
            memory_space: space,
            bytes,
            buffers,
            hbm_bytes: hbm,
            fetched,
            placed_on_chip: false,
        });
    }
    out
}

fn dmas(k: &Kernel<'_>, count: &Counter<'_, '_>) -> Vec<DmaFacts> {
    let space = |t: &Option<RefTrace<'_>>| -> Option<String> {
        let t = t.as_ref()?;
        t.ty.as_ref()
            .and_then(MlirType::memory_space)
            .map(str::to_string)
            .or_else(|| t.base_arg.and_then(|i| k.args.get(i)).and_then(|a| a.memory_space).map(str::to_string))
    };
    let name = |t: &Option<RefTrace<'_>>| {
        t.as_ref().map(|t| match t.base_arg.and_then(|i| k.args.get(i)) {
            Some(a) => a.name.to_string(),
            None => t.name.to_string(),
        })
    };
    let mut out = Vec::new();
    for d in &k.dma_starts {
        let (src, dst) = (space(&d.source), space(&d.target));
        let bytes = d
            .source
            .as_ref()
            .and_then(|t| t.ty.as_ref())
            .and_then(type_bytes)
            .or_else(|| d.target.as_ref().and_then(|t| t.ty.as_ref()).and_then(type_bytes));
        let (per, runs) = count.runs(d.op);
        let hbm = if d.device_id.is_none() && !is_hbm(src.as_deref()) && !is_hbm(dst.as_deref()) {
            Estimate::Exact(0)
        } else {
            match bytes {
                Some(b) => runs.scale(b),
                None => Estimate::unknown(format!("`{}`: transfer size not static", d.opcode)),
            }
        };
        let sp = |s: &Option<String>| s.clone().unwrap_or_else(|| "?".into());
        out.push(DmaFacts {
            source: name(&d.source),
            target: name(&d.target),
            route: format!("{}→{}", sp(&src), sp(&dst)),
            bytes_each: bytes,
            per_step: per,
            runs,
            hbm_bytes: hbm,
        });
    }
    out
}

/// Everything the Mosaic kernel `k` of module `m` says.
pub(super) fn facts(m: &Module<'_>, k: &Kernel<'_>, assume: &Assume) -> MosaicFacts {
    let steps = grid_steps(k, assume);
    let loops = for_loops(m, k, assume);
    let grid: Vec<i64> = match steps {
        Estimate::Exact(_) => k.iteration_bounds.iter().enumerate().map(|(i, &b)| grid_dim(k, i, b, assume)).collect(),
        _ => Vec::new(),
    };
    let entry = m.regions[m.func(k.func).body.idx()].blocks.first().copied();
    let count = Counter { m, loops: &loops, grid: &grid, entry: entry.filter(|_| !grid.is_empty()), steps: &steps };
    let waits: Vec<Estimate> = k.dma_waits.iter().map(|w| count.runs(w.op).0).collect();
    MosaicFacts {
        matmuls: matmuls(m, k, &count),
        buffers: buffers(m, k, &grid, &steps),
        dmas: dmas(k, &count),
        waits_per_step: Estimate::sum(&waits),
        grid_steps: steps.clone(),
        loops: loops.into_iter().map(|x| x.1).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 2×3 grid: A's block follows i, B's follows j, the output both; an `scf.for` of 4 starts a DMA in its first
    /// three iterations.
    const KERNEL: &str = r#"module attributes {stable_mosaic.version = 15 : i64} {
  func.func @k(%arg0: i32, %arg1: i32, %arg2: memref<64x256xbf16, #tpu.memory_space<vmem>>, %arg3: memref<256x128xbf16, #tpu.memory_space<vmem>>, %arg4: memref<512x512xbf16, #tpu.memory_space<any>>, %arg5: memref<64x128xf32, #tpu.memory_space<vmem>>, %arg6: memref<2x8x128xbf16, #tpu.memory_space<vmem>>, %arg7: memref<2x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>) attributes {dimension_semantics = [#tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<arbitrary>], iteration_bounds = array<i64: 2, 3>, scalar_prefetch = 0 : i64, scratch_operands = 2 : i64, tpu.core_type = #tpu.core_type<tc>, window_params = [{transform_indices = @transform_0, window_bounds = array<i64: 64, 256>}, {transform_indices = @transform_1, window_bounds = array<i64: 256, 128>}, {}, {transform_indices = @transform_3, window_bounds = array<i64: 64, 128>}]} {
    %c0 = arith.constant 0 : index
    %0 = vector.load %arg2[%c0, %c0] : memref<64x256xbf16, #tpu.memory_space<vmem>>, vector<64x256xbf16>
    %1 = vector.load %arg3[%c0, %c0] : memref<256x128xbf16, #tpu.memory_space<vmem>>, vector<256x128xbf16>
    %cst = arith.constant dense<0.000000e+00> : vector<64x128xf32>
    %2 = tpu.matmul %0, %1, %cst {dimension_numbers = #tpu.dot_dimension_numbers<[1], [0], [0], [1], [0, 0, 1, 1], [], []>} : vector<64x256xbf16>, vector<256x128xbf16>, vector<64x128xf32> -> vector<64x128xf32>
    vector.store %2, %arg5[%c0, %c0] : memref<64x128xf32, #tpu.memory_space<vmem>>, vector<64x128xf32>
    %c0_i32 = arith.constant 0 : i32
    %c3_i32 = arith.constant 3 : i32
    %c4_i32 = arith.constant 4 : i32
    %c1_i32 = arith.constant 1 : i32
    scf.for %arg8 = %c0_i32 to %c4_i32 step %c1_i32  : i32 {
      %3 = arith.cmpi slt, %arg8, %c3_i32 : i32
      scf.if %3 {
        %4 = tpu.memref_slice %arg4[%c0_i32, %c0_i32] : memref<512x512xbf16, #tpu.memory_space<any>> -> memref<8x128xbf16, #tpu.memory_space<any>>
        %5 = tpu.memref_slice %arg6[%c0_i32, %c0_i32, %c0_i32] : memref<2x8x128xbf16, #tpu.memory_space<vmem>> -> memref<1x8x128xbf16, #tpu.memory_space<vmem>>
        %6 = tpu.memref_squeeze %5 : memref<1x8x128xbf16, #tpu.memory_space<vmem>> -> memref<8x128xbf16, #tpu.memory_space<vmem>>
        %7 = tpu.memref_slice %arg7[%c0_i32] : memref<2x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
        %8 = tpu.memref_squeeze %7 : memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
        tpu.enqueue_dma source(%4 : memref<8x128xbf16, #tpu.memory_space<any>>) target(%6 : memref<8x128xbf16, #tpu.memory_space<vmem>>) target_semaphore(%8 : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>)
      } else {
      }
    }
    return
  }
  func.func @transform_0(%arg0: i32, %arg1: i32) -> (i32, i32) {
    %c0_i32 = arith.constant 0 : i32
    return %arg0, %c0_i32 : i32, i32
  }
  func.func @transform_1(%arg0: i32, %arg1: i32) -> (i32, i32) {
    %c0_i32 = arith.constant 0 : i32
    return %c0_i32, %arg1 : i32, i32
  }
  func.func @transform_3(%arg0: i32, %arg1: i32) -> (i32, i32) {
    return %arg0, %arg1 : i32, i32
  }
}
"#;

    fn facts_of(text: &str, assume: &Assume) -> MosaicFacts {
        let m = crate::parse::mlir::parse_mlir("k.mlir", text).expect("parses");
        let k = crate::semantic::kernel::kernels(&m).into_iter().next().expect("a kernel");
        facts(&m, &k, assume)
    }

    #[test]
    fn flops_windows_and_dmas_of_a_small_kernel() {
        let f = facts_of(KERNEL, &Assume::default());
        assert_eq!(f.grid_steps, Estimate::Exact(6));
        let [mm] = f.matmuls.as_slice() else { panic!("one matmul") };
        assert_eq!(mm.mkn, Some([64, 256, 128]));
        assert_eq!(mm.flops, Estimate::Exact(6 * 2 * 64 * 256 * 128));
        let hbm: Vec<(&str, Estimate)> = f.buffers.iter().map(|b| (b.arg.as_str(), b.hbm_bytes.clone())).collect();
        // A: 2 blocks (i changes twice); B: j runs 0,1,2 per i, 6 fetches; the output: 6 blocks; the ANY operand
        // and the scratch move nothing themselves
        let want = [("arg2", 2 * 32768), ("arg3", 6 * 65536), ("arg4", 0), ("arg5", 6 * 32768), ("arg6", 0)];
        assert_eq!(hbm, want.map(|(a, b)| (a, Estimate::Exact(b))));
        let [d] = f.dmas.as_slice() else { panic!("one DMA") };
        assert_eq!((d.route.as_str(), d.bytes_each), ("any→vmem", Some(2048)));
        assert_eq!(
            (d.per_step.clone(), d.runs.clone()),
            (Estimate::Exact(3), Estimate::Exact(18)),
            "iterations 0..3 of 4"
        );
        assert_eq!(f.loops[0].name, "k/arg8");
    }

    #[test]
    fn an_undecidable_condition_gives_a_range() {
        // the condition reads the loaded data: anything from never to every iteration
        let text = KERNEL.replace(
            "%3 = arith.cmpi slt, %arg8, %c3_i32 : i32",
            "%9 = memref.load %arg4[%c0, %c0] : memref<512x512xbf16, #tpu.memory_space<any>>\n      %3 = arith.cmpi slt, %arg8, %9 : i32",
        );
        let f = facts_of(&text, &Assume::default());
        assert_eq!(f.dmas[0].per_step, Estimate::Range { min: 0, max: 4 });
        assert_eq!(f.dmas[0].hbm_bytes, Estimate::Range { min: 0, max: 24 * 2048 });
    }

    #[test]
    fn a_run_time_loop_bound_is_unknown_until_assumed() {
        let text = KERNEL.replace("to %c4_i32 step", "to %arg1 step");
        let f = facts_of(&text, &Assume::default());
        assert!(f.loops[0].trips.reason().is_some_and(|r| r.contains("k/arg8")), "{:?}", f.loops[0]);
        assert!(f.dmas[0].runs.reason().is_some());
        let f = facts_of(&text, &Assume::parse(["k/arg8=2"]).unwrap());
        assert_eq!(f.dmas[0].runs, Estimate::Exact(12));
    }
}
