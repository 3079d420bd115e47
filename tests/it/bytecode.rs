//! The MLIR bytecode reader against oracles:
//! - MLIR's own generic print of the committed test modules (`tests/data/bytecode/*.generic.mlir`, made by
//!   `make.py` with jax's MLIR): same ops in the same order, operand and result counts, result types,
//!   attributes (inherent + discardable) with their printed values;
//! - libtpu's `post-deserialization` Mosaic dump of the corpus kernels (`../shared/corpus`, skipped with a
//!   notice when absent): the same comparison on MLIR's custom syntax, plus operand wiring (which op or argument
//!   each operand comes from), region nesting, function signatures with memory spaces, function and module
//!   attributes.
//!
//! Not compared (and why): value *names* (the dump uses op-suggested names like `%c0_i32`; ours are MLIR's
//! numbering), attributes whose custom syntax differs from the generic one (`arith.cmpi eq` is `predicate =
//! 0 : i64` in the body; custom formats also elide defaults such as `transpose_lhs = false`), and result types of
//! ops whose custom syntax does not print them plainly (checked as "appears on the line").

use crate::common;
use common::corpus;
use hlolint::ir::print::{render_module, value_text};
use hlolint::ir::{Def, Module, OpId, Type};
use hlolint::parse::bytecode::{self, BytecodeError, DecodedModule};
use std::path::{Path, PathBuf};

// By area: the corpus kernels against libtpu's dumps (`corpus`), hostile and corrupt input (`robust`).
mod corpus;
mod robust;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/bytecode").join(name)
}

fn read(name: &str) -> Vec<u8> {
    std::fs::read(data(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn norm(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

/// Splits at top-level `sep`, respecting brackets (`->` is not a bracket) and quoted strings.
fn split_top(s: &str, sep: char) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    let mut in_str = false;
    let mut prev = ' ';
    for c in s.chars() {
        if in_str {
            cur.push(c);
            if c == '"' && prev != '\\' {
                in_str = false;
            }
            prev = c;
            continue;
        }
        match c {
            '"' => in_str = true,
            '(' | '[' | '{' | '<' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            '>' if prev != '-' => depth -= 1,
            _ => {}
        }
        if c == sep && depth == 0 {
            out.push(cur.trim().to_string());
            cur.clear();
        } else {
            cur.push(c);
        }
        prev = c;
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

/// The text of the bracket group starting at `s[0]`, without the brackets, and the rest after it.
fn group(s: &str) -> Option<(&str, &str)> {
    let open = s.chars().next()?;
    if !matches!(open, '(' | '[' | '{' | '<') {
        return None;
    }
    let mut depth = 0;
    let mut in_str = false;
    let mut prev = ' ';
    for (i, c) in s.char_indices() {
        if in_str {
            if c == '"' && prev != '\\' {
                in_str = false;
            }
        } else if c == '"' {
            in_str = true;
        } else if matches!(c, '(' | '[' | '{' | '<') {
            depth += 1;
        } else if matches!(c, ')' | ']' | '}') || (c == '>' && prev != '-') {
            depth -= 1;
            if depth == 0 {
                return Some((&s[1..i], &s[i + 1..]));
            }
        }
        prev = c;
    }
    None
}

/// `k = v, k2` → [(k, v), (k2, "unit")], whitespace-normalized.
fn dict(s: &str) -> Vec<(String, String)> {
    split_top(s, ',')
        .into_iter()
        .map(|e| match e.split_once(" = ") {
            Some((k, v)) => (k.trim().trim_matches('"').to_string(), norm(v)),
            None => (e.trim().trim_matches('"').to_string(), "unit".to_string()),
        })
        .collect()
}

#[derive(Debug, Default, Clone)]
struct OracleOp {
    name: String,
    results: usize,
    operands: Vec<String>,
    result_types: Option<Vec<String>>,
    attrs: Option<Vec<(String, String)>>,
    regions: usize,
    parent: Option<usize>,
    line: String,
}

#[derive(Debug, Default)]
struct OracleFunc {
    name: String,
    params: Vec<String>,
    results: Vec<String>,
    attrs: Vec<(String, String)>,
    ops: Vec<OracleOp>,
}

/// Ops of MLIR's generic print, grouped by `func.func` (module and function ops themselves excluded).
fn generic_oracle(text: &str) -> Vec<OracleFunc> {
    let mut funcs: Vec<OracleFunc> = Vec::new();
    // Open regions: the op index owning them (None: a function or the module; `func_open` tells which).
    let mut stack: Vec<Option<usize>> = Vec::new();
    let mut func_open: Vec<bool> = Vec::new();
    for raw in text.lines() {
        let line = raw.trim();
        if line.starts_with("})") || line.starts_with("}, {") {
            if line.starts_with("})") {
                stack.pop();
                // Unregistered functions (`stable_mosaic.func.func`) print their attributes after the region.
                if func_open.pop() == Some(true) {
                    if let (Some(f), Some((a, _))) =
                        (funcs.last_mut(), group(line.trim_start_matches("})").trim_start()))
                    {
                        if let Some((_, v)) = dict(a).into_iter().find(|(k, _)| k == "sym_name") {
                            f.name = v.trim_matches('"').to_string();
                        }
                    }
                }
            }
            continue;
        }
        if line.starts_with('^') || line.starts_with('#') || line.is_empty() {
            continue;
        }
        let (results, rest) = match line.strip_prefix('%') {
            Some(_) => {
                let (lhs, rhs) = line.split_once(" = ").unwrap();
                let n = match lhs.split_once(':') {
                    Some((_, n)) => n.parse().unwrap(),
                    None => lhs.split(',').count(),
                };
                (n, rhs)
            }
            None => (0, line),
        };
        let Some(rest) = rest.strip_prefix('"') else {
            continue;
        };
        let (name, rest) = rest.split_once('"').unwrap();
        let (operands, mut rest) = group(rest).unwrap();
        let operands: Vec<String> = split_top(operands, ',').into_iter().filter(|s| !s.is_empty()).collect();
        if rest.starts_with('[') {
            rest = group(rest).unwrap().1;
        }
        let mut attrs = Vec::new();
        rest = rest.trim_start();
        if let Some(r) = rest.strip_prefix('<') {
            let (props, r2) = group(r).unwrap();
            attrs.extend(dict(props));
            rest = r2.strip_prefix('>').unwrap().trim_start();
        }
        let has_regions = rest.starts_with("({");
        if !has_regions && rest.starts_with('{') {
            let (a, r2) = group(rest).unwrap();
            attrs.extend(dict(a));
            rest = r2.trim_start();
        }
        let result_types = (!has_regions).then(|| {
            let sig = rest.strip_prefix(": ").unwrap_or(rest);
            let out = sig.rsplit_once(" -> ").map(|(_, r)| r).unwrap_or("");
            let out = out.strip_prefix('(').and_then(|o| o.strip_suffix(')')).unwrap_or(out);
            split_top(out, ',').into_iter().filter(|s| !s.is_empty()).collect::<Vec<_>>()
        });
        match name.strip_prefix("stable_mosaic.").unwrap_or(name) {
            "builtin.module" => {
                stack.push(None);
                func_open.push(false);
                continue;
            }
            "func.func" => {
                let name = attrs.iter().find(|(k, _)| k == "sym_name").map(|(_, v)| v.trim_matches('"').to_string());
                funcs.push(OracleFunc { name: name.unwrap_or_default(), ..Default::default() });
                stack.push(None);
                func_open.push(true);
                continue;
            }
            _ => {}
        }
        let f = funcs.last_mut().expect("op outside a function");
        let parent = stack.last().copied().flatten();
        f.ops.push(OracleOp {
            name: name.to_string(),
            results,
            operands,
            result_types,
            attrs: (!has_regions).then_some(attrs),
            regions: 0,
            parent,
            line: line.to_string(),
        });
        if has_regions {
            stack.push(Some(f.ops.len() - 1));
            func_open.push(false);
        }
    }
    funcs
}

/// Our module's ops per function, pre-order, with the oracle's shape.
/// Per function: its name and its ops (pre-order) with their attribute keys.
type OurFuncs = Vec<(String, Vec<(OpId, Vec<String>)>)>;

fn ours(m: &Module<'_>) -> OurFuncs {
    m.funcs
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let ops = m
                .func_ops(hlolint::ir::FuncId(i as u32))
                .into_iter()
                .map(|o| {
                    let attrs =
                        m.op(o).attrs.iter().filter(|a| a.key != "metadata").map(|a| a.key.to_string()).collect();
                    (o, attrs)
                })
                .collect();
            (f.name.to_string(), ops)
        })
        .collect()
}

fn type_text(t: &Type<'_>) -> String {
    match t {
        Type::Text(s) => s.to_string(),
        Type::Mlir(t) => t.to_string(),
        other => format!("{other:?}"),
    }
}

fn compare_with_generic(file: &str, oracle_file: &str) {
    let d = bytecode::decode(&read(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
    let m = d.module();
    let oracle = generic_oracle(&std::fs::read_to_string(data(oracle_file)).unwrap());
    let ours = ours(&m);
    assert_eq!(ours.len(), oracle.len(), "{file}: function count");
    let mut compared = 0;
    for ((fname, ops), of) in ours.iter().zip(&oracle) {
        assert_eq!(fname, &of.name, "{file}: function name");
        let names: Vec<&str> = ops.iter().map(|(o, _)| m.op(*o).opcode).collect();
        let onames: Vec<&str> =
            of.ops.iter().map(|o| o.name.strip_prefix("stable_mosaic.").unwrap_or(&o.name)).collect();
        assert_eq!(names, onames, "{file}: ops of @{fname}");
        for ((id, keys), oo) in ops.iter().zip(&of.ops) {
            let op = m.op(*id);
            let ctx = format!("{file}: @{fname}: {}", oo.line);
            assert_eq!(op.operands.len(), oo.operands.len(), "{ctx}: operand count");
            assert_eq!(op.result_count as usize, oo.results, "{ctx}: result count");
            assert!(op.operands.iter().all(|o| o.def != Def::Unresolved), "{ctx}: unresolved operand");
            let parent = m.parent_op(*id).map(|p| ops.iter().position(|(o, _)| *o == p).unwrap());
            assert_eq!(parent, oo.parent, "{ctx}: enclosing op");
            if let Some(types) = &oo.result_types {
                let ty = match types.len() {
                    0 => "()".to_string(),
                    1 => types[0].clone(),
                    _ => format!("({})", types.join(", ")),
                };
                let got = if op.result_count == 0 { "()".to_string() } else { type_text(&op.ty) };
                assert_eq!(norm(&got), norm(&ty), "{ctx}: result type");
            }
            if let Some(attrs) = &oo.attrs {
                let mut want: Vec<&str> = attrs.iter().map(|(k, _)| k.as_str()).collect();
                let mut got: Vec<&str> = keys.iter().map(|k| k.as_str()).filter(|k| *k != "successors").collect();
                want.sort();
                got.sort();
                assert_eq!(got, want, "{ctx}: attribute keys");
                for (k, v) in attrs {
                    let ours = value_text(op.attr(k).unwrap());
                    assert_eq!(norm(&ours), *v, "{ctx}: attribute {k}");
                }
            }
            compared += 1;
        }
    }
    assert!(compared > 0, "{file}: nothing compared");
}

#[test]
fn features_v0_matches_mlir_generic_print() {
    compare_with_generic("features.v0.mlirbc", "features.generic.mlir");
}

#[test]
fn unregistered_v0_matches_mlir_generic_print() {
    compare_with_generic("unregistered.v0.mlirbc", "unregistered.generic.mlir");
}

#[test]
fn pallas_dma_kernel_matches_mlir_generic_print() {
    compare_with_generic("pallas_dma.mlirbc", "pallas_dma.mlir");
}

#[test]
fn v6_bytecode_decodes_structure_and_notes_properties() {
    // Version 6: isolated regions in nested sections, native properties, elided block-argument locations.
    let d = bytecode::decode(&read("features.v6.mlirbc")).unwrap();
    assert_eq!(d.version, 6);
    let d0 = bytecode::decode(&read("features.v0.mlirbc")).unwrap();
    let (m, m0) = (d.module(), d0.module());
    // Same ops and wiring; only the inherent attributes (native properties) are missing.
    assert_eq!(m.ops.iter().map(|o| o.opcode).collect::<Vec<_>>(), m0.ops.iter().map(|o| o.opcode).collect::<Vec<_>>());
    for (a, b) in m.ops.iter().zip(&m0.ops) {
        assert_eq!(
            a.operands.iter().map(|o| o.def).collect::<Vec<_>>(),
            b.operands.iter().map(|o| o.def).collect::<Vec<_>>()
        );
        assert_eq!(a.ty, b.ty);
    }
    assert!(d.notes.iter().any(|n| n.contains("arith.constant") && n.contains("native properties")), "{:?}", d.notes);
    // Discardable attributes are still there.
    assert!(m.funcs[1].attrs.iter().any(|a| a.key == "test.dense"));
}

#[test]
fn forward_references_resolve() {
    let d = bytecode::decode(&read("unregistered.v0.mlirbc")).unwrap();
    let m = d.module();
    let user = m.op_ids().find(|&o| m.op(o).opcode == "test.use").unwrap();
    let def = m.op_ids().find(|&o| m.op(o).opcode == "test.def").unwrap();
    assert_eq!(m.operand_def(user, 0), Some(def));
    assert!(m.op(def).users.contains(&user));
}

#[test]
fn decoded_graph_has_wiring_calls_and_locations() {
    let d = bytecode::decode(&read("features.v0.mlirbc")).unwrap();
    let m = d.module();
    let call = m.op_ids().find(|&o| m.op(o).opcode == "func.call").unwrap();
    let callee = m.func_by_name("callee").unwrap();
    assert_eq!(m.op(call).calls[0].func, callee);
    assert_eq!(m.func(callee).callers, vec![call]);
    // scf.for: 3 bounds + 2 iter_args; its body block has the induction variable and 2 iter args.
    let for_op = m.op_ids().find(|&o| m.op(o).opcode == "scf.for").unwrap();
    assert_eq!(m.op(for_op).result_count, 2);
    let body = m.regions[m.op(for_op).regions[0].idx()].blocks[0];
    assert_eq!(m.blocks[body.idx()].args.len(), 3);
    let load = m.op_ids().find(|&o| m.op(o).opcode == "memref.load").unwrap();
    assert_eq!(m.op(load).operands[1].def, Def::BlockArg { block: body, index: 0 });
    assert_eq!(m.ancestors(load).collect::<Vec<_>>(), vec![for_op]);
    // The callsite location's innermost file:line reaches `source_stack`.
    let stack = m.source_stack(for_op);
    assert_eq!((stack[0].file.as_str(), stack[0].line), ("kernel.py", 10));
    // A chain "called at" itself, or at another call of the same helper (jax writes both), is the chain once.
    let lines = |opcode: &str| {
        let op = m.op_ids().find(|&o| m.op(o).opcode == opcode).unwrap();
        m.source_stack(op).iter().map(|l| l.line).collect::<Vec<_>>()
    };
    assert_eq!(lines("arith.addf"), [115, 148]);
    assert_eq!(lines("arith.addi"), [181, 508]);
    assert_eq!(lines("scf.for").len(), 2, "a real caller stays");
    // Function params: types with layout and memory space, argument attributes.
    let main = m.func(m.func_by_name("main").unwrap());
    assert_eq!(type_text(&main.params[0].ty), "memref<4x8xf32, strided<[8, 1], offset: ?>, 1>");
    assert_eq!(main.params[0].attrs[0].key, "test.arg");
    assert_eq!(main.results.iter().map(type_text).collect::<Vec<_>>(), vec!["i32", "f32"]);
}

#[test]
fn backend_configs_in_hlo_and_stablehlo_spelling() {
    use base64::Engine;
    let b64 = base64::engine::general_purpose::STANDARD.encode(read("pallas_dma.mlirbc"));
    let hlo = format!(r#"{{"flag_configs":[],"custom_call_config":{{"body":"{b64}","needs_layout_passes":true}}}}"#);
    let shlo = format!(r#""{{\22custom_call_config\22: {{\22body\22: \22{b64}\22, \22serialization_format\22: 1}}}}""#);
    let old_hlo = format!(r#""{{\"custom_call_config\": {{\"body\": \"{b64}\"}}}}""#);
    for cfg in [hlo, shlo, old_hlo] {
        let ks = bytecode::kernels_in_backend_config(&cfg).unwrap_or_else(|e| panic!("{cfg:.80}: {e}"));
        assert_eq!(ks.len(), 1, "{cfg:.80}");
        assert_eq!(ks[0].name(), Some("dma_kernel"));
        assert_eq!(ks[0].body_len, read("pallas_dma.mlirbc").len());
    }
    let k = bytecode::kernel_from_backend_config(&format!(
        r#"{{"custom_call_config":{{"body":"{b64}","needs_layout_passes":true}}}}"#
    ))
    .unwrap()
    .unwrap();
    assert_eq!(k.config.unwrap()["needs_layout_passes"], true);
    // A truncated body is a bytecode error, not a panic or a silent skip.
    let cut = &b64[..b64.len() / 2 / 4 * 4];
    let e =
        bytecode::kernel_from_backend_config(&format!(r#"{{"custom_call_config":{{"body":"{cut}"}}}}"#)).unwrap_err();
    assert!(matches!(e, BytecodeError::Malformed { .. }), "{e}");
}

#[test]
fn snapshots_of_decoded_modules() {
    for name in ["features.v0", "features.v6", "unregistered.v0", "pallas_dma"] {
        let file = if name == "pallas_dma" { "pallas_dma.mlirbc".to_string() } else { format!("{name}.mlirbc") };
        let d = bytecode::decode(&read(&file)).unwrap();
        let mut text = format!("// version {}, producer {}, notes:\n", d.version, d.producer);
        for n in &d.notes {
            text.push_str(&format!("//   {n}\n"));
        }
        text.push_str(&render_module(&d.module()));
        insta::assert_snapshot!(name.replace('.', "_"), text);
    }
}

/// The `custom_call_config` backend configs of a text file, as written (read by `corpus` and `robust`).
fn backend_configs(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, _) in text.match_indices("backend_config") {
        let rest = text[i + "backend_config".len()..].trim_start_matches([' ', '=']);
        let cfg = if rest.starts_with('"') {
            // StableHLO: a string attribute; its end is the next unescaped quote.
            let b = rest.as_bytes();
            let mut j = 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            &rest[..(j + 1).min(rest.len())]
        } else {
            group(rest).map(|(inner, _)| &rest[..inner.len() + 2]).unwrap_or(rest)
        };
        if cfg.contains("custom_call_config") {
            out.push(cfg.to_string());
        }
    }
    out
}
