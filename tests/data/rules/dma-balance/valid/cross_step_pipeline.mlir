// Software pipelining across grid steps: step i waits the block that step i-1 prefetched (step 0 starts its own). Balanced.
module attributes {stable_mosaic.version = 14 : i64} {
  func.func @k(%arg0: i32, %arg1: memref<1024x128xbf16, #tpu.memory_space<hbm>>, %arg2: memref<128x128xf32, #tpu.memory_space<vmem>>, %arg3: memref<2x128x128xbf16, #tpu.memory_space<vmem>>, %arg4: memref<2x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>) attributes {dimension_semantics = [#tpu.dimension_semantics<arbitrary>], iteration_bounds = array<i64: 8>, scalar_prefetch = 0 : i64, scratch_operands = 2 : i64, tpu.core_type = #tpu.core_type<tc>, window_params = [{}, {transform_indices = @transform_1, window_bounds = array<i64: 128, 128>}]} {
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %c2_i32 = arith.constant 2 : i32
    %c8_i32 = arith.constant 8 : i32
    %c128_i32 = arith.constant 128 : i32
    %slot = arith.remsi %arg0, %c2_i32 : i32
    %nxt = arith.addi %arg0, %c1_i32 : i32
    %nslot = arith.remsi %nxt, %c2_i32 : i32
    %first = arith.cmpi eq, %arg0, %c0_i32 : i32
    scf.if %first {
      %r1 = arith.muli %arg0, %c128_i32 : i32
      %src1 = tpu.memref_slice %arg1[%r1, %c0_i32] : memref<1024x128xbf16, #tpu.memory_space<hbm>> -> memref<128x128xbf16, #tpu.memory_space<hbm>>
      %t1 = tpu.memref_slice %arg3[%slot, %c0_i32, %c0_i32] : memref<2x128x128xbf16, #tpu.memory_space<vmem>> -> memref<1x128x128xbf16, #tpu.memory_space<vmem>>
      %ts1 = tpu.memref_squeeze %t1 : memref<1x128x128xbf16, #tpu.memory_space<vmem>> -> memref<128x128xbf16, #tpu.memory_space<vmem>>
      %s1 = tpu.memref_slice %arg4[%slot] : memref<2x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
      %ss1 = tpu.memref_squeeze %s1 : memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
      tpu.enqueue_dma source(%src1 : memref<128x128xbf16, #tpu.memory_space<hbm>>) target(%ts1 : memref<128x128xbf16, #tpu.memory_space<vmem>>) target_semaphore(%ss1 : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>)
    }
    %cb = arith.constant 8 : i32
    %has = arith.cmpi slt, %nxt, %cb : i32
    scf.if %has {
      %c7_i32 = arith.constant 7 : i32
      %nb = arith.minsi %nxt, %c7_i32 : i32
      %r2 = arith.muli %nb, %c128_i32 : i32
      %src2 = tpu.memref_slice %arg1[%r2, %c0_i32] : memref<1024x128xbf16, #tpu.memory_space<hbm>> -> memref<128x128xbf16, #tpu.memory_space<hbm>>
      %t2 = tpu.memref_slice %arg3[%nslot, %c0_i32, %c0_i32] : memref<2x128x128xbf16, #tpu.memory_space<vmem>> -> memref<1x128x128xbf16, #tpu.memory_space<vmem>>
      %ts2 = tpu.memref_squeeze %t2 : memref<1x128x128xbf16, #tpu.memory_space<vmem>> -> memref<128x128xbf16, #tpu.memory_space<vmem>>
      %s2 = tpu.memref_slice %arg4[%nslot] : memref<2x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
      %ss2 = tpu.memref_squeeze %s2 : memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
      tpu.enqueue_dma source(%src2 : memref<128x128xbf16, #tpu.memory_space<hbm>>) target(%ts2 : memref<128x128xbf16, #tpu.memory_space<vmem>>) target_semaphore(%ss2 : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>)
    }
    %r3 = arith.muli %arg0, %c128_i32 : i32
    %src3 = tpu.memref_slice %arg1[%r3, %c0_i32] : memref<1024x128xbf16, #tpu.memory_space<hbm>> -> memref<128x128xbf16, #tpu.memory_space<hbm>>
    %t3 = tpu.memref_slice %arg3[%slot, %c0_i32, %c0_i32] : memref<2x128x128xbf16, #tpu.memory_space<vmem>> -> memref<1x128x128xbf16, #tpu.memory_space<vmem>>
    %ts3 = tpu.memref_squeeze %t3 : memref<1x128x128xbf16, #tpu.memory_space<vmem>> -> memref<128x128xbf16, #tpu.memory_space<vmem>>
    %s3 = tpu.memref_slice %arg4[%slot] : memref<2x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
    %ss3 = tpu.memref_squeeze %s3 : memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
    tpu.wait_dma2 semaphore(%ss3 : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>) src(%src3 : memref<128x128xbf16, #tpu.memory_space<hbm>>) dst(%ts3 : memref<128x128xbf16, #tpu.memory_space<vmem>>)
    %si4 = arith.index_cast %slot : i32 to index
    %c0_4 = arith.constant 0 : index
    %x4 = vector.load %arg3[%si4, %c0_4, %c0_4] : memref<2x128x128xbf16, #tpu.memory_space<vmem>>, vector<1x128x128xbf16>
    %xs4 = vector.shape_cast %x4 : vector<1x128x128xbf16> to vector<128x128xbf16>
    %z4 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
    %m4 = tpu.matmul %xs4, %xs4, %z4 {dimension_numbers = #tpu.dot_dimension_numbers<[1], [1], [0], [0], [0, 0, 1, 0], [], []>} : vector<128x128xbf16>, vector<128x128xbf16>, vector<128x128xf32> -> vector<128x128xf32>
    tpu.vector_store %arg2[%c0_4, %c0_4], %m4 {strides = array<i32>} : memref<128x128xf32, #tpu.memory_space<vmem>>, vector<128x128xf32>, 
    return
  }
  func.func @transform_1(%arg0: i32) -> (i32, i32) {
    %c0_i32 = arith.constant 0 : i32
    return %c0_i32, %c0_i32 : i32, i32
  }
}
