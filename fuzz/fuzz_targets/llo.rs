//! `cargo fuzz run llo`: every kind of TPU LLO dump (bundles, schedule analysis, utilization, memory-space
//! assignment tables) parses or fails with a SyntaxError, whatever the sniffer says; a parsed dump summarizes.
#![no_main]

use hlolint::parse::llo::{self, LloKind};
use libfuzzer_sys::fuzz_target;

const KINDS: [LloKind; 6] = [
    LloKind::Bundles,
    LloKind::ScheduleAnalysis,
    LloKind::Utilization,
    LloKind::MsaBufferInfo,
    LloKind::MsaAllocInfo,
    LloKind::MsaScheduleInfo,
];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else { return };
    let Ok(text) = std::str::from_utf8(rest) else { return };
    // The first byte picks the kind, so each table grammar sees inputs its sniffer would refuse.
    let kind = KINDS[pick as usize % KINDS.len()];
    if let Ok(f) = llo::parse_llo_as(kind, "1-fusion-01-final_bundles.txt", text, llo::Keep::All) {
        let _ = hlolint::summary::llo::summarize(&f);
    }
    // The lint's partial graph: the same grammar, fewer ops kept.
    let partial = llo::Keep::Only(hlolint::semantic::llo::read_across_layers);
    if let Ok(f) = llo::parse_llo_as(kind, "1-fusion-01-final_bundles.txt", text, partial) {
        let _ = hlolint::summary::llo::summarize(&f);
    }
    if let Ok(f) = llo::parse_llo("fuzz.txt", text) {
        let _ = hlolint::summary::llo::summarize(&f);
    }
});
