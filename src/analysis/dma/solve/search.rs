//! The case search: a question's conjunctions of linear constraints, split lazily and refuted with
//! conflict-directed backjumping.
//!
//! Every plain constraint goes into the cube first and the cube is decided by [`fourier_motzkin`]; a model of the
//! cube that also satisfies every pending disjunction (and `≠`) is a model of the whole, and only a disjunction
//! the model breaks is split. Most questions are decided by their linear part alone — a loop's range contradicts
//! the guard — without visiting the product of their case splits.
//!
//! What each constraint depends on is kept: the case splits (by depth on the current path) whose chosen side it
//! came from, or whose side made it exist. A refutation names the constraints that contradict each other, hence
//! the splits it depends on; when it does not depend on the split being tried, that split's other sides would be
//! refuted the same way and are skipped (backjumping). The guards of a loop nest make many independent
//! disjunctions; without this the search refuted the same contradiction under every combination of their sides.

use super::bits::Bits;
use super::fm::fourier_motzkin;
use super::{in_scope, spend, Answer, Cond, Lin, Model, Rel, Sym, MAX_CASES, MAX_NODES};

/// A condition and the case splits it depends on.
type Dep<T> = (T, Bits);

#[derive(Default)]
pub(super) struct Search {
    cases: u32,
    /// Branch points visited (a bound on the whole search, not only its leaves).
    nodes: u32,
    pub unknown: Option<&'static str>,
    pub found: Option<Model>,
}

impl Search {
    /// Decides `whole`: afterwards `found` holds a model of the cubes, or `unknown` why there is no answer, or
    /// neither when `whole` is refuted.
    pub fn start(&mut self, whole: &Cond) {
        self.run(vec![(whole.clone(), Bits::default())], Vec::new(), 0);
    }

    /// Decides `todo ∧ cube` at split depth `depth`: `Some(splits)` when refuted, naming the splits the refutation
    /// depends on; `None` when a model was found or the search gave up.
    fn run(&mut self, mut todo: Vec<Dep<Cond>>, mut cube: Vec<Dep<(Lin, Rel)>>, depth: usize) -> Option<Bits> {
        let mut splits: Vec<Dep<Cond>> = Vec::new();
        let mut seen = cube.len();
        loop {
            while let Some((c, d)) = todo.pop() {
                match c {
                    Cond::True => {}
                    Cond::False => return Some(d),
                    Cond::Cmp(x, Rel::Ne0) => splits.push((Cond::Cmp(x, Rel::Ne0), d)),
                    Cond::Cmp(x, r) => cube.push(((x, r), d)),
                    Cond::And(xs) => todo.extend(xs.into_iter().map(|x| (x, d.clone()))),
                    Cond::Or(xs) => splits.push((Cond::Or(xs), d)),
                    Cond::Not(x) => todo.push((push_not(*x), d)),
                }
            }
            let fresh = seen;
            seen = cube.len();
            match propagate(&cube[fresh..], std::mem::take(&mut splits)) {
                Err(conflict) => return Some(conflict),
                Ok((left, units)) => {
                    splits = left;
                    if units.is_empty() {
                        break;
                    }
                    todo = units;
                }
            }
        }
        self.nodes += 1;
        if self.nodes > MAX_NODES || !spend() {
            self.unknown = Some("too many cases");
            return None;
        }
        let plain: Vec<&(Lin, Rel)> = cube.iter().map(|(x, _)| x).collect();
        // the cube's model, when it has one: only the splits it breaks need a case split
        let model = match fourier_motzkin(&plain) {
            (Answer::Unsat, core) => {
                let mut conflict = Bits::default();
                core.iter().filter_map(|i| cube.get(i)).for_each(|(_, d)| conflict.union(d));
                return Some(conflict);
            }
            (Answer::Sat(m), _) => {
                let get = |a: &Sym| m.get(a).copied().or(Some(0));
                if splits.iter().all(|(s, _)| s.eval(&get) == Some(true)) {
                    self.found = Some(m);
                    return None;
                }
                Some(m)
            }
            // no integer model found for the cube: the cases below may still all be contradictory
            (Answer::Unknown(why), _) if splits.is_empty() => {
                self.unknown = Some(why);
                return None;
            }
            (Answer::Unknown(_), _) => None,
        };
        self.cases += 1;
        if self.cases > MAX_CASES {
            self.unknown = Some("too many cases");
            return None;
        }
        // of the cases the model breaks (all, without a model), the one with fewest sides — the first of those:
        // fewer branches to refute
        let broken = |s: &Cond| match &model {
            Some(m) => s.eval(&|a: &Sym| m.get(a).copied().or(Some(0))) != Some(true),
            None => true,
        };
        let pick =
            (0..splits.len()).filter(|&i| broken(&splits[i].0)).min_by_key(|&i| sides(&splits[i].0)).unwrap_or(0);
        let (split, d) = splits.swap_remove(pick);
        let sides = match split {
            Cond::Cmp(x, _) => {
                // x ≠ 0: x ≥ 1 or −x ≥ 1
                let (Some(p), Some(n)) = (x.add(&Lin::int(-1)), x.scale(-1).and_then(|n| n.add(&Lin::int(-1)))) else {
                    self.unknown = Some("integer overflow");
                    return None;
                };
                vec![Cond::Cmp(p, Rel::Ge0), Cond::Cmp(n, Rel::Ge0)]
            }
            Cond::Or(xs) => xs,
            _ => return None,
        };
        let level = depth + 1;
        let mut chosen = d.clone();
        chosen.insert(level);
        // the refutation of every side: what each depended on besides the side itself, and the split's own origin
        let mut all = d;
        for side in sides {
            let mut t = splits.clone();
            t.push((side, chosen.clone()));
            let conflict = self.run(t, cube.clone(), level)?;
            if !conflict.contains(level) {
                // refuted whichever side is taken: the other sides need not be tried
                return Some(conflict);
            }
            let mut rest = conflict;
            rest.remove(level);
            all.union(&rest);
        }
        Some(all)
    }
}

/// The cases a split has.
fn sides(c: &Cond) -> usize {
    match c {
        Cond::Or(xs) => xs.len(),
        _ => 2,
    }
}

/// Boolean propagation before any case split: each pending case split is read where the cube's comparisons hold
/// (`in_scope`): one whose every side contradicts them refutes the cube (`Err`, with what that depended on), one
/// already true goes, and one with a single side left is no split at all — that side is returned to join the
/// cube. The guards of a loop nest repeat the same comparisons in every disjunction; without this the search
/// splits on each and refutes it again in every branch.
///
/// `cube` holds only the comparisons added since the splits were last read this way (what a parent propagated
/// stays propagated in the splits it hands down). A split read under them depends, from then on, on what they
/// depend on (all of them: which ones simplified it is not tracked).
#[allow(clippy::type_complexity)]
fn propagate(cube: &[Dep<(Lin, Rel)>], splits: Vec<Dep<Cond>>) -> Result<(Vec<Dep<Cond>>, Vec<Dep<Cond>>), Bits> {
    if cube.is_empty() {
        return Ok((splits, Vec::new()));
    }
    let mut lits: Vec<Cond> = cube.iter().map(|((x, r), _)| Cond::Cmp(x.clone(), *r)).collect();
    let mut under = Bits::default();
    cube.iter().for_each(|(_, d)| under.union(d));
    let mut left = Vec::new();
    let mut units = Vec::new();
    for (s, d) in splits {
        let read = match &s {
            Cond::Cmp(x, Rel::Ne0) if lits.contains(&Cond::Cmp(x.clone(), Rel::Eq0)) => Cond::False,
            Cond::Or(xs) => Cond::or(xs.iter().map(|x| in_scope(x, &mut lits))),
            _ => s.clone(),
        };
        let d = if read == s {
            d
        } else {
            let mut d = d;
            d.union(&under);
            d
        };
        match read {
            Cond::False => return Err(d),
            Cond::True => {}
            Cond::Or(xs) => left.push((Cond::Or(xs), d)),
            Cond::Cmp(x, Rel::Ne0) => left.push((Cond::Cmp(x, Rel::Ne0), d)),
            unit => units.push((unit, d)),
        }
    }
    Ok((left, units))
}

/// `¬c` with the negation pushed one level in.
fn push_not(c: Cond) -> Cond {
    match c {
        Cond::And(xs) => Cond::or(xs.into_iter().map(Cond::negate)),
        Cond::Or(xs) => Cond::and(xs.into_iter().map(Cond::negate)),
        c => Cond::negate(c),
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::term::test_var as v;
    use super::*;

    #[test]
    fn a_split_whose_other_sides_contradict_the_cube_is_no_split() {
        let (x, y, z) = (v(0, "x"), v(1, "y"), v(2, "z"));
        let ge = |l: &Lin| Cond::cmp(l.clone(), Rel::Ge0);
        let x_neg = Cond::negate(ge(&x));
        let y0 = Cond::cmp(y.clone(), Rel::Eq0);
        let at = |level: usize| Bits::one(level);
        // x ≥ 0 holds (from the side chosen at split 1): the side `x < 0` is false, the side `y = 0 ∧ y ≠ 0` is
        // false by itself, `z ≥ 0` is left, and depends on split 1 and on the split's own origin (split 0)
        let split = Cond::or([Cond::and([x_neg.clone(), ge(&z)]), Cond::and([y0.clone(), Cond::negate(y0)]), ge(&z)]);
        let cube = [((x.clone(), Rel::Ge0), at(1))];
        let (left, units) = propagate(&cube, vec![(split, at(0))]).unwrap();
        assert!(left.is_empty());
        let mut both = at(0);
        both.insert(1);
        assert_eq!(units, vec![(ge(&z), both.clone())]);
        // every side false: the cube is refuted without a case split, by what both depend on
        let dead = Cond::or([x_neg.clone(), Cond::and([x_neg, ge(&z)])]);
        assert_eq!(propagate(&cube, vec![(dead, at(0))]).err(), Some(both));
    }

    #[test]
    fn a_refutation_that_does_not_depend_on_a_split_skips_its_other_sides() {
        super::super::set_budget(10_000);
        // x ≥ 5 ∧ x ≤ 3 contradict whatever side of the twelve splits `y_k = 1 ∨ y_k = 2` is taken; those are
        // split first (fewer sides than the one that brings the bounds), but each refutation names only the bounds
        let x = v(0, "x");
        let mut parts = vec![];
        for k in 1..=12 {
            let y = v(k, "y");
            let is = |c: i64| Cond::cmp(y.add(&Lin::int(-c)).unwrap(), Rel::Eq0);
            parts.push(Cond::or([is(1), is(2)]));
        }
        let bounds = Cond::and([
            Cond::cmp(x.add(&Lin::int(-5)).unwrap(), Rel::Ge0),
            Cond::cmp(x.scale(-1).unwrap().add(&Lin::int(3)).unwrap(), Rel::Ge0),
        ]);
        let w = |c: i64| Cond::cmp(v(20, "w").add(&Lin::int(-c)).unwrap(), Rel::Eq0);
        parts.push(Cond::or([
            Cond::and([bounds.clone(), w(1)]),
            Cond::and([bounds.clone(), w(2)]),
            Cond::and([bounds, w(3)]),
        ]));
        let mut s = Search::default();
        s.start(&Cond::and(parts));
        assert!(s.found.is_none() && s.unknown.is_none());
        assert!(s.nodes < 64, "{} nodes", s.nodes);
    }
}
