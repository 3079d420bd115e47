//! `async-balance`: every HLO asynchronous start is done exactly once on every path, and every done has a start.
//!
//! HLO computations are dataflow graphs, so "paths" are control choices the value of a start goes through: a
//! `while` (the loop runs zero times, or its body runs and the value is carried into the next iteration through
//! the body's parameter and ROOT tuple, or the loop exits with it in its result), a `conditional` (one branch runs)
//! and `call`s. The walk follows the start's value through `tuple` / `get-tuple-element` (index-precise: a gte of
//! index k follows only element k), `bitcast`, `opt-barrier` and `domain`, into and out of called computations,
//! and counts the dones of the start's family it reaches (its `-update`s count as the start). Fan-out within a
//! computation adds up (both users run); control choices give alternatives. The result is the set of done counts
//! over all paths (0, 1, 2 or more); loops are solved as a fixed point. A done is traced backwards the same way;
//! if some path reaches something other than a start of its family, the done has no start on that path.

use super::{At, Hit, Options};
use crate::ir::{Def, FuncId, Layer, Module, OpId};
use crate::lint::Compilation;
use crate::semantic::async_pairs::{async_role, AsyncRole};
use std::collections::{HashMap, HashSet};

/// Longest tuple-index path and call context followed (deeper nesting is not seen in XLA output).
const MAX_DEPTH: usize = 12;
/// Walk steps per start or done before giving up on it (no finding rather than a guess).
const MAX_STEPS: usize = 50_000;
/// Fixed-point rounds for loops (the count lattice {0, 1, 2+} converges in a few).
const MAX_ROUNDS: usize = 6;
/// Deepest recursion of a walk (nested values in flight); deeper gives up on the start or done.
const MAX_STACK: usize = 128;
/// Longest witness (choices and dones) kept to explain a path.
const MAX_WITNESS: usize = 10;

/// One step of a path that explains a count: a control choice or a done reached.
#[derive(Clone, Debug, PartialEq)]
enum Step {
    Done(OpId),
    Choice(OpId, String),
}

/// The possible done counts over the paths of a walk: `by[k]` holds a witness path for count k (2 = two or more).
#[derive(Clone, Debug, PartialEq)]
struct DoneCounts {
    by: [Option<Vec<Step>>; 3],
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

type VisitKey = (OpId, Vec<i64>, Vec<OpId>);

/// Forward walk from one start.
struct Forward<'m, 'a> {
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

/// Ops that forward their operand unchanged (a start's value flows through them to its done).
fn forwards_operand(opcode: &str) -> bool {
    matches!(opcode, "bitcast" | "opt-barrier" | "domain")
}

fn callee(m: &Module<'_>, op: OpId, role: &str) -> Option<FuncId> {
    m.op(op).calls.iter().find(|c| c.role == role).map(|c| c.func)
}

/// The `parameter(k)` op of a computation.
fn param(m: &Module<'_>, f: FuncId, k: usize) -> Option<OpId> {
    m.body_ops(f).iter().copied().find(|&o| m.parameter_number(o) == Some(k))
}

/// The branch computations of a conditional, in operand order (branch b reads operand b + 1).
fn branches(m: &Module<'_>, op: OpId) -> Vec<FuncId> {
    let o = m.op(op);
    let t = o.calls.iter().find(|c| c.role == "true_computation");
    let f = o.calls.iter().find(|c| c.role == "false_computation");
    if let (Some(t), Some(f)) = (t, f) {
        return vec![t.func, f.func];
    }
    o.calls.iter().filter(|c| c.role == "branch_computations").map(|c| c.func).collect()
}

/// `known_trip_count` of a while from its backend_config, when XLA proved one.
fn known_trip_count(m: &Module<'_>, w: OpId) -> Option<i64> {
    let cfg = m.backend_config(w)?;
    let n = cfg.get("known_trip_count")?.get("n")?;
    n.as_i64().or_else(|| n.as_str()?.parse().ok())
}

fn gte_index(m: &Module<'_>, op: OpId) -> Option<i64> {
    m.op(op).attr("index").and_then(|v| v.as_int())
}

fn name(m: &Module<'_>, op: OpId) -> String {
    format!("%{}", m.op(op).name)
}

impl<'m, 'a> Forward<'m, 'a> {
    fn new(m: &'m Module<'a>, family: &'m str) -> Self {
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
    fn run(&mut self, start: OpId) -> Option<DoneCounts> {
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

/// Backward trace of a done's operand: does every path reach a start of the family?
struct Backward<'m, 'a> {
    m: &'m Module<'a>,
    family: &'m str,
    stack: HashSet<VisitKey>,
    steps: usize,
    /// A path that ends elsewhere: the op it ends at.
    stray: Option<OpId>,
    starts: Vec<OpId>,
}

impl Backward<'_, '_> {
    fn trace(&mut self, def: Def, path: &[i64], ctx: &[OpId]) {
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

fn dones_in(w: &[Step]) -> Vec<OpId> {
    w.iter().filter_map(|s| if let Step::Done(d) = s { Some(*d) } else { None }).collect()
}

fn choices_in(w: &[Step]) -> Vec<(OpId, String)> {
    w.iter().filter_map(|s| if let Step::Choice(c, t) = s { Some((*c, t.clone())) } else { None }).collect()
}

fn describe_path(choices: &[(OpId, String)]) -> String {
    let mut v: Vec<&str> = Vec::new();
    for (_, t) in choices {
        if !v.contains(&t.as_str()) {
            v.push(t);
        }
    }
    v.join(", then ")
}

/// The `never-done` finding of start `id`: `zero` is a witness path with no done, `one` one with a done (if any).
fn never_done_hit(m: &Module<'_>, unit: usize, id: OpId, family: &str, zero: &[Step], one: Option<&[Step]>) -> Hit {
    let at = |op: OpId| At::Op { unit, op };
    let op = m.op(id);
    let sname = name(m, id);
    let choices = choices_in(zero);
    let (detail, label) = if choices.is_empty() {
        (
            format!("`{sname}` ({}) is never done: no `{family}-done` consumes its value", op.opcode),
            "started here, never done".to_string(),
        )
    } else {
        (
            format!("`{sname}` ({}) is not done on the path where {}", op.opcode, describe_path(&choices)),
            "started here; not done on every path".to_string(),
        )
    };
    let mut h = Hit::new(at(id), label, detail)
        .capture("kind", "never-done")
        .capture("family", family)
        .capture("start", sname.clone())
        .capture("done", "");
    for (c, t) in choices.iter().take(4) {
        h = h.with_label(at(*c), format!("path without a done: {t}"));
    }
    // where it is done on the other paths
    if let Some(d) = one.and_then(|w1| dones_in(w1).first().copied()) {
        h = h.with_label(at(d), "done here on other paths");
    }
    h
}

/// The `done-twice` finding of start `id`, `twice` a witness path with two or more dones.
fn done_twice_hit(m: &Module<'_>, unit: usize, id: OpId, family: &str, twice: &[Step]) -> Hit {
    let at = |op: OpId| At::Op { unit, op };
    let op = m.op(id);
    let sname = name(m, id);
    let dones = dones_in(twice);
    let choices = choices_in(twice);
    let mut names: Vec<String> = dones.iter().map(|&d| name(m, d)).collect();
    names.dedup();
    let where_ = if choices.is_empty() { String::new() } else { format!(" (when {})", describe_path(&choices)) };
    let detail = format!(
        "`{sname}` ({}) is done more than once on one path{where_}: {}",
        op.opcode,
        if names.len() == 1 {
            format!("`{}` runs twice on it", names[0])
        } else {
            format!("by {}", names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(" and "))
        }
    );
    let mut h = Hit::new(at(id), "started once here", detail)
        .capture("kind", "done-twice")
        .capture("family", family)
        .capture("start", sname.clone())
        .capture("done", names.join(", "));
    let mut labelled = HashSet::new();
    for d in dones {
        if labelled.insert(d) {
            h = h.with_label(at(d), "done here");
        }
    }
    h
}

/// The findings of start `id`: a path where it is never done, a path where it is done twice.
fn check_start(m: &Module<'_>, unit: usize, id: OpId, family: &str) -> Vec<Hit> {
    let mut hits = Vec::new();
    let mut fw = Forward::new(m, family);
    let Some(out) = fw.run(id) else { return hits };
    if let Some(w) = &out.by[0] {
        hits.push(never_done_hit(m, unit, id, family, w, out.by[1].as_deref()));
    }
    if let Some(w) = &out.by[2] {
        hits.push(done_twice_hit(m, unit, id, family, w));
    }
    hits
}

/// The `done-without-start` finding of done `id`, when some path of its operand reaches no start of its family.
fn check_done(m: &Module<'_>, unit: usize, id: OpId, family: &str) -> Option<Hit> {
    let at = |op: OpId| At::Op { unit, op };
    let op = m.op(id);
    let first = op.operands.first()?;
    let mut bw = Backward { m, family, stack: HashSet::new(), steps: 0, stray: None, starts: Vec::new() };
    bw.trace(first.def, &[], &[]);
    if bw.steps > MAX_STEPS {
        return None;
    }
    let s = match (bw.stray, first.def) {
        (Some(s), _) => s,
        (None, Def::Op { .. }) => return None,
        (None, _) => id,
    };
    let dname = name(m, id);
    let from = if s == id { format!("`{}`", first.name) } else { format!("`{}` ({})", name(m, s), m.op(s).opcode) };
    let detail = if bw.starts.is_empty() {
        format!("`{dname}` ({}) has no `{family}` start: its operand comes from {from}", op.opcode)
    } else {
        format!(
            "`{dname}` ({}) has no `{family}` start on some path: its operand can come from {from} besides {}",
            op.opcode,
            bw.starts.iter().map(|&x| format!("`{}`", name(m, x))).collect::<Vec<_>>().join(", ")
        )
    };
    let mut h = Hit::new(at(id), "done without a start", detail)
        .capture("kind", "done-without-start")
        .capture("family", family)
        .capture("start", bw.starts.iter().map(|&x| name(m, x)).collect::<Vec<_>>().join(", "))
        .capture("done", dname);
    if s != id {
        h = h.with_label(at(s), "its operand comes from here");
    }
    Some(h)
}

/// The findings of one HLO module (unit index `unit` for locations).
pub fn check_module(m: &Module<'_>, unit: usize) -> Vec<Hit> {
    let mut hits = Vec::new();
    if m.layer != Layer::Hlo {
        return hits;
    }
    for id in m.op_ids() {
        let Some((family, role)) = async_role(m.op(id).opcode) else { continue };
        match role {
            AsyncRole::Start => hits.extend(check_start(m, unit, id, family)),
            AsyncRole::Done => hits.extend(check_done(m, unit, id, family)),
            AsyncRole::Update => {}
        }
    }
    hits
}

pub fn run(c: &Compilation<'_>, unit: usize, _opts: &Options) -> Vec<Hit> {
    match c.units.get(unit) {
        Some(u) => check_module(&u.module, unit),
        None => Vec::new(),
    }
}

pub const DOC: &str = "Every HLO asynchronous start (`copy-start`, `all-gather-start`, `all-reduce-start`, \
`collective-permute-start`, `send`/`recv`, `async-start` and any `X-start`) is done exactly once on every path, and \
every done has a start. The start's value is followed through `tuple`/`get-tuple-element` (index-precise), \
`bitcast`/`opt-barrier`, into `while` loops (zero trips, loop-carried through the body's parameter and ROOT, exit), \
`conditional` branches (each branch is a path) and `call`s, counting the dones of its family (`-update`s continue the \
chain). kind `never-done`: some path ends without a done (the async op is still in flight, its buffer never \
released); `done-twice`: one path reaches two dones of the same start; `done-without-start`: a done whose operand \
does not trace back to a start of its family on every path.";

/// How rule packs call this analysis (`analysis: async-balance`).
pub static ANALYSIS: super::Analysis = super::Analysis {
    name: "async-balance",
    layers: &[Layer::Hlo],
    doc: DOC,
    captures: &["kind", "family", "start", "done"],
    kinds: &["never-done", "done-twice", "done-without-start"],
    options: &[],
    run,
    // reads no LLO op
    llo: super::LloReads::CrossLayerOps,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::hlo::parse_hlo;

    fn hits(text: &str) -> Vec<Hit> {
        let m = parse_hlo("t.hlo", text).expect("parses");
        check_module(&m, 0)
    }

    fn kinds(text: &str) -> Vec<String> {
        hits(text).iter().map(|h| h.captures["kind"].clone()).collect()
    }

    const SIMPLE_OK: &str = r#"HloModule m
ENTRY e {
  p = f32[8]{0} parameter(0)
  cs = (f32[8]{0}, f32[8]{0}, u32[]) copy-start(p)
  ROOT cd = f32[8]{0} copy-done(cs)
}
"#;

    #[test]
    fn a_start_with_its_done_is_balanced() {
        assert!(kinds(SIMPLE_OK).is_empty());
    }

    #[test]
    fn a_start_without_done_is_never_done() {
        let t = r#"HloModule m
ENTRY e {
  p = f32[8]{0} parameter(0)
  cs = (f32[8]{0}, f32[8]{0}, u32[]) copy-start(p)
  ROOT n = f32[8]{0} negate(p)
}
"#;
        let h = hits(t);
        assert_eq!(h.len(), 1);
        assert_eq!(h[0].captures["kind"], "never-done");
        assert_eq!(h[0].captures["start"], "%cs");
        assert!(h[0].captures["detail"].contains("never done"), "{}", h[0].captures["detail"]);
    }

    #[test]
    fn done_twice_through_two_gte_paths() {
        let t = r#"HloModule m
ENTRY e {
  p = f32[8]{0} parameter(0)
  cs = (f32[8]{0}, f32[8]{0}, u32[]) copy-start(p)
  t = ((f32[8]{0}, f32[8]{0}, u32[]), f32[8]{0}) tuple(cs, p)
  g1 = (f32[8]{0}, f32[8]{0}, u32[]) get-tuple-element(t), index=0
  g2 = (f32[8]{0}, f32[8]{0}, u32[]) get-tuple-element(t), index=0
  g3 = f32[8]{0} get-tuple-element(t), index=1
  d1 = f32[8]{0} copy-done(g1)
  d2 = f32[8]{0} copy-done(g2)
  ROOT r = (f32[8]{0}, f32[8]{0}, f32[8]{0}) tuple(d1, d2, g3)
}
"#;
        let h = hits(t);
        assert_eq!(kinds(t), vec!["done-twice"]);
        assert_eq!(h[0].labels.len(), 2, "both dones labelled");
        assert!(h[0].captures["done"].contains("%d1") && h[0].captures["done"].contains("%d2"));
    }

    #[test]
    fn gte_of_another_index_does_not_follow_the_start() {
        let t = r#"HloModule m
ENTRY e {
  p = f32[8]{0} parameter(0)
  cs = (f32[8]{0}, f32[8]{0}, u32[]) copy-start(p)
  t = ((f32[8]{0}, f32[8]{0}, u32[]), f32[8]{0}) tuple(cs, p)
  g0 = (f32[8]{0}, f32[8]{0}, u32[]) get-tuple-element(t), index=0
  g1 = f32[8]{0} get-tuple-element(t), index=1
  d = f32[8]{0} copy-done(g0)
  ROOT r = (f32[8]{0}, f32[8]{0}) tuple(d, g1)
}
"#;
        assert!(kinds(t).is_empty());
    }

    #[test]
    fn an_orphan_done_has_no_start() {
        let t = r#"HloModule m
ENTRY e {
  p = (f32[8]{0}, f32[8]{0}, u32[]) parameter(0)
  ROOT d = f32[8]{0} copy-done(p)
}
"#;
        let h = hits(t);
        assert_eq!(kinds(t), vec!["done-without-start"]);
        assert_eq!(h[0].captures["done"], "%d");
    }

    #[test]
    fn a_done_of_another_family_is_no_done() {
        let t = r#"HloModule m
ENTRY e {
  p = f32[8]{0} parameter(0)
  cs = (f32[8]{0}, f32[8]{0}, u32[]) copy-start(p)
  ROOT d = f32[8]{0} all-gather-done(cs)
}
"#;
        let mut k = kinds(t);
        k.sort();
        assert_eq!(k, vec!["done-without-start", "never-done"]);
    }

    #[test]
    fn async_updates_continue_the_chain() {
        let t = r#"HloModule m
comp {
  a = f32[8]{0} parameter(0)
  ROOT n = f32[8]{0} negate(a)
}
ENTRY e {
  p = f32[8]{0} parameter(0)
  s = ((f32[8]{0}), f32[8]{0}, s32[]) async-start(p), calls=comp
  u = ((f32[8]{0}), f32[8]{0}, s32[]) async-update(s)
  ROOT d = f32[8]{0} async-done(u)
}
"#;
        assert!(kinds(t).is_empty());
    }

    const COND: &str = r#"HloModule m
then_b {
  a = (f32[8]{0}, f32[8]{0}, u32[]) parameter(0)
  ROOT d = f32[8]{0} copy-done(a)
}
else_b {
  b = (f32[8]{0}, f32[8]{0}, u32[]) parameter(0)
  ROOT z = f32[8]{0} constant({0,0,0,0,0,0,0,0})
}
ENTRY e {
  p = f32[8]{0} parameter(0)
  c = pred[] parameter(1)
  cs = (f32[8]{0}, f32[8]{0}, u32[]) copy-start(p)
  ROOT r = f32[8]{0} conditional(c, cs, cs), true_computation=then_b, false_computation=else_b
}
"#;

    #[test]
    fn a_conditional_with_the_done_in_one_branch_is_unbalanced_on_the_other() {
        let h = hits(COND);
        assert_eq!(h.len(), 1, "{h:?}");
        assert_eq!(h[0].captures["kind"], "never-done");
        assert!(h[0].captures["detail"].contains("%else_b"), "{}", h[0].captures["detail"]);
    }

    #[test]
    fn a_conditional_with_the_done_in_every_branch_is_balanced() {
        let t = COND.replace("ROOT z = f32[8]{0} constant({0,0,0,0,0,0,0,0})", "ROOT z = f32[8]{0} copy-done(b)");
        assert!(kinds(&t).is_empty(), "{:?}", hits(&t));
    }

    /// Started before the loop and in each iteration for the next one; done at the top of each iteration and
    /// after the loop (the pipelining XLA does for loop-carried prefetches).
    const LOOP_OK: &str = r#"HloModule m
cond {
  cp = (s32[], (f32[8]{0}, f32[8]{0}, u32[]), f32[8]{0}) parameter(0)
  i = s32[] get-tuple-element(cp), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  bp = (s32[], (f32[8]{0}, f32[8]{0}, u32[]), f32[8]{0}) parameter(0)
  i = s32[] get-tuple-element(bp), index=0
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  prev = (f32[8]{0}, f32[8]{0}, u32[]) get-tuple-element(bp), index=1
  x = f32[8]{0} copy-done(prev)
  acc = f32[8]{0} get-tuple-element(bp), index=2
  acc1 = f32[8]{0} add(acc, x)
  next = (f32[8]{0}, f32[8]{0}, u32[]) copy-start(acc1)
  ROOT out = (s32[], (f32[8]{0}, f32[8]{0}, u32[]), f32[8]{0}) tuple(i1, next, acc1)
}
ENTRY e {
  p = f32[8]{0} parameter(0)
  zero = s32[] constant(0)
  first = (f32[8]{0}, f32[8]{0}, u32[]) copy-start(p)
  init = (s32[], (f32[8]{0}, f32[8]{0}, u32[]), f32[8]{0}) tuple(zero, first, p)
  w = (s32[], (f32[8]{0}, f32[8]{0}, u32[]), f32[8]{0}) while(init), condition=cond, body=body
  last = (f32[8]{0}, f32[8]{0}, u32[]) get-tuple-element(w), index=1
  ROOT r = f32[8]{0} copy-done(last)
}
"#;

    #[test]
    fn a_loop_carried_copy_is_balanced() {
        assert!(kinds(LOOP_OK).is_empty(), "{:?}", hits(LOOP_OK));
    }

    #[test]
    fn a_loop_carried_copy_without_the_done_after_the_loop_is_never_done_on_exit() {
        let t =
            LOOP_OK.replace("ROOT r = f32[8]{0} copy-done(last)", "ROOT r = f32[8]{0} get-tuple-element(w), index=2");
        let h = hits(&t);
        assert!(h.iter().all(|h| h.captures["kind"] == "never-done"), "{h:?}");
        let starts: Vec<&str> = h.iter().map(|h| h.captures["start"].as_str()).collect();
        assert!(starts.contains(&"%next"), "the body's start is not done when the loop exits: {h:?}");
        let next = h.iter().find(|h| h.captures["start"] == "%next").unwrap();
        assert!(next.captures["detail"].contains("%w exits"), "{}", next.captures["detail"]);
    }

    #[test]
    fn a_loop_that_carries_an_already_done_copy_does_it_twice() {
        // the body waits for the carried copy and carries the same (done) value on instead of a new start
        let t = LOOP_OK.replace("tuple(i1, next, acc1)", "tuple(i1, prev, acc1)");
        let h = hits(&t);
        let k: Vec<&str> = h.iter().map(|h| h.captures["kind"].as_str()).collect();
        assert!(k.contains(&"done-twice"), "{h:?}");
        assert!(h.iter().any(|h| h.captures["start"] == "%first" && h.captures["kind"] == "done-twice"));
        assert!(h.iter().any(|h| h.captures["start"] == "%next" && h.captures["kind"] == "never-done"));
    }

    #[test]
    fn a_known_trip_count_removes_the_zero_trip_path() {
        // done only inside the body: with zero trips it would be pending; XLA proved one or more trips
        let t = LOOP_OK
            .replace(
                "condition=cond, body=body",
                r#"condition=cond, body=body, backend_config={"known_trip_count":{"n":"4"}}"#,
            )
            .replace("tuple(i1, next, acc1)", "tuple(i1, next, x)");
        let h = hits(&t);
        assert!(!h.iter().any(|h| h.captures["start"] == "%first"), "{h:?}");
    }

    #[test]
    fn calls_are_followed() {
        let t = r#"HloModule m
waiter {
  a = (f32[8]{0}, f32[8]{0}, u32[]) parameter(0)
  ROOT d = f32[8]{0} copy-done(a)
}
ENTRY e {
  p = f32[8]{0} parameter(0)
  cs = (f32[8]{0}, f32[8]{0}, u32[]) copy-start(p)
  ROOT r = f32[8]{0} call(cs), to_apply=waiter
}
"#;
        assert!(kinds(t).is_empty(), "{:?}", hits(t));
    }

    #[test]
    fn send_and_recv_pair_with_their_dones() {
        let t = r#"HloModule m
ENTRY e {
  tok = token[] after-all()
  r = (f32[8]{0}, u32[], token[]) recv(tok), channel_id=1
  rd = (f32[8]{0}, token[]) recv-done(r), channel_id=1
  ROOT x = f32[8]{0} get-tuple-element(rd), index=0
}
"#;
        assert!(kinds(t).is_empty(), "{:?}", hits(t));
        let t2 = t
            .replace("rd = (f32[8]{0}, token[]) recv-done(r), channel_id=1\n", "")
            .replace("get-tuple-element(rd)", "get-tuple-element(r)");
        assert_eq!(kinds(&t2), vec!["never-done"]);
    }

    #[test]
    fn hand_written_cases_under_tests_data() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/rules/async-balance");
        for (sub, want) in [("valid", false), ("invalid", true)] {
            let dir = root.join(sub);
            let mut n = 0;
            for p in crate::source::cases_in(&dir) {
                if p.extension().and_then(|x| x.to_str()) != Some("hlo") {
                    continue;
                }
                n += 1;
                let text = std::fs::read_to_string(&p).unwrap();
                let h = hits(&text);
                assert_eq!(!h.is_empty(), want, "{}: {h:?}", p.display());
            }
            assert!(n >= 2, "{sub} cases");
        }
    }

    /// Every after-optimizations HLO of the corpus and of the project fixtures: no finding (real XLA output is
    /// balanced), with the async pairs of transformer24@v5e (2,252 async-start, 50 copy-start) among them.
    #[test]
    fn real_hlo_has_no_finding() {
        let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut roots = vec![here.join("fixtures")];
        roots.extend(crate::testing::corpus());
        let mut files = 0;
        for root in roots {
            for e in walkdir::WalkDir::new(root).sort_by_file_name().into_iter().filter_map(Result::ok) {
                let p = e.path().display().to_string();
                if !(p.ends_with("after_optimizations.txt") || p.ends_with("_hlo.txt")) {
                    continue;
                }
                let text = std::fs::read_to_string(e.path()).unwrap();
                let m = match parse_hlo(&p, &text) {
                    Ok(m) => m,
                    Err(_) => continue,
                };
                let t = std::time::Instant::now();
                let h = check_module(&m, 0);
                let starts =
                    m.op_ids().filter(|&i| matches!(async_role(m.op(i).opcode), Some((_, AsyncRole::Start)))).count();
                eprintln!("{p}: {starts} starts, {} hits, {:?}", h.len(), t.elapsed());
                assert!(h.is_empty(), "{p}: {:?}", h.iter().map(|h| &h.captures["detail"]).collect::<Vec<_>>());
                files += 1;
            }
        }
        assert!(files > 0);
    }
}
