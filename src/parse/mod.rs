//! One parser per format, each producing `ir::Module`s.

pub mod error;
pub mod hlo;
pub mod mlir;
