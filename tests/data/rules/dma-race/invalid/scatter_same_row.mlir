// Bug (on some inputs): two DMAs in flight at once write the output rows a scalar-prefetch table names; a table
// naming the same row twice loses one write (a scatter whose callers pass distinct rows: tests/it/assume.rs).
module attributes {stable_mosaic.version = 14 : i64} {
  func.func @scatter_rows(%arg0: i32, %arg1: memref<2xi32, #tpu.memory_space<smem>>, %arg2: memref<8x128xf32, #tpu.memory_space<vmem>>, %arg3: memref<64x128xf32, #tpu.memory_space<any>>, %arg4: memref<2x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>) attributes {dimension_semantics = [#tpu.dimension_semantics<arbitrary>], iteration_bounds = array<i64: 1>, scalar_prefetch = 1 : i64, scratch_operands = 1 : i64, tpu.core_type = #tpu.core_type<tc>, window_params = [{transform_indices = @transform_0, window_bounds = array<i64: 8, 128>}, {}]} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %c8_i32 = arith.constant 8 : i32
    %i0 = memref.load %arg1[%c0] : memref<2xi32, #tpu.memory_space<smem>>
    %i1 = memref.load %arg1[%c1] : memref<2xi32, #tpu.memory_space<smem>>
    %r0 = arith.muli %i0, %c8_i32 : i32
    %r1 = arith.muli %i1, %c8_i32 : i32
    %o0 = tpu.memref_slice %arg3[%r0, %c0_i32] : memref<64x128xf32, #tpu.memory_space<any>> -> memref<8x128xf32, #tpu.memory_space<any>>
    %o1 = tpu.memref_slice %arg3[%r1, %c0_i32] : memref<64x128xf32, #tpu.memory_space<any>> -> memref<8x128xf32, #tpu.memory_space<any>>
    %s0 = tpu.memref_slice %arg4[%c0_i32] : memref<2x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
    %ss0 = tpu.memref_squeeze %s0 : memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
    %s1 = tpu.memref_slice %arg4[%c1_i32] : memref<2x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
    %ss1 = tpu.memref_squeeze %s1 : memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
    tpu.enqueue_dma source(%arg2 : memref<8x128xf32, #tpu.memory_space<vmem>>) target(%o0 : memref<8x128xf32, #tpu.memory_space<any>>) target_semaphore(%ss0 : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>)
    tpu.enqueue_dma source(%arg2 : memref<8x128xf32, #tpu.memory_space<vmem>>) target(%o1 : memref<8x128xf32, #tpu.memory_space<any>>) target_semaphore(%ss1 : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>)
    tpu.wait_dma2 semaphore(%ss0 : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>) src(%arg2 : memref<8x128xf32, #tpu.memory_space<vmem>>) dst(%o0 : memref<8x128xf32, #tpu.memory_space<any>>)
    tpu.wait_dma2 semaphore(%ss1 : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>) src(%arg2 : memref<8x128xf32, #tpu.memory_space<vmem>>) dst(%o1 : memref<8x128xf32, #tpu.memory_space<any>>)
    return
  }
  func.func @transform_0(%arg0: i32, %arg1: memref<2xi32, #tpu.memory_space<smem>>) -> (i32, i32) {
    %c0_i32 = arith.constant 0 : i32
    return %c0_i32, %c0_i32 : i32, i32
  }
}
