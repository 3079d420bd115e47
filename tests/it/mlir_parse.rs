//! The MLIR parser on hand-written inputs (`tests/data/mlir/`): snapshots of what it understood (outline and kernel
//! view), targeted facts, syntax errors, and robustness against random and truncated input.

use hlolint::ir::print::outline;
use hlolint::ir::{DType, Def, Layer, Module, Type};
use hlolint::parse::mlir::{looks_like_mlir, parse_mlir, resolve_loc};
use hlolint::semantic::kernel::{self, ArgRole, Index};

fn data(name: &str) -> String {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/mlir").join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn parse<'a>(name: &str, text: &'a str) -> Module<'a> {
    parse_mlir(name, text).unwrap_or_else(|e| panic!("{:?}", miette::Report::new(e)))
}

fn snapshot(name: &str) {
    let text = data(name);
    let m = parse(name, &text);
    let mut s = outline(&m, &text);
    for k in kernel::kernels(&m) {
        s.push_str("\n--- kernel view ---\n");
        s.push_str(&serde_norway::to_string(&k).unwrap());
    }
    insta::assert_snapshot!(name.replace('.', "_"), s);
}

#[test]
fn snapshot_manual_dma() {
    snapshot("manual_dma.mlir");
}

#[test]
fn snapshot_stablehlo() {
    snapshot("stablehlo.mlir");
}

#[test]
fn snapshot_llo_stage() {
    snapshot("llo_stage.mlir");
}

#[test]
fn manual_dma_kernel_facts() {
    let text = data("manual_dma.mlir");
    assert!(looks_like_mlir(&text));
    let m = parse("manual_dma.mlir", &text);
    assert_eq!(m.layer, Layer::Mosaic);
    for op in &m.ops {
        for o in &op.operands {
            assert_ne!(o.def, Def::Unresolved, "%{} in {}", o.name, op.opcode);
        }
    }
    let ks = kernel::kernels(&m);
    assert_eq!(ks.len(), 1);
    let k = &ks[0];
    let roles: Vec<ArgRole> = k.args.iter().map(|a| a.role).collect();
    use ArgRole::*;
    assert_eq!(
        roles,
        [
            GridIndex(0),
            ScalarPrefetch(0),
            Operand(0),
            Operand(1),
            Operand(2),
            Scratch(0),
            Scratch(1),
            Scratch(2),
            Scratch(3)
        ]
    );
    // scales in SMEM, inputs in `any`, 2-slot VMEM buffer, semaphores
    assert_eq!(k.args[1].memory_space, Some("smem"));
    assert_eq!(k.args[2].memory_space, Some("any"));
    assert_eq!(k.args[5].ty.as_ref().and_then(|t| t.shaped()).and_then(|s| s.static_dims()), Some(vec![2, 128, 512]));
    assert_eq!(k.args[5].ty.as_ref().and_then(|t| t.dtype()), Some(DType::F8E4M3FN));
    assert!(k.args[7].semaphore && k.args[8].semaphore && !k.args[5].semaphore);
    assert!(k.args[1].read && !k.args[1].written);
    assert!(k.args[4].written);
    assert!(k.args[5].written && k.args[5].read);

    assert_eq!(k.dma_starts.len(), 3);
    let first = &k.dma_starts[0];
    assert_eq!(first.source.as_ref().and_then(|s| s.base_arg), Some(2));
    assert_eq!(first.target.as_ref().and_then(|s| s.base_arg), Some(5));
    assert_eq!(
        first.target.as_ref().map(|s| s.slices.clone()),
        Some(vec![vec![Index::Const(0), Index::Const(0), Index::Const(0)]])
    );
    assert_eq!(first.target_semaphore.as_ref().and_then(|s| s.base_arg), Some(7));
    // the prefetch inside `scf.if` inside `scf.for` writes slot `(i + 1) % 2`
    let prefetch = &k.dma_starts[2];
    let chain: Vec<&str> = prefetch.inside.iter().map(|&o| m.op(o).opcode).collect();
    assert_eq!(chain, ["scf.if", "scf.for"]);
    assert_eq!(prefetch.target.as_ref().unwrap().slices[0][0].expr(), "((arg9 + 1) % 2)");
    assert_eq!(prefetch.target_semaphore.as_ref().unwrap().slices[0][0].expr(), "((arg9 + 1) % 2)");
    assert_eq!(prefetch.source.as_ref().unwrap().slices[0][0].expr(), "((arg9 + 1) * 128)");
    // the wait in the loop body is on the current slot
    assert_eq!(k.dma_waits[1].target.as_ref().unwrap().slices[0][0].expr(), "(arg9 % 2)");

    assert_eq!(k.dma_waits.len(), 2);
    let w = &k.dma_waits[1];
    assert_eq!(w.opcode, "tpu.wait_dma2");
    assert_eq!(w.semaphore.as_ref().and_then(|s| s.base_arg), Some(7));
    assert_eq!(w.target.as_ref().and_then(|s| s.base_arg), Some(5));
    assert_eq!(w.source.as_ref().and_then(|s| s.base_arg), Some(2));

    assert_eq!(k.matmuls.len(), 1);
    let mm = &k.matmuls[0];
    assert_eq!(
        (mm.lhs, mm.rhs, mm.acc, mm.result),
        (Some(DType::F8E4M3FN), Some(DType::F8E4M3FN), Some(DType::F32), Some(DType::F32))
    );
    assert_eq!(k.loops.len(), 1);
    assert_eq!((k.loops[0].lower, k.loops[0].upper, k.loops[0].step), (Some(0), Some(4), Some(1)));
    assert_eq!(k.conditionals.len(), 1);

    // the loop's block arguments: induction variable (i32) and the accumulator (iter_args)
    let for_op = m.op(k.loops[0].op);
    let body = m.regions[for_op.regions[0].idx()].blocks[0];
    let args: Vec<String> = m.blocks[body.idx()]
        .args
        .iter()
        .map(|p| format!("{}:{:?}", p.name, p.ty.mlir().map(|t| t.to_string())))
        .collect();
    assert_eq!(args, ["arg9:Some(\"i32\")", "arg10:Some(\"vector<128x512xf32>\")"]);
    let roles: Vec<Option<&str>> = for_op.operands.iter().map(|o| o.role).collect();
    assert_eq!(roles, [None, Some("to"), Some("step"), Some("iter_args")]);
    assert_eq!(for_op.result_count, 1);

    // a `loc(#loc1)` resolves through the alias
    let dma = m.op(first.op);
    let loc = dma.attr("loc").unwrap();
    assert_eq!(resolve_loc(&m, loc).map(|(f, l, c)| (f.into_owned(), l, c)), Some(("kernel.py".to_string(), 21, 4)));
}

#[test]
fn stablehlo_facts() {
    let text = data("stablehlo.mlir");
    let m = parse("stablehlo.mlir", &text);
    assert_eq!(m.layer, Layer::StableHlo);
    assert_eq!(m.name, "jit_f");
    let main = m.func(m.entry.unwrap());
    assert_eq!(main.name, "main");
    assert_eq!(main.params[0].attrs[0].key, "sdy.sharding");
    let mm = kernel::matmuls(&m, m.entry.unwrap());
    assert_eq!(mm.len(), 1);
    assert_eq!((mm[0].lhs, mm[0].rhs, mm[0].result), (Some(DType::BF16), Some(DType::BF16), Some(DType::F32)));
    // the dot's rhs is the convert from f8
    let dot = m.op(mm[0].op);
    let conv = m.op(m.operand_def(mm[0].op, 1).unwrap());
    assert_eq!(conv.opcode, "stablehlo.convert");
    assert_eq!(conv.operands[0].ty.as_ref().and_then(Type::mlir).and_then(|t| t.dtype()), Some(DType::F8E4M3FN));
    assert_eq!(dot.attr("contracting_dims").map(|v| v.span.text(&text)), Some("[1] x [0]"));
    assert_eq!(resolve_loc(&m, dot.attr("loc").unwrap()).map(|x| x.1), Some(12));
    // reduce: `init:` role and its reducer region (a continuation line) with two block args
    let reduce = m.ops.iter().find(|o| o.opcode == "stablehlo.reduce").unwrap();
    assert_eq!(reduce.operands[1].role, Some("init"));
    assert_eq!(reduce.regions.len(), 1);
    let rb = m.regions[reduce.regions[0].idx()].blocks[0];
    assert_eq!(m.blocks[rb.idx()].args.len(), 2);
    // while: two results, cond and do regions sharing the declared block arguments
    let w = m.ops.iter().position(|o| o.opcode == "stablehlo.while").unwrap();
    assert_eq!(m.ops[w].result_count, 2);
    assert_eq!(m.ops[w].regions.len(), 2);
    for r in &m.ops[w].regions {
        let b = m.regions[r.idx()].blocks[0];
        assert_eq!(m.blocks[b.idx()].args.iter().map(|p| p.name).collect::<Vec<_>>(), ["iterArg", "iterArg_0"]);
    }
    // `%3#1` resolves to the second result of the while
    let cc = m.ops.iter().find(|o| o.opcode == "stablehlo.custom_call").unwrap();
    assert!(matches!(cc.operands[0].def, Def::Op { op, index: 1 } if op.idx() == w));
    assert_eq!(
        hlolint::parse::mlir::attr::string(cc.attr("backend_config").unwrap()).unwrap(),
        r#"{"custom_call_config": {"body": "TUzvUgE="}}"#
    );
    // calls
    let step = m.func_by_name("step").unwrap();
    assert_eq!(m.func(step).callers.len(), 1);
    assert_eq!(m.op(m.func(step).callers[0]).opcode, "func.call");
    let pair = m.func_by_name("pair").unwrap();
    let call = m.op(m.func(pair).callers[0]);
    assert_eq!(call.result_count, 2);
    // generic op with a region and block label
    let ar = m.ops.iter().find(|o| o.opcode == "stablehlo.all_reduce").unwrap();
    assert!(ar.attr("replica_groups").is_some());
    let b = m.regions[ar.regions[0].idx()].blocks[0];
    assert_eq!(m.blocks[b.idx()].label, Some("bb0"));
    // the module-level sdy.mesh is kept as a module attribute, `#loc` aliases too
    assert!(m.attrs.iter().any(|a| a.key == "sdy.mesh"));
    assert!(m.attrs.iter().any(|a| a.key == "#loc3"));
    // spans point at the text
    assert_eq!(&text[dot.opcode_span.range()], "stablehlo.dot_general");
    assert!(text[dot.span.range()].starts_with("%1 = stablehlo.dot_general"));
}

#[test]
fn llo_stage_facts() {
    let text = data("llo_stage.mlir");
    let m = parse("llo_stage.mlir", &text);
    let k = &kernel::kernels(&m)[0];
    assert_eq!(k.args[1].memory_space, Some("vmem"));
    assert_eq!(k.args[1].ty.as_ref().and_then(|t| t.dtype()), Some(DType::F8E4M3FN));
    assert_eq!(k.window_params[1].pipeline_mode, Some("synchronous"));
    assert_eq!(k.matmuls.len(), 1);
    assert_eq!(k.matmuls[0].opcode, "llo.vmatmul.mubr");
    assert_eq!(k.matmuls[0].data_format, Some("e4m3b"));
    assert_eq!(k.matmuls[0].lhs, Some(DType::F8E4M3FN));
    assert!(k.args[3].written && k.args[1].read && k.args[2].read);
    let store = m.ops.iter().find(|o| o.opcode == "llo.vector_store").unwrap();
    assert_eq!(store.operands[1].role, Some("into"));
    let sif = m.ops.iter().find(|o| o.opcode == "scf.if").unwrap();
    assert!(sif.attr("in_layout").is_some());
}

#[test]
fn older_and_generic_spellings() {
    // positional `tpu.wait_dma`, and a module written entirely in generic form
    let text = r#"module attributes {stable_mosaic.version = 3 : i64} {
  func.func @k(%arg0: memref<8x128xf32, #tpu.memory_space<any>>, %arg1: memref<8x128xf32, #tpu.memory_space<vmem>>, %arg2: memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>) attributes {dimension_semantics = [], scalar_prefetch = 0 : i64, scratch_operands = 2 : i64} {
    tpu.enqueue_dma source(%arg0 : memref<8x128xf32, #tpu.memory_space<any>>) target(%arg1 : memref<8x128xf32, #tpu.memory_space<vmem>>) target_semaphore(%arg2 : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>)
    tpu.wait_dma %arg2, %arg1 : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>, memref<8x128xf32, #tpu.memory_space<vmem>>
    return
  }
}
"#;
    let m = parse("old.mlir", text);
    let k = &kernel::kernels(&m)[0];
    assert_eq!(
        k.args.iter().map(|a| a.role).collect::<Vec<_>>(),
        [ArgRole::Operand(0), ArgRole::Scratch(0), ArgRole::Scratch(1)]
    );
    assert_eq!(k.dma_waits[0].semaphore.as_ref().and_then(|s| s.base_arg), Some(2));
    assert_eq!(k.dma_waits[0].target.as_ref().and_then(|s| s.base_arg), Some(1));

    let generic = r#""builtin.module"() ({
  "func.func"() <{function_type = (i32) -> i32, sym_name = "f"}> ({
  ^bb0(%arg0: i32):
    %0 = "arith.addi"(%arg0, %arg0) : (i32, i32) -> i32
    "func.return"(%0) : (i32) -> ()
  }) : () -> ()
}) : () -> ()
"#;
    assert!(looks_like_mlir(generic));
    let m = parse("generic.mlir", generic);
    assert_eq!(m.funcs.len(), 1);
    assert_eq!(m.funcs[0].name, "f");
    assert_eq!(m.funcs[0].params.len(), 1);
    let add = m.ops.iter().find(|o| o.opcode == "arith.addi").unwrap();
    assert!(matches!(add.operands[0].def, Def::BlockArg { index: 0, .. }));
    assert_eq!(add.ty.mlir().map(|t| t.to_string()), Some("i32".into()));

    // multi-block CFG with a forward reference to a later block's value, and unknown dialects
    let cfg = r#"func.func @g(%a: i1, %b: f32) -> f32 {
  foo.bar %a [#foo.thing<1, "x">] {unit_attr} : i1
  cf.cond_br %a, ^bb1(%b : f32), ^bb2
^bb1(%x: f32):
  %y = "weird.op"(%x) {k = #weird<"?">} : (f32) -> f32
  cf.br ^bb2
^bb2:
  return %b : f32
}
"#;
    let m = parse("cfg.mlir", cfg);
    let _ = &m;
    let more = r#"module @jit_g {
  func.func public @main(%arg0: tensor<8xf32>, %n: i32) -> tensor<8xf32> {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}]>] out_shardings=[<@mesh, [{"x"}]>] manual_axes={"x"} (%arg1: tensor<4xf32>) {
      %1 = stablehlo.negate %arg1 : tensor<4xf32>
      sdy.return %1 : tensor<4xf32>
    } : (tensor<8xf32>) -> tensor<8xf32>
    %2 = scf.while (%arg2 = %n) : (i32) -> i32 {
      %c = arith.cmpi sgt, %arg2, %n : i32
      scf.condition(%c) %arg2 : i32
    } do {
    ^bb0(%arg3: i32):
      scf.yield %arg3 : i32
    }
    return %0 : tensor<8xf32>
  }
}
"#;
    let m2 = parse("more.mlir", more);
    let conv = r#"func.func @c(%arg0: tensor<1x8x8x3xbf16>, %arg1: tensor<3x3x3x16xf8E4M3FN>) -> tensor<1x8x8x16xf32> {
  %0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], rhs_dilate = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<1x8x8x3xbf16>, tensor<3x3x3x16xf8E4M3FN>) -> tensor<1x8x8x16xf32>
  %1 = stablehlo.composite "my.op" %0 {composite_attributes = {k = 1 : i64}, decomposition = @c} : (tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
  return %1 : tensor<1x8x8x16xf32>
}
"#;
    let mc = parse("conv.mlir", conv);
    let cv = mc.ops.iter().find(|o| o.opcode == "stablehlo.convolution").unwrap();
    assert_eq!(cv.attr("dim_numbers").map(|v| v.span.text(conv)), Some("[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]"));
    assert!(cv.attr("window").is_some() && cv.attr("feature_group_count").is_some());
    let mm = kernel::matmuls(&mc, hlolint::ir::FuncId(0));
    assert_eq!((mm[0].lhs, mm[0].rhs, mm[0].result), (Some(DType::BF16), Some(DType::F8E4M3FN), Some(DType::F32)));
    let comp = mc.ops.iter().find(|o| o.opcode == "stablehlo.composite").unwrap();
    assert_eq!(comp.payload.as_deref().and_then(hlolint::parse::mlir::attr::string).as_deref(), Some("my.op"));
    assert_eq!(comp.operands.len(), 1);
    let mc = m2.ops.iter().find(|o| o.opcode == "sdy.manual_computation").unwrap();
    assert_eq!(mc.attr("manual_axes").map(|v| v.span.text(more)), Some(r#"{"x"}"#));
    assert_eq!(mc.regions.len(), 1);
    assert_eq!(mc.ty.mlir().map(|t| t.to_string()), Some("tensor<8xf32>".into()));
    let neg = m2.ops.iter().find(|o| o.opcode == "stablehlo.negate").unwrap();
    assert!(matches!(neg.operands[0].def, Def::BlockArg { index: 0, .. }));
    let w = m2.ops.iter().find(|o| o.opcode == "scf.while").unwrap();
    assert_eq!((w.regions.len(), w.result_count), (2, 1));
    assert_eq!(w.ty.mlir().map(|t| t.to_string()), Some("i32".into()));
    for op in &m2.ops {
        for o in &op.operands {
            assert_ne!(o.def, Def::Unresolved, "%{} in {}", o.name, op.opcode);
        }
    }
    assert_eq!(m.layer, Layer::StableHlo);
    assert_eq!(m.regions[m.funcs[0].body.idx()].blocks.len(), 3);
    let br = m.ops.iter().find(|o| o.opcode == "cf.cond_br").unwrap();
    assert_eq!(br.operands.len(), 2);
    assert_eq!(br.operands[1].role, Some("successor"));
    assert_eq!(
        m.ops.iter().find(|o| o.opcode == "foo.bar").unwrap().attr("unit_attr").and_then(|v| v.word()),
        Some("unit")
    );
}

#[test]
fn multi_line_dictionaries_semaphores_and_remote_dma() {
    let text = r#"module {
  func.func @k(
      %arg0: i32,
      %arg1: memref<8x128xf32, #tpu.memory_space<vmem>>,
      %arg2: memref<2x8x128xf32, #tpu.memory_space<any>>,
      %arg3: memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>,
      %arg4: memref<!tpu.semaphore, #tpu.memory_space<semaphore_mem>>) attributes {
        dimension_semantics = [#tpu.dimension_semantics<arbitrary>],
        iteration_bounds = array<i64: 4>,
        scalar_prefetch = 0 : i64,
        scratch_operands = 2 : i64,
        window_params = [{pipeline_mode = #tpu.pipeline_mode<synchronous>, transform_indices = @transform_0, window_bounds = array<i64: 8, 128>}, {}]
      } {
    %c0 = arith.constant 0 : index
    %c1_i32 = arith.constant 1 : i32
    %0 = tpu.device_id : i32
    tpu.sem_signal %arg4, %c1_i32 device_id %0 : memref<!tpu.semaphore, #tpu.memory_space<semaphore_mem>>
    "tpu.region"() ({
      %1 = tpu.sem_alloc : memref<!tpu.semaphore, #tpu.memory_space<semaphore_mem>>
      tpu.sem_wait %1, %c1_i32 : memref<!tpu.semaphore, #tpu.memory_space<semaphore_mem>>
      tpu.yield
    }) : () -> ()
    %2 = tpu.memref_slice %arg2[%arg0, %arg0, %arg0] : memref<2x8x128xf32, #tpu.memory_space<any>> -> memref<1x8x128xf32, #tpu.memory_space<any>>
    %3 = tpu.memref_squeeze %2 : memref<1x8x128xf32, #tpu.memory_space<any>> -> memref<8x128xf32, #tpu.memory_space<any>>
    tpu.enqueue_dma source(%arg1 : memref<8x128xf32, #tpu.memory_space<vmem>>) target(%3 : memref<8x128xf32, #tpu.memory_space<any>>) source_semaphore(%arg3 : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>) target_semaphore(%arg3 : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>) device_id(%0)
    tpu.wait_dma2 semaphore(%arg3 : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>) src(%3 : memref<8x128xf32, #tpu.memory_space<any>>) dst(%arg1 : memref<8x128xf32, #tpu.memory_space<vmem>>) device_id(%0) core_id(%0)
    %v = vector.load %arg1[%c0, %c0] : memref<8x128xf32, #tpu.memory_space<vmem>>, vector<8x128xf32>
    %w = vector.load %arg1[%c0, %c0] : memref<8x128xf32, #tpu.memory_space<vmem>>, vector<8x128xf32>
    %acc = arith.constant dense<0.000000e+00> : vector<8x8xf32>
    %next = vector.contract {
      indexing_maps = [
        affine_map<(m, n, k) -> (m, k)>,
        affine_map<(m, n, k) -> (n, k)>,
        affine_map<(m, n, k) -> (m, n)>
      ],
      iterator_types = ["parallel", "parallel", "reduction"],
      kind = #vector.kind<add>
    } %v, %w, %acc : vector<8x128xf32>, vector<8x128xf32> into vector<8x8xf32>
    return
  }
}
"#;
    let m = parse("remote.mlir", text);
    assert_eq!(m.layer, Layer::Mosaic);
    let k = &kernel::kernels(&m)[0];
    assert_eq!(k.iteration_bounds, vec![4]);
    assert_eq!(k.window_params.len(), 2);
    assert_eq!(k.window_params[1].window_bounds, None);
    assert!(k.args[4].semaphore && !k.args[4].ty.as_ref().unwrap().is_dma_semaphore());
    let d = &k.dma_starts[0];
    assert_eq!(d.device_id, Some("0"));
    assert_eq!(d.source_semaphore.as_ref().and_then(|s| s.base_arg), Some(3));
    let arg0 = Index::Value { name: "arg0", expr: "arg0".into() };
    assert_eq!(d.target.as_ref().map(|t| t.slices.clone()), Some(vec![vec![arg0; 3]]));
    let sig = m.ops.iter().find(|o| o.opcode == "tpu.sem_signal").unwrap();
    assert_eq!(sig.operands[2].role, Some("device_id"));
    let region_op = m.ops.iter().find(|o| o.opcode == "tpu.region").unwrap();
    assert_eq!(region_op.regions.len(), 1);
    let contract = m.ops.iter().find(|o| o.opcode == "vector.contract").unwrap();
    assert_eq!(contract.attr("iterator_types").map(|v| v.items().len()), Some(3));
    assert_eq!(contract.operands.len(), 3);
    assert_eq!(k.matmuls.len(), 1);
    assert_eq!(k.matmuls[0].acc, Some(DType::F32));
}

#[test]
fn syntax_errors_point_at_the_problem() {
    for (text, expected) in [
        ("module {\n  func.func @f() {\n    %0 = arith.constant 0 : i32\n", "`}` closing the region"),
        ("module {\n  %0 = \n}\n", "operation name"),
        ("module {\n  func.func @f(%a: memref<4x) {\n  }\n}\n", "type"),
        ("module {\n  %0 = foo.bar {a = [1, 2} : i32\n}\n", "`,` or `]`"),
        ("module {\n  foo.bar \"unterminated\n}\n", "closing `\"` of the string"),
    ] {
        let err = parse_mlir("bad.mlir", text).err().unwrap_or_else(|| panic!("accepted: {text}"));
        assert!(
            err.expected.contains(expected) || expected == "type",
            "{text:?}: expected {expected:?}, got {:?}",
            err.expected
        );
        let at: usize = err.span.offset();
        assert!(at <= text.len());
    }
    let err = parse_mlir("bad.mlir", "module {\n  %0 = \"x\"() : () -> \n}\n").unwrap_err();
    assert_eq!(err.expected, "type");
    let rendered = format!("{:?}", miette::Report::new(err));
    assert!(rendered.contains("bad.mlir"), "{rendered}");
}

#[test]
fn sniffing() {
    assert!(looks_like_mlir("module @jit_f attributes {} {\n}"));
    assert!(looks_like_mlir("// comment\nmodule {\n}"));
    assert!(looks_like_mlir("#loc = loc(\"a\":1:2)\nmodule {\n}"));
    assert!(looks_like_mlir("func.func @f() {\n  return\n}"));
    assert!(!looks_like_mlir("HloModule jit_f, entry_computation_layout={()->f32[]}"));
    assert!(!looks_like_mlir("0x23 LB: >> { vnop }"));
}

fn must_not_panic(text: &str) {
    let r = std::panic::catch_unwind(|| {
        if let Ok(m) = parse_mlir("fuzz.mlir", text) {
            let _ = kernel::kernels(&m);
            for f in 0..m.funcs.len() {
                let _ = kernel::matmuls(&m, hlolint::ir::FuncId(f as u32));
            }
            let _ = outline(&m, text);
        }
    });
    assert!(r.is_ok(), "panicked on input:\n{text}");
}

#[test]
fn random_bytes_truncations_and_mutations_never_panic() {
    let mut rng = crate::common::Lcg(0x9E37_79B9_7F4A_7C15);
    let mut sources: Vec<String> =
        ["manual_dma.mlir", "stablehlo.mlir", "llo_stage.mlir"].iter().map(|n| data(n)).collect();
    // real files too, when the corpus is there (small ones whole, big ones by their first 64 KiB)
    for case in ["pallas_matmul@tpu7x", "transformer@tpu7x"] {
        let Some(corpus) = crate::common::corpus() else { break };
        for f in std::fs::read_dir(corpus.join(case).join("mosaic")).into_iter().flatten().flatten() {
            if let Ok(t) = std::fs::read_to_string(f.path()) {
                sources.push(t.chars().take(65536).collect());
            }
        }
        if let Ok(t) = std::fs::read_to_string(corpus.join(case).join("stablehlo.mlir")) {
            sources.push(t.chars().take(65536).collect());
        }
    }
    const ALPHABET: &[u8] = b"%@#!^{}()[]<>=:,\"\\-> \n\tx0123456789abcdefghijklmnopqrstuvwxyz._";
    let mutator = crate::common::Mutator { alphabet: ALPHABET, edits: 3, repeat: crate::common::Repeat::Run(1) };
    for _ in 0..300 {
        let n = rng.below(200);
        let bytes: Vec<u8> =
            (0..n).map(|_| if rng.below(4) == 0 { rng.next_u64() as u8 } else { rng.pick(ALPHABET) }).collect();
        must_not_panic(&String::from_utf8_lossy(&bytes));
    }
    for src in &sources {
        // truncations at every kind of place
        let cuts = 60.min(src.len());
        for k in 0..cuts {
            let mut at = (src.len() * k).checked_div(cuts).unwrap_or(0) + rng.below(7);
            at = at.min(src.len());
            while !src.is_char_boundary(at) {
                at -= 1;
            }
            must_not_panic(&src[..at]);
        }
        // mutations: replace, delete or duplicate a few bytes
        for _ in 0..60 {
            must_not_panic(&mutator.mutate(&mut rng, src));
        }
    }
    // deep nesting must be an error, not a stack overflow
    let deep = format!("module {{\n  foo.bar {}\n}}\n", "[".repeat(100_000));
    assert!(parse_mlir("deep.mlir", &deep).is_err());
    let deep = format!("module {{\n  %0 = foo.bar : {}\n}}\n", "vector<".repeat(100_000));
    assert!(parse_mlir("deep.mlir", &deep).is_err());
    let deep = format!("{}\n", "module {\n".repeat(5000));
    assert!(parse_mlir("deep.mlir", &deep).is_err());
}
