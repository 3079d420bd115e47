//! Building and walking the graph: arena pushes for parsers, and the navigation rules use (operands, users,
//! callers, enclosing function, schedule position).

use super::dtype::DType;
use super::graph::*;
use super::line_index::LineIndex;
use super::mlir_type::MlirType;
use super::span::Span;
use std::sync::Arc;

/// Result `i` of an op typed `t`, shared: the type itself for a single result (a reference count, no copy).
fn shared_result<'a>(t: &Arc<MlirType<'a>>, i: usize) -> Option<Arc<MlirType<'a>>> {
    match &**t {
        MlirType::Results(v) => v.get(i).cloned().map(Arc::new),
        _ if i == 0 => Some(t.clone()),
        _ => None,
    }
}

impl<'a> Module<'a> {
    /// A new empty module over `text` (the whole source every span indexes into; empty for decoded bytecode).
    pub fn new(layer: Layer, name: &'a str, text: &'a str, span: Span) -> Self {
        Module {
            layer,
            text,
            name,
            span,
            attrs: Vec::new(),
            funcs: Vec::new(),
            regions: Vec::new(),
            blocks: Vec::new(),
            ops: Vec::new(),
            entry: None,
            scheduled: false,
            stack_frames: StackFrames::default(),
            positions: Vec::new(),
            lines: std::sync::OnceLock::new(),
        }
    }

    /// 1-based line of byte `offset` of [`Module::text`] (its line index built once, on the first question).
    pub fn line(&self, offset: u32) -> usize {
        self.line_index().line(offset as usize)
    }

    /// The line index of [`Module::text`], built on the first call.
    pub fn line_index(&self) -> &LineIndex {
        self.lines.get_or_init(|| LineIndex::new(self.text))
    }

    // ---- building -------------------------------------------------------------------------------------------

    /// Adds a function with an empty body region of one block; returns it and the block.
    pub fn add_func(&mut self, mut func: Func<'a>) -> (FuncId, BlockId) {
        let fid = FuncId(self.funcs.len() as u32);
        let region = self.add_region(RegionParent::Func(fid));
        let block = self.add_block(region, None, Vec::new());
        func.body = region;
        self.funcs.push(func);
        (fid, block)
    }

    pub fn add_region(&mut self, parent: RegionParent) -> RegionId {
        let id = RegionId(self.regions.len() as u32);
        self.regions.push(Region { parent, blocks: Vec::new() });
        if let RegionParent::Op(op) = parent {
            self.ops[op.idx()].regions.push(id);
        }
        id
    }

    pub fn add_block(&mut self, region: RegionId, label: Option<&'a str>, args: Vec<Param<'a>>) -> BlockId {
        let id = BlockId(self.blocks.len() as u32);
        self.blocks.push(Block { region, label, args, ops: Vec::new() });
        self.regions[region.idx()].blocks.push(id);
        id
    }

    /// Appends `op` to `block` (its `block` field is set here).
    pub fn push_op(&mut self, block: BlockId, mut op: Op<'a>) -> OpId {
        let id = OpId(self.ops.len() as u32);
        op.block = block;
        self.ops.push(op);
        self.blocks[block.idx()].ops.push(id);
        id
    }

    /// Fills the derived edges: users of every op and callers of every function. Parsers call it once at the end.
    pub fn link(&mut self) {
        for op in &mut self.ops {
            op.users.clear();
        }
        for f in &mut self.funcs {
            f.callers.clear();
        }
        for i in 0..self.ops.len() {
            let user = OpId(i as u32);
            for k in 0..self.ops[i].operands.len() {
                if let Def::Op { op, .. } = self.ops[i].operands[k].def {
                    let users = &mut self.ops[op.idx()].users;
                    if users.last() != Some(&user) {
                        users.push(user);
                    }
                }
            }
            for k in 0..self.ops[i].calls.len() {
                let f = self.ops[i].calls[k].func;
                self.funcs[f.idx()].callers.push(user);
            }
        }
        self.positions = vec![0; self.ops.len()];
        for b in &self.blocks {
            for (k, o) in b.ops.iter().enumerate() {
                self.positions[o.idx()] = k as u32;
            }
        }
    }

    /// MLIR operand types the text (or bytecode) did not state at the use: taken from the definition (an op's
    /// result, or a block argument), so views can read an operand's type in one place.
    pub fn fill_operand_types(&mut self) {
        for i in 0..self.ops.len() {
            for k in 0..self.ops[i].operands.len() {
                if self.ops[i].operands[k].ty.is_some() {
                    continue;
                }
                let ty = match self.ops[i].operands[k].def {
                    Def::Op { op, index } => self
                        .ops
                        .get(op.idx())
                        .and_then(|o| o.ty.mlir_shared())
                        .and_then(|t| shared_result(t, index as usize)),
                    Def::BlockArg { block, index } => self
                        .blocks
                        .get(block.idx())
                        .and_then(|b| b.args.get(index as usize))
                        .and_then(|p| p.ty.mlir_shared())
                        .cloned(),
                    Def::Unresolved => None,
                };
                if let Some(t) = ty {
                    self.ops[i].operands[k].ty = Some(Type::Mlir(t));
                }
            }
        }
    }

    /// The element type of operand `k` of `op`, the one reader of it: the type at the use — as written, or for
    /// MLIR filled from the definition by [`Module::fill_operand_types`] —, else the definition's (HLO names an
    /// operand without its shape: the defining instruction's, a tuple's element by index).
    pub fn operand_dtype(&self, op: OpId, k: usize) -> Option<DType> {
        let o = self.op(op).operands.get(k)?;
        let at_use = match &o.ty {
            Some(Type::Shape(s)) => s.dtype(),
            Some(Type::Mlir(t)) => t.dtype(),
            _ => None,
        };
        if at_use.is_some() {
            return at_use;
        }
        match o.def {
            Def::Op { op, index } => match &self.op(op).ty {
                Type::Shape(s) => match s.tuple_elements() {
                    [] => s.dtype(),
                    els => els.get(index as usize).and_then(|e| e.dtype()),
                },
                Type::Mlir(t) => t.result(index as usize).and_then(MlirType::dtype),
                _ => None,
            },
            Def::BlockArg { block, index } => {
                self.blocks.get(block.idx())?.args.get(index as usize)?.ty.mlir()?.dtype()
            }
            Def::Unresolved => None,
        }
    }

    // ---- walking --------------------------------------------------------------------------------------------

    pub fn op(&self, id: OpId) -> &Op<'a> {
        &self.ops[id.idx()]
    }

    pub fn func(&self, id: FuncId) -> &Func<'a> {
        &self.funcs[id.idx()]
    }

    pub fn func_by_name(&self, name: &str) -> Option<FuncId> {
        self.funcs.iter().position(|f| f.name == name).map(|i| FuncId(i as u32))
    }

    pub fn op_ids(&self) -> impl Iterator<Item = OpId> + '_ {
        (0..self.ops.len() as u32).map(OpId)
    }

    /// The op an operand refers to, if it is an op result.
    pub fn operand_def(&self, op: OpId, index: usize) -> Option<OpId> {
        match self.ops[op.idx()].operands.get(index)?.def {
            Def::Op { op, .. } => Some(op),
            _ => None,
        }
    }

    /// The ops defining each operand (skipping block arguments and unresolved names).
    pub fn operand_ops(&self, op: OpId) -> impl Iterator<Item = OpId> + '_ {
        self.ops[op.idx()].operands.iter().filter_map(|o| match o.def {
            Def::Op { op, .. } => Some(op),
            _ => None,
        })
    }

    /// The op whose region holds `op`, if any (an `scf.for` around a DMA).
    pub fn parent_op(&self, op: OpId) -> Option<OpId> {
        let region = self.blocks[self.ops[op.idx()].block.idx()].region;
        match self.regions[region.idx()].parent {
            RegionParent::Op(p) => Some(p),
            RegionParent::Func(_) => None,
        }
    }

    /// Enclosing ops from the innermost outwards.
    pub fn ancestors(&self, op: OpId) -> impl Iterator<Item = OpId> + '_ {
        std::iter::successors(self.parent_op(op), move |&p| self.parent_op(p))
    }

    /// The function that (transitively) contains `op`.
    pub fn func_of(&self, op: OpId) -> FuncId {
        let mut cur = op;
        loop {
            let region = self.blocks[self.ops[cur.idx()].block.idx()].region;
            match self.regions[region.idx()].parent {
                RegionParent::Func(f) => return f,
                RegionParent::Op(p) => cur = p,
            }
        }
    }

    /// Every op of a function in textual order, nested regions included (pre-order).
    pub fn func_ops(&self, f: FuncId) -> Vec<OpId> {
        let mut out = Vec::new();
        self.region_ops_into(self.funcs[f.idx()].body, &mut out);
        out
    }

    fn region_ops_into(&self, r: RegionId, out: &mut Vec<OpId>) {
        for b in &self.regions[r.idx()].blocks {
            for &op in &self.blocks[b.idx()].ops {
                out.push(op);
                for &inner in &self.ops[op.idx()].regions {
                    self.region_ops_into(inner, out);
                }
            }
        }
    }

    /// The top-level ops of a function's body (its first block): for HLO, the instructions in schedule order.
    pub fn body_ops(&self, f: FuncId) -> &[OpId] {
        let region = &self.regions[self.funcs[f.idx()].body.idx()];
        region.blocks.first().map(|b| self.blocks[b.idx()].ops.as_slice()).unwrap_or(&[])
    }

    /// Position of `op` within its block: the schedule index in a scheduled HLO module.
    pub fn position(&self, op: OpId) -> usize {
        let block = &self.blocks[self.ops[op.idx()].block.idx()];
        // The index `link` recorded, when the block still has the op there; else (a module built without `link`,
        // or changed since) a scan.
        match self.positions.get(op.idx()).map(|&k| k as usize) {
            Some(k) if block.ops.get(k) == Some(&op) => k,
            _ => block.ops.iter().position(|&o| o == op).unwrap_or(0),
        }
    }

    /// The root op of a function body (HLO `ROOT`, else the last op).
    pub fn root(&self, f: FuncId) -> Option<OpId> {
        let ops = self.body_ops(f);
        ops.iter().copied().find(|&o| self.ops[o.idx()].is_root).or_else(|| ops.last().copied())
    }

    /// For an op inside a called function, the `parameter(N)` number it reads, if it is a parameter.
    pub fn parameter_number(&self, op: OpId) -> Option<usize> {
        let o = &self.ops[op.idx()];
        if o.opcode != "parameter" {
            return None;
        }
        // `parameter(4)`: the payload is the parenthesised group.
        let v = o.payload.as_deref()?;
        v.items().first().unwrap_or(v).as_int().map(|n| n as usize)
    }

    /// Source location of an op from its metadata (`source_file`/`source_line`, or `stack_frame_id` through the
    /// stack-frame tables), innermost first.
    pub fn source_stack(&self, op: OpId) -> Vec<SourceLoc> {
        let Some(md) = self.ops[op.idx()].attr("metadata") else { return Vec::new() };
        if let Some(id) = md.get("stack_frame_id").and_then(|v| v.as_int()) {
            let stack = self.stack_frames.stack(id as u32);
            if !stack.is_empty() {
                return stack;
            }
        }
        match (md.get("source_file").and_then(|v| v.string()), md.get("source_line").and_then(|v| v.as_int())) {
            (Some(file), Some(line)) => vec![SourceLoc {
                file: file.into_owned(),
                function: String::new(),
                line: line as u32,
                column: md.get("source_column").and_then(|v| v.as_int()).unwrap_or(0) as u32,
            }],
            _ => Vec::new(),
        }
    }
}
