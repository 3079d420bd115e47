//! What a lint run yielded, whatever prints it: the compilations with their findings, the files read and what
//! they hold, the errors met on the way, and the exit code that follows.

use super::{suppressed, CompilationReport, Texts};
use crate::rules::engine::Finding;
use crate::rules::{Rule, Severity};
use crate::summary::FileSummary;

/// One run of `hlolint check` (or of `hlolint compile`'s lint): the report writers' only input.
#[derive(Default)]
pub struct RunOutcome {
    /// The compilations that had a parsed file, in dump-folder order, findings after suppressions.
    pub compilations: Vec<CompilationReport>,
    /// Every parsed file, in order.
    pub parsed: Vec<String>,
    /// Every parsed file and what it holds (`--summary`, JSON's `files` and `linked`), when the run was asked for
    /// them (the run's request says whether); empty otherwise.
    pub files: Vec<(String, FileSummary)>,
    /// Input, syntax and per-version pack errors (the other files were still linted).
    pub errors: Vec<miette::Report>,
    /// The texts of the files findings point into.
    pub texts: Texts,
    /// The rules of the run's packs (per settings; a rule may appear once per settings).
    pub rules: Vec<Rule>,
    /// The rules of the packs kernel modules name for their versions (SARIF's catalog lists them too).
    pub version_rules: Vec<Rule>,
    /// Diagnostics about the inputs that do not fail the run (a dump folder its driver manifest does not list).
    pub warnings: Vec<miette::Report>,
    /// Warnings and errors about the inputs as a whole (a named folder with no dump), for stderr.
    pub notices: Vec<String>,
    /// The Python files findings name, as reports name them → where they are here (`--add-noqa` writes there).
    pub python_files: std::collections::BTreeMap<String, std::path::PathBuf>,
    /// Every named path was a folder and none held a dump: an input error.
    pub nothing_found: bool,
    /// `--exit-zero`: findings do not fail the run.
    pub exit_zero: bool,
}

impl RunOutcome {
    /// Every finding left after suppressions, compilation by compilation.
    pub fn findings(&self) -> impl Iterator<Item = &Finding> {
        self.compilations.iter().flat_map(|r| &r.findings)
    }

    /// What suppressions hid, over the run.
    pub fn suppressed(&self) -> suppressed::Counts {
        let mut all = suppressed::Counts::default();
        self.compilations.iter().for_each(|r| all.merge(&r.suppressed));
        all
    }

    /// As ruff: 2 when the input had errors (or held no dump), 1 for error or warning findings (unless
    /// `--exit-zero`), else 0 (info findings do not fail).
    pub fn exit_code(&self) -> i32 {
        if !self.errors.is_empty() || self.nothing_found {
            2
        } else if !self.exit_zero && self.findings().any(|f| f.severity >= Severity::Warning) {
            1
        } else {
            0
        }
    }
}
