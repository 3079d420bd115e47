//! What stops a command before or instead of its work: a bad option value, an unknown name, a report that cannot be
//! written. Each is a miette diagnostic with help where there is something to try; exit code 2.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum UsageError {
    #[error("unknown target `{target}`")]
    #[diagnostic(code(hlolint::usage::target), help("targets: {}", known.join(", ")))]
    UnknownTarget { target: String, known: Vec<&'static str> },
    #[error("no rule matches `{pattern}` in the selected packs nor in any built-in pack")]
    #[diagnostic(code(hlolint::usage::rule))]
    NoSuchRule {
        pattern: String,
        /// The closest code or id, and where the rules are listed.
        #[help]
        help: String,
    },
    #[error("--severity takes RULE=LEVEL, got `{got}`")]
    #[diagnostic(code(hlolint::usage::severity))]
    SeveritySyntax { got: String },
    #[error("unknown severity `{level}`")]
    #[diagnostic(code(hlolint::usage::severity), help("levels: error, warning, info, off"))]
    UnknownSeverity { level: String },
    #[error("--severity: no rule matches `{pattern}` in the selected packs nor in any built-in pack")]
    #[diagnostic(code(hlolint::usage::rule))]
    SeverityNoRule {
        pattern: String,
        #[help]
        help: String,
    },
    #[error("no rule or analysis `{rule}`")]
    #[diagnostic(code(hlolint::usage::rule))]
    NoSuchRuleOrAnalysis {
        rule: String,
        /// The closest name, then the rules there are.
        #[help]
        help: String,
    },
    #[error("cannot write the built-in rules' test cases: {err}")]
    #[diagnostic(code(hlolint::usage::io))]
    CasesUnwritable { err: std::io::Error },
    #[error("cannot write the report to {}: {err}", path.display())]
    #[diagnostic(code(hlolint::usage::io))]
    ReportUnwritable { path: PathBuf, err: std::io::Error },
    #[error("cannot write the report: {err}")]
    #[diagnostic(code(hlolint::usage::io))]
    StdoutUnwritable { err: std::io::Error },
    #[error("cannot write CSV: {err}")]
    #[diagnostic(code(hlolint::usage::io))]
    CsvUnwritable { err: csv::Error },
    #[error("--assume {0}")]
    #[diagnostic(code(hlolint::usage::assume), help("--assume NAME=VALUE, e.g. --assume region95=8"))]
    Assume(#[from] crate::perf::AssumeError),
}

/// `did you mean `MO010`? ` before `then` when a code or id of `rules` is close to `word`.
pub fn rule_hint<'r>(word: &str, rules: impl IntoIterator<Item = &'r crate::rules::Rule>, then: &str) -> String {
    let names = rules.into_iter().flat_map(|r| r.code.as_deref().into_iter().chain([r.id.as_str()]));
    match crate::suggest::hint(word, names) {
        Some(h) => format!("{h} {then}"),
        None => then.to_string(),
    }
}
