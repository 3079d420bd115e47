//! Evaluating a compiled matcher on one op of a graph: atomic conditions, relations walked over the graph
//! (operands/users through pass-through ops and into/out of fused computations, enclosing ops and callers, program
//! order, async partners), composites, captures.

use super::model::*;
use crate::ir::mlir_type::{space_name, MlirType};
use crate::ir::{DType, Def, Layer, Module, OpId, Type};
use crate::semantic::async_pairs::{async_role, dones_of, AsyncRole};
use std::collections::{BTreeMap, HashSet};

pub type Caps = BTreeMap<String, OpId>;

/// Walks stop after this many visited ops: rules stay fast on 50k-instruction modules and never loop.
const WALK_LIMIT: usize = 4096;

/// Whether `opcode` of `layer` matches an op pattern: a family or a pack's glob.
fn pat_matches(p: &OpPat, layer: Layer, opcode: &str) -> bool {
    match p {
        OpPat::Family(f) => f.matches(layer, opcode),
        OpPat::Glob(g) => g.is_match(opcode),
    }
}

fn any_pat(ps: &[OpPat], layer: Layer, opcode: &str) -> bool {
    ps.iter().any(|p| pat_matches(p, layer, opcode))
}

/// The element type of an op's (first) result.
pub fn result_dtype(m: &Module<'_>, id: OpId) -> Option<DType> {
    let op = m.op(id);
    match &op.ty {
        Type::Shape(s) => s.dtype(),
        Type::Mlir(t) => t.result(0).and_then(MlirType::dtype).or_else(|| t.dtype()),
        _ if m.layer == Layer::Llo => crate::semantic::llo::mnemonic_dtype(op.opcode).map(|d| d.0),
        _ => None,
    }
}

/// The result's memory space: HLO `S(n)` as `S(n)`, Mosaic `#tpu.memory_space<vmem>` as `vmem`.
pub fn memory_space(m: &Module<'_>, id: OpId) -> Option<String> {
    match &m.op(id).ty {
        Type::Shape(s) => s.memory_space().map(|n| format!("S({n})")),
        Type::Mlir(t) => t.result(0).unwrap_or(t).memory_space().map(|s| space_name(s).to_string()),
        _ => None,
    }
}

/// The result's rank and number of elements (static shapes only).
pub fn rank_elements(m: &Module<'_>, id: OpId) -> (Option<usize>, Option<i64>) {
    match &m.op(id).ty {
        Type::Shape(s) => match s.array() {
            Some(a) => (Some(a.rank()), a.elements()),
            None => (None, None),
        },
        Type::Mlir(t) => match t.result(0).unwrap_or(t).shaped() {
            Some(st) => (st.rank(), st.num_elements()),
            None => (None, None),
        },
        _ => (None, None),
    }
}

fn dtype_in(ps: &[DtypePat], d: Option<DType>) -> bool {
    let Some(d) = d else { return false };
    ps.iter().any(|DtypePat::Glob(g)| g.is_match(d.name()))
}

/// An attribute's text as written (decoded kernels have no text: their value's rendering). An LLO op's `bundle` and
/// `slot` are its issue position, kept beside the attributes rather than among them.
pub fn attr_text(m: &Module<'_>, id: OpId, key: &str) -> Option<String> {
    let op = m.op(id);
    match (key, op.issue) {
        ("bundle", Some(i)) => return Some(i.bundle.to_string()),
        ("slot", Some(i)) => return Some(i.slot.to_string()),
        _ => {}
    }
    let a = op.attr_entry(key)?;
    let t = a.value_span().text(m.text);
    if t.is_empty() {
        Some(format!("{:?}", a.value().kind))
    } else {
        Some(t.to_string())
    }
}

pub fn metadata_field(m: &Module<'_>, id: OpId, key: &str) -> Option<String> {
    if key == "source" {
        return m.source_stack(id).first().map(|l| format!("{}:{}", l.file, l.line));
    }
    let md = m.op(id).attr("metadata")?;
    let v = md.get(key)?;
    v.string().map(|s| s.into_owned()).or_else(|| v.as_int().map(|i| i.to_string()))
}

pub fn custom_call_target(m: &Module<'_>, id: OpId) -> Option<String> {
    if m.layer == Layer::Hlo {
        return m.custom_call_target(id);
    }
    let v = m.op(id).attr("call_target_name")?;
    v.string().map(|s| s.trim_start_matches('@').to_string())
}

/// Does op `id` satisfy `mt`? Captures are added to `caps` only when it does.
pub fn matches(m: &Module<'_>, id: OpId, mt: &Matcher, caps: &mut Caps) -> bool {
    if !(kind_matches(m, id, mt) && type_matches(m, id, mt) && attributes_match(m, id, mt)) {
        return false;
    }
    // Everything below may capture: work on a copy, commit on success.
    let mut local = caps.clone();
    if let Some(c) = &mt.capture {
        local.insert(c.clone(), id);
    }
    if !(relations_hold(m, id, mt, &mut local) && combinators_hold(m, id, mt, &mut local)) {
        return false;
    }
    *caps = local;
    true
}

/// The op's opcode and name.
fn kind_matches(m: &Module<'_>, id: OpId, mt: &Matcher) -> bool {
    let op = m.op(id);
    if !mt.ops.is_empty() && !any_pat(&mt.ops, m.layer, op.opcode) {
        return false;
    }
    if mt.name.as_ref().is_some_and(|r| !r.is_match(op.name)) {
        return false;
    }
    true
}

/// Result and operand dtypes, rank and element count.
fn type_matches(m: &Module<'_>, id: OpId, mt: &Matcher) -> bool {
    let op = m.op(id);
    if !mt.dtype.is_empty() && !dtype_in(&mt.dtype, result_dtype(m, id)) {
        return false;
    }
    if !mt.from.is_empty() && !dtype_in(&mt.from, m.operand_dtype(id, 0)) {
        return false;
    }
    if !mt.operand_dtype.is_empty()
        && !(0..op.operands.len()).any(|k| dtype_in(&mt.operand_dtype, m.operand_dtype(id, k)))
    {
        return false;
    }
    if mt.rank.is_some() || mt.elements.is_some() {
        let (rank, elements) = rank_elements(m, id);
        if mt.rank.is_some_and(|c| !rank.is_some_and(|r| c.holds(r as u64))) {
            return false;
        }
        if mt.elements.is_some_and(|c| !elements.is_some_and(|e| e >= 0 && c.holds(e as u64))) {
            return false;
        }
    }
    true
}

/// Memory space, attributes (present, absent, by value), metadata, custom-call target and enclosing function.
fn attributes_match(m: &Module<'_>, id: OpId, mt: &Matcher) -> bool {
    if !mt.memory_space.is_empty() {
        let space = memory_space(m, id);
        let ok =
            space.as_deref().is_some_and(|s| mt.memory_space.iter().any(|want| want == s || format!("S({want})") == s));
        if !ok {
            return false;
        }
    }
    for (k, r) in &mt.attr {
        if !attr_text(m, id, k).is_some_and(|t| r.is_match(&t)) {
            return false;
        }
    }
    if mt.no_attr.iter().any(|k| m.op(id).attr_entry(k).is_some()) {
        return false;
    }
    for (k, r) in &mt.metadata {
        if !metadata_field(m, id, k).is_some_and(|t| r.is_match(&t)) {
            return false;
        }
    }
    if let Some(r) = &mt.custom_call_target {
        if !custom_call_target(m, id).is_some_and(|t| r.is_match(&t)) {
            return false;
        }
    }
    if let Some(r) = &mt.function {
        if !r.is_match(m.func(m.func_of(id)).name) {
            return false;
        }
    }
    true
}

/// The relations and `scheduled_between`, which may add captures to `caps`.
fn relations_hold(m: &Module<'_>, id: OpId, mt: &Matcher, caps: &mut Caps) -> bool {
    for rel in &mt.relations {
        if !relation_holds(m, id, rel, caps) {
            return false;
        }
    }
    if let Some(b) = &mt.between {
        let Some(&other) = caps.get(&b.and) else { return false };
        if !b.count.holds(between(m, id, other, &b.ignore)) {
            return false;
        }
        if b.independent_work && !independent_work(m, id, other, &b.ignore) {
            return false;
        }
    }
    true
}

/// `all`, `any` and `not`; `not` never captures.
fn combinators_hold(m: &Module<'_>, id: OpId, mt: &Matcher, caps: &mut Caps) -> bool {
    for a in &mt.all {
        if !matches(m, id, a, caps) {
            return false;
        }
    }
    if !mt.any.is_empty() && !mt.any.iter().any(|a| matches(m, id, a, caps)) {
        return false;
    }
    if let Some(n) = &mt.not {
        if matches(m, id, n, &mut caps.clone()) {
            return false;
        }
    }
    true
}

fn relation_holds(m: &Module<'_>, id: OpId, rel: &Relation, caps: &mut Caps) -> bool {
    let related = related(m, id, rel);
    let mut n = 0u64;
    let mut first: Option<Caps> = None;
    for &r in &related {
        let mut c = caps.clone();
        if matches(m, r, &rel.matcher, &mut c) {
            n += 1;
            if first.is_none() {
                first = Some(c);
            }
        } else if rel.every {
            return false;
        }
    }
    let ok = if rel.every { !related.is_empty() } else { rel.count.holds(n) };
    if ok {
        if let Some(c) = first {
            *caps = c;
        }
    }
    ok
}

/// Ops strictly between `a` and `b` in their block's order that are not `ignore`d (`u64::MAX` when they are in
/// different blocks: nothing can be said to be scheduled between them).
fn between(m: &Module<'_>, a: OpId, b: OpId, ignore: &[OpPat]) -> u64 {
    if m.op(a).block != m.op(b).block {
        return u64::MAX;
    }
    let block = &m.blocks[m.op(a).block.idx()];
    let (pa, pb) = (m.position(a), m.position(b));
    let (lo, hi) = (pa.min(pb), pa.max(pb));
    block.ops[lo + 1..hi].iter().filter(|&&o| !any_pat(ignore, m.layer, m.op(o).opcode)).count() as u64
}

/// Is there an op in the block of `a` and `b` (not ignored) that could run between them: one that does not
/// depend on the later of the two and is not needed by the earlier?
fn independent_work(m: &Module<'_>, a: OpId, b: OpId, ignore: &[OpPat]) -> bool {
    if m.op(a).block != m.op(b).block {
        return false;
    }
    let (first, last) = if m.position(a) <= m.position(b) { (a, b) } else { (b, a) };
    let closure = |start: OpId, next: &dyn Fn(OpId) -> Vec<OpId>| -> HashSet<OpId> {
        let mut seen = HashSet::new();
        let mut stack = vec![start];
        while let Some(x) = stack.pop() {
            if seen.len() > WALK_LIMIT * 4 || !seen.insert(x) {
                continue;
            }
            stack.extend(next(x));
        }
        seen
    };
    let after_last = closure(last, &|x| m.op(x).users.to_vec());
    let before_first = closure(first, &|x| m.operand_ops(x).collect());
    let block = &m.blocks[m.op(a).block.idx()];
    block.ops.iter().any(|&o| {
        !after_last.contains(&o)
            && !before_first.contains(&o)
            && !any_pat(ignore, m.layer, m.op(o).opcode)
            && !m.op(o).is_root
    })
}

/// The ops a relation reaches from `id`.
pub fn related(m: &Module<'_>, id: OpId, rel: &Relation) -> Vec<OpId> {
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

/// Every op of the module that matches, with its captures.
pub fn select(m: &Module<'_>, mt: &Matcher) -> Vec<(OpId, Caps)> {
    let mut out = Vec::new();
    for id in m.op_ids() {
        let mut caps = Caps::new();
        caps.insert("op".into(), id);
        if matches(m, id, mt, &mut caps) {
            out.push((id, caps));
        }
    }
    out
}
