//! `memory_space`: the result's memory space — Mosaic's names (`vmem`, `smem`, `hbm`, `any`, `semaphore_mem`) or
//! an HLO space number (`S(1)`, `1`).

use super::{hlo_only, Caps, Env, Kind, Phase};
use crate::ir::{Module, OpId};
use crate::rules::error::{Cx, RuleError, RuleErrorKind};
use crate::rules::families::MOSAIC_SPACES;
use crate::rules::props;
use crate::rules::schema::OneOrMany;

keys! {
    pub struct MemorySpaceDef {
        /// The result's memory space: `vmem`, `smem`, `hbm`, `any`, `semaphore_mem`, or an HLO space `S(1)`/`1`.
        pub memory_space: OneOrMany,
    }
}

pub struct MemorySpace(Vec<String>);

impl Kind for MemorySpace {
    type Def = MemorySpaceDef;
    const PHASE: Phase = Phase::Atom;

    fn compile(def: &MemorySpaceDef, cx: &Cx, env: &mut Env) -> Result<Vec<MemorySpace>, RuleError> {
        let mut spaces = Vec::new();
        for (i, s) in def.memory_space.items().into_iter().enumerate() {
            let numbered = s.starts_with("S(") || s.parse::<i64>().is_ok();
            let ok = if hlo_only(env.layers) { numbered } else { MOSAIC_SPACES.contains(&s.as_str()) || numbered };
            if !ok {
                let at = cx.at("memory_space").one_of(i, def.memory_space.is_many());
                return Err(at
                    .err(RuleErrorKind::Matcher, format!("unknown memory space `{s}`"), "not a memory space")
                    .with_help(format!("Mosaic spaces: {}; HLO spaces: S(1), S(2), ...", MOSAIC_SPACES.join(", "))));
            }
            spaces.push(s);
        }
        Ok(if spaces.is_empty() { Vec::new() } else { vec![MemorySpace(spaces)] })
    }

    fn holds(&self, m: &Module<'_>, id: OpId, _: &mut Caps) -> bool {
        let space = props::memory_space(m, id);
        space.as_deref().is_some_and(|s| self.0.iter().any(|want| want == s || format!("S({want})") == s))
    }
}
