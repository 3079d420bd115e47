module @features attributes {test.unit, test.dict = {a = 1 : i32, b = "s\0A"}} {
  func.func private @callee(%a: i32) -> i32 {
    return %a : i32
  }
  func.func @main(%arg0: memref<4x8xf32, strided<[8, 1], offset: ?>, 1> {test.arg = true},
                  %arg1: vector<[4]x8xf16>, %arg2: tensor<?x3xf8E4M3FN>, %arg3: i32)
      -> (i32, f32) attributes {
        test.ints = array<i64: 1, -2, 3>, test.bools = array<i1: true, false>,
        test.floats = array<f32: 1.5, -0.25>, test.dense = dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>,
        test.splat = dense<true> : vector<4xi1>, test.big = 12345678901234 : i64, test.neg = -7 : i8,
        test.uns = 200 : ui8, test.f64 = 0.1 : f64, test.bf = 1.0 : bf16, test.sym = @callee,
        test.nested = @a::@b, test.type = complex<f32>, test.tuple = tuple<i32, none>,
        test.fn = (i32, index) -> (), test.cplx = dense<(1.0, 2.0)> : tensor<complex<f32>>,
        test.map = affine_map<(d0, d1)[s0] -> (d1 + s0, d0 floordiv 2)>, test.umr = memref<*xf32>,
        test.ut = tensor<*xi16>, test.si = 3 : si16} {
    %c0 = arith.constant 0 : index loc("kernel.py":3:1)
    %c1 = arith.constant 1 : index loc("get"("kernel.py":4:5))
    %c4 = arith.constant 4 : index
    %init = arith.constant 0.0 : f32
    %sum:2 = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %init, %k = %c0) -> (f32, index) {
      %v = memref.load %arg0[%i, %k] : memref<4x8xf32, strided<[8, 1], offset: ?>, 1>
      %n = arith.addf %acc, %v : f32 loc(callsite(callsite("h.py":115:4 at "h.py":148:10) at callsite("h.py":115:4 at "h.py":148:10)))
      scf.yield %n, %i : f32, index
    } loc(callsite("for"("kernel.py":10:2) at "caller.py":20:4))
    %r = func.call @callee(%arg3) : (i32) -> i32 loc(fused["a.py":1:1, "b.py":2:2])
    cf.br ^bb2(%r : i32)
  ^bb1:
    %y = arith.addi %x, %x : i32 loc(callsite(callsite("h.py":181:12 at "h.py":508:8) at callsite("h.py":181:12 at "h.py":428:16)))
    return %y, %sum#0 : i32, f32
  ^bb2(%z: i32):
    %x = arith.muli %z, %z : i32
    %c = arith.cmpi slt, %z, %x : i32
    cf.cond_br %c, ^bb1, ^bb3
  ^bb3:
    return %z, %sum#0 : i32, f32
  }
}
