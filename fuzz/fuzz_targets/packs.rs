//! `cargo fuzz run packs`: a user's rule pack (YAML) and configuration (TOML) load or fail with a diagnostic that
//! renders — never a panic, whatever the nesting or the types.
#![no_main]

use libfuzzer_sys::fuzz_target;
use miette::{GraphicalReportHandler, GraphicalTheme};
use std::path::PathBuf;
use std::sync::OnceLock;

fn workdir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("hlolint-fuzz-packs-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    })
}

fn render(d: &dyn miette::Diagnostic) {
    let mut s = String::new();
    let _ = GraphicalReportHandler::new_themed(GraphicalTheme::unicode_nocolor()).render_report(&mut s, d);
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else { return };
    let dir = workdir();
    if pick & 1 == 0 {
        let pack = dir.join("pack.yaml");
        std::fs::write(&pack, rest).unwrap();
        match hlolint::rules::load::load(&[pack.display().to_string()]) {
            Ok(set) => {
                for r in &set.rules {
                    let _ = r.id.len();
                }
            }
            Err(e) => render(&e),
        }
    } else {
        let name = if pick & 2 == 0 { "hlolint.toml" } else { "pyproject.toml" };
        let config = dir.join(name);
        std::fs::write(&config, rest).unwrap();
        if let Err(e) = hlolint::cli::config::load(&config) {
            render(&e);
        }
    }
});
