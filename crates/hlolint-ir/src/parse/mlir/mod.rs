//! MLIR text: StableHLO (`jax.jit(f).lower(...).as_text()`) and every Mosaic dump stage (`tpu.*`, `llo.*`).
//!
//! `parse_mlir` reads a file into `ir::Module` (layer `StableHlo` or `Mosaic`, decided from the content). The
//! parser is zero-copy over `&str` with byte spans on everything and reads any dialect: custom op syntaxes are
//! read generically (see `ops`), attributes become `ir::Value` token trees (see `attr`), and types get structure
//! where rules need it (`ir::MlirType`, see `types`).

pub mod attr;
pub mod build;
pub mod lex;
pub mod ops;
pub mod types;

use crate::ir::{Attr, Module};
use crate::parse::error::{PErr, PResult, SyntaxError};
use attr::{Ctx, Src};
use build::FileAst;
use lex::*;
use ops::{to_cut, Parser};

pub use lex::unescape_mlir;

/// Parses one MLIR text file (a `module`, or bare top-level ops) into the shared graph.
#[allow(clippy::result_large_err)] // the shared diagnostic type, returned once per file
pub fn parse_mlir<'a>(path: &str, text: &'a str) -> Result<Module<'a>, SyntaxError> {
    match file(text) {
        Ok((_, f)) => Ok(build::build(text, f)),
        Err(nom::Err::Error(e)) | Err(nom::Err::Failure(e)) => Err(SyntaxError::new("MLIR", path, text, &e)),
        Err(nom::Err::Incomplete(_)) => Err(SyntaxError::at("MLIR", path, text, text.len(), "more input".into())),
    }
}

/// Cheap format sniffing: does the text start like MLIR (`module`, `func.func`, a `#loc`/`#map` alias, a generic
/// `"builtin.module"`)?
pub fn looks_like_mlir(text: &str) -> bool {
    let head = ws(text.get(..text.len().min(4096)).unwrap_or(text));
    let head = head.trim_start_matches('\u{feff}');
    if head.starts_with("HloModule") {
        return false;
    }
    let first = head.split(|c: char| c.is_whitespace() || c == '{' || c == '@').next().unwrap_or("");
    matches!(first, "module" | "builtin.module" | "func.func" | "\"builtin.module\"()" | "\"func.func\"()")
        || head.starts_with('#') && head.contains(" = ") && (head.contains("loc(") || head.contains("affine_map<"))
        || head.starts_with("\"builtin.module\"")
        || head.starts_with("\"func.func\"")
}

/// The whole file: aliases (`#x = ...`, `!x = ...`), top-level ops, and an optional `{-# ... #-}` resource block.
pub fn file(text: &str) -> PResult<'_, FileAst<'_>> {
    let src = Src(text);
    let p = Parser { src };
    let mut r = ws(text.strip_prefix('\u{feff}').unwrap_or(text));
    let mut f = FileAst { aliases: Vec::new(), ops: Vec::new() };
    loop {
        match peek(r) {
            None => break,
            Some(b'#') | Some(b'!') => {
                let (rest, a) = alias(src, r)?;
                f.aliases.push(a);
                r = ws(rest);
            }
            Some(b'{') if r.starts_with("{-#") => match r.find("#-}") {
                Some(k) => r = ws(split(r, k + 3).0),
                None => return PErr::cut(r, "`#-}` closing the resource block"),
            },
            Some(_) => {
                let (rest, op) = p.op(r, 0).map_err(to_cut)?;
                f.ops.push(op);
                let rest = hws(rest);
                if !at_eol(rest) {
                    return PErr::cut(rest, "end of the operation");
                }
                r = ws(rest);
            }
        }
    }
    Ok((r, f))
}

fn alias<'a>(src: Src<'a>, i: &'a str) -> PResult<'a, Attr<'a>> {
    let (rest, _) = suffix_id(split(i, 1).0).map_err(|_| nom::Err::Failure(PErr::new(i, "alias name")))?;
    let name = split(i, i.len() - rest.len()).1;
    let r = hws(rest);
    let Some(r) = r.strip_prefix('=') else { return PErr::cut(r, "`=` in the alias definition") };
    let r = hws(r);
    let (rest, value) = attr::item(src, r, Ctx::Line, 1)?;
    Ok((rest, Attr::new(name, value, src.span(i, rest))))
}

/// A `loc(...)` resolved through `#loc` aliases to its first `"file":line:col` (through name, callsite and fused
/// locations).
pub fn resolve_loc<'a>(
    module: &Module<'a>,
    loc: &crate::ir::Value<'a>,
) -> Option<(std::borrow::Cow<'a, str>, u32, u32)> {
    resolve_loc_in(module, loc, 0)
}

fn resolve_loc_in<'a>(
    m: &Module<'a>,
    v: &crate::ir::Value<'a>,
    depth: u32,
) -> Option<(std::borrow::Cow<'a, str>, u32, u32)> {
    use crate::ir::ValueKind;
    if depth > 64 {
        return None;
    }
    match &v.kind {
        ValueKind::Word(w) if w.starts_with('#') => {
            let target = &m.attrs.iter().find(|a| a.key == *w)?.value();
            resolve_loc_in(m, target, depth + 1)
        }
        ValueKind::Group { items, .. } => items.iter().find_map(|it| resolve_loc_in(m, it, depth + 1)),
        ValueKind::Seq(parts) => {
            if let Some(first) = parts.first().filter(|p| matches!(p.kind, ValueKind::Str(_))) {
                let nums: Vec<u32> = parts.iter().filter_map(|x| x.word()).filter_map(|w| w.parse().ok()).collect();
                if let Some(&line) = nums.first() {
                    return Some((attr::string(first)?, line, nums.get(1).copied().unwrap_or(0)));
                }
            }
            parts.iter().find_map(|p| resolve_loc_in(m, p, depth + 1))
        }
        _ => None,
    }
}
