//! Trip counts of LLO loops, read from the program itself: the back-edge branch's predicate is an exit test
//! (`%p14_p6 = scmp.ge.s32.totalorder %s17_s22, 18 /* loop exit test */`) comparing a counter with a bound; the
//! counter is followed through `sadd`/`ssub` by constants, `smov` copies and spill slots (`sst`/`sld` of the same
//! `#allocationN_spill`) to the loop's `sphi`, whose input from before the loop is its start and whose input from
//! the loop body is its step. A loop runs its body, then tests (the branch sits at the end of the body), so it
//! runs at least once. A bound or start read at run time leaves the count unknown unless the user assumes it.

use super::estimate::{Assume, Estimate};
use crate::ir::{Module, OpId, Value, ValueKind};
use crate::parse::llo::view::{self, args, family, predicate};
use serde::Serialize;
use std::collections::HashMap;

/// Where a trip count came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TripSource {
    /// The exit test and the counter's start and step, all constants.
    ExitTest,
    /// `--assume NAME=VALUE`.
    Assumed,
    /// Not known (the estimate says why).
    Unknown,
}

/// One LLO loop.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LoopFacts {
    /// `<computation>/region<N>`: the name `--assume` takes.
    pub name: String,
    /// 1 for an outermost loop.
    pub level: u32,
    /// Bundle addresses of the first and last bundle of the body (delay slots after the back edge included).
    pub start: u64,
    pub end: u64,
    pub static_bundles: u64,
    /// Times the body runs per entry into the loop.
    pub trips: Estimate,
    pub source: TripSource,
    /// The exit test as read: `%s17_s22 >= 18`, the counter starting at 0 and stepping by 1.
    pub exit_test: Option<String>,
}

/// A counter as a function of the iteration: a constant, or `phi + offset` (the loop's induction phi).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Lin {
    Const(i64),
    Iv { phi: OpId, off: i64 },
}

impl Lin {
    fn plus(self, c: i64) -> Lin {
        match self {
            Lin::Const(v) => Lin::Const(v.wrapping_add(c)),
            Lin::Iv { phi, off } => Lin::Iv { phi, off: off.wrapping_add(c) },
        }
    }
}

/// The LLO program's registers and loops.
struct Prog<'m, 'a> {
    m: &'m Module<'a>,
    defs: HashMap<&'a str, OpId>,
}

/// A bundle address attribute (`bundle`, `start`, `end`, `backedge`).
fn addr(op: &crate::ir::Op<'_>, key: &str) -> Option<u64> {
    op.attr(key).and_then(Value::as_int).map(|v| v as u64)
}

/// An integer operand as the scalar unit reads it: `4294967295` in an `.s32` op is -1.
fn int_word(w: &str) -> Option<i64> {
    let v = crate::ir::value::parse_int(w)?;
    Some(if v > i64::from(i32::MAX) && v <= i64::from(u32::MAX) { v - (1i64 << 32) } else { v })
}

/// The operands as written, without the predicate group: names and integer words.
fn plain_args<'v, 'a>(op: &'v crate::ir::Op<'a>) -> Vec<&'v Value<'a>> {
    args(op).iter().filter(|a| !matches!(a.kind, ValueKind::Group { open: '(', .. })).collect()
}

impl<'m, 'a> Prog<'m, 'a> {
    fn new(m: &'m Module<'a>) -> Self {
        let mut defs = HashMap::new();
        for id in m.op_ids() {
            let o = m.op(id);
            if !o.name.is_empty() && o.opcode != "loop" {
                defs.entry(o.name).or_insert(id);
            }
        }
        Prog { m, defs }
    }

    fn bundle(&self, id: OpId) -> Option<u64> {
        addr(self.m.op(id), "bundle")
    }

    fn inside(&self, id: OpId, span: (u64, u64)) -> bool {
        self.bundle(id).is_some_and(|b| b >= span.0 && b <= span.1)
    }

    /// A value operand: a constant word or a register followed to its definition.
    fn value(&self, v: &Value<'a>, lp: (u64, u64), depth: u32) -> Option<Lin> {
        match &v.kind {
            ValueKind::Name(n) => self.reg(n, lp, depth),
            ValueKind::Word(w) => int_word(w).map(Lin::Const),
            _ => None,
        }
    }

    fn reg(&self, name: &str, lp: (u64, u64), depth: u32) -> Option<Lin> {
        if depth > 24 {
            return None;
        }
        let id = *self.defs.get(name)?;
        let op = self.m.op(id);
        let a = plain_args(op);
        match family(op.opcode) {
            "smov" if a.len() == 1 => self.value(a[0], lp, depth + 1),
            "sadd" | "ssub" if a.len() == 2 => {
                let (x, y) = (self.value(a[0], lp, depth + 1)?, self.value(a[1], lp, depth + 1)?);
                let sub = family(op.opcode) == "ssub";
                match (x, y) {
                    (Lin::Const(c), v) if !sub => Some(v.plus(c)),
                    (v, Lin::Const(c)) => Some(v.plus(if sub { c.wrapping_neg() } else { c })),
                    _ => None,
                }
            }
            "sphi" if self.inside(id, lp) => Some(Lin::Iv { phi: id, off: 0 }),
            "sld" => self.reload(id, lp, depth),
            _ => None,
        }
    }

    /// A reload of a spill slot: the value the one store to that slot on the same side of the loop wrote.
    fn reload(&self, id: OpId, lp: (u64, u64), depth: u32) -> Option<Lin> {
        let slot = view::memrefs(self.m.op(id)).next().map(|(_, v)| view::flag_text(v))?;
        let here = self.inside(id, lp);
        let at = self.bundle(id)?;
        let stores: Vec<OpId> = self
            .m
            .op_ids()
            .filter(|&s| family(self.m.op(s).opcode) == "sst")
            .filter(|&s| view::memrefs(self.m.op(s)).next().map(|(_, v)| view::flag_text(v)).as_deref() == Some(&slot))
            .filter(|&s| self.inside(s, lp) == here && (here || self.bundle(s).is_some_and(|b| b < at)))
            .collect();
        let store = match stores.as_slice() {
            [one] => *one,
            // before the loop, the latest store wins
            [.., last] if !here => *last,
            _ => return None,
        };
        let v = *plain_args(self.m.op(store)).iter().rev().find(|v| matches!(v.kind, ValueKind::Name(_)))?;
        self.value(v, lp, depth + 1)
    }

    /// The phi's start (its input from outside the loop) and step (its input from the body, as `phi + step`).
    fn start_step(&self, phi: OpId, lp: (u64, u64)) -> Option<(i64, i64)> {
        let ins = plain_args(self.m.op(phi));
        let (mut start, mut step) = (None, None);
        for v in ins {
            let ValueKind::Name(n) = v.kind else { return None };
            let def = *self.defs.get(n)?;
            if self.inside(def, lp) {
                match self.reg(n, lp, 0)? {
                    Lin::Iv { phi: p, off } if p == phi => step = Some(off),
                    _ => return None,
                }
            } else {
                match self.reg(n, lp, 0)? {
                    Lin::Const(c) => start = Some(c),
                    _ => return None,
                }
            }
        }
        Some((start?, step?))
    }
}

/// `ge`, `gt`, ... applied to `a` and `b`.
fn compare(cc: &str, a: i64, b: i64) -> Option<bool> {
    Some(match cc {
        "ge" => a >= b,
        "gt" => a > b,
        "le" => a <= b,
        "lt" => a < b,
        "eq" => a == b,
        "ne" => a != b,
        _ => return None,
    })
}

const MAX_TRIPS: i64 = 1 << 24;

/// The body runs, then the back edge is taken while `continues(i)`: the count is the first `i` where it is not, + 1.
fn count(continues: impl Fn(i64) -> Option<bool>) -> Result<u64, String> {
    for i in 0..MAX_TRIPS {
        if !continues(i).ok_or("the exit test's comparison is not one the model reads")? {
            return Ok(i as u64 + 1);
        }
    }
    Err(format!("the exit test does not end the loop within {MAX_TRIPS} iterations"))
}

/// Reads the trip count of the loop op `lp` from its exit test: the count and the test as text.
fn exit_test(p: &Prog<'_, '_>, lp: OpId) -> Result<(u64, String), String> {
    let l = p.m.op(lp);
    let span = (addr(l, "start").ok_or("no start")?, addr(l, "end").ok_or("no end")?);
    let back = addr(l, "backedge").ok_or("no back edge")?;
    let region = l.attr("region").and_then(Value::word).unwrap_or("");
    let branch =
        p.m.op_ids()
            .filter(|&id| p.bundle(id) == Some(back) && family(p.m.op(id).opcode) == "sbr")
            .find(|&id| {
                let t = view::named(p.m.op(id), "target").and_then(Value::word).unwrap_or("");
                t.trim_start_matches('$').trim_start_matches("region") == region
            })
            .ok_or("no back-edge branch")?;
    let pred = predicate(p.m.op(branch)).ok_or("the back edge is unconditional")?;
    let test = *p.defs.get(pred.reg).ok_or("the back edge's predicate is not defined in the program")?;
    let t = p.m.op(test);
    let mut segs = t.opcode.split('.');
    let (fam, cc) = (segs.next().unwrap_or(""), segs.next().unwrap_or(""));
    let a = plain_args(t);
    if fam != "scmp" || a.len() != 2 {
        return Err(format!("the back edge tests `{}`, not a scalar comparison", t.opcode));
    }
    let text = |v: &Value<'_>| match &v.kind {
        ValueKind::Name(n) => format!("%{n}"),
        ValueKind::Word(w) => int_word(w).map_or_else(|| w.to_string(), |c| c.to_string()),
        _ => "?".into(),
    };
    let sym = match cc {
        "ge" => ">=",
        "gt" => ">",
        "le" => "<=",
        "lt" => "<",
        "eq" => "==",
        "ne" => "!=",
        _ => cc,
    };
    let shown = format!("{} {sym} {}", text(a[0]), text(a[1]));
    let (x, y) = (p.value(a[0], span, 0), p.value(a[1], span, 0));
    let (iv, bound, swapped) = match (x, y) {
        (Some(Lin::Iv { phi, off }), Some(Lin::Const(n))) => ((phi, off), n, false),
        (Some(Lin::Const(n)), Some(Lin::Iv { phi, off })) => ((phi, off), n, true),
        (Some(Lin::Iv { .. }), _) | (_, Some(Lin::Iv { .. })) => {
            return Err(format!("`{shown}`: the bound is read at run time"))
        }
        _ => return Err(format!("`{shown}`: the counter is not followed to the loop's phi")),
    };
    let (start, step) =
        p.start_step(iv.0, span).ok_or(format!("`{shown}`: the counter's start or step is not a constant"))?;
    let continues = |i: i64| {
        let x = start.checked_add(i.checked_mul(step)?)?.checked_add(iv.1)?;
        let hit = if swapped { compare(cc, bound, x)? } else { compare(cc, x, bound)? };
        Some(hit != pred.negated)
    };
    let n = count(continues).map_err(|e| format!("`{shown}`: {e}"))?;
    Ok((n, format!("{shown}, the counter starting at {start} and stepping by {step}")))
}

/// Every loop of an LLO program (`computation` names them), outermost first as they appear.
pub fn llo_loops(m: &Module<'_>, computation: &str, assume: &Assume) -> Vec<LoopFacts> {
    let p = Prog::new(m);
    let mut out = Vec::new();
    for id in m.op_ids().filter(|&id| m.op(id).opcode == "loop") {
        let l = m.op(id);
        let (Some(start), Some(end)) = (addr(l, "start"), addr(l, "end")) else { continue };
        let region = l.attr("region").and_then(Value::word).unwrap_or("?");
        let name = format!("{computation}/region{region}");
        let level = l.attr("level").and_then(Value::as_int).unwrap_or(1) as u32;
        let read = exit_test(&p, id);
        let (trips, source, exit_test) = match (assume.get(&name), read) {
            (Some(v), r) => (Estimate::Exact(v), TripSource::Assumed, r.ok().map(|x| x.1)),
            (None, Ok((n, t))) => (Estimate::Exact(n), TripSource::ExitTest, Some(t)),
            (None, Err(e)) => (Estimate::Unknown(e), TripSource::Unknown, None),
        };
        let static_bundles = end.saturating_sub(start) + 1;
        out.push(LoopFacts { name, level, start, end, static_bundles, trips, source, exit_test });
    }
    out
}

/// How many times each bundle runs per launch: the product of the trip counts of the loops around it. `loops`
/// nest (each inner one lies inside the one before it at a lower level).
pub fn bundle_runs(bundles: u64, loops: &[LoopFacts]) -> Vec<Estimate> {
    let mut runs = vec![Estimate::Exact(1); bundles as usize];
    for l in loops {
        for a in l.start..=l.end.min(bundles.saturating_sub(1)) {
            runs[a as usize] = runs[a as usize].mul(&l.trips);
        }
    }
    runs
}

/// The bundles of an LLO program: the highest address any op or loop names, + 1.
pub fn static_bundles(m: &Module<'_>) -> u64 {
    let last = m.op_ids().filter_map(|id| addr(m.op(id), "bundle").max(addr(m.op(id), "end"))).max();
    last.map_or(0, |a| a + 1)
}
