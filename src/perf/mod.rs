//! The static performance model of a compiled kernel.

pub mod timeline;
