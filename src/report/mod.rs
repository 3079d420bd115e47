//! Reports of findings: human (miette diagnostics grouped per compilation, i.e. per kernel version), JSON,
//! SARIF 2.1.0, GitHub workflow annotations, concise lines, GitLab code quality and JUnit XML.

pub(crate) mod excerpt;
pub(crate) mod fingerprint;
pub(crate) mod machine;
pub(crate) mod outcome;
pub(crate) mod sarif;
pub(crate) mod suppressed;
pub(crate) mod write;

use crate::analysis::Verdict;
use crate::ir::LineIndex;
use crate::rules::engine::Finding;
use crate::rules::Severity;
use excerpt::Windowed;
use miette::{Diagnostic, LabeledSpan, NamedSource, SourceCode};
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, OnceLock};

pub use outcome::RunOutcome;
pub use write::{write, Format, WriteOptions, Written};

/// What one compilation (a dump directory: one kernel version on one target) yielded.
pub struct CompilationReport {
    pub dir: String,
    /// `tpu7x (from manifest)`.
    pub target: Option<String>,
    pub files: usize,
    /// The packs the compilation was linted with, when not the run's own (a kernel module's per-version pack).
    pub packs: Option<String>,
    pub findings: Vec<Finding>,
    /// How many findings suppressions hid (they are not in `findings`).
    pub suppressed: suppressed::Counts,
    /// The performance model's facts, when the run asked for them (`--summary --format json`).
    pub perf: Option<crate::perf::CompilationFacts>,
}

/// The texts of the files findings point into, by path.
pub type Texts = HashMap<String, QuotedText>;

/// A file findings point into: its text, and the index that places their offsets (built on the first question,
/// once however many findings the file holds).
#[derive(Debug, Default)]
pub struct QuotedText {
    pub text: Arc<String>,
    lines: OnceLock<LineIndex>,
}

impl QuotedText {
    pub fn new(text: String) -> QuotedText {
        QuotedText { text: Arc::new(text), lines: OnceLock::new() }
    }

    /// 1-based line and column (in characters) of byte `offset`.
    pub fn line_col(&self, offset: u32) -> (usize, usize) {
        self.lines.get_or_init(|| LineIndex::new(self.text.as_str())).line_col(&self.text, offset as usize)
    }
}

/// Line and column of `offset` in the file at `path`; `(1, 1)` when the report does not hold its text.
pub fn line_col(texts: &Texts, path: &str, offset: u32) -> (usize, usize) {
    texts.get(path).map_or((1, 1), |t| t.line_col(offset))
}

/// A finding as a miette diagnostic.
pub struct FindingDiagnostic<'f> {
    pub f: &'f Finding,
    pub src: NamedSource<Arc<String>>,
}

impl fmt::Debug for FindingDiagnostic<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.f.message)
    }
}

impl fmt::Display for FindingDiagnostic<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.f.message)
    }
}

impl std::error::Error for FindingDiagnostic<'_> {}

impl Diagnostic for FindingDiagnostic<'_> {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        let what = match self.f.verdict {
            Verdict::Finding => "",
            Verdict::Inconclusive => " · inconclusive",
            Verdict::Explored => " · explored",
            Verdict::Assumed => " · assumed",
        };
        // The user's Python line first, when known: that is where the finding is fixed or suppressed.
        let py = match &self.f.python {
            Some(p) if p.column > 0 => format!("{}:{}:{}: ", sarif::relative(&p.file), p.line, p.column),
            Some(p) => format!("{}:{}: ", sarif::relative(&p.file), p.line),
            None => String::new(),
        };
        Some(Box::new(match &self.f.code {
            Some(c) => format!("{py}{c} {}{what}", self.f.rule),
            None => format!("{py}{}{what}", self.f.rule),
        }))
    }

    fn severity(&self) -> Option<miette::Severity> {
        Some(match self.f.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
            _ => miette::Severity::Advice,
        })
    }

    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        let mut lines: Vec<String> = self.f.help.iter().cloned().collect();
        lines.extend(self.f.notes.iter().map(|n| format!("note: {n}")));
        if lines.is_empty() {
            None
        } else {
            Some(Box::new(lines.join("\n")))
        }
    }

    fn source_code(&self) -> Option<&dyn SourceCode> {
        Some(&self.src)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        let cap = |s: crate::ir::Span| (s.start as usize, s.end.saturating_sub(s.start) as usize);
        let primary = LabeledSpan::new_primary_with_span(Some(self.f.label.clone()), cap(self.f.span));
        let rest = self.f.labels.iter().map(move |(s, t)| LabeledSpan::new_with_span(Some(t.clone()), cap(*s)));
        Some(Box::new(std::iter::once(primary).chain(rest)))
    }
}

fn severity_counts(findings: &[&Finding]) -> String {
    let n = |s| {
        let counted = |f: &&&Finding| matches!(f.verdict, Verdict::Finding | Verdict::Assumed);
        findings.iter().filter(counted).filter(|f| f.severity == s).count()
    };
    let mut parts = Vec::new();
    for (s, word) in [(Severity::Error, "error"), (Severity::Warning, "warning"), (Severity::Info, "info")] {
        let k = n(s);
        if k > 0 {
            parts.push(format!("{k} {word}{}", if k == 1 || s == Severity::Info { "" } else { "s" }));
        }
    }
    for (v, word) in [(Verdict::Inconclusive, "inconclusive"), (Verdict::Explored, "explored")] {
        let k = findings.iter().filter(|f| f.verdict == v).count();
        if k > 0 {
            parts.push(format!("{k} {word}"));
        }
    }
    parts.join(", ")
}

/// What the human report prints besides the findings.
#[derive(Clone, Copy, Debug, Default)]
pub struct HumanOptions {
    /// The number of findings per rule after the findings.
    pub statistics: bool,
    /// Only the findings: no line per compilation, no tally.
    pub quiet: bool,
}

/// ` · 3 suppressed (2 inline, 1 config) · 5 baselined`, or nothing.
fn suppressed_note(c: &suppressed::Counts) -> String {
    if c.is_empty() {
        String::new()
    } else {
        format!(" · {}", c.describe())
    }
}

/// `--statistics` rows for what suppressions hid (after the per-rule rows).
pub fn suppressed_rows(c: &suppressed::Counts) -> String {
    let mut out = String::new();
    if c.suppressed() > 0 {
        out.push_str(&format!("{:>5}  {:<6} suppressed ({})\n", c.suppressed(), "", c.how()));
    }
    if c.baseline > 0 {
        out.push_str(&format!("{:>5}  {:<6} baselined\n", c.baseline, ""));
    }
    out
}

/// The human report: one block per compilation with its findings as miette diagnostics, then a tally.
pub fn human(reports: &[CompilationReport], texts: &Texts, opts: HumanOptions) -> String {
    let mut out = String::new();
    let mut all: Vec<&Finding> = Vec::new();
    let mut suppressed = suppressed::Counts::default();
    for r in reports {
        suppressed.merge(&r.suppressed);
        let note = suppressed_note(&r.suppressed);
        let mut target = r.target.as_deref().map(|t| format!(" · target {t}")).unwrap_or_default();
        if let Some(p) = &r.packs {
            target.push_str(&format!(" · rules {p}"));
        }
        let dir = if r.dir.is_empty() { "." } else { &r.dir };
        let refs: Vec<&Finding> = r.findings.iter().collect();
        if r.findings.is_empty() {
            if !opts.quiet {
                out.push_str(&format!("✓ {dir}{target} · {} file(s) · clean{note}\n", r.files));
            }
            continue;
        }
        let mark = if refs.iter().any(|f| f.severity >= Severity::Warning) {
            '✗'
        } else if refs.iter().any(|f| f.verdict == Verdict::Inconclusive) {
            '?'
        } else {
            'ℹ'
        };
        if !opts.quiet {
            out.push_str(&format!("{mark} {dir}{target} · {} file(s) · {}{note}\n", r.files, severity_counts(&refs)));
        }
        for f in &r.findings {
            out.push_str(&render_finding(f, texts));
            out.push('\n');
        }
        all.extend(refs);
    }
    if opts.statistics {
        out.push_str(&statistics_table(&statistics(&all)));
        out.push_str(&suppressed_rows(&suppressed));
    }
    if opts.quiet {
        return out;
    }
    let compilations = reports.len();
    let failing = reports.iter().filter(|r| !r.findings.is_empty()).count();
    let note = suppressed_note(&suppressed);
    if all.is_empty() {
        out.push_str(&format!("no findings in {compilations} compilation(s){note}\n"));
    } else {
        out.push_str(&format!("{} in {failing} of {compilations} compilation(s){note}\n", severity_counts(&all)));
    }
    out
}

/// One finding as a miette diagnostic (far labels as notes, long lines windowed).
fn render_finding(f: &Finding, texts: &Texts) -> String {
    let none = QuotedText::default();
    let text = texts.get(&f.path).unwrap_or(&none);
    let f = &near_labels_only(f, text);
    let d = FindingDiagnostic { f, src: NamedSource::new(f.path.clone(), text.text.clone()) };
    format!("{:?}", miette::Report::new(Windowed::of(&d)))
}

/// Findings of one rule in a run (`--statistics`).
#[derive(Clone, Debug, serde::Serialize)]
pub struct RuleCount {
    pub code: Option<String>,
    pub rule: String,
    pub count: usize,
}

/// Findings per rule, most frequent first.
pub fn statistics(findings: &[&Finding]) -> Vec<RuleCount> {
    let mut by_rule: std::collections::BTreeMap<(Option<String>, String), usize> = Default::default();
    for f in findings {
        *by_rule.entry((f.code.clone(), f.rule.clone())).or_default() += 1;
    }
    let mut rows: Vec<RuleCount> =
        by_rule.into_iter().map(|((code, rule), count)| RuleCount { code, rule, count }).collect();
    rows.sort_by(|a, b| b.count.cmp(&a.count).then((&a.code, &a.rule).cmp(&(&b.code, &b.rule))));
    rows
}

/// `  12  MO010  dma-balance`, one line per rule.
pub fn statistics_table(rows: &[RuleCount]) -> String {
    rows.iter().map(|r| format!("{:>5}  {:<6} {}\n", r.count, r.code.as_deref().unwrap_or(""), r.rule)).collect()
}

/// Labels more than this many lines from the primary span become notes: miette prints every line between them.
const NEAR_LINES: usize = 12;

/// The finding with far-away secondary labels turned into notes that give their line.
fn near_labels_only(f: &Finding, text: &QuotedText) -> Finding {
    let line = |off: u32| text.line_col(off).0;
    let primary = line(f.span.start);
    let mut out = f.clone();
    out.labels.clear();
    let mut far = Vec::new();
    for (span, label) in &f.labels {
        let l = line(span.start);
        if l.abs_diff(primary) <= NEAR_LINES {
            out.labels.push((*span, label.clone()));
        } else {
            far.push(format!("{label}: line {l}"));
        }
    }
    far.extend(out.notes);
    out.notes = far;
    out
}
