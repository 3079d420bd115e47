//! Input assumptions (`per-kernel-assume`): what a kernel's callers guarantee of its tables and scalars, which
//! its code does not check (`kv_lens[*] >= 1`: no empty sequence; `cu_q_lens[i] <= cu_q_lens[i + 1]`: offsets in
//! order).
//!
//! An assumption compares two integer expressions over a kernel's inputs, named as its author named them: table
//! elements (`kv_lens[3]`, `kv_lens[*]` every element, `cu_q_lens[i + 1]` for every `i`), scalar arguments and
//! one-element tables by name, integer constants, `+`, `-` and products with a constant. [`parse`] reads one
//! (configuration errors point into it), [`bind`] ties its names to one kernel's arguments, [`instances`] makes
//! the conditions a question about a failure must also satisfy (over the table elements the question reads), and
//! [`complete`] gives a replay's table elements that no witness names values the assumptions allow.

use super::term::{Atom, Cond, Lin, Rel, Sym};
use crate::semantic::kernel::KernelArg;
use std::collections::BTreeMap;
use std::ops::Range;

mod concrete;
mod parse;

pub use concrete::{broken, broken_all, complete, Concrete, Slot};
pub use parse::parse;

/// Instances of one assumption in one question at most: a star over many loads, or two stars, multiply.
const MAX_INSTANCES: usize = 256;

/// One assumption as written.
#[derive(Clone, Debug, PartialEq)]
pub struct Assumption {
    pub text: String,
    /// `Σ k·ref + c  rel  0`.
    terms: Vec<(Ref, i64)>,
    c: i64,
    rel: Rel,
}

/// A name in an assumption, with its indices when it has some.
#[derive(Clone, Debug, PartialEq)]
pub struct Ref {
    pub name: String,
    /// Where the name is in the assumption's text.
    pub span: Range<usize>,
    idx: Option<Vec<Index>>,
}

/// One index of a table element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Index {
    At(i64),
    /// Every element along this dimension.
    Star,
    /// `i + k`, for every `i`.
    I(i64),
}

/// A malformed assumption: what and where in its text.
#[derive(Clone, Debug, PartialEq)]
pub struct ParseError {
    pub message: String,
    pub span: Range<usize>,
}

impl Assumption {
    /// The names it reads, with where they are in its text.
    pub fn refs(&self) -> impl Iterator<Item = &Ref> {
        self.terms.iter().map(|t| &t.0)
    }
}

/// What a name of an assumption is in one kernel.
#[derive(Clone, Debug, PartialEq)]
enum Input {
    /// A table (its argument and shape) and the element's indices (a one-element table named alone: zeros).
    Table {
        arg: usize,
        dims: Vec<i64>,
        idx: Vec<Index>,
    },
    Scalar {
        arg: usize,
    },
}

/// An assumption tied to one kernel's arguments.
#[derive(Clone, Debug, PartialEq)]
pub struct Bound {
    pub text: String,
    terms: Vec<(Input, i64)>,
    c: i64,
    rel: Rel,
}

/// The argument `name` stands for: its Python name (`kv_lens_ref`, or `kv_lens` for it, as Pallas authors name
/// refs `x_ref`) or the dump's name (`%arg2`, `arg2`), among integer tables and scalars.
pub fn argument(name: &str, args: &[KernelArg<'_>]) -> Option<usize> {
    let by = |f: &dyn Fn(&KernelArg<'_>) -> bool| args.iter().filter(|a| integer(a)).find(|a| f(a)).map(|a| a.index);
    by(&|a| a.python.as_deref() == Some(name))
        .or_else(|| by(&|a| a.python.as_deref().and_then(|p| p.strip_suffix("_ref")) == Some(name)))
        .or_else(|| by(&|a| a.name == name.trim_start_matches('%')))
}

/// An argument of integers (a table or a scalar), not a semaphore.
fn integer(a: &KernelArg<'_>) -> bool {
    // (a grid index is no input: the grid's own)
    !a.semaphore
        && !matches!(a.role, crate::semantic::kernel::ArgRole::GridIndex(_))
        && a.ty.as_ref().and_then(|t| t.dtype()).is_some_and(|d| !d.is_float())
}

/// The names a kernel's assumptions may use: its integer tables' and scalars' Python names (else dump names).
pub fn known_names(args: &[KernelArg<'_>]) -> Vec<String> {
    args.iter()
        .filter(|a| integer(a))
        .filter(|a| a.ty.as_ref().is_some_and(|t| t.shaped().is_none_or(|s| s.static_dims().is_some())))
        .map(|a| a.python.clone().unwrap_or_else(|| format!("%{}", a.name)))
        .collect()
}

/// `a` for a kernel with arguments `args`; `Err` says which name does not fit (and why) with its span.
pub fn bind(a: &Assumption, args: &[KernelArg<'_>]) -> Result<Bound, (String, Range<usize>)> {
    let mut terms = Vec::new();
    for (r, k) in &a.terms {
        let Some(arg) = argument(&r.name, args) else {
            return Err((format!("`{}` is no integer table or scalar of the kernel", r.name), r.span.clone()));
        };
        let ty = args.iter().find(|x| x.index == arg).and_then(|x| x.ty.as_ref());
        let dims = ty.and_then(|t| t.shaped()).map(|s| s.static_dims());
        let input = match (dims, &r.idx) {
            (None, None) => Input::Scalar { arg },
            (None, Some(_)) => return Err((format!("`{}` is a scalar: it has no elements", r.name), r.span.clone())),
            (Some(None), _) => return Err((format!("`{}` has a dynamic shape", r.name), r.span.clone())),
            (Some(Some(d)), None) if d.iter().all(|&n| n == 1) => {
                Input::Table { arg, idx: vec![Index::At(0); d.len()], dims: d }
            }
            (Some(Some(d)), None) => {
                return Err((
                    format!("`{}` is a table of shape {d:?}: name its elements (`{}[*]`)", r.name, r.name),
                    r.span.clone(),
                ))
            }
            (Some(Some(d)), Some(idx)) if idx.len() != d.len() => {
                let n = d.len();
                return Err((
                    format!(
                        "`{}` has {n} dimension{}, the assumption gives {} indices",
                        r.name,
                        if n == 1 { "" } else { "s" },
                        idx.len()
                    ),
                    r.span.clone(),
                ));
            }
            (Some(Some(d)), Some(idx)) => {
                if let Some((&Index::At(k), &n)) =
                    idx.iter().zip(&d).find(|(i, &n)| matches!(i, Index::At(k) if *k < 0 || *k >= n))
                {
                    return Err((format!("`{}[{k}]` is outside its {n} elements", r.name), r.span.clone()));
                }
                Input::Table { arg, dims: d, idx: idx.clone() }
            }
        };
        terms.push((input, *k));
    }
    Ok(Bound { text: a.text.clone(), terms, c: a.c, rel: a.rel })
}

/// What the engine calls a kernel's inputs: the buffer number of each table it reads, and the variable of each
/// scalar argument.
#[derive(Debug, Default)]
pub struct Names {
    pub bufs: BTreeMap<usize, u32>,
    pub scalars: BTreeMap<usize, Lin>,
}

/// The conditions `b` adds to a question that reads `atoms`: one per element (or combination of elements) the
/// question reads that the assumption speaks of — every load of a table for a `*`, and for `i` every `i` that puts
/// one of its elements on a load the question reads (`cu_q_lens[i] <= cu_q_lens[i + 1]` over a load of
/// `cu_q_lens[p]` holds for `i = p` and `i = p − 1`). An element at `i + k` is constrained only where it exists.
pub fn instances(b: &Bound, atoms: &[Sym], names: &Names) -> Vec<Cond> {
    let arg_of = |buf: u32| names.bufs.iter().find(|(_, &x)| x == buf).map(|(&a, _)| a);
    // loads of the kernel's inputs as it received them (no store of its own before)
    let loads: Vec<(usize, &Vec<Lin>)> = atoms
        .iter()
        .filter_map(|a| match &**a {
            Atom::Load { buf, idx, version: 0 } => Some((arg_of(*buf)?, idx)),
            _ => None,
        })
        .collect();
    let fits = |pattern: &[Index], idx: &[Lin], i: Option<&Lin>| {
        pattern.len() == idx.len()
            && pattern.iter().zip(idx).all(|(p, x)| match p {
                Index::At(k) => x.as_int() == Some(*k),
                Index::Star => true,
                Index::I(k) => i.and_then(|i| i.add(&Lin::int(*k))).is_some_and(|v| v == *x),
            })
    };
    // the values `i` takes: each load an `i + k` position of the assumption may sit on
    let mut is: Vec<Option<Lin>> = Vec::new();
    for (input, _) in &b.terms {
        let Input::Table { arg, idx, .. } = input else { continue };
        for (pos, p) in idx.iter().enumerate() {
            let Index::I(k) = p else { continue };
            for (_, l) in loads.iter().filter(|(a, l)| a == arg && l.len() == idx.len()) {
                if let Some(i) = k.checked_neg().and_then(|m| l[pos].add(&Lin::int(m))) {
                    if !is.iter().flatten().any(|x| *x == i) {
                        is.push(Some(i));
                    }
                }
            }
        }
    }
    let uses_i = b.terms.iter().any(|(t, _)| matches!(t, Input::Table { idx, .. } if idx.contains(&Index::I(0)) || idx.iter().any(|x| matches!(x, Index::I(_)))));
    if !uses_i {
        is.push(None);
    }
    let mut out = Vec::new();
    for i in &is {
        // per term: the elements it may stand for
        let mut choices: Vec<Vec<(Lin, Cond)>> = Vec::new();
        for (input, _) in &b.terms {
            let mut these = Vec::new();
            match input {
                Input::Scalar { arg } => these.extend(names.scalars.get(arg).map(|v| (v.clone(), Cond::True))),
                Input::Table { arg, dims, idx } => {
                    let Some(&buf) = names.bufs.get(arg) else { break };
                    if idx.contains(&Index::Star) {
                        for (_, l) in loads.iter().filter(|(a, l)| a == arg && fits(idx, l, i.as_ref())) {
                            these.push((Lin::atom(Atom::Load { buf, idx: (*l).clone(), version: 0 }), Cond::True));
                        }
                    } else {
                        let mut at = Vec::new();
                        let mut exists = Vec::new();
                        for (p, &n) in idx.iter().zip(dims) {
                            let x = match p {
                                Index::At(k) => Lin::int(*k),
                                Index::I(k) => match i.as_ref().and_then(|i| i.add(&Lin::int(*k))) {
                                    Some(x) => x,
                                    None => break,
                                },
                                // (a star is taken from the loads above)
                                Index::Star => break,
                            };
                            exists.push(Cond::cmp(x.clone(), Rel::Ge0));
                            exists.extend(
                                x.scale(-1).and_then(|m| m.add(&Lin::int(n - 1))).map(|m| Cond::cmp(m, Rel::Ge0)),
                            );
                            at.push(x);
                        }
                        if at.len() == idx.len() {
                            these.push((Lin::atom(Atom::Load { buf, idx: at, version: 0 }), Cond::and(exists)));
                        }
                    }
                }
            }
            choices.push(these);
        }
        if choices.len() != b.terms.len() || choices.iter().any(Vec::is_empty) {
            continue;
        }
        // every combination of the terms' choices
        let mut picks = vec![0usize; choices.len()];
        loop {
            let mut sum = Lin::int(b.c);
            let mut exists = Vec::new();
            for ((ch, &p), (_, k)) in choices.iter().zip(&picks).zip(&b.terms) {
                sum = match sum.add_scaled(&ch[p].0, *k) {
                    Some(s) => s,
                    None => break,
                };
                exists.push(ch[p].1.clone());
            }
            let cmp = Cond::cmp(sum, b.rel);
            let exists = Cond::and(exists);
            let inst = if exists == Cond::True { cmp } else { Cond::or([Cond::negate(exists), cmp]) };
            if inst != Cond::True && !out.contains(&inst) {
                out.push(inst);
            }
            if out.len() >= MAX_INSTANCES {
                return out;
            }
            // next combination
            let mut d = 0;
            while d < picks.len() {
                picks[d] += 1;
                if picks[d] < choices[d].len() {
                    break;
                }
                picks[d] = 0;
                d += 1;
            }
            if d == picks.len() {
                break;
            }
        }
    }
    out
}
/// `text` with its names, in order, standing for `inputs` (for tests).
#[cfg(test)]
fn bound(text: &str, inputs: Vec<Input>) -> Bound {
    let a = parse(text).expect("parses");
    let terms = inputs.into_iter().zip(a.terms.iter().map(|t| t.1)).collect();
    Bound { text: a.text, terms, c: a.c, rel: a.rel }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(buf: u32, idx: Lin) -> Lin {
        Lin::atom(Atom::Load { buf, idx: vec![idx], version: 0 })
    }

    fn atoms_of(ls: &[&Lin]) -> Vec<Sym> {
        let mut out = Vec::new();
        ls.iter().for_each(|l| l.atoms(&mut out));
        out
    }

    #[test]
    fn a_star_instantiates_over_every_load_of_its_table() {
        let p = Lin::var(super::super::term::Var { id: 0, name: "p".into() });
        let kv = Input::Table { arg: 2, dims: vec![8], idx: vec![Index::Star] };
        let b = bound("kv_lens[*] >= 1", vec![kv]);
        let names = Names { bufs: [(2, 0)].into(), scalars: BTreeMap::new() };
        // two loads of kv_lens and one of another table
        let (a, c, other) = (load(0, Lin::int(0)), load(0, p.clone()), load(1, Lin::int(0)));
        let got = instances(&b, &atoms_of(&[&a, &c, &other]), &names);
        assert_eq!(got.len(), 2);
        assert!(got.contains(&Cond::cmp(a.add(&Lin::int(-1)).unwrap(), Rel::Ge0)));
        assert!(got.contains(&Cond::cmp(c.add(&Lin::int(-1)).unwrap(), Rel::Ge0)));
        // a load after a store of the kernel's own is not an input
        let stored = Lin::atom(Atom::Load { buf: 0, idx: vec![Lin::int(3)], version: 1 });
        assert!(instances(&b, &atoms_of(&[&stored]), &names).is_empty());
    }

    #[test]
    fn i_instantiates_around_each_load_where_the_elements_exist() {
        let p = Lin::var(super::super::term::Var { id: 0, name: "p".into() });
        let t = |k| Input::Table { arg: 4, dims: vec![9], idx: vec![Index::I(k)] };
        let b = bound("cu_q_lens[i] <= cu_q_lens[i + 1]", vec![t(0), t(1)]);
        let names = Names { bufs: [(4, 3)].into(), scalars: BTreeMap::new() };
        // a load at a constant: i = 2 (cu[2] ≤ cu[3]) and i = 1 (cu[1] ≤ cu[2]), both inside the table
        let got = instances(&b, &atoms_of(&[&load(3, Lin::int(2))]), &names);
        let le = |x: i64, y: i64| Cond::cmp(load(3, Lin::int(y)).sub(&load(3, Lin::int(x))).unwrap(), Rel::Ge0);
        assert_eq!(got, vec![le(2, 3), le(1, 2)]);
        // at the table's end only i = 7 exists
        let got = instances(&b, &atoms_of(&[&load(3, Lin::int(8))]), &names);
        assert_eq!(got, vec![le(7, 8)]);
        // a load at a symbolic index: guarded by the elements existing
        let got = instances(&b, &atoms_of(&[&load(3, p.clone())]), &names);
        assert_eq!(got.len(), 2);
        assert!(got.iter().all(|c| matches!(c, Cond::Or(_))), "{got:?}");
        // two loads a constant apart: one instance relates them
        let got = instances(&b, &atoms_of(&[&load(3, p.clone()), &load(3, p.add(&Lin::int(1)).unwrap())]), &names);
        let pair = load(3, p.add(&Lin::int(1)).unwrap()).sub(&load(3, p.clone())).unwrap();
        assert!(
            got.iter().any(|c| format!("{c:?}").contains(&format!("{:?}", Cond::cmp(pair.clone(), Rel::Ge0)))),
            "{got:?}"
        );
    }

    #[test]
    fn scalars_and_one_element_tables_are_instantiated_as_they_are() {
        let n = Lin::var(super::super::term::Var { id: 5, name: "%arg6".into() });
        let b = bound("num_seqs <= 8", vec![Input::Scalar { arg: 6 }]);
        let names = Names { bufs: BTreeMap::new(), scalars: [(6, n.clone())].into() };
        assert_eq!(
            instances(&b, &[], &names),
            vec![Cond::cmp(n.scale(-1).unwrap().add(&Lin::int(8)).unwrap(), Rel::Ge0)]
        );
        // a one-element table named alone is its element 0, read or not
        let b = bound("num_seqs >= 1", vec![Input::Table { arg: 6, dims: vec![1], idx: vec![Index::At(0)] }]);
        let names = Names { bufs: [(6, 2)].into(), scalars: BTreeMap::new() };
        assert_eq!(
            instances(&b, &[], &names),
            vec![Cond::cmp(load(2, Lin::int(0)).add(&Lin::int(-1)).unwrap(), Rel::Ge0)]
        );
        // a table the kernel never reads adds nothing
        assert!(instances(&b, &[], &Names::default()).is_empty());
    }
}
