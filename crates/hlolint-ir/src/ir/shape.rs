//! HLO shapes and layouts (`bf16[2048,2048]{1,0:T(8,128)(2,1)S(1)}`, tuples, buffers, dynamic dimensions).
//! Parsed from the text by `parse::hlo::shape`; this module holds the data and the views rules use.

use super::dtype::DType;
use super::span::Span;
use serde::Serialize;
use std::fmt;

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Shape {
    Array(ArrayShape),
    Tuple {
        elements: Vec<Shape>,
    },
    /// `b(f32[4])`: a buffer shape.
    Buffer {
        inner: Box<Shape>,
    },
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ArrayShape {
    pub dtype: DType,
    pub dims: Vec<Dim>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layout: Option<Box<Layout>>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Dim {
    Static(i64),
    /// `<=N`: dynamic with an upper bound.
    Bounded(i64),
    /// `?`: unbounded dynamic.
    Unbounded,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Layout {
    pub minor_to_major: Vec<i64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub dim_level_types: Vec<String>,
    /// `T(8,128)(2,1)`: each inner vector is one tile; `None` is the `*` combine dimension.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tiles: Vec<Vec<Option<i64>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tail_padding_alignment: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index_type: Option<DType>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pointer_type: Option<DType>,
    /// `E(n)`: element size in bits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub element_bits: Option<i64>,
    /// `S(n)`: memory space. On TPU 1 = VMEM, 2 = SMEM (sync flags), 5 = host; absent = default (HBM).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_space: Option<i64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub split_configs: Vec<Vec<i64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub physical_shape: Option<Box<Shape>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dynamic_shape_metadata_prefix_bytes: Option<i64>,
}

impl Shape {
    /// The array shape, or `None` for tuples and buffers.
    pub fn array(&self) -> Option<&ArrayShape> {
        match self {
            Shape::Array(a) => Some(a),
            Shape::Buffer { inner } => inner.array(),
            Shape::Tuple { .. } => None,
        }
    }

    pub fn dtype(&self) -> Option<DType> {
        self.array().map(|a| a.dtype)
    }

    pub fn tuple_elements(&self) -> &[Shape] {
        match self {
            Shape::Tuple { elements } => elements,
            _ => &[],
        }
    }

    /// Memory space of an array shape (`S(n)`), 0 when absent.
    pub fn memory_space(&self) -> Option<i64> {
        self.array().map(|a| a.layout.as_ref().and_then(|l| l.memory_space).unwrap_or(0))
    }

    /// Every array shape inside (depth first), for histograms over tuple-shaped results.
    pub fn leaves(&self) -> Vec<&ArrayShape> {
        let mut out = Vec::new();
        fn walk<'s>(s: &'s Shape, out: &mut Vec<&'s ArrayShape>) {
            match s {
                Shape::Array(a) => out.push(a),
                Shape::Tuple { elements } => elements.iter().for_each(|e| walk(e, out)),
                Shape::Buffer { inner } => walk(inner, out),
            }
        }
        walk(self, &mut out);
        out
    }
}

impl ArrayShape {
    /// Number of elements, if every dimension is static.
    pub fn elements(&self) -> Option<i64> {
        self.dims.iter().try_fold(1i64, |acc, d| match d {
            Dim::Static(n) => acc.checked_mul(*n),
            _ => None,
        })
    }

    pub fn rank(&self) -> usize {
        self.dims.len()
    }
}

impl fmt::Display for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dim::Static(n) => write!(f, "{n}"),
            Dim::Bounded(n) => write!(f, "<={n}"),
            Dim::Unbounded => f.write_str("?"),
        }
    }
}

/// Prints the shape without its layout (`f32[2,3]`, `(f32[], s32[2])`), the way rule messages quote shapes.
impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Shape::Array(a) => {
                write!(f, "{}[", a.dtype)?;
                for (i, d) in a.dims.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{d}")?;
                }
                f.write_str("]")
            }
            Shape::Tuple { elements } => {
                f.write_str("(")?;
                for (i, e) in elements.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{e}")?;
                }
                f.write_str(")")
            }
            Shape::Buffer { inner } => write!(f, "b({inner})"),
        }
    }
}

/// A shape together with where it was written.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SpannedShape {
    pub shape: Shape,
    #[serde(skip)]
    pub span: Span,
}
