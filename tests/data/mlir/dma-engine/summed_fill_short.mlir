// Wrong: like summed_fill.mlir, but the wait after the loop takes one row less than the loop started
// (`sum - 1` rows): one row of the last DMA stays outstanding at kernel exit whenever the count is not zero.
module attributes {stable_mosaic.version = 14 : i64} {
  func.func @k(%arg0: i32, %arg1: memref<1xi32, #tpu.memory_space<smem>>, %arg2: memref<64x128xbf16, #tpu.memory_space<hbm>>, %arg3: memref<8x128xbf16, #tpu.memory_space<vmem>>, %arg4: memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>) attributes {dimension_semantics = [#tpu.dimension_semantics<arbitrary>], iteration_bounds = array<i64: 1>, scalar_prefetch = 1 : i64, scratch_operands = 2 : i64, tpu.core_type = #tpu.core_type<tc>, window_params = [{}]} {
    %c0 = arith.constant 0 : index
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %c7_i32 = arith.constant 7 : i32
    %c8_i32 = arith.constant 8 : i32
    %n0 = memref.load %arg1[%c0] : memref<1xi32, #tpu.memory_space<smem>>
    %n = arith.minsi %n0, %c8_i32 : i32
    %s = tpu.memref_slice %arg4[%c0_i32] : memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
    %ss = tpu.memref_squeeze %s : memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
    %t0 = arith.addi %n, %c7_i32 : i32
    %trips = arith.divsi %t0, %c8_i32 : i32
    %sum = scf.for %i = %c0_i32 to %trips step %c1_i32 iter_args(%acc = %c0_i32) -> (i32) : i32 {
      %lo = arith.muli %i, %c8_i32 : i32
      %hi0 = arith.addi %lo, %c8_i32 : i32
      %hi = arith.minsi %hi0, %n : i32
      %rows = arith.subi %hi, %lo : i32
      %src = tpu.memref_slice %arg3[%c0_i32, %c0_i32] <%rows> : memref<8x128xbf16, #tpu.memory_space<vmem>> -> memref<?x128xbf16, #tpu.memory_space<vmem>>
      %dst = tpu.memref_slice %arg2[%lo, %c0_i32] <%rows> : memref<64x128xbf16, #tpu.memory_space<hbm>> -> memref<?x128xbf16, #tpu.memory_space<hbm>>
      tpu.enqueue_dma source(%src : memref<?x128xbf16, #tpu.memory_space<vmem>>) target(%dst : memref<?x128xbf16, #tpu.memory_space<hbm>>) target_semaphore(%ss : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>)
      %next = arith.addi %acc, %rows : i32
      scf.yield %next : i32
    }
    %less = arith.subi %sum, %c1_i32 : i32
    %all = tpu.memref_slice %arg2[%c0_i32, %c0_i32] <%less> : memref<64x128xbf16, #tpu.memory_space<hbm>> -> memref<?x128xbf16, #tpu.memory_space<hbm>>
    tpu.wait_dma2 semaphore(%ss : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>) src(%all : memref<?x128xbf16, #tpu.memory_space<hbm>>) dst(%all : memref<?x128xbf16, #tpu.memory_space<hbm>>)
    return
  }
}
