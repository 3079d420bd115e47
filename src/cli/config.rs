//! Configuration files, as ruff does it: `[tool.hlolint]` in `pyproject.toml`, or `hlolint.toml` /
//! `.hlolint.toml`; the closest one to the current directory wins (a `pyproject.toml` without `[tool.hlolint]`
//! is skipped); `--config PATH` names one; `--isolated` ignores them. The command line beats the file.

use super::LintArgs;
use miette::{Diagnostic, NamedSource, SourceSpan};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Config {
    /// Packs, as `--rules`.
    #[serde(default)]
    pub rules: Vec<String>,
    #[serde(default)]
    pub select: Vec<String>,
    #[serde(default)]
    pub ignore: Vec<String>,
    /// `{RULE = "error"}`.
    #[serde(default)]
    pub severity: BTreeMap<String, String>,
    pub target: Option<String>,
}

#[derive(Debug, thiserror::Error, Diagnostic)]
#[error("invalid configuration: {message}")]
#[diagnostic(code(hlolint::config), help("keys: rules, select, ignore, severity, target"))]
pub struct ConfigError {
    pub message: String,
    #[source_code]
    pub src: NamedSource<String>,
    #[label("here")]
    pub span: Option<SourceSpan>,
}

/// The config file that applies in `dir`: the closest `.hlolint.toml`, `hlolint.toml` or `pyproject.toml` with a
/// `[tool.hlolint]` table.
pub fn discover(dir: &Path) -> Option<PathBuf> {
    for d in dir.ancestors() {
        for name in [".hlolint.toml", "hlolint.toml"] {
            let p = d.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
        let p = d.join("pyproject.toml");
        if p.is_file() && std::fs::read_to_string(&p).is_ok_and(|t| t.contains("[tool.hlolint")) {
            return Some(p);
        }
    }
    None
}

pub fn load(path: &Path) -> Result<Config, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
        message: format!("cannot read {}: {e}", path.display()),
        src: NamedSource::new(path.display().to_string(), String::new()),
        span: None,
    })?;
    let err = |e: toml::de::Error| ConfigError {
        message: e.message().to_string(),
        span: e.span().map(|r| SourceSpan::from((r.start, r.end.saturating_sub(r.start)))),
        src: NamedSource::new(path.display().to_string(), text.clone()),
    };
    if path.file_name().is_some_and(|n| n == "pyproject.toml") {
        #[derive(Deserialize)]
        struct Py {
            tool: Option<Tool>,
        }
        #[derive(Deserialize)]
        struct Tool {
            hlolint: Option<Config>,
        }
        let py: Py = toml::from_str(&text).map_err(err)?;
        Ok(py.tool.and_then(|t| t.hlolint).unwrap_or_default())
    } else {
        toml::from_str(&text).map_err(err)
    }
}

/// The command line's lint options completed by the config: what the command line gives wins.
pub fn apply(cli: &LintArgs, cfg: &Config) -> LintArgs {
    let mut out = cli.clone();
    if out.rules.is_empty() {
        out.rules = cfg.rules.clone();
    }
    if out.select.is_empty() {
        out.select = cfg.select.clone();
    }
    out.ignore.extend(cfg.ignore.iter().cloned());
    let mut sev: Vec<String> = cfg.severity.iter().map(|(k, v)| format!("{k}={v}")).collect();
    sev.extend(cli.severity.iter().cloned()); // later wins
    out.severity = sev;
    if out.rules.is_empty() {
        out.rules = vec!["core".into()];
    }
    out
}
