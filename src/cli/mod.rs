//! Command line: `hlolint [check] [PATH...]` (the default; `.` when no path is given, `-` for stdin),
//! `hlolint compare PATH...`, `hlolint rules`, `hlolint explain RULE`, `hlolint test [PACK...]`, `hlolint graph PATH...`,
//! `hlolint compile ...`, `hlolint completions SHELL`.
//!
//! A first argument that names an existing file or folder is a path, never a subcommand: `hlolint test` in a folder
//! holding `test/` lints it (`hlolint check test` says so explicitly everywhere).
//!
//! Exit codes (as ruff and friends): 0 clean, 1 findings, 2 usage or input errors. Input errors are per file:
//! the other files are still processed.

pub(crate) mod check;
pub(crate) mod compare;
mod compile_cmd;
pub mod output;
pub(crate) mod rules_cmd;
mod rules_test;
pub mod usage;

use crate::settings::{Resolver, Selection, Settings};
use clap::{CommandFactory, Parser, Subcommand};
use output::ColorChoice;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

#[derive(Debug, Parser)]
#[command(
    name = "hlolint",
    version,
    about = "Lint XLA compiler output: HLO, StableHLO, Mosaic MLIR and TPU LLO dumps",
    args_conflicts_with_subcommands = true,
    // `--output-format concise --output-format json`: the last wins, so `args:` in a pre-commit config replaces the
    // hook's own format
    args_override_self = true,
    after_help = "Exit status: 0 clean (or only info findings), 1 error or warning findings, 2 usage, input or rule-pack error."
)]
pub struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    check: CheckArgs,
    /// Color in diagnostics: `auto` colors a terminal (unless `NO_COLOR` is set), not a pipe or a file.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, global = true)]
    color: ColorChoice,
    /// Worker threads that read, parse and lint (default: one per core, or `RAYON_NUM_THREADS`). The report is
    /// the same for any number.
    #[arg(long, short = 'j', value_name = "N", global = true, value_parser = clap::value_parser!(u16).range(1..))]
    threads: Option<u16>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Parse and check files and directories (the default command).
    #[command(args_override_self = true)]
    Check(CheckArgs),
    /// Compilations side by side: one column per `<version>@<target>`, rows per kernel (matmul formats, FLOPs,
    /// bytes, memory footprint, DMA, bundles, predicted time), rule verdicts, versions ranked per target.
    Compare(compare::CompareArgs),
    /// Print the parsed instruction graph as JSON (functions, ops, opcodes, operand edges, callees).
    Graph(GraphArgs),
    /// List rule packs and their rules (or the op families rules may name, with --families).
    Rules(rules_cmd::RulesArgs),
    /// Print a rule's documentation (by id or code), or an analysis's (`hlolint rule` is the same, as in ruff).
    #[command(visible_alias = "rule")]
    Explain(rules_cmd::ExplainArgs),
    /// Run every rule of the given packs against its `tests: {valid, invalid}` cases.
    Test(rules_cmd::TestArgs),
    /// Compile a JAX/Pallas kernel module for TPU targets without a TPU, collect the dumps per kernel version,
    /// and lint them.
    Compile(compile_cmd::CompileCommand),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell), e.g.
    /// `hlolint completions bash > ~/.local/share/bash-completion/completions/hlolint`.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

impl Command {
    /// The name the user typed for it.
    fn name(&self) -> &'static str {
        match self {
            Command::Check(_) => "check",
            Command::Compare(_) => "compare",
            Command::Graph(_) => "graph",
            Command::Rules(_) => "rules",
            Command::Explain(_) => "explain",
            Command::Test(_) => "test",
            Command::Compile(_) => "compile",
            Command::Completions { .. } => "completions",
        }
    }
}

/// The subcommands' names and aliases: a first word that names one and an existing path is read as a path; one
/// that names neither but is close to a name is a mistyped subcommand.
pub(crate) const SUBCOMMANDS: [&str; 9] =
    ["check", "compare", "graph", "rules", "rule", "explain", "test", "compile", "completions"];

#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// Files, directories (walked recursively), glob patterns, or `-` for stdin (default: `.`).
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Output format (`--output-format` as in ruff; default from `HLOLINT_OUTPUT_FORMAT`, else human).
    #[arg(long, visible_alias = "output-format", env = "HLOLINT_OUTPUT_FORMAT", value_enum,
          default_value_t = OutputFormat::Human)]
    pub format: OutputFormat,
    /// Write the report to this file instead of stdout (errors still go to stderr).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output_file: Option<PathBuf>,
    /// Print only the findings (and errors): no line per compilation, no tally.
    #[arg(long, short)]
    pub quiet: bool,
    /// Also say what each analysis explored per kernel (grid steps, paths, op evaluations) and why it stopped.
    #[arg(long, short)]
    pub verbose: bool,
    /// In directories, also read intermediate compiler stages (every Mosaic pass, every LLO stage, HLO pass dumps),
    /// not only the final ones rules read.
    #[arg(long)]
    pub all_stages: bool,
    /// The TPU generation the dumps were compiled for (the hardware table's generations, or cpu); default:
    /// detected from the driver's manifest, the `<version>@<target>` folder name, or the LLO dumps.
    #[arg(long, help = target_help())]
    pub target: Option<String>,
    /// Also print what each file holds (computations, opcodes, kernels) and how the layers link.
    #[arg(long)]
    pub summary: bool,
    /// Take the files named on the command line as files found in a directory: the config's `exclude` globs apply
    /// to them, and those that are not dumps (by content: README, manifest.json, XLA's memory-usage reports, ...) or
    /// are intermediate compiler stages are skipped, not errors (as ruff's `--force-exclude`; the pre-commit hook
    /// passes it).
    #[arg(long)]
    pub force_exclude: bool,
    /// Print the files that would be read, per compilation, and exit (nothing is read or linted).
    #[arg(long)]
    pub show_files: bool,
    /// Write `# hlolint: ignore[CODE]` on the Python line of each finding (merged into an ignore comment already
    /// there), then exit; findings without a Python line are left as they are.
    #[arg(long)]
    pub add_noqa: bool,
    #[command(flatten)]
    pub lint: LintArgs,
}

/// Which rules run and how their findings count.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct LintArgs {
    /// Rule packs: built-in names (core, v1-auto, v2-dma, v3-smem) or paths to YAML packs; repeatable, comma lists;
    /// `none` runs no rule.
    /// (Default: the config file's `rules`, else `core`.)
    #[arg(long, short = 'r', value_name = "PACK")]
    pub rules: Vec<String>,
    /// Only these rules (ids, codes or code prefixes; comma lists).
    #[arg(long, value_name = "RULE")]
    pub select: Vec<String>,
    /// These rules too, on top of `--select` or the config's `select`: also rules of built-in packs the run's packs
    /// do not hold (`--extend-select MO021` with `core`).
    #[arg(long, value_name = "RULE")]
    pub extend_select: Vec<String>,
    /// Not these rules (ids, codes or code prefixes; comma lists).
    #[arg(long, value_name = "RULE")]
    pub ignore: Vec<String>,
    /// Override a rule's severity: `RULE=error|warning|info|off` (repeatable).
    #[arg(long, value_name = "RULE=LEVEL")]
    pub severity: Vec<String>,
    /// Also print the number of findings per rule (a table; in JSON a `statistics` array, in SARIF the run's
    /// `properties.statistics`; GitLab and JUnit reports get the table on stderr).
    #[arg(long)]
    pub statistics: bool,
    /// Exit 0 even when there are findings (errors in the input still exit 2).
    #[arg(long)]
    pub exit_zero: bool,
    /// The configuration file (default: the closest `.hlolint.toml`, `hlolint.toml` or `pyproject.toml` with
    /// `[tool.hlolint]`), or a `KEY = VALUE` setting in TOML that beats the file's (`--config "target = 'v6e'"`);
    /// repeatable.
    #[arg(long, value_name = "PATH|KEY=VALUE")]
    pub config: Vec<String>,
    /// Ignore configuration files.
    #[arg(long)]
    pub isolated: bool,
    #[command(flatten)]
    pub settings: SettingsArgs,
}

// Settings and suppressions (docs/configuration.md, docs/suppressions.md).

/// Baselines, and the resolved settings.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct SettingsArgs {
    /// Hide the findings whose fingerprint is in this baseline file (default: the config's `baseline`); the
    /// summary says how many.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Write the run's findings (those not suppressed by a comment or the config) to a baseline file; they are
    /// then reported as baselined.
    #[arg(long, value_name = "FILE")]
    pub write_baseline: Option<PathBuf>,
    /// Print the settings each path is linted with (configuration file, packs, excludes, ignores, baseline) and
    /// exit; as JSON with `--format json`.
    #[arg(long)]
    pub show_settings: bool,
}

/// The configuration `rules`, `explain` and `test` take their packs from.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ConfigArgs {
    /// The configuration file (default: the closest `.hlolint.toml`, `hlolint.toml` or `pyproject.toml` with
    /// `[tool.hlolint]`, from the current directory upward), or a `KEY = VALUE` setting; repeatable.
    #[arg(long, value_name = "PATH|KEY=VALUE")]
    pub config: Vec<String>,
    /// Ignore configuration files.
    #[arg(long)]
    pub isolated: bool,
}

impl LintArgs {
    /// The library's settings these options give (what to read and how to report is `CheckArgs`'s).
    pub fn settings(&self) -> Settings {
        Settings {
            selection: Selection {
                rules: self.rules.clone(),
                select: self.select.clone(),
                extend_select: self.extend_select.clone(),
                ignore: self.ignore.clone(),
                severity: self.severity.clone(),
            },
            config: self.config.clone(),
            isolated: self.isolated,
            baseline: self.settings.baseline.clone(),
            write_baseline: self.settings.write_baseline.clone(),
            exit_zero: self.exit_zero,
            ..Settings::default()
        }
    }
}

impl CheckArgs {
    /// The library's settings for this check: the lint options, what to read, and what the report shows.
    pub fn settings(&self) -> Settings {
        Settings {
            target: self.target.clone(),
            all_stages: self.all_stages,
            force_exclude: self.force_exclude,
            verbose: self.verbose,
            // the performance model's facts are in the JSON summary only
            perf: self.summary && self.format == OutputFormat::Json,
            // JSON always holds each file's summary
            summaries: self.summary || self.format == OutputFormat::Json,
            ..self.lint.settings()
        }
    }
}

impl ConfigArgs {
    /// The packs the configuration names (paths resolved against its folder); empty without one.
    pub fn packs(&self) -> Result<Vec<String>, miette::Report> {
        let settings = Settings { config: self.config.clone(), isolated: self.isolated, ..Settings::default() };
        let mut r = Resolver::new(&settings);
        let s = r.here()?;
        Ok(if s.explicit { s.selection.rules.clone() } else { Vec::new() })
    }
}

#[derive(Debug, clap::Args)]
pub struct GraphArgs {
    /// Files to dump (HLO, MLIR, LLO bundles).
    #[arg(value_name = "PATH", required = true)]
    pub paths: Vec<PathBuf>,
}

/// The report's format (`--format`): the report writers' own.
pub use crate::report::Format as OutputFormat;

/// Parses arguments, runs, and returns the process exit code.
pub fn run() -> i32 {
    run_from(std::env::args_os().collect())
}

/// `run` with the given arguments (the first is the program name).
pub fn run_from(args: Vec<OsString>) -> i32 {
    let cli = match parse(args) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    let output_file = match &cli.command {
        Some(Command::Check(a)) => a.output_file.as_deref(),
        Some(Command::Compare(a)) => a.output_file.as_deref(),
        None => cli.check.output_file.as_deref(),
        _ => None,
    };
    install_miette_hook(cli.color.resolve(output_file));
    match cli.threads {
        Some(n) => match rayon::ThreadPoolBuilder::new().num_threads(n.into()).build() {
            Ok(pool) => pool.install(|| dispatch(cli)),
            Err(e) => {
                eprintln!("error: cannot start {n} threads: {e}");
                2
            }
        },
        None => dispatch(cli),
    }
}

/// Runs the command the line names.
fn dispatch(cli: Cli) -> i32 {
    match cli.command {
        Some(Command::Check(args)) => check::check(&args),
        Some(Command::Compare(args)) => compare::compare(&args),
        Some(Command::Graph(args)) => check::graph(&args),
        Some(Command::Compile(args)) => compile_cmd::compile(&args),
        Some(Command::Rules(args)) => rules_cmd::rules(&args),
        Some(Command::Explain(args)) => rules_cmd::explain(&args),
        Some(Command::Test(args)) => rules_cmd::test(&args),
        Some(Command::Completions { shell }) => {
            let mut buf = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "hlolint", &mut buf);
            output::emit_or(None, &String::from_utf8_lossy(&buf), 0)
        }
        None => check::check(&cli.check),
    }
}

/// Parses the command line; a subcommand name that is also an existing file or folder is taken as a path (the
/// line is read again as `hlolint check ...`).
fn parse(args: Vec<OsString>) -> Result<Cli, clap::Error> {
    let as_check = |args: &[OsString]| {
        let mut a = args.to_vec();
        a.insert(1.min(a.len()), "check".into());
        Cli::try_parse_from(a)
    };
    let names_a_path = |name: &str| args.iter().skip(1).any(|a| a.to_str() == Some(name)) && Path::new(name).exists();
    match Cli::try_parse_from(&args) {
        // `hlolint rulez`: no such path, and close to a subcommand
        Ok(cli) if cli.command.is_none() => match cli.check.paths.first().and_then(|p| mistyped_subcommand(p)) {
            Some(e) => Err(e),
            None => Ok(cli),
        },
        // `hlolint rules --json` where `rules/` exists: `check` takes no `--json`, so it is the subcommand.
        Ok(cli) => match &cli.command {
            Some(c) if c.name() != "check" && names_a_path(c.name()) => as_check(&args).or(Ok(cli)),
            _ => Ok(cli),
        },
        Err(e) => {
            // `hlolint rulez --json`: the word first on the line
            if let Some(e) = args.get(1).and_then(|a| mistyped_subcommand(Path::new(a))) {
                return Err(e);
            }
            // `hlolint test --format json` with a folder `test`: the `test` subcommand rejects `--format`.
            if SUBCOMMANDS.iter().any(|n| names_a_path(n)) {
                if let Ok(cli) = as_check(&args) {
                    return Ok(cli);
                }
            }
            Err(e)
        }
    }
}

/// `hlolint rulez`: a first path that is no file or folder here, reads as a word and is close to a subcommand is a
/// mistyped command, not a missing file (`hlolint rules.txt`, `hlolint out/` or a glob stay paths).
fn mistyped_subcommand(first: &Path) -> Option<clap::Error> {
    let word = first.to_str()?;
    let wordlike = !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !wordlike || word.starts_with('-') || SUBCOMMANDS.contains(&word) || first.exists() {
        return None;
    }
    let near = crate::suggest::closest(word, SUBCOMMANDS.iter().copied())?;
    Some(Cli::command().error(
        clap::error::ErrorKind::InvalidSubcommand,
        format!(
            "unrecognized subcommand `{word}`, and no file or folder `{word}` here\n\n  tip: did you mean `{near}`?"
        ),
    ))
}

/// Diagnostics with one line of context, no terminal links, colored as `--color` says (`None`: as miette detects).
fn install_miette_hook(color: Option<bool>) {
    let _ = miette::set_hook(Box::new(move |_| {
        // (miette wraps messages to the terminal's width itself; a pipe gets 80 columns)
        let mut opts = miette::MietteHandlerOpts::new().terminal_links(false).context_lines(1);
        if let Some(c) = color {
            opts = opts.color(c);
        }
        Box::new(opts.build())
    }));
}

/// `--target`'s help, naming the generations of the hardware table (`lint::target::GENERATIONS`).
fn target_help() -> String {
    let names: Vec<&str> = crate::lint::target::GENERATIONS.iter().map(|g| g.name).collect();
    format!(
        "The TPU generation the dumps were compiled for ({}); default: detected from the driver's manifest, the \
         `<version>@<target>` folder name, or the LLO dumps",
        names.join(", ")
    )
}
