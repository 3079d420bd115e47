//! Pairs HLO asynchronous starts with their dones by following the graph (start → optional updates → done through
//! user edges), not by counting names: `copy-start`/`copy-done`, `all-gather-start`/`-done`, `async-start`/
//! `async-update`/`async-done`, `send`/`send-done`, `recv`/`recv-done`, and any future `X-start`/`X-done` family.

use crate::ir::{Module, OpId};

#[derive(Debug, Default)]
pub struct AsyncPairs {
    /// `(family, start, done)`, e.g. `("copy", %copy-start.1, %copy-done.1)`.
    pub pairs: Vec<(String, OpId, OpId)>,
    /// Starts from which no done is reachable.
    pub unmatched_starts: Vec<OpId>,
    /// Dones whose operand is not a start (or update) of their family.
    pub orphan_dones: Vec<OpId>,
}

/// The role of an opcode in an async family: `("copy", Start)` for `copy-start`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AsyncRole {
    Start,
    Update,
    Done,
}

pub fn async_role(opcode: &str) -> Option<(&str, AsyncRole)> {
    if let Some(f) = opcode.strip_suffix("-start") {
        return Some((f, AsyncRole::Start));
    }
    if let Some(f) = opcode.strip_suffix("-update") {
        return Some((f, AsyncRole::Update));
    }
    if let Some(f) = opcode.strip_suffix("-done") {
        return Some((f, AsyncRole::Done));
    }
    match opcode {
        "send" | "recv" => Some((opcode, AsyncRole::Start)),
        _ => None,
    }
}

pub fn async_pairs(m: &Module<'_>) -> AsyncPairs {
    let mut out = AsyncPairs::default();
    for id in m.op_ids() {
        let op = m.op(id);
        match async_role(op.opcode) {
            Some((family, AsyncRole::Start)) => {
                let dones = dones_of(m, id, family);
                if dones.is_empty() {
                    out.unmatched_starts.push(id);
                }
                for d in dones {
                    out.pairs.push((family.to_string(), id, d));
                }
            }
            Some((family, AsyncRole::Done)) => {
                let fed_by_family = m.operand_ops(id).any(|src| {
                    matches!(async_role(m.op(src).opcode), Some((f, AsyncRole::Start | AsyncRole::Update)) if f == family)
                });
                if !fed_by_family {
                    out.orphan_dones.push(id);
                }
            }
            _ => {}
        }
    }
    out
}

/// Dones reachable from `start` through its family's updates.
pub fn dones_of(m: &Module<'_>, start: OpId, family: &str) -> Vec<OpId> {
    let mut out = Vec::new();
    let mut stack = vec![start];
    let mut seen = std::collections::HashSet::new();
    while let Some(cur) = stack.pop() {
        if !seen.insert(cur) {
            continue;
        }
        for &u in &m.op(cur).users {
            match async_role(m.op(u).opcode) {
                Some((f, AsyncRole::Done)) if f == family => out.push(u),
                Some((f, AsyncRole::Update)) if f == family => stack.push(u),
                _ => {}
            }
        }
    }
    out
}
