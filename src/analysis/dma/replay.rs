//! Replaying a kernel on concrete inputs: the check that turns a possible failure into a proven one.
//!
//! The symbolic engine's witness of a failure it could not prove (something it could not decide happens before
//! it, or the failure needs values it lost track of) names the inputs that reach it. A replay runs the kernel on
//! exactly those inputs: the scalar-prefetch tables and scalar arguments are numbers (the witness's values, the
//! host's constants, zero elsewhere), so every index, slot, size, trip count and branch condition is a number
//! too, and loops and the grid are run iteration by iteration instead of by induction. What the replay finds
//! is what the hardware's semaphores do on that input: a failure it shows is proven, with the input as its
//! witness. A replay that meets a value it cannot compute (data read from vector memory, a dynamic grid the
//! witness does not size) or runs too long proves nothing, and the finding stays possible.

use super::assume::{self, Bound, Slot};
use super::exec::{Base, Engine, Problem, Val};
use super::induct::Loop;
use super::solve;
use super::term::{Atom, Cond, Lin, Rel};
use super::{seed::Seed, solve::Model, Outcome};
use crate::ir::*;
use crate::semantic::kernel;
use std::collections::{BTreeMap, BTreeSet};

/// Iterations a replay runs at most, over all loops and grid steps (a witness's inputs are small: its tables
/// hold the few values the failure needs and zeros elsewhere).
const MAX_ITERATIONS: u64 = 20_000;
/// Ops a replay evaluates at most.
pub const MAX_STEPS: u64 = 400_000;
/// Witnesses replayed per kernel at most.
const MAX_REPLAYS: usize = 3;

/// A witness that names no input: the tables as zero-filled.
const ZERO: &str = "every scalar-prefetch table zero";

/// Concrete inputs for a replay: table elements and scalar arguments by kernel argument, grid sizes the witness
/// fixes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Inputs {
    pub tables: Seed,
    pub scalars: BTreeMap<usize, i64>,
    pub grid: BTreeMap<usize, i64>,
    /// The witness as the author reads it: the table elements, scalars and grid sizes it names.
    pub shown: String,
    /// The values the witness or the host fixes (the others are free for [`complete`] to choose).
    pub fixed: BTreeSet<Slot>,
}

/// Runs one loop (or grid dimension) of a replay iteration by iteration; returns the carried values after it.
pub fn run_loop<'m, 'a>(e: &mut Engine<'m, 'a>, l: Loop, body: &mut super::induct::Body<'_, 'm, 'a>) -> Vec<Val> {
    let (Some(lb), Some(ub)) = (l.lb.as_int(), l.ub.as_int()) else {
        e.giveup(OpId(0), format!("replay: {} has bounds that are not numbers", l.name));
        return l.init;
    };
    let mut heads = l.init;
    let mut i = lb;
    // (the index of the last iteration of this run: a DMA started there and left is a prefetch of what is not)
    let last = (l.step > 0 && ub > lb).then(|| lb + (ub - 1 - lb) / l.step * l.step);
    while i < ub {
        if !next_iteration(e, OpId(0)) {
            return heads;
        }
        e.replay_at.push((l.name.clone(), i, last));
        heads = body(e, &Lin::int(i), &heads);
        e.replay_at.pop();
        i = match i.checked_add(l.step) {
            Some(n) => n,
            None => break,
        };
    }
    heads
}

/// Counts one more iteration of a replay; `false` (and the replay proves nothing) past `MAX_ITERATIONS`, or once
/// something undecided already stopped it.
pub fn next_iteration(e: &mut Engine<'_, '_>, op: OpId) -> bool {
    e.iterations += 1;
    if e.iterations > MAX_ITERATIONS {
        e.giveup(op, "replay: too many iterations");
    }
    e.unknown.is_none()
}

/// Further witnesses asked for an open failure, each with one of its first witness's input entries changed;
/// replayed after the first witnesses, each within its own count.
const ALTERNATIVES: usize = 3;

/// The input table entries a model gives values to (an argument's contents as the kernel got them).
fn input_entries(out: &Outcome, model: &Model) -> Vec<(Atom, i64)> {
    model
        .iter()
        .filter(|(a, _)| {
            matches!(&***a, Atom::Load { buf, version: 0, .. } if matches!(out.bufs.get(*buf as usize), Some(Base::Arg(_))))
        })
        .map(|(a, &v)| ((**a).clone(), v))
        .collect()
}

/// The inputs a witness names, on top of the host's constants: every element of a scalar-prefetch table the
/// witness does not name is zero, and the values it gives to what the kernel computes (loop results, trip
/// counts) are left to the replay. `None` when the witness contradicts the host's constants or names a table
/// element at an index that is not a number.
pub fn inputs_of(out: &Outcome, k: &kernel::Kernel<'_>, grid_n: usize, model: &Model) -> Option<Inputs> {
    let host = &k.host.tables;
    let dims = |a: usize| k.args.get(a).and_then(|x| x.ty.as_ref()).and_then(|t| t.shaped()?.static_dims());
    let mut inputs = Inputs { tables: host.clone(), ..Default::default() };
    for (&a, t) in host {
        inputs.fixed.extend((0..t.len()).map(|f| Slot::Elem(a, f)));
    }
    for a in grid_n..grid_n + k.scalar_prefetch {
        if let Some(d) = dims(a) {
            let n = usize::try_from(d.iter().product::<i64>()).ok().filter(|&n| n <= 1 << 16)?;
            inputs.tables.entry(a).or_insert_with(|| vec![0; n]);
        }
    }
    let val = |s: &super::term::Sym| model.get(s).copied().or(Some(0));
    let mut shown = Vec::new();
    for (atom, &v) in model {
        match &**atom {
            Atom::Load { buf, idx, version: 0 } => {
                // (an allocation's contents are the kernel's own)
                let Some(&Base::Arg(a)) = out.bufs.get(*buf as usize) else { continue };
                let d = dims(a)?;
                let at: Vec<i64> = idx.iter().map(|x| x.eval(&val)).collect::<Option<_>>()?;
                if at.len() != d.len() || at.iter().zip(&d).any(|(&i, &n)| i < 0 || i >= n) {
                    return None;
                }
                let flat = at.iter().zip(&d).fold(0i64, |f, (&i, &n)| f * n + i) as usize;
                let n = usize::try_from(d.iter().product::<i64>()).ok().filter(|&n| n <= 1 << 16)?;
                let t = inputs.tables.entry(a).or_insert_with(|| vec![0; n]);
                if host.get(&a).is_some_and(|h| h.get(flat) != Some(&v)) {
                    // the host fixes this element to another value: not an input the kernel can get
                    return None;
                }
                *t.get_mut(flat)? = v;
                inputs.fixed.insert(Slot::Elem(a, flat));
                let at: Vec<String> = at.iter().map(i64::to_string).collect();
                let s = format!("{}[{}] = {v}", out.names.get(*buf as usize)?, at.join(", "));
                if !shown.contains(&s) {
                    shown.push(s);
                }
            }
            Atom::Var(x) => {
                if let Some(d) = x.name.strip_prefix(super::GRID_SIZE) {
                    inputs.grid.insert(d.parse().ok()?, v);
                    shown.push(format!("a grid of {v} along dimension {d}"));
                } else if let Some(a) = out.scalar_args.get(&x.id) {
                    inputs.scalars.insert(*a, v);
                    inputs.fixed.insert(Slot::Scalar(*a));
                    shown.push(format!("{} = {v}", x.name));
                }
                // anything else is a value the kernel computes (a loop's result, a trip count): the replay
                // computes it itself, and shows the failure or not
            }
            // compound atoms follow from the values above
            _ => {}
        }
    }
    if shown.is_empty() && inputs.tables.len() > host.len() {
        shown.push(ZERO.to_string());
    }
    inputs.shown = shown.join(", ");
    Some(inputs)
}

/// Replays the witnesses of `out`'s failures of one `family` (balance or races; those not proven first; at most a
/// few, each once); a failure of the family a replay shows is added to `out` as proven, with the replayed inputs
/// as its witness, in place of the proven ones of its kind on its semaphore (the replay knows which start of a
/// semaphore was the last: better blame, see [`blame_last`]) — for a race, of its kind at its op. With input
/// assumptions, each witness's free values are first completed to values they allow ([`complete`]), and a witness
/// that cannot be is not replayed. Returns the inputs of the replay that failed.
pub fn confirm<'a>(
    out: &mut Outcome,
    m: &Module<'a>,
    k: &kernel::Kernel<'a>,
    assumed: &[Bound],
    family: &dyn Fn(&Problem) -> bool,
) -> Option<Inputs> {
    let grid_n = k.iteration_bounds.len().min(m.func(k.func).params.len());
    let mut tried: Vec<Inputs> = Vec::new();
    let (proven, open): (Vec<&Problem>, Vec<&Problem>) =
        out.problems.iter().filter(|p| family(p)).partition(|p| out.proven(p));
    // each failure's witness, open ones first, then other inputs that reach an open one (a witness may miss the
    // failure in a replay — an input of the symbolic run's that another value the run could not tie to inputs
    // undoes —; other inputs that satisfy the same condition may not)
    let mut candidates: Vec<Model> = open.iter().chain(&proven).filter_map(|p| p.witness.clone()).collect();
    let firsts = candidates.len();
    // (one budget for all of them: only a few witnesses are replayed)
    solve::set_budget(super::budget() / 4);
    for p in &open {
        let Some(first) = &p.witness else { continue };
        // one input entry changed at a time, zeros first: the solver's first values are its smallest, and a
        // witness whose lengths are all zero often does no work at all
        let mut entries = input_entries(out, first);
        entries.sort_by_key(|(_, v)| *v != 0);
        for (atom, v) in entries.into_iter().take(ALTERNATIVES) {
            let Some(other) = Lin::atom(atom).sub(&Lin::int(v)) else { continue };
            if let solve::Answer::Sat(m) = solve::check(&Cond::and([p.when.clone(), Cond::cmp(other, Rel::Ne0)])) {
                if !input_entries(out, &m).is_empty() && !candidates.contains(&m) {
                    candidates.push(m);
                }
            }
        }
    }
    for (n, model) in candidates.into_iter().enumerate() {
        // (the first witnesses share MAX_REPLAYS replays; the alternatives after them ALTERNATIVES more)
        if tried.len() >= MAX_REPLAYS + if n < firsts { 0 } else { ALTERNATIVES } {
            continue;
        }
        let Some(mut inputs) = inputs_of(out, k, grid_n, &model) else { continue };
        if !complete(out, k, &mut inputs, assumed) {
            if super::solve::trace() {
                eprintln!("dma-replay {}: not completed to inputs the assumptions allow", inputs.shown);
            }
            continue;
        }
        if tried.contains(&inputs) {
            continue;
        }
        tried.push(inputs.clone());
        // (zero elsewhere can be no input at all — a cumulative table that falls back to 0 after the witness's
        // entries gives a negative size —; the same witness with its entries carried forward is tried then)
        let ran = super::replay(m, k, &inputs).map(|f| (f, inputs.clone())).or_else(|| {
            let forward = carried_forward(&inputs).filter(|f| !tried.contains(f))?;
            tried.push(forward.clone());
            super::replay(m, k, &forward).map(|f| (f, forward))
        });
        let Some((mut found, inputs)) = ran else { continue };
        found.retain(|p| family(p));
        if super::solve::trace() {
            eprintln!("dma-replay {}: {} failures", inputs.shown, found.len());
        }
        if found.is_empty() {
            continue;
        }
        let proven: Vec<bool> = out.problems.iter().map(|p| out.proven(p)).collect();
        let mut i = 0;
        out.problems.retain(|p| {
            i += 1;
            let same = |q: &Problem| {
                q.kind == p.kind && q.sem.base == p.sem.base && (!super::race::is_race(p.kind) || q.op == p.op)
            };
            // (a race the symbolic run left possible is the one the replay shows at its op: no doubt is left;
            // a balance failure left possible may be another wait on the semaphore, and stays)
            let settled = proven[i - 1] || super::race::is_race(p.kind);
            !(settled && family(p) && found.iter().any(same))
        });
        for mut p in found {
            p.replayed = Some(inputs.shown.clone());
            if !out.problems.iter().any(|q| q.replayed.is_some() && q.op == p.op && q.kind == p.kind) {
                out.problems.push(p);
            }
        }
        // one input that fails is enough to show the kernel wrong
        return Some(inputs);
    }
    None
}

/// `inputs` with every table entry the witness (or the host) does not fix set to the nearest fixed entry before
/// it in the table (0 before any): a prefix-sum table stays ordered, a table of lengths keeps the witness's last
/// length. `None` when that changes nothing.
fn carried_forward(inputs: &Inputs) -> Option<Inputs> {
    let mut out = inputs.clone();
    let mut changed = false;
    for (&a, t) in out.tables.iter_mut() {
        let mut last = 0;
        for (f, v) in t.iter_mut().enumerate() {
            if inputs.fixed.contains(&Slot::Elem(a, f)) {
                last = *v;
            } else if *v != last {
                *v = last;
                changed = true;
            }
        }
    }
    if !changed {
        return None;
    }
    out.shown = match inputs.shown.as_str() {
        ZERO => return None,
        shown => format!("{shown}, each other table entry equal to the one before it"),
    };
    Some(out)
}

/// Completes a replay's inputs to values every assumption allows ([`assume::complete`]) and says in `shown` which
/// values that set besides the witness's; `false` when it cannot.
pub fn complete(out: &Outcome, k: &kernel::Kernel<'_>, inputs: &mut Inputs, assumed: &[Bound]) -> bool {
    if assumed.is_empty() {
        return true;
    }
    let before = (inputs.tables.clone(), inputs.scalars.clone());
    let c = assume::Concrete { tables: &mut inputs.tables, scalars: &mut inputs.scalars, fixed: &inputs.fixed };
    if !assume::complete(assumed, c) {
        return false;
    }
    let name = |a: usize| input_name(out, k, a);
    let mut set = Vec::new();
    for (a, t) in &inputs.tables {
        let old = before.0.get(a);
        let moved: Vec<(usize, i64)> = t
            .iter()
            .enumerate()
            .filter(|&(f, v)| old.and_then(|o| o.get(f)) != Some(v))
            .map(|(f, &v)| (f, v))
            .collect();
        let Some(&(_, v)) = moved.first() else { continue };
        let free = (0..t.len()).filter(|&f| !inputs.fixed.contains(&Slot::Elem(*a, f))).count();
        if moved.len() > 3 && moved.len() == free && moved.iter().all(|m| m.1 == v) {
            set.push(format!("every other element of {} = {v}", name(*a)));
            continue;
        }
        let dims =
            k.args.get(*a).and_then(|x| x.ty.as_ref()).and_then(|t| t.shaped()?.static_dims()).unwrap_or_default();
        for &(f, v) in moved.iter().take(4) {
            set.push(format!("{}[{}] = {v}", name(*a), unflatten(f, &dims)));
        }
        if moved.len() > 4 {
            set.push(format!("{} more of {}", moved.len() - 4, name(*a)));
        }
    }
    for (a, v) in &inputs.scalars {
        if before.1.get(a) != Some(v) {
            set.push(format!("{} = {v}", name(*a)));
        }
    }
    if !set.is_empty() {
        inputs.shown = match inputs.shown.as_str() {
            "" => set.join(", "),
            ZERO => format!("{}, every other scalar-prefetch element zero", set.join(", ")),
            shown => format!("{shown}, {}", set.join(", ")),
        };
    }
    true
}

/// Values of inputs as a witness shows them: `kv_lens[1] = 0, n = 3`.
pub fn show_slots(out: &Outcome, k: &kernel::Kernel<'_>, at: &[(Slot, i64)]) -> String {
    let name = |a: usize| input_name(out, k, a);
    let mut parts: Vec<String> = Vec::new();
    for (s, v) in at {
        let p = match *s {
            Slot::Elem(a, f) => {
                let dims = k.args.get(a).and_then(|x| x.ty.as_ref()).and_then(|t| t.shaped()?.static_dims());
                format!("{}[{}] = {v}", name(a), unflatten(f, &dims.unwrap_or_default()))
            }
            Slot::Scalar(a) => format!("{} = {v}", name(a)),
        };
        if !parts.contains(&p) {
            parts.push(p);
        }
    }
    parts.join(", ")
}

/// A kernel argument as witnesses name it (the engine's name for a table it reads, else the author's or the
/// dump's).
fn input_name(out: &Outcome, k: &kernel::Kernel<'_>, a: usize) -> String {
    match out.bufs.iter().position(|b| *b == Base::Arg(a)) {
        Some(i) => out.names.get(i).cloned().unwrap_or_default(),
        None => k.args.get(a).map(|x| x.python.clone().unwrap_or_else(|| format!("%{}", x.name))).unwrap_or_default(),
    }
}

/// A row-major position as indices: `3, 1`.
fn unflatten(mut f: usize, dims: &[i64]) -> String {
    let mut at = Vec::new();
    for &n in dims.iter().rev() {
        let n = usize::try_from(n).unwrap_or(1).max(1);
        at.push((f % n).to_string());
        f /= n;
    }
    at.reverse();
    if at.is_empty() {
        f.to_string()
    } else {
        at.join(", ")
    }
}

/// Binds a replay's scalar argument (`Some`) or leaves it to the caller.
pub fn scalar_arg(e: &Engine<'_, '_>, i: usize) -> Option<Val> {
    e.replay_inputs.as_ref()?.scalars.get(&i).map(|&v| Val::Int(Lin::int(v)))
}

/// A DMA left outstanding at the end of a replay is blamed on the last DMA started on its semaphore slot with its
/// size: a semaphore only counts, so which of them a wait took is not observable, and the waits take the oldest
/// first (`Engine::consume`) — which leaves a grid step's prologue copy over where the author's missing wait is
/// for the previous step's last, unguarded prefetch. The last start is the one no wait was written for.
///
/// Copies into the same target come first: a wait takes the copy its descriptor names before another on its slot
/// (`prefer_own_copy`), so what is left is a copy into a target no wait was written for (page 0 of a block whose
/// page-0 wait is missing), and the last copy there is the one to blame.
pub fn blame_last(log: &[super::exec::Fact], f: &mut super::exec::Fact) {
    let like = |g: &&super::exec::Fact| !g.signal && g.amount == f.amount && super::account::same_key(&g.sem, &f.sem);
    let last = log.iter().rev().filter(like).find(|g| g.dst == f.dst).or_else(|| log.iter().rev().find(like));
    if let Some(g) = last {
        f.op = g.op;
        f.at = g.at.clone();
        f.last = g.last;
    }
}

/// What `n` DMAs of one op left at the end of a replay say per grid step, as `DmaFailure::of_balance` reads it:
/// one left by one step (a last step's prefetch), one left by each step (each step's last prefetch), or `n`
/// left together (a wait missing).
pub fn per_step(n: usize, grid_steps: Option<u64>) -> Vec<usize> {
    match grid_steps {
        _ if n == 1 => vec![1],
        Some(s) if s > 1 && n as u64 == s => vec![1; n],
        _ => vec![n],
    }
}

/// Whether problems found so far in a replay already include this one (each op is reported once per kind).
pub fn seen(problems: &[Problem], op: OpId, kind: &str) -> bool {
    problems.iter().any(|p| p.op == op && p.kind == kind)
}
