//! Symbolic integers and conditions: what the DMA engine computes instead of numbers.
//!
//! A value read at run time (an SMEM load, a loop's index, a grid index, a dynamic extent) is an [`Atom`]; integer
//! arithmetic over atoms is kept as a linear form ([`Lin`]: constant + Σ coefficient·atom), and what is not linear
//! (division and remainder by a constant, min, max, select, a product of two unknowns) becomes an atom of its own
//! whose meaning the solver knows ([`super::solve`]). Conditions ([`Cond`]) are formulas over comparisons of linear
//! forms with zero. Everything is structural (derived equality and order), so the same computation written twice
//! gives the same term, and normalised: `i + 1 - 1` is `i`, `2·(x/2)` stays one term.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::hash::{Hash, Hasher};
use std::rc::{Rc, Weak};

/// A symbol's identity: a variable made by the engine (a grid index, a loop's index, a loop-carried value at the
/// head of an iteration, an unknown result) with the name messages use.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Var {
    pub id: u32,
    pub name: Rc<str>,
}

/// What a memory load reads: a buffer (a kernel argument or an allocation, by number) at an index.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Atom {
    Var(Var),
    /// `buffer[index]` as read at run time; `version` counts the kernel's own stores to the buffer before the read.
    Load {
        buf: u32,
        idx: Vec<Lin>,
        version: u32,
    },
    /// Integer division towards zero by a positive constant (`arith.divsi`), or floor division (`floor`).
    Div {
        x: Lin,
        d: i64,
        floor: bool,
    },
    /// Remainder of division towards zero by a positive constant (`arith.remsi`: the sign of `x`).
    Rem {
        x: Lin,
        d: i64,
    },
    Min(Lin, Lin),
    Max(Lin, Lin),
    /// `c ? a : b`.
    Select(Box<Cond>, Lin, Lin),
    /// A product of two unknowns: no meaning the solver uses.
    Mul(Lin, Lin),
    /// An integer op the engine does not interpret, applied to its operands: equal operands give equal results.
    App(Rc<str>, Vec<Lin>),
}

/// A linear form: `c + Σ k·atom` with non-zero coefficients.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Lin {
    pub c: i64,
    pub terms: BTreeMap<Sym, i64>,
}

/// An atom as terms hold it: made once per kernel (hash-consed), so equal atoms are one allocation and comparing
/// or ordering two of them is comparing pointers and a cached hash. Terms are compared, sorted and looked up at
/// every step of the engine; comparing nested atoms structurally was most of its time.
#[derive(Clone)]
pub struct Sym(Rc<Node>);

struct Node {
    hash: u64,
    atom: Atom,
}

thread_local! {
    /// The atoms made so far, by hash ([`Sym::new`]); emptied by [`forget_atoms`].
    static ATOMS: RefCell<HashMap<u64, Vec<Weak<Node>>>> = RefCell::new(HashMap::new());
}

/// Starts a new table of atoms (one per kernel, so it does not grow with a run). Atoms made before stay valid;
/// they are only no longer shared with new ones, and compare structurally with them.
pub fn forget_atoms() {
    ATOMS.with(|t| t.borrow_mut().clear());
}

impl Sym {
    pub fn new(atom: Atom) -> Sym {
        // the hasher has fixed keys: the order of terms (by hash) is the same on every run
        let mut h = std::collections::hash_map::DefaultHasher::new();
        atom.hash(&mut h);
        let hash = h.finish();
        ATOMS.with(|t| {
            let mut t = t.borrow_mut();
            let bucket = t.entry(hash).or_default();
            bucket.retain(|w| w.strong_count() > 0);
            if let Some(n) = bucket.iter().filter_map(Weak::upgrade).find(|n| n.atom == atom) {
                return Sym(n);
            }
            let n = Rc::new(Node { hash, atom });
            bucket.push(Rc::downgrade(&n));
            Sym(n)
        })
    }
}

impl std::ops::Deref for Sym {
    type Target = Atom;
    fn deref(&self) -> &Atom {
        &self.0.atom
    }
}

impl PartialEq for Sym {
    fn eq(&self, o: &Sym) -> bool {
        Rc::ptr_eq(&self.0, &o.0) || (self.0.hash == o.0.hash && self.0.atom == o.0.atom)
    }
}

impl Eq for Sym {}

impl Hash for Sym {
    fn hash<H: Hasher>(&self, h: &mut H) {
        h.write_u64(self.0.hash);
    }
}

/// By hash: an order that is the same on every run and costs no walk of the atoms (messages sort for reading).
impl Ord for Sym {
    fn cmp(&self, o: &Sym) -> std::cmp::Ordering {
        if Rc::ptr_eq(&self.0, &o.0) {
            return std::cmp::Ordering::Equal;
        }
        self.0.hash.cmp(&o.0.hash).then_with(|| self.0.atom.cmp(&o.0.atom))
    }
}

impl PartialOrd for Sym {
    fn partial_cmp(&self, o: &Sym) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

impl fmt::Debug for Sym {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0.atom, f)
    }
}

impl fmt::Display for Sym {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0.atom, f)
    }
}

impl Atom {
    /// The order messages list atoms in: variables as made (grid indices first), then loads by buffer, then the
    /// rest as written.
    pub fn reading_order(&self) -> (u8, u32, String) {
        match self {
            Atom::Var(v) => (0, v.id, String::new()),
            Atom::Load { buf, .. } => (1, *buf, self.to_string()),
            _ => (2, 0, self.to_string()),
        }
    }
}

/// What a substitution made of each atom already met: terms share atoms (a guard repeated in every select of a
/// loop nest), and rebuilding each occurrence again made one substitution walk a tree where the term is a DAG.
type Memo = HashMap<Sym, Option<Lin>>;

/// How a linear form compares with zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Rel {
    Ge0,
    Eq0,
    Ne0,
}

/// A condition over linear forms.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Cond {
    True,
    False,
    Cmp(Lin, Rel),
    And(Vec<Cond>),
    Or(Vec<Cond>),
    Not(Box<Cond>),
}

impl Lin {
    pub fn int(c: i64) -> Lin {
        Lin { c, terms: BTreeMap::new() }
    }

    pub fn atom(a: Atom) -> Lin {
        // a select of two constants under a decided condition, and the like, fold before they become atoms
        let mut terms = BTreeMap::new();
        terms.insert(Sym::new(a), 1);
        Lin { c: 0, terms }
    }

    pub fn var(v: Var) -> Lin {
        Lin::atom(Atom::Var(v))
    }

    pub fn as_int(&self) -> Option<i64> {
        self.terms.is_empty().then_some(self.c)
    }

    /// `self + k·other`, or `None` on overflow.
    pub fn add_scaled(&self, other: &Lin, k: i64) -> Option<Lin> {
        let mut out = self.clone();
        out.c = out.c.checked_add(other.c.checked_mul(k)?)?;
        for (a, &v) in &other.terms {
            let e = out.terms.entry(a.clone()).or_insert(0);
            *e = e.checked_add(v.checked_mul(k)?)?;
            if *e == 0 {
                out.terms.remove(a);
            }
        }
        Some(out)
    }

    pub fn add(&self, other: &Lin) -> Option<Lin> {
        self.add_scaled(other, 1)
    }

    pub fn sub(&self, other: &Lin) -> Option<Lin> {
        self.add_scaled(other, -1)
    }

    pub fn scale(&self, k: i64) -> Option<Lin> {
        if k == 0 {
            return Some(Lin::int(0));
        }
        Lin::int(0).add_scaled(self, k)
    }

    /// `self · other`: linear when one side is a constant, else an atom.
    pub fn mul(&self, other: &Lin) -> Option<Lin> {
        match (self.as_int(), other.as_int()) {
            (Some(k), _) => other.scale(k),
            (_, Some(k)) => self.scale(k),
            _ => {
                let (a, b) = if self <= other { (self, other) } else { (other, self) };
                Some(Lin::atom(Atom::Mul(a.clone(), b.clone())))
            }
        }
    }

    /// Division towards zero (`floor`: towards −∞) by a constant; an atom unless it folds.
    pub fn div(&self, d: i64, floor: bool) -> Option<Lin> {
        if d == 0 {
            return None;
        }
        if d == 1 {
            return Some(self.clone());
        }
        if let Some(x) = self.as_int() {
            let q = x.checked_div(d)?;
            let down = floor && x % d != 0 && ((x < 0) != (d < 0));
            return Some(Lin::int(if down { q - 1 } else { q }));
        }
        if d < 0 {
            return None;
        }
        // (d·y + c) / d with every coefficient a multiple of d and 0 ≤ c < d: y (for non-negative c only)
        if self.terms.values().all(|k| k % d == 0) && (0..d).contains(&self.c) && floor {
            let mut out = Lin::int(0);
            for (a, k) in &self.terms {
                out.terms.insert(a.clone(), k / d);
            }
            return Some(out);
        }
        Some(Lin::atom(Atom::Div { x: self.clone(), d, floor }))
    }

    /// Remainder of division towards zero by a positive constant; an atom unless it folds.
    pub fn rem(&self, d: i64) -> Option<Lin> {
        if d == 0 {
            return None;
        }
        if let Some(x) = self.as_int() {
            return x.checked_rem(d).map(Lin::int);
        }
        let d = d.checked_abs()?;
        if d == 1 {
            return Some(Lin::int(0));
        }
        Some(Lin::atom(Atom::Rem { x: self.clone(), d }))
    }

    pub fn min_of(&self, other: &Lin) -> Lin {
        match (self.as_int(), other.as_int()) {
            (Some(a), Some(b)) => Lin::int(a.min(b)),
            _ if self == other => self.clone(),
            _ => {
                let (a, b) = if self <= other { (self, other) } else { (other, self) };
                Lin::atom(Atom::Min(a.clone(), b.clone()))
            }
        }
    }

    pub fn max_of(&self, other: &Lin) -> Lin {
        match (self.as_int(), other.as_int()) {
            (Some(a), Some(b)) => Lin::int(a.max(b)),
            _ if self == other => self.clone(),
            _ => {
                let (a, b) = if self <= other { (self, other) } else { (other, self) };
                Lin::atom(Atom::Max(a.clone(), b.clone()))
            }
        }
    }

    pub fn select(c: &Cond, a: &Lin, b: &Lin) -> Lin {
        match c {
            Cond::True => a.clone(),
            Cond::False => b.clone(),
            _ if a == b => a.clone(),
            _ => Lin::atom(Atom::Select(Box::new(c.clone()), a.clone(), b.clone())),
        }
    }

    /// Every atom the form reads, the atoms inside its atoms included.
    pub fn atoms(&self, out: &mut Vec<Sym>) {
        for a in self.terms.keys() {
            if !out.contains(a) {
                out.push(a.clone());
                a.inner_atoms(out);
            }
        }
    }

    /// The form with each atom replaced as `f` says (recursively, inner atoms first).
    pub fn subst(&self, f: &dyn Fn(&Atom) -> Option<Lin>) -> Option<Lin> {
        self.subst_in(f, &mut Memo::new())
    }

    fn subst_in(&self, f: &dyn Fn(&Atom) -> Option<Lin>, memo: &mut Memo) -> Option<Lin> {
        let mut out = Lin::int(self.c);
        for (a, &k) in &self.terms {
            let r = match memo.get(a) {
                Some(r) => r.clone()?,
                None => {
                    let r = a.subst_in(f, memo);
                    memo.insert(a.clone(), r.clone());
                    r?
                }
            };
            out = out.add_scaled(&r, k)?;
        }
        Some(out)
    }

    /// The value under an assignment of the atoms it reads (`None` when one is missing or on overflow).
    pub fn eval(&self, model: &dyn Fn(&Sym) -> Option<i64>) -> Option<i64> {
        let mut v = self.c;
        for (a, &k) in &self.terms {
            v = v.checked_add(k.checked_mul(model(a)?)?)?;
        }
        Some(v)
    }
}

impl Atom {
    fn inner_atoms(&self, out: &mut Vec<Sym>) {
        match self {
            Atom::Var(_) => {}
            Atom::Load { idx, .. } => idx.iter().for_each(|l| l.atoms(out)),
            Atom::Div { x, .. } | Atom::Rem { x, .. } => x.atoms(out),
            Atom::Min(a, b) | Atom::Max(a, b) | Atom::Mul(a, b) => {
                a.atoms(out);
                b.atoms(out);
            }
            Atom::Select(c, a, b) => {
                c.atoms(out);
                a.atoms(out);
                b.atoms(out);
            }
            Atom::App(_, xs) => xs.iter().for_each(|l| l.atoms(out)),
        }
    }

    /// This atom with `f` applied to it and (first) to every atom inside it; ops fold again afterwards.
    pub fn subst(&self, f: &dyn Fn(&Atom) -> Option<Lin>) -> Option<Lin> {
        self.subst_in(f, &mut Memo::new())
    }

    fn subst_in(&self, f: &dyn Fn(&Atom) -> Option<Lin>, m: &mut Memo) -> Option<Lin> {
        let inner = match self {
            Atom::Var(_) => None,
            Atom::Load { buf, idx, version } => Some(Lin::atom(Atom::Load {
                buf: *buf,
                idx: idx.iter().map(|l| l.subst_in(f, m)).collect::<Option<_>>()?,
                version: *version,
            })),
            Atom::Div { x, d, floor } => Some(x.subst_in(f, m)?.div(*d, *floor)?),
            Atom::Rem { x, d } => Some(x.subst_in(f, m)?.rem(*d)?),
            Atom::Min(a, b) => Some(a.subst_in(f, m)?.min_of(&b.subst_in(f, m)?)),
            Atom::Max(a, b) => Some(a.subst_in(f, m)?.max_of(&b.subst_in(f, m)?)),
            Atom::Mul(a, b) => Some(a.subst_in(f, m)?.mul(&b.subst_in(f, m)?)?),
            Atom::Select(c, a, b) => Some(Lin::select(&c.subst_in(f, m)?, &a.subst_in(f, m)?, &b.subst_in(f, m)?)),
            Atom::App(n, xs) => {
                Some(Lin::atom(Atom::App(n.clone(), xs.iter().map(|l| l.subst_in(f, m)).collect::<Option<_>>()?)))
            }
        };
        match inner {
            None => Some(f(self).unwrap_or_else(|| Lin::atom(self.clone()))),
            Some(l) => {
                // the rebuilt atom may itself be replaced (a load at a substituted index)
                if let Some(a) = l.single_atom() {
                    if let Some(r) = f(a) {
                        return Some(r);
                    }
                }
                Some(l)
            }
        }
    }
}

impl Lin {
    /// The atom when the form is exactly one atom with coefficient 1.
    pub fn single_atom(&self) -> Option<&Atom> {
        match (self.c, self.terms.len()) {
            (0, 1) => self.terms.iter().next().filter(|(_, &k)| k == 1).map(|(a, _)| &**a),
            _ => None,
        }
    }
}

impl Cond {
    /// `x rel 0`, folded when `x` is a constant.
    pub fn cmp(x: Lin, rel: Rel) -> Cond {
        Cond::cmp_with(x, rel, true)
    }

    /// `x rel 0` where `x` may be the very select being defined: folded only when `x` is a constant (the solver's
    /// definition of `s = c ? 1 : 0` must constrain `s`, not turn into `c`).
    pub fn plain_cmp(x: Lin, rel: Rel) -> Cond {
        Cond::cmp_with(x, rel, false)
    }

    fn cmp_with(x: Lin, rel: Rel, selects: bool) -> Cond {
        if let Some(v) = x.as_int() {
            let t = match rel {
                Rel::Ge0 => v >= 0,
                Rel::Eq0 => v == 0,
                Rel::Ne0 => v != 0,
            };
            return if t { Cond::True } else { Cond::False };
        }
        // `(c ? 1 : 0) ≠ 0` is `c`: booleans widened to integers (`arith.extui`, i1 kept in SMEM) compare as the
        // condition they came from, so the solver sees one condition instead of a select to split on
        if let Some((a, &k)) = x.terms.iter().next().filter(|_| selects && x.terms.len() == 1) {
            if let Atom::Select(c, p, q) = &**a {
                if let (Some(p), Some(q)) = (p.as_int(), q.as_int()) {
                    let side =
                        |v: i64| k.checked_mul(v).and_then(|v| v.checked_add(x.c)).map(|v| Cond::cmp(Lin::int(v), rel));
                    if let (Some(t), Some(f)) = (side(p), side(q)) {
                        return Cond::or([Cond::and([(**c).clone(), t]), Cond::and([Cond::negate((**c).clone()), f])]);
                    }
                }
            }
        }
        // a common sign makes one form of each comparison: Eq0/Ne0 with a positive first coefficient
        if rel != Rel::Ge0 && x.terms.values().next().is_some_and(|&k| k < 0) {
            if let Some(n) = x.scale(-1) {
                return Cond::Cmp(n, rel);
            }
        }
        Cond::Cmp(x, rel)
    }

    /// `a pred b` for MLIR's integer predicates (`slt`, `ule`, ...; unsigned read as signed: the engine's integers
    /// are indices and sizes, non-negative where it matters).
    pub fn compare(pred: &str, a: &Lin, b: &Lin) -> Option<Cond> {
        let p = pred.trim_start_matches(['s', 'u']);
        let d = a.sub(b)?; // a - b
        Some(match p {
            "eq" => Cond::cmp(d, Rel::Eq0),
            "ne" => Cond::cmp(d, Rel::Ne0),
            "ge" => Cond::cmp(d, Rel::Ge0),
            "gt" => Cond::cmp(d.add(&Lin::int(-1))?, Rel::Ge0),
            "le" => Cond::cmp(d.scale(-1)?, Rel::Ge0),
            "lt" => Cond::cmp(d.scale(-1)?.add(&Lin::int(-1))?, Rel::Ge0),
            _ => return None,
        })
    }

    pub fn and(parts: impl IntoIterator<Item = Cond>) -> Cond {
        let mut out: Vec<Cond> = Vec::new();
        for p in parts {
            match p {
                Cond::True => {}
                Cond::False => return Cond::False,
                Cond::And(xs) => out.extend(xs),
                c => out.push(c),
            }
        }
        out.sort();
        out.dedup();
        match out.len() {
            0 => Cond::True,
            1 => out.pop().unwrap_or(Cond::True),
            _ => Cond::And(out),
        }
    }

    pub fn or(parts: impl IntoIterator<Item = Cond>) -> Cond {
        let mut out: Vec<Cond> = Vec::new();
        for p in parts {
            match p {
                Cond::False => {}
                Cond::True => return Cond::True,
                Cond::Or(xs) => out.extend(xs),
                c => out.push(c),
            }
        }
        out.sort();
        out.dedup();
        match out.len() {
            0 => Cond::False,
            1 => out.pop().unwrap_or(Cond::False),
            _ => Cond::Or(out),
        }
    }

    pub fn negate(c: Cond) -> Cond {
        match c {
            Cond::True => Cond::False,
            Cond::False => Cond::True,
            Cond::Not(x) => *x,
            Cond::Cmp(x, Rel::Eq0) => Cond::Cmp(x, Rel::Ne0),
            Cond::Cmp(x, Rel::Ne0) => Cond::Cmp(x, Rel::Eq0),
            // ¬(x ≥ 0) ⇔ −x − 1 ≥ 0
            Cond::Cmp(x, Rel::Ge0) => match x.scale(-1).and_then(|n| n.add(&Lin::int(-1))) {
                Some(n) => Cond::Cmp(n, Rel::Ge0),
                None => Cond::Not(Box::new(Cond::Cmp(x, Rel::Ge0))),
            },
            c => Cond::Not(Box::new(c)),
        }
    }

    /// Whether the condition has more than `limit` comparisons (counting stops there).
    pub fn larger_than(&self, limit: usize) -> bool {
        fn count(c: &Cond, n: &mut usize, limit: usize) {
            if *n > limit {
                return;
            }
            match c {
                Cond::True | Cond::False => {}
                Cond::Cmp(..) => *n += 1,
                Cond::And(xs) | Cond::Or(xs) => xs.iter().for_each(|x| count(x, n, limit)),
                Cond::Not(x) => count(x, n, limit),
            }
        }
        let mut n = 0;
        count(self, &mut n, limit);
        n > limit
    }

    pub fn atoms(&self, out: &mut Vec<Sym>) {
        match self {
            Cond::True | Cond::False => {}
            Cond::Cmp(x, _) => x.atoms(out),
            Cond::And(xs) | Cond::Or(xs) => xs.iter().for_each(|c| c.atoms(out)),
            Cond::Not(c) => c.atoms(out),
        }
    }

    pub fn subst(&self, f: &dyn Fn(&Atom) -> Option<Lin>) -> Option<Cond> {
        self.subst_in(f, &mut Memo::new())
    }

    fn subst_in(&self, f: &dyn Fn(&Atom) -> Option<Lin>, m: &mut Memo) -> Option<Cond> {
        Some(match self {
            Cond::True | Cond::False => self.clone(),
            Cond::Cmp(x, r) => Cond::cmp(x.subst_in(f, m)?, *r),
            Cond::And(xs) => Cond::and(xs.iter().map(|c| c.subst_in(f, m)).collect::<Option<Vec<_>>>()?),
            Cond::Or(xs) => Cond::or(xs.iter().map(|c| c.subst_in(f, m)).collect::<Option<Vec<_>>>()?),
            Cond::Not(c) => Cond::negate(c.subst_in(f, m)?),
        })
    }

    pub fn eval(&self, model: &dyn Fn(&Sym) -> Option<i64>) -> Option<bool> {
        Some(match self {
            Cond::True => true,
            Cond::False => false,
            Cond::Cmp(x, r) => {
                let v = x.eval(model)?;
                match r {
                    Rel::Ge0 => v >= 0,
                    Rel::Eq0 => v == 0,
                    Rel::Ne0 => v != 0,
                }
            }
            Cond::And(xs) => {
                for c in xs {
                    if !c.eval(model)? {
                        return Some(false);
                    }
                }
                true
            }
            Cond::Or(xs) => {
                for c in xs {
                    if c.eval(model)? {
                        return Some(true);
                    }
                }
                false
            }
            Cond::Not(c) => !c.eval(model)?,
        })
    }
}

impl fmt::Display for Atom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Atom::Var(v) => write!(f, "{}", v.name),
            Atom::Load { buf, idx, version } => {
                write!(f, "buf{buf}[")?;
                for (i, x) in idx.iter().enumerate() {
                    write!(f, "{}{x}", if i > 0 { ", " } else { "" })?;
                }
                write!(f, "]")?;
                // (the trace tells a value read at the loop head from one the body stored; messages never do)
                if *version > 0 && super::solve::trace() {
                    write!(f, "@{version}")?;
                }
                Ok(())
            }
            Atom::Div { x, d, .. } => write!(f, "({x}) / {d}"),
            Atom::Rem { x, d } => write!(f, "({x}) % {d}"),
            Atom::Min(a, b) => write!(f, "min({a}, {b})"),
            Atom::Max(a, b) => write!(f, "max({a}, {b})"),
            Atom::Select(c, a, b) => write!(f, "({c} ? {a} : {b})"),
            Atom::Mul(a, b) => write!(f, "({a})·({b})"),
            Atom::App(n, xs) => {
                write!(f, "{n}(")?;
                for (i, x) in xs.iter().enumerate() {
                    write!(f, "{}{x}", if i > 0 { ", " } else { "" })?;
                }
                write!(f, ")")
            }
        }
    }
}

impl fmt::Display for Lin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        let mut terms: Vec<_> = self.terms.iter().collect();
        terms.sort_by_cached_key(|(a, _)| a.reading_order());
        for (a, &k) in terms {
            let sign = if k < 0 {
                "-"
            } else if first {
                ""
            } else {
                "+"
            };
            let sep = if first { "" } else { " " };
            let mag = k.unsigned_abs();
            let coef = if mag == 1 { String::new() } else { format!("{mag}·") };
            write!(f, "{sep}{sign}{}{coef}{a}", if first || sign.is_empty() { "" } else { " " })?;
            first = false;
        }
        if first {
            write!(f, "{}", self.c)
        } else if self.c != 0 {
            write!(f, " {} {}", if self.c < 0 { "-" } else { "+" }, self.c.unsigned_abs())
        } else {
            Ok(())
        }
    }
}

impl fmt::Display for Cond {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Cond::True => write!(f, "true"),
            Cond::False => write!(f, "false"),
            Cond::Cmp(x, r) => write!(
                f,
                "{x} {} 0",
                match r {
                    Rel::Ge0 => "≥",
                    Rel::Eq0 => "=",
                    Rel::Ne0 => "≠",
                }
            ),
            Cond::And(xs) | Cond::Or(xs) => {
                let op = if matches!(self, Cond::And(_)) { " ∧ " } else { " ∨ " };
                write!(f, "(")?;
                for (i, c) in xs.iter().enumerate() {
                    write!(f, "{}{c}", if i > 0 { op } else { "" })?;
                }
                write!(f, ")")
            }
            Cond::Not(c) => write!(f, "¬{c}"),
        }
    }
}

/// A variable of the given id and name, for the engine's unit tests.
#[cfg(test)]
pub(crate) fn test_var(id: u32, name: &str) -> Lin {
    Lin::var(Var { id, name: name.into() })
}

#[cfg(test)]
mod tests {
    use super::test_var as v;
    use super::*;

    #[test]
    fn linear_forms_normalise() {
        let i = v(0, "i");
        let a = i.add(&Lin::int(1)).unwrap().sub(&Lin::int(1)).unwrap();
        assert_eq!(a, i);
        let two_i = i.scale(2).unwrap();
        assert_eq!(two_i.add(&Lin::int(1)).unwrap().div(2, true).unwrap(), i);
        assert_eq!(i.rem(1).unwrap(), Lin::int(0));
        assert_eq!(Lin::int(7).rem(2).unwrap(), Lin::int(1));
        assert_eq!(Lin::int(-7).div(2, true).unwrap(), Lin::int(-4));
        assert_eq!(Lin::int(-7).div(2, false).unwrap(), Lin::int(-3));
    }

    #[test]
    fn substitution_refolds() {
        let i = v(0, "i");
        let slot = i.add(&Lin::int(1)).unwrap().rem(2).unwrap();
        let at = |a: &Atom| matches!(a, Atom::Var(x) if x.id == 0).then(|| Lin::int(3));
        assert_eq!(slot.subst(&at).unwrap(), Lin::int(0));
        let c = Cond::compare("slt", &i, &Lin::int(4)).unwrap();
        assert_eq!(c.subst(&at).unwrap(), Cond::True);
        assert_eq!(Cond::negate(Cond::negate(c.clone())), c);
    }
}
