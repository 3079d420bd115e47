// Correct: two DMAs of run-time row counts `n` and `m` (each `min(max(t, 0), 8)` of an SMEM entry) into two
// buffers on one semaphore, and one wait of `n + m` rows (a slice of a `<n + m>` extent). The wait is larger than
// either DMA and is exactly both: it takes the first whole and the rest from the second, for every table.
module attributes {stable_mosaic.version = 14 : i64} {
  func.func @k(%arg0: i32, %arg1: memref<2xi32, #tpu.memory_space<smem>>, %arg2: memref<16x128xbf16, #tpu.memory_space<hbm>>, %arg3: memref<8x128xbf16, #tpu.memory_space<vmem>>, %arg4: memref<8x128xbf16, #tpu.memory_space<vmem>>, %arg5: memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>) attributes {dimension_semantics = [#tpu.dimension_semantics<arbitrary>], iteration_bounds = array<i64: 1>, scalar_prefetch = 1 : i64, scratch_operands = 3 : i64, tpu.core_type = #tpu.core_type<tc>, window_params = [{}]} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c0_i32 = arith.constant 0 : i32
    %c8_i32 = arith.constant 8 : i32
    %t0 = memref.load %arg1[%c0] : memref<2xi32, #tpu.memory_space<smem>>
    %t1 = memref.load %arg1[%c1] : memref<2xi32, #tpu.memory_space<smem>>
    %p0 = arith.maxsi %t0, %c0_i32 : i32
    %n = arith.minsi %p0, %c8_i32 : i32
    %p1 = arith.maxsi %t1, %c0_i32 : i32
    %m = arith.minsi %p1, %c8_i32 : i32
    %s = tpu.memref_slice %arg5[%c0_i32] : memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
    %ss = tpu.memref_squeeze %s : memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
    %src0 = tpu.memref_slice %arg2[%c0_i32, %c0_i32] <%n> : memref<16x128xbf16, #tpu.memory_space<hbm>> -> memref<?x128xbf16, #tpu.memory_space<hbm>>
    %dst0 = tpu.memref_slice %arg3[%c0_i32, %c0_i32] <%n> : memref<8x128xbf16, #tpu.memory_space<vmem>> -> memref<?x128xbf16, #tpu.memory_space<vmem>>
    tpu.enqueue_dma source(%src0 : memref<?x128xbf16, #tpu.memory_space<hbm>>) target(%dst0 : memref<?x128xbf16, #tpu.memory_space<vmem>>) target_semaphore(%ss : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>)
    %src1 = tpu.memref_slice %arg2[%c8_i32, %c0_i32] <%m> : memref<16x128xbf16, #tpu.memory_space<hbm>> -> memref<?x128xbf16, #tpu.memory_space<hbm>>
    %dst1 = tpu.memref_slice %arg4[%c0_i32, %c0_i32] <%m> : memref<8x128xbf16, #tpu.memory_space<vmem>> -> memref<?x128xbf16, #tpu.memory_space<vmem>>
    tpu.enqueue_dma source(%src1 : memref<?x128xbf16, #tpu.memory_space<hbm>>) target(%dst1 : memref<?x128xbf16, #tpu.memory_space<vmem>>) target_semaphore(%ss : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>)
    %nm = arith.addi %n, %m : i32
    %all = tpu.memref_slice %arg2[%c0_i32, %c0_i32] <%nm> : memref<16x128xbf16, #tpu.memory_space<hbm>> -> memref<?x128xbf16, #tpu.memory_space<hbm>>
    tpu.wait_dma2 semaphore(%ss : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>) src(%all : memref<?x128xbf16, #tpu.memory_space<hbm>>) dst(%all : memref<?x128xbf16, #tpu.memory_space<hbm>>)
    return
  }
}
