//! One compilation as rules see it: every parsed file of one dump directory (a kernel version on a target), the
//! kernels decoded from `tpu_custom_call` bodies, and the target generation.
//!
//! Files are parsed once ([`Parsed`]); a [`Compilation`] borrows them and adds one [`Unit`] per graph: each HLO,
//! StableHLO, Mosaic or LLO-bundles module, plus one Mosaic unit per decoded kernel body (its `host` says which
//! custom call it came from, so findings in it point at that call).

use super::stage::{in_llo_folder, Stage};
use super::target::Target;
use crate::ir::{Layer, Module, OpId, Span};
use crate::source::{Format, SourceFile};
use std::path::Path;

pub use crate::parse::calls::DecodedCall;
pub use crate::parse::llo::Keep;

/// A file's parsed content: a graph, or an LLO table.
pub enum Content<'f> {
    Hlo(Module<'f>),
    Mlir(Module<'f>),
    Llo(crate::parse::llo::LloFile<'f>),
}

/// One file after parsing: its content, the kernels decoded from its custom calls, and the problems found on the
/// way (bodies that could not be decoded).
pub struct Parsed<'f> {
    pub file: &'f SourceFile,
    pub content: Content<'f>,
    pub decoded: Vec<DecodedCall>,
    pub problems: Vec<miette::Report>,
}

impl<'f> Parsed<'f> {
    /// The graph rules read (an LLO table has none).
    pub fn graph(&self) -> Option<&Module<'f>> {
        match &self.content {
            Content::Hlo(m) | Content::Mlir(m) => Some(m),
            Content::Llo(crate::parse::llo::LloFile::Bundles(p)) => Some(&p.module),
            Content::Llo(_) => None,
        }
    }
}

/// Parses a file in its format, with the kernels of its `tpu_custom_call`s. A syntax error is the `Err`.
pub fn parse_file(file: &SourceFile) -> Result<Parsed<'_>, miette::Report> {
    parse_file_keeping(file, Keep::All)
}

/// [`parse_file`], an LLO bundle dump's graph holding only the ops `keep` says (the grammar is checked in full).
pub fn parse_file_keeping(file: &SourceFile, keep: Keep) -> Result<Parsed<'_>, miette::Report> {
    let content = match file.format {
        Format::Hlo => Content::Hlo(crate::parse::hlo::parse_hlo(&file.path, &file.text)?),
        Format::Mlir => Content::Mlir(crate::parse::mlir::parse_mlir(&file.path, &file.text)?),
        Format::Llo => Content::Llo(crate::parse::llo::parse_llo_keeping(&file.path, &file.text, keep)?),
    };
    let (decoded, failed) = match &content {
        Content::Hlo(m) => crate::parse::calls::decode_calls(m, true),
        Content::Mlir(m) => crate::parse::calls::decode_calls(m, false),
        Content::Llo(_) => Default::default(),
    };
    let problems = failed
        .iter()
        .map(|f| miette::Report::new(crate::parse::calls::KernelDecodeError::new(f, &file.path, &file.text)))
        .collect();
    Ok(Parsed { file, content, decoded, problems })
}

/// Where a decoded kernel came from: unit `unit`'s custom call `call`.
#[derive(Clone, Debug)]
pub struct Host {
    pub unit: usize,
    pub call: OpId,
    pub call_name: String,
    pub span: Span,
}

/// A graph borrowed from a parsed file, or built from a decoded kernel body.
pub enum ModuleRef<'p> {
    Borrowed(&'p Module<'p>),
    Owned(Box<Module<'p>>),
}

impl<'p> std::ops::Deref for ModuleRef<'p> {
    type Target = Module<'p>;
    fn deref(&self) -> &Module<'p> {
        match self {
            ModuleRef::Borrowed(m) => m,
            ModuleRef::Owned(m) => m,
        }
    }
}

/// One graph of a compilation.
pub struct Unit<'p> {
    /// The file it was read from (for a decoded kernel: the file holding the custom call).
    pub path: &'p str,
    /// That file's text (diagnostics quote it).
    pub text: &'p str,
    pub module: ModuleRef<'p>,
    /// The compiler stage it shows (which unit speaks for a program or kernel seen several times).
    pub stage: Stage,
    /// The stage as a reader knows it: `post-deserialization`, `post-finalize-llo`, ... for Mosaic dumps,
    /// `tpu_custom_call body` for a decoded kernel.
    pub stage_name: Option<&'p str>,
    /// For a kernel decoded from a custom call: the call.
    pub host: Option<Host>,
}

impl Unit<'_> {
    pub fn layer(&self) -> Layer {
        self.module.layer
    }

    /// Where a diagnostic about `op` points in `text`: the op itself, or the host call for a decoded kernel (whose
    /// ops have no text of their own in the file).
    pub fn span_of(&self, op: OpId) -> Span {
        match &self.host {
            Some(h) => Span::new(h.span.start as usize, (h.span.start as usize + 16).min(h.span.end as usize)),
            None => headline(self.module.op(op)),
        }
    }

    /// Is it a copy of a graph the compilation also has first-hand: a kernel decoded from a custom call (a dump has
    /// text to point at), or an HLO module in the LLO folder (libtpu's copy of XLA's dump)?
    pub fn is_copy(&self) -> bool {
        self.host.is_some() || (matches!(self.layer(), Layer::Hlo | Layer::StableHlo) && in_llo_folder(self.path))
    }

    /// Which of several units showing the same program or kernel speaks (lower first): the best stage, then a
    /// first-hand graph before a copy.
    pub fn preference(&self) -> (Stage, bool) {
        (self.stage, self.is_copy())
    }

    /// How a reader finds the unit: `v3@tpu7x_hlo.txt`, `kernel @fp8_mm_v3 decoded from %fp8_mm_v3.1`.
    pub fn describe(&self) -> String {
        match &self.host {
            Some(h) => format!("kernel @{} decoded from `{}` in {}", self.module.name, h.call_name, self.path),
            None => self.path.to_string(),
        }
    }
}

/// The part of an op a diagnostic underlines: `%name = ... opcode` when short, else the name (an HLO
/// instruction with its attributes, or an `scf.for` with its body, is too long to underline).
pub fn headline(op: &crate::ir::Op<'_>) -> Span {
    let (n, o) = (op.name_span, op.opcode_span);
    let set = |s: Span| s != Span::default();
    match (set(n), set(o)) {
        (true, true) if o.end > n.start && o.end - n.start <= 100 => n.to(o),
        (true, _) => n,
        (false, true) => o,
        _ => Span::new(op.span.start as usize, (op.span.start as usize + 80).min(op.span.end as usize)),
    }
}

/// Input assumptions per kernel (`per-kernel-assume`): kernel-name globs, each with its assumptions as written
/// (the configuration checked that they parse; the analysis that reads them parses them again, per kernel).
#[derive(Clone, Debug, Default)]
pub struct KernelAssumptions(pub Vec<(globset::GlobMatcher, Vec<String>)>);

impl KernelAssumptions {
    /// The assumptions of kernel `name`: those of every glob that matches it, in order, each once.
    pub fn of(&self, name: &str) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for (_, list) in self.0.iter().filter(|(g, _)| g.is_match(name)) {
            for a in list {
                if !out.contains(&a.as_str()) {
                    out.push(a);
                }
            }
        }
        out
    }
}

/// Every unit of one dump directory and the target they were compiled for.
pub struct Compilation<'p> {
    /// The dump directory (the group key: `compilation_output/v3@tpu7x`).
    pub dir: String,
    pub target: Option<Target>,
    /// What the settings say the kernels' callers guarantee of their inputs.
    pub assume: KernelAssumptions,
    pub units: Vec<Unit<'p>>,
    /// The kernels' Python names, read on first use ([`Compilation::kernel_names`]).
    pub(crate) names: std::sync::OnceLock<super::names::KernelNames>,
    /// The Python call chains of each function's ops, made on first use ([`Compilation::python_chains`]): every
    /// finding's Python place asks for its function's ([`Compilation::blamed_frame`]).
    pub(crate) chains: super::names::ChainCache,
}

impl<'p> Compilation<'p> {
    /// Builds the units of `parsed` (files of one directory). `target` is the user's `--target`, if given; else it
    /// is detected from the dumps (see [`Target::detect`]).
    pub fn new(dir: String, parsed: &'p [Parsed<'p>], flag: Option<&str>) -> Self {
        let mut units = Vec::new();
        let mut hosts: Vec<(usize, &'p DecodedCall)> = Vec::new();
        for p in parsed {
            let Some(m) = p.graph() else { continue };
            let host_unit = units.len();
            units.push(Unit {
                path: &p.file.path,
                text: &p.file.text,
                module: ModuleRef::Borrowed(m),
                stage: Stage::of(m.layer, &p.file.path, m.scheduled),
                stage_name: crate::source::mosaic_stage(&p.file.path),
                host: None,
            });
            hosts.extend(p.decoded.iter().map(|d| (host_unit, d)));
        }
        // The same kernel body sits in every HLO-family file of a compilation (StableHLO, HLO before and after
        // optimizations, the LLO folder's copy): decode it once, from the best host — the optimized HLO (what
        // runs, and the instruction names the LLO uses), then HLO before optimizations, then StableHLO.
        hosts.sort_by_key(|(u, _)| units[*u].preference());
        let mut seen: Vec<(Option<String>, usize)> = Vec::new();
        for (host_unit, d) in hosts {
            let key = (d.kernel.name().map(str::to_string), d.kernel.body_len);
            if seen.contains(&key) {
                continue;
            }
            seen.push(key);
            let (path, text) = (units[host_unit].path, units[host_unit].text);
            units.push(Unit {
                path,
                text,
                module: ModuleRef::Owned(Box::new(d.kernel.module.module())),
                stage: Stage::KernelAsWritten,
                stage_name: Some("tpu_custom_call body"),
                host: Some(Host { unit: host_unit, call: d.call, call_name: d.call_name.clone(), span: d.span }),
            });
        }
        let mut c = Compilation {
            dir,
            target: None,
            assume: Default::default(),
            units,
            names: Default::default(),
            chains: Default::default(),
        };
        c.target = Target::detect(flag, Path::new(&c.dir), &c);
        c
    }

    /// Units of a layer.
    pub fn units_of(&self, layer: Layer) -> impl Iterator<Item = (usize, &Unit<'p>)> {
        self.units.iter().enumerate().filter(move |(_, u)| u.layer() == layer)
    }

    /// The one unit that speaks for program `name` (HLO, StableHLO: the module's name; LLO: the file's module) or
    /// kernel `name` (Mosaic: a function of that name, in dumps and decoded bodies): the best stage, a first-hand
    /// graph before a copy, then the first (see [`Unit::preference`]).
    pub fn canonical(&self, layer: Layer, name: &str) -> Option<usize> {
        if layer == Layer::Mosaic {
            return self.best(self.kernel_units(name).map(|(i, _)| i));
        }
        self.best(self.units_of(layer).filter(|(_, u)| u.host.is_none() && u.module.name == name).map(|(i, _)| i))
    }

    /// The unit that speaks among `units` (indices into [`Compilation::units`]).
    pub fn best(&self, units: impl IntoIterator<Item = usize>) -> Option<usize> {
        units.into_iter().min_by_key(|&i| (self.units[i].preference(), i))
    }

    /// The one unit that speaks for kernel `name` in analyses that judge the kernel as written (a kernel is often
    /// present as several dumps and a decoded body).
    pub fn canonical_kernel_unit(&self, name: &str) -> Option<usize> {
        self.canonical(Layer::Mosaic, name)
    }

    /// The Mosaic units that define kernel function `name` (dumps and decoded bodies).
    pub fn kernel_units<'s>(&'s self, name: &'s str) -> impl Iterator<Item = (usize, &'s Unit<'p>)> + 's {
        self.units_of(Layer::Mosaic).filter(move |(_, u)| u.module.funcs.iter().any(|f| f.name == name))
    }
}

/// The dump directory a file belongs to: `v3@tpu7x_hlo.txt` → `v3@tpu7x/`; a file in `hlo/`, `mosaic/` or `llo/`
/// → the folder above; else its own folder.
pub fn group_dir(path: &str) -> String {
    // stdin is a compilation of its own, named as its file is (`-`)
    if path == crate::source::STDIN {
        return path.to_string();
    }
    let p = Path::new(path);
    if let Some(dir) = crate::source::sibling_dump_dir(p) {
        return dir.display().to_string();
    }
    // A driver-made `<version>_hlo.txt` without its dump folder is a compilation of its own, named as that folder
    // would be (`compilation_output/v1`): `v1_hlo.txt` and `v2_hlo.txt` side by side are two versions.
    if let Some(stem) =
        p.file_name().and_then(|n| n.to_str()).and_then(|n| n.strip_suffix(crate::source::names::DRIVER_HLO_SUFFIX))
    {
        if !stem.is_empty() {
            return p.with_file_name(stem).display().to_string();
        }
    }
    let parent = p.parent().unwrap_or(Path::new(""));
    let dir = match parent.file_name().and_then(|n| n.to_str()) {
        Some("hlo" | "llo" | "mosaic") => parent.parent().unwrap_or(Path::new("")),
        _ => parent,
    };
    dir.display().to_string()
}

/// For tests and tools: parses texts given with their paths (formats sniffed from content).
pub fn parse_texts(files: &[SourceFile]) -> Vec<Result<Parsed<'_>, miette::Report>> {
    files.iter().map(parse_file).collect()
}

/// A `SourceFile` from a path and text (format sniffed from content; HLO when nothing matches).
pub fn source_file(path: &str, text: &str) -> SourceFile {
    let format = crate::source::sniff(text).unwrap_or(Format::Hlo);
    SourceFile { path: path.to_string(), text: text.to_string(), format }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_version_dir_is_one_compilation_with_decoded_kernels_and_its_target() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/fp8_matmul_2d/tpu7x+v6e/v3@v6e");
        let mut files = Vec::new();
        for e in walkdir::WalkDir::new(&dir).sort_by_file_name() {
            let e = e.unwrap();
            if e.file_type().is_file() {
                let text = std::fs::read_to_string(e.path()).unwrap();
                files.push(source_file(&e.path().display().to_string(), &text));
            }
        }
        let parsed: Vec<Parsed> = parse_texts(&files).into_iter().filter_map(Result::ok).collect();
        let c = Compilation::new(dir.display().to_string(), &parsed, None);
        assert_eq!(
            c.target.as_ref().map(|t| (t.name(), t.source)),
            Some(("v6e", super::super::target::TargetSource::Manifest))
        );
        let decoded: Vec<&Unit> = c.units.iter().filter(|u| u.host.is_some()).collect();
        assert!(!decoded.is_empty(), "the HLO's tpu_custom_call bodies are units");
        assert!(decoded.iter().all(|u| u.layer() == Layer::Mosaic));
        assert!(c.kernel_units("fp8_mm_v3").count() >= 2, "a dump and a decoded body");
        assert!(c.units_of(Layer::Llo).count() >= 1);
    }
}
