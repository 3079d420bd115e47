//! Names for what the bytecode leaves unnamed: values, block labels, successor lists and operands, as MLIR's
//! printer would write them.

use super::super::attrs::symbol_text;
use super::{DDef, Decoder};

impl Decoder<'_> {
    /// Names values the way MLIR's printer numbers them when no op suggests a name: per function (or
    /// isolated op), block arguments `argN` and results `N` in order, a block's ops before the regions nested
    /// in them.
    pub(super) fn name_values(&mut self) {
        self.number_values();
        self.label_blocks();
        self.successor_attrs();
        self.operand_names();
        let _ = symbol_text;
    }

    /// Block arguments `argN` and results `N`, numbered per function or isolated op.
    fn number_values(&mut self) {
        let top = self.out.top_block;
        let mut scopes = vec![vec![top]];
        while let Some(start) = scopes.pop() {
            let (mut next_arg, mut next_res) = (0usize, 0usize);
            let mut queue: std::collections::VecDeque<u32> = start.into_iter().collect();
            while let Some(b) = queue.pop_front() {
                for k in 0..self.out.blocks[b as usize].args.len() {
                    let s = self.intern(&format!("arg{next_arg}"));
                    next_arg += 1;
                    self.out.blocks[b as usize].args[k].0 = s;
                }
                let ops = self.out.blocks[b as usize].ops.clone();
                for op in ops {
                    let o = &self.out.ops[op as usize];
                    if !o.result_types.is_empty() {
                        let s = self.intern(&next_res.to_string());
                        next_res += 1;
                        self.out.ops[op as usize].name = s;
                    }
                    let o = &self.out.ops[op as usize];
                    let inner: Vec<u32> =
                        o.regions.iter().flat_map(|&r| self.out.regions[r as usize].blocks.clone()).collect();
                    if o.isolated || o.func.is_some() {
                        scopes.push(inner);
                    } else {
                        queue.extend(inner);
                    }
                }
            }
        }
    }

    /// Block labels: `bbN` per region position (entry blocks have none).
    fn label_blocks(&mut self) {
        for r in 0..self.out.regions.len() {
            let blocks = self.out.regions[r].blocks.clone();
            for (k, b) in blocks.into_iter().enumerate().skip(1) {
                let s = self.intern(&format!("bb{k}"));
                self.out.blocks[b as usize].label = Some(s);
            }
        }
    }

    /// Successor lists as a `successors` attribute, with the region-local labels.
    fn successor_attrs(&mut self) {
        for i in 0..self.out.ops.len() {
            if self.out.ops[i].successors.is_empty() {
                continue;
            }
            let labels: Vec<String> = self.out.ops[i]
                .successors
                .iter()
                .map(|&b| {
                    format!(
                        "^{}",
                        self.out.blocks[b as usize].label.map(|l| self.out.arena[l as usize].as_str()).unwrap_or("bb0")
                    )
                })
                .collect();
            let k = self.intern("successors");
            let v = self.push_str(format!("[{}]", labels.join(", ")));
            self.out.ops[i].attrs.push((k, v));
        }
    }

    /// Operand names from their definitions (`N#k` for result k of a multi-result op).
    fn operand_names(&mut self) {
        for i in 0..self.out.ops.len() {
            for k in 0..self.out.ops[i].operands.len() {
                let name = match self.out.ops[i].operands[k].def {
                    Some(DDef::Op { op, index }) => {
                        let o = &self.out.ops[op as usize];
                        let base = self.out.arena[o.name as usize].clone();
                        if o.result_types.len() > 1 {
                            self.intern(&format!("{base}#{index}"))
                        } else {
                            o.name
                        }
                    }
                    Some(DDef::Arg { block, index }) => {
                        self.out.blocks[block as usize].args.get(index as usize).map(|a| a.0).unwrap_or(0)
                    }
                    None => 0,
                };
                self.out.ops[i].operands[k].name = name;
            }
        }
    }
}
