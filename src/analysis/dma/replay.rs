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

use super::exec::{Base, Engine, Problem, Val};
use super::induct::Loop;
use super::term::{Atom, Lin};
use super::{seed::Seed, solve::Model, Outcome};
use crate::ir::*;
use crate::semantic::kernel;
use std::collections::BTreeMap;

/// Iterations a replay runs at most, over all loops and grid steps (a witness's inputs are small: its tables
/// hold the few values the failure needs and zeros elsewhere).
const MAX_ITERATIONS: u64 = 20_000;
/// Ops a replay evaluates at most.
pub const MAX_STEPS: u64 = 400_000;
/// Witnesses replayed per kernel at most.
const MAX_REPLAYS: usize = 3;

/// Concrete inputs for a replay: table elements and scalar arguments by kernel argument, grid sizes the witness
/// fixes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Inputs {
    pub tables: Seed,
    pub scalars: BTreeMap<usize, i64>,
    pub grid: BTreeMap<usize, i64>,
    /// The witness as the author reads it: the table elements, scalars and grid sizes it names.
    pub shown: String,
}

/// Runs one loop (or grid dimension) of a replay iteration by iteration; returns the carried values after it.
pub fn run_loop<'m, 'a>(e: &mut Engine<'m, 'a>, l: Loop, body: &mut super::induct::Body<'_, 'm, 'a>) -> Vec<Val> {
    let (Some(lb), Some(ub)) = (l.lb.as_int(), l.ub.as_int()) else {
        e.giveup(OpId(0), format!("replay: {} has bounds that are not numbers", l.name));
        return l.init;
    };
    let mut heads = l.init;
    let mut i = lb;
    while i < ub {
        if !next_iteration(e, OpId(0)) {
            return heads;
        }
        e.replay_at.push((l.name.clone(), i));
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

/// The inputs a witness names, on top of the host's constants: every element of a scalar-prefetch table the
/// witness does not name is zero, and the values it gives to what the kernel computes (loop results, trip
/// counts) are left to the replay. `None` when the witness contradicts the host's constants or names a table
/// element at an index that is not a number.
pub fn inputs_of(out: &Outcome, k: &kernel::Kernel<'_>, grid_n: usize, host: &Seed, model: &Model) -> Option<Inputs> {
    let dims = |a: usize| k.args.get(a).and_then(|x| x.ty.as_ref()).and_then(|t| t.shaped()?.static_dims());
    let mut inputs = Inputs { tables: host.clone(), ..Default::default() };
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
        shown.push("every scalar-prefetch table zero".to_string());
    }
    inputs.shown = shown.join(", ");
    Some(inputs)
}

/// Replays the witnesses of `out`'s failures of one `family` (balance or races; those not proven first; at most a
/// few, each once); a failure of the family a replay shows is added to `out` as proven, with the replayed inputs
/// as its witness, in place of the proven ones of its kind on its semaphore (the replay knows which start of a
/// semaphore was the last: better blame, see [`blame_last`]) — for a race, of its kind at its op.
pub fn confirm<'a>(
    out: &mut Outcome,
    m: &Module<'a>,
    k: &kernel::Kernel<'a>,
    host: &Seed,
    family: &dyn Fn(&Problem) -> bool,
) {
    let grid_n = k.iteration_bounds.len().min(m.func(k.func).params.len());
    let mut tried: Vec<Inputs> = Vec::new();
    let (proven, open): (Vec<&Problem>, Vec<&Problem>) =
        out.problems.iter().filter(|p| family(p)).partition(|p| out.proven(p));
    let candidates: Vec<Model> = open.into_iter().chain(proven).filter_map(|p| p.witness.clone()).collect();
    for model in candidates {
        if tried.len() >= MAX_REPLAYS {
            break;
        }
        let Some(inputs) = inputs_of(out, k, grid_n, host, &model) else { continue };
        if tried.contains(&inputs) {
            continue;
        }
        tried.push(inputs.clone());
        let Some(mut found) = super::replay(m, k, &inputs) else { continue };
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
            !(proven[i - 1] && family(p) && found.iter().any(same))
        });
        for mut p in found {
            p.replayed = Some(inputs.shown.clone());
            if !out.problems.iter().any(|q| q.replayed.is_some() && q.op == p.op && q.kind == p.kind) {
                out.problems.push(p);
            }
        }
        // one input that fails is enough to show the kernel wrong
        break;
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
