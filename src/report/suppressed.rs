//! What suppressions hid (counted by `suppress`, shown by every report format): the report's own vocabulary, so
//! that `report` does not depend on `suppress`.

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
