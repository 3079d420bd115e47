//! One parser per format, each producing `ir::Module`s.

pub mod bytecode;
pub mod calls;
pub mod error;
pub mod hlo;
pub mod llo;
pub mod mlir;

/// Runs a recursive step of a grammar with stack to spare: when less than 128 kB are left, the rest runs on a fresh
/// 2 MB segment on the heap. Nesting is then bounded by each grammar's own limits (as deep as XLA's parser takes),
/// not by the stack of whichever thread parses (rayon workers and test threads have 2 MB).
pub(crate) fn with_stack<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(128 * 1024, 2 * 1024 * 1024, f)
}
