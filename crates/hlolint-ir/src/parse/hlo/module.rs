//! HLO modules, stack-frame tables, computations and instructions (XLA `ParseHloModule`, `ParseComputation`,
//! `ParseInstruction`), built straight into the graph. Names are resolved in a second pass (per computation for
//! operands, per module for called computations), so forward references work.

use super::lex::{self, cut, expect, sp};
use super::shape::{extent, shape, starts_shape};
use super::value::{Build, ValueParser};
use crate::ir::graph::*;
use crate::ir::span::Span;
use crate::ir::{LineIndex, Shape, Value, ValueKind};
use crate::parse::error::{PErr, PResult};
use rustc_hash::FxHashMap as HashMap;
use std::sync::Arc;

/// Attributes whose value names called computations (a `match`: it is asked of every attribute).
fn is_call_attr(key: &str) -> bool {
    matches!(
        key,
        "calls"
            | "to_apply"
            | "body"
            | "condition"
            | "select"
            | "scatter"
            | "true_computation"
            | "false_computation"
            | "branch_computations"
            | "called_computations"
    )
}

pub struct Parser<'a> {
    base: &'a str,
    /// Shapes by their source text: one `Arc<Shape>` per distinct spelling.
    shapes: std::cell::RefCell<HashMap<&'a str, Arc<Shape>>>,
    values: ValueParser<'a>,
    /// `(op, attribute key, callee name, span)` waiting for all computations to be known.
    pending_calls: Vec<(OpId, &'a str, &'a str, Span)>,
    /// Computations written inline as attribute values, parsed but not yet added to the module.
    inline: std::cell::RefCell<Vec<InlineBody<'a>>>,
    /// Computations named so far (inline bodies excluded: XLA names each `_` and uniquifies), where each is named.
    computation_names: HashMap<&'a str, Span>,
    /// Operands and attributes of the lists being parsed (`ItemStack`).
    operand_items: ItemStack<Operand<'a>>,
    attr_items: ItemStack<Attr<'a>>,
    /// The spans of the instructions' `window=` values, in the order of the text, for `checks::first_bad_value`.
    pub windows: std::cell::RefCell<Vec<Span>>,
    /// How many inline bodies enclose the one being parsed (each level recurses through the whole grammar).
    inline_depth: std::cell::Cell<usize>,
}

/// The items of the lists being parsed, one stack for all: lists nest (an operand can be an instruction with operands
/// of its own, an attribute a computation with instructions), so each pushes its items above those of the lists it
/// is inside and takes them at its end as a vector of exactly their number. A vector of its own per list would
/// allocate room for four on the first push: 320 bytes for an instruction's one operand, all of it memory touched.
struct ItemStack<T>(std::cell::RefCell<Vec<T>>);

impl<T> ItemStack<T> {
    fn mark(&self) -> usize {
        self.0.borrow().len()
    }

    fn push(&self, item: T) {
        self.0.borrow_mut().push(item);
    }

    /// The items pushed since `mark` returned `from` (also after a failed parse, which drops them).
    fn take(&self, from: usize) -> Vec<T> {
        let mut items = self.0.borrow_mut();
        let end = items.len();
        items.drain(from.min(end)..).collect()
    }
}

/// `to_apply={ ... }`: XLA's parser takes a computation body in place of a name and names it `_`.
struct InlineBody<'a> {
    /// The `{...}` text: the attribute's value is kept as `Raw` with this span, which links the call.
    span: Span,
    ops: Vec<Op<'a>>,
}

/// How deeply instructions may be written inline as operands.
const MAX_OPERAND_DEPTH: usize = 1_000;

/// How deeply inline computation bodies may nest.
const MAX_INLINE_DEPTH: usize = 32;

/// Unresolved references left after parsing; the caller decides whether they are errors.
pub struct Unresolved {
    pub what: &'static str,
    pub name: String,
    pub span: Span,
}

impl<'a> Parser<'a> {
    pub fn new(base: &'a str) -> Self {
        Parser {
            base,
            shapes: Default::default(),
            values: ValueParser { base, shift: 0 },
            pending_calls: Vec::new(),
            inline: Default::default(),
            computation_names: HashMap::default(),
            operand_items: ItemStack(Default::default()),
            attr_items: ItemStack(Default::default()),
            windows: Default::default(),
            inline_depth: Default::default(),
        }
    }

    /// Parses a shape and interns it by its text; a shape already seen is found by its text without parsing it
    /// again (a large module repeats a few hundred shapes tens of thousands of times).
    fn shape(&self, i: &'a str) -> PResult<'a, Arc<Shape>> {
        if let Some(seen) = extent(i).and_then(|n| Some((n, self.shapes.borrow().get(&i[..n])?.clone()))) {
            return Ok((&i[seen.0..], seen.1));
        }
        let (rest, s) = cut(shape(i))?;
        let text = &i[..i.len() - rest.len()];
        let mut shapes = self.shapes.borrow_mut();
        let shared = shapes.entry(text).or_insert_with(|| Arc::new(s)).clone();
        Ok((rest, shared))
    }

    fn span(&self, from: &'a str, rest: &'a str) -> Span {
        Span::between(self.base, from, rest)
    }

    pub fn module(&mut self) -> Result<(Module<'a>, Vec<Unresolved>), nom::Err<PErr<'a>>> {
        let i = sp(self.base)?;
        let mut m = Module::new(Layer::Hlo, "", self.base, Span::new(0, self.base.len()));
        // One instruction per line, roughly: reserving up front avoids regrowing (and copying) the op arena.
        m.ops.reserve(self.base.len() / 160);
        let mut rest = i;
        if let Some(r) = keyword(i, "HloModule") {
            let (r, name) = cut(lex::name(sp(r)?, "the module name"))?;
            // XLA's lexer takes an identifier directly followed by `:` as a name (`HloModule m:` in its own tests)
            let r = r.strip_prefix(':').unwrap_or(r);
            m.name = name;
            rest = r;
            loop {
                let r = sp(rest)?;
                let Some(r) = r.strip_prefix(',') else { break };
                let (r, attr) = self.attribute(sp(r)?)?;
                if attr.key == "is_scheduled" {
                    m.scheduled = attr.value().as_bool() == Some(true);
                }
                m.attrs.push(attr);
                rest = r;
            }
            rest = self.stack_frames(sp(rest)?, &mut m.stack_frames)?;
        }
        let mut unresolved = Vec::new();
        let mut last_top = None;
        loop {
            rest = sp(rest)?;
            if rest.is_empty() {
                break;
            }
            let (r, fid) = self.computation(rest, &mut m, &mut unresolved)?;
            last_top = Some(fid);
            rest = r;
        }
        if m.funcs.is_empty() {
            return Err(nom::Err::Failure(PErr::new(rest, "`HloModule` or a computation")));
        }
        if let (None, Some(last)) = (m.entry, last_top) {
            m.funcs[last.idx()].is_entry = true;
            m.entry = Some(last);
        }
        self.resolve_calls(&mut m, &mut unresolved);
        m.link();
        Ok((m, unresolved))
    }

    fn attribute(&self, i: &'a str) -> PResult<'a, Attr<'a>> {
        let n = lex::ident_len(i);
        if n == 0 || !i[n..].starts_with('=') {
            return PErr::cut(i, "an attribute (`name=value`)");
        }
        let key = &i[..n];
        let after = &i[n + 1..];
        let calls = is_call_attr(key);
        if calls && starts_inline_body(after) {
            return self.inline_body(i, key, after);
        }
        if key == "backend_config" && after.starts_with('{') {
            let (rest, value) = self.values.raw_braces(after)?;
            return Ok((rest, Attr::new(key, value, self.span(i, rest))));
        }
        // Values the parser reads itself are built now; the others are checked by the same grammar and built when
        // first read (most never are).
        if calls || key == "control-predecessors" || key == "is_scheduled" {
            let (rest, value) = attribute_value(&self.values, key, after)?;
            return Ok((rest, Attr::new(key, value, self.span(i, rest))));
        }
        let (rest, ()) = attribute_value(&self.values, key, after)?;
        let text = &after[..after.len() - rest.len()];
        let start = self.span(after, rest).start;
        Ok((rest, Attr::deferred(key, text, start, build_deferred, self.span(i, rest))))
    }

    /// A computation body as an attribute value: parsed now, added to the module after the enclosing computation.
    fn inline_body(&self, i: &'a str, key: &'a str, after: &'a str) -> PResult<'a, Attr<'a>> {
        let depth = self.inline_depth.get();
        if depth >= MAX_INLINE_DEPTH {
            return PErr::cut(after, "less deeply nested inline computations");
        }
        self.inline_depth.set(depth + 1);
        let mut ops = Vec::new();
        let parsed = crate::parse::with_stack(|| self.body(after, &mut ops));
        self.inline_depth.set(depth);
        let rest = parsed?;
        let span = self.span(after, rest);
        self.inline.borrow_mut().push(InlineBody { span, ops });
        let value = Value { kind: ValueKind::Raw(&after[..after.len() - rest.len()]), span };
        Ok((rest, Attr::new(key, value, self.span(i, rest))))
    }

    fn stack_frames(&self, mut i: &'a str, t: &mut StackFrames<'a>) -> Result<&'a str, nom::Err<PErr<'a>>> {
        for section in ["FileNames", "FunctionNames", "FileLocations", "StackFrames"] {
            let Some(r) = keyword(i, section) else {
                if section == "FileNames" {
                    return Ok(i);
                }
                return Err(PErr::failure(
                    i,
                    "the next stack-frame table (`FunctionNames`, `FileLocations`, `StackFrames`)",
                ));
            };
            let mut rest = sp(r)?;
            while rest.starts_with(|c: char| c.is_ascii_digit()) {
                let (r, _row) = lex::int(rest, "a row number")?;
                let r = sp(r)?;
                match section {
                    "FileNames" | "FunctionNames" => {
                        let (r, s) = cut(lex::string(r))?;
                        if section == "FileNames" { &mut t.file_names } else { &mut t.function_names }.push(s);
                        rest = r;
                    }
                    _ => {
                        let (r, v) = cut(self.values.value(r))?;
                        let get = |k: &str| v.get(k).and_then(Value::as_int).unwrap_or(0).max(0) as u32;
                        if section == "FileLocations" {
                            t.file_locations.push(FileLocation {
                                file_name_id: get("file_name_id"),
                                function_name_id: get("function_name_id"),
                                line: get("line"),
                                end_line: get("end_line"),
                                column: get("column"),
                                end_column: get("end_column"),
                            });
                        } else {
                            // Printed as the proto value plus one.
                            t.frames.push((get("file_location_id"), get("parent_frame_id").saturating_sub(1)));
                        }
                        rest = r;
                    }
                }
                rest = sp(rest)?;
            }
            i = rest;
        }
        Ok(i)
    }

    fn computation(
        &mut self,
        i: &'a str,
        m: &mut Module<'a>,
        unresolved: &mut Vec<Unresolved>,
    ) -> Result<(&'a str, FuncId), nom::Err<PErr<'a>>> {
        let start = i;
        let (r, (is_entry, name)) = marked_name(i, "ENTRY", "a computation name (or end of file)")?;
        let name_span = Span::of(self.base, name);
        let mut params = Vec::new();
        let mut results = Vec::new();
        let mut r = sp(r)?;
        if let Some(p) = r.strip_prefix('(') {
            let (p, ps) = self.param_list(p)?;
            params = ps;
            let (p, _) = expect(p, "->")?;
            let (p, result) = self.shape(sp(p)?)?;
            results.push(Type::Shape(result));
            r = sp(p)?;
        }
        if !r.starts_with('{') {
            return Err(PErr::failure(r, "`{` opening the computation body"));
        }
        // Instructions are parsed straight into the module's arena (an op is a few hundred bytes: no second copy).
        let first_op = m.ops.len();
        let mut r = self.body(r, &mut m.ops)?;
        if let Some(first) = self.computation_names.insert(name, name_span) {
            let line = LineIndex::new(self.base).line(first.start as usize);
            return Err(PErr::failure(name, format!("a new computation name (`{name}` is defined on line {line})")));
        }
        let func = Func { name, name_span, is_entry, params, results, ..inline_func() };
        let fid = self.add_computation(m, func, first_op, unresolved);
        if is_entry {
            if m.entry.is_some() {
                return Err(PErr::failure(start, "a single ENTRY computation (this module has two)"));
            }
            m.entry = Some(fid);
        }
        // `, execution_thread="main"` after the body.
        let after = sp(r)?;
        if let Some(t) = after.strip_prefix(',') {
            let (t, attr) = self.attribute(sp(t)?)?;
            m.funcs[fid.idx()].attrs.push(attr);
            r = t;
        }
        m.funcs[fid.idx()].span = self.span(start, r);
        // Computations written inline as attribute values (`to_apply={...}`), innermost first, after their user.
        let mut inline_funcs = HashMap::default();
        for body in self.inline.take() {
            let func = Func { span: body.span, ..inline_func() };
            let (first, mut ops) = (m.ops.len(), body.ops);
            m.ops.append(&mut ops);
            inline_funcs.insert(body.span.start, self.add_computation(m, func, first, unresolved));
        }
        for id in first_op..m.ops.len() {
            self.collect_calls(m, OpId(id as u32), &inline_funcs);
        }
        Ok((r, fid))
    }

    /// `{ instruction* }`: the instructions in order onto `ops`, each preceded by the ones written inline as its
    /// operands (they are defined before their user).
    fn body(&self, i: &'a str, ops: &mut Vec<Op<'a>>) -> Result<&'a str, nom::Err<PErr<'a>>> {
        let Some(mut r) = i.strip_prefix('{') else { return Err(PErr::failure(i, "`{` opening the computation body")) };
        let first = ops.len();
        loop {
            r = sp(r)?;
            if let Some(rest) = r.strip_prefix('}') {
                r = rest;
                break;
            }
            if r.is_empty() {
                return Err(PErr::failure(r, "`}` closing the computation"));
            }
            r = self.instruction(r, ops)?;
        }
        if ops.len() == first {
            return Err(PErr::failure(r, "at least one instruction in the computation"));
        }
        Ok(r)
    }

    /// Adds a parsed computation to the module: its ops (already in the arena from `first_op` on), the root (the
    /// last instruction when none is marked), and operand names resolved within it. Calls are collected by the
    /// caller, once inline bodies have their ids.
    fn add_computation(
        &self,
        m: &mut Module<'a>,
        func: Func<'a>,
        first_op: usize,
        unresolved: &mut Vec<Unresolved>,
    ) -> FuncId {
        let (fid, block) = m.add_func(func);
        let ops = &mut m.ops[first_op..];
        let mut names: HashMap<&'a str, OpId> = HashMap::with_capacity_and_hasher(ops.len(), Default::default());
        let has_root = ops.iter().any(|o| o.is_root);
        for (k, op) in ops.iter_mut().enumerate() {
            op.block = block;
            names.insert(op.name, OpId((first_op + k) as u32));
        }
        m.blocks[block.idx()].ops.extend((first_op..m.ops.len()).map(|k| OpId(k as u32)));
        if !has_root {
            if let Some(last) = m.ops.last_mut() {
                last.is_root = true;
            }
        }
        for op in &mut m.ops[first_op..] {
            for operand in &mut op.operands {
                match names.get(operand.name) {
                    Some(&def) => operand.def = Def::Op { op: def, index: 0 },
                    None => {
                        unresolved.push(Unresolved { what: "operand", name: operand.name.into(), span: operand.span })
                    }
                }
            }
            // Control edges name instructions of the same computation, as operands do (XLA rejects a dangling one).
            for a in op.attrs.iter().filter(|a| a.key == "control-predecessors") {
                if let ValueKind::Group { items, .. } = &a.value().kind {
                    for v in items.iter().filter(|v| v.name_ref().is_some_and(|n| !names.contains_key(n))) {
                        let name = v.name_ref().unwrap_or_default().into();
                        unresolved.push(Unresolved { what: "instruction", name, span: v.span });
                    }
                }
            }
        }
        fid
    }

    fn param_list(&self, mut i: &'a str) -> PResult<'a, Vec<Param<'a>>> {
        let mut out = Vec::new();
        i = sp(i)?;
        if let Some(r) = i.strip_prefix(')') {
            return Ok((r, out));
        }
        loop {
            let start = sp(i)?;
            let (r, name) = cut(lex::name(start, "a parameter name"))?;
            let (r, _) = expect(r, ":")?;
            let (r, ty) = self.shape(sp(r)?)?;
            out.push(Param { name, ty: Type::Shape(ty), attrs: Vec::new(), span: self.span(start, r) });
            let r = sp(r)?;
            if let Some(r) = r.strip_prefix(',') {
                i = r;
            } else {
                let (r, _) = expect(r, ")")?;
                return Ok((r, out));
            }
        }
    }

    /// One instruction, pushed onto `ops` after the ones written inline as its operands; returns the rest. (Pushed
    /// as soon as it is made and filled in place: an `Op` is a few hundred bytes, and moving each through every
    /// return was a tenth of the parse.)
    fn instruction(&self, i: &'a str, ops: &mut Vec<Op<'a>>) -> Result<&'a str, nom::Err<PErr<'a>>> {
        let start = i;
        let (r, (is_root, name)) = marked_name(i, "ROOT", "an instruction (`name = shape opcode(...)`) or `}`")?;
        let name_span = Span::of(self.base, name);
        let (r, _) = expect(r, "=")?;
        let (r, op) = self.instruction_rhs(sp(r)?, ops, 0)?;
        let at = ops.len();
        ops.push(op);
        let op = &mut ops[at];
        let from = self.attr_items.mark();
        let parsed = self.attributes(r);
        op.attrs = self.attr_items.take(from);
        let r = parsed?;
        op.name = name;
        op.name_span = name_span;
        op.is_root = is_root;
        op.span = self.span(start, r);
        Ok(r)
    }

    /// `, key=value` after an instruction, onto `attr_items`; returns the rest.
    fn attributes(&self, mut r: &'a str) -> Result<&'a str, nom::Err<PErr<'a>>> {
        loop {
            let t = sp(r)?;
            let Some(t) = t.strip_prefix(',') else { return Ok(r) };
            let (t, a) = self.attribute(sp(t)?)?;
            if a.key == "window" {
                self.windows.borrow_mut().push(a.value_span());
            }
            self.attr_items.push(a);
            r = t;
        }
    }

    /// `[shape] opcode(operands)`: the part after `name =`, also the form of an instruction written inline as an
    /// operand (hand-written HLO; XLA's `ParseInstructionRhs`). The result shape may be left out where XLA can
    /// infer it.
    fn instruction_rhs(&self, i: &'a str, nested: &mut Vec<Op<'a>>, depth: usize) -> PResult<'a, Op<'a>> {
        crate::parse::with_stack_at(depth, || self.nested_instruction_rhs(i, nested, depth))
    }

    fn nested_instruction_rhs(&self, i: &'a str, nested: &mut Vec<Op<'a>>, depth: usize) -> PResult<'a, Op<'a>> {
        // XLA's parser takes somewhat over 1,000 (it runs out of stack before 2,000).
        if depth > MAX_OPERAND_DEPTH {
            return PErr::cut(i, "less deeply nested operands");
        }
        let start = i;
        let (r, ty) = if starts_shape(i) {
            let (r, s) = self.shape(i)?;
            (sp(r)?, Type::Shape(s))
        } else {
            (i, Type::None)
        };
        let (r, opcode) = cut(lex::ident(r, "a shape or an opcode"))?;
        let opcode_span = Span::of(self.base, opcode);
        let r = sp(r)?;
        if !r.starts_with('(') {
            return PErr::cut(r, "`(` after the opcode");
        }
        let (r, operands, payload) = if opcode == "parameter" || opcode == "constant" {
            let (r, v) = cut(self.values.value(r))?;
            (r, Vec::new(), Some(Box::new(v)))
        } else {
            let (r, ops) = self.operands(&r[1..], nested, depth)?;
            (r, ops, None)
        };
        let op = Op { operands, payload, opcode_span, ..Op::new("", opcode, ty, self.span(start, r)) };
        Ok((r, op))
    }

    /// Operand list after `(`: `[shape] name` items, or inline instructions `[shape] opcode(...)`, which are
    /// appended to `nested` and named by their own text. Returns after the closing `)`.
    fn operands(&self, i: &'a str, nested: &mut Vec<Op<'a>>, depth: usize) -> PResult<'a, Vec<Operand<'a>>> {
        let from = self.operand_items.mark();
        let parsed = self.operand_list(i, nested, depth);
        let operands = self.operand_items.take(from);
        Ok((parsed?, operands))
    }

    /// The operands onto `operand_items`; returns after the closing `)`.
    fn operand_list(
        &self,
        mut i: &'a str,
        nested: &mut Vec<Op<'a>>,
        depth: usize,
    ) -> Result<&'a str, nom::Err<PErr<'a>>> {
        i = sp(i)?;
        if let Some(r) = i.strip_prefix(')') {
            return Ok(r);
        }
        loop {
            let start = sp(i)?;
            let (r, ty) = if starts_shape(start) {
                let (r, s) = self.shape(start)?;
                (sp(r)?, Some(Type::Shape(s)))
            } else {
                (start, None)
            };
            let (after_name, name) = cut(lex::name(r, "an operand name"))?;
            let r = if sp(after_name)?.starts_with('(') && !r.starts_with('%') {
                let (r, mut inner) = self.instruction_rhs(start, nested, depth + 1)?;
                let text = &start[..start.len() - r.len()];
                inner.name = text;
                inner.name_span = Span::of(self.base, text);
                nested.push(inner);
                let span = Span::of(self.base, text);
                self.operand_items.push(Operand { name: text, ty, role: None, def: Def::Unresolved, span });
                r
            } else {
                let span = self.span(start, after_name);
                self.operand_items.push(Operand { name, ty, role: None, def: Def::Unresolved, span });
                after_name
            };
            let r = sp(r)?;
            if let Some(r) = r.strip_prefix(',') {
                i = r;
            } else if let Some(r) = r.strip_prefix(')') {
                return Ok(r);
            } else {
                return Err(PErr::failure(r, "`,` or `)` after the operand"));
            }
        }
    }

    fn collect_calls(&mut self, m: &mut Module<'a>, id: OpId, inline_funcs: &HashMap<u32, FuncId>) {
        let mut inline_calls = Vec::new();
        for attr in m.ops[id.idx()].attrs.iter().filter(|a| is_call_attr(a.key)) {
            let value = attr.value();
            if let ValueKind::Raw(_) = value.kind {
                if let Some(&func) = inline_funcs.get(&value.span.start) {
                    inline_calls.push(Call { role: attr.key, func });
                }
                continue;
            }
            let names: Vec<(&'a str, Span)> = match &value.kind {
                ValueKind::Group { items, .. } => {
                    items.iter().filter_map(|v| v.name_ref().map(|n| (n, v.span))).collect()
                }
                _ => value.name_ref().map(|n| (n, value.span)).into_iter().collect(),
            };
            for (n, span) in names {
                self.pending_calls.push((id, attr.key, n, span));
            }
        }
        m.ops[id.idx()].calls.extend(inline_calls);
    }

    fn resolve_calls(&mut self, m: &mut Module<'a>, unresolved: &mut Vec<Unresolved>) {
        let by_name: HashMap<&str, FuncId> =
            m.funcs.iter().enumerate().map(|(k, f)| (f.name, FuncId(k as u32))).collect();
        for (op, role, name, span) in self.pending_calls.drain(..) {
            match by_name.get(name) {
                Some(&func) => m.ops[op.idx()].calls.push(Call { role, func }),
                None => unresolved.push(Unresolved { what: "computation", name: name.into(), span }),
            }
        }
    }
}

/// An attribute's value after `key=`, built as `T` (a tree, or nothing for a syntax check). Values that XLA prints
/// with a space inside continue: `literal=f32[2]{0} {1, 2}` (shape, then the literal) and V3 replica groups
/// `mesh['a'=2,'b'=2] {'b'}`. A `{` can never start the next instruction, so it continues.
fn attribute_value<'a, T: Build<'a>>(values: &ValueParser<'a>, key: &str, after: &'a str) -> PResult<'a, T> {
    let literal = key == "literal";
    let (mut rest, mut value) = cut(values.build::<T>(after))?;
    loop {
        let r = sp(rest)?;
        let continues =
            r.starts_with('{') || (literal && !r.starts_with(',') && !r.is_empty() && !starts_instruction(r));
        if !continues {
            break;
        }
        let (r, more) = cut(values.build::<T>(r))?;
        value = value.continued(more, literal);
        rest = r;
    }
    Ok((rest, value))
}

/// Builds the tree of a value the parser checked and deferred (`ir::Attr::deferred`): the same grammar over the
/// same text, so it cannot fail; if it did, the text is kept whole rather than lost.
fn build_deferred<'a>(key: &'a str, text: &'a str, start: u32) -> Value<'a> {
    let values = ValueParser { base: text, shift: start };
    match attribute_value::<Value>(&values, key, text) {
        Ok(("", value)) => value,
        _ => Value { kind: ValueKind::Raw(text), span: Span::new(start as usize, start as usize + text.len()) },
    }
}

/// `kw` as a whole word at the start of `i` (so `ENTRY` does not match `ENTRY_x`).
fn keyword<'a>(i: &'a str, kw: &str) -> Option<&'a str> {
    let r = i.strip_prefix(kw)?;
    (!r.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-')).then_some(r)
}

/// `[ENTRY] name` / `[ROOT] name`: whether the keyword was there, and the name (a miss is unrecoverable).
fn marked_name<'a>(i: &'a str, kw: &str, what: &'static str) -> PResult<'a, (bool, &'a str)> {
    let (marked, r) = match keyword(i, kw) {
        Some(r) => (true, sp(r)?),
        None => (false, i),
    };
    let (r, name) = lex::name(r, what).map_err(to_failure)?;
    Ok((r, (marked, name)))
}

/// A computation with no name of its own: `_`, as XLA names a body written inline.
fn inline_func<'a>() -> Func<'a> {
    Func {
        name: "_",
        span: Span::default(),
        name_span: Span::default(),
        is_entry: false,
        params: Vec::new(),
        results: Vec::new(),
        attrs: Vec::new(),
        body: RegionId(0),
        callers: Vec::new(),
    }
}

/// `{ [ROOT] name =`: a computation body rather than a set of names (`{%a, %b}`) or a value.
fn starts_inline_body(i: &str) -> bool {
    let Some(r) = i.strip_prefix('{') else { return false };
    let r = r.trim_start();
    let r = keyword(r, "ROOT").map_or(r, str::trim_start);
    let r = r.strip_prefix('%').unwrap_or(r);
    let n = lex::ident_len(r);
    n > 0 && r[n..].trim_start().starts_with('=')
}

/// Does the next instruction (or the end of the computation) start here?
fn starts_instruction(i: &str) -> bool {
    i.starts_with('%') || i.starts_with('}') || keyword(i, "ROOT").is_some()
}

fn to_failure(e: nom::Err<PErr<'_>>) -> nom::Err<PErr<'_>> {
    match e {
        nom::Err::Error(e) => nom::Err::Failure(e),
        e => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every attribute value of every HLO file at hand (test data, fixtures, the corpus when present), deferred or
    /// not, reads as the tree that building it where it stands in the file gives: same items, same spans, same end
    /// (so the syntax check and the tree builder agree on what they accept and where a value ends).
    #[test]
    fn deferred_values_read_as_the_trees_built_in_place() {
        let root = crate::testing::repository();
        let mut dirs = vec![root.join("tests/data"), root.join("fixtures")];
        dirs.extend(crate::testing::corpus());
        let (mut files, mut deferred) = (0, 0);
        for entry in dirs.iter().flat_map(walkdir::WalkDir::new).flatten() {
            let Ok(text) = std::fs::read_to_string(entry.path()) else { continue };
            let Ok(m) = crate::parse::hlo::parse_hlo("t", &text) else { continue };
            files += 1;
            let values = ValueParser { base: &text, shift: 0 };
            let attrs =
                m.attrs.iter().chain(m.funcs.iter().flat_map(|f| &f.attrs)).chain(m.ops.iter().flat_map(|o| &o.attrs));
            for a in attrs.filter(|a| !matches!(a.value().kind, ValueKind::Raw(_))) {
                let span = a.value_span();
                let (rest, tree) = attribute_value::<Value>(&values, a.key, &text[span.start as usize..]).unwrap();
                assert_eq!(
                    text.len() - rest.len(),
                    span.end as usize,
                    "{}: `{}` ends elsewhere",
                    entry.path().display(),
                    a.key
                );
                assert_eq!(a.value(), &tree, "{}: `{}`", entry.path().display(), a.key);
                deferred +=
                    usize::from(!(is_call_attr(a.key) || a.key == "control-predecessors" || a.key == "is_scheduled"));
            }
        }
        assert!(files > 10 && deferred > 1000, "{files} HLO files, {deferred} deferred values");
    }
}
