//! MLIR types with the structure rules need: shaped types (`memref`, `vector`, `tensor`) with their element type,
//! dimensions, layout and memory space; scalars; dialect types (`!tpu.dma_semaphore`); function types. Everything
//! else is kept as text. Parsed by `parse::mlir::types`; the text of every part borrows from the source.

use super::dtype::DType;
use super::shape::Dim;
use serde::Serialize;
use std::fmt;

/// Serializes as its MLIR spelling (`memref<4x4xf32, #tpu.memory_space<smem>>`).
#[derive(Clone, Debug, PartialEq)]
pub enum MlirType<'a> {
    /// `f32`, `i32`, `index`, `bf16`, `f8E4M3FN`, `i1` (→ `DType::Pred`). `text` is the spelling.
    Scalar { dtype: DType, text: &'a str },
    /// `memref<...>`, `vector<...>`, `tensor<...>`. Boxed: every op and operand carries a type, and an unboxed
    /// shaped type would double the size of all of them.
    Shaped(Box<ShapedType<'a>>),
    /// `!tpu.dma_semaphore`, `!tpu.semaphore`, `!stablehlo.token`, `!llo.foo<...>`: name without `!`, and the text
    /// of the `<...>` parameters if any.
    Dialect { name: &'a str, params: Option<&'a str> },
    /// `(i32, f32) -> (f32)`.
    Function { inputs: Vec<MlirType<'a>>, results: Vec<MlirType<'a>> },
    /// `tuple<a, b>` (a real tuple type).
    Tuple(Vec<MlirType<'a>>),
    /// The results of one op with several results (`%0:2 = ...`): not a tuple type, one entry per result.
    Results(Vec<MlirType<'a>>),
    /// `none`.
    None,
    /// Anything else (`complex<f32>`, an unknown builtin, a type alias `!alias` without definition), as written.
    Other(&'a str),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ShapedKind {
    Memref,
    Vector,
    Tensor,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ShapedType<'a> {
    pub kind: ShapedKind,
    /// `None` for unranked (`memref<*xf32>`, `tensor<*xf32>`).
    pub dims: Option<Vec<Dim>>,
    /// `vector<4x[8]xf32>`: which dimensions are scalable (empty when none are).
    pub scalable: Vec<bool>,
    pub elem: Box<MlirType<'a>>,
    /// memref layout (`#tpu.tiled<(8,128)(2,1),[2,1]>`, `affine_map<...>`, `strided<...>`), as written.
    pub layout: Option<&'a str>,
    /// memref memory space attribute as written (`#tpu.memory_space<vmem>`, `1 : i64`).
    pub memory_space: Option<&'a str>,
    /// tensor encoding attribute as written.
    pub encoding: Option<&'a str>,
}

impl<'a> ShapedType<'a> {
    /// The memory space's name: `vmem` for `#tpu.memory_space<vmem>`, the text itself otherwise.
    pub fn space(&self) -> Option<&'a str> {
        self.memory_space.map(space_name)
    }

    /// Static dimension sizes; `None` when unranked or any dimension is dynamic.
    pub fn static_dims(&self) -> Option<Vec<i64>> {
        self.dims.as_ref()?.iter().map(|d| if let Dim::Static(n) = d { Some(*n) } else { None }).collect()
    }

    pub fn rank(&self) -> Option<usize> {
        self.dims.as_ref().map(Vec::len)
    }

    /// Number of elements when every dimension is static.
    pub fn num_elements(&self) -> Option<i64> {
        self.static_dims().map(|d| d.iter().product())
    }
}

/// `#tpu.memory_space<vmem>` → `vmem`; `#gpu.address_space<workgroup>` → `workgroup`; `1 : i64` → `1 : i64`.
pub fn space_name(text: &str) -> &str {
    match (text.find('<'), text.rfind('>')) {
        (Some(a), Some(b)) if a < b => text.get(a + 1..b).unwrap_or(text).trim(),
        _ => text.trim(),
    }
}

impl<'a> MlirType<'a> {
    pub fn shaped(&self) -> Option<&ShapedType<'a>> {
        match self {
            MlirType::Shaped(s) => Some(s),
            _ => None,
        }
    }

    pub fn is_memref(&self) -> bool {
        matches!(self, MlirType::Shaped(s) if s.kind == ShapedKind::Memref)
    }

    /// The element dtype of a shaped type, or the dtype of a scalar.
    pub fn dtype(&self) -> Option<DType> {
        match self {
            MlirType::Scalar { dtype, .. } => Some(*dtype),
            MlirType::Shaped(s) => s.elem.dtype(),
            _ => None,
        }
    }

    /// The element type (the type itself for a scalar or dialect type).
    pub fn elem(&self) -> &MlirType<'a> {
        match self {
            MlirType::Shaped(s) => s.elem.elem(),
            t => t,
        }
    }

    /// Memory space name of a memref (`vmem`, `smem`, `any`, `hbm`, `semaphore_mem`).
    pub fn memory_space(&self) -> Option<&'a str> {
        self.shaped().and_then(|s| s.space())
    }

    /// A semaphore or an array of semaphores (`!tpu.dma_semaphore`, `!tpu.semaphore`,
    /// `memref<2x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>`).
    pub fn is_semaphore(&self) -> bool {
        match self.elem() {
            MlirType::Dialect { name, .. } => name.ends_with("semaphore"),
            _ => false,
        }
    }

    /// A DMA semaphore (or an array of them), as opposed to a regular semaphore.
    pub fn is_dma_semaphore(&self) -> bool {
        matches!(self.elem(), MlirType::Dialect { name, .. } if name.ends_with("dma_semaphore"))
    }

    /// Result `i` of an op: itself for `i == 0` unless it is `Results`.
    pub fn result(&self, i: usize) -> Option<&MlirType<'a>> {
        match self {
            MlirType::Results(v) => v.get(i),
            t if i == 0 => Some(t),
            _ => None,
        }
    }
}

impl Serialize for MlirType<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl fmt::Display for MlirType<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn list(f: &mut fmt::Formatter<'_>, v: &[MlirType<'_>]) -> fmt::Result {
            for (i, t) in v.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{t}")?;
            }
            Ok(())
        }
        match self {
            MlirType::Scalar { text, .. } => f.write_str(text),
            MlirType::Shaped(s) => {
                let kw = match s.kind {
                    ShapedKind::Memref => "memref",
                    ShapedKind::Vector => "vector",
                    ShapedKind::Tensor => "tensor",
                };
                write!(f, "{kw}<")?;
                match &s.dims {
                    None => f.write_str("*x")?,
                    Some(dims) => {
                        for (i, d) in dims.iter().enumerate() {
                            let scal = s.scalable.get(i).copied().unwrap_or(false);
                            if scal {
                                f.write_str("[")?;
                            }
                            match d {
                                Dim::Static(n) => write!(f, "{n}")?,
                                Dim::Bounded(n) => write!(f, "<={n}")?,
                                Dim::Unbounded => f.write_str("?")?,
                            }
                            if scal {
                                f.write_str("]")?;
                            }
                            f.write_str("x")?;
                        }
                    }
                }
                write!(f, "{}", s.elem)?;
                for a in [s.layout, s.memory_space, s.encoding].into_iter().flatten() {
                    write!(f, ", {a}")?;
                }
                f.write_str(">")
            }
            MlirType::Dialect { name, params } => {
                write!(f, "!{name}")?;
                if let Some(p) = params {
                    write!(f, "<{p}>")?;
                }
                Ok(())
            }
            MlirType::Function { inputs, results } => {
                f.write_str("(")?;
                list(f, inputs)?;
                f.write_str(") -> ")?;
                if results.len() == 1 && !matches!(results[0], MlirType::Function { .. }) {
                    write!(f, "{}", results[0])
                } else {
                    f.write_str("(")?;
                    list(f, results)?;
                    f.write_str(")")
                }
            }
            MlirType::Tuple(v) => {
                f.write_str("tuple<")?;
                list(f, v)?;
                f.write_str(">")
            }
            MlirType::Results(v) => {
                f.write_str("(")?;
                list(f, v)?;
                f.write_str(")")
            }
            MlirType::None => f.write_str("none"),
            MlirType::Other(t) => f.write_str(t),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn space_names() {
        assert_eq!(space_name("#tpu.memory_space<vmem>"), "vmem");
        assert_eq!(space_name("1 : i64"), "1 : i64");
    }
}
