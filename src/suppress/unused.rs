//! Ignore comments that silence nothing (ruff's unused-`noqa` check): a warning each, pointing at the comment.
//!
//! Only what the run can judge is said: a code is unused when a rule it names ran and none of that rule's
//! findings sits on the comment's line; a code no rule has (built in or in the run's packs) is named as unknown,
//! with the closest code. A code of a rule that did not run here (another version's pack, a `--select` that left
//! it out) says nothing about the comment and is not reported.

use super::inline::{PythonFiles, Unused};
use crate::rules::Rule;
use miette::{NamedSource, SourceSpan};
use std::path::Path;
use std::sync::Arc;

#[derive(Debug, thiserror::Error, miette::Diagnostic)]
#[error("{path}:{line}: {what}")]
#[diagnostic(code(hlolint::unused_ignore), severity(Warning))]
pub struct UnusedIgnore {
    pub path: String,
    pub line: u32,
    pub what: String,
    #[source_code]
    pub src: NamedSource<Arc<String>>,
    #[label("{label}")]
    pub at: SourceSpan,
    pub label: String,
    #[help]
    pub help: Option<String>,
}

/// A warning per unused comment, or per comment with unused or unknown codes (see the module documentation).
pub fn warnings(unused: &[Unused], ran: &[&Rule], cwd: &Path) -> Vec<miette::Report> {
    if ran.is_empty() {
        return Vec::new();
    }
    let builtin = crate::rules::load::load_all_builtin().map(|s| s.rules).unwrap_or_default();
    let matches = |code: &str, r: &Rule| super::code_matches(code, r.code.as_deref(), &r.id);
    let mut out = Vec::new();
    for u in unused {
        let (what, label, help) = if u.codes.is_empty() {
            let what = "`# hlolint: ignore` silences nothing in this run".to_string();
            (what, "no finding on this line".to_string(), Some("remove the comment".to_string()))
        } else {
            let idle: Vec<&String> = u.codes.iter().filter(|c| ran.iter().any(|r| matches(c, r))).collect();
            let unknown: Vec<&String> = u
                .codes
                .iter()
                .filter(|c| !ran.iter().any(|r| matches(c, r)) && !builtin.iter().any(|r| matches(c, r)))
                .collect();
            if let Some(c) = unknown.first() {
                let names = ran
                    .iter()
                    .copied()
                    .chain(&builtin)
                    .flat_map(|r| r.code.as_deref().into_iter().chain([r.id.as_str()]));
                let what = format!("no rule has the code `{c}` in this ignore comment");
                (what, "unknown code".to_string(), crate::suggest::hint(c, names))
            } else if !idle.is_empty() {
                let list: Vec<String> = idle.iter().map(|c| format!("`{c}`")).collect();
                let what = format!("{} in this ignore comment silence(s) nothing in this run", list.join(", "));
                let help = Some("remove the code (or the comment) once the finding is fixed".to_string());
                (what, "no such finding on this line".to_string(), help)
            } else {
                continue;
            }
        };
        let path = PythonFiles::display(&u.path, cwd);
        out.push(miette::Report::new(UnusedIgnore {
            src: NamedSource::new(path.clone(), u.source.clone()),
            path,
            line: u.line,
            what,
            at: SourceSpan::from((u.at.start, u.at.len())),
            label,
            help,
        }));
    }
    out
}
