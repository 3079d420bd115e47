//! What a start's witness paths say, as findings: never done on a path, done twice on one.

use super::forward::Step;
use super::{name, At, Hit};
use crate::ir::{Module, OpId};
use std::collections::HashSet;

fn dones_in(w: &[Step]) -> Vec<OpId> {
    w.iter().filter_map(|s| if let Step::Done(d) = s { Some(*d) } else { None }).collect()
}

fn choices_in(w: &[Step]) -> Vec<(OpId, String)> {
    w.iter().filter_map(|s| if let Step::Choice(c, t) = s { Some((*c, t.clone())) } else { None }).collect()
}

fn describe_path(choices: &[(OpId, String)]) -> String {
    let mut v: Vec<&str> = Vec::new();
    for (_, t) in choices {
        if !v.contains(&t.as_str()) {
            v.push(t);
        }
    }
    v.join(", then ")
}

/// The `never-done` finding of start `id`: `zero` is a witness path with no done, `one` one with a done (if any).
pub(super) fn never_done_hit(
    m: &Module<'_>,
    unit: usize,
    id: OpId,
    family: &str,
    zero: &[Step],
    one: Option<&[Step]>,
) -> Hit {
    let at = |op: OpId| At::Op { unit, op };
    let op = m.op(id);
    let sname = name(m, id);
    let choices = choices_in(zero);
    let (detail, label) = if choices.is_empty() {
        (
            format!("`{sname}` ({}) is never done: no `{family}-done` consumes its value", op.opcode),
            "started here, never done".to_string(),
        )
    } else {
        (
            format!("`{sname}` ({}) is not done on the path where {}", op.opcode, describe_path(&choices)),
            "started here; not done on every path".to_string(),
        )
    };
    let mut h = Hit::new(at(id), label, detail)
        .capture("kind", "never-done")
        .capture("family", family)
        .capture("start", sname.clone())
        .capture("done", "");
    for (c, t) in choices.iter().take(4) {
        h = h.with_label(at(*c), format!("path without a done: {t}"));
    }
    // where it is done on the other paths
    if let Some(d) = one.and_then(|w1| dones_in(w1).first().copied()) {
        h = h.with_label(at(d), "done here on other paths");
    }
    h
}

/// The `done-twice` finding of start `id`, `twice` a witness path with two or more dones.
pub(super) fn done_twice_hit(m: &Module<'_>, unit: usize, id: OpId, family: &str, twice: &[Step]) -> Hit {
    let at = |op: OpId| At::Op { unit, op };
    let op = m.op(id);
    let sname = name(m, id);
    let dones = dones_in(twice);
    let choices = choices_in(twice);
    let mut names: Vec<String> = dones.iter().map(|&d| name(m, d)).collect();
    names.dedup();
    let where_ = if choices.is_empty() { String::new() } else { format!(" (when {})", describe_path(&choices)) };
    let detail = format!(
        "`{sname}` ({}) is done more than once on one path{where_}: {}",
        op.opcode,
        if names.len() == 1 {
            format!("`{}` runs twice on it", names[0])
        } else {
            format!("by {}", names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(" and "))
        }
    );
    let mut h = Hit::new(at(id), "started once here", detail)
        .capture("kind", "done-twice")
        .capture("family", family)
        .capture("start", sname.clone())
        .capture("done", names.join(", "));
    let mut labelled = HashSet::new();
    for d in dones {
        if labelled.insert(d) {
            h = h.with_label(at(d), "done here");
        }
    }
    h
}
