//! Findings in the kernel author's words: the names they gave buffers and semaphores (`sem[1, 0]`, `wbuf` rather
//! than `%arg9[1, 0]`, `%arg8`), and where in their Python each op is (`kernels.py:158 ← 167 ← 179`, with the dump
//! line only as a note). The one place that answers "what is this called, and where is it, in Python".
//!
//! Mosaic dumps do not carry the names: a kernel's block arguments are `loc(unknown)` in jax 0.10.2's bytecode and
//! text dumps, and op locations name jax primitives and Python lines, not variables (docs/driver.md, "Kernel
//! names"). The driver records them while it traces each kernel (`kernels[].operands` in its manifest, in the order
//! Pallas passes refs: scalar prefetch, inputs, outputs, scratch), so they are known for compilations `hlolint
//! compile` made; elsewhere a kernel argument keeps its SSA name.

use super::manifest::KernelRecord;
use super::Compilation;
use crate::ir::{FuncId, Layer, Module, OpId, SourceLoc};
use crate::semantic::kernel::Kernel;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::{Arc, Mutex};

/// The Python call chain of each op of a function that has one, innermost frame first.
pub type Chains = BTreeMap<OpId, Vec<SourceLoc>>;

/// [`Compilation::python_chains`]'s answers by (unit, function), shared by the rules' threads.
#[derive(Debug, Default)]
pub struct ChainCache(Mutex<HashMap<(usize, FuncId), Arc<Chains>>>);

/// The Python names of the kernels of one compilation, by kernel (Mosaic function) name.
#[derive(Clone, Debug, Default)]
pub struct KernelNames {
    kernels: Vec<KernelRecord>,
}

impl KernelNames {
    /// What the driver's manifest beside the compilation folder `dir` records (nothing when there is none).
    pub fn of_dir(dir: &Path) -> KernelNames {
        KernelNames { kernels: super::target::manifest_result(dir).map(|r| r.kernels).unwrap_or_default() }
    }

    pub fn from_records(kernels: Vec<KernelRecord>) -> KernelNames {
        KernelNames { kernels }
    }

    /// The names of kernel `name`'s refs, in Pallas's order.
    pub fn operands(&self, kernel: &str) -> Option<&[Option<String>]> {
        self.kernels.iter().find(|k| k.name.as_deref() == Some(kernel)).map(|k| k.operands.as_slice())
    }

    /// Names `k`'s arguments ([`crate::semantic::kernel::KernelArg::python`]): its refs are the arguments after the
    /// grid indices, one for one. When the counts disagree (a kernel Pallas lowered with arguments of its own)
    /// nothing is named rather than something misnamed.
    pub fn name_args(&self, k: &mut Kernel<'_>) {
        let Some(names) = self.operands(k.name) else { return };
        let grid = k.iteration_bounds.len();
        if k.args.len() != grid + names.len() {
            return;
        }
        for (arg, name) in k.args.iter_mut().skip(grid).zip(names) {
            arg.python = name.clone();
        }
    }
}

impl Compilation<'_> {
    /// The kernel names the driver recorded for this compilation (read once, on first use).
    pub fn kernel_names(&self) -> &KernelNames {
        self.names.get_or_init(|| KernelNames::of_dir(Path::new(&self.dir)))
    }

    /// The kernels of unit `unit` (whose module is `m`) in their author's words: their arguments' Python names
    /// and their ops' Python places, where known.
    pub fn named_kernels<'a>(&self, unit: usize, m: &Module<'a>) -> Vec<Kernel<'a>> {
        crate::semantic::kernel::kernels(m).into_iter().map(|k| self.in_python_words(unit, k)).collect()
    }

    /// [`Self::named_kernels`]' kernel `name` alone (the others' views and Python places are not built).
    pub fn named_kernel<'a>(&self, unit: usize, m: &Module<'a>, name: &str) -> Option<Kernel<'a>> {
        crate::semantic::kernel::named(m, name).map(|k| self.in_python_words(unit, k))
    }

    /// Kernel `k` of unit `unit` with its arguments' Python names and its ops' Python places.
    fn in_python_words<'a>(&self, unit: usize, mut k: Kernel<'a>) -> Kernel<'a> {
        self.kernel_names().name_args(&mut k);
        k.places = std::sync::Arc::new(self.python_places(unit, k.func));
        k
    }
}

impl Compilation<'_> {
    /// The Python call chain of every op of kernel function `f` of unit `unit` that has one, innermost frame
    /// first: from the ops' own locations (a kernel decoded from a `tpu_custom_call`), else — a libtpu Mosaic dump
    /// carries no locations — from the same kernel decoded from the compilation's HLO, op for op by opcode and
    /// ordinal (the two have the same ops in the same order).
    pub fn python_chains(&self, unit: usize, f: FuncId) -> Arc<Chains> {
        if let Some(c) = self.chains.0.lock().ok().and_then(|m| m.get(&(unit, f)).cloned()) {
            return c;
        }
        let chains = Arc::new(self.chains_of(unit, f));
        if let Ok(mut m) = self.chains.0.lock() {
            m.insert((unit, f), chains.clone());
        }
        chains
    }

    fn chains_of(&self, unit: usize, f: FuncId) -> Chains {
        let Some(u) = self.units.get(unit) else { return BTreeMap::new() };
        let m = &u.module;
        let ops = m.func_ops(f);
        let own: BTreeMap<OpId, Vec<SourceLoc>> =
            ops.iter().map(|&o| (o, python_frames(m, o))).filter(|(_, c)| !c.is_empty()).collect();
        if !own.is_empty() || u.layer() != Layer::Mosaic {
            return own;
        }
        let name = m.func(f).name;
        for d in self.units.iter().filter(|d| d.host.is_some() && d.layer() == Layer::Mosaic) {
            let dm = &d.module;
            let Some(df) = dm.func_by_name(name) else { continue };
            let mut by_opcode: HashMap<&str, Vec<OpId>> = HashMap::new();
            for o in dm.func_ops(df) {
                by_opcode.entry(dm.op(o).opcode).or_default().push(o);
            }
            let mut seen: HashMap<&str, usize> = HashMap::new();
            let mut out = BTreeMap::new();
            for &o in &ops {
                let n = seen.entry(m.op(o).opcode).or_default();
                let same = by_opcode.get(m.op(o).opcode).and_then(|v| v.get(*n));
                *n += 1;
                if let Some(chain) = same.map(|&x| python_frames(dm, x)).filter(|c| !c.is_empty()) {
                    out.insert(o, chain);
                }
            }
            return out;
        }
        BTreeMap::new()
    }

    /// How messages name where ops are (`kernels.py:158 ← 167 ← 179 (dump: line 46)`): per op of kernel function
    /// `f` with a Python location ([`place`]).
    pub fn python_places(&self, unit: usize, f: FuncId) -> BTreeMap<OpId, String> {
        let Some(u) = self.units.get(unit) else { return BTreeMap::new() };
        let m = &u.module;
        self.python_chains(unit, f).iter().map(|(&o, chain)| (o, place(m, o, chain))).collect()
    }

    /// The Python frame a finding on `op` (of unit `unit`) is placed at — its header, its SARIF location, the line
    /// an ignore comment silences it on, the line `--add-noqa` writes: the frame of its call chain that tells it
    /// apart from the other ops of its function ([`blame`]), so that a comment on a helper's line shared by two
    /// call sites silences neither call site's findings. `None` when the op has no Python frame.
    pub fn blamed_frame(&self, unit: usize, op: OpId) -> Option<SourceLoc> {
        let m = &self.units.get(unit)?.module;
        let chains = self.python_chains(unit, m.func_of(op));
        let chain = chains.get(&op)?;
        let others: Vec<&[SourceLoc]> = chains.values().map(Vec::as_slice).collect();
        blame(chain, &others).cloned()
    }
}

/// The Python frames of an op's source stack (jax's own frames are not in it), innermost first.
fn python_frames(m: &Module<'_>, op: OpId) -> Vec<SourceLoc> {
    m.source_stack(op).into_iter().filter(|l| l.file.ends_with(".py")).collect()
}

/// A call chain as the author reads it: `kernels.py:158 ← 167 ← 179` (the innermost frame first, each caller
/// after `←`, its file named only when it changes), the file by its name alone (the recorded path is the
/// compiling machine's).
pub fn chain_text(chain: &[SourceLoc]) -> String {
    let mut out = String::new();
    let mut file: Option<&str> = None;
    let mut last: Option<u32> = None;
    for l in chain {
        let name = Path::new(&l.file).file_name().and_then(|n| n.to_str()).unwrap_or(&l.file);
        // a caller on the same line (`o_ref[...] += f(x)` at 182, calling into 182) says nothing new
        if file == Some(name) && last == Some(l.line) {
            continue;
        }
        last = Some(l.line);
        if !out.is_empty() {
            out.push_str(" ← ");
        }
        if file != Some(name) {
            out.push_str(&format!("{name}:{}", l.line));
        } else {
            out.push_str(&l.line.to_string());
        }
        file = Some(name);
    }
    out
}

/// The note a finding gets when its op was called through helpers (the header names only the innermost frame):
/// `python: kernels.py:158 ← 167 ← 179 (dump: line 73)`; none for an op written where it runs.
pub fn chain_note(k: &Kernel<'_>, op: OpId) -> Option<String> {
    k.places.get(&op).filter(|p| p.contains(" ← ")).map(|p| format!("python: {p}"))
}

/// Where an op is, in the author's words first: its Python call chain, with the dump line after it as a note
/// when the op has text in a dump (`kernels.py:185 (dump: line 46)`).
pub fn place(m: &Module<'_>, op: OpId, chain: &[SourceLoc]) -> String {
    let o = m.op(op);
    let dump = (o.span.end > o.span.start && o.span.start as usize <= m.text.len()).then(|| m.line(o.span.start));
    match (chain.is_empty(), dump) {
        (false, Some(l)) => format!("{} (dump: line {l})", chain_text(chain)),
        (false, None) => chain_text(chain),
        (true, Some(l)) => format!("line {l}"),
        (true, None) => format!("`{}`", o.opcode),
    }
}

/// The frame of `op`'s chain that tells it apart from the other ops of its kernel sharing its innermost frame:
/// jax gives a helper's line to every op the helper makes (`c.start()` in a shared `copies` helper is line 158 for
/// the prologue's DMA and the loop's prefetch alike); the caller frames differ. The frame just past the longest
/// prefix this chain shares with a different chain is the first that is this op's own (for the prefetch called
/// from 167 at 179: 167; for the prologue: 158). Ops with the same chain are the same source and do not count.
pub fn blame<'c>(chain: &'c [SourceLoc], others: &[&[SourceLoc]]) -> Option<&'c SourceLoc> {
    let same_frame = |a: &SourceLoc, b: &SourceLoc| a.file == b.file && a.line == b.line && a.column == b.column;
    let shared = others
        .iter()
        .filter(|o| o.len() != chain.len() || !o.iter().zip(chain).all(|(a, b)| same_frame(a, b)))
        .map(|o| o.iter().zip(chain).take_while(|(a, b)| same_frame(a, b)).count())
        .max()
        .unwrap_or(0);
    chain.get(shared.min(chain.len().saturating_sub(1)))
}

/// A kernel argument as messages name it: the author's name with the dump's after it (`` `x_hbm` (%arg2) ``), or
/// the dump's alone (`` `%arg2` ``) when the driver recorded none.
pub fn arg_text(a: &crate::semantic::kernel::KernelArg<'_>) -> String {
    match &a.python {
        Some(p) => format!("`{p}` (%{})", a.name),
        None => format!("`%{}`", a.name),
    }
}

/// A view of a buffer or semaphore as the kernel's author indexes it: `sem[1, 0]` (written `sem.at[1, 0]`), `wbuf`
/// when the view is the whole buffer or its slot is unknown.
pub fn view(name: &str, slot: &str) -> String {
    if slot.is_empty() {
        name.to_string()
    } else {
        format!("{name}[{slot}]")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lint::compilation::{parse_texts, source_file, Parsed};

    fn record(name: &str, operands: &[&str]) -> KernelRecord {
        KernelRecord {
            name: Some(name.into()),
            operands: operands.iter().map(|s| Some(s.to_string())).collect(),
            ..KernelRecord::default()
        }
    }

    const KERNEL: &str = r#"module {
  func.func @k(%arg0: i32, %arg1: memref<2x8x128xf32, #tpu.memory_space<vmem>>, %arg2: memref<2x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>) attributes {dimension_semantics = [#tpu.dimension_semantics<arbitrary>], iteration_bounds = array<i64: 4>, scalar_prefetch = 0 : i64, scratch_operands = 2 : i64, window_params = []} {
    return
  }
}
"#;

    #[test]
    fn arguments_after_the_grid_take_the_recorded_names() {
        let files = vec![source_file("k.mlir", KERNEL)];
        let parsed: Vec<Parsed> = parse_texts(&files).into_iter().map(|r| r.expect("parses")).collect();
        let m = parsed[0].graph().expect("a graph");
        let mut ks = crate::semantic::kernel::kernels(m);
        let names = KernelNames::from_records(vec![record("k", &["wbuf", "sem"])]);
        names.name_args(&mut ks[0]);
        let got: Vec<Option<&str>> = ks[0].args.iter().map(|a| a.python.as_deref()).collect();
        assert_eq!(got, vec![None, Some("wbuf"), Some("sem")]);
        // another kernel's names, or a count that does not fit, name nothing
        for names in [
            KernelNames::from_records(vec![record("other", &["wbuf", "sem"])]),
            KernelNames::from_records(vec![record("k", &["sem"])]),
        ] {
            let mut ks = crate::semantic::kernel::kernels(m);
            names.name_args(&mut ks[0]);
            assert!(ks[0].args.iter().all(|a| a.python.is_none()));
        }
    }

    fn at(line: u32) -> SourceLoc {
        SourceLoc { file: "/elsewhere/examples/kernels.py".into(), function: String::new(), line, column: 8 }
    }

    #[test]
    fn chains_read_innermost_first_with_the_file_once() {
        assert_eq!(chain_text(&[at(158), at(167), at(179)]), "kernels.py:158 ← 167 ← 179");
        let other = SourceLoc { file: "/x/helpers.py".into(), ..at(12) };
        assert_eq!(chain_text(&[other, at(167)]), "helpers.py:12 ← kernels.py:167");
        assert_eq!(chain_text(&[]), "");
        assert_eq!(chain_text(&[at(182), SourceLoc { column: 30, ..at(182) }]), "kernels.py:182");
    }

    #[test]
    fn the_frame_that_tells_an_op_apart_is_blamed() {
        let prologue = [at(158)];
        let prefetch = [at(158), at(167), at(179)];
        // the in-loop prefetch shares the helper's line 158 with the prologue: its own frame is 167
        assert_eq!(blame(&prefetch, &[&prologue, &prefetch]).map(|l| l.line), Some(167));
        // the prologue is told apart at 158 already
        assert_eq!(blame(&prologue, &[&prologue, &prefetch]).map(|l| l.line), Some(158));
        // alone, or among ops of the same chain (the x and w copies of one `for c in copies(...)`): innermost
        assert_eq!(blame(&prefetch, &[]).map(|l| l.line), Some(158));
        assert_eq!(blame(&prefetch, &[&prefetch]).map(|l| l.line), Some(158));
        assert_eq!(blame(&[], &[&prefetch]), None);
    }

    /// The kernel of the unguarded-prefetch fixture, as libtpu dumped it (no locations): its DMA starts get the
    /// call chains of the same kernel decoded from the HLO.
    #[test]
    fn dump_ops_get_the_decoded_kernels_chains() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/fp8_matmul_2d/tpu7x+v6e/bug_unwaited_dma@tpu7x");
        let mut files = Vec::new();
        for e in walkdir::WalkDir::new(&dir).sort_by_file_name().into_iter().filter_map(Result::ok) {
            let p = e.path().display().to_string();
            if e.file_type().is_file() && (p.contains("post-deserialization") || p.contains("after_optimizations.txt"))
            {
                files.push(source_file(&p, &std::fs::read_to_string(e.path()).unwrap()));
            }
        }
        let parsed: Vec<Parsed> = parse_texts(&files).into_iter().map(|r| r.expect("parses")).collect();
        let c = Compilation::new(dir.display().to_string(), &parsed, None);
        let (unit, u) = c
            .units
            .iter()
            .enumerate()
            .find(|(_, u)| u.layer() == Layer::Mosaic && u.host.is_none())
            .expect("the Mosaic dump");
        let f = u.module.entry.expect("a kernel");
        let chains = c.python_chains(unit, f);
        let starts: Vec<Vec<u32>> = u
            .module
            .func_ops(f)
            .into_iter()
            .filter(|&o| crate::semantic::op::is_dma_start(u.module.op(o).opcode))
            .map(|o| chains.get(&o).map(|c| c.iter().map(|l| l.line).collect()).unwrap_or_default())
            .collect();
        // prologue (x, w), then the loop's prefetch (x, w): `c.start()` at 158 in both, called from 167 at 179
        assert_eq!(starts, vec![vec![158], vec![158], vec![158, 167, 179], vec![158, 167, 179]]);
        let places = c.python_places(unit, f);
        let loop_start = u
            .module
            .func_ops(f)
            .into_iter()
            .filter(|&o| crate::semantic::op::is_dma_start(u.module.op(o).opcode))
            .nth(2);
        let text = loop_start.and_then(|o| places.get(&o)).cloned().unwrap_or_default();
        assert!(text.starts_with("kernels.py:158 ← 167 ← 179 (dump: line "), "{text}");
        // the kernel's arguments by their names
        let k = c.named_kernels(unit, &u.module).into_iter().next().expect("a kernel");
        let names: Vec<&str> = k.args.iter().filter_map(|a| a.python.as_deref()).collect();
        assert_eq!(names, ["x_hbm", "w_hbm", "xs_ref", "ws_ref", "o_ref", "xbuf", "wbuf", "sem"]);
    }

    #[test]
    fn views_read_as_python_indexing() {
        assert_eq!(view("sem", "1, 0"), "sem[1, 0]");
        assert_eq!(view("wbuf", ""), "wbuf");
    }

    #[test]
    fn the_fixtures_record_their_kernels_names() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/fp8_matmul_2d/tpu7x+v6e/v3@tpu7x");
        let names = KernelNames::of_dir(&dir);
        let ops: Vec<&str> =
            names.operands("fp8_mm_v3").unwrap_or_default().iter().map(|n| n.as_deref().unwrap_or("?")).collect();
        assert_eq!(ops, ["xs_ref", "ws_ref", "x_hbm", "w_hbm", "o_ref", "xbuf", "wbuf", "sem"]);
    }
}
