//! `hlolint compile`: runs the user's JAX/Pallas kernel module for TPU targets with libtpu's compile-only client
//! (no TPU needed), through the Python helper shipped inside the binary, then lints what it dumped.
//!
//! The helper (`hlolint_compile.py`, see docs/driver.md) does the Python side: one worker process per version ×
//! target (libtpu's lock file forbids parallel compiles), dump flags, the per-version layout and manifest. It
//! reports progress as JSON lines on stdout; this module draws the progress bars, turns failed versions into
//! diagnostics that point at the user's source line, and hands the dumps to the linter the caller gives (the
//! command line's `check`).

mod failure;

use crate::report::Format;
use failure::CompileFailure;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::{BufRead, BufReader, IsTerminal};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The helper's files, embedded at build time so an installed `hlolint` needs no repository checkout, by the path
/// each is written to in the helper's folder: the entry point, its package (`hlolint_driver`, one module per part),
/// and the kernels' ref-name recorder it imports — one file with `hlolint.check`'s, which records them in the
/// user's process (python/hlolint/_kernel_names.py) —, under the name it imports.
const HELPER_FILES: &[(&str, &str)] = &[
    ("hlolint_compile.py", include_str!("hlolint_compile.py")),
    ("hlolint_driver/__init__.py", include_str!("hlolint_driver/__init__.py")),
    ("hlolint_driver/errors.py", include_str!("hlolint_driver/errors.py")),
    ("hlolint_driver/kernel_module.py", include_str!("hlolint_driver/kernel_module.py")),
    ("hlolint_driver/layout.py", include_str!("hlolint_driver/layout.py")),
    ("hlolint_driver/manifest.py", include_str!("hlolint_driver/manifest.py")),
    ("hlolint_driver/parent.py", include_str!("hlolint_driver/parent.py")),
    ("hlolint_driver/worker.py", include_str!("hlolint_driver/worker.py")),
    ("hlolint_kernel_names.py", include_str!("../../python/hlolint/_kernel_names.py")),
];

/// The targets `--target` takes: the hardware table's generations and `cpu` (`lint::target::GENERATIONS`). The
/// helper's own `TARGETS` adds each one's default topology; a test holds the two lists equal.
pub fn targets() -> impl Iterator<Item = &'static str> {
    crate::lint::target::GENERATIONS.iter().map(|g| g.name)
}

#[derive(Debug, clap::Args)]
pub struct CompileArgs {
    /// The kernel module: a package directory, a `.py` file or a dotted module name exposing `VERSIONS` and
    /// `example_args()` (see examples/README.md).
    #[arg(value_name = "SCRIPT_OR_MODULE")]
    pub module: String,
    /// Arguments for the module after `--`: it sees them as `sys.argv[1:]` when imported.
    #[arg(last = true, value_name = "ARGS")]
    pub module_args: Vec<String>,
    /// TPU generation(s) to compile for, one after another (repeatable; `FAMILY:TOPOLOGY` also works).
    #[arg(long = "target", short = 't', value_name = "TARGET", default_value = "tpu7x")]
    pub targets: Vec<String>,
    /// Output directory for the dumps, one folder per version and target.
    #[arg(long, default_value = "compilation_output")]
    pub out: PathBuf,
    /// Versions to compile, comma-separated (default: all of the module's `VERSIONS`).
    #[arg(long)]
    pub versions: Option<String>,
    /// The Python interpreter with `jax[tpu]` (default: $VIRTUAL_ENV, ./.venv, then python3 on PATH).
    #[arg(long)]
    pub python: Option<PathBuf>,
    /// Seconds per version × target before the compile is stopped (0 = no limit).
    #[arg(long, default_value_t = 600.0)]
    pub timeout: f64,
    /// Keep every compiler stage (can be gigabytes), not only the final ones rules read.
    #[arg(long)]
    pub all_stages: bool,
    /// Remove earlier results from the output directory first.
    #[arg(long)]
    pub clean: bool,
    /// Output format of the lint report.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// No progress bars; print only errors and findings.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Where the interpreter came from, said before compiling (an interpreter without jax is the usual first failure).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PythonSource {
    Flag,
    VirtualEnv,
    LocalVenv,
    Path,
}

impl PythonSource {
    pub fn describe(self) -> &'static str {
        match self {
            PythonSource::Flag => "--python",
            PythonSource::VirtualEnv => "the active virtual environment ($VIRTUAL_ENV)",
            PythonSource::LocalVenv => "./.venv in the current directory",
            PythonSource::Path => "python3 on PATH: no --python, $VIRTUAL_ENV or ./.venv",
        }
    }
}

/// The interpreter to run the helper with, and why that one.
pub fn python(explicit: Option<&Path>, virtual_env: Option<&str>, cwd: &Path) -> (PathBuf, PythonSource) {
    if let Some(p) = explicit {
        return (p.to_path_buf(), PythonSource::Flag);
    }
    if let Some(venv) = virtual_env.filter(|v| !v.is_empty()) {
        let p = Path::new(venv).join("bin/python");
        if p.exists() {
            return (p, PythonSource::VirtualEnv);
        }
    }
    let local = cwd.join(".venv/bin/python");
    if local.exists() {
        return (local, PythonSource::LocalVenv);
    }
    (PathBuf::from("python3"), PythonSource::Path)
}

/// A `--target` the compile helper does not know.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown target `{0}`; known: {known}", known = targets().collect::<Vec<_>>().join(", "))]
pub struct UnknownTarget(pub String);

/// Unknown targets are a usage error before anything runs (the helper would record them per version).
fn check_targets(targets: &[String]) -> Result<(), UnknownTarget> {
    for t in targets.iter().flat_map(|t| t.split(',')) {
        let family = t.split(':').next().unwrap_or(t);
        if !self::targets().any(|k| k == family) {
            return Err(UnknownTarget(t.to_string()));
        }
    }
    Ok(())
}

/// What one `done` event says.
#[derive(Debug)]
struct Done {
    version: Option<String>,
    target: Option<String>,
    ok: bool,
    error: Option<serde_json::Value>,
}

/// Compiles, then lints what compiled with `lint` (given the versions' `_hlo.txt` files, it returns the lint's
/// exit code). The exit code: the lint's, or 2 when a version failed to compile.
pub fn compile(args: &CompileArgs, lint: impl FnOnce(Vec<PathBuf>) -> i32) -> i32 {
    if let Err(e) = check_targets(&args.targets) {
        eprintln!("error: {e}");
        return 2;
    }
    // The helper restarts itself as a worker, so it must run from a file: a folder of our own outside OUT, so that
    // a run that compiles nothing (a module that does not import) leaves OUT as it was.
    let helper = match Helper::write() {
        Ok(h) => h,
        Err(e) => {
            eprintln!("error: cannot write the compile helper to {}: {e}", std::env::temp_dir().display());
            return 2;
        }
    };
    let cwd = std::env::current_dir().unwrap_or_default();
    let (py, source) = python(args.python.as_deref(), std::env::var("VIRTUAL_ENV").ok().as_deref(), &cwd);
    if !args.quiet {
        eprintln!("using {} ({})", py.display(), source.describe());
    }
    let mut cmd = helper_command(args, &py, &helper.path);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            eprintln!(
                "error: cannot run {}: {e}\n  help: install the Python side with scripts/setup-python.sh, or pass --python",
                py.display()
            );
            return 2;
        }
    };
    let bar = progress_bar(args.quiet);
    let (done, usage_error) = match child.stdout.take() {
        Some(out) => read_events(out, &bar),
        None => (Vec::new(), None),
    };
    bar.finish_and_clear();
    let status = child.wait();
    if let Some(m) = usage_error {
        eprintln!("error: {m}");
        return 2;
    }
    if done.is_empty() {
        eprintln!("error: the compile helper reported nothing ({})", status.map(|s| s.to_string()).unwrap_or_default());
        return 2;
    }
    // The module did not import (or has no VERSIONS): one error, and nothing was written.
    if let Some(d) = done.iter().find(|d| d.version.is_none()) {
        let mut f = CompileFailure::from_record(None, None, d.error.as_ref());
        if d.error.as_ref().and_then(|e| e.get("kind")).and_then(|k| k.as_str()) == Some("missing_dependency") {
            f.details = Some(missing_jax_help(&py, source));
        }
        eprintln!("{:?}", miette::Report::new(f));
        if !args.quiet {
            eprintln!("nothing compiled; {} left as it was", args.out.display());
        }
        return 2;
    }
    let failures: Vec<CompileFailure> = done
        .iter()
        .filter(|d| !d.ok)
        .map(|d| CompileFailure::from_record(d.version.as_deref(), d.target.as_deref(), d.error.as_ref()))
        .collect();
    for f in &failures {
        eprintln!("{:?}", miette::Report::new(f.clone()));
    }
    let ok = done.iter().filter(|d| d.ok).count();
    if !args.quiet {
        eprintln!("compiled {ok} of {} version × target(s) into {}", done.len(), args.out.display());
    }
    // Lint what compiled: each version's `_hlo.txt` brings its dump folder along.
    let hlo_files = hlo_files_of(&args.out, &done);
    let lint = if hlo_files.is_empty() { 0 } else { lint(hlo_files) };
    if failures.is_empty() {
        lint
    } else {
        2
    }
}

/// The fix for an interpreter without jax, naming where the interpreter came from.
fn missing_jax_help(py: &Path, source: PythonSource) -> String {
    format!(
        "{} ({}) cannot import jax: install jax[tpu] into it (scripts/setup-python.sh makes ./.venv with it), or \
         pass --python /path/to/venv/bin/python",
        py.display(),
        source.describe()
    )
}

/// The embedded helper written to a file of its own, removed when dropped.
struct Helper {
    dir: PathBuf,
    path: PathBuf,
}

impl Helper {
    fn write() -> std::io::Result<Helper> {
        let dir = std::env::temp_dir().join(format!("hlolint-compile-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        for (name, text) in HELPER_FILES {
            let to = dir.join(name);
            if let Some(parent) = to.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(to, text)?;
        }
        let path = dir.join("hlolint_compile.py");
        Ok(Helper { dir, path })
    }
}

impl Drop for Helper {
    fn drop(&mut self) {
        std::fs::remove_dir_all(&self.dir).ok();
    }
}

/// The helper's command line, its progress events piped.
fn helper_command(args: &CompileArgs, py: &Path, helper: &Path) -> Command {
    let mut cmd = Command::new(py);
    cmd.arg(helper)
        .args(["--module", &args.module, "--target", &args.targets.join(",")])
        .arg("--out")
        .arg(&args.out)
        .args(["--timeout", &args.timeout.to_string()])
        // a usage error comes back as an event, printed once below
        .arg("--events-only")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    if let Some(v) = &args.versions {
        cmd.args(["--versions", v]);
    }
    if args.all_stages {
        cmd.arg("--all-stages");
    }
    if !args.module_args.is_empty() {
        cmd.args(["--module-args", &serde_json::to_string(&args.module_args).unwrap_or_else(|_| "[]".into())]);
    }
    if args.clean {
        cmd.arg("--clean");
    }
    cmd
}

/// The helper's progress events (JSON lines): the versions done, and a usage error if it reported one.
fn read_events(out: impl std::io::Read, bar: &ProgressBar) -> (Vec<Done>, Option<String>) {
    let mut done = Vec::new();
    let mut usage_error = None;
    for line in BufReader::new(out).lines().map_while(Result::ok) {
        let Ok(ev) = serde_json::from_str::<serde_json::Value>(&line) else { continue };
        let field = |k: &str| ev.get(k).and_then(|v| v.as_str()).map(str::to_string);
        match ev.get("event").and_then(|e| e.as_str()) {
            Some("plan") => bar.set_length(ev.get("total").and_then(|t| t.as_u64()).unwrap_or(0)),
            Some("start") => bar.set_message(format!(
                "{}@{}",
                field("version").unwrap_or_default(),
                field("target").unwrap_or_default()
            )),
            Some("done") => {
                bar.inc(1);
                done.push(Done {
                    version: field("version"),
                    target: field("target"),
                    ok: field("status").as_deref() == Some("ok"),
                    error: ev.get("error").cloned(),
                });
            }
            Some("usage_error") => usage_error = field("message"),
            _ => {}
        }
    }
    (done, usage_error)
}

/// The `<version>[@<target>]_hlo.txt` files of the versions that compiled, as the manifest names them.
fn hlo_files_of(out: &Path, done: &[Done]) -> Vec<PathBuf> {
    let Ok(Some(manifest)) = crate::lint::Manifest::read(out) else { return Vec::new() };
    let mut files = Vec::new();
    for d in done.iter().filter(|d| d.ok) {
        let (Some(v), Some(t)) = (&d.version, &d.target) else { continue };
        if let Some(name) = manifest.result(v, t).and_then(|r| r.hlo_txt.as_deref()) {
            files.push(out.join(name));
        }
    }
    files
}

fn progress_bar(quiet: bool) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template("{spinner} compiling [{bar:30}] {pos}/{len} {msg} ({elapsed})") {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    bar
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interpreter_choice() {
        let tmp = std::env::temp_dir().join(format!("hlolint-py-{}", std::process::id()));
        std::fs::create_dir_all(tmp.join(".venv/bin")).unwrap();
        assert_eq!(python(Some(Path::new("/x/py")), None, &tmp), (PathBuf::from("/x/py"), PythonSource::Flag));
        assert_eq!(python(None, None, &tmp), (PathBuf::from("python3"), PythonSource::Path), "no .venv/bin/python yet");
        std::fs::write(tmp.join(".venv/bin/python"), "").unwrap();
        assert_eq!(python(None, None, &tmp), (tmp.join(".venv/bin/python"), PythonSource::LocalVenv));
        assert_eq!(python(None, Some("/nonexistent"), &tmp), (tmp.join(".venv/bin/python"), PythonSource::LocalVenv));
        assert_eq!(python(None, Some(tmp.join(".venv").to_str().unwrap()), &tmp).1, PythonSource::VirtualEnv);
        std::fs::remove_dir_all(&tmp).ok();
    }

    #[test]
    fn targets_are_checked_before_running() {
        assert!(check_targets(&["tpu7x".into(), "v6e,v5e".into(), "v5p:2x4x1".into()]).is_ok());
        let e = check_targets(&["tpu9".into()]).unwrap_err();
        assert_eq!(e, UnknownTarget("tpu9".into()));
        assert!(e.to_string().starts_with("unknown target `tpu9`; known: tpu7x,"), "{e}");
    }

    /// The helper's module that names targets and which dump files are kept.
    const LAYOUT: &str = include_str!("hlolint_driver/layout.py");

    /// Every Python file of the helper's folder is embedded (a module added to it and not here would be missing
    /// from an installed binary's helper).
    #[test]
    fn every_helper_module_is_embedded() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/driver");
        let mut on_disk: Vec<String> = walkdir::WalkDir::new(&dir)
            .into_iter()
            .filter_map(Result::ok)
            .filter(|e| {
                e.path().extension().is_some_and(|x| x == "py") && !e.path().to_string_lossy().contains("__pycache__")
            })
            .map(|e| e.path().strip_prefix(&dir).unwrap().to_string_lossy().replace('\\', "/"))
            .collect();
        on_disk.sort();
        let mut embedded: Vec<String> = HELPER_FILES.iter().map(|(n, _)| n.to_string()).collect();
        embedded.sort();
        assert_eq!(embedded, on_disk);
    }

    /// The helper's `TARGETS = { "tpu7x": ("tpu", "tpu7x:2x2x1"), ... }` names the same targets as the table.
    #[test]
    fn the_helper_knows_the_tables_targets() {
        let block =
            LAYOUT.split("\nTARGETS = {").nth(1).and_then(|b| b.split("\n}").next()).expect("TARGETS in the helper");
        let helper: Vec<&str> = block.lines().filter_map(|l| l.trim().strip_prefix('"')?.split('"').next()).collect();
        assert_eq!(helper, targets().collect::<Vec<_>>());
    }

    /// The string literals of the helper's `NAME = ...` assignment (a tuple or one string; comments skipped).
    fn helper_strings(name: &str) -> Vec<String> {
        let start = LAYOUT.find(&format!("\n{name} = ")).unwrap_or_else(|| panic!("{name} in the helper"));
        let rest = &LAYOUT[start + 1..];
        // a tuple up to its `)` (no kept name holds one), or one line
        let end = if rest[name.len() + 3..].starts_with('(') { rest.find(')') } else { rest.find('\n') };
        let end = end.unwrap_or(rest.len());
        let code: String = rest[..end].lines().map(|l| l.split(" #").next().unwrap_or("")).collect();
        regex::Regex::new(r#""([^"]*)""#).unwrap().captures_iter(&code).map(|c| c[1].to_string()).collect()
    }

    /// The helper's keep-lists are `source::names`' (Rust owns the list; Python cannot import it).
    #[test]
    fn the_helper_keeps_the_dumps_source_names_lists() {
        use crate::source::names;
        assert_eq!(helper_strings("LLO_PASS_REGEX"), [names::LLO_PASS_REGEX]);
        assert_eq!(helper_strings("KEEP_HLO_SUFFIXES"), names::HLO_KEPT_SUFFIXES);
        assert_eq!(helper_strings("KEEP_MOSAIC_STAGES"), names::MOSAIC_KEPT);
        assert_eq!(helper_strings("KEEP_LLO_MARKERS"), names::LLO_KEPT_MARKS);
        assert_eq!(helper_strings("MOSAIC_MARK"), [names::MOSAIC_MARK]);
        assert_eq!(helper_strings("MAIN_HLO_REGEX"), [names::DRIVER_MAIN_HLO_REGEX]);
        assert_eq!(helper_strings("HLO_TXT_SUFFIX"), [names::DRIVER_HLO_SUFFIX]);
        // what a walk reads, the driver keeps
        assert!(names::MOSAIC_READ.iter().all(|s| names::MOSAIC_KEPT.contains(s)));
        for stage in ["final_bundles", "schedule-analysis_final_bundles", "memory-space-assignment-final"] {
            assert!(names::LLO_KEPT_MARKS.iter().any(|m| stage.contains(m)), "{stage}");
        }
        // the main HLO the driver picks is one it keeps and a walk reads
        let main = regex::Regex::new(names::DRIVER_MAIN_HLO_REGEX).unwrap();
        for (name, picked) in [
            ("module_0001.jit_f.after_optimizations.txt", true),
            ("module_0001.jit_f.cpu_after_optimizations.txt", true),
            ("module_0001.jit_f.after_optimizations-memory-usage-report.txt", false),
            ("module_0001.jit_f.before_optimizations.txt", false),
        ] {
            assert_eq!(main.is_match(name), picked, "{name}");
            let kept = names::HLO_KEPT_SUFFIXES.iter().any(|s| name.ends_with(s));
            assert!(kept && !names::is_intermediate_stage(Path::new(name)), "{name}");
        }
    }

    #[test]
    fn hlo_files_follow_the_manifest() {
        let tmp = std::env::temp_dir().join(format!("hlolint-manifest-{}", std::process::id()));
        std::fs::create_dir_all(&tmp).unwrap();
        std::fs::write(
            tmp.join("manifest.json"),
            std::fs::read_to_string(
                Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/fp8_matmul_2d/tpu7x+v6e/manifest.json"),
            )
            .unwrap(),
        )
        .unwrap();
        let done = vec![
            Done { version: Some("v1".into()), target: Some("tpu7x".into()), ok: true, error: None },
            Done { version: Some("bug_bad_block".into()), target: Some("tpu7x".into()), ok: false, error: None },
        ];
        assert_eq!(hlo_files_of(&tmp, &done), vec![tmp.join("v1@tpu7x_hlo.txt")]);
        std::fs::remove_dir_all(&tmp).ok();
    }
}
