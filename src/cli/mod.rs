//! Command line: `hlolint [check] PATH...` (the default), `hlolint graph PATH...`.
//!
//! Exit codes (as ruff and friends): 0 clean, 1 findings, 2 usage or input errors. Input errors are per file:
//! the other files are still processed.

pub(crate) mod check;

use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "hlolint",
    version,
    about = "Lint XLA compiler output: HLO, StableHLO, Mosaic MLIR and TPU LLO dumps",
    args_conflicts_with_subcommands = true,
    after_help = "Exit status: 0 clean, 1 findings, 2 usage or input error."
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
    /// In directories, also read intermediate compiler stages (every Mosaic pass, every LLO stage, HLO pass dumps),
    /// not only the final ones rules read.
    #[arg(long)]
    pub all_stages: bool,
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
