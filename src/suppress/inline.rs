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

use std::collections::HashMap;
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

/// The ignore comments on one line of Python (several are merged), or `None`.
fn parse_line(line: &str) -> Option<Codes> {
    static RE: OnceLock<regex::Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        regex::Regex::new(r"(?i)#\s*hlolint:\s*ignore(?:\[([^\]]*)\]|\b)").expect("ignore-comment regex")
    });
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

/// The Python files findings point into, found and read once each.
#[derive(Default)]
pub struct PythonFiles {
    /// Resolved path → its lines (`None`: unreadable).
    read: HashMap<PathBuf, Option<Vec<String>>>,
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
