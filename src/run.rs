//! One lint run: paths and settings in, a [`RunOutcome`] out. Settings per path → expand (excludes) → group per
//! dump folder → the packs of each compilation (the run's, or a compiled version's own) → load, parse and lint
//! each compilation (in parallel inside it) → suppressions. `crate::lint` is [`lint`]; the command line's
//! `check` (and `compile`, through it) writes the outcome, `compare` puts it in columns.

use crate::analysis::Verdict;
use crate::lint::compilation::{group_dir, parse_file_keeping, Keep, Parsed};
use crate::lint::Compilation;
use crate::report::{CompilationReport, QuotedText, RunOutcome, Texts};
use crate::rules::{self, engine, RuleSet, Severity};
use crate::settings::{self, Resolver, Selection, Settings, SettingsError};
use crate::source::{self, SourceFile};
use crate::summary::FileSummary;
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::OnceLock;

/// Lints `paths` (files, folders, globs, `-` for stdin). The `Err` is what stops a run before any work or in the
/// middle (a broken config, pack or baseline, an unknown target); errors in the inputs are the outcome's `errors`.
/// Of an LLO dump, summaries (`Settings::summaries`) read what `summary::llo::reads` names.
pub fn lint(req: &Settings, paths: &[PathBuf]) -> Result<RunOutcome, miette::Report> {
    if let Some(t) = req.target.as_deref() {
        if crate::lint::Target::lookup(t).is_none() {
            let known = crate::lint::target::GENERATIONS.iter().map(|g| g.name).collect();
            return Err(SettingsError::UnknownTarget { target: t.to_string(), known }.into());
        }
    }
    // The settings of every named path, and their packs: a broken config or pack stops the run before any work.
    let mut resolver = Resolver::new(req);
    let mut base: Vec<Rules> = Vec::new();
    for p in paths {
        resolver.for_path(p)?;
    }
    load_profiles(&resolver, &mut base)?;
    let (candidates, input_errors) = source::expand_with(paths, req.all_stages, req.force_exclude);
    let mut errors: Vec<miette::Report> = input_errors.into_iter().map(miette::Report::new).collect();
    let groups = group(req, paths, &mut resolver, &candidates)?;
    load_profiles(&resolver, &mut base)?;
    let by_pack = version_packs(&resolver, &groups, &mut errors);
    let warnings = unlisted_in_manifests(&resolver, &groups);
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
    // Compilations in batches (see `batches`): a batch's compilations in parallel, each one's files in parallel
    // inside it; outcomes taken in path order, so the report does not depend on the threads.
    let mut run = RunOutcome { exit_zero: req.exit_zero, ..RunOutcome::default() };
    let mut profiles = Vec::new();
    let mut skipped = Vec::new();
    let mut assume_warnings: Vec<(String, miette::Report)> = Vec::new();
    for batch in batches(&groups) {
        let outcomes: Vec<(GroupOutcome, usize)> = batch
            .par_iter()
            .with_max_len(1)
            .map(|(dir, (profile, files))| {
                let (r, own) = rules_for(*profile, dir);
                let target = req.target.as_deref().or(resolver.all[*profile].target.as_deref());
                let assume = &resolver.all[*profile].per_kernel_assume;
                let how =
                    GroupOptions { target, explored: req.verbose, perf: req.perf, summaries: req.summaries, assume };
                let mut o = lint_group(dir, files, &r.set, &|x: &rules::Rule| r.severity(x), how);
                if own {
                    o.report.packs = manifest_pack(dir).map(|p| format!("{p} (the kernel module's RULES)"));
                }
                (o, *profile)
            })
            .collect();
        for (o, profile) in outcomes {
            errors.extend(o.problems);
            run.parsed.extend(o.parsed);
            run.files.extend(o.files);
            // Compilations with no parsed file (every file failed) are not worth a line.
            if o.report.files > 0 {
                run.compilations.push(o.report);
                profiles.push(profile);
            }
            run.texts.extend(o.texts);
            skipped.extend(o.skipped);
            // an assumption that fits no kernel is said once, whatever the compilations it was tried on
            for (key, w) in o.warnings {
                if !assume_warnings.iter().any(|(k, _)| *k == key) {
                    assume_warnings.push((key, w));
                }
            }
        }
    }
    let python = suppress_findings(req, &resolver, &mut run.compilations, &profiles, &mut run.python_files)?;
    run.errors = errors;
    run.warnings = warnings;
    run.warnings.extend(assume_warnings.into_iter().map(|(_, w)| w));
    run.rules = base.into_iter().flat_map(|b| b.set.rules).collect();
    run.version_rules = by_pack.into_values().flat_map(|r| r.set.rules).collect();
    let ran: Vec<&rules::Rule> = run.rules.iter().chain(&run.version_rules).collect();
    run.warnings.extend(crate::suppress::unused::warnings(&python.unused(), &ran, &resolver.cwd));
    say_what_held_no_dump(req, paths, &groups, &skipped, &mut run);
    Ok(run)
}

/// Each compilation's folder with its files.
pub type FilesPerCompilation = Vec<(String, Vec<PathBuf>)>;

/// `--show-files`: the files a run over `paths` would read, per compilation (excludes applied; nothing read), and
/// the errors met expanding the paths.
pub fn files(req: &Settings, paths: &[PathBuf]) -> Result<(FilesPerCompilation, Vec<miette::Report>), miette::Report> {
    let mut resolver = Resolver::new(req);
    for p in paths {
        resolver.for_path(p)?;
    }
    let (candidates, errors) = source::expand_with(paths, req.all_stages, req.force_exclude);
    let groups = group(req, paths, &mut resolver, &candidates)?;
    let out = groups.into_iter().map(|(dir, (_, cs))| (dir, cs.iter().map(|c| c.path.clone()).collect())).collect();
    Ok((out, errors.into_iter().map(miette::Report::new).collect()))
}

/// Candidate files per dump folder (a compilation), each with the settings it is linted with (its first file's),
/// the `exclude` globs applied.
type Groups<'c> = Vec<Group<'c>>;

/// One dump folder's candidate files and the settings profile they are linted with.
type Group<'c> = (String, (usize, Vec<&'c source::Candidate>));

fn group<'c>(
    req: &Settings,
    paths: &[PathBuf],
    resolver: &mut Resolver<'_>,
    candidates: &'c [source::Candidate],
) -> Result<Groups<'c>, miette::Report> {
    let cwd = resolver.cwd.clone();
    // The folders named on the command line, absolute, longest first: what `exclude` globs are matched below.
    let mut walked: Vec<PathBuf> = paths.iter().filter(|p| p.is_dir()).map(|p| settings::absolute(&cwd, p)).collect();
    walked.sort_by_key(|a| std::cmp::Reverse(a.as_os_str().len()));
    // Files are read per compilation, inside its task: memory holds the compilations being linted, not the run.
    let mut groups: BTreeMap<String, (usize, Vec<&source::Candidate>)> = BTreeMap::new();
    for c in candidates {
        let profile = resolver.for_path(&c.path)?;
        if !c.explicit {
            let abs = settings::absolute(&cwd, &c.path);
            if let Some(root) = walked.iter().find(|w| abs.starts_with(w)) {
                if resolver.all[profile].excluded(&cwd, &abs, root) {
                    continue;
                }
            } else if req.force_exclude {
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
    Ok(groups.into_iter().collect())
}

/// Consecutive compilations (in path order) that together weigh no more than the heaviest one: those are linted
/// at the same time. A tree's many small compilations then overlap, while the memory a run holds at once stays
/// about what the heaviest compilation alone takes (running every compilation at once, as work-stealing would,
/// held them all). The weight is the memory a compilation's text becomes: an HLO or MLIR file a whole graph (about
/// 10× its bytes), an LLO dump the few ops a lint keeps of it (about 2.5×) — so files other than LLO dumps count 4×.
fn batches<'g, 'c>(groups: &'g Groups<'c>) -> Vec<&'g [Group<'c>]> {
    let weight = |c: &source::Candidate| -> u64 {
        let bytes = c.bytes();
        let llo = crate::parse::llo::llo_file_name(&c.path.to_string_lossy()).is_some_and(|n| n.stage != "hlo");
        if llo {
            bytes
        } else {
            bytes * 4
        }
    };
    let sizes: Vec<u64> = groups.iter().map(|(_, (_, files))| files.iter().map(|c| weight(c)).sum()).collect();
    let budget = sizes.iter().copied().max().unwrap_or(0);
    let mut out = Vec::new();
    let (mut start, mut sum) = (0, 0u64);
    for (i, &n) in sizes.iter().enumerate() {
        if i > start && sum + n > budget {
            out.push(&groups[start..i]);
            (start, sum) = (i, 0);
        }
        sum += n;
    }
    if start < groups.len() {
        out.push(&groups[start..]);
    }
    out
}

/// Without packs on the command line or in a config, a version compiled by `hlolint compile` is linted with the
/// pack its kernel module names for it (RULES in the module, recorded in the manifest): those packs, per settings.
fn version_packs(
    resolver: &Resolver<'_>,
    groups: &Groups<'_>,
    errors: &mut Vec<miette::Report>,
) -> BTreeMap<(usize, String), Rules> {
    let mut by_pack: BTreeMap<(usize, String), Rules> = BTreeMap::new();
    for (dir, (profile, _)) in groups {
        let s = &resolver.all[*profile];
        if s.explicit {
            continue;
        }
        if let Some(p) = manifest_pack(dir) {
            if let std::collections::btree_map::Entry::Vacant(slot) = by_pack.entry((*profile, p.clone())) {
                let mut l = s.selection.clone();
                l.rules = vec![p];
                match load_rules(&l, false) {
                    Ok(r) => {
                        slot.insert(r);
                    }
                    Err(e) => errors.push(e),
                }
            }
        }
    }
    by_pack
}

/// Compilations beside a driver manifest that does not list them (or beside one that does not read): linted with
/// the run's packs, as anything else, and said — a version without its module's pack can pass checks it fails.
fn unlisted_in_manifests(resolver: &Resolver<'_>, groups: &Groups<'_>) -> Vec<miette::Report> {
    use crate::lint::manifest::{self, Manifest};
    let mut manifests: BTreeMap<PathBuf, Option<Manifest>> = BTreeMap::new();
    let mut out = Vec::new();
    for (dir, (profile, files)) in groups {
        let dir = Path::new(dir);
        // stdin has no folder, and the current directory's manifest says nothing about it
        let Some(folder) = dir.parent().filter(|_| dir != Path::new(source::STDIN)) else { continue };
        let pack = resolver.all[*profile].selection.rules.join(",");
        let m = manifests.entry(folder.to_path_buf()).or_insert_with(|| match Manifest::read(folder) {
            Ok(m) => m,
            Err(error) => {
                out.push(miette::Report::new(manifest::Unreadable { error, pack: pack.clone() }));
                None
            }
        });
        let Some(m) = m else { continue };
        let paths: Vec<&Path> = files.iter().map(|c| c.path.as_path()).collect();
        if let Some(w) = manifest::unlisted(m, folder, dir, &paths, &pack) {
            out.push(miette::Report::new(w));
        }
    }
    out
}

/// A named folder that held no dump beside others that did is said, not silently passed over; when no folder
/// held any, the run is an input error. Either way the files such a folder held are listed with why each was
/// passed over (the first [`SKIPPED_SHOWN`]).
fn say_what_held_no_dump(
    req: &Settings,
    paths: &[PathBuf],
    groups: &Groups<'_>,
    skipped: &[(PathBuf, &'static str)],
    run: &mut RunOutcome,
) {
    let empty_dirs: Vec<&PathBuf> =
        paths.iter().filter(|p| p.is_dir() && !run.parsed.iter().any(|f| Path::new(f).starts_with(p))).collect();
    if !run.parsed.is_empty() {
        for p in empty_dirs.iter().filter(|p| p.as_os_str() != ".") {
            run.notices.push(format!("warning: {}: no XLA dump in this folder, nothing linted there", p.display()));
            run.notices.extend(skipped_in(p, req.all_stages, groups, skipped));
        }
    }
    run.nothing_found = run.parsed.is_empty() && paths.iter().all(|p| p.is_dir());
    if run.nothing_found && run.errors.is_empty() {
        run.notices.push("error: no XLA dump found in the given directories".into());
        for p in &empty_dirs {
            run.notices.extend(skipped_in(p, req.all_stages, groups, skipped));
        }
    }
}

/// How many passed-over files of a folder without dumps are named.
const SKIPPED_SHOWN: usize = 20;

/// `  skipped DIR/notes.txt: no HLO, MLIR or LLO header`, one line per file of `dir` (a folder that held no dump).
fn skipped_in(dir: &Path, all_stages: bool, groups: &Groups<'_>, skipped: &[(PathBuf, &'static str)]) -> Vec<String> {
    let grouped = |f: &Path| groups.iter().any(|(_, (_, cs))| cs.iter().any(|c| c.path == f));
    let strip_dot = dir.as_os_str() == ".";
    let files = walkdir::WalkDir::new(dir).follow_links(true).sort_by_file_name().into_iter().flatten();
    let mut lines = Vec::new();
    let mut more = 0;
    for e in files.filter(|e| e.file_type().is_file()) {
        if lines.len() == SKIPPED_SHOWN {
            more += 1;
            continue;
        }
        let f = match e.path().strip_prefix(".") {
            Ok(rel) if strip_dot => rel,
            _ => e.path(),
        };
        let why = match skipped.iter().find(|(p, _)| p == f) {
            Some((_, why)) => *why,
            None if !all_stages && source::is_intermediate_stage(f) => {
                "an intermediate compiler stage (--all-stages reads it)"
            }
            None if grouped(f) => "unreadable (see above)",
            None => "excluded by the configuration",
        };
        lines.push(format!("  skipped {}: {why}", f.display()));
    }
    if lines.is_empty() {
        lines.push(format!("  {} holds no file", dir.display()));
    }
    if more > 0 {
        lines.push(format!("  … and {more} more file(s)"));
    }
    lines
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
pub fn load_rules(lint: &Selection, strict: bool) -> Result<Rules, miette::Report> {
    let mut set = rules::load(&lint.rules).map_err(miette::Report::new)?;
    let list = |v: &[String]| -> Vec<String> {
        v.iter().flat_map(|s| s.split(',')).map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect()
    };
    let (select, ignore, extend) = (list(&lint.select), list(&lint.ignore), list(&lint.extend_select));
    let hits = |r: &rules::Rule, pats: &[String]| {
        pats.iter().any(|p| crate::suppress::code_matches(p, r.code.as_deref(), &r.id))
    };
    // a selector must name some rule: of the selected packs, or of a built-in pack (a config that ignores MO021
    // applies to the versions whose pack has it and is not an error where the chosen pack has not)
    let builtin = std::cell::OnceCell::new();
    let all_builtin = || builtin.get_or_init(|| rules::load::load_all_builtin().map(|s| s.rules).unwrap_or_default());
    let known = |p: &String, selected: &[rules::Rule]| {
        let one = std::slice::from_ref(p);
        selected.iter().any(|r| hits(r, one)) || all_builtin().iter().any(|r| hits(r, one))
    };
    let hint = |p: &str, selected: &[rules::Rule]| {
        let all = selected.iter().chain(builtin.get().into_iter().flatten());
        settings::rule_hint(p, all, "`hlolint rules` lists the rules of the selected packs")
    };
    for p in select.iter().chain(&ignore).chain(&extend) {
        if strict && p != "ALL" && !known(p, &set.rules) {
            return Err(SettingsError::NoSuchRule { pattern: p.clone(), help: hint(p, &set.rules) }.into());
        }
    }
    // a selection that names only rules of packs not in use would run nothing and report a clean run (one that
    // `--ignore` empties is what was asked for)
    if strict && extend.is_empty() && !select.is_empty() && !set.rules.iter().any(|r| hits(r, &select)) {
        let mut packs: Vec<&str> = all_builtin().iter().filter(|r| hits(r, &select)).map(|r| r.pack.as_str()).collect();
        packs.sort_unstable();
        packs.dedup();
        let help = format!(
            "they are in {}: add the pack to `--rules` (e.g. `--rules {},{}`) or use `--extend-select`",
            packs.iter().map(|p| format!("`{p}`")).collect::<Vec<_>>().join(", "),
            lint.rules.join(","),
            packs.join(",")
        );
        return Err(SettingsError::NothingSelected { patterns: select.join(","), help }.into());
    }
    set.rules.retain(|r| (select.is_empty() || hits(r, &select) || hits(r, &extend)) && !hits(r, &ignore));
    // `--extend-select`: the built-in packs' rules it names that the run's packs do not hold
    if !extend.is_empty() {
        for r in rules::load::load_all_builtin().map(|s| s.rules).unwrap_or_default() {
            if hits(&r, &extend) && !hits(&r, &ignore) && !set.rules.iter().any(|x| x.id == r.id) {
                set.rules.push(r);
            }
        }
    }
    let mut sev = BTreeMap::new();
    for r in &set.rules {
        sev.insert(r.id.clone(), r.severity);
    }
    for o in list(&lint.severity) {
        let Some((k, v)) = o.split_once('=') else {
            return Err(SettingsError::SeveritySyntax { got: o.clone() }.into());
        };
        let level = Severity::parse(v).ok_or_else(|| SettingsError::UnknownSeverity { level: v.to_string() })?;
        let ids: Vec<String> =
            set.rules.iter().filter(|r| hits(r, &[k.trim().to_string()])).map(|r| r.id.clone()).collect();
        if ids.is_empty() && strict && !known(&k.trim().to_string(), &set.rules) {
            let help = hint(k.trim(), &set.rules);
            return Err(SettingsError::SeverityNoRule { pattern: k.to_string(), help }.into());
        }
        for id in ids {
            sev.insert(id, level);
        }
    }
    Ok(Rules { set, severities: sev })
}

/// The pack a kernel module names for the version in `dir` (the driver's manifest records `RULES`).
fn manifest_pack(dir: &str) -> Option<String> {
    if dir == source::STDIN {
        return None;
    }
    crate::lint::target::manifest_result(Path::new(dir))?.rules
}

/// Loads the packs of the settings that have none loaded yet (`base[i]` belongs to `resolver.all[i]`).
fn load_profiles(resolver: &Resolver<'_>, base: &mut Vec<Rules>) -> Result<(), miette::Report> {
    for s in &resolver.all[base.len()..] {
        base.push(load_rules(&s.selection, true)?);
    }
    Ok(())
}

/// Hides the findings an inline comment, the configuration or the baseline suppresses (in that order), counting
/// them per compilation; `--write-baseline` first writes the findings left after comments and config, which are
/// then the baseline.
fn suppress_findings(
    lint: &Settings,
    resolver: &Resolver<'_>,
    reports: &mut [CompilationReport],
    profiles: &[usize],
    shown: &mut BTreeMap<String, PathBuf>,
) -> Result<crate::suppress::inline::PythonFiles, miette::Report> {
    let mut python = crate::suppress::inline::PythonFiles::default();
    for (r, &p) in reports.iter_mut().zip(profiles) {
        suppress_inline_and_config(resolver, &resolver.all[p], &mut python, shown, r);
    }
    let baselines = baselines(lint, resolver, reports, profiles)?;
    for (r, p) in reports.iter_mut().zip(profiles) {
        let Some(Some(b)) = baselines.get(p) else { continue };
        let before = r.findings.len();
        r.findings.retain(|f| !b.contains(f));
        r.suppressed.baseline += before - r.findings.len();
    }
    Ok(python)
}

/// Drops the findings of one compilation that a `# hlolint: ignore[...]` comment on their Python line or the
/// settings' per-path/per-kernel ignores cover.
fn suppress_inline_and_config(
    resolver: &Resolver<'_>,
    s: &settings::Profile,
    python: &mut crate::suppress::inline::PythonFiles,
    shown: &mut BTreeMap<String, PathBuf>,
    r: &mut CompilationReport,
) {
    use crate::suppress::{inline::PythonFiles, Suppression};
    let cwd = &resolver.cwd;
    let dir = PathBuf::from(&r.dir);
    let mut kept = Vec::with_capacity(r.findings.len());
    for mut f in r.findings.drain(..) {
        let mut inline = false;
        if let Some(mut py) = f.python.take() {
            if let Some(file) = PythonFiles::resolve(&py.file, cwd, &s.root, &dir) {
                if let Some(codes) = python.comment(&file, py.line).filter(|c| c.covers(&f)) {
                    python.mark_used(&file, py.line, &codes, &f);
                    inline = true;
                }
                // every report names the file as it is here, not as the compiling machine recorded it
                py.file = PythonFiles::display(&file, cwd);
                shown.insert(py.file.clone(), file);
            }
            f.python = Some(py);
        }
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

/// The baseline of each compilation's settings (read once per file), or the one this run writes.
fn baselines(
    lint: &Settings,
    resolver: &Resolver<'_>,
    reports: &[CompilationReport],
    profiles: &[usize],
) -> Result<BTreeMap<usize, Option<Rc<crate::suppress::baseline::Baseline>>>, miette::Report> {
    use crate::suppress::baseline;
    let mut read: BTreeMap<PathBuf, Rc<baseline::Baseline>> = BTreeMap::new();
    let mut of_profile: BTreeMap<usize, Option<Rc<baseline::Baseline>>> = BTreeMap::new();
    if let Some(path) = &lint.write_baseline {
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
    Ok(of_profile)
}

/// What one compilation (files of one dump directory) gave.
struct GroupOutcome {
    report: CompilationReport,
    /// The files parsed.
    parsed: Vec<String>,
    /// With their summaries, when asked for.
    files: Vec<(String, FileSummary)>,
    problems: Vec<miette::Report>,
    /// The texts of the files findings point into (the report quotes them).
    texts: Texts,
    /// The files read and found not to be dumps, with why.
    skipped: Vec<(PathBuf, &'static str)>,
    /// Assumptions that fit no kernel, each with a key that says it once per run.
    warnings: Vec<(String, miette::Report)>,
}

/// How one compilation is linted besides its rules.
#[derive(Clone, Copy)]
struct GroupOptions<'a> {
    /// The generation it was built for, when the run says.
    target: Option<&'a str>,
    /// Keep what analyses explored.
    explored: bool,
    /// Compute the performance model's facts.
    perf: bool,
    /// Summarise the files.
    summaries: bool,
    /// What the kernels' callers guarantee of their inputs (`per-kernel-assume`).
    assume: &'a [settings::assume::Assume],
}

/// Reads and parses the files of one dump directory (in parallel), builds the compilation, runs the rules.
fn lint_group(
    dir: &str,
    candidates: &[&source::Candidate],
    rules: &RuleSet,
    sev: &(dyn Fn(&rules::Rule) -> Severity + Sync),
    how: GroupOptions<'_>,
) -> GroupOutcome {
    let GroupOptions { target, explored, perf, summaries, assume } = how;
    // Only the LLO ops the rules and summaries read are kept unless something reads whole programs: the
    // performance model, a matcher on the LLO layer.
    let keep = match (perf || engine::reads_whole_llo(rules, sev), summaries) {
        (true, _) => Keep::All,
        (false, true) => Keep::Only(crate::summary::llo::reads),
        (false, false) => Keep::Only(crate::semantic::llo::read_across_layers),
    };
    let sources: Vec<OnceLock<SourceFile>> = candidates.iter().map(|_| OnceLock::new()).collect();
    let results = read_and_parse(candidates, &sources, keep);
    let mut problems = Vec::new();
    let mut parse_errors = Vec::new();
    let mut parsed = Vec::new();
    let mut skipped = Vec::new();
    for (r, c) in results.into_iter().zip(candidates) {
        match r {
            Read::Parsed(Ok(p)) => parsed.push(p),
            Read::Parsed(Err(e)) => parse_errors.push(e),
            Read::Unreadable(e) => problems.push(miette::Report::new(e)),
            Read::Skipped(why) => skipped.push((c.path.clone(), why)),
        }
    }
    problems.append(&mut parse_errors);
    for p in &mut parsed {
        problems.append(&mut p.problems);
    }
    let mut c = Compilation::new(dir.to_string(), &parsed, target);
    c.assume = settings::assume::for_kernels(assume);
    let warnings = settings::assume::unmatched(&c, assume);
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
                texts.insert(f.path.clone(), QuotedText::new(p.file.text.clone()));
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
        perf,
    };
    let paths = parsed.iter().map(|p| p.file.path.clone()).collect();
    let files = match summaries {
        true => parsed.par_iter().map(|p| (p.file.path.clone(), crate::summary::of(p))).collect(),
        false => Vec::new(),
    };
    // A large compilation's graphs are a million small allocations: freed in parallel, as they were made.
    parsed.into_par_iter().with_max_len(1).for_each(drop);
    GroupOutcome { report, parsed: paths, files, problems, texts, skipped, warnings }
}

/// What became of one candidate file. (One per file: the size difference between the variants does not matter.)
#[allow(clippy::large_enum_variant)]
enum Read<'s> {
    Parsed(Result<Parsed<'s>, miette::Report>),
    Unreadable(source::InputError),
    /// Not a dump (empty, binary, ... met on a walk): why.
    Skipped(&'static str),
}

/// Reads and parses `candidates` in parallel, one task per file — read, then parsed at once — and the largest
/// first (a folder's few large LLO files would otherwise end up in one thread's half of the list while the other
/// runs out of work); `sources[i]` keeps candidate `i`'s text for the graphs that borrow it. The results in the
/// order of `candidates`, so that the report does not depend on the number of threads.
fn read_and_parse<'s>(
    candidates: &[&source::Candidate],
    sources: &'s [OnceLock<SourceFile>],
    keep: Keep,
) -> Vec<Read<'s>> {
    let mut order: Vec<(usize, u64)> = candidates.iter().enumerate().map(|(i, c)| (i, c.bytes())).collect();
    order.sort_by_key(|&(i, n)| (std::cmp::Reverse(n), i));
    let task = |i: usize| -> Read<'s> {
        match source::read(candidates[i]) {
            Ok(source::Read::File(f)) => Read::Parsed(parse_file_keeping(sources[i].get_or_init(|| f), keep)),
            Ok(source::Read::Skipped(why)) => Read::Skipped(why.skip_reason()),
            Err(e) => Read::Unreadable(e),
        }
    };
    let mut done: Vec<(usize, Read<'s>)> = order.into_par_iter().with_max_len(1).map(|(i, _)| (i, task(i))).collect();
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

/// Lints `paths` with `rules` (severities from `sev`), without settings or suppressions: per-compilation findings,
/// and the input/syntax errors. `hlolint test` uses it to run one rule on one case.
pub fn lint_paths(
    paths: &[PathBuf],
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
        let o = lint_group(
            &dir,
            &files,
            rules,
            sev,
            GroupOptions { target, explored: false, perf: false, summaries: false, assume: &[] },
        );
        errors.extend(o.problems);
        reports.push(o.report);
    }
    (reports, errors)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Batches run together what weighs no more than the heaviest compilation; an HLO file weighs 4× its bytes,
    /// an LLO dump its bytes.
    #[test]
    fn batches_hold_together_what_weighs_no_more_than_the_heaviest_compilation() {
        let tmp = tempfile::tempdir().unwrap();
        let file = |name: &str, bytes: usize| {
            let p = tmp.path().join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, vec![b'x'; bytes]).unwrap();
            source::Candidate { path: p, explicit: false }
        };
        let (a, b) = (file("a/m_hlo.txt", 100), file("b/m_hlo.txt", 100));
        let big = file("c/llo/1-fusion-01-final_bundles.txt", 1000);
        let (d, e) = (file("d/m_hlo.txt", 200), file("e/llo/1-fusion-01-final_bundles.txt", 300));
        fn g<'c>(n: &str, c: &'c source::Candidate) -> Group<'c> {
            (n.to_string(), (0, vec![c]))
        }
        let groups: Groups<'_> = vec![g("a", &a), g("b", &b), g("c", &big), g("d", &d), g("e", &e)];
        let names: Vec<Vec<&str>> = batches(&groups).iter().map(|b| b.iter().map(|x| x.0.as_str()).collect()).collect();
        // a + b weigh 800 ≤ 1000; adding c would not fit; d (800) + e (300) > 1000
        assert_eq!(names, vec![vec!["a", "b"], vec!["c"], vec!["d"], vec!["e"]]);
        assert!(batches(&Vec::new()).is_empty());
    }
}
