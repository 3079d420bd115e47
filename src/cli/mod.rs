//! Command line: `hlolint [check] PATH...` (the default), `hlolint rules`, `hlolint explain RULE`,
//! `hlolint test [PACK...]`, `hlolint graph PATH...`, `hlolint compile ...`.
//!
//! Exit codes (as ruff and friends): 0 clean, 1 findings, 2 usage or input errors. Input errors are per file:
//! the other files are still processed.

pub(crate) mod check;
pub mod config;
pub(crate) mod rules_cmd;

use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "hlolint",
    version,
    about = "Lint XLA compiler output: HLO, StableHLO, Mosaic MLIR and TPU LLO dumps",
    args_conflicts_with_subcommands = true,
    after_help = "Exit status: 0 clean (or only info findings), 1 error or warning findings, 2 usage, input or rule-pack error."
)]
pub struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    check: CheckArgs,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Parse and check files and directories (the default command).
    Check(CheckArgs),
    /// Print the parsed instruction graph as JSON (functions, ops, opcodes, operand edges, callees).
    Graph(GraphArgs),
    /// List rule packs and their rules (or the op families rules may name, with --families).
    Rules(rules_cmd::RulesArgs),
    /// Print a rule's documentation (by id or code), or an analysis's.
    Explain(rules_cmd::ExplainArgs),
    /// Run every rule of the given packs against its `tests: {valid, invalid}` cases.
    Test(rules_cmd::TestArgs),
    /// Compile a JAX/Pallas kernel module for TPU targets without a TPU, collect the dumps per kernel version,
    /// and lint them.
    Compile(crate::driver::CompileArgs),
}

#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// Files, directories (walked recursively) or glob patterns.
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Human)]
    pub format: OutputFormat,
    /// Print only errors and findings.
    #[arg(long, short)]
    pub quiet: bool,
    /// Also say what each analysis explored per kernel (grid steps, paths, op evaluations) and why it stopped.
    #[arg(long, short)]
    pub verbose: bool,
    /// In directories, also read intermediate compiler stages (every Mosaic pass, every LLO stage, HLO pass dumps),
    /// not only the final ones rules read.
    #[arg(long)]
    pub all_stages: bool,
    /// The TPU generation the dumps were compiled for (tpu7x, v6e, v5e, v5p, v4, cpu); default: detected from the
    /// driver's manifest, the `<version>@<target>` folder name, or the LLO dumps.
    #[arg(long)]
    pub target: Option<String>,
    /// Also print what each file holds (computations, opcodes, kernels) and how the layers link.
    #[arg(long)]
    pub summary: bool,
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
    /// Not these rules (ids, codes or code prefixes; comma lists).
    #[arg(long, value_name = "RULE")]
    pub ignore: Vec<String>,
    /// Override a rule's severity: `RULE=error|warning|info|off` (repeatable).
    #[arg(long, value_name = "RULE=LEVEL")]
    pub severity: Vec<String>,
    /// Print the number of findings per rule.
    #[arg(long)]
    pub statistics: bool,
    /// Exit 0 even when there are findings (errors in the input still exit 2).
    #[arg(long)]
    pub exit_zero: bool,
    /// The configuration file (default: the closest `.hlolint.toml`, `hlolint.toml` or `pyproject.toml` with
    /// `[tool.hlolint]`).
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Ignore configuration files.
    #[arg(long)]
    pub isolated: bool,
}

#[derive(Debug, clap::Args)]
pub struct GraphArgs {
    /// Files to dump (HLO, MLIR, LLO bundles).
    #[arg(value_name = "PATH", required = true)]
    pub paths: Vec<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    Human,
    Json,
    Sarif,
    Github,
}

/// Parses arguments, runs, and returns the process exit code.
pub fn run() -> i32 {
    install_miette_hook();
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    match cli.command {
        Some(Command::Check(args)) => check::check(&args),
        Some(Command::Graph(args)) => check::graph(&args),
        Some(Command::Compile(args)) => crate::driver::compile(&args),
        Some(Command::Rules(args)) => rules_cmd::rules(&args),
        Some(Command::Explain(args)) => rules_cmd::explain(&args),
        Some(Command::Test(args)) => rules_cmd::test(&args),
        None if cli.check.paths.is_empty() => {
            eprintln!("error: no input: give files, directories or glob patterns (see `hlolint --help`)");
            2
        }
        None => check::check(&cli.check),
    }
}

fn install_miette_hook() {
    let _ = miette::set_hook(Box::new(|_| {
        Box::new(miette::MietteHandlerOpts::new().terminal_links(false).context_lines(1).build())
    }));
}
