//! The shared intermediate representation: one graph type for every layer (HLO, StableHLO, Mosaic, LLO).

pub mod attr;
pub mod dtype;
pub mod graph;
pub mod hlo_view;
pub mod line_index;
pub mod mlir_type;
pub mod print;
pub mod query;
pub mod shape;
pub mod span;
pub mod value;

pub use dtype::DType;
pub use graph::*;
pub use line_index::LineIndex;
pub use mlir_type::{MlirType, ShapedKind, ShapedType};
pub use shape::{ArrayShape, Dim, Layout, Shape};
pub use span::Span;
pub use value::{Value, ValueKind};
