//! `smem-scales`, the analysis behind the rule of the same name: what it checks and how is [`DOC`]; why a hit
//! matters is the rule's `doc` (rules/v3-smem.yaml). The code: `analyze_kernel` follows each memref argument's
//! loaded values forward (`ScaleFlow`: through the ops that keep a scale a scale, to a multiply, a matmul or a
//! store) into one `ArgUse` per argument; `check_kernels` compares each use with the argument's memory space and
//! size and words the hits.

use super::{At, Hit, Options};
use crate::ir::mlir_type::MlirType;
use crate::ir::{BlockId, Def, FuncId, Layer, Module, OpId};
use crate::lint::Compilation;
use crate::semantic::kernel::{self, ArgRole, Kernel};
use crate::semantic::op::{is_constant, is_load, is_matmul_input, is_matmul_output, is_store, is_view, op_name};
use std::collections::{HashMap, HashSet};

pub const DEFAULT_MAX_SCALE_ELEMENTS: i64 = 4096;

/// Ops that keep a value's meaning (a scale stays a scale): shape changes, broadcasts, extracts, float casts,
/// vector↔scalar moves.
fn keeps_scale(opcode: &str) -> bool {
    let b = op_name(opcode);
    [
        "broadcast",
        "shape_cast",
        "extract",
        "splat",
        "extf",
        "truncf",
        "bitcast",
        "vbitcast",
        "vtos",
        "stov",
        "reshape",
        "convert",
        "squeeze",
        "expand_dims",
        "vbroadcast",
        "scalar_to_vector",
        "vsplat",
    ]
    .iter()
    .any(|p| b.starts_with(p))
}

/// A floating multiply (and division by operand 1).
fn is_mul(opcode: &str) -> bool {
    let b = op_name(opcode);
    b == "mulf" || b.starts_with("vmul.f") || b.starts_with("smul.f") || b == "multiply"
}

fn is_div(opcode: &str) -> bool {
    let b = op_name(opcode);
    b == "divf" || b.starts_with("vdiv.f") || b.starts_with("sdiv.f") || b == "divide"
}

type VKey = (u8, u32, u32);

fn vkey(d: Def) -> VKey {
    match d {
        Def::Op { op, index } => (0, op.0, index),
        Def::BlockArg { block, index } => (1, block.0, index),
        Def::Unresolved => (2, 0, 0),
    }
}

/// The MLIR type of a value.
fn value_type<'m, 'a>(m: &'m Module<'a>, d: Def) -> Option<&'m MlirType<'a>> {
    match d {
        Def::Op { op, index } => m.op(op).ty.mlir()?.result(index as usize),
        Def::BlockArg { block, index } => m.blocks.get(block.idx())?.args.get(index as usize)?.ty.mlir(),
        Def::Unresolved => None,
    }
}

/// One element: a scalar, or a shaped value of one element.
fn is_single(t: Option<&MlirType<'_>>) -> bool {
    match t {
        Some(MlirType::Scalar { .. }) => true,
        Some(MlirType::Shaped(s)) => s.num_elements() == Some(1),
        _ => false,
    }
}

/// The kernel argument a memref (or, at LLO stages, an address) is a view of: through view ops and address
/// arithmetic (`llo.saddr_scaled(%arg4, ...)`, `llo.sadd`), only to memref-typed arguments.
fn base_arg(m: &Module<'_>, entry: Option<BlockId>, k: &Kernel<'_>, d: Def, depth: u32) -> Option<usize> {
    if depth > 16 {
        return None;
    }
    match d {
        Def::BlockArg { block, index } if Some(block) == entry => {
            let a = k.args.get(index as usize)?;
            a.ty.as_ref().is_some_and(MlirType::is_memref).then_some(index as usize)
        }
        Def::Op { op, .. } => {
            let o = m.op(op);
            let b = op_name(o.opcode);
            // any `tpu.memref_*` beyond the known views too: an address is followed through what keeps it one
            let view = is_view(o.opcode) || b.starts_with("memref_");
            let addr = b.starts_with("saddr") || b.starts_with("sadd") || b.starts_with("addr");
            if !view && !addr {
                return None;
            }
            o.operands
                .iter()
                .filter(|x| x.role != Some("indices"))
                .find_map(|x| base_arg(m, entry, k, x.def, depth + 1))
        }
        _ => None,
    }
}

/// Whether a value is a constant (or a broadcast/cast of one).
fn is_constlike(m: &Module<'_>, d: Def, depth: u32) -> bool {
    let Def::Op { op, .. } = d else { return false };
    let o = m.op(op);
    if is_constant(o.opcode) || op_name(o.opcode) == "vconst" {
        return true;
    }
    depth < 8 && keeps_scale(o.opcode) && o.operands.first().is_some_and(|x| is_constlike(m, x.def, depth + 1))
}

/// Whether a value is computed from a matmul result (bounded backward walk).
fn from_matmul(m: &Module<'_>, d: Def) -> bool {
    let mut stack = vec![d];
    let mut seen = HashSet::new();
    while let Some(d) = stack.pop() {
        let Def::Op { op, .. } = d else { continue };
        if !seen.insert(op) || seen.len() > 256 {
            continue;
        }
        let o = m.op(op);
        if is_matmul_output(o.opcode) {
            return true;
        }
        stack.extend(o.operands.iter().map(|x| x.def));
    }
    false
}

/// What the kernel does with one argument's loaded values.
#[derive(Default, Debug)]
struct ArgUse {
    loads: Vec<OpId>,
    stored: bool,
    /// A loaded value (through shape-only ops) is a matmul operand.
    matmul_operand: Option<OpId>,
    /// Multiplies of a non-scale value by a single-element factor derived from this argument: (mul op, the
    /// multiplied value comes from a matmul).
    scale_uses: Vec<(OpId, bool)>,
}

#[derive(Clone)]
struct Derived {
    args: Vec<usize>,
    /// Reduced to one element somewhere on the way.
    single: bool,
    /// Only shape-preserving ops since the load (no multiply with another scale).
    raw: bool,
}

/// The forward walk of one kernel: from the loads of its arguments through what their values become.
struct ScaleFlow<'m, 'a> {
    m: &'m Module<'a>,
    uses: HashMap<usize, ArgUse>,
    vals: HashMap<VKey, Derived>,
    work: Vec<Def>,
}

impl ScaleFlow<'_, '_> {
    /// Records the kernel's loads and stores of its arguments; each loaded value starts the walk.
    fn seed(&mut self, f: FuncId, k: &Kernel<'_>) {
        let m = self.m;
        let entry = m.regions[m.func(f).body.idx()].blocks.first().copied();
        for &id in &m.func_ops(f) {
            let o = m.op(id);
            if is_load(o.opcode) {
                let r = o.operands.iter().find(|x| x.role.is_none() || x.role == Some("base") || x.role == Some("ref"));
                if let Some(a) = r.and_then(|r| base_arg(m, entry, k, r.def, 0)) {
                    self.uses.entry(a).or_default().loads.push(id);
                    let d = Def::Op { op: id, index: 0 };
                    self.vals
                        .insert(vkey(d), Derived { args: vec![a], single: is_single(value_type(m, d)), raw: true });
                    self.work.push(d);
                }
            } else if is_store(o.opcode) {
                for x in &o.operands {
                    if let Some(a) = base_arg(m, entry, k, x.def, 0) {
                        self.uses.entry(a).or_default().stored = true;
                    }
                }
            }
        }
    }

    /// Merges `new` into what `out` derives from; `out` is walked again when that grew.
    fn propagate(&mut self, out: Def, new: Derived) {
        let e = self.vals.entry(vkey(out)).or_insert_with(|| Derived { args: Vec::new(), single: false, raw: new.raw });
        let mut grew = false;
        for a in new.args {
            if !e.args.contains(&a) {
                e.args.push(a);
                grew = true;
            }
        }
        if new.single && !e.single {
            e.single = true;
            grew = true;
        }
        if grew {
            self.work.push(out);
        }
    }

    /// What user `u` of value `d` (derived as `cur`) does with it: a matmul operand, a shape-only op, or a
    /// multiply or divide by a scale.
    fn follow_use(&mut self, d: Def, cur: &Derived, u: OpId) {
        let m = self.m;
        let uo = m.op(u);
        let positions: Vec<usize> =
            uo.operands.iter().enumerate().filter(|(_, x)| x.def == d).map(|(i, _)| i).collect();
        if positions.is_empty() {
            return;
        }
        let out = Def::Op { op: u, index: 0 };
        if is_matmul_input(uo.opcode) {
            if cur.raw {
                for &a in &cur.args {
                    self.uses.entry(a).or_default().matmul_operand.get_or_insert(u);
                }
            }
            return;
        }
        if keeps_scale(uo.opcode) {
            let single = cur.single || is_single(value_type(m, out));
            self.propagate(out, Derived { args: cur.args.clone(), single, raw: cur.raw });
            return;
        }
        let mul = is_mul(uo.opcode);
        let div = is_div(uo.opcode) && positions == [1];
        if !(mul || div) || uo.operands.len() < 2 {
            return;
        }
        let other_pos = if positions.contains(&0) { 1 } else { 0 };
        if positions.len() >= 2 {
            // x * x: a square, still the same scale
            self.propagate(out, Derived { args: cur.args.clone(), single: cur.single, raw: false });
            return;
        }
        let other = uo.operands[other_pos].def;
        if let Some(o2) = self.vals.get(&vkey(other)).cloned() {
            // scale × scale (x_scale * w_scale): the product is a scale of both
            let mut args = cur.args.clone();
            args.extend(o2.args.iter().copied());
            self.propagate(out, Derived { args, single: cur.single || o2.single, raw: false });
        } else if is_constlike(m, other, 0) {
            self.propagate(out, Derived { args: cur.args.clone(), single: cur.single, raw: false });
        } else if cur.single {
            let mm = from_matmul(m, other);
            for &a in &cur.args {
                let e = self.uses.entry(a).or_default();
                if !e.scale_uses.iter().any(|x| x.0 == u) {
                    e.scale_uses.push((u, mm));
                }
            }
        }
    }
}

fn analyze_kernel(m: &Module<'_>, f: FuncId, k: &Kernel<'_>) -> HashMap<usize, ArgUse> {
    let mut flow = ScaleFlow { m, uses: HashMap::new(), vals: HashMap::new(), work: Vec::new() };
    flow.seed(f, k);
    let mut steps = 0usize;
    while let Some(d) = flow.work.pop() {
        steps += 1;
        if steps > 100_000 {
            break;
        }
        let Some(cur) = flow.vals.get(&vkey(d)).cloned() else { continue };
        let Def::Op { op: def_op, .. } = d else { continue };
        let users = m.op(def_op).users.clone();
        for u in users {
            flow.follow_use(d, &cur, u);
        }
    }
    flow.uses
}

fn role_text(r: ArgRole) -> String {
    match r {
        ArgRole::GridIndex(i) => format!("grid index {i}"),
        ArgRole::ScalarPrefetch(i) => format!("scalar-prefetch operand {i}"),
        ArgRole::Window(i) => format!("kernel operand {i} (pipelined window)"),
        ArgRole::Operand(i) => format!("kernel operand {i}"),
        ArgRole::Scratch(i) => format!("scratch operand {i}"),
    }
}

/// The memref as written, without the LLO tiling (`memref<4x4x1x1xf32, #tpu.memory_space<vmem>>`).
fn memref_text(t: &MlirType<'_>) -> String {
    match t.shaped() {
        Some(s) => {
            let dims =
                s.static_dims().map(|d| d.iter().map(|x| format!("{x}x")).collect::<String>()).unwrap_or_default();
            let elem = s.elem.dtype().map(|d| d.name().to_string()).unwrap_or_else(|| s.elem.to_string());
            match s.memory_space {
                Some(ms) => format!("memref<{dims}{elem}, {ms}>"),
                None => format!("memref<{dims}{elem}>"),
            }
        }
        None => t.to_string(),
    }
}

/// One float memref argument of a kernel, as its findings describe it.
struct ArgSite<'s, 'm, 'a> {
    m: &'m Module<'a>,
    unit: usize,
    /// A kernel decoded from a custom call: findings point at ops, not at the argument.
    decoded: bool,
    func: &'m crate::ir::Func<'a>,
    a: &'s kernel::KernelArg<'a>,
    memref: String,
}

impl ArgSite<'_, '_, '_> {
    /// Where a finding about the argument shown at `op` points: the op in a decoded body, else the argument.
    fn at(&self, op: OpId) -> At {
        let unit = self.unit;
        if self.decoded {
            At::Op { unit, op }
        } else {
            match self.func.params.get(self.a.index) {
                Some(p) => At::Span { unit, span: p.span },
                None => At::Op { unit, op },
            }
        }
    }
}

/// The `scales-in-vmem` finding: a scale table outside SMEM, read with a vector load per block.
fn scales_in_vmem_hit(site: &ArgSite<'_, '_, '_>, u: &ArgUse, space: &str) -> Hit {
    let (m, a, unit, memref) = (site.m, site.a, site.unit, &site.memref);
    let (mul, mm) = u.scale_uses[0];
    let on = if mm { "the matmul result" } else { "data" };
    let load = u.loads.first().copied().unwrap_or(mul);
    let lop = m.op(load).opcode;
    let detail = format!(
        "{} ({}, {memref}) holds per-block scale factors in {}: each block's factor is read with `{lop}`, \
         reduced to one element and broadcast to multiply {on} (`{}`); in SMEM a scalar read would replace \
         the vector load and broadcast per block",
        crate::lint::names::arg_text(a),
        role_text(a.role),
        if space.is_empty() { "the default (VMEM) memory space".to_string() } else { space.to_uppercase() },
        m.op(mul).opcode,
    );
    Hit::new(site.at(mul), format!("scale table in {}", if space.is_empty() { "VMEM" } else { space }), detail)
        .capture("kind", "scales-in-vmem")
        .capture("arg", format!("%{}", a.name))
        .capture("memref", memref.clone())
        .with_label(At::Op { unit, op: load }, format!("vector load of one scale ({lop})"))
        .with_label(At::Op { unit, op: mul }, format!("multiplies {on}"))
}

/// The `data-in-smem` finding for an SMEM argument used as a matmul operand or larger than `max_elems`.
fn data_in_smem_hit(site: ArgSite<'_, '_, '_>, u: &ArgUse, elems: Option<i64>, max_elems: i64) -> Option<Hit> {
    let (m, a, unit) = (site.m, site.a, site.unit);
    let small = elems.is_some_and(|n| n <= max_elems);
    let (why, at) = if let Some(mm) = u.matmul_operand {
        (format!("its loaded values are an operand of `{}`", m.op(mm).opcode), mm)
    } else if !small && !u.loads.is_empty() {
        (format!("it holds {} elements (more than {max_elems})", elems.unwrap_or(0)), u.loads[0])
    } else {
        return None;
    };
    let detail = format!(
        "{} ({}, {}) is data placed in SMEM: {why}; SMEM is for scalars (indices, per-block \
         scales), read one word at a time, and data belongs in VMEM",
        crate::lint::names::arg_text(a),
        role_text(a.role),
        site.memref
    );
    Some(
        Hit::new(site.at(at), "data in SMEM", detail)
            .capture("kind", "data-in-smem")
            .capture("arg", format!("%{}", a.name))
            .capture("memref", site.memref)
            .with_label(At::Op { unit, op: at }, "used as data here"),
    )
}

pub fn check_module(m: &Module<'_>, unit: usize, decoded: bool, max_elems: i64) -> Vec<Hit> {
    check_kernels(m, kernel::kernels(m), unit, decoded, max_elems)
}

/// The hits of kernels `ks` of module `m` (named by their authors when the compilation knows the names).
fn check_kernels(m: &Module<'_>, ks: Vec<Kernel<'_>>, unit: usize, decoded: bool, max_elems: i64) -> Vec<Hit> {
    let mut hits = Vec::new();
    if m.layer != Layer::Mosaic {
        return hits;
    }
    for k in ks {
        let uses = analyze_kernel(m, k.func, &k);
        let func = m.func(k.func);
        for a in &k.args {
            if matches!(a.role, ArgRole::GridIndex(_)) || a.semaphore {
                continue;
            }
            let Some(ty) = a.ty.as_ref().filter(|t| t.is_memref()) else { continue };
            let Some(dtype) = ty.dtype() else { continue };
            if !dtype.is_float() {
                continue;
            }
            let elems = ty.shaped().and_then(|s| s.num_elements());
            let small = elems.is_some_and(|n| n <= max_elems);
            let space = a.memory_space.unwrap_or("");
            let Some(u) = uses.get(&a.index) else { continue };
            let site = ArgSite { m, unit, decoded, func, a, memref: memref_text(ty) };
            let is_scale = small && !u.stored && u.matmul_operand.is_none() && !u.scale_uses.is_empty();
            if is_scale && space != "smem" {
                hits.push(scales_in_vmem_hit(&site, u, space));
            }
            if space == "smem" {
                hits.extend(data_in_smem_hit(site, u, elems, max_elems));
            }
        }
    }
    hits
}

pub fn run(c: &Compilation<'_>, unit: usize, opts: &Options) -> Vec<Hit> {
    let max = opts.get("max_scale_elements").and_then(|v| v.as_i64()).unwrap_or(DEFAULT_MAX_SCALE_ELEMENTS);
    match c.units.get(unit) {
        Some(u) => check_kernels(&u.module, c.named_kernels(unit, &u.module), unit, u.host.is_some(), max),
        None => Vec::new(),
    }
}

/// What the analysis checks, how, and what a hit says: shown by `hlolint explain smem-scales` and on the rule's page.
pub const DOC: &str = "Finds the quantization-scale operands of a Mosaic kernel and checks that they, and only they, \
are in SMEM. A scale operand is recognised by use, not name: a small (at most `max_scale_elements`, default 4096) \
f32/bf16 memref the kernel only reads, whose loaded values are reduced to one element (a scalar load, a \
single-element vector, `vtos`) and multiply (`arith.mulf`, `llo.vmul.f32`, through \
`vector.broadcast`/`shape_cast`/`extract`/`splat` or a product with another scale) a value that is not itself a \
scale (a matmul result or other data), and that is never a matmul operand. Per-lane factors (a vector multiplied \
lane by lane, e.g. a layer-norm gamma) are not scales in this sense: VMEM is right for them. kind \
`scales-in-vmem`: a scale operand in VMEM or ANY; `data-in-smem`: a floating-point operand in SMEM that feeds a \
matmul or is larger than `max_scale_elements`.";

/// How rule packs call this analysis (`analysis: smem-scales`).
pub static ANALYSIS: super::Analysis = super::Analysis {
    name: "smem-scales",
    layers: &[Layer::Mosaic],
    doc: DOC,
    captures: &["kind", "arg", "memref"],
    kinds: &["scales-in-vmem", "data-in-smem"],
    options: &[("max_scale_elements", "largest operand (in elements) still treated as a scale table; default 4096")],
    run,
    // reads no LLO op
    llo: super::LloReads::CrossLayerOps,
    shares: None,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::mlir::parse_mlir;

    fn hits(text: &str) -> Vec<Hit> {
        let m = parse_mlir("t.mlir", text).expect("parses");
        check_module(&m, 0, false, DEFAULT_MAX_SCALE_ELEMENTS)
    }

    fn kinds(text: &str) -> Vec<String> {
        hits(text).iter().map(|h| h.captures["kind"].clone()).collect()
    }

    fn case(name: &str) -> String {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/rules/smem-scales").join(name);
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    }

    #[test]
    fn scalar_prefetched_scales_in_smem_are_fine() {
        assert!(kinds(&case("valid/scales_in_smem.mlir")).is_empty());
    }

    #[test]
    fn a_vmem_scale_block_broadcast_onto_the_matmul_result_is_a_hit() {
        let h = hits(&case("invalid/scales_in_vmem.mlir"));
        assert_eq!(h.len(), 2, "{h:?}");
        assert!(h.iter().all(|h| h.captures["kind"] == "scales-in-vmem"));
        assert_eq!(h[0].captures["arg"], "%arg3");
        assert_eq!(h[0].captures["memref"], "memref<4x4x1x1xf32, #tpu.memory_space<vmem>>");
        assert!(h[0].captures["detail"].contains("matmul result"), "{}", h[0].captures["detail"]);
    }

    #[test]
    fn a_per_lane_factor_is_not_a_scale() {
        assert!(kinds(&case("valid/gamma_per_lane.mlir")).is_empty());
    }

    #[test]
    fn an_accumulator_the_kernel_writes_is_not_a_scale() {
        assert!(kinds(&case("valid/rescaled_accumulator.mlir")).is_empty());
    }

    #[test]
    fn a_matmul_operand_in_smem_is_data_in_smem() {
        let h = hits(&case("invalid/matmul_operand_in_smem.mlir"));
        assert_eq!(kinds(&case("invalid/matmul_operand_in_smem.mlir")), vec!["data-in-smem"]);
        assert!(h[0].captures["detail"].contains("tpu.matmul"), "{}", h[0].captures["detail"]);
    }

    #[test]
    fn hand_written_cases_under_tests_data() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/rules/smem-scales");
        for (sub, want) in [("valid", false), ("invalid", true)] {
            let mut n = 0;
            for p in crate::source::cases_in(&root.join(sub)) {
                if p.extension().and_then(|x| x.to_str()) != Some("mlir") {
                    continue;
                }
                n += 1;
                let h = hits(&std::fs::read_to_string(&p).unwrap());
                assert_eq!(!h.is_empty(), want, "{}: {h:?}", p.display());
            }
            assert!(n >= 2);
        }
    }

    #[test]
    fn fixture_versions() {
        use super::super::pipelining::real::{fixture_dirs, run_dir};
        for (v, d) in fixture_dirs() {
            let dir = d.file_name().unwrap().to_string_lossy().to_string();
            let h = run_dir(&d, "smem-scales");
            assert!(h.iter().all(|x| x.2.captures["kind"] == "scales-in-vmem"), "{dir}: no data in SMEM anywhere");
            let args: std::collections::BTreeSet<String> = h.iter().map(|x| x.2.captures["arg"].clone()).collect();
            let memrefs: std::collections::BTreeSet<String> =
                h.iter().map(|x| x.2.captures["memref"].clone()).collect();
            match v.as_str() {
                // scalar-prefetched (4, 4) f32 tables in SMEM
                "v3" => assert!(h.is_empty(), "{dir}: {h:?}"),
                // the planted bug: whole (4, 4, 1, 1) tables in VMEM
                "bug_scales_vmem" => {
                    assert_eq!(args.into_iter().collect::<Vec<_>>(), ["%arg4", "%arg5"], "{dir}");
                    assert_eq!(
                        memrefs.into_iter().collect::<Vec<_>>(),
                        ["memref<4x4x1x1xf32, #tpu.memory_space<vmem>>"]
                    );
                    assert!(
                        h.iter().any(|x| x.1 == "tpu_custom_call body") && h.iter().any(|x| x.1 == "post-finalize-llo")
                    );
                }
                // v2 and its bugs keep per-row (1, nk, 1, 1) scale blocks in VMEM by design (the rule is in the v3
                // pack only, so this hit is right and unused there)
                "v2" | "bug_unwaited_dma" | "bug_single_slot" | "bug_any_in_vmem" => {
                    assert_eq!(args.into_iter().collect::<Vec<_>>(), ["%arg4", "%arg5"], "{dir}");
                    assert_eq!(
                        memrefs.into_iter().collect::<Vec<_>>(),
                        ["memref<1x4x1x1xf32, #tpu.memory_space<vmem>>"]
                    );
                }
                // v1 pipelines (1, 1) VMEM scale blocks through its grid
                "v1" | "bug_upcast" => {
                    assert_eq!(args.into_iter().collect::<Vec<_>>(), ["%arg5", "%arg6"], "{dir}");
                    assert_eq!(
                        memrefs.into_iter().collect::<Vec<_>>(),
                        ["memref<1x1x1x1xf32, #tpu.memory_space<vmem>>"]
                    );
                }
                _ => {}
            }
        }
    }

    #[test]
    fn corpus_pallas_matmul_has_no_scales() {
        use super::super::pipelining::real::{corpus_dir, run_dir};
        for t in ["pallas_matmul@tpu7x", "pallas_matmul@v5e", "pallas_matmul@v6e"] {
            let Some(d) = corpus_dir(t) else { continue };
            assert!(run_dir(&d, "smem-scales").is_empty(), "{t}");
        }
    }
}
