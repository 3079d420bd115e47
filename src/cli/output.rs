//! Where a command's report goes (stdout or `--output-file`), and how color is chosen.
//!
//! A reader that closes the pipe early (`hlolint DIR | head -3`) has what it wanted: the write stops quietly and the
//! exit status is still that of the run.

use super::usage::UsageError;
use std::io::{IsTerminal, Write};
use std::path::Path;

/// `--color`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    /// Color when the report goes to a terminal (and `NO_COLOR` is not set).
    #[default]
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    /// What the miette hook is told: `None` lets it detect the terminal.
    pub fn resolve(self, output_file: Option<&Path>) -> Option<bool> {
        match self {
            ColorChoice::Always => Some(true),
            ColorChoice::Never => Some(false),
            ColorChoice::Auto if output_file.is_some() || !std::io::stdout().is_terminal() => Some(false),
            ColorChoice::Auto => None,
        }
    }
}

/// Writes `text` to `file`, or to stdout. A closed pipe is not an error.
pub fn emit(file: Option<&Path>, text: &str) -> Result<(), UsageError> {
    match file {
        Some(p) => std::fs::write(p, text).map_err(|err| UsageError::ReportUnwritable { path: p.to_path_buf(), err }),
        None => {
            let mut out = std::io::stdout().lock();
            match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(UsageError::StdoutUnwritable { err: e }),
                _ => Ok(()),
            }
        }
    }
}

/// `emit`, with a failure printed and turned into exit status 2.
pub fn emit_or(file: Option<&Path>, text: &str, code: i32) -> i32 {
    match emit(file, text) {
        Ok(()) => code,
        Err(e) => {
            eprintln!("{:?}", miette::Report::new(e));
            2
        }
    }
}

/// Prints to stderr, ignoring a closed stderr (`hlolint DIR 2>&1 | head`).
pub fn stderr(text: impl std::fmt::Display) {
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}

/// `print!` that stops quietly at a closed pipe instead of panicking.
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout().lock(), $($arg)*);
    }};
}

/// `println!` that stops quietly at a closed pipe instead of panicking.
#[macro_export]
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($arg)*);
    }};
}

/// The width reports are fitted to: `COLUMNS` when set (a script or a test fixes it), else the width of the
/// terminal stdout is; `None` when stdout is a file or pipe (which takes lines of any length).
pub fn width() -> Option<usize> {
    if let Some(n) = std::env::var("COLUMNS").ok().and_then(|c| c.trim().parse::<usize>().ok()).filter(|&n| n > 0) {
        return Some(n);
    }
    terminal_size::terminal_size_of(std::io::stdout()).map(|(w, _)| usize::from(w.0))
}
