//! XLA HLO text → `ir::Module` (layer `Hlo`). The grammar is XLA's own (`xla/hlo/parser/hlo_parser.cc`); the
//! notes in `docs/hlo-grammar.md` list what is accepted and why.

mod checks;
mod lex;
mod module;
pub mod shape;
pub mod value;

use crate::ir::Module;
use crate::parse::error::{PErr, SyntaxError};

/// Parses one HLO text file. Every name must resolve (as XLA requires); a dangling operand or computation name is
/// reported on its span.
pub fn parse_hlo<'a>(path: &str, text: &'a str) -> Result<Module<'a>, SyntaxError> {
    let mut parser = module::Parser::new(text);
    match parser.module() {
        Ok((module, unresolved)) => match unresolved.first() {
            None => match checks::first_bad_value(&module, &parser.windows.take()) {
                None => Ok(module),
                Some((at, expected)) => Err(SyntaxError::at("HLO", path, text, at, expected)),
            },
            Some(u) => Err(SyntaxError::at(
                "HLO",
                path,
                text,
                u.span.start as usize,
                format!("a defined {} (`{}` is not defined)", u.what, u.name),
            )),
        },
        Err(nom::Err::Error(e) | nom::Err::Failure(e)) => Err(SyntaxError::new("HLO", path, text, &e)),
        Err(nom::Err::Incomplete(_)) => Err(SyntaxError::new("HLO", path, text, &PErr::new("", "more input"))),
    }
}

/// Cheap content sniff: does this text start like an HLO module (after comments)?
pub fn looks_like_hlo(text: &str) -> bool {
    let Ok(t) = lex::sp(text) else { return false };
    if t.starts_with("HloModule ") || t.starts_with("HloModule\t") || t.starts_with("ENTRY ") {
        return true;
    }
    // Header-less module: `name {` or `%name (params) -> shape {` on the first line, then an instruction
    // `[ROOT] name = shape opcode(` on the second.
    let mut lines = t.lines();
    let first = lines.next().unwrap_or("");
    if lex::ident_len(first.trim_start_matches('%')) == 0 || !first.trim_end().ends_with('{') {
        return false;
    }
    let second = lines.next().unwrap_or("").trim_start();
    let second = second.strip_prefix("ROOT ").unwrap_or(second);
    let n = lex::ident_len(second.trim_start_matches('%'));
    let after = second.trim_start_matches('%').get(n..).unwrap_or("");
    after.strip_prefix(" = ").is_some_and(shape::starts_shape)
}
