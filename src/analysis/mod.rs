//! Semantic views and analyses over the graph that a rule selector cannot express on its own.

pub mod async_pairs;
pub mod kernel;
