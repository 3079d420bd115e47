//! Semantic views and checks over the graph that a selector cannot express.

pub mod kernel;
