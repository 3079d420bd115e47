//! `op`: the op's opcode, as op families (`dot`, `dma-wait`: each spelled per layer, `semantic::families`) or
//! opcode globs (`*-start`, `stablehlo.*`). [`OpPat`] and [`pats`] also serve the other keys that name ops (a
//! relation's `through`, `scheduled_between.ignore`).

use super::{glob, Caps, Env, Kind, Phase};
use crate::ir::{Layer, Module, OpId};
use crate::rules::error::{Cx, RuleError, RuleErrorKind};
use crate::rules::families::{self, check_op_name, Family};
use crate::rules::schema::OneOrMany;

keys! {
    pub struct OpDef {
        /// Op families (`dot`, `convert`, `async-start`, `dma-wait`, ...: `hlolint rules --families`) or opcode
        /// globs (`stablehlo.*`, `*-start`).
        pub op: OneOrMany,
    }
}

/// The op is one of these.
pub struct Op(Vec<OpPat>);

impl Kind for Op {
    type Def = OpDef;
    const PHASE: Phase = Phase::Atom;

    fn compile(def: &OpDef, cx: &Cx, env: &mut Env) -> Result<Vec<Op>, RuleError> {
        let names = def.op.items();
        if names.is_empty() {
            return Ok(Vec::new());
        }
        Ok(vec![Op(pats(&names, def.op.is_many(), &cx.at("op"), env.layers)?)])
    }

    fn holds(&self, m: &Module<'_>, id: OpId, _: &mut Caps) -> bool {
        any_pat(&self.0, m.layer, m.op(id).opcode)
    }
}

/// An op pattern: a family's per-layer globs, or one glob/opcode.
pub enum OpPat {
    Family(&'static Family),
    Glob(globset::GlobMatcher),
}

impl OpPat {
    /// Whether `opcode` of `layer` matches.
    pub fn matches(&self, layer: Layer, opcode: &str) -> bool {
        match self {
            OpPat::Family(f) => f.matches(layer, opcode),
            OpPat::Glob(g) => g.is_match(opcode),
        }
    }
}

pub fn any_pat(ps: &[OpPat], layer: Layer, opcode: &str) -> bool {
    ps.iter().any(|p| p.matches(layer, opcode))
}

/// The patterns of `names`, the value at `cx` (a list when `many`); each must name an op of one of `layers` (a
/// rule over several layers may name what only some of them have).
pub fn pats(names: &[String], many: bool, cx: &Cx, layers: &[Layer]) -> Result<Vec<OpPat>, RuleError> {
    let mut out = Vec::new();
    for (i, n) in names.iter().enumerate() {
        let at = cx.one_of(i, many);
        let results: Vec<Result<(), String>> = layers.iter().map(|l| check_op_name(n, *l)).collect();
        if results.iter().all(Result::is_err) {
            let msg = results.into_iter().find_map(Result::err).unwrap_or_default();
            return Err(at
                .err(RuleErrorKind::Matcher, msg, "unknown here")
                .with_help("`hlolint rules --families` lists the op families per layer"));
        }
        match families::family(n) {
            Some(f) => out.push(OpPat::Family(f)),
            None => out.push(OpPat::Glob(glob(n, &at)?)),
        }
    }
    Ok(out)
}
