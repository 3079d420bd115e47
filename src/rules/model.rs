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
