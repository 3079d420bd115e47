//! `hlolint check`: expand inputs → read and sniff → group per dump directory → parse (in parallel) → the
//! compilation's units → rules → findings grouped per compilation; syntax errors per file.

use super::output::{emit, stderr};
use super::settings::{self, Resolver};
use super::{CheckArgs, GraphArgs, LintArgs, OutputFormat};
use crate::analysis::Verdict;
use crate::lint::compilation::{group_dir, parse_file, Parsed};
use crate::lint::Compilation;
use crate::report::{self, CompilationReport, Texts};
use crate::rules::engine::{self, Finding};
use crate::rules::{self, RuleSet, Severity};
use crate::source::{self, Format, SourceFile};
use crate::summary::{graph_dump, render_file, FileSummary};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;

#[derive(Serialize)]
struct JsonFile<'a> {
    path: &'a str,
    #[serde(flatten)]
    summary: &'a FileSummary,
}

#[derive(Serialize)]
struct JsonError {
    message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    offset: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    expected: Option<String>,
}

/// What one compilation (files of one dump directory) gave.
pub(crate) struct GroupOutcome {
    pub(crate) report: CompilationReport,
    files: Vec<(String, FileSummary)>,
    pub(crate) problems: Vec<miette::Report>,
    /// The texts of the files findings point into (the report quotes them).
    texts: Texts,
    /// The performance model's facts (`--summary --format json`).
    perf: Option<crate::perf::CompilationFacts>,
}

/// The rules of a run: a rule set and each rule's severity after overrides.
pub struct Rules {
    pub set: RuleSet,
    pub severities: BTreeMap<String, Severity>,
}

impl Rules {
    pub fn severity(&self, r: &rules::Rule) -> Severity {
        self.severities.get(&r.id).copied().unwrap_or(r.severity)
    }
}

/// Loads the packs and applies `--select`/`--ignore`/`--severity`. `strict`: a selector or override that matches
/// no rule is an error (for the packs the user named; packs named by a kernel module's manifest are lenient).
pub fn load_rules(lint: &LintArgs, strict: bool) -> Result<Rules, miette::Report> {
    let mut set = rules::load(&lint.rules).map_err(miette::Report::new)?;
    let list = |v: &[String]| -> Vec<String> {
        v.iter().flat_map(|s| s.split(',')).map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect()
    };
    let (select, ignore) = (list(&lint.select), list(&lint.ignore));
    let hits = |r: &rules::Rule, pats: &[String]| {
        pats.iter().any(|p| crate::suppress::code_matches(p, r.code.as_deref(), &r.id))
    };
    // a selector must name some rule: of the selected packs, or of a built-in pack (a config that ignores MO021
    // applies to the versions whose pack has it and is not an error where the chosen pack has not)
    let builtin = std::cell::OnceCell::new();
    let known = |p: &String, selected: &[rules::Rule]| {
        let one = std::slice::from_ref(p);
        selected.iter().any(|r| hits(r, one))
            || builtin
                .get_or_init(|| rules::load::load_all_builtin().map(|s| s.rules).unwrap_or_default())
                .iter()
                .any(|r| hits(r, one))
    };
    for p in select.iter().chain(&ignore) {
        if strict && p != "ALL" && !known(p, &set.rules) {
            return Err(miette::miette!(
                help = "`hlolint rules` lists the rules of the selected packs",
                "no rule matches `{p}` in the selected packs nor in any built-in pack"
            ));
        }
    }
    set.rules.retain(|r| (select.is_empty() || hits(r, &select)) && !hits(r, &ignore));
    let mut sev = BTreeMap::new();
    for r in &set.rules {
        sev.insert(r.id.clone(), r.severity);
    }
    for o in list(&lint.severity) {
        let Some((k, v)) = o.split_once('=') else {
            return Err(miette::miette!("--severity takes RULE=LEVEL, got `{o}`"));
        };
        let level = Severity::parse(v)
            .ok_or_else(|| miette::miette!(help = "levels: error, warning, info, off", "unknown severity `{v}`"))?;
        let ids: Vec<String> =
            set.rules.iter().filter(|r| hits(r, &[k.trim().to_string()])).map(|r| r.id.clone()).collect();
        if ids.is_empty() && strict && !known(&k.trim().to_string(), &set.rules) {
            return Err(miette::miette!(
                "--severity: no rule matches `{k}` in the selected packs nor in any built-in pack"
            ));
        }
        for id in ids {
            sev.insert(id, level);
        }
    }
    Ok(Rules { set, severities: sev })
}

/// The pack a kernel module names for the version in `dir` (the driver's manifest records `RULES`).
pub(crate) fn manifest_pack(dir: &str) -> Option<String> {
    crate::lint::target::manifest_result(std::path::Path::new(dir))?.get("rules")?.as_str().map(str::to_string)
}

pub fn check(args: &CheckArgs) -> i32 {
    let fail = |e: miette::Report| {
        stderr(report::excerpt::render(&e));
        2
    };
    let default_paths = [PathBuf::from(".")];
    let paths: &[PathBuf] = if args.paths.is_empty() { &default_paths } else { &args.paths };
    let mut resolver = Resolver::new(&args.lint);
    if args.lint.settings.show_settings {
        return show_settings(args, paths, &mut resolver);
    }
    if let Some(t) = &args.target {
        if crate::lint::Target::lookup(t).is_none() {
            let names: Vec<&str> = crate::lint::target::GENERATIONS.iter().map(|g| g.name).collect();
            return fail(miette::miette!(help = format!("targets: {}", names.join(", ")), "unknown target `{t}`"));
        }
    }
    // The settings of every named path, and their packs: a broken config or pack stops the run before any work.
    let mut base: Vec<Rules> = Vec::new();
    for p in paths {
        if let Err(e) = resolver.for_path(p) {
            return fail(e);
        }
    }
    if let Err(e) = load_profiles(&resolver, &mut base) {
        return fail(e);
    }
    let cwd = resolver.cwd.clone();
    let (candidates, input_errors) = source::expand_with(paths, args.all_stages, args.force_exclude);
    let mut reports: Vec<miette::Report> = input_errors.into_iter().map(miette::Report::new).collect();
    // The folders named on the command line, absolute, longest first: what `exclude` globs are matched below.
    let mut walked: Vec<(PathBuf, &PathBuf)> =
        paths.iter().filter(|p| p.is_dir()).map(|p| (settings::absolute(&cwd, p), p)).collect();
    walked.sort_by_key(|(a, _)| std::cmp::Reverse(a.as_os_str().len()));
    // Files are read per compilation, inside its task: memory holds the compilations being linted, not the run.
    // A compilation is linted with the settings of its first file.
    let mut groups: BTreeMap<String, (usize, Vec<&source::Candidate>)> = BTreeMap::new();
    for c in &candidates {
        let profile = match resolver.for_path(&c.path) {
            Ok(i) => i,
            Err(e) => return fail(e),
        };
        if !c.explicit {
            let abs = settings::absolute(&cwd, &c.path);
            if let Some((root, _)) = walked.iter().find(|(w, _)| abs.starts_with(w)) {
                if resolver.all[profile].excluded(&cwd, &abs, root) {
                    continue;
                }
            } else if args.force_exclude {
                // a file named on the command line (as ruff's --force-exclude): the globs apply from the config's
                // folder down
                let s = &resolver.all[profile];
                if s.excluded(&cwd, &abs, &s.root) {
                    continue;
                }
            }
        }
        groups.entry(group_dir(&c.path.display().to_string())).or_insert((profile, Vec::new())).1.push(c);
    }
    if let Err(e) = load_profiles(&resolver, &mut base) {
        return fail(e);
    }
    let groups: Vec<(String, (usize, Vec<&source::Candidate>))> = groups.into_iter().collect();
    // Without packs on the command line or in a config, a version compiled by `hlolint compile` is linted with the
    // pack its kernel module names for it (RULES in the module, recorded in the manifest).
    let mut by_pack: BTreeMap<(usize, String), Rules> = BTreeMap::new();
    for (dir, (profile, _)) in &groups {
        let s = &resolver.all[*profile];
        if s.explicit {
            continue;
        }
        if let Some(p) = manifest_pack(dir) {
            if let std::collections::btree_map::Entry::Vacant(slot) = by_pack.entry((*profile, p.clone())) {
                let mut l = s.lint.clone();
                l.rules = vec![p];
                match load_rules(&l, false) {
                    Ok(r) => {
                        slot.insert(r);
                    }
                    Err(e) => reports.push(e),
                }
            }
        }
    }
    let rules_for = |profile: usize, dir: &str| -> (&Rules, bool) {
        let own = if resolver.all[profile].explicit {
            None
        } else {
            manifest_pack(dir).and_then(|p| by_pack.get(&(profile, p)))
        };
        match own {
            Some(r) => (r, true),
            None => (&base[profile], false),
        }
    };
    // Compilations one after another, each parsed and linted in parallel: nested parallel loops would let
    // work-stealing start every compilation at once and hold all of them in memory.
    let outcomes: Vec<(usize, GroupOutcome)> = groups
        .iter()
        .map(|(dir, (profile, files))| {
            let (r, own) = rules_for(*profile, dir);
            let target = args.target.as_deref().or(resolver.all[*profile].target.as_deref());
            let perf = args.summary && args.format == OutputFormat::Json;
            let sev = |x: &rules::Rule| r.severity(x);
            let mut o = lint_group(dir, files, &r.set, &sev, target, args.verbose, perf);
            if own {
                o.report.packs = manifest_pack(dir).map(|p| format!("{p} (the kernel module's RULES)"));
            }
            (*profile, o)
        })
        .collect();

    let mut texts: Texts = Texts::new();
    let mut comp_reports = Vec::new();
    let mut profiles = Vec::new();
    let mut files = Vec::new();
    let mut perf = Vec::new();
    for (profile, o) in outcomes {
        reports.extend(o.problems);
        files.extend(o.files);
        // Compilations with no parsed file (every file failed) are not worth a line.
        if o.report.files > 0 {
            comp_reports.push(o.report);
            profiles.push(profile);
            perf.push(o.perf);
        }
        texts.extend(o.texts);
    }
    if let Err(e) = suppress_findings(args, &resolver, &mut comp_reports, &profiles) {
        return fail(e);
    }
    let findings: Vec<&Finding> = comp_reports.iter().flat_map(|r| &r.findings).collect();
    let mut suppressed = crate::suppress::Counts::default();
    comp_reports.iter().for_each(|r| suppressed.merge(&r.suppressed));
    let stats = if args.lint.statistics { Some(report::statistics(&findings)) } else { None };
    let stats_table = |st: &[report::RuleCount]| report::statistics_table(st) + &report::suppressed_rows(&suppressed);
    let mut out = String::new();
    match args.format {
        OutputFormat::Human => {
            if args.summary {
                for (path, s) in &files {
                    out.push_str(&render_file(path, s));
                }
                out.push_str(&crate::summary::link::render(&crate::summary::link::link(&files)));
            }
            if base.iter().any(|r| !r.set.rules.is_empty()) && (!args.quiet || !findings.is_empty()) {
                let opts = report::HumanOptions { statistics: args.lint.statistics, quiet: args.quiet };
                out.push_str(&report::human(&comp_reports, &texts, opts));
            }
        }
        OutputFormat::Json => {
            let json_files: Vec<JsonFile> = files.iter().map(|(path, summary)| JsonFile { path, summary }).collect();
            let errors: Vec<JsonError> = reports.iter().map(json_error).collect();
            let linked = crate::summary::link::link(&files);
            let findings_json: Vec<serde_json::Value> =
                findings.iter().map(|f| report::machine::finding_json(f, &texts)).collect();
            let mut rule_ids: Vec<&String> = Vec::new();
            for r in base.iter().flat_map(|b| &b.set.rules) {
                if !rule_ids.contains(&&r.id) {
                    rule_ids.push(&r.id);
                }
            }
            let mut doc = serde_json::json!({
                "findings": findings_json,
                "compilations": comp_reports.iter().zip(&perf).map(|(r, p)| {
                    let mut c = serde_json::json!({"dir": r.dir, "target": r.target, "files": r.files, "rules": r.packs, "findings": r.findings.len(), "suppressed": r.suppressed});
                    if let Some(p) = p {
                        c["perf"] = serde_json::to_value(p).unwrap_or_default();
                    }
                    c
                }).collect::<Vec<_>>(),
                "rules": rule_ids,
                "files": json_files,
                "linked": linked,
                "errors": errors,
                "suppressed": suppressed,
            });
            if let Some(st) = &stats {
                doc["statistics"] = serde_json::to_value(st).unwrap_or_default();
            }
            out = serde_json::to_string_pretty(&doc).unwrap_or_default();
            out.push('\n');
        }
        OutputFormat::Sarif => {
            // Every rule that can fire: the run's packs and each version's own pack.
            let catalog = report::sarif::catalog(
                base.iter().flat_map(|b| b.set.rules.iter()).chain(by_pack.values().flat_map(|r| r.set.rules.iter())),
            );
            let log = report::sarif::log(&comp_reports, &texts, &catalog, stats.clone());
            out = serde_json::to_string_pretty(&log).unwrap_or_default();
            out.push('\n');
        }
        OutputFormat::Concise => {
            out = report::machine::concise(&comp_reports, &texts);
            if let Some(st) = &stats {
                out.push_str(&stats_table(st));
            }
        }
        OutputFormat::Gitlab | OutputFormat::Junit => {
            out = if args.format == OutputFormat::Gitlab {
                report::machine::gitlab(&comp_reports, &texts)
            } else {
                report::machine::junit(&comp_reports, &texts)
            };
            if let Some(st) = &stats {
                stderr(stats_table(st).trim_end());
            }
        }
        OutputFormat::Github => {
            out = report::machine::github(&comp_reports, &texts);
            if let Some(st) = &stats {
                out.push_str(&stats_table(st));
            }
        }
    }
    let written = emit(args.output_file.as_deref(), &out);
    // Errors go to stderr in every format (JSON also lists them).
    if args.format != OutputFormat::Json {
        for r in &reports {
            stderr(report::excerpt::render(r));
        }
        if args.format == OutputFormat::Human && !args.quiet && !reports.is_empty() {
            stderr(format!("{} file(s) parsed, {} error(s)", files.len(), reports.len()));
        }
    }
    if let Err(e) = written {
        stderr(format!("{e:?}"));
        return 2;
    }
    // a named folder that held no dump beside others that did: said, not silently passed over
    if !files.is_empty() {
        for p in paths.iter().filter(|p| p.is_dir() && p.as_os_str() != ".") {
            if !files.iter().any(|(f, _)| std::path::Path::new(f).starts_with(p)) {
                stderr(format!("warning: {}: no XLA dump in this folder, nothing linted there", p.display()));
            }
        }
    }
    if !reports.is_empty() || (files.is_empty() && paths.iter().all(|p| p.is_dir())) {
        if files.is_empty() && reports.is_empty() {
            stderr("error: no XLA dump found in the given directories");
            for p in paths.iter().filter_map(|p| p.to_str()).filter(|p| super::SUBCOMMANDS.contains(p)) {
                stderr(format!(
                    "note: `{p}` names a folder here, so it was read as a path; run `hlolint {p}` from another folder \
                     for the command"
                ));
            }
        }
        2
    } else if !args.lint.exit_zero && findings.iter().any(|f| f.severity >= Severity::Warning) {
        1
    } else {
        0
    }
}

/// Loads the packs of the settings that have none loaded yet (`base[i]` belongs to `resolver.all[i]`).
fn load_profiles(resolver: &Resolver<'_>, base: &mut Vec<Rules>) -> Result<(), miette::Report> {
    for s in &resolver.all[base.len()..] {
        base.push(load_rules(&s.lint, true)?);
    }
    Ok(())
}

/// Hides the findings an inline comment, the configuration or the baseline suppresses (in that order), counting
/// them per compilation; `--write-baseline` first writes the findings left after comments and config, which are
/// then the baseline.
pub(crate) fn suppress_findings(
    args: &CheckArgs,
    resolver: &Resolver<'_>,
    reports: &mut [CompilationReport],
    profiles: &[usize],
) -> Result<(), miette::Report> {
    use crate::suppress::{baseline, inline::PythonFiles, Suppression};
    let cwd = &resolver.cwd;
    let mut python = PythonFiles::default();
    for (r, &p) in reports.iter_mut().zip(profiles) {
        let s = &resolver.all[p];
        let dir = PathBuf::from(&r.dir);
        let mut kept = Vec::with_capacity(r.findings.len());
        for f in r.findings.drain(..) {
            let inline = f.python.as_ref().is_some_and(|py| {
                PythonFiles::resolve(&py.file, cwd, &s.root, &dir)
                    .and_then(|file| python.comment(&file, py.line))
                    .is_some_and(|codes| codes.covers(&f))
            });
            if inline {
                r.suppressed.add(Suppression::Inline);
            } else if s.ignores(cwd, &f) {
                r.suppressed.add(Suppression::Config);
            } else {
                kept.push(f);
            }
        }
        r.findings = kept;
    }
    // The baseline of each compilation's settings (read once per file), or the one this run writes.
    let mut read: BTreeMap<PathBuf, Rc<baseline::Baseline>> = BTreeMap::new();
    let mut of_profile: BTreeMap<usize, Option<Rc<baseline::Baseline>>> = BTreeMap::new();
    if let Some(path) = &args.lint.settings.write_baseline {
        let written = reports.iter().flat_map(|r| &r.findings).filter(|f| f.verdict != Verdict::Explored);
        baseline::write(path, written.clone())?;
        let b = Rc::new(baseline::Baseline::of(written));
        for &p in profiles {
            of_profile.insert(p, Some(b.clone()));
        }
    }
    for &p in profiles {
        if of_profile.contains_key(&p) {
            continue;
        }
        let b = match &resolver.all[p].baseline {
            Some(path) => Some(match read.get(path) {
                Some(b) => b.clone(),
                None => {
                    let b = Rc::new(baseline::read(path)?);
                    read.insert(path.clone(), b.clone());
                    b
                }
            }),
            None => None,
        };
        of_profile.insert(p, b);
    }
    for (r, p) in reports.iter_mut().zip(profiles) {
        let Some(Some(b)) = of_profile.get(p) else { continue };
        let before = r.findings.len();
        r.findings.retain(|f| !b.contains(f));
        r.suppressed.baseline += before - r.findings.len();
    }
    Ok(())
}

/// `--show-settings`: the resolved settings of each path, as TOML (JSON with `--format json`).
fn show_settings(args: &CheckArgs, paths: &[PathBuf], resolver: &mut Resolver<'_>) -> i32 {
    let mut shown = Vec::new();
    for p in paths {
        match resolver.for_path(p) {
            Ok(i) => shown.push(resolver.all[i].show(p, args.target.as_deref())),
            Err(e) => {
                stderr(report::excerpt::render(&e));
                return 2;
            }
        }
    }
    let out = if args.format == OutputFormat::Json {
        serde_json::to_string_pretty(&shown).unwrap_or_default() + "\n"
    } else {
        let mut out = String::new();
        for s in &shown {
            out.push_str(&format!("# Settings for {}\n", s.path));
            out.push_str(&toml::to_string(s).unwrap_or_else(|e| format!("# cannot print: {e}\n")));
            out.push('\n');
        }
        out
    };
    super::output::emit_or(args.output_file.as_deref(), &out, 0)
}

/// Parses the files of one dump directory, builds the compilation, runs the rules.
pub(crate) fn lint_group(
    dir: &str,
    candidates: &[&source::Candidate],
    rules: &RuleSet,
    sev: &(dyn Fn(&rules::Rule) -> Severity + Sync),
    target: Option<&str>,
    explored: bool,
    perf: bool,
) -> GroupOutcome {
    let loaded: Vec<Result<Option<SourceFile>, source::InputError>> =
        candidates.par_iter().map(|c| source::load(c)).collect();
    let mut problems = Vec::new();
    let mut files_read = Vec::new();
    for l in loaded {
        match l {
            Ok(Some(f)) => files_read.push(f),
            Ok(None) => {}
            Err(e) => problems.push(miette::Report::new(e)),
        }
    }
    let results: Vec<Result<Parsed<'_>, miette::Report>> = files_read.par_iter().map(parse_file).collect();
    let mut parsed = Vec::new();
    for r in results {
        match r {
            Ok(p) => parsed.push(p),
            Err(e) => problems.push(e),
        }
    }
    for p in &mut parsed {
        problems.append(&mut p.problems);
    }
    let c = Compilation::new(dir.to_string(), &parsed, target);
    let mut findings = engine::run(rules, &c, sev);
    if !explored {
        findings.retain(|f| f.verdict != Verdict::Explored);
    }
    let target = c.target.as_ref().map(|t| format!("{} (from {})", t.name(), t.source.describe()));
    let perf = perf.then(|| {
        let hardware = crate::semantic::tpu::Hardware::builtin();
        let ctx = crate::perf::Context { hardware: &hardware, assume: &Default::default() };
        crate::perf::compilation_facts(&c, &parsed, ctx)
    });
    drop(c);
    let mut texts = Texts::new();
    for f in &findings {
        if !texts.contains_key(&f.path) {
            if let Some(p) = parsed.iter().find(|p| p.file.path == f.path) {
                texts.insert(f.path.clone(), Arc::new(p.file.text.clone()));
            }
        }
    }
    let report = CompilationReport {
        dir: dir.to_string(),
        target,
        files: parsed.len(),
        packs: None,
        findings,
        suppressed: Default::default(),
    };
    let files = parsed.into_iter().map(|p| (p.file.path.clone(), p.summary)).collect();
    GroupOutcome { report, files, problems, texts, perf }
}

fn json_error(r: &miette::Report) -> JsonError {
    let se = r.downcast_ref::<crate::parse::error::SyntaxError>();
    JsonError {
        message: r.to_string(),
        path: se.map(|e| e.src.name().to_string()),
        offset: se.map(|e| e.span.offset()),
        expected: se.map(|e| e.expected.clone()),
    }
}

pub fn graph(args: &GraphArgs) -> i32 {
    let (candidates, input_errors) = source::expand(&args.paths, false);
    let mut code = 0;
    let mut out = String::new();
    for e in input_errors {
        stderr(report::excerpt::render(&miette::Report::new(e)));
        code = 2;
    }
    for c in &candidates {
        let file = match source::load(c) {
            Ok(Some(f)) => f,
            Ok(None) => continue,
            Err(e) => {
                stderr(report::excerpt::render(&miette::Report::new(e)));
                code = 2;
                continue;
            }
        };
        let module = match file.format {
            Format::Hlo => crate::parse::hlo::parse_hlo(&file.path, &file.text).map(Some),
            Format::Mlir => crate::parse::mlir::parse_mlir(&file.path, &file.text).map(Some),
            Format::Llo => crate::parse::llo::parse_llo(&file.path, &file.text).map(|f| match f {
                crate::parse::llo::LloFile::Bundles(p) => Some(p.module),
                _ => None,
            }),
        };
        match module {
            Ok(Some(m)) => {
                out.push_str(&serde_json::to_string(&graph_dump(&m)).unwrap_or_default());
                out.push('\n');
            }
            Ok(None) => stderr(format!("{}: a table, not a graph; skipped", file.path)),
            Err(e) => {
                stderr(report::excerpt::render(&miette::Report::new(e)));
                code = 2;
            }
        }
    }
    super::output::emit_or(None, &out, code)
}

/// Lints `paths` with `rules` (severities from `sev`): per-compilation findings, and the input/syntax errors.
/// `hlolint test` uses it to run one rule on one case.
pub fn lint_paths(
    paths: &[std::path::PathBuf],
    rules: &RuleSet,
    sev: &(dyn Fn(&rules::Rule) -> Severity + Sync),
    target: Option<&str>,
) -> (Vec<CompilationReport>, Vec<miette::Report>) {
    let (candidates, input_errors) = source::expand(paths, false);
    let mut errors: Vec<miette::Report> = input_errors.into_iter().map(miette::Report::new).collect();
    let mut groups: BTreeMap<String, Vec<&source::Candidate>> = BTreeMap::new();
    for c in &candidates {
        groups.entry(group_dir(&c.path.display().to_string())).or_default().push(c);
    }
    let mut reports = Vec::new();
    for (dir, files) in groups {
        let o = lint_group(&dir, &files, rules, sev, target, false, false);
        errors.extend(o.problems);
        reports.push(o.report);
    }
    (reports, errors)
}
