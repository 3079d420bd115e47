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

// ---- the corpus: real kernels against libtpu's post-deserialization dump ------------------------------------

/// The `custom_call_config` backend configs of a text file, as written.
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

/// One op of the custom-syntax dump.
fn custom_oracle(text: &str) -> (Vec<(String, String)>, Vec<OracleFunc>) {
    let mut module_attrs = Vec::new();
    let mut funcs: Vec<OracleFunc> = Vec::new();
    let mut stack: Vec<Option<usize>> = Vec::new();
    for raw in text.lines() {
        let line = raw.trim();
        if let Some(rest) = line.strip_prefix("module attributes ") {
            module_attrs = dict(group(rest).unwrap().0);
            stack.push(None);
            continue;
        }
        if line == "}" {
            stack.pop();
            continue;
        }
        if line == "} else {" {
            continue;
        }
        if let Some(rest) = line.strip_prefix("func.func @") {
            let (name, rest) = rest.split_once('(').unwrap();
            let (params, rest) = group(&format!("({rest}")).map(|(p, r)| (p.to_string(), r.to_string())).unwrap();
            let params =
                split_top(&params, ',').into_iter().map(|p| p.split_once(": ").unwrap().1.to_string()).collect();
            let rest = rest.trim();
            let (results, rest) = match rest.strip_prefix("-> ") {
                Some(r) if r.starts_with('(') => {
                    let (res, r2) = group(r).unwrap();
                    (split_top(res, ','), r2.trim().to_string())
                }
                Some(r) => {
                    let (res, r2) = r.split_once(' ').unwrap_or((r, ""));
                    (vec![res.to_string()], r2.to_string())
                }
                None => (Vec::new(), rest.to_string()),
            };
            let attrs = match rest.strip_prefix("attributes ") {
                Some(a) => dict(group(a).unwrap().0),
                None => Vec::new(),
            };
            funcs.push(OracleFunc { name: name.to_string(), params, results, attrs, ops: Vec::new() });
            stack.push(None);
            continue;
        }
        let (results, rest) = match line.strip_prefix('%') {
            Some(_) => {
                let (lhs, rhs) = line.split_once(" = ").unwrap();
                (
                    match lhs.split_once(':') {
                        Some((_, n)) => n.parse().unwrap(),
                        None => 1,
                    },
                    rhs,
                )
            }
            None => (0, line),
        };
        let (name, args) = rest.split_once(' ').unwrap_or((rest, ""));
        let name = if name.contains('.') { name.to_string() } else { format!("func.{name}") };
        // Operands: `%names` before the type signature and the attribute dictionary.
        let before_types = args.split(" : ").next().unwrap_or("");
        let before_attrs = match before_types.find(" {") {
            Some(i) if !before_types.trim_end().ends_with('{') => &before_types[..i],
            _ => before_types,
        };
        let operands: Vec<String> = before_attrs
            .split(|c: char| !(c.is_alphanumeric() || c == '%' || c == '_' || c == '#'))
            .filter(|t| t.starts_with('%'))
            .map(|t| t[1..].to_string())
            .collect();
        let attrs = before_types.find(" {").filter(|_| !before_types.trim_end().ends_with('{')).map(|i| {
            let (a, _) = group(before_types[i + 1..].trim()).unwrap();
            dict(a)
        });
        let opens = line.ends_with('{');
        let f = funcs.last_mut().expect("op outside a function");
        let parent = stack.last().copied().flatten();
        f.ops.push(OracleOp {
            name,
            results,
            operands,
            result_types: None,
            attrs,
            regions: usize::from(opens),
            parent,
            line: line.to_string(),
        });
        if opens {
            stack.push(Some(f.ops.len() - 1));
        }
    }
    // `} else {` adds the second region of the op that is open.
    let mut regions_fix = Vec::new();
    let mut open: Vec<(usize, usize)> = Vec::new();
    let mut fidx = 0usize;
    let mut op_counter: Vec<usize> = vec![0; funcs.len()];
    for raw in text.lines() {
        let line = raw.trim();
        if line.starts_with("func.func @") {
            fidx = funcs.iter().position(|f| line.starts_with(&format!("func.func @{}(", f.name))).unwrap();
            continue;
        }
        if line == "} else {" {
            if let Some(&(f, o)) = open.last() {
                regions_fix.push((f, o));
            }
            continue;
        }
        if line == "}" {
            open.pop();
            continue;
        }
        if line.starts_with('%') || line.contains('.') && !line.starts_with("module") {
            let k = op_counter[fidx];
            op_counter[fidx] += 1;
            if line.ends_with('{') {
                open.push((fidx, k));
            }
        }
    }
    for (f, o) in regions_fix {
        funcs[f].ops[o].regions += 1;
    }
    (module_attrs, funcs)
}

#[test]
fn corpus_kernels_match_post_deserialization_dumps() {
    let Some(dir) = corpus() else { return };
    let mut checked = 0;
    let mut entries: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().map(|e| e.path()).collect();
    entries.sort();
    for case in entries {
        let Ok(mosaic) = std::fs::read_dir(case.join("mosaic")) else {
            continue;
        };
        let Some(dump) =
            mosaic.flatten().map(|e| e.path()).find(|p| p.to_string_lossy().ends_with("post-deserialization.txt"))
        else {
            continue;
        };
        let (module_attrs, oracle) = custom_oracle(&std::fs::read_to_string(&dump).unwrap());
        let mut sources = vec![case.join("stablehlo.mlir")];
        if let Ok(hlo) = std::fs::read_dir(case.join("hlo")) {
            sources.extend(
                hlo.flatten().map(|e| e.path()).filter(|p| p.to_string_lossy().ends_with("after_optimizations.txt")),
            );
        }
        for src in sources {
            let Ok(text) = std::fs::read_to_string(&src) else {
                continue;
            };
            let configs = backend_configs(&text);
            assert_eq!(configs.len(), 1, "{}: one tpu_custom_call expected", src.display());
            let kernel = bytecode::kernel_from_backend_config(&configs[0])
                .unwrap_or_else(|e| panic!("{}: {e}", src.display()))
                .expect("a kernel body");
            assert_eq!(kernel.module.version, 0, "jax writes bytecode version 0");
            assert!(kernel.module.mosaic_serialized);
            compare_with_custom(&src, &kernel.module, &module_attrs, &oracle);
            checked += 1;
        }
    }
    eprintln!("compared {checked} kernel bodies with their post-deserialization dumps");
    assert!(checked > 0, "the corpus has no pallas kernels with a post-deserialization dump");
}

fn compare_with_custom(src: &Path, d: &DecodedModule, module_attrs: &[(String, String)], oracle: &[OracleFunc]) {
    let m = d.module();
    let ctx0 = src.display().to_string();
    for (k, v) in module_attrs {
        let a = m.attrs.iter().find(|a| a.key == k).unwrap_or_else(|| panic!("{ctx0}: module attribute {k}"));
        assert_eq!(norm(&value_text(a.value())), *v, "{ctx0}: module attribute {k}");
    }
    assert_eq!(m.funcs.len(), oracle.len(), "{ctx0}: function count");
    for (fi, of) in oracle.iter().enumerate() {
        let f = &m.funcs[fi];
        let ctx = format!("{ctx0}: @{}", of.name);
        assert_eq!(f.name, of.name, "{ctx}");
        assert_eq!(f.params.iter().map(|p| type_text(&p.ty)).collect::<Vec<_>>(), of.params, "{ctx}: parameter types");
        assert_eq!(f.results.iter().map(type_text).collect::<Vec<_>>(), of.results, "{ctx}: result types");
        for (k, v) in &of.attrs {
            let a = f.attrs.iter().find(|a| a.key == k).unwrap_or_else(|| panic!("{ctx}: attribute {k}"));
            assert_eq!(norm(&value_text(a.value())), *v, "{ctx}: attribute {k}");
        }
        // Ours, without the operand-less `scf.yield` terminators the custom syntax leaves implicit.
        let ops: Vec<OpId> = m
            .func_ops(hlolint::ir::FuncId(fi as u32))
            .into_iter()
            .filter(|&o| !(m.op(o).opcode == "scf.yield" && m.op(o).operands.is_empty()))
            .collect();
        let names: Vec<&str> = ops.iter().map(|&o| m.op(o).opcode).collect();
        let onames: Vec<&str> = of.ops.iter().map(|o| o.name.as_str()).collect();
        assert_eq!(names, onames, "{ctx}: ops");
        // Where each value comes from: an op (by position) or a function argument.
        let mut oracle_defs = std::collections::HashMap::new();
        for (k, oo) in of.ops.iter().enumerate() {
            if oo.results > 0 {
                let name = oo.line.trim_start_matches('%').split([' ', ':']).next().unwrap().to_string();
                oracle_defs.insert(name, format!("op{k}"));
            }
        }
        for (k, (&id, oo)) in ops.iter().zip(&of.ops).enumerate() {
            let op = m.op(id);
            let ctx = format!("{ctx}: op {k} `{}`", oo.line);
            assert_eq!(op.result_count as usize, oo.results, "{ctx}: results");
            assert_eq!(op.operands.len(), oo.operands.len(), "{ctx}: operand count");
            assert_eq!(op.regions.len(), oo.regions, "{ctx}: regions");
            let parent = m.parent_op(id).map(|p| ops.iter().position(|&o| o == p).unwrap());
            assert_eq!(parent, oo.parent, "{ctx}: enclosing op");
            // Custom syntaxes may print operands in another order (`tpu.vector_store %base[%i, %j], %value`),
            // so each op's operand sources compare as multisets.
            let mut got: Vec<String> = op
                .operands
                .iter()
                .map(|operand| match operand.def {
                    Def::Op { op, .. } => {
                        format!("op{}", ops.iter().position(|&o| o == op).unwrap())
                    }
                    Def::BlockArg { index, .. } => format!("arg{index}"),
                    Def::Unresolved => "unresolved".into(),
                })
                .collect();
            let mut want: Vec<String> =
                oo.operands.iter().map(|n| oracle_defs.get(n).cloned().unwrap_or_else(|| n.clone())).collect();
            got.sort();
            want.sort();
            assert_eq!(got, want, "{ctx}: operand sources");
            // The custom syntax prints the result type except for comparisons (an implicit `i1`).
            if op.result_count == 1 && !matches!(op.opcode, "arith.cmpi" | "arith.cmpf") {
                let t = type_text(&op.ty);
                let shown = oo.line.rsplit_once(" -> ").map(|(_, r)| r).unwrap_or(&oo.line);
                assert!(shown.contains(&t), "{ctx}: result type {t}");
            }
            if let Some(attrs) = &oo.attrs {
                for (key, v) in attrs {
                    let a = op.attr(key).unwrap_or_else(|| panic!("{ctx}: attribute {key}"));
                    assert_eq!(norm(&value_text(a)), *v, "{ctx}: attribute {key}");
                }
            }
        }
    }
}

// ---- robustness ---------------------------------------------------------------------------------------------

fn decode_fully(bytes: &[u8]) -> Result<usize, BytecodeError> {
    let d = bytecode::decode(bytes)?;
    let m = d.module();
    Ok(render_module(&m).len() + m.ops.len())
}

fn bodies() -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> =
        ["pallas_dma.mlirbc", "features.v0.mlirbc", "features.v6.mlirbc", "unregistered.v6.mlirbc"]
            .iter()
            .map(|n| (n.to_string(), read(n)))
            .collect();
    if let Some(dir) = corpus() {
        let text = std::fs::read_to_string(dir.join("pallas_matmul@v5e/stablehlo.mlir")).unwrap_or_default();
        for cfg in backend_configs(&text) {
            let k = bytecode::kernel_from_backend_config(&cfg).unwrap().unwrap();
            let _ = k;
            let json = cfg.replace("\\22", "\"");
            let start = json.find("\"body\": \"").unwrap() + 9;
            let end = start + json[start..].find('"').unwrap();
            use base64::Engine;
            out.push((
                "corpus matmul".into(),
                base64::engine::general_purpose::STANDARD.decode(&json[start..end]).unwrap(),
            ));
        }
    }
    out
}

fn no_panic(what: &str, bytes: &[u8]) {
    let r = std::panic::catch_unwind(|| decode_fully(bytes));
    assert!(r.is_ok(), "decoder panicked on {what}");
}

#[test]
fn truncations_never_panic() {
    bytecode::with_decoder_stack(truncations);
}

fn truncations() {
    for (name, body) in bodies() {
        assert!(decode_fully(&body).is_ok(), "{name} decodes");
        for n in 0..body.len() {
            no_panic(&format!("{name} truncated to {n} bytes"), &body[..n]);
            assert!(bytecode::decode(&body[..n]).is_err(), "{name} truncated to {n} bytes should not decode");
        }
    }
}

#[test]
fn bit_flips_and_random_corruption_never_panic() {
    bytecode::with_decoder_stack(bit_flips);
}

fn bit_flips() {
    let mut seed = 0x9e3779b97f4a7c15u64;
    let mut rand = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut runs = 0;
    for (name, body) in bodies() {
        // Every single-bit flip of the first 300 bytes (headers, strings, dialects, offsets), then random ones.
        for i in 0..body.len().min(300) {
            for bit in 0..8 {
                let mut b = body.clone();
                b[i] ^= 1 << bit;
                no_panic(&format!("{name} with bit {bit} of byte {i} flipped"), &b);
                runs += 1;
            }
        }
        for k in 0..1500 {
            let mut b = body.clone();
            for _ in 0..1 + rand() % 4 {
                let i = (rand() % b.len() as u64) as usize;
                b[i] = match rand() % 3 {
                    0 => b[i] ^ (1 << (rand() % 8)),
                    1 => (rand() & 0xff) as u8,
                    _ => [0u8, 0xff, 0x01, 0x80][(rand() % 4) as usize],
                };
            }
            no_panic(&format!("{name} random corruption #{k}"), &b);
            runs += 1;
        }
    }
    assert!(runs > 10_000);
}

/// A tiny bytecode writer for hand-made hostile inputs: version 0, strings ["builtin", "test", "op"], dialects
/// [builtin, test], one op name `test.op`, one attribute (UnknownLoc), and the IR section given.
fn synthetic(version: u8, ir: &[u8], extra_sections: &[(u8, Vec<u8>)]) -> Vec<u8> {
    synthetic_attrs(version, &[vec![0x1f]], ir, extra_sections)
}

/// The same with the given builtin attribute encodings (attribute 0 is the ops' location).
fn synthetic_attrs(version: u8, attrs: &[Vec<u8>], ir: &[u8], extra_sections: &[(u8, Vec<u8>)]) -> Vec<u8> {
    fn varint(v: u64) -> Vec<u8> {
        if v < 128 {
            return vec![((v << 1) | 1) as u8];
        }
        let mut out = vec![0u8];
        out.extend_from_slice(&v.to_le_bytes());
        out
    }
    fn section(id: u8, data: &[u8]) -> Vec<u8> {
        let mut out = vec![id];
        out.extend(varint(data.len() as u64));
        out.extend_from_slice(data);
        out
    }
    let strings = ["builtin", "test", "op"];
    let mut s = varint(strings.len() as u64);
    for st in strings.iter().rev() {
        s.extend(varint(st.len() as u64 + 1));
    }
    for st in strings {
        s.extend_from_slice(st.as_bytes());
        s.push(0);
    }
    let mut dialects = varint(2);
    dialects.extend(varint(0));
    dialects.extend(varint(1));
    dialects.extend(varint(1)); // op group: dialect `test`
    dialects.extend(varint(1)); // one name
    dialects.extend(varint(2)); // "op"
    let attr_data: Vec<u8> = attrs.concat();
    let mut offsets = varint(attrs.len() as u64);
    offsets.extend(varint(0));
    offsets.extend(varint(0)); // group: dialect builtin
    offsets.extend(varint(attrs.len() as u64));
    for a in attrs {
        offsets.extend(varint(((a.len() as u64) << 1) | 1));
    }
    let mut out = b"ML\xefR".to_vec();
    out.push((version << 1) | 1);
    out.extend_from_slice(b"test\0");
    out.extend(section(0, &s));
    out.extend(section(1, &dialects));
    out.extend(section(2, &attr_data));
    out.extend(section(3, &offsets));
    out.extend(section(4, ir));
    for (id, data) in extra_sections {
        out.extend(section(*id, data));
    }
    out
}

#[test]
fn synthetic_minimal_module_decodes() {
    // Top block: one op `test.op` (mask 0, location 0).
    let d = bytecode::decode(&synthetic(0, &[0x05, 0x01, 0x00, 0x01], &[])).unwrap();
    assert_eq!(d.written_op_names(), vec!["test.op"]);
    assert!(d.notes.iter().any(|n| n.contains("not a function")));
}

#[test]
fn deep_region_nesting_is_an_error_not_a_stack_overflow() {
    // op with one region (mask 0x10, regions (1 << 1) | 0 = varint 0x05) → region: 1 block, 0 values → block of 1 op → ...
    let depth = 100_000;
    let mut ir = vec![0x05];
    for _ in 0..depth {
        ir.extend_from_slice(&[0x01, 0x10, 0x01, 0x05, 0x03, 0x01, 0x05]);
    }
    ir.extend_from_slice(&[0x01, 0x00, 0x01]);
    let e = bytecode::decode(&synthetic(0, &ir, &[])).unwrap_err();
    assert!(e.to_string().contains("nested deeper"), "{e}");
}

#[test]
fn deep_attribute_nesting_is_an_error_not_a_stack_overflow() {
    // Attribute i is an array holding attribute i + 1, 5000 deep.
    let n = 5000u64;
    let varint2 = |v: u64| -> Vec<u8> {
        if v < 128 {
            vec![((v << 1) | 1) as u8]
        } else {
            let mut out = vec![0u8];
            out.extend_from_slice(&v.to_le_bytes());
            out
        }
    };
    let mut attrs: Vec<Vec<u8>> = (0..n)
        .map(|i| {
            let mut a = vec![0x01, 0x03]; // ArrayAttr, one element
            a.extend(varint2(i + 1));
            a
        })
        .collect();
    attrs.push(vec![0x1f]);
    let e = bytecode::decode(&synthetic_attrs(0, &attrs, &[0x05, 0x01, 0x00, 0x01], &[])).unwrap_err();
    assert!(e.to_string().contains("nested deeper"), "{e}");
}

#[test]
fn corrupt_inputs_give_clear_errors() {
    let good = synthetic(0, &[0x05, 0x01, 0x00, 0x01], &[]);
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("empty", Vec::new(), "magic"),
        ("wrong magic", b"MLIR\x01x\0".to_vec(), "magic"),
        ("future version", synthetic(7, &[0x05, 0x01, 0x00, 0x01], &[]), "version 7"),
        ("unknown section", synthetic(0, &[0x05, 0x01, 0x00, 0x01], &[(12, vec![1, 2])]), "unknown section id 12"),
        (
            "duplicate section",
            synthetic(0, &[0x05, 0x01, 0x00, 0x01], &[(4, vec![0x05, 0x01, 0x00, 0x01])]),
            "duplicate IR section",
        ),
        ("unknown op name", synthetic(0, &[0x05, 0x09, 0x00, 0x01], &[]), "operation name index 4 out of range"),
        ("bad attribute index", synthetic(0, &[0x05, 0x01, 0x00, 0x0b], &[]), "attribute index 5 out of range"),
        (
            "operand out of range",
            synthetic(0, &[0x05, 0x01, 0x04, 0x01, 0x03, 0x01], &[]),
            "operand value 0 out of range",
        ),
        (
            "huge count",
            synthetic(0, &[0x05, 0x01, 0x02, 0x01, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f], &[]),
            "result count",
        ),
        ("truncated", good[..good.len() - 2].to_vec(), "malformed"),
    ];
    for (what, bytes, expect) in cases {
        let e = bytecode::decode(&bytes).expect_err(what).to_string();
        assert!(e.contains(expect), "{what}: `{e}` should mention `{expect}`");
    }
}
