//! XLA HLO text → `ir::Module` (layer `Hlo`). Grammar: XLA's `hlo_parser.cc` (see docs/hlo-grammar notes).
