module attributes {stable_mosaic.version = 15 : i64} {
  func.func @mm_one_step(%arg0: i32, %arg1: i32, %arg3: memref<512x256xbf16, #tpu.memory_space<vmem>>, %arg4: memref<256x512xbf16, #tpu.memory_space<vmem>>, %arg5: memref<512x512xf32, #tpu.memory_space<vmem>>) attributes {dimension_semantics = [#tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<parallel>], iteration_bounds = array<i64: 1, 1>, scalar_prefetch = 0 : i64, scratch_operands = 0 : i64, tpu.core_type = #tpu.core_type<tc>, window_params = [{transform_indices = @transform_0, window_bounds = array<i64: 512, 256>}, {transform_indices = @transform_1, window_bounds = array<i64: 256, 512>}, {pipeline_mode = #tpu.pipeline_mode<double_buffered>, transform_indices = @transform_2, window_bounds = array<i64: 512, 512>}]} {
    %c0 = arith.constant 0 : index
    %0 = vector.load %arg3[%c0, %c0] : memref<512x256xbf16, #tpu.memory_space<vmem>>, vector<512x256xbf16>
    %1 = vector.load %arg4[%c0, %c0] : memref<256x512xbf16, #tpu.memory_space<vmem>>, vector<256x512xbf16>
    %cst = arith.constant dense<0.000000e+00> : vector<512x512xf32>
    %2 = tpu.matmul %0, %1, %cst {dimension_numbers = #tpu.dot_dimension_numbers<[1], [0], [0], [1], [0, 0, 1, 1], [], []>} : vector<512x256xbf16>, vector<256x512xbf16>, vector<512x512xf32> -> vector<512x512xf32>
    tpu.vector_store %arg5[%c0, %c0], %2 {strides = array<i32>} : memref<512x512xf32, #tpu.memory_space<vmem>>, vector<512x512xf32>,
    return
  }
  func.func @transform_0(%arg0: i32, %arg1: i32) -> (i32, i32) {
    return %arg0, %arg1 : i32, i32
  }
  func.func @transform_1(%arg0: i32, %arg1: i32) -> (i32, i32) {
    return %arg0, %arg1 : i32, i32
  }
  func.func @transform_2(%arg0: i32, %arg1: i32) -> (i32, i32) {
    return %arg0, %arg1 : i32, i32
  }
}
