//! `dtype`/`to`, `from`, `operand_dtype`: element types — of the result, of the first operand (a convert's
//! source), of any operand — as names or globs (`f8*`, `[bf16, f32]`), checked against the types hlolint knows.

use super::{glob, Caps, Env, Kind, Phase};
use crate::ir::{DType, Module, OpId};
use crate::rules::error::{Cx, RuleError, RuleErrorKind};
use crate::rules::props;
use crate::rules::schema::OneOrMany;

keys! {
    pub struct DtypeDef {
        /// The result's element type: names or globs (`f8*`, `bf16`).
        pub dtype: OneOrMany,
        /// Alias of `dtype` for converts: the type converted to.
        pub to: OneOrMany,
        /// The first operand's element type (a convert's source type).
        pub from: OneOrMany,
        /// Any operand's element type.
        pub operand_dtype: OneOrMany,
    }
}

pub struct Dtype {
    result: Vec<globset::GlobMatcher>,
    from: Vec<globset::GlobMatcher>,
    operand: Vec<globset::GlobMatcher>,
}

impl Kind for Dtype {
    type Def = DtypeDef;
    const PHASE: Phase = Phase::Atom;

    fn compile(def: &DtypeDef, cx: &Cx, _: &mut Env) -> Result<Vec<Dtype>, RuleError> {
        let mut result = pats(&def.dtype, &cx.at("dtype"))?;
        result.extend(pats(&def.to, &cx.at("to"))?);
        let d = Dtype { result, from: pats(&def.from, &cx.at("from"))?, operand: pats(&def.operand_dtype, &cx.at("operand_dtype"))? };
        let any = !(d.result.is_empty() && d.from.is_empty() && d.operand.is_empty());
        Ok(if any { vec![d] } else { Vec::new() })
    }

    fn holds(&self, m: &Module<'_>, id: OpId, _: &mut Caps) -> bool {
        if !self.result.is_empty() && !dtype_in(&self.result, props::result_dtype(m, id)) {
            return false;
        }
        if !self.from.is_empty() && !dtype_in(&self.from, m.operand_dtype(id, 0)) {
            return false;
        }
        self.operand.is_empty() || (0..m.op(id).operands.len()).any(|k| dtype_in(&self.operand, m.operand_dtype(id, k)))
    }
}

fn dtype_in(ps: &[globset::GlobMatcher], d: Option<DType>) -> bool {
    let Some(d) = d else { return false };
    ps.iter().any(|g| g.is_match(d.name()))
}

/// The patterns of one key, each matching some element type.
fn pats(names: &OneOrMany, cx: &Cx) -> Result<Vec<globset::GlobMatcher>, RuleError> {
    let mut out = Vec::new();
    for (i, n) in names.items().iter().enumerate() {
        let at = cx.one_of(i, names.is_many());
        let g = glob(&n.to_ascii_lowercase(), &at)?;
        if !DType::all().any(|d| g.is_match(d.name())) {
            return Err(at.err(RuleErrorKind::Matcher, format!("`{n}` matches no element type"), "not a dtype").with_help(
                "element types as HLO spells them: f8e4m3fn, f8e5m2, bf16, f32, s8, ... (globs like `f8*` allowed)",
            ));
        }
        out.push(g);
    }
    Ok(out)
}
