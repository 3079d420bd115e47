//! `rank`, `elements`: the result's rank and number of elements (static shapes only), each a count: `2` or
//! `{min: 2, max: 4}`.

use super::{Caps, Env, Kind, Phase};
use crate::ir::{Module, OpId};
use crate::rules::error::{Cx, RuleError};
use crate::rules::model::Count;
use crate::rules::props;
use crate::rules::schema::{CountDef, RankDef};

keys! {
    pub struct ShapeDef {
        /// The result's rank.
        pub rank: Option<RankDef>,
        /// The result's number of elements.
        pub elements: Option<CountDef>,
    }
}

pub struct Shape {
    rank: Option<Count>,
    elements: Option<Count>,
}

impl Kind for Shape {
    type Def = ShapeDef;
    const PHASE: Phase = Phase::Atom;

    fn compile(def: &ShapeDef, _: &Cx, _: &mut Env) -> Result<Vec<Shape>, RuleError> {
        let s = Shape { rank: def.rank.map(Count::from), elements: def.elements.map(Count::from) };
        Ok(if s.rank.is_some() || s.elements.is_some() { vec![s] } else { Vec::new() })
    }

    fn holds(&self, m: &Module<'_>, id: OpId, _: &mut Caps) -> bool {
        let (rank, elements) = props::rank_elements(m, id);
        if self.rank.is_some_and(|c| !rank.is_some_and(|r| c.holds(r as u64))) {
            return false;
        }
        self.elements.is_none_or(|c| elements.is_some_and(|e| e >= 0 && c.holds(e as u64)))
    }
}
