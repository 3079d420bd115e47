//! `function`: a regex over the name of the function or computation the op is in.

use super::{regex, Caps, Env, Kind, Phase};
use crate::ir::{Module, OpId};
use crate::rules::error::{Cx, RuleError};
use regex::Regex;

keys! {
    pub struct FunctionDef {
        /// Regex over the enclosing function/computation's name.
        pub function: Option<String>,
    }
}

pub struct Function(Regex);

impl Kind for Function {
    type Def = FunctionDef;
    const PHASE: Phase = Phase::Atom;

    fn compile(def: &FunctionDef, cx: &Cx, _: &mut Env) -> Result<Vec<Function>, RuleError> {
        def.function.iter().map(|r| Ok(Function(regex(r, &cx.at("function"))?))).collect()
    }

    fn holds(&self, m: &Module<'_>, id: OpId, _: &mut Caps) -> bool {
        self.0.is_match(m.func(m.func_of(id)).name)
    }
}
