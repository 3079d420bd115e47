//! Linting: files grouped into compilations (one dump directory each), the target they were built for, and the
//! rule engine's entry point.

pub mod compilation;
pub mod manifest;
pub mod names;
pub mod stage;
pub mod target;

pub use compilation::{Compilation, Host, KernelAssumptions, Parsed, Unit};
pub use manifest::Manifest;
pub use stage::Stage;
pub use target::Target;
