//! A small bounded abstract interpreter of a Mosaic kernel body, for the DMA analyses (`dma-balance`,
//! `dma-double-buffering`).
//!
//! The kernel body runs once per grid point, sequentially over `iteration_bounds` (last dimension fastest), with the
//! grid indices as its first arguments. The interpreter keeps concrete integers for grid indices, loop induction
//! variables, constants and integer arithmetic (`arith.*`, LLO scalar ops `llo.sadd.s32`, ...), follows memref views
//! (`tpu.memref_slice`, `tpu.memref_squeeze`, `llo.saddr_scaled`) to a base (a kernel argument or a `tpu.sem_alloc`)
//! with concrete offsets, and models scalar memory (SMEM scalars stored and loaded at concrete indices).
//!
//! A value it cannot know (a load of memory nothing stored, a dynamic bound) is an *atom* with an interval of
//! possible values; a comparison of an atom against a known integer, when the interval does not decide it, forks
//! the state in two and narrows the interval on each side, so later conditions on the same value stay consistent
//! (`i < n` then `i + 1 < n`). Other unknown conditions fork without narrowing. The result is a set of *paths*
//! (states), each with its own outstanding DMAs, trace and findings. Analyses report an op only when every explored
//! path that executed it shows the problem (without unknowns there is exactly one path, so this is exact).
//!
//! Bounds (documented in the analyses' docs):
//! - grid: every step when the grid has at most [`FULL_GRID`] points; else, per dimension, the first [`KEEP`]
//!   indices and the last ones, skipping a multiple of 12 indices in between (so `i % 2`, `% 3`, `% 4` slot
//!   patterns see the same phase they would have);
//! - `scf.for` with known bounds: every iteration up to [`FULL_LOOP`] iterations, else the first [`KEEP`] and the
//!   last ones the same way; with an unknown bound at most [`DYN_ITERS`] iterations per path;
//! - `scf.while`: at most [`DYN_ITERS`] iterations;
//! - at most [`MAX_STATES`] paths (beyond, paths with fewer findings and fewer unknown decisions are kept) and
//!   [`OP_BUDGET`] op evaluations per kernel (beyond, the simulation stops and leftovers are not judged).

use crate::ir::mlir_type::MlirType;
use crate::ir::*;
use crate::parse::mlir::attr as mattr;
use crate::semantic::kernel;
use crate::semantic::op::{
    is_constant, is_dma_start, is_dma_wait, is_load, is_matmul, is_scalar_access, is_semaphore_alloc, is_semaphore_op,
    is_semaphore_signal, is_semaphore_wait, is_store, op_name,
};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::Hash;

mod control;
mod paths;
mod sample;
mod semaphores;
mod symbolic;

pub use crate::analysis::dma::seed::{seed_from_host, Seed};
use paths::*;
use sample::{resolve, symbolic};
pub use sample::{witness_note, Rng, MIN_WITNESSES};
pub use symbolic::Step;
use symbolic::*;

pub const FULL_GRID: usize = 64;
pub const FULL_LOOP: i64 = 32;
pub const KEEP: i64 = 2;
pub const DYN_ITERS: i64 = 4;
pub const MAX_STATES: usize = 256;
pub const OP_BUDGET: u64 = 1_000_000;
/// The trace keeps every path's whole history (clones cost more per op), and sampled runs judge it when the budget
/// ends: a smaller budget for its exhaustive exploration.
pub const TRACE_BUDGET: u64 = 300_000;
const MAX_DEPTH: u32 = 48;
const MAX_TRACE: usize = 200_000;
/// Grid steps after which a transfer still outstanding is taken as never waited.
pub const RETIRE_STEPS: usize = 3;
/// Grid steps simulated at most (a sampled huge grid).
pub const MAX_STEPS: usize = 4096;

/// What a memref value is a view of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Base {
    Arg(usize),
    Alloc(OpId),
}

/// A view of a base memref: offsets and extents per dimension of the base (LLO: one byte offset).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RefV {
    pub base: Base,
    pub offs: Vec<Option<i64>>,
    pub ext: Vec<i64>,
    /// View dimension → base dimension; `None` when a reshape lost the correspondence.
    pub map: Option<Vec<usize>>,
    /// LLO address arithmetic: `offs[0]` is a byte offset.
    pub bytes: bool,
}

/// What the simulator knows of an SSA value: an integer, an unknown followed through arithmetic, a condition on
/// unknowns, a memory reference, or nothing.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SimValue {
    Int(i64),
    /// `f(atom)`: an unknown integer through a chain of monotone steps (`(len + 255) / 256`), so that comparisons
    /// with known integers become intervals of the atom and stay consistent with each other.
    Sym {
        atom: u32,
        f: Vec<Step>,
    },
    /// An unknown boolean: `atom ∈ [lo, hi]`, negated when `neg`.
    Cond {
        atom: u32,
        lo: i64,
        hi: i64,
        neg: bool,
    },
    /// Every one of these conditions (`andi` of comparisons on different unknowns).
    All(Vec<SimValue>),
    /// Any one of these conditions (`ori`).
    AnyOf(Vec<SimValue>),
    Ref(RefV),
    Unknown,
}

/// A semaphore (or buffer) slot: the base and its concrete offsets.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SemSlot {
    pub base: Base,
    pub offs: Vec<Option<i64>>,
    pub bytes: bool,
}

/// One DMA started on a path.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Dma {
    pub op: OpId,
    pub sems: Vec<SemSlot>,
    /// Bytes still to be consumed by waits, per semaphore key (a TPU DMA semaphore counts bytes: the transfer adds
    /// its size when it lands, a wait takes its own descriptor's size). When the size is unknown (LLO stages,
    /// dynamic shapes) a DMA counts as one unit and a wait takes one DMA.
    pub left: Vec<u64>,
    /// The transfer's size in bytes, `None` when unknown.
    pub bytes: Option<u64>,
    /// A signal (`tpu.sem_signal`) rather than a DMA: `left` counts semaphore units.
    pub signal: bool,
    pub target: Option<RefV>,
    /// `128x128xf8E4M3FN`: the transfer's shape and element type (`None` when unknown, LLO).
    pub size: Option<String>,
    /// Where it was started: `grid step (0, 1), iteration 3 of the loop at kernels.py:185 (dump: line 40)`.
    pub when: String,
    /// Trace index of its start and of the wait that consumed it.
    pub started: usize,
    /// The ordinal of the simulated grid step it was started in.
    pub step: usize,
    pub waited: Option<usize>,
    /// A DMA to another device (`device_id`): its target semaphore is the peer's; accounted on this device
    /// assuming every device runs the same path (SPMD), so the peer's copy to us signals ours.
    pub remote: bool,
}

/// One step of a path's trace (kept in `Mode::Trace`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Event {
    Start {
        dma: usize,
    },
    Wait {
        op: OpId,
        dma: Option<usize>,
    },
    /// A load of a memref region.
    Read {
        op: OpId,
        region: RefV,
    },
    /// A matmul or a store.
    Compute {
        op: OpId,
    },
}

/// A problem seen on one path.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PathProblem {
    /// Seen on a path some input reaches (not vague).
    pub exact: bool,
    pub kind: &'static str,
    pub detail: String,
    pub semaphore: String,
    pub slot: String,
    pub related: Option<OpId>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Semaphore accounting only: no trace; consumed transfers are dropped and paths are merged at grid-step
    /// boundaries (what `dma-balance` needs).
    Balance,
    /// Keep the full trace of starts, waits, reads and compute per path (what `dma-double-buffering` judges).
    Trace,
}

/// One path; `State::default()` is the kernel before its first op.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct State {
    env: HashMap<(u8, u32, u32), SimValue>,
    atoms: Vec<(i64, i64)>,
    /// Where an atom was read, when from a one-dimensional array (`cu_q_lens[3]`): the sampler's order prior.
    origin: BTreeMap<u32, (Base, i64)>,
    mem: BTreeMap<(Base, Vec<i64>), SimValue>,
    pub dmas: Vec<Dma>,
    pub trace: Vec<Event>,
    pub executed: BTreeSet<OpId>,
    pub fails: BTreeMap<OpId, PathProblem>,
    ctx: Vec<(OpId, i64)>,
    step: Vec<i64>,
    unknown_decisions: u32,
    /// The path took a decision the simulation could not make exactly (a fork on a value it lost, a widening, a
    /// loop cut short): it may be one no input reaches. A path that is not vague is reached by some input.
    vague: bool,
    yielded: Option<Vec<SimValue>>,
}

/// Environment keys defined inside a region op, shared between the paths that leave it.
type Locals = std::rc::Rc<BTreeSet<(u8, u32, u32)>>;

/// A scalar memory access: `memref.load` / `memref.store` (SMEM flags, indices, lengths).
fn dkey(d: Def) -> (u8, u32, u32) {
    match d {
        Def::Op { op, index } => (0, op.0, index),
        Def::BlockArg { block, index } => (1, block.0, index),
        Def::Unresolved => (2, 0, 0),
    }
}

/// The outcome of simulating one kernel.
pub struct SimOutcome {
    pub func: FuncId,
    pub states: Vec<State>,
    /// Paths were dropped beyond [`MAX_STATES`].
    pub truncated: bool,
    /// The op budget ran out before the end of the grid.
    pub exhausted: bool,
    /// A DMA op whose semaphore could not be identified (the unit cannot be accounted reliably).
    pub unaccountable: Option<OpId>,
    /// A semaphore signal or wait whose amount is not known.
    pub unknown_amount: Option<OpId>,
    /// A grid dimension whose bound is not known (dynamic grid).
    pub dynamic_grid: bool,
    /// Grid steps simulated / in the grid (`None`: too many to count or dynamic).
    pub steps: (usize, Option<i64>),
    pub semaphore_args: BTreeSet<usize>,
    /// The kernel arguments' Python names where known, for messages ([`base_label`]).
    pub arg_names: Vec<Option<String>>,
    /// Where the author's Python wrote each op, where known (`Kernel::places`).
    pub places: std::sync::Arc<BTreeMap<OpId, String>>,
    /// What was explored: op evaluations, the most paths alive at once, paths merged at grid-step boundaries.
    pub ops: u64,
    pub peak_paths: usize,
    pub merged: usize,
    /// Where paths forked most: `line 130 (scf.for) ×412`.
    pub fork_sites: Vec<String>,
    /// The exploration's op budget.
    pub budget: u64,
    /// Paths sampled after an inconclusive exploration, and their op evaluations.
    pub sampled: usize,
    pub sample_ops: u64,
    /// The sampled paths that took no vague decision: runs some input values produce (their failures are real).
    pub witnesses: Vec<State>,
}

pub struct Sim<'m, 'a> {
    pub m: &'m Module<'a>,
    mode: Mode,
    budget: u64,
    truncated: bool,
    exhausted: bool,
    unaccountable: Option<OpId>,
    unknown_amount: Option<OpId>,
    entry: Option<BlockId>,
    arg_types: Vec<Option<MlirType<'a>>>,
    /// The arguments' Python names where known (`lint::names`): what messages call them.
    arg_names: Vec<Option<String>>,
    /// Where the author's Python wrote each op, where known (`Kernel::places`): how messages say where.
    places: std::sync::Arc<BTreeMap<OpId, String>>,
    sem_args: BTreeSet<usize>,
    /// Byte offsets of the text's line ends, for `line N` in messages.
    newlines: Vec<u32>,
    /// Forks per op whose condition the simulation could not compute.
    forks: BTreeMap<OpId, u64>,
    /// Per region op, whether a DMA or semaphore op is inside.
    dma_inside: HashMap<OpId, bool>,
    /// The ordinal of the grid step being simulated.
    step_index: usize,
    /// Per region op, the environment keys defined inside it.
    locals: HashMap<OpId, Locals>,
    /// Per block, the ops worth evaluating ([`Sim::matters`]).
    block_ops: HashMap<BlockId, std::rc::Rc<[OpId]>>,
    peak_paths: usize,
    /// Sampling one path (choices instead of forks, see [`sample`]): the generator of its choices.
    rng: Option<Rng>,
}

/// Sample the indices `0..n` (see the module doc).
pub fn sample(n: i64, full: i64) -> Vec<i64> {
    if n <= 0 {
        return Vec::new();
    }
    if n <= full {
        return (0..n).collect();
    }
    let gap = ((n - 2 * KEEP) / 12) * 12;
    (0..KEEP).chain(KEEP + gap..n).collect()
}

/// The grid steps to simulate, in row-major order: every point of a small grid, else per dimension the first
/// [`KEEP`] indices and the last ones (see [`sample`]); at most [`MAX_STEPS`]. Bounds that are not positive
/// integers (dynamic, `?`) give no steps and set `dynamic`.
fn grid_steps(bounds: &[i64]) -> (Vec<Vec<i64>>, Option<i64>, bool) {
    let dynamic = bounds.iter().any(|&b| b < 0);
    let total = if dynamic { None } else { bounds.iter().try_fold(1i64, |a, &b| a.checked_mul(b)) };
    if dynamic || total == Some(0) {
        return (Vec::new(), total, dynamic);
    }
    let per_dim: Vec<Vec<i64>> = if total.is_some_and(|t| t <= FULL_GRID as i64) {
        bounds.iter().map(|&b| (0..b).collect()).collect()
    } else {
        bounds.iter().map(|&b| sample(b, 4)).collect()
    };
    let mut steps: Vec<Vec<i64>> = vec![Vec::new()];
    for d in &per_dim {
        steps =
            steps.iter().flat_map(|p| d.iter().map(move |&x| [p.as_slice(), &[x]].concat())).take(MAX_STEPS).collect();
    }
    (steps, total, false)
}

/// Simulates kernel `k` of `m` over its grid, with the scalar-prefetch memory known from the host program (`seed`;
/// `Seed::new()` when none is). When exploring every path is
/// inconclusive (budget, too many paths), or undecided (an op failed on some paths, not on every one, as when a
/// failing path went through a join that lost values), [`sample::SAMPLES`] single paths are sampled through the
/// whole grid and the exact ones kept as witnesses ([`SimOutcome::witnesses`]).
pub fn simulate_seeded<'a>(m: &Module<'a>, k: &kernel::Kernel<'a>, mode: Mode, seed: &Seed) -> SimOutcome {
    let budget = if mode == Mode::Trace { TRACE_BUDGET } else { OP_BUDGET };
    let mut out = run(m, k, mode, seed, None, budget);
    let failed: BTreeSet<OpId> = out.states.iter().flat_map(|s| s.fails.keys().copied()).collect();
    let undecided = failed.len() > out.must_fail().len();
    if out.exhausted || out.truncated || undecided {
        for i in 0..sample::SAMPLES {
            let o = run(m, k, mode, seed, Some(Rng::new(i as u64 + 1)), sample::SAMPLE_BUDGET);
            out.sampled += 1;
            out.sample_ops += o.ops;
            if !o.exhausted && !o.truncated {
                out.witnesses.extend(o.states.into_iter().filter(|s| !s.vague));
            }
        }
    }
    out
}

/// The first state: the host call's scalar-prefetch constants in memory, element by element.
fn seeded_state(sim: &Sim<'_, '_>, seed: &Seed) -> State {
    let mut state = State::default();
    for (&arg, vals) in seed {
        let dims = sim.arg_types.get(arg).cloned().flatten().and_then(|t| t.shaped().and_then(|s| s.static_dims()));
        let Some(dims) = dims else { continue };
        for (idx, v) in crate::analysis::dma::seed::elements(&dims, vals) {
            state.mem.insert((Base::Arg(arg), idx), SimValue::Int(v));
        }
    }
    state
}

/// A problem per transfer (or signal) still counted on a semaphore at the end of the grid.
fn never_waited(sim: &Sim<'_, '_>, s: &mut State, sampling: bool) {
    let left: Vec<usize> = (0..s.dmas.len()).filter(|&i| s.dmas[i].left.iter().any(|&l| l > 0)).collect();
    for &i in &left {
        let d = &s.dmas[i];
        let key = d.sems.iter().zip(&d.left).find(|(_, &l)| l > 0).map(|(k, _)| k.clone());
        let (sem, slot) = key.as_ref().map(|k| sim.describe_key(k)).unwrap_or_default();
        let at = if slot.is_empty() { String::new() } else { format!("[{slot}]") };
        let remote = if d.remote { " (a remote DMA, accounted assuming every device runs this same path)" } else { "" };
        let detail = if d.signal {
            format!(
                "a semaphore signal {} adds to {sem}{at} and no wait takes it: the semaphore is not zero at kernel exit",
                d.when
            )
        } else {
            format!(
                "a DMA started {} signals {sem}{at} and is never waited: still outstanding at the end of the grid{remote}",
                d.when,
            )
        };
        // keep the latest instance's detail
        // a sampled path keeps every transfer to the end (nothing retired or merged): exact unless vague
        let exact = sampling && !s.vague;
        s.fails.insert(d.op, PathProblem { exact, kind: "never-waited", detail, semaphore: sem, slot, related: None });
    }
}

/// One simulation of the kernel over its grid: every path, or (with `rng`) one sampled path.
fn run<'a>(
    m: &Module<'a>,
    k: &kernel::Kernel<'a>,
    mode: Mode,
    seed: &Seed,
    rng: Option<Rng>,
    budget: u64,
) -> SimOutcome {
    let func = m.func(k.func);
    let entry = m.regions[func.body.idx()].blocks.first().copied();
    let grid_n = k.iteration_bounds.len().min(func.params.len());
    let mut sim = Sim::new(m, mode);
    let sampling = rng.is_some();
    sim.rng = rng;
    sim.budget = budget;
    sim.entry = entry;
    sim.arg_types = k.args.iter().map(|a| a.ty.clone()).collect();
    sim.arg_names = k.args.iter().map(|a| a.python.clone()).collect();
    sim.places = k.places.clone();
    sim.sem_args = k.args.iter().filter(|a| a.semaphore).map(|a| a.index).collect();
    let bounds: Vec<i64> = k.iteration_bounds.iter().take(grid_n).copied().collect();
    let (steps, total, dynamic_grid) = grid_steps(&bounds);
    let mut states = vec![seeded_state(&sim, seed)];
    let mut simulated = 0;
    let mut merged = 0;
    let mut last_cost = 0u64;
    if let Some(entry) = entry.filter(|_| !dynamic_grid) {
        for step in &steps {
            if sim.exhausted {
                break;
            }
            sim.enter_step(&mut states, step, entry, grid_n, func.params.len());
            sim.step_index = simulated;
            // the trace judge reads whole grid steps: when this step may not fit in what is left of the budget, keep
            // the paths as they were before it, to judge those if it does not (a step cut midway would be judged as
            // if its remaining reads and waits never happened)
            let snapshot = (mode == Mode::Trace && sim.budget < 2 * last_cost).then(|| states.clone());
            let budget_before = sim.budget;
            states = sim.run_block(entry, states, 0);
            last_cost = budget_before - sim.budget;
            if let Some(snap) = snapshot.filter(|_| sim.exhausted) {
                states = snap;
                break;
            }
            for s in states.iter_mut() {
                s.yielded = None;
            }
            if mode == Mode::Balance {
                let before = states.len();
                states = sim.between_steps(states);
                merged += before - states.len();
            }
            simulated += 1;
        }
    }
    if !sim.exhausted {
        // leftovers at the end of the grid
        for s in states.iter_mut() {
            never_waited(&sim, s, sampling);
        }
    }
    SimOutcome {
        func: k.func,
        states,
        truncated: sim.truncated,
        exhausted: sim.exhausted,
        unaccountable: sim.unaccountable,
        unknown_amount: sim.unknown_amount,
        dynamic_grid,
        steps: (simulated, total),
        semaphore_args: sim.sem_args.clone(),
        arg_names: sim.arg_names.clone(),
        places: sim.places.clone(),
        ops: budget - sim.budget,
        budget,
        peak_paths: sim.peak_paths,
        merged,
        fork_sites: sim.fork_sites(),
        sampled: 0,
        sample_ops: 0,
        witnesses: Vec::new(),
    }
}

impl<'m, 'a> Sim<'m, 'a> {
    /// Every path enters grid step `step`: the grid indices (the first `grid_n` of the entry block's `nparams`
    /// arguments) take the step's values, the other arguments their own.
    fn enter_step(&self, states: &mut [State], step: &[i64], entry: BlockId, grid_n: usize, nparams: usize) {
        for s in states.iter_mut() {
            s.step = step.to_vec();
            s.ctx.clear();
            for i in 0..nparams {
                let v = if i < grid_n { SimValue::Int(step.get(i).copied().unwrap_or(0)) } else { self.arg_value(i) };
                s.env.insert(dkey(Def::BlockArg { block: entry, index: i as u32 }), v);
            }
        }
    }

    /// A simulator of module `m` with the whole budget, before any kernel's entry and arguments are set.
    fn new(m: &'m Module<'a>, mode: Mode) -> Self {
        Sim {
            m,
            mode,
            budget: OP_BUDGET,
            truncated: false,
            exhausted: false,
            unaccountable: None,
            unknown_amount: None,
            entry: None,
            arg_types: Vec::new(),
            arg_names: Vec::new(),
            places: Default::default(),
            sem_args: BTreeSet::new(),
            newlines: m.text.bytes().enumerate().filter(|(_, b)| *b == b'\n').map(|(i, _)| i as u32).collect(),
            peak_paths: 1,
            locals: HashMap::new(),
            block_ops: HashMap::new(),
            forks: BTreeMap::new(),
            dma_inside: HashMap::new(),
            step_index: 0,
            rng: None,
        }
    }

    fn arg_value(&self, i: usize) -> SimValue {
        let ty = self.arg_types.get(i).cloned().flatten();
        let dims = ty.as_ref().and_then(|t| t.shaped()).and_then(|s| s.static_dims()).unwrap_or_default();
        SimValue::Ref(RefV {
            base: Base::Arg(i),
            offs: vec![Some(0); dims.len()],
            ext: dims.clone(),
            map: Some((0..dims.len()).collect()),
            bytes: false,
        })
    }

    fn base_type(&self, b: Base) -> Option<MlirType<'a>> {
        match b {
            Base::Arg(i) => self.arg_types.get(i).cloned().flatten(),
            Base::Alloc(op) => self.m.op(op).ty.mlir().cloned(),
        }
    }

    /// How a message names a buffer: the kernel argument (`%arg3`) or the allocating op (`%5 (memref.alloca)`).
    fn buffer_name(&self, b: Base) -> String {
        match b {
            Base::Arg(i) if self.arg_names.get(i).is_some_and(Option::is_some) => {
                self.arg_names[i].clone().unwrap_or_default()
            }
            Base::Arg(i) => {
                let f = self.entry.map(|e| &self.m.blocks[e.idx()]);
                match f.and_then(|blk| blk.args.get(i)) {
                    Some(p) => format!("%{}", p.name),
                    None => format!("argument {i}"),
                }
            }
            Base::Alloc(op) => format!("%{} ({})", self.m.op(op).name, self.m.op(op).opcode),
        }
    }

    /// `(%arg9, "1, 0")`: a key's base and slot.
    pub fn describe_key(&self, k: &SemSlot) -> (String, String) {
        let name = self.buffer_name(k.base);
        let offs: Vec<Option<i64>> = if k.bytes {
            // LLO: byte offset → element index (4-byte semaphores), unravelled over the base shape
            let dims =
                self.base_type(k.base).and_then(|t| t.shaped().and_then(|s| s.static_dims())).unwrap_or_default();
            match k.offs.first().copied().flatten() {
                Some(b) if !dims.is_empty() => {
                    let mut flat = b / 4;
                    let mut out = vec![None; dims.len()];
                    for (d, n) in dims.iter().enumerate().rev() {
                        out[d] = Some(flat % n.max(&1));
                        flat /= n.max(&1);
                    }
                    out
                }
                other => vec![other],
            }
        } else {
            k.offs.clone()
        };
        let slot =
            offs.iter().map(|o| o.map(|x| x.to_string()).unwrap_or_else(|| "?".into())).collect::<Vec<_>>().join(", ");
        (name, slot)
    }

    fn fork_sites(&self) -> Vec<String> {
        let mut v: Vec<(&OpId, &u64)> = self.forks.iter().collect();
        v.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        v.iter()
            .take(3)
            .map(|(op, n)| {
                let at = self.line(**op).unwrap_or_else(|| "an op".into());
                // the control flow by what the author wrote (a loop, a `pl.when`/`lax.cond`), not the op's name
                let what = if crate::semantic::op::is_loop(self.m.op(**op).opcode) { "the loop" } else { "the branch" };
                format!("{what} at {at} ×{n}")
            })
            .collect()
    }

    /// `kernels.py:185 (dump: line 12)` where the author's Python is known, else `line 12` when the op has text (a
    /// decoded kernel body has none).
    fn line(&self, op: OpId) -> Option<String> {
        if let Some(p) = self.places.get(&op) {
            return Some(p.clone());
        }
        let o = self.m.op(op);
        if o.span.end > o.span.start {
            let line = self.newlines.partition_point(|&n| n < o.span.start) + 1;
            return Some(format!("line {line}"));
        }
        None
    }

    fn when(&self, s: &State) -> String {
        let mut w = if s.step.is_empty() {
            "in the kernel".to_string()
        } else {
            format!("in grid step ({})", s.step.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", "))
        };
        // a loop by where the author wrote it (`lax.fori_loop`, `pl.loop`, a `while`), not by the op it became
        for (op, iv) in &s.ctx {
            match self.line(*op) {
                Some(l) => w.push_str(&format!(", iteration {iv} of the loop at {l}")),
                None => w.push_str(&format!(", iteration {iv} of a loop")),
            }
        }
        w
    }

    fn spend(&mut self) -> bool {
        if self.budget == 0 {
            self.exhausted = true;
            return false;
        }
        self.budget -= 1;
        true
    }

    fn get(&self, s: &State, o: &Operand<'_>) -> SimValue {
        if let Def::Op { op, .. } = o.def {
            if let Some(c) = self.constant(op) {
                return SimValue::Int(c);
            }
        }
        match s.env.get(&dkey(o.def)) {
            Some(v @ (SimValue::Sym { .. } | SimValue::Cond { .. } | SimValue::All(_) | SimValue::AnyOf(_))) => {
                resolve(s, v.clone())
            }
            Some(v) => v.clone(),
            None => SimValue::Unknown,
        }
    }

    fn constant(&self, op: OpId) -> Option<i64> {
        let o = self.m.op(op);
        if !is_constant(o.opcode) {
            return None;
        }
        kernel::const_int(self.m, op).or_else(|| {
            let v = o.payload.as_deref().or_else(|| o.attr("value"))?;
            v.as_bool().map(i64::from)
        })
    }

    fn runs(&mut self, ops: &[OpId], mut states: Vec<State>, depth: u32) -> Vec<State> {
        for &id in ops {
            if states.is_empty() || self.exhausted {
                break;
            }
            let mut next = Vec::with_capacity(states.len());
            for s in states {
                if s.yielded.is_some() {
                    next.push(s);
                    continue;
                }
                next.extend(self.op(id, s, depth));
            }
            states = self.cap(next);
            if states.len() > 1 {
                if let Some(rng) = &self.rng {
                    // a sampled path stays one: a fork the sampler could not avoid keeps one side at random
                    let keep = rng.below(states.len() as u64) as usize;
                    states = vec![states.swap_remove(keep)];
                }
            }
        }
        states
    }

    fn run_block(&mut self, b: BlockId, states: Vec<State>, depth: u32) -> Vec<State> {
        let ops = match self.block_ops.get(&b) {
            Some(o) => o.clone(),
            None => {
                let o: std::rc::Rc<[OpId]> =
                    self.m.blocks[b.idx()].ops.iter().copied().filter(|&o| self.matters(o)).collect();
                self.block_ops.insert(b, o.clone());
                o
            }
        };
        self.runs(&ops, states, depth)
    }

    /// Whether evaluating an op can change what the analyses see. Vector and float arithmetic (most of an
    /// attention kernel's body) yields nothing the interpreter tracks: its value would read as unknown anyway, so it
    /// is skipped without spending the budget. Loads, stores and matmuls stay (the trace records them).
    fn matters(&self, id: OpId) -> bool {
        let op = self.m.op(id);
        let oc = op.opcode;
        let b = op_name(oc);
        if !op.regions.is_empty() || is_dma_start(oc) || is_dma_wait(oc) || is_matmul(oc) || is_semaphore_op(oc) {
            return true;
        }
        if is_load(oc) || is_store(oc) || matches!(b, "yield" | "condition" | "return") {
            return true;
        }
        let untracked = |t: &MlirType<'_>| match t {
            MlirType::Shaped(sh) => sh.kind != crate::ir::mlir_type::ShapedKind::Memref,
            MlirType::Scalar { dtype, .. } => dtype.is_float(),
            _ => false,
        };
        match op.ty.mlir() {
            Some(MlirType::Results(rs)) => rs.is_empty() || !rs.iter().all(untracked),
            Some(t) => !untracked(t),
            None => true,
        }
    }

    fn fresh(&self, s: &mut State) -> SimValue {
        s.atoms.push((ATOM_MIN, ATOM_MAX));
        SimValue::Sym { atom: s.atoms.len() as u32 - 1, f: Vec::new() }
    }

    fn set(&self, s: &mut State, op: OpId, i: u32, v: SimValue) {
        s.env.insert((0, op.0, i), v);
    }

    fn op(&mut self, id: OpId, mut s: State, depth: u32) -> Vec<State> {
        if !self.spend() || depth > MAX_DEPTH {
            return vec![s];
        }
        let m = self.m;
        let op = m.op(id);
        let oc = op.opcode;
        let b = op_name(oc);
        if matches!(b, "yield" | "condition" | "return") {
            s.yielded = Some(op.operands.iter().map(|o| self.get(&s, o)).collect());
            return vec![s];
        }
        if is_dma_start(oc) {
            self.start(id, &mut s);
            return vec![s];
        }
        if is_dma_wait(oc) || is_semaphore_wait(oc) {
            self.wait(id, &mut s);
            return vec![s];
        }
        if is_semaphore_signal(oc) {
            self.signal(id, &mut s);
            return vec![s];
        }
        if !op.regions.is_empty() {
            // a region with no DMA or semaphore op (nor traced access) inside only computes values (the next block's
            // indices, a search over lengths); its paths are joined into one instead of multiplying the kernel's
            if b != "if" && !self.has_dma(id) {
                let states = self.region_op(id, s, depth);
                return join_values(states).into_iter().collect();
            }
            return self.region_op(id, s, depth);
        }
        if is_matmul(oc) {
            s.trace.push(Event::Compute { op: id });
        }
        // a semaphore of its own: scratch (`tpu.sem_alloc`) or the collective's barrier (`tpu.sem_barrier`)
        if is_semaphore_alloc(oc) {
            let dims = op.ty.mlir().and_then(|t| t.shaped()).and_then(|x| x.static_dims()).unwrap_or_default();
            let r = RefV {
                base: Base::Alloc(id),
                offs: vec![Some(0); dims.len()],
                ext: dims.clone(),
                map: Some((0..dims.len()).collect()),
                bytes: false,
            };
            self.set(&mut s, id, 0, SimValue::Ref(r));
            return vec![s];
        }
        let v = self.value(id, &mut s);
        self.set(&mut s, id, 0, v);
        vec![s]
    }

    /// The value of an ordinary op (and its side effects on memory and the trace).
    fn value(&mut self, id: OpId, s: &mut State) -> SimValue {
        if let Some(c) = self.constant(id) {
            return SimValue::Int(c);
        }
        if let Some(v) = self.view(id, s) {
            return v;
        }
        let oc = self.m.op(id).opcode;
        let (is_load, is_store) = (is_load(oc), is_store(oc));
        if is_load || is_store {
            return self.load_or_store(id, s, is_load, is_store);
        }
        self.integer_op(id, s)
    }

    /// The first operand without a role, when it is a memory reference.
    fn source_ref(&self, id: OpId, s: &State) -> Option<RefV> {
        match self.m.op(id).operands.iter().find(|o| o.role.is_none()).map(|o| self.get(s, o)) {
            Some(SimValue::Ref(r)) => Some(r),
            _ => None,
        }
    }

    /// The static dimensions of the op's result.
    fn result_dims(&self, id: OpId) -> Option<Vec<i64>> {
        self.m.op(id).ty.mlir().and_then(|t| t.shaped()).and_then(|x| x.static_dims())
    }

    /// The values of the op's `indices` operands.
    fn indices(&self, id: OpId, s: &State) -> Vec<SimValue> {
        self.m.op(id).operands.iter().filter(|o| o.role == Some("indices")).map(|o| self.get(s, o)).collect()
    }

    /// A view of a memory reference (a byte address, a slice, a squeeze, a reshape or cast), or `None` when the op
    /// is not one.
    fn view(&self, id: OpId, s: &mut State) -> Option<SimValue> {
        let oc = self.m.op(id).opcode;
        let b = op_name(oc);
        let reshape = b.starts_with("memref_reshape")
            || b.starts_with("memref_bitcast")
            || b.starts_with("reinterpret_cast")
            || (oc.starts_with("memref.")
                && matches!(b, "reshape" | "collapse_shape" | "expand_shape" | "cast" | "view"));
        if b == "saddr_scaled" {
            Some(self.byte_address(id, s))
        } else if b.starts_with("memref_slice") || b == "subview" {
            Some(self.source_ref(id, s).map_or(SimValue::Unknown, |r| self.slice_view(id, s, r)))
        } else if b.starts_with("memref_squeeze") {
            Some(self.source_ref(id, s).map_or(SimValue::Unknown, |r| self.squeeze_view(id, r)))
        } else if reshape {
            Some(self.source_ref(id, s).map_or(SimValue::Unknown, |mut r| {
                let out_rank = self.m.op(id).ty.mlir().and_then(|t| t.shaped()).and_then(|x| x.rank());
                if r.map.as_ref().map(Vec::len) != out_rank {
                    r.map = None;
                }
                SimValue::Ref(r)
            }))
        } else {
            None
        }
    }

    /// LLO `saddr_scaled`: a reference moved by a scaled offset, in bytes.
    fn byte_address(&self, id: OpId, s: &State) -> SimValue {
        let op = self.m.op(id);
        let plain: Vec<&Operand<'_>> = op.operands.iter().filter(|o| o.role.is_none()).collect();
        let arg = |k: usize| plain.get(k).map(|o| self.get(s, o)).unwrap_or(SimValue::Unknown);
        let mult = op.attr("multiplier_in_bytes").and_then(Value::as_int).unwrap_or(1);
        let (SimValue::Ref(r), off) = (arg(0), arg(1)) else { return SimValue::Unknown };
        let cur = if r.bytes {
            r.offs.first().copied().flatten()
        } else if r.offs.iter().all(|x| *x == Some(0)) {
            Some(0)
        } else {
            None
        };
        let add = if let SimValue::Int(o) = off { o.checked_mul(mult) } else { None };
        SimValue::Ref(RefV {
            base: r.base,
            offs: vec![cur.zip(add).and_then(|(a, b)| a.checked_add(b))],
            ext: Vec::new(),
            map: None,
            bytes: true,
        })
    }

    /// A slice of `r` at the op's indices, with the result's extents.
    fn slice_view(&self, id: OpId, s: &mut State, mut r: RefV) -> SimValue {
        let mut idx = self.indices(id, s);
        let out_dims = self.result_dims(id);
        if self.sampling() {
            // a sampled path slices at one offset that keeps the slice inside the view
            for (k, v) in idx.iter_mut().enumerate() {
                if symbolic(v) {
                    let room = r.map.as_ref().and_then(|m| r.ext.get(*m.get(k)?)).copied();
                    let n = out_dims.as_ref().and_then(|o| o.get(k)).copied().unwrap_or(1);
                    if let Some(x) = self.pin(s, v, room.map(|e| (0, e.saturating_sub(n)))) {
                        *v = SimValue::Int(x);
                    }
                }
            }
        }
        match (&r.map, out_dims) {
            (Some(map), Some(out)) if map.len() == idx.len() && out.len() == idx.len() => {
                for (v, (i, n)) in idx.iter().zip(out.iter()).enumerate() {
                    let d = map[v];
                    if d < r.offs.len() {
                        r.offs[d] = match (r.offs[d], i) {
                            (Some(a), SimValue::Int(x)) => a.checked_add(*x),
                            _ => None,
                        };
                        r.ext[d] = *n;
                    }
                }
            }
            _ => {
                r.map = None;
                for o in r.offs.iter_mut() {
                    *o = None;
                }
            }
        }
        SimValue::Ref(r)
    }

    /// `r` with unit dimensions dropped as the result's shape says (the dimension map lost when it cannot tell).
    fn squeeze_view(&self, id: OpId, mut r: RefV) -> SimValue {
        if let (Some(map), Some(out)) = (r.map.clone(), self.result_dims(id)) {
            let inn: Vec<i64> = map.iter().map(|&d| r.ext.get(d).copied().unwrap_or(1)).collect();
            let mut drop = inn.len().saturating_sub(out.len());
            let mut keep = Vec::new();
            let mut j = 0;
            let mut ok = true;
            for (i, &n) in inn.iter().enumerate() {
                if j < out.len() && n == out[j] && !(n == 1 && drop > 0 && inn.len() - i > out.len() - j) {
                    keep.push(map[i]);
                    j += 1;
                } else if n == 1 && drop > 0 {
                    drop -= 1;
                } else {
                    ok = false;
                }
            }
            r.map = if ok && j == out.len() { Some(keep) } else { None };
        } else {
            r.map = None;
        }
        SimValue::Ref(r)
    }

    /// A load or store: the region it touches goes to the trace (unless a scalar access), and scalar memory is
    /// read or written.
    fn load_or_store(&self, id: OpId, s: &mut State, is_load: bool, is_store: bool) -> SimValue {
        let region = self.accessed_region(id, s, is_load);
        let op = self.m.op(id);
        // scalar accesses (`memref.load`/`memref.store` of SMEM scalars: flags, indices) are bookkeeping, not
        // reads of DMA'd buffers or compute: they stay out of the trace
        if is_scalar_access(op.opcode) {
        } else if let Some(r) = &region {
            if is_load {
                s.trace.push(Event::Read { op: id, region: r.clone() });
            } else {
                s.trace.push(Event::Compute { op: id });
            }
        } else if is_store {
            s.trace.push(Event::Compute { op: id });
        }
        let Some(r) = region.filter(|r| !r.bytes) else { return SimValue::Unknown };
        let integer = |t: Option<&MlirType<'_>>| matches!(t, Some(MlirType::Scalar { dtype, .. }) if !dtype.is_float() && *dtype != crate::ir::DType::Pred);
        if is_load && integer(op.ty.mlir()) {
            return self.load_scalar(s, r);
        }
        if is_store && op_name(op.opcode) != "vector_store" {
            self.store_scalar(id, s, r);
        }
        SimValue::Unknown
    }

    /// The region a load or store touches: its memory reference indexed at its indices, over the loaded or stored
    /// value's shape.
    fn accessed_region(&self, id: OpId, s: &mut State, is_load: bool) -> Option<RefV> {
        let op = self.m.op(id);
        let memref = op.operands.iter().find(|o| o.role == Some("into") || o.role == Some("base")).or_else(|| {
            op.operands.iter().filter(|o| o.role.is_none()).find(|o| matches!(self.get(s, o), SimValue::Ref(_)))
        });
        let region = memref.and_then(|o| match self.get(s, o) {
            SimValue::Ref(r) => Some(r),
            _ => None,
        });
        let mut idx = self.indices(id, s);
        if self.sampling() {
            // a sampled path reads at one position inside the dimension, not at an unknown one
            for (k, v) in idx.iter_mut().enumerate() {
                if symbolic(v) {
                    let dim = region.as_ref().and_then(|r| r.map.as_ref()?.get(k).and_then(|&d| r.ext.get(d)));
                    let range = dim.map(|&n| (0, n.saturating_sub(1)));
                    if let Some(x) = self.pin(s, v, range) {
                        *v = SimValue::Int(x);
                    }
                }
            }
        }
        let shape: Vec<i64> = if is_load {
            self.result_dims(id).unwrap_or_default()
        } else {
            op.operands
                .iter()
                .find(|o| !matches!(self.get(s, o), SimValue::Ref(_)) && o.role.is_none())
                .and_then(|o| {
                    o.ty.as_ref().and_then(|t| t.mlir()).and_then(|t| t.shaped()).and_then(|x| x.static_dims())
                })
                .unwrap_or_default()
        };
        region.map(|r| index_region(r, &idx, &shape))
    }

    /// A scalar integer loaded from a known slot of scalar memory: what was stored there, else a fresh unknown
    /// that later loads of the slot share.
    fn load_scalar(&self, s: &mut State, r: RefV) -> SimValue {
        let key: Option<Vec<i64>> = r.offs.iter().copied().collect();
        let Some(k) = key else { return SimValue::Unknown };
        if let Some(v) = s.mem.get(&(r.base, k.clone())) {
            return v.clone();
        }
        let v = self.fresh(s);
        if let (true, [i]) = (self.sampling(), k.as_slice()) {
            s.origin.insert(s.atoms.len() as u32 - 1, (r.base, *i));
        }
        s.mem.insert((r.base, k), v.clone());
        v
    }

    /// A scalar stored to a known single-element slot is remembered; any other store forgets the buffer.
    fn store_scalar(&self, id: OpId, s: &mut State, r: RefV) {
        let key: Option<Vec<i64>> = r.offs.iter().copied().collect();
        let val = self
            .m
            .op(id)
            .operands
            .iter()
            .find(|o| o.role.is_none() && !matches!(self.get(s, o), SimValue::Ref(_)))
            .map(|o| self.get(s, o));
        match (key, val) {
            (Some(k), Some(v)) if r.offs.len() == r.ext.len() && r.ext.iter().all(|&e| e == 1) => {
                s.mem.insert((r.base, k), v);
            }
            _ => s.mem.retain(|(base, _), _| *base != r.base),
        }
    }

    /// Integer arithmetic: `arith.*` and LLO scalar ops (`llo.sadd.s32`); on a sampled path, the unknowns it would
    /// lose are pinned one operand at a time (a select's condition first).
    fn integer_op(&self, id: OpId, s: &mut State) -> SimValue {
        let op = self.m.op(id);
        let (name, pred) = arith_name(op);
        let plain: Vec<&Operand<'_>> = op.operands.iter().filter(|o| o.role.is_none()).collect();
        let args: Vec<SimValue> = plain.iter().map(|o| self.get(s, o)).collect();
        let v = self.arith(name, pred.as_deref(), &args);
        if v != SimValue::Unknown || !self.sampling() {
            return v;
        }
        for k in 0..args.len() {
            let cur = plain.get(k).map(|o| self.get(s, o)).unwrap_or(SimValue::Unknown);
            if symbolic(&cur) && self.pin(s, &cur, None).is_some() {
                let args: Vec<SimValue> = plain.iter().map(|o| self.get(s, o)).collect();
                let v = self.arith(name, pred.as_deref(), &args);
                if v != SimValue::Unknown {
                    return v;
                }
            }
        }
        SimValue::Unknown
    }

    /// Integer arithmetic, comparisons and selects over known and symbolic values (`Unknown` when lost).
    fn arith(&self, name: &str, pred: Option<&str>, args: &[SimValue]) -> SimValue {
        let arg = |k: usize| args.get(k).cloned().unwrap_or(SimValue::Unknown);
        let (x, y) = (arg(0), arg(1));
        match name {
            "addi" | "add" => self.add_scaled(x, y, 1),
            "subi" | "sub" => self.add_scaled(x, y, -1),
            "muli" | "mul" => match (&x, &y) {
                (SimValue::Sym { .. }, SimValue::Int(c)) if *c != 0 => sym_step(x, Step::Mul(*c)),
                (SimValue::Int(c), SimValue::Sym { .. }) if *c != 0 => sym_step(y, Step::Mul(*c)),
                _ => int_binop(x, y, |a, b| a.checked_mul(b)),
            },
            "divsi" | "div" | "floordivsi" | "floordiv" | "ceildivsi" | "ceildiv" | "minsi" | "min" | "maxsi"
            | "max"
                if matches!(&x, SimValue::Sym { .. }) || matches!(&y, SimValue::Sym { .. }) =>
            {
                sym_binary(name, x, y)
            }
            "divsi" | "divui" | "div" => int_binop(x, y, |a, b| a.checked_div(b)),
            "floordivsi" | "floordiv" => int_binop(x, y, |a, b| {
                let q = a.checked_div(b)?;
                Some(if a % b != 0 && ((a < 0) != (b < 0)) { q - 1 } else { q })
            }),
            "ceildivsi" | "ceildiv" => int_binop(x, y, |a, b| {
                let q = a.checked_div(b)?;
                Some(if a % b != 0 && ((a < 0) == (b < 0)) { q + 1 } else { q })
            }),
            "remsi" | "remui" | "rem" => int_binop(x, y, |a, b| a.checked_rem(b)),
            "minsi" | "minui" | "min" => int_binop(x, y, |a, b| Some(a.min(b))),
            "maxsi" | "maxui" | "max" => int_binop(x, y, |a, b| Some(a.max(b))),
            "andi" | "and" | "ori" | "or" if is_cond(&x) || is_cond(&y) => logical(name.starts_with('a'), x, y),
            "andi" | "and" => int_binop(x, y, |a, b| Some(a & b)),
            "ori" | "or" => int_binop(x, y, |a, b| Some(a | b)),
            "xori" | "xor" => match (x, y) {
                (c, SimValue::Int(1)) | (SimValue::Int(1), c) if is_cond(&c) => negate(c),
                (x, y) => int_binop(x, y, |a, b| Some(a ^ b)),
            },
            "shli" | "shl" => int_binop(x, y, |a, b| if (0..63).contains(&b) { a.checked_shl(b as u32) } else { None }),
            "shrsi" | "shrui" | "shr" => int_binop(x, y, |a, b| if (0..63).contains(&b) { Some(a >> b) } else { None }),
            "index_cast" | "index_castui" | "extsi" | "extui" | "trunci" | "bitcast" | "stov" | "vtos" => x,
            "select" => match arg(0) {
                SimValue::Int(c) => {
                    if c != 0 {
                        y
                    } else {
                        arg(2)
                    }
                }
                _ => SimValue::Unknown,
            },
            n if n.starts_with("cmp") || matches!(n, "lt" | "le" | "gt" | "ge" | "eq" | "ne") => {
                let p = pred.map(str::to_string).unwrap_or_else(|| n.to_string());
                self.compare(&p, x, y)
            }
            _ => SimValue::Unknown,
        }
    }

    /// `x + sign·y`.
    fn add_scaled(&self, x: SimValue, y: SimValue, sign: i64) -> SimValue {
        match (x, y) {
            (SimValue::Int(a), SimValue::Int(b)) => {
                a.checked_add(sign.saturating_mul(b)).map(SimValue::Int).unwrap_or(SimValue::Unknown)
            }
            (x @ SimValue::Sym { .. }, SimValue::Int(b)) => match sign.checked_mul(b) {
                Some(d) => sym_step(x, Step::Add(d)),
                None => SimValue::Unknown,
            },
            (SimValue::Int(a), y @ SimValue::Sym { .. }) if sign == 1 => sym_step(y, Step::Add(a)),
            // a - f(x) = -f(x) + a
            (SimValue::Int(a), y @ SimValue::Sym { .. }) => sym_step(sym_step(y, Step::Mul(-1)), Step::Add(a)),
            _ => SimValue::Unknown,
        }
    }

    fn compare(&self, p: &str, x: SimValue, y: SimValue) -> SimValue {
        let p = p.trim_start_matches(['s', 'u']).to_string();
        let p = if p.is_empty() { "ge".to_string() } else { p }; // never reached for real spellings
        match (&x, &y) {
            (SimValue::Int(a), SimValue::Int(b)) => SimValue::Int(i64::from(match p.as_str() {
                "eq" => a == b,
                "ne" => a != b,
                "lt" => a < b,
                "le" => a <= b,
                "gt" => a > b,
                "ge" => a >= b,
                _ => return SimValue::Unknown,
            })),
            (SimValue::Sym { atom, f }, SimValue::Int(c)) => sym_cmp(*atom, f, &p, *c),
            // the same unknown through the same steps, up to a constant: decided
            (SimValue::Sym { atom: a, f }, SimValue::Sym { atom: b, f: g }) if a == b => {
                let (fb, fc) = split_offset(f);
                let (gb, gc) = split_offset(g);
                if fb != gb {
                    return SimValue::Unknown;
                }
                self.compare(&p, SimValue::Int(fc), SimValue::Int(gc))
            }
            (SimValue::Int(c), SimValue::Sym { atom, f }) => {
                let flipped = match p.as_str() {
                    "lt" => "gt",
                    "le" => "ge",
                    "gt" => "lt",
                    "ge" => "le",
                    o => o,
                };
                sym_cmp(*atom, f, flipped, *c)
            }
            (b, SimValue::Int(c)) | (SimValue::Int(c), b) if is_cond(b) && (*c == 0 || *c == 1) => {
                let same = (p == "ne") == (*c == 0);
                if p == "ne" || p == "eq" {
                    if same {
                        b.clone()
                    } else {
                        negate(b.clone())
                    }
                } else {
                    SimValue::Unknown
                }
            }
            _ => SimValue::Unknown,
        }
    }
}

/// `and`/`or` where a side is a condition: a known side decides or drops out (booleans: `true and c` is `c`), two
/// conditions make one conjunction or disjunction.
fn logical(and: bool, x: SimValue, y: SimValue) -> SimValue {
    match (x, y) {
        (SimValue::Int(k), c) | (c, SimValue::Int(k)) if is_cond(&c) => match (and, k != 0) {
            (true, true) | (false, false) => c,
            (true, false) => SimValue::Int(0),
            (false, true) => SimValue::Int(1),
        },
        (a, b) if is_cond(&a) && is_cond(&b) => {
            let mut parts = Vec::new();
            for v in [a, b] {
                match v {
                    SimValue::All(p) if and => parts.extend(p),
                    SimValue::AnyOf(p) if !and => parts.extend(p),
                    v => parts.push(v),
                }
            }
            if and {
                SimValue::All(parts)
            } else {
                SimValue::AnyOf(parts)
            }
        }
        _ => SimValue::Unknown,
    }
}

/// The arithmetic an op does (`addi`, `cmpi`; LLO's `sadd` → `add`) and a comparison's predicate (`slt`).
pub(crate) fn arith_name<'o>(op: &'o crate::ir::Op<'_>) -> (&'o str, Option<String>) {
    let b = op_name(op.opcode);
    let mut name = b.split('.').next().unwrap_or(b);
    if op.opcode.starts_with("llo.") {
        if let Some(x) = name.strip_prefix('s').filter(|x| !x.is_empty() && name != "select" && name != "shl") {
            name = x;
        }
    }
    let pred = name.starts_with("cmp").then(|| {
        op.payload.as_deref().or_else(|| op.attr("predicate")).and_then(|v| v.word()).map(|w| match w.parse::<i64>() {
            Ok(n) => ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]
                .get(n as usize)
                .copied()
                .unwrap_or("?")
                .to_string(),
            Err(_) => w.trim_start_matches("#arith<cmpi").trim_end_matches('>').trim().to_string(),
        })
    });
    (name, pred.flatten())
}

/// The region a load/store touches: `r` indexed by `idx` (view dims), extents from the accessed shape aligned to
/// the trailing dimensions.
fn index_region(mut r: RefV, idx: &[SimValue], shape: &[i64]) -> RefV {
    if r.bytes {
        return r;
    }
    let Some(map) = r.map.clone() else { return r };
    if idx.len() != map.len() {
        return r;
    }
    let rank = map.len();
    for (v, i) in idx.iter().enumerate() {
        let d = map[v];
        if d >= r.offs.len() {
            continue;
        }
        r.offs[d] = match (r.offs[d], i) {
            (Some(a), SimValue::Int(x)) => a.checked_add(*x),
            _ => None,
        };
        // extent: the accessed shape's dim aligned to the trailing view dims, else 1
        let k = v as i64 - (rank as i64 - shape.len() as i64);
        // (clamped to the view: packed vreg shapes such as `vector<8x128x4xf8E4M3FN>` do not follow memref dims)
        let view = r.ext[d].max(1);
        r.ext[d] = if k >= 0 { shape.get(k as usize).copied().unwrap_or(1).clamp(1, view) } else { 1 };
    }
    r
}

/// Two regions of one base certainly overlap (every offset known and the boxes intersect). Regions with an
/// unknown offset are not claimed to overlap: findings built on this are definite.
pub fn overlaps(a: &RefV, b: &RefV) -> bool {
    if a.base != b.base || a.bytes || b.bytes {
        return false;
    }
    if a.offs.len() != b.offs.len() || a.ext.len() != a.offs.len() || b.ext.len() != b.offs.len() {
        return false;
    }
    (0..a.offs.len()).all(|d| match (a.offs[d], b.offs[d]) {
        (Some(x), Some(y)) => x < y.saturating_add(b.ext[d].max(1)) && y < x.saturating_add(a.ext[d].max(1)),
        _ => false,
    })
}

impl SimOutcome {
    /// Ops that failed on every explored path that executed them, with the failure seen first: waits that failed
    /// (at least once) on every path that ran them, and starts (or signals) left outstanding at the end of every
    /// final path that ran them.
    pub fn must_fail(&self) -> Vec<(OpId, PathProblem)> {
        let mut out: BTreeMap<OpId, PathProblem> = BTreeMap::new();
        let mut ops: BTreeSet<OpId> = BTreeSet::new();
        for s in &self.states {
            ops.extend(s.fails.keys().copied());
        }
        for op in ops {
            let ran: Vec<&State> = self.states.iter().filter(|s| s.executed.contains(&op)).collect();
            // on a path some input reaches: a real failure, whatever other paths do
            if let Some(f) = ran.iter().filter_map(|s| s.fails.get(&op)).find(|f| f.exact) {
                let mut f = f.clone();
                if !ran.iter().all(|s| s.fails.contains_key(&op)) {
                    f.detail.push_str(" (for some of the values read at run time, not all)");
                }
                out.insert(op, f);
                continue;
            }
            if !ran.is_empty() && ran.iter().all(|s| s.fails.contains_key(&op)) {
                let s = ran.iter().min_by_key(|s| s.unknown_decisions).copied();
                if let Some(f) = s.and_then(|s| s.fails.get(&op)) {
                    out.entry(op).or_insert_with(|| f.clone());
                }
            }
        }
        out.into_iter().collect()
    }

    /// Failures on witnesses (sampled paths some input values produce) at ops not in `reported` (what
    /// [`Self::must_fail`] gave):
    /// an op that failed on every witness that ran it, at least [`sample::MIN_WITNESSES`] of them (the rule of the
    /// exhaustive verdict, over the samples: a kernel may well misbehave on inputs its caller never passes, such as
    /// no sequence at all, and a sampled path may pick those).
    pub fn witnessed(&self, reported: &[(OpId, PathProblem)]) -> Vec<(OpId, PathProblem)> {
        let reported: BTreeSet<OpId> = reported.iter().map(|(op, _)| *op).collect();
        let mut ops: BTreeSet<OpId> = BTreeSet::new();
        for s in &self.witnesses {
            ops.extend(s.fails.iter().filter(|(_, f)| f.exact).map(|(op, _)| *op));
        }
        let mut out = Vec::new();
        for op in ops.into_iter().filter(|op| !reported.contains(op)) {
            let ran: Vec<&State> = self.witnesses.iter().filter(|s| s.executed.contains(&op)).collect();
            if ran.len() < sample::MIN_WITNESSES || !ran.iter().all(|s| s.fails.get(&op).is_some_and(|f| f.exact)) {
                continue;
            }
            let Some(mut f) = ran[0].fails.get(&op).cloned() else { continue };
            f.detail.push_str(&sample::witness_note(ran.len(), self.sampled));
            out.push((op, f));
        }
        out
    }

    /// Why the verdict is incomplete, when it is: the budget ran out, paths were dropped, an amount or a
    /// semaphore could not be known, or the grid's size is only known at run time.
    pub fn inconclusive(&self) -> Option<String> {
        let mut why = Vec::new();
        if self.truncated {
            why.push(format!(
                "more than {MAX_STATES} paths were alive at once (values read at run time): the exploration stopped \
                 after {} grid step(s)",
                self.steps.0
            ));
        } else if self.exhausted {
            why.push(format!(
                "the work budget ({} op evaluations) ran out after {} grid step(s)",
                self.budget, self.steps.0
            ));
        }
        if self.unaccountable.is_some() {
            why.push("a DMA or wait whose semaphore could not be identified".to_string());
        }
        if self.unknown_amount.is_some() {
            why.push("a semaphore signal or wait whose amount is only known at run time".to_string());
        }
        if self.dynamic_grid {
            why.push("the grid's size is only known at run time".to_string());
        }
        (!why.is_empty()).then(|| why.join("; "))
    }

    /// One line on what was explored (`-v`).
    pub fn explored(&self) -> String {
        let total = self.steps.1.map(|t| t.to_string()).unwrap_or_else(|| "?".into());
        let mut s = format!(
            "{} of {total} grid step(s), {} op evaluation(s), at most {} path(s) at once, {} merged between steps",
            self.steps.0, self.ops, self.peak_paths, self.merged
        );
        if !self.fork_sites.is_empty() {
            s.push_str(&format!("; forks on values read at run time, most at {}", self.fork_sites.join(", ")));
        }
        if self.sampled > 0 {
            s.push_str(&format!(
                "; then {} sampled path(s), {} op evaluation(s), {} exact to the end of the grid",
                self.sampled,
                self.sample_ops,
                self.witnesses.len()
            ));
        }
        s
    }

    /// Any explored path decided a condition the simulation could not compute.
    pub fn data_dependent(&self) -> bool {
        self.states.iter().any(|s| s.unknown_decisions > 0)
    }
}

/// How messages name a function argument or allocation: its Python name (`xbuf`) where known, else
/// [`base_label`].
pub fn base_shown(m: &Module<'_>, out: &SimOutcome, b: Base) -> String {
    match b {
        Base::Arg(i) => match out.arg_names.get(i) {
            Some(Some(n)) => n.clone(),
            _ => base_label(m, out.func, b),
        },
        Base::Alloc(_) => base_label(m, out.func, b),
    }
}

/// The view a function argument or allocation is known by in the dump (`%arg7`): what a finding's identity
/// names, the same whether or not the author's names are known.
pub fn base_label(m: &Module<'_>, f: FuncId, b: Base) -> String {
    match b {
        Base::Arg(i) => {
            let func = m.func(f);
            func.params.get(i).map(|p| format!("%{}", p.name)).unwrap_or_else(|| format!("argument {i}"))
        }
        Base::Alloc(op) => format!("%{}", m.op(op).name),
    }
}

/// The slot of a region: its offsets on the dimensions the DMA targets do not cover fully (`0` for
/// `%arg7[0, 0, 0]` of a `2x128x128` buffer).
pub fn slot_text(r: &RefV) -> String {
    r.offs.iter().map(|o| o.map(|x| x.to_string()).unwrap_or_else(|| "?".into())).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_ops_fold_without_overflow_panics() {
        let m = crate::parse::mlir::parse_mlir("t.mlir", "module {\n}\n").expect("parses");
        let mut sim = Sim::new(&m, Mode::Balance);
        sim.budget = 1;
        assert_eq!(sim.add_scaled(SimValue::Int(i64::MAX), SimValue::Int(1), 1), SimValue::Unknown);
        assert_eq!(sim.compare("slt", SimValue::Int(1), SimValue::Int(2)), SimValue::Int(1));
        assert_eq!(int_binop(SimValue::Int(i64::MIN), SimValue::Int(-1), |a, b| a.checked_rem(b)), SimValue::Unknown);
        let sym = |f: Vec<Step>| SimValue::Sym { atom: 0, f };
        assert!(matches!(sim.compare("sge", sym(vec![Step::Add(1)]), SimValue::Int(3)), SimValue::Cond { lo: 2, .. }));
        // saturating: holds everywhere in the atom's range
        assert_eq!(sim.compare("slt", sym(vec![Step::Add(i64::MIN)]), SimValue::Int(i64::MAX)), SimValue::Int(1));
        // k < (len + 255) / 256 (a ceiling): for k = 2, len ≥ 513
        let blocks = sym(vec![Step::Add(255), Step::Div(256)]);
        assert!(matches!(
            sim.compare("slt", SimValue::Int(2), blocks.clone()),
            SimValue::Cond { lo: 513, neg: false, .. }
        ));
        // == on a step function: an interval
        assert!(matches!(
            sim.compare("eq", blocks, SimValue::Int(1)),
            SimValue::Cond { lo: 1, hi: 256, neg: false, .. }
        ));
        // decreasing: 10 - len < 3 ⇔ len > 7
        let dec = sim.add_scaled(SimValue::Int(10), sym(vec![]), -1);
        assert!(
            matches!(sim.compare("slt", dec.clone(), SimValue::Int(3)), SimValue::Cond { lo: 8, neg: false, .. }),
            "{dec:?}"
        );
    }
}
