//! The YAML schema of a rule pack, as serde reads it. Unknown keys are errors (`deny_unknown_fields`), so a typo
//! in a pack is reported with its line and column rather than silently ignored. `load.rs` then checks the meaning
//! (op families per layer, regexes, dtypes, analyses) and compiles it.

use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Debug, Deserialize)]
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

#[derive(Debug, Deserialize)]
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
    #[serde(default)]
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

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TestsDef {
    #[serde(default)]
    pub valid: Vec<String>,
    #[serde(default)]
    pub invalid: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LabelDef {
    /// A capture name.
    pub at: String,
    pub text: String,
}

/// A string or a list of strings.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany {
    #[default]
    None,
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    pub fn items(&self) -> Vec<String> {
        match self {
            OneOrMany::None => Vec::new(),
            OneOrMany::One(s) => vec![s.clone()],
            OneOrMany::Many(v) => v.clone(),
        }
    }
}

/// A count: `0`, `2`, or `{min: 1, max: 3}`.
#[derive(Debug, Clone, Copy, Deserialize)]
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

/// Conditions on one op; all given keys must hold (an implicit `all`). Under a relation key, the same matcher
/// describes the related op and may say how to walk to it.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatcherDef {
    /// Op families (`dot`, `convert`, `async-start`, `dma-wait`, ...) or opcode globs (`stablehlo.*`, `*-start`).
    #[serde(default)]
    pub op: OneOrMany,
    /// Regex over the op's name (`%fusion.3` → `fusion.3`; MLIR result names without `%`).
    pub name: Option<String>,
    /// The result's element type: names or globs (`f8*`, `bf16`).
    #[serde(default)]
    pub dtype: OneOrMany,
    /// Alias of `dtype` for converts: the type converted to.
    #[serde(default)]
    pub to: OneOrMany,
    /// The first operand's element type (a convert's source type).
    #[serde(default)]
    pub from: OneOrMany,
    /// Any operand's element type.
    #[serde(default)]
    pub operand_dtype: OneOrMany,
    /// The result's rank.
    pub rank: Option<RankDef>,
    /// The result's number of elements.
    pub elements: Option<CountDef>,
    /// The result's memory space: `vmem`, `smem`, `hbm`, `any`, `semaphore_mem`, or an HLO space `S(1)`/`1`.
    #[serde(default)]
    pub memory_space: OneOrMany,
    /// Attribute regexes: `{custom_call_target: "^tpu_custom_call$"}` (the attribute's text as written).
    #[serde(default)]
    pub attr: BTreeMap<String, String>,
    /// Attributes that must be absent.
    #[serde(default)]
    pub no_attr: Vec<String>,
    /// HLO metadata regexes: `{op_name: "jit\\(f\\)/dot"}`, `source_file`, `source_line`.
    #[serde(default)]
    pub metadata: BTreeMap<String, String>,
    /// Regex over a custom call's target.
    pub custom_call_target: Option<String>,
    /// Regex over the enclosing function/computation's name.
    pub function: Option<String>,
    /// Some operand (walked through `through` ops) matches.
    pub operand: Option<Box<MatcherDef>>,
    /// Some user (walked through `through` ops) matches.
    pub user: Option<Box<MatcherDef>>,
    /// An enclosing op (MLIR region parent; HLO fusion/while/call calling this computation) matches.
    pub inside: Option<Box<MatcherDef>>,
    /// An op of the same block later in program/schedule order matches.
    pub precedes: Option<Box<MatcherDef>>,
    /// An op of the same block earlier in program/schedule order matches.
    pub follows: Option<Box<MatcherDef>>,
    /// The async partner (the done of a start, the start of a done) matches.
    pub paired: Option<Box<MatcherDef>>,
    /// Ops scheduled strictly between this op and a captured one.
    pub scheduled_between: Option<BetweenDef>,
    #[serde(default)]
    pub all: Vec<MatcherDef>,
    #[serde(default)]
    pub any: Vec<MatcherDef>,
    pub not: Option<Box<MatcherDef>>,
    /// Names this op for the message template and labels.
    pub capture: Option<String>,

    // Relation keys: valid only in a matcher under `operand`, `user`, `inside`, `precedes`, `follows`, `paired`.
    /// Only this operand index (for `operand`).
    pub index: Option<u32>,
    /// How many steps (not counting pass-through ops); default 1 (`inside`: any depth).
    pub depth: Option<u32>,
    /// Pass-through ops walked over: families/globs, plus `fusion-parameter` (a fused computation's parameter →
    /// the fusion's operand) and `fusion` (a fusion → its computation's ROOT; a ROOT → the fusion's users).
    #[serde(default)]
    pub through: Vec<String>,
    /// How many related ops must match (default: at least one).
    pub count: Option<CountDef>,
    /// Every related op must match (and there is at least one).
    #[serde(default)]
    pub every: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BetweenDef {
    /// The capture at the other end (from `paired`, `precedes`, ...).
    pub and: String,
    pub count: CountDef,
    /// Ops that do not count as work (families/globs).
    #[serde(default)]
    pub ignore: Vec<String>,
    /// Hold only when the block has work that could have been scheduled between: an op (not ignored) that neither
    /// depends on the later op nor is needed by the earlier one. Without it, nothing could overlap.
    #[serde(default)]
    pub independent_work: bool,
}
