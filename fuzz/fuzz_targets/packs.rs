//! `cargo fuzz run packs`: a user's rule pack (YAML) and configuration (TOML) load or fail with a diagnostic that
//! renders — never a panic, whatever the nesting or the types. Both go through `hlolint::lint`, as a run loads them.
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

/// Lints an empty folder with `settings`: what a run does with a pack or a configuration before it reads any file.
fn load(settings: &hlolint::Settings) {
    let empty = workdir().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    if let Err(e) = hlolint::lint(settings, &[empty]) {
        render(&*e);
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else { return };
    let dir = workdir();
    if pick & 1 == 0 {
        let pack = dir.join("pack.yaml");
        std::fs::write(&pack, rest).unwrap();
        let selection = hlolint::Selection { rules: vec![pack.display().to_string()], ..Default::default() };
        load(&hlolint::Settings { selection, isolated: true, ..Default::default() });
    } else {
        let name = if pick & 2 == 0 { "hlolint.toml" } else { "pyproject.toml" };
        let config = dir.join(name);
        std::fs::write(&config, rest).unwrap();
        load(&hlolint::Settings { config: vec![config.display().to_string()], ..Default::default() });
    }
});
