//! The bytes a DMA or a wait moves: element size times the product of its view's extents, static and dynamic
//! (`<%sz>` operands of the slices that made it).

use super::exec::{Engine, Val};
use super::term::Lin;
use crate::ir::*;
use crate::semantic::op::{indirect_dma_rows_role, op_name};

impl Engine<'_, '_> {
    /// Bytes (or units) a DMA op moves, from a view's extents and element size.
    pub fn bytes_of(&self, id: OpId, roles: &[&str]) -> Option<Lin> {
        // both ends of a copy have its size: the first whose size is known
        let op = self.m.op(id);
        roles.iter().filter_map(|r| op.operands.iter().find(|o| o.role == Some(*r))).find_map(|o| self.operand_bytes(o))
    }

    /// An indirect DMA's size: its on-chip end's ([`indirect_dma_rows_role`]).
    pub(super) fn on_chip_bytes(&self, id: OpId) -> Option<Lin> {
        self.bytes_of(id, &[indirect_dma_rows_role(self.m.op(id))?])
    }

    fn operand_bytes(&self, o: &Operand<'_>) -> Option<Lin> {
        let sh = o.ty.as_ref().and_then(|t| t.mlir()).and_then(|t| t.shaped());
        let bits = i64::from(sh.and_then(|s| s.elem.dtype()).map(|d| d.bits()).unwrap_or(0));
        if bits == 0 {
            return None;
        }
        let dims: Option<Vec<i64>> = sh.and_then(|s| s.static_dims());
        let mut n = Lin::int(1);
        match (dims, self.get(o)) {
            (Some(d), _) => {
                n = Lin::int(d.iter().try_fold(1i64, |a, &x| a.checked_mul(x))?);
            }
            (None, Val::Ref(v)) => match v.map.as_ref() {
                Some(map) => {
                    for &d in map {
                        n = n.mul(v.ext.get(d)?)?;
                    }
                }
                // a view the engine lost track of (a reshape that splits dimensions): its size is still the
                // slice's own — static extents and the `<%sz>` operands, in order
                None => n = self.slice_elems(o.def)?,
            },
            _ => return None,
        }
        if bits % 8 == 0 {
            n.scale(bits / 8)
        } else {
            // sub-byte elements: bytes = ceil(n·bits / 8), exact for the constant case only
            let c = n.as_int()?.checked_mul(bits)?;
            Some(Lin::int((c + 7) / 8))
        }
    }

    /// Elements of a buffer with dynamic dimensions whose view the engine lost: its static extents times the
    /// `<%sz>` operands of the slice that made them.
    fn slice_elems(&self, d: Def) -> Option<Lin> {
        let Def::Op { op: id, .. } = d else { return None };
        let dims = self.m.op(id).ty.mlir()?.shaped()?.dims.clone()?;
        let mut sizes = self.dynamic_sizes(d)?.into_iter();
        let mut n = Lin::int(1);
        for x in dims.iter() {
            let ext = match x {
                Dim::Static(k) => Lin::int(*k),
                _ => sizes.next()?,
            };
            n = n.mul(&ext)?;
        }
        sizes.next().is_none().then_some(n)
    }

    /// The dynamic extents of a view, in order: a slice's `<%sz>` operands, kept in order by a squeeze (which only
    /// drops unit dimensions).
    fn dynamic_sizes(&self, d: Def) -> Option<Vec<Lin>> {
        let Def::Op { op: id, .. } = d else { return None };
        let b = op_name(self.m.op(id).opcode);
        if b.starts_with("memref_slice") || b == "subview" {
            return self.ints(id, "dynamic_sizes").into_iter().collect();
        }
        if b.starts_with("memref_squeeze") {
            return self.dynamic_sizes(self.m.op(id).operands.first()?.def);
        }
        None
    }
}
