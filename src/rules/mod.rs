//! Rule packs. The YAML form of a pack (`schema.rs`, and its JSON schema) with each matcher kind's keys, compile
//! step and match in a file of its own (`matcher/`); pack resolution — built-in names, user paths, `extends` —
//! (`load.rs`); compiling a rule (`compile.rs`) with errors pointing into the YAML (`error.rs`, positions from the
//! parser: `position.rs`); message templates (`template.rs`); what rules read of an op (`props.rs`); the compiled
//! form (`model.rs`); what packs may name per layer (`families.rs`); running rules over a compilation into
//! findings (`engine.rs`); and the built-in packs' test cases embedded in the binary (`embedded.rs`).

pub mod compile;
pub mod embedded;
pub mod engine;
pub mod error;
pub mod families;
pub mod load;
pub mod matcher;
pub mod model;
pub mod position;
pub mod props;
#[cfg(test)]
mod robustness;
pub mod schema;
pub mod template;

pub use load::{load, RuleSet};
pub use model::{Rule, Severity};
