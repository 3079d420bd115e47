//! `hlolint test`: each rule of the packs alone on its cases, as `sg test` does — a valid case must give no
//! finding, an invalid one at least one — and an invalid case with an expected-findings file beside it
//! (`CASE.findings`) exactly the findings that file lists, where it lists them. `--update` writes those files
//! (`sg test --update-all`): a finding that moves is then a diff to review, not a silent change.

use super::rules_cmd::{config_packs, load_or_all};
use super::usage::UsageError;
use crate::rules::engine::{Finding, SeverityOf};
use crate::rules::{self, RuleSet, Severity};
use std::fmt::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct TestArgs {
    /// Packs to test (built-in names or paths; default: the configuration's `rules`, else every built-in pack).
    #[arg(value_name = "PACK")]
    pub packs: Vec<String>,
    /// Only rules whose id or code contains this.
    #[arg(long, short)]
    pub filter: Option<String>,
    /// Write each invalid case's expected findings (`CASE.findings` beside the case) from this run; the built-in
    /// packs' cases are written into the source tree this binary was built from.
    #[arg(long)]
    pub update: bool,
    #[command(flatten)]
    pub cfg: super::ConfigArgs,
}

/// The file beside case `case` that lists where its findings land.
pub fn findings_file(case: &Path) -> PathBuf {
    let mut name = case.file_name().unwrap_or_default().to_os_string();
    name.push(".findings");
    case.with_file_name(name)
}

/// One case's outcome.
enum CaseVerdict {
    Validated,
    /// A valid case was reported.
    Noisy(Vec<String>),
    /// An invalid case was not reported.
    Missing,
    /// An invalid case's findings are not where its expected-findings file says.
    Moved {
        expected: String,
        actual: String,
    },
    Error(String),
}

/// What testing one rule gave: its cases (path, invalid), a line per case that failed, the expected-findings files
/// written.
struct RuleOutcome {
    cases: Vec<(PathBuf, bool)>,
    lines: Vec<String>,
    written: usize,
}

/// Runs rule `r` alone on each of its cases.
fn test_rule(set: &RuleSet, r: &rules::Rule, update: bool) -> Result<RuleOutcome, String> {
    let only = |x: &rules::Rule| if x.id == r.id { Severity::Error } else { Severity::Off };
    let cases: Vec<(PathBuf, bool)> = r
        .valid
        .iter()
        .flat_map(|p| crate::source::cases_in(p))
        .map(|p| (p, false))
        .chain(r.invalid.iter().flat_map(|p| crate::source::cases_in(p)).map(|p| (p, true)))
        .collect();
    let mut out = RuleOutcome { cases: Vec::new(), lines: Vec::new(), written: 0 };
    for (case, invalid) in &cases {
        let name = rules::embedded::display(case);
        let (verdict, actual) = case_outcome(set, &only, r, case, *invalid);
        if let (true, Some(actual)) = (update, &actual) {
            write_expected(case, actual)?;
            out.written += 1;
        }
        match verdict {
            CaseVerdict::Validated => {}
            CaseVerdict::Moved { .. } if update => {}
            CaseVerdict::Moved { expected, actual } => {
                out.lines.push(format!("    moved: {name}: its findings are not where {name}.findings says"));
                out.lines.extend(diff(&expected, &actual));
            }
            CaseVerdict::Noisy(m) => {
                out.lines.push(format!("    noisy: {name} is valid but was reported: {}", m.join(" | ")))
            }
            CaseVerdict::Missing => out.lines.push(format!("    missing: {name} is invalid but was not reported")),
            CaseVerdict::Error(e) => out.lines.push(format!("    error: {name}: {e}")),
        }
    }
    out.cases = cases;
    Ok(out)
}

/// The verdict of one case — an invalid case must be reported, a valid one must not — and, for an invalid case
/// that was reported, where its findings landed (the expected-findings file's text).
fn case_outcome(
    set: &RuleSet,
    only: &SeverityOf<'_>,
    r: &rules::Rule,
    case: &Path,
    invalid: bool,
) -> (CaseVerdict, Option<String>) {
    if !case.exists() {
        return (CaseVerdict::Error(format!("{} does not exist", rules::embedded::display(case))), None);
    }
    let (reports, errors) = crate::run::lint_paths(&[case.to_path_buf()], set, only, None);
    // an inconclusive verdict proves neither side; what was explored is not a verdict
    let findings: Vec<&Finding> =
        reports.iter().flat_map(|c| &c.findings).filter(|f| f.verdict != crate::analysis::Verdict::Explored).collect();
    if let Some(e) = errors.first() {
        return (CaseVerdict::Error(format!("{e}")), None);
    }
    if invalid && findings.is_empty() {
        return (CaseVerdict::Missing, None);
    }
    if !invalid {
        let verdict = match findings.is_empty() {
            true => CaseVerdict::Validated,
            false => CaseVerdict::Noisy(findings.iter().map(|f| f.message.clone()).collect()),
        };
        return (verdict, None);
    }
    let actual = landing(case, r, &findings);
    let verdict = match std::fs::read_to_string(findings_file(case)) {
        Ok(expected) if expected != actual => CaseVerdict::Moved { expected, actual: actual.clone() },
        _ => CaseVerdict::Validated,
    };
    (verdict, Some(actual))
}

/// Where the findings of rule `r` on `case` land: one line per finding (file, start and end as line:column,
/// the rule), one under it per secondary label. Files are named relative to the case.
fn landing(case: &Path, r: &rules::Rule, findings: &[&Finding]) -> String {
    let mut out = format!(
        "# where the findings of {} land in this case; `hlolint test --update` rewrites this file\n",
        r.title()
    );
    let base = if case.is_dir() { case } else { case.parent().unwrap_or(case) };
    let mut texts: std::collections::HashMap<&str, crate::report::QuotedText> = Default::default();
    for f in findings {
        let text = texts
            .entry(f.path.as_str())
            .or_insert_with(|| crate::report::QuotedText::new(std::fs::read_to_string(&f.path).unwrap_or_default()));
        let file = Path::new(&f.path).strip_prefix(base).map(|p| p.display().to_string()).unwrap_or(f.path.clone());
        let at = |start: u32, end: u32| {
            let ((l0, c0), (l1, c1)) = (text.line_col(start), text.line_col(end));
            format!("{file}:{l0}:{c0}-{l1}:{c1}")
        };
        let verdict = match f.verdict {
            crate::analysis::Verdict::Inconclusive => " (inconclusive)",
            _ => "",
        };
        let _ = writeln!(out, "{} {}{verdict}", at(f.span.start, f.span.end), r.title());
        for (span, _) in &f.labels {
            let _ = writeln!(out, "  label {}", at(span.start, span.end));
        }
    }
    out
}

/// The lines only one of the two texts has, marked `-` (expected) and `+` (this run).
fn diff(expected: &str, actual: &str) -> Vec<String> {
    let (e, a): (Vec<&str>, Vec<&str>) = (expected.lines().collect(), actual.lines().collect());
    let gone = e.iter().filter(|l| !a.contains(l)).map(|l| format!("      - {l}"));
    let new = a.iter().filter(|l| !e.contains(l)).map(|l| format!("      + {l}"));
    gone.chain(new).collect()
}

/// Writes `text` as the expected findings of `case`: beside it, or for a built-in pack's case (run from the
/// embedded copy), beside the case in the source tree it was embedded from.
fn write_expected(case: &Path, text: &str) -> Result<(), String> {
    let case = match rules::embedded::source_path(case) {
        Some(Ok(p)) => p,
        Some(Err(e)) => return Err(e),
        None => case.to_path_buf(),
    };
    let file = findings_file(&case);
    std::fs::write(&file, text).map_err(|e| format!("cannot write {}: {e}", file.display()))
}

pub fn test(args: &TestArgs) -> i32 {
    let mut packs = args.packs.clone();
    if packs.is_empty() {
        match config_packs(&args.cfg) {
            Ok(p) => packs = p,
            Err(code) => return code,
        }
    }
    let set = match load_or_all(&packs) {
        Ok(s) => s,
        Err(code) => return code,
    };
    // The built-in packs' cases are embedded in the binary; they are written to a temporary folder for the run.
    let _cases = if set.rules.iter().any(|r| matches!(r.origin, rules::model::Origin::Builtin(_))) {
        match rules::embedded::materialize() {
            Ok(g) => Some(g),
            Err(e) => {
                eprintln!("{:?}", miette::Report::new(UsageError::CasesUnwritable { err: e }));
                return 2;
            }
        }
    } else {
        None
    };
    let (mut passed, mut failed, mut written, mut untested) = (0, 0, 0, Vec::new());
    let mut out = String::new();
    for r in &set.rules {
        if let Some(f) = &args.filter {
            if !r.id.contains(f.as_str()) && !r.code.as_deref().is_some_and(|c| c.contains(f.as_str())) {
                continue;
            }
        }
        if r.valid.is_empty() && r.invalid.is_empty() {
            untested.push(r.id.clone());
            continue;
        }
        let o = match test_rule(&set, r, args.update) {
            Ok(o) => o,
            Err(e) => {
                crate::out!("{out}");
                eprintln!("error: {e}");
                return 2;
            }
        };
        written += o.written;
        let ok = o.lines.is_empty();
        let (nv, ni) = (o.cases.iter().filter(|c| !c.1).count(), o.cases.iter().filter(|c| c.1).count());
        let mark = if ok { "✓" } else { "✗" };
        let _ = writeln!(out, "{mark} {:<6} {:<28} {nv} valid, {ni} invalid", r.code.as_deref().unwrap_or("-"), r.id);
        for l in o.lines {
            let _ = writeln!(out, "{l}");
        }
        if ok {
            passed += 1;
        } else {
            failed += 1;
        }
    }
    crate::out!("{out}");
    if !untested.is_empty() {
        crate::outln!("rules without test cases: {}", untested.join(", "));
    }
    if args.update {
        crate::outln!("wrote the expected findings of {written} invalid case(s)");
    }
    crate::outln!("{passed} rule(s) passed, {failed} failed");
    if failed > 0 {
        1
    } else {
        0
    }
}
