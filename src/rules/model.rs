//! Compiled rules: what `load.rs` makes of the YAML and what the engine evaluates.

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
    Select(Box<Matcher>),
    /// The analysis, its options, and `when` filters over its captures.
    Analysis(&'static Analysis, Options, Vec<(String, Regex)>),
}

/// An op pattern: a family's per-layer globs, or one glob/opcode.
pub enum OpPat {
    Family(&'static crate::rules::families::Family),
    Glob(globset::GlobMatcher),
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

pub enum DtypePat {
    Glob(globset::GlobMatcher),
}

#[derive(Default)]
pub struct Matcher {
    pub ops: Vec<OpPat>,
    pub name: Option<Regex>,
    pub dtype: Vec<DtypePat>,
    pub from: Vec<DtypePat>,
    pub operand_dtype: Vec<DtypePat>,
    pub rank: Option<Count>,
    pub elements: Option<Count>,
    pub memory_space: Vec<String>,
    pub attr: Vec<(String, Regex)>,
    pub no_attr: Vec<String>,
    pub metadata: Vec<(String, Regex)>,
    pub custom_call_target: Option<Regex>,
    pub function: Option<Regex>,
    pub relations: Vec<Relation>,
    pub between: Option<Between>,
    pub all: Vec<Matcher>,
    pub any: Vec<Matcher>,
    pub not: Option<Box<Matcher>>,
    pub capture: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RelKind {
    Operand,
    User,
    Inside,
    Precedes,
    Follows,
    Paired,
}

impl RelKind {
    pub fn key(self) -> &'static str {
        match self {
            RelKind::Operand => "operand",
            RelKind::User => "user",
            RelKind::Inside => "inside",
            RelKind::Precedes => "precedes",
            RelKind::Follows => "follows",
            RelKind::Paired => "paired",
        }
    }
}

pub struct Relation {
    pub kind: RelKind,
    pub matcher: Matcher,
    pub index: Option<u32>,
    pub depth: u32,
    pub through: Vec<OpPat>,
    /// `fusion-parameter`: a fused computation's parameter → the fusion op's operand (and back for users).
    pub through_fusion_parameter: bool,
    /// `fusion`: a fusion/call → its computation's ROOT (and a ROOT → the caller's users).
    pub through_fusion: bool,
    pub count: Count,
    pub every: bool,
}

pub struct Between {
    pub and: String,
    pub count: Count,
    pub ignore: Vec<OpPat>,
    pub independent_work: bool,
}
