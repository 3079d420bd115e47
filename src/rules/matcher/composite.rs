//! `all`, `any`, `not`: matchers of the same op combined. `not` never captures; `any` keeps the captures of the
//! first branch that holds.

use super::{compile, matches, Caps, Env, Kind, Matcher, MatcherDef, Phase};
use crate::ir::{Module, OpId};
use crate::rules::error::{Cx, RuleError};

keys! {
    pub struct CompositeDef {
        /// Every one of these matchers holds.
        pub all: Vec<MatcherDef>,
        /// At least one of these matchers holds.
        pub any: Vec<MatcherDef>,
        /// This matcher does not hold.
        pub not: Option<Box<MatcherDef>>,
    }
}

pub enum Composite {
    All(Vec<Matcher>),
    Any(Vec<Matcher>),
    Not(Box<Matcher>),
}

impl Kind for Composite {
    type Def = CompositeDef;
    const PHASE: Phase = Phase::Linked;

    fn compile(def: &CompositeDef, cx: &Cx, env: &mut Env) -> Result<Vec<Composite>, RuleError> {
        // the parts describe this op, not a related one: the walk's keys do not belong in them
        let mut part = |d: &MatcherDef, at: Cx| compile(d, &at, &mut Env { layers: env.layers, caps: env.caps, relation: false });
        let mut out = Vec::new();
        if !def.all.is_empty() {
            let all = def.all.iter().enumerate().map(|(i, d)| part(d, cx.at("all").item(i))).collect::<Result<_, _>>()?;
            out.push(Composite::All(all));
        }
        if !def.any.is_empty() {
            let any = def.any.iter().enumerate().map(|(i, d)| part(d, cx.at("any").item(i))).collect::<Result<_, _>>()?;
            out.push(Composite::Any(any));
        }
        if let Some(n) = &def.not {
            out.push(Composite::Not(Box::new(part(n, cx.at("not"))?)));
        }
        Ok(out)
    }

    fn holds(&self, m: &Module<'_>, id: OpId, caps: &mut Caps) -> bool {
        match self {
            Composite::All(all) => all.iter().all(|a| matches(m, id, a, caps)),
            Composite::Any(any) => any.iter().any(|a| matches(m, id, a, caps)),
            Composite::Not(n) => !matches(m, id, n, &mut caps.clone()),
        }
    }
}
