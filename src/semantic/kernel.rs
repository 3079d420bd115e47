//! Typed views of Mosaic kernels (and of matmuls anywhere): what rules about Pallas TPU kernels ask for.
//!
//! A Pallas kernel lowers to a `func.func` whose arguments are, in order: one index per grid dimension
//! (`iteration_bounds`), the scalar-prefetch operands (`scalar_prefetch`), the kernel operands (one per
//! `window_params` entry when the grid pipelines them; inputs then outputs), then the scratch operands
//! (`scratch_operands`: VMEM/SMEM buffers and semaphores). Late stages (`post-finalize-llo`) retype every argument
//! to `i32` and keep the memref in an `llo.type` argument attribute, which the view reads.
//!
//! DMAs, waits, matmuls, loops and conditionals are found by op family, not one spelling: `*.enqueue_dma*` /
//! `*.dma_start*` start a DMA, `*.wait_dma*` / `*.dma_wait*` / `*.dma_done*` wait for one, and so on.

use crate::ir::mlir_type::MlirType;
use crate::ir::*;
use crate::parse::mlir::attr as mattr;
use crate::parse::mlir::types::mlir_type;
use crate::semantic::op::{
    is_accumulating_matmul, is_conditional, is_constant, is_dma_start, is_dma_wait, is_load, is_loop, is_matmul,
    is_semaphore_signal, is_semaphore_wait, is_store, is_view, op_name,
};
use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "role", content = "index", rename_all = "snake_case")]
pub enum ArgRole {
    /// The program id along grid dimension N.
    GridIndex(u32),
    /// Scalar-prefetch operand N (lives in SMEM).
    ScalarPrefetch(u32),
    /// Kernel operand N with a pipelined window (`window_params[N]`).
    Window(u32),
    /// Kernel operand N without window params (no grid pipelining: `memory_space=ANY` operands, manual DMA).
    Operand(u32),
    /// Scratch operand N (`scratch_shapes`: VMEM/SMEM buffers, semaphores).
    Scratch(u32),
}

#[derive(Clone, Debug, Serialize)]
pub struct KernelArg<'a> {
    pub index: usize,
    pub name: &'a str,
    pub role: ArgRole,
    /// The memref (or scalar) type: declared, or from `llo.type` when the stage retyped it.
    pub ty: Option<MlirType<'a>>,
    pub memory_space: Option<&'a str>,
    pub semaphore: bool,
    /// Written by a store or as a DMA target (through slices/views); read by a load or as a DMA source.
    pub written: bool,
    pub read: bool,
    /// The name the kernel's author gave it (`sem`, `wbuf`): not in the dump, filled in by `lint::names` from what
    /// the compile driver recorded; `None` when unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub python: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct WindowParam<'a> {
    /// `transform_indices = @transform_0`
    pub transform: Option<&'a str>,
    pub window_bounds: Option<Vec<i64>>,
    /// `pipeline_mode = #tpu.pipeline_mode<synchronous>` etc., when present.
    pub pipeline_mode: Option<&'a str>,
}

/// An index as written: a constant when it folds to one, else the SSA value with the integer expression that
/// computes it (`%20` → `((arg9 + 1) % 2)`: the slot a double-buffered DMA targets).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Index<'a> {
    Const(i64),
    Value { name: &'a str, expr: String },
}

impl Index<'_> {
    /// The expression (`3`, `(arg9 % 2)`).
    pub fn expr(&self) -> String {
        match self {
            Index::Const(c) => c.to_string(),
            Index::Value { expr, .. } => expr.clone(),
        }
    }
}

/// A memref operand traced back through views (`tpu.memref_slice`, `tpu.memref_squeeze`, `memref.subview`, ...).
#[derive(Clone, Debug, Serialize)]
pub struct RefTrace<'a> {
    /// The operand as written.
    pub name: &'a str,
    pub ty: Option<MlirType<'a>>,
    /// The kernel argument it is a view of, if any.
    pub base_arg: Option<usize>,
    /// Indices of every slice on the way, outermost view first (`%arg6[%slot]` → `[Value("slot")]`).
    pub slices: Vec<Vec<Index<'a>>>,
    #[serde(skip)]
    pub def: Def,
}

#[derive(Clone, Debug, Serialize)]
pub struct DmaStart<'a> {
    #[serde(skip)]
    pub op: OpId,
    pub opcode: &'a str,
    pub source: Option<RefTrace<'a>>,
    pub target: Option<RefTrace<'a>>,
    pub target_semaphore: Option<RefTrace<'a>>,
    pub source_semaphore: Option<RefTrace<'a>>,
    pub device_id: Option<&'a str>,
    /// Enclosing `scf.for` / `scf.if` / ... ops, innermost first.
    #[serde(skip)]
    pub inside: Vec<OpId>,
}

#[derive(Clone, Debug, Serialize)]
pub struct DmaWait<'a> {
    #[serde(skip)]
    pub op: OpId,
    pub opcode: &'a str,
    pub semaphore: Option<RefTrace<'a>>,
    /// The buffer waited for (`dst` of `tpu.wait_dma2`, `ref` of `tpu.wait_dma`).
    pub target: Option<RefTrace<'a>>,
    pub source: Option<RefTrace<'a>>,
    #[serde(skip)]
    pub inside: Vec<OpId>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Matmul<'a> {
    #[serde(skip)]
    pub op: OpId,
    pub opcode: &'a str,
    pub lhs: Option<DType>,
    pub rhs: Option<DType>,
    /// The accumulator operand's dtype (`tpu.matmul`'s third operand).
    pub acc: Option<DType>,
    pub result: Option<DType>,
    /// `#llo.matmul_data_format<e4m3b>` → `e4m3b`.
    pub data_format: Option<&'a str>,
}

#[derive(Clone, Debug, Serialize)]
pub struct ControlOp<'a> {
    #[serde(skip)]
    pub op: OpId,
    pub opcode: &'a str,
    /// `scf.for`: constant bounds when they fold.
    pub lower: Option<i64>,
    pub upper: Option<i64>,
    pub step: Option<i64>,
    pub regions: usize,
}

#[derive(Clone, Debug, Serialize)]
pub struct Kernel<'a> {
    #[serde(skip)]
    pub func: FuncId,
    pub name: &'a str,
    pub args: Vec<KernelArg<'a>>,
    pub iteration_bounds: Vec<i64>,
    pub dimension_semantics: Vec<&'a str>,
    pub window_params: Vec<WindowParam<'a>>,
    pub scalar_prefetch: usize,
    pub scratch_operands: usize,
    pub core_type: Option<&'a str>,
    pub dma_starts: Vec<DmaStart<'a>>,
    pub dma_waits: Vec<DmaWait<'a>>,
    pub matmuls: Vec<Matmul<'a>>,
    pub loops: Vec<ControlOp<'a>>,
    pub conditionals: Vec<ControlOp<'a>>,
    /// Where the author's Python wrote each op (`kernels.py:158 ← 167 ← 179 (dump: line 46)`), for messages: not in
    /// a Mosaic dump, filled in by `lint::names` from the compilation; empty when unknown.
    #[serde(skip)]
    pub places: std::sync::Arc<std::collections::BTreeMap<OpId, String>>,
    /// What the host program that calls the kernel fixes about its scalar operands. Not in a Mosaic dump: filled
    /// in by the DMA analyses from the host's HLO; empty when unknown.
    #[serde(skip)]
    pub host: HostFacts,
}

/// What the host program fixes about a kernel's scalar-prefetch tables and run-time grid sizes (kernel arguments
/// numbered as the kernel's function numbers them, grid indices first).
#[derive(Clone, Debug, Default, Hash, PartialEq, Eq)]
pub struct HostFacts {
    /// Tables every element of which the host passes as a constant (jax's paged attention passes
    /// `buffer_index = 0` this way): argument → elements, row-major.
    pub tables: std::collections::BTreeMap<usize, Vec<i64>>,
    /// Further elements the host passes as constants (`start_end = [0, distribution[0]]`): (argument, element
    /// row-major) → value.
    pub constants: std::collections::BTreeMap<(usize, usize), i64>,
    /// Grid dimensions whose run-time size the host computes from elements it also passes as tables (`grid =
    /// (distribution[2] - distribution[1],)` with `start_end = distribution[1:3]`): dimension → that size.
    pub grid: std::collections::BTreeMap<usize, TableSum>,
}

/// `konst + Σ coefficient · table element`, each term (coefficient, argument, element row-major).
#[derive(Clone, Debug, Default, Hash, PartialEq, Eq)]
pub struct TableSum {
    pub konst: i64,
    pub terms: Vec<(i64, usize, usize)>,
}

impl Kernel<'_> {
    /// The host call's operand that the kernel's `n`-th operand after its grid indices comes from (scalar-prefetch
    /// operands first, then inputs): Pallas passes the bound of every grid dimension known only at run time
    /// (`iteration_bounds` holding MLIR's dynamic size) as the call's first operands, before the kernel's own.
    pub fn host_operand(&self, n: usize) -> usize {
        self.iteration_bounds.iter().filter(|&&b| b < 0).count() + n
    }
}

/// Whether function `f` signals or waits on semaphores itself (`tpu.sem_signal`, `tpu.sem_wait`): collectives
/// synchronise with them rather than with DMA waits.
pub fn has_semaphore_ops(m: &Module<'_>, f: FuncId) -> bool {
    m.ops
        .iter()
        .enumerate()
        .any(|(i, o)| (is_semaphore_signal(o.opcode) || is_semaphore_wait(o.opcode)) && m.func_of(OpId(i as u32)) == f)
}

/// All Mosaic kernels of a module: functions with grid attributes, or with memref arguments in a TPU memory
/// space (a kernel without a grid), in a `Mosaic` module.
pub fn kernels<'a>(m: &Module<'a>) -> Vec<Kernel<'a>> {
    kernel_funcs(m).map(|f| kernel(m, f)).collect()
}

/// The view of the kernel function named `name` (`@name`), if `m` has one.
pub fn named<'a>(m: &Module<'a>, name: &str) -> Option<Kernel<'a>> {
    kernel_funcs(m).find(|&f| m.func(f).name == name).map(|f| kernel(m, f))
}

/// The kernel functions of a Mosaic module, in order: those with grid or kernel attributes (what [`kernels`]
/// views, without building the views — the name of a kernel is asked of every dump, its view only by some).
pub fn kernel_funcs<'m>(m: &'m Module<'_>) -> impl Iterator<Item = FuncId> + 'm {
    let funcs = if m.layer == Layer::Mosaic { m.funcs.len() as u32 } else { 0 };
    (0..funcs).map(FuncId).filter(|&f| {
        m.func(f).attrs.iter().any(|a| {
            matches!(
                a.key,
                "iteration_bounds" | "window_params" | "dimension_semantics" | "scalar_prefetch" | "scratch_operands"
            )
        })
    })
}

fn func_attr<'v, 'a>(func: &'v Func<'a>, key: &str) -> Option<&'v Value<'a>> {
    func.attrs.iter().find(|a| a.key == key).map(Attr::value)
}

/// The view of one kernel function.
pub fn kernel<'a>(m: &Module<'a>, f: FuncId) -> Kernel<'a> {
    let func = m.func(f);
    let iteration_bounds = func_attr(func, "iteration_bounds").and_then(mattr::int_array).unwrap_or_default();
    let dimension_semantics: Vec<&'a str> = func_attr(func, "dimension_semantics")
        .map(|v| v.items().iter().filter_map(mattr::dialect_attr_word).collect())
        .unwrap_or_default();
    let window_params: Vec<WindowParam<'a>> = func_attr(func, "window_params")
        .map(|v| {
            v.items()
                .iter()
                .map(|w| WindowParam {
                    transform: w.get("transform_indices").and_then(mattr::symbol),
                    window_bounds: w.get("window_bounds").and_then(mattr::int_array),
                    pipeline_mode: w.get("pipeline_mode").and_then(mattr::dialect_attr_word),
                })
                .collect()
        })
        .unwrap_or_default();
    let count = |k: &str| func_attr(func, k).and_then(Value::as_int).unwrap_or(0).max(0) as usize;
    let scalar_prefetch = count("scalar_prefetch");
    let scratch_operands = count("scratch_operands");
    let core_type = func_attr(func, "tpu.core_type").and_then(mattr::dialect_attr_word);

    let entry = m.regions[func.body.idx()].blocks.first().copied();
    let args = kernel_args(func, iteration_bounds.len(), scalar_prefetch, scratch_operands, window_params.is_empty());
    let mut k = Kernel {
        func: f,
        name: func.name,
        args,
        iteration_bounds,
        dimension_semantics,
        window_params,
        scalar_prefetch,
        scratch_operands,
        core_type,
        dma_starts: Vec::new(),
        dma_waits: Vec::new(),
        matmuls: Vec::new(),
        loops: Vec::new(),
        conditionals: Vec::new(),
        places: Default::default(),
        host: Default::default(),
    };
    collect_ops(m, f, entry, &mut k);
    mark_argument_uses(m, f, entry, &mut k);
    k
}

/// Each parameter's role, in Pallas's order: grid indices, scalar-prefetch operands, the kernel's operands (windows
/// when the kernel has window params), scratch.
fn kernel_args<'a>(
    func: &crate::ir::Func<'a>,
    grid_rank: usize,
    scalar_prefetch: usize,
    scratch_operands: usize,
    no_windows: bool,
) -> Vec<KernelArg<'a>> {
    let n = func.params.len();
    let grid = grid_rank.min(n);
    let scratch_start = n.saturating_sub(scratch_operands).max(grid);
    let prefetch_end = (grid + scalar_prefetch).min(scratch_start);
    let mut args = Vec::with_capacity(n);
    for (i, p) in func.params.iter().enumerate() {
        let role = if i < grid {
            ArgRole::GridIndex(i as u32)
        } else if i < prefetch_end {
            ArgRole::ScalarPrefetch((i - grid) as u32)
        } else if i < scratch_start {
            let k = (i - prefetch_end) as u32;
            if no_windows {
                ArgRole::Operand(k)
            } else {
                ArgRole::Window(k)
            }
        } else {
            ArgRole::Scratch((i - scratch_start) as u32)
        };
        let ty = arg_type(p);
        args.push(KernelArg {
            index: i,
            name: p.name,
            role,
            memory_space: ty.as_ref().and_then(MlirType::memory_space),
            semaphore: ty.as_ref().is_some_and(MlirType::is_semaphore),
            ty,
            written: false,
            read: false,
            python: None,
        });
    }
    args
}

/// The kernel's DMA starts and waits (their references traced to arguments), matmuls, loops and conditionals.
fn collect_ops<'a>(m: &Module<'a>, f: FuncId, entry: Option<BlockId>, k: &mut Kernel<'a>) {
    let trace = |op: &Op<'a>, role: &str, pos: usize| -> Option<RefTrace<'a>> {
        let o = op.operands.iter().find(|o| o.role == Some(role)).or_else(|| {
            if op.operands.iter().any(|o| o.role.is_some() && o.role != Some("indices")) {
                None
            } else {
                op.operands.iter().filter(|o| o.role.is_none()).nth(pos)
            }
        })?;
        Some(trace_ref(m, entry, o))
    };
    for id in m.func_ops(f) {
        let op = m.op(id);
        let oc = op.opcode;
        if is_dma_start(oc) {
            k.dma_starts.push(DmaStart {
                op: id,
                opcode: oc,
                source: trace(op, "source", 0),
                target: trace(op, "target", 1),
                target_semaphore: trace(op, "target_semaphore", 2),
                source_semaphore: op
                    .operands
                    .iter()
                    .find(|o| o.role == Some("source_semaphore"))
                    .map(|o| trace_ref(m, entry, o)),
                device_id: op.operands.iter().find(|o| o.role == Some("device_id")).map(|o| o.name),
                inside: m.ancestors(id).collect(),
            });
        } else if is_dma_wait(oc) {
            let dst = trace(op, "dst", 1)
                .or_else(|| op.operands.iter().find(|o| o.role == Some("ref")).map(|o| trace_ref(m, entry, o)));
            k.dma_waits.push(DmaWait {
                op: id,
                opcode: oc,
                semaphore: trace(op, "semaphore", 0).or_else(|| trace(op, "sem", 0)),
                target: dst,
                source: op.operands.iter().find(|o| o.role == Some("src")).map(|o| trace_ref(m, entry, o)),
                inside: m.ancestors(id).collect(),
            });
        } else if is_matmul(oc) {
            k.matmuls.push(matmul(m, id));
        } else if is_loop(oc) {
            k.loops.push(control(m, id));
        } else if is_conditional(oc) {
            k.conditionals.push(control(m, id));
        }
    }
}

/// Marks the arguments that DMAs, loads and stores read or write.
fn mark_argument_uses<'a>(m: &Module<'a>, f: FuncId, entry: Option<BlockId>, k: &mut Kernel<'a>) {
    let mark = |k: &mut Kernel<'a>, t: &Option<RefTrace<'a>>, write: bool| {
        if let Some(a) = t.as_ref().and_then(|t| t.base_arg).and_then(|i| k.args.get_mut(i)) {
            if write {
                a.written = true;
            } else {
                a.read = true;
            }
        }
    };
    for i in 0..k.dma_starts.len() {
        let (s, t) = (k.dma_starts[i].source.clone(), k.dma_starts[i].target.clone());
        mark(k, &s, false);
        mark(k, &t, true);
    }
    for id in m.func_ops(f) {
        let op = m.op(id);
        let (store, load) = (is_store(op.opcode), is_load(op.opcode));
        if !store && !load || is_dma_start(op.opcode) || is_dma_wait(op.opcode) {
            continue;
        }
        // the memref operand: the `into` operand (llo.vector_store), else the first memref-typed operand, else
        // (LLO stages, where refs are i32 addresses) the first plain operand that is a view of a kernel argument
        let o = op.operands.iter().find(|o| o.role == Some("into")).or_else(|| {
            op.operands
                .iter()
                .find(|o| o.role.is_none() && o.ty.as_ref().and_then(Type::mlir).is_some_and(|t| t.is_memref()))
        });
        let o = o.or_else(|| {
            op.operands.iter().filter(|o| o.role.is_none()).find(|o| trace_ref(m, entry, o).base_arg.is_some())
        });
        if let Some(o) = o {
            let t = Some(trace_ref(m, entry, o));
            mark(k, &t, store);
        }
    }
}

/// An argument's memref type: declared, or from the `llo.type` attribute when the stage retyped it to `i32`.
fn arg_type<'a>(p: &Param<'a>) -> Option<MlirType<'a>> {
    if let Some(a) = p.attrs.iter().find(|a| a.key == "llo.type") {
        if let Some(w) = a.value().word() {
            if let Ok((_, t)) = mlir_type(w, 0) {
                return Some(t);
            }
        }
    }
    p.ty.mlir().cloned()
}

/// Follows a memref operand back through view ops to a kernel argument, collecting slice indices.
fn trace_ref<'a>(m: &Module<'a>, entry: Option<BlockId>, o: &Operand<'a>) -> RefTrace<'a> {
    let mut t = RefTrace {
        name: o.name,
        ty: o.ty.as_ref().and_then(Type::mlir).cloned(),
        base_arg: None,
        slices: Vec::new(),
        def: o.def,
    };
    let mut def = o.def;
    for _ in 0..64 {
        match def {
            Def::BlockArg { block, index } if Some(block) == entry => {
                t.base_arg = Some(index as usize);
                break;
            }
            Def::Op { op, .. } => {
                let d = m.op(op);
                if !is_view(d.opcode) {
                    break;
                }
                let idx: Vec<Index<'a>> =
                    d.operands.iter().filter(|x| x.role == Some("indices")).map(|x| index_of(m, x)).collect();
                if !idx.is_empty() {
                    t.slices.insert(0, idx);
                }
                match d.operands.iter().find(|x| x.role.is_none()) {
                    Some(src) => def = src.def,
                    None => break,
                }
            }
            _ => break,
        }
    }
    t
}

/// An index operand: a constant when defined by a constant op, else its name.
fn index_of<'a>(m: &Module<'a>, o: &Operand<'a>) -> Index<'a> {
    if let Def::Op { op, .. } = o.def {
        if let Some(c) = const_int(m, op) {
            return Index::Const(c);
        }
    }
    Index::Value { name: o.name, expr: expr(m, o.def, o.name, 0) }
}

/// Renders the integer arithmetic that defines a value (`arith.addi/subi/muli/remsi/divsi`, casts, constants),
/// stopping at block arguments and other ops, which print as their names.
pub fn expr(m: &Module<'_>, def: Def, name: &str, depth: u32) -> String {
    let Def::Op { op, .. } = def else {
        if let Def::BlockArg { block, index } = def {
            if let Some(p) = m.blocks.get(block.idx()).and_then(|b| b.args.get(index as usize)) {
                return p.name.to_string();
            }
        }
        return name.to_string();
    };
    if let Some(c) = const_int(m, op) {
        return c.to_string();
    }
    let o = m.op(op);
    let b = op_name(o.opcode);
    let arg = |k: usize| -> String {
        match o.operands.get(k) {
            Some(x) if depth < 8 => expr(m, x.def, x.name, depth + 1),
            Some(x) => format!("%{}", x.name),
            None => "?".into(),
        }
    };
    let bin = |sym: &str| format!("({} {sym} {})", arg(0), arg(1));
    match b {
        "addi" | "add" => bin("+"),
        "subi" | "sub" | "subtract" => bin("-"),
        "muli" | "mul" | "multiply" => bin("*"),
        "remsi" | "remui" | "rem" | "remainder" => bin("%"),
        "divsi" | "divui" | "floordivsi" | "ceildivsi" | "div" | "divide" => bin("/"),
        "index_cast" | "index_castui" | "extsi" | "extui" | "trunci" | "bitcast" | "convert" => arg(0),
        // Any other op: by what it computes (`minsi(arg0, 3)`, `load(arg2, 0)`), not by its value name, so the
        // same index reads the same from a dump and from a decoded kernel body.
        _ if depth < 8 => {
            let args: Vec<String> = (0..o.operands.len()).map(arg).collect();
            format!("{b}({})", args.join(", "))
        }
        _ => format!("%{name}"),
    }
}

/// The integer an `arith.constant 3 : i32` / `llo.constant {value = 3 : i32}` / `stablehlo.constant dense<3>` holds.
pub fn const_int(m: &Module<'_>, op: OpId) -> Option<i64> {
    let o = m.op(op);
    if !is_constant(o.opcode) {
        return None;
    }
    let v = o.payload.as_deref().or_else(|| o.attr("value"))?;
    v.as_int().or_else(|| mattr::int_array(v).filter(|a| a.len() == 1).map(|a| a[0]))
}

/// The facts of one matmul-like op: operand, accumulator and result dtypes, and the LLO data format.
pub fn matmul<'a>(m: &Module<'a>, id: OpId) -> Matmul<'a> {
    let op = m.op(id);
    let data_format = op.attr("data_format").and_then(mattr::dialect_attr_word);
    let result = op.ty.mlir().and_then(|t| t.result(0)).and_then(MlirType::dtype);
    let acc = if is_accumulating_matmul(op.opcode) { m.operand_dtype(id, 2) } else { None };
    Matmul {
        op: id,
        opcode: op.opcode,
        lhs: m.operand_dtype(id, 0),
        rhs: m.operand_dtype(id, 1),
        acc,
        result,
        data_format,
    }
}

/// Every matmul-like op of a function (StableHLO `dot_general`/`convolution`, Mosaic `tpu.matmul`, `llo.vmatmul*`).
pub fn matmuls<'a>(m: &Module<'a>, f: FuncId) -> Vec<Matmul<'a>> {
    m.func_ops(f).into_iter().filter(|&id| is_matmul(m.op(id).opcode)).map(|id| matmul(m, id)).collect()
}

fn control<'a>(m: &Module<'a>, id: OpId) -> ControlOp<'a> {
    let op = m.op(id);
    let c = |k: usize| match op.operands.get(k).map(|o| o.def) {
        Some(Def::Op { op, .. }) => const_int(m, op),
        _ => None,
    };
    let is_for = crate::semantic::op::is_counted_loop(op.opcode);
    ControlOp {
        op: id,
        opcode: op.opcode,
        lower: if is_for { c(0) } else { None },
        upper: if is_for { c(1) } else { None },
        step: if is_for { c(2) } else { None },
        regions: op.regions.len(),
    }
}

#[cfg(test)]
mod tests {
    use crate::parse::mlir::parse_mlir;

    #[test]
    fn a_dynamic_grid_dimension_shifts_the_host_operands() {
        let k = |bounds: &str| {
            let text = format!(
                "module {{\n  func.func @k(%arg0: i32, %arg1: memref<4xi32, #tpu.memory_space<smem>>, %arg2: \
                 memref<8x128xf32, #tpu.memory_space<any>>) attributes {{dimension_semantics = \
                 [#tpu.dimension_semantics<arbitrary>], iteration_bounds = array<i64: {bounds}>, scalar_prefetch = \
                 1 : i64, scratch_operands = 0 : i64, window_params = [{{}}]}} {{\n    return\n  }}\n}}\n"
            );
            let m = parse_mlir("t.mlir", &text).expect("parses");
            super::kernels(&m).remove(0).host_operand(1)
        };
        // the input after one scalar-prefetch operand: operand 1 of the call, or 2 after a run-time grid bound
        assert_eq!(k("4"), 1);
        assert_eq!(k("-9223372036854775808"), 2);
    }
}
