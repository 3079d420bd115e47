//! Rule packs: YAML schema (`schema.rs`), loading and checking with errors into the YAML (`load.rs`), the
//! compiled form (`model.rs`), what packs may name per layer (`families.rs`), matcher evaluation over the graph
//! (`eval.rs`), running rules over a compilation into findings (`engine.rs`), and the built-in packs' test cases
//! embedded in the binary (`embedded.rs`).

pub mod embedded;
pub mod engine;
pub mod eval;
pub mod families;
pub mod load;
pub mod model;
pub mod schema;
pub mod template;

pub use load::{load, RuleError, RuleErrorKind, RuleSet};
pub use model::{Rule, Severity};
