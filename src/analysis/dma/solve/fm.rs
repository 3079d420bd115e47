//! Fourier–Motzkin elimination with integer tightening: the decision of one conjunction of linear constraints
//! (the module above splits a question into such cubes).

use super::bits::Bits;
use super::*;

/// One row: `Σ a·x + c ≥ 0` over the variables of the elimination, and the cube's constraints it was derived from
/// (a row `0 ≥ 1` names the constraints that contradict each other: the search's conflicts).
#[derive(Clone, Debug)]
struct Row {
    a: Vec<i64>,
    c: i64,
    from: Bits,
}

/// Sorts rows and keeps one of each (the first derivation).
fn dedup(rows: &mut Vec<Row>) {
    rows.sort_by(|x, y| (&x.a, x.c).cmp(&(&y.a, y.c)));
    rows.dedup_by(|x, y| x.a == y.a && x.c == y.c);
}

fn gcd(a: i64, b: i64) -> i64 {
    let (mut a, mut b) = (a.unsigned_abs(), b.unsigned_abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a as i64
}

impl Row {
    /// Divides by the coefficients' gcd, rounding the constant down (integer tightening); `Err` when the row is a
    /// constant: `None` when it holds, the constraints it came from when it does not.
    fn tighten(mut self) -> Result<Row, Option<Bits>> {
        let g = self.a.iter().fold(0, |g, &x| gcd(g, x));
        if g == 0 {
            return Err((self.c < 0).then_some(self.from));
        }
        if g > 1 {
            for x in self.a.iter_mut() {
                *x /= g;
            }
            self.c = self.c.div_euclid(g);
        }
        Ok(self)
    }
}

/// Decides one conjunction; when it is `Unsat`, also which of its constraints contradict each other.
pub(super) fn fourier_motzkin(cube: &[&(Lin, Rel)]) -> (Answer, Bits) {
    match eliminate(cube) {
        Ok(a) => (a, Bits::default()),
        Err(core) => (Answer::Unsat, core),
    }
}

/// [`fourier_motzkin`], a refutation as `Err` with its constraints.
fn eliminate(cube: &[&(Lin, Rel)]) -> Result<Answer, Bits> {
    let mut vars: Vec<Sym> = Vec::new();
    let mut index: HashMap<Sym, usize> = HashMap::new();
    for (x, _) in cube {
        for a in x.terms.keys() {
            index.entry(a.clone()).or_insert_with(|| {
                vars.push(a.clone());
                vars.len() - 1
            });
        }
    }
    let n = vars.len();
    let row_of = |x: &Lin, i: usize| {
        let mut a = vec![0; n];
        for (v, &k) in &x.terms {
            a[index[v]] = k;
        }
        Row { a, c: x.c, from: Bits::one(i) }
    };
    let mut rows: Vec<Row> = Vec::new();
    // equalities with a unit coefficient eliminate a variable exactly: x = −(rest) / a
    let mut defs: Vec<(usize, Row)> = Vec::new();
    let mut eqs: Vec<Row> = Vec::new();
    for (i, (x, r)) in cube.iter().enumerate() {
        let row = row_of(x, i);
        match r {
            Rel::Eq0 => eqs.push(row),
            _ => rows.push(row),
        }
    }
    while let Some(e) = eqs.pop() {
        let Some(k) = e.a.iter().position(|&x| x == 1 || x == -1) else {
            // no unit coefficient: two inequalities (sound for unsatisfiability)
            let neg = Row { a: e.a.iter().map(|x| -x).collect(), c: -e.c, from: e.from.clone() };
            rows.push(e);
            rows.push(neg);
            continue;
        };
        // x_k = −(e − a_k x_k) / a_k
        let s = e.a[k];
        let mut def = Row { a: e.a.iter().map(|x| -x * s).collect(), c: -e.c * s, from: e.from.clone() };
        def.a[k] = 0;
        let subst = |r: &mut Row| -> Option<()> {
            let f = r.a[k];
            if f == 0 {
                return Some(());
            }
            r.a[k] = 0;
            for (i, d) in def.a.iter().enumerate() {
                r.a[i] = r.a[i].checked_add(f.checked_mul(*d)?)?;
            }
            r.c = r.c.checked_add(f.checked_mul(def.c)?)?;
            r.from.union(&def.from);
            Some(())
        };
        for r in rows.iter_mut().chain(eqs.iter_mut()) {
            if subst(r).is_none() {
                return Ok(Answer::Unknown("integer overflow"));
            }
        }
        for (_, r) in defs.iter_mut() {
            if subst(r).is_none() {
                return Ok(Answer::Unknown("integer overflow"));
            }
        }
        defs.push((k, def));
    }
    // eliminate the remaining variables one by one, keeping each stage's rows for back-substitution
    let mut stages: Vec<(usize, Vec<Row>)> = Vec::new();
    let mut live: Vec<usize> = (0..n).filter(|&k| rows.iter().any(|r| r.a[k] != 0)).collect();
    let mut cur: Vec<Row> = Vec::new();
    for r in rows {
        match r.tighten() {
            Ok(r) => cur.push(r),
            Err(None) => {}
            Err(Some(core)) => return Err(core),
        }
    }
    dedup(&mut cur);
    while !live.is_empty() {
        if !spend_n((cur.len() * live.len() / ROWS_PER_UNIT) as u64) {
            return Ok(Answer::Unknown("the decision procedure's budget for this kernel ran out"));
        }
        // an exact variable first (its integer projection is its rational one: every lower bound, or every upper
        // bound, has a unit coefficient — the Omega test's condition), then the one with the fewest new rows;
        // eliminating `q` of `128·q ≤ x` before `x` would lose the integer gap that decides the question
        let cost = |k: usize| {
            let p = cur.iter().filter(|r| r.a[k] > 0).count();
            let q = cur.iter().filter(|r| r.a[k] < 0).count();
            let exact = cur.iter().all(|r| r.a[k] <= 1) || cur.iter().all(|r| r.a[k] >= -1);
            (!exact, p * q)
        };
        let Some((pos, &k)) = live.iter().enumerate().min_by_key(|(_, &k)| cost(k)) else { break };
        live.remove(pos);
        let (with, rest): (Vec<Row>, Vec<Row>) = cur.into_iter().partition(|r| r.a[k] != 0);
        let mut next = rest;
        for p in with.iter().filter(|r| r.a[k] > 0) {
            for q in with.iter().filter(|r| r.a[k] < 0) {
                let (fp, fq) = (-q.a[k], p.a[k]);
                let mut a = vec![0i64; n];
                let mut ok = true;
                for ((slot, pa), qa) in a.iter_mut().zip(&p.a).zip(&q.a) {
                    match pa.checked_mul(fp).and_then(|x| qa.checked_mul(fq).and_then(|y| x.checked_add(y))) {
                        Some(v) => *slot = v,
                        None => ok = false,
                    }
                }
                let c = p.c.checked_mul(fp).and_then(|x| q.c.checked_mul(fq).and_then(|y| x.checked_add(y)));
                let Some(c) = c.filter(|_| ok) else { return Ok(Answer::Unknown("integer overflow")) };
                let mut from = p.from.clone();
                from.union(&q.from);
                match (Row { a, c, from }).tighten() {
                    Ok(r) => next.push(r),
                    Err(None) => {}
                    Err(Some(core)) => return Err(core),
                }
            }
        }
        dedup(&mut next);
        if next.len() > MAX_CONSTRAINTS {
            return Ok(Answer::Unknown("too many constraints"));
        }
        stages.push((k, with));
        cur = next;
    }
    // rationally satisfiable: integers by back-substitution, smallest magnitude first
    let mut val = vec![0i64; n];
    for (k, with) in stages.iter().rev() {
        let (mut lo, mut hi) = (i64::MIN, i64::MAX);
        for r in with {
            // a_k x + rest ≥ 0
            let mut rest = r.c as i128;
            for (i, (a, v)) in r.a.iter().zip(&val).enumerate() {
                if i != *k {
                    rest += *a as i128 * *v as i128;
                }
            }
            let a = r.a[*k] as i128;
            if a > 0 {
                // x ≥ ceil(−rest / a)
                let b = (-rest).div_euclid(a) + i128::from((-rest).rem_euclid(a) != 0);
                lo = lo.max(b.clamp(i64::MIN as i128, i64::MAX as i128) as i64);
            } else {
                // x ≤ floor(rest / −a)
                let b = rest.div_euclid(-a);
                hi = hi.min(b.clamp(i64::MIN as i128, i64::MAX as i128) as i64);
            }
        }
        if lo > hi {
            return Ok(Answer::Unknown("a rational solution with no integer one"));
        }
        val[*k] = 0i64.clamp(lo, hi);
    }
    for (k, def) in defs.iter().rev() {
        let mut v = def.c as i128;
        for (a, x) in def.a.iter().zip(&val) {
            v += *a as i128 * *x as i128;
        }
        let Ok(v) = i64::try_from(v) else { return Ok(Answer::Unknown("integer overflow")) };
        val[*k] = v;
    }
    let model: Model = vars.into_iter().zip(val).collect();
    let get = |a: &Sym| model.get(a).copied().or(Some(0));
    for (x, r) in cube {
        let ok = x.eval(&get).is_some_and(|v| match r {
            Rel::Ge0 => v >= 0,
            Rel::Eq0 => v == 0,
            Rel::Ne0 => v != 0,
        });
        if !ok {
            return Ok(Answer::Unknown("a rational solution with no integer one"));
        }
    }
    Ok(Answer::Sat(model))
}
