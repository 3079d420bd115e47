//! Unknown integers and conditions: monotone chains of one unknown, intervals, conjunctions.

use super::*;

/// One monotone step of a [`SimValue::Sym`] expression.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Step {
    Add(i64),
    Mul(i64),
    /// Division by a positive constant: truncating (`divsi`), flooring, ceiling.
    Div(i64),
    FloorDiv(i64),
    CeilDiv(i64),
    Min(i64),
    Max(i64),
}

/// Applies `f` to `x` (saturating, so the function stays monotone over the whole range).
pub(super) fn apply(f: &[Step], x: i64) -> i128 {
    let mut v = x as i128;
    for st in f {
        v = match *st {
            Step::Add(c) => v.saturating_add(c as i128),
            Step::Mul(c) => v.saturating_mul(c as i128),
            Step::Div(c) => v / c as i128,
            Step::FloorDiv(c) => v.div_euclid(c as i128),
            Step::CeilDiv(c) => -((-v).div_euclid(c as i128)),
            Step::Min(c) => v.min(c as i128),
            Step::Max(c) => v.max(c as i128),
        };
    }
    v
}

/// The range unknowns live in (kept away from the i64 limits so `+ 1` never overflows).
pub(super) const ATOM_MIN: i64 = i64::MIN / 4;
pub(super) const ATOM_MAX: i64 = i64::MAX / 4;

/// The first x in `(from, ATOM_MAX]` where `pred` differs from its value at `from` (a monotone predicate
/// changes once), by bisection.
pub(super) fn change(from: i64, pred: &dyn Fn(i64) -> bool) -> Option<i64> {
    let start = pred(from);
    if pred(ATOM_MAX) == start {
        return None;
    }
    let (mut lo, mut hi) = (from, ATOM_MAX);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if pred(mid) == start {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(hi)
}

/// Where a monotone `pred` holds: a prefix or a suffix of the atom's range (`None`: nowhere).
pub(super) fn interval(pred: &dyn Fn(i64) -> bool) -> Option<(i64, i64)> {
    if pred(ATOM_MIN) {
        Some((ATOM_MIN, change(ATOM_MIN, pred).map(|h| h - 1).unwrap_or(ATOM_MAX)))
    } else {
        change(ATOM_MIN, pred).map(|lo| (lo, ATOM_MAX))
    }
}

/// `f(atom) <p> c` as an interval of the atom (monotone `f`: the set is one interval, or its complement for
/// `ne`); `Int` when it holds everywhere or nowhere.
pub(super) fn sym_cmp(atom: u32, f: &[Step], p: &str, c: i64) -> SimValue {
    let c = c as i128;
    let neg = p == "ne";
    let holds = |x: i64| {
        let v = apply(f, x);
        match p {
            "eq" | "ne" => v == c,
            "lt" => v < c,
            "le" => v <= c,
            "gt" => v > c,
            _ => v >= c,
        }
    };
    if !matches!(p, "eq" | "ne" | "lt" | "le" | "gt" | "ge") {
        return SimValue::Unknown;
    }
    let set = if matches!(p, "eq" | "ne") {
        // f(x) == c: where f(x) >= c and f(x) <= c, each monotone
        let ge = interval(&|x: i64| apply(f, x) >= c);
        let le = interval(&|x: i64| apply(f, x) <= c);
        match (ge, le) {
            (Some(a), Some(b)) if a.0.max(b.0) <= a.1.min(b.1) => Some((a.0.max(b.0), a.1.min(b.1))),
            _ => None,
        }
    } else {
        interval(&holds)
    };
    match set {
        None => SimValue::Int(i64::from(neg)),
        Some((ATOM_MIN, ATOM_MAX)) => SimValue::Int(i64::from(!neg)),
        Some((lo, hi)) => SimValue::Cond { atom, lo, hi, neg },
    }
}

/// A chain without its trailing constant, and that constant.
pub(super) fn split_offset(f: &[Step]) -> (&[Step], i64) {
    match f.split_last() {
        Some((Step::Add(c), rest)) => (rest, *c),
        _ => (f, 0),
    }
}

/// `Sym` with one more step (identities dropped, so equal values get equal chains); `Unknown` when the chain
/// grows long.
pub(super) fn sym_step(x: SimValue, st: Step) -> SimValue {
    if matches!(st, Step::Add(0) | Step::Mul(1) | Step::Div(1) | Step::FloorDiv(1) | Step::CeilDiv(1)) {
        return x;
    }
    match x {
        SimValue::Sym { atom, mut f } if f.len() < 16 => {
            match (f.last_mut(), st) {
                (Some(Step::Add(a)), Step::Add(b)) => match a.checked_add(b) {
                    Some(c) => *a = c,
                    None => return SimValue::Unknown,
                },
                _ => f.push(st),
            }
            SimValue::Sym { atom, f }
        }
        _ => SimValue::Unknown,
    }
}

/// A boolean the simulation keeps symbolically.
pub(super) fn is_cond(v: &SimValue) -> bool {
    matches!(v, SimValue::Cond { .. } | SimValue::All(_) | SimValue::AnyOf(_))
}

/// `not c`, by De Morgan for conjunctions.
pub(super) fn negate(v: SimValue) -> SimValue {
    match v {
        SimValue::Cond { atom, lo, hi, neg } => SimValue::Cond { atom, lo, hi, neg: !neg },
        SimValue::All(p) => SimValue::AnyOf(p.into_iter().map(negate).collect()),
        SimValue::AnyOf(p) => SimValue::All(p.into_iter().map(negate).collect()),
        SimValue::Int(x) => SimValue::Int(i64::from(x == 0)),
        other => other,
    }
}

/// Division by a positive constant, and min/max with a constant, of an unknown.
pub(super) fn sym_binary(name: &str, x: SimValue, y: SimValue) -> SimValue {
    let div = name.contains("div");
    match (x, y) {
        (s @ SimValue::Sym { .. }, SimValue::Int(c)) if !div || c > 0 => sym_step(
            s,
            match name {
                "divsi" | "div" => Step::Div(c),
                "floordivsi" | "floordiv" => Step::FloorDiv(c),
                "ceildivsi" | "ceildiv" => Step::CeilDiv(c),
                n if n.starts_with("min") => Step::Min(c),
                _ => Step::Max(c),
            },
        ),
        (SimValue::Int(c), s @ SimValue::Sym { .. }) if !div => {
            sym_step(s, if name.starts_with("min") { Step::Min(c) } else { Step::Max(c) })
        }
        _ => SimValue::Unknown,
    }
}

/// `f(x, y)` when both are known integers.
pub(super) fn int_binop(x: SimValue, y: SimValue, f: impl Fn(i64, i64) -> Option<i64>) -> SimValue {
    match (x, y) {
        (SimValue::Int(a), SimValue::Int(b)) => f(a, b).map(SimValue::Int).unwrap_or(SimValue::Unknown),
        _ => SimValue::Unknown,
    }
}
