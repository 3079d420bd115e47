//! Operations, regions and blocks, in generic and custom (pretty) form, into a small syntax tree (`OpAst`).
//!
//! Custom syntaxes are open-ended, so an op is read generically: results, the op name, then a sequence of operand
//! uses, keyword groups (`source(%a : memref<..>)`), attribute dictionaries, `name = value` attributes, `: types`,
//! `-> types` and regions, until the end of the line at nesting depth 0 (a following line that starts with a plain
//! keyword and a bracket, like StableHLO's `cond {` / `do {` / `reducer(...)`, continues the op). Every `%value`
//! becomes an operand with the keyword it appeared under as its role; `%x = ...` and `%x: type` inside the op's
//! syntax declare block arguments of the op's regions (`scf.for %i = ...`, `iter_args(%acc = %init)`, func params).

use super::attr::{self, Ctx, Src};
use super::lex::*;
use super::types::{mlir_type, paren_types, starts_type};
use crate::ir::mlir_type::MlirType;
use crate::ir::span::Span;
use crate::ir::value::{Value, ValueKind};
use crate::ir::Attr;
use crate::parse::error::{PErr, PResult};

#[derive(Clone, Debug, Default)]
pub struct OpAst<'a> {
    /// `%0`, `%0:2`, `%a, %b`: names (without `%`) and how many results each stands for.
    pub results: Vec<(&'a str, u32, Span)>,
    pub name: &'a str,
    pub name_span: Span,
    pub generic: bool,
    pub operands: Vec<UseAst<'a>>,
    /// Block arguments declared in the op's own syntax (func params, `scf.for %i`, `iter_args(%x = ..)`).
    pub decls: Vec<ArgAst<'a>>,
    pub attrs: Vec<Attr<'a>>,
    /// Values the custom syntax holds outside attributes: `arith.constant 0`, `arith.cmpi eq`, `stablehlo.compare LT`.
    pub payload: Vec<Value<'a>>,
    /// The first `@symbol` (function name, callee, custom-call target).
    pub symbol: Option<Value<'a>>,
    pub regions: Vec<RegionAst<'a>>,
    /// Types after `:` (operand types, or the one result type in `: i32`).
    pub types: Vec<MlirType<'a>>,
    /// Types after `->` in a trailing type list, or after `to`.
    pub result_types: Option<Vec<MlirType<'a>>>,
    /// `-> types` outside the trailing type list (func signature, `scf.if %c -> (i32)`), with result attributes.
    pub sig_results: Option<Vec<(MlirType<'a>, Vec<Attr<'a>>)>>,
    pub loc: Option<Value<'a>>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct UseAst<'a> {
    pub name: &'a str,
    /// `%0#1` → 1.
    pub index: u32,
    pub role: Option<&'a str>,
    pub ty: Option<MlirType<'a>>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct ArgAst<'a> {
    pub name: &'a str,
    pub ty: Option<MlirType<'a>>,
    pub attrs: Vec<Attr<'a>>,
    pub span: Span,
}

#[derive(Clone, Debug, Default)]
pub struct RegionAst<'a> {
    pub blocks: Vec<BlockAst<'a>>,
    pub span: Span,
}

#[derive(Clone, Debug, Default)]
pub struct BlockAst<'a> {
    pub label: Option<&'a str>,
    pub args: Vec<ArgAst<'a>>,
    pub ops: Vec<OpAst<'a>>,
}

/// Op names the func/builtin dialects print without a prefix; a line starting with one of them is a new op.
const BARE_OPS: &[&str] =
    &["return", "call", "call_indirect", "constant", "module", "func", "yield", "unrealized_conversion_cast"];

pub struct Parser<'a> {
    pub src: Src<'a>,
}

impl<'a> Parser<'a> {
    fn span(&self, from: &'a str, rest: &'a str) -> Span {
        self.src.span(from, rest)
    }

    /// One operation, starting at its first token (results or name).
    pub fn op(&self, i: &'a str, depth: u32) -> PResult<'a, OpAst<'a>> {
        if let Some(e) = too_deep(i, depth) {
            return e;
        }
        let mut op = OpAst::default();
        let mut r = i;
        if peek(r) == Some(b'%') {
            loop {
                let (rest, name) = suffix_id(split(r, 1).0).map_err(|_| cut(r, "result name"))?;
                let mut count = 1;
                let mut rest2 = rest;
                if let Some(x) = rest.strip_prefix(':') {
                    let n = x.bytes().take_while(u8::is_ascii_digit).count();
                    let (x2, digits) = split(x, n);
                    count = digits.parse::<u32>().map_err(|_| cut(x, "result count"))?;
                    rest2 = x2;
                }
                op.results.push((name, count, self.span(r, rest2)));
                let s = hws(rest2);
                if let Some(x) = s.strip_prefix(',') {
                    r = hws(x);
                    if peek(r) != Some(b'%') {
                        return PErr::cut(r, "result name");
                    }
                    continue;
                }
                match s.strip_prefix('=') {
                    Some(x) => r = hws(x),
                    None => return PErr::cut(s, "`=` after the result names"),
                }
                break;
            }
        }
        let name_start = r;
        if peek(r) == Some(b'"') {
            let (rest, name) = string_lit(r)?;
            op.name = name;
            op.generic = true;
            r = rest;
        } else {
            let (rest, name) = bare_id(r).map_err(|_| {
                if op.results.is_empty() {
                    nom::Err::Error(PErr::new(r, "operation"))
                } else {
                    cut(r, "operation name")
                }
            })?;
            op.name = name;
            r = rest;
        }
        op.name_span = self.span(name_start, r);
        let (rest, _) = self.body(r, None, depth, &mut op)?;
        op.span = self.span(i, rest);
        Ok((rest, op))
    }

    /// The op's syntax after its name. `group` is `Some((close, role))` inside an operand group.
    fn body(
        &self,
        i: &'a str,
        group: Option<(u8, Option<&'a str>)>,
        depth: u32,
        op: &mut OpAst<'a>,
    ) -> PResult<'a, &'a str> {
        if let Some(e) = too_deep(i, depth) {
            return e;
        }
        let mut r = i;
        let mut roles = Roles { pending: None, group: None, default: group.and_then(|g| g.1) };
        loop {
            let s = if group.is_some() { ws(r) } else { hws(r) };
            if let Some(end) = self.body_end(s, group) {
                match end? {
                    (_, Some(next)) => r = next,
                    (end, None) => return Ok((end, end)),
                }
                continue;
            }
            let c = peek(s).unwrap_or(0);
            r = if is_id_start(c) {
                self.word_item(s, &mut roles, depth, op)?
            } else {
                self.item(s, c, group, &mut roles, depth, op)?
            }
            .0;
        }
    }

    /// Where the body stops (`(end, None)`), a line that continues it (`(_, Some(next))`), or `None` to read on.
    fn body_end(&self, s: &'a str, group: Option<(u8, Option<&'a str>)>) -> Option<PResult<'a, Option<&'a str>>> {
        let Some(c) = peek(s) else {
            if group.is_some() {
                return Some(PErr::cut(s, "closing bracket"));
            }
            return Some(Ok((s, None)));
        };
        if group.is_none() && (c == b'\n' || c == b'\r' || s.starts_with("//")) {
            let j = ws(s);
            return Some(Ok((s, self.is_continuation(j).then_some(j))));
        }
        if let Some((close, _)) = group {
            if c == close {
                return Some(Ok((s, None)));
            }
        }
        match c {
            b'}' | b')' | b']' | b'>' if group.is_some() => Some(PErr::cut(s, "closing bracket")),
            b'}' | b')' | b']' | b'>' => Some(Ok((s, None))),
            _ => None,
        }
    }

    /// One item of the body that does not start with a word: `,`, an operand, a region or attribute dictionary, an
    /// operand group, properties, `: types`, `-> results`, a symbol, a successor, or an attribute value.
    fn item(
        &self,
        s: &'a str,
        c: u8,
        group: Option<(u8, Option<&'a str>)>,
        roles: &mut Roles<'a>,
        depth: u32,
        op: &mut OpAst<'a>,
    ) -> PResult<'a, ()> {
        let rest = match c {
            b',' => {
                roles.pending = None;
                roles.group = None;
                split(s, 1).0
            }
            b'%' => self.value(s, roles.pending.take().or(roles.default), depth, op)?.0,
            b'{' if self.region_start(s) => {
                let (rest, region) = self.region(s, depth + 1)?;
                op.regions.push(region);
                rest
            }
            b'{' => {
                let (rest, dict) = attr::group(self.src, s, depth + 1)?;
                attr::dict_to_attrs(dict, &mut op.attrs);
                rest
            }
            b'(' | b'[' => {
                let role = roles.group.take();
                self.bracket(s, role.or(roles.default), role, depth, op)?.0
            }
            b'<' if hws(split(s, 1).0).starts_with('%') => {
                // `tpu.memref_slice %m[%i] <%sz>`: dynamic sizes, the role the bytecode's operand segments give them
                let (rest, _) = self.body(split(s, 1).0, Some((b'>', Some("dynamic_sizes"))), depth + 1, op)?;
                let rest = ws(rest);
                rest.strip_prefix('>').ok_or_else(|| cut(rest, "`>` closing the dynamic sizes"))?
            }
            b'<' if s.starts_with("<{") => {
                // generic form properties `<{...}>`
                let (rest, dict) = attr::group(self.src, split(s, 1).0, depth + 1)?;
                attr::dict_to_attrs(dict, &mut op.attrs);
                let rest = hws(rest);
                rest.strip_prefix('>').ok_or_else(|| cut(rest, "`>` closing the properties"))?
            }
            b':' if !s.starts_with("::") => self.colon(s, group.is_some(), depth, op)?.0,
            b'-' if s.starts_with("->") => {
                let t = ws(split(s, 2).0);
                let (rest, res) = self.sig_results(t, depth)?;
                op.sig_results = Some(res);
                rest
            }
            b'@' if op.symbol.is_none() => {
                let (rest, v) = attr::token(self.src, s, depth + 1)?;
                op.symbol = Some(v);
                rest
            }
            b'^' => {
                // successor `^bb1` (its arguments follow in a group)
                let (rest, v) = attr::token(self.src, s, depth + 1)?;
                op.payload.push(v);
                roles.group = Some("successor");
                rest
            }
            _ => {
                let (rest, v) = attr::atom(self.src, s, depth + 1)?;
                if rest.len() == s.len() {
                    return PErr::cut(s, "operand, attribute or type");
                }
                op.payload.push(v);
                rest
            }
        };
        Ok((rest, ()))
    }

    /// `: type` after an operand inside a group (`(%a : memref<..>)`), else the op's type list.
    fn colon(&self, s: &'a str, in_group: bool, depth: u32, op: &mut OpAst<'a>) -> PResult<'a, ()> {
        if !in_group {
            return Ok((self.type_list(hws(split(s, 1).0), depth, op)?.0, ()));
        }
        let t = ws(split(s, 1).0);
        let (rest, ty) = mlir_type(t, depth + 1).map_err(to_cut)?;
        if let Some(u) = op.operands.last_mut() {
            u.ty = Some(ty);
        }
        Ok((rest, ()))
    }

    /// An item starting with a word: `loc(...)`, `attributes {...}`, `name = value`, a keyword group (`ins(`), a
    /// keyword region (`else {`), a keyword naming the next operand (`init: %cst`, `to %ub`), or a bare atom.
    fn word_item(&self, s: &'a str, roles: &mut Roles<'a>, depth: u32, op: &mut OpAst<'a>) -> PResult<'a, ()> {
        let (rest, word) = bare_id(s)?;
        let after = hws(rest);
        let next = if word == "loc" && peek(rest) == Some(b'(') {
            let (rest, v) = attr::atom(self.src, s, depth + 1)?;
            op.loc = Some(v);
            rest
        } else if word == "attributes" && peek(after) == Some(b'{') {
            let (rest, dict) = attr::group(self.src, after, depth + 1)?;
            attr::dict_to_attrs(dict, &mut op.attrs);
            rest
        } else if after.starts_with('=') && !after.starts_with("==") {
            let v_at = hws(split(after, 1).0);
            let (rest, value) = attr::item(self.src, v_at, Ctx::Op, depth + 1)?;
            op.attrs.push(Attr::new(word, value, self.span(s, rest)));
            rest
        } else if matches!(peek(after), Some(b'(') | Some(b'[')) && !matches!(word, "dense" | "array") {
            roles.group = Some(word);
            after
        } else if peek(after) == Some(b'{') && self.region_start(after) {
            after // `else {`, `cond {`, `do {`
        } else if let Some(x) = rest.strip_prefix(':').filter(|x| !x.starts_with(':')) {
            roles.pending = Some(word); // `init: %cst`
            x
        } else if peek(after) == Some(b'%') {
            roles.pending = Some(word); // `to %ub`, `step %c`, `into %ref`
            after
        } else {
            let (rest, v) = attr::atom(self.src, s, depth + 1)?;
            op.payload.push(v);
            rest
        };
        Ok((next, ()))
    }

    /// A `%name` in an op: a use (operand), or a block argument declaration (`%x = ...`, `%x: type`).
    fn value(&self, s: &'a str, role: Option<&'a str>, depth: u32, op: &mut OpAst<'a>) -> PResult<'a, &'a str> {
        let (rest, name) = suffix_id(split(s, 1).0).map_err(|_| cut(s, "value name"))?;
        let mut index = 0;
        let mut rest = rest;
        if let Some(x) = rest.strip_prefix('#') {
            let n = x.bytes().take_while(u8::is_ascii_digit).count();
            let (x2, digits) = split(x, n);
            index = digits.parse::<u32>().map_err(|_| cut(x, "result number"))?;
            rest = x2;
        }
        // `%arg0: type {attrs} loc(..)`: a declaration
        if let Some(x) = rest.strip_prefix(':') {
            let t = hws(x);
            if !x.starts_with(':') && starts_type(t) {
                let (mut r, ty) = mlir_type(t, depth + 1).map_err(to_cut)?;
                let mut attrs = Vec::new();
                let a = hws(r);
                if peek(a) == Some(b'{') {
                    let (rest, dict) = attr::group(self.src, a, depth + 1)?;
                    attr::dict_to_attrs(dict, &mut attrs);
                    r = rest;
                }
                let a = hws(r);
                if a.starts_with("loc(") {
                    r = attr::atom(self.src, a, depth + 1)?.0;
                }
                op.decls.push(ArgAst { name, ty: Some(ty), attrs, span: self.span(s, r) });
                return Ok((r, r));
            }
        }
        let after = hws(rest);
        if after.starts_with('=') && !after.starts_with("==") {
            op.decls.push(ArgAst { name, ty: None, attrs: Vec::new(), span: self.span(s, rest) });
            return Ok((split(after, 1).0, split(after, 1).0));
        }
        op.operands.push(UseAst { name, index, role, ty: None, span: self.span(s, rest) });
        if peek(rest) == Some(b'[') {
            // `%ref[%i, %j]`: indices
            return self.bracket(rest, Some("indices"), Some("indices"), depth, op);
        }
        Ok((rest, rest))
    }

    /// `( ... )` or `[ ... ]` inside an op: operands/declarations/regions when it holds any, else a value.
    fn bracket(
        &self,
        s: &'a str,
        role: Option<&'a str>,
        key: Option<&'a str>,
        depth: u32,
        op: &mut OpAst<'a>,
    ) -> PResult<'a, &'a str> {
        if let Some(e) = too_deep(s, depth) {
            return e;
        }
        let holds_values = match balanced(s) {
            Ok((_, text)) => {
                text.contains('%') || text.contains('^') || (text.contains('{') && self.holds_region(text))
            }
            Err(e) => return Err(e),
        };
        if !holds_values {
            let (rest, v) = attr::group(self.src, s, depth + 1)?;
            match key {
                Some(k) if k != "indices" => op.attrs.push(Attr::new(k, v, self.span(s, rest))),
                _ => {
                    if !matches!(&v.kind, ValueKind::Group { items, open: '(' } if items.is_empty()) {
                        op.payload.push(v)
                    }
                }
            }
            return Ok((rest, rest));
        }
        let Some(open) = peek(s) else { return PErr::fail(s, "`(`") };
        let close = if open == b'(' { b')' } else { b']' };
        let (rest, _) = self.body(split(s, 1).0, Some((close, role)), depth + 1, op)?;
        let rest = ws(rest);
        match peek(rest) {
            Some(c) if c == close => Ok((split(rest, 1).0, split(rest, 1).0)),
            _ => PErr::cut(rest, if close == b')' { "`)`" } else { "`]`" }),
        }
    }

    fn holds_region(&self, text: &str) -> bool {
        let mut t = text;
        while let Some(k) = t.find('{') {
            t = split(t, k).0;
            if self.region_start(t) {
                return true;
            }
            t = split(t, 1).0;
        }
        false
    }

    /// `: t1, t2 -> t3`, `: (t1) -> t2`, `: t1 to t2`, `: t1 into t2`.
    fn type_list(&self, i: &'a str, depth: u32, op: &mut OpAst<'a>) -> PResult<'a, &'a str> {
        let mut r = i;
        loop {
            let (rest, ty) = mlir_type(r, depth + 1).map_err(to_cut)?;
            op.types.push(ty);
            r = hws(rest);
            if let Some(x) = r.strip_prefix(',') {
                let x = hws(x);
                if at_eol(x) || !starts_type(x) {
                    r = x;
                    break;
                }
                r = x;
                continue;
            }
            if let Some(x) = r.strip_prefix("->") {
                let x = hws(x);
                let (rest, res) = if peek(x) == Some(b'(') && !is_function_type(x, depth) {
                    paren_types(x, depth + 1).map_err(to_cut)?
                } else {
                    let mut v = Vec::new();
                    let mut y = x;
                    loop {
                        let (rest, t) = mlir_type(y, depth + 1).map_err(to_cut)?;
                        v.push(t);
                        let z = hws(rest);
                        match z.strip_prefix(',') {
                            Some(z2) if starts_type(hws(z2)) && !at_eol(z2) => y = hws(z2),
                            _ => {
                                y = rest;
                                break;
                            }
                        }
                    }
                    (y, v)
                };
                op.result_types = Some(res);
                r = rest;
                break;
            }
            if let Ok((x, w)) = bare_id(r) {
                if (w == "to" || w == "into") && starts_type(hws(x)) {
                    if w == "to" {
                        let (rest, t) = mlir_type(hws(x), depth + 1).map_err(to_cut)?;
                        op.result_types = Some(vec![t]);
                        r = rest;
                        break;
                    }
                    r = hws(x);
                    continue;
                }
            }
            break;
        }
        // a single function type `(a, b) -> c` (generic form)
        if op.types.len() == 1 && op.result_types.is_none() {
            if let Some(MlirType::Function { .. }) = op.types.first() {
                if let Some(MlirType::Function { inputs, results }) = op.types.pop() {
                    op.types = inputs;
                    op.result_types = Some(results);
                }
            }
        }
        Ok((r, r))
    }

    /// Results after a top-level `->`: `(t {attrs}, t)` or one type.
    fn sig_results(&self, i: &'a str, depth: u32) -> PResult<'a, Vec<(MlirType<'a>, Vec<Attr<'a>>)>> {
        let mut out = Vec::new();
        if peek(i) != Some(b'(') || is_function_type(i, depth) {
            let (rest, t) = mlir_type(i, depth + 1).map_err(to_cut)?;
            out.push((t, Vec::new()));
            return Ok((rest, out));
        }
        let mut r = ws(split(i, 1).0);
        if let Some(x) = r.strip_prefix(')') {
            return Ok((x, out));
        }
        loop {
            let (rest, t) = mlir_type(r, depth + 1).map_err(to_cut)?;
            let mut attrs = Vec::new();
            r = ws(rest);
            if peek(r) == Some(b'{') {
                let (rest, dict) = attr::group(self.src, r, depth + 1)?;
                attr::dict_to_attrs(dict, &mut attrs);
                r = ws(rest);
            }
            if r.starts_with("loc(") {
                r = ws(attr::atom(self.src, r, depth + 1)?.0);
            }
            out.push((t, attrs));
            match peek(r) {
                Some(b',') => r = ws(split(r, 1).0),
                Some(b')') => return Ok((split(r, 1).0, out)),
                _ => return PErr::cut(r, "`,` or `)`"),
            }
        }
    }

    /// Is this `{` the start of a region (as opposed to an attribute dictionary)? A region's first token is an
    /// op (`%x = `, `"op"(`, `op.name`), a block label, or `}` on a later line; a dictionary's is `name =`, a unit
    /// attribute (`name,` / `name}`), or `}` on the same line.
    fn region_start(&self, s: &str) -> bool {
        let Some(x) = s.strip_prefix('{') else { return false };
        let same_line = hws(x);
        let newline = at_eol(same_line);
        let x = ws(x);
        match peek(x) {
            None => true,
            Some(b'}') => newline,
            Some(b'^') | Some(b'%') => true,
            Some(b'"') => string_lit(x).map(|(r, _)| r.starts_with('(')).unwrap_or(false),
            Some(b) if is_id_start(b) => match bare_id(x) {
                Ok((rest, _)) => {
                    let a = hws(rest);
                    !(a.starts_with('=') || a.starts_with(',') || a.starts_with('}'))
                }
                Err(_) => false,
            },
            _ => false,
        }
    }

    /// Does a line (after the end of an op) continue the op? `cond {`, `do {`, `reducer(%a: ..)`.
    fn is_continuation(&self, j: &str) -> bool {
        let Ok((rest, w)) = bare_id(j) else { return false };
        if w.contains('.') || BARE_OPS.contains(&w) {
            return false;
        }
        let a = hws(rest);
        matches!(peek(a), Some(b'(') | Some(b'{'))
    }

    /// `{ [^bb0(args):] ops ... }`.
    pub fn region(&self, i: &'a str, depth: u32) -> PResult<'a, RegionAst<'a>> {
        if let Some(e) = too_deep(i, depth) {
            return e;
        }
        let mut region = RegionAst::default();
        let mut r = ws(split(i, 1).0);
        let mut block: Option<BlockAst<'a>> = None;
        loop {
            match peek(r) {
                None => return PErr::cut(r, "`}` closing the region"),
                Some(b'}') => {
                    r = split(r, 1).0;
                    break;
                }
                Some(b'^') => {
                    if let Some(b) = block.take() {
                        region.blocks.push(b);
                    }
                    let (rest, b) = self.block_label(r, depth)?;
                    block = Some(b);
                    r = ws(rest);
                }
                Some(_) => {
                    let (rest, op) = self.op(r, depth + 1).map_err(to_cut)?;
                    block.get_or_insert_with(BlockAst::default).ops.push(op);
                    let rest2 = hws(rest);
                    if !(at_eol(rest2) || peek(rest2) == Some(b'}')) {
                        return PErr::cut(rest2, "end of the operation");
                    }
                    r = ws(rest2);
                }
            }
        }
        if let Some(b) = block {
            region.blocks.push(b);
        }
        region.span = self.span(i, r);
        Ok((r, region))
    }

    fn block_label(&self, i: &'a str, depth: u32) -> PResult<'a, BlockAst<'a>> {
        let (mut r, label) = suffix_id(split(i, 1).0).map_err(|_| cut(i, "block label"))?;
        let mut b = BlockAst { label: Some(label), ..Default::default() };
        if peek(r) == Some(b'(') {
            let mut tmp = OpAst::default();
            r = self.bracket(r, None, None, depth + 1, &mut tmp)?.0;
            b.args = tmp.decls;
        }
        let r2 = hws(r);
        match r2.strip_prefix(':') {
            Some(x) => Ok((x, b)),
            None => PErr::cut(r2, "`:` after the block label"),
        }
    }
}

fn is_function_type(i: &str, depth: u32) -> bool {
    matches!(mlir_type(i, depth + 1), Ok((_, MlirType::Function { .. })))
}

fn cut<'a>(at: &'a str, what: &'static str) -> nom::Err<PErr<'a>> {
    nom::Err::Failure(PErr::new(at, what))
}

pub fn to_cut(e: nom::Err<PErr<'_>>) -> nom::Err<PErr<'_>> {
    match e {
        nom::Err::Error(e) => nom::Err::Failure(e),
        e => e,
    }
}

/// Roles waiting for what follows in an op's body: `to %ub` names the next operand (`pending`), `ins(` the next
/// group (`group`); `default` is the enclosing group's role.
struct Roles<'a> {
    pending: Option<&'a str>,
    group: Option<&'a str>,
    default: Option<&'a str>,
}
