//! `per-kernel-assume`: what the callers of the kernels a glob names guarantee of their inputs (the language is
//! `analysis::dma::assume`'s). The configuration checks each assumption's syntax where it is read (an error points
//! into the TOML); whether its names are the kernel's tables and scalars is only known once a compilation is
//! parsed, and a name that fits no kernel the glob matches is a warning pointing at it ([`unmatched`]).

use super::config::{ConfigError, Loaded};
use super::resolve::PathGlob;
use crate::analysis::dma::assume;
use crate::lint::{Compilation, KernelAssumptions};
use miette::{Diagnostic, NamedSource, SourceSpan};
use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::Arc;
use toml::Spanned;

/// One glob of `per-kernel-assume` with its assumptions, and where they are written.
#[derive(Debug, Clone)]
pub struct Assume {
    pub glob: PathGlob,
    /// Each assumption as written, with its span in `source`'s text.
    pub assumptions: Vec<(String, Range<usize>)>,
    /// The file (or `--config` setting) they are written in, and its text.
    pub source: Arc<(String, String)>,
}

/// The span of `inner` (a range of a TOML string's value) in the file: exact for a string written without escapes
/// (as assumptions are), else the whole string.
pub fn value_span(text: &str, whole: Range<usize>, value: &str, inner: Range<usize>) -> Range<usize> {
    let raw = text.get(whole.clone()).unwrap_or_default();
    let q = if raw.starts_with("\"\"\"") || raw.starts_with("'''") { 3 } else { 1 };
    match raw.get(q..raw.len().saturating_sub(q)) {
        Some(v) if v == value && inner.end <= v.len() => whole.start + q + inner.start..whole.start + q + inner.end,
        _ => whole,
    }
}

/// Every assumption of `per-kernel-assume` parses: an error points at what does not.
pub fn check(l: &Loaded, table: &BTreeMap<Spanned<String>, Vec<Spanned<String>>>) -> Result<(), ConfigError> {
    for list in table.values() {
        for a in list {
            if let Err(e) = assume::parse(a.get_ref()) {
                let at = value_span(&l.text, a.span(), a.get_ref(), e.span);
                let mut err = l.error(at, format!("assumption `{}`: {}", a.get_ref(), e.message));
                err.help = Some(HELP.to_string());
                return Err(err);
            }
        }
    }
    Ok(())
}

const HELP: &str = "an assumption compares integer expressions of a kernel's tables and scalars, by their Python \
names: `kv_lens[*] >= 1` (every element), `cu_q_lens[i] <= cu_q_lens[i + 1]` (every i), `num_seqs <= 8`, with \
constants, `+`, `-` and `*` by a constant (docs/configuration.md)";

/// The `per-kernel-assume` table of a file (or `--config` setting) as the run uses it.
pub fn list(
    l: Option<&Loaded>,
    table: &BTreeMap<Spanned<String>, Vec<Spanned<String>>>,
) -> Result<Vec<Assume>, ConfigError> {
    let Some(l) = l else { return Ok(Vec::new()) };
    let source = Arc::new((l.path.display().to_string(), l.text.clone()));
    table
        .iter()
        .map(|(g, list)| {
            let glob = PathGlob::new(g.get_ref())
                .map_err(|e| l.error(g.span(), format!("bad glob `{}`: {}", g.get_ref(), e.kind())))?;
            let assumptions = list.iter().map(|a| (a.get_ref().clone(), a.span())).collect();
            Ok(Assume { glob, assumptions, source: source.clone() })
        })
        .collect()
}

/// What a compilation's analyses read: each glob with its assumptions' texts.
pub fn for_kernels(list: &[Assume]) -> KernelAssumptions {
    KernelAssumptions(
        list.iter().map(|a| (a.glob.matcher().clone(), a.assumptions.iter().map(|x| x.0.clone()).collect())).collect(),
    )
}

/// An assumption that applies to no kernel its glob matches in a compilation.
#[derive(Debug, thiserror::Error, Diagnostic)]
#[error("assumption `{assumption}` of `per-kernel-assume` applies to no kernel `{glob}` matches in {dir}: {why} (kernel `{kernel}`)")]
#[diagnostic(code(hlolint::config::assume), severity(Warning))]
pub struct Unmatched {
    assumption: String,
    glob: String,
    dir: String,
    why: String,
    kernel: String,
    #[source_code]
    src: NamedSource<String>,
    #[label("this name")]
    span: SourceSpan,
    #[help]
    help: Option<String>,
}

/// The warnings about `list`'s assumptions in compilation `c`: each one whose glob matches some kernel of `c`
/// (with DMAs: the kernels `dma-balance` judges) and whose names fit none of them — with the kernel's names,
/// and the closest one. Each comes with a key (file, assumption) so that a run says it once.
pub fn unmatched(c: &Compilation<'_>, list: &[Assume]) -> Vec<(String, miette::Report)> {
    if list.is_empty() {
        return Vec::new();
    }
    let mut kernels = Vec::new();
    for unit in 0..c.units.len() {
        for (m, k) in crate::analysis::dma_balance::balanced_kernels(c, unit) {
            let name = m.func(k.func).name.to_string();
            if !kernels.iter().any(|(n, _)| *n == name) {
                kernels.push((name, k.args));
            }
        }
    }
    let mut out = Vec::new();
    for a in list {
        let matched: Vec<_> = kernels.iter().filter(|(n, _)| a.glob.matcher().is_match(n)).collect();
        let Some(first) = matched.first() else { continue };
        for (text, span) in &a.assumptions {
            let Ok(parsed) = assume::parse(text) else { continue };
            if matched.iter().any(|(_, args)| assume::bind(&parsed, args).is_ok()) {
                continue;
            }
            let Err((why, at)) = assume::bind(&parsed, &first.1) else { continue };
            let known = assume::known_names(&first.1);
            let name = text.get(at.clone()).unwrap_or_default();
            let aliases: Vec<&str> = known.iter().map(|n| n.strip_suffix("_ref").unwrap_or(n)).collect();
            let mut help = format!("kernel `{}` has: {}", first.0, known.join(", "));
            if let Some(h) = crate::suggest::hint(name, aliases.iter().copied()) {
                help = format!("{h} {help}");
            }
            let (file, src) = &*a.source;
            let at = value_span(src, span.clone(), text, at);
            let key = format!("{file}:{}", span.start);
            out.push((
                key,
                miette::Report::new(Unmatched {
                    assumption: text.clone(),
                    glob: a.glob.pattern.clone(),
                    dir: if c.dir.is_empty() { ".".to_string() } else { c.dir.clone() },
                    why,
                    kernel: first.0.clone(),
                    src: NamedSource::new(file, src.clone()),
                    span: SourceSpan::from((at.start, at.end.saturating_sub(at.start))),
                    help: Some(help),
                }),
            ));
        }
    }
    out
}
