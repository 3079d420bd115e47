//! The kernel's scalar-prefetch memory as its host program fixes it.

use crate::ir::*;
use crate::semantic::kernel;
use crate::semantic::op::op_name;
use std::collections::BTreeMap;

/// Scalar-prefetch operands whose values the host program fixes: kernel argument → its elements, row-major.
pub type Seed = BTreeMap<usize, Vec<i64>>;

/// The elements of a seeded operand of shape `dims`, each with its index (`vals` row-major); nothing when the
/// shape does not hold exactly that many.
pub fn elements<'v>(dims: &[i64], vals: &'v [i64]) -> impl Iterator<Item = (Vec<i64>, i64)> + 'v {
    let dims = dims.to_vec();
    let fits = dims.iter().product::<i64>() == vals.len() as i64;
    vals.iter().enumerate().filter(move |_| fits).map(move |(flat, &v)| {
        let mut idx = vec![0i64; dims.len()];
        let mut rest = flat as i64;
        for (d, n) in dims.iter().enumerate().rev() {
            idx[d] = rest % n.max(&1);
            rest /= n.max(&1);
        }
        (idx, v)
    })
}

/// The scalar-prefetch operands of a kernel that its host call passes as constants (jax's paged attention
/// passes `buffer_index = 0` and `init_flag = 1` this way): read from the HLO or StableHLO that calls it.
pub fn seed_from_host(c: &crate::lint::Compilation<'_>, unit: usize, k: &kernel::Kernel<'_>) -> Seed {
    let mut seed = Seed::new();
    let Some((hu, call)) = crate::analysis::pipelining::host_call(c, unit, k.name) else { return seed };
    let Some(host) = c.units.get(hu) else { return seed };
    let hm = &host.module;
    let grid = k.iteration_bounds.len();
    for j in 0..k.scalar_prefetch {
        let Some(o) = hm.op(call).operands.get(k.host_operand(j)) else { break };
        if let Def::Op { op, .. } = moved(hm, o.def) {
            if let Some(v) = literal_ints(hm, op).or_else(|| broadcast_ints(hm, op)) {
                seed.insert(grid + j, v);
            }
        }
    }
    seed
}

/// The value `def` is, through the host ops that only move one (copies, bitcasts, reshapes).
fn moved(hm: &Module<'_>, mut def: Def) -> Def {
    for _ in 0..4 {
        let Def::Op { op, .. } = def else { break };
        let x = hm.op(op);
        if !matches!(op_name(x.opcode), "copy" | "bitcast" | "reshape" | "copy-done") {
            break;
        }
        match x.operands.first() {
            Some(o) => def = o.def,
            None => break,
        }
    }
    def
}

/// The grid dimensions of kernel `k` whose run-time size its host call passes as one element of a value it also
/// passes as a scalar-prefetch operand (`grid = (distribution[2],)`: operand 0 is `bitcast(slice(d, [2:3]))` and a
/// later operand is `d`), as [`kernel::Kernel::grid_from_host`] holds them. A witness then cannot give the grid a
/// size the table does not (MLA v1's had a grid of 2 with `distribution[2] = 0`, which its wrapper never passes).
pub fn grid_from_host(
    c: &crate::lint::Compilation<'_>,
    unit: usize,
    k: &kernel::Kernel<'_>,
) -> std::collections::BTreeMap<usize, (usize, usize)> {
    let mut out = std::collections::BTreeMap::new();
    let Some((hu, call)) = crate::analysis::pipelining::host_call(c, unit, k.name) else { return out };
    let Some(host) = c.units.get(hu) else { return out };
    let hm = &host.module;
    let operands = &hm.op(call).operands;
    let grid = k.iteration_bounds.len();
    let prefetch: Vec<Option<Def>> =
        (0..k.scalar_prefetch).map(|j| operands.get(k.host_operand(j)).map(|o| moved(hm, o.def))).collect();
    // (Pallas passes the bound of each dimension known only at run time first, in order)
    let dynamic = k.iteration_bounds.iter().enumerate().filter(|b| *b.1 < 0).map(|b| b.0);
    for (n, d) in dynamic.enumerate() {
        let Some(Def::Op { op: s, .. }) = operands.get(n).map(|o| moved(hm, o.def)) else { continue };
        let x = hm.op(s);
        let (Some(src), Some(at)) = (x.operands.first(), slice_element(x)) else { continue };
        let src = moved(hm, src.def);
        if let Some(j) = prefetch.iter().position(|p| *p == Some(src)) {
            out.insert(d, (grid + j, at));
        }
    }
    out
}

/// The element a one-element HLO `slice` of a rank-1 value takes (`slice={[2:3]}` → 2).
fn slice_element(x: &crate::ir::Op<'_>) -> Option<usize> {
    if op_name(x.opcode) != "slice" {
        return None;
    }
    let v = x.attr("slice")?;
    let [dim] = v.items() else { return None };
    // (`2:3` parses as one run of glued values)
    let parts = dim.items().iter().flat_map(|w| match &w.kind {
        crate::ir::ValueKind::Seq(glued) => glued.iter().collect::<Vec<_>>(),
        _ => vec![w],
    });
    let ints: Vec<i64> = parts.filter_map(|w| w.as_int()).collect();
    match ints[..] {
        [start, limit] | [start, limit, 1] if limit == start + 1 => usize::try_from(start).ok(),
        _ => None,
    }
}

/// A scalar constant broadcast to an array (`broadcast(constant(0))`: jax's ragged paged attention starts its
/// `seq_buf_idx` this way), one value per element.
fn broadcast_ints(m: &Module<'_>, op: OpId) -> Option<Vec<i64>> {
    let o = m.op(op);
    if !matches!(op_name(o.opcode), "broadcast" | "broadcast_in_dim") {
        return None;
    }
    let Def::Op { op: src, .. } = o.operands.first()?.def else { return None };
    let [v] = literal_ints(m, src)?[..] else { return None };
    let n = match &o.ty {
        Type::Mlir(t) => t.shaped()?.static_dims()?.iter().product::<i64>(),
        _ => o.shape()?.array()?.elements()?,
    };
    (1..=4096).contains(&n).then(|| vec![v; n as usize])
}

/// The integers of a constant op: `constant({1})` (HLO), `stablehlo.constant dense<1>`, `arith.constant 1`.
fn literal_ints(m: &Module<'_>, op: OpId) -> Option<Vec<i64>> {
    if let Some(x) = kernel::const_int(m, op) {
        return Some(vec![x]);
    }
    let o = m.op(op);
    if !crate::semantic::op::is_constant(o.opcode) {
        return None;
    }
    fn flat(v: &Value<'_>, out: &mut Vec<i64>) -> Option<()> {
        match v.items() {
            [] => out.push(v.as_int()?),
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
    (!out.is_empty() && out.len() <= 4096).then_some(out)
}
