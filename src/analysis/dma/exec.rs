//! Symbolic execution of a Mosaic kernel body: values as terms, control flow as guards, DMAs as guarded facts.
//!
//! The engine walks the body once, in program order. What is outstanding is a list of [`Fact`]s — (guard,
//! semaphore slot, byte count, the start op) — and a branch adds its condition to the guard of what it starts and
//! waits for instead of forking: the two sides of an `scf.if` run one after the other with disjoint guards, and a
//! join merges their values into `select` terms. A wait takes what its guard covers from the facts on the same
//! semaphore slot with the same byte term ([`Engine::consume`]); what it needs and nothing covers is a problem,
//! with a witness when the solver finds values that reach it. A zero-byte DMA is nothing: a fact's guard includes
//! `bytes ≠ 0`, and a wait needs something only where its own bytes are non-zero.
//!
//! Loops and the grid are checked by induction ([`super::induct`]), so no trip count is needed.

use super::solve::{self, Model};
use super::term::{Atom, Cond, Lin, Rel, Var};
use crate::ir::mlir_type::MlirType;
use crate::ir::shape::Dim;
use crate::ir::*;
use crate::semantic::kernel;
use crate::semantic::op::{
    is_constant, is_dma_start, is_dma_wait, is_load, is_semaphore_alloc, is_semaphore_signal, is_semaphore_wait,
    is_store, is_view, op_name,
};
use std::collections::HashMap;

/// A buffer the kernel can name: an argument, or an allocation (`tpu.sem_alloc`, scratch).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Base {
    Arg(usize),
    Alloc(OpId),
}

/// A view of a buffer: per dimension of the base, the offset and extent as terms; `map` gives the view's
/// dimensions in the base (`None` once a reshape lost them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct View {
    pub base: Base,
    pub offs: Vec<Lin>,
    pub ext: Vec<Lin>,
    pub map: Option<Vec<usize>>,
}

/// What the engine knows of an SSA value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Val {
    Int(Lin),
    Bool(Cond),
    Ref(View),
    /// Data the engine does not follow (vectors, floats).
    Opaque,
}

/// A semaphore slot: the semaphore buffer and the offsets of the slot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SemKey {
    pub base: Base,
    pub offs: Vec<Lin>,
}

/// Something outstanding on a semaphore: a DMA (bytes) or a signal (units) not yet taken by waits, where
/// `guard` holds.
#[derive(Clone, Debug)]
pub struct Fact {
    pub guard: Cond,
    pub sem: SemKey,
    pub amount: Lin,
    pub op: OpId,
    pub signal: bool,
    /// The loops it was started in and at which index, outermost last (`program_id(0) = 7`), once a loop's exit
    /// replaced its index by the last one.
    pub at: Vec<(String, Lin)>,
    /// Iterations of the innermost loop being checked since it was started, at the head of the current one: 0
    /// for this iteration's own DMAs (or outside any loop), d for one iteration d − 1 iterations before the previous
    /// one handed over (the induction's invariant).
    pub age: u8,
    /// Where it copies to (`target`, as the start names it): which of several like DMAs a wait is for (blame only).
    pub dst: Option<View>,
    /// Where it copies from (`source`): with `dst`, which block a deep invariant's wait is for (`Engine::deep`).
    pub src: Option<View>,
    /// Compute (a vector load or store, a matmul) ran while it was in flight: the transfer overlapped work.
    pub busy: bool,
    /// In a replay, whether it was started in the last iteration of the innermost loop (or grid dimension) around
    /// it; `None` outside a replay or a loop, or where the run's end was not known in advance (`scf.while`).
    pub last: Option<bool>,
}

/// A wait's need that nothing before it in the same scope covers: inside a loop, the loop's induction matches it
/// with the previous iteration's leftovers; at the kernel's top level it is a problem.
#[derive(Clone, Debug)]
pub struct Need {
    pub guard: Cond,
    pub sem: SemKey,
    pub amount: Lin,
    pub op: OpId,
    /// What the wait takes in all (`amount` is what is still missing).
    pub total: Lin,
    /// What holds of the state where it was asked (`Engine::assume`), apart from its guard.
    pub assume: Cond,
    /// The `dst` and `src` its descriptor names (see `Fact::dst`, `Fact::src`).
    pub dst: Option<View>,
    pub src: Option<View>,
}

/// A failure found, with the values that reach it when the solver gave them.
#[derive(Clone, Debug)]
pub struct Problem {
    pub op: OpId,
    pub kind: &'static str,
    /// A semaphore signal rather than a DMA (for `never-waited`).
    pub signal: bool,
    /// What the wait takes and what is missing of it (waits), or what is left outstanding (starts).
    pub amounts: (Lin, Lin),
    pub sem: SemKey,
    pub related: Option<OpId>,
    /// The condition under which it happens.
    pub when: Cond,
    pub witness: Option<Model>,
    /// Where it was started: the loops' indices (starts left at the end).
    pub at: Vec<(String, Lin)>,
    /// Every atom of the witness is an input (grid and loop indices in range, values read from buffers the kernel
    /// never writes): some input reaches the failure.
    pub exact: bool,
    /// The witness has every loop and grid index it names at its first value: what is outstanding there comes
    /// from straight-line code, so the failure stands even where later iterations could not be followed.
    pub first: bool,
    /// Shown by a replay on concrete inputs (`super::replay`): those inputs, as the author reads them.
    pub replayed: Option<String>,
    /// A replay's DMA never waited: how many such DMAs each grid step that left some left (which failure it is).
    pub left_per_step: Option<Vec<usize>>,
    /// A replay's DMA never waited: whether it was started in the last iteration of the loop around it
    /// ([`Fact::last`]).
    pub started_last: Option<bool>,
    /// A race: the region the access touched (`super::race`).
    pub region: Option<View>,
}

/// Scalar memory the kernel writes (SMEM scratch): the stores of the current version, per buffer.
#[derive(Clone, Debug, Default)]
pub struct Mem {
    pub stores: Vec<(Base, Vec<Lin>, Val)>,
    /// A buffer's version grows when a store makes earlier loads unreliable (an unknown index, a loop head).
    pub version: HashMap<Base, u32>,
}

pub struct Engine<'m, 'a> {
    pub m: &'m Module<'a>,
    pub func: FuncId,
    pub env: HashMap<(u8, u32, u32), Val>,
    pub facts: Vec<Fact>,
    pub guard: Cond,
    pub mem: Mem,
    /// Needs no earlier fact covered, per enclosing loop (innermost last); empty at the top level.
    pub needs: Vec<Vec<Need>>,
    pub problems: Vec<Problem>,
    /// Why the verdict cannot be a proof (the first reason), with the op it concerns.
    pub unknown: Option<(OpId, String)>,
    pub bufs: Vec<Base>,
    pub next_var: u32,
    pub next_version: u32,
    /// The facts as started (before any wait took from them), in order: a loop's induction guesses from them
    /// when its passes do not settle.
    pub log: Vec<Fact>,
    /// Buffers the kernel stores to (their loads are not inputs).
    pub written: Vec<Base>,
    /// Loop-head variables (values carried between iterations): not inputs.
    pub carried: Vec<u32>,
    pub arg_types: Vec<Option<MlirType<'a>>>,
    pub sem_args: Vec<usize>,
    pub names: HashMap<u32, String>,
    pub steps: u64,
    /// DMAs outstanding across more than one loop iteration, which the induction does not follow: the verdict is
    /// not a proof unless the same op is found never waited anyway.
    pub outlived: Vec<(OpId, String)>,
    /// The guard at the entry of the innermost loop body (or the kernel): a store under exactly it always runs.
    pub scope_guard: Cond,
    /// Inside a pass of a deep invariant (`induct::induct`): a wait takes a DMA only where both name the same
    /// block, so that a prefetch several blocks ahead is left to the iteration it is for.
    pub deep: bool,
    /// Loops the induction entered so far (a deep attempt is made only for a loop with none inside).
    pub loops: u64,
    /// A deep invariant settled whose waits passed over a DMA for another block: findings from here on are
    /// possible, not proven (see `exact_witness`).
    pub deep_used: bool,
    /// A wait of the current deep attempt passed over a DMA for another block.
    pub deep_narrowed: bool,
    /// Loops (by name) whose deep attempt did not settle: not tried again in a later pass of an outer loop.
    pub shallow: std::collections::HashSet<String>,
    /// What holds of the state wherever the code being run runs, though no branch tests it: a loop iteration's head
    /// holds what the previous iteration stored and yielded (`induct::induct`). Questions about needs are asked
    /// under it; facts do not carry it (handed to the next iteration it would speak of the wrong one).
    pub assume: Cond,
    /// Buffers whose values some DMA's or wait's condition, slot or size reads: only what a loop stores to them
    /// is worth linking across iterations (`induct::induct`; the rest would only make every question larger).
    pub relevant: Vec<u32>,
    /// Each loop's (and grid dimension's) index variable with its first value.
    pub first_value: HashMap<u32, Lin>,
    /// Lines of the dump, for naming loops (each induction pass names them again).
    pub lines: crate::ir::LineIndex,
    /// A replay's concrete inputs (`super::replay`): loops and the grid run iteration by iteration.
    pub replay_inputs: Option<super::replay::Inputs>,
    /// In a replay, the loops around the current op, outermost first: each with its index and, where known, the
    /// last index its current run reaches.
    pub replay_at: Vec<(String, i64, Option<i64>)>,
    /// Iterations a replay has run.
    pub iterations: u64,
    /// Variables of the kernel's scalar arguments, by argument.
    pub scalar_args: HashMap<u32, usize>,
    /// Grid steps, when the grid's size is a number.
    pub grid_steps: Option<u64>,
    /// The kernel's arguments as its author named them, where the driver recorded it (`sem`, `lengths`).
    pub python: Vec<Option<String>>,
    /// Where the author's Python wrote each op (`kernels.py:185 (dump: line 46)`), for naming loops.
    pub places: std::sync::Arc<std::collections::BTreeMap<OpId, String>>,
    /// Buffers some DMA copies to or from: accesses of the others cannot race (`super::race`).
    pub dma_bases: Vec<Base>,
    /// Accesses of those buffers per enclosing loop, each with how many of the loop's needs came before it: checked
    /// at the loop's entry against what was outstanding before it (`super::race`).
    pub accesses: Vec<Vec<(usize, super::race::Kept)>>,
    /// The loop op of each scope of `accesses` (`None`: a grid dimension).
    pub scope_ops: Vec<Option<OpId>>,
    /// Each DMA start with the buffers it copies to or from.
    pub dma_starts_on: Vec<(Base, OpId)>,
    /// Why the race verdict cannot be a proof, apart from `unknown`.
    pub race_unknown: Option<(OpId, String)>,
    /// Work units left for race questions (`super::race::BUDGET`).
    pub race_units: u64,
    /// Per DMA start in a loop or the grid: whether its target region differs from the previous iteration's
    /// (`None`: undecided), per induction that ran it (`super::race::refills`).
    pub refills: Vec<(OpId, Option<bool>)>,
    /// Per DMA start a wait took: whether compute ran while it was in flight (once, for any wait: true).
    pub overlapped: HashMap<OpId, bool>,
}

/// Comparisons a fact's or a need's condition may hold: real kernels stay under a hundred; past this the
/// conditions only grow (each partial take adds a negation) and the kernel is inconclusive.
pub const MAX_GUARD: usize = 1000;

/// Operations evaluated at most per kernel (a kernel body is walked a few times per loop; this bounds pathological
/// inputs, not real kernels).
pub const MAX_STEPS: u64 = 2_000_000;

impl<'m, 'a> Engine<'m, 'a> {
    pub fn new(m: &'m Module<'a>, k: &kernel::Kernel<'a>) -> Self {
        let written = stored_bases(m, k.func);
        Engine {
            m,
            func: k.func,
            env: HashMap::new(),
            facts: Vec::new(),
            guard: Cond::True,
            mem: Mem::default(),
            needs: Vec::new(),
            problems: Vec::new(),
            unknown: None,
            bufs: Vec::new(),
            next_var: 0,
            next_version: 1,
            log: Vec::new(),
            written,
            carried: Vec::new(),
            arg_types: k.args.iter().map(|a| a.ty.clone()).collect(),
            sem_args: k.args.iter().filter(|a| a.semaphore).map(|a| a.index).collect(),
            names: HashMap::new(),
            steps: 0,
            scope_guard: Cond::True,
            deep: false,
            loops: 0,
            deep_used: false,
            deep_narrowed: false,
            shallow: Default::default(),
            assume: Cond::True,
            relevant: Vec::new(),
            outlived: Vec::new(),
            first_value: HashMap::new(),
            lines: crate::ir::LineIndex::new(m.text),
            replay_inputs: None,
            replay_at: Vec::new(),
            iterations: 0,
            scalar_args: HashMap::new(),
            grid_steps: None,
            python: k.args.iter().map(|a| a.python.clone()).collect(),
            places: k.places.clone(),
            dma_bases: super::race::dma_bases(m, k.func).iter().map(|b| b.0).fold(Vec::new(), |mut v, b| {
                if !v.contains(&b) {
                    v.push(b);
                }
                v
            }),
            dma_starts_on: super::race::dma_bases(m, k.func),
            accesses: Vec::new(),
            scope_ops: Vec::new(),
            race_unknown: None,
            race_units: super::race::BUDGET,
            refills: Vec::new(),
            overlapped: HashMap::new(),
        }
    }

    pub fn fresh(&mut self, name: impl Into<String>) -> Lin {
        let id = self.next_var;
        self.next_var += 1;
        let name: String = name.into();
        self.names.insert(id, name.clone());
        Lin::var(Var { id, name: name.into() })
    }

    /// A variable for a value the kernel computes (a loop's carried value or result, a run-time grid size): not
    /// an input, so a witness that picks it freely is not exact (`carried`).
    pub fn fresh_carried(&mut self, name: impl Into<String>) -> Lin {
        let v = self.fresh(name);
        self.carried.push(self.next_var - 1);
        v
    }

    /// A load version of its own: a buffer as some iteration the engine does not follow left it.
    pub fn fresh_version(&mut self) -> u32 {
        let v = self.next_version;
        self.next_version += 1;
        v
    }

    pub fn giveup(&mut self, op: OpId, why: impl Into<String>) {
        if self.unknown.is_none() {
            self.unknown = Some((op, why.into()));
        }
    }

    pub fn buf_id(&mut self, b: Base) -> u32 {
        match self.bufs.iter().position(|x| *x == b) {
            Some(i) => i as u32,
            None => {
                self.bufs.push(b);
                self.bufs.len() as u32 - 1
            }
        }
    }

    pub fn get(&self, o: &Operand<'_>) -> Val {
        if let Def::Op { op, .. } = o.def {
            if let Some(c) = self.constant(op) {
                return Val::Int(Lin::int(c));
            }
        }
        self.env.get(&key(o.def)).cloned().unwrap_or(Val::Opaque)
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

    /// Kernel argument `i`'s static shape, when it has one.
    pub(super) fn arg_dims(&self, i: usize) -> Option<Vec<i64>> {
        self.arg_types.get(i)?.as_ref()?.shaped()?.static_dims()
    }

    pub fn arg_view(&self, i: usize) -> View {
        let dims = self.arg_dims(i).unwrap_or_default();
        View {
            base: Base::Arg(i),
            offs: vec![Lin::int(0); dims.len()],
            ext: dims.iter().map(|&d| Lin::int(d)).collect(),
            map: Some((0..dims.len()).collect()),
        }
    }

    /// Runs the ops of a block in order.
    pub fn block(&mut self, b: BlockId) -> Option<Vec<Val>> {
        let ops = self.m.blocks[b.idx()].ops.clone();
        for id in ops {
            if let Some(y) = self.op(id) {
                return Some(y);
            }
        }
        None
    }

    /// One op; `Some(values)` when it ends its block (`scf.yield`, `scf.condition`, `func.return`).
    fn op(&mut self, id: OpId) -> Option<Vec<Val>> {
        self.steps += 1;
        let cap = if self.replay_inputs.is_some() { super::replay::MAX_STEPS } else { MAX_STEPS };
        if self.steps > cap {
            self.giveup(id, "the kernel is too large to walk");
            return None;
        }
        let m = self.m;
        let op = m.op(id);
        let oc = op.opcode;
        let b = op_name(oc);
        if matches!(b, "yield" | "condition" | "return") {
            return Some(op.operands.iter().map(|o| self.get(o)).collect());
        }
        if solve::exhausted() {
            // every question from now on is undecided: the verdict is inconclusive whatever follows
            return None;
        }
        if super::race::is_compute(oc) {
            // what is in flight now overlaps work (`dma-double-buffering`'s no-overlap)
            self.facts.iter_mut().for_each(|f| f.busy = true);
        }
        if is_dma_start(oc) {
            self.start(id);
        } else if is_dma_wait(oc) || is_semaphore_wait(oc) {
            self.wait(id);
        } else if is_semaphore_signal(oc) {
            self.signal(id);
        } else if !op.regions.is_empty() {
            super::control::region_op(self, id);
        } else if is_semaphore_alloc(oc) || b == "alloca" || b == "alloc" {
            let dims = op.ty.mlir().and_then(|t| t.shaped()).and_then(|x| x.static_dims()).unwrap_or_default();
            let v = View {
                base: Base::Alloc(id),
                offs: vec![Lin::int(0); dims.len()],
                ext: dims.iter().map(|&d| Lin::int(d)).collect(),
                map: Some((0..dims.len()).collect()),
            };
            self.env.insert(key(Def::Op { op: id, index: 0 }), Val::Ref(v));
        } else if is_view(oc) {
            let v = self.view(id);
            self.env.insert(key(Def::Op { op: id, index: 0 }), v);
        } else if is_load(oc) || is_store(oc) {
            self.access(id, is_load(oc));
        } else {
            let v = super::arith::value(self, id);
            self.env.insert(key(Def::Op { op: id, index: 0 }), v);
        }
        None
    }

    /// The first operand without a role that is a buffer view.
    fn source_view(&self, id: OpId) -> Option<View> {
        self.m.op(id).operands.iter().filter(|o| o.role.is_none()).find_map(|o| match self.get(o) {
            Val::Ref(v) => Some(v),
            _ => None,
        })
    }

    fn result_dims(&self, id: OpId) -> Option<Vec<i64>> {
        self.m.op(id).ty.mlir().and_then(|t| t.shaped()).and_then(|x| x.static_dims())
    }

    pub(super) fn ints(&self, id: OpId, role: &str) -> Vec<Option<Lin>> {
        self.m.op(id).operands.iter().filter(|o| o.role == Some(role)).map(|o| as_lin(&self.get(o))).collect()
    }

    /// A slice, squeeze or reshape of a buffer view.
    fn view(&mut self, id: OpId) -> Val {
        let b = op_name(self.m.op(id).opcode);
        let Some(mut r) = self.source_view(id) else { return Val::Opaque };
        if b.starts_with("memref_slice") || b == "subview" {
            let idx = self.ints(id, "indices");
            let out = self.result_dims(id);
            // dynamic sizes (`<%sz>`): operands after the source with no role
            let dynamic: Vec<Option<Lin>> = self.ints(id, "dynamic_sizes");
            let shape: Vec<Option<i64>> = self
                .m
                .op(id)
                .ty
                .mlir()
                .and_then(|t| t.shaped())
                .and_then(|s| s.dims.as_ref())
                .map(|d| d.iter().map(|x| if let Dim::Static(n) = x { Some(*n) } else { None }).collect())
                .unwrap_or_default();
            let _ = out;
            match r.map.clone() {
                Some(map) if map.len() == idx.len() => {
                    let mut dyn_it = dynamic.into_iter();
                    for (v, i) in idx.iter().enumerate() {
                        let d = map[v];
                        let ext = match shape.get(v) {
                            Some(Some(n)) => Some(Lin::int(*n)),
                            _ => dyn_it.next().flatten(),
                        };
                        let (Some(i), Some(ext)) = (i.clone(), ext) else {
                            r.map = None;
                            break;
                        };
                        if d < r.offs.len() {
                            match r.offs[d].add(&i) {
                                Some(o) => r.offs[d] = o,
                                None => r.map = None,
                            }
                            r.ext[d] = ext;
                        }
                    }
                }
                _ => r.map = None,
            }
            Val::Ref(r)
        } else if b.starts_with("memref_squeeze") {
            match (&r.map, self.result_dims(id)) {
                (Some(map), Some(out)) => {
                    let keep: Vec<usize> = map.iter().copied().filter(|&d| r.ext[d] != Lin::int(1)).collect();
                    // unit dimensions the result keeps: take them from the front of what was dropped
                    r.map = (keep.len() == out.len()).then_some(keep).or_else(|| {
                        let mut kept = Vec::new();
                        let mut j = 0;
                        for &d in map {
                            if j < out.len() && r.ext[d] == Lin::int(out[j]) {
                                kept.push(d);
                                j += 1;
                            }
                        }
                        (j == out.len()).then_some(kept)
                    });
                }
                _ => r.map = None,
            }
            Val::Ref(r)
        } else {
            let rank = self.m.op(id).ty.mlir().and_then(|t| t.shaped()).and_then(|s| s.rank());
            if r.map.as_ref().map(Vec::len) != rank {
                r.map = None;
            }
            Val::Ref(r)
        }
    }

    /// A scalar load or store of SMEM (`memref.load`/`memref.store`; vector accesses only matter to races).
    fn access(&mut self, id: OpId, load: bool) {
        let op = self.m.op(id);
        let scalar_int =
            |t: Option<&MlirType<'_>>| matches!(t, Some(MlirType::Scalar { dtype, .. }) if !dtype.is_float());
        let Some(r) = op.operands.iter().find_map(|o| match self.get(o) {
            Val::Ref(v) => Some(v),
            _ => None,
        }) else {
            return;
        };
        let idx: Vec<Option<Lin>> = self.ints(id, "indices");
        if self.dma_bases.contains(&r.base) {
            let region = self.accessed(id, &r, &idx, load);
            self.touch(id, region, !load);
        }
        let at: Option<Vec<Lin>> = match &r.map {
            Some(map) if map.len() == idx.len() => {
                let mut k = r.offs.clone();
                let mut ok = true;
                for (v, i) in idx.iter().enumerate() {
                    match i.as_ref().and_then(|i| k[map[v]].add(i)) {
                        Some(x) => k[map[v]] = x,
                        None => ok = false,
                    }
                }
                ok.then_some(k)
            }
            _ => None,
        };
        if load {
            if !scalar_int(op.ty.mlir()) {
                return;
            }
            if self.replay_inputs.is_some() {
                if let Some(k) = at.as_ref().filter(|k| self.out_of_bounds(r.base, k)) {
                    // undefined behaviour, not a witness: what the read returns is no input's value
                    let shown: Vec<String> = k.iter().map(|x| x.to_string()).collect();
                    let why = format!("replay: {}[{}] is read out of bounds", self.base_name(r.base), shown.join(", "));
                    self.giveup(id, why);
                    return;
                }
            }
            let v = match at {
                Some(k) => self.load(r.base, k),
                None => Val::Int(self.fresh(format!("{}[?]", self.base_name(r.base)))),
            };
            self.env.insert(key(Def::Op { op: id, index: 0 }), v);
        } else if op.opcode == "memref.store" {
            let val = op
                .operands
                .iter()
                .find(|o| o.role.is_none() && !matches!(self.get(o), Val::Ref(_)))
                .map(|o| self.get(o))
                .unwrap_or(Val::Opaque);
            self.store(r.base, at, val);
        }
    }

    /// Whether an index that is all numbers lies outside a kernel argument's static shape (a replay's inputs that
    /// make the kernel read past a table: the SMEM read's value is not defined by any input).
    fn out_of_bounds(&self, base: Base, k: &[Lin]) -> bool {
        let Base::Arg(i) = base else { return false };
        let Some(dims) = self.arg_dims(i) else { return false };
        dims.len() == k.len() && k.iter().zip(&dims).any(|(x, &d)| x.as_int().is_some_and(|x| x < 0 || x >= d))
    }

    pub fn load(&mut self, base: Base, k: Vec<Lin>) -> Val {
        if let Some((_, _, v)) = self.mem.stores.iter().rev().find(|(b, i, _)| *b == base && *i == k) {
            let v = v.clone();
            return match v {
                // a store under a guard reads back as what it stored only where the guard held
                Val::Opaque => Val::Int(self.fresh(format!("{}[..]", self.base_name(base)))),
                v => v,
            };
        }
        let version = self.mem.version.get(&base).copied().unwrap_or(0);
        let buf = self.buf_id(base);
        Val::Int(Lin::atom(Atom::Load { buf, idx: k, version }))
    }

    fn store(&mut self, base: Base, key: Option<Vec<Lin>>, val: Val) {
        let guard = self.guard.clone();
        let Some(k) = key else {
            self.bump(base);
            return;
        };
        // another index of the same buffer that may be this one: the stores before are forgotten
        let clash =
            self.mem.stores.iter().any(|(b, i, _)| *b == base && *i != k && !super::arith::provably_different(i, &k));
        if clash {
            self.bump(base);
        }
        // a store under a guard: where it did not run, the buffer holds what it held
        let old = self.load(base, k.clone());
        let rel = if guard == self.scope_guard { Cond::True } else { guard };
        let merged = merge(&rel, &val, &old);
        self.mem.stores.retain(|(b, i, _)| !(*b == base && *i == k));
        self.mem.stores.push((base, k, merged));
    }

    pub fn bump(&mut self, base: Base) {
        self.mem.stores.retain(|(b, _, _)| *b != base);
        let v = self.fresh_version();
        if super::solve::trace() {
            eprintln!("dma-bump {base:?} -> {v}");
        }
        self.mem.version.insert(base, v);
    }

    /// A buffer as messages name it: its author's name where known, else the dump's.
    pub fn base_name(&self, b: Base) -> String {
        match b {
            Base::Arg(i) if self.python.get(i).is_some_and(Option::is_some) => {
                self.python[i].clone().unwrap_or_default()
            }
            _ => self.dump_name(b),
        }
    }

    /// A buffer as the dump names it (`%arg9`): what a finding's identity (its `semaphore` capture) is made of.
    pub fn dump_name(&self, b: Base) -> String {
        match b {
            Base::Arg(i) => {
                let f = self.m.func(self.func);
                f.params.get(i).map(|p| format!("%{}", p.name)).unwrap_or_else(|| format!("%arg{i}"))
            }
            Base::Alloc(op) => format!("%{}", self.m.op(op).name),
        }
    }

    /// The semaphore slots an op names by role.
    pub(super) fn sems(&mut self, id: OpId, roles: &[&str]) -> Option<Vec<SemKey>> {
        let op = self.m.op(id);
        let mut out = Vec::new();
        for o in op.operands.iter().filter(|o| o.role.is_some_and(|r| roles.contains(&r))) {
            match self.get(o) {
                Val::Ref(v) => out.push(SemKey { base: v.base, offs: v.offs }),
                _ => return None,
            }
        }
        if out.is_empty() && !op.operands.iter().any(|o| o.role.is_some()) {
            // no roles (an older spelling): the first semaphore view
            for o in &op.operands {
                if let Val::Ref(v) = self.get(o) {
                    if self.is_sem(v.base) {
                        out.push(SemKey { base: v.base, offs: v.offs });
                        break;
                    }
                }
            }
        }
        (!out.is_empty()).then_some(out)
    }

    fn is_sem(&self, b: Base) -> bool {
        match b {
            Base::Arg(i) => self.sem_args.contains(&i),
            Base::Alloc(op) => self.m.op(op).ty.mlir().is_some_and(|t| t.is_semaphore()),
        }
    }

    /// The view an op's operand of `role` names.
    pub(super) fn view_of(&self, id: OpId, role: &str) -> Option<View> {
        match self.get(self.m.op(id).operands.iter().find(|o| o.role == Some(role))?) {
            Val::Ref(v) => Some(v),
            _ => None,
        }
    }
}

/// An SSA value's key in the environment.
pub fn key(d: Def) -> (u8, u32, u32) {
    match d {
        Def::Op { op, index } => (0, op.0, index),
        Def::BlockArg { block, index } => (1, block.0, index),
        Def::Unresolved => (2, 0, 0),
    }
}

/// `c ? a : b` for engine values.
pub fn merge(c: &Cond, a: &Val, b: &Val) -> Val {
    if a == b || *c == Cond::True {
        return a.clone();
    }
    if *c == Cond::False {
        return b.clone();
    }
    match (a, b) {
        (Val::Int(x), Val::Int(y)) => Val::Int(Lin::select(c, x, y)),
        (Val::Bool(x), Val::Bool(y)) => {
            Val::Bool(Cond::or([Cond::and([c.clone(), x.clone()]), Cond::and([Cond::negate(c.clone()), y.clone()])]))
        }
        (Val::Ref(x), Val::Ref(y)) if x.base == y.base && x.offs.len() == y.offs.len() && x.map == y.map => {
            let offs = x.offs.iter().zip(&y.offs).map(|(p, q)| Lin::select(c, p, q)).collect();
            let ext = x.ext.iter().zip(&y.ext).map(|(p, q)| Lin::select(c, p, q)).collect();
            Val::Ref(View { base: x.base, offs, ext, map: x.map.clone() })
        }
        _ => Val::Opaque,
    }
}

pub fn as_lin(v: &Val) -> Option<Lin> {
    match v {
        Val::Int(l) => Some(l.clone()),
        Val::Bool(c) => Some(Lin::select(c, &Lin::int(1), &Lin::int(0))),
        _ => None,
    }
}

pub fn as_cond(v: &Val) -> Option<Cond> {
    match v {
        Val::Bool(c) => Some(c.clone()),
        Val::Int(l) => Some(Cond::cmp(l.clone(), Rel::Ne0)),
        _ => None,
    }
}

/// Buffers a function stores scalars to (`memref.store` through views): their loads are not inputs.
fn stored_bases(m: &Module<'_>, f: FuncId) -> Vec<Base> {
    let entry = m.regions[m.func(f).body.idx()].blocks.first().copied();
    let mut out = Vec::new();
    for (i, o) in m.ops.iter().enumerate() {
        if !(is_store(o.opcode)) || m.func_of(OpId(i as u32)) != f {
            continue;
        }
        let Some(mut d) = o
            .operands
            .iter()
            .find(|x| {
                x.role.is_none()
                    && x.ty.as_ref().and_then(|t| t.mlir()).is_some_and(|t| matches!(t, MlirType::Shaped(_)))
            })
            .map(|x| x.def)
            .or_else(|| o.operands.get(1).map(|x| x.def))
        else {
            continue;
        };
        // through views to the root
        for _ in 0..64 {
            match d {
                Def::Op { op, .. } if is_view(m.op(op).opcode) => match m.op(op).operands.first() {
                    Some(x) => d = x.def,
                    None => break,
                },
                _ => break,
            }
        }
        let b = match d {
            Def::BlockArg { block, index } if Some(block) == entry => Base::Arg(index as usize),
            Def::Op { op, .. } => Base::Alloc(op),
            _ => continue,
        };
        if !out.contains(&b) {
            out.push(b);
        }
    }
    out
}

/// A fresh variable's display name for an op's result: `%12`.
pub fn value_name(m: &Module<'_>, op: OpId) -> String {
    let o = m.op(op);
    if o.name.is_empty() {
        format!("`{}`", o.opcode)
    } else {
        format!("%{}", o.name)
    }
}
