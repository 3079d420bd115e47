//! Races: memory a DMA may still be writing (its target) or reading (its source) touched by the kernel.
//!
//! A DMA is in flight from its start to the wait that takes it: the facts ([`super::exec::Fact`]) outstanding at
//! an op are exactly the DMAs that may be in flight there, each with its guard and the regions it copies. So a
//! race is a question over the same terms as a wait's: at a read (`vector.load`, `memref.load`, a DMA's
//! source) or a write (a store, a DMA's target) of region `R`, is there an outstanding fact whose target (or,
//! for a write, source) overlaps `R`, with both guards holding? Regions are per-dimension offsets and extents;
//! two regions overlap where every dimension's intervals do.
//!
//! Inside a loop, the body runs from what the previous iteration left (the induction's invariant), so an access
//! sees the DMAs of earlier iterations there. What was outstanding before the loop is not in the body's facts:
//! each access is also kept, in program order among the loop's needs, and checked at the loop's entry against
//! what is outstanding there once the waits before it in the first iteration took their share — and for later
//! iterations against what the first ones left (`Engine::enter_access`). The same goes outward, loop by loop.
//!
//! What is proven: a race the solver finds with a witness of inputs (or that a replay on concrete inputs shows)
//! happens for that input. Regions the engine cannot follow (a reshape that lost its dimensions, a DMA whose
//! target is not a view it follows) make the question cover the whole buffer: a race found there is possible,
//! not proven.

use super::exec::{Base, Engine, Fact, Problem, View};
use super::solve::{self, Answer};
use super::term::{Cond, Lin, Rel};
use super::witness::NoWitness;
use crate::ir::*;

/// Work units the race questions of one kernel may spend, apart from the balance proof's ([`super::BUDGET`]).
pub const BUDGET: u64 = 10_000;
/// Work units one race question may spend: the real kernels' take at most a few dozen, and the rare question past
/// fifty costs up to seconds (its elimination grows faster than the units count it).
const QUESTION: u64 = 50;

/// Why a race question was not asked.
const RACE_BUDGET_OUT: &str = "the decision procedure's budget for races ran out";

/// How a memory access meets a DMA in flight.
pub const READ_WHILE_FILLING: &str = "read-while-filling";
pub const WRITE_WHILE_FILLING: &str = "write-while-filling";
pub const WRITE_WHILE_SENDING: &str = "write-while-sending";

/// The problem kinds that are races (the rest are balance).
pub fn is_race(kind: &str) -> bool {
    matches!(kind, READ_WHILE_FILLING | WRITE_WHILE_FILLING | WRITE_WHILE_SENDING)
}

/// A read or write of a region of a buffer some DMA copies to or from.
#[derive(Clone, Debug)]
pub struct Access {
    pub op: OpId,
    pub view: View,
    pub write: bool,
}

/// Accesses one after another under one guard (the loads of a block, unrolled), kept for a loop's entry as one:
/// the guard is the large part, moved into the entry's terms once for all of them.
#[derive(Clone, Debug)]
pub struct Kept {
    pub guard: Cond,
    pub parts: Vec<Access>,
    /// For every iteration of the loops it was kept through, not only their first ones (`enter_access`).
    pub general: bool,
}

/// Where two views of one buffer overlap; `None` when either lost its dimensions (then only the buffer is known).
pub fn overlap(a: &View, b: &View) -> Option<Cond> {
    if a.map.is_none() || b.map.is_none() || a.offs.len() != b.offs.len() {
        return None;
    }
    let mut parts = Vec::new();
    for d in 0..a.offs.len() {
        let (ea, eb) = (a.offs[d].add(&a.ext[d])?, b.offs[d].add(&b.ext[d])?);
        parts.push(Cond::compare("slt", &a.offs[d], &eb)?);
        parts.push(Cond::compare("slt", &b.offs[d], &ea)?);
    }
    Some(Cond::and(parts))
}

/// Whether two regions of one buffer are disjoint whatever the values: in some dimension their offsets differ by a
/// constant that one's constant extent does not bridge (the unrolled rows of a block, the two slots of a buffer).
/// The cheap answer most accesses get, before the solver is asked.
pub fn apart(a: &View, b: &View) -> bool {
    if a.map.is_none() || b.map.is_none() || a.offs.len() != b.offs.len() {
        return false;
    }
    (0..a.offs.len()).any(|d| {
        let (Some(gap), Some(ea), Some(eb)) =
            (b.offs[d].sub(&a.offs[d]).and_then(|g| g.as_int()), a.ext[d].as_int(), b.ext[d].as_int())
        else {
            return false;
        };
        gap >= ea || -gap >= eb
    })
}

/// The buffer a value is a view of: a kernel argument (a parameter of the entry block) or an allocation.
pub fn root_of(m: &Module<'_>, entry: Option<BlockId>, mut d: Def) -> Option<Base> {
    for _ in 0..64 {
        match d {
            Def::Op { op, .. } if crate::semantic::op::is_view(m.op(op).opcode) => d = m.op(op).operands.first()?.def,
            _ => break,
        }
    }
    match d {
        Def::BlockArg { block, index } if Some(block) == entry => Some(Base::Arg(index as usize)),
        Def::Op { op, .. } => Some(Base::Alloc(op)),
        _ => None,
    }
}

/// The buffers a function's DMAs copy to or from, each with the start op: only accesses of these can race.
pub fn dma_bases(m: &Module<'_>, f: FuncId) -> Vec<(Base, OpId)> {
    let entry = m.regions[m.func(f).body.idx()].blocks.first().copied();
    let mut out = Vec::new();
    for (i, o) in m.ops.iter().enumerate() {
        let id = OpId(i as u32);
        if !crate::semantic::op::is_dma_start(o.opcode) || m.func_of(id) != f {
            continue;
        }
        for x in o.operands.iter().filter(|x| matches!(x.role, Some("source") | Some("target"))) {
            if let Some(b) = root_of(m, entry, x.def) {
                if !out.contains(&(b, id)) {
                    out.push((b, id));
                }
            }
        }
    }
    out
}

impl Engine<'_, '_> {
    /// A read or write of `view` by op `id`: checked against what is in flight here, and kept for the enclosing
    /// loop's entry (module doc).
    pub(super) fn touch(&mut self, id: OpId, view: View, write: bool) {
        if !self.dma_bases.contains(&view.base) {
            return;
        }
        let a = Access { op: id, view, write };
        let guard = self.guard.clone();
        self.check_access(&a, &guard, &Cond::True);
        if !self.kept_outside(a.view.base) {
            return;
        }
        let pos = self.needs.last().map_or(0, Vec::len);
        let Some(scope) = self.accesses.last_mut() else { return };
        match scope.last_mut() {
            Some((p, k)) if *p == pos && k.general && k.guard == guard => k.parts.push(a),
            _ => scope.push((pos, Kept { guard, parts: vec![a], general: true })),
        }
    }

    /// Races of access `a` (run where `guard` holds; `extra` too) with the facts outstanding now.
    pub(super) fn check_access(&mut self, a: &Access, guard: &Cond, extra: &Cond) {
        // An access meets a few of many facts, and most of those it meets are apart from it or past a budget:
        // those exits are taken on the borrowed fact, and only a fact that leads to a question is cloned (in
        // unrolled kernels the clones and conjunctions of the rest were most of the run).
        let on_base = |v: &Option<View>| v.as_ref().is_some_and(|v| v.base == a.view.base);
        let hit: Vec<usize> = (0..self.facts.len())
            .filter(|&i| {
                let f = &self.facts[i];
                !f.signal && (f.dst.is_none() || on_base(&f.dst) || a.write && on_base(&f.src))
            })
            .collect();
        for i in hit {
            let f = &self.facts[i];
            let Some(dst) = &f.dst else {
                let op = f.op;
                self.race_doubt(op, "a DMA whose target the engine cannot follow");
                continue;
            };
            let kind = if a.write { WRITE_WHILE_FILLING } else { READ_WHILE_FILLING };
            let into = dst.base == a.view.base && self.worth_asking(a, dst);
            let from = a.write && f.src.as_ref().is_some_and(|s| s.base == a.view.base && self.worth_asking(a, s));
            if !into && !from {
                continue;
            }
            if self.race_units == 0 {
                self.race_doubt(a.op, RACE_BUDGET_OUT);
                continue;
            }
            let f = self.facts[i].clone();
            if into {
                self.race_with(a, guard, extra, &f, f.dst.as_ref().expect("checked above"), kind);
            }
            if from {
                self.race_with(a, guard, extra, &f, f.src.as_ref().expect("checked above"), WRITE_WHILE_SENDING);
            }
        }
    }

    /// Whether access `a` and a DMA's `region` are worth a question: not apart whatever the values, and, past a
    /// doubt about the DMAs themselves, only in a replay — what is in flight is not known then, so no race found
    /// from here on could be proven but by a replay, which checks its own (the questions cost more than they
    /// can show).
    fn worth_asking(&self, a: &Access, region: &View) -> bool {
        let in_doubt = self.unknown.is_some() && self.replay_inputs.is_none();
        !in_doubt && !apart(&a.view, region)
    }

    /// One race question: access `a` against DMA `f`'s `region` (not apart: [`Self::worth_asking`]).
    fn race_with(&mut self, a: &Access, guard: &Cond, extra: &Cond, f: &Fact, region: &View, kind: &'static str) {
        if self.race_units == 0 {
            self.race_doubt(a.op, RACE_BUDGET_OUT);
            return;
        }
        let (meet, precise) = match overlap(&a.view, region) {
            Some(c) => (c, true),
            None => (Cond::True, false),
        };
        let core =
            Cond::and([guard.clone(), extra.clone(), f.guard.clone(), Cond::cmp(f.amount.clone(), Rel::Ne0), meet]);
        let when = Cond::and([core.clone(), self.assume.clone()]);
        // (one question at most QUESTION units: the few that would take seconds are left undecided; once the
        // verdict is in doubt, only cheap questions are worth asking — a witness for a replay)
        let per = if self.race_unknown.is_some() { QUESTION / 10 } else { QUESTION };
        let cap = self.race_units.min(per);
        let side = solve::aside(cap);
        self.ask_race(a, f, kind, precise, core, when);
        self.race_units -= cap - side.end();
    }

    /// Decides one race question (`when`: `core` where the state is possible) and records what it shows.
    fn ask_race(&mut self, a: &Access, f: &Fact, kind: &'static str, precise: bool, core: Cond, when: Cond) {
        // most accesses race with nothing whatever the state: asked without what the state holds first (smaller)
        if solve::check(&core).is_unsat() {
            return;
        }
        // (a witness whose table reads are in bounds, its entries non-negative where they can be: as a wait's)
        match self.failure_model(&when) {
            Ok(None) => {}
            Err(why @ NoWitness::Undecided(_)) => {
                self.race_doubt(a.op, &format!("whether an access races with a DMA is {why}"))
            }
            Err(why) => self.race_doubt(a.op, &why.of("a race")),
            Ok(Some(model)) => {
                let (model, first) = self.first_iterations(&when, model);
                let exact = precise && self.exact_witness(&core, &self.assume.clone(), &model);
                let p = Problem {
                    op: a.op,
                    kind,
                    signal: false,
                    amounts: (f.amount.clone(), Lin::int(0)),
                    sem: f.sem.clone(),
                    related: Some(f.op),
                    when,
                    witness: Some(model),
                    exact,
                    first,
                    at: self.replay_where(),
                    replayed: None,
                    left_per_step: None,
                    started_last: None,
                    region: Some(a.view.clone()),
                };
                match self.problems.iter().position(|q| q.op == p.op && q.kind == p.kind && q.related == p.related) {
                    Some(i) if !self.problems[i].exact && p.exact => self.problems[i] = p,
                    Some(_) => {}
                    None => self.problems.push(p),
                }
            }
        }
    }

    fn race_doubt(&mut self, op: OpId, why: &str) {
        if self.race_unknown.is_none() {
            self.race_unknown = Some((op, why.to_string()));
        }
    }

    /// An access kept in a loop body, at the loop's entry: in the terms of the iteration it is checked for (`at`),
    /// where `when` also holds, against what is outstanding here; then kept for the loop around this one.
    ///
    /// Each access is kept in two versions, so that their number grows with the loops' depth, not exponentially:
    /// for the first iteration, in order among the needs (`general: false`, every enclosing loop's index at its
    /// first value so far), and for every iteration (`general: true`, indices free, after every need). Only a
    /// general version is checked for the later iterations of the next loop out, and only it stays general.
    pub(super) fn enter_access(
        &mut self,
        k: &Kept,
        at: &dyn Fn(&super::term::Atom) -> Option<Lin>,
        when: &Cond,
        general: bool,
    ) {
        let moved = (|| {
            let mut parts = Vec::with_capacity(k.parts.len());
            for a in &k.parts {
                let view = View {
                    offs: a.view.offs.iter().map(|o| o.subst(at)).collect::<Option<_>>()?,
                    ext: a.view.ext.iter().map(|o| o.subst(at)).collect::<Option<_>>()?,
                    ..a.view.clone()
                };
                parts.push(Access { view, ..a.clone() });
            }
            Some(Kept { guard: k.guard.subst(at)?, parts, general })
        })();
        let Some(k) = moved else {
            let op = k.parts.first().map_or(OpId(0), |a| a.op);
            self.race_doubt(op, "an access in a loop whose terms the induction cannot start from the loop's entry");
            return;
        };
        for a in &k.parts {
            self.check_access(a, &k.guard, when);
        }
        let mut k = k;
        k.parts.retain(|a| self.kept_outside(a.view.base));
        let pos = self.needs.last().map_or(0, Vec::len);
        match self.accesses.last_mut() {
            Some(scope) if !k.parts.is_empty() => scope.push((pos, k)),
            _ => {}
        }
    }

    /// Whether an access of `base` inside the current scope's loop is worth keeping for its entry: some DMA on
    /// the buffer is started outside the loop, so one may be in flight when the loop begins. Nothing is outside
    /// a grid dimension (the kernel body is the grid's).
    fn kept_outside(&self, base: Base) -> bool {
        match self.scope_ops.last() {
            Some(Some(l)) => {
                self.dma_starts_on.iter().any(|&(b, s)| b == base && !self.m.ancestors(s).any(|a| a == *l))
            }
            _ => false,
        }
    }
}

impl Engine<'_, '_> {
    /// The region a load or store of view `r` at `idx` touches: the indices added to the view's offsets, and the
    /// loaded or stored value's shape (aligned to the last dimensions) as extents. A strided access, or a view
    /// that lost its dimensions, touches the buffer somewhere (`map: None`).
    pub(super) fn accessed(&self, id: OpId, r: &View, idx: &[Option<Lin>], load: bool) -> View {
        let op = self.m.op(id);
        let dims = |t: Option<&crate::ir::mlir_type::MlirType<'_>>| {
            t.and_then(|t| t.shaped()).and_then(|s| s.static_dims()).unwrap_or_default()
        };
        let shape: Vec<i64> = if load {
            dims(op.ty.mlir())
        } else {
            op.operands
                .iter()
                .find(|o| o.role.is_none() && !matches!(self.get(o), super::exec::Val::Ref(_)))
                .map(|o| dims(o.ty.as_ref().and_then(|t| t.mlir())))
                .unwrap_or_default()
        };
        let mut v = r.clone();
        let strided = crate::semantic::op::op_name(op.opcode).contains("strided");
        match &r.map {
            Some(map) if map.len() == idx.len() && shape.len() <= map.len() && !strided => {
                let lead = map.len() - shape.len();
                for (k, i) in idx.iter().enumerate() {
                    let d = map[k];
                    match i.as_ref().and_then(|i| v.offs[d].add(i)) {
                        Some(o) => v.offs[d] = o,
                        None => {
                            v.map = None;
                            break;
                        }
                    }
                    v.ext[d] = Lin::int(if k >= lead { shape[k - lead] } else { 1 });
                }
            }
            _ => v.map = None,
        }
        v
    }
}

impl Engine<'_, '_> {
    /// The DMAs one iteration of a summed loop (index `iv` over `[lb, ub)` by `step`) starts, against those of
    /// another iteration: two copies into one region while both are in flight (the loop waits for none of them).
    pub(super) fn copies_overlap(&mut self, own: &[Fact], iv: &super::term::Var, lb: &Lin, ub: &Lin, step: i64) {
        let other = self.fresh(format!("{}'", iv.name));
        let to_other = |a: &super::term::Atom| match a {
            super::term::Atom::Var(v) if v.id == iv.id => Some(other.clone()),
            _ => None,
        };
        let i = Lin::var(iv.clone());
        let distinct = Cond::and([
            super::induct::in_range(&other, lb, ub, step),
            Cond::negate(Cond::compare("eq", &i, &other).unwrap_or(Cond::False)),
        ]);
        for f in own.iter().filter(|f| !f.signal) {
            let (Some(dst), Some(guard)) = (&f.dst, f.guard.subst(&to_other)) else { continue };
            let Some(view) = (|| {
                Some(View {
                    offs: dst.offs.iter().map(|o| o.subst(&to_other)).collect::<Option<_>>()?,
                    ext: dst.ext.iter().map(|o| o.subst(&to_other)).collect::<Option<_>>()?,
                    ..dst.clone()
                })
            })() else {
                self.race_doubt(f.op, "a loop of DMAs whose targets the engine cannot compare");
                continue;
            };
            let a = Access { op: f.op, view, write: true };
            self.race_with(&a, &Cond::and([guard, distinct.clone()]), &Cond::True, f, dst, WRITE_WHILE_FILLING);
        }
    }
}

/// An op that computes on vector data (a load or store of a vector, a matmul): what a DMA in flight should overlap.
pub fn is_compute(opcode: &str) -> bool {
    use crate::semantic::op::{is_load, is_matmul, is_scalar_access, is_store};
    (is_load(opcode) || is_store(opcode)) && !is_scalar_access(opcode) || is_matmul(opcode)
}

impl Engine<'_, '_> {
    /// At the end of an induction pass: whether each DMA this iteration started (`started`) lands in another region
    /// than the same start in the previous iteration (`prev` maps this iteration's terms to that one's; `ran`:
    /// the previous iteration ran). A region that never changes is one slot refilled (`dma-double-buffering`).
    ///
    /// Only the starts directly in this loop's body (`l`: the loop op, `None` for the grid) are compared: a start
    /// in a loop nested in it is that loop's refill, and its terms hold the inner loop's values, which this one's
    /// renaming leaves alone (they would compare equal).
    pub(super) fn refills(
        &mut self,
        started: &[Fact],
        prev: &dyn Fn(&super::term::Atom) -> Option<Lin>,
        ran: &Cond,
        l: Option<OpId>,
    ) {
        let m = self.m;
        let innermost = |op: OpId| m.ancestors(op).find(|&a| crate::semantic::op::is_loop(m.op(a).opcode));
        let cap = self.race_units.min(QUESTION);
        let side = solve::aside(cap);
        for f in started.iter().filter(|f| !f.signal && innermost(f.op) == l) {
            let Some(d) = &f.dst else { continue };
            let before = (|| {
                let offs: Vec<Lin> = d.offs.iter().map(|o| o.subst(prev)).collect::<Option<_>>()?;
                Some((offs, f.guard.subst(prev)?))
            })();
            let Some((offs, guard)) = before else {
                self.refills.push((f.op, None));
                continue;
            };
            // both iterations run it (a prologue's copy, for the first iteration only, refills nothing)
            let both = Cond::and([ran.clone(), self.assume.clone(), f.guard.clone(), guard]);
            match solve::check(&both) {
                Answer::Unsat => continue,
                Answer::Unknown(_) => {
                    self.refills.push((f.op, None));
                    continue;
                }
                Answer::Sat(_) => {}
            }
            let differ = Cond::or(
                d.offs.iter().zip(&offs).filter_map(|(a, b)| Some(Cond::cmp(a.sub(b)?, Rel::Ne0))).collect::<Vec<_>>(),
            );
            let varies = match solve::check(&Cond::and([both, differ])) {
                Answer::Unsat => Some(false),
                Answer::Sat(_) => Some(true),
                Answer::Unknown(_) => None,
            };
            if solve::trace() {
                eprintln!("dma-refill op {} varies {varies:?}", f.op.0);
            }
            self.refills.push((f.op, varies));
        }
        self.race_units -= cap - side.end();
    }
}
