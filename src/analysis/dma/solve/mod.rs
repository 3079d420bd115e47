//! The decision procedure: is a condition over symbolic integers satisfiable, and by which values?
//!
//! A condition is split into conjunctions of linear constraints (a case split at each disjunction, each `≠`, and
//! at each non-linear atom the condition reads: `x / d`, `x % d`, `min`, `max` and `select` are defined by
//! constraints on a fresh integer, e.g. `d·q ≤ x ≤ d·q + d − 1` for `q = x / d` with `x ≥ 0`). Each conjunction is
//! decided by Fourier–Motzkin elimination over the rationals with integer tightening (a constraint's coefficients
//! divided by their gcd, the constant rounded down): no rational solution means no integer one, so `Unsat` is a
//! proof. A rational solution is turned into integers by back-substitution, smallest magnitude first, and checked
//! against the whole condition: `Sat` comes with values that satisfy it — including that two reads of a buffer at
//! equal indices (two applications of an op to equal arguments) are equal, asked when a model breaks it. Anything else (a gap only integers have,
//! too many cases, too many constraints) is `Unknown`, never a guess.

use super::term::{Atom, Cond, Lin, Rel, Sym};
use std::collections::{BTreeMap, HashMap};

mod bits;
mod fm;
mod parts;
mod search;

use parts::components;
pub use parts::{equal_by_parts, equal_under};
use search::Search;

/// Values for the atoms a condition reads.
pub type Model = BTreeMap<Sym, i64>;

#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    Unsat,
    Sat(Model),
    Unknown(&'static str),
}

impl Answer {
    pub fn is_unsat(&self) -> bool {
        matches!(self, Answer::Unsat)
    }
}

/// Cases (conjunctions) tried at most per question.
const MAX_CASES: u32 = 4096;
/// Case splits visited at most per question.
const MAX_NODES: u32 = 20_000;
/// Constraints alive at once during one elimination.
const MAX_CONSTRAINTS: usize = 3000;

thread_local! {
    /// Case splits and eliminations left for the kernel being checked ([`set_budget`]).
    static BUDGET: std::cell::Cell<u64> = const { std::cell::Cell::new(u64::MAX) };
    /// Answers already given for the kernel being checked: the engine asks the same question again at each pass of
    /// an induction and for each fact a wait looks at.
    static ANSWERS: std::cell::RefCell<HashMap<Cond, Answer>> = std::cell::RefCell::new(HashMap::new());
    /// The same, by the question exactly as asked: most repeats are the very same terms, and renaming a question
    /// (rebuilding every atom) to look it up cost more than deciding most of them.
    static ASKED: std::cell::RefCell<HashMap<Cond, Answer>> = std::cell::RefCell::new(HashMap::new());
    /// The answers to questions asked on the side ([`aside`]), kept apart from the kernel's own.
    static SIDE_ANSWERS: std::cell::RefCell<HashMap<Cond, Answer>> = std::cell::RefCell::new(HashMap::new());
    static SIDE_ASKED: std::cell::RefCell<HashMap<Cond, Answer>> = std::cell::RefCell::new(HashMap::new());
}

/// Bounds the work of every question from now on (per kernel): past it, questions are `Unknown`, so a kernel
/// whose questions are too hard ends inconclusive in bounded time instead of running long. Forgets the answers
/// kept for the previous kernel.
pub fn set_budget(units: u64) {
    BUDGET.with(|b| b.set(units));
    for cache in [&ANSWERS, &ASKED, &SIDE_ANSWERS, &SIDE_ASKED] {
        cache.with(|a| a.borrow_mut().clear());
    }
}

/// Work units left for the kernel being checked.
pub fn left() -> u64 {
    BUDGET.with(|b| b.get())
}

/// Questions asked on the side ([`aside`]): the budget and answers of the kernel's own questions, kept meanwhile.
pub struct Aside {
    budget: u64,
}

/// Starts asking questions that only refine a verdict — races, refills — on a budget of their own (`units`) and
/// with answers of their own: they never starve the proof of another verdict, and never change the model a later
/// question of the kernel gets from the cache (a witness, and whether its replay runs).
pub fn aside(units: u64) -> Aside {
    swap_answers();
    Aside { budget: BUDGET.with(|b| b.replace(units)) }
}

impl Aside {
    /// Back to the kernel's own questions; returns the side budget left.
    pub fn end(self) -> u64 {
        let left = BUDGET.with(|b| b.replace(self.budget));
        swap_answers();
        left
    }
}

fn swap_answers() {
    ANSWERS.with(|a| SIDE_ANSWERS.with(|s| std::mem::swap(&mut *a.borrow_mut(), &mut *s.borrow_mut())));
    ASKED.with(|a| SIDE_ASKED.with(|s| std::mem::swap(&mut *a.borrow_mut(), &mut *s.borrow_mut())));
}

/// Whether the budget ran out.
pub fn exhausted() -> bool {
    BUDGET.with(|b| b.get() == 0)
}

fn spend() -> bool {
    spend_n(1)
}

/// Spends `n` units (all that is left when fewer): false when none was left.
fn spend_n(n: u64) -> bool {
    BUDGET.with(|b| {
        let v = b.get();
        if v == 0 {
            return false;
        }
        b.set(v.saturating_sub(n));
        true
    })
}

/// Row visits of an elimination that cost one unit of the budget: a single question whose rows multiply (each
/// elimination squares what is left) must not outlast the budget that bounds the kernel.
const ROWS_PER_UNIT: usize = 4096;

/// Whether `c` holds for some integers, with a model when it does.
pub fn check(c: &Cond) -> Answer {
    if *c == Cond::False {
        return Answer::Unsat;
    }
    if *c == Cond::True {
        return Answer::Sat(Model::new());
    }
    if let Some(a) = ASKED.with(|a| a.borrow().get(c).cloned()) {
        return a;
    }
    let answer = check_parts(c);
    ASKED.with(|a| a.borrow_mut().insert(c.clone(), answer.clone()));
    answer
}

/// [`check`] part by part.
fn check_parts(c: &Cond) -> Answer {
    let parts = components(c);
    if parts.len() < 2 {
        return check_whole(c);
    }
    // independent parts: satisfiable together exactly when each is; a refuted part refutes the whole even when
    // another is undecided
    let mut model = Model::new();
    let mut unknown = None;
    for p in &parts {
        match check_whole(p) {
            Answer::Unsat => return Answer::Unsat,
            Answer::Sat(m) => model.extend(m),
            Answer::Unknown(why) => unknown = unknown.or(Some(why)),
        }
    }
    match unknown {
        Some(why) => Answer::Unknown(why),
        None => Answer::Sat(model),
    }
}

/// [`check`] of one question as a whole, renamed for the cache.
fn check_whole(c: &Cond) -> Answer {
    let Some((key, names)) = Renaming::of(c) else { return ask(c) };
    let answer = ask(&key);
    match answer {
        Answer::Sat(m) => Answer::Sat(names.model_back(m)),
        a => a,
    }
}

/// Decides `c` once per kernel (answers cached).
fn ask(c: &Cond) -> Answer {
    if let Some(a) = ANSWERS.with(|a| a.borrow().get(c).cloned()) {
        return a;
    }
    let before = BUDGET.with(|b| b.get());
    let answer = decide(c);
    if trace() {
        let spent = before - BUDGET.with(|b| b.get());
        let text = c.to_string();
        eprintln!("dma-solve {spent} {:?} {}", std::mem::discriminant(&answer), &text);
    }
    ANSWERS.with(|a| a.borrow_mut().insert(c.clone(), answer.clone()));
    answer
}

/// Variables and load versions numbered by rank in one question. Each induction pass (and each pass of an
/// enclosing loop) walks a loop body again with fresh variables and versions, asking the same questions about new
/// names; renamed by rank — creation order is the same in every pass — they are the same question and the cache
/// answers them.
struct Renaming {
    ids: Vec<u32>,
    versions: Vec<u32>,
}

impl Renaming {
    fn of(c: &Cond) -> Option<(Cond, Renaming)> {
        let mut atoms = Vec::new();
        c.atoms(&mut atoms);
        let mut ids = Vec::new();
        let mut versions = vec![0];
        for a in &atoms {
            match &**a {
                Atom::Var(v) => ids.push(v.id),
                Atom::Load { version, .. } => versions.push(*version),
                _ => {}
            }
        }
        ids.sort_unstable();
        ids.dedup();
        versions.sort_unstable();
        versions.dedup();
        let r = Renaming { ids, versions };
        let key = c.subst(&|a| r.rename(a, false))?;
        Some((key, r))
    }

    /// `a` renamed to ranks (or, `back`, from ranks to the question's own names).
    fn rename(&self, a: &Atom, back: bool) -> Option<Lin> {
        let map = |list: &[u32], x: u32| -> Option<u32> {
            if back {
                list.get(x as usize).copied()
            } else {
                list.binary_search(&x).ok().map(|i| i as u32)
            }
        };
        match a {
            Atom::Var(v) => Some(Lin::var(super::term::Var { id: map(&self.ids, v.id)?, name: v.name.clone() })),
            Atom::Load { buf, idx, version } => {
                Some(Lin::atom(Atom::Load { buf: *buf, idx: idx.clone(), version: map(&self.versions, *version)? }))
            }
            _ => None,
        }
    }

    fn model_back(&self, m: Model) -> Model {
        m.into_iter()
            .filter_map(|(a, v)| {
                let l = Lin::atom((*a).clone()).subst(&|x| self.rename(x, true))?;
                let key = l.terms.keys().next().filter(|_| l.single_atom().is_some())?.clone();
                Some((key, v))
            })
            .collect()
    }
}

fn decide(c: &Cond) -> Answer {
    if !spend() {
        return Answer::Unknown("the decision procedure's budget for this kernel ran out");
    }
    let c = &in_context(c);
    let c = &selects_in_context(c);
    let mut atoms = Vec::new();
    c.atoms(&mut atoms);
    let mut defs = Vec::new();
    let mut i = 0;
    while i < atoms.len() {
        if let Some(d) = definition(&atoms[i]) {
            d.atoms(&mut atoms);
            defs.push(d);
        }
        i += 1;
    }
    // reads at equal indices are equal: asked only when a model without that says otherwise (the constraints
    // only remove models, so an answer `Unsat` without them stands)
    let plain = Cond::and(std::iter::once(c.clone()).chain(defs));
    let answer = search(&plain);
    let Answer::Sat(m) = &answer else { return answer };
    let same = congruences(&atoms);
    let val = |a: &Sym| m.get(a).copied().or(Some(0));
    if same.iter().all(|x| x.eval(&val) == Some(true)) {
        return answer;
    }
    search(&Cond::and(std::iter::once(plain).chain(same)))
}

/// Decides `whole` by the case search: a model is checked against the whole condition before it is believed.
fn search(whole: &Cond) -> Answer {
    let mut s = Search::default();
    s.start(whole);
    if let Some(m) = s.found {
        let val = |a: &Sym| m.get(a).copied().or(Some(0));
        return match whole.eval(&val) {
            Some(true) => Answer::Sat(m),
            _ => Answer::Unknown("a rational solution with no integer one"),
        };
    }
    match s.unknown {
        Some(why) => Answer::Unknown(why),
        None => Answer::Unsat,
    }
}

/// `c` with what holds around each part taken out of it: inside `a ∧ ¬(a ∧ b)` the inner `a` is true, so the
/// negation is `¬b`. Guards built by taking a wait from a DMA repeat their loop ranges inside every negation;
/// without this each repeated conjunct is one more case the search splits on and refutes.
/// (Simplified here, per question, rather than when guards are built: the built terms stay shared and cached.)
fn in_context(c: &Cond) -> Cond {
    in_scope(c, &mut Vec::new())
}

/// [`in_context`] with one stack of comparisons that each conjunction extends while its parts are read and
/// truncates after: a copy (or a hash of every comparison looked up) per conjunction made it the solver's most
/// expensive step, while scopes hold a few dozen comparisons that compare by pointer.
fn in_scope(c: &Cond, ctx: &mut Vec<Cond>) -> Cond {
    match c {
        Cond::And(xs) => {
            let cmps = || xs.iter().filter(|x| matches!(x, Cond::Cmp(..)));
            // the comparisons of this conjunction hold while its other parts are read; a comparison beside its
            // own negation (here or around it) leaves nothing to split on
            let sibling = |x: &Cond| xs.binary_search(x).is_ok();
            if cmps().any(|x| {
                let n = Cond::negate(x.clone());
                ctx.contains(&n) || sibling(&n)
            }) {
                return Cond::False;
            }
            let depth = ctx.len();
            let kept: Vec<&Cond> = xs.iter().filter(|x| !ctx[..depth].contains(*x)).collect();
            ctx.extend(kept.iter().filter(|x| matches!(x, Cond::Cmp(..))).map(|x| (*x).clone()));
            let out = Cond::and(kept.into_iter().map(|x| match x {
                Cond::Cmp(..) => x.clone(),
                _ => in_scope(x, ctx),
            }));
            ctx.truncate(depth);
            out
        }
        Cond::Or(xs) => Cond::or(xs.iter().map(|x| in_scope(x, ctx))),
        Cond::Not(x) => Cond::negate(in_scope(x, ctx)),
        Cond::Cmp(..) if ctx.contains(c) => Cond::True,
        Cond::Cmp(..) if ctx.contains(&Cond::negate(c.clone())) => Cond::False,
        _ => c.clone(),
    }
}

/// `c` with the condition of every select read where the question's own top-level comparisons hold: a slot or
/// an index computed under the guard of the whole loop nest repeats that guard inside its select, and the solver's
/// definition of the select would split on the negation of every repeated comparison.
fn selects_in_context(c: &Cond) -> Cond {
    let Cond::And(xs) = c else { return c.clone() };
    // the stack `in_scope` extends and restores; in a cell because a substitution takes a shared closure
    let facts = std::cell::RefCell::new(xs.iter().filter(|x| matches!(x, Cond::Cmp(..))).cloned().collect::<Vec<_>>());
    let simplify = |a: &Atom| match a {
        Atom::Select(k, x, y) => {
            let k2 = in_scope(k, &mut facts.borrow_mut());
            (k2 != **k).then(|| Lin::select(&k2, x, y))
        }
        _ => None,
    };
    // a part without a select has nothing to read again (and its atoms need not be rebuilt)
    Cond::and(
        xs.iter().map(|x| if has_select(x) { x.subst(&simplify).unwrap_or_else(|| x.clone()) } else { x.clone() }),
    )
}

/// Whether a condition reads a select (anywhere inside).
fn has_select(c: &Cond) -> bool {
    let mut atoms = Vec::new();
    c.atoms(&mut atoms);
    atoms.iter().any(|a| matches!(&**a, Atom::Select(..)))
}

/// Whether `HLOLINT_DMA_TRACE` asks for each question and its cost on stderr (for finding what makes a kernel slow).
pub fn trace() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("HLOLINT_DMA_TRACE").is_some())
}

/// Whether `a ⇒ b` holds for every integer assignment (`Some(true)`), fails for one (`Some(false)`), or neither
/// could be shown.
pub fn implies(a: &Cond, b: &Cond) -> Option<bool> {
    match check(&Cond::and([a.clone(), Cond::negate(b.clone())])) {
        Answer::Unsat => Some(true),
        Answer::Sat(_) => Some(false),
        Answer::Unknown(_) => None,
    }
}

/// Whether `a ⇔ b` for every integer assignment.
pub fn equivalent(a: &Cond, b: &Cond) -> Option<bool> {
    Some(implies(a, b)? && implies(b, a)?)
}

/// The constraints that give a non-linear atom its meaning (`None` for atoms with none: variables, loads, opaque
/// applications, products).
fn definition(a: &Sym) -> Option<Cond> {
    let me = Lin::atom((**a).clone());
    let ge = |x: Option<Lin>| x.map(|x| Cond::plain_cmp(x, Rel::Ge0));
    let eq = |x: Option<Lin>| x.map(|x| Cond::plain_cmp(x, Rel::Eq0));
    Some(match &**a {
        Atom::Div { x, d, floor } => {
            let dq = me.scale(*d)?;
            // floor: d·q ≤ x ≤ d·q + d − 1
            let down = Cond::and([ge(x.sub(&dq))?, ge(dq.add(&Lin::int(d - 1))?.sub(x))?]);
            if *floor {
                down
            } else {
                // towards zero: floor for x ≥ 0, ceiling (d·q − d + 1 ≤ x ≤ d·q) below
                let up = Cond::and([ge(dq.sub(x))?, ge(x.sub(&dq)?.add(&Lin::int(d - 1)))?]);
                let neg = Cond::cmp(x.scale(-1)?.add(&Lin::int(-1))?, Rel::Ge0);
                Cond::or([Cond::and([Cond::cmp(x.clone(), Rel::Ge0), down]), Cond::and([neg, up])])
            }
        }
        Atom::Rem { x, d } => {
            // r = x − d·(x / d)
            let q = Lin::atom(Atom::Div { x: x.clone(), d: *d, floor: false });
            eq(me.sub(x)?.add_scaled(&q, *d))?
        }
        Atom::Min(x, y) => {
            Cond::or([Cond::and([eq(me.sub(x))?, ge(y.sub(x))?]), Cond::and([eq(me.sub(y))?, ge(x.sub(y))?])])
        }
        Atom::Max(x, y) => {
            Cond::or([Cond::and([eq(me.sub(x))?, ge(x.sub(y))?]), Cond::and([eq(me.sub(y))?, ge(y.sub(x))?])])
        }
        Atom::Select(c, x, y) => Cond::or([
            Cond::and([(**c).clone(), eq(me.sub(x))?]),
            Cond::and([Cond::negate((**c).clone()), eq(me.sub(y))?]),
        ]),
        // a loop's sum (`summary`) is zero when the loop runs no iteration
        Atom::App(n, xs) if n.starts_with(super::summary::SUM) && xs.len() >= 2 => {
            Cond::or([ge(xs[1].sub(&xs[0]).and_then(|d| d.add(&Lin::int(-1))))?, eq(Some(me))?])
        }
        Atom::Var(_) | Atom::Load { .. } | Atom::Mul(..) | Atom::App(..) => return None,
    })
}

/// Equal arguments give equal values: for two reads of one buffer (as the kernel left it) and two applications of
/// one uninterpreted op, `args equal ⇒ values equal` — `buf[p + 1]` is `buf[1]` where `p = 0`. Pairs whose
/// arguments differ by a non-zero constant somewhere can never be equal and add nothing.
fn congruences(atoms: &[Sym]) -> Vec<Cond> {
    /// What must be the same for two atoms to be one function at two arguments, and the arguments.
    #[derive(PartialEq)]
    enum Fun<'a> {
        Read(u32, u32),
        Op(&'a str),
    }
    fn args(a: &Sym) -> Option<(Fun<'_>, &Vec<Lin>)> {
        match &**a {
            Atom::Load { buf, idx, version } => Some((Fun::Read(*buf, *version), idx)),
            Atom::App(n, xs) => Some((Fun::Op(n), xs)),
            _ => None,
        }
    }
    let reads: Vec<(&Sym, (Fun<'_>, &Vec<Lin>))> = atoms.iter().filter_map(|a| Some((a, args(a)?))).collect();
    let mut out = Vec::new();
    for (i, (a, (ka, xa))) in reads.iter().enumerate() {
        for (b, (kb, xb)) in &reads[i + 1..] {
            if out.len() >= MAX_CONGRUENCES {
                return out;
            }
            if ka != kb || xa.len() != xb.len() {
                continue;
            }
            let diffs: Option<Vec<Lin>> = xa.iter().zip(xb.iter()).map(|(x, y)| x.sub(y)).collect();
            let Some(diffs) = diffs else { continue };
            if diffs.iter().any(|d| d.as_int().is_some_and(|k| k != 0)) {
                continue;
            }
            let same_args = Cond::and(diffs.into_iter().map(|d| Cond::plain_cmp(d, Rel::Eq0)));
            let Some(same_value) = Lin::atom((***a).clone()).sub(&Lin::atom((***b).clone())) else { continue };
            out.push(Cond::or([Cond::negate(same_args), Cond::plain_cmp(same_value, Rel::Eq0)]));
        }
    }
    out
}

/// Congruence constraints per question at most (each is a disjunction the search may split on).
const MAX_CONGRUENCES: usize = 32;

#[cfg(test)]
mod tests {
    use super::super::term::test_var as v;
    use super::*;

    fn lt(a: &Lin, b: &Lin) -> Cond {
        Cond::compare("slt", a, b).unwrap()
    }

    #[test]
    fn a_flipped_slot_is_never_the_slot() {
        set_budget(10_000);
        let x = v(0, "slot");
        let flipped = Lin::select(&Cond::cmp(x.clone(), Rel::Eq0), &Lin::int(1), &Lin::int(0));
        // a widened boolean compares as its condition
        assert_eq!(Cond::cmp(flipped.clone(), Rel::Ne0), Cond::cmp(x.clone(), Rel::Eq0));
        // and the solver still knows what the select is worth where it is an atom
        let same = Cond::cmp(x.sub(&flipped).unwrap(), Rel::Eq0);
        let a = check(&same);
        assert!(a.is_unsat(), "{same} {a:?}");
        let guarded = Cond::and([same, Cond::cmp(v(1, "n").add(&Lin::int(-1)).unwrap(), Rel::Ge0)]);
        let a = check(&guarded);
        assert!(a.is_unsat(), "{guarded} {a:?}");
    }

    #[test]
    fn independent_parts_are_decided_apart_but_reads_of_one_buffer_stay_together() {
        set_budget(10_000);
        let (a, b, x) = (v(0, "a"), v(1, "b"), v(2, "x"));
        let is = |l: &Lin, k: i64| Cond::cmp(l.add(&Lin::int(-k)).unwrap(), Rel::Eq0);
        // x = 1 ∧ x = 2 refutes the whole, whatever the other part
        let c = Cond::and([is(&x, 1), is(&x, 2), is(&a, 3)]);
        assert_eq!(components(&c).len(), 2);
        assert!(check(&c).is_unsat());
        // buf[a] and buf[b] share no atom, but a = b = 3 makes them one read: the congruence must see both
        let read = |i: &Lin| Lin::atom(Atom::Load { buf: 4, idx: vec![i.clone()], version: 0 });
        let c = Cond::and([is(&read(&a), 1), is(&a, 3), is(&read(&b), 0), is(&b, 3)]);
        assert_eq!(components(&c).len(), 1);
        assert!(check(&c).is_unsat(), "{c}");
    }

    #[test]
    fn equal_sizes_are_shown_by_their_parts() {
        set_budget(10_000);
        let (p, q, j) = (v(0, "p"), v(1, "q"), v(2, "j"));
        let read = |i: &Lin| Lin::atom(Atom::Load { buf: 4, idx: vec![i.clone()], version: 0 });
        let c = Cond::cmp(j.clone(), Rel::Eq0);
        // a prefetch's `min(len[j = 0 ? p : q] - 8, 8)` is the wait's `min(len[p] - 8, 8)` where j = 0
        let next = Lin::select(&c, &p, &q);
        let size = |at: &Lin| read(at).add(&Lin::int(-8)).unwrap().min_of(&Lin::int(8));
        assert!(equal_by_parts(&c, &size(&next), &size(&p)));
        // not where j may be anything
        assert!(!equal_by_parts(&Cond::True, &size(&next), &size(&p)));
        // a loop's sums of one shape over equal bounds are equal
        let sum = |n: &Lin| super::super::summary::sum(&size(&j), 2, &Lin::int(0), n, 1);
        assert!(equal_by_parts(&c, &sum(&next), &sum(&p)));
        assert!(!equal_by_parts(&c, &sum(&next), &sum(&q)));
    }

    #[test]
    fn reads_at_equal_indices_are_equal() {
        set_budget(10_000);
        let p = v(0, "p");
        let read = |i: Lin, version: u32| Lin::atom(Atom::Load { buf: 1, idx: vec![i], version });
        let at_p1 = read(p.add(&Lin::int(1)).unwrap(), 0);
        let at_1 = read(Lin::int(1), 0);
        let p0 = Cond::cmp(p.clone(), Rel::Eq0);
        // where p = 0, buf[p + 1] is buf[1]
        let differ = Cond::and([p0.clone(), Cond::cmp(at_p1.sub(&at_1).unwrap(), Rel::Ne0)]);
        assert!(check(&differ).is_unsat(), "{differ}");
        // elsewhere, or after a store (another version), nothing ties them
        let elsewhere = Cond::and([
            Cond::cmp(p.add(&Lin::int(-1)).unwrap(), Rel::Eq0),
            Cond::cmp(at_p1.sub(&at_1).unwrap(), Rel::Ne0),
        ]);
        assert!(matches!(check(&elsewhere), Answer::Sat(_)));
        let stored = Cond::and([p0, Cond::cmp(at_p1.sub(&read(Lin::int(1), 1)).unwrap(), Rel::Ne0)]);
        assert!(matches!(check(&stored), Answer::Sat(_)));
    }

    #[test]
    fn what_holds_around_a_negation_is_taken_out_of_it() {
        let (a, b) = (Cond::cmp(v(0, "a"), Rel::Ge0), Cond::cmp(v(1, "b"), Rel::Ge0));
        let c = Cond::and([a.clone(), Cond::negate(Cond::and([a.clone(), b.clone()]))]);
        assert_eq!(in_context(&c), Cond::and([a.clone(), Cond::negate(b.clone())]));
        // a negated conjunction whose every part holds is false
        let d = Cond::and([a.clone(), b.clone(), Cond::negate(Cond::and([a, b]))]);
        assert_eq!(in_context(&d), Cond::False);
    }

    #[test]
    fn a_select_repeating_the_questions_guard_is_read_under_it() {
        let (i, n, z) = (v(0, "i"), v(1, "n"), v(2, "z"));
        let guard = lt(&i, &n);
        let zero = Cond::cmp(z.clone(), Rel::Eq0);
        // `(i < n ∧ z = 0 ? 1 : 0) = 1` where i < n is `(z = 0 ? 1 : 0) = 1`, that is `z = 0`
        let sel = |c: Cond| Lin::select(&c, &Lin::int(1), &Lin::int(0));
        let is_one = |l: Lin| Cond::plain_cmp(l.add(&Lin::int(-1)).unwrap(), Rel::Eq0);
        let c = Cond::and([guard.clone(), is_one(sel(Cond::and([guard.clone(), zero.clone()])))]);
        assert_eq!(selects_in_context(&c), Cond::and([guard, zero]));
    }

    #[test]
    fn the_same_question_about_new_names_is_answered_once() {
        set_budget(10_000);
        let q = |i: u32, n: u32| {
            let (i, n) = (v(i, "i"), v(n, "n"));
            Cond::and([lt(&i, &n), Cond::cmp(i.scale(2).unwrap().sub(&n).unwrap(), Rel::Eq0)])
        };
        let Answer::Sat(m1) = check(&q(3, 4)) else { panic!() };
        let left = BUDGET.with(|b| b.get());
        // the next induction pass: the same loop with fresh variables
        let Answer::Sat(m2) = check(&q(10, 12)) else { panic!() };
        assert_eq!(BUDGET.with(|b| b.get()), left);
        assert!(super::super::holds(&q(10, 12), &m2) && super::super::holds(&q(3, 4), &m1));
    }

    #[test]
    fn prefetch_guard_implies_the_next_wait() {
        // 0 ≤ i, i + 1 < n  ⇒  0 ≤ i + 1 < n
        let (i, n) = (v(0, "i"), v(1, "n"));
        let ctx = Cond::and([Cond::cmp(i.clone(), Rel::Ge0), lt(&i.add(&Lin::int(1)).unwrap(), &n)]);
        let goal = Cond::and([lt(&Lin::int(-1), &i.add(&Lin::int(1)).unwrap()), lt(&i, &n)]);
        assert_eq!(implies(&ctx, &goal), Some(true));
        // but not i + 2 < n
        assert_eq!(implies(&ctx, &lt(&i.add(&Lin::int(2)).unwrap(), &n)), Some(false));
    }

    #[test]
    fn slots_by_remainder() {
        // 0 ≤ i: (i + 1) % 2 ≠ i % 2, and (i + 2) % 2 = i % 2
        let i = v(0, "i");
        let ctx = Cond::cmp(i.clone(), Rel::Ge0);
        let a = i.add(&Lin::int(1)).unwrap().rem(2).unwrap();
        let b = i.rem(2).unwrap();
        let c = i.add(&Lin::int(2)).unwrap().rem(2).unwrap();
        assert_eq!(implies(&ctx, &Cond::cmp(a.sub(&b).unwrap(), Rel::Ne0)), Some(true));
        assert_eq!(implies(&ctx, &Cond::cmp(c.sub(&b).unwrap(), Rel::Eq0)), Some(true));
    }

    #[test]
    fn zero_byte_selects_and_witnesses() {
        // bytes = select(i + 1 < n, 512, 0): non-zero exactly when i + 1 < n
        let (i, n) = (v(0, "i"), v(1, "n"));
        let valid = lt(&i.add(&Lin::int(1)).unwrap(), &n);
        let bytes = Lin::select(&valid, &Lin::int(512), &Lin::int(0));
        let nz = Cond::cmp(bytes, Rel::Ne0);
        assert_eq!(implies(&nz, &valid), Some(true));
        // a witness: values that make the bytes non-zero, checked
        let Answer::Sat(m) = check(&Cond::and([nz, Cond::cmp(i.clone(), Rel::Ge0)])) else { panic!() };
        let get = |a: &Sym| m.get(a).copied();
        let (iv, nv) = (i.eval(&get).unwrap(), n.eval(&get).unwrap());
        assert!(iv >= 0 && iv + 1 < nv, "{iv} {nv}");
    }

    #[test]
    fn jax_floor_division_correction_is_a_negative_remainder() {
        // Python's `x // 128` as jax lowers it: select(sign(x) ≠ sign(128) ∧ x % 128 ≠ 0, x / 128 − 1, x / 128)
        let x = v(0, "x").add(&Lin::int(127)).unwrap();
        let ind = |c: Cond| Lin::select(&c, &Lin::int(1), &Lin::int(0));
        let zero = Lin::int(0);
        let sign_x = ind(Cond::compare("sgt", &x, &zero).unwrap()).sub(&ind(lt(&x, &zero))).unwrap();
        let r = x.rem(128).unwrap();
        let c =
            Cond::and([Cond::compare("ne", &sign_x, &Lin::int(1)).unwrap(), Cond::compare("ne", &r, &zero).unwrap()]);
        let negative = lt(&r, &zero);
        assert_eq!(implies(&c, &negative), Some(true));
        assert_eq!(implies(&negative, &c), Some(true));
        assert_eq!(equivalent(&c, &negative), Some(true));
    }

    #[test]
    fn integer_gaps_and_min_max() {
        // 2x = 1 has no integer solution: tightening proves it
        let x = v(0, "x");
        assert_eq!(check(&Cond::cmp(x.scale(2).unwrap().add(&Lin::int(-1)).unwrap(), Rel::Eq0)), Answer::Unsat);
        let y = v(1, "y");
        let m = x.min_of(&y);
        assert_eq!(implies(&Cond::True, &Cond::compare("sle", &m, &x).unwrap()), Some(true));
        assert_eq!(implies(&Cond::True, &Cond::compare("slt", &m, &x).unwrap()), Some(false));
    }
}
