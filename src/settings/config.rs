//! Configuration files, as ruff does it: `[tool.hlolint]` in `pyproject.toml`, or `hlolint.toml` /
//! `.hlolint.toml`. Which one applies is found per linted path, from its folder upward: the closest wins (a
//! `pyproject.toml` without `[tool.hlolint]` is skipped), so two paths of one run may get two configs; a path with
//! none above it gets the one above the current directory. `--config FILE` names one for the whole run;
//! `--isolated` ignores them. The command line beats the file.
//!
//! This module reads and checks one file (every value that can be wrong is checked here, so the error points into
//! the TOML); `settings.rs` turns it into what a run uses (paths made relative to the file, globs compiled).

use miette::{Diagnostic, NamedSource, SourceSpan};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use toml::Spanned;

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Config {
    /// Packs, as `--rules`: built-in names, or YAML paths relative to this file.
    #[serde(default)]
    pub rules: Vec<Spanned<String>>,
    #[serde(default)]
    pub select: Vec<Spanned<String>>,
    /// Rules added to `select` (or to the packs' rules), from any built-in pack.
    #[serde(default)]
    pub extend_select: Vec<Spanned<String>>,
    #[serde(default)]
    pub ignore: Vec<Spanned<String>>,
    /// `{RULE = "error"}`.
    #[serde(default)]
    pub severity: BTreeMap<Spanned<String>, Spanned<String>>,
    pub target: Option<Spanned<String>>,
    /// Globs of paths not to read when walking folders; replaces the defaults.
    pub exclude: Option<Vec<Spanned<String>>>,
    /// Globs of paths not to read when walking folders, in addition to `exclude`.
    #[serde(default)]
    pub extend_exclude: Vec<Spanned<String>>,
    /// `{"GLOB" = ["CODE", ...]}`: findings in dump files matching GLOB are suppressed for these rules.
    #[serde(default)]
    pub per_path_ignores: BTreeMap<Spanned<String>, Vec<Spanned<String>>>,
    /// `{"GLOB" = ["CODE", ...]}`: findings in kernels whose name matches GLOB are suppressed for these rules.
    #[serde(default)]
    pub per_kernel_ignores: BTreeMap<Spanned<String>, Vec<Spanned<String>>>,
    /// `{"GLOB" = ["ASSUMPTION", ...]}`: what the callers of kernels whose name matches GLOB guarantee of their
    /// inputs (`kv_lens[*] >= 1`); `dma-balance` reports a failure only other inputs reach as a warning.
    #[serde(default)]
    pub per_kernel_assume: BTreeMap<Spanned<String>, Vec<Spanned<String>>>,
    /// A baseline file (relative to this file), as `--baseline`.
    pub baseline: Option<Spanned<String>>,
}

/// A configuration file as read: its path and text (errors found later point into it) and its values.
#[derive(Debug)]
pub struct Loaded {
    pub path: PathBuf,
    pub text: String,
    pub config: Config,
}

impl Loaded {
    /// The folder paths in the file are relative to.
    pub fn dir(&self) -> PathBuf {
        self.path.parent().map(Path::to_path_buf).unwrap_or_default()
    }

    /// An error about the value at `span`.
    pub fn error(&self, span: std::ops::Range<usize>, message: impl Into<String>) -> ConfigError {
        ConfigError {
            message: message.into(),
            src: NamedSource::new(self.path.display().to_string(), self.text.clone()),
            span: Some(SourceSpan::from((span.start, span.end.saturating_sub(span.start)))),
            help: None,
        }
    }
}

/// The keys a configuration holds.
pub const KEYS: [&str; 12] = [
    "rules",
    "select",
    "extend-select",
    "ignore",
    "severity",
    "target",
    "exclude",
    "extend-exclude",
    "per-path-ignores",
    "per-kernel-ignores",
    "per-kernel-assume",
    "baseline",
];

/// What the keys are, for errors about the file's shape.
fn keys_help() -> String {
    format!("keys: {} (docs/configuration.md)", KEYS.join(", "))
}

#[derive(Debug, thiserror::Error, Diagnostic)]
#[error("invalid configuration: {message}")]
#[diagnostic(code(hlolint::config))]
pub struct ConfigError {
    pub message: String,
    #[source_code]
    pub src: NamedSource<String>,
    #[label("here")]
    pub span: Option<SourceSpan>,
    #[help]
    pub help: Option<String>,
}

/// The config file that applies in `dir`: the closest `.hlolint.toml`, `hlolint.toml` or `pyproject.toml` with a
/// `[tool.hlolint]` table, from `dir` upward.
pub fn discover(dir: &Path) -> Option<PathBuf> {
    for d in dir.ancestors() {
        for name in [".hlolint.toml", "hlolint.toml"] {
            let p = d.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
        let p = d.join("pyproject.toml");
        if p.is_file() && std::fs::read_to_string(&p).is_ok_and(|t| t.contains("tool.hlolint")) {
            return Some(p);
        }
    }
    None
}

/// Reads and checks a config file: TOML syntax, known keys and types, severity levels, globs.
pub fn load(path: &Path) -> Result<Loaded, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
        message: format!("cannot read {}: {e}", path.display()),
        src: NamedSource::new(path.display().to_string(), String::new()),
        span: None,
        help: None,
    })?;
    let err = |e: toml::de::Error| toml_error(&path.display().to_string(), &text, e);
    let config = if path.file_name().is_some_and(|n| n == "pyproject.toml") {
        #[derive(Deserialize)]
        struct Py {
            tool: Option<Tool>,
        }
        #[derive(Deserialize)]
        struct Tool {
            hlolint: Option<Config>,
        }
        let py: Py = toml::from_str(&text).map_err(err)?;
        py.tool.and_then(|t| t.hlolint).unwrap_or_default()
    } else {
        toml::from_str(&text).map_err(err)?
    };
    let loaded = Loaded { path: path.to_path_buf(), text: text.clone(), config };
    check(&loaded)?;
    Ok(loaded)
}

/// A TOML or shape error in `text`: where, and for an unknown key the known key it is closest to.
fn toml_error(name: &str, text: &str, e: toml::de::Error) -> ConfigError {
    // serde names the unknown field in its message; the span covers the key as written, which is what is matched
    let key = e.span().and_then(|r| text.get(r)).map(|k| k.trim().trim_matches(['"', '\'']));
    let mean = match key {
        Some(k) if e.message().starts_with("unknown field") => crate::suggest::hint(k, KEYS),
        _ => None,
    };
    ConfigError {
        message: e.message().to_string(),
        span: e.span().map(|r| SourceSpan::from((r.start, r.end.saturating_sub(r.start)))),
        src: NamedSource::new(name, text.to_string()),
        help: Some(match mean {
            Some(m) => format!("{m} {}", keys_help()),
            None => keys_help(),
        }),
    }
}

/// `--config KEY=VALUE` (as ruff's): an argument holding `=` that names no file.
pub fn is_override(arg: &str) -> bool {
    arg.contains('=') && !Path::new(arg).is_file()
}

/// A `--config KEY = VALUE` setting, read and checked as a one-line configuration file named `--config` (errors
/// point into the argument), with the keys it sets.
pub fn parse_override(arg: &str) -> Result<(Loaded, Vec<String>), ConfigError> {
    let name = "--config";
    let config: Config = toml::from_str(arg).map_err(|e| toml_error(name, arg, e))?;
    let keys = toml::from_str::<toml::Table>(arg).map(|t| t.keys().cloned().collect()).unwrap_or_default();
    let loaded = Loaded { path: PathBuf::from(name), text: arg.to_string(), config };
    check(&loaded)?;
    Ok((loaded, keys))
}

/// What serde cannot say: severity levels, globs, rule lists that are empty strings.
fn check(l: &Loaded) -> Result<(), ConfigError> {
    let c = &l.config;
    for v in c.severity.values() {
        if crate::rules::Severity::parse(v.get_ref()).is_none() {
            return Err(
                l.error(v.span(), format!("unknown severity `{}` (levels: error, warning, info, off)", v.get_ref()))
            );
        }
    }
    if let Some(t) = &c.target {
        if crate::lint::Target::lookup(t.get_ref()).is_none() {
            let names: Vec<&str> = crate::lint::target::GENERATIONS.iter().map(|g| g.name).collect();
            return Err(l.error(t.span(), format!("unknown target `{}` (targets: {})", t.get_ref(), names.join(", "))));
        }
    }
    let globs = c.exclude.iter().flatten().chain(&c.extend_exclude);
    let keys = c.per_path_ignores.keys().chain(c.per_kernel_ignores.keys()).chain(c.per_kernel_assume.keys());
    for g in globs.chain(keys) {
        if let Err(e) = globset::GlobBuilder::new(g.get_ref()).literal_separator(true).build() {
            return Err(l.error(g.span(), format!("bad glob `{}`: {}", g.get_ref(), e.kind())));
        }
    }
    for codes in c.per_path_ignores.values().chain(c.per_kernel_ignores.values()) {
        for code in codes {
            if code.get_ref().trim().is_empty() {
                return Err(l.error(code.span(), "an empty rule code"));
            }
        }
    }
    for r in &c.rules {
        if r.get_ref().trim().is_empty() {
            return Err(l.error(r.span(), "an empty rule pack name"));
        }
    }
    super::assume::check(l, &c.per_kernel_assume)
}

/// Every rule code the file names (`select`, `extend-select`, `ignore`, `severity`, `per-*-ignores`) matches some
/// rule of `known` (the built-in packs and the file's own): an error points at the code, with the closest code or
/// id when there is one. (`load_rules` checks the command line's the same way, without a file to point into.)
pub fn check_codes(l: &Loaded, known: &[crate::rules::Rule]) -> Result<(), ConfigError> {
    let c = &l.config;
    let lists = c.select.iter().chain(&c.extend_select).chain(&c.ignore).chain(c.severity.keys());
    let ignores = c.per_path_ignores.values().chain(c.per_kernel_ignores.values()).flatten();
    for spec in lists.chain(ignores) {
        for code in spec.get_ref().split(',').map(str::trim).filter(|s| !s.is_empty()) {
            if code.eq_ignore_ascii_case("ALL")
                || known.iter().any(|r| crate::suppress::code_matches(code, r.code.as_deref(), &r.id))
            {
                continue;
            }
            let names = known.iter().flat_map(|r| r.code.as_deref().into_iter().chain([r.id.as_str()]));
            let mut e = l.error(spec.span(), format!("no rule matches `{code}` in the built-in packs nor the file's"));
            e.help = Some(match crate::suggest::hint(code, names) {
                Some(h) => format!("{h} `hlolint rules` lists the rules"),
                None => "`hlolint rules` lists the rules".to_string(),
            });
            return Err(e);
        }
    }
    Ok(())
}
