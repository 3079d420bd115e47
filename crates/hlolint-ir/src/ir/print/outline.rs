//! A readable outline of a parsed module (functions, ops with operand roles and definitions, attributes as
//! written, nested regions): for the MLIR parser's snapshot tests and for looking at what a parser understood.

use crate::ir::*;
use std::fmt::Write;

/// One line per function, block and op, indented by nesting. `text` is the source the module was parsed from.
pub fn outline(m: &Module<'_>, text: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "module {:?} layer={} entry={:?}", m.name, m.layer.name(), m.entry.map(|f| m.func(f).name));
    for a in &m.attrs {
        let _ = writeln!(out, "  attr {} = {}", a.key, a.value_span().text(text));
    }
    for (fi, f) in m.funcs.iter().enumerate() {
        let _ = writeln!(out, "{} @{}{}", m.layer.words().func, f.name, if f.is_entry { " (entry)" } else { "" });
        for p in &f.params {
            let keys: Vec<&str> = p.attrs.iter().map(|a| a.key).collect();
            let _ = writeln!(
                out,
                "  param %{}: {}{}",
                p.name,
                ty(&p.ty),
                if keys.is_empty() { String::new() } else { format!(" {keys:?}") }
            );
        }
        for r in &f.results {
            let _ = writeln!(out, "  result {}", ty(r));
        }
        for a in &f.attrs {
            let _ = writeln!(out, "  attr {} = {}", a.key, a.value_span().text(text));
        }
        if !f.callers.is_empty() {
            let _ = writeln!(out, "  callers {:?}", f.callers.iter().map(|c| m.op(*c).opcode).collect::<Vec<_>>());
        }
        region(m, text, m.funcs[fi].body, 1, &mut out);
    }
    out
}

// Not generic.rs's `type_text`: shapes print as their Debug form and a missing type as `?` — the outline's
// snapshots hold that spelling.
fn ty(t: &Type<'_>) -> String {
    match t {
        Type::Mlir(t) => t.to_string(),
        Type::Shape(s) => format!("{s:?}"),
        Type::Text(s) => s.to_string(),
        Type::None => "?".into(),
    }
}

fn def(m: &Module<'_>, d: Def) -> String {
    match d {
        Def::Op { op, index } => format!("{}#{}", m.op(op).opcode, index),
        Def::BlockArg { block, index } => {
            let b = &m.blocks[block.idx()];
            format!("arg{}:{}", index, b.args.get(index as usize).map(|p| p.name).unwrap_or("?"))
        }
        Def::Unresolved => "UNRESOLVED".into(),
    }
}

fn region(m: &Module<'_>, text: &str, r: RegionId, depth: usize, out: &mut String) {
    let pad = "  ".repeat(depth);
    for &b in &m.regions[r.idx()].blocks {
        let blk = &m.blocks[b.idx()];
        if blk.label.is_some() || !blk.args.is_empty() && depth > 1 {
            let args: Vec<String> = blk.args.iter().map(|p| format!("%{}: {}", p.name, ty(&p.ty))).collect();
            let _ = writeln!(out, "{pad}^{}({})", blk.label.unwrap_or(""), args.join(", "));
        }
        for &o in &blk.ops {
            let op = m.op(o);
            let mut line = String::new();
            if op.result_count > 0 {
                let _ = write!(line, "%{}", op.name);
                if op.result_count > 1 {
                    let _ = write!(line, ":{}", op.result_count);
                }
                line.push_str(" = ");
            }
            line.push_str(op.opcode);
            let ops: Vec<String> = op
                .operands
                .iter()
                .map(|x| {
                    let role = x.role.map(|r| format!("{r}: ")).unwrap_or_default();
                    let t = x.ty.as_ref().map(|t| format!(" : {}", ty(t))).unwrap_or_default();
                    format!("{role}%{} <- {}{}", x.name, def(m, x.def), t)
                })
                .collect();
            let _ = write!(line, "({})", ops.join(", "));
            if let Some(p) = &op.payload {
                let items: Vec<&str> = match &p.kind {
                    ValueKind::Seq(v) if op.operands.iter().any(|o| p.span.to(o.span) == p.span) => {
                        v.iter().map(|x| x.span.text(text)).collect()
                    }
                    _ => vec![p.span.text(text)],
                };
                let _ = write!(line, " payload[{}]", items.join(" "));
            }
            for a in &op.attrs {
                let _ = write!(line, " {}={}", a.key, a.value_span().text(text));
            }
            if !matches!(op.ty, Type::None) {
                let _ = write!(line, " -> {}", ty(&op.ty));
            }
            for c in &op.calls {
                let _ = write!(line, " calls @{}", m.func(c.func).name);
            }
            let _ = writeln!(out, "{pad}{line}");
            for &inner in &op.regions {
                let _ = writeln!(out, "{pad}  region");
                region(m, text, inner, depth + 2, out);
            }
        }
    }
}
