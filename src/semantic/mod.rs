//! What the compiler's output means, above its syntax: the TPU generations ([`tpu`]), what an opcode does across
//! jax versions' spellings: the op families, spelled once per layer, that rule packs name ([`families`]) and the
//! predicates the analyses ask, one family each ([`op`]); a Mosaic kernel read as Pallas wrote it ([`kernel`]), HLO
//! asynchronous pairs ([`async_pairs`]), LLO bundle mnemonics: MXU ops and formats, DMAs, sync flags, SMEM, the
//! entry's operands ([`llo`]). The parsers keep only syntax; the analyses, the performance model and the summaries
//! read meaning from here.

pub mod async_pairs;
pub mod families;
pub mod kernel;
pub mod link;
pub mod llo;
pub mod op;
pub mod tpu;
