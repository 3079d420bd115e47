module attributes {stable_mosaic.version = 15 : i64} {
  func.func @rescale(%arg0: i32, %arg1: memref<8x128xf32, #tpu.memory_space<vmem>>, %arg2: memref<1x1xf32, #tpu.memory_space<vmem>>, %arg3: memref<8x128xf32, #tpu.memory_space<vmem>>) attributes {dimension_semantics = [#tpu.dimension_semantics<arbitrary>], iteration_bounds = array<i64: 4>, scalar_prefetch = 0 : i64, scratch_operands = 1 : i64, tpu.core_type = #tpu.core_type<tc>} {
    %c0 = arith.constant 0 : index
    %0 = vector.load %arg1[%c0, %c0] : memref<8x128xf32, #tpu.memory_space<vmem>>, vector<8x128xf32>
    %1 = vector.load %arg2[%c0, %c0] : memref<1x1xf32, #tpu.memory_space<vmem>>, vector<1x1xf32>
    %2 = vector.broadcast %1 : vector<1x1xf32> to vector<8x128xf32>
    %3 = arith.mulf %0, %2 : vector<8x128xf32>
    %4 = vector.extract_strided_slice %3 {offsets = [0, 0], sizes = [1, 1], strides = [1, 1]} : vector<8x128xf32> to vector<1x1xf32>
    tpu.vector_store %arg2[%c0, %c0], %4 {strides = array<i32>} : memref<1x1xf32, #tpu.memory_space<vmem>>, vector<1x1xf32>,
    tpu.vector_store %arg3[%c0, %c0], %3 {strides = array<i32>} : memref<8x128xf32, #tpu.memory_space<vmem>>, vector<8x128xf32>,
    return
  }
}
