//! The HLO grammar, feature by feature, on small HLO written for these tests (tests/data/hlo).

use hlolint::ir::{DType, Def, Dim, LineIndex, Module, OpId, Shape, ValueKind};
use hlolint::parse::hlo::parse_hlo;
use std::fmt::Write;

fn read(name: &str) -> String {
    std::fs::read_to_string(format!("{}/tests/data/hlo/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn op(m: &Module<'_>, name: &str) -> OpId {
    m.op_ids().find(|&i| m.op(i).name == name).unwrap_or_else(|| panic!("no op {name}"))
}

/// A readable rendering of the whole graph: one line per instruction with its edges.
fn describe(m: &Module<'_>) -> String {
    let mut out = String::new();
    writeln!(out, "module {} scheduled={} entry={:?}", m.name, m.scheduled, m.entry.map(|f| m.func(f).name)).unwrap();
    for a in &m.attrs {
        writeln!(out, "  @{} = {}", a.key, a.span.text(m.text).split_once('=').map(|x| x.1).unwrap_or("")).unwrap();
    }
    for (k, f) in m.funcs.iter().enumerate() {
        let params: Vec<String> =
            f.params.iter().map(|p| format!("{}: {:?}", p.name, p.ty.shape().map(|s| s.to_string()))).collect();
        let thread = f.attrs.iter().map(|a| a.span.text(m.text)).collect::<Vec<_>>().join(" ");
        writeln!(
            out,
            "func {}{} ({}) callers={} {thread}",
            if f.is_entry { "ENTRY " } else { "" },
            f.name,
            params.join(", "),
            f.callers.len()
        )
        .unwrap();
        for id in m.func_ops(hlolint::ir::FuncId(k as u32)) {
            let o = m.op(id);
            let operands: Vec<String> = o
                .operands
                .iter()
                .map(|x| match x.def {
                    Def::Op { op, .. } => m.op(op).name.to_string(),
                    _ => format!("?{}", x.name),
                })
                .collect();
            let calls: Vec<String> = o.calls.iter().map(|c| format!("{}={}", c.role, m.func(c.func).name)).collect();
            let users: Vec<&str> = o.users.iter().map(|&u| m.op(u).name).collect();
            let keys: Vec<&str> = o.attrs.iter().map(|a| a.key).collect();
            writeln!(
                out,
                "  {}{} = {} {}({}) calls[{}] users[{}] attrs[{}]",
                if o.is_root { "ROOT " } else { "" },
                o.name,
                o.shape().map(|s| s.to_string()).unwrap_or_default(),
                o.opcode,
                operands.join(", "),
                calls.join(" "),
                users.join(" "),
                keys.join(" ")
            )
            .unwrap();
        }
    }
    out
}

#[test]
fn features_graph_snapshot() {
    let text = read("features.hlo");
    let m = parse_hlo("features.hlo", &text).unwrap();
    insta::assert_snapshot!(describe(&m));
}

#[test]
fn future_syntax_parses_generically() {
    let text = read("future.hlo");
    let m = parse_hlo("future.hlo", &text).unwrap();
    insta::assert_snapshot!(describe(&m));
    let y = m.op(op(&m, "y"));
    assert_eq!(y.opcode, "shiny-new-op");
    let nested = y.attr("new_attr").unwrap();
    assert!(nested.get("nested").unwrap().get("deep").is_some());
}

#[test]
fn shapes_layouts_and_memory_spaces() {
    let text = read("features.hlo");
    let m = parse_hlo("f", &text).unwrap();
    let cs = m.op(op(&m, "copy-start"));
    let elems = cs.shape().unwrap().tuple_elements();
    assert_eq!(elems.len(), 3);
    assert_eq!(elems[0].memory_space(), Some(1));
    assert_eq!(elems[1].memory_space(), Some(0));
    assert_eq!(elems[2].memory_space(), Some(2));
    let tiles = &elems[0].array().unwrap().layout.as_ref().unwrap().tiles;
    assert_eq!(tiles, &vec![vec![Some(8), Some(128)]]);
    // Operand shapes in the long form are kept.
    let operand_ty = cs.operands[0].ty.as_ref().and_then(|t| t.shape()).unwrap();
    assert_eq!(operand_ty.to_string(), "f32[8,128]");
    let dynamic = m.op(op(&m, "dyn")).shape().unwrap().array().unwrap().dims.clone();
    assert_eq!(dynamic, vec![Dim::Bounded(8), Dim::Unbounded]);
    let types = m.op(op(&m, "types")).shape().unwrap().leaves().iter().map(|a| a.dtype).collect::<Vec<_>>();
    for d in [DType::S1, DType::U2, DType::F4E2M1FN, DType::F8E8M0FNU, DType::F8E4M3B11FNUZ, DType::C128, DType::Token]
    {
        assert!(types.contains(&d), "{d} missing");
    }
    let s4 = m.op(op(&m, "types")).shape().unwrap().leaves()[2].layout.clone().unwrap();
    assert_eq!(s4.element_bits, Some(4));
    assert!(matches!(m.op(op(&m, "w8")).shape(), Some(Shape::Array(a)) if a.dtype == DType::F8E4M3FN));
}

#[test]
fn attributes_have_typed_views() {
    let text = read("features.hlo");
    let m = parse_hlo("f", &text).unwrap();
    let bcast = m.op(op(&m, "bcast"));
    assert_eq!(bcast.attr("dimensions").unwrap().as_int_list(), Some(vec![0, 1]));
    let conv = m.op(op(&m, "conv"));
    assert_eq!(conv.attr("dim_labels").unwrap().span.text(&text), "b0f_0io->b0f");
    assert_eq!(conv.attr("window").unwrap().get("size").unwrap().word(), Some("1x1"));
    assert_eq!(m.op(op(&m, "pad")).attr("padding").unwrap().word(), Some("1_1x0_2_0"));
    assert_eq!(m.op(op(&m, "slice")).attr("slice").unwrap().items().len(), 2);
    // backend_config both as raw JSON and as an escaped string.
    let custom = op(&m, "custom");
    let bc = m.backend_config(custom).unwrap();
    assert!(bc["custom_call_config"]["body"].as_str().unwrap().starts_with("TUzvUg"));
    assert_eq!(m.backend_config(op(&m, "dyn")).unwrap()["key"], "value with \"quotes\"");
    assert_eq!(m.custom_call_target(custom).as_deref(), Some("tpu_custom_call"));
    // frontend attributes with a JSON value, metadata fields, control predecessors.
    let dot = m.op(op(&m, "dot"));
    let fa = dot.attr("frontend_attributes").unwrap();
    assert_eq!(fa.get("_xla_compute_type").unwrap().string().as_deref(), Some("fp8"));
    assert_eq!(m.op_name(op(&m, "fusion")).as_deref(), Some("jit(f)/convert"));
    let preds: Vec<&str> = m.control_predecessors(op(&m, "copy-done")).iter().map(|&o| m.op(o).name).collect();
    assert_eq!(preds, vec!["dot", "reduce"]);
    // Literals.
    let payload = |n: &str| m.op(op(&m, n)).payload.as_deref().unwrap().span.text(&text).to_string();
    assert_eq!(payload("c.negnan"), "(-nan(0x1))");
    assert_eq!(payload("c.elided"), "({...})");
    assert_eq!(m.parameter_number(op(&m, "w8")), Some(4));
    let lit = m.op(op(&m, "lit")).attr("literal").unwrap();
    assert_eq!(lit.span.text(&text), "f32[2]{0} {1, 2}");
    // Shardings in their forms are kept whole.
    let sh = m.op(op(&m, "w8")).attr("sharding").unwrap();
    assert_eq!(sh.span.text(&text), "{devices=[4,2]<=[2,4]T(1,0) last_tile_dims={manual}}");
    assert!(matches!(m.op(op(&m, "ar.v3")).attr("replica_groups").unwrap().kind, ValueKind::Seq(_)));
}

#[test]
fn call_graph_schedule_and_stack_frames() {
    let text = read("features.hlo");
    let m = parse_hlo("f", &text).unwrap();
    let w = m.op(op(&m, "while"));
    let roles: Vec<(&str, &str)> = w.calls.iter().map(|c| (c.role, m.func(c.func).name)).collect();
    assert_eq!(roles, vec![("condition", "cond"), ("body", "body")]);
    let cond = m.op(op(&m, "conditional"));
    assert_eq!(cond.calls.len(), 2);
    let add = m.func_by_name("add.clone").unwrap();
    assert_eq!(m.func(add).callers.len(), 4, "reduce, reduce-window, two all-reduces");
    // The fusion's parameter and root are reachable from the caller.
    let fusion = op(&m, "fusion");
    let callee = m.op(fusion).calls[0].func;
    let root = m.root(callee).unwrap();
    assert_eq!(m.op(root).opcode, "convert");
    // Schedule order = textual order.
    assert!(m.position(op(&m, "copy-start")) < m.position(op(&m, "copy-done")));
    assert!(m.scheduled);
    // async wrapped computation keeps its thread.
    let wrapped = m.func_by_name("async_wrapped").unwrap();
    assert_eq!(m.func(wrapped).attrs[0].value().string().as_deref(), Some("async_thread"));
    // Stack frames: frame 2 = model.py:10 called from café.py:3 (printed parent ids are +1).
    let stack = m.source_stack(op(&m, "a.1"));
    let rendered: Vec<String> = stack.iter().map(|l| format!("{}:{} {}", l.file, l.line, l.function)).collect();
    assert_eq!(rendered, vec!["/home/user/model.py:10 layer", "/home/user/café.py:3 <module>"]);
    let fusion_src = m.source_stack(fusion);
    assert_eq!(fusion_src[0].line, 11);
}

#[test]
fn short_form_and_headerless_modules() {
    let text = "add {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n\nENTRY e {\n  a = f32[4] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = f32[] reduce(a, z), dimensions={0}, to_apply=add\n}\n";
    let m = parse_hlo("short", text).unwrap();
    assert_eq!(m.funcs.len(), 2);
    assert_eq!(m.func(m.entry.unwrap()).name, "e");
    let r = op(&m, "r");
    assert_eq!(m.op(r).calls[0].role, "to_apply");
    assert_eq!(m.operand_ops(r).map(|o| m.op(o).name).collect::<Vec<_>>(), vec!["a", "z"]);
    // Instructions written inline as operands, and result shapes left to inference (hand-written HLO).
    let text = "HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n  ROOT r = add(f32[] multiply(a, negate(a)), a)\n}\n";
    let m = parse_hlo("nested", text).unwrap();
    let names: Vec<(&str, &str)> = m.ops.iter().map(|o| (o.opcode, o.name)).collect();
    assert_eq!(
        names,
        vec![("parameter", "a"), ("negate", "negate(a)"), ("multiply", "f32[] multiply(a, negate(a))"), ("add", "r")]
    );
    let r = op(&m, "r");
    assert!(m.op(r).ty.shape().is_none());
    let mul = m.operand_def(r, 0).unwrap();
    assert_eq!(m.op(mul).opcode, "multiply");
    assert_eq!(m.op(m.operand_def(mul, 1).unwrap()).opcode, "negate");
    // No ROOT: the last instruction is the root.
    let m = parse_hlo("noroot", "c {\n  a = f32[] parameter(0)\n  b = f32[] negate(a)\n}\n").unwrap();
    assert!(m.op(op(&m, "b")).is_root);
}

#[test]
fn errors_point_where_parsing_stopped() {
    let cases = [
        ("truncated", "HloModule m\n\nENTRY %e (a: f32[4]) -> f32[4] {\n  %a = f32[4]{0} parameter(0)\n  ROOT %n = f32[4]{0} negate(%a"),
        ("bad shape", "HloModule m\nENTRY e {\n  a = f32[4,x] parameter(0)\n}\n"),
        ("undefined operand", "HloModule m\nENTRY e {\n  a = f32[4] parameter(0)\n  ROOT b = f32[4] add(a, c)\n}\n"),
        ("undefined computation", "HloModule m\nENTRY e {\n  a = f32[4] parameter(0)\n  ROOT b = f32[] reduce(a, a), to_apply=nope\n}\n"),
        ("unterminated comment", "HloModule m /* oops\nENTRY e {\n}\n"),
        ("unbalanced attribute", "HloModule m\nENTRY e {\n  ROOT a = f32[4] parameter(0), metadata={op_name=\"x\"\n}\n"),
        ("two entries", "HloModule m\nENTRY e {\n  ROOT a = f32[] parameter(0)\n}\nENTRY f {\n  ROOT a = f32[] parameter(0)\n}\n"),
        ("empty computation", "HloModule m\nENTRY e {\n}\n"),
        ("header only", "HloModule m, is_scheduled=true\n"),
        ("bad layout", "HloModule m\nENTRY e {\n  ROOT a = f32[4]{0:T(8,} parameter(0)\n}\n"),
        ("not hlo", "module attributes {x = 1} {\n}\n"),
        ("duplicate computation", "HloModule m\nc {\n  ROOT a = f32[] parameter(0)\n}\nc {\n  ROOT a = f32[] parameter(0)\n}\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT r = f32[] call(p), to_apply=c\n}\n"),
        ("undefined control predecessor", "HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT r = f32[] negate(p), control-predecessors={nope}\n}\n"),
        ("window pad of three", "HloModule m\nENTRY e {\n  p = f32[1,4,4,1] parameter(0)\n  k = f32[1,1,1,1] parameter(1)\n  ROOT c = f32[1,4,4,1] convolution(p, k), window={size=1x1 pad=1_1_0}, dim_labels=b01f_01io->b01f\n}\n"),
        ("window ranks differ", "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = f32[4] reduce-window(p, z), window={size=2 stride=1x1}, to_apply=c\n}\nc {\n  a = f32[] parameter(0)\n  ROOT b = f32[] parameter(1)\n}\n"),
        ("window field unknown", "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = f32[4] reduce-window(p, z), window={size=2 strides=1}, to_apply=c\n}\nc {\n  a = f32[] parameter(0)\n  ROOT b = f32[] parameter(1)\n}\n"),
        ("aliasing garbage", "HloModule m, input_output_alias={ {0}: garbage }\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n"),
        ("aliasing kind", "HloModule m, input_output_alias={ {0}: (0, {}, maybe) }\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n"),
        ("donor without index", "HloModule m, buffer_donor={ (0) }\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n"),
    ];
    let mut out = String::new();
    for (name, text) in cases {
        let err = parse_hlo(name, text).err().unwrap_or_else(|| panic!("{name} should fail"));
        let at = err.span.offset();
        let (line, col) = LineIndex::new(text).line_col(text, at);
        writeln!(out, "{name}: line {line} col {col}: {err}").unwrap();
    }
    insta::assert_snapshot!(out);
}

#[test]
fn attribute_grammars_xla_accepts() {
    // The forms XLA prints and reads back (checked with jaxlib 0.10.2's parser): none of them is an error.
    let text = "HloModule m, input_output_alias={ {0}: (0, {}, may-alias), {1}: (1, {}) }, buffer_donor={ (2, {}) }, \
                input_output_alias_unused={}\nENTRY e {\n  a = f32[1,4,4,1] parameter(0)\n  b = f32[1,1,1,1] parameter(1)\n  \
                c = f32[] parameter(2)\n  q = f32[1,4,4,1] convolution(a, b), window={size=1x1 pad=-1_1x0_0 rhs_reversal=0x1}, \
                dim_labels=b01f_01io->b01f\n  ROOT t = (f32[1,4,4,1], f32[1,1,1,1]) tuple(q, b), control-predecessors={q}\n}\n";
    let m = parse_hlo("ok.hlo", text).expect("XLA's own spellings parse");
    assert_eq!(m.control_predecessors(op(&m, "t")), vec![op(&m, "q")]);
    for empty in ["input_output_alias={}", "buffer_donor={}"] {
        let text = format!("HloModule m, {empty}\nENTRY e {{\n  ROOT p = f32[] parameter(0)\n}}\n");
        assert!(parse_hlo("empty.hlo", &text).is_ok(), "{empty}");
    }
}

#[test]
fn error_rendering() {
    let text = "HloModule m\nENTRY e {\n  a = f32[4] parameter(0)\n  ROOT b = f32[4] add(a, c)\n}\n";
    let err = parse_hlo("bad.hlo", text).unwrap_err();
    let mut rendered = String::new();
    miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor())
        .with_width(100)
        .render_report(&mut rendered, &err)
        .unwrap();
    insta::assert_snapshot!(rendered);
}

#[test]
fn module_name_followed_by_a_colon_and_cr_only_line_endings() {
    // XLA's lexer takes `name:` as a name; old Mac line endings are whitespace to it
    let text = "HloModule m:\n\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT n = f32[2] negate(p)\n}\n";
    let m = parse_hlo("colon.hlo", text).expect("`HloModule m:` parses");
    assert_eq!(m.name, "m");
    let cr = text.replace('\n', "\r");
    let m = parse_hlo("cr.hlo", &cr).expect("CR-only line endings parse");
    assert_eq!(m.ops.iter().filter(|o| o.opcode == "negate").count(), 1);
    let crlf = text.replace('\n', "\r\n");
    assert!(parse_hlo("crlf.hlo", &crlf).is_ok());
}

#[test]
fn computations_written_inline_as_attribute_values() {
    // XLA's parser takes a body in place of a computation name (`to_apply={...}`) and names it `_`; bodies nest.
    let text = "HloModule m\n\nENTRY main {\n  p = f32[4] parameter(0)\n  z = f32[] constant(0)\n  \
                ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply={\n    a = f32[] parameter(0)\n    \
                b = f32[] parameter(1)\n    ROOT s = f32[] call(a, b), to_apply={\n      \
                x = f32[] parameter(0)\n      y = f32[] parameter(1)\n      ROOT t = f32[] add(x, y)\n    }\n  }\n}\n";
    let m = parse_hlo("inline.hlo", text).expect("inline bodies parse");
    insta::assert_snapshot!(describe(&m));
    let reduce = m.op(op(&m, "r"));
    assert_eq!(reduce.calls.len(), 1);
    let body = reduce.calls[0].func;
    assert!(m.func_ops(body).into_iter().any(|id| m.op(id).name == "s"), "the reduce calls the body holding `s`");
    let inner = m.op(op(&m, "s")).calls[0].func;
    assert!(m.func_ops(inner).into_iter().any(|id| m.op(id).name == "t"));
    assert_eq!(m.entry.map(|f| m.func(f).name), Some("main"));

    // Without ENTRY the last computation written at the top is the entry, not an inline body after it.
    let headerless = "c {\n  p = f32[4] parameter(0)\n  z = f32[] constant(0)\n  \
                      ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply={ u = f32[] parameter(0) ROOT s = f32[] negate(u) }\n}\n";
    let m = parse_hlo("headerless.hlo", headerless).unwrap();
    assert_eq!(m.entry.map(|f| m.func(f).name), Some("c"));

    // Names in braces are still names (`branch_computations={%a, %b}`), and an undefined one is still an error.
    let err = parse_hlo(
        "names.hlo",
        "ENTRY e {\n  p = s32[] parameter(0)\n  ROOT c = f32[] conditional(p), branch_computations={%a, %b}\n}\n",
    )
    .unwrap_err();
    assert!(err.to_string().contains("`a` is not defined"), "{err}");

    // A body cut short, and bodies nested past the limit, are syntax errors at their place.
    assert!(
        parse_hlo("cut.hlo", "ENTRY e {\n  ROOT r = f32[] call(), to_apply={ ROOT s = f32[] constant(0)\n").is_err()
    );
    let mut deep = String::from("ROOT s0 = f32[] constant(0)");
    for k in 1..100 {
        deep = format!("ROOT s{k} = f32[] call(), to_apply={{ {deep} }}");
    }
    let err = parse_hlo("deep.hlo", &format!("ENTRY e {{\n  {deep}\n}}\n")).unwrap_err();
    assert!(err.to_string().contains("less deeply nested inline computations"), "{err}");
}

#[test]
fn nesting_as_deep_as_xla_takes() {
    // XLA's parser takes a 2,000-deep tuple shape and ~1,000 instructions nested as operands (it overflows its
    // stack further on); so do we, on a test thread's 2 MB stack, and refuse deeper input with a syntax error.
    let tuple = |n: usize| format!("{}f32[]{}", "(".repeat(n), ")".repeat(n));
    let text = format!("HloModule m\nENTRY e {{\n  ROOT p = {} parameter(0)\n}}\n", tuple(2_000));
    let m = parse_hlo("deep_tuple.hlo", &text).expect("a 2,000-deep tuple shape parses");
    assert!(m.op(op(&m, "p")).shape().is_some_and(|s| s.to_string().len() > 4_000));
    let text = format!("HloModule m\nENTRY e {{\n  ROOT p = {} parameter(0)\n}}\n", tuple(2_100));
    assert!(parse_hlo("deeper.hlo", &text).unwrap_err().to_string().contains("less deeply nested tuple shape"));

    let operands = |n: usize| (0..n).fold("p".to_string(), |e, _| format!("f32[] negate({e})"));
    let text = format!("ENTRY e {{\n  p = f32[] parameter(0)\n  ROOT r = f32[] negate({})\n}}\n", operands(1_000));
    let m = parse_hlo("deep_operands.hlo", &text).expect("1,000 instructions nested as operands parse");
    assert_eq!(m.ops.iter().filter(|o| o.opcode == "negate").count(), 1_001);
    let text = format!("ENTRY e {{\n  p = f32[] parameter(0)\n  ROOT r = f32[] negate({})\n}}\n", operands(1_100));
    assert!(parse_hlo("deeper.hlo", &text).unwrap_err().to_string().contains("less deeply nested operands"));
}
