//! Silencing findings the user accepts (docs/suppressions.md), checked in this order:
//!
//! 1. an inline comment in the Python source, on the line the finding points to (`# hlolint: ignore[MO021]`,
//!    `inline.rs`);
//! 2. `per-path-ignores` / `per-kernel-ignores` in the configuration (`cli::settings`);
//! 3. a baseline file of stable fingerprints (`baseline.rs`, `--baseline`, `--write-baseline`).
//!
//! A suppressed finding is not reported and does not count for the exit status; the summary line and
//! `--statistics` say how many there were.

pub mod baseline;
pub mod inline;

use crate::rules::engine::Finding;

/// Why a finding is not reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Suppression {
    /// `# hlolint: ignore[...]` in the Python source.
    Inline,
    /// `per-path-ignores` or `per-kernel-ignores` in the configuration.
    Config,
    /// Its fingerprint is in the baseline.
    Baseline,
}

/// How many findings each kind of suppression hid.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Counts {
    pub inline: usize,
    pub config: usize,
    pub baseline: usize,
}

impl Counts {
    pub fn add(&mut self, s: Suppression) {
        match s {
            Suppression::Inline => self.inline += 1,
            Suppression::Config => self.config += 1,
            Suppression::Baseline => self.baseline += 1,
        }
    }

    pub fn merge(&mut self, o: &Counts) {
        self.inline += o.inline;
        self.config += o.config;
        self.baseline += o.baseline;
    }

    /// Suppressed by a comment or the configuration (the baseline is counted apart).
    pub fn suppressed(&self) -> usize {
        self.inline + self.config
    }

    pub fn is_empty(&self) -> bool {
        self.suppressed() + self.baseline == 0
    }

    /// `2 inline, 1 config`.
    pub fn how(&self) -> String {
        let mut how = Vec::new();
        if self.inline > 0 {
            how.push(format!("{} inline", self.inline));
        }
        if self.config > 0 {
            how.push(format!("{} config", self.config));
        }
        how.join(", ")
    }

    /// `3 suppressed (2 inline, 1 config) · 5 baselined`, or the empty string.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if self.suppressed() > 0 {
            parts.push(format!("{} suppressed ({})", self.suppressed(), self.how()));
        }
        if self.baseline > 0 {
            parts.push(format!("{} baselined", self.baseline));
        }
        parts.join(" · ")
    }
}

/// Whether a rule selector names this finding's rule: `ALL`, the rule id, its code or a prefix of the code
/// (case-insensitive), as `--select`/`--ignore` read them.
pub fn code_matches(pattern: &str, code: Option<&str>, id: &str) -> bool {
    let p = pattern.trim();
    !p.is_empty()
        && (p.eq_ignore_ascii_case("ALL")
            || id.eq_ignore_ascii_case(p)
            || code.is_some_and(|c| c.to_ascii_uppercase().starts_with(&p.to_ascii_uppercase())))
}

/// `code_matches` for a finding.
pub fn finding_matches(pattern: &str, f: &Finding) -> bool {
    code_matches(pattern, f.code.as_deref(), &f.rule)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors() {
        assert!(code_matches("MO021", Some("MO021"), "dma-double-buffering"));
        assert!(code_matches("mo02", Some("MO021"), "dma-double-buffering"));
        assert!(code_matches("dma-double-buffering", Some("MO021"), "dma-double-buffering"));
        assert!(code_matches("ALL", None, "x"));
        assert!(!code_matches("MO010", Some("MO021"), "dma-double-buffering"));
        assert!(!code_matches(" ", Some("MO021"), "dma-double-buffering"));
        let c = Counts { inline: 2, config: 1, baseline: 5 };
        assert_eq!(c.describe(), "3 suppressed (2 inline, 1 config) · 5 baselined");
        assert_eq!(Counts::default().describe(), "");
    }
}
