//! Scalar arithmetic as terms: `arith.*` (and LLO's scalar spellings) over integers and conditions.

use super::exec::{as_cond, as_lin, Engine, Val};
use super::term::{Atom, Cond, Lin, Rel};
use crate::ir::mlir_type::MlirType;
use crate::ir::*;

/// The value of an op that is neither a view, a memory access, a DMA nor a region.
pub fn value(e: &mut Engine<'_, '_>, id: OpId) -> Val {
    let op = e.m.op(id);
    if let Some(c) = crate::semantic::kernel::const_int(e.m, id) {
        return Val::Int(Lin::int(c));
    }
    let tracked = match op.ty.mlir() {
        Some(MlirType::Scalar { dtype, .. }) => !dtype.is_float(),
        _ => false,
    };
    if !tracked {
        return Val::Opaque;
    }
    let (name, pred) = arith_name(op);
    let args: Vec<Val> = op.operands.iter().filter(|o| o.role.is_none()).map(|o| e.get(o)).collect();
    let boolean = matches!(op.ty.mlir(), Some(MlirType::Scalar { dtype: DType::Pred, .. }));
    match compute(name, pred.as_deref(), &args, boolean) {
        Some(v) => v,
        None => {
            // an integer op the engine does not interpret: a function of its operands when they are terms, else a
            // fresh unknown (not an input)
            let xs: Option<Vec<Lin>> = args.iter().map(as_lin).collect();
            match xs {
                Some(xs) if !xs.is_empty() => {
                    let l = Lin::atom(Atom::App(op.opcode.into(), xs));
                    if boolean {
                        Val::Bool(Cond::cmp(l, super::term::Rel::Ne0))
                    } else {
                        Val::Int(l)
                    }
                }
                _ => {
                    let v = e.fresh_carried(format!("{}[..]", super::exec::value_name(e.m, id)));
                    if boolean {
                        Val::Bool(Cond::cmp(v, super::term::Rel::Ne0))
                    } else {
                        Val::Int(v)
                    }
                }
            }
        }
    }
}

fn compute(name: &str, pred: Option<&str>, args: &[Val], boolean: bool) -> Option<Val> {
    let lin = |k: usize| args.get(k).and_then(as_lin);
    let cond = |k: usize| args.get(k).and_then(as_cond);
    let konst = |k: usize| lin(k).and_then(|l| l.as_int());
    Some(match name {
        "addi" | "add" => Val::Int(lin(0)?.add(&lin(1)?)?),
        "subi" | "sub" => Val::Int(lin(0)?.sub(&lin(1)?)?),
        "muli" | "mul" => Val::Int(lin(0)?.mul(&lin(1)?)?),
        "divsi" | "divui" | "div" => Val::Int(lin(0)?.div(konst(1)?, false)?),
        "floordivsi" | "floordiv" => Val::Int(lin(0)?.div(konst(1)?, true)?),
        "ceildivsi" | "ceildivui" | "ceildiv" => {
            let d = konst(1)?;
            Val::Int(lin(0)?.add(&Lin::int(d.checked_sub(1)?))?.div(d, true)?)
        }
        "remsi" | "remui" | "rem" => Val::Int(lin(0)?.rem(konst(1)?)?),
        "minsi" | "minui" | "min" => Val::Int(lin(0)?.min_of(&lin(1)?)),
        "maxsi" | "maxui" | "max" => Val::Int(lin(0)?.max_of(&lin(1)?)),
        "andi" | "and" if boolean => Val::Bool(Cond::and([cond(0)?, cond(1)?])),
        "ori" | "or" if boolean => Val::Bool(Cond::or([cond(0)?, cond(1)?])),
        "xori" | "xor" if boolean => {
            let (a, b) = (cond(0)?, cond(1)?);
            Val::Bool(Cond::or([Cond::and([a.clone(), Cond::negate(b.clone())]), Cond::and([Cond::negate(a), b])]))
        }
        "andi" | "and" => {
            // x & (2^k − 1) is x mod 2^k for the non-negative indices kernels mask
            let (x, m) = (lin(0)?, konst(1)?);
            if m > 0 && (m + 1) & m == 0 {
                Val::Int(x.rem(m + 1)?)
            } else {
                return None;
            }
        }
        "shli" | "shl" => {
            let k = konst(1)?;
            Val::Int(lin(0)?.scale(1i64.checked_shl(u32::try_from(k).ok().filter(|&k| k < 62)?)?)?)
        }
        "shrsi" | "shrui" | "shr" => {
            let k = konst(1)?;
            Val::Int(lin(0)?.div(1i64.checked_shl(u32::try_from(k).ok().filter(|&k| k < 62)?)?, true)?)
        }
        "index_cast" | "index_castui" | "extsi" | "extui" | "trunci" | "bitcast" => match args.first()? {
            Val::Bool(c) if !boolean => Val::Int(Lin::select(c, &Lin::int(1), &Lin::int(0))),
            Val::Int(l) if boolean => Val::Bool(Cond::cmp(l.clone(), super::term::Rel::Ne0)),
            v => v.clone(),
        },
        "select" => {
            let c = cond(0)?;
            if let (Some(a), Some(b)) = (lin(1), lin(2)) {
                if let Some(f) = floored(&c, &a, &b).or_else(|| floored(&Cond::negate(c.clone()), &b, &a)) {
                    return Some(Val::Int(f));
                }
            }
            super::exec::merge(&c, args.get(1)?, args.get(2)?)
        }
        // `tpu.assume_multiple(x, m)` is `x` with a promise that `m` divides it: the value is `x`'s (an opaque
        // application would make a start's size and its wait's differ wherever the promise was written twice)
        "assume_multiple" => Val::Int(lin(0)?),
        n if n.starts_with("cmp") => Val::Bool(Cond::compare(pred?, &lin(0)?, &lin(1)?)?),
        _ => return None,
    })
}

/// Python's `//` and `%` on integers (and `pl.cdiv`) as jax lowers them: a division towards zero and a correction,
/// `select(r ≠ 0 ∧ sign(r) ≠ sign(d), q − 1, q)` for the quotient and `select(…, r + d, r)` for the remainder.
/// Kept as written, each select and each sign costs the solver a case split, and kernels compute trip counts and
/// slots this way; recognised — the condition proven equivalent to `r < 0` — it is one floor division, whose
/// definition is a single case.
fn floored(c: &Cond, a: &Lin, b: &Lin) -> Option<Lin> {
    let (x, d, quotient) = match b.single_atom()? {
        Atom::Div { x, d, floor: false } if *d > 0 && *a == b.add(&Lin::int(-1))? => (x, *d, true),
        Atom::Rem { x, d } if *d > 0 && *a == b.add(&Lin::int(*d))? => (x, *d, false),
        _ => return None,
    };
    let r = x.rem(d)?;
    let negative = Cond::cmp(r.scale(-1)?.add(&Lin::int(-1))?, Rel::Ge0);
    if super::solve::equivalent(c, &negative) != Some(true) {
        return None;
    }
    let q = x.div(d, true)?;
    if quotient {
        Some(q)
    } else {
        x.sub(&q.scale(d)?)
    }
}

/// The arithmetic an op does (`addi`, `cmpi`; LLO's `sadd` → `add`) and a comparison's predicate (`slt`).
pub(crate) fn arith_name<'o>(op: &'o crate::ir::Op<'_>) -> (&'o str, Option<String>) {
    let b = crate::semantic::op::op_name(op.opcode);
    let mut name = b.split('.').next().unwrap_or(b);
    if op.opcode.starts_with("llo.") {
        if let Some(x) = name.strip_prefix('s').filter(|x| !x.is_empty() && name != "select" && name != "shl") {
            name = x;
        }
    }
    let pred = name.starts_with("cmp").then(|| {
        op.payload.as_deref().or_else(|| op.attr("predicate")).and_then(|v| v.word()).map(|w| match w.parse::<i64>() {
            Ok(n) => ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]
                .get(n as usize)
                .copied()
                .unwrap_or("?")
                .to_string(),
            Err(_) => w.trim_start_matches("#arith<cmpi").trim_end_matches('>').trim().to_string(),
        })
    });
    (name, pred.flatten())
}

/// Two index lists that differ in some position for every value of their atoms (the difference's range excludes 0).
pub(super) fn provably_different(a: &[Lin], b: &[Lin]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).any(|(x, y)| {
            // (an index `slot + 4` with `slot` a select of 0 and 1, against 2: the ranges of the two are apart)
            x.sub(y).and_then(|d| range(&d)).is_some_and(|(lo, hi)| lo > 0 || hi < 0)
        })
}

/// The values a term can take, where its atoms' ranges follow from constants alone: selects and min/max of
/// terms with ranges, remainders by a constant (`None`: some atom can be anything).
fn range(l: &Lin) -> Option<(i64, i64)> {
    let (mut lo, mut hi) = (l.c, l.c);
    for (s, &k) in &l.terms {
        let (a, b) = atom_range(s)?;
        let (p, q) = (a.checked_mul(k)?, b.checked_mul(k)?);
        lo = lo.checked_add(p.min(q))?;
        hi = hi.checked_add(p.max(q))?;
    }
    Some((lo, hi))
}

fn atom_range(atom: &Atom) -> Option<(i64, i64)> {
    match atom {
        Atom::Select(_, x, y) | Atom::Min(x, y) | Atom::Max(x, y) => {
            let ((a, b), (c, d)) = (range(x)?, range(y)?);
            Some(match atom {
                Atom::Min(..) => (a.min(c), b.min(d)),
                Atom::Max(..) => (a.max(c), b.max(d)),
                _ => (a.min(c), b.max(d)),
            })
        }
        // (the sign of the dividend: either way, less than the divisor in size)
        Atom::Rem { d, .. } => Some((1 - d, d - 1)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::dma::term::test_var as v;

    /// RPA v3 keeps three fields per slot in one SMEM table (`ids[slot]`, `ids[slot + 2]`, `ids[slot + 4]`, the
    /// slot a select of 0 and 1): a store to one field must not make the others unknown.
    #[test]
    fn indices_apart_by_their_range() {
        let x = v(0, "x");
        let slot = Lin::select(&Cond::cmp(x.clone(), Rel::Eq0), &Lin::int(1), &Lin::int(0));
        let field = |k: i64| vec![slot.add(&Lin::int(k)).unwrap()];
        assert!(provably_different(&field(4), &[Lin::int(2)]));
        assert!(provably_different(&field(4), &field(2)));
        assert!(!provably_different(&field(4), &[Lin::int(5)]));
        // an atom with no range may be anything
        assert!(!provably_different(std::slice::from_ref(&x), &[Lin::int(2)]));
        assert!(provably_different(std::slice::from_ref(&x), &[x.add(&Lin::int(1)).unwrap()]));
        // a remainder by 3 is within (-3, 3)
        let r = x.rem(3).unwrap();
        assert!(
            provably_different(std::slice::from_ref(&r), &[Lin::int(3)]) && !provably_different(&[r], &[Lin::int(2)])
        );
    }
}
