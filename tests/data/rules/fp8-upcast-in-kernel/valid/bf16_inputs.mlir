module attributes {stable_mosaic.version = 15 : i64} {
  func.func @bf16_kernel(%arg0: memref<128x128xbf16, #tpu.memory_space<vmem>>, %arg1: memref<128x128xf32, #tpu.memory_space<vmem>>) attributes {dimension_semantics = [], iteration_bounds = array<i64>, scalar_prefetch = 0 : i64, scratch_operands = 0 : i64} {
    %c0 = arith.constant 0 : index
    %0 = vector.load %arg0[%c0, %c0] : memref<128x128xbf16, #tpu.memory_space<vmem>>, vector<128x128xbf16>
    %1 = arith.extf %0 : vector<128x128xbf16> to vector<128x128xf32>
    %cst = arith.constant dense<0.000000e+00> : vector<128x128xf32>
    %2 = tpu.matmul %1, %1, %cst {dimension_numbers = #tpu.dot_dimension_numbers<[1], [0], [0], [1], [0, 0, 1, 1], [], []>} : vector<128x128xf32>, vector<128x128xf32>, vector<128x128xf32> -> vector<128x128xf32>
    tpu.vector_store %arg1[%c0, %c0], %2 {strides = array<i32>} : memref<128x128xf32, #tpu.memory_space<vmem>>, vector<128x128xf32>,
    return
  }
}
