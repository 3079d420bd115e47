//! What a lint run is told, before and after the configuration files: [`Settings`] is what a caller (the command
//! line, or a library user) says; `resolve.rs` completes it per linted path with the configuration file that applies
//! there (`config.rs` reads and checks one), giving one [`Profile`] per file.
//!
//! Nothing here knows the command line: `cli` maps its arguments onto [`Settings`].

pub(crate) mod assume;
pub(crate) mod config;
mod error;
mod resolve;

pub(crate) use error::rule_hint;
pub use error::SettingsError;
pub(crate) use resolve::{absolute, Profile, Resolver};
use std::path::PathBuf;

/// Which rules run and how their findings count: packs, selectors and severity overrides, as `--rules`,
/// `--select`, `--extend-select`, `--ignore` and `--severity` write them (each entry may be a comma list).
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// Rule packs: built-in names (`core`, `v1-auto`, `v2-dma`, `v3-smem`) or paths to YAML packs; `none` runs no
    /// rule. Empty: the configuration file's `rules`, else a compiled version's own pack, else `core`.
    pub rules: Vec<String>,
    /// Only these rules (ids, codes or code prefixes).
    pub select: Vec<String>,
    /// These rules too, from any built-in pack.
    pub extend_select: Vec<String>,
    /// Not these rules.
    pub ignore: Vec<String>,
    /// `RULE=error|warning|info|off`, later entries winning.
    pub severity: Vec<String>,
}

/// How to lint: what a caller says before any configuration file is read. `Settings::default()` lints with the
/// configuration file closest to each path (else the `core` pack), reads the final compiler stages only, and keeps
/// no summaries.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    pub selection: Selection,
    /// Configuration files or `KEY = VALUE` settings in TOML (`--config`); the last file named applies to every
    /// path; without one, the closest file to each path.
    pub config: Vec<String>,
    /// Ignore configuration files.
    pub isolated: bool,
    /// Hide the findings whose fingerprint is in this baseline (default: the configuration's `baseline`).
    pub baseline: Option<PathBuf>,
    /// Write the findings left after inline and configuration suppressions to this baseline, then hide them.
    pub write_baseline: Option<PathBuf>,
    /// Findings do not fail the run ([`crate::RunOutcome::exit_code`]; errors in the input still do).
    pub exit_zero: bool,
    /// The generation every compilation was built for (else each one's configuration, else detected).
    pub target: Option<String>,
    /// In folders, read intermediate compiler stages too.
    pub all_stages: bool,
    /// Take named files as a folder walk takes them: `exclude` globs apply, non-dumps and intermediate stages are
    /// skipped rather than errors.
    pub force_exclude: bool,
    /// Keep what analyses explored (findings with the `explored` verdict).
    pub verbose: bool,
    /// Compute the performance model's facts per compilation.
    pub perf: bool,
    /// Summarise every parsed file.
    pub summaries: bool,
}
