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
        let mut def = o.def;
        // through the ops that only move a value
        for _ in 0..4 {
            let Def::Op { op, .. } = def else { break };
            let x = hm.op(op);
            if matches!(op_name(x.opcode), "copy" | "bitcast" | "reshape" | "copy-done") {
                match x.operands.first() {
                    Some(o) => def = o.def,
                    None => break,
                }
            } else {
                break;
            }
        }
        if let Def::Op { op, .. } = def {
            if let Some(v) = literal_ints(hm, op).or_else(|| broadcast_ints(hm, op)) {
                seed.insert(grid + j, v);
            }
        }
    }
    seed
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
