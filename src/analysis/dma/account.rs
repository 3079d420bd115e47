//! DMA accounting: starts and signals add facts, waits take from them ([`Engine::consume`]), what nothing covers
//! is a need of the enclosing loop or a problem. A semaphore counts bytes: which fact a wait takes is blame, the
//! totals are the verdict.

use super::arith::provably_different;
use super::exec::{Engine, Fact, Need, Problem, SemKey, Val, View, MAX_GUARD};
use super::solve::{self, Answer};
use super::term::{Atom, Cond, Lin, Rel};
use crate::ir::*;
use crate::semantic::op::{is_indirect_dma, is_semaphore_wait};
use std::cmp::Ordering;

impl Engine<'_, '_> {
    pub(super) fn start(&mut self, id: OpId) {
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
        if self.invalid_size(id, &bytes) {
            return;
        }
        // a zero-byte DMA signals nothing
        let guard = Cond::and([self.guard.clone(), Cond::cmp(bytes.clone(), Rel::Ne0)]);
        // the copy reads its source and writes its target from here on: either may race with a DMA in flight
        let (dst, src) = (self.view_of(id, "target"), self.view_of(id, "source"));
        // (where it moves bytes at all)
        let outer = std::mem::replace(&mut self.guard, guard.clone());
        for (v, write) in [(&src, false), (&dst, true)] {
            if let Some(v) = v {
                self.touch(id, v.clone(), write);
            }
        }
        self.guard = outer;
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
                    at: self.replay_where(),
                    last: self.replay_last(),
                    age: 0,
                    dst: dst.clone(),
                    src: src.clone(),
                    busy: false,
                },
                false,
            );
        }
    }

    /// In a replay, a negative size: the inputs are not ones the kernel can be called with (a slice of negative
    /// extent), so the replay proves nothing.
    fn invalid_size(&mut self, id: OpId, amount: &Lin) -> bool {
        let bad = self.replay_inputs.is_some() && amount.as_int().is_some_and(|a| a < 0);
        if bad {
            self.giveup(id, "replay: a negative size");
        }
        bad
    }

    /// In a replay, the loops around the current op at their indices, innermost first (`Fact::at`'s order).
    pub(super) fn replay_where(&self) -> Vec<(String, Lin)> {
        self.replay_at.iter().rev().map(|(n, i, _)| (n.clone(), Lin::int(*i))).collect()
    }

    /// In a replay, whether the current op runs in the last iteration of the innermost loop around it.
    fn replay_last(&self) -> Option<bool> {
        let (_, i, last) = self.replay_at.last()?;
        Some(*i == (*last)?)
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

    pub(super) fn signal(&mut self, id: OpId) {
        let Some((sem, amount)) = self.sem_amount(id) else { return };
        let guard = Cond::and([self.guard.clone(), Cond::cmp(amount.clone(), Rel::Ne0)]);
        self.add_fact(
            Fact {
                guard,
                sem,
                amount,
                op: id,
                signal: true,
                at: self.replay_where(),
                last: self.replay_last(),
                age: 0,
                dst: None,
                src: None,
                busy: false,
            },
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

    pub(super) fn wait(&mut self, id: OpId) {
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
        if self.invalid_size(id, &amount) {
            return;
        }
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
        match self.failure_model(&when) {
            Ok(None) => {}
            Ok(Some(model)) => {
                let (model, first) = self.first_iterations(&when, model);
                let exact = self.exact_witness(&core, &n.assume, &model);
                let related = self.facts.iter().rev().find(|f| same_key(&f.sem, &n.sem)).map(|f| f.op);
                // some of what it takes was there: it takes more than was signalled
                let kind = if n.amount != n.total { "wait-exceeds-signals" } else { "wait-without-start" };
                if self.replay_inputs.is_some() && super::replay::seen(&self.problems, n.op, kind) {
                    return;
                }
                let at = self.replay_where();
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
                    at,
                    replayed: None,
                    left_per_step: None,
                    started_last: None,
                    region: None,
                });
            }
            Err(why) => self.giveup(n.op, format!("whether a wait has a DMA: {why}")),
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
            let keq = match self.deep.then(|| same_block(&self.facts[i], &n)) {
                None | Some(Some(Cond::True)) => keq,
                Some(block) => {
                    self.deep_narrowed = true;
                    match block {
                        Some(c) => Cond::and([keq, c]),
                        None => continue,
                    }
                }
            };
            let mut f = self.facts[i].clone();
            touched.push(i);
            let elsewhere = Cond::and([f.guard.clone(), Cond::negate(keq.clone())]);
            f.guard = Cond::and([f.guard.clone(), keq.clone()]);
            let overlap = Cond::and([need.clone(), f.guard.clone()]);
            if solve::check(&under(&overlap)).is_unsat() {
                continue;
            }
            *self.overlapped.entry(f.op).or_default() |= f.busy;
            if f.amount == amount {
                // the wait takes this fact where both hold
                (self.facts[i].guard, need) = take(&f.guard, &need);
            } else {
                // amounts a constant apart (`256·n` and `256·n - 256`, or two constants), else, for different
                // symbolic amounts, equal wherever both hold or one provably no larger than the other there
                let diff = f.amount.sub(&amount)?;
                let order = match diff.as_int() {
                    Some(more) => more.cmp(&0),
                    None => match size_order(&under(&overlap), &f.amount, &amount, &diff) {
                        Ok(o) => o,
                        Err(other) => {
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
                    },
                };
                match order {
                    // equal wherever both hold: the wait takes this fact where both hold
                    Ordering::Equal => (self.facts[i].guard, need) = take(&f.guard, &need),
                    // part of it: the rest stays outstanding where the wait ran
                    Ordering::Greater => {
                        if keq == Cond::True && solve::implies(&under(&f.guard), &need) == Some(true) {
                            self.facts[i].amount = diff;
                        } else {
                            self.facts[i].guard = Cond::and([f.guard.clone(), Cond::negate(need.clone())]);
                            self.facts.push(Fact { guard: overlap, amount: diff, ..f.clone() });
                        }
                        need = if solve::implies(&under(&need), &f.guard) == Some(true) {
                            Cond::False
                        } else {
                            Cond::and([need, Cond::negate(f.guard.clone())])
                        };
                    }
                    // all of it, and more from the next (a wait of a sum of sizes): only where the fact's guard
                    // covers the whole need — or the fact is absent only where it moves no bytes (a zero-byte DMA
                    // is nothing), so that taking its amount off the wait's is right wherever the wait runs
                    Ordering::Less => {
                        let present = Cond::or([f.guard.clone(), Cond::cmp(f.amount.clone(), Rel::Eq0)]);
                        if solve::implies(&under(&need), &present) != Some(true) {
                            self.giveup(n.op, "a wait that takes several DMAs under different conditions");
                            return None;
                        }
                        self.facts[i].guard = Cond::False;
                        amount = amount.sub(&f.amount)?;
                    }
                }
            }
            // (the part on another slot only where the state allows it: a slot read at a loop head is what the
            // previous iteration stored, which may rule the other slot out)
            if keq != Cond::True && !solve::check(&under(&elsewhere)).is_unsat() {
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
}

/// How a DMA's symbolic `fact` amount compares with a wait's `need` amount (`diff` = fact − need) wherever
/// `both` hold: equal (shown part by part first: cheaper than a case split over the whole difference), else
/// provably larger (the wait takes part of the DMA) or smaller (the wait takes all of it and more from other DMAs:
/// one wait of a block's summed sizes). The solver's answer when none of the three holds for every such state.
fn size_order(both: &Cond, fact: &Lin, need: &Lin, diff: &Lin) -> Result<Ordering, Answer> {
    if solve::equal_by_parts(both, fact, need) {
        return Ok(Ordering::Equal);
    }
    let differ = solve::check(&Cond::and([both.clone(), Cond::cmp(diff.clone(), Rel::Ne0)]));
    if differ.is_unsat() {
        return Ok(Ordering::Equal);
    }
    if solve::implies(both, &Cond::cmp(diff.clone(), Rel::Ge0)) == Some(true) {
        return Ok(Ordering::Greater);
    }
    match diff.scale(-1) {
        Some(less) if solve::implies(both, &Cond::cmp(less.clone(), Rel::Ge0)) == Some(true) => Ok(Ordering::Less),
        _ => Err(differ),
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
        // one fact is in flight over one region per side: the two targets must make one box (the pages of a block,
        // one after the other), else a race with the later DMA's target would go unseen; sources may also be the
        // whole buffer (pages gathered from a page table: only a write into the source buffer can race with them,
        // and one found in the whole buffer is only possible)
        let src = union_box(&last.src, &f.src).or_else(|| whole_buffer(&last.src, &f.src));
        let regions = union_box(&last.dst, &f.dst).zip(src);
        if let Some((sum, (dst, src))) = sum.zip(regions) {
            (last.amount, last.dst, last.src) = (sum, dst, src);
            return;
        }
    }
    facts.push(f);
}

/// Two DMAs' regions of one buffer as the whole buffer (a view without dimensions, which any access of the buffer
/// may overlap).
fn whole_buffer(a: &Option<View>, b: &Option<View>) -> Option<Option<View>> {
    match (a, b) {
        (Some(a), Some(b)) if a.base == b.base => Some(Some(View { map: None, ..a.clone() })),
        _ => None,
    }
}

/// The region two DMAs in flight together cover, when it is one box: the same region, or regions equal in every
/// dimension but one, where one ends at the other's offset. `None` when they make no box (or one region is
/// unknown and the other not): then they stay two facts, each in flight over its own region.
fn union_box(a: &Option<View>, b: &Option<View>) -> Option<Option<View>> {
    let (a, b) = match (a, b) {
        (None, None) => return Some(None),
        (Some(a), Some(b)) if a.base == b.base => (a, b),
        _ => return None,
    };
    if a == b {
        return Some(Some(a.clone()));
    }
    if a.map.is_none() || a.map != b.map || a.offs.len() != b.offs.len() {
        return None;
    }
    let differ: Vec<usize> = (0..a.offs.len()).filter(|&d| a.offs[d] != b.offs[d] || a.ext[d] != b.ext[d]).collect();
    let [d] = differ[..] else { return None };
    let ends_at = |x: &View, y: &View| x.offs[d].add(&x.ext[d]).is_some_and(|e| e == y.offs[d]);
    let first = match (ends_at(a, b), ends_at(b, a)) {
        (true, _) => a,
        (_, true) => b,
        _ => return None,
    };
    let mut out = first.clone();
    out.ext[d] = a.ext[d].add(&b.ext[d])?;
    Some(Some(out))
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
