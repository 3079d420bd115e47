//! One parser per format, each producing `ir::Module`s.

pub mod bytecode;
pub mod calls;
pub mod error;
pub mod hlo;
pub mod llo;
pub mod mlir;
