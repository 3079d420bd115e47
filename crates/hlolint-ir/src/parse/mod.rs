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

/// `with_stack` at every 8th level of nesting (`depth` 7, 15, ...): asking for the stack left at every token cost
/// more than the parse of most tokens, and eight levels of any grammar here take a small part of the 128 kB kept
/// spare.
pub(crate) fn with_stack_at<R>(depth: usize, f: impl FnOnce() -> R) -> R {
    if depth % 8 == 7 {
        with_stack(f)
    } else {
        f()
    }
}
