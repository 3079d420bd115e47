//! The IR section: regions → blocks → ops with MLIR's value numbering, each op's attributes, properties, types,
//! operands, successors and location.

use super::super::attrs::{Attr, Ty};
use super::{
    BytecodeError, DBlock, DDef, DFuncInfo, DLoc, DOp, DOperand, DRegion, Decoder, Reader, Scope, Str, HAS_ATTRS,
    HAS_INLINE_REGIONS, HAS_OPERANDS, HAS_PROPERTIES, HAS_RESULTS, HAS_SUCCESSORS, HAS_USE_LIST_ORDERS,
    K_ELIDE_UNKNOWN_BLOCK_ARG_LOCATION, K_LAZY_LOADING, K_USE_LIST_ORDERING, MAX_REGION_DEPTH, R,
};
use std::rc::Rc;

impl<'b> Decoder<'b> {
    pub(super) fn read_ir(&mut self, r: &mut Reader<'b>) -> R<()> {
        let region = self.new_region();
        let block = self.new_block(region);
        self.out.top_block = block;
        self.scopes.push(Scope::default());
        self.open_region(r, 0)?;
        self.read_block(r, block, region, 0)?;
        self.close_region(r)?;
        let scope = self.scopes.pop().unwrap_or_default();
        if let Some((&slot, _)) = scope.pending.iter().next() {
            return Err(r.err(format!("operand refers to value {slot}, which is never defined")));
        }
        if !r.is_empty() {
            return Err(r.err("trailing data after the top-level block"));
        }
        Ok(())
    }

    fn new_region(&mut self) -> u32 {
        self.out.regions.push(DRegion::default());
        (self.out.regions.len() - 1) as u32
    }

    fn new_block(&mut self, region: u32) -> u32 {
        self.out.blocks.push(DBlock::default());
        let b = (self.out.blocks.len() - 1) as u32;
        self.out.regions[region as usize].blocks.push(b);
        b
    }

    /// Reserves `num_values` slots for a region in the current scope.
    fn open_region(&mut self, r: &Reader<'_>, num_values: usize) -> R<()> {
        self.live_values += num_values;
        if self.live_values > self.value_budget {
            return Err(r.err("regions declare more values than the input can hold"));
        }
        let scope = self.scopes.last_mut().ok_or_else(|| r.err("internal: no value scope"))?;
        scope.next.push(scope.values.len());
        scope.values.resize(scope.values.len() + num_values, None);
        self.region_values.push(num_values);
        Ok(())
    }

    fn close_region(&mut self, r: &Reader<'_>) -> R<()> {
        let scope = self.scopes.last_mut().ok_or_else(|| r.err("internal: no value scope"))?;
        let n = self.region_values.pop().unwrap_or(0);
        scope.next.pop();
        // Nested regions are closed first, so this region's slots are the last `n`.
        let start = scope.values.len().saturating_sub(n);
        if let Some((&slot, _)) = scope.pending.range(start..).next() {
            return Err(r.err(format!("operand refers to value {slot}, which its region never defines")));
        }
        scope.values.truncate(start);
        self.live_values -= n;
        Ok(())
    }

    /// Assigns the next slots of the current region to `defs`, resolving forward references.
    fn define(&mut self, r: &Reader<'_>, defs: impl Iterator<Item = DDef>) -> R<()> {
        let Decoder { scopes, out, .. } = self;
        let scope = scopes.last_mut().ok_or_else(|| r.err("internal: no value scope"))?;
        for def in defs {
            let next = scope.next.last_mut().ok_or_else(|| r.err("internal: no open region"))?;
            let slot = *next;
            if slot >= scope.values.len() {
                return Err(
                    r.err(format!("more values defined than the region declared ({} slots)", scope.values.len()))
                );
            }
            scope.values[slot] = Some(def);
            *next += 1;
            if let Some(waiting) = scope.pending.remove(&slot) {
                for (op, idx) in waiting {
                    out.ops[op as usize].operands[idx].def = Some(def);
                }
            }
        }
        Ok(())
    }

    fn read_region(&mut self, r: &mut Reader<'b>, region: u32, depth: u32) -> R<()> {
        let num_blocks = r.count("block")?;
        if num_blocks == 0 {
            return Ok(());
        }
        let num_values = r.count("value")?;
        let blocks: Vec<u32> = (0..num_blocks).map(|_| self.new_block(region)).collect();
        self.open_region(r, num_values)?;
        for &b in &blocks {
            self.read_block(r, b, region, depth)?;
        }
        self.close_region(r)
    }

    /// The block header and arguments; returns the number of ops. Kept out of the recursion's frames.
    #[inline(never)]
    fn read_block_header(&mut self, r: &mut Reader<'b>, block: u32) -> R<usize> {
        let at = r.offset();
        let (num_ops, has_args) = r.varint_flag()?;
        let num_ops = r.check_count(num_ops, "operation", at)?;
        if has_args {
            let n = r.count("block argument")?;
            let mut args = Vec::with_capacity(n);
            for _ in 0..n {
                let ty = if self.version >= K_ELIDE_UNKNOWN_BLOCK_ARG_LOCATION {
                    let (ty, has_loc) = r.varint_flag()?;
                    if has_loc {
                        let l = r.varint()?;
                        self.at.attr(l)?;
                    }
                    ty
                } else {
                    let ty = r.varint()?;
                    let l = r.varint()?;
                    self.at.attr(l)?;
                    ty
                };
                self.at.ty(ty)?;
                args.push(self.type_str(ty as u32)?);
            }
            let n = args.len() as u32;
            self.out.blocks[block as usize].args = args.into_iter().map(|t| (0, t)).collect();
            self.define(r, (0..n).map(|index| DDef::Arg { block, index }))?;
            if self.version >= K_USE_LIST_ORDERING && r.byte()? != 0 {
                self.use_list_orders(r, n as u64)?;
            }
        }
        Ok(num_ops)
    }

    fn read_block(&mut self, r: &mut Reader<'b>, block: u32, region: u32, depth: u32) -> R<()> {
        let num_ops = self.read_block_header(r, block)?;
        for _ in 0..num_ops {
            self.read_op(r, block, region, depth)?;
        }
        Ok(())
    }

    fn use_list_orders(&mut self, r: &mut Reader<'_>, range: u64) -> R<()> {
        let n = if range > 1 { r.count("use-list order")? } else { 1 };
        for _ in 0..n {
            if range > 1 {
                r.varint()?;
            }
            let at = r.offset();
            let (count, _pairs) = r.varint_flag()?;
            let count = r.check_count(count, "use-list index", at)?;
            for _ in 0..count {
                r.varint()?;
            }
        }
        Ok(())
    }

    fn op_name(&mut self, r: &Reader<'_>, idx: u64) -> R<(Str, Str, Option<bool>)> {
        let n = self.op_names.len();
        let on = self
            .op_names
            .get(idx as usize)
            .ok_or_else(|| r.err(format!("operation name index {idx} out of range ({n} names)")))?;
        if let Some((f, o)) = on.interned {
            return Ok((f, o, on.registered));
        }
        let dialect = self.at.dialects[on.dialect].clone();
        let name = on.name.clone();
        let registered = on.registered;
        let full = if name.is_empty() { dialect.to_string() } else { format!("{dialect}.{name}") };
        let opcode = if &*dialect == "stable_mosaic" && !name.is_empty() { name.to_string() } else { full.clone() };
        let f = self.intern(&full);
        let o = self.intern(&opcode);
        self.op_names[idx as usize].interned = Some((f, o));
        Ok((f, o, registered))
    }

    /// Everything of an op but its regions; returns (op id, region count, isolated, offset). Kept out of the
    /// recursion's frames, which must stay small: region nesting recurses.
    #[inline(never)]
    fn read_op_header(&mut self, r: &mut Reader<'b>, block: u32, region: u32) -> R<(u32, usize, bool, usize)> {
        let op_at = r.offset();
        let name_idx = r.varint()?;
        let (full_name, opcode, registered) = self.op_name(r, name_idx)?;
        let mask = r.byte()?;
        let loc_idx = r.varint()?;
        if !matches!(self.at.attr(loc_idx)?, Attr::Loc(_) | Attr::Text(_)) {
            return Err(r.err(format!("operation location {loc_idx} is not a location attribute")));
        }
        let dict = self.read_attr_dict(r, mask, registered, opcode)?;
        let result_types = self.read_result_types(r, mask)?;
        let op_id = self.out.ops.len() as u32;
        let operands = self.read_operands(r, mask, op_id)?;
        let successors = self.read_successors(r, mask, region)?;
        if self.version >= K_USE_LIST_ORDERING && mask & HAS_USE_LIST_ORDERS != 0 {
            self.use_list_orders(r, result_types.len() as u64)?;
        }
        let (num_regions, isolated) = if mask & HAS_INLINE_REGIONS != 0 {
            let at = r.offset();
            let (n, iso) = r.varint_flag()?;
            (r.check_count(n, "region", at)?, iso)
        } else {
            (0, false)
        };
        let (attrs, func, callee) = self.op_attrs(&dict, opcode, num_regions, op_id)?;
        let loc = self.loc(loc_idx as u32)?;
        let (rtypes, ty) = self.result_type_text(&result_types)?;
        let n_results = result_types.len() as u32;
        self.out.ops.push(DOp {
            full_name,
            opcode,
            name: 0,
            result_types: rtypes,
            ty,
            operands,
            attrs,
            regions: Vec::new(),
            successors,
            isolated,
            loc,
            func,
            callee,
        });
        self.out.blocks[block as usize].ops.push(op_id);
        let reserved = self.region_values.last().copied().unwrap_or(0);
        if n_results > 0 && reserved > 0 {
            self.define(r, (0..n_results).map(|index| DDef::Op { op: op_id, index }))?;
        }
        Ok((op_id, num_regions, isolated, op_at))
    }

    /// An op's attribute dictionary, and its properties when they are one (an unregistered op's); a registered op's
    /// native properties cannot be decoded and are only noted.
    fn read_attr_dict(
        &mut self,
        r: &mut Reader<'b>,
        mask: u8,
        registered: Option<bool>,
        opcode: Str,
    ) -> R<Vec<(Rc<str>, u32)>> {
        let mut dict: Vec<(Rc<str>, u32)> = Vec::new();
        if mask & HAS_ATTRS != 0 {
            let i = r.varint()?;
            match self.at.attr(i)? {
                Attr::Dict(entries) => dict = entries.clone(),
                _ => return Err(r.err(format!("operation attributes {i} are not a dictionary"))),
            }
        }
        if mask & HAS_PROPERTIES == 0 {
            return Ok(dict);
        }
        match registered {
            None => {
                return Err(
                    r.err(format!("operation has properties, which bytecode version {} cannot encode", self.version))
                )
            }
            Some(false) => {
                let i = r.varint()?;
                match self.at.attr(i)? {
                    Attr::Dict(entries) => dict.extend(entries.iter().cloned()),
                    _ => {
                        let text = self.at.attr_text(i as u32)?;
                        self.out.notes.push(format!("properties of an unregistered op are not a dictionary: {text}"));
                    }
                }
            }
            Some(true) => {
                let i = r.varint()?;
                if i as usize >= self.properties.len() {
                    return Err(r.err(format!("properties index {i} out of range ({} entries)", self.properties.len())));
                }
                let name = self.out.arena[opcode as usize].clone();
                if !self.undecoded_props.contains(&name) {
                    self.undecoded_props.push(name);
                }
            }
        }
        Ok(dict)
    }

    fn read_result_types(&mut self, r: &mut Reader<'b>, mask: u8) -> R<Vec<u32>> {
        let mut result_types = Vec::new();
        if mask & HAS_RESULTS != 0 {
            let n = r.count("result")?;
            for _ in 0..n {
                let t = r.varint()?;
                self.at.ty(t)?;
                result_types.push(t as u32);
            }
        }
        Ok(result_types)
    }

    /// The operands of op `op_id`, resolved in the current value scope (a forward reference waits in `pending`).
    fn read_operands(&mut self, r: &mut Reader<'b>, mask: u8, op_id: u32) -> R<Vec<DOperand>> {
        let mut operands = Vec::new();
        if mask & HAS_OPERANDS == 0 {
            return Ok(operands);
        }
        let n = r.count("operand")?;
        for k in 0..n {
            let v = r.varint()? as usize;
            let scope = self.scopes.last_mut().ok_or_else(|| r.err("internal: no value scope"))?;
            let def = match scope.values.get(v) {
                None => {
                    return Err(
                        r.err(format!("operand value {v} out of range ({} values in scope)", scope.values.len()))
                    )
                }
                Some(d) => *d,
            };
            if def.is_none() {
                scope.pending.entry(v).or_default().push((op_id, k));
            }
            operands.push(DOperand { def, name: 0 });
        }
        Ok(operands)
    }

    /// Successor blocks, by index within `region`.
    fn read_successors(&mut self, r: &mut Reader<'b>, mask: u8, region: u32) -> R<Vec<u32>> {
        let mut successors = Vec::new();
        if mask & HAS_SUCCESSORS != 0 {
            let n = r.count("successor")?;
            let nblocks = self.out.regions[region as usize].blocks.len();
            for _ in 0..n {
                let s = r.varint()? as usize;
                if s >= nblocks {
                    return Err(r.err(format!("successor block {s} out of range ({nblocks} blocks in the region)")));
                }
                successors.push(self.out.regions[region as usize].blocks[s]);
            }
        }
        Ok(successors)
    }

    /// Attributes as text per value; a function's `sym_name`, `function_type` and `arg_attrs` also read
    /// structurally (the op is a function when it has them and one region), and a call's `callee`.
    #[allow(clippy::type_complexity)]
    fn op_attrs(
        &mut self,
        dict: &[(Rc<str>, u32)],
        opcode: Str,
        num_regions: usize,
        op_id: u32,
    ) -> R<(Vec<(Str, Str)>, Option<DFuncInfo>, Option<Str>)> {
        let mut attrs = Vec::with_capacity(dict.len());
        let mut sym_name = None;
        let mut callee = None;
        let mut arg_attrs = Vec::new();
        let mut func_results = None;
        for (key, value) in dict {
            let k = self.intern(key);
            let v = self.attr_str(*value)?;
            attrs.push((k, v));
            match (&**key, self.at.attr(*value as u64)?.clone()) {
                ("sym_name", Attr::Str { value: s, .. }) => sym_name = Some(self.intern(&s)),
                ("callee", Attr::SymbolRef { root, .. }) => callee = Some(self.intern(&root)),
                ("function_type", Attr::Type(t)) => func_results = self.function_results(t)?,
                ("arg_attrs", Attr::Array(items)) => arg_attrs = self.arg_attrs(&items)?,
                _ => {}
            }
        }
        // A function: `sym_name` + `function_type` and one region; a `func.func` whose inherent attributes are
        // undecodable native properties (v5+) still counts, with a made-up name.
        let is_func_op = self.out.arena[opcode as usize] == "func.func";
        let func = match (sym_name, func_results) {
            (Some(name), Some(results)) if num_regions == 1 => Some(DFuncInfo { name, arg_attrs, results }),
            (name, results) if is_func_op && num_regions == 1 => {
                let name = match name {
                    Some(n) => n,
                    None => self.push_str(format!("func{op_id}")),
                };
                Some(DFuncInfo { name, arg_attrs, results: results.unwrap_or_default() })
            }
            _ => None,
        };
        Ok((attrs, func, callee))
    }

    /// The result types of a function type, as text.
    fn function_results(&mut self, t: u32) -> R<Option<Vec<Str>>> {
        let Ty::Func { results, .. } = self.at.ty(t as u64)?.clone() else { return Ok(None) };
        let mut rs = Vec::new();
        for t in results {
            rs.push(self.type_str(t)?);
        }
        Ok(Some(rs))
    }

    /// Each argument's attribute dictionary, as text.
    fn arg_attrs(&mut self, items: &[u32]) -> R<Vec<Vec<(Str, Str)>>> {
        let mut out = Vec::new();
        for &it in items {
            let mut one = Vec::new();
            if let Attr::Dict(entries) = self.at.attr(it as u64)?.clone() {
                for (k, v) in entries {
                    let k = self.intern(&k);
                    let v = self.attr_str(v)?;
                    one.push((k, v));
                }
            }
            out.push(one);
        }
        Ok(out)
    }

    /// The result types as text, and the op's type: the one result's, a tuple of several, none.
    fn result_type_text(&mut self, result_types: &[u32]) -> R<(Vec<Str>, Option<Str>)> {
        let mut rtypes = Vec::with_capacity(result_types.len());
        for &t in result_types {
            rtypes.push(self.type_str(t)?);
        }
        let ty = match rtypes.len() {
            0 => None,
            1 => Some(rtypes[0]),
            _ => {
                let joined = rtypes.iter().map(|&t| self.out.arena[t as usize].clone()).collect::<Vec<_>>().join(", ");
                Some(self.push_str(format!("({joined})")))
            }
        };
        Ok((rtypes, ty))
    }

    fn read_op(&mut self, r: &mut Reader<'b>, block: u32, region: u32, depth: u32) -> R<()> {
        let (op_id, num_regions, isolated, op_at) = self.read_op_header(r, block, region)?;
        if num_regions == 0 {
            return Ok(());
        }
        if depth >= MAX_REGION_DEPTH {
            return Err(BytecodeError::Malformed {
                offset: op_at,
                section: "IR section",
                message: format!("regions nested deeper than {MAX_REGION_DEPTH}"),
            });
        }
        let regions: Vec<u32> = (0..num_regions).map(|_| self.new_region()).collect();
        self.out.ops[op_id as usize].regions = regions.clone();
        if isolated {
            self.scopes.push(Scope::default());
        }
        let res = if isolated && self.version >= K_LAZY_LOADING {
            let at = r.offset();
            let (id, mut sub) = r.section()?;
            if id != 4 {
                return Err(BytecodeError::Malformed {
                    offset: at,
                    section: "IR section",
                    message: format!("expected an IR section (id 4) for an isolated region, found id {id}"),
                });
            }
            let mut res = Ok(());
            for &rg in &regions {
                res = self.read_region(&mut sub, rg, depth + 1);
                if res.is_err() {
                    break;
                }
            }
            if res.is_ok() && !sub.is_empty() {
                res = Err(sub.err("trailing data after an isolated region"));
            }
            res
        } else {
            let mut res = Ok(());
            for &rg in &regions {
                res = self.read_region(r, rg, depth + 1);
                if res.is_err() {
                    break;
                }
            }
            res
        };
        res?;
        if isolated {
            let scope = self.scopes.pop().unwrap_or_default();
            if let Some((&slot, _)) = scope.pending.iter().next() {
                return Err(r.err(format!("operand refers to value {slot}, which is never defined")));
            }
        }
        Ok(())
    }

    /// The op's innermost source position and the first name location (jax's primitive name, e.g. `swap:`).
    fn loc(&mut self, l: u32) -> R<Option<DLoc>> {
        let mut files = Vec::new();
        let mut names = Vec::new();
        self.at.loc_info(l, &mut files, &mut names, 0)?;
        if files.is_empty() && names.is_empty() {
            return Ok(None);
        }
        let op_name = names.first().cloned();
        let op_name = op_name.map(|n| self.intern(&n));
        let (file, line, col) = match files.first() {
            Some((f, l, c, _)) => (Some(f.clone()), *l, *c),
            None => (None, 0, 0),
        };
        let file = file.map(|f| self.intern(&f));
        let line = self.intern(&line.to_string());
        let col = self.intern(&col.to_string());
        // jax records a frame called at itself (`callsite(x at x)`) for code not called through a helper
        files.dedup_by(|a, b| a.0 == b.0 && a.1 == b.1 && a.2 == b.2);
        // outermost first, each frame's parent the one before it
        let mut parent = 0u32;
        for (f, l, c, func) in files.iter().rev() {
            let func = func.as_ref().map(|n| self.intern(n));
            let key =
                (self.intern(f), func, u32::try_from(*l).unwrap_or(u32::MAX), u32::try_from(*c).unwrap_or(u32::MAX));
            let table = &mut self.out.frames;
            let loc = *self.location_ids.entry(key).or_insert_with(|| {
                table.locations.push(key);
                table.locations.len() as u32
            });
            parent = *self.frame_ids.entry((loc, parent)).or_insert_with(|| {
                table.frames.push((loc, parent));
                table.frames.len() as u32
            });
        }
        let frame = (parent != 0).then(|| self.intern(&parent.to_string()));
        Ok(Some(DLoc { op_name, file, line, col, frame }))
    }
}
