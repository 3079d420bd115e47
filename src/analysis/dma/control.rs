//! Control flow: branches as guards; `scf.for` and `scf.while` handed to the induction ([`super::induct`]).

use super::exec::{as_cond, as_lin, key, merge, Base, Engine, Val};
use super::induct::{induct, Loop};
use super::term::{Cond, Lin, Rel};
use crate::ir::*;
use crate::semantic::op::op_name;

/// Buffers that ops nested in `id` store scalars to, found through views to their root.
pub fn stored_in(e: &Engine<'_, '_>, id: OpId) -> Vec<Base> {
    let m = e.m;
    let mut out = Vec::new();
    let mut stack: Vec<OpId> = vec![id];
    while let Some(o) = stack.pop() {
        let op = m.op(o);
        for r in op.regions.iter() {
            for b in &m.regions[r.idx()].blocks {
                stack.extend(m.blocks[b.idx()].ops.iter().copied());
            }
        }
        if op.opcode != "memref.store" {
            continue;
        }
        let Some(mut d) = op.operands.get(1).map(|x| x.def) else { continue };
        for _ in 0..64 {
            match d {
                Def::Op { op, .. } if crate::semantic::op::is_view(m.op(op).opcode) => {
                    match m.op(op).operands.first() {
                        Some(x) => d = x.def,
                        None => break,
                    }
                }
                _ => break,
            }
        }
        if let Some(Val::Ref(v)) = e.env.get(&key(d)) {
            if !out.contains(&v.base) {
                out.push(v.base);
            }
        } else if let Def::Op { op, .. } = d {
            if !out.contains(&Base::Alloc(op)) {
                out.push(Base::Alloc(op));
            }
        }
    }
    out
}

/// An op with regions: `scf.if`, `scf.for`, `scf.while`, `scf.index_switch`, or a scope (`tpu.region`) run inline.
pub fn region_op(e: &mut Engine<'_, '_>, id: OpId) {
    let m = e.m;
    let op = m.op(id);
    let blk = |r: usize| op.regions.get(r).and_then(|r| m.regions[r.idx()].blocks.first().copied());
    match op_name(op.opcode) {
        "if" => if_op(e, id),
        "for" => for_op(e, id),
        "while" => while_op(e, id),
        "index_switch" => switch_op(e, id),
        _ if op.regions.len() == 1 => {
            if let Some(b) = blk(0) {
                let y = e.block(b).unwrap_or_default();
                bind_results(e, id, y);
            }
        }
        _ => e.giveup(id, format!("`{}` with several regions is not followed", op.opcode)),
    }
}

fn bind_results(e: &mut Engine<'_, '_>, id: OpId, vals: Vec<Val>) {
    for (k, v) in vals.into_iter().enumerate() {
        e.env.insert(key(Def::Op { op: id, index: k as u32 }), v);
    }
}

fn if_op(e: &mut Engine<'_, '_>, id: OpId) {
    let m = e.m;
    let op = m.op(id);
    let c = op.operands.first().map(|o| e.get(o)).as_ref().and_then(as_cond);
    let Some(c) = c else {
        e.giveup(id, "a branch on a condition the engine cannot follow");
        return;
    };
    let g0 = e.guard.clone();
    let blk = |r: usize| op.regions.get(r).and_then(|r| m.regions[r.idx()].blocks.first().copied());
    // a replay decides the branch: only the side taken runs
    if e.replay_inputs.is_some() && matches!(c, Cond::True | Cond::False) {
        let side = if c == Cond::True { 0 } else { 1 };
        let y = blk(side).map(|b| e.block(b).unwrap_or_default()).unwrap_or_default();
        bind_results(e, id, y);
        return;
    }
    e.guard = Cond::and([g0.clone(), c.clone()]);
    let yt = blk(0).map(|b| e.block(b).unwrap_or_default()).unwrap_or_default();
    e.guard = Cond::and([g0.clone(), Cond::negate(c.clone())]);
    let yf = blk(1).map(|b| e.block(b).unwrap_or_default()).unwrap_or_default();
    e.guard = g0;
    let vals = yt.iter().zip(yf.iter()).map(|(a, b)| merge(&c, a, b)).collect();
    bind_results(e, id, vals);
}

fn switch_op(e: &mut Engine<'_, '_>, id: OpId) {
    let m = e.m;
    let op = m.op(id);
    let Some(x) = op.operands.first().map(|o| e.get(o)).as_ref().and_then(as_lin) else {
        e.giveup(id, "a switch on a value the engine cannot follow");
        return;
    };
    let cases = op.attr("cases").and_then(crate::parse::mlir::attr::int_array).unwrap_or_default();
    let g0 = e.guard.clone();
    // regions: default first, then one per case (MLIR's order)
    let is = |k: i64| x.sub(&Lin::int(k)).map(|d| Cond::cmp(d, Rel::Eq0)).unwrap_or(Cond::False);
    let default = Cond::and(cases.iter().map(|&k| Cond::negate(is(k))));
    let mut conds = vec![default];
    conds.extend(cases.iter().map(|&k| is(k)));
    if e.replay_inputs.is_some() {
        if let Some(r) = conds.iter().position(|c| *c == Cond::True) {
            let y = op.regions.get(r).and_then(|r| m.regions[r.idx()].blocks.first().copied());
            let y = y.map(|b| e.block(b).unwrap_or_default()).unwrap_or_default();
            bind_results(e, id, y);
            return;
        }
    }
    let mut out: Option<Vec<Val>> = None;
    for (r, c) in conds.iter().enumerate() {
        let Some(b) = op.regions.get(r).and_then(|r| m.regions[r.idx()].blocks.first().copied()) else { continue };
        e.guard = Cond::and([g0.clone(), c.clone()]);
        let y = e.block(b).unwrap_or_default();
        out = Some(match out {
            None => y,
            Some(prev) => prev.iter().zip(&y).map(|(p, v)| merge(c, v, p)).collect(),
        });
    }
    e.guard = g0;
    bind_results(e, id, out.unwrap_or_default());
}

/// A loop as messages name it: by its Python line where known (`the loop at kernels.py:185 (dump: line 46)`).
pub(super) fn line(e: &Engine<'_, '_>, id: OpId) -> String {
    match e.places.get(&id) {
        Some(p) => format!("the loop at {p}"),
        None => format!("the loop at line {}", e.lines.line(e.m.op(id).span.start as usize)),
    }
}

fn for_op(e: &mut Engine<'_, '_>, id: OpId) {
    let m = e.m;
    let op = m.op(id);
    let Some(&body) = op.regions.first().and_then(|r| m.regions[r.idx()].blocks.first()) else { return };
    let lb_o = op.operands.iter().find(|o| o.role.is_none());
    let ub_o = op.operands.iter().find(|o| o.role == Some("to")).or_else(|| op.operands.get(1));
    let st_o = op.operands.iter().find(|o| o.role == Some("step")).or_else(|| op.operands.get(2));
    let inits: Vec<&Operand<'_>> =
        op.operands.iter().filter(|o| matches!(o.role, Some("iter_args") | Some("init") | Some("iter_arg"))).collect();
    let inits: Vec<&Operand<'_>> = if inits.is_empty() { op.operands.iter().skip(3).collect() } else { inits };
    let lb = lb_o.map(|o| e.get(o)).as_ref().and_then(as_lin);
    let ub = ub_o.map(|o| e.get(o)).as_ref().and_then(as_lin);
    let step = st_o.map(|o| e.get(o)).as_ref().and_then(as_lin).and_then(|s| s.as_int());
    let (Some(lb), Some(ub), Some(step)) = (lb, ub, step.filter(|&s| s > 0)) else {
        e.giveup(id, "a loop whose bounds or step the engine cannot follow");
        return;
    };
    if e.replay_inputs.is_none() && super::summary::for_loop(e, id, body, &lb, &ub, step) {
        return;
    }
    let init: Vec<Val> = inits.iter().map(|o| e.get(o)).collect();
    let stored = stored_in(e, id);
    let l = Loop { name: line(e, id), op: Some(id), lb, ub, step, init, deep: true };
    let out = induct(e, l, &stored, &mut |e, i, heads| {
        e.env.insert(key(Def::BlockArg { block: body, index: 0 }), Val::Int(i.clone()));
        for (k, h) in heads.iter().enumerate() {
            e.env.insert(key(Def::BlockArg { block: body, index: k as u32 + 1 }), h.clone());
        }
        e.block(body).unwrap_or_default()
    });
    bind_results(e, id, out);
}

/// `scf.while`: iterations `k = 0, 1, ...` up to an unknown count; an iteration whose condition is false changes
/// nothing (its carried values stay), so the loop is `for k in [0, n)` with `n` unknown.
fn while_op(e: &mut Engine<'_, '_>, id: OpId) {
    let m = e.m;
    let op = m.op(id);
    let blk = |r: usize| op.regions.get(r).and_then(|r| m.regions[r.idx()].blocks.first().copied());
    let (Some(before), Some(after)) = (blk(0), blk(1)) else {
        e.giveup(id, "an `scf.while` without two regions");
        return;
    };
    let init: Vec<Val> = op.operands.iter().map(|o| e.get(o)).collect();
    if e.replay_inputs.is_some() {
        let out = replay_while(e, id, before, after, init);
        bind_results(e, id, out);
        return;
    }
    let n = e.fresh_carried(format!("{}: trip count", line(e, id)));
    let stored = stored_in(e, id);
    let l = Loop { name: line(e, id), op: Some(id), lb: Lin::int(0), ub: n, step: 1, init, deep: true };
    let out = induct(e, l, &stored, &mut |e, _k, heads| {
        for (k, h) in heads.iter().enumerate() {
            e.env.insert(key(Def::BlockArg { block: before, index: k as u32 }), h.clone());
        }
        let y = e.block(before).unwrap_or_default();
        let Some(c) = y.first().and_then(as_cond) else {
            e.giveup(id, "an `scf.while` whose condition the engine cannot follow");
            return heads.to_vec();
        };
        let fwd: Vec<Val> = y.into_iter().skip(1).collect();
        let g0 = e.guard.clone();
        e.guard = Cond::and([g0.clone(), c.clone()]);
        for (k, v) in fwd.iter().enumerate() {
            e.env.insert(key(Def::BlockArg { block: after, index: k as u32 }), v.clone());
        }
        let next = e.block(after).unwrap_or_default();
        e.guard = g0;
        heads.iter().zip(next.iter()).map(|(h, v)| merge(&c, v, h)).collect()
    });
    bind_results(e, id, out);
}

/// `scf.while` in a replay: its condition is a number each time round.
fn replay_while(e: &mut Engine<'_, '_>, id: OpId, before: BlockId, after: BlockId, init: Vec<Val>) -> Vec<Val> {
    let name = line(e, id);
    let mut heads = init;
    for k in 0.. {
        if !super::replay::next_iteration(e, id) {
            return heads;
        }
        for (j, h) in heads.iter().enumerate() {
            e.env.insert(key(Def::BlockArg { block: before, index: j as u32 }), h.clone());
        }
        e.replay_at.push((name.clone(), k, None));
        let y = e.block(before).unwrap_or_default();
        let fwd: Vec<Val> = y.iter().skip(1).cloned().collect();
        match y.first().and_then(as_cond) {
            Some(Cond::True) => {
                for (j, v) in fwd.iter().enumerate() {
                    e.env.insert(key(Def::BlockArg { block: after, index: j as u32 }), v.clone());
                }
                heads = e.block(after).unwrap_or_default();
                e.replay_at.pop();
            }
            Some(Cond::False) => {
                e.replay_at.pop();
                return fwd;
            }
            _ => {
                e.replay_at.pop();
                e.giveup(id, "replay: an `scf.while` whose condition is not a number");
                return heads;
            }
        }
    }
    heads
}
