//! The whole program: a time for every computation the compilation runs, in the order XLA scheduled them
//! (docs/performance-model.md, "Whole programs").
//!
//! The optimized HLO's entry computation is the schedule (`is_scheduled=true`: instruction order is execution
//! order). Each instruction that does work is an LLO program of its own name (`fusion`, `copy.3`, a kernel's
//! `dsd.1`), called in turn by libtpu's top-level program (`TLP`); an async copy (`copy-start` … `copy-done`) is
//! a DMA the top-level program issues at the start and waits for at the done, overlapping the programs scheduled
//! between. The time is one launch overhead, the top-level program's own bundles, every program in turn, and the
//! part of each async copy those programs do not hide.
//!
//! A Pallas kernel's time is its own prediction (`KernelFacts::time`) without the launch overhead; the operands
//! XLA placed on chip before the call are not in it: their copies are charged where the schedule runs them. An XLA
//! program's time reuses the kernel's terms: its LLO bundles at the clock, its matmuls' FLOPs at the MXU peak,
//! and its HBM bytes as DMA rounds (one DMA latency each) plus bytes at the bandwidth, the first and last round
//! exposed.

use super::estimate::{Assume, Estimate};
use super::time::{self, Bound, Interval, TimeFacts, Transfers};
use super::{llo_facts, mxu_time, KernelFacts, MxuFacts, MxuFormat, MxuMode, SPARSECORE_UNTIMED};
use crate::analysis::crosslink;
use crate::ir::{Dim, FuncId, Layer, Module, OpId, Shape, Value};
use crate::lint::compilation::{Compilation, Parsed};
use crate::semantic::op::{is_convolution, is_dot_general};
use crate::semantic::tpu::Chip;
use serde::Serialize;

/// What one scheduled instruction is, for the time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum OpKind {
    /// A Pallas kernel (`tpu_custom_call`).
    Kernel,
    /// An XLA program: a fusion, a copy, a collective, any instruction with an LLO program of its own.
    Xla,
    /// A `copy-start` (or an `async-start` of a slice without a program of its own): a DMA the top-level
    /// program issues; its done waits for it.
    AsyncCopy,
    /// An async call of a SparseCore program (`async-start` on the `sparsecore` execution thread): the TensorCore
    /// starts it and waits at its done; nothing times the program itself (`super::SPARSECORE_UNTIMED`).
    SparseCore,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OpTime {
    /// The HLO instruction (`fusion`, `copy-start`, `dsd.1`).
    pub name: String,
    pub opcode: String,
    pub kind: OpKind,
    /// How many times the schedule runs it (inside a `while` with a known trip count: that count).
    pub runs: u64,
    /// When it starts, from the program's start (the launch overhead and the top-level program's bundles
    /// excluded), for one run.
    pub start_us: Option<Interval>,
    /// Its time per run (an async copy: its transfer, issue to completion).
    pub us: Option<Interval>,
    /// For a `copy-start`: how long its `copy-done` waits, the part of the transfer nothing hid.
    pub waited_us: Option<Interval>,
    /// HBM bytes it moves (an XLA program: its HBM operands and result; a copy: the bytes copied).
    pub hbm_bytes: Estimate,
    pub flops: Estimate,
    pub bound: Option<Bound>,
    /// Why the time is unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unknown: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ProgramFacts {
    /// The HLO dump whose schedule was followed.
    pub hlo: String,
    pub ops: Vec<OpTime>,
    /// Once per launch of the compiled program (the hardware table's `overhead_us`).
    pub overhead_us: Option<f64>,
    /// The top-level program's own bundles at the clock (argument handling, DMA issue and waits, calls).
    pub orchestration_us: Option<Interval>,
    /// The Pallas kernels, in turn.
    pub kernels_us: Option<Interval>,
    /// XLA's own programs (fusions, copies, collectives), in turn.
    pub xla_us: Option<Interval>,
    /// What the async copies add: the waits at their `copy-done`s.
    pub copy_waits_us: Option<Interval>,
    pub predicted_us: Option<Interval>,
    /// A launch that repeats the previous one with the same operands, as timing loops do: a cross-program
    /// prefetch finds its operand still on chip and copies nothing (the top-level program reads a flag and sizes
    /// the DMA 0). Absent when it is `predicted_us` (the program has no cross-program prefetch).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repeated_us: Option<Interval>,
    /// Why the prediction is missing.
    pub unknown: Vec<String>,
}

/// Instructions that do no work of their own on the device: names, views and the ends of async pairs.
fn is_bookkeeping(opcode: &str) -> bool {
    matches!(
        opcode,
        "parameter"
            | "constant"
            | "get-tuple-element"
            | "tuple"
            | "bitcast"
            | "after-all"
            | "add-dependency"
            | "opt-barrier"
            | "partition-id"
            | "replica-id"
            | "domain"
    ) || opcode.ends_with("-done")
        || opcode.ends_with("-update")
}

/// Does `async-start` `o` call a computation XLA runs on a SparseCore (`async_execution_thread="sparsecore"`:
/// a Pallas SparseCore kernel, an offloaded gather)?
fn is_sparsecore_call(m: &Module<'_>, o: OpId) -> bool {
    m.op(o).attr("async_execution_thread").and_then(|v| v.string()).as_deref() == Some("sparsecore")
}

/// The custom calls with which the top-level program prepares an async call (`PrepareAsyncCallStart` and
/// `PrepareAsyncCallDone`, before a SparseCore call's `async-start`): part of the call, no program of their own.
fn is_async_call_handshake(m: &Module<'_>, o: OpId) -> bool {
    matches!(m.custom_call_target(o).as_deref(), Some("PrepareAsyncCallStart" | "PrepareAsyncCallDone"))
}

/// The optimized HLO the compilation's schedule is read from: the scheduled dump, not a kernel's host.
pub(crate) fn best_hlo<'u, 'p>(c: &'u Compilation<'p>) -> Option<&'u crate::lint::compilation::Unit<'p>> {
    c.units_of(Layer::Hlo)
        .filter(|(_, u)| u.host.is_none())
        .min_by_key(|(i, u)| (!u.module.scheduled, u.path.contains("/llo/"), *i))
        .map(|(_, u)| u)
}

/// The whole program's time; `None` when the compilation has no scheduled HLO or no LLO program at all (a
/// folder of one kernel's dumps: its kernels' times are then the answer).
pub fn program_facts(
    c: &Compilation<'_>,
    files: &[Parsed<'_>],
    chip: Option<&Chip>,
    assume: &Assume,
    kernels: &[KernelFacts],
) -> Option<ProgramFacts> {
    let hlo = best_hlo(c).filter(|u| u.module.scheduled)?;
    // a folder of one kernel's dumps without LLO programs: the kernels' times are the answer
    c.units_of(Layer::Llo).next()?;
    let m = &hlo.module;
    let entry = m.entry?;
    // computation → its LLO unit, the first of each name (`crosslink::llo_units`), read once: a program of a
    // thousand instructions asks for each
    let mut programs = std::collections::HashMap::new();
    for (i, u) in c.units_of(Layer::Llo) {
        if let Some(name) = crosslink::llo_computation(u) {
            programs.entry(name).or_insert(i);
        }
    }
    let mut w = Walk { c, files, chip, assume, kernels, m, programs, ops: Vec::new(), unknown: Vec::new() };
    let mut clock = Clock::default();
    w.schedule(entry, 1, &mut clock, 0);
    let overhead = chip.and_then(|c| c.overhead_us);
    let orchestration = w.programs.get("TLP").and_then(|&i| {
        let u = &c.units[i];
        let l = llo_facts(u.path, &u.module, files, assume);
        let ghz = chip?.clock_ghz?;
        l.dynamic_bundles.bounds().map(|(a, b)| Interval { min: a as f64 / (ghz * 1e3), max: b as f64 / (ghz * 1e3) })
    });
    let sum = |k: OpKind| {
        w.ops.iter().filter(|o| o.kind == k).try_fold(Interval::point(0.0), |a, o| Some(a.plus(o.us?.times(o.runs))))
    };
    let (kernels_us, xla_us) = (sum(OpKind::Kernel), sum(OpKind::Xla));
    let copy_waits_us = w
        .ops
        .iter()
        .filter(|o| o.kind == OpKind::AsyncCopy)
        .try_fold(Interval::point(0.0), |a, o| Some(a.plus(o.waited_us?.times(o.runs))));
    if chip.is_none() {
        w.unknown.push("the target is unknown or not in the hardware table".into());
    }
    let launch = |t: Interval| match (clock.unknown, w.unknown.is_empty(), overhead) {
        (false, true, Some(o)) => Some(t.plus(Interval::point(o)).plus(orchestration.unwrap_or(Interval::point(0.0)))),
        _ => None,
    };
    let predicted_us = launch(clock.t);
    let repeated_us = launch(clock.repeat).filter(|r| Some(*r) != predicted_us);
    Some(ProgramFacts {
        hlo: hlo.describe(),
        ops: w.ops,
        overhead_us: overhead,
        orchestration_us: orchestration,
        kernels_us,
        xla_us,
        copy_waits_us,
        predicted_us,
        repeated_us,
        unknown: w.unknown,
    })
}

/// Time along the schedule, and the async copies in flight. `repeat` is the same schedule's time in a launch that
/// repeats the previous one with the same operands (`ProgramFacts::repeated_us`).
#[derive(Default)]
struct Clock {
    t: Interval,
    repeat: Interval,
    in_flight: Vec<InFlight>,
    unknown: bool,
}

/// An async copy started and not yet waited for: its `copy-start`, when it completes (in either launch) and its
/// row in `Walk::ops`.
struct InFlight {
    start: String,
    done: Option<Interval>,
    done_repeat: Option<Interval>,
    at: usize,
}

/// The later of two times, bound by bound: a wait ends when the awaited event has happened.
fn later(a: Interval, b: Interval) -> Interval {
    Interval { min: a.min.max(b.min), max: a.max.max(b.max) }
}

struct Walk<'w, 'c, 'p> {
    c: &'w Compilation<'p>,
    files: &'w [Parsed<'p>],
    chip: Option<&'w Chip>,
    assume: &'w Assume,
    kernels: &'w [KernelFacts],
    m: &'w Module<'c>,
    programs: std::collections::HashMap<String, usize>,
    ops: Vec<OpTime>,
    unknown: Vec<String>,
}

/// How deep `while` and `call` bodies are followed.
const MAX_DEPTH: usize = 8;

impl Walk<'_, '_, '_> {
    /// Follows the computation `f` in schedule order, `runs` times per launch.
    fn schedule(&mut self, f: FuncId, runs: u64, clock: &mut Clock, depth: usize) {
        let m = self.m;
        for &o in m.body_ops(f) {
            let op = m.op(o);
            match op.opcode {
                "copy-start" => self.copy_start(o, 0, runs, clock),
                // a SparseCore program: not a DMA of the top-level program, whatever its result's size
                "async-start" if is_sparsecore_call(m, o) => self.sparsecore_call(o, runs),
                // the top-level program's handshake around such a call: no program of its own
                "custom-call" if is_async_call_handshake(m, o) => {}
                // an async slice or copy libtpu runs as a DMA of the top-level program (no program of its own):
                // ((operands), result, context)
                "async-start" if self.program_of(op.name).is_none() => self.copy_start(o, 1, runs, clock),
                "copy-done" | "async-done" => {
                    let start = m.operand_ops(o).next().map(|s| m.op(s).name);
                    if let Some(pos) = clock.in_flight.iter().position(|f| Some(f.start.as_str()) == start) {
                        let f = clock.in_flight.remove(pos);
                        match (f.done, f.done_repeat) {
                            (Some(d), Some(r)) => {
                                let waited = Interval {
                                    min: (d.min - clock.t.min).max(0.0),
                                    max: (d.max - clock.t.max).max(0.0),
                                };
                                clock.t = later(clock.t, d);
                                clock.repeat = later(clock.repeat, r);
                                self.ops[f.at].waited_us = Some(waited);
                            }
                            _ => clock.unknown = true,
                        }
                    }
                }
                "while" if depth < MAX_DEPTH && self.program_of(op.name).is_none() => {
                    let trips = known_trip_count(m, o);
                    let body = op.calls.iter().find(|c| c.role == "body").map(|c| c.func);
                    match (trips, body) {
                        (Some(n), Some(b)) => {
                            let mut inner = Clock::default();
                            self.schedule(b, runs * n, &mut inner, depth + 1);
                            clock.unknown |= inner.unknown;
                            clock.t = clock.t.plus(inner.t.times(n));
                            clock.repeat = clock.repeat.plus(inner.repeat.times(n));
                        }
                        _ => {
                            self.unknown.push(format!("%{}: a while loop without a known trip count", op.name));
                        }
                    }
                }
                "call" if depth < MAX_DEPTH && self.program_of(op.name).is_none() => {
                    if let Some(b) = op.calls.first().map(|c| c.func) {
                        self.schedule(b, runs, clock, depth + 1);
                    }
                }
                oc if is_bookkeeping(oc) => {}
                _ => self.program(o, runs, clock),
            }
        }
    }

    /// An async call of a SparseCore program: listed with the reason it has no time, which leaves the whole
    /// program without one (a lower bound from the TensorCore's side alone would read as the program's time).
    fn sparsecore_call(&mut self, o: OpId, runs: u64) {
        let op = self.m.op(o);
        let why = format!("%{}: {SPARSECORE_UNTIMED}", op.name);
        self.unknown.push(why.clone());
        self.ops.push(OpTime {
            name: op.name.to_string(),
            opcode: op.opcode.to_string(),
            kind: OpKind::SparseCore,
            runs,
            start_us: None,
            us: None,
            waited_us: None,
            hbm_bytes: Estimate::unknown("a SparseCore program"),
            flops: Estimate::Exact(0),
            bound: None,
            unknown: Some(why),
        });
    }

    /// The LLO unit of an instruction's own program.
    fn program_of(&self, name: &str) -> Option<usize> {
        self.programs.get(name).copied()
    }

    /// libtpu compiles one program per distinct computation and calls it for every instruction computing it
    /// (`copy` and `copy.1` of two equal reshapes both call `copy`'s program): the program of an instruction of
    /// the same computation with the same opcode, called computations, result and operand shapes.
    fn twin_program(&self, o: OpId) -> Option<usize> {
        let m = self.m;
        let me = m.op(o);
        let operand_shapes = |x: OpId| m.operand_ops(x).map(|d| m.op(d).shape()).collect::<Vec<_>>();
        let calls = |x: OpId| m.op(x).calls.iter().map(|c| c.func).collect::<Vec<_>>();
        m.body_ops(m.func_of(o))
            .iter()
            .copied()
            .filter(|&x| x != o)
            .filter(|&x| {
                let op = m.op(x);
                op.opcode == me.opcode
                    && op.shape() == me.shape()
                    && calls(x) == calls(o)
                    && operand_shapes(x) == operand_shapes(o)
            })
            .find_map(|x| self.program_of(m.op(x).name))
    }

    /// An async copy: the `dest`-th element of the start's tuple is what it writes (`copy-start`: (destination,
    /// source, sync flag); `async-start`: ((operands), result, context)).
    fn copy_start(&mut self, o: OpId, dest: usize, runs: u64, clock: &mut Clock) {
        let m = self.m;
        let op = m.op(o);
        let bytes = op
            .shape()
            .and_then(|s| s.tuple_elements().get(dest).map(shape_bytes))
            .unwrap_or_else(|| Estimate::unknown(format!("%{}: shape unknown", op.name)));
        // A cross-program prefetch is skipped at run time when the buffer is still on chip from the previous
        // launch (the top-level program reads a flag and copies 0 bytes): anything from nothing to the copy.
        let prefetch = op.attr("cross_program_prefetch_index").is_some();
        let bytes = if prefetch { bytes.up_to() } else { bytes };
        let us = self.chip.and_then(|c| copy_time(c, &bytes));
        clock.unknown |= us.is_none();
        // a repeated launch finds a cross-program prefetch's operand on chip: the DMA moves nothing
        let us_repeat = if prefetch { us.map(|_| Interval::point(0.0)) } else { us };
        clock.in_flight.push(InFlight {
            start: op.name.to_string(),
            done: us.map(|u| clock.t.plus(u)),
            done_repeat: us_repeat.map(|u| clock.repeat.plus(u)),
            at: self.ops.len(),
        });
        self.ops.push(OpTime {
            name: op.name.to_string(),
            opcode: op.opcode.to_string(),
            kind: OpKind::AsyncCopy,
            runs,
            start_us: Some(clock.t),
            us,
            waited_us: None,
            hbm_bytes: bytes,
            flops: Estimate::Exact(0),
            bound: None,
            unknown: None,
        });
    }

    fn program(&mut self, o: OpId, runs: u64, clock: &mut Clock) {
        let m = self.m;
        let op = m.op(o);
        let is_kernel = crate::parse::calls::is_tpu_custom_call(m, o);
        let cost = if is_kernel {
            let k = self.kernels.iter().find(|k| k.llo.as_ref().is_some_and(|l| l.computation == op.name));
            match k {
                Some(k) => Cost {
                    us: kernel_in_program(&k.time),
                    bound: k.time.bound,
                    hbm_bytes: k.hbm_bytes.clone(),
                    flops: k.flops.clone(),
                    why: k.time.unknown.first().cloned(),
                },
                None => Cost::unknown(format!("%{}: no kernel facts (its Mosaic or LLO dump is missing)", op.name)),
            }
        } else {
            match self.program_of(op.name).or_else(|| self.twin_program(o)) {
                Some(u) => self.xla_cost(o, u),
                None => Cost::unknown(format!("%{}: no LLO program", op.name)),
            }
        };
        let start = clock.t;
        match cost.us {
            Some(u) => {
                clock.t = clock.t.plus(u);
                clock.repeat = clock.repeat.plus(u);
            }
            None => {
                clock.unknown = true;
                self.unknown.push(cost.why.clone().unwrap_or_else(|| format!("%{}: no prediction", op.name)));
            }
        }
        self.ops.push(OpTime {
            name: op.name.to_string(),
            opcode: op.opcode.to_string(),
            kind: if is_kernel { OpKind::Kernel } else { OpKind::Xla },
            runs,
            start_us: Some(start),
            us: cost.us,
            waited_us: None,
            hbm_bytes: cost.hbm_bytes,
            flops: cost.flops,
            bound: cost.bound,
            unknown: cost.us.is_none().then_some(cost.why).flatten(),
        });
    }

    /// An XLA program's time from its LLO program (`unit`) and its HLO instruction `o`: the kernel's terms
    /// (`time::predict`) with HBM bytes from the instruction's operands and result in HBM, DMA rounds from the
    /// LLO's DMAs, FLOPs from the matmuls of its fused computation; without the launch overhead.
    fn xla_cost(&self, o: OpId, unit: usize) -> Cost {
        let u = &self.c.units[unit];
        let l = llo_facts(u.path, &u.module, self.files, self.assume);
        let hbm_bytes = hbm_io_bytes(self.m, o);
        let flops = flops_of(self.m, o);
        let formats: Vec<MxuFormat> = crate::analysis::data_format::llo_formats(&u.module)
            .iter()
            .map(|f| MxuFormat { format: f.format.clone(), count: f.count })
            .collect();
        let mxu = MxuFacts { mode: MxuMode::Wide, requested: None, formats };
        let peak = self.chip.and_then(|c| c.peak_tflops_per_core("bf16"));
        let mxu_us = mxu_time(&flops, peak, &mxu);
        let runs = super::trips::bundle_runs(l.static_bundles, &l.loops);
        let rounds = dma_rounds(&u.module, &runs);
        let transfers = xla_transfers(&hbm_bytes, &rounds);
        let issued = issued_bundles(&u.module, &l);
        let t = time::predict(self.chip, Some(&issued), &hbm_bytes, &flops, &transfers, mxu_us);
        Cost {
            us: without_overhead(&t),
            bound: t.bound,
            hbm_bytes,
            flops,
            why: t.unknown.first().map(|w| format!("%{}: {w}", self.m.op(o).name)),
        }
    }
}

/// The bundles an XLA program issues: each bundle times the trips of its loops, a software-pipelined loop's
/// extra iterations left out (`trips::pipeline_stages`): in them the pipeline's first or last stages run alone —
/// DMA issues and waits — and a forward branch skips the body's compute, as in a Pallas kernel's grid loop
/// (`super::issued_bundles`). Counting them in full charged jnp.matmul 1024³ on v5e five iterations of its
/// matmul loop for three.
fn issued_bundles(m: &Module<'_>, l: &super::LloFacts) -> Estimate {
    if l.dynamic_bundles.bounds().is_none() {
        return l.dynamic_bundles.clone();
    }
    let loops: Vec<super::LoopFacts> = l
        .loops
        .iter()
        .map(|lp| {
            let stages = super::trips::pipeline_stages(m, lp);
            let trips = match lp.trips.exact() {
                Some(t) if stages > 0 && t > stages => Estimate::Exact(t - stages),
                _ => lp.trips.clone(),
            };
            super::LoopFacts { trips, ..lp.clone() }
        })
        .collect();
    Estimate::sum(&super::trips::bundle_runs(l.static_bundles, &loops))
}

struct Cost {
    us: Option<Interval>,
    bound: Option<Bound>,
    hbm_bytes: Estimate,
    flops: Estimate,
    why: Option<String>,
}

impl Cost {
    fn unknown(why: String) -> Cost {
        Cost { us: None, bound: None, hbm_bytes: Estimate::Exact(0), flops: Estimate::Exact(0), why: Some(why) }
    }
}

/// A launch's prediction without the launch overhead (the program pays it once).
fn without_overhead(t: &TimeFacts) -> Option<Interval> {
    let o = t.overhead_us.unwrap_or(0.0);
    t.predicted_us.map(|p| Interval { min: p.min - o, max: p.max - o })
}

/// A kernel inside the program: its prediction without the launch overhead (the program pays it once). Operands
/// XLA placed on chip before the call are not in it (`mark_placed`): their copies are the schedule's.
fn kernel_in_program(t: &TimeFacts) -> Option<Interval> {
    without_overhead(t)
}

/// An async copy: one DMA, its latency plus its bytes at the HBM bandwidth of a core.
fn copy_time(chip: &Chip, bytes: &Estimate) -> Option<Interval> {
    let bw = chip.hbm_gbps_per_core()?;
    let latency = chip.dma_latency_cycles.zip(chip.clock_ghz).map_or(0.0, |(c, g)| c / (g * 1e3));
    let (lo, hi) = bytes.bounds()?;
    let at = |b: u64| if b == 0 { 0.0 } else { latency + b as f64 / (bw * 1e3) };
    Some(Interval { min: at(lo), max: at(hi) })
}

/// The rounds of an XLA program's pipeline: the most runs of any DMA it starts to or from HBM (libtpu's
/// pipeline emitter issues one per block per loop iteration).
fn dma_rounds(m: &Module<'_>, runs: &[Estimate]) -> Estimate {
    let mut rounds = Estimate::Exact(0);
    for d in crate::semantic::llo::dma_ops(m).iter().filter(|d| !d.is_wait) {
        if d.src != Some("hbm") && d.dst != Some("hbm") {
            continue;
        }
        let at = crate::parse::llo::args::position(m.op(d.op)).map(|(b, _)| b as usize);
        let r = at.and_then(|a| runs.get(a)).cloned().unwrap_or(Estimate::Exact(1));
        rounds = match (rounds.bounds(), r.bounds()) {
            (Some((a0, a1)), Some((b0, b1))) => Estimate::range(a0.max(b0), a1.max(b1)),
            _ => Estimate::unknown("a DMA's runs are unknown"),
        };
    }
    rounds
}

/// An XLA program's transfers: its HBM bytes in `rounds` equal rounds (at least one), the first fetch and the
/// last write-back exposed — a round's bytes each.
fn xla_transfers(bytes: &Estimate, rounds: &Estimate) -> Transfers {
    let exposed = match (bytes.bounds(), rounds.bounds()) {
        (Some((b0, b1)), Some((r0, r1))) => {
            let per = |b: u64, r: u64| (2 * b / r.max(1)).min(b);
            // fewer rounds expose more
            Estimate::range(per(b0, r1).min(per(b1, r1)), per(b1, r0.max(1)).max(per(b0, r0.max(1))))
        }
        _ => Estimate::unknown("HBM bytes or rounds unknown"),
    };
    let rounds = match rounds.bounds() {
        Some((a, b)) => Estimate::range(a.max(1), b.max(1)),
        None => rounds.clone(),
    };
    Transfers { rounds, exposed_bytes: exposed }
}

/// Bytes of an array shape's leaves in HBM (memory space 0: `S(1)` is VMEM, `S(2)` a sync flag).
fn shape_bytes_in_hbm(s: &Shape) -> Estimate {
    let parts: Vec<Estimate> = s
        .leaves()
        .into_iter()
        .filter(|a| a.layout.as_ref().and_then(|l| l.memory_space).unwrap_or(0) == 0)
        .map(array_bytes)
        .collect();
    Estimate::sum(&parts)
}

fn shape_bytes(s: &Shape) -> Estimate {
    let parts: Vec<Estimate> = s.leaves().into_iter().map(array_bytes).collect();
    Estimate::sum(&parts)
}

fn array_bytes(a: &crate::ir::ArrayShape) -> Estimate {
    let dims: Option<Vec<i64>> = a.dims.iter().map(|d| if let Dim::Static(n) = d { Some(*n) } else { None }).collect();
    dims.and_then(super::mosaic::checked_product)
        .and_then(|e| e.checked_mul(u64::from(a.dtype.bits())))
        .map_or_else(|| Estimate::unknown("a dynamic shape"), |b| Estimate::Exact(b.div_ceil(8)))
}

/// What an XLA instruction reads and writes in HBM: its operands' and its result's arrays in HBM, each once
/// (XLA's own cost convention; a program that re-reads a tile does more).
fn hbm_io_bytes(m: &Module<'_>, o: OpId) -> Estimate {
    let mut parts = Vec::new();
    for d in m.operand_ops(o) {
        if let Some(s) = m.op(d).shape() {
            parts.push(shape_bytes_in_hbm(s));
        }
    }
    if let Some(s) = m.op(o).shape() {
        parts.push(shape_bytes_in_hbm(s));
    }
    Estimate::sum(&parts)
}

/// FLOPs of the matmuls an instruction runs (itself, or inside the computations it calls): 2 × result elements ×
/// the contracted size. A `dot`'s contracted size is the product of the LHS contracting dimensions; a TPU
/// `convolution` (how XLA writes a matmul after layout assignment, `dim_labels=bf_io->bf`) contracts the kernel's
/// elements over its output features.
fn flops_of(m: &Module<'_>, o: OpId) -> Estimate {
    let mut total = Estimate::Exact(0);
    let mut stack = vec![o];
    let mut seen = 0usize;
    while let Some(x) = stack.pop() {
        seen += 1;
        if seen > 100_000 {
            return Estimate::unknown("too many instructions to count FLOPs");
        }
        let op = m.op(x);
        for c in &op.calls {
            stack.extend(m.body_ops(c.func).iter().copied());
        }
        let f = if is_dot_general(op.opcode) {
            dot_flops(m, x)
        } else if is_convolution(op.opcode) {
            conv_flops(m, x)
        } else {
            continue;
        };
        total = total.add(&f.unwrap_or_else(|| Estimate::unknown(format!("%{}: matmul shape unknown", op.name))));
    }
    total
}

fn elements(s: &Shape) -> Option<u64> {
    s.array()?.elements().and_then(|e| u64::try_from(e).ok())
}

fn dot_flops(m: &Module<'_>, o: OpId) -> Option<Estimate> {
    let out = elements(m.op(o).shape()?)?;
    let lhs = m.op(m.operand_ops(o).next()?).shape()?.array()?;
    let dims = m.op(o).attr("lhs_contracting_dims").and_then(Value::as_int_list).unwrap_or_default();
    let mut k = 1u64;
    for d in dims {
        match lhs.dims.get(usize::try_from(d).ok()?)? {
            Dim::Static(n) => k = k.checked_mul(u64::try_from(*n).ok()?)?,
            _ => return None,
        }
    }
    Some(Estimate::Exact(out.checked_mul(k)?.checked_mul(2)?))
}

fn conv_flops(m: &Module<'_>, o: OpId) -> Option<Estimate> {
    let out = elements(m.op(o).shape()?)?;
    let kernel = m.op(m.operand_ops(o).nth(1)?).shape()?;
    let labels = dim_labels(m.op(o).attr("dim_labels")?)?;
    let (_, rest) = labels.split_once('_')?;
    let (kl, _) = rest.split_once("->")?;
    let o_dim = kl.find('o')?;
    let Dim::Static(out_features) = kernel.array()?.dims.get(o_dim)? else { return None };
    let per = elements(kernel)?.checked_div(u64::try_from(*out_features).ok()?)?;
    Some(Estimate::Exact(out.checked_mul(per)?.checked_mul(2)?))
}

/// `bf_io->bf` as text from its glued tokens.
fn dim_labels(v: &Value<'_>) -> Option<String> {
    match &v.kind {
        crate::ir::ValueKind::Seq(xs) => xs
            .iter()
            .map(|x| {
                x.word().or(match x.kind {
                    crate::ir::ValueKind::Punct(p) => Some(p),
                    _ => None,
                })
            })
            .collect(),
        _ => v.word().map(str::to_string),
    }
}

/// A `while`'s trip count as XLA recorded it (`backend_config={"known_trip_count":{"n":"4"}}`).
fn known_trip_count(m: &Module<'_>, o: OpId) -> Option<u64> {
    let cfg = m.backend_config(o)?;
    let n = cfg.get("known_trip_count")?.get("n")?;
    n.as_str().and_then(|s| s.parse().ok()).or_else(|| n.as_u64())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::hlo::parse_hlo;
    use crate::semantic::tpu::Hardware;

    fn op(m: &Module<'_>, name: &str) -> OpId {
        m.op_ids().find(|&o| m.op(o).name == name).expect(name)
    }

    const MATMULS: &str = r#"HloModule m, is_scheduled=true

%fused (p0: bf16[256,512], p1: bf16[512,128]) -> bf16[256,128] {
  %p0 = bf16[256,512]{1,0:T(8,128)(2,1)S(1)} parameter(0)
  %p1 = bf16[512,128]{1,0:T(8,128)(2,1)} parameter(1)
  ROOT %convolution = bf16[256,128]{1,0:T(8,128)(2,1)} convolution(%p0, %p1), dim_labels=bf_io->bf
}

ENTRY %main (a: bf16[256,512], b: bf16[512,128], c: f32[8,16,32], d: f32[8,32,64]) -> bf16[256,128] {
  %a = bf16[256,512]{1,0:T(8,128)(2,1)} parameter(0)
  %b = bf16[512,128]{1,0:T(8,128)(2,1)} parameter(1)
  %c = f32[8,16,32]{2,1,0} parameter(2)
  %d = f32[8,32,64]{2,1,0} parameter(3)
  %copy-start = (bf16[256,512]{1,0:T(8,128)(2,1)S(1)}, bf16[256,512]{1,0:T(8,128)(2,1)}, u32[]{:S(2)}) copy-start(%a)
  %copy-done = bf16[256,512]{1,0:T(8,128)(2,1)S(1)} copy-done(%copy-start)
  %dot = f32[8,16,64]{2,1,0} dot(%c, %d), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  ROOT %fusion = bf16[256,128]{1,0:T(8,128)(2,1)} fusion(%copy-done, %b), kind=kOutput, calls=%fused
}
"#;

    #[test]
    fn matmul_flops_from_dots_and_tpu_convolutions() {
        let m = parse_hlo("t.hlo", MATMULS).expect("parses");
        // a matmul written as a convolution inside the fusion: 2 × 256·128 outputs × 512 contracted
        assert_eq!(flops_of(&m, op(&m, "fusion")), Estimate::Exact(2 * 256 * 128 * 512));
        // a batched dot: 2 × 8·16·64 outputs × 32 contracted
        assert_eq!(flops_of(&m, op(&m, "dot")), Estimate::Exact(2 * 8 * 16 * 64 * 32));
        assert_eq!(flops_of(&m, op(&m, "copy-start")), Estimate::Exact(0));
    }

    #[test]
    fn hbm_bytes_are_the_operands_and_result_in_hbm() {
        let m = parse_hlo("t.hlo", MATMULS).expect("parses");
        // the fusion's first operand is in VMEM (S(1)): only b (512·128) and the result (256·128) are HBM traffic
        assert_eq!(hbm_io_bytes(&m, op(&m, "fusion")), Estimate::Exact(2 * (512 * 128 + 256 * 128)));
        let start = m.op(op(&m, "copy-start")).shape().unwrap();
        assert_eq!(shape_bytes(&start.tuple_elements()[0]), Estimate::Exact(2 * 256 * 512));
    }

    #[test]
    fn an_async_copy_is_one_dma_latency_plus_its_bytes() {
        let hw = Hardware::builtin();
        let v5e = hw.chip("v5e").unwrap();
        // 819 GB/s, 484 cycles at 1.5 GHz
        let t = copy_time(v5e, &Estimate::Exact(819_000)).unwrap();
        assert!((t.max - (484.0 / 1500.0 + 1.0)).abs() < 1e-9, "{t:?}");
        // a cross-program prefetch may copy nothing
        let r = copy_time(v5e, &Estimate::Exact(819_000).up_to()).unwrap();
        assert_eq!(r.min, 0.0);
        assert_eq!(r.max, t.max);
    }

    #[test]
    fn an_xla_program_streams_its_bytes_in_rounds_with_the_first_and_last_exposed() {
        let t = xla_transfers(&Estimate::Exact(1000), &Estimate::Exact(10));
        assert_eq!(t.rounds, Estimate::Exact(10));
        assert_eq!(t.exposed_bytes, Estimate::Exact(200), "one round in, one round out");
        // a program without HBM DMAs (everything on chip at the call) still makes one round, all of it exposed
        let t = xla_transfers(&Estimate::Exact(1000), &Estimate::Exact(0));
        assert_eq!((t.rounds, t.exposed_bytes), (Estimate::Exact(1), Estimate::Exact(1000)));
    }

    #[test]
    fn a_launch_inside_a_program_drops_its_overhead() {
        let hw = Hardware::builtin();
        let v5e = hw.chip("v5e").unwrap();
        let none = Transfers { rounds: Estimate::Exact(0), exposed_bytes: Estimate::Exact(0) };
        // 1500 bundles at 1.5 GHz: 1 µs, plus the 6 µs launch overhead the program pays once
        let t = time::predict(
            Some(v5e),
            Some(&Estimate::Exact(1500)),
            &Estimate::Exact(0),
            &Estimate::Exact(0),
            &none,
            None,
        );
        assert_eq!(t.predicted_us.unwrap().max, 7.0);
        assert_eq!(kernel_in_program(&t), Some(Interval::point(1.0)));
    }

    #[test]
    fn names_and_async_ends_cost_nothing() {
        for oc in ["parameter", "get-tuple-element", "bitcast", "copy-done", "all-gather-done", "tuple"] {
            assert!(is_bookkeeping(oc), "{oc}");
        }
        for oc in ["fusion", "copy", "custom-call", "all-gather-start", "convolution"] {
            assert!(!is_bookkeeping(oc), "{oc}");
        }
    }
}
