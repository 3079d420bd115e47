//! The rules never panic on what the parsers accept: every rule of every built-in pack runs on mutated rule cases
//! (HLO, StableHLO, Mosaic kernels with DMAs and loops) and mutated fixture kernels. Mutations keep the text
//! parseable often enough to reach the analyses with odd graphs (missing operands, swapped types, broken loops).
//! (A unit test: it builds compilations and runs the engine, which are the crate's own.)

use crate::lint::compilation::{parse_file, source_file, Parsed};
use crate::lint::Compilation;
use crate::rules::engine;
use crate::testing::{Lcg, Mutator, Repeat};
use std::path::{Path, PathBuf};

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            files_under(&p, out);
        } else if !p.to_string_lossy().ends_with(".md") {
            out.push(p);
        }
    }
}

#[test]
fn all_rules_survive_mutated_inputs() {
    let rules = crate::rules::load::load_all_builtin().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut seeds = Vec::new();
    files_under(&root.join("tests/data/rules"), &mut seeds);
    for v in ["v2@tpu7x", "v3@v6e", "bug_unwaited_dma@tpu7x"] {
        files_under(&root.join("fixtures/fp8_matmul_2d/tpu7x+v6e").join(v).join("mosaic"), &mut seeds);
    }
    seeds.sort();
    // a duplicated line: repeated ops, doubled DMAs and waits
    let mutator = Mutator { alphabet: b"{}()[]<>=,:%\"0123456789 \nx", edits: 3, repeat: Repeat::Line };
    let (mut ran, mut parsed) = (0, 0);
    for seed in &seeds {
        let Ok(text) = std::fs::read_to_string(seed) else { continue };
        let mut rng = Lcg(text.len() as u64);
        for round in 0..8 {
            let mutated = if round > 0 { mutator.mutate(&mut rng, &text) } else { text.clone() };
            let file = source_file(&seed.display().to_string(), &mutated);
            let r = std::panic::catch_unwind(|| {
                let Ok(p) = parse_file(&file) else { return false };
                let parsed: Vec<Parsed> = vec![p];
                let c = Compilation::new("case@v6e".into(), &parsed, None);
                let _ = engine::run(&rules, &c, &|r| r.severity);
                true
            });
            assert!(r.is_ok(), "a rule panicked on a mutation of {} (round {round}):\n{mutated}", seed.display());
            ran += 1;
            parsed += usize::from(r.unwrap_or(false));
        }
    }
    println!("{ran} mutated inputs, {parsed} parsed and linted");
    assert!(parsed > ran / 3, "mutations should mostly stay parseable ({parsed} of {ran})");
}
