//! Sampled paths: when exploring every path runs out of budget, single paths are run through the whole grid with
//! each undecided value *chosen* instead of forked on, so that a bug on some path can still be shown by one
//! concrete run (a witness) rather than lost.
//!
//! A sampled path stays exact: a comparison on an unknown picks one side and narrows the unknown's interval to it
//! (as a fork would, keeping one branch), and where the exhaustive simulation would lose a value (an index read at
//! an unknown position, arithmetic on two unknowns, a select on an unknown condition) the unknowns involved are
//! *pinned* to one value of their interval (small non-negative values first: lengths, counts and indices). Every
//! choice is consistent with the earlier ones, so a path that took no vague decision is a run some input values
//! produce, and a failure on it is a real one. A choice the simulation cannot make exactly (a value it has lost)
//! still makes the path vague, and a vague path's failures are not reported. Choices come from a fixed-seed
//! generator: the same dump gives the same samples.
//!
//! Inputs are sampled under one prior, because a kernel's correctness often rests on properties of its scalar
//! inputs that the code does not check: jax's ragged paged attention, for one, leaves a prefetched block unwaited
//! when a sequence has no key/value tokens or when trailing sequences have no query tokens, inputs its callers never
//! pass (its `cu_q_lens` is a cumulative sum of positive lengths, every `kv_len` at least its `q_len`). So a
//! one-dimensional integer array read from memory (lengths, offsets, counts) is taken as positive and strictly
//! increasing along its index: no empty sequence, group or range, cumulative offsets in order. The prior only
//! narrows the inputs sampled (a side it rules out is taken only when no side satisfies it), so it can hide a bug
//! that needs degenerate inputs (the analysis then stays inconclusive), never show one that needs them.

use super::*;
use std::cell::Cell;

/// Paths sampled when the exhaustive simulation is inconclusive, and the op budget of each.
pub const SAMPLES: usize = 24;
pub const SAMPLE_BUDGET: u64 = 150_000;
/// Sampled runs an op must have run (and failed on, every one) to be reported from samples.
pub const MIN_WITNESSES: usize = 2;

/// What a finding from samples says about how it was found.
pub fn witness_note(failed: usize, sampled: usize) -> String {
    format!(
        " (on each of the {failed} sampled run(s) that reached this op: exploring every path ran out of budget, so \
         {sampled} single runs were sampled, the values read at run time chosen one decision at a time, each choice \
         consistent with the earlier ones)"
    )
}

/// `scf.while` iterations a sampled path may run (its conditions are decided, not forked on).
pub const SAMPLE_ITERS: i64 = 64;

/// xorshift64*: small, deterministic, good enough to spread choices.
#[derive(Debug)]
pub struct Rng(Cell<u64>);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(Cell::new(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1))
    }
    fn next(&self) -> u64 {
        let mut x = self.0.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0.set(x);
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    pub fn coin(&self) -> bool {
        self.next() >> 63 == 1
    }
    /// A value of `[lo, hi]`, small non-negative ones first (most unknowns are lengths, counts, indices).
    fn pick(&self, lo: i64, hi: i64) -> i64 {
        let a = if hi < 0 { hi } else { lo.max(0) };
        let span: i64 = if self.below(4) < 3 { 8 } else { 64 };
        let top = if hi < 0 { hi } else { hi.min(a.saturating_add(span)) };
        let (from, to) = if hi < 0 { (lo.max(hi.saturating_sub(span)), top) } else { (a, top) };
        let width = (to as i128 - from as i128 + 1).max(1) as u64;
        from.saturating_add(self.below(width) as i64)
    }
}

/// The value a symbolic value has now that its unknowns' intervals may have narrowed to a point (or its condition
/// decided): `Int` when known, else the value itself. Sound in either mode.
pub(super) fn resolve(s: &State, v: SimValue) -> SimValue {
    match v {
        SimValue::Sym { atom, ref f } => match s.atoms.get(atom as usize) {
            Some(&(lo, hi)) if lo == hi => {
                let x = apply(f, lo);
                i64::try_from(x).map(SimValue::Int).unwrap_or(SimValue::Unknown)
            }
            _ => v,
        },
        SimValue::Cond { atom, lo, hi, neg } => match s.atoms.get(atom as usize) {
            Some(&(alo, ahi)) if alo >= lo && ahi <= hi => SimValue::Int(i64::from(!neg)),
            Some(&(alo, ahi)) if ahi < lo || alo > hi => SimValue::Int(i64::from(neg)),
            _ => v,
        },
        // a conjunction is decided false by a false part and drops its true ones; a disjunction the other way round
        SimValue::All(parts) => junction(s, parts, true),
        SimValue::AnyOf(parts) => junction(s, parts, false),
        other => other,
    }
}

/// `All` (`all`) or `AnyOf` of `parts`, each resolved: decided when a part decides it or every part is known, else
/// the parts still open.
fn junction(s: &State, parts: Vec<SimValue>, all: bool) -> SimValue {
    let mut open = Vec::new();
    for p in parts {
        match resolve(s, p) {
            SimValue::Int(x) if (x != 0) != all => return SimValue::Int(i64::from(!all)),
            SimValue::Int(_) => {}
            p => open.push(p),
        }
    }
    match open.len() {
        0 => SimValue::Int(i64::from(all)),
        1 => open.pop().unwrap_or(SimValue::Unknown),
        _ if all => SimValue::All(open),
        _ => SimValue::AnyOf(open),
    }
}

/// The interval the prior allows atom `atom` (see the module doc): positive, above every element read before it in
/// its array, below every element read after it (by their current intervals); unbounded when it was not read from
/// a 1-D array.
fn order_bounds(s: &State, atom: u32) -> (i64, i64) {
    let Some(&(base, k)) = s.origin.get(&atom) else { return (ATOM_MIN, ATOM_MAX) };
    // element k of a positive, strictly increasing array is at least k + 1, and at least k - j more than element j
    let (mut lo, mut hi) = (k.saturating_add(1), ATOM_MAX);
    for ((b, idx), v) in s.mem.range((base, Vec::new())..) {
        if *b != base {
            break;
        }
        let [j] = idx.as_slice() else { continue };
        let (vlo, vhi) = match resolve(s, v.clone()) {
            SimValue::Int(x) => (x, x),
            SimValue::Sym { atom: a, ref f } if f.is_empty() && a != atom => {
                s.atoms.get(a as usize).copied().unwrap_or((ATOM_MIN, ATOM_MAX))
            }
            _ => continue,
        };
        if *j < k {
            lo = lo.max(vlo.saturating_add(k - j));
        } else if *j > k {
            hi = hi.min(vhi.saturating_sub(j - k));
        }
    }
    (lo, hi)
}

/// A value the sampler can decide or pin.
pub(super) fn symbolic(v: &SimValue) -> bool {
    matches!(v, SimValue::Sym { .. }) || is_cond(v)
}

impl Sim<'_, '_> {
    /// Whether this simulator samples one path (chooses instead of forking).
    pub(super) fn sampling(&self) -> bool {
        self.rng.is_some()
    }

    /// Pins an unknown (or decides a condition) on a sampled path: the atom's interval narrows to one value, kept
    /// in `range` of `f(atom)` when given (an index inside its dimension). `None` when no such value exists.
    pub(super) fn pin(&self, s: &mut State, v: &SimValue, range: Option<(i64, i64)>) -> Option<i64> {
        let rng = self.rng.as_ref()?;
        match resolve(s, v.clone()) {
            SimValue::Int(x) => Some(x),
            SimValue::Sym { atom, f } => {
                let &(alo, ahi) = s.atoms.get(atom as usize)?;
                let (mut lo, mut hi) = (alo, ahi);
                if let Some((r0, r1)) = range {
                    let (a0, a1) = interval(&|x: i64| apply(&f, x) >= r0 as i128)?;
                    let (b0, b1) = interval(&|x: i64| apply(&f, x) <= r1 as i128)?;
                    lo = lo.max(a0).max(b0);
                    hi = hi.min(a1).min(b1);
                    if lo > hi {
                        return None;
                    }
                }
                let (plo, phi) = order_bounds(s, atom);
                if plo.max(lo) <= phi.min(hi) {
                    lo = lo.max(plo);
                    hi = hi.min(phi);
                }
                let x = rng.pick(lo, hi);
                s.atoms[atom as usize] = (x, x);
                i64::try_from(apply(&f, x)).ok()
            }
            c if is_cond(&c) => self.choose(s, &c).map(i64::from),
            _ => None,
        }
    }

    /// Decides condition `c` one way on a sampled path, narrowing the unknowns to it: a random side among those
    /// some value allows. `None` when it is not a condition the simulation can narrow (a value it lost).
    pub(super) fn choose(&self, s: &mut State, c: &SimValue) -> Option<bool> {
        let rng = self.rng.as_ref()?;
        let c = resolve(s, c.clone());
        if let SimValue::Int(x) = c {
            return Some(x != 0);
        }
        let want = rng.coin();
        // a side the order prior allows first, either side only when neither does
        for (w, strict) in [(want, true), (!want, true), (want, false), (!want, false)] {
            let mut t = s.clone();
            if self.force(&mut t, &c, w, strict) {
                *s = t;
                return Some(w);
            }
        }
        None
    }

    /// Narrows `s` so that `c` is `want`; false when no value of the unknowns allows it (or `c` is lost).
    fn force(&self, s: &mut State, c: &SimValue, want: bool, strict: bool) -> bool {
        let Some(rng) = self.rng.as_ref() else { return false };
        match resolve(s, c.clone()) {
            SimValue::Int(x) => (x != 0) == want,
            SimValue::Cond { atom, lo, hi, neg } => {
                let Some(&(alo, ahi)) = s.atoms.get(atom as usize) else { return false };
                let inside = want != neg;
                let options: Vec<(i64, i64)> = if inside {
                    vec![(alo.max(lo), ahi.min(hi))]
                } else {
                    vec![(alo, ahi.min(lo.saturating_sub(1))), (alo.max(hi.saturating_add(1)), ahi)]
                };
                let options: Vec<(i64, i64)> = options.into_iter().filter(|(a, b)| a <= b).collect();
                if options.is_empty() {
                    return false;
                }
                // sides the order prior allows, when one does
                let (plo, phi) = order_bounds(s, atom);
                let ordered: Vec<(i64, i64)> =
                    options.iter().map(|&(a, b)| (a.max(plo), b.min(phi))).filter(|(a, b)| a <= b).collect();
                if strict && ordered.is_empty() {
                    return false;
                }
                let options = if ordered.is_empty() { options } else { ordered };
                s.atoms[atom as usize] = options[rng.below(options.len() as u64) as usize];
                true
            }
            SimValue::All(parts) | SimValue::AnyOf(parts) => {
                // an `All` is true when every part is, false when one (any) part is; an `AnyOf` the other way round
                let every = want == matches!(c, SimValue::All(_));
                let target = want;
                if every {
                    parts.iter().all(|p| self.force(s, p, target, strict))
                } else {
                    let start = rng.below(parts.len() as u64) as usize;
                    for k in 0..parts.len() {
                        let p = &parts[(start + k) % parts.len()];
                        let mut t = s.clone();
                        if self.force(&mut t, p, target, strict) {
                            *s = t;
                            return true;
                        }
                    }
                    false
                }
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(atoms: Vec<(i64, i64)>) -> State {
        State { atoms, ..State::default() }
    }

    /// `cu[0..n]` read as atoms 0..n of a 1-D array argument.
    fn array(s: &mut State, n: usize) {
        for i in 0..n {
            s.origin.insert(i as u32, (Base::Arg(0), i as i64));
            s.mem.insert((Base::Arg(0), vec![i as i64]), SimValue::Sym { atom: i as u32, f: Vec::new() });
        }
    }

    #[test]
    fn narrowed_values_resolve() {
        let s = state(vec![(5, 5), (0, 9)]);
        assert_eq!(resolve(&s, SimValue::Sym { atom: 0, f: vec![Step::Mul(2)] }), SimValue::Int(10));
        assert!(matches!(resolve(&s, SimValue::Sym { atom: 1, f: vec![] }), SimValue::Sym { .. }));
        assert_eq!(resolve(&s, SimValue::Cond { atom: 1, lo: 0, hi: 20, neg: false }), SimValue::Int(1));
        assert_eq!(resolve(&s, SimValue::Cond { atom: 1, lo: 10, hi: 20, neg: true }), SimValue::Int(1));
        let open = SimValue::Cond { atom: 1, lo: 3, hi: 4, neg: false };
        assert_eq!(
            resolve(&s, SimValue::All(vec![SimValue::Cond { atom: 0, lo: 5, hi: 5, neg: false }, open.clone()])),
            open
        );
        assert_eq!(
            resolve(&s, SimValue::AnyOf(vec![SimValue::Cond { atom: 0, lo: 5, hi: 5, neg: false }, open])),
            SimValue::Int(1)
        );
    }

    #[test]
    fn picks_stay_inside_their_interval_and_repeat() {
        let (a, b) = (Rng::new(7), Rng::new(7));
        for (lo, hi) in [(0, 0), (-5, -1), (3, 1000), (ATOM_MIN, ATOM_MAX), (ATOM_MIN, -3)] {
            for _ in 0..200 {
                let x = a.pick(lo, hi);
                assert!((lo..=hi).contains(&x), "{x} outside [{lo}, {hi}]");
                assert_eq!(x, b.pick(lo, hi), "same seed, same choices");
            }
        }
        // small non-negative values first: lengths and counts
        assert!((0..=64).contains(&a.pick(ATOM_MIN, ATOM_MAX)));
    }

    #[test]
    fn choices_narrow_consistently_and_keep_arrays_ordered() {
        let m = crate::parse::mlir::parse_mlir("t.mlir", "module {\n}\n").expect("parses");
        for seed in 0..50 {
            let mut sim = Sim::new(&m, Mode::Balance);
            sim.rng = Some(Rng::new(seed));
            let mut s = state(vec![(ATOM_MIN, ATOM_MAX); 3]);
            array(&mut s, 3);
            // cu[2] < 40 decided one way, then cu[1] pinned, then cu[0] >= 1 decided
            let c = SimValue::Cond { atom: 2, lo: ATOM_MIN, hi: 39, neg: false };
            let side = sim.choose(&mut s, &c).expect("decidable");
            assert_eq!(resolve(&s, c.clone()), SimValue::Int(i64::from(side)), "the decision sticks");
            let x1 = sim.pin(&mut s, &SimValue::Sym { atom: 1, f: vec![] }, None).expect("pinnable");
            assert_eq!(s.atoms[1], (x1, x1));
            // the prior: positive and strictly increasing along the array
            assert!(x1 >= 2 && x1 < s.atoms[2].1, "cu[1] = {x1}, cu[2] in {:?}", s.atoms[2]);
            let x0 = sim.pin(&mut s, &SimValue::Sym { atom: 0, f: vec![] }, None).expect("pinnable");
            assert!((1..x1).contains(&x0), "cu[0] = {x0}, cu[1] = {x1}");
        }
    }

    #[test]
    fn an_index_is_pinned_inside_its_dimension() {
        let m = crate::parse::mlir::parse_mlir("t.mlir", "module {\n}\n").expect("parses");
        let mut sim = Sim::new(&m, Mode::Balance);
        sim.rng = Some(Rng::new(3));
        for _ in 0..50 {
            let mut s = state(vec![(ATOM_MIN, ATOM_MAX)]);
            // (x + 3) in [0, 7]
            let x =
                sim.pin(&mut s, &SimValue::Sym { atom: 0, f: vec![Step::Add(3)] }, Some((0, 7))).expect("in bounds");
            assert!((0..=7).contains(&x), "{x}");
        }
        let mut s = state(vec![(100, 200)]);
        assert_eq!(sim.pin(&mut s, &SimValue::Sym { atom: 0, f: vec![] }, Some((0, 7))), None, "no such value");
    }

    #[test]
    fn conjunctions_are_forced_part_by_part() {
        let m = crate::parse::mlir::parse_mlir("t.mlir", "module {\n}\n").expect("parses");
        let mut sim = Sim::new(&m, Mode::Balance);
        for seed in 0..30 {
            sim.rng = Some(Rng::new(seed));
            let mut s = state(vec![(0, 100), (0, 100)]);
            let c = SimValue::All(vec![
                SimValue::Cond { atom: 0, lo: 10, hi: 20, neg: false },
                SimValue::Cond { atom: 1, lo: 0, hi: 5, neg: true },
            ]);
            let side = sim.choose(&mut s, &c).expect("decidable");
            assert_eq!(resolve(&s, c), SimValue::Int(i64::from(side)), "seed {seed}: {:?}", s.atoms);
        }
        // a value the simulation lost cannot be chosen exactly
        let mut s = state(vec![]);
        assert_eq!(sim.choose(&mut s, &SimValue::Unknown), None);
    }
}
