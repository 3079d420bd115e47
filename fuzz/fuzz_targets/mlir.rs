//! `cargo fuzz run mlir` (seed corpus made by `scripts/fuzz.sh`): the MLIR text parser (StableHLO and every Mosaic
//! stage) returns a module or a SyntaxError on any input, never panics, overflows the stack or runs away; a parsed
//! module summarizes and prints.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(m) = hlolint::parse::mlir::parse_mlir("fuzz.mlir", text) {
            let (decoded, _failed) = hlolint::parse::calls::decode_calls(&m, false);
            let _ = hlolint::summary::mlir::summarize(&m, Some("post-deserialization"), &decoded);
            let _ = hlolint::ir::print::outline(&m, text);
        }
    }
});
