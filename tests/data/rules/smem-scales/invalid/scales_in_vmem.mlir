module attributes {stable_mosaic.version = 15 : i64} {
  func.func @scaled_mm(%arg0: i32, %arg1: i32, %arg2: memref<128x128xf8E4M3FN, #tpu.memory_space<vmem>>, %arg3: memref<4x4x1x1xf32, #tpu.memory_space<vmem>>, %arg4: memref<4x4x1x1xf32, #tpu.memory_space<vmem>>, %arg5: memref<128x128xf32, #tpu.memory_space<vmem>>) attributes {dimension_semantics = [#tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<parallel>], iteration_bounds = array<i64: 4, 4>, scalar_prefetch = 0 : i64, scratch_operands = 0 : i64, tpu.core_type = #tpu.core_type<tc>} {
    %c0 = arith.constant 0 : index
    %0 = vector.load %arg2[%c0, %c0] : memref<128x128xf8E4M3FN, #tpu.memory_space<vmem>>, vector<128x128xf8E4M3FN>
    %cst = arith.constant dense<0.000000e+00> : vector<128x128xf32>
    %1 = tpu.matmul %0, %0, %cst {dimension_numbers = #tpu.dot_dimension_numbers<[1], [1], [0], [0], [0, 0, 1, 0], [], []>} : vector<128x128xf8E4M3FN>, vector<128x128xf8E4M3FN>, vector<128x128xf32> -> vector<128x128xf32>
    %2 = arith.index_cast %arg0 : i32 to index
    %3 = arith.index_cast %arg1 : i32 to index
    %4 = vector.load %arg3[%2, %3, %c0, %c0] : memref<4x4x1x1xf32, #tpu.memory_space<vmem>>, vector<1x1x1x1xf32>
    %5 = vector.shape_cast %4 : vector<1x1x1x1xf32> to vector<1x1xf32>
    %6 = vector.load %arg4[%2, %3, %c0, %c0] : memref<4x4x1x1xf32, #tpu.memory_space<vmem>>, vector<1x1x1x1xf32>
    %7 = vector.shape_cast %6 : vector<1x1x1x1xf32> to vector<1x1xf32>
    %8 = arith.mulf %5, %7 : vector<1x1xf32>
    %9 = vector.broadcast %8 : vector<1x1xf32> to vector<128x128xf32>
    %10 = arith.mulf %1, %9 : vector<128x128xf32>
    tpu.vector_store %arg5[%c0, %c0], %10 {strides = array<i32>} : memref<128x128xf32, #tpu.memory_space<vmem>>, vector<128x128xf32>,
    return
  }
}
