//! Inline suppressions in the user's Python source, in ruff's `# noqa` habits:
//!
//! ```python
//! out = pl.pallas_call(kernel, ...)(x)  # hlolint: ignore[MO021]
//! copy.start()                          # hlolint: ignore[MO010, XL001]
//! y = f(x)                              # hlolint: ignore
//! ```
//!
//! The comment sits on the line `Finding::python` names (the op's source line, or the `pallas_call`'s when the
//! op has none). Codes are rule codes, code prefixes or rule ids, separated by commas or spaces; a bare
//! `# hlolint: ignore` silences every rule on that line. `hlolint` and `ignore` are case-insensitive, and the
//! comment may follow other comments (`# type: ignore  # hlolint: ignore[MO021]`).
//!
//! Where the file is: dumps record the path the Python interpreter saw, often absolute and often from another
//! machine or checkout (CI, a container). [`PythonFiles::resolve`] tries, first match wins:
//! 1. the path as recorded, when it is an existing file (a relative one read from the current directory);
//! 2. a relative path joined to the configuration file's folder, then to the compilation's folder and each of
//!    its parents;
//! 3. an absolute path that does not exist here: its trailing components — the longest first, at least the file
//!    and its folder (`fp8_matmul_2d/kernels.py`) — under the configuration file's folder, then the current
//!    directory.
//!
//! A file that cannot be found or read suppresses nothing; it is never an error.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// What an ignore comment names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Codes {
    /// A bare `# hlolint: ignore`.
    All,
    /// `# hlolint: ignore[A, B]`.
    Some(Vec<String>),
}

impl Codes {
    pub fn covers(&self, f: &crate::rules::engine::Finding) -> bool {
        match self {
            Codes::All => true,
            Codes::Some(cs) => cs.iter().any(|c| super::finding_matches(c, f)),
        }
    }
}

/// The ignore comment's grammar: `#`, `hlolint:`, `ignore`, then `[codes]` or a word boundary.
fn comment_re() -> &'static regex::Regex {
    static RE: OnceLock<regex::Regex> = OnceLock::new();
    RE.get_or_init(|| regex::Regex::new(r"(?i)#\s*hlolint:\s*ignore(?:\[([^\]]*)\]|\b)").expect("ignore-comment regex"))
}

/// The ignore comments on one line of Python (several are merged), or `None`.
fn parse_line(line: &str) -> Option<Codes> {
    let re = comment_re();
    let mut out: Option<Codes> = None;
    for cap in re.captures_iter(line) {
        let codes = match cap.get(1) {
            None => Codes::All,
            Some(list) => Codes::Some(
                list.as_str()
                    .split([',', ' ', '\t'])
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(String::from)
                    .collect(),
            ),
        };
        out = Some(match (out, codes) {
            (Some(Codes::All), _) | (_, Codes::All) => Codes::All,
            (Some(Codes::Some(mut a)), Codes::Some(b)) => {
                a.extend(b);
                Codes::Some(a)
            }
            (None, c) => c,
        });
    }
    out
}

/// The Python files findings point into, found and read once each, and which of their ignore comments silenced
/// something.
#[derive(Default)]
pub struct PythonFiles {
    /// Resolved path → its lines (`None`: unreadable).
    read: HashMap<PathBuf, Option<Vec<String>>>,
    /// (file, line) → the codes of its comment that silenced a finding (`*` for a bare `ignore`).
    used: HashMap<(PathBuf, u32), BTreeSet<String>>,
}

/// An ignore comment, or codes of one, that silenced nothing in a run.
pub struct Unused {
    pub path: PathBuf,
    /// 1-based.
    pub line: u32,
    /// The file's text (its lines joined by `\n`).
    pub source: std::sync::Arc<String>,
    /// The comment's byte range in `source`.
    pub at: std::ops::Range<usize>,
    /// The codes that silenced nothing; empty for a bare `# hlolint: ignore`.
    pub codes: Vec<String>,
}

impl PythonFiles {
    /// Where the recorded `file` is on this machine (see the module documentation), or `None`.
    /// `root`: the configuration file's folder (the current directory without one); `compilation`: the dump folder.
    pub fn resolve(file: &str, cwd: &Path, root: &Path, compilation: &Path) -> Option<PathBuf> {
        let p = Path::new(file);
        if p.as_os_str().is_empty() {
            return None;
        }
        if p.is_absolute() {
            if p.is_file() {
                return Some(p.to_path_buf());
            }
            let parts: Vec<_> = p.components().filter(|c| matches!(c, std::path::Component::Normal(_))).collect();
            for n in (2..=parts.len()).rev() {
                let tail: PathBuf = parts[parts.len() - n..].iter().collect();
                for base in [root, cwd] {
                    let c = base.join(&tail);
                    if c.is_file() {
                        return Some(c);
                    }
                }
            }
            return None;
        }
        let compilation = if compilation.is_absolute() { compilation.to_path_buf() } else { cwd.join(compilation) };
        std::iter::once(cwd)
            .chain(std::iter::once(root))
            .chain(compilation.ancestors())
            .map(|b| b.join(p))
            .find(|c| c.is_file())
    }

    /// How a report names a resolved file: relative to the current directory when under it, else to the root of
    /// the repository holding it (the closest folder with a `.git`), else as it is. The path the dump recorded is
    /// the compiling machine's, often absolute and elsewhere; this one opens here.
    pub fn display(resolved: &Path, cwd: &Path) -> String {
        let abs = if resolved.is_absolute() { resolved.to_path_buf() } else { cwd.join(resolved) };
        let shown = match abs.strip_prefix(cwd) {
            Ok(rel) => rel.to_path_buf(),
            Err(_) => match abs.ancestors().skip(1).find(|a| a.join(".git").exists()) {
                Some(root) => abs.strip_prefix(root).map(Path::to_path_buf).unwrap_or(abs.clone()),
                None => abs.clone(),
            },
        };
        shown.display().to_string().replace('\\', "/")
    }

    /// Records that the comment on `line` of `path` silenced `f`: which of its codes did.
    pub fn mark_used(&mut self, path: &Path, line: u32, codes: &Codes, f: &crate::rules::engine::Finding) {
        let used = self.used.entry((path.to_path_buf(), line)).or_default();
        match codes {
            Codes::All => {
                used.insert("*".to_string());
            }
            Codes::Some(cs) => used.extend(cs.iter().filter(|c| super::finding_matches(c, f)).cloned()),
        }
    }

    /// Every ignore comment of the files read (in file and line order) that silenced nothing, or the codes of one
    /// that did not.
    pub fn unused(&self) -> Vec<Unused> {
        let mut files: Vec<(&PathBuf, &Vec<String>)> =
            self.read.iter().filter_map(|(p, l)| l.as_ref().map(|l| (p, l))).collect();
        files.sort();
        let mut out = Vec::new();
        for (path, lines) in files {
            let source = std::sync::Arc::new(lines.join("\n"));
            let mut start = 0;
            for (i, text) in lines.iter().enumerate() {
                let line_start = start;
                start += text.len() + 1;
                let Some(codes) = parse_line(text) else { continue };
                let line = i as u32 + 1;
                let used = self.used.get(&(path.clone(), line));
                let unused: Vec<String> = match &codes {
                    Codes::All if used.is_none() => Vec::new(),
                    Codes::All => continue,
                    Codes::Some(cs) => cs.iter().filter(|c| used.is_none_or(|u| !u.contains(*c))).cloned().collect(),
                };
                if matches!(codes, Codes::Some(_)) && unused.is_empty() {
                    continue;
                }
                let at = comment_re().find(text).map(|m| m.range()).unwrap_or(0..text.len());
                let at = line_start + at.start..line_start + at.end;
                out.push(Unused { path: path.clone(), line, source: source.clone(), at, codes: unused });
            }
        }
        out
    }

    /// The ignore comment on `line` (1-based) of the file at `path` (resolved), if any.
    pub fn comment(&mut self, path: &Path, line: u32) -> Option<Codes> {
        let lines = self
            .read
            .entry(path.to_path_buf())
            .or_insert_with(|| std::fs::read_to_string(path).ok().map(|t| t.lines().map(String::from).collect()));
        let text = lines.as_ref()?.get((line as usize).checked_sub(1)?)?;
        parse_line(text)
    }
}

/// `--add-noqa`: `text` with `codes` added to the ignore comment of each line (1-based) in `wanted`, or a comment
/// `  # hlolint: ignore[A, B]` appended where there is none. A line a bare `# hlolint: ignore` already covers is
/// left alone, and so is a line continued by a backslash (a comment there would end the statement). Returns the new
/// text, the lines changed, and the lines left alone for the backslash.
pub fn add_ignores(text: &str, wanted: &BTreeMap<u32, BTreeSet<String>>) -> (String, usize, Vec<u32>) {
    let mut out = String::with_capacity(text.len() + 32 * wanted.len());
    let (mut changed, mut skipped) = (0, Vec::new());
    for (i, raw) in text.split_inclusive('\n').enumerate() {
        let n = i as u32 + 1;
        let Some(codes) = wanted.get(&n) else {
            out.push_str(raw);
            continue;
        };
        let body = raw.trim_end_matches(['\n', '\r']);
        let ending = &raw[body.len()..];
        match parse_line(body) {
            Some(Codes::All) => out.push_str(raw),
            _ if body.trim_end().ends_with('\\') => {
                skipped.push(n);
                out.push_str(raw);
            }
            Some(Codes::Some(have)) => {
                let mut all: Vec<String> = have.clone();
                all.extend(codes.iter().filter(|c| !have.contains(c)).cloned());
                let m = comment_re().find(body).expect("parse_line found a comment");
                out.push_str(&format!(
                    "{}# hlolint: ignore[{}]{}{ending}",
                    &body[..m.start()],
                    all.join(", "),
                    &body[m.end()..]
                ));
                changed += usize::from(all.len() > have.len());
            }
            None => {
                let list: Vec<&str> = codes.iter().map(String::as_str).collect();
                out.push_str(&format!("{}  # hlolint: ignore[{}]{ending}", body.trim_end(), list.join(", ")));
                changed += 1;
            }
        }
    }
    (out, changed, skipped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_as_ruff_reads_noqa() {
        let some = |v: &[&str]| Some(Codes::Some(v.iter().map(|s| s.to_string()).collect()));
        assert_eq!(parse_line("x = f(y)  # hlolint: ignore[MO021]"), some(&["MO021"]));
        assert_eq!(parse_line("x = f(y)  # hlolint: ignore[MO021, XL001]"), some(&["MO021", "XL001"]));
        assert_eq!(parse_line("x = f(y)  #hlolint:ignore[MO021 XL001]"), some(&["MO021", "XL001"]));
        assert_eq!(parse_line("x = f(y)  # HLOLINT: Ignore"), Some(Codes::All));
        assert_eq!(parse_line("x = f(y)  # type: ignore  # hlolint: ignore[dma-balance]"), some(&["dma-balance"]));
        assert_eq!(parse_line("x  # hlolint: ignore[A]  # hlolint: ignore[B]"), some(&["A", "B"]));
        assert_eq!(parse_line("x  # hlolint: ignore[A]  # hlolint: ignore"), Some(Codes::All));
        assert_eq!(parse_line("x = f(y)  # hlolint: ignored"), None);
        assert_eq!(parse_line("x = f(y)  # noqa: MO021"), None);
        assert_eq!(parse_line("x = f(y)"), None);
    }

    #[test]
    fn ignores_are_added_where_findings_are() {
        let want = |v: &[(u32, &[&str])]| -> BTreeMap<u32, BTreeSet<String>> {
            v.iter().map(|(l, cs)| (*l, cs.iter().map(|c| c.to_string()).collect())).collect()
        };
        let text = "a = 1\nb = f(a)  # type: ignore\nc = g(b)  # hlolint: ignore[XL001]\nd = h(c)  # hlolint: ignore\ne = (1 + \\\n  2)\n";
        let (out, changed, skipped) = add_ignores(
            text,
            &want(&[
                (1, &["MO010"]),
                (2, &["MO021", "MO010"]),
                (3, &["MO021", "XL001"]),
                (4, &["MO010"]),
                (5, &["MO010"]),
            ]),
        );
        assert_eq!(
            out,
            "a = 1  # hlolint: ignore[MO010]\nb = f(a)  # type: ignore  # hlolint: ignore[MO010, MO021]\n\
             c = g(b)  # hlolint: ignore[XL001, MO021]\nd = h(c)  # hlolint: ignore\ne = (1 + \\\n  2)\n"
        );
        assert_eq!((changed, skipped), (3, vec![5]));
        // what was written reads back as the codes asked for
        assert_eq!(parse_line(out.lines().nth(2).unwrap()), Some(Codes::Some(vec!["XL001".into(), "MO021".into()])));
        // CRLF line endings stay
        let (out, _, _) = add_ignores("x\r\ny\r\n", &want(&[(2, &["A1"])]));
        assert_eq!(out, "x\r\ny  # hlolint: ignore[A1]\r\n");
    }

    #[test]
    fn recorded_paths_are_found_here() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        std::fs::create_dir_all(root.join("pkg/sub")).unwrap();
        std::fs::create_dir_all(root.join("out/v1")).unwrap();
        std::fs::write(root.join("pkg/sub/kernels.py"), "a\nb  # hlolint: ignore[MO021]\n").unwrap();
        let found = |file: &str| PythonFiles::resolve(file, Path::new("/nonexistent"), root, &root.join("out/v1"));
        let want = Some(root.join("pkg/sub/kernels.py"));
        // as recorded
        assert_eq!(found(&root.join("pkg/sub/kernels.py").display().to_string()), want);
        // relative: to the config folder
        assert_eq!(found("pkg/sub/kernels.py"), want);
        // absolute from another checkout: its tail under the config folder
        assert_eq!(found("/home/ci/build/repo/pkg/sub/kernels.py"), want);
        assert_eq!(found("/elsewhere/sub/kernels.py"), None, "pkg/sub/kernels.py is not sub/kernels.py");
        assert_eq!(found("/elsewhere/kernels.py"), None, "a bare file name is not enough");
        assert_eq!(found("missing.py"), None);
        let mut files = PythonFiles::default();
        let p = root.join("pkg/sub/kernels.py");
        assert_eq!(files.comment(&p, 2), Some(Codes::Some(vec!["MO021".into()])));
        assert_eq!(files.comment(&p, 1), None);
        assert_eq!(files.comment(&p, 9), None);
        assert_eq!(files.comment(&p, 0), None);
        assert_eq!(files.comment(Path::new("/nonexistent/x.py"), 1), None);
    }
}
