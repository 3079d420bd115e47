//! Compiled rules: what `compile.rs` makes of the YAML and what the engine evaluates (a matcher's compiled form
//! is `matcher::Matcher`).

use crate::analysis::{Analysis, Options};
use crate::ir::Layer;
use regex::Regex;
use serde::Serialize;
use std::path::PathBuf;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Off,
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn parse(s: &str) -> Option<Severity> {
        match s.to_ascii_lowercase().as_str() {
            "off" | "allow" | "none" => Some(Severity::Off),
            "info" | "note" | "hint" => Some(Severity::Info),
            "warning" | "warn" => Some(Severity::Warning),
            "error" | "deny" => Some(Severity::Error),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Severity::Off => "off",
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// Where a pack came from.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "kind", content = "path", rename_all = "lowercase")]
pub enum Origin {
    Builtin(String),
    File(PathBuf),
}

impl Origin {
    pub fn display(&self) -> String {
        match self {
            Origin::Builtin(name) => format!("rules/{name}.yaml (built-in)"),
            Origin::File(p) => p.display().to_string(),
        }
    }
}

pub struct Rule {
    pub id: String,
    pub code: Option<String>,
    pub severity: Severity,
    pub layers: Vec<Layer>,
    pub summary: String,
    pub kind: RuleKind,
    pub message: String,
    pub label: Option<String>,
    pub labels: Vec<(String, String)>,
    pub help: Option<String>,
    pub doc: String,
    pub valid: Vec<PathBuf>,
    pub invalid: Vec<PathBuf>,
    /// The pack that defines it.
    pub pack: String,
    pub origin: Origin,
}

impl Rule {
    /// `HL001 fp8-upcast-before-dot` or just the id.
    pub fn title(&self) -> String {
        match &self.code {
            Some(c) => format!("{c} {}", self.id),
            None => self.id.clone(),
        }
    }

    /// The rule's page in Markdown: its `doc` (what it reports, why that is bad, an example) and, for a rule that
    /// calls an analysis, the analysis's own doc (how it decides, its kinds), which the rule's `doc` does not repeat.
    pub fn page(&self) -> String {
        match &self.kind {
            RuleKind::Analysis(a, ..) => {
                format!("{}\n\n## How the analysis `{}` decides\n\n{}\n", self.doc.trim_end(), a.name, a.doc)
            }
            _ => self.doc.clone(),
        }
    }
}

pub enum RuleKind {
    Select(Box<super::matcher::Matcher>),
    /// The analysis, its options, and `when` filters over its captures.
    Analysis(&'static Analysis, Options, Vec<(String, Regex)>),
}

#[derive(Clone, Copy, Debug)]
pub struct Count {
    pub min: u64,
    pub max: u64,
}

impl Count {
    pub const AT_LEAST_ONE: Count = Count { min: 1, max: u64::MAX };
    pub fn holds(&self, n: u64) -> bool {
        n >= self.min && n <= self.max
    }
}

impl From<super::schema::CountDef> for Count {
    fn from(c: super::schema::CountDef) -> Count {
        match c {
            super::schema::CountDef::Exactly(n) => Count { min: n, max: n },
            super::schema::CountDef::Range { min, max } => {
                Count { min: min.unwrap_or(0), max: max.unwrap_or(u64::MAX) }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An analysis rule's `doc` says what the rule reports and why; how the analysis decides is the analysis's own
    /// doc, which the rule's page shows beside it. A run of eight words both hold is a fact stated twice.
    #[test]
    fn rule_docs_do_not_repeat_their_analysis_doc() {
        let words = |s: &str| -> Vec<String> {
            s.split(|c: char| !c.is_alphanumeric() && c != '-' && c != '_')
                .filter(|w| !w.is_empty())
                .map(str::to_lowercase)
                .collect()
        };
        let set = crate::rules::load::load_all_builtin().expect("the built-in packs load");
        for r in &set.rules {
            let RuleKind::Analysis(a, ..) = &r.kind else { continue };
            assert!(r.doc.contains(&format!("`{}`", a.name)), "{}: its doc names no analysis `{}`", r.id, a.name);
            let analysis = words(a.doc);
            let runs: std::collections::HashSet<&[String]> = analysis.windows(8).collect();
            let doc = words(&r.doc);
            if let Some(run) = doc.windows(8).find(|w| runs.contains(w)) {
                panic!("{}: its doc repeats the analysis `{}`'s: \"{}\"", r.id, a.name, run.join(" "));
            }
        }
    }
}
