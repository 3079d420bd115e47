//! SARIF 2.1.0 as typed serde structs: the subset hlolint writes, held valid against the OASIS schema by
//! `tests/it/formats.rs`. One run; the catalog holds every rule that can fire in the run (the run's packs and each
//! version's own pack from a manifest), so every result has a `ruleIndex`; `partialFingerprints` from
//! [`super::fingerprint`]; the user's Python line as the location when known, the dump as a related location.

use super::fingerprint::{fingerprint, VERSION};
use super::{line_col, CompilationReport, RuleCount, Texts};
use crate::rules::engine::Finding;
use crate::rules::{Rule, Severity};
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Serialize)]
pub struct Log {
    #[serde(rename = "$schema")]
    pub schema: &'static str,
    pub version: &'static str,
    pub runs: Vec<Run>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Run {
    pub tool: Tool,
    pub results: Vec<SarifResult>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub properties: Option<RunProperties>,
}

#[derive(Serialize)]
pub struct RunProperties {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub statistics: Option<Vec<RuleCount>>,
    /// How many findings inline comments, the configuration and the baseline hid (docs/suppressions.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suppressed: Option<super::suppressed::Counts>,
}

#[derive(Serialize)]
pub struct Tool {
    pub driver: Driver,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Driver {
    pub name: &'static str,
    pub version: &'static str,
    pub information_uri: &'static str,
    pub rules: Vec<ReportingDescriptor>,
}

#[derive(Serialize)]
pub struct Text {
    pub text: String,
}

#[derive(Serialize)]
pub struct TextMarkdown {
    pub text: String,
    pub markdown: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReportingDescriptor {
    pub id: String,
    pub name: String,
    pub short_description: Text,
    pub full_description: Text,
    pub help: TextMarkdown,
    pub default_configuration: Configuration,
    pub properties: RuleProperties,
}

#[derive(Serialize)]
pub struct Configuration {
    pub level: &'static str,
}

#[derive(Serialize)]
pub struct RuleProperties {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    pub pack: String,
    pub layers: Vec<&'static str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SarifResult {
    pub rule_id: String,
    pub rule_index: usize,
    pub level: &'static str,
    pub message: Text,
    pub locations: Vec<Location>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub related_locations: Vec<Location>,
    pub partial_fingerprints: BTreeMap<&'static str, String>,
    pub properties: ResultProperties,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Location {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<usize>,
    pub physical_location: PhysicalLocation,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<Text>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PhysicalLocation {
    pub artifact_location: ArtifactLocation,
    pub region: Region,
}

#[derive(Serialize)]
pub struct ArtifactLocation {
    pub uri: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Region {
    pub start_line: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_column: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_column: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub byte_offset: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub byte_length: Option<u32>,
}

#[derive(Serialize)]
pub struct ResultProperties {
    pub compilation: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel: Option<String>,
    pub source: String,
    pub layer: &'static str,
    pub verdict: crate::analysis::Verdict,
    pub fingerprint: String,
}

pub fn level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        _ => "note",
    }
}

/// A path as a SARIF URI reference: `/` separators, percent-encoded where a URI needs it, absolute paths under
/// the current directory made relative (code scanning resolves them against the checkout), other absolute paths
/// as `file://` URIs.
pub fn uri(path: &str) -> String {
    let p = relative(path);
    let mut out = String::new();
    for b in p.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/!$&'()*+,;=:@".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    if out.starts_with('/') {
        format!("file://{out}")
    } else {
        out
    }
}

/// A path with `/` separators, relative to the current directory when it is under it.
pub fn relative(path: &str) -> String {
    let p = path.replace('\\', "/");
    if p.starts_with('/') {
        if let Some(cwd) = std::env::current_dir().ok().and_then(|d| d.to_str().map(|s| s.replace('\\', "/"))) {
            if let Some(rel) = p.strip_prefix(&format!("{}/", cwd.trim_end_matches('/'))) {
                return rel.to_string();
            }
        }
    }
    p
}

/// The rules a run can report, by id, in the order given (the run's packs first); duplicates dropped.
pub fn catalog<'r>(rules: impl IntoIterator<Item = &'r Rule>) -> Vec<&'r Rule> {
    let mut seen = std::collections::HashSet::new();
    rules.into_iter().filter(|r| seen.insert(r.id.clone())).collect()
}

fn descriptor(r: &Rule) -> ReportingDescriptor {
    let summary = if r.summary.is_empty() { r.id.clone() } else { r.summary.clone() };
    ReportingDescriptor {
        id: r.id.clone(),
        name: r.id.clone(),
        short_description: Text { text: summary.clone() },
        full_description: Text { text: summary },
        help: TextMarkdown { text: r.page(), markdown: r.page() },
        default_configuration: Configuration { level: level(r.severity) },
        properties: RuleProperties {
            code: r.code.clone(),
            pack: r.pack.clone(),
            layers: r.layers.iter().map(|l| l.name()).collect(),
        },
    }
}

fn dump_location(f: &Finding, texts: &Texts, id: Option<usize>, message: Option<&str>) -> Location {
    let ((l0, c0), (l1, c1)) = (line_col(texts, &f.path, f.span.start), line_col(texts, &f.path, f.span.end));
    Location {
        id,
        physical_location: PhysicalLocation {
            artifact_location: ArtifactLocation { uri: uri(&f.path) },
            region: Region {
                start_line: l0,
                start_column: Some(c0),
                end_line: Some(l1),
                end_column: Some(c1),
                byte_offset: Some(f.span.start),
                byte_length: Some(f.span.end.saturating_sub(f.span.start)),
            },
        },
        message: message.map(|m| Text { text: m.to_string() }),
    }
}

/// The SARIF log of a run.
pub fn log(reports: &[CompilationReport], texts: &Texts, rules: &[&Rule], statistics: Option<Vec<RuleCount>>) -> Log {
    let mut descriptors: Vec<ReportingDescriptor> = rules.iter().map(|r| descriptor(r)).collect();
    let mut results = Vec::new();
    for f in reports.iter().flat_map(|r| &r.findings) {
        let index = descriptor_index(&mut descriptors, f);
        results.push(sarif_result(f, index, texts));
    }
    Log {
        schema: "https://json.schemastore.org/sarif-2.1.0.json",
        version: "2.1.0",
        runs: vec![Run {
            tool: Tool {
                driver: Driver {
                    name: "hlolint",
                    version: env!("CARGO_PKG_VERSION"),
                    information_uri: "https://github.com/hlolint/hlolint",
                    rules: descriptors,
                },
            },
            results,
            properties: run_properties(reports, statistics),
        }],
    }
}

/// The index of the finding's rule in the catalog. A finding of a rule no pack of the run names (none today) still
/// gets a catalog entry.
fn descriptor_index(descriptors: &mut Vec<ReportingDescriptor>, f: &Finding) -> usize {
    if let Some(i) = descriptors.iter().position(|d| d.id == f.rule) {
        return i;
    }
    descriptors.push(ReportingDescriptor {
        id: f.rule.clone(),
        name: f.rule.clone(),
        short_description: Text { text: f.rule.clone() },
        full_description: Text { text: f.rule.clone() },
        help: TextMarkdown { text: String::new(), markdown: String::new() },
        default_configuration: Configuration { level: level(f.severity) },
        properties: RuleProperties { code: f.code.clone(), pack: f.pack.clone(), layers: Vec::new() },
    });
    descriptors.len() - 1
}

fn sarif_result(f: &Finding, index: usize, texts: &Texts) -> SarifResult {
    let mut msg = f.message.clone();
    for n in &f.notes {
        msg.push_str(&format!("\nnote: {n}"));
    }
    let (locations, related) = result_locations(f, texts);
    let fp = fingerprint(f);
    SarifResult {
        rule_id: f.rule.clone(),
        rule_index: index,
        level: level(f.severity),
        message: Text { text: msg },
        locations,
        related_locations: related,
        partial_fingerprints: BTreeMap::from([(VERSION, fp.clone())]),
        properties: ResultProperties {
            compilation: f.compilation.clone(),
            target: f.target.clone(),
            kernel: f.kernel.clone(),
            source: f.source.clone(),
            layer: f.layer,
            verdict: f.verdict,
            fingerprint: fp,
        },
    }
}

/// A finding traced to Python is located there, with the dump as related location; otherwise in the dump.
fn result_locations(f: &Finding, texts: &Texts) -> (Vec<Location>, Vec<Location>) {
    match &f.python {
        Some(py) => (
            vec![Location {
                id: None,
                physical_location: PhysicalLocation {
                    artifact_location: ArtifactLocation { uri: uri(&py.file) },
                    region: Region {
                        start_line: py.line.max(1) as usize,
                        start_column: (py.column > 0).then_some(py.column as usize),
                        end_line: None,
                        end_column: None,
                        byte_offset: None,
                        byte_length: None,
                    },
                },
                message: None,
            }],
            vec![dump_location(f, texts, Some(1), Some("in the compiler dump"))],
        ),
        None => (vec![dump_location(f, texts, None, None)], Vec::new()),
    }
}

fn run_properties(reports: &[CompilationReport], statistics: Option<Vec<RuleCount>>) -> Option<RunProperties> {
    let mut suppressed = super::suppressed::Counts::default();
    reports.iter().for_each(|r| suppressed.merge(&r.suppressed));
    let suppressed = (!suppressed.is_empty()).then_some(suppressed);
    (statistics.is_some() || suppressed.is_some()).then_some(RunProperties { statistics, suppressed })
}
