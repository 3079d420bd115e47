//! From the syntax tree to the shared graph: `module` → `Module`, `func.func` → `Func`, nested regions → `Region` /
//! `Block`, SSA uses resolved with lexical scoping (forward references resolved at the end of the function),
//! `call @f` → `Call`, then `Module::link()`.

use super::attr;
use super::ops::{ArgAst, OpAst, RegionAst};
use crate::ir::mlir_type::MlirType;
use crate::ir::span::Span;
use crate::ir::value::{Value, ValueKind};
use crate::ir::*;
use std::sync::Arc;

/// FxHash (rustc's hasher): SSA names are short and trusted to be non-adversarial enough; SipHash cost 5% of
/// parse time. The maps are only looked up, never iterated, so the hasher cannot change any output.
type Map<K, V> = rustc_hash::FxHashMap<K, V>;

pub struct FileAst<'a> {
    /// `#loc1 = loc(...)`, `#map = affine_map<...>`, `!alias = type`: name with its sigil, value.
    pub aliases: Vec<Attr<'a>>,
    pub ops: Vec<OpAst<'a>>,
}

fn is_module(op: &OpAst<'_>) -> bool {
    matches!(op.name, "module" | "builtin.module")
}

fn is_func(op: &OpAst<'_>) -> bool {
    matches!(op.name, "func.func" | "func" | "llo.func" | "tpu.func")
        || op.name.ends_with(".func") && !op.regions.is_empty()
}

fn symbol_name<'a>(v: &Value<'a>) -> &'a str {
    attr::symbol(v).unwrap_or("")
}

struct Builder<'a> {
    m: Module<'a>,
    /// name → (definition, how many results the name covers)
    scope: Map<&'a str, Def>,
    undo: Vec<(&'a str, Option<Def>)>,
    /// Every definition seen in the current function, for forward references.
    all_defs: Map<&'a str, Def>,
    pending: Vec<(OpId, usize, &'a str, u32)>,
    mosaic: bool,
}

pub fn build<'a>(text: &'a str, file: FileAst<'a>) -> Module<'a> {
    let mut top: Vec<OpAst<'a>> = Vec::new();
    let mut module_op: Option<OpAst<'a>> = None;
    for op in file.ops {
        if is_module(&op) && module_op.is_none() {
            module_op = Some(op);
        } else {
            top.push(op);
        }
    }
    let (name, mut attrs, mut body) = match module_op {
        Some(mut mo) => {
            let name = mo.symbol.as_ref().map(symbol_name).unwrap_or("");
            let ops =
                mo.regions.first_mut().map(|r| r.blocks.drain(..).flat_map(|b| b.ops).collect()).unwrap_or_default();
            (name, std::mem::take(&mut mo.attrs), ops)
        }
        None => ("", Vec::new(), Vec::new()),
    };
    body.extend(top);
    let mosaic = attrs.iter().any(|a| a.key.starts_with("stable_mosaic") || a.key.starts_with("tpu."));
    attrs.extend(file.aliases);
    let mut b = Builder {
        m: Module::new(Layer::StableHlo, name, text, Span::new(0, text.len())),
        scope: Map::default(),
        undo: Vec::new(),
        all_defs: Map::default(),
        pending: Vec::new(),
        mosaic,
    };
    b.m.attrs = attrs;
    // flatten nested modules, create every function first so calls resolve in any order
    let mut funcs: Vec<OpAst<'a>> = Vec::new();
    let mut stack = body;
    stack.reverse();
    while let Some(op) = stack.pop() {
        if is_module(&op) {
            let mut inner: Vec<OpAst<'a>> = op.regions.into_iter().flat_map(|r| r.blocks).flat_map(|b| b.ops).collect();
            inner.reverse();
            stack.extend(inner);
        } else if is_func(&op) {
            funcs.push(op);
        } else {
            b.note_op(&op);
            let value = module_level_value(&op);
            b.m.attrs.push(Attr::new(op.name, value, op.span));
        }
    }
    let mut made = Vec::new();
    for f in funcs {
        let (fid, entry) = b.declare_func(&f);
        made.push((fid, entry, f));
    }
    for (fid, entry, f) in made {
        b.func_body(fid, entry, f);
    }
    b.m.fill_operand_types();
    b.m.layer = if b.mosaic { Layer::Mosaic } else { Layer::StableHlo };
    let entry =
        b.m.func_by_name("main")
            .or_else(|| {
                b.m.funcs
                    .iter()
                    .position(|f| {
                        f.attrs
                            .iter()
                            .any(|a| matches!(a.key, "iteration_bounds" | "window_params" | "dimension_semantics"))
                    })
                    .map(|i| FuncId(i as u32))
            })
            .or(if b.m.funcs.is_empty() { None } else { Some(FuncId(0)) });
    if let Some(e) = entry {
        b.m.entry = Some(e);
        b.m.funcs[e.idx()].is_entry = true;
    }
    b.m.link();
    b.m
}

/// A module-level op that is not a function (`sdy.mesh @mesh = <...> {...}`) kept as an attribute: its symbol,
/// payload and attributes in a group.
fn module_level_value<'a>(op: &OpAst<'a>) -> Value<'a> {
    let mut items = Vec::new();
    if let Some(s) = &op.symbol {
        items.push(s.clone());
    }
    items.extend(op.payload.iter().cloned());
    for a in &op.attrs {
        items.push(Value { kind: ValueKind::KeyVal { key: a.key, value: Box::new(a.value().clone()) }, span: a.span });
    }
    Value { kind: ValueKind::Group { open: '{', items }, span: op.span }
}

fn param<'a>(a: &ArgAst<'a>, fallback: Option<&MlirType<'a>>) -> Param<'a> {
    let ty = a.ty.clone().or_else(|| fallback.cloned()).map(|t| Type::Mlir(Arc::new(t))).unwrap_or(Type::None);
    Param { name: a.name, ty, attrs: a.attrs.clone(), span: a.span }
}

fn i1_like<'a>(t: &MlirType<'a>) -> MlirType<'a> {
    let i1 = MlirType::Scalar { dtype: DType::Pred, text: "i1" };
    match t {
        MlirType::Shaped(s) => {
            let mut s = s.clone();
            s.elem = Box::new(i1);
            MlirType::Shaped(s)
        }
        _ => i1,
    }
}

/// The op's result type (none, one, or the list) and how many values it defines.
fn result_type<'a>(op: &OpAst<'a>) -> (Type<'a>, u32) {
    let rtys = result_types(op);
    let count: u32 = op.results.iter().map(|r| r.1).sum();
    let ty = match rtys.len() {
        0 => Type::None,
        1 => rtys.into_iter().next().map(|t| Type::Mlir(Arc::new(t))).unwrap_or(Type::None),
        _ => Type::Mlir(Arc::new(MlirType::Results(rtys))),
    };
    (ty, count)
}

/// Moves the op's `@symbol` into its attributes under the key its kind names it by (`callee` of a call — returned,
/// to link —, `call_target_name` of a custom call, else `sym_name`), and its `loc(...)`.
fn symbol_and_loc_attrs<'a>(op: &mut OpAst<'a>) -> Option<&'a str> {
    let mut calls_to = None;
    if let Some(sym) = op.symbol.take() {
        let key = if op.name == "call" || op.name.ends_with(".call") {
            calls_to = attr::symbol(&sym);
            "callee"
        } else if op.name.ends_with("custom_call") {
            "call_target_name"
        } else {
            "sym_name"
        };
        let span = sym.span;
        op.attrs.push(Attr::new(key, sym, span));
    }
    if let Some(loc) = op.loc.take() {
        let span = loc.span;
        op.attrs.push(Attr::new("loc", loc, span));
    }
    calls_to
}

/// The op's bare payload values: none, one, or a sequence of them.
fn payload_value(payload: Vec<Value<'_>>) -> Option<Box<Value<'_>>> {
    match payload.len() {
        0 => None,
        1 => payload.into_iter().next().map(Box::new),
        _ => {
            let span = payload.iter().fold(payload[0].span, |s, v| s.to(v.span));
            Some(Box::new(Value { kind: ValueKind::Seq(payload), span }))
        }
    }
}

/// The op's result types, from whatever its syntax says.
fn result_types<'a>(op: &OpAst<'a>) -> Vec<MlirType<'a>> {
    let n: u32 = op.results.iter().map(|r| r.1).sum();
    if let Some(r) = &op.result_types {
        return r.clone();
    }
    if let Some(r) = &op.sig_results {
        return r.iter().map(|x| x.0.clone()).collect();
    }
    if n == 0 || op.types.is_empty() {
        return Vec::new();
    }
    if op.name.ends_with(".cmpi") || op.name.ends_with(".cmpf") {
        return op.types.last().map(i1_like).into_iter().collect();
    }
    // `memref.load %m[%i] : memref<4x4xf32>` states the memref; the result is an element
    if n == 1 && op.name.ends_with(".load") {
        if let [t] = op.types.as_slice() {
            if t.is_memref() {
                return vec![t.elem().clone()];
            }
        }
    }
    let k = op.types.len().saturating_sub(n as usize);
    op.types[k..].to_vec()
}

impl<'a> Builder<'a> {
    fn note_op(&mut self, op: &OpAst<'a>) {
        if !self.mosaic && (op.name.starts_with("tpu.") || op.name.starts_with("llo.")) {
            self.mosaic = true;
        }
    }

    fn declare_func(&mut self, f: &OpAst<'a>) -> (FuncId, BlockId) {
        let mut name = f.symbol.as_ref().map(symbol_name).unwrap_or("");
        let mut attrs = f.attrs.clone();
        if name.is_empty() {
            if let Some(a) = attrs.iter().find(|a| a.key == "sym_name") {
                if let ValueKind::Str(s) = a.value().kind {
                    name = s;
                }
            }
        }
        for p in &f.payload {
            if let Some("public" | "private" | "nested") = p.word() {
                attrs.push(Attr::new("sym_visibility", p.clone(), p.span));
            }
        }
        let decls: &[ArgAst<'a>] = if f.decls.is_empty() {
            f.regions.first().and_then(|r| r.blocks.first()).map(|b| b.args.as_slice()).unwrap_or(&[])
        } else {
            &f.decls
        };
        let params: Vec<Param<'a>> = decls.iter().map(|a| param(a, None)).collect();
        for p in &params {
            if let Some(t) = p.ty.mlir() {
                if t.shaped().and_then(|s| s.memory_space).is_some_and(|s| s.contains("tpu.")) {
                    self.mosaic = true;
                }
            }
        }
        let results = match &f.sig_results {
            Some(r) => r.iter().map(|x| Type::Mlir(Arc::new(x.0.clone()))).collect(),
            None => Vec::new(),
        };
        let func = Func {
            name,
            span: f.span,
            name_span: f.symbol.as_ref().map(|s| s.span).unwrap_or(f.name_span),
            is_entry: false,
            params: params.clone(),
            results,
            attrs,
            body: RegionId(0),
            callers: Vec::new(),
        };
        let (fid, entry) = self.m.add_func(func);
        self.m.blocks[entry.idx()].args = params;
        (fid, entry)
    }

    fn define(&mut self, name: &'a str, def: Def) {
        let prev = self.scope.insert(name, def);
        self.undo.push((name, prev));
        self.all_defs.insert(name, def);
    }

    fn restore(&mut self, mark: usize) {
        while self.undo.len() > mark {
            if let Some((name, prev)) = self.undo.pop() {
                match prev {
                    Some(d) => {
                        self.scope.insert(name, d);
                    }
                    None => {
                        self.scope.remove(name);
                    }
                }
            }
        }
    }

    fn func_body(&mut self, _fid: FuncId, entry: BlockId, f: OpAst<'a>) {
        self.scope.clear();
        self.undo.clear();
        self.all_defs.clear();
        self.pending.clear();
        let region_id = self.m.blocks[entry.idx()].region;
        let nargs = self.m.blocks[entry.idx()].args.len();
        for k in 0..nargs {
            let name = self.m.blocks[entry.idx()].args[k].name;
            self.define(name, Def::BlockArg { block: entry, index: k as u32 });
        }
        if let Some(region) = f.regions.into_iter().next() {
            for (bi, block) in region.blocks.into_iter().enumerate() {
                let bid = if bi == 0 {
                    self.m.blocks[entry.idx()].label = block.label;
                    entry
                } else {
                    let args: Vec<Param<'a>> = block.args.iter().map(|a| param(a, None)).collect();
                    let bid = self.m.add_block(region_id, block.label, args);
                    for (k, a) in block.args.iter().enumerate() {
                        self.define(a.name, Def::BlockArg { block: bid, index: k as u32 });
                    }
                    bid
                };
                for op in block.ops {
                    self.op(bid, op);
                }
            }
        }
        self.resolve_pending();
    }

    fn resolve_pending(&mut self) {
        for (op, k, name, index) in std::mem::take(&mut self.pending) {
            if let Some(d) = self.all_defs.get(name) {
                let def = offset_def(*d, index);
                if let Some(o) = self.m.ops.get_mut(op.idx()).and_then(|o| o.operands.get_mut(k)) {
                    o.def = def;
                }
            }
        }
    }

    fn op(&mut self, block: BlockId, mut op: OpAst<'a>) -> OpId {
        self.note_op(&op);
        let (ty, count) = result_type(&op);
        let (operands, unresolved) = self.operands(&mut op, count);
        let calls_to = symbol_and_loc_attrs(&mut op);
        let calls: Vec<Call> = calls_to
            .and_then(|n| self.m.func_by_name(n))
            .map(|func| Call { role: "callee", func })
            .into_iter()
            .collect();
        let first = op.results.first().copied();
        let new = Op {
            name: first.map(|r| r.0).unwrap_or(""),
            opcode: full_op_name(op.name),
            ty,
            result_count: count,
            operands,
            payload: payload_value(std::mem::take(&mut op.payload)),
            attrs: std::mem::take(&mut op.attrs),
            regions: ThinVec::new(),
            calls,
            block,
            users: ThinVec::new(),
            is_root: false,
            issue: None,
            span: op.span,
            name_span: first.map(|r| r.2).unwrap_or(op.name_span),
            opcode_span: op.name_span,
        };
        let id = self.m.push_op(block, new);
        for (k, name, index) in unresolved {
            self.pending.push((id, k, name, index));
        }
        // regions: the op's declared block arguments belong to each region's entry block
        let decl_types = decl_types(op.name, &op.decls, &op.types, op.sig_results.as_deref());
        for region in op.regions {
            self.region(id, region, &op.decls, &decl_types);
        }
        let mut base = 0;
        for (name, n, _) in op.results {
            self.define(name, Def::Op { op: id, index: base });
            base += n;
        }
        id
    }

    /// The op's operands, resolved in scope (the others listed as `(position, name, index)` for the second pass),
    /// with their types: stated inline, or positionally when the type list is the operands' (`(a, b) -> c`; the
    /// list is then taken from the op).
    #[allow(clippy::type_complexity)]
    fn operands(&mut self, op: &mut OpAst<'a>, result_count: u32) -> (Vec<Operand<'a>>, Vec<(usize, &'a str, u32)>) {
        let positional = (op.result_types.is_some() || result_count == 0) && op.types.len() == op.operands.len();
        let mut operands = Vec::with_capacity(op.operands.len());
        let mut unresolved = Vec::new();
        let mut types = if positional { std::mem::take(&mut op.types) } else { Vec::new() };
        for (k, u) in op.operands.drain(..).enumerate() {
            let def = match self.scope.get(u.name) {
                Some(d) => offset_def(*d, u.index),
                None => {
                    unresolved.push((k, u.name, u.index));
                    Def::Unresolved
                }
            };
            let stated = types.get_mut(k).map(|t| std::mem::replace(t, MlirType::None));
            let ty = u.ty.or(stated).map(|t| Type::Mlir(Arc::new(t)));
            operands.push(Operand { name: u.name, ty, def, role: u.role, span: u.span });
        }
        (operands, unresolved)
    }

    fn region(
        &mut self,
        parent: OpId,
        region: RegionAst<'a>,
        decls: &[ArgAst<'a>],
        decl_types: &[Option<MlirType<'a>>],
    ) {
        let rid = self.m.add_region(RegionParent::Op(parent));
        let mark = self.undo.len();
        let mut blocks = region.blocks;
        if blocks.is_empty() {
            blocks.push(Default::default());
        }
        for (bi, block) in blocks.into_iter().enumerate() {
            let args: Vec<Param<'a>> = if block.label.is_none() && bi == 0 && !decls.is_empty() {
                decls.iter().enumerate().map(|(k, a)| param(a, decl_types.get(k).and_then(Option::as_ref))).collect()
            } else {
                block.args.iter().map(|a| param(a, None)).collect()
            };
            let names: Vec<&'a str> = args.iter().map(|p| p.name).collect();
            let bid = self.m.add_block(rid, block.label, args);
            for (k, n) in names.into_iter().enumerate() {
                self.define(n, Def::BlockArg { block: bid, index: k as u32 });
            }
            for op in block.ops {
                self.op(bid, op);
            }
        }
        self.restore(mark);
    }
}

/// Types of block arguments declared without one (`scf.for %i = %lb ...: i32`, `iter_args(%x = %y) -> (f32)`,
/// `stablehlo.while(%a = %b) : tensor<i64>`).
fn decl_types<'a>(
    name: &str,
    decls: &[ArgAst<'a>],
    types: &[MlirType<'a>],
    sig: Option<&[(MlirType<'a>, Vec<Attr<'a>>)]>,
) -> Vec<Option<MlirType<'a>>> {
    if decls.iter().all(|d| d.ty.is_some()) {
        return Vec::new();
    }
    if name.ends_with(".for") {
        let iv = types.first().cloned().unwrap_or(MlirType::Scalar { dtype: DType::Index, text: "index" });
        let mut out = vec![Some(iv)];
        out.extend(sig.unwrap_or(&[]).iter().map(|x| Some(x.0.clone())));
        return out;
    }
    if types.len() == decls.len() {
        return types.iter().cloned().map(Some).collect();
    }
    Vec::new()
}

fn offset_def(d: Def, by: u32) -> Def {
    match d {
        Def::Op { op, index } => Def::Op { op, index: index + by },
        Def::BlockArg { block, index } => Def::BlockArg { block, index: index + by },
        Def::Unresolved => Def::Unresolved,
    }
}

/// The full name of an op the printer wrote without its dialect (the func and builtin dialects are the default
/// dialects of their regions): `return` is `func.return`, as the bytecode and the generic form spell it.
fn full_op_name(name: &str) -> &str {
    match name {
        "return" => "func.return",
        "call" => "func.call",
        "call_indirect" => "func.call_indirect",
        "constant" => "func.constant",
        "unrealized_conversion_cast" => "builtin.unrealized_conversion_cast",
        other => other,
    }
}
