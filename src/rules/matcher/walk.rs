//! `index`, `depth`, `through`, `count`, `every`: how a relation walks to its related ops and how many must match.
//! They are keys of the related op's matcher (`operand: { index: 0, through: [bitcast], op: convert }`), read by
//! `relation.rs`; anywhere else they are refused.

use super::{Caps, Env, Kind, Phase};
use crate::ir::{Module, OpId};
use crate::rules::error::{Cx, RuleError, RuleErrorKind};
use crate::rules::schema::CountDef;

keys! {
    pub struct WalkDef {
        /// Under `operand` only: only this operand index.
        pub index: Option<u32>,
        /// Under a relation: how many steps (not counting pass-through ops); default 1 (`inside`: any depth).
        pub depth: Option<u32>,
        /// Under a relation: pass-through ops walked over — families/globs, plus `fusion-parameter` (a fused
        /// computation's parameter → the fusion's operand) and `fusion` (a fusion → its computation's ROOT; a ROOT
        /// → the fusion's users).
        pub through: Vec<String>,
        /// Under a relation: how many related ops must match (default: at least one).
        pub count: Option<CountDef>,
        /// Under a relation: every related op must match (and there is at least one).
        pub every: bool,
    }
}

/// Never compiled into a condition: the relation reads these keys itself.
pub enum Walk {}

impl Kind for Walk {
    type Def = WalkDef;
    const PHASE: Phase = Phase::Keys;

    fn compile(def: &WalkDef, cx: &Cx, env: &mut Env) -> Result<Vec<Walk>, RuleError> {
        if env.relation {
            return Ok(Vec::new());
        }
        for (k, present) in [
            ("index", def.index.is_some()),
            ("depth", def.depth.is_some()),
            ("through", !def.through.is_empty()),
            ("count", def.count.is_some()),
            ("every", def.every),
        ] {
            if present {
                return Err(cx.at(k).err_key(
                    RuleErrorKind::Matcher,
                    format!("`{k}` belongs under a relation (operand, user, inside, precedes, follows, paired)"),
                    "not a relation",
                ));
            }
        }
        Ok(Vec::new())
    }

    fn holds(&self, _: &Module<'_>, _: OpId, _: &mut Caps) -> bool {
        match *self {}
    }
}
