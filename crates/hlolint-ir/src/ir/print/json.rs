//! The whole graph as plain serde data: functions, their ops, opcodes, operand names and callees — what
//! `hlolint graph` prints, one JSON line per file.
//!
//! The field names are HLO's words (`computations`, `instructions`) for every layer, MLIR and LLO included: the
//! conformance check against XLA's own parser and any other reader of `hlolint graph` key on them, so they stay
//! as they are; a layer's own words are `Layer::words`.

use crate::ir::{Def, FuncId, Module};
use serde::Serialize;

#[derive(Debug, Serialize)]
pub struct GraphDump {
    pub module: String,
    pub entry: Option<String>,
    pub computations: Vec<ComputationDump>,
}

/// One function (`ir::Func`) of any layer.
#[derive(Debug, Serialize)]
pub struct ComputationDump {
    pub name: String,
    /// Its ops in region order, nested regions' ops after the op holding them.
    pub instructions: Vec<InstructionDump>,
}

/// One op (`ir::Op`) of any layer.
#[derive(Debug, Serialize)]
pub struct InstructionDump {
    pub name: String,
    pub opcode: String,
    /// Operand instruction names (the definitions they resolved to).
    pub operands: Vec<String>,
    pub calls: Vec<String>,
}

pub fn graph_dump(m: &Module<'_>) -> GraphDump {
    let computations = (0..m.funcs.len() as u32)
        .map(FuncId)
        .map(|f| ComputationDump {
            name: m.func(f).name.to_string(),
            instructions: m
                .func_ops(f)
                .into_iter()
                .map(|id| {
                    let op = m.op(id);
                    InstructionDump {
                        name: op.name.to_string(),
                        opcode: op.opcode.to_string(),
                        operands: op
                            .operands
                            .iter()
                            .map(|o| match o.def {
                                Def::Op { op, .. } => m.op(op).name.to_string(),
                                // a block argument or an unresolved name: the operand as written
                                _ => o.name.to_string(),
                            })
                            .collect(),
                        calls: op.calls.iter().map(|c| m.func(c.func).name.to_string()).collect(),
                    }
                })
                .collect(),
        })
        .collect();
    GraphDump { module: m.name.to_string(), entry: m.entry.map(|f| m.func(f).name.to_string()), computations }
}
