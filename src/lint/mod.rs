//! Linting's inputs: files grouped into compilations (one dump directory each), the target they were built for,
//! the driver's manifest, the dump stages and their names. The rule engine that runs over a compilation is
//! `rules::engine`; a whole run is `run`.

pub mod compilation;
pub mod manifest;
pub mod names;
pub mod stage;
pub mod target;

pub use compilation::{Compilation, Host, KernelAssumptions, Parsed, Unit};
pub use manifest::Manifest;
pub use stage::Stage;
pub use target::Target;
