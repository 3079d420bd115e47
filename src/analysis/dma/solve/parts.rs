//! Questions taken apart before they are decided whole: conjuncts that share nothing are decided separately, and
//! two sizes computed alike are shown equal argument by argument.

use super::*;

/// The conjuncts of `c` grouped into parts that share nothing: no atom, and no buffer or function that two reads
/// or applications could be equal through (their congruences stay in one part). A question about whether a wait
/// has its DMA carries the whole state of the loop nest in its context; the part that decides it is often small.
pub(super) fn components(c: &Cond) -> Vec<Cond> {
    let Cond::And(xs) = c else { return vec![c.clone()] };
    #[derive(PartialEq, Eq, Hash)]
    enum Node {
        Atom(Sym),
        Read(u32, u32),
        Op(std::rc::Rc<str>),
    }
    let mut owner: HashMap<Node, usize> = HashMap::new();
    let mut parent: Vec<usize> = (0..xs.len()).collect();
    fn root(p: &mut [usize], mut i: usize) -> usize {
        while p[i] != i {
            p[i] = p[p[i]];
            i = p[i];
        }
        i
    }
    for (k, x) in xs.iter().enumerate() {
        let mut atoms = Vec::new();
        x.atoms(&mut atoms);
        for a in atoms {
            let mut nodes = vec![];
            match &*a {
                Atom::Load { buf, version, .. } => nodes.push(Node::Read(*buf, *version)),
                Atom::App(n, _) => nodes.push(Node::Op(n.clone())),
                _ => {}
            }
            nodes.push(Node::Atom(a));
            for n in nodes {
                match owner.get(&n) {
                    Some(&j) => {
                        let (a, b) = (root(&mut parent, j), root(&mut parent, k));
                        parent[a] = b;
                    }
                    None => {
                        owner.insert(n, k);
                    }
                }
            }
        }
    }
    let mut groups: Vec<(usize, Vec<Cond>)> = Vec::new();
    for (k, x) in xs.iter().enumerate() {
        let r = root(&mut parent, k);
        match groups.iter_mut().find(|(g, _)| *g == r) {
            Some((_, v)) => v.push(x.clone()),
            None => groups.push((r, vec![x.clone()])),
        }
    }
    groups.into_iter().map(|(_, v)| Cond::and(v)).collect()
}

/// Whether `a = b` wherever `ctx` holds, shown part by part before the whole is asked: two applications of one
/// function are equal where their arguments are (an uninterpreted op, a read of one buffer, a loop's sum, a min, a
/// select with equivalent conditions). A size computed twice the same way from values proven equal — a prefetch's
/// `min(len[next] - 128·j, 8)` against the next iteration's `min(len[i] - 128·j, 8)` — is then a few small
/// questions, where the whole `a ≠ b` is a case split over every select and min at once.
pub fn equal_under(ctx: &Cond, a: &Lin, b: &Lin) -> bool {
    if a == b {
        return true;
    }
    let Some(d) = a.sub(b) else { return false };
    if let Some(k) = d.as_int() {
        return k == 0;
    }
    equal_by_parts(ctx, a, b) || check(&Cond::and([ctx.clone(), Cond::cmp(d, Rel::Ne0)])).is_unsat()
}

/// `a = b` where `ctx` holds, shown only by pairing the atoms of `a − b` as applications of one function to
/// arguments equal under `ctx` ([`equal_under`]); `false` when they do not pair up (not a disproof).
pub fn equal_by_parts(ctx: &Cond, a: &Lin, b: &Lin) -> bool {
    let Some(d) = a.sub(b) else { return false };
    if d.c != 0 || exhausted() {
        return false;
    }
    type Terms<'t> = Vec<(&'t Sym, i64)>;
    let (pos, neg): (Terms<'_>, Terms<'_>) = d.terms.iter().map(|(s, k)| (s, *k)).partition(|(_, k)| *k > 0);
    if pos.len() != neg.len() {
        return false;
    }
    let mut used = vec![false; neg.len()];
    'next: for (x, k) in pos {
        for (j, (y, l)) in neg.iter().enumerate() {
            if !used[j] && *l == -k && same_application(ctx, x, y) {
                used[j] = true;
                continue 'next;
            }
        }
        return false;
    }
    true
}

/// Two atoms that are one function applied to arguments equal under `ctx`.
fn same_application(ctx: &Cond, x: &Sym, y: &Sym) -> bool {
    let all = |xs: &[Lin], ys: &[Lin]| xs.len() == ys.len() && xs.iter().zip(ys).all(|(a, b)| equal_under(ctx, a, b));
    let either = |(a, b): (&Lin, &Lin), (c, d): (&Lin, &Lin)| {
        (equal_under(ctx, a, c) && equal_under(ctx, b, d)) || (equal_under(ctx, a, d) && equal_under(ctx, b, c))
    };
    match (&**x, &**y) {
        (Atom::App(n, xs), Atom::App(m, ys)) => n == m && all(xs, ys),
        (Atom::Load { buf, idx, version }, Atom::Load { buf: b2, idx: i2, version: v2 }) => {
            buf == b2 && version == v2 && all(idx, i2)
        }
        (Atom::Div { x, d, floor }, Atom::Div { x: x2, d: d2, floor: f2 }) => {
            d == d2 && floor == f2 && equal_under(ctx, x, x2)
        }
        (Atom::Rem { x, d }, Atom::Rem { x: x2, d: d2 }) => d == d2 && equal_under(ctx, x, x2),
        (Atom::Min(a, b), Atom::Min(c, d))
        | (Atom::Max(a, b), Atom::Max(c, d))
        | (Atom::Mul(a, b), Atom::Mul(c, d)) => either((a, b), (c, d)),
        (Atom::Select(c, a, b), Atom::Select(c2, a2, b2)) => {
            let under = |x: &Cond, y: &Cond| implies(&Cond::and([ctx.clone(), x.clone()]), y) == Some(true);
            under(c, c2) && under(c2, c) && equal_under(ctx, a, a2) && equal_under(ctx, b, b2)
        }
        _ => false,
    }
}
