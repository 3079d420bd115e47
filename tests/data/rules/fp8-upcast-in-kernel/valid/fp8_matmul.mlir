module attributes {stable_mosaic.version = 15 : i64} {
  func.func @native_kernel(%arg0: i32, %arg1: memref<128x128xf8E4M3FN, #tpu.memory_space<vmem>>, %arg2: memref<128x128xf8E4M3FN, #tpu.memory_space<vmem>>, %arg3: memref<128x128xf32, #tpu.memory_space<vmem>>) attributes {dimension_semantics = [#tpu.dimension_semantics<arbitrary>], iteration_bounds = array<i64: 4>, scalar_prefetch = 0 : i64, scratch_operands = 0 : i64, tpu.core_type = #tpu.core_type<tc>, window_params = [{transform_indices = @transform_0, window_bounds = array<i64: 128, 128>}, {transform_indices = @transform_1, window_bounds = array<i64: 128, 128>}, {transform_indices = @transform_2, window_bounds = array<i64: 128, 128>}]} {
    %c0 = arith.constant 0 : index
    %0 = vector.load %arg1[%c0, %c0] : memref<128x128xf8E4M3FN, #tpu.memory_space<vmem>>, vector<128x128xf8E4M3FN>
    %1 = vector.load %arg2[%c0, %c0] : memref<128x128xf8E4M3FN, #tpu.memory_space<vmem>>, vector<128x128xf8E4M3FN>
    %2 = vector.shape_cast %1 : vector<128x128xf8E4M3FN> to vector<128x128xf8E4M3FN>
    %3 = vector.shape_cast %2 : vector<128x128xf8E4M3FN> to vector<128x128xf8E4M3FN>
    %cst = arith.constant dense<0.000000e+00> : vector<128x128xf32>
    %4 = tpu.matmul %0, %3, %cst {dimension_numbers = #tpu.dot_dimension_numbers<[1], [1], [0], [0], [0, 0, 1, 0], [], []>} : vector<128x128xf8E4M3FN>, vector<128x128xf8E4M3FN>, vector<128x128xf32> -> vector<128x128xf32>
    tpu.vector_store %arg3[%c0, %c0], %4 {strides = array<i32>} : memref<128x128xf32, #tpu.memory_space<vmem>>, vector<128x128xf32>,
    return
  }
  func.func @transform_0(%arg0: i32) -> (i32, i32) {
    %c0_i32 = arith.constant 0 : i32
    return %arg0, %c0_i32 : i32, i32
  }
  func.func @transform_1(%arg0: i32) -> (i32, i32) {
    %c0_i32 = arith.constant 0 : i32
    return %c0_i32, %arg0 : i32, i32
  }
  func.func @transform_2(%arg0: i32) -> (i32, i32) {
    %c0_i32 = arith.constant 0 : i32
    return %c0_i32, %c0_i32 : i32, i32
  }
}
