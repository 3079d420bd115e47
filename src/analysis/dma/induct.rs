//! Loops and the grid by induction.
//!
//! A loop is checked without counting its iterations. Its body runs once with the index `i` a variable in
//! `[lb, ub)` and every carried value (`iter_args`, SMEM scalars the loop writes) a variable of its own, from no
//! outstanding DMA. What it leaves outstanding, `L(i)`, and what its waits needed and the iteration itself did not
//! start, `N(i)`, are terms over those variables. Then:
//! - **step**: `N(i + step)` — the next iteration's needs, its carried variables replaced by what iteration `i`
//!   yields — must be covered by `L(i)` wherever iteration `i + step` runs; what of `L(i)` the next iteration does
//!   not take is followed by a deep invariant where that is cheap (`Shift`), else not (inconclusive);
//! - **entry**: `N(lb)` with the initial values is taken from what is outstanding before the loop (and, with a
//!   deep invariant, the needs of as many first iterations as it is deep);
//! - **exit**: `L(last)` stays outstanding after the loop, where the loop runs at all.
//!
//! The grid is such a loop per dimension, the last one innermost.

use super::exec::{as_lin, merge, Base, Engine, Fact, Need, Val};
use super::shift::Shift;
use super::term::{Atom, Cond, Lin, Rel};
use crate::ir::*;
use std::collections::HashMap;

/// A loop as the induction sees it.
pub struct Loop {
    pub name: String,
    /// The loop op (`None`: a grid dimension).
    pub op: Option<OpId>,
    pub lb: Lin,
    pub ub: Lin,
    pub step: i64,
    /// Initial values of the carried values.
    pub init: Vec<Val>,
    /// Whether a deep invariant may be tried (`induct`): not yet for grid dimensions, where a DMA left over by
    /// a wait for another block is a finding the deep attempt's blame would turn into a doubt.
    pub deep: bool,
}

/// What the closing (or last) pass of an attempt left: yielded values, needs, own facts, inherited facts left,
/// stores at the end, the assumption it ran under, and the accesses of buffers DMAs copy (`super::race`).
type Attempt = (Vec<Val>, Vec<Need>, Vec<Fact>, Vec<Fact>, Vec<(Base, Vec<Lin>, Lin)>, Cond, Accesses);

/// Accesses kept for a loop's entry, each after how many of its needs.
type Accesses = Vec<(usize, super::race::Kept)>;

/// A first attempt kept while a deep one runs: its result, whether it closed, its invariant, its problems and
/// the engine's doubt after it.
type FirstAttempt = (Option<Attempt>, bool, Vec<Fact>, Vec<super::exec::Problem>, Option<(OpId, String)>);

/// What one symbolic iteration produced.
pub(super) type Body<'b, 'm, 'a> = dyn FnMut(&mut Engine<'m, 'a>, &Lin, &[Val]) -> Vec<Val> + 'b;

/// Passes over the body at most: each starts from the previous pass's leftovers as the invariant.
const MAX_PASSES: usize = 3;
/// Passes from the guess (see `induct`).
const GUESS_PASSES: usize = 2;
/// Iterations a deep invariant follows a DMA across before the induction gives up (a ring of that many slots).
const MAX_AGE: u8 = 8;
/// Work units a loop's first attempt may have cost for a deep one to be tried.
const DEEP_UNITS: u64 = 1_000;

#[cfg(test)]
thread_local! {
    /// Whether the guess is skipped: a test's way to get a loop whose passes do not settle.
    pub static NO_GUESS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn guess_passes() -> usize {
    #[cfg(test)]
    if NO_GUESS.with(|g| g.get()) {
        return 0;
    }
    GUESS_PASSES
}

/// `x` is an index of a loop over `[lb, ub)` by `step`.
pub(super) fn in_range(x: &Lin, lb: &Lin, ub: &Lin, step: i64) -> Cond {
    let lo = Cond::compare("sge", x, lb).unwrap_or(Cond::False);
    let hi = Cond::compare("slt", x, ub).unwrap_or(Cond::False);
    let on = if step == 1 {
        Cond::True
    } else {
        x.sub(lb).and_then(|d| d.rem(step)).map(|r| Cond::cmp(r, Rel::Eq0)).unwrap_or(Cond::False)
    };
    Cond::and([lo, hi, on])
}

/// Runs loop `l` by induction (module doc); returns the carried values after the loop.
pub fn induct<'m, 'a>(e: &mut Engine<'m, 'a>, l: Loop, stored: &[Base], body: &mut Body<'_, 'm, 'a>) -> Vec<Val> {
    if e.replay_inputs.is_some() {
        return super::replay::run_loop(e, l, body);
    }
    e.loops += 1;
    let loops_before = e.loops;
    let units_before = super::solve::left();
    let outer_facts = std::mem::take(&mut e.facts);
    let outer_guard = e.guard.clone();
    let outer_needs = e.needs.len();
    let entry_mem = e.mem.clone();
    let i = e.fresh(l.name.clone());
    let range = |x: &Lin| in_range(x, &l.lb, &l.ub, l.step);
    // carried values at the head of iteration i: variables; so are the buffers the loop writes
    let heads: Vec<Val> = l.init.iter().enumerate().map(|(k, v)| head(e, &l.name, k, v)).collect();
    let mut head_version: HashMap<Base, u32> = HashMap::new();
    for &b in stored {
        e.bump(b);
        head_version.insert(b, e.mem.version.get(&b).copied().unwrap_or(0));
    }
    let head_mem = e.mem.clone();
    let iv = var_id(&Some(i.clone()));
    if let Some(v) = iv {
        e.first_value.insert(v, l.lb.clone());
    }
    let head_vars: Vec<Option<u32>> = heads.iter().map(head_var).collect();
    let body_guard = Cond::and([outer_guard.clone(), range(&i)]);
    // the previous iteration in this one's terms: i − step, its carried values and written buffers unknown
    let prev_i = i.sub(&Lin::int(l.step));
    // (every buffer the loop stores to has its number before the body runs: the shift maps its head loads)
    for &b in stored {
        e.buf_id(b);
    }
    let bufs = e.bufs.clone();
    let mut shift = Shift::new(e, &l.name, &i, &prev_i, &heads, stored, &head_version, 1);
    // the previous iteration ran, and so does this one
    let has_prev = Cond::and([prev_i.as_ref().map(range).unwrap_or(Cond::False), body_guard.clone()]);
    let not_first = Cond::negate(Cond::compare("eq", &i, &l.lb).unwrap_or(Cond::False));
    let problems_at_entry = e.problems.len();
    let refills_at_entry = e.refills.len();
    let unknown_at_entry = e.unknown.clone();
    let outer_assume = e.assume.clone();
    let outer_deep = e.deep;
    // names the passes make from here on (each pass's own, and older ones a deep invariant keeps: `canonical`)
    let loop_floor = (e.next_var, e.next_version);
    // a first attempt hands over only what each iteration started; when what it inherited outlives the next
    // iteration (a ring of several slots, a pipeline several blocks deep), a deep attempt follows each DMA until
    // it is waited, up to MAX_AGE iterations, with the values of each earlier iteration its own (`Shift`)
    let mut deep = false;
    // DMAs the loop only sums (found by the first attempt): never waited inside, not handed over by a deep one
    let mut summed: Vec<OpId> = Vec::new();
    // the first attempt's result, findings and doubt, while a deep one is tried
    let mut first_attempt: Option<FirstAttempt> = None;
    let (result, closed_any, inv) = loop {
        let prev = |a: &Atom| shift.apply(a);
        // the invariant moved one iteration on: `link` ties the carried values to what the previous one yielded
        let hand = |facts: &[Fact]| -> Option<Vec<Fact>> {
            let mut out = Vec::new();
            for f in facts {
                if f.age >= MAX_AGE {
                    return None;
                }
                let g = f.guard.subst(&prev)?;
                let (sem, amount) = subst_key(f, &prev)?;
                let guard = Cond::and([g, has_prev.clone()]);
                // a fact no next iteration inherits is not carried (a grid of one step)
                if !super::solve::check(&guard).is_unsat() {
                    let (src, dst) = (subst_view(&f.src, &prev), subst_view(&f.dst, &prev));
                    out.push(Fact { guard, sem, amount, age: f.age + 1, src, dst, ..f.clone() });
                }
            }
            Some(out)
        };
        // passes: the invariant (what is outstanding at the head of iteration i) is what iteration i − step left,
        // starting from nothing; a pass whose leftovers equal its invariant's source closes the induction. When
        // MAX_PASSES do not settle (a prefetch whose wait, with nothing inherited yet, takes this iteration's own
        // DMA: each pass then hands over one iteration more), the guess is what the first pass left, as started,
        // for GUESS_PASSES more. Any invariant that closes is one: the first iteration inherits nothing
        // (`has_prev`). A deep attempt has no guess: its passes hand over one iteration more each by design.
        let mut inv: Vec<Fact> = Vec::new();
        let mut result: Option<Attempt> = None;
        let mut closed_any = false;
        // where the previous pass's own variables and load versions begin (see `canonical`)
        let mut inv_floor = (e.next_var, e.next_version);
        // what the first pass left, as started, with its floor and link: the guess, made only if it is needed
        let mut first: Option<(Vec<Fact>, (u32, u32), Cond)> = None;
        // what the head holds of the previous iteration that left `inv` (see `Engine::assume`)
        let mut inv_link = Cond::True;
        // (a ring of d slots settles in about d + 2 passes)
        let passes = if deep { MAX_AGE as usize + 2 } else { MAX_PASSES + guess_passes() };
        let units_at_start = super::solve::left();
        for pass in 0..passes {
            // (a deep attempt that costs more than a few first attempts is no ring: the kernel keeps its budget)
            if deep && units_at_start.saturating_sub(super::solve::left()) > 4 * DEEP_UNITS {
                break;
            }
            if pass == MAX_PASSES && !deep {
                let Some(g) = first.take().and_then(|(left, floor, link)| Some((hand(&left)?, floor, link))) else {
                    break;
                };
                (inv, inv_floor, inv_link) = g;
            }
            let floor = (e.next_var, e.next_version);
            e.mem = head_mem.clone();
            e.facts = inv.clone();
            e.guard = body_guard.clone();
            let assume =
                Cond::and([outer_assume.clone(), Cond::or([Cond::negate(has_prev.clone()), inv_link.clone()])]);
            e.assume = assume.clone();
            let outer_log = std::mem::take(&mut e.log);
            let outer_scope = std::mem::replace(&mut e.scope_guard, e.guard.clone());
            e.needs.push(Vec::new());
            e.accesses.push(Vec::new());
            e.scope_ops.push(l.op);
            let problems_before = e.problems.len();
            let refills_before = e.refills.len();
            let unknown_before = e.unknown.clone();
            e.deep = deep;
            let yielded = body(e, &i, &heads);
            e.deep = outer_deep;
            e.assume = outer_assume.clone();
            e.scope_guard = outer_scope;
            let started = std::mem::replace(&mut e.log, outer_log);
            let needs = e.needs.pop().unwrap_or_default();
            let accesses = e.accesses.pop().unwrap_or_default();
            e.scope_ops.pop();
            let facts = std::mem::take(&mut e.facts);
            // which facts are this iteration's own (the invariant's come first and keep their op ids)
            let own: Vec<Fact> = facts.iter().filter(|f| f.age == 0).cloned().collect();
            e.refills(&started, &prev, &has_prev, l.op);
            let left_inv: Vec<Fact> = facts.iter().filter(|f| f.age > 0).cloned().collect();
            // what the previous iteration handed over: each carried value at this head is what it yielded (sizes
            // and slots computed from them then match between a prefetch and the next iteration's wait)
            let carried = heads.iter().zip(&yielded).filter_map(|(h, y)| match (h, y) {
                (Val::Int(h), Val::Int(y)) if h != y => Some(Cond::cmp(h.sub(&y.subst(&prev)?)?, Rel::Eq0)),
                _ => None,
            });
            // and each scalar the previous iteration stored last is what this head reads there (a buffer index in
            // SMEM that the prefetch flips and the next wait reads)
            let end_stores = stored_at_end(e, &head_version, &bufs);
            let stored = end_stores.iter().filter_map(|(b, idx, v)| {
                let buf = bufs.iter().position(|x| x == b)? as u32;
                let at: Vec<Lin> = idx.iter().map(|x| x.subst(&prev)).collect::<Option<_>>()?;
                let here = Lin::atom(Atom::Load { buf, idx: at, version: head_version[b] });
                Some(Cond::cmp(here.sub(&v.subst(&prev)?)?, Rel::Eq0))
            });
            let link = Cond::and(carried.chain(stored).collect::<Vec<_>>());
            // oldest first: a wait takes what was started earliest
            let next_inv = if deep {
                let older = left_inv.iter().filter(|f| !summed.contains(&f.op));
                hand(&older.chain(&own).cloned().collect::<Vec<_>>())
            } else {
                hand(&own)
            };
            if pass == 0 {
                // the DMAs this iteration leaves, as they were started (not as this pass's waits left them)
                let left: Vec<Fact> = started.into_iter().filter(|f| own.iter().any(|o| o.op == f.op)).collect();
                first = Some((left, floor, link.clone()));
            }
            // (a deep invariant holds names of several passes: all are renamed)
            let (now, before) = if deep { (loop_floor, loop_floor) } else { (floor, inv_floor) };
            let closed = match (
                next_inv.as_deref().and_then(|n| canonical(n, &link, now)),
                canonical(&inv, &inv_link, before),
            ) {
                (Some(a), Some(b)) => same_facts(&a.0, &b.0) && same_cond(&a.1, &b.1),
                _ => false,
            };
            if super::solve::trace() {
                trace_pass(&l.name, pass, closed, &inv, &left_inv, next_inv.as_deref().unwrap_or(&[]));
                eprintln!("  head versions {head_version:?}\n  link {link}\n  inv_link {inv_link}");
            }
            result = Some((yielded, needs, own, left_inv, end_stores, assume, accesses));
            if closed {
                closed_any = true;
                break;
            }
            // not yet: this pass's findings were made against another invariant
            e.problems.truncate(problems_before);
            e.refills.truncate(refills_before);
            e.unknown = unknown_before;
            let Some(next) = next_inv else { break };
            inv = next;
            inv_floor = floor;
            inv_link = link;
        }
        if deep && !closed_any {
            e.shallow.insert(l.name.clone());
            // a deep attempt that does not settle changes nothing: the first attempt's result stands
            if let Some((result, closed, inv, problems, unknown)) = first_attempt.take() {
                deep = false;
                e.problems.truncate(problems_at_entry);
                e.problems.extend(problems);
                e.unknown = unknown;
                break (result, closed, inv);
            }
        }
        // a deep attempt follows what the previous iteration left and the next one did not take (only for a loop
        // with no loop inside: each deep pass re-runs the inner inductions, and a DMA that outlives an iteration
        // across a search loop, as in jax's paged attention, is no ring; and only for a loop whose first attempt
        // was cheap: a deep one costs about MAX_AGE times more)
        let cheap = units_before.saturating_sub(super::solve::left()) <= DEEP_UNITS;
        if !deep && l.deep && closed_any && cheap && e.loops == loops_before && !e.shallow.contains(&l.name) {
            if let Some((yielded, needs, own, left_inv, _, assume, _)) = &result {
                let sums: Vec<OpId> = super::summary::accumulators(own, &inv, left_inv, &body_guard, &heads, yielded)
                    .iter()
                    .map(|s| s.op)
                    .collect();
                // (or a later iteration needs what only DMAs from before the loop may give: a ring whose first
                // blocks are started before it, whose first attempt lets a wait take its own later prefetch)
                let later = |n: &Need| {
                    let c = Cond::and([n.guard.clone(), not_first.clone(), Cond::cmp(n.amount.clone(), Rel::Ne0)]);
                    !super::solve::check(&c).is_unsat()
                };
                let outer_ring = needs
                    .iter()
                    .any(|n| outer_facts.iter().any(|f| super::account::may_alias(&f.sem, &n.sem)) && later(n));
                if !outliving(left_inv, assume, &sums).is_empty() || outer_ring {
                    deep = true;
                    e.deep_narrowed = false;
                    summed = sums;
                    let problems = e.problems.split_off(problems_at_entry);
                    let unknown = std::mem::replace(&mut e.unknown, unknown_at_entry.clone());
                    first_attempt = Some((result.clone(), closed_any, inv.clone(), problems, unknown));
                    shift = Shift::new(e, &l.name, &i, &prev_i, &heads, stored, &head_version, MAX_AGE);
                    continue;
                }
            }
        }
        break (result, closed_any, inv);
    };
    let Some((yielded, needs, mut own, left_inv, end_stores, assume, accesses)) = result else {
        return l.init.clone();
    };
    let settled = closed_any;
    if !settled {
        // what a pass that closed nothing compared is not known to hold of the loop (`race::refills`)
        e.refills.iter_mut().skip(refills_at_entry).for_each(|r| r.1 = None);
    }
    // DMAs the loop only accumulates (module doc): counted by the carried value that sums their sizes
    let sums = super::summary::accumulators(&own, &inv, &left_inv, &body_guard, &heads, &yielded);
    own.retain(|f| !sums.iter().any(|s| s.op == f.op));
    if !settled {
        e.giveup(
            own.first().map_or(OpId(0), |f| f.op),
            format!("the DMAs outstanding across iterations of {} do not settle", l.name),
        );
    }
    // what a deep invariant keeps is outstanding after the last iteration too, older first
    let mut left_after: Vec<Fact> = Vec::new();
    if deep {
        left_after = left_inv.iter().filter(|f| !summed.contains(&f.op)).cloned().collect();
    } else {
        // a first attempt: what outlives an iteration is not followed
        let sum_ops: Vec<OpId> = sums.iter().map(|s| s.op).collect();
        for op in outliving(&left_inv, &assume, &sum_ops) {
            let why = format!("a DMA started in one iteration of {} and still outstanding after the next", l.name);
            e.outlived.push((op, why));
        }
    }
    // needs no earlier fact of the loop covered: in the first iterations — the first one, or as many as a deep
    // invariant is deep (a ring whose first blocks were started before the loop) — what was outstanding before
    // the loop must cover them, iteration by iteration; later, nothing can
    e.facts = outer_facts;
    e.guard = outer_guard.clone();
    let end_mem = std::mem::replace(&mut e.mem, entry_mem.clone());
    let peel = if deep && settled { inv.iter().map(|f| f.age).max().unwrap_or(1).max(1) as i64 } else { 1 };
    let after_peel = match peel {
        1 => not_first,
        _ => l.lb.add(&Lin::int(peel * l.step)).and_then(|x| Cond::compare("sge", &i, &x)).unwrap_or(Cond::True),
    };
    for t in 0..peel {
        // the head of iteration lb + t·step: the loop's initial values at t = 0, unknown values after
        let it = l.lb.add(&Lin::int(t * l.step));
        let mut fresh: Vec<Option<Lin>> = Vec::new();
        let mut versions: HashMap<u32, u32> = HashMap::new();
        if t > 0 {
            for (k, h) in heads.iter().enumerate() {
                fresh.push(
                    head_var(h).map(|_| e.fresh_carried(format!("{}: carried value {k} at iteration {t}", l.name))),
                );
            }
            for b in stored {
                if let Some(&v) = head_version.get(b) {
                    versions.insert(v, e.fresh_version());
                }
            }
        }
        let at = |a: &Atom| -> Option<Lin> {
            match a {
                Atom::Var(v) if Some(v.id) == iv => it.clone(),
                Atom::Var(v) => {
                    let k = head_vars.iter().position(|h| *h == Some(v.id))?;
                    match t {
                        0 => l.init.get(k).and_then(as_lin),
                        _ => fresh.get(k).cloned().flatten(),
                    }
                }
                Atom::Load { buf, idx, version } => {
                    let b = *bufs.get(*buf as usize)?;
                    if head_version.get(&b) != Some(version) {
                        return None;
                    }
                    match t {
                        0 => read(&entry_mem, &bufs, b, idx),
                        _ => Some(Lin::atom(Atom::Load { buf: *buf, idx: idx.clone(), version: versions[version] })),
                    }
                }
                _ => None,
            }
        };
        for (j, n) in needs.iter().enumerate() {
            // the accesses before this wait, in the first iterations' terms
            for (_, a) in accesses.iter().filter(|(p, _)| *p == j) {
                e.enter_access(a, &at, &Cond::True, false);
            }
            match subst_need(n, &at) {
                Some(n) => {
                    if let Some(left) = e.consume(n) {
                        match e.needs.get_mut(outer_needs.wrapping_sub(1)) {
                            Some(scope) if outer_needs > 0 => scope.push(left),
                            _ => e.report_need(left),
                        }
                    }
                }
                None => e.giveup(n.op, "a wait in a loop whose terms the induction cannot start from the loop's entry"),
            }
        }
        for (_, a) in accesses.iter().filter(|(p, _)| *p >= needs.len()) {
            e.enter_access(a, &at, &Cond::True, false);
        }
    }
    // later iterations' accesses meet what the first ones left of the DMAs from before the loop
    for (_, a) in accesses.iter().filter(|(_, a)| a.general) {
        e.enter_access(a, &|_| None, &after_peel, true);
    }
    // later needs are failures (when the invariant did not settle they are not: the kernel is already
    // inconclusive) — possible ones only where a DMA from before the loop on that slot is still outstanding: a
    // later iteration may take it, which the induction does not follow
    if settled {
        for n in &needs {
            let before = e.problems.len();
            e.report_need(Need { guard: Cond::and([n.guard.clone(), after_peel.clone()]), ..n.clone() });
            if e.facts.iter().any(|f| super::account::may_alias(&f.sem, &n.sem)) {
                e.problems.iter_mut().skip(before).for_each(|p| p.exact = false);
            }
        }
    }
    // a deep invariant proves, it does not blame yet: what it leaves uncovered is possible, not proven (its waits
    // skip their own iteration's DMAs for other blocks, which a semaphore would not)
    if deep && e.deep_narrowed {
        e.problems.iter_mut().skip(problems_at_entry).for_each(|p| p.exact = false);
        e.deep_used = true;
    }

    // exit: the last iteration's leftovers, its carried values unknown (unless the loop never changes them)
    let last = if l.step == 1 {
        l.ub.sub(&Lin::int(1))
    } else {
        l.ub.sub(&l.lb)
            .and_then(|d| d.sub(&Lin::int(1)))
            .and_then(|d| d.div(l.step, true))
            .and_then(|q| q.scale(l.step))
            .and_then(|q| q.add(&l.lb))
    };
    let runs = Cond::compare("slt", &l.lb, &l.ub).unwrap_or(Cond::False);
    let at_last: Vec<Option<Lin>> = heads
        .iter()
        .enumerate()
        .map(|(k, h)| match (h, yielded.get(k)) {
            (Val::Int(_) | Val::Bool(_), Some(y)) if y == h => l.init.get(k).and_then(as_lin),
            (Val::Int(_) | Val::Bool(_), _) => {
                Some(e.fresh_carried(format!("{}: carried value {k} at the last iteration", l.name)))
            }
            _ => None,
        })
        .collect();
    let mut last_versions: HashMap<Base, u32> = HashMap::new();
    for &b in stored {
        last_versions.insert(b, e.fresh_version());
    }
    let exit = |a: &Atom| -> Option<Lin> {
        match a {
            Atom::Var(v) if Some(v.id) == iv => last.clone(),
            Atom::Var(v) => {
                let k = head_vars.iter().position(|h| *h == Some(v.id))?;
                at_last.get(k).cloned().flatten()
            }
            Atom::Load { buf, idx, version } => {
                let b = *bufs.get(*buf as usize)?;
                (head_version.get(&b) == Some(version))
                    .then(|| Lin::atom(Atom::Load { buf: *buf, idx: idx.clone(), version: last_versions[&b] }))
            }
            _ => None,
        }
    };
    for f in left_after.into_iter().chain(own) {
        match f.guard.subst(&exit).zip(subst_key(&f, &exit)) {
            Some((g, (sem, amount))) => {
                let mut at: Vec<(String, Lin)> =
                    f.at.iter().filter_map(|(n, x)| Some((n.clone(), x.subst(&exit)?))).collect();
                // (started `age` iterations before the last)
                if let Some(x) = last.as_ref().and_then(|x| x.sub(&Lin::int(l.step * f.age as i64))) {
                    at.push((l.name.clone(), x));
                }
                e.push_fact(Fact { guard: Cond::and([g, runs.clone()]), sem, amount, at, age: 0, ..f });
            }
            None => e.giveup(f.op, "a DMA left by a loop whose terms the engine cannot carry past the loop"),
        }
    }
    e.prune();
    // after the loop: the buffers it writes hold unknown values, its results are unknown unless unchanged —
    // except the places of a buffer the loop never stores to, when it stores only at places it names (SMEM
    // scratch: a slot id the loop flips beside one it never touches keeps its value, which the next grid step
    // reads)
    // (and every place it stores is written back below: a place of a buffer no wait reads is not in `end_stores`,
    // and would read its pre-loop value)
    let only_named = |b: &Base| {
        end_mem.version.get(b) == head_version.get(b)
            && end_mem.stores.iter().filter(|s| s.0 == *b).all(|s| {
                s.1.iter().all(|x| x.as_int().is_some()) && end_stores.iter().any(|t| t.0 == s.0 && t.1 == s.1)
            })
    };
    let kept: Vec<Base> = stored.iter().copied().filter(only_named).collect();
    e.mem = end_mem;
    e.mem.stores.retain(|(b, _, _)| !stored.contains(b));
    for &b in stored {
        if kept.contains(&b) {
            // what was there before the loop, at every place (the stores below replace the loop's places)
            e.mem.stores.extend(entry_mem.stores.iter().filter(|s| s.0 == b).cloned());
            match entry_mem.version.get(&b) {
                Some(&v) => e.mem.version.insert(b, v),
                None => e.mem.version.remove(&b),
            };
        } else {
            e.bump(b);
        }
    }
    // what the last iteration stored is there after the loop (where it ran; else what was there before it); a
    // kept buffer one of whose places cannot be written back is forgotten after all
    let mut lost: Vec<Base> = Vec::new();
    for (b, idx, v) in &end_stores {
        let Some(at) = idx.iter().map(|x| x.subst(&exit)).collect::<Option<Vec<Lin>>>() else {
            lost.push(*b);
            continue;
        };
        let (Some(v), Some(before)) = (v.subst(&exit), read(&entry_mem, &bufs, *b, &at)) else {
            lost.push(*b);
            continue;
        };
        let val = merge(&runs, &Val::Int(v), &Val::Int(before));
        e.mem.stores.retain(|(x, i, _)| !(x == b && *i == at));
        e.mem.stores.push((*b, at, val));
    }
    for b in lost.into_iter().filter(|b| kept.contains(b)) {
        e.bump(b);
    }
    let results: Vec<Val> = heads
        .iter()
        .enumerate()
        .map(|(k, h)| match yielded.get(k) {
            Some(y) if y == h => l.init[k].clone(),
            _ => match h {
                Val::Int(_) | Val::Bool(_) => {
                    // what a loop computes is not an input: a witness that picks it freely is not exact
                    let v = e.fresh_carried(format!("{}: result {k}", l.name));
                    if matches!(h, Val::Bool(_)) {
                        Val::Bool(Cond::cmp(v, Rel::Ne0))
                    } else {
                        Val::Int(v)
                    }
                }
                v => v.clone(),
            },
        })
        .collect();
    // what the accumulating DMAs add up to: their factor times what the carried sum grew by
    for s in sums {
        let total = results.get(s.carried).and_then(as_lin).zip(l.init.get(s.carried).and_then(as_lin));
        match total.and_then(|(r, i)| r.sub(&i)?.scale(s.factor)) {
            Some(amount) => e.add_fact(Fact { guard: e.guard.clone(), amount, at: Vec::new(), age: 0, ..s.fact }, true),
            None => e.giveup(s.op, "a DMA summed by a loop whose total the engine cannot write"),
        }
    }
    results
}

/// Of what an iteration inherited and did not take (`left`), the DMAs some state allowed by `assume` leaves
/// outstanding after it, apart from those the loop only sums.
fn outliving(left: &[Fact], assume: &Cond, sums: &[OpId]) -> Vec<OpId> {
    left.iter()
        .filter(|f| !sums.contains(&f.op))
        .filter(|f| !super::solve::check(&Cond::and([f.guard.clone(), assume.clone()])).is_unsat())
        .map(|f| f.op)
        .collect()
}

/// The scalars of the loop's stored buffers that memory knows at the end of an iteration: (buffer, index, value):
/// the stores the iteration made after its last write to an unknown index. Other indices are not linked (the next
/// head reads them as unknown), and neither are buffers no DMA's terms read (`Engine::relevant`: they would only
/// grow every later question).
fn stored_at_end(e: &Engine<'_, '_>, head_version: &HashMap<Base, u32>, bufs: &[Base]) -> Vec<(Base, Vec<Lin>, Lin)> {
    let relevant = |b: &Base| bufs.iter().position(|x| x == b).is_some_and(|k| e.relevant.contains(&(k as u32)));
    e.mem
        .stores
        .iter()
        .filter(|(b, _, _)| head_version.contains_key(b) && relevant(b))
        .filter_map(|(b, idx, v)| Some((*b, idx.clone(), as_lin(v)?)))
        .collect()
}

/// One induction pass under `HLOLINT_DMA_TRACE`: what it started from, what it left of that, what it hands on.
fn trace_pass(name: &str, pass: usize, closed: bool, inv: &[Fact], left: &[Fact], next: &[Fact]) {
    let show = |fs: &[Fact]| -> String {
        fs.iter()
            .map(|f| {
                let slot: Vec<String> = f.sem.offs.iter().map(|o| o.to_string()).collect();
                format!("\n    op {} on {:?} {slot:?} amount {} when {}", f.op.0, f.sem.base, f.amount, f.guard)
            })
            .collect()
    };
    eprintln!(
        "dma-pass {name} pass {pass} closed={closed}\n  inv:{}\n  left:{}\n  next:{}",
        show(inv),
        show(left),
        show(next)
    );
}

/// `facts` with the variables and load versions a pass made itself (from `floor` on) renamed by order of first
/// appearance. Each pass re-runs the body with fresh names for what it computes (an inner loop's results, its
/// stores' versions); two passes whose leftovers differ only in those names leave the same outstanding DMAs,
/// for some values of what the iteration computed — the invariant holds up to that renaming.
fn canonical(facts: &[Fact], link: &Cond, floor: (u32, u32)) -> Option<(Vec<Fact>, Cond)> {
    const LOCAL: u32 = u32::MAX / 2;
    let mut atoms = Vec::new();
    for f in facts {
        f.guard.atoms(&mut atoms);
        f.sem.offs.iter().for_each(|o| o.atoms(&mut atoms));
        f.amount.atoms(&mut atoms);
    }
    link.atoms(&mut atoms);
    let (mut ids, mut versions) = (Vec::new(), Vec::new());
    for a in &atoms {
        match &**a {
            Atom::Var(v) if v.id >= floor.0 && !ids.contains(&v.id) => ids.push(v.id),
            Atom::Load { version, .. } if *version >= floor.1 && !versions.contains(version) => versions.push(*version),
            _ => {}
        }
    }
    // ranked in the order the pass made them (which is the order it ran its ops), not the order the atoms are met:
    // that follows the terms' sorting, and so their hashes, which differ between two passes by the very names
    // being renamed
    ids.sort_unstable();
    versions.sort_unstable();
    let rank = |list: &[u32], x: u32| list.iter().position(|y| *y == x).map(|k| LOCAL + k as u32);
    let rename = |a: &Atom| -> Option<Lin> {
        match a {
            Atom::Var(v) => rank(&ids, v.id).map(|id| Lin::var(super::term::Var { id, name: v.name.clone() })),
            Atom::Load { buf, idx, version } => {
                rank(&versions, *version).map(|version| Lin::atom(Atom::Load { buf: *buf, idx: idx.clone(), version }))
            }
            _ => None,
        }
    };
    let facts = facts
        .iter()
        .map(|f| {
            let (sem, amount) = subst_key(f, &rename)?;
            Some(Fact { guard: f.guard.subst(&rename)?, sem, amount, ..f.clone() })
        })
        .collect::<Option<Vec<Fact>>>()?;
    Some((facts, link.subst(&rename)?))
}

/// Two conditions that say the same (syntactically, or decided equivalent).
fn same_cond(a: &Cond, b: &Cond) -> bool {
    a == b || super::solve::equivalent(a, b) == Some(true)
}

/// Two fact lists that say the same: the same ops, slots, amounts and guards, in order.
fn same_facts(a: &[Fact], b: &[Fact]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x.op == y.op && x.sem == y.sem && x.amount == y.amount && same_cond(&x.guard, &y.guard))
}

/// A carried value at the head of an iteration: a variable (not an input).
fn head(e: &mut Engine<'_, '_>, name: &str, k: usize, init: &Val) -> Val {
    match init {
        Val::Int(_) | Val::Bool(_) => {
            let v = e.fresh_carried(format!("{name}: carried value {k}"));
            if matches!(init, Val::Bool(_)) {
                Val::Bool(Cond::cmp(v, Rel::Ne0))
            } else {
                Val::Int(v)
            }
        }
        // buffer views are taken as the same in every iteration (a rotating view is not followed)
        v => v.clone(),
    }
}

pub(super) fn head_var(v: &Val) -> Option<u32> {
    match v {
        Val::Int(l) => var_id(&Some(l.clone())),
        Val::Bool(Cond::Cmp(l, Rel::Ne0)) => var_id(&Some(l.clone())),
        _ => None,
    }
}

pub(super) fn var_id(l: &Option<Lin>) -> Option<u32> {
    match l.as_ref()?.single_atom()? {
        Atom::Var(v) => Some(v.id),
        _ => None,
    }
}

/// A scalar of buffer `b` at `idx` in memory state `mem`.
fn read(mem: &super::exec::Mem, bufs: &[Base], b: Base, idx: &[Lin]) -> Option<Lin> {
    if let Some((_, _, v)) = mem.stores.iter().rev().find(|(x, i, _)| *x == b && i.as_slice() == idx) {
        return as_lin(v);
    }
    let buf = bufs.iter().position(|x| *x == b)? as u32;
    Some(Lin::atom(Atom::Load { buf, idx: idx.to_vec(), version: mem.version.get(&b).copied().unwrap_or(0) }))
}

fn subst_need(n: &Need, f: &dyn Fn(&Atom) -> Option<Lin>) -> Option<Need> {
    Some(Need {
        guard: n.guard.subst(f)?,
        sem: super::exec::SemKey {
            base: n.sem.base,
            offs: n.sem.offs.iter().map(|o| o.subst(f)).collect::<Option<_>>()?,
        },
        amount: n.amount.subst(f)?,
        op: n.op,
        total: n.total.subst(f)?,
        assume: n.assume.subst(f)?,
        dst: subst_view(&n.dst, f),
        src: subst_view(&n.src, f),
    })
}

/// A descriptor's view in other terms (unknown where a term is not expressible there).
fn subst_view(v: &Option<super::exec::View>, f: &dyn Fn(&Atom) -> Option<Lin>) -> Option<super::exec::View> {
    let v = v.as_ref()?;
    Some(super::exec::View {
        offs: v.offs.iter().map(|o| o.subst(f)).collect::<Option<_>>()?,
        ext: v.ext.iter().map(|o| o.subst(f)).collect::<Option<_>>()?,
        ..v.clone()
    })
}

fn subst_key(fact: &Fact, f: &dyn Fn(&Atom) -> Option<Lin>) -> Option<(super::exec::SemKey, Lin)> {
    Some((
        super::exec::SemKey {
            base: fact.sem.base,
            offs: fact.sem.offs.iter().map(|o| o.subst(f)).collect::<Option<_>>()?,
        },
        fact.amount.subst(f)?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::dma::term::test_var as var;

    /// `x − 2·y ≥ 0 ∧ y ≥ 0` over two variables a pass made, `x` first.
    fn link(x: u32, y: u32) -> Cond {
        let (x, y) = (var(x, "x"), var(y, "y"));
        let d = x.sub(&y.scale(2).unwrap()).unwrap();
        Cond::and([Cond::cmp(d, Rel::Ge0), Cond::cmp(y, Rel::Ge0)])
    }

    /// Two passes that made the same values in the same order have the same canonical form, whatever order the
    /// terms' sorting (by hash) puts their atoms in: the names are ranked by when the pass made them. (Ranked by
    /// first appearance, jax-style ragged kernels' grid inductions never closed: tpu-inference's RPA v3.)
    #[test]
    fn canonical_names_follow_the_order_a_pass_made_them() {
        let (_, before) = canonical(&[], &link(1_000, 1_001), (1_000, 0)).unwrap();
        for k in 0..64 {
            let (x, y) = (2_000 + 2 * k, 2_001 + 2 * k);
            let (_, now) = canonical(&[], &link(x, y), (2_000, 0)).unwrap();
            assert_eq!(now, before, "variables {x}, {y}");
        }
    }
}
