//! Semantic views and analyses over the graph that a rule selector cannot express on its own.
//!
//! A named analysis (`analysis: dma-balance` in a rule pack) is a Rust function over one unit of a compilation
//! (with the whole compilation at hand for cross-layer facts and the target). It returns [`Hit`]s; the rule that
//! calls it supplies the id, severity and message template, which reads the hit's captures as `{analysis.KEY}`.

pub mod async_balance;
pub mod crosslink;
pub mod data_format;
pub mod dma;
pub mod dma_balance;
pub mod dma_kind;
pub mod dma_pipeline;
pub mod dma_race;
pub mod fp8;
pub mod mxu_format;
pub mod pipelining;
pub mod placement;
pub mod smem;

use crate::ir::{Layer, OpId, Span};
use crate::lint::Compilation;
use std::collections::BTreeMap;

/// Options a rule passes to its analysis (`options:` in YAML), as JSON values.
pub type Options = BTreeMap<String, serde_json::Value>;

/// Where a hit or one of its labels points.
#[derive(Clone, Debug, PartialEq)]
pub enum At {
    /// An op of a unit (`unit` indexes `Compilation::units`).
    Op { unit: usize, op: OpId },
    /// A span of a unit's file text.
    Span { unit: usize, span: Span },
}

/// A secondary location with its text (a miette label when in the same file, a note otherwise).
#[derive(Clone, Debug, PartialEq)]
pub struct Label {
    pub at: At,
    pub text: String,
}

/// What a hit says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// A problem: the rule's severity applies.
    #[default]
    Finding,
    /// The analysis could not decide for this kernel (budget, unknowns): reported at note level, never a pass.
    Inconclusive,
    /// What the analysis explored, shown with `-v` only.
    Explored,
    /// A problem that only inputs the kernel's stated input assumptions (`per-kernel-assume`) exclude reach:
    /// reported as a warning (the rule's severity where that is lower), with an input that reaches it.
    Assumed,
}

/// One finding of an analysis, before a rule gives it an id, severity and message.
#[derive(Clone, Debug, PartialEq)]
pub struct Hit {
    pub verdict: Verdict,
    /// The primary location.
    pub at: At,
    /// Text of the primary label (what is wrong right here).
    pub label: String,
    pub labels: Vec<Label>,
    /// Values for the message template: `detail` (one sentence saying what is wrong) always; others per analysis
    /// (documented in its `captures`).
    pub captures: BTreeMap<String, String>,
    /// The same fact seen in other layers: "LLO `fp8_mm_v3.1`: vmatmul.mubr.f8e4m3b11.bf16 ×64".
    pub related: Vec<String>,
}

impl Hit {
    pub fn new(at: At, label: impl Into<String>, detail: impl Into<String>) -> Self {
        let mut captures = BTreeMap::new();
        captures.insert("detail".to_string(), detail.into());
        Hit { verdict: Verdict::Finding, at, label: label.into(), labels: Vec::new(), captures, related: Vec::new() }
    }

    /// The analysis could not decide: `detail` says why.
    pub fn inconclusive(at: At, detail: impl Into<String>) -> Self {
        Hit { verdict: Verdict::Inconclusive, ..Hit::new(at, "the analysis could not decide here", detail) }
    }

    /// What was explored (`-v`).
    pub fn explored(at: At, detail: impl Into<String>) -> Self {
        Hit { verdict: Verdict::Explored, ..Hit::new(at, "explored", detail) }
    }

    /// A problem only excluded inputs reach ([`Verdict::Assumed`]).
    pub fn assumed(self) -> Self {
        Hit { verdict: Verdict::Assumed, ..self }
    }

    pub fn capture(mut self, key: &str, value: impl Into<String>) -> Self {
        self.captures.insert(key.to_string(), value.into());
        self
    }

    pub fn with_label(mut self, at: At, text: impl Into<String>) -> Self {
        self.labels.push(Label { at, text: text.into() });
        self
    }
}

/// A named analysis callable from YAML.
pub struct Analysis {
    pub name: &'static str,
    /// The layers it reads; a rule calling it for another layer is a rule error.
    pub layers: &'static [Layer],
    /// One paragraph: how it decides — what it reads, the method, its kinds and what each means (shown by
    /// `hlolint explain` and on the page of every rule calling it); why a hit matters is the rule's `doc`.
    pub doc: &'static str,
    /// The capture keys its hits carry besides `detail`.
    pub captures: &'static [&'static str],
    /// The values of its hits' `kind` capture (empty when it has none): a rule's `when: {kind: ...}` must match
    /// one of them, so a misspelt kind is a pack error rather than a rule that never fires.
    pub kinds: &'static [&'static str],
    /// The options it accepts (name, meaning).
    pub options: &'static [(&'static str, &'static str)],
    pub run: fn(&Compilation<'_>, usize, &Options) -> Vec<Hit>,
    /// How much of an LLO program it reads, on its own layer or across layers.
    pub llo: LloReads,
    /// The computation it shares with other analyses, if any (their results are cached per lint thread): the rule
    /// engine runs the analyses that share one on a unit in one task, one after the other, so that the second
    /// finds the first's result instead of computing it again on another thread.
    pub shares: Option<&'static str>,
}

/// How much of an LLO program an analysis reads. A run whose rules all read [`LloReads::CrossLayerOps`] keeps
/// only those ops of each LLO dump (`semantic::llo::read_across_layers`): a compilation holds hundreds of LLO
/// files, a million ops, and their whole graphs were most of a run's memory and time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LloReads {
    /// Nothing, or only the MXU ops and the entry's operands.
    CrossLayerOps,
    /// Any op.
    Whole,
}

/// Every named analysis, each declared beside its code (`ANALYSIS` in its module). Rule packs refer to them by name.
pub static ANALYSES: &[&Analysis] = &[
    &async_balance::ANALYSIS,
    &smem::ANALYSIS,
    &pipelining::ANALYSIS,
    &fp8::ANALYSIS,
    &fp8::NARROW_ANALYSIS,
    &mxu_format::ANALYSIS,
    &placement::ANALYSIS,
    &dma_balance::ANALYSIS,
    &dma_race::ANALYSIS,
    &dma_pipeline::ANALYSIS,
];

pub fn analysis(name: &str) -> Option<&'static Analysis> {
    ANALYSES.iter().copied().find(|a| a.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lint::compilation::{parse_texts, source_file, Parsed};
    use std::collections::BTreeSet;
    use std::path::Path;

    /// The dump files of one rule case (a file, or a folder holding one compilation), with their texts.
    fn case_files(case: &Path) -> Vec<crate::source::SourceFile> {
        let paths: Vec<_> = if case.is_dir() {
            walkdir::WalkDir::new(case).into_iter().filter_map(Result::ok).map(|e| e.into_path()).collect()
        } else {
            vec![case.to_path_buf()]
        };
        paths
            .into_iter()
            .filter_map(|p| std::fs::read_to_string(&p).ok().map(|t| (p, t)))
            .filter(|(_, t)| crate::source::sniff(t).is_some())
            .map(|(p, t)| source_file(&p.display().to_string(), &t))
            .collect()
    }

    /// Every hit of every analysis on every built-in rule case carries a declared kind (or none, for an analysis
    /// without kinds), and every declared kind shows up on some case: the list a pack's `when:` is checked against
    /// is the list the code produces.
    #[test]
    fn declared_kinds_are_the_kinds_hits_carry() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/rules");
        let mut seen: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
        let options = Options::from([("require_target".to_string(), serde_json::Value::Bool(true))]);
        for rule in crate::source::cases_in(&root).into_iter().filter(|p| p.is_dir()) {
            for case in ["valid", "invalid"].iter().flat_map(|v| crate::source::cases_in(&rule.join(v))) {
                let files = case_files(&case);
                let parsed: Vec<Parsed> = parse_texts(&files).into_iter().filter_map(Result::ok).collect();
                let name = case.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                let c = Compilation::new(name, &parsed, None);
                for (unit, u) in c.units.iter().enumerate() {
                    for a in ANALYSES.iter().filter(|a| a.layers.contains(&u.layer())) {
                        for h in (a.run)(&c, unit, &options) {
                            let kind = h.captures.get("kind");
                            match kind {
                                Some(k) => assert!(
                                    a.kinds.contains(&k.as_str()),
                                    "{}: kind `{k}` on {} is not declared",
                                    a.name,
                                    case.display()
                                ),
                                None => assert!(a.kinds.is_empty(), "{}: a hit without a kind", a.name),
                            }
                            seen.entry(a.name).or_default().extend(kind.cloned());
                        }
                    }
                }
            }
        }
        // `inconclusive` and `explored` come from budgets and unknowns, which the simulator's own tests and the
        // real-kernel tests reach; the rule cases are small kernels that decide.
        let problem_kinds = |k: &&&str| !matches!(**k, "inconclusive" | "explored");
        for a in ANALYSES {
            let missing: Vec<&&str> = a
                .kinds
                .iter()
                .filter(problem_kinds)
                .filter(|k| !seen.get(a.name).is_some_and(|s| s.contains(**k)))
                .collect();
            assert!(missing.is_empty(), "{}: declared kinds no rule case produces: {missing:?}", a.name);
        }
    }
}
