//! Silencing findings the user accepts (docs/suppressions.md), checked in this order:
//!
//! 1. an inline comment in the Python source, on the line the finding points to (`# hlolint: ignore[MO021]`,
//!    `inline.rs`);
//! 2. `per-path-ignores` / `per-kernel-ignores` in the configuration (`settings`);
//! 3. a baseline file of stable fingerprints (`baseline.rs`, `--baseline`, `--write-baseline`).
//!
//! A suppressed finding is not reported and does not count for the exit status; the summary line and
//! `--statistics` say how many there were.

pub mod baseline;
pub mod inline;
pub mod unused;

use crate::rules::engine::Finding;

pub use crate::report::suppressed::Suppression;

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
        use crate::report::suppressed::Counts;
        let c = Counts { inline: 2, config: 1, baseline: 5 };
        assert_eq!(c.describe(), "3 suppressed (2 inline, 1 config) · 5 baselined");
        assert_eq!(Counts::default().describe(), "");
    }
}
