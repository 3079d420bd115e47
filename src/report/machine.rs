//! Machine-readable reports: JSON findings with line/column, GitHub workflow annotations
//! (`::error file=…,line=…::…`), `concise` lines (`path:line:col: CODE message`), GitLab code quality JSON and
//! JUnit XML. SARIF is in `sarif.rs`.

use super::{line_col, CompilationReport, Texts};
use crate::rules::engine::Finding;
use crate::rules::Severity;
use serde_json::{json, Value};

fn position(f: &Finding, texts: &Texts) -> ((usize, usize), (usize, usize)) {
    (line_col(texts, &f.path, f.span.start), line_col(texts, &f.path, f.span.end))
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
                let (l, c) = line_col(texts, &f.path, s.start);
                json!({"text": t, "line": l, "column": c, "offset": s.start, "end_offset": s.end})
            })
            .collect();
        o.insert("labels".into(), Value::Array(labels));
    }
    v
}

/// `%`, CR and LF escaped as GitHub's workflow commands require.
fn gh_escape(s: &str, property: bool) -> String {
    let mut out = s.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A");
    if property {
        out = out.replace(':', "%3A").replace(',', "%2C");
    }
    out
}

/// GitHub workflow annotations, one line per finding: on the Python line when the dumps record it (where the
/// author fixes or silences it), the dump location then in the message; else on the dump.
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
            let place = match &f.python {
                Some(p) => {
                    msg.push_str(&format!("\ndump: {}:{l0}:{c0}", f.path));
                    let col = if p.column > 0 { format!(",col={}", p.column) } else { String::new() };
                    format!("file={},line={}{col}", gh_escape(&super::sarif::relative(&p.file), true), p.line.max(1))
                }
                None => format!("file={},line={l0},col={c0},endLine={l1},endColumn={c1}", gh_escape(&f.path, true)),
            };
            out.push_str(&format!("::{level} {place},title={}::{}\n", gh_escape(&title, true), gh_escape(&msg, false)));
        }
    }
    out
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn title(f: &Finding) -> String {
    match &f.code {
        Some(c) => c.clone(),
        None => f.rule.clone(),
    }
}

/// `path:line:col: CODE message`, one line per finding: the Python line first when the dumps record it, the dump
/// location then in brackets at the end (`kernels.py:80:5: MO010 ... [dump: v2@tpu7x/mosaic/...:46:7]`).
pub fn concise(reports: &[CompilationReport], texts: &Texts) -> String {
    let mut out = String::new();
    for f in reports.iter().flat_map(|r| &r.findings) {
        let ((l, c), _) = position(f, texts);
        let (code, msg) = (title(f), one_line(&f.message));
        out.push_str(&match &f.python {
            Some(p) => {
                let col = if p.column > 0 { format!(":{}", p.column) } else { String::new() };
                let py = super::sarif::relative(&p.file);
                format!("{py}:{}{col}: {code} {msg} [dump: {}:{l}:{c}]\n", p.line, f.path)
            }
            None => format!("{}:{l}:{c}: {code} {msg}\n", f.path),
        });
    }
    out
}

#[derive(serde::Serialize)]
struct GitlabIssue {
    description: String,
    check_name: String,
    fingerprint: String,
    severity: &'static str,
    location: GitlabLocation,
}

#[derive(serde::Serialize)]
struct GitlabLocation {
    path: String,
    lines: GitlabLines,
}

#[derive(serde::Serialize)]
struct GitlabLines {
    begin: usize,
}

/// GitLab code quality report (a JSON array of issues); the Python line is the location when known.
pub fn gitlab(reports: &[CompilationReport], texts: &Texts) -> String {
    let issues: Vec<GitlabIssue> = reports
        .iter()
        .flat_map(|r| &r.findings)
        .map(|f| {
            let (path, begin) = match &f.python {
                Some(p) => (super::sarif::relative(&p.file), p.line.max(1) as usize),
                None => (f.path.replace('\\', "/"), position(f, texts).0 .0),
            };
            GitlabIssue {
                description: format!("{} {}", title(f), one_line(&f.message)),
                check_name: f.rule.clone(),
                fingerprint: super::fingerprint::fingerprint(f),
                severity: match f.severity {
                    Severity::Error => "major",
                    Severity::Warning => "minor",
                    _ => "info",
                },
                location: GitlabLocation { path, lines: GitlabLines { begin } },
            }
        })
        .collect();
    let mut out = serde_json::to_string_pretty(&issues).unwrap_or_default();
    out.push('\n');
    out
}

/// XML text and attribute escaping; characters XML 1.0 cannot hold are dropped.
fn xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(ch),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {}
            c => out.push(c),
        }
    }
    out
}

/// JUnit XML: a test suite per compilation, a failing test case per finding (a passing one for a clean
/// compilation).
pub fn junit(reports: &[CompilationReport], texts: &Texts) -> String {
    let total: usize = reports.iter().map(|r| r.findings.len().max(1)).sum();
    let failures: usize = reports.iter().map(|r| r.findings.len()).sum();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    out.push_str(&format!("<testsuites name=\"hlolint\" tests=\"{total}\" failures=\"{failures}\" errors=\"0\">\n"));
    for r in reports {
        let dir = if r.dir.is_empty() { "." } else { &r.dir };
        let n = r.findings.len();
        out.push_str(&format!(
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{n}\" errors=\"0\" skipped=\"0\">\n",
            xml(dir),
            n.max(1)
        ));
        if r.findings.is_empty() {
            out.push_str(&format!("    <testcase name=\"clean\" classname=\"{}\"/>\n", xml(dir)));
        }
        for f in &r.findings {
            let ((l, c), _) = position(f, texts);
            let mut body = format!("{}:{l}:{c}: {}", f.path, f.message);
            if let Some(p) = &f.python {
                body.push_str(&format!("\nPython source: {}:{}", p.file, p.line));
            }
            for note in &f.notes {
                body.push_str(&format!("\nnote: {note}"));
            }
            out.push_str(&format!(
                "    <testcase name=\"{} {} at {}:{l}:{c}\" classname=\"{}\" file=\"{}\" line=\"{l}\">\n",
                xml(&title(f)),
                xml(&f.rule),
                xml(&f.path),
                xml(dir),
                xml(&f.path)
            ));
            out.push_str(&format!(
                "      <failure message=\"{}\" type=\"{}\">{}</failure>\n    </testcase>\n",
                xml(&one_line(&f.message)),
                xml(&title(f)),
                xml(&body)
            ));
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}
