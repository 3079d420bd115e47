//! Links between the units of one compilation, for analyses whose finding spans layers: the HLO
//! custom call `%fp8_mm_v3.1` ↔ its kernel `@fp8_mm_v3` (decoded from the call, or a Mosaic dump) ↔ the LLO unit
//! of computation `fp8_mm_v3.1`; an XLA fusion ↔ the LLO unit of the same name. The relations between the names
//! are `semantic::link`'s (the summary's linker asks the same); this module finds the units they relate.
//!
//! A compilation often holds the same HLO module several times (the driver's `<version>_hlo.txt`, XLA's
//! `…after_optimizations.txt`, libtpu's `…-TLP-hlo.txt`, and the unscheduled `…before_optimizations.txt`). A
//! finding is reported once per compilation from one *canonical* unit per module name: a scheduled module
//! (after optimizations: its instruction names are the LLO's) from an HLO dump rather than from the LLO folder.

use crate::ir::{Layer, OpId};
use crate::lint::{Compilation, Unit};
use crate::parse::calls::is_tpu_custom_call;
use crate::semantic::link::{self, base_name};

/// Is `unit` the unit that reports for its HLO (or StableHLO) module? Units with the same module name and layer
/// hold the same program; the one that speaks is [`Compilation::canonical`]'s.
pub fn is_canonical(c: &Compilation<'_>, unit: usize) -> bool {
    let Some(u) = c.units.get(unit) else { return false };
    u.host.is_none() && c.canonical(u.layer(), u.module.name) == Some(unit)
}

/// Does the compilation hold any unit of `layer` (dumps only, not decoded bodies)?
pub fn has_layer(c: &Compilation<'_>, layer: Layer) -> bool {
    c.units.iter().any(|u| u.host.is_none() && u.layer() == layer)
}

/// The unit holding the kernel body decoded from custom call `op` of unit `unit`.
pub fn decoded_unit(c: &Compilation<'_>, unit: usize, op: OpId) -> Option<usize> {
    c.units.iter().position(|u| u.host.as_ref().is_some_and(|h| h.unit == unit && h.call == op))
}

/// The kernel custom call `op` of unit `unit` runs (`semantic::link::call_kernel_name`, with the body decoded from
/// the call when the compilation holds it).
pub fn call_kernel_name(c: &Compilation<'_>, unit: usize, op: OpId) -> Option<String> {
    let m = &c.units.get(unit)?.module;
    let decoded = decoded_unit(c, unit, op).map(|d| &*c.units[d].module);
    Some(link::call_kernel_name(m, op, decoded))
}

/// The computation an LLO unit was compiled for (`semantic::link::llo_computation`).
pub fn llo_computation<'p>(u: &Unit<'p>) -> Option<String> {
    if u.layer() != Layer::Llo {
        return None;
    }
    link::llo_computation(&u.module, crate::parse::llo::llo_file_name(u.path).map(|f| f.computation))
}

/// LLO units of computation `name` (one per name: the first unit, so a finding counts each op once).
pub fn llo_units(c: &Compilation<'_>, name: &str) -> Vec<usize> {
    let mut out = Vec::new();
    for (i, u) in c.units_of(Layer::Llo) {
        if llo_computation(u).as_deref() == Some(name) {
            out.push(i);
            break;
        }
    }
    out
}

/// LLO units of the custom calls running kernel `kernel` (computations `kernel.N`, or whose entry bundle is a
/// custom call of that base name).
pub fn llo_units_of_kernel(c: &Compilation<'_>, kernel: &str) -> Vec<usize> {
    let mut seen: Vec<String> = Vec::new();
    let mut out = Vec::new();
    for (i, u) in c.units_of(Layer::Llo) {
        let Some(comp) = llo_computation(u) else { continue };
        if base_name(&comp) == kernel && !seen.contains(&comp) {
            seen.push(comp);
            out.push(i);
        }
    }
    out
}

/// Is there an HLO dump with a top-level instruction named `name` (the LLO computation's HLO op)?
pub fn hlo_defines(c: &Compilation<'_>, name: &str) -> bool {
    c.units_of(Layer::Hlo).any(|(_, u)| {
        let m = &u.module;
        m.entry.is_some_and(|f| m.body_ops(f).iter().any(|&o| m.op(o).name == name))
    })
}

/// Is kernel `kernel` called from an HLO or StableHLO dump of the compilation (so findings about it belong there)?
pub fn kernel_called_from_graph(c: &Compilation<'_>, kernel: &str) -> bool {
    for (i, u) in c.units.iter().enumerate() {
        if u.host.is_some() || !matches!(u.layer(), Layer::Hlo | Layer::StableHlo) {
            continue;
        }
        let m = &u.module;
        for id in m.op_ids() {
            if is_tpu_custom_call(m, id) && call_kernel_name(c, i, id).as_deref() == Some(kernel) {
                return true;
            }
        }
    }
    false
}

/// The Mosaic dump units (not decoded bodies) defining kernel `kernel`.
pub fn mosaic_dumps_of(c: &Compilation<'_>, kernel: &str) -> Vec<usize> {
    c.kernel_units(kernel).filter(|(_, u)| u.host.is_none()).map(|(i, _)| i).collect()
}

/// A short name of a unit's stage for `related` lines: `post-finalize-llo`, `tpu_custom_call body`, the file.
pub fn stage_of(u: &Unit<'_>) -> String {
    match (u.stage_name, &u.host) {
        (_, Some(h)) => format!("decoded from `{}`", h.call_name),
        (Some(s), None) => s.to_string(),
        (None, None) => u.path.rsplit(['/', '\\']).next().unwrap_or(u.path).to_string(),
    }
}

#[cfg(test)]
pub mod testutil {
    //! Loading a fixture or corpus dump directory as one compilation, as the CLI groups it.
    use crate::lint::compilation::{parse_texts, source_file, Parsed};
    use crate::source::SourceFile;
    use std::path::{Path, PathBuf};

    pub fn root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
    }

    pub use crate::testing::corpus;

    /// Every final-stage file of a dump directory, plus its sibling `<version>[@target]_hlo.txt`.
    pub fn dir_files(dir: &Path) -> Vec<SourceFile> {
        let mut paths = Vec::new();
        for e in walkdir::WalkDir::new(dir).sort_by_file_name().into_iter().flatten() {
            if e.file_type().is_file() && !crate::source::is_intermediate_stage(e.path()) {
                paths.push(e.path().to_path_buf());
            }
        }
        if let Some(parent) = dir.parent() {
            for e in std::fs::read_dir(parent).into_iter().flatten().flatten() {
                let p = e.path();
                if p.is_file() && crate::source::sibling_dump_dir(&p).is_some_and(|d| d == dir) {
                    paths.push(p);
                }
            }
        }
        let mut out = Vec::new();
        for p in paths {
            let Ok(bytes) = std::fs::read(&p) else { continue };
            let Ok(text) = String::from_utf8(bytes) else { continue };
            if text.is_empty() || crate::source::sniff(&text).is_none() {
                continue;
            }
            out.push(source_file(&p.display().to_string(), &text));
        }
        out
    }

    pub fn parse(files: &[SourceFile]) -> Vec<Parsed<'_>> {
        parse_texts(files).into_iter().filter_map(Result::ok).collect()
    }
}

#[cfg(test)]
pub mod sweep {
    //! Runs an analysis over every unit of a dump directory and summarizes the hits (for verdict tests).
    use super::testutil;
    use crate::analysis::{Hit, Options};
    use crate::lint::Compilation;
    use std::path::Path;

    pub struct Found {
        pub unit: String,
        pub layer: &'static str,
        pub hit: Hit,
    }

    pub type Run = fn(&Compilation<'_>, usize, &Options) -> Vec<Hit>;

    pub fn run(dir: &Path, f: Run, opts: &Options) -> Vec<Found> {
        run_with(dir, f, opts, None)
    }

    /// A test case: a directory (one compilation, its name giving the target) or a single file (a compilation of
    /// its own, no target). `flag` is a `--target`.
    pub fn run_with(path: &Path, f: Run, opts: &Options, flag: Option<&str>) -> Vec<Found> {
        let (dir, files) = if path.is_dir() {
            (path.to_path_buf(), testutil::dir_files(path))
        } else {
            let text = std::fs::read_to_string(path).unwrap_or_default();
            let file = crate::lint::compilation::source_file(&path.display().to_string(), &text);
            (path.parent().unwrap_or(Path::new("")).to_path_buf(), vec![file])
        };
        let parsed = testutil::parse(&files);
        assert_eq!(parsed.len(), files.len(), "every file of {} parses", path.display());
        let c = Compilation::new(dir.display().to_string(), &parsed, flag);
        let mut out = Vec::new();
        for i in 0..c.units.len() {
            for h in f(&c, i, opts) {
                out.push(Found { unit: c.units[i].describe(), layer: c.units[i].layer().name(), hit: h });
            }
        }
        out
    }

    /// Every invalid case of `analysis` hits, each hit with a non-empty `detail` and all of `captures`; no valid
    /// case hits.
    pub fn assert_case_verdicts(analysis: &str, f: Run, captures: &[&str]) {
        for p in cases(analysis, "invalid") {
            let h = run(&p, f, &Options::new());
            assert!(!h.is_empty(), "{}: expected a hit", p.display());
            for x in &h {
                assert!(!x.hit.captures["detail"].is_empty());
                for k in captures {
                    assert!(x.hit.captures.contains_key(*k), "{}: capture {k}", p.display());
                }
            }
        }
        for p in cases(analysis, "valid") {
            let h = run(&p, f, &Options::new());
            assert!(
                h.is_empty(),
                "{}: unexpected {:?}",
                p.display(),
                h.iter().map(|x| &x.hit.captures["detail"]).collect::<Vec<_>>()
            );
        }
    }

    /// The cases of `tests/data/rules/<analysis>/<kind>/`: files and directories, README.md aside.
    pub fn cases(analysis: &str, kind: &str) -> Vec<std::path::PathBuf> {
        let dir = testutil::root().join("tests/data/rules").join(analysis).join(kind);
        // the same listing `hlolint test` makes of a folder of cases
        let out: Vec<_> = if dir.is_dir() { crate::source::cases_in(&dir) } else { Vec::new() };
        assert!(!out.is_empty(), "no cases in {}", dir.display());
        out
    }

    pub fn case(analysis: &str, kind: &str, name: &str) -> std::path::PathBuf {
        testutil::root().join("tests/data/rules").join(analysis).join(kind).join(name)
    }

    /// Runs `f` over every unit of every hand-written input under `tests/data/{hlo,mlir,llo,rules}` taken as one
    /// compilation per folder (robustness: no panic on any input).
    pub fn all_test_data(f: Run) -> usize {
        let root = testutil::root().join("tests/data");
        let mut n = 0;
        let mut dirs = vec![root.clone()];
        for e in walkdir::WalkDir::new(&root).into_iter().flatten() {
            if e.file_type().is_dir() {
                dirs.push(e.path().to_path_buf());
            }
        }
        for d in dirs {
            let mut files = Vec::new();
            for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
                let p = e.path();
                let Ok(text) = std::fs::read_to_string(&p) else { continue };
                if p.is_file() && crate::source::sniff(&text).is_some() {
                    files.push(crate::lint::compilation::source_file(&p.display().to_string(), &text));
                }
            }
            let parsed = testutil::parse(&files);
            let c = Compilation::new(d.display().to_string(), &parsed, None);
            for i in 0..c.units.len() + 1 {
                n += f(&c, i, &Options::new()).len();
            }
        }
        n
    }

    /// The version directories of the project fixtures: `(name@target, path)`.
    pub fn fixture_dirs() -> Vec<(String, std::path::PathBuf)> {
        let root = testutil::root().join("fixtures/fp8_matmul_2d");
        let mut out = Vec::new();
        for group in std::fs::read_dir(&root).into_iter().flatten().flatten() {
            for e in std::fs::read_dir(group.path()).into_iter().flatten().flatten() {
                let name = e.file_name().to_string_lossy().to_string();
                if e.path().is_dir() && name.contains('@') {
                    out.push((name, e.path()));
                }
            }
        }
        out.sort();
        out
    }

    pub fn corpus_dirs() -> Vec<(String, std::path::PathBuf)> {
        let Some(root) = testutil::corpus() else { return Vec::new() };
        let mut out = Vec::new();
        for e in std::fs::read_dir(&root).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            if e.path().is_dir() && name.contains('@') {
                out.push((name, e.path()));
            }
        }
        out.sort();
        out
    }
}
