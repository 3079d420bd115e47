//! Trip counts of LLO loops, read from the program itself: the back-edge branch's predicate is an exit test
//! (`%p14_p6 = scmp.ge.s32.totalorder %s17_s22, 18 /* loop exit test */`) comparing a counter with a bound; the
//! counter is followed through `sadd`/`ssub` by constants, `smov` copies and spill slots (`sst`/`sld` of the same
//! `#allocationN_spill`) to the loop's `sphi`, whose input from before the loop is its start and whose input from
//! the loop body is its step. A loop runs its body, then tests (the branch sits at the end of the body), so it
//! runs at least once. A bound or start read at run time leaves the count unknown unless the user assumes it.

use super::estimate::{Assume, Estimate};
use crate::ir::{Module, OpId, Value, ValueKind};
use crate::parse::llo::args::{self, args, predicate};
use crate::semantic::llo::{family, mnemonic as mn};
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

/// A bundle address attribute of a loop (`start`, `end`, `backedge`).
fn addr(op: &crate::ir::Op<'_>, key: &str) -> Option<u64> {
    op.attr(key).and_then(Value::as_int).map(|v| v as u64)
}

/// The address of the bundle an op issues in.
fn bundle_addr(op: &crate::ir::Op<'_>) -> Option<u64> {
    crate::parse::llo::args::position(op).map(|(bundle, _slot)| bundle)
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
            if !o.name.is_empty() && o.opcode != mn::LOOP {
                defs.entry(o.name).or_insert(id);
            }
        }
        Prog { m, defs }
    }

    fn bundle(&self, id: OpId) -> Option<u64> {
        bundle_addr(self.m.op(id))
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
            mn::SMOV if a.len() == 1 => self.value(a[0], lp, depth + 1),
            mn::SADD | mn::SSUB if a.len() == 2 => {
                let (x, y) = (self.value(a[0], lp, depth + 1)?, self.value(a[1], lp, depth + 1)?);
                let sub = family(op.opcode) == mn::SSUB;
                match (x, y) {
                    (Lin::Const(c), v) if !sub => Some(v.plus(c)),
                    (v, Lin::Const(c)) => Some(v.plus(if sub { c.wrapping_neg() } else { c })),
                    _ => None,
                }
            }
            mn::SPHI if self.inside(id, lp) => Some(Lin::Iv { phi: id, off: 0 }),
            mn::SLD => self.reload(id, lp, depth),
            _ => None,
        }
    }

    /// A reload of a spill slot: the value the one store to that slot on the same side of the loop wrote.
    fn reload(&self, id: OpId, lp: (u64, u64), depth: u32) -> Option<Lin> {
        let slot = args::memrefs(self.m.op(id)).next().map(|(_, v)| args::flag_text(v))?;
        let here = self.inside(id, lp);
        let at = self.bundle(id)?;
        let stores: Vec<OpId> = self
            .m
            .op_ids()
            .filter(|&s| family(self.m.op(s).opcode) == mn::SST)
            .filter(|&s| args::memrefs(self.m.op(s)).next().map(|(_, v)| args::flag_text(v)).as_deref() == Some(&slot))
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

/// The most iterations a loop is followed for.
const MAX_TRIPS: i64 = 1 << 40;

/// The body runs, then the back edge is taken while `continues(i)`: the count is the first `i` where it is not, + 1.
/// Ordering comparisons of a counter moving by a constant step change their answer at most once, so the first
/// exit is found by doubling and bisection; `==` and `!=` are followed step by step, a bounded number of times.
fn count(cc: &str, continues: impl Fn(i64) -> Option<bool>) -> Result<u64, String> {
    let go = |i: i64| continues(i).ok_or("the exit test's comparison is not one the model reads");
    if !go(0)? {
        return Ok(1);
    }
    if matches!(cc, "eq" | "ne") {
        for i in 1..(1 << 16) {
            if !go(i)? {
                return Ok(i as u64 + 1);
            }
        }
        return Err("the exit test does not end the loop within 65536 iterations".into());
    }
    let mut hi = 1i64;
    while go(hi)? {
        hi = hi.saturating_mul(2);
        if hi > MAX_TRIPS {
            return Err("the exit test never ends the loop".into());
        }
    }
    let mut lo = hi / 2; // continues(lo), not continues(hi)
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if go(mid)? {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(hi as u64 + 1)
}

/// Reads the trip count of the loop op `lp` from its exit test: the count and the test as text.
fn exit_test(p: &Prog<'_, '_>, lp: OpId) -> Result<(u64, String), String> {
    let l = p.m.op(lp);
    let span = (addr(l, "start").ok_or("no start")?, addr(l, "end").ok_or("no end")?);
    let back = addr(l, "backedge").ok_or("no back edge")?;
    let region = l.attr("region").and_then(Value::word).unwrap_or("");
    let branch =
        p.m.op_ids()
            .filter(|&id| p.bundle(id) == Some(back) && family(p.m.op(id).opcode) == mn::SBR)
            .find(|&id| {
                let t = args::named(p.m.op(id), "target").and_then(Value::word).unwrap_or("");
                t.trim_start_matches('$').trim_start_matches("region") == region
            })
            .ok_or("no back-edge branch")?;
    let pred = predicate(p.m.op(branch)).ok_or("the back edge is unconditional")?;
    let test = *p.defs.get(pred.reg).ok_or("the back edge's predicate is not defined in the program")?;
    let t = p.m.op(test);
    let mut segs = t.opcode.split('.');
    let (fam, cc) = (segs.next().unwrap_or(""), segs.next().unwrap_or(""));
    let a = plain_args(t);
    if fam != mn::SCMP || a.len() != 2 {
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
    let n = count(cc, continues).map_err(|e| format!("`{shown}`: {e}"))?;
    Ok((n, format!("{shown}, the counter starting at {start} and stepping by {step}")))
}

/// Every loop of an LLO program (`computation` names them), outermost first as they appear.
pub fn llo_loops(m: &Module<'_>, computation: &str, assume: &Assume) -> Vec<LoopFacts> {
    let p = Prog::new(m);
    let mut out = Vec::new();
    for id in m.op_ids().filter(|&id| m.op(id).opcode == mn::LOOP) {
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
    let bundles = bundles.min(MAX_BUNDLES);
    let mut runs = vec![Estimate::Exact(1); bundles as usize];
    for l in loops {
        for a in l.start..=l.end.min(bundles.saturating_sub(1)) {
            runs[a as usize] = runs[a as usize].mul(&l.trips);
        }
    }
    runs
}

/// The extra iterations libtpu gives a software-pipelined loop: its first bundle's ops number the iteration
/// each pipeline stage works on (`/* iteration index, stage = 2 */`); a loop of `s + 1` stages runs `s`
/// iterations more than its work, in which the later (or earlier) stages run alone. 0 for a loop that is not
/// pipelined.
pub fn pipeline_stages(m: &Module<'_>, lp: &LoopFacts) -> u64 {
    let mut stages = 0;
    for id in m.op_ids() {
        let op = m.op(id);
        if bundle_addr(op) != Some(lp.start) {
            continue;
        }
        for a in op.attrs.iter().filter(|a| a.key == "comment") {
            let ValueKind::Str(c) = a.value().kind else { continue };
            for part in c.split("::") {
                if let Some(n) = part.trim().strip_prefix("iteration index, stage = ") {
                    stages = stages.max(n.trim().parse().unwrap_or(0));
                }
            }
        }
    }
    stages
}

/// Conditional branches inside loop bodies that are not a loop's back edge (they may skip bundles).
pub fn branches_in_loops(m: &Module<'_>, loops: &[LoopFacts]) -> u64 {
    let backedges: Vec<u64> =
        m.op_ids().filter(|&id| m.op(id).opcode == mn::LOOP).filter_map(|id| addr(m.op(id), "backedge")).collect();
    let inside = |b: u64| loops.iter().any(|l| b >= l.start && b <= l.end);
    m.op_ids()
        .filter(|&id| family(m.op(id).opcode) == mn::SBR && predicate(m.op(id)).is_some())
        .filter_map(|id| bundle_addr(m.op(id)))
        .filter(|&b| inside(b) && !backedges.contains(&b))
        .count() as u64
}

/// The most bundles a program is modelled with (a larger address is not a real program).
pub const MAX_BUNDLES: u64 = 1 << 24;

/// The bundles of an LLO program: the highest address any op or loop names, + 1.
pub fn static_bundles(m: &Module<'_>) -> u64 {
    let last = m.op_ids().filter_map(|id| bundle_addr(m.op(id)).max(addr(m.op(id), "end"))).max();
    last.map_or(0, |a| a + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::llo::{parse_llo, LloFile};

    const HEAD: &str = "= control target key start\nLH: loop header\nLB: loop body\nLE: loop exit\n= control target key end\n\n     0   :  { %s1_s0 = inlined_call_operand.vmem [shape: f32[8,128], index: 0, kind: input, shape index: {}] } /* entry bundle: %k.1 = custom-call(%x) */\n";

    fn loops_of(body: &str, assume: &Assume) -> (Vec<LoopFacts>, Estimate) {
        let text = format!("{HEAD}{body}");
        let Ok(LloFile::Bundles(p)) = parse_llo("d/llo/1-k.1-03-final_bundles.txt", &text) else { panic!("parses") };
        let loops = llo_loops(&p.module, "k.1", assume);
        let runs = bundle_runs(static_bundles(&p.module), &loops);
        (loops, Estimate::sum(&runs))
    }

    const COUNTED: &str = "   0x1   :  { %s10_s1 = smov 0 }
   0x2 LB: > { %s11_s2 = sphi %s10_s1, %s12_s2 } /* Start region 5 */
   0x3   : > { %s12_s2 = sadd.s32 1, %s11_s2 }
   0x4   : > { %p13_p0 = scmp.ge.s32.totalorder %s12_s2, 7 /* loop exit test */ }
   0x5   : > { %14 = sbr.rel (!%p13_p0) target = $region5 }
   0x6   :  { %15 = shalt }
";

    #[test]
    fn a_counted_loop_runs_until_its_exit_test() {
        let (l, dynamic) = loops_of(COUNTED, &Assume::default());
        assert_eq!(l.len(), 1);
        assert_eq!(
            (l[0].name.as_str(), l[0].trips.clone(), l[0].source),
            ("k.1/region5", Estimate::Exact(7), TripSource::ExitTest)
        );
        assert_eq!(l[0].exit_test.as_deref(), Some("%s12_s2 >= 7, the counter starting at 0 and stepping by 1"));
        assert_eq!(l[0].static_bundles, 4);
        assert_eq!(dynamic, Estimate::Exact(3 + 4 * 7), "bundles 0, 1, 6 once; the body 7 times");
    }

    /// libtpu numbers the iterations of a software-pipelined loop's stages in its first bundle: two stages beyond
    /// the first, two extra iterations.
    #[test]
    fn a_pipelined_loop_names_its_stages_in_its_first_bundle() {
        let (l, _) = loops_of(COUNTED, &Assume::default());
        let text = format!("{HEAD}{COUNTED}");
        let Ok(LloFile::Bundles(p)) = parse_llo("d/llo/1-k.1-03-final_bundles.txt", &text) else { panic!() };
        assert_eq!(pipeline_stages(&p.module, &l[0]), 0, "not pipelined");
        let staged = COUNTED.replace(
            "%s11_s2 = sphi %s10_s1, %s12_s2 }",
            "%s20_s3 = sadd.s32 4294967295, %s11_s2 /* iteration index, stage = 1 */  ;;  \
             %s21_s4 = sadd.s32 4294967294, %s11_s2 /* iteration index, stage = 2 */  ;;  %s11_s2 = sphi %s10_s1, %s12_s2 }",
        );
        let text = format!("{HEAD}{staged}");
        let Ok(LloFile::Bundles(p)) = parse_llo("d/llo/1-k.1-03-final_bundles.txt", &text) else { panic!("parses") };
        let l = llo_loops(&p.module, "k.1", &Assume::default());
        assert_eq!(pipeline_stages(&p.module, &l[0]), 2);
    }

    #[test]
    fn a_run_time_bound_is_unknown_until_assumed() {
        let body = COUNTED.replace("%s12_s2, 7", "%s12_s2, %s1_s0");
        let (l, dynamic) = loops_of(&body, &Assume::default());
        assert_eq!(l[0].source, TripSource::Unknown);
        assert!(l[0].trips.reason().is_some_and(|r| r.contains("read at run time")), "{:?}", l[0].trips);
        assert!(dynamic.reason().is_some());
        let (l, dynamic) = loops_of(&body, &Assume::parse(["region5=3"]).unwrap());
        assert_eq!((l[0].trips.clone(), l[0].source), (Estimate::Exact(3), TripSource::Assumed));
        assert_eq!(dynamic, Estimate::Exact(3 + 4 * 3));
    }

    /// A counter counting down by `4294967295` (-1 as an s32), kept in a spill slot across the body.
    #[test]
    fn counters_through_spills_and_negative_steps() {
        let body = "   0x1   :  { %s10_s1 = smov 5  ;;  %20 = sst [smem:[#allocation3_spill]] %s1_s0 }
   0x2 LB: > { %s11_s2 = sphi %s10_s1, %s16_s2 } /* Start region 5 */
   0x3   : > { %s12_s3 = sadd.s32 4294967295, %s11_s2  ;;  %21 = sst [smem:[#allocation4_spill]] %s12_s3 }
   0x4   : > { %s16_s2 = sld [smem:[#allocation4_spill]] }
   0x5   : > { %p13_p0 = scmp.le.s32.totalorder %s16_s2, 0 /* loop exit test */ }
   0x6   : > { %14 = sbr.rel (!%p13_p0) target = $region5 }
";
        let (l, _) = loops_of(body, &Assume::default());
        assert_eq!(l[0].trips, Estimate::Exact(5), "{:?}", l[0]);
    }

    #[test]
    fn forward_branches_in_a_body_are_counted() {
        let body = COUNTED.replace(
            "{ %s12_s2 = sadd.s32 1, %s11_s2 }",
            "{ %s12_s2 = sadd.s32 1, %s11_s2  ;;  %16 = sbr.rel (%p13_p0) target = $region7 }",
        );
        let text = format!("{HEAD}{body}");
        let Ok(LloFile::Bundles(p)) = parse_llo("d/llo/1-k.1-03-final_bundles.txt", &text) else { panic!("parses") };
        let loops = llo_loops(&p.module, "k.1", &Assume::default());
        assert_eq!(branches_in_loops(&p.module, &loops), 1, "the back edge is not one");
        let text = format!("{HEAD}{COUNTED}");
        let Ok(LloFile::Bundles(p)) = parse_llo("d/llo/1-k.1-03-final_bundles.txt", &text) else { panic!("parses") };
        assert_eq!(branches_in_loops(&p.module, &llo_loops(&p.module, "k.1", &Assume::default())), 0);
    }

    #[test]
    fn counting_finds_the_first_exit() {
        assert_eq!(count("lt", |i| Some(i + 1 < 1_000_000)), Ok(1_000_000));
        assert_eq!(count("gt", |i| Some(100 - 5 * i > 0)), Ok(21), "100, 95, ..., 0: the test at 0 ends it");
        assert_eq!(count("ne", |i| Some(2 * i + 2 != 6)), Ok(3));
        assert_eq!(count("lt", |_| Some(false)), Ok(1), "the body runs once before the first test");
        assert!(count("lt", |_| Some(true)).is_err(), "a test that never ends the loop");
        assert!(count("ne", |_| Some(true)).is_err());
    }

    #[test]
    fn nested_loops_multiply() {
        let body = "   0x1   :  { %s10_s1 = smov 0 }
   0x2 LB: > { %s11_s2 = sphi %s10_s1, %s12_s2 } /* Start region 5 */
   0x3   : > { %s30_s4 = smov 0 }
   0x4 LB: >> { %s31_s5 = sphi %s30_s4, %s32_s5 } /* Start region 9 */
   0x5   : >> { %s32_s5 = sadd.s32 2, %s31_s5 }
   0x6   : >> { %p33_p1 = scmp.lt.s32.totalorder %s32_s5, 8 }
   0x7   : >> { %34 = sbr.rel (%p33_p1) target = $region9 }
   0x8   : > { %s12_s2 = sadd.s32 1, %s11_s2 }
   0x9   : > { %p13_p0 = scmp.ge.s32.totalorder %s12_s2, 3 /* loop exit test */ }
   0xa   : > { %14 = sbr.rel (!%p13_p0) target = $region5 }
";
        let (l, dynamic) = loops_of(body, &Assume::default());
        let t: Vec<_> = l.iter().map(|x| (x.level, x.trips.clone())).collect();
        assert_eq!(t, [(1, Estimate::Exact(3)), (2, Estimate::Exact(4))]);
        // bundles 0, 1 once; 2, 3, 8, 9, 10 three times; 4..7 twelve times
        assert_eq!(dynamic, Estimate::Exact(2 + 5 * 3 + 4 * 12));
    }
}
