//! The verdicts under a kernel's input assumptions (`per-kernel-assume`, [`super::assume`]): a failure is an error
//! only if some input every assumption allows reaches it; one that only excluded inputs reach is set apart with
//! the assumptions that exclude it (reported as a warning, with its witness), and one for which neither is shown
//! stays possible (the kernel is inconclusive).

use super::assume::{self, Bound, Names};
use super::exec::{Base, Problem};
use super::replay::{self, Inputs};
use super::solve::{self, Answer, Model};
use super::term::{Atom, Cond, Lin, Rel, Sym};
use super::Outcome;
use crate::ir::Module;
use crate::semantic::kernel;

/// A failure shown on inputs the assumptions exclude.
#[derive(Clone, Debug)]
pub struct Excluded {
    pub problem: Problem,
    /// The assumptions that exclude it (as written): one that does alone when there is one, else those that do
    /// together; or those the replayed inputs break.
    pub by: Vec<String>,
    /// Only excluded inputs reach it (`false`: an excluded input does, and no input the assumptions allow was
    /// shown to, nor shown not to: the kernel stays inconclusive about it).
    pub only: bool,
}

/// The question a problem's witness answers: its condition, and for a DMA left over that it moves some bytes (the
/// engine asked the same).
fn question(p: &Problem) -> Cond {
    match p.kind {
        "never-waited" => Cond::and([p.when.clone(), Cond::cmp(p.amounts.0.clone(), Rel::Ne0)]),
        _ => p.when.clone(),
    }
}

/// The atoms a problem reads: its condition's and its witness's.
fn atoms_of(q: &Cond, w: Option<&Model>) -> Vec<Sym> {
    let mut atoms = Vec::new();
    q.atoms(&mut atoms);
    for a in w.into_iter().flat_map(|m| m.keys()) {
        if !atoms.contains(a) {
            atoms.push(a.clone());
            Lin::atom((**a).clone()).atoms(&mut atoms);
        }
    }
    atoms
}

impl Outcome {
    /// A model without the table elements it gives outside their tables: an assumption about `t[i + 1]` holds only
    /// where that element exists, and the solver may still give one past the end a value.
    fn in_tables(&self, mut model: Model) -> Model {
        let fits = |a: &Sym, m: &Model| match &**a {
            Atom::Load { buf, idx, version: 0 } => {
                let Some(Base::Arg(arg)) = self.bufs.get(*buf as usize) else { return true };
                let Some(dims) = self.table_dims.get(arg) else { return true };
                let at: Option<Vec<i64>> =
                    idx.iter().map(|x| x.eval(&|s: &Sym| m.get(s).copied().or(Some(0)))).collect();
                at.is_some_and(|at| at.len() == dims.len() && at.iter().zip(dims).all(|(&i, &n)| (0..n).contains(&i)))
            }
            _ => true,
        };
        let outside: Vec<Sym> = model.keys().filter(|a| !fits(a, &model)).cloned().collect();
        for a in outside {
            model.remove(&a);
        }
        model
    }

    /// Every table element `q` reads before the kernel writes the table is at least zero (a preference for
    /// witnesses, as the engine's `plausible`).
    fn plausible(&self, q: &Cond) -> Cond {
        super::witness::at_least_zero(q, |a| match &**a {
            Atom::Load { buf, version: 0, .. } => matches!(self.bufs.get(*buf as usize), Some(Base::Arg(_))),
            _ => false,
        })
    }

    /// The engine's names of the kernel's inputs: table arguments' buffer numbers, scalar arguments' variables.
    fn input_names(&self) -> Names {
        let bufs = self
            .bufs
            .iter()
            .enumerate()
            .filter_map(|(i, b)| match b {
                Base::Arg(a) => Some((*a, i as u32)),
                Base::Alloc(_) => None,
            })
            .collect();
        Names { bufs, scalars: self.scalar_vars.clone() }
    }
}

/// Splits `out`'s problems by the assumptions `bs` (after the symbolic run, before any replay): those only
/// excluded inputs reach go to `out.excluded` (replayed without the assumptions, to show their witness), the
/// others get a witness the assumptions allow, and are proven by a replay on inputs completed to values they allow
/// (or by the symbolic proof, where the completed inputs agree with its witness on everything it reads).
///
/// `out.problems` are of one kind, `which` says which (balance and races are judged apart, see `super::check`:
/// one kind of failure shown does not show the other).
pub fn judge<'a>(
    out: &mut Outcome,
    m: &Module<'a>,
    k: &kernel::Kernel<'a>,
    bs: &[Bound],
    which: &dyn Fn(&Problem) -> bool,
) {
    let proven = |out: &Outcome, p: &Problem| match super::race::is_race(p.kind) {
        true => out.proven_race(p),
        false => out.proven(p),
    };
    let names = out.input_names();
    let grid_n = k.iteration_bounds.len().min(m.func(k.func).params.len());
    let mut allowed = Vec::new();
    let mut excluded = Vec::new();
    let first = out.problems.clone();
    for mut p in std::mem::take(&mut out.problems) {
        let q = question(&p);
        let atoms = atoms_of(&q, p.witness.as_ref());
        let per: Vec<(usize, Vec<Cond>)> = bs
            .iter()
            .enumerate()
            .map(|(i, b)| (i, assume::instances(b, &atoms, &names)))
            .filter(|x| !x.1.is_empty())
            .collect();
        let all = Cond::and(std::iter::once(q.clone()).chain(per.iter().flat_map(|x| x.1.iter().cloned())));
        // (a witness whose table entries are non-negative where there is one: see `Engine::plausible`)
        let answer = match solve::check(&Cond::and([all.clone(), out.plausible(&q)])) {
            Answer::Sat(m) => Answer::Sat(m),
            _ => solve::check(&all),
        };
        if solve::trace() {
            let n: usize = per.iter().map(|x| x.1.len()).sum();
            let said = match &answer {
                Answer::Unsat => "excluded".to_string(),
                Answer::Sat(_) => "allowed".to_string(),
                Answer::Unknown(why) => format!("undecided ({why})"),
            };
            eprintln!("dma-assume {} at {:?} under {n} instances: {said}", p.kind, p.op);
        }
        match answer {
            Answer::Unsat => {
                let by = excluding(&q, &per, bs);
                excluded.push(Excluded { problem: p, by, only: true });
                continue;
            }
            Answer::Sat(model) => {
                if !p.witness.as_ref().is_some_and(|w| super::holds(&all, w)) {
                    // another input reaches it: the first witness's proof was about that one
                    p.witness = Some(out.in_tables(model));
                    p.exact = false;
                }
            }
            // not shown either way: possible at most
            Answer::Unknown(_) => p.exact = false,
        }
        // a symbolic proof stands where inputs the assumptions allow agree with its witness on all it reads
        if proven(out, &p) && p.replayed.is_none() {
            let agrees = p.witness.as_ref().is_some_and(|w| {
                replay::inputs_of(out, k, grid_n, w)
                    .is_some_and(|mut i| replay::complete(out, k, &mut i, bs) && agree(out, &q, w, &i))
            });
            p.exact &= agrees;
        }
        allowed.push(p);
    }
    out.problems = allowed;
    if !out.problems.is_empty() {
        replay::confirm(out, m, k, bs, which);
    }
    // what is left unproven under the assumptions, and what they exclude, as the kernel shows it without them
    let open: Vec<Problem> = first
        .into_iter()
        .filter(|p| !out.problems.iter().any(|q| proven(out, q) && q.kind == p.kind && q.sem.base == p.sem.base))
        .filter(|p| !excluded.iter().any(|x| x.problem.op == p.op && x.problem.kind == p.kind))
        .collect();
    if excluded.is_empty() && open.is_empty() {
        return;
    }
    let again = excluded.iter().map(|x| x.problem.clone()).chain(open).collect();
    let allowed = std::mem::replace(&mut out.problems, again);
    let inputs = replay::confirm(out, m, k, &[], which);
    let shown = std::mem::replace(&mut out.problems, allowed);
    let broken: Vec<String> = match &inputs {
        Some(i) => assume::broken_all(bs, &i.tables, &i.scalars)
            .into_iter()
            .map(|(text, at)| match at.is_empty() {
                true => text.to_string(),
                false => format!("{text}`, broken by `{}", replay::show_slots(out, k, &at)),
            })
            .collect(),
        None => Vec::new(),
    };
    // a replay on inputs every assumption allows after all: its failures are errors
    if inputs.is_some() && broken.is_empty() {
        out.problems.extend(shown.into_iter().filter(|p| p.replayed.is_some()));
        return;
    }
    for p in shown {
        if !proven(out, &p) {
            continue;
        }
        let (only, mut by) = if p.replayed.is_none() {
            // a symbolic proof: a warning where the assumptions exclude it (one they allow but could not prove is
            // already a possible failure)
            match excluded.iter().find(|x| x.problem.op == p.op && x.problem.kind == p.kind) {
                Some(x) => (true, x.by.clone()),
                None => continue,
            }
        } else {
            // a replay's failure stands for the symbolic ones of its kind on its semaphore: only excluded inputs
            // reach it if they are all excluded
            let like = |x: &Problem| x.kind == p.kind && x.sem.base == p.sem.base;
            let symbolic: Vec<&Excluded> = excluded.iter().filter(|x| like(&x.problem)).collect();
            match !symbolic.is_empty() && !out.problems.iter().any(like) {
                true => (true, symbolic.iter().flat_map(|x| x.by.clone()).collect()),
                false => (false, broken.clone()),
            }
        };
        if by.is_empty() {
            by = broken.clone();
        }
        let mut seen = std::collections::BTreeSet::new();
        by.retain(|b| seen.insert(b.clone()));
        out.excluded.push(Excluded { problem: p, by, only });
    }
}

/// The assumptions that exclude question `q`: the first that does alone, else all that take part, less each one
/// the others do without.
fn excluding(q: &Cond, per: &[(usize, Vec<Cond>)], bs: &[Bound]) -> Vec<String> {
    let unsat = |parts: &[&(usize, Vec<Cond>)]| {
        solve::check(&Cond::and(std::iter::once(q.clone()).chain(parts.iter().flat_map(|x| x.1.iter().cloned()))))
            .is_unsat()
    };
    if let Some(one) = per.iter().find(|x| unsat(&[x])) {
        return vec![bs[one.0].text.clone()];
    }
    let mut keep: Vec<&(usize, Vec<Cond>)> = per.iter().collect();
    let mut i = 0;
    while i < keep.len() {
        let without: Vec<_> = keep.iter().enumerate().filter(|&(j, _)| j != i).map(|(_, x)| *x).collect();
        if unsat(&without) {
            keep = without;
        } else {
            i += 1;
        }
    }
    keep.iter().map(|x| bs[x.0].text.clone()).collect()
}

/// Whether concrete inputs give every input `q` reads the value the witness `w` gives it (a value the witness
/// leaves out reads as zero, as the engine reads it).
fn agree(out: &Outcome, q: &Cond, w: &Model, inputs: &Inputs) -> bool {
    let val = |s: &Sym| w.get(s).copied().or(Some(0));
    let mut atoms = Vec::new();
    q.atoms(&mut atoms);
    atoms.iter().all(|a| match &**a {
        Atom::Load { buf, idx, version: 0 } => {
            let Some(&Base::Arg(arg)) = out.bufs.get(*buf as usize) else { return true };
            let Some(t) = inputs.tables.get(&arg) else { return true };
            let Some(at) = idx.iter().map(|x| x.eval(&val)).collect::<Option<Vec<i64>>>() else { return false };
            let dims: Vec<i64> = out.table_dims.get(&arg).cloned().unwrap_or_default();
            if dims.len() != at.len() || at.iter().zip(&dims).any(|(&i, &n)| i < 0 || i >= n) {
                return false;
            }
            let flat = at.iter().zip(&dims).fold(0i64, |f, (&i, &n)| f * n + i) as usize;
            t.get(flat).copied() == val(a)
        }
        Atom::Var(x) => match out.scalar_args.get(&x.id) {
            Some(arg) => inputs.scalars.get(arg).copied().unwrap_or(0) == val(a).unwrap_or(0),
            None => true,
        },
        _ => true,
    })
}
