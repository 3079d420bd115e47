// Bug: a block copied as two pages on one semaphore (rows 0:8 and 8:16), and the second page read before the
// one wait that takes both. (The engine keeps the two DMAs as one amount; the region in flight is both pages.)
module attributes {stable_mosaic.version = 14 : i64} {
  func.func @k(%arg0: i32, %arg1: memref<16x128xf32, #tpu.memory_space<hbm>>, %arg2: memref<16x128xf32, #tpu.memory_space<vmem>>, %arg3: memref<16x128xf32, #tpu.memory_space<vmem>>, %arg4: memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>) attributes {dimension_semantics = [#tpu.dimension_semantics<arbitrary>], iteration_bounds = array<i64: 1>, scalar_prefetch = 0 : i64, scratch_operands = 2 : i64, tpu.core_type = #tpu.core_type<tc>, window_params = [{}, {}]} {
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %c0_i32 = arith.constant 0 : i32
    %c8_i32 = arith.constant 8 : i32
    %s = tpu.memref_slice %arg4[%c0_i32] : memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
    %ss = tpu.memref_squeeze %s : memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
    %src0 = tpu.memref_slice %arg1[%c0_i32, %c0_i32] : memref<16x128xf32, #tpu.memory_space<hbm>> -> memref<8x128xf32, #tpu.memory_space<hbm>>
    %dst0 = tpu.memref_slice %arg3[%c0_i32, %c0_i32] : memref<16x128xf32, #tpu.memory_space<vmem>> -> memref<8x128xf32, #tpu.memory_space<vmem>>
    tpu.enqueue_dma source(%src0 : memref<8x128xf32, #tpu.memory_space<hbm>>) target(%dst0 : memref<8x128xf32, #tpu.memory_space<vmem>>) target_semaphore(%ss : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>)
    %src1 = tpu.memref_slice %arg1[%c8_i32, %c0_i32] : memref<16x128xf32, #tpu.memory_space<hbm>> -> memref<8x128xf32, #tpu.memory_space<hbm>>
    %dst1 = tpu.memref_slice %arg3[%c8_i32, %c0_i32] : memref<16x128xf32, #tpu.memory_space<vmem>> -> memref<8x128xf32, #tpu.memory_space<vmem>>
    tpu.enqueue_dma source(%src1 : memref<8x128xf32, #tpu.memory_space<hbm>>) target(%dst1 : memref<8x128xf32, #tpu.memory_space<vmem>>) target_semaphore(%ss : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>)
    %v = vector.load %arg3[%c8, %c0] : memref<16x128xf32, #tpu.memory_space<vmem>>, vector<8x128xf32>
    vector.store %v, %arg2[%c0, %c0] : memref<16x128xf32, #tpu.memory_space<vmem>>, vector<8x128xf32>
    tpu.wait_dma2 semaphore(%ss : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>) src(%arg1 : memref<16x128xf32, #tpu.memory_space<hbm>>) dst(%arg3 : memref<16x128xf32, #tpu.memory_space<vmem>>)
    return
  }
}
