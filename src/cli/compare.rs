//! `hlolint compare PATH...`: compilations side by side. The inputs are grouped into compilations as `check` groups
//! them (one dump folder `<version>@<target>` each; a parent folder holding several gives several), each is linted
//! with the packs `check` would use (the config's, else the kernel module's per-version pack) and its suppressions,
//! and its kernels are described by the performance model; `crate::compare` puts it in columns and renders it.

use super::output::{emit, stderr};
use super::usage::UsageError;
use crate::analysis::Verdict;
use crate::compare::kernels::KernelView;
use crate::compare::{self, inputs, Column, Comparison, Verdicts};
use crate::lint::compilation::{group_dir, parse_file, Parsed};
use crate::lint::Compilation;
use crate::perf::{self, Assume, CompilationFacts, Context};
use crate::report::{self, CompilationReport};
use crate::rules::Severity;
use crate::semantic::tpu::Hardware;
use crate::settings::{Resolver, Selection, Settings};
use crate::source::{self, Candidate};
use std::collections::BTreeMap;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// Compilation folders (`<version>@<target>` as `hlolint compile` writes them), or folders holding several.
    #[arg(value_name = "PATH", required = true)]
    pub paths: Vec<PathBuf>,
    /// Output format (`--output-format` too): a terminal table per target, Markdown (a pull-request comment), JSON, CSV (one line per fact
    /// and compilation), or a self-contained HTML report with charts (use with `-o report.html`).
    #[arg(long, visible_alias = "output-format", value_enum, default_value_t = CompareFormat::Table)]
    pub format: CompareFormat,
    /// Write the report to this file instead of stdout.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output_file: Option<PathBuf>,
    /// Fix a data-dependent quantity for the model (a loop trip count it cannot know statically), e.g.
    /// `--assume num_groups=8`; repeatable.
    #[arg(long, value_name = "NAME=VALUE")]
    pub assume: Vec<String>,
    /// A hardware table (TOML) overriding the built-in one (clock, MXUs, peak rates, bandwidth, memory sizes).
    #[arg(long, value_name = "FILE")]
    pub hardware: Option<PathBuf>,
    /// The TPU generation, when the folders do not say (default: from the manifest, the folder name or the dumps).
    #[arg(long)]
    pub target: Option<String>,
    /// Rule packs for the verdict rows (default: the config's, else each version's own pack, else `core`).
    #[arg(long, short = 'r', value_name = "PACK")]
    pub rules: Vec<String>,
    /// Only these rules (ids, codes or code prefixes; comma lists).
    #[arg(long, value_name = "RULE")]
    pub select: Vec<String>,
    /// Not these rules (ids, codes or code prefixes; comma lists).
    #[arg(long, value_name = "RULE")]
    pub ignore: Vec<String>,
    /// The configuration file (default: the closest one, as for `check`), or a `KEY = VALUE` setting; repeatable.
    #[arg(long, value_name = "PATH|KEY=VALUE")]
    pub config: Vec<String>,
    /// Ignore configuration files.
    #[arg(long)]
    pub isolated: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CompareFormat {
    /// Tables for a terminal, one per target.
    Table,
    Markdown,
    Json,
    Csv,
    /// One HTML file, no external resources: the table, a bar chart of predicted time, loop timelines.
    Html,
}

pub fn compare(args: &CompareArgs) -> i32 {
    let fail = |e: miette::Report| {
        stderr(report::excerpt::render(&e));
        2
    };
    let assume = match Assume::parse(args.assume.iter().map(String::as_str)) {
        Ok(a) => a,
        Err(e) => return fail(UsageError::from(e).into()),
    };
    let hardware = match Hardware::load(args.hardware.as_deref()) {
        Ok(h) => h,
        Err(e) => return fail(e.into()),
    };
    let ctx = Context { hardware: &hardware, assume: &assume };
    let lint = settings(args);
    let mut resolver = Resolver::new(&lint);
    for p in &args.paths {
        if let Err(e) = resolver.for_path(p) {
            return fail(e);
        }
    }
    let (candidates, input_errors) = source::expand(&args.paths, false);
    let mut problems: Vec<miette::Report> = input_errors.into_iter().map(miette::Report::new).collect();
    let groups = group(&candidates, &args.paths);
    let mut columns = Vec::new();
    let mut views = Vec::new();
    for g in &groups {
        match column(g, args, ctx, &lint, &mut resolver) {
            Ok((col, kernels, mut p)) => {
                problems.append(&mut p);
                // a folder with no dump (a driver output's own folder: manifest, events) is no compilation
                if let Some(col) = col {
                    columns.push(col);
                    views.push(kernels);
                }
            }
            Err(e) => return fail(e),
        }
    }
    if columns.is_empty() {
        problems.iter().for_each(|e| stderr(report::excerpt::render(e)));
        stderr("error: no XLA dump found in the given paths");
        return 2;
    }
    let mut c = Comparison { kernels: compare::kernels::align(&views), columns, ..Comparison::default() };
    c.rankings = compare::rank::rank(&c.columns);
    c.notes = notes(args, &assume);
    // a table written to a file is not fitted to the terminal
    let width = if args.output_file.is_some() { None } else { super::output::width() };
    let out = match render(&c, args.format, width) {
        Ok(o) => o,
        Err(e) => return fail(e),
    };
    problems.iter().for_each(|e| stderr(report::excerpt::render(e)));
    match emit(args.output_file.as_deref(), &out) {
        Ok(()) if problems.is_empty() => 0,
        Ok(()) => 2,
        Err(e) => fail(e.into()),
    }
}

fn render(c: &Comparison, format: CompareFormat, width: Option<usize>) -> Result<String, miette::Report> {
    Ok(match format {
        CompareFormat::Table => compare::text::terminal(c, width),
        CompareFormat::Markdown => compare::text::markdown(c),
        CompareFormat::Json => compare::machine::json(c),
        CompareFormat::Csv => compare::machine::csv(c).map_err(|err| UsageError::CsvUnwritable { err })?,
        CompareFormat::Html => compare::html::page(c),
    })
}

fn notes(args: &CompareArgs, assume: &Assume) -> Vec<String> {
    let mut notes = vec![match &args.hardware {
        Some(h) => format!("hardware: the built-in table with {} over it", h.display()),
        None => "hardware: the built-in table (docs/performance-model.md gives each value's source)".to_string(),
    }];
    for (k, v) in &assume.values {
        notes.push(format!("assumed {k} = {v}"));
    }
    notes.push(
        "time: the program as scheduled: one launch overhead, then each kernel (exposed copies + max(compute, \
         DMA transfers)) and each XLA program in turn, and the waits for XLA's async copies; compute = bundles at \
         the clock (no stalls) or FLOPs at the MXU peak; ranges counted at their upper bound \
         (docs/performance-model.md)"
            .to_string(),
    );
    notes
}

/// The run's settings as `check` takes them (config, packs, selection); each compilation is linted with them.
fn settings(args: &CompareArgs) -> Settings {
    Settings {
        selection: Selection {
            rules: args.rules.clone(),
            select: args.select.clone(),
            ignore: args.ignore.clone(),
            ..Selection::default()
        },
        config: args.config.clone(),
        isolated: args.isolated,
        target: args.target.clone(),
        // the files a walk of the folder took, named again: taken as a walk takes them
        force_exclude: true,
        ..Settings::default()
    }
}

/// A compilation: its folder, the candidates read from it, and its place in the column order.
struct Group<'c> {
    dir: String,
    files: Vec<&'c Candidate>,
    version: String,
    target: Option<String>,
}

/// Candidates grouped per dump folder (as `check` groups them), in column order.
fn group<'c>(candidates: &'c [Candidate], paths: &[PathBuf]) -> Vec<Group<'c>> {
    let mut by_dir: BTreeMap<String, (usize, Vec<&Candidate>)> = BTreeMap::new();
    for c in candidates {
        let arg = paths.iter().position(|p| c.path.starts_with(p)).unwrap_or(usize::MAX);
        by_dir.entry(group_dir(&c.path.display().to_string())).or_insert((arg, Vec::new())).1.push(c);
    }
    let mut groups: Vec<Group> = by_dir
        .into_iter()
        .map(|(dir, (_, files))| {
            let (version, target) = inputs::identity(&dir);
            Group { dir, files, version, target }
        })
        .collect();
    let keys: Vec<(String, usize, String)> = groups
        .iter()
        .map(|g| {
            let arg = paths.iter().position(|p| std::path::Path::new(&g.dir).starts_with(p)).unwrap_or(usize::MAX);
            (g.dir.clone(), arg, g.target.clone().unwrap_or_default())
        })
        .collect();
    let order = inputs::order(&keys);
    let mut slots: Vec<Option<Group>> = groups.drain(..).map(Some).collect();
    order.into_iter().filter_map(|i| slots[i].take()).collect()
}

type ColumnOutcome = (Option<Column>, Vec<KernelView>, Vec<miette::Report>);

/// Lints one compilation as `check` does (the run API: its settings, packs and suppressions) and describes its
/// kernels.
fn column(
    g: &Group<'_>,
    args: &CompareArgs,
    ctx: Context<'_>,
    lint: &Settings,
    resolver: &mut Resolver<'_>,
) -> Result<ColumnOutcome, miette::Report> {
    let first = g.files.first().map(|c| c.path.clone()).unwrap_or_else(|| PathBuf::from(&g.dir));
    let profile = resolver.for_path(&first)?;
    let settings_target = resolver.all[profile].target.clone();
    let paths: Vec<PathBuf> = g.files.iter().map(|c| c.path.clone()).collect();
    let outcome = crate::lint(lint, &paths)?;
    // a version beside a manifest that does not list it was linted without its module's pack: said, not failed
    outcome.warnings.iter().for_each(|w| stderr(report::excerpt::render(w)));
    let Some(report) = outcome.compilations.into_iter().find(|r| r.files > 0) else {
        return Ok((None, Vec::new(), outcome.errors));
    };
    let mut verdicts = verdicts(&report);
    verdicts.packs = report.packs.clone();
    let target = args.target.as_deref().or(settings_target.as_deref()).or(g.target.as_deref());
    let (kernels, facts) = describe(g, target, ctx);
    let time = compare::facts::time(&facts);
    let untimed = if time.is_none() { compare::facts::why_untimed(&facts) } else { None };
    let target = g.target.clone().or(facts.target).unwrap_or_else(|| "unknown".into());
    let column = Column { dir: g.dir.clone(), version: g.version.clone(), target, verdicts, time, untimed };
    Ok((Some(column), kernels, outcome.errors))
}

fn verdicts(r: &CompilationReport) -> Verdicts {
    let mut v = Verdicts::default();
    for f in &r.findings {
        match (f.verdict, f.severity) {
            (Verdict::Inconclusive, _) => v.inconclusive += 1,
            (Verdict::Explored, _) => continue,
            (_, Severity::Error) => v.errors += 1,
            (_, Severity::Warning) => v.warnings += 1,
            _ => v.infos += 1,
        }
        let code = f.code.clone().unwrap_or_else(|| f.rule.clone());
        if !v.rules.contains(&code) {
            v.rules.push(code);
        }
    }
    v.rules.sort();
    v
}

/// The performance model's facts of a compilation and its kernels as the table shows them. The files are read and
/// parsed again here (the lint above keeps no graph): the cost is the parse of one compilation.
fn describe(g: &Group<'_>, target: Option<&str>, ctx: Context<'_>) -> (Vec<KernelView>, CompilationFacts) {
    let files: Vec<source::SourceFile> = g.files.iter().filter_map(|c| source::load(c).ok().flatten()).collect();
    let parsed: Vec<Parsed<'_>> = files.iter().filter_map(|f| parse_file(f).ok()).collect();
    let c = Compilation::new(g.dir.clone(), &parsed, target);
    let facts = perf::compilation_facts(&c, &parsed, ctx);
    (compare::facts::kernels(&c, &facts), facts)
}
