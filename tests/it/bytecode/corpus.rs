//! The corpus: real kernels (`../shared/corpus`, skipped with a notice when absent) against libtpu's
//! `post-deserialization` Mosaic dump, in MLIR's custom syntax.

use super::*;

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
