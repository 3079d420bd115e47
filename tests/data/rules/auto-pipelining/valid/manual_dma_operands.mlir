module attributes {stable_mosaic.version = 15 : i64} {
  func.func @manual(%arg0: i32, %arg1: i32, %arg2: memref<512x512xbf16, #tpu.memory_space<any>>, %arg3: memref<128x128xf32, #tpu.memory_space<vmem>>, %arg4: memref<2x128x128xbf16, #tpu.memory_space<vmem>>, %arg5: memref<2x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>) attributes {dimension_semantics = [#tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<parallel>], iteration_bounds = array<i64: 4, 4>, scalar_prefetch = 0 : i64, scratch_operands = 2 : i64, tpu.core_type = #tpu.core_type<tc>, window_params = [{}, {transform_indices = @transform_1, window_bounds = array<i64: 128, 128>}]} {
    %c0_i32 = arith.constant 0 : i32
    %c128_i32 = arith.constant 128 : i32
    %0 = arith.muli %arg0, %c128_i32 : i32
    %1 = tpu.memref_slice %arg2[%0, %c0_i32] : memref<512x512xbf16, #tpu.memory_space<any>> -> memref<128x128xbf16, #tpu.memory_space<any>>
    %2 = tpu.memref_slice %arg4[%c0_i32, %c0_i32, %c0_i32] : memref<2x128x128xbf16, #tpu.memory_space<vmem>> -> memref<1x128x128xbf16, #tpu.memory_space<vmem>>
    %3 = tpu.memref_squeeze %2 : memref<1x128x128xbf16, #tpu.memory_space<vmem>> -> memref<128x128xbf16, #tpu.memory_space<vmem>>
    %4 = tpu.memref_slice %arg5[%c0_i32] : memref<2x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
    %5 = tpu.memref_squeeze %4 : memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
    tpu.enqueue_dma source(%1 : memref<128x128xbf16, #tpu.memory_space<any>>) target(%3 : memref<128x128xbf16, #tpu.memory_space<vmem>>) target_semaphore(%5 : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>)
    tpu.wait_dma2 semaphore(%5 : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>) src(%1 : memref<128x128xbf16, #tpu.memory_space<any>>) dst(%3 : memref<128x128xbf16, #tpu.memory_space<vmem>>)
    return
  }
  func.func @transform_1(%arg0: i32, %arg1: i32) -> (i32, i32) {
    return %arg0, %arg1 : i32, i32
  }
}
