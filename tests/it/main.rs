//! The integration tests, one binary with a module per area (one link instead of one per file).
//! Snapshots live in `tests/it/snapshots/`; shared helpers (the corpus, a seeded generator) in `common/`.

mod common;

mod assume;
mod bad_input;
mod bytecode;
mod cli;
mod compare;
mod compile_e2e;
mod fixtures_summary;
mod formats;
mod hlo_corpus;
mod hlo_grammar;
mod hook;
mod kernel_oracle;
mod layers;
mod linked_layers;
mod llo_corpus;
mod llo_partial;
mod llo_robust;
mod llo_samples;
mod manifest;
mod mlir_corpus;
mod mlir_parse;
mod perf;
mod real_kernels;
mod real_mutants;
mod robustness;
mod rule_language;
mod rules;
mod settings;
mod threads;
mod timings;
mod verdicts;
