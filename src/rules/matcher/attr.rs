//! `attr`, `no_attr`: attributes by value (a regex over the attribute's text as written) and attributes that must
//! be absent. On HLO the names are checked against XLA's attributes; an LLO op's `bundle` and `slot` are matchable
//! as attributes (`props::attr_text`).

use super::{hlo_only, regex, Caps, Env, Kind, Phase};
use crate::ir::{Module, OpId};
use crate::rules::error::{Cx, RuleError, RuleErrorKind};
use crate::rules::families::HLO_ATTRIBUTES;
use crate::rules::props;
use regex::Regex;
use std::collections::BTreeMap;

keys! {
    pub struct AttrDef {
        /// Attribute regexes: `{custom_call_target: "^tpu_custom_call$"}` (the attribute's text as written).
        pub attr: BTreeMap<String, String>,
        /// Attributes that must be absent.
        pub no_attr: Vec<String>,
    }
}

pub struct Attr {
    present: Vec<(String, Regex)>,
    absent: Vec<String>,
}

impl Kind for Attr {
    type Def = AttrDef;
    const PHASE: Phase = Phase::Atom;

    fn compile(def: &AttrDef, cx: &Cx, env: &mut Env) -> Result<Vec<Attr>, RuleError> {
        let mut present = Vec::new();
        for (k, r) in &def.attr {
            let at = cx.at("attr").at(k);
            if hlo_only(env.layers) && !HLO_ATTRIBUTES.contains(&k.as_str()) {
                return Err(at
                    .err_key(RuleErrorKind::Matcher, format!("HLO has no attribute `{k}`"), "unknown attribute")
                    .with_help("HLO attributes are XLA's (custom_call_target, backend_config, dimensions, ...)"));
            }
            present.push((k.clone(), regex(r, &at)?));
        }
        let mut absent = Vec::new();
        for (i, k) in def.no_attr.iter().enumerate() {
            if hlo_only(env.layers) && !HLO_ATTRIBUTES.contains(&k.as_str()) {
                let at = cx.at("no_attr").item(i);
                return Err(at.err(RuleErrorKind::Matcher, format!("HLO has no attribute `{k}`"), "unknown attribute"));
            }
            absent.push(k.clone());
        }
        Ok(if present.is_empty() && absent.is_empty() { Vec::new() } else { vec![Attr { present, absent }] })
    }

    fn holds(&self, m: &Module<'_>, id: OpId, _: &mut Caps) -> bool {
        for (k, r) in &self.present {
            if !props::attr_text(m, id, k).is_some_and(|t| r.is_match(&t)) {
                return false;
            }
        }
        !self.absent.iter().any(|k| m.op(id).attr_entry(k).is_some())
    }
}
