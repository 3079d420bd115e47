//! Every output format of a run, from its [`RunOutcome`]: what goes to the report (stdout or `--output-file`) and
//! what goes to stderr.

use super::{machine, outcome::RunOutcome, sarif, RuleCount};
use crate::summary::{link, render_file, FileSummary};
use serde::Serialize;

/// The report's format (`--format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Diagnostics grouped per compilation.
    Human,
    /// `path:line:col: CODE message`, one line per finding.
    Concise,
    /// Findings, compilations, file summaries and errors.
    Json,
    /// SARIF 2.1.0 (GitHub code scanning and friends).
    Sarif,
    /// GitHub workflow annotations.
    Github,
    /// GitLab code quality report.
    Gitlab,
    /// JUnit XML.
    Junit,
}

/// What the report shows besides the findings.
#[derive(Clone, Copy, Debug, Default)]
pub struct WriteOptions {
    /// What each file holds and how the layers link (`--summary`; JSON always has it).
    pub summary: bool,
    /// Only the findings and errors (`--quiet`).
    pub quiet: bool,
    /// The number of findings per rule (`--statistics`).
    pub statistics: bool,
}

/// A written report: its text, and the lines for stderr (errors in every format; JSON also lists them).
#[derive(Debug, Default)]
pub struct Written {
    pub report: String,
    pub stderr: Vec<String>,
}

/// Writes `run` in `format`.
pub fn write(format: Format, run: &RunOutcome, opts: WriteOptions) -> Written {
    let mut w = Written::default();
    let stats = opts.statistics.then(|| super::statistics(&run.findings().collect::<Vec<_>>()));
    let stats_table = |st: &[RuleCount]| super::statistics_table(st) + &super::suppressed_rows(&run.suppressed());
    let (reports, texts) = (&run.compilations, &run.texts);
    w.report = match format {
        Format::Human => human(run, opts),
        Format::Json => json(run, stats),
        Format::Sarif => {
            // Every rule that can fire: the run's packs and each version's own pack.
            let catalog = sarif::catalog(run.rules.iter().chain(&run.version_rules));
            let log = sarif::log(reports, texts, &catalog, stats);
            serde_json::to_string_pretty(&log).unwrap_or_default() + "\n"
        }
        Format::Concise => machine::concise(reports, texts) + &stats.map(|s| stats_table(&s)).unwrap_or_default(),
        Format::Github => machine::github(reports, texts) + &stats.map(|s| stats_table(&s)).unwrap_or_default(),
        Format::Gitlab | Format::Junit => {
            // the table would break the XML or JSON: it goes to stderr
            if let Some(st) = &stats {
                w.stderr.push(stats_table(st).trim_end().to_string());
            }
            match format {
                Format::Gitlab => machine::gitlab(reports, texts),
                _ => machine::junit(reports, texts),
            }
        }
    };
    if format != Format::Json {
        w.stderr.extend(run.warnings.iter().map(super::excerpt::render));
        w.stderr.extend(run.errors.iter().map(super::excerpt::render));
        if format == Format::Human && !opts.quiet && !run.errors.is_empty() {
            w.stderr.push(format!("{} file(s) parsed, {} error(s)", run.parsed.len(), run.errors.len()));
        }
    }
    w
}

/// File summaries and links (`--summary`), then the findings per compilation when rules ran.
fn human(run: &RunOutcome, opts: WriteOptions) -> String {
    let mut out = String::new();
    if opts.summary {
        for (path, s) in &run.files {
            out.push_str(&render_file(path, s));
        }
        out.push_str(&link::render(&link::link(&run.files)));
    }
    let any_finding = run.findings().next().is_some();
    // a run whose every input failed linted nothing: "no findings in 0 compilation(s)" would read as a pass
    let failed = run.compilations.is_empty() && (!run.errors.is_empty() || run.nothing_found);
    if !run.rules.is_empty() && !failed && (!opts.quiet || any_finding) {
        let human = super::HumanOptions { statistics: opts.statistics, quiet: opts.quiet };
        out.push_str(&super::human(&run.compilations, &run.texts, human));
    }
    out
}

#[derive(Serialize)]
struct JsonFile<'a> {
    path: &'a str,
    #[serde(flatten)]
    summary: &'a FileSummary,
}

#[derive(Serialize)]
struct JsonError {
    message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    offset: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    expected: Option<String>,
}

fn json_error(r: &miette::Report) -> JsonError {
    let se = r.downcast_ref::<crate::parse::error::SyntaxError>();
    JsonError {
        message: r.to_string(),
        path: se.map(|e| e.src.name().to_string()),
        offset: se.map(|e| e.span.offset()),
        expected: se.map(|e| e.expected.clone()),
    }
}

/// One JSON document: findings, compilations, the run's rule ids, files, links, errors, suppression counts.
fn json(run: &RunOutcome, stats: Option<Vec<RuleCount>>) -> String {
    let files: Vec<JsonFile> = run.files.iter().map(|(path, summary)| JsonFile { path, summary }).collect();
    let errors: Vec<JsonError> = run.errors.iter().map(json_error).collect();
    let warnings: Vec<JsonError> = run.warnings.iter().map(json_error).collect();
    let findings: Vec<serde_json::Value> = run.findings().map(|f| machine::finding_json(f, &run.texts)).collect();
    let mut rule_ids: Vec<&String> = Vec::new();
    for r in &run.rules {
        if !rule_ids.contains(&&r.id) {
            rule_ids.push(&r.id);
        }
    }
    let compilations: Vec<serde_json::Value> = run
        .compilations
        .iter()
        .map(|r| {
            let mut c = serde_json::json!({"dir": r.dir, "target": r.target, "files": r.files, "rules": r.packs,
                "findings": r.findings.len(), "suppressed": r.suppressed});
            if let Some(p) = &r.perf {
                c["perf"] = serde_json::to_value(p).unwrap_or_default();
            }
            c
        })
        .collect();
    let mut doc = serde_json::json!({
        "findings": findings,
        "compilations": compilations,
        "rules": rule_ids,
        "files": files,
        "linked": link::link(&run.files),
        "errors": errors,
        "warnings": warnings,
        "suppressed": run.suppressed(),
    });
    if let Some(st) = &stats {
        doc["statistics"] = serde_json::to_value(st).unwrap_or_default();
    }
    serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"
}
