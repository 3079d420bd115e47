//! Inputs: expand the paths a user typed (files, directories, globs) into files, read them, and decide each file's
//! format from its content (never from its name: libtpu and XLA name dumps inconsistently).

pub mod names;

use crate::ir::LineIndex;
use miette::Diagnostic;
pub use names::{is_intermediate_stage, mosaic_stage};
use std::path::{Path, PathBuf};

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Hlo,
    /// MLIR text: StableHLO or a Mosaic dump (the parser decides which).
    Mlir,
    Llo,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Hlo => "HLO",
            Format::Mlir => "MLIR",
            Format::Llo => "LLO",
        }
    }
}

/// A file read into memory.
pub struct SourceFile {
    pub path: String,
    pub text: String,
    pub format: Format,
}

#[derive(Debug, thiserror::Error, Diagnostic)]
pub enum InputError {
    #[error("{path}: no such file or directory")]
    #[diagnostic(code(hlolint::input::missing))]
    Missing { path: String },
    #[error("{path}: cannot read: {reason}")]
    #[diagnostic(code(hlolint::input::unreadable))]
    Unreadable { path: String, reason: String },
    #[error("{path}: empty file")]
    #[diagnostic(code(hlolint::input::empty), help("an XLA dump is never empty; was the compile interrupted?"))]
    Empty { path: String },
    #[error("{path}:{line}:{column}: binary file (a NUL byte at offset {offset})")]
    #[diagnostic(code(hlolint::input::binary), help("hlolint reads text dumps: HLO, StableHLO/Mosaic MLIR, LLO"))]
    Binary { path: String, offset: usize, line: usize, column: usize },
    #[error("{path}:{line}:{column}: not UTF-8 text (invalid byte at offset {offset})")]
    #[diagnostic(code(hlolint::input::encoding))]
    NotUtf8 { path: String, offset: usize, line: usize, column: usize },
    #[error("{pattern}: bad glob pattern: {reason}")]
    #[diagnostic(code(hlolint::input::glob))]
    BadGlob { pattern: String, reason: String },
    #[error("{pattern}: the pattern matches no file")]
    #[diagnostic(code(hlolint::input::no_match))]
    NoMatch { pattern: String },
    #[error("{path}: not an XLA dump (no HLO, MLIR or LLO header)")]
    #[diagnostic(
        code(hlolint::input::not_a_dump),
        help(
            "hlolint reads the compiler's text dumps: HLO (`HloModule ...`), StableHLO or Mosaic MLIR (`module ...`, \
             `func.func ...`) and TPU LLO bundles; give a dump file or the folder XLA dumped into"
        )
    )]
    NotADump {
        path: String,
        #[source_code]
        src: miette::NamedSource<String>,
        /// The first word of the file, where a header would be.
        #[label("a dump starts with its header here")]
        at: miette::SourceSpan,
    },
}

impl InputError {
    /// Why a directory walk passes over this file (the error it would be if the user named the file).
    pub fn skip_reason(&self) -> &'static str {
        match self {
            InputError::Empty { .. } => "empty",
            InputError::Binary { .. } => "binary",
            InputError::NotUtf8 { .. } => "not UTF-8 text",
            InputError::NotADump { .. } => "no HLO, MLIR or LLO header",
            _ => "unreadable",
        }
    }
}

/// One file to read, and whether the user named it (an explicitly named file of an unknown format is an error;
/// inside a directory it is skipped).
pub struct Candidate {
    pub path: PathBuf,
    pub explicit: bool,
}

impl Candidate {
    /// Its size on disk (0 when unknown, or for stdin): what work is ordered and grouped by before it is read.
    pub fn bytes(&self) -> u64 {
        std::fs::metadata(&self.path).map(|m| m.len()).unwrap_or(0)
    }
}

/// The path that means standard input (`hlolint - < dump.txt`); findings name it `-`.
pub const STDIN: &str = "-";

/// Expands paths: files as they are, directories walked (sorted, so output is stable), glob patterns (`*`,
/// `?`, `[`, `{`) when the shell did not expand them (quoted, or on Windows), and `-` (stdin).
pub fn expand(paths: &[PathBuf], all_stages: bool) -> (Vec<Candidate>, Vec<InputError>) {
    expand_with(paths, all_stages, false)
}

/// [`expand`]; with `force_exclude` (`--force-exclude`, what the pre-commit hook passes) the files named on the
/// command line or matched by a glob are taken as a directory walk takes its files: one that is not a dump (by
/// content: not HLO, MLIR or LLO text; or empty, binary, not UTF-8) is skipped instead of being an error, and an
/// intermediate compiler stage is skipped unless `all_stages`. A file that is a dump and fails to parse is still
/// an error. Standard input is always read.
pub fn expand_with(paths: &[PathBuf], all_stages: bool, force_exclude: bool) -> (Vec<Candidate>, Vec<InputError>) {
    let mut out = Vec::new();
    let mut errors = Vec::new();
    for p in paths {
        let s = p.to_string_lossy();
        if s == STDIN {
            out.push(Candidate { path: p.clone(), explicit: true });
        } else if p.is_dir() {
            let walker = walkdir::WalkDir::new(p).follow_links(true).sort_by_file_name();
            // `hlolint` (the default path `.`) names files `a/b.txt`, not `./a/b.txt`.
            let strip_dot = p.as_os_str() == ".";
            for entry in walker {
                match entry {
                    Ok(e) if e.file_type().is_file() && (all_stages || !is_intermediate_stage(e.path())) => {
                        let path = match e.path().strip_prefix(".") {
                            Ok(rel) if strip_dot => rel.to_path_buf(),
                            _ => e.into_path(),
                        };
                        out.push(Candidate { path, explicit: false })
                    }
                    Ok(_) => {}
                    Err(e) => errors.push(InputError::Unreadable {
                        path: e.path().map(|p| p.display().to_string()).unwrap_or_else(|| s.to_string()),
                        reason: e.to_string(),
                    }),
                }
            }
        } else if p.exists() {
            push_file(&mut out, p.clone(), all_stages, force_exclude);
        } else if s.contains(['*', '?', '[', '{']) {
            match glob_files(&s) {
                Ok(files) if files.is_empty() => errors.push(InputError::NoMatch { pattern: s.to_string() }),
                Ok(files) => files.into_iter().for_each(|path| push_file(&mut out, path, all_stages, force_exclude)),
                Err(reason) => errors.push(InputError::BadGlob { pattern: s.to_string(), reason }),
            }
        } else {
            errors.push(InputError::Missing { path: s.to_string() });
        }
    }
    // A file reached twice (named, and inside a named directory) is read once.
    let mut seen = std::collections::HashSet::new();
    out.retain(|c| seen.insert(c.path.canonicalize().unwrap_or_else(|_| c.path.clone())));
    (out, errors)
}

/// A file the user named, and for a driver-made `<version>_hlo.txt` the final-stage dumps of that version beside it
/// (`hlolint compilation_output/*_hlo.txt` then sees every layer of each version). `force_exclude`: the file is
/// taken as a directory walk would take it (see [`expand_with`]).
fn push_file(out: &mut Vec<Candidate>, path: PathBuf, all_stages: bool, force_exclude: bool) {
    if force_exclude && !all_stages && is_intermediate_stage(&path) {
        return;
    }
    let sibling = sibling_dump_dir(&path);
    out.push(Candidate { path, explicit: !force_exclude });
    if let Some(dir) = sibling {
        for e in walkdir::WalkDir::new(dir).sort_by_file_name().into_iter().flatten() {
            if e.file_type().is_file() && (all_stages || !is_intermediate_stage(e.path())) {
                out.push(Candidate { path: e.into_path(), explicit: false });
            }
        }
    }
}

fn glob_files(pattern: &str) -> Result<Vec<PathBuf>, String> {
    let glob = globset::GlobBuilder::new(pattern).literal_separator(true).build().map_err(|e| e.to_string())?;
    let matcher = glob.compile_matcher();
    // Walk from the longest directory prefix without glob characters.
    let prefix: PathBuf = Path::new(pattern)
        .components()
        .take_while(|c| !c.as_os_str().to_string_lossy().contains(['*', '?', '[', '{']))
        .collect();
    let root = if prefix.as_os_str().is_empty() { PathBuf::from(".") } else { prefix };
    let strip_dot = !pattern.starts_with("./") && root == Path::new(".");
    let mut files = Vec::new();
    for e in walkdir::WalkDir::new(&root).sort_by_file_name().into_iter().flatten() {
        if !e.file_type().is_file() {
            continue;
        }
        let p = e.path();
        let rel = if strip_dot { p.strip_prefix(".").unwrap_or(p) } else { p };
        if matcher.is_match(rel) {
            files.push(rel.to_path_buf());
        }
    }
    Ok(files)
}

/// The dump directory of a driver-made `<version>[@<target>]_hlo.txt`: the sibling folder `<version>@<target>/`
/// holding that version's `hlo/`, `mosaic/` and `llo/` dumps (with one target, `v3_hlo.txt` sits beside
/// `v3@tpu7x/`).
pub fn sibling_dump_dir(file: &Path) -> Option<PathBuf> {
    let name = file.file_name()?.to_str()?;
    let stem = name.strip_suffix(names::DRIVER_HLO_SUFFIX)?;
    let dir = file.with_file_name(stem);
    if dir.is_dir() {
        return Some(dir);
    }
    let parent = match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let prefix = format!("{stem}@");
    let mut found = std::fs::read_dir(parent)
        .ok()?
        .flatten()
        .filter(|e| e.file_name().to_str().is_some_and(|n| n.starts_with(&prefix)) && e.path().is_dir())
        .map(|e| e.path());
    let first = found.next()?;
    // Several targets of one version are named `<version>@<target>_hlo.txt` each; a bare name is ambiguous then.
    found.next().is_none().then(|| {
        if file.parent().is_some_and(|p| !p.as_os_str().is_empty()) {
            first
        } else {
            PathBuf::from(first.file_name().unwrap_or_default())
        }
    })
}

/// Reads a candidate and sniffs its format. `Ok(None)`: a file inside a walked directory that is not a dump.
pub fn load(c: &Candidate) -> Result<Option<SourceFile>, InputError> {
    match read(c)? {
        Read::File(f) => Ok(Some(f)),
        Read::Skipped(_) => Ok(None),
    }
}

/// What reading a candidate gave: a dump, or a file a walk passes over and why.
pub enum Read {
    File(SourceFile),
    /// Not a dump (met on a walk, or named with `--force-exclude`): what it would be as an error.
    Skipped(InputError),
}

/// Reads a candidate and sniffs its format; a named file that is not a dump is an error, one met on a walk is
/// [`Read::Skipped`] with the reason.
pub fn read(c: &Candidate) -> Result<Read, InputError> {
    let path = c.path.display().to_string();
    let read = if path == STDIN {
        let mut b = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin().lock(), &mut b).map(|_| b)
    } else {
        // a FIFO, socket or device named as a path would block or never end: only regular files are read
        match std::fs::metadata(&c.path) {
            Ok(m) if !m.is_file() && !m.is_dir() => {
                return Err(InputError::Unreadable {
                    path,
                    reason: "not a regular file (a FIFO, socket or device); give dumps as files, or `-` for stdin"
                        .to_string(),
                });
            }
            _ => std::fs::read(&c.path),
        }
    };
    let bytes = read.map_err(|e| InputError::Unreadable { path: path.clone(), reason: e.to_string() })?;
    let skip_or = |e: InputError| if c.explicit { Err(e) } else { Ok(Read::Skipped(e)) };
    if bytes.is_empty() {
        return skip_or(InputError::Empty { path });
    }
    if let Some(offset) = bytes.iter().take(8192).position(|&b| b == 0) {
        let (line, column) = line_column(&bytes, offset);
        return skip_or(InputError::Binary { path, offset, line, column });
    }
    let text = match String::from_utf8(bytes) {
        // a UTF-8 byte order mark (editors on Windows write one) is not part of any dump's grammar
        Ok(t) if t.starts_with('\u{feff}') => t['\u{feff}'.len_utf8()..].to_string(),
        Ok(t) => t,
        Err(e) => {
            let offset = e.utf8_error().valid_up_to();
            let (line, column) = line_column(e.as_bytes(), offset);
            return skip_or(InputError::NotUtf8 { path, offset, line, column });
        }
    };
    match sniff(&text) {
        Some(format) => Ok(Read::File(SourceFile { path, text, format })),
        // Not parsed as some format (a syntax error at `these` of a page of notes says nothing useful): the first
        // word is where a header would be.
        None => {
            let start = text.len() - text.trim_start().len();
            let len = text[start..].find(char::is_whitespace).unwrap_or(text.len() - start);
            let at = miette::SourceSpan::from((start, len));
            skip_or(InputError::NotADump { src: miette::NamedSource::new(path.clone(), text), path, at })
        }
    }
}

/// 1-based line and column (in characters) of byte `offset` of an input being checked (only the text before it is
/// indexed: the rest may be a gigabyte of binary).
fn line_column(bytes: &[u8], offset: usize) -> (usize, usize) {
    let before = &bytes[..offset.min(bytes.len())];
    LineIndex::new(before).line_col_bytes(before, offset)
}

/// Decides the format from the first meaningful text.
pub fn sniff(text: &str) -> Option<Format> {
    if crate::parse::hlo::looks_like_hlo(text) {
        Some(Format::Hlo)
    } else if crate::parse::llo::sniff_llo(text).is_some() {
        Some(Format::Llo)
    } else if crate::parse::mlir::looks_like_mlir(text) {
        Some(Format::Mlir)
    } else {
        None
    }
}

/// The cases a `tests:` entry names: a file is one case; a directory holds cases, one per file or
/// subdirectory (a subdirectory is the dump folder of one compilation). Missing paths are kept (reported as errors).
pub fn cases_in(p: &std::path::Path) -> Vec<std::path::PathBuf> {
    if !p.is_dir() {
        return vec![p.to_path_buf()];
    }
    let mut out: Vec<std::path::PathBuf> = std::fs::read_dir(p)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.path())
                // a case's expected findings (`hlolint test --update`) are beside it, not a case
                .filter(|x| {
                    x.file_name().is_none_or(|n| n != "README.md" && !n.to_string_lossy().ends_with(".findings"))
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}
