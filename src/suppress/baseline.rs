//! Baselines: the findings a team has accepted, by stable fingerprint (`report::fingerprint`: rule, compilation
//! folder name, kernel, op identity — no dump line numbers), so regenerated dumps keep matching.
//!
//! `--write-baseline FILE` writes the run's findings; `--baseline FILE` (or `baseline = "..."` in the config)
//! hides the findings whose fingerprint is in it. The file is JSON, one entry per fingerprint with the rule and a
//! description, sorted so a diff of two baselines reads as "these findings came, these went":
//!
//! ```json
//! {
//!   "version": "hlolint/v1",
//!   "findings": [
//!     {
//!       "fingerprint": "3f0c9a4e5b6d7c81",
//!       "code": "MO010",
//!       "rule": "dma-balance",
//!       "compilation": "bug_unwaited_dma@tpu7x",
//!       "kernel": "fp8_mm_bug_unwaited_dma",
//!       "description": "a DMA started in grid step (3, 3), ... at line _ ..."
//!     }
//!   ]
//! }
//! ```

use crate::report::fingerprint;
use crate::rules::engine::Finding;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BaselineFile {
    /// The fingerprint version (`report::fingerprint::VERSION`): entries of another version never match.
    pub version: String,
    pub findings: Vec<Entry>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
pub struct Entry {
    pub fingerprint: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    pub rule: String,
    /// The compilation folder's name (`v2@tpu7x`).
    pub compilation: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<String>,
    /// The message on one line, dump line numbers and compile ids left out (as the fingerprint does).
    pub description: String,
}

impl Entry {
    pub fn of(f: &Finding) -> Entry {
        let message = f.message.split_whitespace().collect::<Vec<_>>().join(" ");
        Entry {
            fingerprint: fingerprint::fingerprint(f),
            code: f.code.clone(),
            rule: f.rule.clone(),
            compilation: fingerprint::compilation_name(&f.compilation).to_string(),
            kernel: f.kernel.clone(),
            description: fingerprint::normalize(&message),
        }
    }
}

/// The fingerprints of a baseline.
#[derive(Debug, Default)]
pub struct Baseline {
    fingerprints: HashSet<String>,
}

impl Baseline {
    pub fn contains(&self, f: &Finding) -> bool {
        self.fingerprints.contains(&fingerprint::fingerprint(f))
    }

    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.fingerprints.is_empty()
    }

    /// The baseline of these findings.
    pub fn of<'f>(findings: impl IntoIterator<Item = &'f Finding>) -> Baseline {
        Baseline { fingerprints: findings.into_iter().map(fingerprint::fingerprint).collect() }
    }
}

/// Why a baseline cannot be used or written.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum BaselineError {
    #[error("cannot read the baseline {}: {err}", path.display())]
    #[diagnostic(code(hlolint::baseline::unreadable), help("`--write-baseline FILE` makes one"))]
    Unreadable { path: PathBuf, err: std::io::Error },
    #[error("{}:{}:{}: not a baseline: {err}", path.display(), err.line(), err.column())]
    #[diagnostic(code(hlolint::baseline::invalid), help("a baseline is the JSON `--write-baseline` writes"))]
    NotABaseline { path: PathBuf, err: serde_json::Error },
    #[error("the baseline {} holds {found} fingerprints; this hlolint makes {}", path.display(), fingerprint::VERSION)]
    #[diagnostic(code(hlolint::baseline::version), help("write it again with `--write-baseline`"))]
    OtherVersion { path: PathBuf, found: String },
    #[error("cannot write the baseline {}: {err}", path.display())]
    #[diagnostic(code(hlolint::baseline::unwritable))]
    Unwritable { path: PathBuf, err: std::io::Error },
}

/// Reads a baseline file.
pub fn read(path: &Path) -> Result<Baseline, BaselineError> {
    let text =
        std::fs::read_to_string(path).map_err(|err| BaselineError::Unreadable { path: path.to_path_buf(), err })?;
    let file: BaselineFile =
        serde_json::from_str(&text).map_err(|err| BaselineError::NotABaseline { path: path.to_path_buf(), err })?;
    if file.version != fingerprint::VERSION {
        return Err(BaselineError::OtherVersion { path: path.to_path_buf(), found: file.version });
    }
    Ok(Baseline { fingerprints: file.findings.into_iter().map(|e| e.fingerprint).collect() })
}

/// The baseline file of these findings: one entry per fingerprint, sorted by compilation, rule, kernel and
/// description.
pub fn render<'f>(findings: impl IntoIterator<Item = &'f Finding>) -> String {
    let mut entries: Vec<Entry> = findings.into_iter().map(Entry::of).collect();
    entries.sort_by(|a, b| {
        (&a.compilation, &a.code, &a.rule, &a.kernel, &a.description, &a.fingerprint).cmp(&(
            &b.compilation,
            &b.code,
            &b.rule,
            &b.kernel,
            &b.description,
            &b.fingerprint,
        ))
    });
    let mut seen = HashSet::new();
    entries.retain(|e| seen.insert(e.fingerprint.clone()));
    let file = BaselineFile { version: fingerprint::VERSION.to_string(), findings: entries };
    let mut out = serde_json::to_string_pretty(&file).unwrap_or_default();
    out.push('\n');
    out
}

/// Writes the baseline file of these findings.
pub fn write<'f>(path: &Path, findings: impl IntoIterator<Item = &'f Finding>) -> Result<(), BaselineError> {
    std::fs::write(path, render(findings)).map_err(|err| BaselineError::Unwritable { path: path.to_path_buf(), err })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_unusable_baseline_names_why() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("b.json");
        assert!(matches!(read(&p), Err(BaselineError::Unreadable { .. })));
        std::fs::write(&p, "{\n  \"version\": 3,\n}").unwrap();
        let e = read(&p).err().unwrap();
        assert!(matches!(e, BaselineError::NotABaseline { .. }));
        assert!(e.to_string().contains("b.json:2:"), "line and column: {e}");
        std::fs::write(&p, "{\"version\": \"hlolint/v0\", \"findings\": []}").unwrap();
        let e = read(&p).err().unwrap();
        assert!(matches!(&e, BaselineError::OtherVersion { found, .. } if found == "hlolint/v0"));
        let why = format!("holds hlolint/v0 fingerprints; this hlolint makes {}", fingerprint::VERSION);
        assert!(e.to_string().ends_with(&why), "{e}");
        std::fs::write(&p, render([])).unwrap();
        assert!(read(&p).unwrap().is_empty());
        assert!(matches!(write(tmp.path(), []), Err(BaselineError::Unwritable { .. })));
    }
}
