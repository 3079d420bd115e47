//! `async-balance`, the analysis behind the rule of the same name: what it checks, through which ops and what
//! each kind means is [`DOC`]; why a hit matters is the rule's `doc` (rules/core.yaml).
//!
//! HLO computations are dataflow graphs, so the "paths" of [`DOC`] are control choices a start's value goes
//! through; fan-out within a computation adds up (both users run), control choices give alternatives. The walk
//! also passes `domain` ops, and follows a value into and out of called computations. The result is the set of
//! done counts over all paths (0, 1, 2 or more); loops are solved as a fixed point. A done is traced backwards
//! the same way; if some path reaches something other than a start of its family, the done has no start on that
//! path.
//!
//! Along the data flow: `forward` walks a start's value to the dones it reaches (the done counts over paths,
//! each with a witness), `backward` traces a done's operand back to its starts, and `findings` words what
//! they found; this module runs them over every start and done of a module.

mod backward;
mod findings;
mod forward;
#[cfg(test)]
mod tests;

use super::{At, Hit, Options};
use crate::ir::{Def, FuncId, Layer, Module, OpId};
use crate::lint::Compilation;
use crate::semantic::async_pairs::{async_role, AsyncRole};
use backward::Backward;
use findings::{done_twice_hit, never_done_hit};
use forward::Forward;
use std::collections::HashSet;

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

type VisitKey = (OpId, Vec<i64>, Vec<OpId>);

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

/// What the analysis checks, how, and what a hit says: shown by `hlolint explain async-balance` and on the rule's
/// page.
pub const DOC: &str = "Checks that every HLO asynchronous start (`copy-start`, `all-gather-start`, \
`all-reduce-start`, `collective-permute-start`, `send`/`recv`, `async-start` and any `X-start`) is done exactly once \
on every path, and that every done has a start. The start's value is followed through \
`tuple`/`get-tuple-element` (index-precise: an element k is followed only into element k), `bitcast`/`opt-barrier`, \
into `while` loops (zero trips, loop-carried into the next iteration through the body's parameter and ROOT, exit), \
`conditional` branches (each branch is a path) and `call`s, counting the dones of its family (`-update`s continue \
the chain); each done is traced back the same way. Not a count of starts and dones: a loop-carried copy started in \
one iteration and done in the next is balanced. kind `never-done`: some path ends without a done; `done-twice`: \
one path reaches two dones of the same start; `done-without-start`: a done whose operand does not trace back to a \
start of its family on every path.";

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
    shares: None,
};
