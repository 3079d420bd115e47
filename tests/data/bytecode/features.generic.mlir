#map = affine_map<(d0, d1)[s0] -> (d1 + s0, d0 floordiv 2)>
"builtin.module"() <{sym_name = "features"}> ({
  "func.func"() <{function_type = (i32) -> i32, sym_name = "callee", sym_visibility = "private"}> ({
  ^bb0(%arg7: i32):
    "func.return"(%arg7) : (i32) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{test.arg = true}, {}, {}, {}], function_type = (memref<4x8xf32, strided<[8, 1], offset: ?>, 1>, vector<[4]x8xf16>, tensor<?x3xf8E4M3FN>, i32) -> (i32, f32), sym_name = "main"}> ({
  ^bb0(%arg0: memref<4x8xf32, strided<[8, 1], offset: ?>, 1>, %arg1: vector<[4]x8xf16>, %arg2: tensor<?x3xf8E4M3FN>, %arg3: i32):
    %0 = "arith.constant"() <{value = 0 : index}> : () -> index
    %1 = "arith.constant"() <{value = 1 : index}> : () -> index
    %2 = "arith.constant"() <{value = 4 : index}> : () -> index
    %3 = "arith.constant"() <{value = 0.000000e+00 : f32}> : () -> f32
    %4:2 = "scf.for"(%0, %2, %1, %3, %0) ({
    ^bb0(%arg4: index, %arg5: f32, %arg6: index):
      %10 = "memref.load"(%arg0, %arg4, %arg6) : (memref<4x8xf32, strided<[8, 1], offset: ?>, 1>, index, index) -> f32
      %11 = "arith.addf"(%arg5, %10) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
      "scf.yield"(%11, %arg4) : (f32, index) -> ()
    }) : (index, index, index, f32, index) -> (f32, index)
    %5 = "func.call"(%arg3) <{callee = @callee}> : (i32) -> i32
    "cf.br"(%5)[^bb2] : (i32) -> ()
  ^bb1:  // pred: ^bb2
    %6 = "arith.addi"(%8, %8) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
    "func.return"(%6, %4#0) : (i32, f32) -> ()
  ^bb2(%7: i32):  // pred: ^bb0
    %8 = "arith.muli"(%7, %7) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32
    %9 = "arith.cmpi"(%7, %8) <{predicate = 2 : i64}> : (i32, i32) -> i1
    "cf.cond_br"(%9)[^bb1, ^bb3] <{operandSegmentSizes = array<i32: 1, 0, 0>}> : (i1) -> ()
  ^bb3:  // pred: ^bb2
    "func.return"(%7, %4#0) : (i32, f32) -> ()
  }) {test.bf = 1.000000e+00 : bf16, test.big = 12345678901234 : i64, test.bools = array<i1: true, false>, test.cplx = dense<(1.000000e+00,2.000000e+00)> : tensor<complex<f32>>, test.dense = dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>, test.f64 = 1.000000e-01 : f64, test.floats = array<f32: 1.500000e+00, -2.500000e-01>, test.fn = (i32, index) -> (), test.ints = array<i64: 1, -2, 3>, test.map = #map, test.neg = -7 : i8, test.nested = @a::@b, test.si = 3 : si16, test.splat = dense<true> : vector<4xi1>, test.sym = @callee, test.tuple = tuple<i32, none>, test.type = complex<f32>, test.umr = memref<*xf32>, test.uns = 200 : ui8, test.ut = tensor<*xi16>} : () -> ()
}) {test.dict = {a = 1 : i32, b = "s\0A"}, test.unit} : () -> ()
