//! What the tests share with the library's own unit tests, the benchmarks and the examples: where the repository
//! and the corpus of real dumps are, one seeded generator and one byte mutator. Not part of the linter (hidden from
//! its documentation); it names nothing else of the crate.

use std::path::PathBuf;

/// The repository's root (the workspace's: this crate lives in `crates/hlolint-ir`), where the fixtures and the
/// test data are, whichever crate's test asks.
pub fn repository() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// The corpus of real dumps: `$HLOLINT_CORPUS` (a worktree outside the usual layout points there), else
/// `../shared/corpus` beside the checkout; `None`, with a printed notice, on a clone that does not have it (the
/// tests that need it pass on what the repository holds).
pub fn corpus() -> Option<PathBuf> {
    let dir =
        std::env::var_os("HLOLINT_CORPUS").map(PathBuf::from).unwrap_or_else(|| repository().join("../shared/corpus"));
    if dir.is_dir() {
        Some(dir)
    } else {
        println!("notice: {} is absent; skipping the corpus part", dir.display());
        None
    }
}

/// A small deterministic generator for mutation tests: a reproducible stream with no dependency (a linear
/// congruential generator, its high bits).
pub struct Lcg(pub u64);

impl Lcg {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    /// One of `items` (which must not be empty).
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
}

/// Breaks a text the way the robustness tests do, a few edits at a time: a byte replaced by one of `alphabet` (the
/// characters that carry a grammar's structure, so that the result is near-valid and reaches deep into the parser
/// and what runs after it), a byte deleted, or text duplicated (repeated tokens, ops, DMAs and waits). Only ASCII
/// bytes are edited, so the result is UTF-8 unless a duplicated run cuts a character (then lossily repaired).
pub struct Mutator<'a> {
    /// What a replaced byte becomes.
    pub alphabet: &'a [u8],
    /// Up to this many edits per mutation (at least one).
    pub edits: usize,
    /// What a duplication copies.
    pub repeat: Repeat,
}

/// What [`Mutator`] duplicates at the edited position.
#[derive(Clone, Copy, Debug)]
pub enum Repeat {
    /// The run from the position, of 1 to this many bytes.
    Run(usize),
    /// The whole line holding the position (a repeated op, DMA or wait).
    Line,
}

impl Mutator<'_> {
    /// `text` with 1 to `edits` random edits, drawn from `rng`.
    pub fn mutate(&self, rng: &mut Lcg, text: &str) -> String {
        let mut b = text.as_bytes().to_vec();
        for _ in 0..1 + rng.below(self.edits) {
            if b.is_empty() {
                break;
            }
            let at = rng.below(b.len());
            if !b[at].is_ascii() {
                continue;
            }
            match rng.below(3) {
                0 => b[at] = rng.pick(self.alphabet),
                1 => {
                    b.remove(at);
                }
                _ => {
                    let (start, end) = match self.repeat {
                        Repeat::Run(n) => (at, (at + 1 + rng.below(n)).min(b.len())),
                        Repeat::Line => (
                            b[..at].iter().rposition(|&c| c == b'\n').map_or(0, |i| i + 1),
                            b[at..].iter().position(|&c| c == b'\n').map_or(b.len(), |i| at + i + 1),
                        ),
                    };
                    let run = b[start..end].to_vec();
                    b.splice(start..start, run);
                }
            }
        }
        String::from_utf8(b).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mutations_stay_near_the_text_and_are_reproducible() {
        let text = "a = b\nc = d(e)\n";
        let m = Mutator { alphabet: b"{}", edits: 3, repeat: Repeat::Line };
        let (mut r1, mut r2) = (Lcg(7), Lcg(7));
        let mut changed = 0;
        for _ in 0..200 {
            let a = m.mutate(&mut r1, text);
            assert_eq!(a, m.mutate(&mut r2, text), "the same seed gives the same mutation");
            // each edit removes at most one byte, adds at most a line of the text or replaces a byte
            assert!(a.len() + 3 >= text.len() && a.len() <= 8 * text.len(), "{a:?}");
            assert!(a.bytes().all(|c| text.as_bytes().contains(&c) || b"{}".contains(&c)), "{a:?}");
            changed += usize::from(a != text);
        }
        assert!(changed > 150, "{changed} of 200 mutations changed the text");
        // a run copied at the end stops there, and a non-ASCII character is never edited
        let m = Mutator { alphabet: b"x", edits: 4, repeat: Repeat::Run(40) };
        let mut r = Lcg(1);
        for _ in 0..200 {
            let a = m.mutate(&mut r, "é=1");
            assert!(a.starts_with('é'), "{a:?}");
        }
    }
}
