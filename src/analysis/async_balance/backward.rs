//! The backward trace of a done's operand: does every path reach a start of the done's family?

use super::{
    branches, callee, forwards_operand, gte_index, known_trip_count, VisitKey, MAX_DEPTH, MAX_STACK, MAX_STEPS,
};
use crate::ir::{Def, Module, OpId};
use crate::semantic::async_pairs::{async_role, AsyncRole};
use std::collections::HashSet;

/// Backward trace of a done's operand: does every path reach a start of the family?
pub(super) struct Backward<'m, 'a> {
    pub(super) m: &'m Module<'a>,
    pub(super) family: &'m str,
    pub(super) stack: HashSet<VisitKey>,
    pub(super) steps: usize,
    /// A path that ends elsewhere: the op it ends at.
    pub(super) stray: Option<OpId>,
    pub(super) starts: Vec<OpId>,
}

impl Backward<'_, '_> {
    pub(super) fn trace(&mut self, def: Def, path: &[i64], ctx: &[OpId]) {
        let Def::Op { op, .. } = def else {
            return;
        };
        let key: VisitKey = (op, path.to_vec(), ctx.to_vec());
        self.steps += 1;
        if self.steps > MAX_STEPS || path.len() > MAX_DEPTH || ctx.len() > MAX_DEPTH || self.stack.len() > MAX_STACK {
            return;
        }
        if !self.stack.insert(key.clone()) {
            return;
        }
        self.trace_op(op, path, ctx);
        self.stack.remove(&key);
    }

    fn operand(&self, op: OpId, k: usize) -> Def {
        self.m.op(op).operands.get(k).map(|o| o.def).unwrap_or(Def::Unresolved)
    }

    fn trace_op(&mut self, op: OpId, path: &[i64], ctx: &[OpId]) {
        let m = self.m;
        let o = m.op(op);
        if let Some((f, role)) = async_role(o.opcode) {
            match role {
                AsyncRole::Start if f == self.family && path.is_empty() => {
                    if !self.starts.contains(&op) {
                        self.starts.push(op);
                    }
                }
                AsyncRole::Update if f == self.family && path.is_empty() => self.trace(self.operand(op, 0), &[], ctx),
                _ => self.stray = self.stray.or(Some(op)),
            }
            return;
        }
        match o.opcode {
            "get-tuple-element" => match gte_index(m, op) {
                Some(i) => {
                    let mut p = vec![i];
                    p.extend_from_slice(path);
                    self.trace(self.operand(op, 0), &p, ctx)
                }
                None => self.stray = self.stray.or(Some(op)),
            },
            "tuple" => match path.first() {
                Some(&k) if k >= 0 => self.trace(self.operand(op, k as usize), &path[1..], ctx),
                _ => self.stray = self.stray.or(Some(op)),
            },
            oc if forwards_operand(oc) => {
                if o.operands.len() == 1 {
                    self.trace(self.operand(op, 0), path, ctx)
                } else {
                    match path.first() {
                        Some(&k) if k >= 0 => self.trace(self.operand(op, k as usize), &path[1..], ctx),
                        _ => self.stray = self.stray.or(Some(op)),
                    }
                }
            }
            "parameter" => self.trace_parameter(op, path, ctx),
            "while" | "conditional" | "call" => self.trace_result(op, path, ctx),
            _ => self.stray = self.stray.or(Some(op)),
        }
    }

    /// A parameter comes from the caller in `ctx`, or (no context) from every caller of its computation.
    fn trace_parameter(&mut self, op: OpId, path: &[i64], ctx: &[OpId]) {
        let m = self.m;
        let f = m.func_of(op);
        let k = m.parameter_number(op).unwrap_or(0);
        let callers: Vec<(OpId, Vec<OpId>)> = match ctx.split_last() {
            Some((&c, outer)) => vec![(c, outer.to_vec())],
            None => m.func(f).callers.iter().map(|&c| (c, Vec::new())).collect(),
        };
        if callers.is_empty() {
            self.stray = self.stray.or(Some(op));
        }
        for (c, outer) in callers {
            match m.op(c).opcode {
                "while" if callee(m, c, "body") == Some(f) => {
                    // the first iteration reads the init operand; later ones the previous ROOT
                    self.trace(self.operand(c, 0), path, &outer);
                    if let Some(r) = m.root(f) {
                        self.trace(Def::Op { op: r, index: 0 }, path, ctx);
                    }
                }
                "while" => {}
                "conditional" => {
                    if let Some(b) = branches(m, c).iter().position(|&x| x == f) {
                        self.trace(self.operand(c, b + 1), path, &outer);
                    }
                }
                "call" => self.trace(self.operand(c, k), path, &outer),
                _ => self.stray = self.stray.or(Some(op)),
            }
        }
    }

    /// The result of a `while`, `conditional` or `call` comes from the ROOT of what it runs (and, for a loop
    /// that may run zero times, from its init operand).
    fn trace_result(&mut self, op: OpId, path: &[i64], ctx: &[OpId]) {
        let m = self.m;
        let mut inner = ctx.to_vec();
        inner.push(op);
        match m.op(op).opcode {
            "while" => {
                if let Some(r) = callee(m, op, "body").and_then(|b| m.root(b)) {
                    self.trace(Def::Op { op: r, index: 0 }, path, &inner);
                }
                if known_trip_count(m, op).is_none_or(|n| n < 1) {
                    self.trace(self.operand(op, 0), path, ctx);
                }
            }
            "conditional" => {
                for b in branches(m, op) {
                    if let Some(r) = m.root(b) {
                        self.trace(Def::Op { op: r, index: 0 }, path, &inner);
                    }
                }
            }
            _ => {
                if let Some(r) = m.op(op).calls.first().and_then(|c| m.root(c.func)) {
                    self.trace(Def::Op { op: r, index: 0 }, path, &inner);
                }
            }
        }
    }
}
