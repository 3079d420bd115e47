//! What the host program computes for the small integer values it passes a kernel, element by element.
//!
//! A kernel's scalar-prefetch tables and run-time grid sizes are often computed on the host from the same inputs:
//! DeepSeek-V4's MLA passes `start_end = distribution[1:3]` and a grid of `distribution[2] - distribution[1]`, its
//! decode kernel `start_end = [0, distribution[0]]` and a grid of `distribution[0]`. Each element here is a sum
//! `konst + Σ coeff · leaf`, a leaf one element of a value the host does not compute by the few ops followed (an
//! entry parameter, a `divide`): enough to tie a grid size to table elements and to see which elements are
//! constants, without any input value.

use crate::ir::*;
use crate::semantic::op::op_name;
use std::collections::BTreeMap;

/// Values with more elements than this are not followed (scalar tables are small; activations are not).
const MAX_ELEMENTS: usize = 4096;
/// Ops followed back from one operand (fusions included): a host program's scalar plumbing is a few ops.
const MAX_DEPTH: usize = 24;

/// One element of a value the host program does not compute from others here: (op, result, element row-major).
pub type Leaf = (u32, u32, usize);

/// One element as the host computes it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Elem {
    pub konst: i64,
    pub terms: BTreeMap<Leaf, i64>,
}

impl Elem {
    fn konst(k: i64) -> Self {
        Elem { konst: k, terms: BTreeMap::new() }
    }

    fn leaf(l: Leaf) -> Self {
        Elem { konst: 0, terms: BTreeMap::from([(l, 1)]) }
    }

    pub fn as_const(&self) -> Option<i64> {
        self.terms.is_empty().then_some(self.konst)
    }

    /// `self + c · other`; `None` on overflow.
    fn plus(&self, c: i64, other: &Elem) -> Option<Elem> {
        let mut out = self.clone();
        out.konst = out.konst.checked_add(c.checked_mul(other.konst)?)?;
        for (l, k) in &other.terms {
            let e = out.terms.entry(*l).or_insert(0);
            *e = e.checked_add(c.checked_mul(*k)?)?;
        }
        out.terms.retain(|_, k| *k != 0);
        Some(out)
    }

    fn times(&self, c: i64) -> Option<Elem> {
        Elem::konst(0).plus(c, self)
    }
}

/// The elements of host value `def` (row-major), each as far as it is followed; `None` when the value is too
/// large or its shape unknown.
pub fn elements(hm: &Module<'_>, def: Def) -> Option<Vec<Elem>> {
    Eval { hm, depth: 0 }.def(def, &[])
}

struct Eval<'m, 'a> {
    hm: &'m Module<'a>,
    depth: usize,
}

/// A fused computation's parameters, as the fusion's operands give them (`None`: not followed).
type Params = [Option<Vec<Elem>>];

impl Eval<'_, '_> {
    fn def(&mut self, def: Def, params: &Params) -> Option<Vec<Elem>> {
        let Def::Op { op, index } = def else { return None };
        if self.depth >= MAX_DEPTH {
            return self.leaves(op, index);
        }
        self.depth += 1;
        let out = self.op(op, index, params);
        self.depth -= 1;
        out.or_else(|| self.leaves(op, index))
    }

    /// Each element of result `index` of `op` a leaf of its own.
    fn leaves(&self, op: OpId, index: u32) -> Option<Vec<Elem>> {
        let n = count(self.hm.op(op))?;
        Some((0..n).map(|i| Elem::leaf((op.0, index, i))).collect())
    }

    fn operand(&mut self, op: OpId, i: usize, params: &Params) -> Option<Vec<Elem>> {
        let d = self.hm.op(op).operands.get(i)?.def;
        self.def(d, params)
    }

    /// What `op` computes, where it is one of the ops followed; `None` for the others (they become leaves).
    fn op(&mut self, op: OpId, index: u32, params: &Params) -> Option<Vec<Elem>> {
        let hm = self.hm;
        let x = hm.op(op);
        match op_name(x.opcode) {
            "parameter" if !params.is_empty() => params.get(hm.parameter_number(op)?)?.clone(),
            "constant" => literal(hm, op),
            // ops that move a value (copy-start's tuple holds the value it copies, copy-done takes it out)
            "copy-start" => self.operand(op, 0, params),
            "copy" | "bitcast" | "reshape" | "copy-done" | "convert" | "bitcast_convert" => {
                let v = self.operand(op, 0, params)?;
                (op_name(x.opcode) == "copy-done" || Some(v.len()) == count(x)).then_some(v)
            }
            "broadcast" | "broadcast_in_dim" => {
                let v = self.operand(op, 0, params)?;
                let [e] = &v[..] else { return None };
                Some(vec![e.clone(); count(x)?])
            }
            "add" | "subtract" => {
                let (a, b) = (self.operand(op, 0, params)?, self.operand(op, 1, params)?);
                let c = if op_name(x.opcode) == "add" { 1 } else { -1 };
                (a.len() == b.len()).then(|| a.iter().zip(&b).map(|(a, b)| a.plus(c, b)).collect())?
            }
            "negate" => self.operand(op, 0, params)?.iter().map(|e| e.times(-1)).collect(),
            "multiply" => {
                let (a, b) = (self.operand(op, 0, params)?, self.operand(op, 1, params)?);
                (a.len() == b.len()).then(|| {
                    a.iter()
                        .zip(&b)
                        .map(|(a, b)| match (a.as_const(), b.as_const()) {
                            (Some(k), _) => b.times(k),
                            (_, Some(k)) => a.times(k),
                            _ => None,
                        })
                        .collect()
                })?
            }
            "slice" if rank(x) == Some(1) => {
                let v = self.operand(op, 0, params)?;
                let (start, limit, stride) = slice_1d(x)?;
                (limit <= v.len() && stride > 0).then(|| v[start..limit].iter().step_by(stride).cloned().collect())
            }
            "pad" if rank(x) == Some(1) => {
                let v = self.operand(op, 0, params)?;
                let fill = self.operand(op, 1, params)?;
                let [fill] = &fill[..] else { return None };
                let (lo, hi) = padding_1d(x)?;
                let mut out = vec![fill.clone(); lo];
                out.extend(v);
                out.extend(std::iter::repeat_n(fill.clone(), hi));
                Some(out)
            }
            "concatenate" if rank(x) == Some(1) => {
                let mut out = Vec::new();
                for i in 0..x.operands.len() {
                    out.extend(self.operand(op, i, params)?);
                }
                Some(out)
            }
            "fusion" | "call" => self.call(op, index, params),
            "get-tuple-element" => {
                let Def::Op { op: t, .. } = x.operands.first()?.def else { return None };
                let at = u32::try_from(x.attr("index")?.as_int()?).ok()?;
                match op_name(hm.op(t).opcode) {
                    "tuple" => self.operand(t, at as usize, params),
                    "fusion" | "call" => self.call(t, at, params),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// Result `index` of the computation fusion (or call) `op` calls, its parameters `op`'s operands.
    fn call(&mut self, op: OpId, index: u32, params: &Params) -> Option<Vec<Elem>> {
        let x = self.hm.op(op);
        let root = self.hm.root(x.calls.first()?.func)?;
        let inner: Vec<_> = (0..x.operands.len()).map(|i| self.operand(op, i, params)).collect();
        self.result(root, index, &inner)
    }

    /// Result `index` of a computation whose root is `root`, its parameters `params`.
    fn result(&mut self, root: OpId, index: u32, params: &Params) -> Option<Vec<Elem>> {
        if op_name(self.hm.op(root).opcode) == "tuple" {
            return self.operand(root, index as usize, params);
        }
        (index == 0).then_some(())?;
        self.def(Def::Op { op: root, index: 0 }, params)
    }
}

/// How many elements an op's (array) result has, when it is small enough to follow.
fn count(x: &crate::ir::Op<'_>) -> Option<usize> {
    let n = match &x.ty {
        Type::Mlir(t) => t.shaped().map_or(Some(1), |s| s.static_dims().map(|d| d.iter().product::<i64>()))?,
        _ => x.shape()?.array()?.elements()?,
    };
    usize::try_from(n).ok().filter(|&n| n <= MAX_ELEMENTS)
}

fn rank(x: &crate::ir::Op<'_>) -> Option<usize> {
    Some(x.shape()?.array()?.rank())
}

/// The integers of a constant op, row-major: `constant({1})` (HLO), `stablehlo.constant dense<1>`,
/// `arith.constant 1`.
fn literal(m: &Module<'_>, op: OpId) -> Option<Vec<Elem>> {
    if let Some(x) = crate::semantic::kernel::const_int(m, op) {
        return Some(vec![Elem::konst(x)]);
    }
    let o = m.op(op);
    if !crate::semantic::op::is_constant(o.opcode) {
        return None;
    }
    fn flat(v: &Value<'_>, out: &mut Vec<Elem>) -> Option<()> {
        match v.items() {
            [] => out.push(Elem::konst(v.as_int()?)),
            items => {
                for i in items {
                    flat(i, out)?;
                }
            }
        }
        Some(())
    }
    let mut out = Vec::new();
    flat(o.payload.as_deref()?, &mut out)?;
    (!out.is_empty() && out.len() <= MAX_ELEMENTS).then_some(out)
}

/// The integers written in an attribute value, in order, through groups and glued runs (`{[1:3]}` → 1, 3).
fn ints(v: &Value<'_>, out: &mut Vec<i64>) {
    match &v.kind {
        ValueKind::Seq(items) | ValueKind::Group { items, .. } => items.iter().for_each(|i| ints(i, out)),
        _ => out.extend(v.as_int()),
    }
}

/// A rank-1 HLO slice's `[start:limit]` or `[start:limit:stride]`.
fn slice_1d(x: &crate::ir::Op<'_>) -> Option<(usize, usize, usize)> {
    let mut v = Vec::new();
    ints(x.attr("slice")?, &mut v);
    let n = |i: usize| v.get(i).and_then(|&n| usize::try_from(n).ok());
    match v.len() {
        2 => Some((n(0)?, n(1)?, 1)),
        3 => Some((n(0)?, n(1)?, n(2)?)),
        _ => None,
    }
    .filter(|(s, l, _)| s <= l)
}

/// A rank-1 HLO pad's `low_high` (no interior padding).
fn padding_1d(x: &crate::ir::Op<'_>) -> Option<(usize, usize)> {
    let w = x.attr("padding")?.word()?;
    let parts: Vec<usize> = w.split('_').map(|p| p.parse().ok()).collect::<Option<_>>()?;
    match parts[..] {
        [lo, hi] | [lo, hi, 0] => Some((lo, hi)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::hlo::parse_hlo;

    /// DeepSeek-V4 MLA's host program as XLA optimised it: `start_end = [0, d[0]]` built by a pad-and-add fusion,
    /// `d[1:3]` sliced, and a grid size `d[2] - d[1]` from a fusion's tuple.
    const HOST: &str = r#"HloModule m
split {
  p = s32[3]{0} parameter(0)
  a = s32[1]{0} slice(p), slice={[0:1]}
  b = s32[1]{0} slice(p), slice={[1:2]}
  c = s32[1]{0} slice(p), slice={[2:3]}
  ROOT t = (s32[1]{0}, s32[1]{0}, s32[1]{0}) tuple(a, b, c)
}
padadd {
  x = s32[1]{0} parameter(0)
  y = s32[1]{0} parameter(1)
  z = s32[] constant(0)
  py = s32[2]{0} pad(y, z), padding=0_1
  px = s32[2]{0} pad(x, z), padding=1_0
  ROOT s = s32[2]{0} add(py, px)
}
ENTRY e {
  d = s32[3]{0} parameter(0)
  cs = (s32[3]{0}, s32[3]{0}, u32[]) copy-start(d)
  cd = s32[3]{0} copy-done(cs)
  f = (s32[1]{0}, s32[1]{0}, s32[1]{0}) fusion(cd), kind=kLoop, calls=split
  g0 = s32[1]{0} get-tuple-element(f), index=0
  g1 = s32[1]{0} get-tuple-element(f), index=1
  g2 = s32[1]{0} get-tuple-element(f), index=2
  k0 = s32[1]{0} constant({0})
  start_end0 = s32[2]{0} fusion(g0, k0), kind=kLoop, calls=padadd
  start_end1 = s32[2]{0} slice(cd), slice={[1:3]}
  n = s32[1]{0} subtract(g2, g1)
  grid1 = s32[] bitcast(n)
  twice = s32[] multiply(grid1, grid1)
  ROOT r = (s32[2]{0}, s32[2]{0}, s32[]) tuple(start_end0, start_end1, grid1)
}
"#;

    fn of(m: &Module<'_>, name: &str) -> Vec<Elem> {
        let op = m.op_ids().find(|&o| m.op(o).name == name).expect(name);
        elements(m, Def::Op { op, index: 0 }).expect(name)
    }

    #[test]
    fn host_elements_are_sums_over_the_same_leaves() {
        let m = parse_hlo("t.hlo", HOST).expect("parses");
        let d = of(&m, "d");
        let start_end0 = of(&m, "start_end0");
        assert_eq!(start_end0[0].as_const(), Some(0));
        assert_eq!(start_end0[1], d[0]);
        let start_end1 = of(&m, "start_end1");
        assert_eq!(start_end1[..], d[1..3]);
        let grid = of(&m, "grid1");
        assert_eq!(grid[..], [d[2].plus(-1, &d[1]).unwrap()]);
        // a product of two run-time values is no sum: a leaf of its own
        let twice = of(&m, "twice");
        assert!(twice[0].terms.keys().all(|l| !d[0].terms.contains_key(l) && !d[1].terms.contains_key(l)));
    }
}
