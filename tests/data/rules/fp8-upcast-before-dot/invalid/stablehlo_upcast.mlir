module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<128x256xf8E4M3FN>, %arg1: tensor<256x128xf8E4M3FN>) -> (tensor<128x128xf32>) {
    %0 = stablehlo.convert %arg1 : (tensor<256x128xf8E4M3FN>) -> tensor<256x128xbf16>
    %1 = stablehlo.convert %arg0 : (tensor<128x256xf8E4M3FN>) -> tensor<128x256xbf16>
    %2 = stablehlo.dot_general %1, %0, contracting_dims = [1] x [0] : (tensor<128x256xbf16>, tensor<256x128xbf16>) -> tensor<128x128xf32>
    return %2 : tensor<128x128xf32>
  }
}
