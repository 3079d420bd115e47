//! The settings a path is linted with: the caller's [`Settings`] completed by the configuration file that applies
//! to the path (`config.rs`), with the file's relative paths resolved against its folder and its globs compiled.
//!
//! [`Resolver`] finds the file per linted path (from the path's folder upward, cached per folder; a path with no
//! file above it gets the one above the current directory, as in ruff) and builds one [`Profile`] per distinct
//! file; `--config FILE` gives every path that one, `--isolated` none.

use super::config::{self, Loaded};
use super::{Selection, Settings};
use crate::rules::engine::Finding;
use crate::suppress;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::path::{Component, Path, PathBuf};

/// Folders not walked unless `exclude` says otherwise (as ruff's defaults: version control, virtual
/// environments, caches). A file or folder named on the command line is read even when excluded.
pub const DEFAULT_EXCLUDE: &[&str] = &[
    ".git",
    ".hg",
    ".svn",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    "node_modules",
    "site-packages",
    "__pycache__",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".ipynb_checkpoints",
];

/// A glob over paths: without `/` it matches a file or folder name at any depth (`*@v6e`, `.venv`); with `/` the
/// path relative to the configuration file's folder (`out/legacy/**`; `*` stays within one folder, `**` crosses).
#[derive(Debug, Clone)]
pub struct PathGlob {
    pub pattern: String,
    matcher: globset::GlobMatcher,
    by_name: bool,
}

impl PathGlob {
    pub fn new(pattern: &str) -> Result<PathGlob, globset::Error> {
        let p = pattern.trim_start_matches("./");
        let matcher = globset::GlobBuilder::new(p).literal_separator(true).build()?.compile_matcher();
        Ok(PathGlob { pattern: pattern.to_string(), matcher, by_name: !p.contains('/') })
    }

    /// The glob over one name (a kernel's).
    pub fn matcher(&self) -> &globset::GlobMatcher {
        &self.matcher
    }

    /// Whether the glob matches `rel` (a path relative to the root) or, for a name glob, its last component.
    fn matches_one(&self, rel: &Path) -> bool {
        if self.by_name {
            rel.file_name().is_some_and(|n| self.matcher.is_match(n))
        } else {
            self.matcher.is_match(rel)
        }
    }

    /// Whether the glob matches `rel` or one of its folders.
    pub fn matches(&self, rel: &Path) -> bool {
        rel.ancestors().filter(|a| !a.as_os_str().is_empty()).any(|a| self.matches_one(a))
    }
}

/// `GLOB = [CODES]` from `per-path-ignores` or `per-kernel-ignores`.
#[derive(Debug, Clone)]
pub struct Ignore {
    pub glob: PathGlob,
    pub codes: Vec<String>,
}

/// What one configuration file (or none) makes of the caller's settings.
#[derive(Debug)]
pub struct Profile {
    /// The configuration file, absolute; `None`: defaults (no file found, or `--isolated`).
    pub file: Option<PathBuf>,
    /// Where relative paths and path globs start: the file's folder, else the current directory.
    pub root: PathBuf,
    /// The rule selection: the caller's completed by the file (packs as paths resolved against `root`).
    pub selection: Selection,
    /// Whether packs were chosen (command line or file): a kernel module's own pack is then not used.
    pub explicit: bool,
    pub target: Option<String>,
    pub exclude: Vec<PathGlob>,
    pub per_path_ignores: Vec<Ignore>,
    pub per_kernel_ignores: Vec<Ignore>,
    /// `per-kernel-assume`: the file's, then the `--config` settings'.
    pub per_kernel_assume: Vec<super::assume::Assume>,
    /// The baseline (`--baseline`, else the file's `baseline`), absolute.
    pub baseline: Option<PathBuf>,
}

/// `a/./b/../c` → `a/c`, without touching the file system (a path named by a config need not exist yet).
pub fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// `p` as an absolute path, from `cwd` when relative.
pub fn absolute(cwd: &Path, p: &Path) -> PathBuf {
    normalize(&cwd.join(p))
}

fn is_builtin_pack(name: &str) -> bool {
    name == "none" || crate::rules::load::BUILTIN.iter().any(|(n, _)| *n == name)
}

/// The file's `rules`: built-in pack names as they are, paths made absolute against `root` (and required to exist).
fn file_packs(cfg: &config::Config, loaded: Option<&Loaded>, root: &Path) -> Result<Vec<String>, config::ConfigError> {
    let mut cfg_rules = Vec::new();
    for spec in &cfg.rules {
        for name in spec.get_ref().split(',').map(str::trim).filter(|s| !s.is_empty()) {
            if is_builtin_pack(name) {
                cfg_rules.push(name.to_string());
                continue;
            }
            let path = absolute(root, Path::new(name));
            if !path.is_file() {
                let l = loaded.expect("packs come from a file");
                let names: Vec<&str> = crate::rules::load::BUILTIN.iter().map(|(n, _)| *n).collect();
                let mut e = l.error(
                    spec.span(),
                    format!(
                        "rule pack `{name}` is neither built in ({}) nor a file ({} does not exist)",
                        names.join(", "),
                        path.display()
                    ),
                );
                e.help = crate::suggest::hint(name, names.iter().copied());
                return Err(e);
            }
            cfg_rules.push(path.display().to_string());
        }
    }
    Ok(cfg_rules)
}

/// The caller's rule selection completed by the file's.
fn merge_selection(cli: &Selection, cfg: &config::Config, cfg_rules: Vec<String>) -> Selection {
    let mut lint = cli.clone();
    // Packs: the command line's, else the file's (paths relative to the file), else `core`.
    if lint.rules.is_empty() {
        lint.rules = cfg_rules;
    }
    if lint.rules.is_empty() {
        lint.rules = vec!["core".into()];
    }
    let values = |v: &[toml::Spanned<String>]| -> Vec<String> { v.iter().map(|x| x.get_ref().clone()).collect() };
    if lint.select.is_empty() {
        lint.select = values(&cfg.select);
    }
    lint.extend_select = values(&cfg.extend_select).into_iter().chain(cli.extend_select.iter().cloned()).collect();
    lint.ignore = values(&cfg.ignore).into_iter().chain(cli.ignore.iter().cloned()).collect();
    // Severities: the file's first, the command line's after them (later wins).
    lint.severity = cfg
        .severity
        .iter()
        .map(|(k, v)| format!("{}={}", k.get_ref(), v.get_ref()))
        .chain(cli.severity.iter().cloned())
        .collect();
    lint
}

/// A path glob written in the configuration file.
fn file_glob(g: &toml::Spanned<String>, loaded: Option<&Loaded>) -> Result<PathGlob, config::ConfigError> {
    PathGlob::new(g.get_ref()).map_err(|e| match loaded {
        Some(l) => l.error(g.span(), format!("bad glob `{}`: {}", g.get_ref(), e.kind())),
        None => unreachable!("globs come from a file"),
    })
}

/// `exclude` (else the defaults) followed by `extend-exclude`.
fn exclude_globs(cfg: &config::Config, loaded: Option<&Loaded>) -> Result<Vec<PathGlob>, config::ConfigError> {
    let mut exclude = match &cfg.exclude {
        Some(list) => list.iter().map(|g| file_glob(g, loaded)).collect::<Result<Vec<_>, _>>()?,
        None => DEFAULT_EXCLUDE.iter().map(|p| PathGlob::new(p).expect("default exclude globs")).collect(),
    };
    for g in &cfg.extend_exclude {
        exclude.push(file_glob(g, loaded)?);
    }
    Ok(exclude)
}

/// `per-path-ignores` or `per-kernel-ignores`: each glob with its codes.
fn ignore_lists(
    m: &BTreeMap<toml::Spanned<String>, Vec<toml::Spanned<String>>>,
    loaded: Option<&Loaded>,
) -> Result<Vec<Ignore>, config::ConfigError> {
    m.iter()
        .map(|(g, codes)| {
            Ok(Ignore { glob: file_glob(g, loaded)?, codes: codes.iter().map(|c| c.get_ref().clone()).collect() })
        })
        .collect()
}

impl Profile {
    /// The settings from the caller's and an optional configuration file.
    pub fn resolve(cli: &Settings, loaded: Option<&Loaded>, cwd: &Path) -> Result<Profile, config::ConfigError> {
        let default = config::Config::default();
        let cfg = loaded.map(|l| &l.config).unwrap_or(&default);
        let root = loaded.map(|l| absolute(cwd, &l.dir())).unwrap_or_else(|| cwd.to_path_buf());
        let cfg_rules = file_packs(cfg, loaded, &root)?;
        if let Some(l) = loaded {
            // the rules the file's codes may name: the built-in packs' and its own packs' (a pack that does not load
            // is reported when the run loads it)
            let mut known = crate::rules::load::load_all_builtin().map(|s| s.rules).unwrap_or_default();
            known.extend(crate::rules::load(&cfg_rules).map(|s| s.rules).unwrap_or_default());
            config::check_codes(l, &known)?;
        }
        let explicit = !cli.selection.rules.is_empty() || !cfg_rules.is_empty();
        let selection = merge_selection(&cli.selection, cfg, cfg_rules);
        let target = cfg.target.as_ref().map(|t| t.get_ref().clone());
        let exclude = exclude_globs(cfg, loaded)?;
        let per_path_ignores = ignore_lists(&cfg.per_path_ignores, loaded)?;
        let per_kernel_ignores = ignore_lists(&cfg.per_kernel_ignores, loaded)?;
        let per_kernel_assume = super::assume::list(loaded, &cfg.per_kernel_assume)?;
        let baseline = match (&cli.baseline, &cfg.baseline) {
            (Some(b), _) => Some(absolute(cwd, b)),
            (None, Some(b)) => Some(absolute(&root, Path::new(b.get_ref()))),
            (None, None) => None,
        };
        Ok(Profile {
            file: loaded.map(|l| absolute(cwd, &l.path)),
            root,
            selection,
            explicit,
            target,
            exclude,
            per_path_ignores,
            per_kernel_ignores,
            per_kernel_assume,
            baseline,
        })
    }

    /// `path` relative to the root (as given when outside it).
    fn relative(&self, cwd: &Path, path: &Path) -> PathBuf {
        let abs = absolute(cwd, path);
        abs.strip_prefix(&self.root).map(Path::to_path_buf).unwrap_or(abs)
    }

    /// Whether a file found by walking `walked` (a folder named on the command line) is excluded: an `exclude` or
    /// `extend-exclude` glob matches it or a folder between it and `walked`.
    pub fn excluded(&self, cwd: &Path, file: &Path, walked: &Path) -> bool {
        let (file, walked) = (absolute(cwd, file), absolute(cwd, walked));
        file.ancestors().take_while(|a| *a != walked && a.starts_with(&walked)).any(|a| {
            let rel = a.strip_prefix(&self.root).unwrap_or(a);
            self.exclude.iter().any(|g| g.matches_one(rel))
        })
    }

    /// Whether `per-path-ignores` or `per-kernel-ignores` silence this finding.
    pub fn ignores(&self, cwd: &Path, f: &Finding) -> bool {
        let covered = |i: &Ignore| i.codes.iter().any(|c| suppress::finding_matches(c, f));
        let rel = self.relative(cwd, Path::new(&f.path));
        self.per_path_ignores.iter().any(|i| covered(i) && i.glob.matches(&rel))
            || f.kernel
                .as_deref()
                .is_some_and(|k| self.per_kernel_ignores.iter().any(|i| covered(i) && i.glob.matcher.is_match(k)))
    }

    /// The settings as `--show-settings` prints them (`--target` beats the file's).
    pub fn show(&self, path: &Path, cli_target: Option<&str>) -> Shown {
        let globs = |v: &[PathGlob]| v.iter().map(|g| g.pattern.clone()).collect();
        let ignores = |v: &[Ignore]| v.iter().map(|i| (i.glob.pattern.clone(), i.codes.clone())).collect();
        Shown {
            path: path.display().to_string(),
            config_file: self.file.as_ref().map(|p| p.display().to_string()),
            root: self.root.display().to_string(),
            rules: self.selection.rules.clone(),
            rules_chosen: self.explicit,
            select: self.selection.select.clone(),
            extend_select: self.selection.extend_select.clone(),
            ignore: self.selection.ignore.clone(),
            severity: self.selection.severity.clone(),
            target: cli_target.map(str::to_string).or_else(|| self.target.clone()),
            exclude: globs(&self.exclude),
            per_path_ignores: ignores(&self.per_path_ignores),
            per_kernel_ignores: ignores(&self.per_kernel_ignores),
            per_kernel_assume: self
                .per_kernel_assume
                .iter()
                .map(|a| (a.glob.pattern.clone(), a.assumptions.iter().map(|x| x.0.clone()).collect::<Vec<_>>()))
                .fold(BTreeMap::new(), |mut m, (g, v)| {
                    m.entry(g).or_insert_with(Vec::new).extend(v);
                    m
                }),
            baseline: self.baseline.as_ref().map(|p| p.display().to_string()),
        }
    }
}

/// The resolved settings for one path (`--show-settings`).
#[derive(Debug, Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct Shown {
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config_file: Option<String>,
    pub root: String,
    pub rules: Vec<String>,
    /// `false`: packs were not chosen, so a version compiled by `hlolint compile` uses its kernel module's pack.
    pub rules_chosen: bool,
    pub select: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub extend_select: Vec<String>,
    pub ignore: Vec<String>,
    pub severity: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    pub exclude: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub per_path_ignores: BTreeMap<String, Vec<String>>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub per_kernel_ignores: BTreeMap<String, Vec<String>>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub per_kernel_assume: BTreeMap<String, Vec<String>>,
}

/// The settings of each linted path, one [`Profile`] per configuration file.
pub struct Resolver<'c> {
    /// The caller's settings as given.
    given: &'c Settings,
    /// The caller's settings with the `--config KEY=VALUE` settings that have a field there applied to them;
    /// `None` until the settings are read (on the first path).
    cli: Option<Settings>,
    /// The `--config KEY=VALUE` settings that have no command-line option (excludes, per-path and per-kernel
    /// ignores, target): laid over every file's.
    overlay: Vec<(config::Loaded, Vec<String>)>,
    pub cwd: PathBuf,
    /// Folder → the config file that applies there.
    found: HashMap<PathBuf, Option<PathBuf>>,
    /// Config file → index into `all`.
    index: HashMap<Option<PathBuf>, usize>,
    pub all: Vec<Profile>,
}

impl<'c> Resolver<'c> {
    pub fn new(cli: &'c Settings) -> Resolver<'c> {
        let cwd = std::env::current_dir().unwrap_or_default();
        Resolver {
            given: cli,
            cli: None,
            overlay: Vec::new(),
            cwd,
            found: HashMap::new(),
            index: HashMap::new(),
            all: Vec::new(),
        }
    }

    /// The settings for a file or folder being linted (`-`: the current directory): an index into `all`.
    pub fn for_path(&mut self, path: &Path) -> Result<usize, miette::Report> {
        if self.cli.is_none() {
            self.read_overrides().map_err(miette::Report::new)?;
        }
        let config_file = self.given.config.iter().rev().find(|c| !config::is_override(c));
        let file = if self.given.isolated {
            None
        } else if let Some(c) = config_file {
            Some(absolute(&self.cwd, Path::new(c)))
        } else {
            let abs = absolute(&self.cwd, path);
            let dir = if path.as_os_str() == "-" {
                self.cwd.clone()
            } else if abs.is_dir() {
                abs
            } else {
                abs.parent().map(Path::to_path_buf).unwrap_or_else(|| self.cwd.clone())
            };
            // No file above the path: the one above the current directory, as ruff falls back to it.
            self.discover(dir).or_else(|| self.discover(self.cwd.clone()))
        };
        if let Some(&i) = self.index.get(&file) {
            return Ok(i);
        }
        let mut loaded = match &file {
            Some(p) => Some(config::load(p).map_err(miette::Report::new)?),
            None => None,
        };
        let mut target = None;
        for (o, keys) in &self.overlay {
            let l = loaded.get_or_insert_with(|| config::Loaded {
                path: self.cwd.join("--config"),
                text: String::new(),
                config: config::Config::default(),
            });
            overlay(&mut l.config, &o.config, keys);
            target = o.config.target.as_ref().map(|t| t.get_ref().clone()).or(target);
        }
        let cli = self.cli.as_ref().unwrap_or(self.given);
        let mut s = Profile::resolve(cli, loaded.as_ref(), &self.cwd).map_err(miette::Report::new)?;
        // `--config` assumptions point into their own argument, not into the file they are laid over
        for (o, _) in self.overlay.iter().filter(|(_, keys)| keys.iter().any(|k| k == "per-kernel-assume")) {
            s.per_kernel_assume
                .extend(super::assume::list(Some(o), &o.config.per_kernel_assume).map_err(miette::Report::new)?);
        }
        if target.is_some() {
            s.target = target;
        }
        self.all.push(s);
        self.index.insert(file, self.all.len() - 1);
        Ok(self.all.len() - 1)
    }

    /// Reads the `--config KEY=VALUE` settings: those the command line has an option for become that option (the
    /// command line beats the file), the others are laid over each file.
    fn read_overrides(&mut self) -> Result<(), config::ConfigError> {
        let mut cli = self.given.clone();
        for arg in self.given.config.iter().filter(|c| config::is_override(c)) {
            let (o, keys) = config::parse_override(arg)?;
            let known = crate::rules::load::load_all_builtin().map(|s| s.rules).unwrap_or_default();
            config::check_codes(&o, &known)?;
            let c = &o.config;
            let values =
                |v: &[toml::Spanned<String>]| -> Vec<String> { v.iter().map(|x| x.get_ref().clone()).collect() };
            let mut rest = Vec::new();
            for k in &keys {
                match k.as_str() {
                    "rules" => cli.selection.rules = values(&c.rules),
                    "select" => cli.selection.select = values(&c.select),
                    "extend-select" => cli.selection.extend_select.extend(values(&c.extend_select)),
                    "ignore" => cli.selection.ignore.extend(values(&c.ignore)),
                    "severity" => cli
                        .selection
                        .severity
                        .extend(c.severity.iter().map(|(k, v)| format!("{}={}", k.get_ref(), v.get_ref()))),
                    "baseline" => cli.baseline = c.baseline.as_ref().map(|b| PathBuf::from(b.get_ref())),
                    _ => rest.push(k.clone()),
                }
            }
            if !rest.is_empty() {
                self.overlay.push((o, rest));
            }
        }
        self.cli = Some(cli);
        Ok(())
    }

    /// The config file that applies in `dir` (cached per folder).
    fn discover(&mut self, dir: PathBuf) -> Option<PathBuf> {
        if let Some(f) = self.found.get(&dir) {
            return f.clone();
        }
        let f = config::discover(&dir);
        self.found.insert(dir, f.clone());
        f
    }

    /// The settings that apply in the current directory (`rules`, `explain`, `test`, and a run without paths).
    pub fn here(&mut self) -> Result<&Profile, miette::Report> {
        let cwd = self.cwd.clone();
        let i = self.for_path(&cwd)?;
        Ok(&self.all[i])
    }
}

/// `keys` of `over` replace the same keys of `base` (a `--config KEY=VALUE` over a file's settings).
fn overlay(base: &mut config::Config, over: &config::Config, keys: &[String]) {
    for k in keys {
        match k.as_str() {
            "exclude" => base.exclude = over.exclude.clone(),
            "extend-exclude" => base.extend_exclude.extend(over.extend_exclude.iter().cloned()),
            "per-path-ignores" => base.per_path_ignores.extend(over.per_path_ignores.clone()),
            "per-kernel-ignores" => base.per_kernel_ignores.extend(over.per_kernel_ignores.clone()),
            // the target is set on the resolved settings: a file's `target` is not checked against its text again
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_globs() {
        let g = |p: &str| PathGlob::new(p).unwrap();
        assert!(g("*@v6e").matches(Path::new("out/v1@v6e/hlo/x.txt")));
        assert!(!g("*@v6e").matches(Path::new("out/v1@tpu7x/hlo/x.txt")));
        assert!(g(".venv").matches(Path::new("a/.venv/lib/x.txt")));
        assert!(g("out/legacy/**").matches(Path::new("out/legacy/v1/x.txt")));
        assert!(g("out/legacy").matches(Path::new("out/legacy/v1/x.txt")));
        assert!(!g("out/*.txt").matches(Path::new("out/legacy/x.txt")), "`*` stays within a folder");
        assert!(g("./out/*.txt").matches(Path::new("out/x.txt")));
        assert_eq!(normalize(Path::new("/a/./b/../c")), PathBuf::from("/a/c"));
    }
}
