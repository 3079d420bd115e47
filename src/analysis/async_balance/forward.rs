//! The forward walk from one start: the done counts over the paths its value takes, solved as a fixed point
//! over loops, each count with a witness path.

use super::{
    branches, callee, forwards_operand, gte_index, known_trip_count, name, param, VisitKey, MAX_DEPTH, MAX_ROUNDS,
    MAX_STACK, MAX_STEPS, MAX_WITNESS,
};
use crate::ir::{Def, FuncId, Module, OpId};
use crate::semantic::async_pairs::{async_role, AsyncRole};
use std::collections::{HashMap, HashSet};

/// One step of a path that explains a count: a control choice or a done reached.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Step {
    Done(OpId),
    Choice(OpId, String),
}

/// The possible done counts over the paths of a walk: `by[k]` holds a witness path for count k (2 = two or more).
#[derive(Clone, Debug, PartialEq)]
pub(super) struct DoneCounts {
    pub(super) by: [Option<Vec<Step>>; 3],
}

impl DoneCounts {
    /// No path terminates (only an infinite loop).
    fn none() -> Self {
        DoneCounts { by: [None, None, None] }
    }
    fn zero() -> Self {
        DoneCounts { by: [Some(Vec::new()), None, None] }
    }
    fn done(op: OpId) -> Self {
        DoneCounts { by: [None, Some(vec![Step::Done(op)]), None] }
    }
    fn counts(&self) -> [bool; 3] {
        [self.by[0].is_some(), self.by[1].is_some(), self.by[2].is_some()]
    }
    /// Both parts run: counts add up.
    fn sum(&self, other: &DoneCounts) -> DoneCounts {
        let mut out = DoneCounts::none();
        for i in 0..3 {
            for j in 0..3 {
                if let (Some(a), Some(b)) = (&self.by[i], &other.by[j]) {
                    let k = (i + j).min(2);
                    if out.by[k].is_none() {
                        let mut w = a.clone();
                        w.extend(b.iter().cloned());
                        w.truncate(MAX_WITNESS);
                        out.by[k] = Some(w);
                    }
                }
            }
        }
        out
    }
    /// One of the two runs.
    fn union(&self, other: &DoneCounts) -> DoneCounts {
        let mut out = self.clone();
        for k in 0..3 {
            if out.by[k].is_none() {
                out.by[k] = other.by[k].clone();
            }
        }
        out
    }
    fn after(mut self, step: Step) -> DoneCounts {
        for w in self.by.iter_mut().flatten() {
            if w.len() < MAX_WITNESS {
                w.insert(0, step.clone());
            }
        }
        self
    }
}

/// Forward walk from one start.
pub(super) struct Forward<'m, 'a> {
    m: &'m Module<'a>,
    family: &'m str,
    /// Values of states on the current stack from the previous round (the fixed-point approximation).
    approx: HashMap<VisitKey, DoneCounts>,
    memo: HashMap<VisitKey, DoneCounts>,
    stack: HashSet<VisitKey>,
    changed: bool,
    steps: usize,
    gave_up: bool,
}

impl<'m, 'a> Forward<'m, 'a> {
    pub(super) fn new(m: &'m Module<'a>, family: &'m str) -> Self {
        Forward {
            m,
            family,
            approx: HashMap::new(),
            memo: HashMap::new(),
            stack: HashSet::new(),
            changed: false,
            steps: 0,
            gave_up: false,
        }
    }

    /// The done counts of the start's value over every path (the fixed point over loops).
    pub(super) fn run(&mut self, start: OpId) -> Option<DoneCounts> {
        let mut last = None;
        for _ in 0..MAX_ROUNDS {
            self.memo.clear();
            self.changed = false;
            let out = self.flow(start, &[], &[]);
            if self.gave_up {
                return None;
            }
            let stable = !self.changed && last.as_ref().map(DoneCounts::counts) == Some(out.counts());
            last = Some(out);
            if stable {
                break;
            }
        }
        last
    }

    /// The value of `op` (element `path` of it) in call context `ctx` (innermost call last).
    fn flow(&mut self, op: OpId, path: &[i64], ctx: &[OpId]) -> DoneCounts {
        let key: VisitKey = (op, path.to_vec(), ctx.to_vec());
        if self.stack.contains(&key) {
            return self.approx.get(&key).cloned().unwrap_or_else(DoneCounts::none);
        }
        if let Some(o) = self.memo.get(&key) {
            return o.clone();
        }
        self.steps += 1;
        if self.steps > MAX_STEPS || path.len() > MAX_DEPTH || ctx.len() > MAX_DEPTH || self.stack.len() > MAX_STACK {
            self.gave_up = true;
            return DoneCounts::zero();
        }
        self.stack.insert(key.clone());
        let m = self.m;
        let mut acc = DoneCounts::zero();
        let users = m.op(op).users.clone();
        let mut seen = HashSet::new();
        for u in users {
            if seen.insert(u) {
                let o = self.use_(u, op, path, ctx);
                acc = acc.sum(&o);
            }
        }
        if m.op(op).is_root {
            let f = m.func_of(op);
            let o = self.escape(f, path, ctx);
            acc = acc.sum(&o);
        }
        self.stack.remove(&key);
        if self.approx.get(&key).map(DoneCounts::counts) != Some(acc.counts()) {
            self.changed = true;
            self.approx.insert(key.clone(), acc.clone());
        }
        self.memo.insert(key, acc.clone());
        acc
    }

    /// What user `u` does with the value of `v` (element `path`).
    fn use_(&mut self, u: OpId, v: OpId, path: &[i64], ctx: &[OpId]) -> DoneCounts {
        let m = self.m;
        let uo = m.op(u);
        let positions: Vec<usize> = uo
            .operands
            .iter()
            .enumerate()
            .filter(|(_, o)| matches!(o.def, Def::Op { op, .. } if op == v))
            .map(|(k, _)| k)
            .collect();
        if let Some((f, role)) = async_role(uo.opcode) {
            if f != self.family || !path.is_empty() {
                return DoneCounts::zero();
            }
            return match role {
                AsyncRole::Done => DoneCounts::done(u),
                AsyncRole::Update => self.flow(u, &[], ctx),
                AsyncRole::Start => DoneCounts::zero(),
            };
        }
        match uo.opcode {
            "tuple" => self.flow_into_elements(u, &positions, path, ctx),
            "get-tuple-element" => match (path.first(), gte_index(m, u)) {
                (Some(&h), Some(i)) if h == i => self.flow(u, &path[1..], ctx),
                _ => DoneCounts::zero(),
            },
            oc if forwards_operand(oc) => {
                // `opt-barrier(tuple)` forwards its operand; a multi-operand spelling forwards element k
                if positions.len() == 1 && uo.operands.len() == 1 {
                    self.flow(u, path, ctx)
                } else {
                    self.flow_into_elements(u, &positions, path, ctx)
                }
            }
            "while" if positions.contains(&0) => self.flow_into_loop(u, path, ctx),
            "conditional" => self.flow_into_branches(u, &positions, path, ctx),
            "call" => self.flow_into_call(u, &positions, path, ctx),
            _ => DoneCounts::zero(),
        }
    }

    /// The value becomes element k of `u` for each operand position k it is at: every element is used.
    fn flow_into_elements(&mut self, u: OpId, positions: &[usize], path: &[i64], ctx: &[OpId]) -> DoneCounts {
        let mut acc = DoneCounts::zero();
        for &k in positions {
            let mut p = vec![k as i64];
            p.extend_from_slice(path);
            let o = self.flow(u, &p, ctx);
            acc = acc.sum(&o);
        }
        acc
    }

    /// The value is the init of `while` `u`: its body runs (with it as parameter), or, unless the trip count is
    /// known to be at least one, the loop runs zero times and returns it.
    fn flow_into_loop(&mut self, u: OpId, path: &[i64], ctx: &[OpId]) -> DoneCounts {
        let m = self.m;
        let Some(body) = callee(m, u, "body") else { return DoneCounts::zero() };
        let mut inner = ctx.to_vec();
        inner.push(u);
        let iter = match param(m, body, 0) {
            Some(p) => self.flow(p, path, &inner),
            None => DoneCounts::zero(),
        };
        let iter = iter.after(Step::Choice(u, format!("the body of {} runs", name(m, u))));
        if known_trip_count(m, u).is_some_and(|n| n >= 1) {
            return iter;
        }
        let exit = self.flow(u, path, ctx).after(Step::Choice(u, format!("{} runs zero times", name(m, u))));
        iter.union(&exit)
    }

    /// The value is an operand of `conditional` `u`: one branch runs, and the branch whose operand it is sees it.
    fn flow_into_branches(&mut self, u: OpId, positions: &[usize], path: &[i64], ctx: &[OpId]) -> DoneCounts {
        let m = self.m;
        let mut inner = ctx.to_vec();
        inner.push(u);
        let mut acc = DoneCounts::none();
        for (b, f) in branches(m, u).into_iter().enumerate() {
            let o = if positions.contains(&(b + 1)) {
                match param(m, f, 0) {
                    Some(p) => self.flow(p, path, &inner),
                    None => DoneCounts::zero(),
                }
            } else {
                DoneCounts::zero()
            };
            let fname = m.func(f).name;
            acc = acc.union(&o.after(Step::Choice(u, format!("{} takes branch %{fname}", name(m, u)))));
        }
        if acc.counts() == [false; 3] {
            DoneCounts::zero()
        } else {
            acc
        }
    }

    /// The value is an argument of `call` `u`: it flows on from the callee's matching parameters.
    fn flow_into_call(&mut self, u: OpId, positions: &[usize], path: &[i64], ctx: &[OpId]) -> DoneCounts {
        let m = self.m;
        let Some(f) = m.op(u).calls.first().map(|c| c.func) else { return DoneCounts::zero() };
        let mut inner = ctx.to_vec();
        inner.push(u);
        let mut acc = DoneCounts::zero();
        for &k in positions {
            if let Some(p) = param(m, f, k) {
                let o = self.flow(p, path, &inner);
                acc = acc.sum(&o);
            }
        }
        acc
    }

    /// The value reaches the ROOT of computation `f`: it goes back to the caller in `ctx`, or (no context: the
    /// start is inside `f`) to every caller of `f`.
    fn escape(&mut self, f: FuncId, path: &[i64], ctx: &[OpId]) -> DoneCounts {
        let m = self.m;
        let callers: Vec<(OpId, Vec<OpId>)> = match ctx.split_last() {
            Some((&c, outer)) => vec![(c, outer.to_vec())],
            None => m.func(f).callers.iter().map(|&c| (c, Vec::new())).collect(),
        };
        if callers.is_empty() {
            return DoneCounts::zero();
        }
        let mut acc = DoneCounts::none();
        for (c, outer) in callers {
            let co = m.op(c);
            let o = match co.opcode {
                "while" => {
                    if callee(m, c, "body") != Some(f) {
                        DoneCounts::zero()
                    } else {
                        // carried into the next iteration (same context), or the loop exits with it
                        let mut here = outer.clone();
                        if !ctx.is_empty() {
                            here.push(c);
                        }
                        let next = match param(m, f, 0) {
                            Some(p) => self.flow(p, path, &here),
                            None => DoneCounts::zero(),
                        };
                        let next = next.after(Step::Choice(c, format!("{} runs another iteration", name(m, c))));
                        let exit = self.flow(c, path, &outer).after(Step::Choice(c, format!("{} exits", name(m, c))));
                        next.union(&exit)
                    }
                }
                "conditional" | "call" => self.flow(c, path, &outer),
                _ => DoneCounts::zero(),
            };
            acc = acc.union(&o);
        }
        acc
    }
}
