//! `scheduled_between`: how many ops are scheduled strictly between this op and a captured one (in their block's
//! order; HLO: the schedule), optionally only when the block has work that could have been placed there.

use super::op::{any_pat, pats, OpPat};
use super::{Caps, Env, Kind, Phase, WALK_LIMIT};
use crate::ir::{Module, OpId};
use crate::rules::error::{Cx, RuleError, RuleErrorKind};
use crate::rules::model::Count;
use crate::rules::schema::CountDef;
use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::HashSet;

keys! {
    pub struct BetweenKeys {
        /// Ops scheduled strictly between this op and a captured one.
        pub scheduled_between: Option<BetweenDef>,
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BetweenDef {
    /// The capture at the other end (from `paired`, `precedes`, ...).
    pub and: String,
    pub count: CountDef,
    /// Ops that do not count as work (families/globs).
    #[serde(default)]
    pub ignore: Vec<String>,
    /// Hold only when the block has work that could have been scheduled between: an op (not ignored) that neither
    /// depends on the later op nor is needed by the earlier one. Without it, nothing could overlap.
    #[serde(default)]
    pub independent_work: bool,
}

pub struct Between {
    and: String,
    count: Count,
    ignore: Vec<OpPat>,
    independent_work: bool,
}

impl Kind for Between {
    type Def = BetweenKeys;
    const PHASE: Phase = Phase::Linked;

    fn compile(def: &BetweenKeys, cx: &Cx, env: &mut Env) -> Result<Vec<Between>, RuleError> {
        let Some(b) = &def.scheduled_between else { return Ok(Vec::new()) };
        let cx = cx.at("scheduled_between");
        if !env.caps.contains(&b.and) {
            return Err(cx
                .at("and")
                .err(
                    RuleErrorKind::Matcher,
                    format!("`scheduled_between.and`: `{}` is not captured before it", b.and),
                    "not captured",
                )
                .with_help(format!("captures so far: {}", env.caps.join(", "))));
        }
        Ok(vec![Between {
            and: b.and.clone(),
            count: b.count.into(),
            ignore: pats(&b.ignore, true, &cx.at("ignore"), env.layers)?,
            independent_work: b.independent_work,
        }])
    }

    fn holds(&self, m: &Module<'_>, id: OpId, caps: &mut Caps) -> bool {
        let Some(&other) = caps.get(&self.and) else { return false };
        if !self.count.holds(between(m, id, other, &self.ignore)) {
            return false;
        }
        !self.independent_work || independent_work(m, id, other, &self.ignore)
    }
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
