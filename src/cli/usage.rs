//! What stops a command before or instead of its work: a bad option value, an unknown name, a report that cannot be
//! written. Each is a miette diagnostic with help where there is something to try; exit code 2.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum UsageError {
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
