//! `cargo fuzz run hlo -- -dict=fuzz/hlo.dict` (seed corpus: tests/data/hlo): the HLO parser must return Ok or a
//! SyntaxError on any input, never panic, overflow the stack or run away.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(m) = hlolint::parse::hlo::parse_hlo("fuzz", text) {
            // Walk what was built: every edge must point inside the arenas.
            // kernels decoded from its custom calls, as a compilation would
            let (decoded, _failed) = hlolint::parse::calls::decode_calls(&m, true);
            let _ = hlolint::summary::summarize(&m, &decoded);
            let _ = hlolint::ir::print::graph_dump(&m);
        }
    }
});
