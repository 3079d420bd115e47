//! `cargo fuzz run sniff`: format sniffing and dump-name parsing take any text without panicking.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = hlolint::source::sniff(text);
        let _ = hlolint::parse::llo::sniff_llo(text);
        // Names: the same text as a path (dump file names carry the stage and the computation).
        let _ = hlolint::parse::llo::llo_file_name(text);
        let _ = hlolint::source::mosaic_stage(text);
        let _ = hlolint::source::is_intermediate_stage(std::path::Path::new(text));
    }
});
