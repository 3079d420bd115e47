module @jit_f {
  func.func public @main(%arg0: tensor<128x256xf8E4M3FN>, %arg1: tensor<256x128xf8E4M3FN>) -> (tensor<128x128xf32>) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<128x256xf8E4M3FN>, tensor<256x128xf8E4M3FN>) -> tensor<128x128xf32>
    return %0 : tensor<128x128xf32>
  }
}
