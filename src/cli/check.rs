//! `hlolint check`: a lint run (`crate::lint`) written in the chosen format, and `hlolint graph`.

use super::output::{emit, stderr};
use super::{CheckArgs, GraphArgs, OutputFormat};
use crate::ir::print::graph_dump;
use crate::report::{self, WriteOptions};
use crate::settings::{Resolver, Settings};
use crate::source::{self, Format};
use std::path::PathBuf;

pub fn check(args: &CheckArgs) -> i32 {
    let default_paths = [PathBuf::from(".")];
    let paths: &[PathBuf] = if args.paths.is_empty() { &default_paths } else { &args.paths };
    let settings = args.settings();
    if args.lint.settings.show_settings {
        return show_settings(args, paths, &mut Resolver::new(&settings));
    }
    if args.show_files {
        return show_files(args, &settings, paths);
    }
    let mut outcome = match crate::lint(&settings, paths) {
        Ok(o) => o,
        Err(e) => {
            stderr(report::excerpt::render(&e));
            return 2;
        }
    };
    if outcome.nothing_found && outcome.errors.is_empty() {
        // a folder named like a subcommand was read as a path: say how to run the command
        for p in paths.iter().filter_map(|p| p.to_str()).filter(|p| super::SUBCOMMANDS.contains(p)) {
            outcome.notices.push(format!(
                "note: `{p}` names a folder here, so it was read as a path; run `hlolint {p}` from another folder for \
                 the command"
            ));
        }
    }
    if args.add_noqa {
        return add_noqa(&outcome);
    }
    let opts = WriteOptions { summary: args.summary, quiet: args.quiet, statistics: args.lint.statistics };
    let written = report::write(args.format, &outcome, opts);
    let emitted = emit(args.output_file.as_deref(), &written.report);
    for line in written.stderr {
        stderr(line);
    }
    if let Err(e) = emitted {
        stderr(format!("{:?}", miette::Report::new(e)));
        return 2;
    }
    for notice in &outcome.notices {
        stderr(notice);
    }
    outcome.exit_code()
}

/// `--show-files`: each compilation's folder, then the files of it a run would read (after excludes), indented;
/// nothing is read.
fn show_files(args: &CheckArgs, settings: &Settings, paths: &[PathBuf]) -> i32 {
    let (groups, errors) = match crate::run::files(settings, paths) {
        Ok(g) => g,
        Err(e) => {
            stderr(report::excerpt::render(&e));
            return 2;
        }
    };
    let mut out = String::new();
    for (dir, files) in &groups {
        out.push_str(&format!("{}\n", if dir.is_empty() { "." } else { dir }));
        for f in files {
            out.push_str(&format!("  {}\n", f.display()));
        }
    }
    for e in &errors {
        stderr(report::excerpt::render(e));
    }
    super::output::emit_or(args.output_file.as_deref(), &out, if errors.is_empty() { 0 } else { 2 })
}

/// `--add-noqa`: an ignore comment for each finding on the Python line it names (codes merged into a comment
/// already there); findings without a Python line, or whose file is not found here, are counted and left.
fn add_noqa(outcome: &report::RunOutcome) -> i32 {
    use std::collections::{BTreeMap, BTreeSet};
    let mut wanted: BTreeMap<&PathBuf, BTreeMap<u32, BTreeSet<String>>> = BTreeMap::new();
    let mut without = 0;
    for f in outcome.findings() {
        match f.python.as_ref().and_then(|py| Some((outcome.python_files.get(&py.file)?, py.line))) {
            Some((file, line)) if line > 0 => {
                let code = f.code.clone().unwrap_or_else(|| f.rule.clone());
                wanted.entry(file).or_default().entry(line).or_default().insert(code);
            }
            _ => without += 1,
        }
    }
    let (mut added, mut files) = (0, 0);
    for (file, lines) in &wanted {
        let shown = crate::suppress::inline::PythonFiles::display(file, &std::env::current_dir().unwrap_or_default());
        let text = match std::fs::read_to_string(file) {
            Ok(t) => t,
            Err(e) => {
                stderr(format!("error: {shown}: cannot read: {e}"));
                return 2;
            }
        };
        let (new, changed, continued) = crate::suppress::inline::add_ignores(&text, lines);
        for l in continued {
            stderr(format!("warning: {shown}:{l}: a line continued by `\\` gets no comment; add it by hand"));
        }
        if changed > 0 {
            if let Err(e) = std::fs::write(file, new) {
                stderr(format!("error: {shown}: cannot write: {e}"));
                return 2;
            }
            added += changed;
            files += 1;
        }
    }
    for e in &outcome.errors {
        stderr(report::excerpt::render(e));
    }
    stderr(format!("added {added} ignore comment(s) in {files} file(s)"));
    if without > 0 {
        stderr(format!("{without} finding(s) name no Python line found here: left as they are"));
    }
    if outcome.errors.is_empty() && !outcome.nothing_found {
        0
    } else {
        2
    }
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
