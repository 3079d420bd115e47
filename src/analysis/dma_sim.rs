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

use super::kernel::{self, is_dma_start, is_dma_wait, is_matmul};
use crate::ir::mlir_type::MlirType;
use crate::ir::*;
use crate::parse::mlir::attr as mattr;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::{Hash, Hasher};

pub const FULL_GRID: usize = 64;
pub const FULL_LOOP: i64 = 32;
pub const KEEP: i64 = 2;
pub const DYN_ITERS: i64 = 4;
pub const MAX_STATES: usize = 256;
pub const OP_BUDGET: u64 = 3_000_000;
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

/// One monotone step of a [`V::Sym`] expression.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Step {
    Add(i64),
    Mul(i64),
    /// Division by a positive constant: truncating (`divsi`), flooring, ceiling.
    Div(i64),
    FloorDiv(i64),
    CeilDiv(i64),
    Min(i64),
    Max(i64),
}

/// Applies `f` to `x` (saturating, so the function stays monotone over the whole range).
fn apply(f: &[Step], x: i64) -> i128 {
    let mut v = x as i128;
    for st in f {
        v = match *st {
            Step::Add(c) => v.saturating_add(c as i128),
            Step::Mul(c) => v.saturating_mul(c as i128),
            Step::Div(c) => v / c as i128,
            Step::FloorDiv(c) => v.div_euclid(c as i128),
            Step::CeilDiv(c) => -((-v).div_euclid(c as i128)),
            Step::Min(c) => v.min(c as i128),
            Step::Max(c) => v.max(c as i128),
        };
    }
    v
}

/// The range unknowns live in (kept away from the i64 limits so `+ 1` never overflows).
const ATOM_MIN: i64 = i64::MIN / 4;
const ATOM_MAX: i64 = i64::MAX / 4;

/// The first x in `(from, ATOM_MAX]` where `pred` differs from its value at `from` (a monotone predicate
/// changes once), by bisection.
fn change(from: i64, pred: &dyn Fn(i64) -> bool) -> Option<i64> {
    let start = pred(from);
    if pred(ATOM_MAX) == start {
        return None;
    }
    let (mut lo, mut hi) = (from, ATOM_MAX);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if pred(mid) == start {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(hi)
}

/// Where a monotone `pred` holds: a prefix or a suffix of the atom's range (`None`: nowhere).
fn interval(pred: &dyn Fn(i64) -> bool) -> Option<(i64, i64)> {
    if pred(ATOM_MIN) {
        Some((ATOM_MIN, change(ATOM_MIN, pred).map(|h| h - 1).unwrap_or(ATOM_MAX)))
    } else {
        change(ATOM_MIN, pred).map(|lo| (lo, ATOM_MAX))
    }
}

/// `f(atom) <p> c` as an interval of the atom (monotone `f`: the set is one interval, or its complement for
/// `ne`); `Int` when it holds everywhere or nowhere.
fn sym_cmp(atom: u32, f: &[Step], p: &str, c: i64) -> V {
    let c = c as i128;
    let neg = p == "ne";
    let holds = |x: i64| {
        let v = apply(f, x);
        match p {
            "eq" | "ne" => v == c,
            "lt" => v < c,
            "le" => v <= c,
            "gt" => v > c,
            _ => v >= c,
        }
    };
    if !matches!(p, "eq" | "ne" | "lt" | "le" | "gt" | "ge") {
        return V::Unknown;
    }
    let set = if matches!(p, "eq" | "ne") {
        // f(x) == c: where f(x) >= c and f(x) <= c, each monotone
        let ge = interval(&|x: i64| apply(f, x) >= c);
        let le = interval(&|x: i64| apply(f, x) <= c);
        match (ge, le) {
            (Some(a), Some(b)) if a.0.max(b.0) <= a.1.min(b.1) => Some((a.0.max(b.0), a.1.min(b.1))),
            _ => None,
        }
    } else {
        interval(&holds)
    };
    match set {
        None => V::Int(i64::from(neg)),
        Some((ATOM_MIN, ATOM_MAX)) => V::Int(i64::from(!neg)),
        Some((lo, hi)) => V::Cond { atom, lo, hi, neg },
    }
}

/// A chain without its trailing constant, and that constant.
fn split_offset(f: &[Step]) -> (&[Step], i64) {
    match f.split_last() {
        Some((Step::Add(c), rest)) => (rest, *c),
        _ => (f, 0),
    }
}

/// `Sym` with one more step (identities dropped, so equal values get equal chains); `Unknown` when the chain
/// grows long.
fn sym_step(x: V, st: Step) -> V {
    if matches!(st, Step::Add(0) | Step::Mul(1) | Step::Div(1) | Step::FloorDiv(1) | Step::CeilDiv(1)) {
        return x;
    }
    match x {
        V::Sym { atom, mut f } if f.len() < 16 => {
            match (f.last_mut(), st) {
                (Some(Step::Add(a)), Step::Add(b)) => match a.checked_add(b) {
                    Some(c) => *a = c,
                    None => return V::Unknown,
                },
                _ => f.push(st),
            }
            V::Sym { atom, f }
        }
        _ => V::Unknown,
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum V {
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
    All(Vec<V>),
    /// Any one of these conditions (`ori`).
    AnyOf(Vec<V>),
    Ref(RefV),
    Unknown,
}

/// A semaphore (or buffer) slot: the base and its concrete offsets.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key {
    pub base: Base,
    pub offs: Vec<Option<i64>>,
    pub bytes: bool,
}

/// One DMA started on a path.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Dma {
    pub op: OpId,
    pub sems: Vec<Key>,
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
    /// Where it was started: `grid step (0, 1), iteration 3 of scf.for at line 40`.
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

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Ev {
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
pub struct Fail {
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

#[derive(Clone, Debug, PartialEq)]
pub struct State {
    env: HashMap<(u8, u32, u32), V>,
    atoms: Vec<(i64, i64)>,
    mem: BTreeMap<(Base, Vec<i64>), V>,
    pub dmas: Vec<Dma>,
    pub trace: Vec<Ev>,
    pub executed: BTreeSet<OpId>,
    pub fails: BTreeMap<OpId, Fail>,
    ctx: Vec<(OpId, i64)>,
    step: Vec<i64>,
    unknown_decisions: u32,
    /// The path took a decision the simulation could not make exactly (a fork on a value it lost, a widening, a
    /// loop cut short): it may be one no input reaches. A path that is not vague is reached by some input.
    vague: bool,
    yielded: Option<Vec<V>>,
}

/// Environment keys defined inside a region op, shared between the paths that leave it.
type Locals = std::rc::Rc<BTreeSet<(u8, u32, u32)>>;

/// A boolean the simulation keeps symbolically.
fn is_cond(v: &V) -> bool {
    matches!(v, V::Cond { .. } | V::All(_) | V::AnyOf(_))
}

/// `not c`, by De Morgan for conjunctions.
fn negate(v: V) -> V {
    match v {
        V::Cond { atom, lo, hi, neg } => V::Cond { atom, lo, hi, neg: !neg },
        V::All(p) => V::AnyOf(p.into_iter().map(negate).collect()),
        V::AnyOf(p) => V::All(p.into_iter().map(negate).collect()),
        V::Int(x) => V::Int(i64::from(x == 0)),
        other => other,
    }
}

/// A scalar memory access: `memref.load` / `memref.store` (SMEM flags, indices, lengths).
fn scalar_access(opcode: &str) -> bool {
    matches!(opcode, "memref.load" | "memref.store")
}

fn dkey(d: Def) -> (u8, u32, u32) {
    match d {
        Def::Op { op, index } => (0, op.0, index),
        Def::BlockArg { block, index } => (1, block.0, index),
        Def::Unresolved => (2, 0, 0),
    }
}

fn opname(opcode: &str) -> &str {
    opcode.split_once('.').map(|x| x.1).unwrap_or(opcode)
}

/// The outcome of simulating one kernel.
pub struct Outcome {
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
    /// What was explored: op evaluations, the most paths alive at once, paths merged at grid-step boundaries.
    pub ops: u64,
    pub peak_paths: usize,
    pub merged: usize,
    /// Where paths forked most: `line 130 (scf.for) ×412`.
    pub fork_sites: Vec<String>,
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
    peak_paths: usize,
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

/// Runs every kernel of a Mosaic module.
pub fn simulate_module(m: &Module<'_>, mode: Mode) -> Vec<Outcome> {
    kernel::kernels(m).iter().map(|k| simulate(m, k, mode)).collect()
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

/// Scalar-prefetch operands whose values the host program fixes: kernel argument → its elements, row-major.
pub type Seed = BTreeMap<usize, Vec<i64>>;

/// The scalar-prefetch operands of a kernel that its host call passes as constants (jax's paged attention
/// passes `buffer_index = 0` and `init_flag = 1` this way): read from the HLO or StableHLO that calls it.
pub fn seed_from_host(c: &crate::lint::Compilation<'_>, unit: usize, k: &kernel::Kernel<'_>) -> Seed {
    let mut seed = Seed::new();
    let Some((hu, call)) = super::pipelining::host_call(c, unit, k.name) else { return seed };
    let Some(host) = c.units.get(hu) else { return seed };
    let hm = &host.module;
    let grid = k.iteration_bounds.len();
    for j in 0..k.scalar_prefetch {
        let Some(o) = hm.op(call).operands.get(j) else { break };
        let mut def = o.def;
        // through the ops that only move a value
        for _ in 0..4 {
            let Def::Op { op, .. } = def else { break };
            let x = hm.op(op);
            if matches!(opname(x.opcode), "copy" | "bitcast" | "reshape" | "copy-done") {
                match x.operands.first() {
                    Some(o) => def = o.def,
                    None => break,
                }
            } else {
                break;
            }
        }
        if let Def::Op { op, .. } = def {
            if let Some(v) = literal_ints(hm, op) {
                seed.insert(grid + j, v);
            }
        }
    }
    seed
}

/// The integers of a constant op: `constant({1})` (HLO), `stablehlo.constant dense<1>`, `arith.constant 1`.
fn literal_ints(m: &Module<'_>, op: OpId) -> Option<Vec<i64>> {
    if let Some(x) = kernel::const_int(m, op) {
        return Some(vec![x]);
    }
    let o = m.op(op);
    if !opname(o.opcode).starts_with("constant") {
        return None;
    }
    fn flat(v: &Value<'_>, out: &mut Vec<i64>) -> Option<()> {
        match v.items() {
            [] => out.push(v.as_int()?),
            items => {
                for i in items {
                    flat(i, out)?;
                }
            }
        }
        Some(())
    }
    let mut out = Vec::new();
    flat(o.payload.as_ref()?, &mut out)?;
    (!out.is_empty() && out.len() <= 4096).then_some(out)
}

pub fn simulate<'a>(m: &Module<'a>, k: &kernel::Kernel<'a>, mode: Mode) -> Outcome {
    simulate_seeded(m, k, mode, &Seed::new())
}

/// [`simulate`] with scalar-prefetch memory known from the host program.
pub fn simulate_seeded<'a>(m: &Module<'a>, k: &kernel::Kernel<'a>, mode: Mode, seed: &Seed) -> Outcome {
    let func = m.func(k.func);
    let entry = m.regions[func.body.idx()].blocks.first().copied();
    let grid_n = k.iteration_bounds.len().min(func.params.len());
    let mut sim = Sim {
        m,
        mode,
        budget: OP_BUDGET,
        truncated: false,
        exhausted: false,
        unaccountable: None,
        unknown_amount: None,
        entry,
        arg_types: k.args.iter().map(|a| a.ty.clone()).collect(),
        sem_args: k.args.iter().filter(|a| a.semaphore).map(|a| a.index).collect(),
        newlines: m.text.bytes().enumerate().filter(|(_, b)| *b == b'\n').map(|(i, _)| i as u32).collect(),
        peak_paths: 1,
        locals: HashMap::new(),
        forks: BTreeMap::new(),
        dma_inside: HashMap::new(),
        step_index: 0,
    };
    let bounds: Vec<i64> = k.iteration_bounds.iter().take(grid_n).copied().collect();
    let (steps, total, dynamic_grid) = grid_steps(&bounds);
    let mut states = vec![State {
        env: HashMap::new(),
        atoms: Vec::new(),
        mem: BTreeMap::new(),
        dmas: Vec::new(),
        trace: Vec::new(),
        executed: BTreeSet::new(),
        fails: BTreeMap::new(),
        ctx: Vec::new(),
        step: Vec::new(),
        unknown_decisions: 0,
        vague: false,
        yielded: None,
    }];
    for (&arg, vals) in seed {
        let dims = sim.arg_types.get(arg).cloned().flatten().and_then(|t| t.shaped().and_then(|s| s.static_dims()));
        let Some(dims) = dims.filter(|d| d.iter().product::<i64>() == vals.len() as i64) else { continue };
        for (flat, &v) in vals.iter().enumerate() {
            let mut idx = vec![0i64; dims.len()];
            let mut rest = flat as i64;
            for (d, n) in dims.iter().enumerate().rev() {
                idx[d] = rest % n.max(&1);
                rest /= n.max(&1);
            }
            states[0].mem.insert((Base::Arg(arg), idx), V::Int(v));
        }
    }
    let mut simulated = 0;
    let mut merged = 0;
    if let Some(entry) = entry.filter(|_| !dynamic_grid) {
        for step in &steps {
            if sim.exhausted {
                break;
            }
            for s in states.iter_mut() {
                s.step = step.clone();
                s.ctx.clear();
                for i in 0..func.params.len() {
                    let v = if i < grid_n { V::Int(step.get(i).copied().unwrap_or(0)) } else { sim.arg_value(i) };
                    s.env.insert(dkey(Def::BlockArg { block: entry, index: i as u32 }), v);
                }
            }
            sim.step_index = simulated;
            states = sim.run_block(entry, states, 0);
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
            let left: Vec<usize> = (0..s.dmas.len()).filter(|&i| s.dmas[i].left.iter().any(|&l| l > 0)).collect();
            for &i in &left {
                let d = &s.dmas[i];
                let key = d.sems.iter().zip(&d.left).find(|(_, &l)| l > 0).map(|(k, _)| k.clone());
                let (sem, slot) = key.as_ref().map(|k| sim.describe_key(k)).unwrap_or_default();
                let at = if slot.is_empty() { String::new() } else { format!("[{slot}]") };
                let remote =
                    if d.remote { " (a remote DMA, accounted assuming every device runs this same path)" } else { "" };
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
                s.fails.insert(
                    d.op,
                    Fail { exact: false, kind: "never-waited", detail, semaphore: sem, slot, related: None },
                );
            }
        }
    }
    Outcome {
        func: k.func,
        states,
        truncated: sim.truncated,
        exhausted: sim.exhausted,
        unaccountable: sim.unaccountable,
        unknown_amount: sim.unknown_amount,
        dynamic_grid,
        steps: (simulated, total),
        semaphore_args: sim.sem_args.clone(),
        ops: OP_BUDGET - sim.budget,
        peak_paths: sim.peak_paths,
        merged,
        fork_sites: sim.fork_sites(),
    }
}

/// Paths that differ only in values (no DMA inside the region they left) as one: values all paths agree on are
/// kept, others become unknown; scalar memory likewise; unknowns' intervals widened to their hull.
fn join_values(mut states: Vec<State>) -> Option<State> {
    let mut base = states.pop()?;
    for s in &states {
        // a value absent from the environment reads as unknown
        // (a value lost here reads as unknown: a later decision on it marks the path vague itself; memory lost
        // reads back as a fresh unknown and intervals widened stay narrowable, so those make the path vague now)
        let mem = base.mem.len();
        base.env.retain(|k, v| s.env.get(k) == Some(v));
        base.mem.retain(|k, v| s.mem.get(k) == Some(v));
        base.vague |= s.vague || base.mem.len() != mem || base.atoms != s.atoms;
        if base.atoms.len() == s.atoms.len() {
            for (a, b) in base.atoms.iter_mut().zip(&s.atoms) {
                *a = (a.0.min(b.0), a.1.max(b.1));
            }
        }
        base.unknown_decisions = base.unknown_decisions.min(s.unknown_decisions);
    }
    Some(base)
}

/// Between grid steps only what the next step can see survives: outstanding transfers, scalar memory the kernel
/// stored, and which DMA ops ran. Values loaded from memory at run time are forgotten (the next load is a fresh
/// unknown: more paths, never fewer — a finding still needs every path), so paths that differ only in how they
/// got here merge.
impl Sim<'_, '_> {
    fn between_steps(&self, states: Vec<State>) -> Vec<State> {
        let mut seen: HashMap<u64, usize> = HashMap::new();
        let mut out: Vec<State> = Vec::new();
        for mut s in states {
            self.retire(&mut s);
            s.env.clear();
            s.mem.retain(|_, v| !matches!(v, V::Sym { .. } | V::Unknown) && !is_cond(v));
            s.atoms.clear();
            s.ctx.clear();
            let h = {
                let mut h = std::hash::DefaultHasher::new();
                s.mem.hash(&mut h);
                s.executed.hash(&mut h);
                fail_kinds(&s).hash(&mut h);
                // which kinds of transfer are outstanding, not how many: paths that differ only in how many of
                // one kind they have in flight merge into the one with fewer (an op that leaks there leaks on
                // the other too: this can lose a finding, never make one up)
                let kinds: BTreeSet<_> = s.dmas.iter().map(|d| (d.op, &d.sems, &d.left, d.bytes, d.signal)).collect();
                kinds.hash(&mut h);
                h.finish()
            };
            match seen.get(&h) {
                Some(&i) => {
                    let o = &mut out[i];
                    let least = o.unknown_decisions.min(s.unknown_decisions);
                    // the same state reached two ways is exact if one way is; a different in-flight count is not
                    // the same state: the kept path speaks for itself
                    let same = s.dmas.len() == o.dmas.len();
                    let both = o.vague && s.vague;
                    if s.dmas.len() < o.dmas.len() {
                        *o = s;
                    }
                    let vague = if same { both } else { o.vague };
                    o.unknown_decisions = least;
                    o.vague = vague;
                }
                None => {
                    seen.insert(h, out.len());
                    out.push(s);
                }
            }
        }
        out
    }

    /// A transfer still outstanding [`RETIRE_STEPS`] grid steps after it started is never waited (software
    /// pipelines wait in the next step or the one after): it becomes a finding on this path and leaves the
    /// accounting, so paths that leaked a different number of transfers merge instead of multiplying.
    fn retire(&self, s: &mut State) {
        let now = self.step_index;
        let old: Vec<usize> =
            (0..s.dmas.len()).filter(|&i| now.saturating_sub(s.dmas[i].step) >= RETIRE_STEPS).collect();
        for &i in old.iter().rev() {
            let d = s.dmas.remove(i);
            let key = d.sems.iter().zip(&d.left).find(|(_, &l)| l > 0).map(|(k, _)| k.clone());
            let (sem, slot) = key.as_ref().map(|k| self.describe_key(k)).unwrap_or_default();
            let at = if slot.is_empty() { String::new() } else { format!("[{slot}]") };
            let detail = format!(
            "a {} started {} signals {sem}{at} and is never waited: still outstanding {RETIRE_STEPS} grid steps later",
            if d.signal { "semaphore signal" } else { "DMA" },
            d.when
        );
            // a heuristic (no kernel seen waits further ahead), so never an exact failure
            s.fails.entry(d.op).or_insert(Fail {
                exact: false,
                kind: "never-waited",
                detail,
                semaphore: sem,
                slot,
                related: None,
            });
        }
    }
}

/// The failures of a path by op and kind (their wording names grid steps, which differ between mergeable paths).
fn fail_kinds(s: &State) -> Vec<(OpId, &'static str)> {
    s.fails.iter().map(|(op, f)| (*op, f.kind)).collect()
}

impl<'m, 'a> Sim<'m, 'a> {
    fn arg_value(&self, i: usize) -> V {
        let ty = self.arg_types.get(i).cloned().flatten();
        let dims = ty.as_ref().and_then(|t| t.shaped()).and_then(|s| s.static_dims()).unwrap_or_default();
        V::Ref(RefV {
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

    fn base_name(&self, b: Base) -> String {
        match b {
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
    pub fn describe_key(&self, k: &Key) -> (String, String) {
        let name = self.base_name(k.base);
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
                format!("{at} ({}) ×{n}", self.m.op(**op).opcode)
            })
            .collect()
    }

    /// `line 12` when the op has text (a decoded kernel body has none).
    fn line(&self, op: OpId) -> Option<String> {
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
        for (op, iv) in &s.ctx {
            match self.line(*op) {
                Some(l) => w.push_str(&format!(", iteration {iv} of the {} at {l}", self.m.op(*op).opcode)),
                None => w.push_str(&format!(", iteration {iv} of the {}", self.m.op(*op).opcode)),
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

    fn get(&self, s: &State, o: &Operand<'_>) -> V {
        if let Def::Op { op, .. } = o.def {
            if let Some(c) = self.constant(op) {
                return V::Int(c);
            }
        }
        s.env.get(&dkey(o.def)).cloned().unwrap_or(V::Unknown)
    }

    fn constant(&self, op: OpId) -> Option<i64> {
        let o = self.m.op(op);
        if !opname(o.opcode).starts_with("constant") {
            return None;
        }
        kernel::const_int(self.m, op).or_else(|| {
            let v = o.payload.as_ref().or_else(|| o.attr("value"))?;
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
        }
        states
    }

    fn run_block(&mut self, b: BlockId, states: Vec<State>, depth: u32) -> Vec<State> {
        let ops = self.m.blocks[b.idx()].ops.clone();
        self.runs(&ops, states, depth)
    }

    /// A region op by its kind (`scf.for`, `scf.if`, `scf.while`, `scf.index_switch`, any other: its regions once).
    fn region_op(&mut self, id: OpId, s: State, depth: u32) -> Vec<State> {
        let m = self.m;
        let op = m.op(id);
        match opname(op.opcode) {
            "for" => self.for_loop(id, s, depth),
            "if" => self.if_op(id, s, depth),
            "while" => self.while_loop(id, s, depth),
            "index_switch" => self.switch(id, s, depth),
            _ => {
                // any other region op (tpu.region, scf.execute_region): its regions once, in order
                let mut states = vec![s];
                for &r in &op.regions {
                    if let Some(&blk) = m.regions[r.idx()].blocks.first() {
                        states = self.run_block(blk, states, depth + 1);
                        for st in states.iter_mut() {
                            st.yielded = None;
                        }
                    }
                }
                states
            }
        }
    }

    /// Whether a region op holds a DMA or semaphore op (at any depth), or, for the trace, a buffer read, store or
    /// matmul: without one its paths can be joined.
    fn has_dma(&mut self, id: OpId) -> bool {
        if let Some(&h) = self.dma_inside.get(&id) {
            return h;
        }
        let m = self.m;
        let mut regions: Vec<RegionId> = m.op(id).regions.clone();
        let mut found = false;
        while let Some(r) = regions.pop() {
            for &b in &m.regions[r.idx()].blocks {
                for &o in &m.blocks[b.idx()].ops {
                    let oc = m.op(o).opcode;
                    let b = opname(oc);
                    let effect = is_dma_start(oc) || is_dma_wait(oc) || b.starts_with("sem_");
                    // the trace also records buffer reads, stores and matmuls
                    let traced = self.mode == Mode::Trace
                        && (is_matmul(oc) || ((b.contains("load") || b.contains("store")) && !scalar_access(oc)));
                    if effect || traced {
                        found = true;
                    }
                    regions.extend(m.op(o).regions.iter().copied());
                }
            }
        }
        self.dma_inside.insert(id, found);
        found
    }

    /// Paths leaving region op `id`: in `Balance` mode the values defined inside it are dead (SSA), so they are
    /// forgotten and paths that now agree on everything but the intervals of their unknowns merge (the intervals
    /// widened to their hull: more behaviours, never fewer, so a finding still needs every path).
    fn join(&mut self, id: OpId, mut states: Vec<State>) -> Vec<State> {
        if self.mode == Mode::Trace || states.len() < 2 {
            return self.cap(states);
        }
        let locals = self.locals(id);
        for s in states.iter_mut() {
            s.env.retain(|k, _| !locals.contains(k));
        }
        let mut seen: HashMap<u64, usize> = HashMap::new();
        let mut out: Vec<State> = Vec::new();
        for s in states {
            let h = fingerprint_but_atoms(&s);
            match seen.get(&h) {
                Some(&i) if out[i].atoms.len() == s.atoms.len() => {
                    let o = &mut out[i];
                    if o.atoms != s.atoms {
                        o.vague = true;
                    } else {
                        o.vague &= s.vague;
                    }
                    for (a, b) in o.atoms.iter_mut().zip(&s.atoms) {
                        *a = (a.0.min(b.0), a.1.max(b.1));
                    }
                    o.unknown_decisions = o.unknown_decisions.min(s.unknown_decisions);
                }
                _ => {
                    seen.insert(h, out.len());
                    out.push(s);
                }
            }
        }
        self.cap(out)
    }

    /// The environment keys of values defined inside region op `id` (its nested ops' results and block arguments).
    fn locals(&mut self, id: OpId) -> Locals {
        if let Some(l) = self.locals.get(&id) {
            return l.clone();
        }
        let m = self.m;
        let mut keys = BTreeSet::new();
        let mut regions: Vec<RegionId> = m.op(id).regions.clone();
        while let Some(r) = regions.pop() {
            for &b in &m.regions[r.idx()].blocks {
                for i in 0..m.blocks[b.idx()].args.len() {
                    keys.insert(dkey(Def::BlockArg { block: b, index: i as u32 }));
                }
                for &o in &m.blocks[b.idx()].ops {
                    for i in 0..(m.op(o).result_count as usize).max(1) {
                        keys.insert((0, o.0, i as u32));
                    }
                    regions.extend(m.op(o).regions.iter().copied());
                }
            }
        }
        let l = std::rc::Rc::new(keys);
        self.locals.insert(id, l.clone());
        l
    }

    fn cap(&mut self, mut states: Vec<State>) -> Vec<State> {
        self.peak_paths = self.peak_paths.max(states.len());
        if states.len() <= MAX_STATES {
            return states;
        }
        // identical paths by a hash of what they hold (the environment summed per entry: its order is arbitrary)
        let mut seen: HashMap<u64, Vec<usize>> = HashMap::new();
        let mut uniq: Vec<State> = Vec::new();
        for s in states.drain(..) {
            let h = fingerprint(&s);
            let same = seen.get(&h).is_some_and(|v| v.iter().any(|&i| uniq[i] == s));
            if !same {
                seen.entry(h).or_default().push(uniq.len());
                uniq.push(s);
            }
        }
        if uniq.len() > MAX_STATES {
            self.truncated = true;
            uniq.sort_by_key(|s| (s.fails.len(), s.unknown_decisions));
            uniq.truncate(MAX_STATES);
        }
        uniq
    }

    /// [`Self::decide`], counting the forks per op (`-v` names where paths multiply).
    fn decide_at(&mut self, id: OpId, s: State, c: &V) -> (Option<State>, Option<State>) {
        let r = self.decide(s, c);
        if r.0.is_some() && r.1.is_some() {
            *self.forks.entry(id).or_default() += 1;
        }
        r
    }

    /// Decides a condition on a state: the states where it holds and those where it does not.
    fn decide(&self, mut s: State, c: &V) -> (Option<State>, Option<State>) {
        match c {
            V::Int(x) => {
                if *x != 0 {
                    (Some(s), None)
                } else {
                    (None, Some(s))
                }
            }
            V::Cond { atom, lo, hi, neg } => {
                let Some(&(alo, ahi)) = s.atoms.get(*atom as usize) else { return (Some(s.clone()), Some(s)) };
                let inside = (alo.max(*lo), ahi.min(*hi));
                let all_in = alo >= *lo && ahi <= *hi;
                let none_in = inside.0 > inside.1;
                let (t_in, t_out) = if *neg { (false, true) } else { (true, false) };
                let _ = t_out;
                if all_in {
                    return if t_in { (Some(s), None) } else { (None, Some(s)) };
                }
                if none_in {
                    return if t_in { (None, Some(s)) } else { (Some(s), None) };
                }
                let mut a = s.clone();
                a.atoms[*atom as usize] = inside;
                // outside: representable when [lo, hi] covers one end
                if *lo <= alo {
                    s.atoms[*atom as usize] = (hi.saturating_add(1), ahi);
                } else if *hi >= ahi {
                    s.atoms[*atom as usize] = (alo, lo.saturating_sub(1));
                }
                a.unknown_decisions += 1;
                s.unknown_decisions += 1;
                if *neg {
                    (Some(s), Some(a))
                } else {
                    (Some(a), Some(s))
                }
            }
            // a conjunction: its true side narrows by every part in turn; its false side (some part false) keeps
            // the path as it is (more behaviours, never fewer)
            V::All(parts) | V::AnyOf(parts) => {
                let all = matches!(c, V::All(_));
                let mut cur = Some(s.clone());
                let mut decided = true;
                for p in parts {
                    let Some(st) = cur.take() else { break };
                    let (t, f) = self.decide(st, p);
                    let (keep, other) = if all { (t, f) } else { (f, t) };
                    decided &= other.is_none();
                    cur = keep;
                }
                let rest = if cur.is_some() && decided {
                    None
                } else {
                    s.unknown_decisions += 1;
                    s.vague = true;
                    Some(s)
                };
                if all {
                    (cur, rest)
                } else {
                    (rest, cur)
                }
            }
            _ => {
                s.vague = true;
                let mut t = s.clone();
                t.unknown_decisions += 1;
                s.unknown_decisions += 1;
                (Some(t), Some(s))
            }
        }
    }

    fn fresh(&self, s: &mut State) -> V {
        s.atoms.push((ATOM_MIN, ATOM_MAX));
        V::Sym { atom: s.atoms.len() as u32 - 1, f: Vec::new() }
    }

    fn set(&self, s: &mut State, op: OpId, i: u32, v: V) {
        s.env.insert((0, op.0, i), v);
    }

    fn op(&mut self, id: OpId, mut s: State, depth: u32) -> Vec<State> {
        if !self.spend() || depth > MAX_DEPTH {
            return vec![s];
        }
        let m = self.m;
        let op = m.op(id);
        let oc = op.opcode;
        let b = opname(oc);
        if matches!(b, "yield" | "condition" | "return") {
            s.yielded = Some(op.operands.iter().map(|o| self.get(&s, o)).collect());
            return vec![s];
        }
        if is_dma_start(oc) {
            self.start(id, &mut s);
            return vec![s];
        }
        if is_dma_wait(oc) || b.starts_with("sem_wait") {
            self.wait(id, &mut s);
            return vec![s];
        }
        if b.starts_with("sem_signal") {
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
            s.trace.push(Ev::Compute { op: id });
        }
        // a semaphore of its own: scratch (`tpu.sem_alloc`) or the collective's barrier (`tpu.sem_barrier`)
        if b.starts_with("sem_alloc") || b.starts_with("sem_barrier") {
            let dims = op.ty.mlir().and_then(|t| t.shaped()).and_then(|x| x.static_dims()).unwrap_or_default();
            let r = RefV {
                base: Base::Alloc(id),
                offs: vec![Some(0); dims.len()],
                ext: dims.clone(),
                map: Some((0..dims.len()).collect()),
                bytes: false,
            };
            self.set(&mut s, id, 0, V::Ref(r));
            return vec![s];
        }
        let v = self.value(id, &mut s);
        self.set(&mut s, id, 0, v);
        vec![s]
    }

    /// The value of an ordinary op (and its side effects on memory and the trace).
    fn value(&mut self, id: OpId, s: &mut State) -> V {
        let m = self.m;
        let op = m.op(id);
        if let Some(c) = self.constant(id) {
            return V::Int(c);
        }
        let oc = op.opcode;
        let b = opname(oc);
        let plain: Vec<&Operand<'_>> = op.operands.iter().filter(|o| o.role.is_none()).collect();
        let arg = |k: usize| plain.get(k).map(|o| self.get(s, o)).unwrap_or(V::Unknown);
        // views
        if b == "saddr_scaled" {
            let mult = op.attr("multiplier_in_bytes").and_then(Value::as_int).unwrap_or(1);
            return match (arg(0), arg(1)) {
                (V::Ref(r), off) => {
                    let cur = if r.bytes {
                        r.offs.first().copied().flatten()
                    } else if r.offs.iter().all(|x| *x == Some(0)) {
                        Some(0)
                    } else {
                        None
                    };
                    let add = if let V::Int(o) = off { o.checked_mul(mult) } else { None };
                    V::Ref(RefV {
                        base: r.base,
                        offs: vec![cur.zip(add).and_then(|(a, b)| a.checked_add(b))],
                        ext: Vec::new(),
                        map: None,
                        bytes: true,
                    })
                }
                _ => V::Unknown,
            };
        }
        if b.starts_with("memref_slice") || b == "subview" {
            let Some(V::Ref(mut r)) = plain.first().map(|o| self.get(s, o)) else { return V::Unknown };
            let idx: Vec<V> =
                op.operands.iter().filter(|o| o.role == Some("indices")).map(|o| self.get(s, o)).collect();
            let out_dims = op.ty.mlir().and_then(|t| t.shaped()).and_then(|x| x.static_dims());
            match (&r.map, out_dims) {
                (Some(map), Some(out)) if map.len() == idx.len() && out.len() == idx.len() => {
                    for (v, (i, n)) in idx.iter().zip(out.iter()).enumerate() {
                        let d = map[v];
                        if d < r.offs.len() {
                            r.offs[d] = match (r.offs[d], i) {
                                (Some(a), V::Int(x)) => a.checked_add(*x),
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
            return V::Ref(r);
        }
        if b.starts_with("memref_squeeze") {
            let Some(V::Ref(mut r)) = plain.first().map(|o| self.get(s, o)) else { return V::Unknown };
            let out = op.ty.mlir().and_then(|t| t.shaped()).and_then(|x| x.static_dims());
            if let (Some(map), Some(out)) = (r.map.clone(), out) {
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
            return V::Ref(r);
        }
        if b.starts_with("memref_reshape")
            || b.starts_with("memref_bitcast")
            || b.starts_with("reinterpret_cast")
            || (oc.starts_with("memref.")
                && matches!(b, "reshape" | "collapse_shape" | "expand_shape" | "cast" | "view"))
        {
            let Some(V::Ref(mut r)) = plain.first().map(|o| self.get(s, o)) else { return V::Unknown };
            let out_rank = op.ty.mlir().and_then(|t| t.shaped()).and_then(|x| x.rank());
            if r.map.as_ref().map(Vec::len) != out_rank {
                r.map = None;
            }
            return V::Ref(r);
        }
        // loads and stores
        let is_load = b.contains("load") && !b.contains("dma");
        let is_store = b.contains("store") && !b.contains("dma");
        if is_load || is_store {
            let memref = op.operands.iter().find(|o| o.role == Some("into") || o.role == Some("base")).or_else(|| {
                op.operands.iter().filter(|o| o.role.is_none()).find(|o| matches!(self.get(s, o), V::Ref(_)))
            });
            let region = memref.and_then(|o| match self.get(s, o) {
                V::Ref(r) => Some(r),
                _ => None,
            });
            let idx: Vec<V> =
                op.operands.iter().filter(|o| o.role == Some("indices")).map(|o| self.get(s, o)).collect();
            let shape: Vec<i64> = if is_load {
                op.ty.mlir().and_then(|t| t.shaped()).and_then(|x| x.static_dims()).unwrap_or_default()
            } else {
                op.operands
                    .iter()
                    .find(|o| !matches!(self.get(s, o), V::Ref(_)) && o.role.is_none())
                    .and_then(|o| {
                        o.ty.as_ref().and_then(|t| t.mlir()).and_then(|t| t.shaped()).and_then(|x| x.static_dims())
                    })
                    .unwrap_or_default()
            };
            let region = region.map(|r| index_region(r, &idx, &shape));
            // scalar accesses (`memref.load`/`memref.store` of SMEM scalars: flags, indices) are bookkeeping, not
            // reads of DMA'd buffers or compute: they stay out of the trace
            if scalar_access(oc) {
            } else if let Some(r) = &region {
                if is_load {
                    s.trace.push(Ev::Read { op: id, region: r.clone() });
                } else {
                    s.trace.push(Ev::Compute { op: id });
                }
            } else if is_store {
                s.trace.push(Ev::Compute { op: id });
            }
            // scalar memory
            let scalar_ty = |t: Option<&MlirType<'_>>| matches!(t, Some(MlirType::Scalar { dtype, .. }) if !dtype.is_float() && *dtype != crate::ir::DType::Pred);
            if let Some(r) = region.filter(|r| !r.bytes) {
                let key: Option<Vec<i64>> = r.offs.iter().copied().collect();
                if is_load && scalar_ty(op.ty.mlir()) {
                    if let Some(k) = key {
                        if let Some(v) = s.mem.get(&(r.base, k.clone())) {
                            return v.clone();
                        }
                        let v = self.fresh(s);
                        s.mem.insert((r.base, k), v.clone());
                        return v;
                    }
                    return V::Unknown;
                }
                if is_store && b != "vector_store" {
                    let val = op
                        .operands
                        .iter()
                        .find(|o| o.role.is_none() && !matches!(self.get(s, o), V::Ref(_)))
                        .map(|o| self.get(s, o));
                    match (key, val) {
                        (Some(k), Some(v)) if r.offs.len() == r.ext.len() && r.ext.iter().all(|&e| e == 1) => {
                            s.mem.insert((r.base, k), v);
                        }
                        _ => s.mem.retain(|(base, _), _| *base != r.base),
                    }
                }
            }
            return V::Unknown;
        }
        // integer arithmetic: arith.* and LLO scalar ops (`llo.sadd.s32`)
        let mut name = b.split('.').next().unwrap_or(b);
        if oc.starts_with("llo.") {
            if let Some(x) = name.strip_prefix('s').filter(|x| !x.is_empty() && name != "select" && name != "shl") {
                name = x;
            }
        }
        let pred: Option<String> = if name.starts_with("cmp") {
            op.payload.as_ref().or_else(|| op.attr("predicate")).and_then(|v| v.word()).map(|w| {
                match w.parse::<i64>() {
                    Ok(n) => ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]
                        .get(n as usize)
                        .copied()
                        .unwrap_or("?")
                        .to_string(),
                    Err(_) => w.trim_start_matches("#arith<cmpi").trim_end_matches('>').trim().to_string(),
                }
            })
        } else {
            None
        };
        let (x, y) = (arg(0), arg(1));
        match name {
            "addi" | "add" => self.lin(x, y, 1),
            "subi" | "sub" => self.lin(x, y, -1),
            "muli" | "mul" => match (&x, &y) {
                (V::Sym { .. }, V::Int(c)) if *c != 0 => sym_step(x, Step::Mul(*c)),
                (V::Int(c), V::Sym { .. }) if *c != 0 => sym_step(y, Step::Mul(*c)),
                _ => int2(x, y, |a, b| a.checked_mul(b)),
            },
            "divsi" | "div" | "floordivsi" | "floordiv" | "ceildivsi" | "ceildiv" | "minsi" | "min" | "maxsi"
            | "max"
                if matches!(&x, V::Sym { .. }) || matches!(&y, V::Sym { .. }) =>
            {
                sym_binary(name, x, y)
            }
            "divsi" | "divui" | "div" => int2(x, y, |a, b| a.checked_div(b)),
            "floordivsi" | "floordiv" => int2(x, y, |a, b| {
                let q = a.checked_div(b)?;
                Some(if a % b != 0 && ((a < 0) != (b < 0)) { q - 1 } else { q })
            }),
            "ceildivsi" | "ceildiv" => int2(x, y, |a, b| {
                let q = a.checked_div(b)?;
                Some(if a % b != 0 && ((a < 0) == (b < 0)) { q + 1 } else { q })
            }),
            "remsi" | "remui" | "rem" => int2(x, y, |a, b| a.checked_rem(b)),
            "minsi" | "minui" | "min" => int2(x, y, |a, b| Some(a.min(b))),
            "maxsi" | "maxui" | "max" => int2(x, y, |a, b| Some(a.max(b))),
            "andi" | "and" | "ori" | "or" if is_cond(&x) || is_cond(&y) => {
                let and = name.starts_with('a');
                match (x, y) {
                    // a known side decides or drops out (booleans: `true and c` is `c`)
                    (V::Int(k), c) | (c, V::Int(k)) if is_cond(&c) => match (and, k != 0) {
                        (true, true) | (false, false) => c,
                        (true, false) => V::Int(0),
                        (false, true) => V::Int(1),
                    },
                    (a, b) if is_cond(&a) && is_cond(&b) => {
                        let mut parts = Vec::new();
                        for v in [a, b] {
                            match v {
                                V::All(p) if and => parts.extend(p),
                                V::AnyOf(p) if !and => parts.extend(p),
                                v => parts.push(v),
                            }
                        }
                        if and {
                            V::All(parts)
                        } else {
                            V::AnyOf(parts)
                        }
                    }
                    _ => V::Unknown,
                }
            }
            "andi" | "and" => int2(x, y, |a, b| Some(a & b)),
            "ori" | "or" => int2(x, y, |a, b| Some(a | b)),
            "xori" | "xor" => match (x, y) {
                (c, V::Int(1)) | (V::Int(1), c) if is_cond(&c) => negate(c),
                (x, y) => int2(x, y, |a, b| Some(a ^ b)),
            },
            "shli" | "shl" => int2(x, y, |a, b| if (0..63).contains(&b) { a.checked_shl(b as u32) } else { None }),
            "shrsi" | "shrui" | "shr" => int2(x, y, |a, b| if (0..63).contains(&b) { Some(a >> b) } else { None }),
            "index_cast" | "index_castui" | "extsi" | "extui" | "trunci" | "bitcast" | "stov" | "vtos" => x,
            "select" => match arg(0) {
                V::Int(c) => {
                    if c != 0 {
                        y
                    } else {
                        arg(2)
                    }
                }
                _ => V::Unknown,
            },
            n if n.starts_with("cmp") || matches!(n, "lt" | "le" | "gt" | "ge" | "eq" | "ne") => {
                let p = pred.unwrap_or_else(|| n.to_string());
                self.compare(&p, x, y)
            }
            _ => V::Unknown,
        }
    }

    fn lin(&self, x: V, y: V, sign: i64) -> V {
        match (x, y) {
            (V::Int(a), V::Int(b)) => a.checked_add(sign.saturating_mul(b)).map(V::Int).unwrap_or(V::Unknown),
            (x @ V::Sym { .. }, V::Int(b)) => match sign.checked_mul(b) {
                Some(d) => sym_step(x, Step::Add(d)),
                None => V::Unknown,
            },
            (V::Int(a), y @ V::Sym { .. }) if sign == 1 => sym_step(y, Step::Add(a)),
            // a - f(x) = -f(x) + a
            (V::Int(a), y @ V::Sym { .. }) => sym_step(sym_step(y, Step::Mul(-1)), Step::Add(a)),
            _ => V::Unknown,
        }
    }

    fn compare(&self, p: &str, x: V, y: V) -> V {
        let p = p.trim_start_matches(['s', 'u']).to_string();
        let p = if p.is_empty() { "ge".to_string() } else { p }; // never reached for real spellings
        match (&x, &y) {
            (V::Int(a), V::Int(b)) => V::Int(i64::from(match p.as_str() {
                "eq" => a == b,
                "ne" => a != b,
                "lt" => a < b,
                "le" => a <= b,
                "gt" => a > b,
                "ge" => a >= b,
                _ => return V::Unknown,
            })),
            (V::Sym { atom, f }, V::Int(c)) => sym_cmp(*atom, f, &p, *c),
            // the same unknown through the same steps, up to a constant: decided
            (V::Sym { atom: a, f }, V::Sym { atom: b, f: g }) if a == b => {
                let (fb, fc) = split_offset(f);
                let (gb, gc) = split_offset(g);
                if fb != gb {
                    return V::Unknown;
                }
                self.compare(&p, V::Int(fc), V::Int(gc))
            }
            (V::Int(c), V::Sym { atom, f }) => {
                let flipped = match p.as_str() {
                    "lt" => "gt",
                    "le" => "ge",
                    "gt" => "lt",
                    "ge" => "le",
                    o => o,
                };
                sym_cmp(*atom, f, flipped, *c)
            }
            (b, V::Int(c)) | (V::Int(c), b) if is_cond(b) && (*c == 0 || *c == 1) => {
                let same = (p == "ne") == (*c == 0);
                if p == "ne" || p == "eq" {
                    if same {
                        b.clone()
                    } else {
                        negate(b.clone())
                    }
                } else {
                    V::Unknown
                }
            }
            _ => V::Unknown,
        }
    }

    fn for_loop(&mut self, id: OpId, s: State, depth: u32) -> Vec<State> {
        let m = self.m;
        let op = m.op(id);
        let Some(&body) = op.regions.first().and_then(|r| m.regions[r.idx()].blocks.first()) else { return vec![s] };
        let lb_o = op.operands.iter().find(|o| o.role.is_none());
        let ub_o = op.operands.iter().find(|o| o.role == Some("to")).or_else(|| op.operands.get(1));
        let st_o = op.operands.iter().find(|o| o.role == Some("step")).or_else(|| op.operands.get(2));
        let inits: Vec<&Operand<'_>> = op
            .operands
            .iter()
            .filter(|o| matches!(o.role, Some("iter_args") | Some("init") | Some("iter_arg")))
            .collect();
        let inits: Vec<&Operand<'_>> = if inits.is_empty() { op.operands.iter().skip(3).collect() } else { inits };
        let lb = lb_o.map(|o| self.get(&s, o)).unwrap_or(V::Unknown);
        let ub = ub_o.map(|o| self.get(&s, o)).unwrap_or(V::Unknown);
        let step = match st_o.map(|o| self.get(&s, o)) {
            Some(V::Int(x)) if x > 0 => x,
            _ => 1,
        };
        let init_vals: Vec<V> = inits.iter().map(|o| self.get(&s, o)).collect();
        // iterations: a list of induction values, or `None` for a dynamic bound
        let mut sampled = false;
        let plan: Option<Vec<i64>> = match (&lb, &ub) {
            (V::Int(l), V::Int(u)) => {
                let n = if u > l { u.saturating_sub(*l).saturating_add(step - 1) / step } else { 0 };
                let ks = sample(n, FULL_LOOP);
                sampled = (ks.len() as i64) < n;
                Some(ks.into_iter().map(|k| l.saturating_add(k.saturating_mul(step))).collect())
            }
            _ => None,
        };
        let mut done: Vec<State> = Vec::new();
        let mut live: Vec<(State, Vec<V>)> = vec![(s, init_vals)];
        // induction values: known, or `lb + k * step` of an unknown lower bound (comparable with the upper bound
        // when both derive from the same unknown: `for i = n to n` runs no iteration)
        let iters: Vec<V> = match &plan {
            Some(p) => p.iter().map(|&x| V::Int(x)).collect(),
            None => (0..DYN_ITERS).map(|k| self.lin(lb.clone(), V::Int(k.saturating_mul(step)), 1)).collect(),
        };
        for (k, iv) in iters.into_iter().enumerate() {
            if live.is_empty() || self.exhausted {
                break;
            }
            let mut entering = Vec::new();
            for (st, carried) in live.drain(..) {
                if plan.is_some() {
                    entering.push((st, carried));
                    continue;
                }
                // dynamic bound: decide `iv < ub`
                let c = self.compare("slt", iv.clone(), ub.clone());
                let (t, f) = self.decide_at(id, st, &c);
                if let Some(mut f) = f {
                    self.finish_loop(id, &mut f, &carried);
                    done.push(f);
                }
                if let Some(t) = t {
                    entering.push((t, carried));
                }
            }
            let mut states = Vec::new();
            for (mut st, carried) in entering {
                st.env.insert(dkey(Def::BlockArg { block: body, index: 0 }), iv.clone());
                for (k, v) in carried.into_iter().enumerate() {
                    st.env.insert(dkey(Def::BlockArg { block: body, index: k as u32 + 1 }), v);
                }
                st.ctx.push((id, if let V::Int(i) = iv { i } else { k as i64 }));
                states.push(st);
            }
            let out = self.run_block(body, states, depth + 1);
            for mut st in out {
                st.ctx.pop();
                let y = st.yielded.take().unwrap_or_default();
                live.push((st, y));
            }
        }
        // still iterating after the last simulated iteration of a dynamic loop, or iterations skipped: cut short
        let cut = plan.is_none() || sampled;
        for (mut st, carried) in live {
            st.vague |= cut;
            self.finish_loop(id, &mut st, &carried);
            done.push(st);
        }
        self.join(id, done)
    }

    fn finish_loop(&self, id: OpId, s: &mut State, carried: &[V]) {
        for (k, v) in carried.iter().enumerate() {
            self.set(s, id, k as u32, v.clone());
        }
    }

    fn if_op(&mut self, id: OpId, s: State, depth: u32) -> Vec<State> {
        let m = self.m;
        let op = m.op(id);
        let c = op.operands.first().map(|o| self.get(&s, o)).unwrap_or(V::Unknown);
        let (t, f) = self.decide_at(id, s, &c);
        // nothing DMA (or traced) inside: the paths of each branch are one (the branch's own decision still splits,
        // keeping what it narrowed: `(k + 1) * 256 < len` picks which next block a path computes)
        let pure = !self.has_dma(id);
        let mut out = Vec::new();
        for (st, r) in [(t, 0usize), (f, 1usize)] {
            let Some(st) = st else { continue };
            let blk = op.regions.get(r).and_then(|r| m.regions[r.idx()].blocks.first().copied());
            let mut res = match blk {
                Some(b) => self.run_block(b, vec![st], depth + 1),
                None => vec![st],
            };
            if pure && res.len() > 1 {
                let locals = self.locals(id);
                for st in res.iter_mut() {
                    st.env.retain(|k, _| !locals.contains(k));
                }
                res = join_values(res).into_iter().collect();
            }
            for mut st in res {
                let y = st.yielded.take().unwrap_or_default();
                self.finish_loop(id, &mut st, &y);
                out.push(st);
            }
        }
        self.join(id, out)
    }

    fn switch(&mut self, id: OpId, s: State, depth: u32) -> Vec<State> {
        let m = self.m;
        let op = m.op(id);
        let c = op.operands.first().map(|o| self.get(&s, o)).unwrap_or(V::Unknown);
        let cases = op.attr("cases").and_then(mattr::int_array).unwrap_or_default();
        // regions: default first, then one per case (MLIR's order)
        let pick: Vec<usize> = match c {
            V::Int(x) => vec![cases.iter().position(|&k| k == x).map(|p| p + 1).unwrap_or(0)],
            _ => (0..op.regions.len()).collect(),
        };
        let mut out = Vec::new();
        for r in pick {
            let mut st = s.clone();
            if op.regions.len() > 1 && !matches!(c, V::Int(_)) {
                st.unknown_decisions += 1;
                st.vague = true;
            }
            let blk = op.regions.get(r).and_then(|r| m.regions[r.idx()].blocks.first().copied());
            let res = match blk {
                Some(b) => self.run_block(b, vec![st], depth + 1),
                None => vec![st],
            };
            for mut st in res {
                let y = st.yielded.take().unwrap_or_default();
                self.finish_loop(id, &mut st, &y);
                out.push(st);
            }
        }
        self.join(id, out)
    }

    fn while_loop(&mut self, id: OpId, s: State, depth: u32) -> Vec<State> {
        let m = self.m;
        let op = m.op(id);
        let blk = |r: usize| op.regions.get(r).and_then(|r| m.regions[r.idx()].blocks.first().copied());
        let (Some(before), after) = (blk(0), blk(1)) else { return vec![s] };
        let init: Vec<V> = op.operands.iter().map(|o| self.get(&s, o)).collect();
        let mut live = vec![(s, init)];
        let mut done = Vec::new();
        for k in 0..=DYN_ITERS {
            if live.is_empty() || self.exhausted {
                break;
            }
            let mut states = Vec::new();
            for (mut st, args) in live.drain(..) {
                for (i, v) in args.into_iter().enumerate() {
                    st.env.insert(dkey(Def::BlockArg { block: before, index: i as u32 }), v);
                }
                states.push(st);
            }
            for mut st in self.run_block(before, states, depth + 1) {
                let y = st.yielded.take().unwrap_or_default();
                let c = y.first().cloned().unwrap_or(V::Unknown);
                let rest: Vec<V> = y.into_iter().skip(1).collect();
                let (t, f) = self.decide_at(id, st, &c);
                if let Some(mut f) = f {
                    self.finish_loop(id, &mut f, &rest);
                    done.push(f);
                }
                if let (Some(mut t), Some(after)) = (t, after) {
                    if k == DYN_ITERS {
                        t.vague = true;
                        self.finish_loop(id, &mut t, &rest);
                        done.push(t);
                        continue;
                    }
                    for (i, v) in rest.iter().enumerate() {
                        t.env.insert(dkey(Def::BlockArg { block: after, index: i as u32 }), v.clone());
                    }
                    t.ctx.push((id, k));
                    for mut a in self.run_block(after, vec![t], depth + 1) {
                        a.ctx.pop();
                        let y = a.yielded.take().unwrap_or_default();
                        live.push((a, y));
                    }
                }
            }
        }
        for (mut st, args) in live {
            self.finish_loop(id, &mut st, &args);
            done.push(st);
        }
        self.join(id, done)
    }

    /// The semaphore refs of a DMA op: by role, else (LLO) every operand that is a view of a semaphore.
    fn sem_operands(&self, s: &State, op: &Op<'a>, roles: &[&str]) -> Vec<RefV> {
        let by_role: Vec<RefV> = op
            .operands
            .iter()
            .filter(|o| o.role.is_some_and(|r| roles.contains(&r)))
            .filter_map(|o| match self.get(s, o) {
                V::Ref(r) => Some(r),
                _ => None,
            })
            .collect();
        if !by_role.is_empty() || op.operands.iter().any(|o| o.role.is_some()) {
            return by_role;
        }
        op.operands
            .iter()
            .filter_map(|o| match self.get(s, o) {
                V::Ref(r) if self.is_sem_base(r.base) => Some(r),
                _ => None,
            })
            .collect()
    }

    fn is_sem_base(&self, b: Base) -> bool {
        match b {
            Base::Arg(i) => self.sem_args.contains(&i),
            Base::Alloc(op) => self.m.op(op).ty.mlir().is_some_and(|t| t.is_semaphore()),
        }
    }

    fn size_of(op: &Op<'_>, roles: &[&str]) -> Option<String> {
        for r in roles {
            if let Some(o) = op.operands.iter().find(|o| o.role == Some(*r)) {
                if let Some(sh) = o.ty.as_ref().and_then(|t| t.mlir()).and_then(|t| t.shaped()) {
                    let dims = sh.static_dims()?;
                    let dt = sh.elem.to_string();
                    return Some(dims.iter().map(|d| format!("{d}x")).collect::<String>() + &dt);
                }
            }
        }
        None
    }

    fn start(&mut self, id: OpId, s: &mut State) {
        let op = self.m.op(id);
        s.executed.insert(id);
        let mut sems = self.sem_operands(s, op, &["target_semaphore"]);
        if op.operands.iter().any(|o| o.role == Some("source_semaphore")) {
            sems.extend(self.sem_operands(s, op, &["source_semaphore"]));
        }
        if sems.is_empty() {
            self.unaccountable.get_or_insert(id);
            return;
        }
        let target = op.operands.iter().find(|o| o.role == Some("target")).and_then(|o| match self.get(s, o) {
            V::Ref(r) => Some(r),
            _ => None,
        });
        let keys: Vec<Key> = sems.iter().map(|r| Key { base: r.base, offs: r.offs.clone(), bytes: r.bytes }).collect();
        let bytes = bytes_of(op, &["target", "source"]);
        let d = Dma {
            op: id,
            left: vec![bytes.unwrap_or(1); keys.len()],
            bytes,
            signal: false,
            remote: op.operands.iter().any(|o| o.role == Some("device_id")),
            sems: keys,
            target,
            size: Self::size_of(op, &["target", "source"]),
            when: self.when(s),
            started: s.trace.len(),
            step: self.step_index,
            waited: None,
        };
        self.push_dma(s, d);
    }

    fn push_dma(&mut self, s: &mut State, d: Dma) {
        s.dmas.push(d);
        if self.mode == Mode::Trace && s.trace.len() < MAX_TRACE {
            s.trace.push(Ev::Start { dma: s.dmas.len() - 1 });
        }
    }

    /// The semaphore and the amount of `tpu.sem_signal %sem, %amount` / `tpu.sem_wait %sem, %amount`.
    fn sem_and_amount(&self, s: &State, op: &Op<'a>) -> (Option<RefV>, V) {
        let plain: Vec<&Operand<'_>> = op
            .operands
            .iter()
            .filter(|o| o.role.is_none() || matches!(o.role, Some("semaphore") | Some("amount") | Some("value")))
            .collect();
        let sem = plain.iter().find_map(|o| match self.get(s, o) {
            V::Ref(r) => Some(r),
            _ => None,
        });
        let amount = plain.iter().map(|o| self.get(s, o)).find(|v| !matches!(v, V::Ref(_))).unwrap_or(V::Unknown);
        (sem, amount)
    }

    /// `tpu.sem_signal`: adds `amount` units to a (regular or barrier) semaphore, locally or on another device.
    fn signal(&mut self, id: OpId, s: &mut State) {
        let op = self.m.op(id);
        s.executed.insert(id);
        let (Some(sem), amount) = self.sem_and_amount(s, op) else {
            self.unaccountable.get_or_insert(id);
            return;
        };
        let Some(n) = (match amount {
            V::Int(n) if n > 0 => u64::try_from(n).ok(),
            _ => None,
        }) else {
            self.unknown_amount.get_or_insert(id);
            return;
        };
        let d = Dma {
            op: id,
            left: vec![n],
            bytes: Some(n),
            signal: true,
            remote: op.operands.iter().any(|o| o.role == Some("device_id")),
            sems: vec![Key { base: sem.base, offs: sem.offs.clone(), bytes: sem.bytes }],
            target: None,
            size: None,
            when: self.when(s),
            started: s.trace.len(),
            step: self.step_index,
            waited: None,
        };
        self.push_dma(s, d);
    }

    /// A DMA wait (`tpu.wait_dma2`: the byte size of its descriptor) or a semaphore wait (`tpu.sem_wait`: a count).
    fn wait(&mut self, id: OpId, s: &mut State) {
        let op = self.m.op(id);
        s.executed.insert(id);
        let sem_wait = opname(op.opcode).starts_with("sem_wait");
        let (sem, need) = if sem_wait {
            let (sem, amount) = self.sem_and_amount(s, op);
            match amount {
                V::Int(n) if n > 0 => (sem, Need::Units(n as u64)),
                _ => {
                    self.unknown_amount.get_or_insert(id);
                    return;
                }
            }
        } else {
            let sem = self.sem_operands(s, op, &["semaphore", "sem"]).into_iter().next();
            (sem, bytes_of(op, &["src", "dst", "ref"]).map(Need::Units).unwrap_or(Need::OneTransfer))
        };
        let Some(sem) = sem else {
            self.unaccountable.get_or_insert(id);
            return;
        };
        let key = Key { base: sem.base, offs: sem.offs.clone(), bytes: sem.bytes };
        let dst = op.operands.iter().find(|o| o.role == Some("dst") || o.role == Some("ref")).and_then(|o| match self
            .get(s, o)
        {
            V::Ref(r) => Some(r),
            _ => None,
        });
        let may_eq = |a: &Key, b: &Key| {
            a.base == b.base
                && a.bytes == b.bytes
                && a.offs.len() == b.offs.len()
                && a.offs.iter().zip(&b.offs).all(|(x, y)| x.is_none() || y.is_none() || x == y)
        };
        // outstanding transfers (or signals) on this semaphore. Which of them a wait "takes" is only blame (the
        // semaphore is a sum): the same target first, then the most recent (the one a pipelined wait is written
        // for), so a stale transfer left by a previous iteration is the one still outstanding at the end
        let same_target = |d: &Dma| match (&d.target, &dst) {
            (Some(a), Some(b)) => a.base == b.base && a.offs == b.offs,
            _ => false,
        };
        let mut cands: Vec<(usize, usize)> = s
            .dmas
            .iter()
            .enumerate()
            .flat_map(|(i, d)| {
                d.sems.iter().enumerate().filter(|(k, sk)| d.left[*k] > 0 && may_eq(sk, &key)).map(move |(k, _)| (i, k))
            })
            .collect();
        cands.sort_by_key(|&(i, _)| (!same_target(&s.dmas[i]), std::cmp::Reverse(i)));
        // a slot only known as "some slot of this semaphore array" makes the accounting a guess from here on
        let definite = |k: &Key| *k == key && k.offs.iter().all(Option::is_some);
        if !key.offs.iter().all(Option::is_some) || cands.iter().any(|&(i, k)| !definite(&s.dmas[i].sems[k])) {
            s.vague = true;
        }
        let (sem_name, slot) = self.describe_key(&key);
        let semtxt = if slot.is_empty() { sem_name.clone() } else { format!("{sem_name}[{slot}]") };
        // a size-less transfer on either side: one wait takes one transfer
        let need = match need {
            Need::Units(n) if cands.iter().all(|&(i, _)| s.dmas[i].bytes.is_some()) => Need::Units(n),
            _ => Need::OneTransfer,
        };
        let mut consumed: Vec<usize> = Vec::new();
        let fail = match need {
            Need::OneTransfer => match cands.first() {
                Some(&(i, k)) => {
                    s.dmas[i].left[k] = 0;
                    consumed.push(i);
                    None
                }
                None => Some(self.nothing_outstanding(s, &semtxt)),
            },
            Need::Units(mut n) => {
                let total: u64 = cands.iter().map(|&(i, k)| s.dmas[i].left[k]).fold(0, u64::saturating_add);
                let fail = match total {
                    0 => Some(self.nothing_outstanding(s, &semtxt)),
                    t if t < n => Some(format!(
                        "this wait {} on {semtxt} takes {} but only {} {} outstanding on that semaphore: it blocks forever",
                        self.when(s),
                        amount_text(n, sem_wait),
                        amount_text(t, sem_wait),
                        if t == 1 { "is" } else { "are" },
                    )),
                    _ => None,
                };
                for &(i, k) in &cands {
                    if n == 0 {
                        break;
                    }
                    let take = s.dmas[i].left[k].min(n);
                    s.dmas[i].left[k] -= take;
                    n -= take;
                    consumed.push(i);
                }
                fail
            }
        };
        if let Some(detail) = fail {
            let kind = if cands.is_empty() { "wait-without-start" } else { "wait-exceeds-signals" };
            let related = cands.first().map(|&(i, _)| s.dmas[i].op);
            // a path fails on a wait that failed at least once on it
            let exact = !s.vague;
            s.fails.entry(id).or_insert(Fail { exact, kind, detail, semaphore: sem_name, slot, related });
        }
        let waited = s.trace.len();
        for &i in &consumed {
            if s.dmas[i].left.iter().all(|&l| l == 0) {
                s.dmas[i].waited = Some(waited);
            }
        }
        if self.mode == Mode::Trace {
            if s.trace.len() < MAX_TRACE {
                s.trace.push(Ev::Wait { op: id, dma: consumed.first().copied() });
            }
        } else {
            // balance: a consumed transfer is history
            s.dmas.retain(|d| d.left.iter().any(|&l| l > 0));
        }
    }

    fn nothing_outstanding(&self, s: &State, semtxt: &str) -> String {
        let when = self.when(s);
        let others: BTreeSet<String> = s
            .dmas
            .iter()
            .flat_map(|d| d.sems.iter().zip(&d.left).filter(|(_, &l)| l > 0).map(|(k, _)| k))
            .map(|k| {
                let (n, sl) = self.describe_key(k);
                if sl.is_empty() {
                    n
                } else {
                    format!("{n}[{sl}]")
                }
            })
            .collect();
        if others.is_empty() {
            format!("this wait {when} on {semtxt} has no DMA outstanding (nothing started on any semaphore is pending)")
        } else {
            format!(
                "this wait {when} on {semtxt} has no DMA outstanding on that semaphore; outstanding: {}",
                others.into_iter().collect::<Vec<_>>().join(", ")
            )
        }
    }
}

/// What a wait takes from its semaphore.
#[derive(Clone, Copy)]
enum Need {
    /// Bytes (a DMA wait's descriptor) or units (`tpu.sem_wait`).
    Units(u64),
    /// One whole transfer: the size is not known on one side.
    OneTransfer,
}

fn amount_text(n: u64, units: bool) -> String {
    if units {
        format!("{n} unit(s)")
    } else {
        format!("{n} bytes")
    }
}

/// The byte size of the first operand with one of `roles` that has a static shaped type.
fn bytes_of(op: &Op<'_>, roles: &[&str]) -> Option<u64> {
    let o = roles.iter().find_map(|r| op.operands.iter().find(|o| o.role == Some(*r)))?;
    let sh = o.ty.as_ref().and_then(|t| t.mlir()).and_then(|t| t.shaped())?;
    let n = u64::try_from(sh.num_elements()?).ok()?;
    let bits = u64::from(sh.elem.dtype()?.bits());
    n.checked_mul(bits).map(|b| b.div_ceil(8))
}

/// Division by a positive constant, and min/max with a constant, of an unknown.
fn sym_binary(name: &str, x: V, y: V) -> V {
    let div = name.contains("div");
    match (x, y) {
        (s @ V::Sym { .. }, V::Int(c)) if !div || c > 0 => sym_step(
            s,
            match name {
                "divsi" | "div" => Step::Div(c),
                "floordivsi" | "floordiv" => Step::FloorDiv(c),
                "ceildivsi" | "ceildiv" => Step::CeilDiv(c),
                n if n.starts_with("min") => Step::Min(c),
                _ => Step::Max(c),
            },
        ),
        (V::Int(c), s @ V::Sym { .. }) if !div => {
            sym_step(s, if name.starts_with("min") { Step::Min(c) } else { Step::Max(c) })
        }
        _ => V::Unknown,
    }
}

fn int2(x: V, y: V, f: impl Fn(i64, i64) -> Option<i64>) -> V {
    match (x, y) {
        (V::Int(a), V::Int(b)) => f(a, b).map(V::Int).unwrap_or(V::Unknown),
        _ => V::Unknown,
    }
}

/// The environment's hash, summed per entry (a map's order is arbitrary).
fn env_hash(s: &State) -> u64 {
    s.env.iter().fold(0u64, |acc, kv| {
        let mut h = std::hash::DefaultHasher::new();
        kv.hash(&mut h);
        acc.wrapping_add(h.finish())
    })
}

/// What a path holds, but for the intervals of its unknowns and the history (`when`/trace positions) of its
/// outstanding transfers.
fn fingerprint_but_atoms(s: &State) -> u64 {
    let mut h = std::hash::DefaultHasher::new();
    env_hash(s).hash(&mut h);
    s.atoms.len().hash(&mut h);
    for d in &s.dmas {
        (d.op, &d.sems, &d.left, d.bytes, d.signal).hash(&mut h);
    }
    (&s.mem, &s.executed, fail_kinds(s), &s.ctx, &s.step, &s.yielded).hash(&mut h);
    h.finish()
}

fn fingerprint(s: &State) -> u64 {
    let mut h = std::hash::DefaultHasher::new();
    env_hash(s).hash(&mut h);
    (&s.atoms, &s.mem, &s.dmas, &s.trace, &s.executed, &s.fails, &s.ctx, &s.step, &s.yielded).hash(&mut h);
    h.finish()
}

/// The region a load/store touches: `r` indexed by `idx` (view dims), extents from the accessed shape aligned to
/// the trailing dimensions.
fn index_region(mut r: RefV, idx: &[V], shape: &[i64]) -> RefV {
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
            (Some(a), V::Int(x)) => a.checked_add(*x),
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

impl Outcome {
    /// Ops that failed on every explored path that executed them, with the failure seen first: waits that failed
    /// (at least once) on every path that ran them, and starts (or signals) left outstanding at the end of every
    /// final path that ran them.
    pub fn must_fail(&self) -> Vec<(OpId, Fail)> {
        let mut out: BTreeMap<OpId, Fail> = BTreeMap::new();
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

    /// Why the verdict is incomplete, when it is: the budget ran out, paths were dropped, an amount or a
    /// semaphore could not be known, or the grid's size is only known at run time.
    pub fn inconclusive(&self) -> Option<String> {
        let mut why = Vec::new();
        if self.exhausted {
            why.push(format!(
                "the work budget ({OP_BUDGET} op evaluations) ran out after {} grid step(s)",
                self.steps.0
            ));
        }
        if self.truncated {
            why.push(format!(
                "more than {MAX_STATES} paths were alive at once (values read at run time); some were dropped"
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
        s
    }

    /// Any explored path decided a condition the simulation could not compute.
    pub fn data_dependent(&self) -> bool {
        self.states.iter().any(|s| s.unknown_decisions > 0)
    }
}

/// The view a function argument or allocation is known by (`%arg7`).
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
        let sim = Sim {
            m: &m,
            mode: Mode::Balance,
            budget: 1,
            truncated: false,
            exhausted: false,
            unaccountable: None,
            unknown_amount: None,
            entry: None,
            arg_types: Vec::new(),
            sem_args: BTreeSet::new(),
            newlines: Vec::new(),
            peak_paths: 1,
            locals: HashMap::new(),
            forks: BTreeMap::new(),
            dma_inside: HashMap::new(),
            step_index: 0,
        };
        assert_eq!(sim.lin(V::Int(i64::MAX), V::Int(1), 1), V::Unknown);
        assert_eq!(sim.compare("slt", V::Int(1), V::Int(2)), V::Int(1));
        assert_eq!(int2(V::Int(i64::MIN), V::Int(-1), |a, b| a.checked_rem(b)), V::Unknown);
        let sym = |f: Vec<Step>| V::Sym { atom: 0, f };
        assert!(matches!(sim.compare("sge", sym(vec![Step::Add(1)]), V::Int(3)), V::Cond { lo: 2, .. }));
        // saturating: holds everywhere in the atom's range
        assert_eq!(sim.compare("slt", sym(vec![Step::Add(i64::MIN)]), V::Int(i64::MAX)), V::Int(1));
        // k < (len + 255) / 256 (a ceiling): for k = 2, len ≥ 513
        let blocks = sym(vec![Step::Add(255), Step::Div(256)]);
        assert!(matches!(sim.compare("slt", V::Int(2), blocks.clone()), V::Cond { lo: 513, neg: false, .. }));
        // == on a step function: an interval
        assert!(matches!(sim.compare("eq", blocks, V::Int(1)), V::Cond { lo: 1, hi: 256, neg: false, .. }));
        // decreasing: 10 - len < 3 ⇔ len > 7
        let dec = sim.lin(V::Int(10), sym(vec![]), -1);
        assert!(matches!(sim.compare("slt", dec.clone(), V::Int(3)), V::Cond { lo: 8, neg: false, .. }), "{dec:?}");
    }
}
