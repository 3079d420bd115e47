//! `name`: a regex over the op's name (`%fusion.3` → `fusion.3`; MLIR result names without `%`).

use super::{regex, Caps, Env, Kind, Phase};
use crate::ir::{Module, OpId};
use crate::rules::error::{Cx, RuleError};
use regex::Regex;

keys! {
    pub struct NameDef {
        /// Regex over the op's name (`%fusion.3` → `fusion.3`; MLIR result names without `%`).
        pub name: Option<String>,
    }
}

pub struct Name(Regex);

impl Kind for Name {
    type Def = NameDef;
    const PHASE: Phase = Phase::Atom;

    fn compile(def: &NameDef, cx: &Cx, _: &mut Env) -> Result<Vec<Name>, RuleError> {
        def.name.iter().map(|r| Ok(Name(regex(r, &cx.at("name"))?))).collect()
    }

    fn holds(&self, m: &Module<'_>, id: OpId, _: &mut Caps) -> bool {
        self.0.is_match(m.op(id).name)
    }
}
