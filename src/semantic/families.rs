//! Op families: one name for what each layer spells differently (`dot` is HLO `dot`/`convolution`, StableHLO
//! `dot_general`, Mosaic `tpu.matmul`, LLO `vmatmul*`). This table is the one spelling of the op vocabulary: rule
//! packs name its families (`select: { op: dot }`), and the predicates of [`super::op`] that the analyses, the
//! performance model and the summaries ask are each one family of it, so a rule and an analysis mean the same op
//! by one word.

use crate::ir::Layer;
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::sync::OnceLock;

/// An op family: opcode globs per layer (empty: the layer has no such op). In a glob `*` matches any run of
/// characters, dots included (the table uses no other wildcard).
pub struct Family {
    pub name: &'static str,
    pub doc: &'static str,
    pub hlo: &'static [&'static str],
    pub stablehlo: &'static [&'static str],
    pub mosaic: &'static [&'static str],
    pub llo: &'static [&'static str],
    /// The globs compiled, one set per layer (in [`LAYERS`] order), on the first match.
    sets: &'static OnceLock<[GlobSet; 4]>,
}

/// The layers, in the order of a family's compiled sets.
const LAYERS: [Layer; 4] = [Layer::Hlo, Layer::StableHlo, Layer::Mosaic, Layer::Llo];

/// `layer`'s position in [`LAYERS`].
fn slot(layer: Layer) -> usize {
    match layer {
        Layer::Hlo => 0,
        Layer::StableHlo => 1,
        Layer::Mosaic => 2,
        Layer::Llo => 3,
    }
}

impl Family {
    /// Whether `opcode` of `layer` belongs to the family.
    pub fn matches(&self, layer: Layer, opcode: &str) -> bool {
        let sets = self.sets.get_or_init(|| LAYERS.map(|l| compile(self.name, self.patterns(l))));
        sets[slot(layer)].is_match(opcode)
    }

    pub fn patterns(&self, layer: Layer) -> &'static [&'static str] {
        match layer {
            Layer::Hlo => self.hlo,
            Layer::StableHlo => self.stablehlo,
            Layer::Mosaic => self.mosaic,
            Layer::Llo => self.llo,
        }
    }
}

/// One layer's globs of family `name` as one set. `*` crosses `/` too (`literal_separator` off; opcodes hold
/// none anyway) and `\` is no escape. The table is fixed: a bad glob fails the family's first match, and the tests
/// match every family.
fn compile(name: &str, patterns: &[&str]) -> GlobSet {
    let mut set = GlobSetBuilder::new();
    for p in patterns {
        let glob = GlobBuilder::new(p).literal_separator(false).backslash_escape(false).build();
        set.add(glob.unwrap_or_else(|e| panic!("op family `{name}`: bad glob `{p}`: {e}")));
    }
    set.build().unwrap_or_else(|e| panic!("op family `{name}`: {e}"))
}

macro_rules! fam {
    ($name:literal, $doc:literal, hlo: [$($h:literal),*], stablehlo: [$($s:literal),*], mosaic: [$($m:literal),*], llo: [$($l:literal),*]) => {
        Family {
            name: $name,
            doc: $doc,
            hlo: &[$($h),*],
            stablehlo: &[$($s),*],
            mosaic: &[$($m),*],
            llo: &[$($l),*],
            sets: {
                static SETS: OnceLock<[GlobSet; 4]> = OnceLock::new();
                &SETS
            },
        }
    };
}

pub static FAMILIES: &[Family] = &[
    fam!("dot", "matrix multiplies: HLO dot/convolution (TPU dots often print as convolution), StableHLO dot_general, Mosaic tpu.matmul, LLO vmatmul",
        hlo: ["dot", "convolution", "ragged-dot", "scaled-dot"],
        stablehlo: ["stablehlo.dot", "stablehlo.dot_general", "stablehlo.convolution", "chlo.ragged_dot"],
        mosaic: ["tpu.matmul", "vector.contract", "llo.vmatmul*"],
        llo: ["vmatmul*"]),
    fam!("dot-general", "the dots of the `dot` family that contract named dimensions: HLO dot, StableHLO dot/dot_general (not convolutions, ragged or scaled dots)",
        hlo: ["dot"], stablehlo: ["stablehlo.dot", "stablehlo.dot_general"], mosaic: [], llo: []),
    fam!("convolution", "the convolutions of the `dot` family (how XLA often writes a TPU matmul after layout assignment): HLO convolution, StableHLO convolution",
        hlo: ["convolution"], stablehlo: ["stablehlo.convolution"], mosaic: [], llo: []),
    fam!("dot-accumulate", "the dots of the `dot` family whose third operand is the accumulator: Mosaic tpu.matmul, vector.contract",
        hlo: [], stablehlo: [], mosaic: ["tpu.matmul", "vector.contract"], llo: []),
    fam!("convert", "element type conversions: HLO convert, StableHLO convert, arith ext/trunc/int-float casts",
        hlo: ["convert", "stochastic-convert"],
        stablehlo: ["stablehlo.convert"],
        mosaic: ["arith.extf", "arith.truncf", "arith.sitofp", "arith.uitofp", "arith.fptosi", "arith.fptoui", "tpu.extf", "tpu.truncf", "tpu.fptosi", "tpu.sitofp"],
        llo: ["vcvt*", "vpack*", "vunpack*"]),
    fam!("async-start", "the start of an asynchronous HLO op: copy-start, all-gather-start, collective-permute-start, send, recv, async-start, ...",
        hlo: ["*-start", "send", "recv"], stablehlo: ["stablehlo.async_start", "stablehlo.send", "stablehlo.recv"], mosaic: [], llo: []),
    fam!("async-update", "async-update",
        hlo: ["*-update"], stablehlo: ["stablehlo.async_update"], mosaic: [], llo: []),
    fam!("async-done", "the done of an asynchronous HLO op: copy-done, all-gather-done, send-done, recv-done, async-done, ...",
        hlo: ["*-done"], stablehlo: ["stablehlo.async_done"], mosaic: [], llo: []),
    fam!("collective", "cross-device communication",
        hlo: ["all-gather*", "all-reduce*", "reduce-scatter", "collective-permute*", "collective-broadcast", "all-to-all", "ragged-all-to-all", "send", "send-done", "recv", "recv-done"],
        stablehlo: ["stablehlo.all_gather", "stablehlo.all_reduce", "stablehlo.reduce_scatter", "stablehlo.collective_permute", "stablehlo.collective_broadcast", "stablehlo.all_to_all", "stablehlo.send", "stablehlo.recv"],
        mosaic: ["tpu.sem_signal"], llo: []),
    fam!("dma-start", "the start of a DMA in a kernel: tpu.enqueue_dma (and indirect, and future spellings); LLO dma.*",
        hlo: [], stablehlo: [],
        mosaic: ["*.enqueue_dma*", "*.enqueue_indirect_dma*", "*.dma_start*", "*.async_copy_start*"],
        llo: ["dma.*"]),
    fam!("dma-wait", "the wait for a DMA: tpu.wait_dma, tpu.wait_dma2, tpu.wait_indirect_dma; LLO sync-flag waits",
        hlo: [], stablehlo: [],
        mosaic: ["*.wait_dma*", "*.wait_indirect_dma*", "*.dma_wait*", "*.dma_done*"],
        llo: ["vwait*", "swait*", "dma.done*", "dma.wait*"]),
    fam!("indirect-dma", "a gather or scatter DMA by row offsets: tpu.enqueue_indirect_dma and its tpu.wait_indirect_dma",
        hlo: [], stablehlo: [], mosaic: ["*.enqueue_indirect_dma*", "*.wait_indirect_dma*"], llo: []),
    fam!("semaphore", "every semaphore op of a kernel: signals, waits, tpu.sem_alloc, tpu.sem_barrier, tpu.sem_read",
        hlo: [], stablehlo: [], mosaic: ["*.sem_*"], llo: []),
    fam!("semaphore-signal", "tpu.sem_signal: adds units to a semaphore, locally or on another device",
        hlo: [], stablehlo: [], mosaic: ["*.sem_signal*"], llo: []),
    fam!("semaphore-wait", "tpu.sem_wait: blocks until a semaphore holds an amount, and takes it",
        hlo: [], stablehlo: [], mosaic: ["*.sem_wait*"], llo: []),
    fam!("semaphore-alloc", "a semaphore the kernel makes itself: scratch (tpu.sem_alloc) or a collective's barrier (tpu.sem_barrier)",
        hlo: [], stablehlo: [], mosaic: ["*.sem_alloc*", "*.sem_barrier*"], llo: []),
    fam!("loop", "loops: HLO while, StableHLO while, scf.for/while, LLO loops",
        hlo: ["while"], stablehlo: ["stablehlo.while"], mosaic: ["scf.for", "scf.while", "scf.parallel", "scf.forall"], llo: ["loop"]),
    fam!("counted-loop", "the loops of the `loop` family with a lower bound, upper bound and step as operands 0-2: scf.for",
        hlo: [], stablehlo: [], mosaic: ["scf.for"], llo: []),
    fam!("conditional", "branches: HLO conditional, StableHLO if/case, scf.if/index_switch",
        hlo: ["conditional"], stablehlo: ["stablehlo.if", "stablehlo.case"], mosaic: ["scf.if", "scf.index_switch"], llo: []),
    fam!("custom-call", "custom calls (a Pallas kernel is one: target tpu_custom_call)",
        hlo: ["custom-call"], stablehlo: ["stablehlo.custom_call"], mosaic: [], llo: []),
    fam!("fusion", "XLA fusions", hlo: ["fusion"], stablehlo: [], mosaic: [], llo: []),
    fam!("call", "calls", hlo: ["call"], stablehlo: ["func.call"], mosaic: ["func.call"], llo: []),
    fam!("parameter", "computation parameters", hlo: ["parameter"], stablehlo: [], mosaic: [], llo: []),
    fam!("constant", "constants", hlo: ["constant", "iota"], stablehlo: ["stablehlo.constant", "stablehlo.iota"], mosaic: ["arith.constant", "llo.constant"], llo: []),
    fam!("copy-start", "the start of XLA's asynchronous copy (into or out of VMEM, or a cross-program prefetch): HLO copy-start",
        hlo: ["copy-start"], stablehlo: [], mosaic: [], llo: []),
    fam!("copy", "copies", hlo: ["copy"], stablehlo: [], mosaic: ["memref.copy"], llo: []),
    fam!("bitcast", "bit casts and layout-only changes",
        hlo: ["bitcast", "bitcast-convert"], stablehlo: ["stablehlo.bitcast_convert"],
        mosaic: ["arith.bitcast", "tpu.bitcast", "vector.bitcast", "tpu.memref_bitcast"], llo: []),
    fam!("reshape", "reshapes", hlo: ["reshape", "dynamic-reshape"], stablehlo: ["stablehlo.reshape"],
        mosaic: ["vector.shape_cast", "tpu.reshape", "tpu.memref_reshape"], llo: []),
    fam!("transpose", "transposes", hlo: ["transpose"], stablehlo: ["stablehlo.transpose"], mosaic: ["tpu.transpose", "vector.transpose"], llo: []),
    fam!("broadcast", "broadcasts", hlo: ["broadcast"], stablehlo: ["stablehlo.broadcast_in_dim", "stablehlo.broadcast"],
        mosaic: ["vector.broadcast", "tpu.broadcast*"], llo: []),
    fam!("slice", "slices and views", hlo: ["slice", "dynamic-slice"], stablehlo: ["stablehlo.slice", "stablehlo.dynamic_slice"],
        mosaic: ["tpu.memref_slice", "tpu.memref_squeeze", "memref.subview", "vector.extract_strided_slice"], llo: []),
    fam!("view", "ops that only view a memref, moving no data: tpu.memref_slice/squeeze/reshape/bitcast, reinterpret casts, memref.subview, ...",
        hlo: [], stablehlo: [],
        mosaic: ["*.memref_slice*", "*.memref_squeeze*", "*.memref_reshape*", "*.memref_bitcast*", "*.memref_cast", "*.reinterpret_cast*",
            "memref.subview", "memref.reshape", "memref.collapse_shape", "memref.expand_shape", "memref.cast", "memref.view", "memref.bitcast"],
        llo: []),
    fam!("tuple", "tuples and their elements", hlo: ["tuple", "get-tuple-element"], stablehlo: [], mosaic: [], llo: []),
    fam!("load", "reads of memory that are not DMAs: vector.load, memref.load, tpu.load, tpu.strided_load, LLO vector loads and sld, gathers",
        hlo: [], stablehlo: [],
        mosaic: ["vector.*load*", "memref.load", "tpu.*load*", "llo.vector_load*", "llo.sld", "llvm.load", "*.gather*"], llo: ["vld*", "sld*"]),
    fam!("store", "writes of memory that are not DMAs: vector.store, memref.store, tpu.store, tpu.strided_store, LLO vector stores and sst, scatters",
        hlo: [], stablehlo: [],
        mosaic: ["vector.*store*", "memref.store", "tpu.*store*", "llo.vector_store*", "llo.sst", "llvm.store", "*.scatter*"], llo: ["vst*", "sst*"]),
    fam!("scalar-access", "a memref access of one element (memref.load, memref.store: SMEM scalars, not a buffer's data)",
        hlo: [], stablehlo: [], mosaic: ["memref.load", "memref.store"], llo: []),
    fam!("mxu", "every MXU instruction (push weights, prepare, multiply, pop results)", hlo: [], stablehlo: [], mosaic: [],
        llo: ["vmat*", "vllmr*"]),
    fam!("mxu-feed", "the MXU ops that take a matmul's operands before it: LLO vmatprep and vmatpush (weights)",
        hlo: [], stablehlo: [], mosaic: ["*.vmatprep*", "*.vmatpush*"], llo: ["vmatprep*", "vmatpush*"]),
    fam!("mxu-result", "the MXU ops that give a matmul's result: LLO vmatres, which pops it",
        hlo: [], stablehlo: [], mosaic: ["*.vmatres*", "*.matres*"], llo: ["vmatres*"]),
    fam!("elementwise-multiply", "elementwise multiplies", hlo: ["multiply"], stablehlo: ["stablehlo.multiply"],
        mosaic: ["arith.mulf", "arith.muli"], llo: ["vmul*"]),
];

pub fn family(name: &str) -> Option<&'static Family> {
    FAMILIES.iter().find(|f| f.name == name)
}

/// The position of family `name` in [`FAMILIES`]: its bit in [`membership`].
pub fn index(name: &str) -> Option<usize> {
    FAMILIES.iter().position(|f| f.name == name)
}

/// How many distinct opcodes a thread remembers per layer; past that, opcodes are matched afresh each time.
const MEMO_CAPACITY: usize = 4096;

/// The families an opcode of `layer` belongs to, bit `i` for `FAMILIES[i]`. The analyses ask in hot loops about
/// the few hundred opcodes a compilation has, so each thread matches an opcode against every family once and
/// remembers the answer (up to [`MEMO_CAPACITY`] opcodes per layer).
pub fn membership(layer: Layer, opcode: &str) -> u64 {
    thread_local! {
        static SEEN: RefCell<[FxHashMap<Box<str>, u64>; 4]> = RefCell::default();
    }
    let of = |opcode: &str| {
        FAMILIES.iter().enumerate().filter(|(_, f)| f.matches(layer, opcode)).fold(0, |bits, (i, _)| bits | 1 << i)
    };
    SEEN.with(|seen| {
        let mut seen = seen.borrow_mut();
        let memo = &mut seen[slot(layer)];
        if let Some(&bits) = memo.get(opcode) {
            return bits;
        }
        let bits = of(opcode);
        if memo.len() < MEMO_CAPACITY {
            memo.insert(opcode.into(), bits);
        }
        bits
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names are unique kebab-case words with a doc; every glob compiles, and a glob without `*` is the one opcode
    /// it names.
    #[test]
    fn every_family_is_named_documented_and_compiles() {
        for (i, f) in FAMILIES.iter().enumerate() {
            assert!(f.name.bytes().all(|b| b.is_ascii_lowercase() || b == b'-'), "{}", f.name);
            assert!(!f.doc.is_empty() && FAMILIES[..i].iter().all(|g| g.name != f.name), "{}", f.name);
            for l in LAYERS {
                for p in f.patterns(l).iter().filter(|p| !p.contains('*')) {
                    assert!(f.matches(l, p) && !f.matches(l, &format!("{p}x")), "{}: {p}", f.name);
                }
            }
        }
    }

    /// The narrower dot families name no opcode the `dot` family lacks: an analysis that asks one of them of a
    /// matmul asks about a part of the same ops.
    #[test]
    fn narrower_dots_are_dots() {
        let dot = family("dot").unwrap();
        for name in ["dot-general", "convolution", "dot-accumulate"] {
            let f = family(name).unwrap();
            for l in LAYERS {
                for p in f.patterns(l) {
                    assert!(!p.contains('*') && dot.matches(l, p), "{name}: {p} is not a `dot` of {}", l.name());
                }
            }
        }
    }

    /// A family is one bit of a `u64`, and the remembered answer is the match.
    #[test]
    fn membership_is_the_match() {
        assert!(FAMILIES.len() <= 64, "{} families: membership's bits are a u64", FAMILIES.len());
        for (l, o) in
            [(Layer::Mosaic, "tpu.wait_dma2"), (Layer::Hlo, "dot"), (Layer::Mosaic, "llo.sld"), (Layer::Llo, "sld")]
        {
            for _ in 0..2 {
                for (i, f) in FAMILIES.iter().enumerate() {
                    assert_eq!(membership(l, o) >> i & 1 == 1, f.matches(l, o), "{}: {o}", f.name);
                }
            }
        }
    }

    /// `*` is any run of characters, dots included; dots and dashes are themselves; a glob matches the whole opcode.
    #[test]
    fn globs_match_whole_opcodes() {
        let f = |name| family(name).unwrap();
        assert!(f("async-start").matches(Layer::Hlo, "all-gather-start"));
        assert!(!f("async-start").matches(Layer::Hlo, "all-gather-start.1"));
        assert!(
            f("dma-start").matches(Layer::Mosaic, "tpu.enqueue_dma")
                && f("dma-start").matches(Layer::Llo, "dma.hbm_to_vmem")
        );
        assert!(
            f("dot").matches(Layer::Llo, "vmatmul.mubr.f8e4m3fn.mxu0") && !f("dot").matches(Layer::Llo, "xvmatmul")
        );
        assert!(f("dot").matches(Layer::Mosaic, "tpu.matmul") && !f("dot").matches(Layer::Mosaic, "tpuxmatmul"));
        assert!(!f("dot").matches(Layer::Mosaic, "dot") && !f("dot").matches(Layer::Hlo, "tpu.matmul"));
        assert!(
            f("load").matches(Layer::Mosaic, "llo.vector_load_unpack")
                && !f("load").matches(Layer::Mosaic, "llo.dma_load")
        );
    }
}
