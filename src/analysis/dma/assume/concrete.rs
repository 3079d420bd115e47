//! Assumptions on concrete inputs (a replay's): which hold, and values for what no witness fixes that make them
//! hold.

use super::{Bound, Index, Input};
use crate::analysis::dma::seed::Seed;
use crate::analysis::dma::term::Rel;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;

/// Element combinations one assumption is checked on concretely at most (a replay's inputs).
const MAX_CONCRETE: usize = 1 << 22;
/// Passes of the repair that completes a replay's inputs.
const MAX_PASSES: usize = 64;

/// A value a concrete input holds: a table element (argument, row-major position) or a scalar argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Slot {
    Elem(usize, usize),
    Scalar(usize),
}

/// Concrete inputs as a replay takes them: tables (row-major), scalars, and which values are fixed (a witness
/// names them or the host passes them).
pub struct Concrete<'a> {
    pub tables: &'a mut Seed,
    pub scalars: &'a mut BTreeMap<usize, i64>,
    pub fixed: &'a BTreeSet<Slot>,
}

/// Every instance of `b` on concrete inputs, as (slots read with their coefficients, the sum, whether it holds);
/// `None` when there are too many to check or a table is missing.
#[allow(clippy::type_complexity)]
fn concrete_instances(
    b: &Bound,
    tables: &Seed,
    scalars: &BTreeMap<usize, i64>,
) -> Option<Vec<(Vec<(Slot, i64)>, i64)>> {
    // the free variables of an instance: `i` and one per star position
    let mut i_range: Option<Range<i64>> = None;
    let mut stars: Vec<i64> = Vec::new();
    for (t, _) in &b.terms {
        if let Input::Table { dims, idx, .. } = t {
            for (p, &n) in idx.iter().zip(dims) {
                match p {
                    Index::I(k) => {
                        let r = k.checked_neg()?..n.checked_sub(*k)?;
                        i_range = Some(match i_range {
                            Some(q) => q.start.max(r.start)..q.end.min(r.end),
                            None => r,
                        });
                    }
                    Index::Star => stars.push(n),
                    Index::At(_) => {}
                }
            }
        }
    }
    let i_values: Vec<Option<i64>> = match i_range {
        Some(r) => r.map(Some).collect(),
        None => vec![None],
    };
    let combos = stars.iter().try_fold(i_values.len().max(1), |n, &s| n.checked_mul(usize::try_from(s).ok()?))?;
    if combos > MAX_CONCRETE {
        return None;
    }
    let mut out = Vec::new();
    for i in i_values {
        let mut star = vec![0i64; stars.len()];
        loop {
            let mut slots = Vec::new();
            let mut sum = b.c;
            let mut s = 0;
            for (t, k) in &b.terms {
                let (slot, v) = match t {
                    Input::Scalar { arg } => (Slot::Scalar(*arg), *scalars.get(arg)?),
                    Input::Table { arg, dims, idx } => {
                        let mut flat = 0i64;
                        for (p, &n) in idx.iter().zip(dims) {
                            let x = match p {
                                Index::At(k) => *k,
                                Index::I(k) => i?.checked_add(*k)?,
                                Index::Star => {
                                    s += 1;
                                    star[s - 1]
                                }
                            };
                            flat = flat.checked_mul(n)?.checked_add(x)?;
                        }
                        let flat = usize::try_from(flat).ok()?;
                        (Slot::Elem(*arg, flat), *tables.get(arg)?.get(flat)?)
                    }
                };
                sum = sum.checked_add(k.checked_mul(v)?)?;
                slots.push((slot, *k));
            }
            out.push((slots, sum));
            // next star combination
            let mut d = 0;
            while d < star.len() {
                star[d] += 1;
                if star[d] < stars[d] {
                    break;
                }
                star[d] = 0;
                d += 1;
            }
            if d == star.len() {
                break;
            }
        }
    }
    Some(out)
}

fn holds(rel: Rel, v: i64) -> bool {
    match rel {
        Rel::Ge0 => v >= 0,
        Rel::Eq0 => v == 0,
        Rel::Ne0 => v != 0,
    }
}

/// The first assumption concrete inputs break (its text), if any; an assumption that cannot be checked (too many
/// combinations, a scalar without a value) counts as broken.
pub fn broken<'b>(bs: &'b [Bound], tables: &Seed, scalars: &BTreeMap<usize, i64>) -> Option<&'b str> {
    broken_all(bs, tables, scalars).into_iter().next().map(|b| b.0)
}

/// Every assumption concrete inputs break (their texts), each with the values of its first broken instance (none
/// when it could not be checked).
pub fn broken_all<'b>(
    bs: &'b [Bound],
    tables: &Seed,
    scalars: &BTreeMap<usize, i64>,
) -> Vec<(&'b str, Vec<(Slot, i64)>)> {
    let value = |s: &Slot| match s {
        Slot::Elem(a, f) => tables.get(a).and_then(|t| t.get(*f)).copied().unwrap_or(0),
        Slot::Scalar(a) => scalars.get(a).copied().unwrap_or(0),
    };
    bs.iter()
        .filter_map(|b| match concrete_instances(b, tables, scalars) {
            None => Some((b.text.as_str(), Vec::new())),
            Some(xs) => xs
                .into_iter()
                .find(|(_, v)| !holds(b.rel, *v))
                .map(|(slots, _)| (b.text.as_str(), slots.iter().map(|(s, _)| (*s, value(s))).collect())),
        })
        .collect()
}

/// Gives the values no witness fixes (a replay's zero-filled table elements, scalars it does not name) values
/// every assumption allows: each broken instance moves one free value it reads by as little as makes it hold —
/// upwards where it can (`kv_lens[*] >= 1` raises an element to 1, `cu_q_lens[i] <= cu_q_lens[i + 1]` raises the
/// later offset), and a value of the table the fewest assumptions name first. `false` when some assumption still
/// does not hold after a bounded number of passes: a greedy repair, not a search.
pub fn complete(bs: &[Bound], inputs: Concrete<'_>) -> bool {
    for b in bs {
        for (t, _) in &b.terms {
            if let Input::Scalar { arg } = t {
                inputs.scalars.entry(*arg).or_insert(0);
            }
        }
    }
    let mut mentions: BTreeMap<usize, usize> = BTreeMap::new();
    for b in bs {
        for (t, _) in &b.terms {
            let (Input::Scalar { arg } | Input::Table { arg, .. }) = t;
            *mentions.entry(*arg).or_default() += 1;
        }
    }
    let arg = |s: &Slot| match s {
        Slot::Elem(a, _) | Slot::Scalar(a) => *a,
    };
    for _ in 0..MAX_PASSES {
        let mut changed = false;
        for b in bs {
            let Some(all) = concrete_instances(b, inputs.tables, inputs.scalars) else { return false };
            for (slots, _) in all {
                // the sum again: an earlier repair in this pass may have changed it
                let value = |s: &Slot| match s {
                    Slot::Elem(a, f) => inputs.tables.get(a).and_then(|t| t.get(*f)).copied(),
                    Slot::Scalar(a) => inputs.scalars.get(a).copied(),
                };
                let Some(sum) = slots.iter().try_fold(b.c, |acc, (s, k)| acc.checked_add(k.checked_mul(value(s)?)?))
                else {
                    return false;
                };
                if holds(b.rel, sum) {
                    continue;
                }
                let free = slots.iter().filter(|(s, k)| *k != 0 && !inputs.fixed.contains(s));
                // the move each free value needs, upwards first, then the least named table, then the last element
                let moves = free.filter_map(|&(s, k)| {
                    let a = k.checked_abs()?;
                    let delta = match b.rel {
                        Rel::Ge0 => sum.checked_neg()?.checked_add(a - 1)? / a * k.signum(),
                        Rel::Eq0 if sum.checked_rem(k)? == 0 => sum.checked_neg()?.checked_div(k)?,
                        Rel::Eq0 => return None,
                        Rel::Ne0 => k.signum(),
                    };
                    Some((delta < 0, mentions.get(&arg(&s)).copied().unwrap_or(0), std::cmp::Reverse(s), s, delta))
                });
                let Some((.., s, delta)) = moves.min() else { return false };
                let v = match s {
                    Slot::Elem(a, f) => inputs.tables.get_mut(&a).and_then(|t| t.get_mut(f)),
                    Slot::Scalar(a) => inputs.scalars.get_mut(&a),
                };
                let Some(v) = v else { return false };
                let Some(n) = v.checked_add(delta) else { return false };
                *v = n;
                changed = true;
            }
        }
        if !changed {
            return true;
        }
    }
    broken(bs, inputs.tables, inputs.scalars).is_none()
}

#[cfg(test)]
mod tests {
    use super::super::bound;
    use super::*;

    #[test]
    fn completion_gives_free_elements_values_the_assumptions_allow() {
        let kv = Input::Table { arg: 2, dims: vec![4], idx: vec![Index::Star] };
        let cu = |k| Input::Table { arg: 4, dims: vec![5], idx: vec![Index::I(k)] };
        let bs = vec![
            bound("kv_lens[*] >= 1", vec![kv]),
            bound("cu_q_lens[i] <= cu_q_lens[i + 1]", vec![cu(0), cu(1)]),
            bound("n >= 0", vec![Input::Scalar { arg: 7 }]),
        ];
        let mut tables: Seed = [(2, vec![257, 0, 0, 0]), (4, vec![0, 65, 0, 0, 0])].into();
        let mut scalars = BTreeMap::new();
        let fixed: BTreeSet<Slot> = [Slot::Elem(2, 0), Slot::Elem(4, 0), Slot::Elem(4, 1)].into();
        assert!(broken(&bs, &tables, &scalars).is_some());
        assert!(complete(&bs, Concrete { tables: &mut tables, scalars: &mut scalars, fixed: &fixed }));
        assert_eq!(tables[&2], vec![257, 1, 1, 1]);
        assert_eq!(tables[&4], vec![0, 65, 65, 65, 65]);
        assert_eq!(scalars[&7], 0);
        assert_eq!(broken(&bs, &tables, &scalars), None);
        // what the witness fixes is not moved: a fixed element that breaks an assumption leaves it broken
        let mut tables: Seed = [(2, vec![0, 0, 0, 0]), (4, vec![0; 5])].into();
        let fixed: BTreeSet<Slot> = [Slot::Elem(2, 1)].into();
        assert!(!complete(&bs, Concrete { tables: &mut tables, scalars: &mut scalars, fixed: &fixed }));
    }
}
