module attributes {stable_mosaic.version = 15 : i64} {
  func.func @mm(%arg0: i32, %arg1: memref<8x128xf32, #tpu.memory_space<smem>>, %arg2: memref<128x128xf32, #tpu.memory_space<vmem>>, %arg3: memref<8x128xf32, #tpu.memory_space<vmem>>) attributes {dimension_semantics = [#tpu.dimension_semantics<parallel>], iteration_bounds = array<i64: 4>, scalar_prefetch = 1 : i64, scratch_operands = 0 : i64, tpu.core_type = #tpu.core_type<tc>} {
    %c0 = arith.constant 0 : index
    %0 = vector.load %arg1[%c0, %c0] : memref<8x128xf32, #tpu.memory_space<smem>>, vector<8x128xf32>
    %1 = vector.load %arg2[%c0, %c0] : memref<128x128xf32, #tpu.memory_space<vmem>>, vector<128x128xf32>
    %cst = arith.constant dense<0.000000e+00> : vector<8x128xf32>
    %2 = tpu.matmul %0, %1, %cst {dimension_numbers = #tpu.dot_dimension_numbers<[1], [0], [0], [1], [0, 0, 1, 1], [], []>} : vector<8x128xf32>, vector<128x128xf32>, vector<8x128xf32> -> vector<8x128xf32>
    tpu.vector_store %arg3[%c0, %c0], %2 {strides = array<i32>} : memref<8x128xf32, #tpu.memory_space<vmem>>, vector<8x128xf32>,
    return
  }
}
