//! The LLO mnemonic families, each spelled once. A family is a mnemonic's first `.` segment without trailing
//! digits ([`super::family`]: `vmatpush1.bf16.msra.mxu0` is `vmatpush`). What a family means — its
//! [`super::OpClass`], its MXU role, its sync kind — is decided in this module's parent by these names; the rule
//! packs' list of LLO families a rule may name (`rules::families::LLO_FAMILIES`) is [`FAMILIES`], and the LLO
//! globs of the op vocabulary (`semantic::families`) are held to it by a test, so a family added in one place is
//! known in the others.

/// The families, each a `pub const` and a line of [`FAMILIES`].
macro_rules! families {
    ($($(#[$doc:meta])* $c:ident = $s:literal;)*) => {
        $($(#[$doc])* pub const $c: &str = $s;)*
        /// Every LLO mnemonic family hlolint knows, in the order of this table: a rule may name them
        /// (`select: { op: vmatmul }`), and the mnemonics the linter reads are of these.
        pub static FAMILIES: &[&str] = &[$($c),*];
    };
}

families! {
    /// The MXU multiply, streaming LHS rows through the loaded weights (`vmatmul.mubr.f8e4m3fn...mxu0`).
    VMATMUL = "vmatmul";
    /// Pushes weights (RHS) into the MXU.
    VMATPUSH = "vmatpush";
    /// Prepares an MXU operand (`subr`, `mubr`).
    VMATPREP = "vmatprep";
    /// Pops an MXU result.
    VMATRES = "vmatres";
    /// Pops a result (of the MXU when a segment names one: `vpop.f32.mrf.mxu0`).
    VPOP = "vpop";
    /// An MXU op of the other families (`vllmr`).
    VLLMR = "vllmr";
    /// A DMA: `dma.hbm_to_vmem`, `dma.general`; `dma.done.wait` waits for one.
    DMA = "dma";
    /// A scalar load (`sld [smem:...]`).
    SLD = "sld";
    /// A scalar store (`sst [smem:...]`).
    SST = "sst";
    /// A vector load.
    VLD = "vld";
    /// A vector store.
    VST = "vst";
    /// The sync-flag ops, a family by prefix: `vsyncadd`, `vsyncpa`, `vsyncmov`, ...
    VSYNC = "vsync";
    /// Adds to a sync flag (a semaphore signal, or its reset after a wait); `vsyncadd.remote` on another core.
    VSYNCADD = "vsyncadd";
    /// Sets a sync flag.
    VSYNCPA = "vsyncpa";
    /// Waits until a sync flag meets a condition (`vwait.ge`).
    VWAIT = "vwait";
    /// A scalar-unit wait.
    SWAIT = "swait";
    /// A scalar-unit sync.
    SSYNC = "ssync";
    /// A (possibly predicated) branch; a loop's back edge is one.
    SBR = "sbr";
    /// A branch.
    BR = "br";
    /// A jump.
    SJMP = "sjmp";
    /// The end of the program.
    SHALT = "shalt";
    /// A loop marker (`loop start=... end=... backedge=...`), the parent of the loop's ops.
    LOOP = "loop";
    /// Where XLA placed one operand of the entry (`inlined_call_operand.vmem [shape: ..., index: 0, ...]`).
    INLINED_CALL_OPERAND = "inlined_call_operand";
    VADD = "vadd";
    VMUL = "vmul";
    VSUB = "vsub";
    VMAX = "vmax";
    VMIN = "vmin";
    /// A vector conversion; its first dtype segment is the source (`vcvt.s32.f32`).
    VCVT = "vcvt";
    /// A scalar conversion.
    SCVT = "scvt";
    /// Narrows into a packed vector (`vpack.c.e4m3fn`).
    VPACK = "vpack";
    /// Widens out of a packed vector (`vunpack.c.0.f8e4m3b11`).
    VUNPACK = "vunpack";
    VSEL = "vsel";
    VCMP = "vcmp";
    /// A scalar comparison (`scmp.lt.s32`): a loop's exit test.
    SCMP = "scmp";
    /// A scalar phi: a loop-carried register.
    SPHI = "sphi";
    SADD = "sadd";
    SMUL = "smul";
    SSUB = "ssub";
    /// A scalar move.
    SMOV = "smov";
    VMOV = "vmov";
    VBCAST = "vbcast";
    VROT = "vrot";
    VXPOSE = "vxpose";
    VDELAY = "vdelay";
    VNOP = "vnop";
    SNOP = "snop";
}

/// The families of the MXU by prefix (`vmatmul`, `vmatpush`, `vmatprep`, `vmatres`, and any later `vmat*`).
pub const VMAT: &str = "vmat";
/// A phi of any unit (`sphi`, `vphi`) ends in this.
pub const PHI_SUFFIX: &str = "phi";
/// A family (`vwait`, `swait`) or a segment (`dma.done.wait`) that names a wait.
pub const WAIT: &str = "wait";
/// A segment naming the MXU an op runs on (`mxu0`); any op with one is an MXU op.
pub const MXU_UNIT: &str = "mxu";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Layer;
    use crate::semantic::families::FAMILIES as OP_FAMILIES;

    /// Families are unique, and each is its own family (no `.`, no trailing digit).
    #[test]
    fn families_are_unique_words() {
        for (i, f) in FAMILIES.iter().enumerate() {
            assert!(!FAMILIES[..i].contains(f), "{f} twice");
            assert_eq!(super::super::family(f), *f, "{f} is not a family's spelling");
        }
    }

    /// The op vocabulary's LLO globs name families of this table: each glob's stem (before its first `*` or `.`)
    /// begins a family here, so an op family cannot match mnemonics the linter does not know.
    #[test]
    fn op_families_name_known_mnemonics() {
        for f in OP_FAMILIES {
            for p in f.patterns(Layer::Llo) {
                let stem = p.split(['*', '.']).next().unwrap_or(p);
                assert!(
                    FAMILIES.iter().any(|k| k.starts_with(stem)),
                    "op family {}: `{p}` names no LLO family",
                    f.name
                );
            }
        }
    }
}
