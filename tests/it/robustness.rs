//! The parsers never panic: truncations, byte flips and garbage derived from real and hand-written inputs all end
//! in `Ok` or a `SyntaxError`. (A coverage-guided target for the same property lives in fuzz/.)

use crate::common;

use common::{Lcg, Mutator, Repeat};

use hlolint::parse::hlo::parse_hlo;

fn must_not_panic(text: &str) {
    let r = std::panic::catch_unwind(|| {
        let _ = parse_hlo("fuzz", text);
    });
    assert!(r.is_ok(), "parser panicked on input:\n{text}");
}

fn mutate_all(seed_text: &str, rounds: usize) {
    let bytes = seed_text.as_bytes();
    // Every truncation point (sampled for large inputs).
    let step = (bytes.len() / 2000).max(1);
    for cut in (0..bytes.len()).step_by(step) {
        must_not_panic(&String::from_utf8_lossy(&bytes[..cut]));
    }
    // Byte replacements with structural characters, deletions and duplications.
    let mutator =
        Mutator { alphabet: b"{}()[]<>=,:%\"'\\/*-.0123456789 \n\txSTE#?", edits: 4, repeat: Repeat::Run(40) };
    let mut rng = Lcg(0x5eed ^ bytes.len() as u64);
    for _ in 0..rounds {
        must_not_panic(&mutator.mutate(&mut rng, seed_text));
    }
}

#[test]
fn hand_written_inputs_survive_mutation() {
    for name in ["features.hlo", "future.hlo"] {
        let text = std::fs::read_to_string(format!("{}/tests/data/hlo/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap();
        mutate_all(&text, 3000);
    }
}

#[test]
fn deep_nesting_is_rejected_not_overflowed() {
    let deep = format!(
        "HloModule m\nENTRY e {{\n  ROOT a = f32[] parameter(0), x={}{}\n}}\n",
        "{".repeat(100_000),
        "}".repeat(100_000)
    );
    must_not_panic(&deep);
    let tuple = format!(
        "HloModule m\nENTRY e {{\n  ROOT a = {}f32[]{} parameter(0)\n}}\n",
        "(".repeat(100_000),
        ")".repeat(100_000)
    );
    must_not_panic(&tuple);
    let inline = format!(
        "HloModule m\nENTRY e {{\n  a = f32[] parameter(0)\n  ROOT r = {}a{}\n}}\n",
        "negate(".repeat(100_000),
        ")".repeat(100_000)
    );
    must_not_panic(&inline);
}

#[test]
fn garbage_does_not_panic() {
    let mut rng = Lcg(42);
    let alphabet = b"HloModule ENTRY ROOT %{}()[]=,:f32 s8 parameter fusion \"\\ 0123456789 -> <= T(8,128) S(1) \n";
    for _ in 0..2000 {
        let n = rng.below(300);
        let s: Vec<u8> = (0..n).map(|_| rng.pick(alphabet)).collect();
        must_not_panic(&String::from_utf8_lossy(&s));
    }
}

#[test]
fn corpus_files_survive_mutation() {
    let Some(dir) = common::corpus() else { return };
    for f in common::files_where(&dir.join("pallas_matmul@tpu7x"), hlolint::parse::hlo::looks_like_hlo) {
        mutate_all(&std::fs::read_to_string(f).unwrap(), 300);
    }
}
