// Two slots, every block waited right after it is started: serial (dma-double-buffering says so), but no read meets a DMA in flight.
module attributes {stable_mosaic.version = 14 : i64} {
  func.func @k(%arg0: i32, %arg1: memref<1024x128xbf16, #tpu.memory_space<hbm>>, %arg2: memref<128x128xf32, #tpu.memory_space<vmem>>, %arg3: memref<2x128x128xbf16, #tpu.memory_space<vmem>>, %arg4: memref<2x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>) attributes {dimension_semantics = [#tpu.dimension_semantics<arbitrary>], iteration_bounds = array<i64: 2>, scalar_prefetch = 0 : i64, scratch_operands = 2 : i64, tpu.core_type = #tpu.core_type<tc>, window_params = [{}, {transform_indices = @transform_1, window_bounds = array<i64: 128, 128>}]} {
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %c2_i32 = arith.constant 2 : i32
    %c8_i32 = arith.constant 8 : i32
    %c128_i32 = arith.constant 128 : i32
    %c4_i32 = arith.constant 4 : i32
    scf.for %k = %c0_i32 to %c4_i32 step %c1_i32 : i32 {
      %slot = arith.remsi %k, %c2_i32 : i32
      %r24 = arith.muli %k, %c128_i32 : i32
      %src24 = tpu.memref_slice %arg1[%r24, %c0_i32] : memref<1024x128xbf16, #tpu.memory_space<hbm>> -> memref<128x128xbf16, #tpu.memory_space<hbm>>
      %t24 = tpu.memref_slice %arg3[%slot, %c0_i32, %c0_i32] : memref<2x128x128xbf16, #tpu.memory_space<vmem>> -> memref<1x128x128xbf16, #tpu.memory_space<vmem>>
      %ts24 = tpu.memref_squeeze %t24 : memref<1x128x128xbf16, #tpu.memory_space<vmem>> -> memref<128x128xbf16, #tpu.memory_space<vmem>>
      %s24 = tpu.memref_slice %arg4[%slot] : memref<2x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
      %ss24 = tpu.memref_squeeze %s24 : memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
      tpu.enqueue_dma source(%src24 : memref<128x128xbf16, #tpu.memory_space<hbm>>) target(%ts24 : memref<128x128xbf16, #tpu.memory_space<vmem>>) target_semaphore(%ss24 : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>)
      %r25 = arith.muli %k, %c128_i32 : i32
      %src25 = tpu.memref_slice %arg1[%r25, %c0_i32] : memref<1024x128xbf16, #tpu.memory_space<hbm>> -> memref<128x128xbf16, #tpu.memory_space<hbm>>
      %t25 = tpu.memref_slice %arg3[%slot, %c0_i32, %c0_i32] : memref<2x128x128xbf16, #tpu.memory_space<vmem>> -> memref<1x128x128xbf16, #tpu.memory_space<vmem>>
      %ts25 = tpu.memref_squeeze %t25 : memref<1x128x128xbf16, #tpu.memory_space<vmem>> -> memref<128x128xbf16, #tpu.memory_space<vmem>>
      %s25 = tpu.memref_slice %arg4[%slot] : memref<2x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
      %ss25 = tpu.memref_squeeze %s25 : memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
      tpu.wait_dma2 semaphore(%ss25 : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>) src(%src25 : memref<128x128xbf16, #tpu.memory_space<hbm>>) dst(%ts25 : memref<128x128xbf16, #tpu.memory_space<vmem>>)
      %si26 = arith.index_cast %slot : i32 to index
      %c0_26 = arith.constant 0 : index
      %x26 = vector.load %arg3[%si26, %c0_26, %c0_26] : memref<2x128x128xbf16, #tpu.memory_space<vmem>>, vector<1x128x128xbf16>
      %xs26 = vector.shape_cast %x26 : vector<1x128x128xbf16> to vector<128x128xbf16>
      %z26 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %m26 = tpu.matmul %xs26, %xs26, %z26 {dimension_numbers = #tpu.dot_dimension_numbers<[1], [1], [0], [0], [0, 0, 1, 0], [], []>} : vector<128x128xbf16>, vector<128x128xbf16>, vector<128x128xf32> -> vector<128x128xf32>
      tpu.vector_store %arg2[%c0_26, %c0_26], %m26 {strides = array<i32>} : memref<128x128xf32, #tpu.memory_space<vmem>>, vector<128x128xf32>, 
    }
    return
  }
  func.func @transform_1(%arg0: i32) -> (i32, i32) {
    %c0_i32 = arith.constant 0 : i32
    return %c0_i32, %c0_i32 : i32, i32
  }
}
