//! Semantic views and analyses over the graph that a rule selector cannot express on its own.
//!
//! A named analysis (`analysis: dma-balance` in a rule pack) is a Rust function over one unit of a compilation
//! (with the whole compilation at hand for cross-layer facts and the target). It returns [`Hit`]s; the rule that
//! calls it supplies the id, severity and message template, which reads the hit's captures as `{analysis.KEY}`.

pub mod async_balance;
pub mod async_pairs;
pub mod crosslink;
pub mod dma_balance;
pub mod dma_pipeline;
pub mod dma_sim;
pub mod fp8;
pub mod kernel;
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
    /// One paragraph: what it checks and what a hit means (shown by `hlolint explain`).
    pub doc: &'static str,
    /// The capture keys its hits carry besides `detail`.
    pub captures: &'static [&'static str],
    /// The options it accepts (name, meaning).
    pub options: &'static [(&'static str, &'static str)],
    pub run: fn(&Compilation<'_>, usize, &Options) -> Vec<Hit>,
}

/// Every named analysis. Rule packs refer to them by name.
pub static ANALYSES: &[Analysis] = &[
    Analysis {
        name: "async-balance",
        layers: &[Layer::Hlo],
        doc: async_balance::DOC,
        captures: &["kind", "family", "start", "done"],
        options: &[],
        run: async_balance::run,
    },
    Analysis {
        name: "smem-scales",
        layers: &[Layer::Mosaic],
        doc: smem::DOC,
        captures: &["kind", "arg", "memref"],
        options: &[(
            "max_scale_elements",
            "largest operand (in elements) still treated as a scale table; default 4096",
        )],
        run: smem::run,
    },
    Analysis {
        name: "auto-pipelining",
        layers: &[Layer::Mosaic],
        doc: pipelining::DOC,
        captures: &["kind", "operand", "window", "array"],
        options: &[],
        run: pipelining::run,
    },
    Analysis {
        name: fp8::NAME,
        layers: &[Layer::Hlo, Layer::StableHlo, Layer::Mosaic, Layer::Llo],
        doc: fp8::DOC,
        captures: fp8::CAPTURES,
        options: fp8::OPTIONS,
        run: fp8::run,
    },
    Analysis {
        name: fp8::NARROW_NAME,
        layers: &[Layer::Hlo, Layer::StableHlo, Layer::Mosaic, Layer::Llo],
        doc: fp8::NARROW_DOC,
        captures: fp8::NARROW_CAPTURES,
        options: fp8::OPTIONS,
        run: fp8::run_narrow,
    },
    Analysis {
        name: placement::NAME,
        layers: &[Layer::Hlo, Layer::Llo],
        doc: placement::DOC,
        captures: placement::CAPTURES,
        options: placement::OPTIONS,
        run: placement::run,
    },
    Analysis {
        name: "dma-balance",
        layers: &[Layer::Mosaic],
        doc: dma_balance::DOC,
        captures: &["kind", "semaphore", "slot"],
        options: &[],
        run: dma_balance::run,
    },
    Analysis {
        name: "dma-double-buffering",
        layers: &[Layer::Mosaic],
        doc: dma_pipeline::DOC,
        captures: &["kind", "buffer", "slots"],
        options: &[],
        run: dma_pipeline::run,
    },
];

pub fn analysis(name: &str) -> Option<&'static Analysis> {
    ANALYSES.iter().find(|a| a.name == name)
}
