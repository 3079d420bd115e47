module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=1]>
  func.func public @main(%arg0: tensor<8x128xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>} loc("x"), %arg1: tensor<128x256xf8E4M3FN>) -> (tensor<8x256xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.convert %arg1 : (tensor<128x256xf8E4M3FN>) -> tensor<128x256xbf16> loc(#loc2)
    %1 = stablehlo.dot_general %arg0, %0, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x128xbf16>, tensor<128x256xbf16>) -> tensor<8x256xf32> loc(#loc3)
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %2 = stablehlo.reduce(%1 init: %cst) across dimensions = [1] : (tensor<8x256xf32>, tensor<f32>) -> tensor<8xf32>
     reducer(%arg2: tensor<f32>, %arg3: tensor<f32>)  {
      %9 = stablehlo.maximum %arg2, %arg3 : tensor<f32>
      stablehlo.return %9 : tensor<f32>
    }
    %c = stablehlo.constant dense<0> : tensor<i32>
    %3:2 = stablehlo.while(%iterArg = %c, %iterArg_0 = %1) : tensor<i32>, tensor<8x256xf32>
    cond {
      %c_1 = stablehlo.constant dense<4> : tensor<i32>
      %9 = stablehlo.compare  LT, %iterArg, %c_1,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %9 : tensor<i1>
    } do {
      %9 = func.call @step(%iterArg_0) : (tensor<8x256xf32>) -> tensor<8x256xf32>
      %c_1 = stablehlo.constant dense<1> : tensor<i32>
      %10 = stablehlo.add %iterArg, %c_1 : tensor<i32>
      stablehlo.return %10, %9 : tensor<i32>, tensor<8x256xf32>
    }
    %4 = stablehlo.custom_call @tpu_custom_call(%3#1) {backend_config = "{\22custom_call_config\22: {\22body\22: \22TUzvUgE=\22}}", kernel_name = "fp8_mm"} : (tensor<8x256xf32>) -> tensor<8x256xf32>
    %5 = "stablehlo.all_reduce"(%4) <{replica_groups = dense<[[0]]> : tensor<1x1xi64>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<8x256xf32>) -> tensor<8x256xf32>
    %6:2 = call @pair(%5) : (tensor<8x256xf32>) -> (tensor<8x256xf32>, tensor<8x256xf32>)
    %7 = stablehlo.add %6#0, %6#1 : tensor<8x256xf32>
    return %7 : tensor<8x256xf32>
  }
  func.func private @step(%arg0: tensor<8x256xf32>) -> tensor<8x256xf32> {
    %0 = stablehlo.tanh %arg0 : tensor<8x256xf32>
    return %0 : tensor<8x256xf32>
  }
  func.func private @pair(%arg0: tensor<8x256xf32>) -> (tensor<8x256xf32>, tensor<8x256xf32>) {
    return %arg0, %arg0 : tensor<8x256xf32>, tensor<8x256xf32>
  }
}
#loc1 = loc("model.py":12:8)
#loc2 = loc("jit(f)/convert"(#loc1))
#loc3 = loc(callsite(#loc1 at #loc2))
