//! Loops that only start DMAs, or only wait for them, as one DMA or one wait of their iterations' sum.
//!
//! Paged kernels copy a block page by page in a loop (`for p in range(n): copy(page[p]).start()`) and wait for
//! it with a second loop of the same shape (`for p in range(n): copy(page[p]).wait()`). The induction
//! ([`super::induct::induct`]) follows DMAs outstanding for one iteration; here every iteration's DMA is still
//! outstanding when the loop ends, and the matching waits are spread over another loop. A semaphore only counts
//! bytes, so such a loop is, to it, one DMA (or one wait) of `Σ_{i ∈ [lb, ub)} a(i)`, with `a(i)` what iteration
//! `i` starts (waits for) on that semaphore slot.
//!
//! The sum is kept as a term: an uninterpreted function of the loop's bounds and of what `a(i)` reads besides
//! `i`, named by the shape of `a` (`Σ[min($, $ + -8·#i)]`). Two loops that compute their sizes the same way from
//! equal values have equal sums — the solver's congruence, the same as for any uninterpreted op — so the prefetch
//! loop of one iteration and the wait loop of the next balance when their bounds and inputs are equal, whatever
//! the trip count. A loop of no iterations sums to zero (its definition in [`super::solve`]).
//!
//! Only loops that carry no values and store nothing qualify: each iteration's `a(i)` is then a function of `i`
//! and of what holds before the loop.
//!
//! A loop that does carry a value may sum its DMAs in it (`zero_size += dma_size`, the DMAs waited after the loop
//! by that total): [`accumulators`] finds them during the induction, which then counts them by the carried value's
//! growth instead of following each across iterations.

use super::exec::{as_lin, key, Engine, Fact, Val};
use super::term::{Atom, Cond, Lin, Rel, Sym};
use crate::ir::*;
use crate::semantic::op::{is_dma_start, is_dma_wait, is_semaphore_signal, is_semaphore_wait, op_name};

/// The name prefix of a sum's function (the solver gives it its definition).
pub const SUM: char = 'Σ';

/// What a loop body does to semaphores, found from its ops (nested regions included).
#[derive(PartialEq)]
enum Kind {
    Starts,
    Waits,
    Other,
}

fn kind(m: &Module<'_>, body: BlockId) -> Kind {
    let (mut starts, mut waits) = (false, false);
    let mut stack: Vec<OpId> = m.blocks[body.idx()].ops.clone();
    while let Some(o) = stack.pop() {
        let op = m.op(o);
        let oc = op.opcode;
        if matches!(op_name(oc), "for" | "while") || is_semaphore_signal(oc) {
            return Kind::Other;
        }
        starts |= is_dma_start(oc);
        waits |= is_dma_wait(oc) || is_semaphore_wait(oc);
        for r in op.regions.iter() {
            for b in &m.regions[r.idx()].blocks {
                stack.extend(m.blocks[b.idx()].ops.iter().copied());
            }
        }
    }
    match (starts, waits) {
        (true, false) => Kind::Starts,
        (false, true) => Kind::Waits,
        _ => Kind::Other,
    }
}

/// Runs `scf.for` `id` as one sum when it qualifies (module doc); `false` when it does not and nothing was done.
pub fn for_loop(e: &mut Engine<'_, '_>, id: OpId, body: BlockId, lb: &Lin, ub: &Lin, step: i64) -> bool {
    let m = e.m;
    let op = m.op(id);
    let k = kind(m, body);
    if k == Kind::Other || op.result_count != 0 || !super::control::stored_in(e, id).is_empty() {
        return false;
    }
    let i = e.fresh(format!("{}: index", super::control::line(e, id)));
    let Some(Atom::Var(iv)) = i.single_atom().cloned() else { return false };
    e.first_value.insert(iv.id, lb.clone());
    let outer = e.guard.clone();
    let body_guard = Cond::and([outer.clone(), super::induct::in_range(&i, lb, ub, step)]);
    let facts = std::mem::take(&mut e.facts);
    let log_len = e.log.len();
    let scope = std::mem::replace(&mut e.scope_guard, body_guard.clone());
    e.guard = body_guard.clone();
    e.needs.push(Vec::new());
    e.accesses.push(Vec::new());
    e.scope_ops.push(Some(id));
    e.env.insert(key(Def::BlockArg { block: body, index: 0 }), super::exec::Val::Int(i.clone()));
    e.block(body);
    let needs = e.needs.pop().unwrap_or_default();
    let accesses = e.accesses.pop().unwrap_or_default();
    e.scope_ops.pop();
    let own = std::mem::replace(&mut e.facts, facts);
    // what the iterations copy must not overlap what another iteration copies, nor what was in flight before
    e.copies_overlap(&own, &iv, lb, ub, step);
    for (_, a) in &accesses {
        e.enter_access(a, &|_| None, &Cond::True, true);
    }
    e.log.truncate(log_len);
    e.scope_guard = scope;
    e.guard = outer.clone();
    // what each iteration starts (or waits for), per op: its slot, its own condition in the body, its bytes
    let parts: Vec<(OpId, super::exec::SemKey, Cond, Lin)> = match k {
        Kind::Starts => own
            .iter()
            .map(|f| (f.op, f.sem.clone(), inner(&f.guard, &body_guard, &f.amount), f.amount.clone()))
            .collect(),
        _ => needs
            .iter()
            .map(|n| (n.op, n.sem.clone(), inner(&n.guard, &body_guard, &n.total), n.total.clone()))
            .collect(),
    };
    let Some(sums) = group(&parts, iv.id, lb, ub, step) else {
        let what = if k == Kind::Starts { "DMAs" } else { "waits" };
        e.giveup(id, format!("a loop of {what} whose semaphore slot depends on its index"));
        return true;
    };
    for (op, sem, amount) in sums {
        if k == Kind::Starts {
            let guard = Cond::and([outer.clone(), Cond::cmp(amount.clone(), Rel::Ne0)]);
            // (which region of the buffer each iteration copies is lost in the sum)
            let whole = |v: &Option<super::exec::View>| v.clone().map(|v| super::exec::View { map: None, ..v });
            let (dst, src) =
                own.iter().find(|f| f.op == op).map(|f| (whole(&f.dst), whole(&f.src))).unwrap_or_default();
            let f = Fact {
                guard,
                sem,
                amount,
                op,
                signal: false,
                at: Vec::new(),
                age: 0,
                dst,
                src,
                busy: false,
                last: None,
            };
            e.add_fact(f, false);
        } else {
            e.wait_for(op, sem, amount, (None, None));
        }
    }
    true
}

/// `c` without what the loop body's guard already says and without `amount ≠ 0` (both hold wherever the sum
/// counts the term): what the start or wait itself is conditional on inside the body.
fn inner(c: &Cond, body: &Cond, amount: &Lin) -> Cond {
    let nonzero = Cond::cmp(amount.clone(), Rel::Ne0);
    let outer: Vec<&Cond> = match body {
        Cond::And(xs) => xs.iter().collect(),
        x => vec![x],
    };
    match c {
        Cond::And(xs) => Cond::and(xs.iter().filter(|x| **x != nonzero && !outer.contains(x)).cloned()),
        x if *x == nonzero || outer.contains(&x) => Cond::True,
        x => x.clone(),
    }
}

/// Per semaphore slot (one that does not depend on the index), the sum over the loop of what each iteration
/// starts or waits for there; `None` when a slot depends on the index.
fn group(
    parts: &[(OpId, super::exec::SemKey, Cond, Lin)],
    i: u32,
    lb: &Lin,
    ub: &Lin,
    step: i64,
) -> Option<Vec<(OpId, super::exec::SemKey, Lin)>> {
    let mut out: Vec<(OpId, super::exec::SemKey, Vec<Lin>)> = Vec::new();
    for (op, sem, c, amount) in parts {
        if sem.offs.iter().any(|o| mentions_lin(o, i)) {
            return None;
        }
        let term = Lin::select(c, amount, &Lin::int(0));
        match out.iter_mut().find(|(_, s, _)| super::account::same_key(s, sem)) {
            Some((_, _, terms)) => terms.push(term),
            None => out.push((*op, sem.clone(), vec![term])),
        }
    }
    out.into_iter()
        .map(|(op, sem, terms)| {
            let per = terms.iter().try_fold(Lin::int(0), |acc, t| acc.add(t))?;
            Some((op, sem, sum(&per, i, lb, ub, step)))
        })
        .collect()
}

/// `Σ_{i ∈ [lb, ub) by step} per(i)` as an uninterpreted function: named by the shape of `per` (what depends on
/// `i`, with every part that does not written `$`), applied to `lb`, `ub` and those parts in order.
pub fn sum(per: &Lin, i: u32, lb: &Lin, ub: &Lin, step: i64) -> Lin {
    if per.as_int() == Some(0) {
        return Lin::int(0);
    }
    let mut args = vec![lb.clone(), ub.clone()];
    let shape = shape_lin(per, i, &mut args);
    Lin::atom(Atom::App(format!("{SUM}{step}[{shape}]").into(), args))
}

fn mentions(a: &Sym, i: u32) -> bool {
    let mut out = Vec::new();
    Lin::atom((**a).clone()).atoms(&mut out);
    out.iter().any(|x| matches!(&**x, Atom::Var(v) if v.id == i))
}

fn mentions_lin(l: &Lin, i: u32) -> bool {
    l.terms.keys().any(|a| mentions(a, i))
}

/// The shape of `l` (see [`sum`]), its `$` parts appended to `ps` in the order they appear. Parts that depend on
/// the index are ordered by their shape, not by how terms happen to be ordered, so two loops written alike give
/// the same name.
fn shape_lin(l: &Lin, i: u32, ps: &mut Vec<Lin>) -> String {
    let mut free = Lin::int(l.c);
    let mut dep: Vec<(String, Vec<Lin>)> = Vec::new();
    for (a, k) in &l.terms {
        if mentions(a, i) {
            let mut own = Vec::new();
            let s = format!("{k}·{}", shape_atom(a, i, &mut own));
            dep.push((s, own));
        } else {
            free.terms.insert(a.clone(), *k);
        }
    }
    dep.sort_by(|a, b| a.0.cmp(&b.0));
    ps.push(free);
    let mut s = String::from("$");
    for (d, own) in dep {
        s.push_str(" + ");
        s.push_str(&d);
        ps.extend(own);
    }
    s
}

fn shape_atom(a: &Sym, i: u32, ps: &mut Vec<Lin>) -> String {
    let lin = |x: &Lin, ps: &mut Vec<Lin>| shape_lin(x, i, ps);
    match &**a {
        Atom::Var(v) if v.id == i => "#i".into(),
        Atom::Var(v) => format!("v{}", v.id),
        Atom::Load { buf, idx, version } => {
            let idx: Vec<String> = idx.iter().map(|x| lin(x, ps)).collect();
            format!("b{buf}.{version}[{}]", idx.join(", "))
        }
        Atom::Div { x, d, floor } => format!("div{}({}, {d})", if *floor { "f" } else { "t" }, lin(x, ps)),
        Atom::Rem { x, d } => format!("rem({}, {d})", lin(x, ps)),
        Atom::Min(x, y) => two("min", x, y, i, ps),
        Atom::Max(x, y) => two("max", x, y, i, ps),
        Atom::Select(c, x, y) => {
            let c = shape_cond(c, i, ps);
            let (x, y) = (lin(x, ps), lin(y, ps));
            format!("sel({c}, {x}, {y})")
        }
        Atom::Mul(x, y) => {
            let (x, y) = (lin(x, ps), lin(y, ps));
            format!("mul({x}, {y})")
        }
        Atom::App(n, xs) => {
            let xs: Vec<String> = xs.iter().map(|x| lin(x, ps)).collect();
            format!("{n}({})", xs.join(", "))
        }
    }
}

/// `min`/`max` of two forms, the two ordered by shape (they commute).
fn two(name: &str, x: &Lin, y: &Lin, i: u32, ps: &mut Vec<Lin>) -> String {
    let (mut px, mut py) = (Vec::new(), Vec::new());
    let (sx, sy) = (shape_lin(x, i, &mut px), shape_lin(y, i, &mut py));
    let ((s1, p1), (s2, p2)) = if sx <= sy { ((sx, px), (sy, py)) } else { ((sy, py), (sx, px)) };
    ps.extend(p1);
    ps.extend(p2);
    format!("{name}({s1}, {s2})")
}

fn shape_cond(c: &Cond, i: u32, ps: &mut Vec<Lin>) -> String {
    match c {
        Cond::True => "T".into(),
        Cond::False => "F".into(),
        Cond::Cmp(x, r) => format!("{} {r:?}", shape_lin(x, i, ps)),
        Cond::Not(x) => format!("!({})", shape_cond(x, i, ps)),
        Cond::And(xs) | Cond::Or(xs) => {
            let mut parts: Vec<(String, Vec<Lin>)> = xs
                .iter()
                .map(|x| {
                    let mut own = Vec::new();
                    (shape_cond(x, i, &mut own), own)
                })
                .collect();
            parts.sort_by(|a, b| a.0.cmp(&b.0));
            let sep = if matches!(c, Cond::And(_)) { " & " } else { " | " };
            let mut s = Vec::new();
            for (p, own) in parts {
                s.push(p);
                ps.extend(own);
            }
            format!("({})", s.join(sep))
        }
    }
}

/// DMAs a loop starts every iteration and never waits inside it, each sized `factor × (y − h)` where `y − h` is
/// what one iteration adds to a carried value (`zero_size + dma_size`): the loop leaves `factor × (result −
/// init)` outstanding on their slot, for every trip count — the sum telescopes.
pub(super) struct Sum {
    pub op: OpId,
    pub carried: usize,
    pub factor: i64,
    pub fact: Fact,
}

pub(super) fn accumulators(
    own: &[Fact],
    inv: &[Fact],
    left: &[Fact],
    body: &Cond,
    heads: &[Val],
    yielded: &[Val],
) -> Vec<Sum> {
    let mut out = Vec::new();
    for f in own.iter().filter(|f| !f.signal) {
        // started under the body's own condition only (so every iteration that adds to the sum starts it)
        if f.guard != Cond::and([body.clone(), Cond::cmp(f.amount.clone(), Rel::Ne0)]) {
            continue;
        }
        // and the next iteration took none of it: the copy it inherited is left as it came (no copy: no
        // iteration follows one that starts it, as in a loop of one trip)
        if let Some(came) = inv.iter().find(|g| g.op == f.op) {
            if !left.iter().any(|g| g.op == f.op && g.guard == came.guard && g.amount == came.amount) {
                continue;
            }
        }
        let found = heads.iter().zip(yielded).enumerate().find_map(|(k, (h, y))| {
            let d = as_lin(y)?.sub(&as_lin(h)?)?;
            Some((k, ratio(&f.amount, &d)?))
        });
        if let Some((carried, factor)) = found {
            out.push(Sum { op: f.op, carried, factor, fact: f.clone() });
        }
    }
    out
}

/// `k` with `a = k·d`, when there is one.
fn ratio(a: &Lin, d: &Lin) -> Option<i64> {
    let (t, &c) = d.terms.iter().next()?;
    let ca = *a.terms.get(t)?;
    if ca % c != 0 {
        return None;
    }
    let k = ca / c;
    (d.scale(k)? == *a).then_some(k)
}
