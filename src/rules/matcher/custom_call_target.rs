//! `custom_call_target`: a regex over a custom call's target (HLO `custom_call_target`, StableHLO
//! `call_target_name`).

use super::{regex, Caps, Env, Kind, Phase};
use crate::ir::{Module, OpId};
use crate::rules::error::{Cx, RuleError};
use crate::rules::props;
use regex::Regex;

keys! {
    pub struct CustomCallTargetDef {
        /// Regex over a custom call's target.
        pub custom_call_target: Option<String>,
    }
}

pub struct CustomCallTarget(Regex);

impl Kind for CustomCallTarget {
    type Def = CustomCallTargetDef;
    const PHASE: Phase = Phase::Atom;

    fn compile(def: &CustomCallTargetDef, cx: &Cx, _: &mut Env) -> Result<Vec<CustomCallTarget>, RuleError> {
        def.custom_call_target.iter().map(|r| Ok(CustomCallTarget(regex(r, &cx.at("custom_call_target"))?))).collect()
    }

    fn holds(&self, m: &Module<'_>, id: OpId, _: &mut Caps) -> bool {
        props::custom_call_target(m, id).is_some_and(|t| self.0.is_match(&t))
    }
}
