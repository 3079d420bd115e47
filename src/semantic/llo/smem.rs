//! Scalar memory accesses: loads and stores through `[smem:...]`, spill slots told apart.

use super::family;
use crate::ir::{Module, OpId};
use crate::parse::llo::args::{flag_text, memrefs};
use serde::Serialize;

#[derive(Clone, Debug, Serialize)]
pub struct SmemAccess<'a> {
    pub op: OpId,
    pub mnemonic: &'a str,
    pub is_load: bool,
    /// The address inside `[smem:[...]]`, compact (`#allocation3`, `%s33_s15`, `#allocation8_spill`).
    pub address: String,
    /// Spill slots (`#allocationN_spill`) are the register allocator's, not the kernel's data.
    pub is_spill: bool,
}

/// Loads and stores through `[smem:...]` (`sld`, `sst`, and any other op with an SMEM memory reference).
pub fn smem_accesses<'a>(m: &Module<'a>) -> Vec<SmemAccess<'a>> {
    let mut out = Vec::new();
    for id in m.op_ids() {
        let op = m.op(id);
        for (space, addr) in memrefs(op) {
            if space != "smem" {
                continue;
            }
            let address = flag_text(addr);
            let fam = family(op.opcode);
            out.push(SmemAccess {
                op: id,
                mnemonic: op.opcode,
                is_load: fam.contains("ld") || fam.contains("load"),
                is_spill: address.contains("_spill"),
                address,
            });
        }
    }
    out
}

/// `sld [smem:...]` that are not spill reloads: scalars the kernel reads from SMEM (scales, prefetched indices).
pub fn smem_loads<'a>(m: &Module<'a>) -> Vec<SmemAccess<'a>> {
    smem_accesses(m).into_iter().filter(|a| a.is_load && !a.is_spill).collect()
}
