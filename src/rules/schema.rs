//! The YAML form of a rule pack, as serde reads it, and the JSON schema generated from it (`rules/schema.json`,
//! which editors validate packs with). Unknown keys are errors (`deny_unknown_fields`), so a typo in a pack is
//! reported with its line and column rather than silently ignored. `compile.rs` then checks the meaning (op families
//! per layer, regexes, dtypes, analyses); a matcher's keys are its kinds' (`matcher/`).

use super::matcher::MatcherDef;
use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::BTreeMap;

/// The JSON schema of a pack, as `rules/schema.json` holds it (`hlolint rules --schema` prints it).
pub fn json_schema() -> String {
    let schema = schemars::schema_for!(PackFile);
    let mut text = serde_json::to_string_pretty(&schema).unwrap_or_default();
    text.push('\n');
    text
}

/// A rule pack of hlolint: named rules, each a matcher over a layer's graph or a named analysis (rules/README.md).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PackFile {
    /// The pack's name (`core`, `v3-smem`, or your own).
    pub pack: String,
    #[serde(default)]
    pub description: String,
    /// Packs whose rules this one includes (by name or path, relative to this file).
    #[serde(default)]
    pub extends: Vec<String>,
    #[serde(default)]
    pub rules: Vec<RuleDef>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RuleDef {
    /// Stable kebab-case id (`fp8-upcast-before-dot`).
    pub id: String,
    /// Stable short code (`HL001`).
    pub code: Option<String>,
    #[serde(default = "default_severity")]
    pub severity: String,
    /// `hlo`, `stablehlo`, `mosaic`, `llo`, `any`, or a list.
    #[serde(default)]
    pub layer: OneOrMany,
    /// One line: what the rule reports.
    #[serde(default)]
    pub summary: String,
    /// Ops to report: a matcher over the layer's graph. Exactly one of `select` and `analysis`.
    pub select: Option<MatcherDef>,
    /// A named analysis (Rust) to run instead of a matcher.
    pub analysis: Option<String>,
    /// The analysis's options (`hlolint explain ANALYSIS` lists them).
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, serde_json::Value>")]
    pub options: BTreeMap<String, serde_norway::Value>,
    /// For analysis rules: keep only hits whose captures match these regexes (`{kind: "never-waited"}`).
    #[serde(default)]
    pub when: BTreeMap<String, String>,
    /// The message template: `{op.name}`, `{capture.dtype}`, `{analysis.detail}`, `{target}`, ...
    pub message: String,
    /// Secondary labels on captured ops.
    #[serde(default)]
    pub labels: Vec<LabelDef>,
    /// The primary label's text (a template); defaults to the message's first clause.
    pub label: Option<String>,
    #[serde(default)]
    pub help: Option<String>,
    /// Markdown documentation (`hlolint explain ID`): what, why, example.
    #[serde(default)]
    pub doc: String,
    /// Absent: the cases in `tests/data/rules/<id>/{valid,invalid}` (see `load::default_cases`).
    #[serde(default)]
    pub tests: Option<TestsDef>,
}

fn default_severity() -> String {
    "warning".into()
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TestsDef {
    #[serde(default)]
    pub valid: Vec<String>,
    #[serde(default)]
    pub invalid: Vec<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LabelDef {
    /// A capture name.
    pub at: String,
    pub text: String,
}

/// A string or a list of strings.
#[derive(Debug, Default, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum OneOrMany {
    #[default]
    None,
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    /// Written as a list (its items then have positions of their own).
    pub fn is_many(&self) -> bool {
        matches!(self, OneOrMany::Many(_))
    }

    pub fn items(&self) -> Vec<String> {
        match self {
            OneOrMany::None => Vec::new(),
            OneOrMany::One(s) => vec![s.clone()],
            OneOrMany::Many(v) => v.clone(),
        }
    }
}

/// A count: `0`, `2`, or `{min: 1, max: 3}`.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum CountDef {
    Exactly(u64),
    Range {
        #[serde(default)]
        min: Option<u64>,
        #[serde(default)]
        max: Option<u64>,
    },
}

/// A rank or dimension bound: `2` or `{min: 2}`.
pub type RankDef = CountDef;
