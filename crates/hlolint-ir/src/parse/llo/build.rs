//! final_bundles → `ir::Module` (layer `Llo`).
//!
//! **Mapping.** One `Func` (the computation the file was compiled for; named after the entry bundle's HLO
//! instruction, `fusion` / `matmul.1`, else `llo`) whose ops are the bundle ops in bundle order, i.e. execution order
//! (`Module::scheduled` is true). Each op records where it sits:
//! - `Op::issue`: its bundle's address as printed (`0x1d`) and its slot (index inside the bundle); fields, not
//!   attributes, because every op has them (`view::position` reads them),
//! - `marker` = the bundle's control-target markers (`LB`, `PF`) and `depth` = the `>` count, when present,
//! - `args` = every operand and attribute in order as a `(`-group of value trees (`Name` for `%values`, `[`-groups
//!   for memory references such as `[smem:[#allocation3]]`, `KeyVal` for `/*hbm=*/%s1` and `target = $region5`),
//! - `pred` = the predicate group (`(!%p57_p0)`), `comment` = each free comment (`pipeline-emitter-dma-wait`).
//!
//! **Operands.** Register names are SSA: `%s4_s0` is value 4 in scalar register s0, and in the whole corpus (1.9 M
//! definitions) no name is defined twice; results of ops with no register print as `%16` and are referenced by a
//! few ops (`spop.drf %11720`). So every `%name` operand — top-level, in the predicate, or inside a memory address
//! — is resolved to the op defining that exact name (phis refer forward across the loop back edge, which is fine),
//! and stays `Def::Unresolved` when nothing in the file defines it. Memory (`[#allocation3]`, `[vmem:...]`) is not
//! a def-use edge: the allocation numbering carries no SSA guarantee, so rules read those through `args`.
//!
//! **Loops are regions.** libtpu marks the first bundle of a loop body `LB` and closes the loop with a backward
//! `sbr.rel ... target = $regionN` whose region N is one the `LB` bundle's comment starts (`Start region N`); all 873
//! loops in the corpus have that pair. The `>` depth column is *not* reliable on its own (empty bundles and bundles
//! holding only phis or the branch print no `>`). After the back edge the loop extends over the bundles up to 8
//! past the branch, stopping at the next `LB`, as far as the last one that prints a depth of at least the loop's
//! nesting level: branches have delay slots, and libtpu prints loop code there (`spop.drf`, `sst`, even a
//! `dma.general` that belongs to the loop's region). This is a reading of the printer, not of a spec: whether such
//! code runs every iteration (delay slot) or once (a pipelined epilogue) is not stated in the dump, and
//! bundles in that window printing no depth (code for after the loop, predicated on the exit test) land inside the
//! region too. Invariant checked on the corpus: no op prints a depth greater than its number of enclosing loops.
//! Each loop becomes a synthetic op `loop` (named after the region, `region141`; attrs `start`, `end`,
//! `backedge` bundle addresses and `level`) holding one region with one block: `Module::ancestors(op)` answers
//! "inside which loops", and nested loops nest. Predicated regions (`PF`, forward `sbr.rel`) are not regions:
//! per-op predicates carry that meaning more precisely, and `marker`/`target` keep the rest.

use super::bundles::{names, Bundle, BundleFile, LloOp};
use super::lex::small_num;
use crate::ir::*;
// FxHash: value names are short, and SipHash's DoS resistance buys nothing for a local file.
use rustc_hash::FxHashMap;
use std::collections::HashMap;

/// A parsed final_bundles file.
#[derive(Clone, Debug)]
pub struct LloProgram<'a> {
    pub module: Module<'a>,
    /// The computation named by the file name (`fusion`, `<late-finalization>`), when it follows libtpu's scheme.
    pub computation: Option<String>,
    /// `(key, meaning)` pairs of the control-target legend.
    pub legend: Vec<(&'a str, &'a str)>,
    pub bundles: Vec<BundleInfo<'a>>,
    pub loops: Vec<LoopInfo<'a>>,
    /// Built with [`Keep::Only`](super::Keep): the module holds only the kept ops (and the loops), and `bundles`
    /// is empty. Slot usage and timelines need the whole graph.
    pub partial: bool,
    /// The whole program's bundles, and its ops with the loops' (what the module holds when nothing is dropped).
    pub bundle_count: usize,
    pub op_count: usize,
}

/// A bundle without its ops (they live in the module): `ops` are the ids of its ops in slot order.
#[derive(Clone, Debug)]
pub struct BundleInfo<'a> {
    pub addr: u64,
    pub addr_text: &'a str,
    pub markers: &'a str,
    pub depth: u8,
    pub comments: Vec<&'a str>,
    pub ops: Vec<OpId>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct LoopInfo<'a> {
    /// Bundle indices (into `LloProgram::bundles`): first body bundle, back-edge branch, last bundle.
    pub start: usize,
    pub backedge: usize,
    pub end: usize,
    /// 1 for an outermost loop.
    pub level: u32,
    /// `141` of `$region141`.
    pub region: &'a str,
    pub op: OpId,
    pub parent: Option<usize>,
}

const MAX_DELAY_SLOTS: usize = 8;

pub fn build<'a>(path: &str, text: &'a str, file: BundleFile<'a>, keep: super::Keep) -> LloProgram<'a> {
    let BundleFile { legend, bundles } = file;
    let partial = matches!(keep, super::Keep::Only(_));
    let loops = find_loops(&bundles);
    let (mut m, root) = program_module(text, &bundles);

    let mut infos = Vec::with_capacity(bundles.len());
    let mut names_buf = Vec::new();
    let mut nest = LoopNest { root, stack: Vec::new(), next: 0, out: Vec::with_capacity(loops.len()) };
    m.ops.reserve(bundles.iter().flat_map(|b| &b.ops).filter(|o| o.kept).count() + loops.len());

    let (bundle_count, op_count) =
        (bundles.len(), bundles.iter().map(|b| b.op_count as usize).sum::<usize>() + loops.len());
    for (bi, b) in bundles.into_iter().enumerate() {
        let block = nest.enter(&mut m, &loops, bi, &b);
        let Bundle { addr, addr_text, markers, depth, ops, comments, span, .. } = b;
        let mut ids = Vec::with_capacity(ops.len());
        for o in ops {
            if !o.kept {
                continue;
            }
            let op = make_op(o, addr_text, markers, depth, &mut names_buf);
            ids.push(m.push_op(block, op));
        }
        infos.push(BundleInfo { addr, addr_text, markers, depth, comments, ops: ids, span });
    }
    close_loops(&mut m, &nest.out, &infos);
    if partial {
        // A partial graph is read through its ops; the bundle table is for whole programs.
        infos = Vec::new();
    }

    resolve(&mut m);
    m.link();
    LloProgram {
        module: m,
        computation: super::llo_file_name(path).map(|n| n.computation.to_string()),
        legend,
        bundles: infos,
        loops: nest.out,
        partial,
        bundle_count,
        op_count,
    }
}

/// The module of one program: a single entry function named after the entry comment's HLO instruction (`llo`
/// without one), with the entry and exit comments as its attributes; returns it and the body's block.
fn program_module<'a>(text: &'a str, bundles: &[Bundle<'a>]) -> (Module<'a>, BlockId) {
    let entry = bundles.iter().find_map(Bundle::entry_comment);
    let exit = bundles.iter().rev().find_map(Bundle::exit_comment);
    let fname: &'a str = entry
        .and_then(|e| e.strip_prefix('%'))
        .and_then(|e| e.split(" = ").next())
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .unwrap_or("llo");
    let whole = Span::new(0, text.len());
    let mut m = Module::new(Layer::Llo, fname, text, whole);
    m.scheduled = true;
    let comment =
        |key, e: &'a str| Attr::new(key, Value { kind: ValueKind::Str(e), span: Span::of(text, e) }, Span::of(text, e));
    let mut fattrs = Vec::new();
    fattrs.extend(entry.map(|e| comment("entry", e)));
    fattrs.extend(exit.map(|e| comment("exit", e)));
    let (fid, root) = m.add_func(Func {
        name: fname,
        span: whole,
        name_span: entry.map(|e| Span::of(text, e)).unwrap_or_default(),
        is_entry: true,
        params: Vec::new(),
        results: Vec::new(),
        attrs: fattrs,
        body: RegionId(0),
        callers: Vec::new(),
    });
    m.entry = Some(fid);
    (m, root)
}

/// The loops open at the bundle being built: each a synthetic `loop` op whose region holds the bundles inside it.
struct LoopNest<'a> {
    root: BlockId,
    /// (loop index, its block), innermost last.
    stack: Vec<(usize, BlockId)>,
    /// The next loop (by start) not yet opened.
    next: usize,
    out: Vec<LoopInfo<'a>>,
}

impl<'a> LoopNest<'a> {
    /// Closes the loops that ended before bundle `bi`, opens those starting at it; returns the block it goes in.
    fn enter(&mut self, m: &mut Module<'a>, loops: &[RawLoop<'a>], bi: usize, b: &Bundle<'a>) -> BlockId {
        while self.stack.last().is_some_and(|&(l, _)| loops[l].end < bi) {
            self.stack.pop();
        }
        while self.next < loops.len() && loops[self.next].start == bi {
            let l = &loops[self.next];
            let block = self.current();
            let span = b.span;
            let attrs = vec![
                attr("start", ValueKind::Word(b.addr_text), span),
                attr("level", ValueKind::Word(small_num(l.level as usize)), span),
                attr("region", ValueKind::Word(l.region), span),
            ];
            let op = m.push_op(block, synthetic_loop(l.region_name, span, attrs));
            let region = m.add_region(RegionParent::Op(op));
            let lb = m.add_block(region, None, Vec::new());
            self.out.push(LoopInfo {
                start: l.start,
                backedge: l.backedge,
                end: l.end,
                level: l.level,
                region: l.region,
                op,
                parent: self.stack.last().map(|s| s.0),
            });
            self.stack.push((self.next, lb));
            self.next += 1;
        }
        self.current()
    }

    fn current(&self) -> BlockId {
        self.stack.last().map(|s| s.1).unwrap_or(self.root)
    }
}

/// Loop end / back-edge addresses, once every bundle is known; a loop op's span runs to its last bundle.
fn close_loops<'a>(m: &mut Module<'a>, loops: &[LoopInfo<'a>], infos: &[BundleInfo<'a>]) {
    for l in loops {
        let (be, end) = (infos.get(l.backedge), infos.get(l.end));
        let op = &mut m.ops[l.op.idx()];
        let span = op.span;
        if let Some(b) = be {
            op.attrs.push(attr("backedge", ValueKind::Word(b.addr_text), span));
        }
        if let Some(e) = end {
            op.attrs.push(attr("end", ValueKind::Word(e.addr_text), span));
            op.span = span.to(e.span);
        }
    }
}

fn attr<'a>(key: &'a str, kind: ValueKind<'a>, span: Span) -> Attr<'a> {
    Attr::new(key, Value { kind, span }, span)
}

fn synthetic_loop<'a>(name: &'a str, span: Span, attrs: Vec<Attr<'a>>) -> Op<'a> {
    Op { result_count: 0, attrs, ..Op::new(name, "loop", Type::None, span) }
}

fn make_op<'a>(o: LloOp<'a>, addr_text: &'a str, markers: &'a str, depth: u8, ns: &mut Vec<(&'a str, Span)>) -> Op<'a> {
    let LloOp { dest, mnemonic, args, comments, span, dest_span, mnemonic_span, slot, .. } = o;
    ns.clear();
    for a in &args {
        names(a, ns);
    }
    let operands =
        ns.drain(..).map(|(name, span)| Operand { name, ty: None, role: None, def: Def::Unresolved, span }).collect();
    let pred = args.iter().find(|a| matches!(a.kind, ValueKind::Group { open: '(', .. }));
    // Exactly the attributes pushed below: a growing Vec would double its capacity on most ops.
    let n = 1 + !markers.is_empty() as usize + (depth > 0) as usize + pred.is_some() as usize + comments.len();
    let mut attrs = Vec::with_capacity(n);
    if !markers.is_empty() {
        attrs.push(attr("marker", ValueKind::Word(markers), span));
    }
    if depth > 0 {
        attrs.push(attr("depth", ValueKind::Word(small_num(depth as usize)), span));
    }
    if let Some(p) = pred {
        attrs.push(Attr::new("pred", p.clone(), p.span));
    }
    let args_span = args.first().map(|a| a.span.to(args.last().map(|l| l.span).unwrap_or(a.span))).unwrap_or(span);
    attrs.push(Attr::new(
        "args",
        Value { kind: ValueKind::Group { open: '(', items: args }, span: args_span },
        args_span,
    ));
    for c in comments {
        attrs.push(attr("comment", ValueKind::Str(c), span));
    }
    Op {
        issue: Some(Issue { bundle: addr_text, slot }),
        result_count: dest.is_some() as u32,
        operands,
        attrs,
        name_span: dest_span,
        opcode_span: mnemonic_span,
        ..Op::new(dest.unwrap_or(""), mnemonic, Type::None, span)
    }
}

/// Resolves every operand name to the op defining it (SSA names; see the module doc).
fn resolve(m: &mut Module<'_>) {
    let mut defs: FxHashMap<&str, OpId> = FxHashMap::with_capacity_and_hasher(m.ops.len(), Default::default());
    for (i, op) in m.ops.iter().enumerate() {
        if !op.name.is_empty() && op.opcode != "loop" {
            defs.entry(op.name).or_insert(OpId(i as u32));
        }
    }
    for op in &mut m.ops {
        for o in &mut op.operands {
            if let Some(&d) = defs.get(o.name) {
                o.def = Def::Op { op: d, index: 0 };
            }
        }
    }
}

struct RawLoop<'a> {
    start: usize,
    backedge: usize,
    end: usize,
    level: u32,
    region: &'a str,
    region_name: &'a str,
}

/// Finds loops: `LB` bundle → backward `sbr.rel` to a region the `LB` bundle starts → delay slots.
fn find_loops<'a>(bundles: &[Bundle<'a>]) -> Vec<RawLoop<'a>> {
    // region number → (bundle index, target word without `$`) of every branch targeting it.
    let mut targets: HashMap<&'a str, Vec<(usize, &'a str)>> = HashMap::new();
    for (bi, b) in bundles.iter().enumerate() {
        for op in &b.ops {
            if let Some(t) = op.named("target").and_then(|v| v.word()) {
                let t = t.strip_prefix('$').unwrap_or(t);
                let num = t.strip_prefix("region").unwrap_or(t);
                targets.entry(num).or_default().push((bi, t));
            }
        }
    }
    let n = bundles.len();
    let mut loops: Vec<RawLoop<'a>> = Vec::new();
    let mut open: Vec<usize> = Vec::new();
    for i in 0..n {
        while open.last().is_some_and(|&l| loops[l].end < i) {
            open.pop();
        }
        let b = &bundles[i];
        if !b.has_marker("LB") {
            continue;
        }
        let mut best: Option<(usize, &'a str, &'a str)> = None;
        for r in b.started_regions() {
            if let Some(&(j, name)) = targets.get(r).and_then(|v| v.iter().find(|(j, _)| *j >= i)) {
                if best.is_none_or(|(bj, _, _)| j < bj) {
                    best = Some((j, r, name));
                }
            }
        }
        let Some((be, region, region_name)) = best else { continue };
        let limit = open.last().map(|&p| loops[p].end).unwrap_or(n.saturating_sub(1));
        if be > limit {
            continue;
        }
        let level = open.len() as u32 + 1;
        let mut end = be;
        let mut k = be + 1;
        while k <= limit && k - be <= MAX_DELAY_SLOTS && !bundles[k].has_marker("LB") {
            if bundles[k].depth as u32 >= level {
                end = k;
            }
            k += 1;
        }
        loops.push(RawLoop { start: i, backedge: be, end, level, region, region_name });
        open.push(loops.len() - 1);
    }
    loops
}
