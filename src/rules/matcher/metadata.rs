//! `metadata`: regexes over HLO metadata fields (`op_name`, `op_type`, `source_file`, `source_line`, and `source`:
//! `file:line` of the op's stack).

use super::{regex, Caps, Env, Kind, Phase};
use crate::ir::{Layer, Module, OpId};
use crate::rules::error::{Cx, RuleError, RuleErrorKind};
use crate::rules::props;
use regex::Regex;
use std::collections::BTreeMap;

keys! {
    pub struct MetadataDef {
        /// HLO metadata regexes: `{op_name: "jit\\(f\\)/dot"}`, `source_file`, `source_line`.
        pub metadata: BTreeMap<String, String>,
    }
}

const FIELDS: &[&str] = &["op_name", "op_type", "source_file", "source_line", "source"];

pub struct Metadata(Vec<(String, Regex)>);

impl Kind for Metadata {
    type Def = MetadataDef;
    const PHASE: Phase = Phase::Atom;

    fn compile(def: &MetadataDef, cx: &Cx, env: &mut Env) -> Result<Vec<Metadata>, RuleError> {
        let mut pats = Vec::new();
        for (k, r) in &def.metadata {
            let at = cx.at("metadata").at(k);
            if !FIELDS.contains(&k.as_str()) {
                return Err(at.err_key(RuleErrorKind::Matcher, format!("unknown metadata field `{k}`"), "here").with_help(
                    "metadata fields: op_name, op_type, source_file, source_line, source (file:line of the stack)",
                ));
            }
            if !env.layers.contains(&Layer::Hlo) {
                return Err(at.err_key(
                    RuleErrorKind::Matcher,
                    "`metadata` is HLO's; this rule's layers have none".into(),
                    "here",
                ));
            }
            pats.push((k.clone(), regex(r, &at)?));
        }
        Ok(if pats.is_empty() { Vec::new() } else { vec![Metadata(pats)] })
    }

    fn holds(&self, m: &Module<'_>, id: OpId, _: &mut Caps) -> bool {
        self.0.iter().all(|(k, r)| props::metadata_field(m, id, k).is_some_and(|t| r.is_match(&t)))
    }
}
