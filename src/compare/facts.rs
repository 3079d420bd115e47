//! What the table says about each kernel: the performance model's facts ([`crate::perf::KernelFacts`]) as short
//! labelled cells, and the compilation's predicted time. Rows marked `detail` are left out of the terminal table
//! (which must fit a screen) and kept in every other format.

use super::kernels::{KernelView, LoopName};
use super::{Cell, TimeSplit, Tone};
use crate::lint::Compilation;
use crate::perf::{timeline, CompilationFacts, Estimate, Footprint, KernelFacts, MxuMode};

/// One view per kernel the model describes, in its order, with the timeline of its LLO program's steady state.
pub fn kernels(c: &Compilation<'_>, facts: &CompilationFacts) -> Vec<KernelView> {
    facts.kernels.iter().map(|k| view(c, k)).collect()
}

/// The compilation's predicted time, upper bounds when a count is a range; `None` when the model has none. With
/// the whole program (`facts.program`): its time, the kernels' terms inside it, and what XLA adds around them
/// (its own programs, the waits for its async copies, the top-level program); without it (or when an instruction
/// of the program has no time), the kernels' terms summed (they run one after the other).
pub fn time(facts: &CompilationFacts) -> Option<TimeSplit> {
    let us = 1e-6;
    let whole = facts.program.as_ref().filter(|p| p.predicted_us.is_some());
    let mut t = TimeSplit::default();
    for k in &facts.kernels {
        let f = &k.time;
        // inside a whole program the launch overhead is paid once
        let overhead = if whole.is_some() { 0.0 } else { f.overhead_us.unwrap_or(0.0) };
        t = t.add(&TimeSplit {
            overhead: overhead * us,
            compute: f.compute_us?.max.max(f.mxu_us.map_or(0.0, |m| m.max)) * us,
            memory: f.memory_us?.max * us,
            transfer: f.transfer_us.map_or(0.0, |t| t.max * us),
            latency: f.latency_us.map_or(0.0, |t| t.max * us),
            exposed: f.exposed_us.map_or(0.0, |t| t.max * us),
            xla: 0.0,
            predicted: f.predicted_us?.max * us,
        });
    }
    match whole {
        Some(p) => {
            let max = |i: Option<crate::perf::Interval>| i.map_or(0.0, |i| i.max);
            t.overhead = p.overhead_us.unwrap_or(0.0) * us;
            t.xla = (max(p.xla_us) + max(p.copy_waits_us) + max(p.orchestration_us)) * us;
            t.predicted = p.predicted_us?.max * us;
            Some(t)
        }
        None if facts.kernels.is_empty() => None,
        None => Some(t),
    }
}

/// Why a compilation has no predicted time, in one line: its whole program's missing instructions grouped by
/// cause with the first names of each (`353 instructions without an LLO program in the dumps (%fusion.347,
/// %custom-call.168, …)`), else its kernels' first reason. `None` when the facts say nothing.
pub fn why_untimed(facts: &CompilationFacts) -> Option<String> {
    if let Some(p) = facts.program.as_ref().filter(|p| p.predicted_us.is_none() && !p.unknown.is_empty()) {
        // "%name: reason": grouped by reason, the register names of a run-time loop bound left out
        let mut groups: Vec<(String, Vec<&str>)> = Vec::new();
        for u in &p.unknown {
            let (name, reason) = u.split_once(": ").map_or(("", u.as_str()), |(n, r)| (n, r));
            let cause = if reason.contains("read at run time") || reason.contains("counter is not") {
                "a loop whose trip count the LLO reads at run time".to_string()
            } else if reason == "no LLO program" {
                "no LLO program in the dumps".to_string()
            } else {
                reason.to_string()
            };
            match groups.iter_mut().find(|g| g.0 == cause) {
                Some(g) => g.1.push(name),
                None => groups.push((cause, vec![name])),
            }
        }
        let parts: Vec<String> = groups
            .iter()
            .map(|(cause, names)| {
                let shown: Vec<&str> = names.iter().copied().filter(|n| !n.is_empty()).take(3).collect();
                let more = if names.len() > shown.len() { ", …" } else { "" };
                let of = if shown.is_empty() { String::new() } else { format!(" ({}{more})", shown.join(", ")) };
                match names.len() {
                    1 => format!("1 instruction: {cause}{of}"),
                    n => format!("{n} instructions: {cause}{of}"),
                }
            })
            .collect();
        return Some(format!("the whole program has {}", parts.join("; ")));
    }
    facts.kernels.iter().find_map(|k| k.time.unknown.first().map(|u| format!("kernel `{}`: {u}", k.name)))
}

fn view(c: &Compilation<'_>, k: &KernelFacts) -> KernelView {
    let mut v = KernelView { name: k.name.clone(), ..KernelView::default() };
    v.detail("kernel", "grid", Cell::text(grid(&k.grid)));
    matmul(&mut v, k);
    memory(&mut v, k);
    v.fact("DMA", "starts/step", estimate(&k.dma_starts_per_step, plain));
    v.fact("DMA", "waits/step", estimate(&k.dma_waits_per_step, plain));
    let slots: Vec<u64> =
        k.buffers.iter().filter(|b| b.memory_space.as_deref() == Some("vmem")).map(|b| b.buffers).collect();
    v.detail("DMA", "VMEM buffers", Cell::text(buffer_slots(&slots)));
    v.fact("DMA", "overlap", overlap(c, k));
    bundles(&mut v, k);
    time_rows(&mut v, k);
    v.loops = loop_names(c, k);
    v.timeline = k
        .llo
        .as_ref()
        .and_then(|l| c.units.iter().find(|u| u.path == l.path).and_then(|u| timeline::steady_state(&u.module)));
    v
}

fn matmul(v: &mut KernelView, k: &KernelFacts) {
    let mut types: Vec<String> = Vec::new();
    for m in &k.matmuls {
        let name = |d: Option<crate::ir::DType>| d.map(|d| d.name()).unwrap_or("?");
        let t = format!("{}·{}→{}", name(m.lhs), name(m.rhs), name(m.acc));
        if !types.contains(&t) {
            types.push(t);
        }
    }
    v.detail("matmul", "operands", Cell::text(if types.is_empty() { "—".into() } else { types.join(" ") }));
    let formats: Vec<String> = k.mxu.formats.iter().map(|f| format!("{}×{}", f.format, f.count)).collect();
    let requested = k.mxu.requested.map(|n| n.name()).unwrap_or("narrow types");
    let (text, tone, note) = match k.mxu.mode {
        MxuMode::Native => ("native", Tone::Good, format!("{requested} multiplied in its own format")),
        MxuMode::Widened => {
            ("widened", Tone::Warn, format!("{requested} widened by the compiler on the way into the MXU"))
        }
        MxuMode::Upcast => ("upcast", Tone::Bad, "the kernel converts its narrow data before the matmul".into()),
        MxuMode::Wide => ("wide", Tone::Plain, "no narrow type asked for".into()),
        MxuMode::None => ("no matmul", Tone::Plain, String::new()),
        MxuMode::Unknown => ("unknown", Tone::Warn, "neither the LLO nor the hardware table says".into()),
    };
    v.fact("matmul", "MXU", Cell::text(text).tone(tone).note_opt((!note.is_empty()).then_some(note)));
    v.detail("matmul", "MXU formats", Cell::text(if formats.is_empty() { "—".into() } else { formats.join(" ") }));
    v.fact("matmul", "FLOPs", estimate(&k.flops, si));
}

fn memory(v: &mut KernelView, k: &KernelFacts) {
    v.fact("memory", "HBM bytes", estimate(&k.hbm_bytes, bytes));
    v.fact("memory", "VMEM", footprint(&k.vmem));
    v.detail("memory", "SMEM", footprint(&k.smem));
}

fn bundles(v: &mut KernelView, k: &KernelFacts) {
    let Some(l) = &k.llo else {
        v.fact("bundles", "dynamic", Cell::text("no LLO"));
        return;
    };
    v.detail("bundles", "static", Cell::number(l.static_bundles.to_string(), l.static_bundles as f64));
    v.fact("bundles", "dynamic", estimate(&l.dynamic_bundles, si));
    let trips: Vec<String> = l.loops.iter().map(|lp| trips_text(&lp.trips)).collect();
    v.detail("bundles", LOOP_TRIPS, Cell::text(if trips.is_empty() { "no loop".into() } else { trips.join(" ") }));
    if !k.cross_checks.is_empty() {
        let ok = k.cross_checks.iter().all(|x| x.agrees);
        let text = if ok { "agree".to_string() } else { "differ".to_string() };
        let note = k
            .cross_checks
            .iter()
            .map(|x| {
                format!("{}: {} vs {} {}", x.llo_loop, trips_text(&x.llo_trips), x.mosaic, trips_text(&x.mosaic_trips))
            })
            .collect::<Vec<_>>()
            .join("; ");
        v.detail("bundles", "vs Mosaic", Cell::text(text).tone(if ok { Tone::Good } else { Tone::Warn }).note(note));
    }
    for s in &l.slots {
        let Some(u) = s.utilization else { continue };
        let cell = Cell::number(format!("{:.0}%", u * 100.0), u);
        if s.unit == "MXU" {
            v.fact("slots", &s.unit, cell);
        } else if s.static_busy > 0 {
            v.detail("slots", &s.unit, cell);
        }
    }
}

/// The label of the row of LLO loop trip counts (the HTML page shows it with the loops' names).
pub const LOOP_TRIPS: &str = "loop trips";

/// The kernel's LLO loops in program order, each named through the performance model's cross-checks: the one
/// checked against the grid is the `pallas_call`'s grid, one checked against an `scf.for` is that loop, at the
/// Python line jax recorded for it (the engine's `python_source`: the op's own location, or the same op decoded
/// from the HLO's custom call).
fn loop_names(c: &Compilation<'_>, k: &KernelFacts) -> Vec<LoopName> {
    let Some(l) = &k.llo else { return Vec::new() };
    let unit = c.canonical_kernel_unit(&k.name).map(|u| &c.units[u]);
    let at = |op: Option<crate::ir::OpId>| {
        let u = unit?;
        let p = crate::rules::engine::python_source(c, u, op)?;
        let file = p.file.rsplit(['/', '\\']).next().unwrap_or(&p.file).to_string();
        Some((format!("{file}:{}", p.line), format!("{}:{}", p.file, p.line)))
    };
    let fors = unit.map(|u| for_ops(&u.module, &k.name)).unwrap_or_default();
    l.loops
        .iter()
        .map(|lp| {
            let region = lp.name.rsplit('/').next().unwrap_or(&lp.name).to_string();
            let mut name = LoopName { region, level: lp.level, trips: trips_text(&lp.trips), ..LoopName::default() };
            let Some(x) = k.cross_checks.iter().find(|x| x.llo_loop == lp.name) else { return name };
            let (label, python) = if x.mosaic == "the grid" {
                match at(None) {
                    Some((short, long)) => (format!("grid of {short}"), Some(long)),
                    None => ("grid".to_string(), None),
                }
            } else {
                match fors.iter().find(|(n, _)| *n == x.mosaic).and_then(|(_, op)| at(Some(*op))) {
                    Some((short, long)) => (format!("loop at {short}"), Some(long)),
                    None => (format!("scf.for {}", x.mosaic), None),
                }
            };
            name.name = Some(label);
            name.python = python;
            name.note = match (x.extra, x.mosaic_trips.exact()) {
                (Some(e), Some(n)) if e > 0 && x.mosaic == "the grid" => {
                    Some(format!("{n} grid steps + {e} pipeline stage(s) libtpu adds"))
                }
                (Some(e), Some(n)) if e > 0 => Some(format!("{n} iterations + {e} libtpu adds")),
                _ => None,
            };
            name
        })
        .collect()
}

/// The kernel's `scf.for` ops by the name the performance model gives them (`<kernel>/<induction variable>`,
/// later ones with the same variable name numbered `#2`, ...), in program order.
fn for_ops(m: &crate::ir::Module<'_>, kernel: &str) -> Vec<(String, crate::ir::OpId)> {
    let Some(k) = crate::semantic::kernel::named(m, kernel) else {
        return Vec::new();
    };
    crate::perf::loop_names(m, &k).into_iter().zip(k.loops.iter().map(|l| l.op)).collect()
}

fn time_rows(v: &mut KernelView, k: &KernelFacts) {
    let t = &k.time;
    let note = (!t.unknown.is_empty()).then(|| t.unknown.join("; "));
    let us = |i: Option<crate::perf::Interval>| match i {
        Some(i) => interval(i.min, i.max, |x| super::seconds(x * 1e-6)).with_value(i.max * 1e-6),
        None => Cell::text("unknown").note_opt(note.clone()),
    };
    v.fact("time", "predicted", us(t.predicted_us));
    v.detail("time", "compute", us(t.compute_us));
    v.detail("time", "MXU", us(t.mxu_us));
    v.detail("time", "memory", us(t.memory_us));
    v.detail("time", "DMA transfers", us(t.transfer_us));
    v.detail("time", "exposed copies", us(t.exposed_us));
    let bound = t.bound.map(|b| b.name().to_string()).unwrap_or_else(|| "unknown".into());
    v.fact("time", "bound", Cell::text(bound));
    let rate = |i: Option<crate::perf::Interval>| match i {
        Some(i) => {
            interval(i.min, i.max, |x| if x >= 100.0 { format!("{x:.0}") } else { format!("{x:.1}") }).with_value(i.max)
        }
        None => Cell::text("unknown"),
    };
    v.fact("time", "TFLOPS", rate(t.achieved_tflops));
    let peak = match k.peak_fraction {
        Some(f) => interval(f.min, f.max, |x| format!("{:.0}%", x * 100.0))
            .with_value(f.max)
            .note_opt(k.peak_tflops.map(|p| format!("of {p:.0} TFLOPS per TensorCore"))),
        None => Cell::text("unknown"),
    };
    v.fact("time", "of MXU peak", peak);
    v.fact("time", "GB/s", rate(t.achieved_gbps));
}

fn interval(min: f64, max: f64, f: impl Fn(f64) -> String) -> Cell {
    let (a, b) = (f(min), f(max));
    Cell::text(if a == b { a } else { format!("{a}–{b}") })
}

/// An estimate's cell: exact (the number), a range (`a–b`, valued at its upper bound), unknown (with the reason).
pub fn estimate(e: &Estimate, f: fn(u64) -> String) -> Cell {
    match e {
        Estimate::Exact(v) => Cell::number(f(*v), *v as f64),
        Estimate::Range { min, max } => Cell::number(range_text(&f(*min), &f(*max)), *max as f64),
        Estimate::Unknown(why) => Cell::text("unknown").note(why.clone()),
    }
}

/// `1.50–3.50 MiB` rather than `1.50 MiB–3.50 MiB`.
fn range_text(a: &str, b: &str) -> String {
    match (a.rsplit_once(' '), b.rsplit_once(' ')) {
        (Some((x, u)), Some((y, w))) if u == w => format!("{x}–{y} {u}"),
        _ => format!("{a}–{b}"),
    }
}

fn footprint(fp: &Footprint) -> Cell {
    let c = estimate(&fp.bytes, bytes);
    match fp.fraction {
        Some(x) => {
            let tone = if x > 1.0 {
                Tone::Bad
            } else if x > 0.75 {
                Tone::Warn
            } else {
                Tone::Plain
            };
            let cap = fp.capacity.map(bytes).unwrap_or_default();
            let pct = if x > 0.0 && x < 0.01 { "<1%".to_string() } else { format!("{:.0}%", x * 100.0) };
            Cell { text: format!("{} {pct}", c.text), ..c }.tone(tone).note(format!("of {cap}"))
        }
        None => c,
    }
}

fn trips_text(e: &Estimate) -> String {
    match e {
        Estimate::Exact(v) => v.to_string(),
        Estimate::Range { min, max } => format!("{min}–{max}"),
        Estimate::Unknown(_) => "?".into(),
    }
}

fn grid(g: &[i64]) -> String {
    if g.is_empty() {
        "—".into()
    } else {
        g.iter().map(i64::to_string).collect::<Vec<_>>().join("×")
    }
}

/// `2` when every VMEM buffer has two slots, `1–2` when they differ.
fn buffer_slots(s: &[u64]) -> String {
    match (s.iter().min(), s.iter().max()) {
        (Some(a), Some(b)) if a == b => a.to_string(),
        (Some(a), Some(b)) => format!("{a}–{b}"),
        _ => "—".into(),
    }
}

fn plain(v: u64) -> String {
    v.to_string()
}

/// `268 M`, `1.07 G`: three significant digits with an SI prefix.
pub fn si(v: u64) -> String {
    let x = v as f64;
    for (scale, p) in [(1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")] {
        if x >= scale {
            return three(x / scale, p);
        }
    }
    v.to_string()
}

/// `1.50 MiB`: binary prefixes, as memory capacities are given.
pub fn bytes(v: u64) -> String {
    let x = v as f64;
    for (scale, p) in [(1u64 << 40, "TiB"), (1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")] {
        if x >= scale as f64 {
            return three(x / scale as f64, p);
        }
    }
    format!("{v} B")
}

fn three(x: f64, unit: &str) -> String {
    if x >= 100.0 {
        format!("{x:.0} {unit}")
    } else if x >= 10.0 {
        format!("{x:.1} {unit}")
    } else {
        format!("{x:.2} {unit}")
    }
}

/// Whether copies overlap compute in the steady state, as the analyses decide it for the kernel as written: manual
/// DMAs by the double-buffering simulation (dma-double-buffering), windows by Pallas's pipeline (auto-pipelining:
/// each window double-buffered across grid steps). The rules' own verdicts, read per kernel; undecided stays
/// undecided.
fn overlap(c: &Compilation<'_>, k: &KernelFacts) -> Cell {
    use crate::analysis::{dma_pipeline, pipelining, Options, Verdict};
    let Some(unit) = c.canonical_kernel_unit(&k.name) else { return Cell::text("—").note("no Mosaic kernel") };
    let m = &c.units[unit].module;
    let own = |h: &crate::analysis::Hit| match h.at {
        crate::analysis::At::Op { op, .. } => m.func(m.func_of(op)).name == k.name,
        crate::analysis::At::Span { .. } => true,
    };
    let manual = !k.dmas.is_empty();
    let hits: Vec<_> = if manual {
        (dma_pipeline::ANALYSIS.run)(c, unit, &Options::new())
    } else {
        (pipelining::ANALYSIS.run)(c, unit, &Options::new())
    };
    let hits: Vec<_> = hits.into_iter().filter(|h| own(h) && h.verdict != Verdict::Explored).collect();
    let kind = |h: &crate::analysis::Hit| h.captures.get("kind").cloned().unwrap_or_default();
    if let Some(h) = hits.iter().find(|h| h.verdict == Verdict::Finding) {
        let detail = h.captures.get("detail").cloned().unwrap_or_default();
        // the cause in the author's words (`no: never-waited`), else the analysis's kind
        let what = crate::analysis::dma_kind::DmaFailure::of_hit(h).map(|f| f.label().to_string()).unwrap_or(kind(h));
        return Cell::text(format!("no: {what}")).tone(Tone::Bad).note(detail);
    }
    if let Some(h) = hits.iter().find(|h| h.verdict == Verdict::Inconclusive) {
        return Cell::text("inconclusive").tone(Tone::Warn).note_opt(h.captures.get("detail").cloned());
    }
    match (manual, k.grid_steps.max()) {
        (true, _) => {
            Cell::text("yes").tone(Tone::Good).note("manual DMAs double-buffered: every copy overlaps compute")
        }
        (false, Some(n)) if n > 1 => {
            Cell::text("yes").tone(Tone::Good).note("Pallas pipeline: each window double-buffered across grid steps")
        }
        (false, _) => Cell::text("—").note("one grid step: nothing to overlap"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_untimed_program_says_why_grouped_by_cause() {
        let unknown = [
            "%fusion.347: no LLO program",
            "%custom-call.168: no LLO program",
            "%fusion.3: no LLO program",
            "%fusion.9: no LLO program",
            "%gather_fusion: dynamic bundles: `%s1 >= %s2`: the bound is read at run time",
        ];
        let program = crate::perf::program::ProgramFacts {
            hlo: "m.hlo".into(),
            ops: Vec::new(),
            overhead_us: Some(6.0),
            orchestration_us: None,
            kernels_us: None,
            xla_us: None,
            copy_waits_us: None,
            predicted_us: None,
            repeated_us: None,
            unknown: unknown.iter().map(|u| u.to_string()).collect(),
        };
        let facts = CompilationFacts {
            dir: "t@v5e".into(),
            target: Some("v5e".into()),
            chip: None,
            hlo_io_bytes: Estimate::Exact(0),
            kernels: Vec::new(),
            flops: Estimate::Exact(0),
            hbm_bytes: Estimate::Exact(0),
            program: Some(program),
            predicted_us: None,
        };
        assert_eq!(
            why_untimed(&facts).as_deref(),
            Some(
                "the whole program has 4 instructions: no LLO program in the dumps (%fusion.347, %custom-call.168, \
                 %fusion.3, …); 1 instruction: a loop whose trip count the LLO reads at run time (%gather_fusion)"
            )
        );
        let timed = CompilationFacts { program: None, ..facts };
        assert_eq!(why_untimed(&timed), None);
    }

    #[test]
    fn numbers_read_short() {
        assert_eq!(si(268_435_456), "268 M");
        assert_eq!(si(999), "999");
        assert_eq!(si(1_500), "1.50 k");
        assert_eq!(bytes(1_572_864), "1.50 MiB");
        assert_eq!(bytes(512), "512 B");
        assert_eq!(buffer_slots(&[2, 2]), "2");
        assert_eq!(buffer_slots(&[1, 2]), "1–2");
        assert_eq!(grid(&[4, 4]), "4×4");
        assert_eq!(range_text("1.50 MiB", "3.50 MiB"), "1.50–3.50 MiB");
        assert_eq!(range_text("512 B", "1.00 KiB"), "512 B–1.00 KiB");
    }

    #[test]
    fn estimates_keep_their_kind() {
        assert_eq!(estimate(&Estimate::Exact(2048), bytes), Cell::number("2.00 KiB", 2048.0));
        let r = estimate(&Estimate::range(1, 3), plain);
        assert_eq!((r.text.as_str(), r.value), ("1–3", Some(3.0)));
        let u = estimate(&Estimate::unknown("bound read at run time"), plain);
        assert_eq!((u.text.as_str(), u.note.as_deref()), ("unknown", Some("bound read at run time")));
    }
}
