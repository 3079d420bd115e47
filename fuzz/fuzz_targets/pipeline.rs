//! `cargo fuzz run pipeline`: the whole lint run (`hlolint::lint`, what `hlolint check` runs) on one input file —
//! sniffing, parsing, kernels decoded from custom calls, every built-in pack's rules and analyses (the DMA
//! simulation included), and the report rendered as text and JSON. The only acceptable outcomes are the exit codes
//! 0, 1 and 2: a panic or a run that does not end is a bug.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;
use std::sync::OnceLock;

/// Where the input lands, by the first byte: the names give the stage (the format is always sniffed).
const NAMES: [&str; 4] = [
    "hlo/module_0000.jit_f.cl_1.after_optimizations.txt",
    "stablehlo.mlir",
    "mosaic/1-0000-mosaic-dump-k-post-deserialization.txt",
    "llo/1-k-03-final_bundles.txt",
];

fn workdir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("hlolint-fuzz-{}", std::process::id())).join("k@tpu7x");
        for n in NAMES {
            std::fs::create_dir_all(d.join(n).parent().unwrap()).unwrap();
        }
        d
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else { return };
    let dir = workdir();
    for n in NAMES {
        let _ = std::fs::remove_file(dir.join(n));
    }
    let file = dir.join(NAMES[pick as usize % NAMES.len()]);
    std::fs::write(&file, rest).unwrap();
    let json = pick & 0x80 != 0;
    let settings = hlolint::Settings {
        selection: hlolint::Selection { rules: vec!["core,v1-auto,v2-dma,v3-smem".into()], ..Default::default() },
        isolated: true,
        // the JSON report holds each file's summary, as `hlolint check --format json` asks for
        summaries: json,
        ..Default::default()
    };
    let code = match hlolint::lint(&settings, std::slice::from_ref(dir)) {
        Ok(outcome) => {
            let format = if json { hlolint::report::Format::Json } else { hlolint::report::Format::Human };
            let _ = hlolint::report::write(format, &outcome, Default::default());
            outcome.exit_code()
        }
        Err(e) => {
            let _ = format!("{e:?}");
            2
        }
    };
    assert!(matches!(code, 0..=2), "exit code {code}");
});
