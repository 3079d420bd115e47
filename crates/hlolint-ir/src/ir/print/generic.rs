//! A readable rendering of an `ir::Module` (made for the Mosaic layer: decoded bytecode bodies) in MLIR-like
//! generic syntax, one op per line, nested regions indented. It reads only the shared graph (names, opcodes,
//! operands, types, attributes as token trees, regions, blocks) and never source text — a decoded body has
//! none —, so it shows what rules see; tests snapshot it. `func` here is MLIR's syntax, not a layer's word.

use crate::ir::{Module, OpId, RegionId, Type, Value, ValueKind};
use std::fmt::Write;

/// The module, its functions and every op, one per line.
pub fn render_module(m: &Module<'_>) -> String {
    let mut out = String::new();
    let _ = write!(out, "module {:?} ({})", m.name, m.layer.name());
    if !m.attrs.is_empty() {
        let attrs: Vec<String> = m.attrs.iter().map(|a| format!("{} = {}", a.key, value_text(a.value()))).collect();
        let _ = write!(out, " attributes {{{}}}", attrs.join(", "));
    }
    out.push('\n');
    for f in &m.funcs {
        let params: Vec<String> = f
            .params
            .iter()
            .map(|p| {
                let mut s = format!("%{}: {}", p.name, type_text(&p.ty));
                if !p.attrs.is_empty() {
                    let a: Vec<String> =
                        p.attrs.iter().map(|a| format!("{} = {}", a.key, value_text(a.value()))).collect();
                    let _ = write!(s, " {{{}}}", a.join(", "));
                }
                s
            })
            .collect();
        let results: Vec<String> = f.results.iter().map(type_text).collect();
        let _ = writeln!(
            out,
            "func @{}({}) -> ({}){}",
            f.name,
            params.join(", "),
            results.join(", "),
            if f.is_entry { "  // entry" } else { "" }
        );
        for a in &f.attrs {
            if a.key != "function_type" && a.key != "sym_name" && a.key != "arg_attrs" {
                let _ = writeln!(out, "  // {} = {}", a.key, value_text(a.value()));
            }
        }
        render_region(m, f.body, 1, &mut out);
    }
    out
}

fn render_region(m: &Module<'_>, r: RegionId, depth: usize, out: &mut String) {
    let region = &m.regions[r.idx()];
    for (k, b) in region.blocks.iter().enumerate() {
        let block = &m.blocks[b.idx()];
        if k > 0 || (!block.args.is_empty() && depth > 1) {
            let args: Vec<String> = block.args.iter().map(|p| format!("%{}: {}", p.name, type_text(&p.ty))).collect();
            let _ = writeln!(out, "{}^{}({}):", "  ".repeat(depth), block.label.unwrap_or("bb0"), args.join(", "));
        }
        for &op in &block.ops {
            render_op(m, op, depth, out);
        }
    }
}

fn render_op(m: &Module<'_>, id: OpId, depth: usize, out: &mut String) {
    let op = m.op(id);
    let ind = "  ".repeat(depth);
    let mut line = ind.clone();
    if op.result_count > 1 {
        let _ = write!(line, "%{}:{} = ", op.name, op.result_count);
    } else if op.result_count == 1 {
        let _ = write!(line, "%{} = ", op.name);
    }
    let operands: Vec<String> = op.operands.iter().map(|o| format!("%{}", o.name)).collect();
    let _ = write!(line, "{}({})", op.opcode, operands.join(", "));
    let attrs: Vec<String> = op
        .attrs
        .iter()
        .filter(|a| a.key != "metadata")
        .map(|a| format!("{} = {}", a.key, value_text(a.value())))
        .collect();
    if !attrs.is_empty() {
        let _ = write!(line, " {{{}}}", attrs.join(", "));
    }
    if !matches!(op.ty, Type::None) {
        let _ = write!(line, " : {}", type_text(&op.ty));
    }
    if let Some(md) = op.attr("metadata") {
        let name = md.get("op_name").and_then(|v| v.string()).unwrap_or_default();
        let line_no = md.get("source_line").and_then(|v| v.as_int());
        match line_no {
            Some(l) => {
                let _ = write!(line, "  // {name} line {l}");
            }
            None if !name.is_empty() => {
                let _ = write!(line, "  // {name}");
            }
            None => {}
        }
    }
    if op.is_root {
        line.push_str("  // root");
    }
    out.push_str(&line);
    out.push('\n');
    for (k, &r) in op.regions.iter().enumerate() {
        let _ = writeln!(out, "{ind}  region #{k} {{");
        render_region(m, r, depth + 2, out);
        let _ = writeln!(out, "{ind}  }}");
    }
}

// Not the outline's `ty`: shapes print as HLO text here and a missing type as `()`, and both printers' snapshots
// hold their own spelling.
fn type_text(t: &Type<'_>) -> String {
    match t {
        Type::Text(s) => s.to_string(),
        Type::Shape(s) => s.to_string(),
        Type::Mlir(t) => t.to_string(),
        Type::None => "()".into(),
    }
}

/// Token tree back to text (spacing normalized).
pub fn value_text(v: &Value<'_>) -> String {
    match &v.kind {
        ValueKind::Word(w) => w.to_string(),
        ValueKind::Str(s) => format!("\"{s}\""),
        ValueKind::Name(n) => format!("@{n}"),
        ValueKind::Punct(p) | ValueKind::Raw(p) => p.to_string(),
        ValueKind::Group { open, items } => {
            let close = match open {
                '[' => ']',
                '{' => '}',
                '(' => ')',
                '<' => '>',
                c => *c,
            };
            format!("{open}{}{close}", items.iter().map(value_text).collect::<Vec<_>>().join(", "))
        }
        ValueKind::KeyVal { key, value } => format!("{key} = {}", value_text(value)),
        ValueKind::Typed { value, ty } => format!("{} : {ty}", value_text(value)),
        ValueKind::Seq(items) => {
            let mut s = String::new();
            for (k, it) in items.iter().enumerate() {
                let glued = matches!(it.kind, ValueKind::Group { open: '<', .. })
                    || (k > 0
                        && matches!(it.kind, ValueKind::Group { open: '(', .. })
                        && matches!(items[k - 1].kind, ValueKind::Str(_)));
                if k > 0 && !glued {
                    s.push(' ');
                }
                s.push_str(&value_text(it));
            }
            s
        }
    }
}
