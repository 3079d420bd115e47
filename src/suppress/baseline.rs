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
use std::path::Path;

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

    pub fn len(&self) -> usize {
        self.fingerprints.len()
    }

    pub fn is_empty(&self) -> bool {
        self.fingerprints.is_empty()
    }

    /// The baseline of these findings.
    pub fn of<'f>(findings: impl IntoIterator<Item = &'f Finding>) -> Baseline {
        Baseline { fingerprints: findings.into_iter().map(fingerprint::fingerprint).collect() }
    }
}

/// Reads a baseline file.
pub fn read(path: &Path) -> Result<Baseline, miette::Report> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        miette::miette!(help = "`--write-baseline FILE` makes one", "cannot read the baseline {}: {e}", path.display())
    })?;
    let file: BaselineFile = serde_json::from_str(&text).map_err(|e| {
        miette::miette!(
            help = "a baseline is the JSON `--write-baseline` writes",
            "{}:{}:{}: not a baseline: {e}",
            path.display(),
            e.line(),
            e.column()
        )
    })?;
    if file.version != fingerprint::VERSION {
        return Err(miette::miette!(
            help = "write it again with `--write-baseline`",
            "the baseline {} holds {} fingerprints; this hlolint makes {}",
            path.display(),
            file.version,
            fingerprint::VERSION
        ));
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
pub fn write<'f>(path: &Path, findings: impl IntoIterator<Item = &'f Finding>) -> Result<(), miette::Report> {
    std::fs::write(path, render(findings))
        .map_err(|e| miette::miette!("cannot write the baseline {}: {e}", path.display()))
}
