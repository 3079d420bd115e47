//! A finding's stable fingerprint: what stays the same when the dumps are regenerated. Dumps are rebuilt on every
//! compile, so dump line numbers, byte offsets, the folder the run started from and libtpu's numeric file-name
//! prefixes (`1795340919824206357-TLP-hlo.txt`) are left out; the rule, the compilation (the dump folder's name:
//! one kernel version on one target), the kernel and the op's identity (opcode and ordinal within the kernel, or
//! the analysis's facts) are kept.
//!
//! SARIF's `partialFingerprints` use it; a baseline or a suppression keyed by finding can use it too.

use crate::rules::engine::Finding;

/// Bump when the inputs change: fingerprints of different versions never match.
pub const VERSION: &str = "hlolint/v1";

/// The compilation's name: the last component of its folder (`bug_upcast@tpu7x`), `.` for the current one.
pub fn compilation_name(dir: &str) -> &str {
    let d = dir.trim_end_matches(['/', '\\']);
    match d.rsplit(['/', '\\']).next() {
        Some(n) if !n.is_empty() => n,
        _ => ".",
    }
}

/// Text without what changes between two compiles of the same code: `line 46` → `line _`, runs of six or more
/// digits (libtpu's per-compile ids in file names) → `#`.
pub fn normalize(text: &str) -> String {
    static LINE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    static ID: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let line = LINE.get_or_init(|| regex::Regex::new(r"\b(lines?|offset) \d+").expect("regex"));
    let id = ID.get_or_init(|| regex::Regex::new(r"\d{6,}").expect("regex"));
    id.replace_all(&line.replace_all(text, "$1 _"), "#").into_owned()
}

/// The fields a fingerprint is made of, in order (for people and tests; [`fingerprint`] hashes them).
pub fn parts(f: &Finding) -> [String; 5] {
    let (scope, what) = f.identity();
    [
        f.rule.clone(),
        compilation_name(&f.compilation).to_string(),
        f.kernel.clone().unwrap_or_default(),
        normalize(scope),
        normalize(what),
    ]
}

/// 64-bit FNV-1a: stable across platforms, builds and Rust versions (unlike `std`'s hasher).
fn fnv1a(bytes: &[u8], mut h: u64) -> u64 {
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The fingerprint: 16 hex digits.
pub fn fingerprint(f: &Finding) -> String {
    let mut h = 0xcbf2_9ce4_8422_2325;
    for p in parts(f) {
        h = fnv1a(p.as_bytes(), h);
        h = fnv1a(&[0], h);
    }
    format!("{h:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_numbers_and_compile_ids_do_not_count() {
        assert_eq!(
            normalize("a DMA started in iteration 3 of the scf.for at line 46"),
            "a DMA started in iteration 3 of the scf.for at line _"
        );
        assert_eq!(normalize("file:llo/1795340919824206357-TLP-hlo.txt"), "file:llo/#-TLP-hlo.txt");
        assert_eq!(compilation_name("fixtures/x/bug_upcast@tpu7x"), "bug_upcast@tpu7x");
        assert_eq!(compilation_name("/tmp/a/v1/"), "v1");
        assert_eq!(compilation_name(""), ".");
    }
}
