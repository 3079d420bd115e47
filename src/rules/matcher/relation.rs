//! `operand`, `user`, `inside`, `precedes`, `follows`, `paired`: a matcher for a related op, walked to over the
//! graph — operands and users through pass-through ops and into and out of fused computations, enclosing ops and
//! callers, program order, async partners — with how to walk and how many must match (`walk.rs`'s keys).

use super::op::{any_pat, pats, OpPat};
use super::{compile, matches, Caps, Env, Kind, Matcher, MatcherDef, Phase, WALK_LIMIT};
use crate::ir::{Def, Module, OpId};
use crate::rules::error::{Cx, RuleError, RuleErrorKind};
use crate::rules::model::Count;
use crate::semantic::async_pairs::{async_role, dones_of, AsyncRole};
use std::collections::HashSet;

keys! {
    pub struct RelationDef {
        /// Some operand (walked through `through` ops) matches.
        pub operand: Option<Box<MatcherDef>>,
        /// Some user (walked through `through` ops) matches.
        pub user: Option<Box<MatcherDef>>,
        /// An enclosing op (MLIR region parent; HLO fusion/while/call calling this computation) matches.
        pub inside: Option<Box<MatcherDef>>,
        /// An op of the same block later in program/schedule order matches.
        pub precedes: Option<Box<MatcherDef>>,
        /// An op of the same block earlier in program/schedule order matches.
        pub follows: Option<Box<MatcherDef>>,
        /// The async partner (the done of a start, the start of a done) matches.
        pub paired: Option<Box<MatcherDef>>,
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RelKind {
    Operand,
    User,
    Inside,
    Precedes,
    Follows,
    Paired,
}

impl RelKind {
    pub fn key(self) -> &'static str {
        match self {
            RelKind::Operand => "operand",
            RelKind::User => "user",
            RelKind::Inside => "inside",
            RelKind::Precedes => "precedes",
            RelKind::Follows => "follows",
            RelKind::Paired => "paired",
        }
    }
}

pub struct Relation {
    kind: RelKind,
    matcher: Matcher,
    index: Option<u32>,
    depth: u32,
    through: Vec<OpPat>,
    /// `fusion-parameter`: a fused computation's parameter → the fusion op's operand (and back for users).
    through_fusion_parameter: bool,
    /// `fusion`: a fusion/call → its computation's ROOT (and a ROOT → the caller's users).
    through_fusion: bool,
    count: Count,
    every: bool,
}

impl Kind for Relation {
    type Def = RelationDef;
    const PHASE: Phase = Phase::Linked;

    fn compile(def: &RelationDef, cx: &Cx, env: &mut Env) -> Result<Vec<Relation>, RuleError> {
        let rels = [
            (RelKind::Operand, &def.operand),
            (RelKind::User, &def.user),
            (RelKind::Inside, &def.inside),
            (RelKind::Precedes, &def.precedes),
            (RelKind::Follows, &def.follows),
            (RelKind::Paired, &def.paired),
        ];
        let mut out = Vec::new();
        for (kind, d) in rels {
            let Some(d) = d else { continue };
            out.push(compile_relation(kind, d, &cx.at(kind.key()), env)?);
        }
        Ok(out)
    }

    fn holds(&self, m: &Module<'_>, id: OpId, caps: &mut Caps) -> bool {
        let related = related(m, id, self);
        let mut n = 0u64;
        let mut first: Option<Caps> = None;
        for &r in &related {
            let mut c = caps.clone();
            if matches(m, r, &self.matcher, &mut c) {
                n += 1;
                if first.is_none() {
                    first = Some(c);
                }
            } else if self.every {
                return false;
            }
        }
        let ok = if self.every { !related.is_empty() } else { self.count.holds(n) };
        if ok {
            if let Some(c) = first {
                *caps = c;
            }
        }
        ok
    }
}

fn compile_relation(kind: RelKind, d: &MatcherDef, cx: &Cx, env: &mut Env) -> Result<Relation, RuleError> {
    let matcher = compile(d, cx, &mut Env { layers: env.layers, caps: env.caps, relation: true })?;
    let walk = &d.walk;
    let through = ThroughList::split(&walk.through);
    let through_ops = through
        .ops
        .iter()
        .map(|(i, name)| pats(std::slice::from_ref(name), true, &cx.at("through").item(*i), env.layers))
        .collect::<Result<Vec<_>, _>>()?
        .into_iter()
        .flatten()
        .collect();
    if walk.index.is_some() && kind != RelKind::Operand {
        return Err(cx.at("index").err_key(
            RuleErrorKind::Matcher,
            format!("`index` applies to `operand`, not `{}`", kind.key()),
            "here",
        ));
    }
    Ok(Relation {
        kind,
        matcher,
        index: walk.index,
        depth: walk.depth.unwrap_or(if kind == RelKind::Inside { 64 } else { 1 }).min(64),
        through: through_ops,
        through_fusion_parameter: through.fusion_parameter,
        through_fusion: through.fusion,
        count: walk.count.map(Count::from).unwrap_or(Count::AT_LEAST_ONE),
        every: walk.every,
    })
}

/// A relation's `through:` list: the two structural keywords, and op names (with their place in the list) for the
/// rest.
struct ThroughList {
    ops: Vec<(usize, String)>,
    fusion_parameter: bool,
    fusion: bool,
}

impl ThroughList {
    fn split(items: &[String]) -> Self {
        let mut t = ThroughList { ops: Vec::new(), fusion_parameter: false, fusion: false };
        for (i, item) in items.iter().enumerate() {
            match item.as_str() {
                "fusion-parameter" => t.fusion_parameter = true,
                "fusion" | "call" => t.fusion = true,
                _ => t.ops.push((i, item.clone())),
            }
        }
        t
    }
}

/// The ops a relation reaches from `id`.
fn related(m: &Module<'_>, id: OpId, rel: &Relation) -> Vec<OpId> {
    match rel.kind {
        RelKind::Operand => walk_operands(m, id, rel),
        RelKind::User => walk_users(m, id, rel),
        RelKind::Inside => enclosing(m, id, rel.depth),
        RelKind::Precedes | RelKind::Follows => {
            let block = &m.blocks[m.op(id).block.idx()];
            let p = m.position(id);
            if rel.kind == RelKind::Precedes {
                block.ops.get(p + 1..).unwrap_or(&[]).to_vec()
            } else {
                block.ops[..p].to_vec()
            }
        }
        RelKind::Paired => partners(m, id),
    }
}
fn is_call_like(m: &Module<'_>, id: OpId) -> bool {
    let op = m.op(id);
    !op.calls.is_empty() && matches!(op.opcode, "fusion" | "call" | "async-start" | "func.call")
}

fn walk_operands(m: &Module<'_>, id: OpId, rel: &Relation) -> Vec<OpId> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    // (def, depth)
    let mut stack: Vec<(OpId, u32)> = m
        .op(id)
        .operands
        .iter()
        .enumerate()
        .filter(|(k, _)| rel.index.is_none_or(|i| i as usize == *k))
        .filter_map(|(_, o)| match o.def {
            Def::Op { op, .. } => Some((op, 0)),
            _ => None,
        })
        .collect();
    stack.reverse();
    while let Some((d, depth)) = stack.pop() {
        if !seen.insert(d) || seen.len() > WALK_LIMIT {
            continue;
        }
        let op = m.op(d);
        if any_pat(&rel.through, m.layer, op.opcode) {
            stack.extend(m.operand_ops(d).map(|x| (x, depth)));
            continue;
        }
        if rel.through_fusion_parameter {
            if let Some(n) = m.parameter_number(d) {
                let callers = &m.func(m.func_of(d)).callers;
                let outer: Vec<OpId> = callers.iter().filter_map(|&c| m.operand_def(c, n)).collect();
                if !outer.is_empty() {
                    stack.extend(outer.into_iter().map(|x| (x, depth)));
                    continue;
                }
            }
        }
        if rel.through_fusion && is_call_like(m, d) {
            let roots: Vec<OpId> = op.calls.iter().filter_map(|c| m.root(c.func)).collect();
            if !roots.is_empty() {
                stack.extend(roots.into_iter().map(|x| (x, depth)));
                continue;
            }
        }
        out.push(d);
        if depth + 1 < rel.depth {
            stack.extend(m.operand_ops(d).map(|x| (x, depth + 1)));
        }
    }
    out
}

fn walk_users(m: &Module<'_>, id: OpId, rel: &Relation) -> Vec<OpId> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    // (value producer, depth): expand its users
    let mut stack: Vec<(OpId, u32)> = vec![(id, 0)];
    let mut expanded = HashSet::new();
    while let Some((x, depth)) = stack.pop() {
        if !expanded.insert((x, depth)) || expanded.len() > WALK_LIMIT {
            continue;
        }
        let xop = m.op(x);
        // a fused computation's ROOT flows out to the fusion's users
        if rel.through_fusion && xop.is_root {
            for &c in &m.func(m.func_of(x)).callers {
                if is_call_like(m, c) {
                    stack.push((c, depth));
                }
            }
        }
        for &u in &xop.users {
            let uop = m.op(u);
            if any_pat(&rel.through, m.layer, uop.opcode) {
                stack.push((u, depth));
                continue;
            }
            if rel.through_fusion_parameter && is_call_like(m, u) {
                let params = fused_params_reading(m, u, x);
                if !params.is_empty() {
                    stack.extend(params.into_iter().map(|p| (p, depth)));
                    continue;
                }
            }
            if seen.insert(u) {
                out.push(u);
            }
            if depth + 1 < rel.depth {
                stack.push((u, depth + 1));
            }
        }
    }
    out
}

/// The parameters of `call`'s computations that receive the value of `x` (by operand position).
fn fused_params_reading(m: &Module<'_>, call: OpId, x: OpId) -> Vec<OpId> {
    let op = m.op(call);
    let positions: Vec<usize> = op
        .operands
        .iter()
        .enumerate()
        .filter(|(_, o)| matches!(o.def, Def::Op { op, .. } if op == x))
        .map(|(k, _)| k)
        .collect();
    let mut out = Vec::new();
    for c in &op.calls {
        for &p in m.body_ops(c.func) {
            if m.parameter_number(p).is_some_and(|n| positions.contains(&n)) {
                out.push(p);
            }
        }
    }
    out
}

/// Enclosing ops: MLIR region parents, then (HLO) the ops calling the computation, transitively.
fn enclosing(m: &Module<'_>, id: OpId, depth: u32) -> Vec<OpId> {
    let mut out: Vec<OpId> = Vec::new();
    let mut frontier = vec![id];
    let mut seen = HashSet::new();
    for _ in 0..depth.max(1) {
        let mut next = Vec::new();
        for x in frontier {
            let mut chain: Vec<OpId> = m.ancestors(x).collect();
            let top = chain.last().copied().unwrap_or(x);
            chain.extend(m.func(m.func_of(top)).callers.iter().copied());
            for c in chain {
                if seen.insert(c) {
                    out.push(c);
                    next.push(c);
                }
            }
        }
        if next.is_empty() || out.len() > WALK_LIMIT {
            break;
        }
        frontier = next;
    }
    out
}

/// The async partner: a start's dones (through updates), a done's start.
fn partners(m: &Module<'_>, id: OpId) -> Vec<OpId> {
    match async_role(m.op(id).opcode) {
        Some((family, AsyncRole::Start)) => dones_of(m, id, family),
        Some((family, AsyncRole::Done | AsyncRole::Update)) => {
            let mut out = Vec::new();
            let mut stack: Vec<OpId> = m.operand_ops(id).collect();
            let mut seen = HashSet::new();
            while let Some(x) = stack.pop() {
                if !seen.insert(x) || seen.len() > WALK_LIMIT {
                    continue;
                }
                match async_role(m.op(x).opcode) {
                    Some((f, AsyncRole::Start)) if f == family => out.push(x),
                    Some((f, AsyncRole::Update)) if f == family => stack.extend(m.operand_ops(x)),
                    _ => {}
                }
            }
            out
        }
        None => Vec::new(),
    }
}

