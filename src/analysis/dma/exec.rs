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

use super::solve::{self, Answer, Model};
use super::term::{Atom, Cond, Lin, Rel, Sym, Var};
use crate::ir::mlir_type::MlirType;
use crate::ir::shape::Dim;
use crate::ir::*;
use crate::semantic::kernel;
use crate::semantic::op::{
    indirect_dma_rows_role, is_constant, is_dma_start, is_dma_wait, is_indirect_dma, is_load, is_semaphore_alloc,
    is_semaphore_signal, is_semaphore_wait, is_store, is_view, op_name,
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
        }
    }

    /// The host call's constants in memory before the kernel runs, element by element (a buffer index of 0 and an
    /// init flag of 1 in jax's paged attention): not inputs a witness may choose.
    pub fn seed(&mut self, seed: &super::Seed) {
        for (&arg, vals) in seed {
            let dims =
                self.arg_types.get(arg).cloned().flatten().and_then(|t| t.shaped().and_then(|s| s.static_dims()));
            let Some(dims) = dims else { continue };
            for (idx, v) in super::seed::elements(&dims, vals) {
                let idx = idx.into_iter().map(Lin::int).collect();
                self.mem.stores.push((Base::Arg(arg), idx, Val::Int(Lin::int(v))));
            }
        }
    }

    pub fn fresh(&mut self, name: impl Into<String>) -> Lin {
        let id = self.next_var;
        self.next_var += 1;
        let name: String = name.into();
        self.names.insert(id, name.clone());
        Lin::var(Var { id, name: name.into() })
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

    pub fn arg_view(&self, i: usize) -> View {
        let ty = self.arg_types.get(i).cloned().flatten();
        let dims = ty.as_ref().and_then(|t| t.shaped()).and_then(|s| s.static_dims()).unwrap_or_default();
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
        if self.steps > MAX_STEPS {
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

    fn ints(&self, id: OpId, role: &str) -> Vec<Option<Lin>> {
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
        let clash = self.mem.stores.iter().any(|(b, i, _)| *b == base && *i != k && !provably_different(i, &k));
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
        let v = self.next_version;
        self.next_version += 1;
        self.mem.version.insert(base, v);
    }

    pub fn base_name(&self, b: Base) -> String {
        match b {
            Base::Arg(i) => {
                let f = self.m.func(self.func);
                f.params.get(i).map(|p| format!("%{}", p.name)).unwrap_or_else(|| format!("%arg{i}"))
            }
            Base::Alloc(op) => format!("%{}", self.m.op(op).name),
        }
    }

    /// Bytes (or units) a DMA op moves, from a view's extents and element size.
    pub fn bytes_of(&self, id: OpId, roles: &[&str]) -> Option<Lin> {
        // both ends of a copy have its size: the first whose size is known
        let op = self.m.op(id);
        roles.iter().filter_map(|r| op.operands.iter().find(|o| o.role == Some(*r))).find_map(|o| self.operand_bytes(o))
    }

    /// An indirect DMA's size: its on-chip end's ([`indirect_dma_rows_role`]).
    fn on_chip_bytes(&self, id: OpId) -> Option<Lin> {
        self.bytes_of(id, &[indirect_dma_rows_role(self.m.op(id))?])
    }

    fn operand_bytes(&self, o: &Operand<'_>) -> Option<Lin> {
        let sh = o.ty.as_ref().and_then(|t| t.mlir()).and_then(|t| t.shaped());
        let bits = i64::from(sh.and_then(|s| s.elem.dtype()).map(|d| d.bits()).unwrap_or(0));
        if bits == 0 {
            return None;
        }
        let dims: Option<Vec<i64>> = sh.and_then(|s| s.static_dims());
        let mut n = Lin::int(1);
        match (dims, self.get(o)) {
            (Some(d), _) => {
                n = Lin::int(d.iter().try_fold(1i64, |a, &x| a.checked_mul(x))?);
            }
            (None, Val::Ref(v)) => match v.map.as_ref() {
                Some(map) => {
                    for &d in map {
                        n = n.mul(v.ext.get(d)?)?;
                    }
                }
                // a view the engine lost track of (a reshape that splits dimensions): its size is still the
                // slice's own — static extents and the `<%sz>` operands, in order
                None => n = self.slice_elems(o.def)?,
            },
            _ => return None,
        }
        if bits % 8 == 0 {
            n.scale(bits / 8)
        } else {
            // sub-byte elements: bytes = ceil(n·bits / 8), exact for the constant case only
            let c = n.as_int()?.checked_mul(bits)?;
            Some(Lin::int((c + 7) / 8))
        }
    }

    /// Elements of a buffer with dynamic dimensions whose view the engine lost: its static extents times the
    /// `<%sz>` operands of the slice that made them.
    fn slice_elems(&self, d: Def) -> Option<Lin> {
        let Def::Op { op: id, .. } = d else { return None };
        let dims = self.m.op(id).ty.mlir()?.shaped()?.dims.clone()?;
        let mut sizes = self.dynamic_sizes(d)?.into_iter();
        let mut n = Lin::int(1);
        for x in dims.iter() {
            let ext = match x {
                Dim::Static(k) => Lin::int(*k),
                _ => sizes.next()?,
            };
            n = n.mul(&ext)?;
        }
        sizes.next().is_none().then_some(n)
    }

    /// The dynamic extents of a view, in order: a slice's `<%sz>` operands, kept in order by a squeeze (which only
    /// drops unit dimensions).
    fn dynamic_sizes(&self, d: Def) -> Option<Vec<Lin>> {
        let Def::Op { op: id, .. } = d else { return None };
        let b = op_name(self.m.op(id).opcode);
        if b.starts_with("memref_slice") || b == "subview" {
            return self.ints(id, "dynamic_sizes").into_iter().collect();
        }
        if b.starts_with("memref_squeeze") {
            return self.dynamic_sizes(self.m.op(id).operands.first()?.def);
        }
        None
    }

    /// The semaphore slots an op names by role.
    fn sems(&mut self, id: OpId, roles: &[&str]) -> Option<Vec<SemKey>> {
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
    fn view_of(&self, id: OpId, role: &str) -> Option<View> {
        match self.get(self.m.op(id).operands.iter().find(|o| o.role == Some(role))?) {
            Val::Ref(v) => Some(v),
            _ => None,
        }
    }

    fn start(&mut self, id: OpId) {
        let op = self.m.op(id);
        let indirect = is_indirect_dma(op.opcode);
        let mut roles = vec![if indirect { "semaphore" } else { "target_semaphore" }];
        if op.operands.iter().any(|o| o.role == Some("source_semaphore")) {
            roles.push("source_semaphore");
        }
        let Some(sems) = self.sems(id, &roles) else {
            self.giveup(id, "a DMA whose semaphore the engine cannot follow");
            return;
        };
        let bytes = if indirect { self.on_chip_bytes(id) } else { self.bytes_of(id, &["source", "target"]) };
        let Some(bytes) = bytes else {
            self.giveup(id, "a DMA whose size the engine cannot compute");
            return;
        };
        // a zero-byte DMA signals nothing
        let guard = Cond::and([self.guard.clone(), Cond::cmp(bytes.clone(), Rel::Ne0)]);
        for sem in sems {
            // DMAs started one after another under the same condition onto the same slot (a copy split into
            // pages, unrolled) are one amount to the semaphore: kept as one fact, waits take from it in turn
            // instead of each splitting a list of identical facts by condition (constant sizes only: a wait takes
            // part of a fact only when both sizes are numbers)
            self.add_fact(
                Fact {
                    guard: guard.clone(),
                    sem,
                    amount: bytes.clone(),
                    op: id,
                    signal: false,
                    at: Vec::new(),
                    age: 0,
                    dst: self.view_of(id, "target"),
                    src: self.view_of(id, "source"),
                },
                false,
            );
        }
    }

    /// Adds `f`, onto the last fact when it is the same slot under the same condition (one sum to the semaphore);
    /// with `symbolic`, also when the sizes are terms.
    pub fn add_fact(&mut self, f: Fact, symbolic: bool) {
        self.note_relevant(&f.guard, &f.sem, &f.amount);
        add_onto(&mut self.log, f.clone(), symbolic);
        add_onto(&mut self.facts, f, symbolic);
    }

    /// Adds `f` as its own fact, never onto another (what a loop leaves after its last iteration).
    pub fn push_fact(&mut self, f: Fact) {
        self.note_relevant(&f.guard, &f.sem, &f.amount);
        self.log.push(f.clone());
        self.facts.push(f);
    }

    /// Records the buffers a DMA's or wait's terms read (see `relevant`).
    fn note_relevant(&mut self, guard: &Cond, sem: &SemKey, amount: &Lin) {
        let mut atoms = Vec::new();
        guard.atoms(&mut atoms);
        sem.offs.iter().for_each(|o| o.atoms(&mut atoms));
        amount.atoms(&mut atoms);
        for a in atoms {
            if let Atom::Load { buf, .. } = &*a {
                if !self.relevant.contains(buf) {
                    self.relevant.push(*buf);
                }
            }
        }
    }

    fn signal(&mut self, id: OpId) {
        let Some((sem, amount)) = self.sem_amount(id) else { return };
        let guard = Cond::and([self.guard.clone(), Cond::cmp(amount.clone(), Rel::Ne0)]);
        self.add_fact(
            Fact { guard, sem, amount, op: id, signal: true, at: Vec::new(), age: 0, dst: None, src: None },
            false,
        );
    }

    fn sem_amount(&mut self, id: OpId) -> Option<(SemKey, Lin)> {
        let op = self.m.op(id);
        let plain: Vec<Val> = op
            .operands
            .iter()
            .filter(|o| o.role.is_none() || matches!(o.role, Some("semaphore") | Some("amount") | Some("value")))
            .map(|o| self.get(o))
            .collect();
        let sem = plain.iter().find_map(|v| match v {
            Val::Ref(r) => Some(SemKey { base: r.base, offs: r.offs.clone() }),
            _ => None,
        });
        let amount = plain.iter().find_map(|v| match v {
            Val::Int(l) => Some(l.clone()),
            Val::Bool(c) => Some(Lin::select(c, &Lin::int(1), &Lin::int(0))),
            _ => None,
        });
        match (sem, amount) {
            (Some(s), Some(a)) => Some((s, a)),
            _ => {
                self.giveup(id, "a semaphore signal or wait whose semaphore or amount the engine cannot follow");
                None
            }
        }
    }

    fn wait(&mut self, id: OpId) {
        let op = self.m.op(id);
        let (sem, amount) = if is_semaphore_wait(op.opcode) {
            match self.sem_amount(id) {
                Some(x) => x,
                None => return,
            }
        } else {
            let Some(sem) = self.sems(id, &["semaphore", "sem"]).and_then(|s| s.into_iter().next()) else {
                self.giveup(id, "a DMA wait whose semaphore the engine cannot follow");
                return;
            };
            let bytes = if is_indirect_dma(op.opcode) {
                self.on_chip_bytes(id)
            } else {
                self.bytes_of(id, &["src", "dst", "ref"])
            };
            let Some(bytes) = bytes else {
                self.giveup(id, "a DMA wait whose size the engine cannot compute");
                return;
            };
            (sem, bytes)
        };
        let desc = (self.view_of(id, "src"), self.view_of(id, "dst"));
        self.wait_for(id, sem, amount, desc);
    }

    /// A wait at op `id` for `amount` on `sem` under the current guard: taken from what is outstanding, the rest
    /// a need of the enclosing loop (or a problem at the top level).
    /// `desc`: the source and target its descriptor names, when known.
    pub fn wait_for(&mut self, id: OpId, sem: SemKey, amount: Lin, desc: (Option<View>, Option<View>)) {
        self.note_relevant(&self.guard.clone(), &sem, &amount);
        let (src, dst) = desc;
        let need = Need {
            guard: self.guard.clone(),
            sem,
            total: amount.clone(),
            amount,
            op: id,
            assume: Cond::True,
            dst,
            src,
        };
        if let Some(left) = self.consume(need) {
            match self.needs.last_mut() {
                Some(scope) => scope.push(left),
                None => self.report_need(left),
            }
        }
    }

    /// A need nothing covers at the top level: a wait with nothing outstanding, or more than is.
    pub fn report_need(&mut self, n: Need) {
        let core = Cond::and([n.guard.clone(), Cond::cmp(n.amount.clone(), Rel::Ne0)]);
        let when = Cond::and([core.clone(), n.assume.clone()]);
        match solve::check(&when) {
            Answer::Unsat => {}
            Answer::Sat(model) => {
                let (model, first) = self.first_iterations(&when, model);
                let exact = self.exact_witness(&core, &n.assume, &model);
                let related = self.facts.iter().rev().find(|f| same_key(&f.sem, &n.sem)).map(|f| f.op);
                // some of what it takes was there: it takes more than was signalled
                let kind = if n.amount != n.total { "wait-exceeds-signals" } else { "wait-without-start" };
                self.problems.push(Problem {
                    op: n.op,
                    kind,
                    signal: false,
                    amounts: (n.total.clone(), n.amount.clone()),
                    sem: n.sem,
                    related,
                    when,
                    witness: Some(model),
                    exact,
                    first,
                    at: Vec::new(),
                });
            }
            Answer::Unknown(why) => self.giveup(n.op, format!("whether a wait has a DMA is undecided ({why})")),
        }
    }

    /// Takes what a wait needs from the outstanding facts; returns what is left of the need, if anything may be.
    ///
    /// Facts on the same semaphore slot are taken oldest first (what an iteration inherited before what it
    /// started): which DMA a wait takes is only blame — a semaphore is a sum — and a pipelined wait is written
    /// for the earlier start.
    pub fn consume(&mut self, n: Need) -> Option<Need> {
        let mut need = Cond::and([n.guard.clone(), Cond::cmp(n.amount.clone(), Rel::Ne0)]);
        // every question is asked where the state is possible (`assume`); the guards split here do not carry it
        let assume = Cond::and([self.assume.clone(), n.assume.clone()]);
        let under = |c: &Cond| Cond::and([c.clone(), assume.clone()]);
        if solve::check(&under(&need)).is_unsat() {
            return None;
        }
        let mut amount = n.amount.clone();
        self.prefer_own_copy(&n);
        // facts whose guard this wait changed: only they can have become impossible
        let first_new = self.facts.len();
        let mut touched = Vec::new();
        for i in 0..self.facts.len() {
            // a fact on a slot that may be the wait's (`i % 2` against `1`) is taken where the slots are equal
            let keq = if same_key(&self.facts[i].sem, &n.sem) {
                Cond::True
            } else if may_alias(&self.facts[i].sem, &n.sem) {
                match slots_equal(&self.facts[i].sem, &n.sem) {
                    Some(c) => c,
                    None => {
                        self.giveup(n.op, "a wait whose semaphore slot may or may not be a DMA's");
                        continue;
                    }
                }
            } else {
                continue;
            };
            // inside a deep invariant, a wait takes a DMA only where it is for the same block
            let keq = match self.deep {
                true => match same_block(&self.facts[i], &n) {
                    Some(Cond::True) => keq,
                    Some(c) => {
                        self.deep_narrowed = true;
                        Cond::and([keq, c])
                    }
                    None => {
                        self.deep_narrowed = true;
                        continue;
                    }
                },
                false => keq,
            };
            let mut f = self.facts[i].clone();
            touched.push(i);
            let elsewhere = Cond::and([f.guard.clone(), Cond::negate(keq.clone())]);
            f.guard = Cond::and([f.guard.clone(), keq.clone()]);
            let overlap = Cond::and([need.clone(), f.guard.clone()]);
            if solve::check(&under(&overlap)).is_unsat() {
                continue;
            }
            if f.amount == amount {
                // the wait takes this fact where both hold
                (self.facts[i].guard, need) = take(&f.guard, &need);
            } else if let Some(more) = f.amount.sub(&amount).and_then(|d| d.as_int()) {
                // amounts a constant apart (`256·n` and `256·n - 256`, or two constants)
                if more > 0 {
                    // part of it: the rest stays outstanding where the wait ran
                    if keq == Cond::True && solve::implies(&under(&f.guard), &need) == Some(true) {
                        self.facts[i].amount = Lin::int(more);
                    } else {
                        self.facts[i].guard = Cond::and([f.guard.clone(), Cond::negate(need.clone())]);
                        self.facts.push(Fact { guard: overlap, amount: Lin::int(more), ..f.clone() });
                    }
                    need = if solve::implies(&under(&need), &f.guard) == Some(true) {
                        Cond::False
                    } else {
                        Cond::and([need, Cond::negate(f.guard.clone())])
                    };
                } else {
                    // all of it, and more from the next: only where the fact's guard covers the whole need
                    if solve::implies(&under(&need), &f.guard) != Some(true) {
                        self.giveup(n.op, "a wait that takes several DMAs under different conditions");
                        return None;
                    }
                    self.facts[i].guard = Cond::False;
                    amount = amount.sub(&f.amount)?;
                }
            } else {
                // different symbolic amounts: decided only when they are equal wherever both hold
                // (shown part by part first: cheaper than a case split over the whole difference)
                let differ = if solve::equal_by_parts(&under(&overlap), &f.amount, &amount) {
                    Answer::Unsat
                } else {
                    solve::check(&Cond::and([under(&overlap), Cond::cmp(f.amount.sub(&amount)?, Rel::Ne0)]))
                };
                match differ {
                    Answer::Unsat => (self.facts[i].guard, need) = take(&f.guard, &need),
                    other => {
                        if solve::trace() {
                            let why = match &other {
                                Answer::Sat(m) => format!("sat {m:?}"),
                                Answer::Unknown(w) => format!("unknown {w}"),
                                Answer::Unsat => String::new(),
                            };
                            eprintln!("dma-size {why}");
                            eprintln!("dma-size wait {} takes {amount} from {} under {overlap}", n.op.0, f.amount);
                        }
                        self.giveup(n.op, "a wait whose size may differ from its DMA's");
                        return None;
                    }
                }
            }
            if keq != Cond::True {
                self.facts[i].guard = Cond::or([elsewhere, self.facts[i].guard.clone()]);
            }
            if solve::check(&under(&need)).is_unsat() {
                self.prune_changed(&touched, first_new);
                return None;
            }
        }
        self.prune_changed(&touched, first_new);
        if need.larger_than(MAX_GUARD) || self.facts.iter().any(|f| f.guard.larger_than(MAX_GUARD)) {
            // what takes what has split into more cases than the engine follows: stop before it costs memory
            self.giveup(n.op, "the conditions under which DMAs on this semaphore are outstanding grow too complex");
            self.facts.retain(|f| !f.guard.larger_than(MAX_GUARD));
            return None;
        }
        Some(Need { guard: need, amount, assume, ..n })
    }

    /// Of DMAs alike in all the accounting sees (slot, bytes, condition, iteration), the one a wait takes first
    /// is the one its descriptor names (its `dst`): a semaphore only counts, so which is taken changes nothing
    /// but the blame — a removed receive wait leaves its own hop's copy unwaited, not the next hop's.
    fn prefer_own_copy(&mut self, n: &Need) {
        let Some(dst) = &n.dst else { return };
        let Some(j) = self.facts.iter().position(|f| same_key(&f.sem, &n.sem) && f.dst.as_ref() == Some(dst)) else {
            return;
        };
        let like = |a: &Fact, b: &Fact| {
            same_key(&a.sem, &b.sem)
                && a.amount == b.amount
                && a.guard == b.guard
                && a.age == b.age
                && a.at == b.at
                && a.signal == b.signal
        };
        if let Some(i) = (0..j).find(|&i| like(&self.facts[i], &self.facts[j])) {
            self.facts.swap(i, j);
        }
    }

    /// Drops facts whose guard cannot hold.
    pub fn prune(&mut self) {
        let all: Vec<usize> = (0..self.facts.len()).collect();
        self.prune_changed(&all, self.facts.len());
    }

    /// Drops, of the facts at `changed` and from `first_new` on, those whose guard cannot hold; the others were
    /// possible before and nothing changed them.
    fn prune_changed(&mut self, changed: &[usize], first_new: usize) {
        let mut drop = vec![false; self.facts.len()];
        for i in changed.iter().copied().chain(first_new..self.facts.len()) {
            drop[i] = solve::check(&self.facts[i].guard).is_unsat();
        }
        let mut i = 0;
        self.facts.retain(|_| {
            i += 1;
            !drop[i - 1]
        });
    }

    /// A witness of `when` with every loop index it names at its first value, when there is one (else `model`).
    pub fn first_iterations(&self, when: &Cond, model: Model) -> (Model, bool) {
        let mut firsts = Vec::new();
        for a in model.keys() {
            if let Atom::Var(v) = &**a {
                if let Some(lb) = self.first_value.get(&v.id) {
                    firsts.push(Cond::cmp(Lin::atom((**a).clone()).sub(lb).unwrap_or_default(), Rel::Eq0));
                }
            }
        }
        if firsts.is_empty() {
            return (model, true);
        }
        match solve::check(&Cond::and(std::iter::once(when.clone()).chain(firsts))) {
            Answer::Sat(m) => (m, true),
            _ => (model, false),
        }
    }

    /// Whether a witness's values are all inputs: grid and loop indices (their ranges are in the condition) and
    /// loads of buffers the kernel never writes.
    pub fn is_input_model(&self, m: &Model) -> bool {
        m.keys().all(|a| self.is_input(a))
    }

    /// Whether a witness of `when` is all inputs: the model's values, and every atom `when` reads (a solver's
    /// model may leave out values it eliminated, a loop's result among them).
    pub fn is_input_witness(&self, when: &Cond, m: &Model) -> bool {
        let mut atoms = Vec::new();
        when.atoms(&mut atoms);
        self.is_input_model(m) && atoms.iter().all(|a| self.is_input(a))
    }

    /// Whether the model's inputs reach the failure `when` whatever the rest is: all inputs, or the inputs fixed
    /// to the model's values leave no state that `assume` allows and `when` excludes (a slot read back from SMEM
    /// is not an input, but what the previous iteration stored there is fixed by the inputs).
    pub fn exact_witness(&self, when: &Cond, assume: &Cond, m: &Model) -> bool {
        // after a deep invariant, what is outstanding is only known up to which block a wait takes (`deep`)
        if self.deep_used {
            return false;
        }
        let both = Cond::and([when.clone(), assume.clone()]);
        if self.is_input_witness(&both, m) {
            return true;
        }
        let mut atoms = Vec::new();
        both.atoms(&mut atoms);
        let fixed: Vec<Cond> = atoms
            .iter()
            .filter(|a| self.is_fixed_input(a))
            .filter_map(|a| {
                let v = m.get(a).copied().unwrap_or(0);
                Some(Cond::cmp(Lin::atom((**a).clone()).sub(&Lin::int(v))?, Rel::Eq0))
            })
            .collect();
        let rest = Cond::and(fixed.into_iter().chain([assume.clone(), Cond::negate(when.clone())]).collect::<Vec<_>>());
        solve::check(&rest).is_unsat()
    }

    /// An input whose value a witness gives: a kernel argument or a table element at an index of inputs.
    fn is_fixed_input(&self, a: &Sym) -> bool {
        match &**a {
            Atom::Var(_) => self.is_input(a),
            Atom::Load { idx, .. } => {
                let mut inner = Vec::new();
                idx.iter().for_each(|l| l.atoms(&mut inner));
                self.is_input(a) && inner.iter().all(|x| self.is_input(x))
            }
            _ => false,
        }
    }

    fn is_input(&self, a: &Sym) -> bool {
        match &**a {
            Atom::Var(v) => {
                !self.carried.contains(&v.id)
                    && !self.names.get(&v.id).is_some_and(|n| n.ends_with("?]") || n.ends_with("..]"))
            }
            Atom::Load { buf, .. } => self.bufs.get(*buf as usize).is_some_and(|b| !self.written.contains(b)),
            Atom::Div { .. } | Atom::Rem { .. } | Atom::Min(..) | Atom::Max(..) | Atom::Select(..) => true,
            Atom::Mul(..) | Atom::App(..) => false,
        }
    }
}

/// Adds `f` to `facts`, onto the last one when it is the same slot under the same condition (`Engine::add_fact`).
fn add_onto(facts: &mut Vec<Fact>, f: Fact, symbolic: bool) {
    if let Some(last) = facts.last_mut().filter(|x| {
        !x.signal && !f.signal && x.age == 0 && x.at.is_empty() && x.guard == f.guard && same_key(&x.sem, &f.sem)
    }) {
        let sum = if symbolic {
            last.amount.add(&f.amount)
        } else {
            last.amount.as_int().zip(f.amount.as_int()).and_then(|(a, b)| a.checked_add(b)).map(Lin::int)
        };
        if let Some(sum) = sum {
            last.amount = sum;
            return;
        }
    }
    facts.push(f);
}

/// What is left of a fact's guard and of a need's after the need takes the fact where both hold. The common
/// cases — one covers the other — leave `false` instead of a growing formula.
fn take(fact: &Cond, need: &Cond) -> (Cond, Cond) {
    let fact_left = if solve::implies(fact, need) == Some(true) {
        Cond::False
    } else {
        Cond::and([fact.clone(), Cond::negate(need.clone())])
    };
    let need_left = if solve::implies(need, fact) == Some(true) {
        Cond::False
    } else {
        Cond::and([need.clone(), Cond::negate(fact.clone())])
    };
    (fact_left, need_left)
}

/// An SSA value's key in the environment.
pub fn key(d: Def) -> (u8, u32, u32) {
    match d {
        Def::Op { op, index } => (0, op.0, index),
        Def::BlockArg { block, index } => (1, block.0, index),
        Def::Unresolved => (2, 0, 0),
    }
}

/// Where a DMA and a wait name the same source and target (`None`: never; `True` where a descriptor is unknown).
fn same_block(f: &Fact, n: &Need) -> Option<Cond> {
    let mut eq = Vec::new();
    for (a, b) in [(&f.src, &n.src), (&f.dst, &n.dst)] {
        let (Some(a), Some(b)) = (a, b) else { continue };
        if a.base != b.base || a.offs.len() != b.offs.len() {
            return None;
        }
        for (x, y) in a.offs.iter().zip(&b.offs) {
            eq.push(Cond::cmp(x.sub(y)?, Rel::Eq0));
        }
    }
    Some(Cond::and(eq))
}

/// The same semaphore slot, term for term.
pub fn same_key(a: &SemKey, b: &SemKey) -> bool {
    a.base == b.base && a.offs == b.offs
}

/// The same semaphore buffer with slots that differ in terms but might be equal.
pub(super) fn may_alias(a: &SemKey, b: &SemKey) -> bool {
    a.base == b.base && a.offs.len() == b.offs.len() && !provably_different(&a.offs, &b.offs)
}

/// The condition under which two slots of one semaphore are the same one.
fn slots_equal(a: &SemKey, b: &SemKey) -> Option<Cond> {
    let mut eq = Vec::new();
    for (x, y) in a.offs.iter().zip(&b.offs) {
        eq.push(Cond::cmp(x.sub(y)?, Rel::Eq0));
    }
    Some(Cond::and(eq))
}

/// Two index lists that differ in a constant position.
fn provably_different(a: &[Lin], b: &[Lin]) -> bool {
    a.len() == b.len() && a.iter().zip(b).any(|(x, y)| matches!((x.as_int(), y.as_int()), (Some(p), Some(q)) if p != q))
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
