//! TPU LLO dumps (`LIBTPU_INIT_ARGS=--xla_jf_dump_to=DIR --xla_jf_dump_llo_text=true`): files named
//! `<ts>-<computation>-NN-<stage>.txt`.
//!
//! - `final_bundles` → [`LloProgram`]: the VLIW bundles as an `ir::Module` (layer `Llo`), see [`bundles`] for the
//!   grammar and [`build`] for the mapping into the graph;
//! - `schedule-analysis_final_bundles`, `final_hlo-static-per-bundle-utilization`, `memory-space-assignment-*` →
//!   typed tables ([`tables`]).
//!
//! [`sniff_llo`] decides the kind from the content; [`parse_llo`] parses any of them. [`args`] reads an op's printed
//! arguments (named operands, memory references, the predicate); what mnemonics mean is `semantic::llo`'s.

pub mod args;
pub mod build;
pub mod bundles;
pub mod lex;
pub mod tables;

pub use build::{LloProgram, LoopInfo};
pub use tables::{AllocRow, BufferRow, OpcodeEntry, ScheduleAnalysis, ScheduleEntry, ScheduleRow, Utilization};

use crate::parse::error::{PErr, SyntaxError};
use serde::Serialize;

/// What kind of LLO dump a text is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LloKind {
    /// `*-final_bundles.txt` (also any other bundle-stage dump with the same syntax).
    Bundles,
    /// `*-schedule-analysis_final_bundles.txt`.
    ScheduleAnalysis,
    /// `*-final_hlo-static-per-bundle-utilization.txt`.
    Utilization,
    /// `*-memory-space-assignment-bufferinfo.txt`.
    MsaBufferInfo,
    /// `*-memory-space-assignment-allocinfo.txt`.
    MsaAllocInfo,
    /// `*-memory-space-assignment-scheduleinfo.txt`.
    MsaScheduleInfo,
}

impl LloKind {
    pub fn name(self) -> &'static str {
        match self {
            LloKind::Bundles => "llo bundles",
            LloKind::ScheduleAnalysis => "llo schedule analysis",
            LloKind::Utilization => "llo utilization",
            LloKind::MsaBufferInfo => "llo msa bufferinfo",
            LloKind::MsaAllocInfo => "llo msa allocinfo",
            LloKind::MsaScheduleInfo => "llo msa scheduleinfo",
        }
    }
}

/// A parsed LLO file. (One per file, so the size difference between a program and a table does not matter.)
#[derive(Clone, Debug)]
#[allow(clippy::large_enum_variant)]
pub enum LloFile<'a> {
    Bundles(LloProgram<'a>),
    ScheduleAnalysis(ScheduleAnalysis<'a>),
    Utilization(Utilization<'a>),
    MsaBufferInfo(Vec<BufferRow<'a>>),
    MsaAllocInfo(Vec<AllocRow>),
    MsaScheduleInfo(Vec<ScheduleRow<'a>>),
    /// A table read with [`Keep::Only`]: checked against its grammar, its rows dropped as soon as they were read
    /// (a lint reads no table; the performance model, which does, reads whole dumps).
    Checked {
        kind: LloKind,
        rows: usize,
    },
}

impl<'a> LloFile<'a> {
    pub fn kind(&self) -> LloKind {
        match self {
            LloFile::Bundles(_) => LloKind::Bundles,
            LloFile::ScheduleAnalysis(_) => LloKind::ScheduleAnalysis,
            LloFile::Utilization(_) => LloKind::Utilization,
            LloFile::MsaBufferInfo(_) => LloKind::MsaBufferInfo,
            LloFile::MsaAllocInfo(_) => LloKind::MsaAllocInfo,
            LloFile::MsaScheduleInfo(_) => LloKind::MsaScheduleInfo,
            LloFile::Checked { kind, .. } => *kind,
        }
    }

    /// The rows of a table (0 for bundles).
    pub fn rows(&self) -> usize {
        match self {
            LloFile::Bundles(_) => 0,
            LloFile::ScheduleAnalysis(t) => t.entries.len(),
            LloFile::Utilization(t) => t.bundle_count(),
            LloFile::MsaBufferInfo(r) => r.len(),
            LloFile::MsaAllocInfo(r) => r.len(),
            LloFile::MsaScheduleInfo(r) => r.len(),
            LloFile::Checked { rows, .. } => *rows,
        }
    }

    pub fn program(&self) -> Option<&LloProgram<'a>> {
        match self {
            LloFile::Bundles(p) => Some(p),
            _ => None,
        }
    }
}

/// Decides the kind of LLO dump from the first meaningful line of `text` (never from the file name).
pub fn sniff_llo(text: &str) -> Option<LloKind> {
    let t = text.trim_start_matches(['\u{feff}', ' ', '\t', '\r', '\n']);
    let first = lex::line(t).0.trim_end();
    if first.starts_with("= control target key start") {
        return Some(LloKind::Bundles);
    }
    if first == "Schedule analysis:" {
        return Some(LloKind::ScheduleAnalysis);
    }
    if first == "== CAPACTIY:" || first == "== CAPACITY:" {
        return Some(LloKind::Utilization);
    }
    if first.starts_with("buffer_id,buffer_name") {
        return Some(LloKind::MsaBufferInfo);
    }
    if first.starts_with("buffer_id,size,offset") {
        return Some(LloKind::MsaAllocInfo);
    }
    if first.starts_with("time,instruction_name") {
        return Some(LloKind::MsaScheduleInfo);
    }
    // A bundle dump without the legend: `0   :  { ... }` / `0x1f LB: > { ... }`.
    let addr = first.trim_start();
    let n = addr.bytes().take_while(|b| b.is_ascii_hexdigit() || *b == b'x').count();
    if n > 0 && addr.as_bytes()[0].is_ascii_digit() {
        let rest = addr[n..].trim_start_matches(|c: char| c == ' ' || c.is_ascii_uppercase());
        if rest.starts_with(':') && rest.contains('{') {
            return Some(LloKind::Bundles);
        }
    }
    None
}

/// Which ops of a bundle dump become ops of its graph. The grammar is checked in full either way; what is not kept
/// is dropped as soon as its bundle is read. A caller that reads only a few kinds of op from a dump (the lint's
/// cross-layer analyses read MXU ops and the entry's operands) keeps those, so that a compilation's hundreds of
/// LLO files need not all be held as whole graphs at once. With `Only`, a table dump (schedule analysis,
/// utilization, memory-space assignment) is checked and kept as its kind and row count ([`LloFile::Checked`]).
#[derive(Clone, Copy, Debug)]
pub enum Keep {
    All,
    /// Only ops whose mnemonic the function accepts (and the loops, which hold them).
    Only(fn(&str) -> bool),
}

impl Keep {
    pub fn keeps(self, mnemonic: &str) -> bool {
        match self {
            Keep::All => true,
            Keep::Only(f) => f(mnemonic),
        }
    }
}

/// Parses an LLO dump of any kind (decided by [`sniff_llo`]). `path` names the file in diagnostics and gives the
/// computation name when the text has none.
#[allow(clippy::result_large_err)] // SyntaxError is the crate-wide diagnostic, carrying its source
pub fn parse_llo<'a>(path: &str, text: &'a str) -> Result<LloFile<'a>, SyntaxError> {
    parse_llo_keeping(path, text, Keep::All)
}

/// [`parse_llo`], with a bundle dump's graph holding only the ops `keep` says.
#[allow(clippy::result_large_err)]
pub fn parse_llo_keeping<'a>(path: &str, text: &'a str, keep: Keep) -> Result<LloFile<'a>, SyntaxError> {
    let kind = sniff_llo(text).ok_or_else(|| {
        SyntaxError::at(
            "llo",
            path,
            text,
            0,
            "an LLO dump (final_bundles, schedule analysis, utilization or a memory-space-assignment table)".into(),
        )
    })?;
    parse_llo_as(kind, path, text, keep)
}

/// Parses `text` as the given kind.
#[allow(clippy::result_large_err)]
pub fn parse_llo_as<'a>(kind: LloKind, path: &str, text: &'a str, keep: Keep) -> Result<LloFile<'a>, SyntaxError> {
    let err = |e: nom::Err<PErr<'_>>| match e {
        nom::Err::Error(e) | nom::Err::Failure(e) => SyntaxError::new("llo", path, text, &e),
        nom::Err::Incomplete(_) => SyntaxError::at("llo", path, text, text.len(), "more input".into()),
    };
    let f = match kind {
        LloKind::Bundles => {
            let (_, f) = bundles::bundle_file(text, keep).map_err(err)?;
            LloFile::Bundles(build::build(path, text, f, keep))
        }
        LloKind::ScheduleAnalysis => LloFile::ScheduleAnalysis(tables::schedule_analysis(text).map_err(err)?.1),
        LloKind::Utilization => LloFile::Utilization(tables::utilization(text).map_err(err)?.1),
        LloKind::MsaBufferInfo => LloFile::MsaBufferInfo(tables::buffer_info(text).map_err(err)?.1),
        LloKind::MsaAllocInfo => LloFile::MsaAllocInfo(tables::alloc_info(text).map_err(err)?.1),
        LloKind::MsaScheduleInfo => LloFile::MsaScheduleInfo(tables::schedule_info(text).map_err(err)?.1),
    };
    Ok(match (keep, &f) {
        (Keep::Only(_), f) if f.kind() != LloKind::Bundles => LloFile::Checked { kind: f.kind(), rows: f.rows() },
        _ => f,
    })
}

/// The parts of an LLO dump file name: `1795337861727205641-fusion-71-final_bundles.txt` →
/// `{ ts: "1795337861727205641", computation: "fusion", index: 71, stage: "final_bundles" }`.
/// Computation names may hold `-`, `.` and angle brackets (`<late-finalization>`); `TLP-hlo.txt` has no index.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LloFileName<'p> {
    pub ts: &'p str,
    pub computation: &'p str,
    pub index: Option<u32>,
    pub stage: &'p str,
}

pub fn llo_file_name(path: &str) -> Option<LloFileName<'_>> {
    let file = path.rsplit(['/', '\\']).next()?;
    let stem = file.strip_suffix(".txt").unwrap_or(file);
    let (ts, rest) = stem.split_once('-')?;
    if ts.is_empty() || !ts.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // The rightmost `-NN-` separates the computation from the stage.
    let b = rest.as_bytes();
    let mut k = b.len();
    while k > 0 {
        k -= 1;
        if b[k] != b'-' {
            continue;
        }
        let d = b[k + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
        if d > 0 && b.get(k + 1 + d) == Some(&b'-') && k > 0 {
            let index = rest[k + 1..k + 1 + d].parse().ok();
            return Some(LloFileName { ts, computation: &rest[..k], index, stage: &rest[k + 2 + d..] });
        }
    }
    let (computation, stage) = rest.rsplit_once('-')?;
    Some(LloFileName { ts, computation, index: None, stage })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names() {
        let n = llo_file_name("/x/1795337861727205641-fusion-71-final_bundles.txt").unwrap();
        assert_eq!((n.computation, n.index, n.stage), ("fusion", Some(71), "final_bundles"));
        let n = llo_file_name("1-<late-finalization>-65-final_hlo-static-per-bundle-utilization.txt").unwrap();
        assert_eq!((n.computation, n.stage), ("<late-finalization>", "final_hlo-static-per-bundle-utilization"));
        let n = llo_file_name("1-all-reduce.33-66-final_bundles.txt").unwrap();
        assert_eq!(n.computation, "all-reduce.33");
        let n = llo_file_name("1-TLP-00-memory-space-assignment-bufferinfo.txt").unwrap();
        assert_eq!((n.computation, n.index), ("TLP", Some(0)));
        let n = llo_file_name("1-TLP-hlo.txt").unwrap();
        assert_eq!((n.computation, n.index, n.stage), ("TLP", None, "hlo"));
        assert!(llo_file_name("module_0001.jit_f.txt").is_none());
    }

    #[test]
    fn sniffing() {
        assert_eq!(sniff_llo("= control target key start\n"), Some(LloKind::Bundles));
        assert_eq!(sniff_llo("   0x1f LB: > { %0 = vdelay 1 }"), Some(LloKind::Bundles));
        assert_eq!(sniff_llo("Schedule analysis:\n"), Some(LloKind::ScheduleAnalysis));
        assert_eq!(sniff_llo("== CAPACTIY:\n"), Some(LloKind::Utilization));
        assert_eq!(sniff_llo("time,instruction_name\n"), Some(LloKind::MsaScheduleInfo));
        assert_eq!(sniff_llo("HloModule m, is_scheduled=true\n"), None);
        assert_eq!(sniff_llo(""), None);
    }
}
