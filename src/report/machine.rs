//! Machine-readable reports: JSON findings with line/column, SARIF 2.1.0 (with a rules catalog), GitHub workflow
//! annotations (`::error file=…,line=…::…`).

use super::excerpt::line_col;
use super::{CompilationReport, Texts};
use crate::rules::engine::Finding;
use crate::rules::{RuleSet, Severity};
use serde_json::{json, Value};

fn position(f: &Finding, texts: &Texts) -> ((usize, usize), (usize, usize)) {
    match texts.get(&f.path) {
        Some(t) => (line_col(t, f.span.start as usize), line_col(t, f.span.end as usize)),
        None => ((1, 1), (1, 1)),
    }
}

/// A finding as JSON (the `findings` array of `--format json`).
pub fn finding_json(f: &Finding, texts: &Texts) -> Value {
    let ((l0, c0), (l1, c1)) = position(f, texts);
    let mut v = serde_json::to_value(f).unwrap_or(Value::Null);
    if let Some(o) = v.as_object_mut() {
        o.insert("start".into(), json!({"line": l0, "column": c0, "offset": f.span.start}));
        o.insert("end".into(), json!({"line": l1, "column": c1, "offset": f.span.end}));
        o.remove("span");
        let labels: Vec<Value> = f
            .labels
            .iter()
            .map(|(s, t)| {
                let (l, c) = texts.get(&f.path).map(|x| line_col(x, s.start as usize)).unwrap_or((1, 1));
                json!({"text": t, "line": l, "column": c, "offset": s.start, "end_offset": s.end})
            })
            .collect();
        o.insert("labels".into(), Value::Array(labels));
    }
    v
}

pub fn compilations_json(reports: &[CompilationReport], texts: &Texts) -> Value {
    Value::Array(
        reports
            .iter()
            .map(|r| {
                json!({
                    "dir": r.dir,
                    "target": r.target,
                    "files": r.files,
                    "findings": r.findings.iter().map(|f| finding_json(f, texts)).collect::<Vec<_>>(),
                })
            })
            .collect(),
    )
}

fn sarif_level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        _ => "note",
    }
}

/// SARIF 2.1.0: one run, the selected rules as the driver's catalog, one result per finding.
pub fn sarif(reports: &[CompilationReport], texts: &Texts, rules: &RuleSet) -> Value {
    let catalog: Vec<Value> = rules
        .rules
        .iter()
        .map(|r| {
            json!({
                "id": r.id,
                "name": r.id,
                "shortDescription": {"text": if r.summary.is_empty() { r.id.clone() } else { r.summary.clone() }},
                "fullDescription": {"text": r.summary},
                "help": {"text": r.doc, "markdown": r.doc},
                "defaultConfiguration": {"level": sarif_level(r.severity)},
                "properties": {"code": r.code, "pack": r.pack, "layers": r.layers.iter().map(|l| l.name()).collect::<Vec<_>>()},
            })
        })
        .collect();
    let mut results = Vec::new();
    for r in reports {
        for f in &r.findings {
            let ((l0, c0), (l1, c1)) = position(f, texts);
            let idx = rules.rules.iter().position(|x| x.id == f.rule);
            let mut msg = f.message.clone();
            for n in &f.notes {
                msg.push_str(&format!("\nnote: {n}"));
            }
            results.push(json!({
                "ruleId": f.rule,
                "ruleIndex": idx,
                "level": sarif_level(f.severity),
                "message": {"text": msg},
                "locations": [{
                    "physicalLocation": {
                        "artifactLocation": {"uri": f.path.replace('\\', "/")},
                        "region": {"startLine": l0, "startColumn": c0, "endLine": l1, "endColumn": c1,
                                   "byteOffset": f.span.start, "byteLength": f.span.end.saturating_sub(f.span.start)}
                    }
                }],
                "properties": {"compilation": f.compilation, "target": f.target, "kernel": f.kernel, "source": f.source, "layer": f.layer,
                               "verdict": f.verdict},
            }));
        }
    }
    json!({
        "version": "2.1.0",
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "runs": [{
            "tool": {"driver": {
                "name": "hlolint",
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": "https://github.com/hlolint/hlolint",
                "rules": catalog,
            }},
            "results": results,
        }]
    })
}

/// `%`, CR and LF escaped as GitHub's workflow commands require.
fn gh_escape(s: &str, property: bool) -> String {
    let mut out = s.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A");
    if property {
        out = out.replace(':', "%3A").replace(',', "%2C");
    }
    out
}

/// GitHub workflow annotations, one line per finding.
pub fn github(reports: &[CompilationReport], texts: &Texts) -> String {
    let mut out = String::new();
    for r in reports {
        for f in &r.findings {
            let ((l0, c0), (l1, c1)) = position(f, texts);
            let level = match f.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
                _ => "notice",
            };
            let title = match &f.code {
                Some(c) => format!("{c} {}", f.rule),
                None => f.rule.clone(),
            };
            let mut msg = f.message.clone();
            for n in &f.notes {
                msg.push_str(&format!("\nnote: {n}"));
            }
            out.push_str(&format!(
                "::{level} file={},line={l0},col={c0},endLine={l1},endColumn={c1},title={}::{}\n",
                gh_escape(&f.path, true),
                gh_escape(&title, true),
                gh_escape(&msg, false)
            ));
        }
    }
    out
}
