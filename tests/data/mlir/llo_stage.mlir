module attributes {stable_mosaic.version = 11 : i64} {
  func.func @fp8_mm(%arg0: i32 {llo.type = i32}, %arg1: i32 {llo.type = memref<128x128xf8E4M3FN, #tpu.tiled<(32,128)(4,1),[1,1]>, #tpu.memory_space<vmem>>}, %arg2: i32 {llo.type = memref<128x128xf8E4M3FN, #tpu.memory_space<vmem>>}, %arg3: i32 {llo.type = memref<128x128xf32, #tpu.memory_space<vmem>>}) attributes {dimension_semantics = [#tpu.dimension_semantics<parallel>], iteration_bounds = array<i64: 2>, scalar_prefetch = 0 : i64, scratch_operands = 0 : i64, tpu.core_type = #tpu.core_type<tc>, window_params = [{transform_indices = @transform_0, window_bounds = array<i64: 128, 128>}, {pipeline_mode = #tpu.pipeline_mode<synchronous>, transform_indices = @transform_1, window_bounds = array<i64: 128, 128>}, {transform_indices = @transform_2, window_bounds = array<i64: 128, 128>}]} {
    %0 = llo.constant {value = 0 : i32} : i32
    %1 = llo.vector_load %arg2 : i32 -> vector<8x128x4xf8E4M3FN>
    "llo.vmatprep.subr"(%1) <{gain_latch_mode = #llo.gain_latch_mode<packed.f8e4m3b>, mxu_id = 0 : i32}> : (vector<8x128x4xf8E4M3FN>) -> ()
    %2 = llo.vector_load %arg1 + %0 : i32 -> vector<8x128x4xf8E4M3FN>
    "llo.vmatmul.mubr"(%2) <{data_format = #llo.matmul_data_format<e4m3b>, dwg = false, mode = #llo.matmul_mode<round>, mxu_id = 0 : i32}> : (vector<8x128x4xf8E4M3FN>) -> ()
    %3 = "llo.vmatres"() <{data_format = #llo.matmul_data_format<e4m3b>, mxu_id = 0 : i32}> : () -> vector<8x128xf32>
    %4 = llo.seq.s32 %arg0, %0
    scf.if %4 {
      llo.vector_store %3 into %arg3 : vector<8x128xf32> into i32
    } {in_layout = [#tpu.vpad<"none">]}
    return {in_layout = []}
  }
}
