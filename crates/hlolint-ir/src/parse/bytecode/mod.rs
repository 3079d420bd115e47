//! MLIR bytecode → `ir::Module` (layer `Mosaic`): the Pallas TPU kernel inside a `tpu_custom_call`, read from
//! the HLO or StableHLO file alone.
//!
//! jax serializes a kernel with `write_bytecode(desired_version=0)` after the `mosaic-serde{serialize=true}`
//! pass (`jax/_src/tpu_custom_call.py`), so real bodies are bytecode **version 0** whose op names live in a
//! dialect `stable_mosaic` (`stable_mosaic.arith.constant`, `stable_mosaic.tpu.matmul`, ...). The reader
//! supports versions 0 to 6 (MLIR's current `kVersion`), written from MLIR's `BytecodeFormat.md`,
//! `BytecodeReader.cpp` and `BuiltinDialectBytecode.td`:
//!
//! - header (magic `ML\xefR`, version, producer) and sections: strings, dialects (with versions from v1, op
//!   names with their registered flag from v5), attribute/type offsets and data, IR, resources, properties;
//! - builtin attributes (array, dictionary, string, symbol refs, type, unit, integer, float, dense arrays, dense
//!   int/float/string elements, dense resources, sparse, distinct, affine maps, all locations) and builtin types
//!   (integers, index, all float types, function, complex, memref, tensor, tuple, vector), printed back as MLIR
//!   text; other dialects' attributes/types in their textual fallback form (`#tpu.memory_space<vmem>`), kept as
//!   text;
//! - regions, blocks with arguments, operands with MLIR's per-scope value numbering (forward references
//!   included), results, successors, use-list orders (read and skipped), isolated regions stored as nested
//!   sections from v2 (what MLIR loads lazily; we read them eagerly);
//! - properties (v5+): for ops that were unregistered when written, the properties dictionary is merged into
//!   the op's attributes; for registered ops it is an op-specific encoding that cannot be read without the op's
//!   definition: it is skipped with a note (jax's version-0 bodies have no properties: inherent attributes are
//!   in the attribute dictionary).
//!
//! Decoded op names drop the `stable_mosaic.` prefix (what `mosaic-serde{serialize=false}` does before the
//! `post-deserialization` dump), so rules see `tpu.matmul` in both the dump and the HLO file.
//!
//! Ownership: the IR borrows every name as `&'a str`, and a decoded body has no source text to borrow from.
//! [`decode`] therefore returns a [`DecodedModule`] that owns all the text (one arena of strings: op names,
//! printed types and attributes, value names) and an owned op/block/region graph; [`DecodedModule::module`]
//! builds the shared `ir::Module<'_>` borrowing from it. The caller keeps the `DecodedModule` (e.g. inside
//! [`DecodedKernel`]) alive as long as it uses the module, exactly like it keeps a file's text for a parsed
//! module. Building the module again is cheap (no decoding), so nothing self-referential is needed.
//!
//! Spans in a decoded module are empty: a diagnostic about a decoded op should point at the custom call
//! that holds the body. Each op's source location (the user's Python line) is in its `metadata` attribute in
//! HLO's shape (`{op_name="swap:" source_file="..." source_line=60 source_column=4}`), so
//! `Module::source_stack` works for decoded ops too.

mod attrs;
mod config;
mod decode;
mod error;
mod reader;
mod roles;
mod text;

pub use config::{kernel_from_backend_config, kernels_in_backend_config, DecodedKernel};
pub use decode::MAX_VERSION;
pub use error::BytecodeError;
pub use text::{parse_textual_attr, parse_textual_type};

use crate::ir::{
    self, Attr, Def, Func, Layer, Module, Op, Operand, Param, RegionParent, Span, ThinVec, Type, Value, ValueKind,
};
use decode::{DBlock, DDef, DFuncInfo, DOp, DRegion, Str};

/// Decodes MLIR bytecode (the raw bytes, starting with `ML\xefR`).
///
/// Attributes and regions nest, and the reader follows them recursively (with depth limits that turn hostile
/// nesting into an error). So that those limits hold on any caller's stack (test threads have 2 MiB, and debug
/// builds have big frames), decoding runs through [`with_decoder_stack`].
pub fn decode(bytes: &[u8]) -> Result<DecodedModule, BytecodeError> {
    with_decoder_stack(|| decode::decode(bytes))
}

thread_local! {
    static ON_DECODER_STACK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` on a thread with a 64 MiB stack (reserved, not committed), or directly when already on one. A
/// caller decoding many kernels (a whole HLO file) can wrap the batch to pay for one thread instead of one per
/// kernel. If no thread can be spawned, `f` runs on the caller's thread.
pub fn with_decoder_stack<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    if ON_DECODER_STACK.with(|c| c.get()) {
        return f();
    }
    let slot = std::sync::Mutex::new(Some(f));
    let take = || slot.lock().unwrap_or_else(|e| e.into_inner()).take();
    let spawned = std::thread::scope(|s| {
        let h = std::thread::Builder::new().name("bytecode".into()).stack_size(64 << 20).spawn_scoped(s, || {
            ON_DECODER_STACK.with(|c| c.set(true));
            take().map(|f| f())
        });
        match h {
            Ok(h) => h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)),
            Err(_) => None,
        }
    });
    match spawned {
        Some(v) => v,
        None => match take() {
            Some(f) => f(),
            None => unreachable!("the decoder closure ran on the spawned thread"),
        },
    }
}

/// A decoded bytecode module: owns its text and graph; [`DecodedModule::module`] gives the shared IR.
#[derive(Clone, Debug)]
pub struct DecodedModule {
    /// Bytecode format version (jax writes 0).
    pub version: u64,
    /// Producer string from the header (`MLIR23.0.0git`).
    pub producer: String,
    /// Dialects referenced, with their version payload when the bytecode carries one (v1+).
    pub dialects: Vec<(String, Option<Vec<u8>>)>,
    /// The body was written by Mosaic's serializer (its ops live in the `stable_mosaic` dialect).
    pub mosaic_serialized: bool,
    /// Things decoded only partly (undecodable dialect encodings, native properties, skipped top-level ops).
    pub notes: Vec<String>,
    pub(crate) arena: Vec<String>,
    pub(crate) ops: Vec<DOp>,
    pub(crate) blocks: Vec<DBlock>,
    pub(crate) regions: Vec<DRegion>,
    pub(crate) top_block: u32,
    /// The op locations' call chains (`metadata={stack_frame_id=N}` points into them).
    pub(crate) frames: decode::FrameTable,
}

impl DecodedModule {
    fn s(&self, i: Str) -> &str {
        self.arena.get(i as usize).map(String::as_str).unwrap_or("")
    }

    /// Every op's name as written in the bytecode (`stable_mosaic.tpu.matmul`), in decoding order.
    pub fn written_op_names(&self) -> Vec<&str> {
        self.ops.iter().map(|o| self.s(o.full_name)).collect()
    }

    /// The ops of the module body: the top-level `builtin.module`'s block, or the top-level block itself when
    /// the bytecode holds something else.
    pub(crate) fn body_ops(&self) -> (Option<&DOp>, &[u32]) {
        let top = &self.blocks[self.top_block as usize];
        if let [only] = top.ops.as_slice() {
            let op = &self.ops[*only as usize];
            if self.s(op.opcode) == "builtin.module" {
                let body = op
                    .regions
                    .first()
                    .and_then(|r| self.regions[*r as usize].blocks.first())
                    .map(|b| self.blocks[*b as usize].ops.as_slice())
                    .unwrap_or(&[]);
                return (Some(op), body);
            }
        }
        (None, &top.ops)
    }

    /// The kernel's name: the entry function's `sym_name`.
    pub fn kernel_name(&self) -> Option<&str> {
        let (_, body) = self.body_ops();
        let funcs: Vec<&DOp> = body.iter().map(|&o| &self.ops[o as usize]).filter(|o| o.func.is_some()).collect();
        let entry = funcs.iter().find(|o| self.is_kernel_func(o)).or(funcs.first())?;
        entry.func.as_ref().map(|f| self.s(f.name))
    }

    /// The Pallas kernel function carries the grid (`iteration_bounds`, `window_params`, ...); the others are
    /// index maps (`transform_N`).
    fn is_kernel_func(&self, op: &DOp) -> bool {
        op.attrs.iter().any(|(k, _)| {
            matches!(self.s(*k), "iteration_bounds" | "window_params" | "dimension_semantics" | "scalar_prefetch")
        })
    }

    fn value(&self, text: Str) -> Value<'_> {
        parse_textual_attr(self.s(text))
    }

    fn attrs(&self, list: &[(Str, Str)]) -> Vec<Attr<'_>> {
        list.iter().map(|&(k, v)| Attr::new(self.s(k), self.value(v), Span::default())).collect()
    }

    fn params(&self, b: &DBlock, attrs: &[Vec<(Str, Str)>]) -> Vec<Param<'_>> {
        b.args
            .iter()
            .enumerate()
            .map(|(k, &(name, ty))| Param {
                name: self.s(name),
                ty: parse_textual_type(self.s(ty)),
                attrs: attrs.get(k).map(|a| self.attrs(a)).unwrap_or_default(),
                span: Span::default(),
            })
            .collect()
    }

    /// The call chains of the ops' locations as HLO's stack-frame tables (one file and function name per location).
    fn stack_frames(&self) -> ir::StackFrames<'_> {
        let t = &self.frames;
        let mut out = ir::StackFrames::default();
        for (i, &(file, func, line, column)) in t.locations.iter().enumerate() {
            let id = i as u32 + 1;
            out.file_names.push(self.s(file));
            out.function_names.push(func.map(|f| self.s(f)).unwrap_or(""));
            out.file_locations.push(ir::FileLocation {
                file_name_id: id,
                function_name_id: id,
                line,
                end_line: line,
                column,
                end_column: column,
            });
        }
        out.frames = t.frames.clone();
        out
    }

    /// `metadata={op_name="..." source_file="..." source_line=N source_column=M stack_frame_id=F}` as HLO writes
    /// it (`F`: the innermost frame of its call chain in the module's stack frames).
    fn metadata(&self, op: &DOp) -> Option<Attr<'_>> {
        let loc = op.loc.as_ref()?;
        let v = |kind| Value { kind, span: Span::default() };
        let kv = |key, value| v(ValueKind::KeyVal { key, value: Box::new(value) });
        let mut items = Vec::new();
        if let Some(n) = loc.op_name {
            items.push(kv("op_name", v(ValueKind::Str(self.s(n)))));
        }
        if let Some(f) = loc.file {
            items.push(kv("source_file", v(ValueKind::Str(self.s(f)))));
            items.push(kv("source_line", v(ValueKind::Word(self.s(loc.line)))));
            items.push(kv("source_column", v(ValueKind::Word(self.s(loc.col)))));
        }
        if let Some(id) = loc.frame {
            items.push(kv("stack_frame_id", v(ValueKind::Word(self.s(id)))));
        }
        Some(Attr::new("metadata", v(ValueKind::Group { open: '{', items }), Span::default()))
    }

    /// The shared graph: `func.func` ops become functions (params from the entry block's arguments with their
    /// `arg_attrs`, results from `function_type`), nested regions become regions of their op, operands resolve
    /// to `Def::Op` / `Def::BlockArg`, `func.call` gets a call edge. The module's attributes are the
    /// `builtin.module` attributes (`stable_mosaic.version`). The entry function is the Pallas kernel (the one
    /// with `iteration_bounds`/`window_params`/...), else the first. Top-level ops that are not functions are
    /// not in the graph (see `notes`).
    pub fn module(&self) -> Module<'_> {
        let (module_op, body) = self.body_ops();
        let kernel = self.kernel_name().unwrap_or("");
        let name = module_op
            .and_then(|m| m.attrs.iter().find(|(k, _)| self.s(*k) == "sym_name"))
            .map(|&(_, v)| self.s(v).trim_matches('"'))
            .unwrap_or(kernel);
        let mut m = Module::new(Layer::Mosaic, name, "", Span::default());
        if let Some(mo) = module_op {
            m.attrs = self.attrs(&mo.attrs);
        }
        m.stack_frames = self.stack_frames();
        let mut op_map: Vec<Option<ir::OpId>> = vec![None; self.ops.len()];
        let mut block_map: Vec<Option<ir::BlockId>> = vec![None; self.blocks.len()];
        let mut first_func = None;
        for &o in body {
            let op = &self.ops[o as usize];
            let Some(fi) = &op.func else { continue };
            let is_entry = m.entry.is_none() && self.is_kernel_func(op);
            let fid = self.build_func(&mut m, op, fi, is_entry, &mut op_map, &mut block_map);
            first_func.get_or_insert(fid);
            if is_entry {
                m.entry = Some(fid);
            }
        }
        if m.entry.is_none() {
            if let Some(f) = first_func {
                m.funcs[f.idx()].is_entry = true;
                m.entry = Some(f);
            }
        }
        self.resolve_operands(&mut m, &op_map, &block_map);
        m.fill_operand_types();
        m.link();
        m
    }

    /// One `func.func` as a function of the graph: its blocks and ops (their ids recorded in the maps), its last
    /// entry-block op the root.
    fn build_func<'s>(
        &'s self,
        m: &mut Module<'s>,
        op: &'s DOp,
        fi: &'s DFuncInfo,
        is_entry: bool,
        op_map: &mut [Option<ir::OpId>],
        block_map: &mut [Option<ir::BlockId>],
    ) -> ir::FuncId {
        let region = &self.regions[op.regions[0] as usize];
        let params =
            region.blocks.first().map(|&b| self.params(&self.blocks[b as usize], &fi.arg_attrs)).unwrap_or_default();
        let func = Func {
            name: self.s(fi.name),
            span: Span::default(),
            name_span: Span::default(),
            is_entry,
            params: params.clone(),
            results: fi.results.iter().map(|&t| parse_textual_type(self.s(t))).collect(),
            attrs: self.attrs(&op.attrs),
            body: ir::RegionId(0),
            callers: Vec::new(),
        };
        let (fid, entry_block) = m.add_func(func);
        let rid = m.funcs[fid.idx()].body;
        for (k, &b) in region.blocks.iter().enumerate() {
            let db = &self.blocks[b as usize];
            let bid = if k == 0 {
                m.blocks[entry_block.idx()].args = params.clone();
                entry_block
            } else {
                m.add_block(rid, db.label.map(|l| self.s(l)), self.params(db, &[]))
            };
            block_map[b as usize] = Some(bid);
            for &inner in &db.ops {
                self.build_op(m, bid, inner, op_map, block_map);
            }
        }
        if let Some(&last) = region.blocks.first().and_then(|&b| self.blocks[b as usize].ops.last()) {
            if let Some(id) = op_map[last as usize] {
                m.ops[id.idx()].is_root = true;
            }
        }
        fid
    }

    /// Operands (with their roles from the ODS segment sizes) and call edges, once every op and block has its id.
    fn resolve_operands<'s>(
        &'s self,
        m: &mut Module<'s>,
        op_map: &[Option<ir::OpId>],
        block_map: &[Option<ir::BlockId>],
    ) {
        for (i, dop) in self.ops.iter().enumerate() {
            let Some(id) = op_map[i] else { continue };
            let opcode = m.ops[id.idx()].opcode;
            let segments = m.ops[id.idx()]
                .attr("operandSegmentSizes")
                .or_else(|| m.ops[id.idx()].attr("operand_segment_sizes"))
                .and_then(crate::parse::mlir::attr::int_array);
            let roles = roles::operand_roles(opcode, dop.operands.len(), segments.as_deref());
            let def = |d: Option<DDef>| match d {
                Some(DDef::Op { op, index }) => op_map[op as usize].map_or(Def::Unresolved, |op| Def::Op { op, index }),
                Some(DDef::Arg { block, index }) => {
                    block_map[block as usize].map_or(Def::Unresolved, |block| Def::BlockArg { block, index })
                }
                None => Def::Unresolved,
            };
            let operands = dop
                .operands
                .iter()
                .zip(roles)
                .map(|(o, role)| Operand {
                    name: self.s(o.name),
                    ty: None,
                    role,
                    def: def(o.def),
                    span: Span::default(),
                })
                .collect();
            m.ops[id.idx()].operands = operands;
            if let Some(callee) = dop.callee {
                if let Some(f) = m.func_by_name(self.s(callee)) {
                    m.ops[id.idx()].calls.push(ir::Call { role: "callee", func: f });
                }
            }
        }
    }

    fn build_op<'s>(
        &'s self,
        m: &mut Module<'s>,
        block: ir::BlockId,
        o: u32,
        op_map: &mut [Option<ir::OpId>],
        block_map: &mut [Option<ir::BlockId>],
    ) {
        let d = &self.ops[o as usize];
        let mut attrs = self.attrs(&d.attrs);
        attrs.extend(self.metadata(d));
        let op = Op {
            name: self.s(d.name),
            opcode: self.s(d.opcode),
            ty: d.ty.map(|t| parse_textual_type(self.s(t))).unwrap_or(Type::None),
            result_count: d.result_types.len() as u32,
            operands: Vec::new(),
            payload: None,
            attrs,
            regions: ThinVec::new(),
            calls: Vec::new(),
            block,
            users: ThinVec::new(),
            is_root: false,
            issue: None,
            span: Span::default(),
            name_span: Span::default(),
            opcode_span: Span::default(),
        };
        let id = m.push_op(block, op);
        op_map[o as usize] = Some(id);
        for &r in &d.regions {
            let rid = m.add_region(RegionParent::Op(id));
            for &b in &self.regions[r as usize].blocks {
                let db = &self.blocks[b as usize];
                let bid = m.add_block(rid, db.label.map(|l| self.s(l)), self.params(db, &[]));
                block_map[b as usize] = Some(bid);
                for &inner in &db.ops {
                    self.build_op(m, bid, inner, op_map, block_map);
                }
            }
        }
    }
}
